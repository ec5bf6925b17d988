"""Undo broadcasting in the backward pass: ``sum_to_shape``.

There is no Numba kernel here, because none beat NumPy: ``grad.sum(axis=...)``
is already one SIMD, pairwise-summed pass over memory, and a Numba row-sum
loop we measured (for the common "sum away the batch dims" case) was no faster
and less accurate in float32, so it was removed. The reference is the
implementation.
"""
from __future__ import annotations

from minigrad.kernels.reference import sum_to_shape

__all__ = ["sum_to_shape"]
