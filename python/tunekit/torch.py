"""tunekit.torch: PyTorch's CPU matrix products through tunekit's GEMM tunable op.

``enable()`` overrides PyTorch's CPU kernels of ``aten::mm``, ``addmm``, ``bmm`` and ``baddbmm``
(and so ``torch.nn.functional.linear`` and ``torch.matmul``, which decompose into them) for
float32 and bfloat16 tensors. Every such call is a TunableOp problem whose ``Default`` is
PyTorch's own kernel for it, so a tuned model runs stock code wherever nothing measured faster.
Anything else (other dtypes and devices, layouts without a unit stride, empty products) falls
through to PyTorch unchanged; ``stats()`` counts both, with the reasons.

Settings, results files and offline tuning are ``tunekit.tunable``'s. Results tuned here carry
the validators ``TORCH_VERSION``, ``TORCH_MKL_VERSION`` and ``TORCH_ONEDNN_VERSION``: a file
tuned without torch (whose ``Default`` was OpenBLAS) is refused with the reason, and so is one
tuned under another torch. bfloat16 problems write bfloat16 C (``GemmTunableOp_BFloat16``, as
upstream's TunableOp).

A winner other than ``Default`` is confirmed in the program before it serves: its first
``CONFIRM_CALLS`` calls in the process run in pairs with PyTorch's kernel on the caller's
tensors, and PyTorch's kernel keeps the problem when it was faster there
(``tunable.set_confirm_calls``; ``tunable.get_confirmations()`` lists the verdicts).

The kernels are a C++ extension compiled against the installed torch on first use
(``torch.utils.cpp_extension``, cached in ``TUNEKIT_TORCH_BUILD_DIR`` or torch's extension
folder). ``TUNEKIT_TORCH_ENABLED=1`` enables at import. ``python -m tunekit.torch tune FILE``
tunes a recorded untuned file with torch's Default. See docs/torch.md.
"""
import logging
import os
import re
import sys
import threading
from typing import Dict, Tuple

import torch

from . import _tunekit  # noqa: F401  (loads libtunekit, which the extension links)
from . import tunable

__all__ = ["enable", "disable", "is_enabled", "stats", "reset_stats", "validators"]

#: Calls each winner is confirmed with against PyTorch's kernel in torch mode (8 pairs), unless
#: tunable.set_confirm_calls() or TUNEKIT_CONFIRM_CALLS says otherwise.
CONFIRM_CALLS = 16

_lock = threading.Lock()
_loaded = False
_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.join(_HERE, "csrc", "tunekit_torch.cpp")
_INCLUDE = os.path.join(_HERE, "csrc", "include")


