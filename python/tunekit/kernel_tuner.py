"""Kernel Tuner's entry point, ``tunekit.tune_kernel(kernel_name, kernel_source, problem_size,
arguments, tune_params, ...)``, on tunekit's engine: the arguments are NumPy arrays and scalars
(their data reaches the kernel), every configuration of ``tune_params`` (with ``restrictions``)
is a ``-D`` definition, ``answer`` checks the outputs; returns ``(results, env)`` as Kernel
Tuner does. Each configuration runs in a worker process (a crash is a failed configuration).
"""

import json
import numbers
import os
import shutil
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _tunekit
from . import record as _record
from .kernel import _DTYPES, Array, Kernel, Scalar
from .measure import LocalBuilder, LocalRunner, MeasureErrorNo, measure_option
from .space import ConfigSpace

__all__ = ["tune_kernel"]

#: Kernel Tuner's strategy names and tunekit's equivalents (tunekit's own names work too).
STRATEGIES = {"brute_force": "grid", "random_sample": "random", "genetic_algorithm": "ga",
              "simulated_annealing": "sa", "bayes_opt": "xgb"}

_FAILURE = {MeasureErrorNo.COMPILE_HOST: "CompilationFailedConfig",
            MeasureErrorNo.COMPILE_DEVICE: "CompilationFailedConfig",
            MeasureErrorNo.BUILD_TIMEOUT: "CompilationFailedConfig",
            MeasureErrorNo.INSTANTIATION_ERROR: "InvalidConfig"}

_C_TYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long"}


def _language(lang: Optional[str], source: str) -> str:
    if lang is None:
        if "__kernel" in source:
            return "opencl"
        return "c++"
    name = str(lang).lower()
    if name in ("c", "c++", "cpp"):
        return "c++"
    if name == "opencl":
        return "opencl"
    raise _tunekit.UnsupportedError(f"tune_kernel: lang '{lang}' is not supported (C, C++, "
                                    "OpenCL)")


def _read_source(kernel_source) -> str:
    if isinstance(kernel_source, (list, tuple)):
        kernel_source = kernel_source[0]
    if isinstance(kernel_source, os.PathLike) or (
            isinstance(kernel_source, str) and "\n" not in kernel_source
            and os.path.isfile(kernel_source)):
        with open(os.fspath(kernel_source)) as f:
            return f.read()
    if not isinstance(kernel_source, str):
        raise TypeError("tune_kernel: kernel_source must be the source text or a file name")
    return kernel_source


def _arguments(arguments: Sequence, answer: Optional[Sequence], folder: str) -> list:
    """tunekit.Scalar/Array descriptions of the NumPy arguments, their data in files."""
    import numpy

    if answer is not None and len(answer) != len(arguments):
        raise _tunekit.InvalidArgumentError(
            f"tune_kernel: answer has {len(answer)} entries for {len(arguments)} arguments "
            "(one per argument, None where nothing is checked)")
    out = []
    for i, arg in enumerate(arguments):
        name = f"arg{i}"
        if isinstance(arg, numpy.ndarray):
            dtype = _dtype(arg.dtype, i)
            if arg.size == 0:
                raise _tunekit.InvalidArgumentError(f"tune_kernel: argument {i} is empty")
            path = os.path.join(folder, f"{name}.bin")
            numpy.ascontiguousarray(arg).tofile(path)
            checked = answer is not None and answer[i] is not None
            out.append(Array(name, arg.size, dtype, fill={"file": path}, output=checked))
        elif isinstance(arg, (numpy.generic, int, float)) and not isinstance(arg, bool):
            value = arg.item() if isinstance(arg, numpy.generic) else arg
            if isinstance(arg, numpy.generic):
                dtype = _dtype(arg.dtype, i)
            else:
                dtype = "int32" if isinstance(arg, int) else "float32"
            if answer is not None and answer[i] is not None:
                raise _tunekit.InvalidArgumentError(
                    f"tune_kernel: answer[{i}] is given for a scalar argument")
            out.append(Scalar(name, value, dtype))
        else:
            raise _tunekit.DTypeError(f"tune_kernel: argument {i} is a {type(arg).__name__}; "
                                      "give NumPy arrays and NumPy scalars")
    return out


