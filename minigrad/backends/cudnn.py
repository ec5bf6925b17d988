"""``minigrad.backends.cudnn``: NVIDIA's cuDNN switches, which minigrad has no use for.

    minigrad.backends.cudnn.deterministic = True      # (the reproducibility boilerplate)
    minigrad.backends.cudnn.benchmark = False

minigrad runs on the CPU, so ``is_available()`` is False and the switches change nothing;
they keep what is set, refusing anything but a bool with PyTorch's RuntimeError, so a script
that sets and reads them runs unchanged.
"""
from __future__ import annotations

import sys
import types

from minigrad.ops.broadcast import type_name

__all__ = ["is_available", "version"]  # (and the switches, properties of this module: read them here)


def is_available() -> bool:
    """False: minigrad computes on the CPU only."""
    return False


def version() -> None:
    """None: there is no cuDNN library to report a version of."""
    return None


def _switch(name: str, setter: str, default: bool) -> property:
    """A bool attribute of this module, refusing other values as PyTorch's ``set_<setter>`` does."""
    values = [default]

    def set_value(module, value) -> None:
        if type(value) is not bool:
            raise RuntimeError(f"{setter} expects a bool, but got {type_name(value)}")
        values[0] = value
    return property(lambda module: values[0], set_value, doc=f"cuDNN's {name} switch (default {default}).")


class _CudnnModule(types.ModuleType):
    deterministic = _switch("deterministic", "set_deterministic_cudnn", False)
    benchmark = _switch("benchmark", "set_benchmark_cudnn", False)
    enabled = _switch("enabled", "set_enabled_cudnn", True)
    allow_tf32 = _switch("allow_tf32", "set_allow_tf32_cublas", True)


benchmark_limit = None  # (how many algorithms benchmark=True tries: None without CUDA, as in PyTorch)
sys.modules[__name__].__class__ = _CudnnModule  # (a module's attributes cannot check values otherwise)
