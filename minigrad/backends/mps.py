"""``minigrad.backends.mps``: Apple's Metal backend, which minigrad does not have."""
from __future__ import annotations


def is_available() -> bool:
    """False: minigrad computes on the CPU only."""
    return False


def is_built() -> bool:
    """False: minigrad has no MPS support to build."""
    return False
