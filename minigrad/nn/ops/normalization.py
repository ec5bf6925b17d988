"""layer_norm, batch_norm and group_norm as one node each, named as PyTorch names them.

All compute ``x_hat = (x - mean) / sqrt(var + eps)`` over some dimensions, then
``y = x_hat * weight + bias``. layer_norm takes the statistics over each sample's
last dimensions, batch_norm over everything but the channel dimension (or, in
evaluation, uses the running statistics instead), group_norm over each sample's
groups of channels. With ``g = grad * weight`` and
the means taken over the normalised dimensions, the gradients are

    d/dx      = (g - mean(g) - x_hat * mean(g * x_hat)) / sqrt(var + eps)   (batch statistics)
    d/dx      = g / sqrt(running_var + eps)                                 (running statistics)
    d/dweight = sum(grad * x_hat),   d/dbias = sum(grad)                    (over the other dimensions)

The forward runs in NumPy; the backward recomputes the statistics from the saved
input with tensor operations, so under create_graph it is recorded and can be
differentiated again. It works in float64 and casts back: over a row whose
spread is tiny next to its values, ``x - mean`` keeps few of x's digits and d/dx
is a difference of nearly equal terms, so in float32 (as this backward was, and
as torch's layer_norm is) only about four digits of the gradient of layer_norm
over [-2.35676, -2.37274] are right; in float64 the one float32 rounding left is
the cast back.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import kernels
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad._tensor import Tensor


_KERNEL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class NativeNorm(Function):
    """``(x - mean) / sqrt(var + eps) * weight + bias``; the statistics over ``dims`` of x, or given.

    ``view`` is the shape weight and bias are broadcast as. ``stats``: the (mean, var) arrays, with
    the reduced dimensions kept, or None to take them from x (``batch_statistics``); ``batch``: they
    are x's own (so its gradient goes through them), not running statistics. ``grouped``: the shape
    x is normalised in, if not its own (group_norm's (N, G, C / G, ...), whose weight is per channel).
    """

    @staticmethod
    def forward(ctx, x, weight, bias, dims: tuple, view: tuple, eps: float, stats, batch: bool,
                grouped: tuple | None = None):
        ctx.dims, ctx.view, ctx.eps, ctx.stats, ctx.batch, ctx.grouped = dims, view, eps, stats, batch, grouped
        ctx.param_shape = None if weight is None and bias is None else (weight if weight is not None else bias).shape
        ctx.save_for_backward(x, weight)
        data = x._data if grouped is None else x._data.reshape(grouped)
        mean, var = batch_statistics(data, dims) if stats is None else stats
        out = (data - mean) / np.sqrt(var + eps)
        if weight is not None:
            out = out * weight._data.reshape(view)
        if bias is not None:
            out = out + bias._data.reshape(view)
        return Tensor._wrap(np.asarray(out, dtype=data.dtype).reshape(x.shape))  # (group_norm's shape back)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        dims, view, eps = ctx.dims, ctx.view, ctx.eps
        shape = x.shape
        if ctx.grouped is not None:
            x, grad = x.reshape(ctx.grouped), grad.reshape(ctx.grouped)
        dtype, x = x.dtype, x.double()  # float64 inside (see the module docstring)
        if ctx.batch:
            centered = x - x.mean(dims, keepdim=True)
            rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
        else:
            mean, var = (Tensor._wrap(np.asarray(s, dtype=x._data.dtype)) for s in ctx.stats)
            centered, rstd = x - mean, (var + eps).rsqrt()
        x_hat = centered * rstd
        need_x, need_weight, need_bias = ctx.needs_input_grad[:3]
        g = grad.double() if weight is None else grad.double() * weight.double().reshape(view)
        grad_x = grad_weight = grad_bias = None
        if need_x:
            if ctx.batch:
                grad_x = (g - g.mean(dims, keepdim=True) - x_hat * (g * x_hat).mean(dims, keepdim=True)) * rstd
            else:
                grad_x = g * rstd
            grad_x = grad_x.to(dtype) if ctx.grouped is None else grad_x.to(dtype).reshape(shape)
        if need_weight:
            grad_weight = _sum_to_view(grad * x_hat, view, ctx.param_shape).to(weight.dtype)
        if need_bias:
            grad_bias = _sum_to_view(grad, view, ctx.param_shape)
        return grad_x, grad_weight, grad_bias, None, None, None, None, None, None


def batch_statistics(data: np.ndarray, dims: tuple) -> tuple:
    """The mean and the biased variance over ``dims``, which stay as dimensions of size 1."""
    mean = data.mean(axis=dims, keepdims=True)
    return mean, ((data - mean) ** 2).mean(axis=dims, keepdims=True)


def _sum_to_view(t: Tensor, view: tuple, shape) -> Tensor:
    """Sum ``t`` over the dimensions where ``view`` is 1 (weight and bias were broadcast there)."""
    lead = t.ndim - len(view)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(view) if n == 1 and t.shape[lead + i] != 1)
    summed = t.sum(dims, keepdim=True) if dims else t
    return summed.reshape(shape)


class NativeLayerNorm(NativeNorm):
    """layer_norm's node. Over float32 or float64 rows (weight and bias, if given, of the input's dtype) the
    forward and an ordinary backward run the Numba kernels of ``minigrad/kernels/norm.py`` (one pass per
    row, float64 statistics); under ``create_graph=True`` the backward is NativeNorm's, recorded."""

    node_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, dims: tuple, view: tuple, eps: float, stats, batch: bool,
                grouped: tuple | None = None):
        data = x._data
        ctx.rows = None
        if (stats is None and batch and grouped is None and data.dtype in _KERNEL_FLOATS and data.size
                and all(t is None or t._data.dtype == data.dtype for t in (weight, bias))):
            width = math.prod(view)
            ctx.rows = (data.size // width, width)
        if ctx.rows is None:
            return NativeNorm.forward(ctx, x, weight, bias, dims, view, eps, stats, batch, grouped)
        ctx.dims, ctx.view, ctx.eps, ctx.stats, ctx.batch, ctx.grouped = dims, view, eps, stats, batch, grouped
        ctx.param_shape = None if weight is None and bias is None else (weight if weight is not None else bias).shape
        ctx.save_for_backward(x, weight)
        out = kernels.layer_norm_forward(data.reshape(ctx.rows), None if weight is None else weight._data.reshape(-1),
                                         None if bias is None else bias._data.reshape(-1), eps)
        return Tensor._wrap(out.reshape(data.shape))

    @staticmethod
    def backward(ctx, grad):
        if ctx.rows is None or is_grad_enabled():
            return NativeNorm.backward(ctx, grad)
        x, weight = ctx.saved_tensors
        mask = tuple(ctx.needs_input_grad[:3])
        grad_x, grad_weight, grad_bias = kernels.layer_norm_backward(
            x._data.reshape(ctx.rows), None if weight is None else weight._data.reshape(-1),
            grad._data.reshape(ctx.rows), ctx.eps, mask)
        return (None if grad_x is None else Tensor._wrap(grad_x.reshape(x.shape)),
                None if grad_weight is None else Tensor._wrap(grad_weight.reshape(ctx.param_shape)),
                None if grad_bias is None else Tensor._wrap(grad_bias.reshape(ctx.param_shape)),
                None, None, None, None, None, None)


class NativeBatchNorm(NativeNorm):
    node_name = "NativeBatchNormBackward0"


class NativeGroupNorm(NativeNorm):
    node_name = "NativeGroupNormBackward0"