def _libtunekit_dir() -> str:
    """The folder of the libtunekit this process loaded (pip: beside _tunekit; build tree: src/)."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libtunekit.so"):
                return os.path.dirname(path)
    raise ImportError("tunekit.torch: libtunekit is not loaded (tunekit._tunekit did not load it)")


def _load() -> None:
    """Compiles (first time, about 20 s; a C++ compiler, Python's headers and ninja are needed)
    and loads the extension."""
    global _loaded
    if _loaded:
        return
    # Importing cpp_extension warns that no CUDA runtime is found: true, and beside the point.
    quiet = logging.getLogger("torch.utils.cpp_extension")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        from torch.utils import cpp_extension
    finally:
        quiet.setLevel(level)

    libdir = _libtunekit_dir()
    build_dir = os.environ.get("TUNEKIT_TORCH_BUILD_DIR")
    if build_dir:
        os.makedirs(build_dir, exist_ok=True)
    cpp_extension.load(
        name="tunekit_torch",
        sources=[_SOURCE],
        extra_include_paths=[_INCLUDE],
        extra_cflags=["-O2"],
        extra_ldflags=[f"-L{libdir}", "-l:libtunekit.so.0", f"-Wl,-rpath,{libdir}"],
        build_directory=build_dir,
        is_python_module=False,
        verbose=bool(os.environ.get("TUNEKIT_TORCH_VERBOSE_BUILD")))
    _loaded = True


def _config_version(pattern: str) -> str:
    found = re.search(pattern, torch.__config__.show())
    return found.group(1) if found else "none"


def validators() -> Dict[str, str]:
    """The validators torch mode adds to tunekit's: torch's version and its BLAS libraries'."""
    return {
        "TORCH_VERSION": torch.__version__.split("+")[0],
        "TORCH_MKL_VERSION": _config_version(r"Math Kernel Library Version ([0-9.]+)"),
        "TORCH_ONEDNN_VERSION": _config_version(r"MKL-DNN v([0-9.]+)"),
    }


def enable(val: bool = True) -> None:
    """Routes PyTorch's CPU float32/bfloat16 matrix products through tunekit (val=False:
    disable()). Installs torch's kernel as the GEMM op's Default and registers the validators
    before any results file is read; the first call compiles the extension."""
    if not val:
        disable()
        return
    with _lock:
        _load()
        v = validators()
        extra = {k: x for k, x in v.items() if k != "TORCH_VERSION"}
        detail = f"at::cpu (MKL {extra['TORCH_MKL_VERSION']}, oneDNN {extra['TORCH_ONEDNN_VERSION']})"
        torch.ops.tunekit.enable(list(extra), list(extra.values()), v["TORCH_VERSION"], detail)
        if not tunable._confirm_calls_set:
            tunable._c.set_confirm_calls(CONFIRM_CALLS)


def disable() -> None:
    """Puts PyTorch's own CPU kernels back (tuned results stay loaded for a later enable())."""
    with _lock:
        if _loaded:
            torch.ops.tunekit.disable()


def is_enabled() -> bool:
    """Whether PyTorch's CPU matrix products go through tunekit now."""
    return _loaded and bool(torch.ops.tunekit.is_enabled())


def stats() -> Dict[str, Tuple[int, float]]:
    """Calls and FLOPs per outcome since the last reset_stats(): "served" (through tunekit) or
    the reason a product fell through to PyTorch: "dtype", "device", "layout" (no unit stride,
    expanded or overlapping matrices, shapes that do not multiply), "empty", "size" (beyond
    32-bit BLAS integers), "bias" (an addmm/baddbmm input tunekit cannot take), "scalar" (alpha
    or beta not finite or beyond float's range), "reentrant" (a product inside PyTorch's own
    Default; never expected)."""
    if not _loaded:
        return {}
    names, calls, flops = torch.ops.tunekit.stats()
    return {n: (c, f) for n, c, f in zip(names, calls, flops)}


def reset_stats() -> None:
    """Zeroes the counters of stats()."""
    if _loaded:
        torch.ops.tunekit.reset_stats()


if os.environ.get("TUNEKIT_TORCH_ENABLED", "0").strip().lower() in ("1", "true", "yes", "on"):
    enable()


def _main(argv=None) -> int:
    """``python -m tunekit.torch tune UNTUNED [--results FILE]``: offline tuning with torch's
    kernels as Default, so that Default and the validators mean what they mean at dispatch."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m tunekit.torch",
                                 description="tunekit.torch's offline tuning")
    sub = ap.add_subparsers(dest="command", required=True)
    tune = sub.add_parser("tune", help="tune the problems of an untuned file (as tune_gemm_in_file)")
    tune.add_argument("untuned", help="untuned file recorded with tunable.record_untuned_enable()")
    tune.add_argument("--results", help="results file (default: tunable's file name)")
    args = ap.parse_args(argv)
    from tunekit import tunable
    from tunekit import torch as module  # the package's copy (this file may run as __main__)

    from tunekit import TunekitError

    try:
        if args.results:
            tunable.set_filename(args.results)
        module.enable()
        tunable.tune_gemm_in_file(args.untuned)
    except (TunekitError, OSError, RuntimeError) as e:
        print(f"python -m tunekit.torch tune: {e}", file=sys.stderr)
        return 1
    print(f"tunekit.torch: {len(tunable.get_results())} results in {tunable.get_filename()}")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
