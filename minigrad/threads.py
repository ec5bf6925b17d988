"""How many threads minigrad's compiled kernels use (``torch.get_num_threads`` / ``set_num_threads``).

minigrad's parallel work is Numba's (``minigrad/kernels/``), so these are Numba's thread count;
NumPy's BLAS keeps its own.
"""
from __future__ import annotations

import numba

from minigrad.ops.broadcast import integer


def get_num_threads() -> int:
    """The number of threads Numba's parallel kernels run on."""
    return numba.get_num_threads()


def set_num_threads(int: int) -> None:  # noqa: A002 (PyTorch's argument name)
    """Run Numba's parallel kernels on ``int`` threads (at most the cores Numba started with)."""
    count = integer(int, "int")
    if count <= 0:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {count}")
    if count > numba.config.NUMBA_NUM_THREADS:
        raise ValueError(f"set_num_threads: at most {numba.config.NUMBA_NUM_THREADS} threads (NUMBA_NUM_THREADS), "
                         f"got {count}: set the NUMBA_NUM_THREADS environment variable before starting Python")
    numba.set_num_threads(count)
