"""``skip_init``: build a layer without spending time on initial values that will be overwritten."""
from __future__ import annotations

import inspect
from typing import Any

from minigrad.nn.module import Module


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """``module_cls(*args, **kwargs)`` whose parameter values are unspecified (load or set them next).

    PyTorch builds the layer on its "meta" device (shapes only) and then allocates empty
    memory, so it asks for a class that takes ``device``. minigrad has no meta device: the layer
    is built on the CPU and its initialisation runs; as in PyTorch, the values promise nothing.
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    return module_cls(*args, **kwargs)
