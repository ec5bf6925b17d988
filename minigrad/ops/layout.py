"""The memory layout of a new tensor, as PyTorch chooses it.

A tensor's layout (its strides) decides whether ``view()`` works on it and whether
``flatten()`` is a view or a copy, so an in-place change of the flattened tensor
reaches the original or not. PyTorch's rule for most results: row-major; for a
copy (``clone()``, ``to()``) or an elementwise result: the layout of the (first)
input, when that input has no gaps and no repeats in memory ("dense"), so a
transposed tensor's clone is transposed too. NumPy's rules differ in places:
these helpers apply PyTorch's.
"""
from __future__ import annotations

import numpy as np


def is_dense(array: np.ndarray) -> bool:
    """No gaps and no repeats in memory: some order of the dimensions is row-major."""
    expected = array.itemsize
    for n, step in sorted(zip(array.shape, array.strides), key=lambda pair: abs(pair[1])):
        if n != 1:
            if abs(step) != expected:
                return False
            expected *= n
    return True


def repeats_memory(array: np.ndarray) -> bool:
    """Whether several elements are one place in memory (an ``expand()``: a stride of 0 over more
    than one element), which no write into it, and no gradient copied into it, can respect.
    An empty array repeats nothing, whatever its strides (``x.expand(1, 2)[1:]`` has shape (0, 2)
    and a stride of 0), as PyTorch's overlap check says of a tensor with no elements."""
    return (0 in array.strides and array.size > 0
            and any(step == 0 and n > 1 for n, step in zip(array.shape, array.strides)))


def copy_keeping_layout(array: np.ndarray, dtype=None) -> np.ndarray:
    """A copy laid out in memory as ``array`` is (PyTorch's preserve_format, what clone() and to()
    do): a dense array's strides exactly; for an array with gaps or repeats (a slice with a step, an
    expand()), a copy without them, its dimensions in ``array``'s memory order (``dense_strides``)."""
    dtype = np.dtype(dtype or array.dtype)
    itemsize = array.itemsize
    if is_dense(array):
        strides = [abs(s) // itemsize for s in array.strides]
    else:
        strides = dense_strides(array.shape, [s // itemsize for s in array.strides])
    out = np.empty(array.shape, dtype)  # (row-major: the common case)
    if out.strides != tuple(s * dtype.itemsize for s in strides):
        out = np.ndarray(array.shape, dtype, np.empty(max(array.size, 1), dtype), 0,
                         [s * dtype.itemsize for s in strides])
    out[...] = array
    return out


def dense_strides(shape: tuple, strides: tuple) -> list:
    """PyTorch's ``infer_dense_strides``: element strides without gaps, the dimensions ordered as
    ``strides`` order them (an insertion sort, stable: dimensions with stride 0 keep their place;
    equal strides put the smaller size first), dimensions of size 1 taking the stride they reach."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))  # perm[0]: the fastest-moving dimension

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = abs(strides[d0]), abs(strides[d1])
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, ndim):
        dim1 = i
        for j in range(1, i + 1):
            dim0 = i - j
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    out, current = [0] * ndim, 1
    for idx in perm:
        out[idx] = current
        if shape[idx] > 1:
            current *= shape[idx]
    return out


def like_first(out: np.ndarray, first) -> np.ndarray:
    """An elementwise result laid out as PyTorch lays it out: as its first operand when that has the
    result's shape and is dense, else row-major (NumPy may pick another order)."""
    if not isinstance(first, np.ndarray) or first.flags.c_contiguous or first.shape != out.shape or out.ndim < 2:
        return out
    laid_out = np.empty_like(first, dtype=out.dtype) if is_dense(first) else np.empty(out.shape, out.dtype)
    if laid_out.strides == out.strides:
        return out
    laid_out[...] = out
    return laid_out


def strided_view(array: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """``np.lib.stride_tricks.as_strided(array, shape, strides)``, writable as ``array`` is.

    A C-contiguous array hands its memory to ``np.ndarray`` directly, about ten times faster
    than ``as_strided``'s Python-level detour (the gradient of every ``sum()`` is an expand).
    """
    if array.flags.c_contiguous:
        return np.ndarray(shape, array.dtype, array, 0, strides)
    return np.lib.stride_tricks.as_strided(array, shape, strides)
