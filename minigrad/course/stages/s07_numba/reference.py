"""The reference: NumPy's kernels (``minigrad/kernels/reference.py``) and the Functions around them."""
from __future__ import annotations

import minigrad
from minigrad.autograd import Function, once_differentiable
from minigrad.kernels import reference as kref


def reference() -> dict:
    class Sigmoid(Function):
        @staticmethod
        def forward(ctx, x):
            y = minigrad.from_numpy(kref.sigmoid_forward(x.detach().numpy()))
            ctx.save_for_backward(y)
            return y

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return minigrad.from_numpy(kref.sigmoid_backward(y.detach().numpy(), grad.detach().numpy()))

    class CrossEntropy(Function):
        @staticmethod
        def forward(ctx, logits, targets):
            loss, log_probs = kref.cross_entropy_forward(logits.detach().numpy(), targets.numpy())
            ctx.log_probs, ctx.targets = log_probs, targets.numpy()
            return minigrad.tensor(loss, dtype=logits.dtype)

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            return minigrad.from_numpy(kref.cross_entropy_backward(ctx.log_probs, ctx.targets, grad.item())), None

    return {"sigmoid_forward": kref.sigmoid_forward, "sigmoid_backward": kref.sigmoid_backward,
            "cross_entropy_forward": kref.cross_entropy_forward, "cross_entropy_backward": kref.cross_entropy_backward,
            "Sigmoid": Sigmoid, "CrossEntropy": CrossEntropy}

