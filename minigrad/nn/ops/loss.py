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
from minigrad.ops.elementwise import Where
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
        # An ordinary backward reads log_probs, its create_graph twin the input. Both are saved,
        # and both passes read both: a second backward raises (as in PyTorch), and so does
        # changing the input in place before backward, in both passes alike (PyTorch saves
        # the log-probabilities instead of the input, and allows that).
        ctx.save_for_backward(input, Tensor._wrap(log_probs))
        ctx.targets, ctx.reduction = targets, reduction
        return Tensor._wrap(np.asarray(loss, dtype=input._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        return cross_entropy_backward(ctx, grad), None, None


def cross_entropy_backward(ctx, grad: Tensor) -> Tensor:
    """d input = softmax(x) * s - onehot(t) * s, where s is the gradient row i's loss received.

    Computed as PyTorch's two nodes compute it (nll_loss puts -s at the target,
    log_softmax's backward subtracts softmax * sum): ``p * s`` off the target and
    ``p * s - s`` on it, never ``(p - 1) * s`` or ``onehot * s``, which differ from
    PyTorch when s is inf (NaN instead of inf, or 0 * inf). An ordinary backward
    runs in NumPy from the log-probabilities forward kept; with ``create_graph=True``
    its twin computes the same values from tensor operations on the saved input,
    recorded so that they can be differentiated again.
    """
    input, log_probs = ctx.saved_tensors
    targets, n, reduction = ctx.targets, len(ctx.targets), ctx.reduction
    rows = np.arange(n)
    if not is_grad_enabled():
        g = grad._data
        with np.errstate(divide="ignore", invalid="ignore"):  # an empty batch: g / 0
            scale = g[:, None] if reduction == "none" else g / n if reduction == "mean" else g
        grad_input = np.exp(log_probs._data)
        grad_input *= scale
        grad_input[rows, targets] -= scale[:, 0] if reduction == "none" else scale
        return Tensor._wrap(grad_input)
    scale = grad.unsqueeze(1) if reduction == "none" else grad / n if reduction == "mean" else grad
    scaled = input.log_softmax(1).exp() * scale  # the same kernel as forward: the same p
    on_target = np.zeros(input.shape, dtype=bool)
    on_target[rows, targets] = True
    return Where.apply(on_target, scaled - scale, scaled)
