"""The configuration a template sees through ``tunekit.get_config()``: AutoTVM's ``ConfigSpace``
(while a task collects its space: ``define_*`` add knobs, ``cfg[name]`` is the knob's first
entity) and ``ConfigEntity`` (one point: while tuning, under ``apply_history_best``, or the
fallback). The knobs live in C++ (``tunekit._tunekit.autotvm.Space``), so indices, entity lists
and the space hash are those of ``tunekit tune-kernel`` and the logs.
"""

import json
import threading
from typing import Any, Callable, Iterable, List, Optional, Sequence

from . import _tunekit

__all__ = [
    "ConfigSpace",
    "ConfigEntity",
    "SplitEntity",
    "ReorderEntity",
    "AnnotateEntity",
    "OtherOptionEntity",
    "get_config",
]


class SplitEntity:
    """A split: ``size`` = ``[-1, f1, ..., fn-1]`` (-1: the outer extent, implied)."""

    def __init__(self, size):
        self.size = list(size)

    def __repr__(self):
        return f"sp{self.size}"


class ReorderEntity:
    """A reorder: ``perm`` = the axis order."""

    def __init__(self, perm):
        self.perm = list(perm)

    def __repr__(self):
        return f"re{self.perm}"


class AnnotateEntity:
    """An annotation: ``anns`` = one word per axis ("none", "unroll", "vec", ...)."""

    def __init__(self, anns):
        self.anns = list(anns)

    def __repr__(self):
        return f"an{self.anns}"


class OtherOptionEntity:
    """A ``define_knob`` value: ``val``."""

    def __init__(self, val):
        self.val = val

    def __repr__(self):
        return f"ot({self.val!r})"


_ENTITY = {"sp": SplitEntity, "re": ReorderEntity, "an": AnnotateEntity, "ot": OtherOptionEntity}


def _axis_length(axis) -> int:
    """An axis of define_split: its length (an int), or anything with ``length``/``extent``."""
    for attr in ("length", "extent"):
        if hasattr(axis, attr):
            axis = getattr(axis, attr)
    if isinstance(axis, bool) or not isinstance(axis, int):
        try:
            import numpy

            if isinstance(axis, numpy.integer):
                return int(axis)
        except ImportError:  # pragma: no cover
            pass
        raise TypeError(f"define_split: the axis must be a length (an int), got {axis!r}")
    return axis


def _axis_count(axes) -> int:
    """define_reorder/define_annotate axes: a count or a list of axes."""
    if isinstance(axes, int) and not isinstance(axes, bool):
        return axes
    return len(list(axes))


class _Config:
    """What ConfigSpace and ConfigEntity share: the space, the FLOP count, the entity lookup."""

    is_fallback = False

    def __init__(self, space: "_tunekit.autotvm.Space"):
        self._space = space
        self.flop = 0.0

    def add_flop(self, flop) -> None:
        """Adds to the floating-point operations of one call (GFLOPS in progress and scores)."""
        self.flop += float(flop)

    def _entity(self, name: str, payload) -> Any:
        tags = dict(zip(self._space.knob_names(), self._space.knob_tags()))
        return _ENTITY[tags[name]](payload)


