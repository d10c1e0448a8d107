"""Tuning tasks (AutoTVM ``autotvm.task``): a template name, its arguments and the target;
``create`` runs the template once to collect its config space and its kernel.
"""

import json
from typing import Any, Dict, Optional, Tuple

from . import _tunekit
from .kernel import Kernel
from .record import _tuplify
from .space import ConfigEntity, ConfigSpace, _using_config

__all__ = ["Task", "create", "serialize_args", "DEFAULT_TARGET"]

#: The target of tasks created without one: C/C++ built with -march=native (what tune-kernel
#: writes). Only its keys matter to apply_history_best ("llvm" and "c" both mean key "cpu").
DEFAULT_TARGET = "c -march=native"


def serialize_args(args) -> list:
    """Template arguments in their log form (AutoTVM serialize_args): numbers, strings, None and
    booleans as they are, lists and tuples as lists, NumPy arrays as ["TENSOR", shape, dtype]."""
    out = []
    for i, arg in enumerate(args):
        out.append(_serialize(arg, f"argument {i}"))
    return out


def _serialize(arg, where: str):
    if arg is None or isinstance(arg, (bool, int, float, str)):
        return arg
    if isinstance(arg, (list, tuple)):
        return [_serialize(a, where) for a in arg]
    try:
        import numpy

        if isinstance(arg, numpy.ndarray):
            return ["TENSOR", list(arg.shape), arg.dtype.name]
        if isinstance(arg, numpy.generic):
            return arg.item()
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"task {where}: {type(arg).__name__} cannot be part of a workload (give "
                    "numbers, strings, None, lists or NumPy arrays)")


class Task:
    """A tuning task: ``name`` (the template's), ``args``, ``target``, the ``config_space``
    the template defined, ``flop`` (its add_flop total) and ``kernel`` (what it returned while
    collecting: the source, arguments and flags every configuration is built from)."""

    def __init__(self, name: str, args: tuple, func, target: Optional[str] = None):
        self.name = name
        self.args = tuple(args)
        self.target = str(target) if target is not None else DEFAULT_TARGET
        self.func = func
        self.args_json = json.dumps(serialize_args(self.args))
        space = ConfigSpace()
        with _using_config(space):
            kernel = func(*self.args)
        _check_kernel(name, kernel)
        space._frozen = True
        space._space.check_define_names()
        if len(space) == 0:
            raise _tunekit.InvalidArgumentError(
                f"template '{name}': no configuration satisfies the space's constraints")
        self.config_space = space
        self.flop = float(space.flop)
        self.kernel = kernel

    @property
    def workload(self) -> tuple:
        """(name, *args) as in the log."""
        return (self.name,) + _tuplify(json.loads(self.args_json))

    def instantiate(self, config: ConfigEntity) -> Kernel:
        """The template's kernel under ``config`` (its .config and .defines set)."""
        with _using_config(config):
            kernel = self.func(*self.args)
        _check_kernel(self.name, kernel)
        kernel.config = config
        kernel._space = self.config_space
        kernel._name = self.name
        return kernel

    def fallback_config(self) -> ConfigEntity:
        """AutoTVM's fallback: entity 0 of every knob (the first valid point under constraints)."""
        return ConfigEntity(self.config_space, self.config_space._space.first_valid(),
                            is_fallback=True)

    def _config_of(self, entity) -> ConfigEntity:
        index = self.config_space._space.index_of_entity(json.dumps(entity))
        return ConfigEntity(self.config_space, index)

    def __repr__(self):
        return f"Task(func_name={self.name}, args={self.args}, target={self.target!r})"


def _check_kernel(name: str, kernel) -> None:
    if not isinstance(kernel, Kernel):
        raise TypeError(f"template '{name}' returned {type(kernel).__name__}; a template returns "
                        "tunekit.Kernel(source=..., entry=..., arguments=[...])")


def create(task_name: str, args=(), target: Optional[str] = None, target_host=None,
           **kwargs) -> Task:
    """The task of template ``task_name`` on ``args`` (AutoTVM autotvm.task.create): runs the
    template once to collect its space. Errors: tunekit.NotFoundError for an unknown template
    (naming the registered ones); the template's own exceptions; TypeError when it does not
    return a tunekit.Kernel. ``target_host`` is accepted and ignored (kernels run on the host)."""
    from .template import _TEMPLATES

    if kwargs:
        raise TypeError(f"task.create: unknown argument(s) {', '.join(sorted(kwargs))}")
    if isinstance(task_name, str):
        func = _TEMPLATES.get(task_name)
        if func is None:
            known = ", ".join(sorted(_TEMPLATES)) or "none"
            raise _tunekit.NotFoundError(f"no template named '{task_name}' (registered: {known}); "
                                         "define it with @tunekit.template(\"name\")")
    else:
        func = getattr(task_name, "func", None)
        task_name = getattr(task_name, "template_name", None)
        if func is None or task_name is None:
            raise TypeError("task.create: give a template name or a @tunekit.template function")
    return Task(task_name, tuple(args), func, target)


_cache: Dict[Tuple[str, str, str], Task] = {}


def _task_for(name: str, args: tuple, func, target: Optional[str]) -> Task:
    """The task of a template call, collected once per workload (templates are pure)."""
    key = (name, json.dumps(serialize_args(args)), target or DEFAULT_TARGET)
    task = _cache.get(key)
    if task is None or task.func is not func:
        task = Task(name, args, func, target)
        _cache[key] = task
    return task
