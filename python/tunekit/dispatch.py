"""Applying tuning records (AutoTVM ``apply_history_best``): inside the ``with`` block, calling a
``@tunekit.template`` function returns its kernel under the best configuration the records hold
for that workload and target (AutoTVM's lookup: the target's model, then its keys, so records of
"c -march=native" serve "llvm" as both have key "cpu"). A workload without a record gets the
fallback configuration and ONE warning naming the task, so a silent fallback cannot pass for a
tuned kernel.
"""

import json
import threading
import warnings
from typing import List, Optional

from . import _tunekit
from .record import _lines_of

__all__ = ["ApplyHistoryBest", "apply_history_best", "current"]

_local = threading.local()


def _stack() -> list:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def current() -> Optional["ApplyHistoryBest"]:
    """The innermost ApplyHistoryBest entered in this thread (None outside any)."""
    stack = _stack()
    return stack[-1] if stack else None


class ApplyHistoryBest:
    """The best records of log files and (MeasureInput, MeasureResult) pairs, applied inside a
    ``with`` block (nested blocks ask the outer ones for what they lack). Enter and leave it in
    one thread. Errors on entering: tunekit.NotFoundError / ParseError for a bad log."""

    def __init__(self, records):
        self._paths, self._lines = _lines_of(records, "apply_history_best")
        self._handle = None
        self._warned = set()
        self.hits: List[str] = []
        self.misses: List[str] = []

    def __enter__(self):
        handle = _tunekit.autotvm.HistoryBest()
        text = "".join(line + "\n" for line in self._lines)
        handle.open(self._paths, text)
        self._handle = handle
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        stack = _stack()
        if stack and stack[-1] is self:
            stack.pop()
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        return False

    def query(self, task) -> Optional[str]:
        """The best record line for ``task`` (its target and workload), or None."""
        if self._handle is None:
            raise RuntimeError("apply_history_best: query outside its with block")
        return self._handle.query(task.target, task.name, task.args_json)

    def _warn_once(self, task, why: str) -> None:
        key = (task.target, task.name, task.args_json)
        if key in self._warned:
            return
        self._warned.add(key)
        warnings.warn(f"Cannot find config for target={task.target}, workload={task.workload} "
                      f"(task '{task.name}'){why}. A fallback configuration is used, which may "
                      "bring great performance regression.", RuntimeWarning, stacklevel=4)


def apply_history_best(records) -> ApplyHistoryBest:
    """AutoTVM apply_history_best: ``records`` is a log path, or an iterable of paths and
    (MeasureInput, MeasureResult) pairs; use it as ``with tunekit.apply_history_best(log):``."""
    return ApplyHistoryBest(records)


def _instantiate(task):
    """The template call of ``task`` under the current context's choice."""
    context = current()
    if context is None:
        return task.instantiate(task.fallback_config())
    line = context.query(task)
    if line is None:
        context.misses.append(task.name)
        context._warn_once(task, "")
        return task.instantiate(task.fallback_config())
    try:
        config = task._config_of(json.loads(line)["config"]["entity"])
    except _tunekit.TunekitError as e:
        context.misses.append(task.name)
        context._warn_once(task, f": its best record does not fit the template's space ({e})")
        return task.instantiate(task.fallback_config())
    context.hits.append(task.name)
    return task.instantiate(config)
