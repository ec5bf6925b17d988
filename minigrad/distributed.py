"""``minigrad.distributed``: training across processes, which minigrad does not do.

Scripts written for several GPUs (nanoGPT's ``train.py``) import ``init_process_group`` and
call it only when launched by ``torchrun``; run as one process they never do, and run here
unchanged. minigrad has no process group: ``is_available()`` is False, and starting one (or
asking for a rank) raises with PyTorch's exception types, saying so.
"""
from __future__ import annotations

__all__ = ["destroy_process_group", "get_rank", "get_world_size", "init_process_group", "is_available",
           "is_initialized"]

_NONE = ("minigrad has no distributed backend (it computes in one process on the CPU): run the script as one "
         "process, without torchrun")


def is_available() -> bool:
    """False: minigrad has no process groups."""
    return False


def is_initialized() -> bool:
    """False: no process group was (or can be) started."""
    return False


def init_process_group(*args, **kwargs) -> None:
    """Raises RuntimeError: there is no distributed backend."""
    raise RuntimeError(_NONE)


def destroy_process_group(group=None) -> None:
    """Raises AssertionError, as PyTorch's without a process group."""
    raise AssertionError(f"Process group cannot be None: {_NONE}")


def get_rank(group=None) -> int:
    """Raises ValueError, as PyTorch's before ``init_process_group``."""
    raise ValueError(f"Default process group has not been initialized: {_NONE}")


def get_world_size(group=None) -> int:
    """Raises ValueError, as PyTorch's before ``init_process_group``."""
    raise ValueError(f"Default process group has not been initialized: {_NONE}")
