"""The reference: the solution's code, written here (``reference()``); the checks compare the
learner's gradients with it."""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad import nn
from minigrad.autograd import Function, StatefulFunction


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + (-x).exp())
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return grad * s * (1 - s)


class MulConstant(Function):
    @staticmethod
    def forward(ctx, x, c):
        ctx.c = c
        return x * c

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.c, None


class ReLU(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * (x > 0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x > 0)


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y if bias is None else y + bias

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need_x, need_w = ctx.needs_input_grad[:2]
        grad_x = grad @ weight if need_x else None
        grad_w = grad.T @ x if need_w else None
        grad_b = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b


class SinCos(Function):
    @staticmethod
    def forward(ctx, x):
        array = x.detach().numpy()
        s, c = minigrad.tensor(np.sin(array)), minigrad.tensor(np.cos(array))
        ctx.save_for_backward(s, c)
        return s, c

    @staticmethod
    def backward(ctx, grad_s, grad_c):
        s, c = ctx.saved_tensors
        return grad_s * c - grad_c * s


class MaxWithMask(Function):
    @staticmethod
    def forward(ctx, x):
        values = x.max(dim=1).values
        mask = (x == values.unsqueeze(1)).to(x.dtype)
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(mask)
        return values, mask

    @staticmethod
    def backward(ctx, grad_values, grad_mask):
        (mask,) = ctx.saved_tensors
        return grad_values.unsqueeze(1) * mask


class StatefulSigmoid(StatefulFunction):
    def forward(self, x):
        self.y = 1 / (1 + (-x).exp())
        return self.y

    def backward(self, dy):
        return dy * self.y * (1 - self.y)


def stateful_sigmoid(x):
    return StatefulSigmoid()(x)


class TinyMLP(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.w1 = nn.Parameter(minigrad.randn(n_hidden, n_in) * n_in ** -0.5)
        self.b1 = nn.Parameter(minigrad.zeros(n_hidden))
        self.w2 = nn.Parameter(minigrad.randn(n_out, n_hidden) * n_hidden ** -0.5)
        self.b2 = nn.Parameter(minigrad.zeros(n_out))

    def forward(self, x):
        h = ReLU.apply(LinearFunction.apply(x, self.w1, self.b1))
        return LinearFunction.apply(h, self.w2, self.b2)


def reference() -> dict:
    return {
        "Exp": Exp, "Sigmoid": Sigmoid, "MulConstant": MulConstant, "ReLU": ReLU,
        "LinearFunction": LinearFunction, "SinCos": SinCos, "MaxWithMask": MaxWithMask,
        "StatefulSigmoid": StatefulSigmoid, "stateful_sigmoid": stateful_sigmoid, "TinyMLP": TinyMLP,
    }

