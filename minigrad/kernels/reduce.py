"""Undo broadcasting in the backward pass: ``sum_to_shape``.

There is no Numba kernel here, because none beat NumPy: ``grad.sum(axis=...)``
is already one SIMD, pairwise-summed pass over memory, and the benchmark's
Numba candidate (a row-sum loop for the common "sum away the batch dims" case)
was no faster and less accurate in float32. So the reference is the
implementation.
"""
from __future__ import annotations

from minigrad.kernels.reference import sum_to_shape

__all__ = ["sum_to_shape"]
