"""The HTML report (docs/report.md) and the progress of long Python-side work.

``report()`` writes the page ``tunekit report`` writes, through the same C++ code.
``progress()`` is tqdm's bar when tqdm is installed (an optional dependency), else one plain
line per finished item on stderr."""
import os
import sys
import time

from . import _tunekit

__all__ = ["report", "progress"]


def report(output="tunekit_report.html", db=None, results=None, logs=None,
           title="tunekit report"):
    """Writes one self-contained HTML page (Chart.js inlined; no request when opened) of the
    tuning database(s) ``db`` (a path or a list), TunableOp results files ``results`` and
    AutoTVM logs ``logs``; with none of them, the user tuning database. Returns the output path.
    Raises tunekit.NotFoundError (naming the package to install) when Chart.js is missing."""
    def paths(value):
        if value is None:
            return []
        if isinstance(value, (str, os.PathLike)):
            return [os.fspath(value)]
        return [os.fspath(v) for v in value]
    _tunekit.report.write(os.fspath(output), paths(db), paths(results), paths(logs), title)
    return os.fspath(output)


class _PlainProgress:
    """tqdm's interface, printing "[i/N] <what>: <postfix> (elapsed 1.2 s)" per update."""

    def __init__(self, total, desc):
        self.total, self.desc, self.n, self.postfix = total, desc, 0, ""
        self.start = time.monotonic()

    def set_postfix_str(self, text, refresh=True):
        self.postfix = text

    def update(self, n=1):
        self.n += n
        elapsed = time.monotonic() - self.start
        print(f"[{self.n}/{self.total}] {self.desc}: {self.postfix} (elapsed {elapsed:.1f} s)",
              file=sys.stderr, flush=True)

    def close(self):
        pass


def progress(total, desc):
    """A progress bar over ``total`` items: tqdm's when it imports, else plain lines."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _PlainProgress(total, desc)
    return tqdm(total=total, desc=desc, unit="problem")
