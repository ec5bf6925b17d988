"""The gradient of an embedding lookup: each looked-up row's gradient added to its row of the table.

``np.add.at`` (the reference) is NumPy's unbuffered scatter-add; it goes through a generic
per-element inner loop and costs about a microsecond per looked-up row of 64 floats. The loop
below adds the rows in the same order (so the sums round the same way, bit for bit) with a
plain inner loop over the row. ``bench/bench_kernels.py`` times the two.
"""
from __future__ import annotations

import numba
import numpy as np

from minigrad.kernels import reference as ref


@numba.njit(cache=True, error_model="numpy")
def _embedding_backward(indices, grad, out):
    for i in range(indices.shape[0]):
        row = indices[i]
        for j in range(grad.shape[1]):
            out[row, j] += grad[i, j]


def embedding_backward(indices: np.ndarray, grad: np.ndarray, num_weights: int) -> np.ndarray:
    """(num_weights, D) zeros plus, for each i, grad[i] added to row indices[i]: indices flat, grad (N, D)."""
    indices, grad = ref.check_embedding_backward(indices, grad, num_weights)
    out = np.zeros((num_weights, grad.shape[1]), grad.dtype)
    _embedding_backward(np.ascontiguousarray(indices), np.ascontiguousarray(grad), out)
    return out
