"""TunableOp settings, results files and offline tuning: ``torch.cuda.tunable``, function by
function, on tunekit's engine (the process-wide C++ ``tunekit::tuning_context()``).

As upstream, a set ``TUNEKIT_*`` environment variable wins over the call that sets the same
setting (``TUNEKIT_ENABLED``, ``TUNEKIT_TUNING``, ``TUNEKIT_RECORD_UNTUNED``,
``TUNEKIT_FILENAME``, ``TUNEKIT_MAX_TUNING_DURATION_MS``, ``TUNEKIT_MAX_TUNING_ITERATIONS``,
``TUNEKIT_NUMERICAL_CHECK``, ``TUNEKIT_ROTATING_BUFFER_SIZE``; docs/tunable.md). Defaults differ
from PyTorch's where tunekit's C++ API differs: TunableOp and the numerical check are on.
"""

import atexit
import math
import os
import subprocess
import sys
import tempfile
import warnings
from typing import Optional, Tuple

from . import _tunekit

_c = _tunekit.tunable
_off = _tunekit.offline

__all__ = [
    "enable",
    "is_enabled",
    "tuning_enable",
    "tuning_is_enabled",
    "record_untuned_enable",
    "record_untuned_is_enabled",
    "set_max_tuning_duration",
    "get_max_tuning_duration",
    "set_max_tuning_iterations",
    "get_max_tuning_iterations",
    "set_filename",
    "get_filename",
    "set_numerical_check_tolerances",
    "set_rotating_buffer_size",
    "get_rotating_buffer_size",
    "get_results",
    "get_validators",
    "write_file_on_exit",
    "write_file",
    "read_file",
    "tune_gemm_in_file",
    "mgpu_tune_gemm_in_file",
]


def enable(val: bool = True) -> None:
    """Turns TunableOp on or off (off: every GEMM runs the Default library). TUNEKIT_ENABLED wins."""
    _c.enable(bool(val))


def is_enabled() -> bool:
    """Whether TunableOp is on (the environment first)."""
    return _c.is_enabled()


def tuning_enable(val: bool = True) -> None:
    """Turns tuning of problems without a result on or off. TUNEKIT_TUNING wins."""
    _c.tuning_enable(bool(val))


def tuning_is_enabled() -> bool:
    """Whether problems without a result are tuned (the environment first)."""
    return _c.tuning_is_enabled()


def record_untuned_enable(val: bool = True) -> None:
    """Turns recording of untuned problems (to the untuned file) on or off; turning it on again
    forgets which problems were recorded. TUNEKIT_RECORD_UNTUNED wins."""
    _c.record_untuned_enable(bool(val))


def record_untuned_is_enabled() -> bool:
    """Whether untuned problems are recorded (the environment first)."""
    return _c.record_untuned_is_enabled()


_LONG_LONG_MAX = 2**63 - 1


def _whole(fn: str, name: str, value, largest: int = _LONG_LONG_MAX) -> int:
    """``value`` (argument ``name`` of ``fn``) as an int; negative ones below -1 become -1 (the
    setters treat every negative value alike). tunekit.InvalidArgumentError naming the argument
    for NaN, an infinity, what is no number, or a value above ``largest``."""
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        raise _tunekit.InvalidArgumentError(
            f"tunable.{fn}: {name} must be a whole number, got {value!r}") from None
    if number > largest:
        raise _tunekit.InvalidArgumentError(
            f"tunable.{fn}: {name} = {number} is too large (at most {largest})")
    return max(number, -1)


def _real(fn: str, name: str, value) -> float:
    """``value`` (argument ``name`` of ``fn``) as a float; tunekit.InvalidArgumentError naming
    the argument for what is no number or does not fit a double."""
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise _tunekit.InvalidArgumentError(
            f"tunable.{fn}: {name} must be a real number that fits a double, got "
            f"{_short(value)}") from None


