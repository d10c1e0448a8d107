"""Tuning logs (AutoTVM ``autotvm.record``): one JSON object per line, v0.2, byte-compatible
with AutoTVM's and with ``tunekit log`` / ``tunekit tune-kernel``. Reading goes through the C++
reader (blank and ``#`` lines skipped, v0.1 rows skipped with a warning, malformed lines warned
about as ``file:line: reason``).
"""

import json
from typing import Iterator, List, Optional, Tuple

from . import _tunekit
from .measure import MeasureErrorNo, MeasureInput, MeasureResult

__all__ = ["load_from_file", "decode", "encode", "RecordTask", "RecordConfig"]


class RecordTask:
    """The task of a log record: ``name``, ``args`` (as logged: tuples for lists), ``target``."""

    def __init__(self, name: str, args, target: str):
        self.name = name
        self.args = _tuplify(args)
        self.target = target

    @property
    def workload(self) -> tuple:
        return (self.name,) + self.args

    def __repr__(self):
        return f"Task(func_name={self.name}, args={self.args})"


class RecordConfig:
    """The configuration of a log record: ``index``, ``code_hash``, the entity list;
    ``cfg[name]`` is the knob's payload (split sizes, a value, ...)."""

    def __init__(self, config: dict):
        self.index = config.get("index", 0)
        self.code_hash = config.get("code_hash")
        self.entity = config.get("entity", [])

    def __getitem__(self, name: str):
        for knob, _tag, payload in self.entity:
            if knob == name:
                return payload
        raise KeyError(name)

    def to_json_dict(self) -> dict:
        return {"index": self.index, "code_hash": self.code_hash, "entity": self.entity}

    def __repr__(self):
        pairs = ", ".join(f"('{n}', {p!r})" for n, _t, p in self.entity)
        return f"[{pairs}],{self.code_hash},{self.index}"


def _tuplify(value):
    if isinstance(value, list):
        return tuple(_tuplify(v) for v in value)
    return value


def decode(line: str, task=None, error_msg: str = "") -> Tuple[MeasureInput, MeasureResult]:
    """One v0.2 log line as (MeasureInput, MeasureResult). With ``task`` (a tunekit Task of the
    same workload) the config is a ConfigEntity of its space, else a RecordConfig."""
    row = json.loads(line)
    target, name, args = row["input"][0], row["input"][1], row["input"][2]
    costs, error_no, all_cost, timestamp = row["result"]
    error = MeasureErrorNo(error_no) if 0 <= error_no <= 8 else MeasureErrorNo.UNKNOWN_ERROR
    if task is not None and task.name == name:
        config = task._config_of(row["config"]["entity"])
    else:
        task = RecordTask(name, args, target)
        config = RecordConfig(row["config"])
    result = MeasureResult(tuple(costs) if error == MeasureErrorNo.NO_ERROR else (), error,
                           all_cost, timestamp, error_msg)
    inp = MeasureInput(target, task, config)
    return _Pair(inp, result, line)


class _Pair(tuple):
    """(MeasureInput, MeasureResult) that remembers its log line (load_history, apply)."""

    def __new__(cls, inp, res, line):
        pair = super().__new__(cls, (inp, res))
        pair.line = line
        return pair


def encode(inp: MeasureInput, res: MeasureResult) -> str:
    """A v0.2 log line of (inp, res), AutoTVM's encoding (without tunekit's space_hash and
    build_cost keys, which only lines tunekit writes carry)."""
    task = inp.task
    args = json.loads(json.dumps(list(task.args), default=list))
    config = inp.config.to_json_dict()
    costs = list(res.costs) if res.error_no == MeasureErrorNo.NO_ERROR else [1000000000.0]
    row = {"input": [inp.target, task.name, args, {}], "config": config,
           "result": [costs, int(res.error_no), res.all_cost, res.timestamp], "version": 0.2,
           "tvm_version": "tunekit"}
    return json.dumps(row)


def load_from_file(filename: str) -> Iterator[Tuple[MeasureInput, MeasureResult]]:
    """The records of a tuning log, in order. Errors: tunekit.NotFoundError (a
    FileNotFoundError) for a missing file, tunekit.FileIOError, tunekit.ParseError."""
    for line in _tunekit.autotvm.read_log(str(filename)):
        yield decode(line)


def _lines_of(records, what: str) -> Tuple[List[str], List[str]]:
    """(log paths, record lines) of a path, a (MeasureInput, MeasureResult) iterable, or a
    list mixing both (AutoTVM apply_history_best / load_history inputs)."""
    import os

    if isinstance(records, (str, os.PathLike)):
        return [os.fspath(records)], []
    paths: List[str] = []
    lines: List[str] = []
    for item in records:
        if isinstance(item, (str, os.PathLike)):
            paths.append(os.fspath(item))
        elif hasattr(item, "line"):
            lines.append(item.line)
        else:
            raise TypeError(f"{what}: give log paths or (MeasureInput, MeasureResult) pairs from "
                            f"tunekit.record.load_from_file, got {type(item).__name__}")
    return paths, lines
