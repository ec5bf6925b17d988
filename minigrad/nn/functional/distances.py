"""Distances and similarities: ``normalize``, ``cosine_similarity``, ``pairwise_distance``, ``pdist``.
"""
from __future__ import annotations

import numpy as np

from minigrad.dtypes import from_numpy_dtype
from minigrad.functional_ops import broadcast_tensors, write_out
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _TENSORS_OR_NONE, _check_tensors


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``: each slice scaled to norm 1 (zero slices stay 0)."""
    if type(input) not in _TENSORS or type(out) not in _TENSORS_OR_NONE:
        _check_tensors("normalize", input=input, out=out)
    result = input / input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return result if out is None else write_out("normalize", result, out)


def _floor_value(norm: Tensor, eps: float) -> Tensor:
    """``norm`` raised to ``eps`` in value only: PyTorch clamps the norms in place under no_grad, so the
    gradient still flows through the unclamped norm."""
    return norm + (norm.clamp(min=eps) - norm).detach()


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """<x1, x2> / (max(||x1||, eps) * max(||x2||, eps)) along ``dim``, after broadcasting x1 and x2."""
    if type(x1) not in _TENSORS or type(x2) not in _TENSORS:
        _check_tensors("cosine_similarity", x1=x1, x2=x2)
    common = np.result_type(x1._data.dtype, x2._data.dtype)
    if common.kind != "f":
        word = {"b": "Bool", "i": "Long" if common.itemsize == 8 else "Int"}.get(common.kind, str(common))
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {word}")
    x1, x2 = broadcast_tensors(x1.to(from_numpy_dtype(common)), x2.to(from_numpy_dtype(common)))
    norm1 = _floor_value(x1.norm(2, dim, keepdim=True), eps)
    norm2 = _floor_value(x2.norm(2, dim, keepdim=True), eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dimension (eps keeps the norm's gradient finite at x1 == x2)."""
    if type(x1) not in _TENSORS or type(x2) not in _TENSORS:
        _check_tensors("pairwise_distance", x1=x1, x2=x2)
    innermost = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p, innermost, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance between every pair of rows i < j of (N, M) ``input``: N * (N - 1) / 2 of them,
    in the order of the upper triangle of the distance matrix, row by row."""
    if type(input) not in _TENSORS:
        _check_tensors("pdist", input=input)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {input.dtype}: call .float() first")
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got p={p}")
    first, second = np.triu_indices(input.shape[0], 1)
    return (input[Tensor._wrap(first)] - input[Tensor._wrap(second)]).norm(p, 1)