def _short(value) -> str:
    """repr(value), cut to 40 characters (a 400-digit integer is not worth printing whole)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def set_max_tuning_duration(duration: int) -> None:
    """Time budget in ms for each candidate's timed calls; negative -> 0; 0 = no limit (both
    limits 0: 100 calls). TUNEKIT_MAX_TUNING_DURATION_MS wins."""
    _c.set_max_tuning_duration(_whole("set_max_tuning_duration", "duration", duration))


def get_max_tuning_duration() -> int:
    """The tuning time budget per candidate in ms (0: no limit)."""
    return _c.get_max_tuning_duration()


def set_max_tuning_iterations(iterations: int) -> None:
    """Most timed calls per candidate; negative -> 0; 0 = no limit.
    TUNEKIT_MAX_TUNING_ITERATIONS wins."""
    _c.set_max_tuning_iterations(_whole("set_max_tuning_iterations", "iterations", iterations))


def get_max_tuning_iterations() -> int:
    """The most timed calls per candidate (0: no limit)."""
    return _c.get_max_tuning_iterations()


_confirm_calls_set = False  # set_confirm_calls() was called (tunekit.torch keeps the value)


def set_confirm_calls(calls: int) -> None:
    """Calls that confirm each stored or tuned winner in place (tunekit's own; 0 = off, the
    default outside tunekit.torch): a winner's first ``calls`` calls in this process alternate
    with Default on the caller's tensors, timed, and Default serves the problem from then on
    when its median time was lower. Negative -> 0; odd counts round up. TUNEKIT_CONFIRM_CALLS
    wins."""
    global _confirm_calls_set
    _c.set_confirm_calls(_whole("set_confirm_calls", "calls", calls))
    _confirm_calls_set = True


def get_confirm_calls() -> int:
    """The calls each winner is confirmed with (0: off)."""
    return _c.get_confirm_calls()


def get_confirmations() -> Tuple[Tuple[str, str, str, float, float, bool], ...]:
    """Confirmations reached in this process, in order: (op signature, params signature,
    solution, winner's median ms, Default's median ms, kept). Not kept: Default serves it."""
    return tuple(_c.get_confirmations())


_api_filename: Optional[str] = None


def set_filename(filename: str, insert_device_ordinal: bool = False) -> None:
    """Sets the results file: read on the first GEMM (or read_file()), appended to as problems
    are tuned. The device ordinal (0 in this process) is inserted only when asked, as upstream:
    for the first ``%d``, else before the last '.' of the base name, else at the end.
    TUNEKIT_FILENAME wins (with the ordinal inserted)."""
    global _api_filename
    if "\0" in os.fspath(filename):
        raise _tunekit.InvalidArgumentError(
            f"tunable.set_filename: the file name contains a NUL character: {filename!r}")
    _c.set_filename(os.fspath(filename), bool(insert_device_ordinal))
    _api_filename = os.fspath(filename)


def get_filename() -> str:
    """The results file name in effect (default ``tunekit_results0.csv``)."""
    return _c.get_filename()


def set_numerical_check_tolerances(enable: bool, atol: float = 1e-5, rtol: float = 1e-5) -> None:
    """Turns the numerical check of every candidate against Default on or off, with these
    tolerances (|C - C_ref| <= atol + rtol * |C_ref|); atol and rtol must be > 0
    (tunekit.InvalidArgumentError) when the check is enabled; with ``enable`` False they are
    ignored, as upstream. TUNEKIT_NUMERICAL_CHECK wins."""
    atol = _real("set_numerical_check_tolerances", "atol", atol)
    rtol = _real("set_numerical_check_tolerances", "rtol", rtol)
    if not enable and not (0 < atol < math.inf and 0 < rtol < math.inf):
        _, old_atol, old_rtol = _c.get_numerical_check_tolerances()  # kept while it is off
        atol = 1e-5 if old_atol is None else old_atol
        rtol = 1e-5 if old_rtol is None else old_rtol
    _c.set_numerical_check_tolerances(bool(enable), atol, rtol)


def set_rotating_buffer_size(buffer_size: int) -> None:
    """Rotating buffer size in MiB (operand copies cycled through while timing, so that a
    candidate is not timed on warm caches); negative -> the last-level cache this process can
    use; 0 = off; at most 2**44 - 1 (its bytes fit 64 bits). TUNEKIT_ROTATING_BUFFER_SIZE
    wins."""
    _c.set_rotating_buffer_size(_whole("set_rotating_buffer_size", "buffer_size", buffer_size,
                                       _c.MAX_ROTATING_BUFFER_MIB))


def get_rotating_buffer_size() -> int:
    """The rotating buffer size in effect, in bytes (as upstream: set in MiB, read in bytes)."""
    return _c.get_rotating_buffer_size()


def get_results() -> Tuple[Tuple[str, str, str, float], ...]:
    """Every result in memory as (op signature, params signature, solution, time in ms), sorted
    by signatures."""
    return tuple(tuple(r) for r in _c.get_results())


def get_validators() -> Tuple[Tuple[str, str], ...]:
    """This machine's validators as (key, value): what a results file must match to be read."""
    return tuple(tuple(v) for v in _c.get_validators())


