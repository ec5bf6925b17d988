"""``minigrad.cuda``: minigrad computes on the CPU only, so there is never a CUDA device.

PyTorch code picks its device with ``"cuda" if torch.cuda.is_available() else "cpu"``;
here that expression gives ``"cpu"`` and the rest of the code runs unchanged.
"""
from __future__ import annotations


def is_available() -> bool:
    """False: minigrad has no GPU backend."""
    return False


def device_count() -> int:
    """0: no CUDA devices."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the CUDA generators: there are none, so nothing happens (as in PyTorch without a GPU)."""


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA device's generator: there are none, so nothing happens."""


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: there is no CUDA device to compute in bfloat16 on."""
    return False


from minigrad.cuda import amp  # noqa: E402  (minigrad.cuda.amp.GradScaler, as PyTorch's deprecated spelling)
