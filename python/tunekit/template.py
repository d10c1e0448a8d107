"""``@tunekit.template("name")`` (AutoTVM ``autotvm.template``): registers a function that takes
the task's arguments, defines its knobs through ``cfg = tunekit.get_config()`` and returns a
``tunekit.Kernel``. Calling the decorated function returns the kernel under the configuration
the current dispatch context chooses: the best record inside ``tunekit.apply_history_best(log)``,
the fallback (entity 0 of every knob) outside.
"""

import functools
from typing import Callable, Dict, Optional

__all__ = ["template"]

_TEMPLATES: Dict[str, Callable] = {}


def template(task_name: str, func: Optional[Callable] = None):
    """Registers ``func`` as the template ``task_name`` (a decorator when ``func`` is None).
    Registering a name again replaces the earlier function (re-run notebook cells)."""
    if not isinstance(task_name, str) or not task_name:
        raise TypeError("tunekit.template: the first argument is the template's name, e.g. "
                        "@tunekit.template(\"tutorial.matmul\")")

    def register(f: Callable):
        if not callable(f):
            raise TypeError(f"tunekit.template('{task_name}'): {f!r} is not a function")
        _TEMPLATES[task_name] = f

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            from .dispatch import _instantiate
            from .task import _task_for

            if kwargs:
                raise TypeError(f"template '{task_name}': pass the task's arguments by position "
                                "(they form the workload)")
            return _instantiate(_task_for(task_name, args, f, None))

        wrapper.template_name = task_name
        wrapper.func = f
        return wrapper

    return register if func is None else register(func)
