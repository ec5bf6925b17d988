"""``minigrad.accelerator``: PyTorch's device-neutral accelerator API, with no accelerator.

Recent PyTorch tutorials choose their device with
``torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"``;
here ``is_available()`` is False, so they pick ``"cpu"``.
"""
from __future__ import annotations


def is_available() -> bool:
    """False: minigrad computes on the CPU only."""
    return False


def current_accelerator(check_available: bool = False) -> None:
    """None, as in PyTorch when there is no accelerator."""
    return None


def device_count() -> int:
    """0: no accelerator devices."""
    return 0
