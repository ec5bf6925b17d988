"""Softmax and the fused log-softmax + cross-entropy, one row at a time.

A classifier's logits are (N, C) with small C (10 digits): NumPy then spends
its time on per-row reduction overhead and on temporaries the size of the
input. The kernels below make one or two passes over a row while it sits in
L1 cache. The njit cores only see a C-contiguous 2-D (rows, C) array; the
Python wrappers move the chosen axis last and flatten the others into rows.

Each row costs one exp per element, and Numba's exp is scalar where NumPy's
is SIMD: that eats most of the gain. ``softmax_forward``, ``softmax_backward``
and the fused ``cross_entropy_forward`` still win everywhere in
``bench/bench_kernels.py``, so they are the kernels here. The kernels of
``log_softmax_forward``, ``log_softmax_backward`` and ``cross_entropy_backward``
did not win everywhere and were removed: ``minigrad.kernels`` exports their
references (see ``__init__.py``).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from minigrad.kernels import reference as ref


@numba.njit(cache=True, error_model="numpy")
def _row_max(x, r):
    """Max of row r, in x's dtype: then x - max is float32 for float32 input, and math.exp
    calls the faster single-precision expf. A NaN in the row makes the row's result NaN."""
    m = x[r, 0]
    for j in range(1, x.shape[1]):
        if x[r, j] > m:
            m = x[r, j]
    return m


@numba.njit(cache=True, error_model="numpy")
def _softmax_rows(x, out):
    for r in range(x.shape[0]):
        m = _row_max(x, r)
        s = 0.0
        for j in range(x.shape[1]):
            e = math.exp(x[r, j] - m)  # <= 1: no overflow
            out[r, j] = e
            s += e
        inv = 1.0 / s
        for j in range(x.shape[1]):
            out[r, j] *= inv


@numba.njit(cache=True, error_model="numpy")
def _log_softmax_row(x, r, out):
    """Write row r of log_softmax(x) into out[r], for the fused cross-entropy."""
    m = _row_max(x, r)
    s = 0.0
    for j in range(x.shape[1]):
        s += math.exp(x[r, j] - m)
    log_s = math.log(s)
    for j in range(x.shape[1]):
        out[r, j] = (x[r, j] - m) - log_s


@numba.njit(cache=True, error_model="numpy")
def _softmax_backward_rows(y, grad, out):
    for r in range(y.shape[0]):
        dot = 0.0
        for j in range(y.shape[1]):
            dot += grad[r, j] * y[r, j]
        for j in range(y.shape[1]):
            out[r, j] = y[r, j] * (grad[r, j] - dot)


@numba.njit(cache=True, error_model="numpy")
def _cross_entropy_forward(logits, targets, log_probs):
    total = 0.0
    for r in range(logits.shape[0]):
        _log_softmax_row(logits, r, log_probs)
        total -= log_probs[r, targets[r]]
    return total / logits.shape[0]  # 0/0 = nan for an empty batch, as torch's mean


def _as_rows(x: np.ndarray, axis: int) -> np.ndarray:
    """x with ``axis`` moved last, as a C-contiguous (rows, C) array."""
    if x.ndim == 0:
        return x.reshape(1, 1)
    if axis != x.ndim - 1:
        x = np.moveaxis(x, axis, -1)  # costs a few microseconds: skipped for the last axis
    # not reshape(-1, C): -1 is ambiguous when C == 0
    return np.ascontiguousarray(x).reshape(int(np.prod(x.shape[:-1], dtype=np.int64)), x.shape[-1])


def _from_rows(rows: np.ndarray, like: np.ndarray, axis: int) -> np.ndarray:
    """Undo ``_as_rows``: back to like's shape (a view, with ``axis`` where it was)."""
    if like.ndim == 0 or axis == like.ndim - 1:
        return rows.reshape(like.shape)
    moved_shape = like.shape[:axis] + like.shape[axis + 1:] + (like.shape[axis],)
    return np.moveaxis(rows.reshape(moved_shape), -1, axis)


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


def softmax_backward(y: np.ndarray, grad: np.ndarray, axis: int = -1) -> np.ndarray:
    """y * (grad - sum(grad * y)) from the saved output y = softmax(x)."""
    y = ref.check_float("y", y)
    return _rowwise(_softmax_backward_rows, axis, y, ref.check_like("grad", grad, y))


def cross_entropy_forward(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of (N, C) logits against integer targets, and the log-probabilities.

    Fused: the log-softmax row is computed and the target's entry picked in
    the same pass. ``log_probs`` is what the backward needs.
    """
    logits = np.ascontiguousarray(ref.check_logits(logits))
    targets = np.ascontiguousarray(ref.check_targets(targets, logits))
    log_probs = np.empty_like(logits)
    if logits.shape[1] == 0:
        raise ValueError("cross_entropy needs at least one class")
    loss = _cross_entropy_forward(logits, targets, log_probs)
    return float(loss), log_probs