def _dtype(dtype, i: int) -> str:
    if dtype.name not in _DTYPES:
        raise _tunekit.DTypeError(f"tune_kernel: argument {i} has dtype {dtype.name}; kernels "
                                  "take float32, float64, int32 and int64")
    return _DTYPES[dtype.name]


def _answer_check(arguments: list, answer: Sequence, atol: float, folder: str) -> dict:
    """A verification function (docs/kernels.md, "function") comparing each checked output with
    its answer as numpy.allclose(answer, result, atol=atol) does (rtol 1e-5)."""
    import numpy

    checks = []
    for i, (arg, expected) in enumerate(zip(arguments, answer)):
        if expected is None:
            continue
        expected = numpy.asarray(expected)
        if expected.size != arg.size:
            raise _tunekit.InvalidArgumentError(
                f"tune_kernel: answer[{i}] has {expected.size} elements, argument {i} has "
                f"{arg.size}")
        path = os.path.join(folder, f"answer{i}.bin")
        numpy.ascontiguousarray(expected, dtype=arg.dtype).tofile(path)
        ctype = _C_TYPES[arg.dtype]
        checks.append(f"  if (compare<{ctype}>({i}, static_cast<const {ctype}*>(args[{i}]), "
                      f"{json.dumps(path)}, {arg.size}LL, why, why_size)) return 1;")
    source = _CHECK_SOURCE.replace("ATOL", repr(float(atol))).replace("CHECKS", "\n".join(checks))
    path = os.path.join(folder, "answer_check.cpp")
    with open(path, "w") as f:
        f.write(source)
    return {"function": {"source": path, "entry": "tunekit_answer_check", "flags": ["-O2"]},
            "reference": "none"}


_CHECK_SOURCE = r"""#include <cmath>
#include <cstdio>
#include <cstdlib>
namespace {
template <class T>
int compare(int arg, const T* got, const char* path, long long n, char* why, int why_size) {
  T* want = static_cast<T*>(std::malloc(sizeof(T) * n));
  std::FILE* f = std::fopen(path, "rb");
  const bool read = want && f && std::fread(want, sizeof(T), n, f) == static_cast<size_t>(n);
  if (f) std::fclose(f);
  if (!read) {
    std::snprintf(why, why_size, "cannot read the answer of argument %d from %s", arg, path);
    std::free(want);
    return 1;
  }
  for (long long i = 0; i < n; ++i) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    if (std::isnan(g) && std::isnan(w)) continue;
    if (!(std::fabs(g - w) <= ATOL + 1e-5 * std::fabs(w))) {
      std::snprintf(why, why_size, "argument %d element %lld: %g vs answer %g (atol %g)", arg, i,
                    g, w, ATOL);
      std::free(want);
      return 1;
    }
  }
  std::free(want);
  return 0;
}
}  // namespace
extern "C" int tunekit_answer_check(int count, void* const* args, const void* const* reference,
                                    const long long* elements, char* why, int why_size) {
CHECKS
  return 0;
}
"""


def _c_entry(source: str, kernel_name: str, arguments: list) -> Tuple[str, str]:
    """(source, entry): a C++ function whose name may be mangled gets an extern "C" shim."""
    if 'extern "C"' in source:
        return source, kernel_name
    params = ", ".join(f"{_C_TYPES[a.dtype]}{'' if isinstance(a, Scalar) else '*'} a{i}"
                       for i, a in enumerate(arguments))
    call = ", ".join(f"a{i}" for i in range(len(arguments)))
    shim = (f"\nextern \"C\" void tunekit_entry_{kernel_name}({params}) "
            f"{{ {kernel_name}({call}); }}\n")
    return source + shim, f"tunekit_entry_{kernel_name}"


def _launch(problem_size, tune_params: dict, block_size_names, grid_div) -> dict:
    """OpenCL launch sizes as Kernel Tuner derives them: local = the block size parameters,
    global = ceil(problem_size / grid divisor) * local, per dimension."""
    sizes = list(problem_size) if isinstance(problem_size, (list, tuple)) else [problem_size]
    names = block_size_names or ["block_size_x", "block_size_y", "block_size_z"]
    local, global_ = [], []
    for d, size in enumerate(sizes[:3]):
        block = names[d] if d < len(names) and names[d] in tune_params else "1"
        divisors = grid_div[d] if grid_div[d] is not None else [block]
        div = "*".join(f"({x})" for x in divisors) or "1"
        size_text = size if isinstance(size, str) else str(int(size))
        local.append(block)
        global_.append(f"(({size_text}) + {div} - 1) // ({div}) * ({block})")
    return {"global": global_, "local": local}


