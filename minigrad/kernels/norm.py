"""LayerNorm over the last axis, forward and backward, one row at a time, statistics in float64.

Written with NumPy (or with tensor operations, as ``NativeLayerNorm``'s create_graph twin is),
layer_norm's backward is about twenty passes over the input, each with a temporary the size of
the input, in float64: the mean, the centred input, the variance, x_hat, g, two more means and
the combination, then the sums over rows for weight and bias. For a transformer's rows of a few
dozen to a few hundred features all of that is overhead: the loops below read a row while it
sits in L1 cache, keep its statistics in float64 scalars and write the result once; the
gradients of weight and bias are accumulated in float64 as the rows go by.

The wrappers take a (rows, C) array (the caller flattens the leading dimensions and the
normalised ones) and return arrays of its dtype (float32 or float64).
``bench/bench_kernels.py`` times them against ``reference.layer_norm_forward``/``_backward``.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from minigrad.kernels import reference as ref


@numba.njit(cache=True, error_model="numpy")
def _row_stats(x, r, eps):
    """(mean, 1 / sqrt(var + eps)) of row r, in float64, the variance biased and two-pass (no cancellation)."""
    n = x.shape[1]
    s = 0.0
    for j in range(n):
        s += x[r, j]
    mean = s / n
    v = 0.0
    for j in range(n):
        d = x[r, j] - mean
        v += d * d
    return mean, 1.0 / math.sqrt(v / n + eps)


@numba.njit(cache=True, error_model="numpy")
def _layer_norm_forward(x, weight, bias, has_weight, has_bias, eps, out):
    for r in range(x.shape[0]):
        mean, rstd = _row_stats(x, r, eps)
        for j in range(x.shape[1]):
            y = (x[r, j] - mean) * rstd
            if has_weight:
                y = y * weight[j]
            if has_bias:
                y = y + bias[j]
            out[r, j] = y


@numba.njit(cache=True, error_model="numpy")
def _layer_norm_backward(x, weight, grad, has_weight, eps, need_x, grad_x, acc_weight, acc_bias):
    n = x.shape[1]
    for r in range(x.shape[0]):
        mean, rstd = _row_stats(x, r, eps)
        sum_g = 0.0
        sum_gx = 0.0
        for j in range(n):
            x_hat = (x[r, j] - mean) * rstd
            gr = 1.0 * grad[r, j]
            acc_weight[j] += gr * x_hat
            acc_bias[j] += gr
            g = gr * weight[j] if has_weight else gr
            sum_g += g
            sum_gx += g * x_hat
        if need_x:
            mean_g = sum_g / n
            mean_gx = sum_gx / n
            for j in range(n):
                x_hat = (x[r, j] - mean) * rstd
                g = 1.0 * grad[r, j]  # (float64: a float32 product would differ from sum_g's terms)
                if has_weight:
                    g = g * weight[j]
                grad_x[r, j] = (g - mean_g - x_hat * mean_gx) * rstd


def layer_norm_forward(x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None,
                       eps: float) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * weight + bias over each row of the 2-D x (biased variance)."""
    x, weight, bias = ref.check_layer_norm(x, weight, bias, "bias")
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    empty = np.zeros(1, x.dtype)
    _layer_norm_forward(x, empty if weight is None else np.ascontiguousarray(weight),
                        empty if bias is None else np.ascontiguousarray(bias),
                        weight is not None, bias is not None, float(eps), out)
    return out


def layer_norm_backward(x: np.ndarray, weight: np.ndarray | None, grad: np.ndarray, eps: float,
                        output_mask=(True, True, True)) -> tuple:
    """(d x, d weight, d bias) from the saved x, as ``reference.layer_norm_backward``; None where not asked."""
    x, weight, grad = ref.check_layer_norm(x, weight, grad, "grad")
    x, grad = np.ascontiguousarray(x), np.ascontiguousarray(grad)
    grad_x = np.empty_like(x) if output_mask[0] else np.empty((1, 1), x.dtype)
    acc_weight, acc_bias = np.zeros(x.shape[1]), np.zeros(x.shape[1])
    _layer_norm_backward(x, np.zeros(1, x.dtype) if weight is None else np.ascontiguousarray(weight), grad,
                         weight is not None, float(eps), bool(output_mask[0]), grad_x, acc_weight, acc_bias)
    return (grad_x if output_mask[0] else None,
            acc_weight.astype(x.dtype) if output_mask[1] else None,
            acc_bias.astype(x.dtype) if output_mask[2] else None)
