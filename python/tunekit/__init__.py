"""tunekit: measured auto-tuning of compute operators, from Python.

The engine is C++ (the extension module ``tunekit._tunekit``); this package is its Python face:

* ``tunekit.matmul(a, b, out=None)`` and ``tunekit.gemm(transa, transb, alpha, a, b, beta, c)``:
  GEMMs on NumPy arrays, buffer-protocol and DLPack objects, dispatched through the tuned
  TunableOp (the fastest library for each problem on this machine);
* ``tunekit.Linear(weights)``: ``y = x @ weights.T`` with constant float32 weights, tuned per
  token count among candidates that pack the weights once (tunekit's own kernels, oneDNN);
* ``tunekit.tunable``: the settings, results files and offline tuning, function by function as
  ``torch.cuda.tunable``;
* AutoTVM's workflow under AutoTVM's names (``tunekit.template``, ``get_config``, ``task.create``,
  ``tuner.XGBTuner`` ..., ``measure_option``, ``callback``, ``record``, ``apply_history_best``)
  and Kernel Tuner's ``tunekit.tune_kernel``, tuning C/C++ kernels on tunekit's engine;
* ``tunekit.TunekitError`` and its subclasses: every failure, with the one-line message the
  ``tunekit`` command prints.

See docs/python.md.
"""

from . import _tunekit
from ._tunekit import (
    DTypeError,
    FileIOError,
    InvalidArgumentError,
    Linear,
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

# AutoTVM's workflow (tvm.autotvm's names) and Kernel Tuner's entry point, on the kernel engine.
from . import callback, dispatch, measure, record, task, tuner
from .dispatch import ApplyHistoryBest, apply_history_best
from .kernel import Array, CompiledKernel, Kernel, Scalar
from .kernel_tuner import tune_kernel
from .measure import (LocalBuilder, LocalRunner, MeasureErrorNo, MeasureInput, MeasureResult,
                      measure_option)
from .space import ConfigEntity, ConfigSpace, get_config
from .template import template
from .report import report

__all__ = [
    "DTypeError",
    "FileIOError",
    "InvalidArgumentError",
    "Linear",
    "NotFoundError",
    "ParseError",
    "RunError",
    "TunekitError",
    "UnsupportedError",
    "ValidatorMismatchError",
    "gemm",
    "matmul",
    "report",
    "tunable",
    # AutoTVM / Kernel Tuner (docs/python.md, "AutoTVM's workflow")
    "ApplyHistoryBest",
    "Array",
    "CompiledKernel",
    "ConfigEntity",
    "ConfigSpace",
    "Kernel",
    "LocalBuilder",
    "LocalRunner",
    "MeasureErrorNo",
    "MeasureInput",
    "MeasureResult",
    "Scalar",
    "apply_history_best",
    "callback",
    "dispatch",
    "get_config",
    "measure",
    "measure_option",
    "record",
    "task",
    "template",
    "tune_kernel",
    "tuner",
]
