"""Cross-entropy as one fused Function: log_softmax and the negative log-likelihood together.

For one row of scores x with target class t, the loss is
``-log_softmax(x)[t]`` and its gradient is the famously simple
``softmax(x) - onehot(t)``. Fusing the two steps records one node instead
of three (log_softmax, indexing, mean) and skips the intermediate gradients.

The node is named ``NllLossBackward0`` so that a loss prints as in PyTorch,
``tensor(2.3026, grad_fn=<NllLossBackward0>)``; in PyTorch a separate
``LogSoftmaxBackward0`` node sits below it, here it is part of the same node.
"""
from __future__ import annotations

import numpy as np

from minigrad import kernels
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.tensor import Tensor


class CrossEntropy(Function):
    """loss_i = -log_softmax(input)[i, target[i]], reduced by "mean", "sum" or "none"."""

    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction):
        log_probs = kernels.log_softmax_forward(input._data, axis=1)
        targets = target._data.copy()  # kept for backward: a later change to target must not reach it
        losses = -log_probs[np.arange(len(targets)), targets]
        if reduction == "mean":
            with np.errstate(invalid="ignore"):  # an empty batch gives 0/0 = nan, as in PyTorch
                loss = losses.sum() / len(targets)
        else:
            loss = losses.sum() if reduction == "sum" else losses
        ctx.save_for_backward(input)
        ctx.log_probs, ctx.targets, ctx.reduction = log_probs, targets, reduction
        return Tensor._wrap(np.asarray(loss, dtype=input._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        # Row i's gradient is (softmax(x_i) - onehot(t_i)) times the gradient its loss received.
        targets, n = ctx.targets, len(ctx.targets)
        rows = np.arange(n)
        if ctx.reduction == "none":
            scale = grad.unsqueeze(1)  # one gradient per row
        elif ctx.reduction == "mean":
            scale = grad / n
        else:
            scale = grad
        if not is_grad_enabled():
            # An ordinary backward: all in NumPy, from the log-probabilities forward kept.
            grad_input = np.exp(ctx.log_probs)
            grad_input[rows, targets] -= 1
            grad_input *= scale._data
            return Tensor._wrap(grad_input), None, None
        # create_graph=True: the same formula from tensor operations on the saved input,
        # so that this gradient is recorded and can be differentiated again.
        input, = ctx.saved_tensors
        onehot = np.zeros(input.shape, input._data.dtype)
        onehot[rows, targets] = 1
        return (input.softmax(1) - Tensor._wrap(onehot)) * scale, None, None
