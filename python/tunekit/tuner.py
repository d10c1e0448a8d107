"""Tuners (AutoTVM ``autotvm.tuner``) on tunekit's search strategies: ``GridSearchTuner``,
``RandomTuner``, ``GATuner``, ``XGBTuner`` and tunekit's ``AutoTuner``; ``Tuner(task, "sa")``
names any strategy of docs/search.md. ``tune()`` runs AutoTVM's loop in C++ with the GIL
released: batches of ``n_parallel`` configurations are built, run in a worker process, passed to
the callbacks; Ctrl-C stops it after the batch in flight, whose records the log callbacks have
written, and raises KeyboardInterrupt.
"""

import json
import os
from typing import Optional, Sequence

from . import _tunekit
from . import callback as _callback
from . import record as _record
from .measure import measure_option as _measure_option
from .task import Task

__all__ = ["Tuner", "GridSearchTuner", "RandomTuner", "GATuner", "XGBTuner", "AutoTuner"]


class Tuner:
    """A tuner of ``task`` with the strategy ``strategy`` (a name of docs/search.md: "auto",
    "grid", "random", "ga", "sa", "xgb", ...) and its ``settings``; ``seed`` fixes every random
    choice. Errors: tunekit.NotFoundError for an unknown strategy (listing the names),
    tunekit.InvalidArgumentError for a bad setting."""

    strategy = "auto"

    def __init__(self, task: Task, strategy: Optional[str] = None, seed: int = 0, **settings):
        if not isinstance(task, Task):
            raise TypeError(f"{type(self).__name__}: give a task from tunekit.task.create, got "
                            f"{type(task).__name__}")
        self.task = task
        self.strategy = strategy or self.strategy
        self.seed = int(seed)
        self.stop_reason = None
        self._handle = _tunekit.autotvm.KernelTuner(
            task.config_space._space, task.name, task.args_json, task.target, task.flop,
            self.strategy, json.dumps(settings), self.seed)

    def tune(self, n_trial: int, measure_option: Optional[dict] = None,
             early_stopping: Optional[int] = None, callbacks: Sequence = (),
             si_prefix: str = "G") -> None:
        """Measures up to ``n_trial`` new configurations (fewer when the space is exhausted or
        ``early_stopping`` trials pass without a better one); after each batch calls every
        callback as ``callback(tuner, inputs, results)``. Failed configurations (compile errors,
        crashes, wrong answers, timeouts) are results with an error_no, not exceptions.
        Errors: the measurement setup's (no compiler, a reference kernel that does not build),
        as tunekit exceptions; a callback's exception, raised after the batch's log callbacks
        ran; KeyboardInterrupt on Ctrl-C, the same way."""
        if isinstance(n_trial, bool) or not isinstance(n_trial, int) or n_trial < 0:
            raise ValueError(f"tune: n_trial must be a whole number >= 0, got {n_trial!r}")
        if early_stopping is not None and (not isinstance(early_stopping, int)
                                           or early_stopping < 1):
            raise ValueError(f"tune: early_stopping must be None or >= 1, got {early_stopping!r}")
        measure = measure_option if measure_option is not None else _measure_option()
        if not (isinstance(measure, dict) and "builder" in measure and "runner" in measure):
            raise _tunekit.InvalidArgumentError(
                "tune: measure_option must be what tunekit.measure_option(builder, runner) "
                f"returns (a dict with 'builder' and 'runner'), got {measure_option!r}")
        spec = self.task.kernel.spec(self.task.name, measure, self.seed)
        natives = [self._native(cb) for cb in callbacks]
        self.stop_reason = self._handle.tune(json.dumps(spec), f"template '{self.task.name}'",
                                             self.task.config_space._space, n_trial,
                                             early_stopping, natives)

    def _native(self, callback):
        path = getattr(callback, "_log_path", None)
        if path is not None:
            _callback._check_log_writable(path)
            return ("log", path)
        if not callable(callback):
            raise TypeError(f"tune: a callback must be callable, got {type(callback).__name__}")
        task = self.task

        def call(lines, messages):
            pairs = [_record.decode(line, task, msg) for line, msg in zip(lines, messages)]
            callback(self, [p[0] for p in pairs], [p[1] for p in pairs])

        return ("py", call)

    def load_history(self, data_set, min_seed_records: int = 500) -> int:
        """Resumes from earlier records of this task (a log path, or pairs from
        tunekit.record.load_from_file): they are neither measured nor proposed again and may
        become the best. Returns how many were loaded. Errors: tunekit.InvalidArgumentError
        when they were written for another definition of the space."""
        paths, lines = _record._lines_of(data_set, "load_history")
        for path in paths:
            lines.extend(_tunekit.autotvm.read_log(path))
        text = "".join(line + "\n" for line in lines)
        source = paths[0] if len(paths) == 1 else "records"
        return self._handle.load_history(text, source)

    def has_next(self) -> bool:
        return self._handle.has_next()

    @property
    def best_flops(self) -> float:
        """The best score: FLOP/s when the task has a FLOP count (add_flop), else 1/seconds."""
        return self._handle.best_score

    @property
    def best_iter(self) -> int:
        return self._handle.best_iter

    @property
    def best_measure_pair(self):
        """(MeasureInput, MeasureResult) of the best trial, or None."""
        line = self._handle.best_record()
        return None if line is None else _record.decode(line, self.task)

    @property
    def best_config(self):
        """The best configuration (a ConfigEntity), or None."""
        pair = self.best_measure_pair
        return None if pair is None else pair[0].config

    @property
    def trial_count(self) -> int:
        """Trials held (loaded and measured)."""
        return self._handle.trial_count


