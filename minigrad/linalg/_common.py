"""What the families of ``minigrad.linalg`` share: ``LinAlgError`` and the checks of a batch of matrices.
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad._tensor import Tensor, _tensor_argument


class LinAlgError(RuntimeError):
    """A matrix the factorisation cannot handle: singular, or not positive-definite."""


def _matrices(name: str, A, square: bool = True) -> Tensor:
    """``A`` as PyTorch checks it: a float tensor of (batches of) matrices, square if asked."""
    A = _tensor_argument(name, "A", 0, A)
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {dtypes.scalar_type_name(A._data.dtype)}: convert it with .float() or .double()")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    return A


def _wrap(array: np.ndarray, dtype: np.dtype) -> Tensor:
    return Tensor._wrap(np.asarray(array, dtype=dtype, order="C"))


def _diag_embed(v: Tensor) -> Tensor:
    """A batch of diagonal matrices with ``v`` on the diagonal (differentiable)."""
    n = v.shape[-1]
    return v.unsqueeze(-1) * Tensor._wrap(np.eye(n, dtype=v._data.dtype))


def _eye_like(A: Tensor) -> Tensor:
    return Tensor._wrap(np.broadcast_to(np.eye(A.shape[-1], dtype=A._data.dtype), A.shape).copy())