def _space(tune_params: dict, restrictions) -> ConfigSpace:
    if not isinstance(tune_params, dict) or not tune_params:
        raise _tunekit.InvalidArgumentError("tune_kernel: tune_params must be a non-empty dict "
                                            "{name: [values]}")
    space = ConfigSpace()
    for name, values in tune_params.items():
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
            raise _tunekit.InvalidArgumentError(
                f"tune_kernel: tune_params values must be lists, got {name!r}: {values!r}")
        space.define_knob(name, list(values))
    if restrictions is None:
        restrictions = []
    if isinstance(restrictions, str) or callable(restrictions):
        restrictions = [restrictions]
    for r in restrictions:
        if not isinstance(r, str):
            raise _tunekit.InvalidArgumentError(
                "tune_kernel: restrictions must be expressions (strings such as "
                "\"block_size_x * tile <= 64\"); Python functions are not supported")
        space.multi_filter(r)
    space._frozen = True
    space._space.check_define_names()
    return space


def _budget(strategy: str, strategy_options: Optional[dict], valid: int) -> int:
    options = dict(strategy_options or {})
    if "max_fevals" in options:
        return min(int(options["max_fevals"]), valid)
    return valid if strategy == "grid" else min(100, valid)


def _result_of(params: dict, res) -> Dict[str, Any]:
    row = dict(params)
    if res.ok:
        row["times"] = [c * 1e3 for c in res.costs]
        row["time"] = sum(row["times"]) / len(row["times"])
    else:
        row["time"] = _FAILURE.get(res.error_no, "RuntimeFailedConfig")
        row["error"] = res.error_msg or res.error_no.name
    row["compile_time"] = None
    return row