def _range_settings(range_idx) -> dict:
    if range_idx is None:
        return {}
    begin, end = range_idx
    return {"begin": begin, "end": end}


class GridSearchTuner(Tuner):
    """Every valid configuration in index order (``range_idx=(begin, end)``, end inclusive)."""

    def __init__(self, task: Task, range_idx=None, seed: int = 0):
        super().__init__(task, "grid", seed, **_range_settings(range_idx))


class RandomTuner(Tuner):
    """Uniformly random valid configurations without repeats."""

    def __init__(self, task: Task, range_idx=None, seed: int = 0):
        super().__init__(task, "random", seed, **_range_settings(range_idx))


class GATuner(Tuner):
    """AutoTVM's genetic algorithm."""

    def __init__(self, task: Task, pop_size: int = 100, elite_num: int = 3,
                 mutation_prob: float = 0.1, seed: int = 0):
        super().__init__(task, "ga", seed, pop_size=pop_size, elite_num=elite_num,
                         mutation_prob=mutation_prob)


class XGBTuner(Tuner):
    """AutoTVM's XGBTuner: an XGBoost cost model of the measured scores guides simulated
    annealing; ``loss_type`` "reg" (default), "rank" or "rank-binary". Its features are the
    knob values (AutoTVM's feature_type "knob"): ``feature_type`` and ``optimizer`` are accepted
    for compatibility and ``log_interval`` is ignored."""

    def __init__(self, task: Task, plan_size: int = 64, feature_type: str = "knob",
                 loss_type: str = "reg", num_threads: Optional[int] = None,
                 optimizer: str = "sa", diversity_filter_ratio: Optional[float] = None,
                 log_interval: int = 50, seed: int = 0):
        if feature_type not in ("knob", "itervar", "curve"):
            raise ValueError(f"XGBTuner: unknown feature_type '{feature_type}' (knob, itervar, "
                             "curve)")
        if optimizer != "sa":
            raise ValueError(f"XGBTuner: unknown optimizer '{optimizer}' (sa)")
        settings = {"plan_size": plan_size, "loss": loss_type}
        if num_threads is not None:
            settings["num_threads"] = num_threads
        if diversity_filter_ratio is not None:
            settings["diversity_filter_ratio"] = diversity_filter_ratio
        super().__init__(task, "xgb", seed, **settings)


class AutoTuner(Tuner):
    """tunekit's default strategy ("auto", docs/search.md)."""

    def __init__(self, task: Task, seed: int = 0, **settings):
        super().__init__(task, "auto", seed, **settings)
