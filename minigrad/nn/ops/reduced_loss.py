"""Losses as single Functions with their reduction inside, named as PyTorch names them.

``F.mse_loss``, ``F.huber_loss``, ``F.smooth_l1_loss``, ``F.binary_cross_entropy``,
``F.binary_cross_entropy_with_logits`` and ``F.nll_loss`` could be a few tensor operations each, but then ``loss.grad_fn`` would be a
``MeanBackward0`` where PyTorch shows ``MseLossBackward0`` (the tutorials print
it), and the loss would record several nodes. Each Function here computes the
elementwise losses in NumPy and reduces them ("mean", "sum" or "none") in the
same node. Its backward first spreads the upstream gradient back over the
elements (``spread``), then applies the elementwise derivative, written with
tensor operations so that it can be differentiated again.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.autograd.function import Function
from minigrad.ops.subscript import IndexAdd
from minigrad._tensor import Tensor


def reduce_array(losses: np.ndarray, reduction: str) -> np.ndarray:
    """The forward's reduction, on the array of elementwise losses."""
    if reduction == "none":
        return losses
    with np.errstate(invalid="ignore", divide="ignore"):  # an empty mean is nan, as in PyTorch
        total = losses.sum(dtype=losses.dtype)
        return np.asarray(total / losses.size if reduction == "mean" else total, dtype=losses.dtype)


def spread(grad: Tensor, reduction: str, shape: tuple) -> Tensor:
    """The gradient of each element's loss, from the gradient of the reduced loss."""
    if reduction == "none":
        return grad
    n = math.prod(shape)
    per_element = grad / n if reduction == "mean" else grad
    return per_element.expand(shape)


class MseLoss(Function):
    """mean/sum/none of (input - target)^2 for same-shaped input and target; d/dinput = 2 (input - target)."""

    node_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input, target)
        ctx.reduction = reduction
        diff = input._data - target._data
        return Tensor._wrap(reduce_array(diff * diff, reduction))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        # each gradient from its own difference, as PyTorch (mse_loss_backward(grad, target, input) for the
        # target): -(g * 0) would be -0.0 where PyTorch has 0.0, and 0 ** -1 tells them apart
        g = spread(grad, ctx.reduction, input.shape)
        need_input, need_target, _ = ctx.needs_input_grad
        return (g * ((input - target) * 2) if need_input else None), \
            (g * ((target - input) * 2) if need_target else None), None


class BinaryCrossEntropyWithLogits(Function):
    """PyTorch's stable form: with m = max(-x, 0) and lw = 1 + (pos_weight - 1) * t,

        loss = weight * ((1 - t) * x + lw * (m + log(exp(-m) + exp(-x - m))))
        d/dx = weight * ((lw * sigmoid(x) - lw) + (1 - t))      = weight * (sigmoid(x) - t) without pos_weight
        d/dt = weight * (-x - (pos_weight - 1) * log(1 + exp(-x)))
    """

    node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction):
        ctx.save_for_backward(input, target, weight, pos_weight)
        ctx.reduction = reduction
        x, t = input._data, target._data
        m = np.maximum(-x, 0)
        softplus_neg = m + np.log(np.exp(-m) + np.exp(-x - m))  # log(1 + exp(-x)), without overflow
        if pos_weight is not None:
            softplus_neg = softplus_neg * ((pos_weight._data - 1) * t + 1)
        losses = (1 - t) * x + softplus_neg
        if weight is not None:
            losses = losses * weight._data
        # the loss has the target's dtype, as PyTorch's (its kernel works in place on 1 - target)
        return Tensor._wrap(reduce_array(losses.astype(t.dtype, copy=False), reduction))

    @staticmethod
    def backward(ctx, grad):
        x, t, weight, pos_weight = ctx.saved_tensors
        g = spread(grad, ctx.reduction, x.shape)
        if weight is not None:
            g = g * weight
        need_x, need_t = ctx.needs_input_grad[:2]
        grad_x = grad_t = None
        if pos_weight is None:
            if need_x:
                grad_x = g * (x.sigmoid() - t)
            if need_t:
                grad_t = g * -x
        else:
            log_weight = (pos_weight - 1) * t + 1
            if need_x:
                grad_x = g * (log_weight * x.sigmoid() - log_weight + (1 - t))
            if need_t:
                m = (-x).clamp(min=0)
                softplus_neg = m + ((-m).exp() + (-x - m).exp()).log()
                grad_t = g * (-x + (pos_weight - 1) * softplus_neg)
        return grad_x, grad_t, None, None, None