_write_on_exit = False


def _write_at_exit() -> None:
    if _write_on_exit:
        try:
            write_file()
        except Exception as e:  # an exit handler must not raise
            print(f"tunekit: write_file_on_exit: {e}", file=sys.stderr)


atexit.register(_write_at_exit)


def write_file_on_exit(val: bool) -> None:
    """Whether the results file is rewritten (write_file()) when the interpreter exits; off
    until called (upstream: on). tunekit appends every result as it is found, so this only
    matters for results read from other files."""
    global _write_on_exit
    _write_on_exit = bool(val)


def write_file(filename: Optional[str] = None) -> bool:
    """Writes the validators and every result in memory to ``filename`` (default:
    get_filename()), replacing it. Returns True; raises tunekit.FileIOError when it cannot."""
    return _c.write_file(None if filename is None else os.fspath(filename))


def read_file(filename: Optional[str] = None) -> bool:
    """Reads and merges a results file (default: get_filename()). Returns False when it does
    not exist. Unlike upstream (which returns False), a file that cannot be used raises:
    tunekit.ParseError naming file:line for a malformed line, tunekit.ValidatorMismatchError
    for a file of another environment (nothing of it is loaded)."""
    return _c.read_file(None if filename is None else os.fspath(filename))


def _report(outcomes, skipped, what: str) -> None:
    """Warns about skipped lines; raises when a problem could not be tuned."""
    for message in skipped:
        warnings.warn(f"{what}: skipped {message}", stacklevel=3)
    failed = [o for o in outcomes if o[2] == "failed" or o[5].startswith("NOT SAVED")]
    if failed:
        op, params, _, _, _, note = failed[0]
        raise _tunekit.RunError(
            f"{what}: {len(failed)} of {len(outcomes)} problem(s) could not be tuned or saved "
            f"(first: {op},{params}: {note}); the others' results were written")


def tune_gemm_in_file(filename: str, progress: bool = True) -> None:
    """Tunes every GEMM problem of a TunableOp untuned or results file (PyTorch's too) in this
    process, appending each winner to the results file as it is found; problems that already
    have a result are kept. Needs TunableOp and tuning on (tunekit.InvalidArgumentError).
    Lines tunekit cannot run (fp8, Half, ...) are skipped with a warning. With ``progress``, a
    tqdm bar (plain lines on stderr without tqdm) advances per problem, naming its winner."""
    bar = None

    def finished(index, total, outcome):
        nonlocal bar
        if bar is None:
            from .report import progress as make_bar
            bar = make_bar(total, "tune_gemm_in_file")
        op, params, kind, winner = outcome[0], outcome[1], outcome[2], outcome[3]
        bar.set_postfix_str(f"{op},{params}: {kind} {winner}".rstrip(), refresh=False)
        bar.update(1)

    try:
        outcomes, skipped = _off.tune_gemm_in_file(os.fspath(filename),
                                                   finished if progress else None)
    finally:
        if bar is not None:
            bar.close()
    _report(outcomes, skipped, "tune_gemm_in_file")


