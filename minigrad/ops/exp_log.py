"""``exp``, ``log``, ``sqrt`` and ``abs``: each Function, then its Tensor methods (``x.exp()``,
``minigrad.exp(x)`` and the in-place ``x.exp_()``).

Integer and bool inputs give the default float (``abs`` keeps the dtype), as in PyTorch. Each
backward is written with tensor operations, so ``create_graph=True`` records it.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.function import Function
from minigrad._tensor import Tensor
from minigrad.ops.where import _float
from minigrad.ops.registry import alias, tensor_method


class Exp(Function):
    node_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, a):
        out = Tensor._wrap(np.exp(_float(a)))
        ctx.save_for_backward(out)  # d/dx e^x = e^x: the output is all we need
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out


@tensor_method(top_level=True)
def exp(self) -> Tensor:
    return Exp.apply(self)


@tensor_method(top_level=True)
def exp_(self) -> Tensor:
    return self._inplace(Exp)


class Log(Function):
    node_name = "LogBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return Tensor._wrap(np.log(_float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / a


@tensor_method(top_level=True)
def log(self) -> Tensor:
    return Log.apply(self)


@tensor_method(top_level=True)
def log_(self) -> Tensor:
    return self._inplace(Log)


class Sqrt(Function):
    node_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, a):
        with np.errstate(invalid="ignore"):
            out = Tensor._wrap(np.sqrt(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad / (2 * out)


@tensor_method(top_level=True)
def sqrt(self) -> Tensor:
    return Sqrt.apply(self)


@tensor_method(top_level=True)
def sqrt_(self) -> Tensor:
    return self._inplace(Sqrt)


class Abs(Function):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, a):
        if a._data.dtype == np.bool_:
            raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool': a bool has no sign")
        ctx.save_for_backward(a)
        return Tensor._wrap(np.abs(a._data))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        # PyTorch's grad * sgn(x): 0 at NaN, and a node under create_graph (its derivative
        # is 0, but the gradient requires grad whenever x does, as in PyTorch)
        return grad * a.sign()


@tensor_method("abs", top_level=True)
def _abs(self) -> Tensor:
    return Abs.apply(self)


@tensor_method(top_level=True)
def abs_(self) -> Tensor:
    return self._inplace(Abs)


alias("absolute", "abs", top_level=True)
alias("absolute_", "abs_")

