"""Tuning callbacks (AutoTVM ``autotvm.callback``), called as ``callback(tuner, inputs,
results)`` after every batch: ``progress_bar`` and ``log_to_file``.
"""

import os
import stat
import sys
import time

from . import record as _record

__all__ = ["progress_bar", "log_to_file"]

_SI = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


class _ProgressBar:
    def __init__(self, total: int, prefix: str, si_prefix: str, out):
        if si_prefix not in _SI:
            raise ValueError(f"progress_bar: si_prefix must be one of {', '.join(_SI)}")
        self.total, self.prefix, self.si_prefix = total, prefix, si_prefix
        self.out = out
        self.count = 0
        self.current = 0.0
        self.start = time.time()
        self.printed = False

    def __call__(self, tuner, inputs, results):
        self.count += len(inputs)
        flop = tuner.task.flop
        for res in results:
            if res.ok:
                self.current = flop / res.mean if flop > 0 else res.mean * 1e3
        elapsed = time.time() - self.start
        if flop > 0:
            scale = _SI[self.si_prefix]
            text = (f"{self.current / scale:7.2f}/{tuner.best_flops / scale:7.2f} "
                    f"{self.si_prefix}FLOPS")
        else:
            best = 1e3 / tuner.best_flops if tuner.best_flops > 0 else 0.0
            text = f"{self.current:7.4f}/{best:7.4f} ms"
        self.out.write(f"\r{self.prefix} Current/Best: {text} | Progress: "
                       f"({self.count}/{self.total}) | {elapsed:.2f} s")
        self.out.flush()
        self.printed = True

    def __del__(self):
        if self.printed:
            try:
                self.out.write(" Done.\n")
                self.out.flush()
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass


def progress_bar(total: int, prefix: str = "", si_prefix: str = "G"):
    """AutoTVM's progress line on stdout, rewritten after each batch:
    ``<prefix> Current/Best: 3.84/47.36 GFLOPS | Progress: (576/576) | 942.71 s`` (milliseconds
    for tasks without add_flop), " Done." when the callback is released."""
    return _ProgressBar(int(total), prefix, si_prefix, sys.stdout)


def _check_log_writable(path: str) -> None:
    """Refuses a log path that cannot be appended to (a missing folder, a directory, no
    permission) with tunekit.FileIOError naming it, as the tunekit CLI does before tuning."""
    from . import _tunekit
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC,
                     0o644)
    except OSError as e:
        raise _tunekit.FileIOError(f"cannot write tuning log '{path}': {e.strerror}") from None
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    if not regular:
        raise _tunekit.FileIOError(f"tuning log '{path}' is not a regular file")


class _LogToFile:
    """Appends every measured record to a log path (in C++, one locked write per batch) or
    writes them to a file object."""

    def __init__(self, file_out):
        if isinstance(file_out, (str, os.PathLike)):
            self._log_path = os.fspath(file_out)
            self._file = None
        elif hasattr(file_out, "write"):
            self._file = file_out
        else:
            raise TypeError("log_to_file: give a path or a file object")

    def __call__(self, tuner, inputs, results):
        if self._file is None:  # paths are handled in C++ (Tuner.tune)
            return
        for inp, res in zip(inputs, results):
            self._file.write(_record.encode(inp, res) + "\n")
        self._file.flush()


def log_to_file(file_out, protocol: str = "json"):
    """AutoTVM log_to_file: appends one AutoTVM v0.2 JSON line per measured configuration
    (readable by ``tunekit log best``, ``tunekit.record.load_from_file`` and
    ``apply_history_best``). A path that cannot be appended to (its folder missing, a
    directory) raises tunekit.FileIOError when tuning starts, before anything is measured."""
    if protocol != "json":
        raise ValueError(f"log_to_file: protocol '{protocol}' is not supported (json)")
    return _LogToFile(file_out)
