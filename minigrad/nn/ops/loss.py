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
from minigrad.core.builtin import plain, record
from minigrad.ops.elementwise import Where
from minigrad._tensor import Tensor


class CrossEntropy(Function):
    """loss_i = -log_softmax(input)[i, target[i]], reduced by "mean", "sum" or "none"."""

    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction):
        loss, log_probs, targets, on_target = _cross_entropy(input, target, reduction)
        # What PyTorch's log_softmax and nll_loss nodes save: the log-probabilities (a private
        # tensor, freed by backward so that a second one raises), not the input, which may be
        # changed in place after the loss. (Set directly: save_for_backward's checks are for user code.)
        ctx._to_save = (log_probs,)
        ctx.targets, ctx.reduction, ctx._on_target = targets, reduction, on_target
        return loss

    @staticmethod
    def backward(ctx, grad):
        return cross_entropy_backward(ctx, grad), None, None


def _cross_entropy(input: Tensor, target: Tensor, reduction: str) -> tuple:
    """(loss, log-probabilities, a copy of the targets, their flat indices): forward's values."""
    x = input._data
    log_probs = kernels.log_softmax_rows(x) if x.dtype in _ROW_DTYPES else kernels.log_softmax_forward(x, axis=1)
    targets = target._data.copy()  # kept for backward: a later change to target must not reach it
    n = len(targets)
    # each row's target as an index into the flat log-probabilities: one gather here, one scatter in backward
    on_target = _row_starts(n, log_probs.shape[1]) + targets
    picked = log_probs.reshape(-1)[on_target]
    if reduction == "none":
        loss = np.negative(picked, out=picked)
    else:  # -(sum of picked) is the sum of the negated values, bit for bit (rounding is symmetric)
        loss = -np.add.reduce(picked)
        if reduction == "mean":  # an empty batch's mean is 0/0 = nan, as in PyTorch
            loss = loss / n if n else np.nan
        loss = np.asarray(loss, dtype=x.dtype)
    return Tensor._wrap(loss), Tensor._wrap(log_probs), targets, on_target


def fused_cross_entropy(input: Tensor, target: Tensor, reduction: str) -> Tensor:
    """``CrossEntropy.apply``; a plain call is recorded directly (core/builtin.py)."""
    if input._requires_grad and plain(input, target):
        loss, log_probs, targets, on_target = _cross_entropy(input, target, reduction)
        ctx = record(CrossEntropy, (input, None, reduction), loss, (True, False, False), (log_probs,))  # (no edge: an integer target)
        ctx.targets, ctx.reduction, ctx._on_target = targets, reduction, on_target
        return loss
    return CrossEntropy.apply(input, target, reduction)


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
    targets, reduction = ctx.targets, ctx.reduction
    n = len(targets)
    if not is_grad_enabled():
        g = grad._data
        if reduction == "none":
            scale = g[:, None]
        elif reduction == "mean" and n:
            scale = (g[()] if g.ndim == 0 else g) / n  # (a NumPy scalar's division is the array's, found faster)
        elif reduction == "mean":
            with np.errstate(divide="ignore", invalid="ignore"):  # an empty batch: g / 0
                scale = g / n
        else:
            scale = g
        grad_input = np.exp(log_probs._data)
        if not grad_input.flags.c_contiguous:  # (a saved-tensor hook may unpack another layout)
            grad_input = np.ascontiguousarray(grad_input)
        grad_input *= scale  # (C-contiguous: reshape(-1) below is a view, the scatter writes into it)
        grad_input.reshape(-1)[ctx._on_target] -= scale[:, 0] if reduction == "none" else scale
        return Tensor._wrap(grad_input)
    rows = np.arange(n)
    scale = grad.unsqueeze(1) if reduction == "none" else grad / n if reduction == "mean" else grad
    scaled = _LogSoftmaxOfInput.apply(_on_edge(log_probs, ctx.next_functions[0])).exp() * scale
    on_target = np.zeros(log_probs.shape, dtype=bool)
    on_target[rows, targets] = True
    return Where.apply(on_target, scaled - scale, scaled)


_ROW_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # what the row kernels take as they are
_ROW_STARTS: dict[tuple, np.ndarray] = {}


def _row_starts(n: int, classes: int) -> np.ndarray:
    """Where each of n rows of ``classes`` values starts in the flat array: ``np.arange(n) * classes``,
    made once per shape (read-only: it is shared) for the few shapes of a training loop."""
    starts = _ROW_STARTS.get((n, classes))
    if starts is None:
        starts = np.arange(n) * classes
        if n <= 1 << 16 and len(_ROW_STARTS) < 64:
            starts.flags.writeable = False
            _ROW_STARTS[n, classes] = starts
    return starts


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
