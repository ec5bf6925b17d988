"""More elementwise functions: sin, cos, tan, sinh, cosh, log1p, expm1, exp2, rsqrt, sign.

Each derivative is one line of calculus, written with tensor operations so that
``create_graph=True`` records it and it can be differentiated again:

    sin' = cos     cos' = -sin     tan' = 1 + tan²    sinh' = cosh    cosh' = sinh
    log1p'(x) = 1 / (1 + x)        expm1'(x) = eˣ = expm1(x) + 1      sign' = 0
    exp2'(x) = 2ˣ ln 2
    rsqrt'(x) = -x^(-3/2) / 2 = -rsqrt(x)³ / 2

``log1p`` and ``expm1`` exist because ``log(1 + x)`` and ``exp(x) - 1`` lose every
digit of a tiny ``x`` to rounding; these compute them accurately.
Integer and bool inputs give the default float, as in PyTorch (``sign`` keeps the dtype).
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.autograd.function import Function
from minigrad._tensor import Tensor
from minigrad.ops.elementwise import Where, _float
from minigrad.ops.registry import tensor_method


class Sin(Function):
    node_name = "SinBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(np.sin(_float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * a.cos()


@tensor_method(top_level=True)
def sin(self) -> Tensor:
    return Sin.apply(self)


@tensor_method(top_level=True)
def sin_(self) -> Tensor:
    return self._inplace(Sin)


class Cos(Function):
    node_name = "CosBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(np.cos(_float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * -a.sin()


@tensor_method(top_level=True)
def cos(self) -> Tensor:
    return Cos.apply(self)


@tensor_method(top_level=True)
def cos_(self) -> Tensor:
    return self._inplace(Cos)


class Tan(Function):
    node_name = "TanBackward0"

    @staticmethod
    def forward(ctx, a):
        out = Tensor._wrap(np.tan(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * (1 + out * out)


@tensor_method(top_level=True)
def tan(self) -> Tensor:
    return Tan.apply(self)


@tensor_method(top_level=True)
def tan_(self) -> Tensor:
    return self._inplace(Tan)


class Sinh(Function):
    node_name = "SinhBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(over="ignore"):
            return Tensor._wrap(np.sinh(_float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * a.cosh()


@tensor_method(top_level=True)
def sinh(self) -> Tensor:
    return Sinh.apply(self)


@tensor_method(top_level=True)
def sinh_(self) -> Tensor:
    return self._inplace(Sinh)


class Cosh(Function):
    node_name = "CoshBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(over="ignore"):
            return Tensor._wrap(np.cosh(_float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * a.sinh()


@tensor_method(top_level=True)
def cosh(self) -> Tensor:
    return Cosh.apply(self)


@tensor_method(top_level=True)
def cosh_(self) -> Tensor:
    return self._inplace(Cosh)


class Log1p(Function):
    node_name = "Log1PBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return Tensor._wrap(np.log1p(_float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / (a + 1)


@tensor_method(top_level=True)
def log1p(self) -> Tensor:
    return Log1p.apply(self)


@tensor_method(top_level=True)
def log1p_(self) -> Tensor:
    return self._inplace(Log1p)


class Expm1(Function):
    node_name = "Expm1Backward0"

    @staticmethod
    def forward(ctx, a):
        with np.errstate(over="ignore"):
            out = Tensor._wrap(np.expm1(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * (out + 1)


@tensor_method(top_level=True)
def expm1(self) -> Tensor:
    return Expm1.apply(self)


@tensor_method(top_level=True)
def expm1_(self) -> Tensor:
    return self._inplace(Expm1)


class Exp2(Function):
    node_name = "Exp2Backward0"

    @staticmethod
    def forward(ctx, a):
        with np.errstate(over="ignore"):
            out = Tensor._wrap(np.exp2(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out * math.log(2)


@tensor_method(top_level=True)
def exp2(self) -> Tensor:
    return Exp2.apply(self)


@tensor_method(top_level=True)
def exp2_(self) -> Tensor:
    return self._inplace(Exp2)


class Rsqrt(Function):
    """1 / sqrt(x), in one node (a normalisation's scale); d/dx = -0.5 * x^(-3/2) = -0.5 * out^3."""

    node_name = "RsqrtBackward0"

    @staticmethod
    def forward(ctx, a):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = Tensor._wrap(1 / np.sqrt(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * (out * out * out) * -0.5


@tensor_method(top_level=True)
def rsqrt(self) -> Tensor:
    return Rsqrt.apply(self)


@tensor_method(top_level=True)
def rsqrt_(self) -> Tensor:
    return self._inplace(Rsqrt)


class Sign(Function):
    """-1, 0 or 1 (NaN gives 0, as in PyTorch); flat almost everywhere, so the gradient is 0."""

    node_name = "SignBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.dtype.kind == "b":
            return Tensor._wrap(x.copy())
        s = np.sign(x)
        return Tensor._wrap(np.where(np.isnan(x), 0, s).astype(x.dtype) if x.dtype.kind == "f" else s)

    @staticmethod
    def backward(ctx, grad):
        return Tensor._wrap(np.zeros_like(grad._data))


@tensor_method(top_level=True)
def sign(self) -> Tensor:
    return Sign.apply(self)


@tensor_method()
def sign_(self) -> Tensor:
    return self._inplace(Sign)


# -- sinc, the conversions between degrees and radians, and more in-place forms ------------------
class Sinc(Function):
    """sin(πx) / (πx), and 1 at 0. Its derivative (πx cos(πx) - sin(πx)) / (πx²) is 0 at 0, also
    where πx² underflows, as in PyTorch."""

    node_name = "SincBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        x = _float(a)
        with np.errstate(invalid="ignore", divide="ignore"):
            product = x * x.dtype.type(math.pi)
            return Tensor._wrap(np.where(x == 0, 1, np.sin(product) / product).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        pi_x, pi_x2 = a * math.pi, a * a * math.pi
        slope = (pi_x * pi_x.cos() - pi_x.sin()) / pi_x2
        return Where.apply(pi_x2._data == 0, 0.0, grad * slope)


@tensor_method(top_level=True)
def sinc(self) -> Tensor:
    return Sinc.apply(self)


@tensor_method(top_level=True)
def sinc_(self) -> Tensor:
    return self._inplace(Sinc)


class Deg2Rad(Function):
    node_name = "Deg2RadBackward0"
    factor = math.pi / 180

    @staticmethod
    def forward(ctx, a):
        x = _float(a)
        return Tensor._wrap(x * x.dtype.type(Deg2Rad.factor))

    @staticmethod
    def backward(ctx, grad):
        return grad * Deg2Rad.factor


@tensor_method(top_level=True)
def deg2rad(self) -> Tensor:
    return Deg2Rad.apply(self)


@tensor_method(top_level=True)
def deg2rad_(self) -> Tensor:
    return self._inplace(Deg2Rad)


class Rad2Deg(Function):
    node_name = "Rad2DegBackward0"
    factor = 180 / math.pi

    @staticmethod
    def forward(ctx, a):
        x = _float(a)
        return Tensor._wrap(x * x.dtype.type(Rad2Deg.factor))

    @staticmethod
    def backward(ctx, grad):
        return grad * Rad2Deg.factor


@tensor_method(top_level=True)
def rad2deg(self) -> Tensor:
    return Rad2Deg.apply(self)


@tensor_method(top_level=True)
def rad2deg_(self) -> Tensor:
    return self._inplace(Rad2Deg)