class ConfigSpace(_Config):
    """The space a template defines (AutoTVM ConfigSpace). ``len(space)`` counts valid points;
    ``range_length`` is the index range (constraints never renumber)."""

    def __init__(self):
        super().__init__(_tunekit.autotvm.Space())
        self._frozen = False

    # ---- definition ----
    def _check_open(self):
        if self._frozen:
            raise RuntimeError("the config space of a created task cannot change")

    def define_split(self, name: str, axis, policy: str = "factors", num_outputs: int = 2,
                     max_factor: int = 1 << 31, filter: Optional[Callable] = None,
                     no_tail: Optional[bool] = None, candidate=None, **kwargs) -> None:
        """A split of an axis of length ``axis`` into ``num_outputs`` factors (policy "factors",
        "power2", "verbose" or "candidate" with ``candidate=[[...], ...]``); ``filter`` takes a
        SplitEntity and keeps it when true. The kernel sees ``-D<name>_0=<outer>
        -D<name>_1=<f1> ...`` (the outer extent computed, the innermost factor last)."""
        self._check_open()
        if kwargs:
            raise TypeError(f"define_split: unknown argument(s) {', '.join(sorted(kwargs))}")
        wrapped = None if filter is None else (lambda sizes: bool(filter(SplitEntity(sizes))))
        filter_name = "" if filter is None else getattr(filter, "__qualname__", repr(filter))
        self._space.define_split(name, _axis_length(axis), policy, int(num_outputs),
                                 int(max_factor), no_tail, candidate, wrapped, filter_name)

    def define_knob(self, name: str, candidate: Sequence) -> None:
        """A knob over the given values (numbers, booleans, strings): ``-D<name>=<value>``."""
        self._check_open()
        values = [v.item() if hasattr(v, "item") else v for v in candidate]
        self._space.define_knob(name, json.dumps(values))

    def define_reorder(self, name: str, axes, policy: str = "all", interval=None,
                       candidate=None) -> None:
        """A reorder of ``axes`` (a count or a list): ``-D<name>_<i>=<axis>``."""
        self._check_open()
        self._space.define_reorder(name, _axis_count(axes), policy,
                                   tuple(interval) if interval else None, candidate)

    def define_annotate(self, name: str, axes, policy: str = "try_unroll_vec",
                        num_anchor: int = 1) -> None:
        """Annotations of ``axes``: ``-D<name>_<i>=<word>`` (none, unroll, vec, ...)."""
        self._check_open()
        self._space.define_annotate(name, _axis_count(axes), policy, int(num_anchor))

    def multi_filter(self, filter: str) -> None:
        """A constraint over several knobs, as a restriction expression over knob names
        (Kernel Tuner's syntax, e.g. ``"tile_x * unroll <= 64"``; splits compare by position).
        Indices are not renumbered (AutoTVM's final multi_filter)."""
        self._check_open()
        if not isinstance(filter, str):
            raise TypeError("multi_filter: give a restriction expression string (a Python "
                            "predicate cannot be evaluated without the GIL while tuning)")
        self._space.add_restriction(filter)

    # ---- lookup ----
    def __getitem__(self, name: str):
        names = self._space.knob_names()
        if name not in names:
            raise KeyError(name)
        return self._entity(name, json.loads(self._space.entities(name))[0])

    @property
    def space_map(self) -> dict:
        """{knob name: list of its entities}."""
        return {n: [self._entity(n, e) for e in json.loads(self._space.entities(n))]
                for n in self._space.knob_names()}

    @property
    def range_length(self) -> int:
        return self._space.range_length

    def __len__(self) -> int:
        return self._space.valid_count()

    def is_index_valid(self, index: int) -> bool:
        return self._space.is_valid(index)

    def get(self, index: int) -> "ConfigEntity":
        """The valid config at ``index`` (IndexError otherwise, as upstream)."""
        if not 0 <= index < self.range_length or not self._space.is_valid(index):
            raise IndexError(f"config index {index} is out of range or invalid")
        return ConfigEntity(self, index)

    def knob_names(self) -> List[str]:
        return list(self._space.knob_names())

    def __repr__(self):
        knobs = ", ".join(f"{n}({len(json.loads(self._space.entities(n)))})"
                          for n in self._space.knob_names())
        return f"ConfigSpace(len={len(self)}, range_length={self.range_length}, knobs=[{knobs}])"


class ConfigEntity(_Config):
    """One point of a ConfigSpace (AutoTVM ConfigEntity): ``cfg[name]`` is its entity,
    ``index`` its index, ``defines`` the ``-D`` definitions the kernel is built with."""

    def __init__(self, space: ConfigSpace, index: int, is_fallback: bool = False):
        super().__init__(space._space)
        self.space = space
        self.index = int(index)
        self.code_hash = None
        self.is_fallback = is_fallback
        self._entity_list = json.loads(space._space.config_json(self.index))["entity"]

    def define_split(self, name, *args, **kwargs):
        """Ignored: the knob exists (a template runs the same define_* calls in every mode)."""

    define_knob = define_reorder = define_annotate = multi_filter = define_split

    def __getitem__(self, name: str):
        for knob, _tag, payload in self._entity_list:
            if knob == name:
                return self._entity(name, payload)
        raise KeyError(name)

    def get_flatten_feature(self):  # pragma: no cover - informational
        raise NotImplementedError("features are computed by the C++ cost model")

    @property
    def defines(self) -> List[tuple]:
        """[(macro name, value text), ...] in knob order: what the builder passes as -D."""
        return [tuple(d) for d in self.space._space.defines(self.index)]

    def to_json_dict(self) -> dict:
        return {"index": self.index, "code_hash": None, "entity": self._entity_list}

    def __str__(self):
        return self.space._space.config_string(self.index)

    def __repr__(self):
        pairs = ", ".join(f"('{n}', {p!r})" for n, _t, p in self._entity_list)
        return f"[{pairs}],None,{self.index}"


_state = threading.local()


def get_config() -> _Config:
    """The configuration of the template being called (AutoTVM ``autotvm.get_config()``): a
    ConfigSpace while a task collects its space, else a ConfigEntity. Only valid inside a
    ``@tunekit.template`` function."""
    cfg = getattr(_state, "config", None)
    if cfg is None:
        raise RuntimeError("tunekit.get_config() is only valid inside a @tunekit.template "
                           "function while tunekit calls it")
    return cfg


class _using_config:
    """Makes ``cfg`` what get_config() returns inside the block (nesting restores the outer)."""

    def __init__(self, cfg):
        self.cfg = cfg

    def __enter__(self):
        self.outer = getattr(_state, "config", None)
        _state.config = self.cfg
        return self.cfg

    def __exit__(self, *exc):
        _state.config = self.outer
        return False
