"""What a ``@tunekit.template`` function returns: ``tunekit.Kernel``, the kernel source and how to
call it (its arguments as ``tunekit.Scalar`` / ``tunekit.Array``), in the form of a
``tunekit tune-kernel`` spec (docs/kernels.md). A configuration reaches the source as ``-D``
definitions: ``define_knob("unroll", ...)`` gives ``-Dunroll=4``, ``define_split("tile_y", ...,
num_outputs=2)`` gives ``-Dtile_y_0=<outer extent> -Dtile_y_1=<inner factor>``.

``Kernel.compile()`` builds the kernel (through the artefact cache) and returns a callable taking
NumPy arrays: under ``apply_history_best`` the template's kernel carries the best configuration.
"""

import atexit
import ctypes
import json
import os
import shutil
import tempfile
import zlib
from typing import Any, Dict, List, Optional, Sequence

from . import _tunekit

__all__ = ["Kernel", "Scalar", "Array", "CompiledKernel"]

_DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
           "int32": "int32", "int": "int32", "int64": "int64"}
_CTYPES = {"float32": ctypes.c_float, "float64": ctypes.c_double, "int32": ctypes.c_int32,
           "int64": ctypes.c_int64}
_SUFFIX = {"c++": ".cpp", "cpp": ".cpp", "c": ".c", "C": ".c", "opencl": ".cl", "cuda": ".cu"}


def _dtype_name(dtype) -> str:
    if isinstance(dtype, str):
        text = dtype
    else:
        import numpy

        text = numpy.dtype(dtype).name
    if text not in _DTYPES:
        raise _tunekit.DTypeError(f"dtype '{text}' is not a kernel argument type "
                                  "(float32, float64, int32, int64)")
    return _DTYPES[text]


class Scalar:
    """A scalar argument, passed by value: ``Scalar("n", 1024)`` (int32 by default)."""

    def __init__(self, name: str, value, dtype="int32"):
        self.name = name
        self.value = value.item() if hasattr(value, "item") else value
        self.dtype = _dtype_name(dtype)

    def spec(self) -> Dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "value": self.value}


class Array:
    """An array argument, passed as a pointer to its first element: ``Array("A", (M, K))``
    (float32 by default). ``fill``: "random" (default for inputs), "zeros" (default for outputs),
    "ones", "index" or a number; ``output=True`` marks what the kernel writes (reset before every
    configuration and compared with the reference)."""

    def __init__(self, name: str, shape, dtype="float32", fill=None, output: bool = False):
        self.name = name
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
        self.size = 1
        for extent in self.shape:
            self.size *= int(extent)
        self.dtype = _dtype_name(dtype)
        self.fill = fill
        self.output = bool(output)

    def spec(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"name": self.name, "dtype": self.dtype, "size": self.size}
        if self.fill is not None:
            out["fill"] = self.fill
        if self.output:
            out["output"] = True
        return out


def _argument_spec(arg) -> Dict[str, Any]:
    if isinstance(arg, (Scalar, Array)):
        return arg.spec()
    if isinstance(arg, dict):
        return dict(arg)
    raise TypeError(f"a kernel argument must be tunekit.Scalar, tunekit.Array or a spec dict, "
                    f"got {type(arg).__name__}")


_source_dir: Optional[str] = None


def _write_source(name: str, text: str, language: str) -> str:
    """The kernel text in a file of this process's scratch folder (the builder compiles files)."""
    global _source_dir
    if _source_dir is None:
        _source_dir = tempfile.mkdtemp(prefix="tunekit_src_")
        atexit.register(shutil.rmtree, _source_dir, True)
    data = text.encode()
    digest = f"{zlib.crc32(data):08x}{len(data):x}"
    safe = "".join(c if c.isalnum() else "_" for c in name)[:40]
    path = os.path.join(_source_dir, f"{safe}_{digest}{_SUFFIX.get(language, '.cpp')}")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(text)
    return path