def tune_kernel(kernel_name: str, kernel_source, problem_size, arguments: Sequence,
                tune_params: Dict[str, Sequence], grid_div_x=None, grid_div_y=None,
                grid_div_z=None, restrictions=None, answer=None, atol: float = 1e-6,
                verify=None, verbose: bool = False, lang: Optional[str] = None,
                device: int = 0, platform: int = 0, compiler: Optional[str] = None,
                compiler_options: Optional[Sequence[str]] = None, defines=None,
                iterations: int = 7, block_size_names=None, quiet: bool = False,
                strategy: Optional[str] = None, strategy_options: Optional[dict] = None,
                cache: Optional[str] = None, metrics: Optional[dict] = None,
                seed: int = 0, **unsupported) -> Tuple[List[dict], dict]:
    """Tunes ``kernel_name`` of ``kernel_source`` (text or a file name) over ``tune_params``
    ({name: values}, each a ``-D`` definition) with ``restrictions`` (expressions), calling it
    with ``arguments`` (NumPy arrays passed by pointer with their data, NumPy scalars by value).
    ``answer`` (one entry per argument, None where unchecked) checks the outputs within ``atol``
    (numpy.allclose); ``iterations`` timed calls per configuration; ``strategy`` a Kernel Tuner
    name (brute_force, random_sample, genetic_algorithm, simulated_annealing) or a tunekit one
    (auto, xgb, ...), ``strategy_options={"max_fevals": N}``; ``cache`` a tuning log (AutoTVM
    JSON lines) resumed and appended to. C/C++ (lang "C") and OpenCL (``problem_size`` and the
    ``block_size_*`` parameters give the launch sizes).

    Returns (results, env): one dict per configuration measured (or read from ``cache``) with
    the parameters, "time" (mean in ms; a failure's kind as Kernel Tuner names it) and "times";
    env describes the run. Errors: tunekit exceptions with the CLI's one-line messages."""
    if verify is not None or unsupported:
        names = sorted(list(unsupported) + (["verify"] if verify is not None else []))
        raise _tunekit.UnsupportedError(f"tune_kernel: argument(s) not supported by tunekit: "
                                        f"{', '.join(names)}")
    if (isinstance(iterations, bool) or not isinstance(iterations, numbers.Integral)
            or iterations < 1):
        raise _tunekit.InvalidArgumentError(
            f"tune_kernel: iterations must be a whole number >= 1, got {iterations!r}")
    source = _read_source(kernel_source)
    language = _language(lang, source)
    space = _space(tune_params, restrictions)
    strategy_name = STRATEGIES.get(strategy or "brute_force", strategy)
    folder = tempfile.mkdtemp(prefix="tunekit_kt_")
    try:
        args = _arguments(arguments, answer, folder)
        flags = [str(f) for f in (compiler_options or [])]
        flags += [f"-D{k}={v}" for k, v in (defines or {}).items()]
        entry = kernel_name
        launch = None
        if language == "c++":
            source, entry = _c_entry(source, kernel_name, args)
        else:
            launch = _launch(problem_size, tune_params, block_size_names,
                             [grid_div_x, grid_div_y, grid_div_z])
        verify_spec = None if answer is None else _answer_check(args, answer, atol, folder)
        if verify_spec is None:
            verify_spec = {"reference": "none"}
        kernel = Kernel(source=source, entry=entry, arguments=args, flags=flags,
                        language=language, verify=verify_spec, launch=launch)
        return _run(kernel_name, kernel, space, strategy_name, strategy_options, iterations,
                    compiler, cache, verbose and not quiet, metrics, seed, problem_size)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run(kernel_name, kernel, space, strategy, strategy_options, iterations, compiler, cache,
         verbose, metrics, seed, problem_size):
    from .callback import _check_log_writable, progress_bar

    workload = [spec for spec in (a.spec() for a in kernel.arguments)]
    args = [["TENSOR", [w["size"]], w["dtype"]] if "size" in w else w["value"] for w in workload]
    settings = {k: v for k, v in (strategy_options or {}).items()
                if k not in ("max_fevals", "time_limit")}
    handle = _tunekit.autotvm.KernelTuner(space._space, kernel_name, json.dumps(args),
                                          "c -march=native", 0.0, strategy, json.dumps(settings),
                                          int(seed))
    names = space.knob_names()
    rows: List[dict] = []

    def params_of(entity) -> dict:
        return {name: payload for name, _tag, payload in entity}

    resumed = 0
    if cache is not None:
        cache = cache if cache.endswith(".json") else cache + ".json"
        if os.path.exists(cache):
            lines = _tunekit.autotvm.read_log(cache)
            resumed = handle.load_history("".join(line + "\n" for line in lines), cache)
            key = (kernel_name, json.dumps(args))
            for line in lines:
                row = json.loads(line)
                if (row["input"][1], json.dumps(row["input"][2])) == key:
                    inp, res = _record.decode(line)
                    rows.append(_result_of(params_of(inp.config.entity), res))
    valid = len(space)
    n_trial = max(0, _budget(strategy, strategy_options, valid) - resumed)

    def collect(lines, messages):
        for line, msg in zip(lines, messages):
            inp, res = _record.decode(line, None, msg)
            rows.append(_result_of(params_of(inp.config.entity), res))

    callbacks = [("py", collect)]
    if cache is not None:
        _check_log_writable(cache)
        callbacks.insert(0, ("log", cache))
    if verbose:
        bar = progress_bar(n_trial, f"[{kernel_name}]")

        class _Shim:
            task = type("T", (), {"flop": 0.0})()
            best_flops = property(lambda self: handle.best_score)

        callbacks.append(("py", lambda lines, messages: bar(
            _Shim(), [None] * len(lines),
            [_record.decode(line, None, m)[1] for line, m in zip(lines, messages)])))
    builder = LocalBuilder(timeout=60, compiler=compiler)
    runner = LocalRunner(number=1, repeat=int(iterations), warmup=1)
    spec = kernel.spec(kernel_name, measure_option(builder, runner), seed)
    reason = handle.tune(json.dumps(spec), f"kernel '{kernel_name}'", space._space, n_trial,
                         None, callbacks)
    if metrics:
        for row in rows:
            if isinstance(row.get("time"), float):
                for name, fn in metrics.items():
                    row[name] = fn(row)
    env = {"kernel_name": kernel_name, "problem_size": problem_size,
           "tune_params": {n: json.loads(space._space.entities(n)) for n in names},
           "iterations": iterations, "strategy": strategy, "valid_configurations": valid,
           "measured": handle.trial_count - resumed, "resumed": resumed,
           "stop_reason": reason, "cache": cache, "device_name": _cpu_name(),
           "objective": "time", "backend": "tunekit"}
    return rows, env


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover
        pass
    return "unknown CPU"
