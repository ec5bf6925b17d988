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
from minigrad._tensor import Tensor


class CrossEntropy(Function):
    """loss_i = -log_softmax(input)[i, target[i]], reduced by "mean", "sum" or "none"."""

    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction):
        log_probs = kernels.log_softmax_forward(input._data, axis=1)
        targets = target._data.copy()  # kept for backward: a later change to target must not reach it
        losses = -log_probs[np.arange(len(targets)), targets]
        if reduction == "mean":  # an empty batch's mean is 0/0 = nan, as in PyTorch
            loss = losses.sum() / len(targets) if len(targets) else np.nan
        else:
            loss = losses.sum() if reduction == "sum" else losses
        # What PyTorch's log_softmax and nll_loss nodes save: the log-probabilities (a private
        # tensor, freed by backward so that a second one raises), not the input, which may be
        # changed in place after the loss.
        ctx.save_for_backward(Tensor._wrap(log_probs))
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
    runs in NumPy from the saved log-probabilities; with ``create_graph=True`` its
    twin computes the same values from tensor operations on them, recorded (through
    a log_softmax node into the input's place in the graph, as PyTorch records it)
    so that they can be differentiated again.
    """
    log_probs, = ctx.saved_tensors
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
    scaled = _LogSoftmaxOfInput.apply(_on_edge(log_probs, ctx.next_functions[0])).exp() * scale
    on_target = np.zeros(log_probs.shape, dtype=bool)
    on_target[rows, targets] = True
    return Where.apply(on_target, scaled - scale, scaled)


def _on_edge(values: Tensor, edge: tuple) -> Tensor:
    """A tensor whose gradient flows into ``edge`` (the input's place in the graph when the
    loss was computed); its values are not read. It stands for the input, which is not saved."""
    t = Tensor._wrap(values._data)
    t._requires_grad = True
    t._grad_fn, t._output_nr = edge
    return t


class _LogSoftmaxOfInput(Function):
    """The log-softmax node of the create_graph twin: its output is the saved log-probabilities
    (the input's values are gone), its backward log_softmax's, recorded."""

    node_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, stand_in):
        out = Tensor._wrap(stand_in._data)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad - y.exp() * grad.sum(1, keepdim=True)
