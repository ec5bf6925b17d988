"""Softmax, log-softmax and the fused cross-entropy, one row at a time.

A classifier's logits are (N, C) with small C (10 digits): NumPy then spends
its time on per-row reduction overhead and on temporaries the size of the
input. The Numba loops below make one pass over a row while it sits in L1
cache. They only see a C-contiguous 2-D (rows, C) array; the Python wrappers
move the chosen axis last and flatten the others into rows.

Each element also costs one exp, and Numba's ``math.exp`` is a scalar libm
call where NumPy's ``np.exp`` is SIMD: a loop that calls exp per element
loses most of what fusing gains. So the forward passes split the work by what
each does best: Numba subtracts each row's max, NumPy takes exp of the whole
array at once, and Numba sums each row and scales it (softmax) or subtracts
its log (log-softmax, cross-entropy). ``bench/bench_kernels.py`` times
them against the NumPy references; the figures are in ``bench/README.md``.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from minigrad.kernels import reference as ref


@numba.njit(cache=True, error_model="numpy")
def _row_max(x, r):
    """Max of row r, in x's dtype (so x - max stays float32 for float32 input).
    A NaN in the row makes the row's result NaN."""
    m = x[r, 0]
    for j in range(1, x.shape[1]):
        if x[r, j] > m:
            m = x[r, j]
    return m


@numba.njit(cache=True, error_model="numpy")
def _shift_rows(x, out):
    """out = x - the max of its row: every exp of it is <= 1, so nothing overflows."""
    for r in range(x.shape[0]):
        m = _row_max(x, r)
        for j in range(x.shape[1]):
            out[r, j] = x[r, j] - m


@numba.njit(cache=True, error_model="numpy")
def _normalize_rows(e):
    """Divide each row by its sum, in place."""
    for r in range(e.shape[0]):
        s = 0.0
        for j in range(e.shape[1]):
            s += e[r, j]
        inv = 1.0 / s
        for j in range(e.shape[1]):
            e[r, j] *= inv


@numba.njit(cache=True, error_model="numpy")
def _subtract_log_sum_rows(shifted, e):
    """shifted -= log(sum of e's row), in place, where e = exp(shifted): log-softmax."""
    for r in range(shifted.shape[0]):
        s = 0.0
        for j in range(shifted.shape[1]):
            s += e[r, j]
        log_s = math.log(s)
        for j in range(shifted.shape[1]):
            shifted[r, j] -= log_s


@numba.njit(cache=True, error_model="numpy")
def _mean_negative_picked(log_probs, targets):
    """Mean over rows of -log_probs[r, targets[r]]: the cross-entropy."""
    total = 0.0
    for r in range(log_probs.shape[0]):
        total -= log_probs[r, targets[r]]
    return total / log_probs.shape[0]  # 0/0 = nan for an empty batch, as torch's mean


def _softmax_rows(x: np.ndarray, out: np.ndarray) -> None:
    _shift_rows(x, out)  # Numba: one short loop per row
    np.exp(out, out=out)  # NumPy: SIMD exp over the whole array
    _normalize_rows(out)  # Numba: sum and scale each row while it is in cache


def _log_softmax_rows(x: np.ndarray, out: np.ndarray) -> None:
    _shift_rows(x, out)
    _subtract_log_sum_rows(out, np.exp(out))


@numba.njit(cache=True, error_model="numpy")
def _softmax_backward_rows(y, grad, out):
    for r in range(y.shape[0]):
        dot = 0.0
        for j in range(y.shape[1]):
            dot += grad[r, j] * y[r, j]
        for j in range(y.shape[1]):
            out[r, j] = y[r, j] * (grad[r, j] - dot)


def _as_rows(x: np.ndarray, axis: int) -> np.ndarray:
    """x with ``axis`` moved last, as a C-contiguous (rows, C) array."""
    if x.ndim == 0:
        return x.reshape(1, 1)
    if axis != x.ndim - 1:
        x = np.moveaxis(x, axis, -1)  # costs a few microseconds: skipped for the last axis
    # not reshape(-1, C): -1 is ambiguous when C == 0
    return np.ascontiguousarray(x).reshape(math.prod(x.shape[:-1]), x.shape[-1])


def _from_rows(rows: np.ndarray, like: np.ndarray, axis: int) -> np.ndarray:
    """Undo ``_as_rows``: back to like's shape, with ``axis`` where it was, C-contiguous as
    PyTorch's result (a copy when ``axis`` is not the last one: a view of the rows would be
    ordered by them, and ``flatten``/``view`` of it would copy where PyTorch's are views)."""
    if like.ndim == 0 or axis == like.ndim - 1:
        return rows.reshape(like.shape)
    moved_shape = like.shape[:axis] + like.shape[axis + 1:] + (like.shape[axis],)
    return np.ascontiguousarray(np.moveaxis(rows.reshape(moved_shape), -1, axis))


def _rowwise(kernel, axis: int, first: np.ndarray, *rest: np.ndarray) -> np.ndarray:
    axis = ref.check_axis(axis, first.ndim)
    rows = [_as_rows(a, axis) for a in (first, *rest)]
    out = np.empty_like(rows[0])
    if out.size:
        kernel(*rows, out)
    return _from_rows(out, first, axis)


def softmax_forward(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x - max) / sum(...) along ``axis``; the max subtraction prevents overflow."""
    return _rowwise(_softmax_rows, axis, ref.check_float("x", x))


def log_softmax_forward(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """(x - max) - log(sum(exp(x - max))) along ``axis``: never the log of a rounded-to-0 value."""
    return _rowwise(_log_softmax_rows, axis, ref.check_float("x", x))


def log_softmax_rows(x: np.ndarray) -> np.ndarray:
    """``log_softmax_forward(x, axis=1)`` of a 2-D float32 or float64 array whose caller has checked
    exactly that (the fused cross-entropy's forward): the same kernel, without the wrapper's checks
    and reshapes, which cost more than the kernel on a batch of 10 rows of 10 classes."""
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    if out.size:
        _log_softmax_rows(x, out)
    return out


def softmax_backward(y: np.ndarray, grad: np.ndarray, axis: int = -1) -> np.ndarray:
    """y * (grad - sum(grad * y)) from the saved output y = softmax(x)."""
    y = ref.check_float("y", y)
    return _rowwise(_softmax_backward_rows, axis, y, ref.check_like("grad", grad, y))


def cross_entropy_forward(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of (N, C) logits against integer targets, and the log-probabilities.

    ``log_probs`` is what the backward needs.
    """
    logits = np.ascontiguousarray(ref.check_logits(logits))
    targets = np.ascontiguousarray(ref.check_targets(targets, logits))
    log_probs = np.empty_like(logits)
    if logits.shape[1] == 0:
        raise ValueError("cross_entropy needs at least one class")
    _log_softmax_rows(logits, log_probs)
    return float(_mean_negative_picked(log_probs, targets)), log_probs