def _results_base() -> str:
    """The results file name before any ordinal, for the worker files and the gathered files:
    TUNEKIT_FILENAME, else the name given to set_filename(), else tunekit_results.csv."""
    env = os.environ.get("TUNEKIT_FILENAME")
    if env:
        return env
    return _api_filename if _api_filename else _off.default_results_base()


def mgpu_tune_gemm_in_file(filename_pattern: str, num_gpus: int) -> None:
    """Tunes the GEMM problems of every file matching ``filename_pattern`` (a glob, e.g.
    'tunekit_untuned?.csv'; duplicates dropped) over ``num_gpus`` local worker processes, the
    problems dealt round-robin (problem i to worker i mod num_gpus), as upstream over GPUs.
    1 <= num_gpus <= the usable cores (this CPU's devices; each worker gets cores / num_gpus
    threads unless TUNEKIT_THREADS says otherwise).

    Worker r appends to the results base name with its ordinal r inserted
    (``tunekit_results<r>.csv``); the parent then gathers every worker's results under the
    validators of the lowest healthy worker into ``tunekit_results_full0.csv`` and identical
    copies ``_full1`` ... ``_full<num_gpus-1>`` (tunekit replaces only the ordinal, not every
    '0' of the name as upstream). The base name is TUNEKIT_FILENAME, else the one given to
    set_filename(), else tunekit_results.csv."""
    count = _off.device_count()
    if not isinstance(num_gpus, int) or not 1 <= num_gpus <= count:
        raise _tunekit.InvalidArgumentError(
            f"mgpu_tune_gemm_in_file: num_gpus must be between 1 and {count} (the usable "
            f"cores), got {num_gpus!r}")
    wire, problems, skipped = _off.read_problems(os.fspath(filename_pattern))
    for message in skipped:
        warnings.warn(f"mgpu_tune_gemm_in_file: skipped {message}", stacklevel=2)
    if problems == 0:
        raise _tunekit.NotFoundError(
            f"mgpu_tune_gemm_in_file: no GEMM problem in the files matching '{filename_pattern}'")
    base = _results_base()
    reports = _run_workers(wire, num_gpus, base)
    written, messages, outcomes = _off.gather(reports, wire, base)
    for message in messages:
        warnings.warn(f"mgpu_tune_gemm_in_file: {message}", stacklevel=2)
    _report(outcomes, [], "mgpu_tune_gemm_in_file")


def _run_workers(wire: str, workers: int, base: str):
    """Runs the workers as fresh interpreters (``python -m tunekit._offline_worker``: no fork
    of a process whose libraries may already run threads) and returns their reports ('' for a
    worker that died before writing one)."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [package_parent] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    with tempfile.TemporaryDirectory(prefix="tunekit_mgpu_") as tmp:
        problems_path = os.path.join(tmp, "problems.txt")
        with open(problems_path, "w", encoding="utf-8") as f:
            f.write(wire)
        procs = []
        try:
            for rank in range(workers):
                report = os.path.join(tmp, f"report{rank}.txt")
                cmd = [sys.executable, "-m", "tunekit._offline_worker", problems_path,
                       str(rank), str(workers), base, report]
                procs.append((subprocess.Popen(cmd, env=env), report))
            for proc, _ in procs:
                proc.wait()
        except BaseException:  # Ctrl-C: stop every worker; their files keep what they tuned
            for proc, _ in procs:
                if proc.poll() is None:
                    proc.terminate()
            for proc, _ in procs:
                proc.wait()
            raise
        reports = []
        for _, report in procs:
            try:
                with open(report, encoding="utf-8") as f:
                    reports.append(f.read())
            except OSError:
                reports.append("")
        return reports
