"""``minigrad.nn.parallel``: ``DataParallel`` and ``DistributedDataParallel``, for scripts that wrap
their model when several devices are there.

minigrad has one device, the CPU. ``DataParallel(model)`` is then what PyTorch's is without GPUs:
a wrapper that calls ``model`` (its parameters appear under ``module.``, as in PyTorch's
state_dict). ``DistributedDataParallel`` needs a process group, which minigrad cannot start
(``minigrad.distributed``): making one raises PyTorch's ValueError for a missing group.
"""
from __future__ import annotations

from minigrad.distributed import get_rank
from minigrad.nn.module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """``DataParallel(module, device_ids=None, output_device=None, dim=0)``: on the CPU, ``module`` itself."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Raises ValueError: there is no process group to spread ``module`` over."""

    def __init__(self, module: Module, *args, **kwargs) -> None:
        super().__init__()
        get_rank()  # (PyTorch's ValueError: the default process group has not been initialized)