class NllLoss(Function):
    """-weight[t_i] * rows[i, t_i] for (M, C) log-probabilities ``rows`` and M targets, reduced.

    ``targets`` (class indices, ignored ones replaced by 0), ``weights`` (the
    weight of each row's target, 0 for ignored rows) and ``counted`` (False for
    ignored rows) are NumPy arrays computed by ``F.nll_loss``. "mean" divides by
    the summed weights, as PyTorch does. The backward puts ``-weight * grad`` at
    each counted row's target column (``IndexAdd``, whose backward is indexing:
    differentiable again); an ignored row gets exactly 0, even when the mean
    divided by a total weight of 0.
    """

    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, rows, targets, weights, counted, reduction, out_shape):
        key = (np.arange(len(targets)), targets)
        ctx.rows_shape, ctx.n, ctx.reduction, ctx.total = rows.shape, len(targets), reduction, weights.sum(dtype=weights.dtype)
        ctx.counted = np.flatnonzero(counted)
        ctx.counted_key, ctx.counted_weights = (ctx.counted, targets[ctx.counted]), weights[ctx.counted]
        losses = -rows._data[key] * weights
        if reduction == "none":
            return Tensor._wrap(losses.reshape(out_shape))
        total = losses.sum(dtype=losses.dtype)
        if reduction == "sum":
            return Tensor._wrap(np.asarray(total))
        with np.errstate(invalid="ignore", divide="ignore"):  # nothing counts: 0 / 0 = nan, as in PyTorch
            return Tensor._wrap(np.asarray(total / ctx.total, dtype=losses.dtype))

    @staticmethod
    def backward(ctx, grad):
        n = ctx.n
        if ctx.reduction == "none":
            per_row = grad.reshape(n)
        elif ctx.reduction == "sum":
            per_row = grad.expand(n)
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                per_row = (grad / Tensor._wrap(np.asarray(ctx.total))).expand(n)
        if len(ctx.counted) < n:
            per_row = per_row[ctx.counted]
        values = per_row * Tensor._wrap(-ctx.counted_weights)
        return IndexAdd.apply(values, ctx.counted_key, ctx.rows_shape), None, None, None, None, None


class NllLoss2d(NllLoss):
    """nll_loss of an input with spatial dimensions (N, C, d1, ...): PyTorch names its node apart."""

    node_name = "NllLoss2DBackward0"


class HuberLoss(Function):
    """mean/sum/none of 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), for d = input - target.

    One node saving input and target, as PyTorch's: changing either in place before
    backward is a version-counter error. d/dinput = d clamped to [-delta, delta].
    """

    node_name = "HuberLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction, delta):
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.delta = reduction, delta
        diff = input._data - target._data
        size = np.abs(diff)
        losses = np.where(size < delta, 0.5 * diff * diff, delta * (size - 0.5 * delta))
        # the loss has the input's dtype, as PyTorch's (smooth_l1_loss promotes instead)
        return Tensor._wrap(reduce_array(losses.astype(input._data.dtype, copy=False), reduction))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        if input.dtype != target.dtype:  # PyTorch's huber backward refuses mixed dtypes too (its forward allows them)
            raise RuntimeError(
                f"huber_loss backward: input is {input.dtype} but target is {target.dtype}; "
                f"convert one, e.g. huber_loss(input, target.to(input.dtype))"
            )
        if grad.dtype != input.dtype:  # (PyTorch's kernel: "Found dtype Double but expected Float")
            raise RuntimeError(
                f"huber_loss backward: the gradient is {grad.dtype} but the input is now {input.dtype}: its .data "
                "was given another dtype after forward; give .data a tensor of the dtype it had"
            )
        delta = ctx.delta
        g = spread(grad, ctx.reduction, input.shape)  # each gradient from its own difference (see MseLoss)
        need_input, need_target = ctx.needs_input_grad[:2]
        return (g * (input - target).clamp(-delta, delta) if need_input else None), \
            (g * (target - input).clamp(-delta, delta) if need_target else None), None, None


class SmoothL1Loss(Function):
    """Huber's loss divided by beta: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta.

    d/dinput = d / beta clamped to [-1, 1]; saves input and target, as PyTorch's node.
    """

    node_name = "SmoothL1LossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction, beta):
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.beta = reduction, beta
        diff = input._data - target._data
        size = np.abs(diff)
        losses = np.where(size < beta, 0.5 * diff * diff / beta, size - 0.5 * beta)
        return Tensor._wrap(reduce_array(losses.astype(diff.dtype, copy=False), reduction))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        g = spread(grad, ctx.reduction, input.shape)  # each gradient from its own difference (see MseLoss)
        need_input, need_target = ctx.needs_input_grad[:2]
        return (g * ((input - target) / ctx.beta).clamp(-1, 1) if need_input else None), \
            (g * ((target - input) / ctx.beta).clamp(-1, 1) if need_target else None), None, None
