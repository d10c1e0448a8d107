"""tunekit: measured auto-tuning of compute operators, from Python.

The engine is C++ (the extension module ``tunekit._tunekit``); this package is its Python face:

* ``tunekit.matmul(a, b, out=None)`` and ``tunekit.gemm(transa, transb, alpha, a, b, beta, c)``:
  GEMMs on NumPy arrays, buffer-protocol and DLPack objects, dispatched through the tuned
  TunableOp (the fastest library for each problem on this machine);
* ``tunekit.tunable``: the settings, results files and offline tuning, function by function as
  ``torch.cuda.tunable``;
* ``tunekit.TunekitError`` and its subclasses: every failure, with the one-line message the
  ``tunekit`` command prints.

See docs/python.md.
"""

from . import _tunekit
from ._tunekit import (
    DTypeError,
    FileIOError,
    InvalidArgumentError,
    NotFoundError,
    ParseError,
    RunError,
    TunekitError,
    UnsupportedError,
    ValidatorMismatchError,
    gemm,
    matmul,
)
from . import tunable

__all__ = [
    "DTypeError",
    "FileIOError",
    "InvalidArgumentError",
    "NotFoundError",
    "ParseError",
    "RunError",
    "TunekitError",
    "UnsupportedError",
    "ValidatorMismatchError",
    "gemm",
    "matmul",
    "tunable",
]
