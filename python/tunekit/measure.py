"""How configurations are measured (AutoTVM ``measure_option``, ``LocalBuilder``,
``LocalRunner``) and what a measurement is (``MeasureInput``, ``MeasureResult``,
``MeasureErrorNo``). The builder and runner are tunekit's kernel builder (shared objects in the
artefact cache, ``n_parallel`` at once) and isolated runner (a worker process: a crash or a hang
is a failed trial), configured with the keys of docs/kernels.md ("build", "timing").
"""

import enum
from typing import Any, Dict, List, NamedTuple, Optional

__all__ = [
    "LocalBuilder",
    "LocalRunner",
    "measure_option",
    "MeasureInput",
    "MeasureResult",
    "MeasureErrorNo",
]


class MeasureErrorNo(enum.IntEnum):
    """AutoTVM's error codes, as written in logs."""

    NO_ERROR = 0
    INSTANTIATION_ERROR = 1
    COMPILE_HOST = 2
    COMPILE_DEVICE = 3
    RUNTIME_DEVICE = 4
    WRONG_ANSWER = 5
    BUILD_TIMEOUT = 6
    RUN_TIMEOUT = 7
    UNKNOWN_ERROR = 8


class MeasureInput(NamedTuple):
    """What was measured: the target string, the task and the configuration."""

    target: str
    task: Any
    config: Any


class MeasureResult(NamedTuple):
    """A measurement: ``costs`` (seconds, one per repeat after dropping the fastest and slowest
    of more than two; empty for a failure), ``error_no``, ``all_cost`` (seconds, build + run),
    ``timestamp`` (Unix seconds) and ``error_msg`` (why it failed; not written to logs)."""

    costs: tuple
    error_no: MeasureErrorNo
    all_cost: float
    timestamp: float
    error_msg: str = ""

    @property
    def ok(self) -> bool:
        return self.error_no == MeasureErrorNo.NO_ERROR and len(self.costs) > 0

    @property
    def mean(self) -> float:
        """Mean cost in seconds (inf for a failure)."""
        return sum(self.costs) / len(self.costs) if self.ok else float("inf")


def _positive(name: str, value, minimum=0.0):
    if value is None:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise ValueError(f"{name} must be a number >= {minimum}, got {value!r}")
    return value


class LocalBuilder:
    """Compiles configurations on this machine: ``n_parallel`` at once (None: one per CPU; it is
    also the batch size of the search), each within ``timeout`` seconds (else BUILD_TIMEOUT).
    tunekit's extras: ``march`` (-march=), ``compiler`` (default $CXX, else c++),
    ``cache_dir`` (the artefact cache)."""

    def __init__(self, timeout: float = 10, n_parallel: Optional[int] = None,
                 march: str = "native", compiler: Optional[str] = None,
                 cache_dir: Optional[str] = None, **kwargs):
        unknown = set(kwargs) - {"build_func", "build_kwargs", "do_fork", "runtime"}
        if unknown:
            raise TypeError(f"LocalBuilder: unknown argument(s) {', '.join(sorted(unknown))}")
        self.timeout = _positive("LocalBuilder timeout", timeout, 1e-3)
        self.n_parallel = _positive("LocalBuilder n_parallel", n_parallel, 1)
        self.march = march
        self.compiler = compiler
        self.cache_dir = cache_dir

    def spec_fields(self) -> Dict[str, Any]:
        build: Dict[str, Any] = {"timeout": self.timeout, "n_parallel": int(self.n_parallel or 0),
                                 "march": self.march}
        if self.compiler:
            build["compiler"] = self.compiler
        if self.cache_dir:
            build["cache_dir"] = self.cache_dir
        return {"build": build}


class LocalRunner:
    """Runs and times configurations on this machine (AutoTVM LocalRunner): one warm-up call,
    then ``repeat`` measurements, each the mean of ``number`` calls (raised until one lasts
    ``min_repeat_ms``), ``cooldown_interval`` seconds of sleep between measurements, a run
    longer than ``timeout`` seconds is RUN_TIMEOUT; ``enable_cpu_cache_flush`` flushes the
    arguments from the caches before each call. tunekit's extras: ``warmup`` (untimed calls)
    and ``isolation`` ("worker", the default: a warm worker process, a crash is a failed trial
    and a failed trial replaces the worker; "process": a child of the worker forked per trial;
    "in-process": trusted kernels only)."""

    def __init__(self, timeout: float = 10, number: int = 4, repeat: int = 3,
                 min_repeat_ms: float = 0, cooldown_interval: float = 0.0,
                 enable_cpu_cache_flush: bool = False, warmup: int = 1,
                 isolation: str = "worker", **kwargs):
        unknown = set(kwargs) - {"n_parallel", "module_loader"}
        if unknown:
            raise TypeError(f"LocalRunner: unknown argument(s) {', '.join(sorted(unknown))}")
        self.timeout = _positive("LocalRunner timeout", timeout, 1e-3)
        self.number = int(_positive("LocalRunner number", number, 1))
        self.repeat = int(_positive("LocalRunner repeat", repeat, 1))
        self.min_repeat_ms = _positive("LocalRunner min_repeat_ms", min_repeat_ms)
        self.cooldown_interval = _positive("LocalRunner cooldown_interval", cooldown_interval)
        self.enable_cpu_cache_flush = bool(enable_cpu_cache_flush)
        self.warmup = int(_positive("LocalRunner warmup", warmup))
        self.isolation = isolation

    def spec_fields(self) -> Dict[str, Any]:
        return {"timing": {"number": self.number, "repeat": self.repeat,
                           "min_repeat_ms": self.min_repeat_ms, "warmup": self.warmup,
                           "cooldown": self.cooldown_interval,
                           "flush_cache": self.enable_cpu_cache_flush, "timeout": self.timeout},
                "isolation": self.isolation}


def measure_option(builder=None, runner=None) -> Dict[str, Any]:
    """The builder and runner of a tuning run (AutoTVM measure_option); defaults: LocalBuilder()
    and LocalRunner(). Strings "local" name them too."""
    if builder is None or builder == "local":
        builder = LocalBuilder()
    if runner is None or runner == "local":
        runner = LocalRunner()
    if not isinstance(builder, LocalBuilder):
        raise TypeError(f"measure_option: builder must be a tunekit.LocalBuilder, got "
                        f"{type(builder).__name__}")
    if not isinstance(runner, LocalRunner):
        raise TypeError(f"measure_option: runner must be a tunekit.LocalRunner, got "
                        f"{type(runner).__name__}")
    return {"builder": builder, "runner": runner}