class Kernel:
    """A kernel to tune: ``source`` (its text; or ``source_file``, a path), ``entry`` (the
    ``extern "C"`` function, called with ``arguments`` in order), compiler ``flags``,
    ``language`` ("c++", "c", "opencl"), optional ``verify`` ({"atol", "rtol", "reference"}) and
    ``launch`` (OpenCL: {"global": [...], "local": [...]}), as the keys of docs/kernels.md.

    ``config`` is the configuration it is built with (a ConfigEntity; None: the source's own
    defaults), ``defines`` the matching ``-D`` definitions."""

    def __init__(self, source: Optional[str] = None, entry: Optional[str] = None,
                 arguments: Sequence = (), flags: Sequence[str] = (), language: str = "c++",
                 source_file: Optional[str] = None, verify: Optional[dict] = None,
                 launch: Optional[dict] = None):
        if (source is None) == (source_file is None):
            raise ValueError("tunekit.Kernel: give the kernel's source text (source=) or its "
                             "file (source_file=), one of them")
        if source_file is not None:
            source_file = os.path.abspath(os.fspath(source_file))
        self.source = source
        self.source_file = source_file
        self.entry = entry
        self.arguments = list(arguments)
        self.flags = [str(f) for f in flags]
        self.language = language
        self.verify = verify
        self.launch = launch
        self.config = None
        self._space = None  # the ConfigSpace of `config`
        self._name = entry or "kernel"
        for arg in self.arguments:
            _argument_spec(arg)

    @property
    def defines(self) -> List[tuple]:
        """[(name, value), ...]: the -D definitions of ``config`` (none without a config)."""
        return [] if self.config is None else self.config.defines

    def _source_path(self, name: str) -> str:
        if self.source_file is not None:
            return self.source_file
        return _write_source(name, self.source, self.language)

    def spec(self, name: str, measure: Optional[dict] = None, seed: int = 0) -> Dict[str, Any]:
        """The tune-kernel spec of this kernel (without "space"), named ``name``, with the
        builder and runner settings of ``measure`` (tunekit.measure_option)."""
        spec: Dict[str, Any] = {
            "name": name, "language": self.language, "source": self._source_path(name),
            "entry": self.entry or name, "flags": self.flags,
            "arguments": [_argument_spec(a) for a in self.arguments], "seed": int(seed)}
        if self.verify is not None:
            spec["verify"] = self.verify
        if self.launch is not None:
            spec["launch"] = self.launch
        if measure is not None:
            spec.update(measure["builder"].spec_fields())
            spec.update(measure["runner"].spec_fields())
        return spec

    def compile(self) -> "CompiledKernel":
        """Builds this kernel with its configuration (C/C++ only) and loads it; the returned
        callable takes the arguments as NumPy arrays (C-contiguous, the declared dtype) and
        Python numbers, in order. Errors: tunekit.RunError with the compiler's message;
        tunekit.NotFoundError when the built kernel has no function ``entry``."""
        if self.language not in ("c++", "cpp", "c", "C"):
            raise _tunekit.UnsupportedError("Kernel.compile() loads C/C++ kernels only "
                                            f"(language '{self.language}')")
        name = self._name
        space = self._space._space if self._space is not None else _tunekit.autotvm.Space()
        index = None if self.config is None else self.config.index
        artifact = _tunekit.autotvm.build_kernel(json.dumps(self.spec(name)), f"kernel '{name}'",
                                                 space, index)
        return CompiledKernel(artifact, self.entry or name, self.arguments, self.config,
                              self.source_file or "the kernel's source")

    def __repr__(self):
        config = "defaults" if self.config is None else str(self.config)
        return f"tunekit.Kernel(entry={self.entry!r}, language={self.language!r}, {config})"


class CompiledKernel:
    """A built kernel: call it with its arguments (NumPy arrays and numbers). ``config`` is the
    configuration it was built with, ``artifact`` the shared object."""

    def __init__(self, artifact: str, entry: str, arguments: Sequence, config,
                 source: str = "the kernel's source"):
        self.artifact = artifact
        self.entry = entry
        self.config = config
        self._library = ctypes.CDLL(artifact)
        try:
            self._function = getattr(self._library, entry)
        except AttributeError:
            raise _tunekit.NotFoundError(
                f"kernel entry '{entry}' is not a function of {source} (an extern \"C\" function "
                "of that name is needed)") from None
        self._function.restype = None
        self._arguments = [a if isinstance(a, (Scalar, Array)) else None for a in arguments]
        specs = [_argument_spec(a) for a in arguments]
        self._scalar = ["value" in s for s in specs]
        self._dtype = [_DTYPES[s["dtype"]] for s in specs]
        self._size = [s.get("size") if isinstance(s.get("size"), int) else None for s in specs]
        self._function.argtypes = [_CTYPES[d] if sc else ctypes.c_void_p
                                   for d, sc in zip(self._dtype, self._scalar)]

    def __call__(self, *args) -> None:
        import numpy

        if len(args) != len(self._dtype):
            raise TypeError(f"{self.entry} takes {len(self._dtype)} arguments, got {len(args)}")
        converted = []
        for i, (arg, dtype, scalar) in enumerate(zip(args, self._dtype, self._scalar)):
            if scalar:
                converted.append(arg)
                continue
            if not isinstance(arg, numpy.ndarray) or arg.dtype != numpy.dtype(dtype) \
                    or not arg.flags.c_contiguous:
                raise _tunekit.DTypeError(
                    f"{self.entry}: argument {i} must be a C-contiguous numpy array of {dtype}")
            if self._size[i] is not None and arg.size < self._size[i]:
                raise _tunekit.InvalidArgumentError(
                    f"{self.entry}: argument {i} has {arg.size} elements; the kernel was tuned "
                    f"for {self._size[i]}")
            converted.append(arg.ctypes.data)
        self._function(*converted)  # ctypes releases the GIL during the call
