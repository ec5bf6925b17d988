"""Binary cross-entropy on probabilities, with PyTorch's guards at 0 and 1.

    loss = -weight * (target * log(x) + (1 - target) * log(1 - x))

Built from tensor operations, a probability that rounds to exactly 1 (a
float32 sigmoid of 17 does) gives ``log(0) = -inf`` and a NaN gradient.
PyTorch clamps each log at -100 and divides the gradient by
``max(x * (1 - x), 1e-12)``; this Function does the same, so the loss and its
gradient stay finite for every input in [0, 1]. The reduction happens in the
same node (see ``reduced_loss.py``), and the backward is written with tensor
operations, so it can be differentiated again.

    d/dx      = weight * (x - target) / max(x * (1 - x), 1e-12)
    d/dtarget = weight * (log(1 - x) - log(x))      (not clamped: infinite at 0 and 1, as in PyTorch)
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.nn.ops.reduced_loss import reduce_array, spread
from minigrad._tensor import Tensor

_EPSILON = float(np.float32(1e-12))  # PyTorch's constant is a C float, also in float64 arithmetic
_LOG_FLOOR = -100.0


def _clamped_logs(x: Tensor) -> tuple[Tensor, Tensor]:
    """log(x) and log(1 - x), each at least -100 (constants: they are not differentiated)."""
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(x._data), _LOG_FLOOR)
        log_1mx = np.maximum(np.log1p(-x._data), _LOG_FLOOR)
    return Tensor._wrap(log_x), Tensor._wrap(log_1mx)


class BinaryCrossEntropy(Function):
    """The loss reduced by ``reduction``; ``weight`` has the input's shape (or broadcasts to it)."""

    node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, x, target, weight, reduction):
        ctx.save_for_backward(x, target, weight)
        ctx.reduction = reduction
        log_x, log_1mx = _clamped_logs(x)
        t = target._data
        loss = -(t * log_x._data + (1 - t) * log_1mx._data)
        if weight is not None:
            loss = loss * weight._data
        return Tensor._wrap(reduce_array(loss.astype(x._data.dtype, copy=False), reduction))

    @staticmethod
    def backward(ctx, grad):
        x, target, weight = ctx.saved_tensors
        need_x, need_target = ctx.needs_input_grad[:2]
        grad = spread(grad, ctx.reduction, x.shape)
        if weight is not None:
            grad = grad * weight.detach()  # PyTorch does not differentiate the weight
        grad_x = grad_target = None
        if need_x:
            grad_x = grad * (x - target) / (x * (1 - x)).clamp(min=_EPSILON)
        if need_target:  # -logit(x), PyTorch's formula
            if is_grad_enabled():  # create_graph=True: recorded operations on x
                grad_target = grad * ((1 - x).log() - x.log())
            else:
                with np.errstate(divide="ignore"):
                    grad_target = grad * Tensor._wrap(np.log1p(-x._data) - np.log(x._data))
        return grad_x, grad_target, None, None
