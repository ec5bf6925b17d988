"""Distances between points: cdist (every pair of rows of two sets) and dist (of two tensors).

Both are p-norms of differences, composed from broadcasting subtraction and ``vector_norm``
(``ops/stats.py``), whose gradient is 0 where a distance is 0, as PyTorch's.
"""
from __future__ import annotations

from minigrad.ops.broadcast import number
from minigrad.ops.registry import tensor_method
from minigrad.ops.stats import Norm
from minigrad._tensor import Tensor, _tensor_argument

_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of ``x1`` (…, P, M) and each row of ``x2`` (…, R, M): (…, P, R).

    ``compute_mode`` is accepted for PyTorch's sake; minigrad always subtracts directly (PyTorch's
    matrix-product shortcut for the Euclidean distance is faster but less exact).
    """
    x1, x2 = _tensor_argument("cdist", "x1", 0, x1), _tensor_argument("cdist", "x2", 1, x2)
    p = number(p, "p")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X{1 if x1.ndim < 2 else 2} got: "
                           f"{min(x1.ndim, x2.ndim)}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1._data.dtype.kind != "f" or x2._data.dtype.kind != "f":
        raise RuntimeError(f"cdist only supports floating-point dtypes, X{1 if x1._data.dtype.kind != 'f' else 2} "
                           f"got: {x1.dtype if x1._data.dtype.kind != 'f' else x2.dtype}: convert it with .float()")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got p={p}")
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode: use one of {', '.join(_COMPUTE_MODES)}")
    differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return Norm.apply(differences, p, -1, False)


@tensor_method(top_level=True, out=False)
def dist(self: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``self - other`` (broadcast), over every element."""
    other = _tensor_argument("dist", "other", 1, other)
    return Norm.apply(self - other, number(p, "p"), None, False)
