"""Rounding and remainders: floor, ceil, round, trunc, frac, ``%``, fmod and ``//``.

A step function is flat between its jumps, so floor, ceil, round and trunc have
derivative 0 (PyTorch's convention, also at the jumps), and ``frac(x) = x - trunc(x)``
has derivative 1. The remainders follow from ``a = b * q + r``:

    remainder(a, b) = a - b * floor(a / b)   (the sign of b, Python's %)     dr/da = 1, dr/db = -floor(a / b)
    fmod(a, b)      = a - b * trunc(a / b)   (the sign of a, C's fmod)       dr/da = 1, dr/db = -trunc(a / b)

PyTorch has no derivative for ``a // b`` or for ``number % tensor``: backward through
them raises, here as there. Integer division by zero is PyTorch's RuntimeError
("ZeroDivisionError"), where NumPy would quietly give 0.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.function import Function
from minigrad.ops.broadcast import NOT_GIVEN, integer, sum_to, type_name
from minigrad.ops.elementwise import Div, _array, _binary, _is_bool, _save_operands, _saved_operands, _shape
from minigrad._tensor import Tensor, _argument, _tensor_argument
from minigrad.ops.registry import alias, binary_operator, tensor_method


def _zeros_like(grad: Tensor) -> Tensor:
    return Tensor._wrap(np.zeros_like(grad._data))


def _whole(numpy_fn, a: Tensor) -> Tensor:
    x = a._data
    if x.dtype == np.bool_:
        raise NotImplementedError(f'"{numpy_fn.__name__}_vml_cpu" not implemented for \'Bool\': convert with '
                                  ".float() or .long() first")
    return Tensor._wrap(numpy_fn(x) if x.dtype.kind == "f" else x.copy())  # integers are already whole


class Floor(Function):
    node_name = "FloorBackward0"

    @staticmethod
    def forward(ctx, a):
        return _whole(np.floor, a)

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad)


@tensor_method(top_level=True)
def floor(self) -> Tensor:
    return Floor.apply(self)


@tensor_method(top_level=True)
def floor_(self) -> Tensor:
    return self._inplace(Floor)


class Ceil(Floor):
    node_name = "CeilBackward0"

    @staticmethod
    def forward(ctx, a):
        return _whole(np.ceil, a)


@tensor_method(top_level=True)
def ceil(self) -> Tensor:
    return Ceil.apply(self)


@tensor_method(top_level=True)
def ceil_(self) -> Tensor:
    return self._inplace(Ceil)


class Trunc(Floor):
    node_name = "TruncBackward0"

    @staticmethod
    def forward(ctx, a):
        return _whole(np.trunc, a)


@tensor_method(top_level=True)
def trunc(self) -> Tensor:
    return Trunc.apply(self)


@tensor_method("trunc_", "fix_", top_level=True)
def trunc_(self) -> Tensor:
    return self._inplace(Trunc)


class Round(Function):
    """Half to even, as PyTorch (and NumPy): round(2.5) = 2, round(3.5) = 4."""

    node_name = "RoundBackward0"

    @staticmethod
    def forward(ctx, a, decimals):
        x = a._data
        if x.dtype.kind == "f":
            return Tensor._wrap(np.round(x, decimals))
        if x.dtype == np.bool_:
            raise NotImplementedError("\"round_vml_cpu\" not implemented for 'Bool': convert with .float() first")
        if decimals:  # PyTorch rounds integers only to whole numbers
            raise NotImplementedError(f'"round_cpu" not implemented for {a.dtype} with decimals: call .float() first')
        return Tensor._wrap(x.copy())

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad), None


class RoundDecimals(Round):
    """``round(decimals=n)``: PyTorch's second overload, a node of its own name."""

    node_name = "RoundBackward1"


@tensor_method("round", top_level=True)
def _round(self, *, decimals: int = NOT_GIVEN) -> Tensor:
    """Round half to even; ``decimals`` (keyword-only, as in PyTorch) rounds to that many decimal places."""
    if decimals is NOT_GIVEN:
        return Round.apply(self, 0)
    return RoundDecimals.apply(self, integer(decimals, "decimals"))


@tensor_method("round_", top_level=True)
def round_(self, *, decimals: int = NOT_GIVEN) -> Tensor:
    if decimals is NOT_GIVEN:
        return self._inplace(Round, 0)
    return self._inplace(RoundDecimals, integer(decimals, "decimals"))


class Frac(Function):
    """x - trunc(x), the fractional part with the sign of x; derivative 1."""

    node_name = "FracBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.dtype.kind != "f":
            raise NotImplementedError(f'"frac_cpu" not implemented for {a.dtype}: call .float() first')
        return Tensor._wrap(x - np.trunc(x))

    @staticmethod
    def backward(ctx, grad):
        return grad


@tensor_method(top_level=True)
def frac(self) -> Tensor:
    return Frac.apply(self)


@tensor_method(top_level=True)
def frac_(self) -> Tensor:
    return self._inplace(Frac)


def _remainder(x, y):
    """PyTorch's float remainder: fmod, moved to the sign of y (so 0 % -3 is 0.0, where NumPy gives -0.0)."""
    if np.result_type(x, y).kind != "f":
        return np.remainder(x, y)
    r = np.fmod(x, y)
    return np.where((r != 0) & ((np.asarray(y) < 0) != (r < 0)), r + y, r)


def _divided(numpy_fn, a, b) -> Tensor:
    """``numpy_fn(a, b)`` for %, fmod and //, refusing integer division by zero as PyTorch does."""
    x, y = _array(a), _array(b)
    if np.result_type(x, y).kind in "iub" and np.any(np.asarray(y) == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(divide="ignore", invalid="ignore"):
        return _binary(numpy_fn, a, b)


class Remainder(Function):
    """``a % b`` for two tensors (Python's remainder: the sign of b)."""

    node_name = "RemainderBackward1"
    _operands = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b, ctx.needs_input_grad[1], ctx.needs_input_grad[1])
        ctx.rounding = np.floor  # the quotient's rounding: floor for remainder, trunc for fmod
        return _divided(_remainder, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = _saved_operands(ctx)
        need_a, need_b = ctx.needs_input_grad
        quotient = None
        if need_b:
            with np.errstate(divide="ignore", invalid="ignore"):
                quotient = Tensor._wrap(ctx.rounding(_array(a) / _array(b)).astype(grad._data.dtype))
        return (sum_to(grad, ctx.shapes[0]) if need_a else None,
                sum_to(-grad * quotient, ctx.shapes[1]) if need_b else None)


@tensor_method("remainder_", "__imod__")
def remainder_(self, other) -> Tensor:
    other = _argument("remainder_", other)
    return self._inplace(Remainder if isinstance(other, Tensor) else RemainderScalar, other)


class RemainderScalar(Remainder):
    """``tensor % number``: PyTorch's Scalar overload, a node of its own name."""

    node_name = "RemainderBackward0"


class Fmod(Remainder):
    """``fmod(a, b)`` for two tensors (C's fmod: the sign of a)."""

    node_name = "FmodBackward1"

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b, ctx.needs_input_grad[1], ctx.needs_input_grad[1])
        ctx.rounding = np.trunc
        return _divided(np.fmod, a, b)


@tensor_method(top_level=True)
def fmod(self, other) -> Tensor:
    other = _argument("fmod", other)
    return (Fmod if isinstance(other, Tensor) else FmodScalar).apply(self, other)


@tensor_method()
def fmod_(self, other) -> Tensor:
    other = _argument("fmod_", other)
    return self._inplace(Fmod if isinstance(other, Tensor) else FmodScalar, other)


class FmodScalar(Fmod):
    node_name = "FmodBackward0"


class NotDifferentiable(Function):
    """``a // b`` and ``number % tensor``: PyTorch records a node that has no derivative."""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, a, b, numpy_fn, op):
        ctx.op = op
        ctx.shapes = _shape(a), _shape(b)
        return _divided(numpy_fn, a, b)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"derivative for aten::{ctx.op} is not implemented")


@tensor_method("floor_divide_", "__ifloordiv__")
def floor_divide_(self, other) -> Tensor:
    return self._inplace(NotDifferentiable, _argument("floor_divide_", other), np.floor_divide, "floor_divide")


def _remainder_of(a, b) -> Tensor:
    return (Remainder if isinstance(b, Tensor) else RemainderScalar).apply(a, b)


def _floor_divided(a, b) -> Tensor:
    return NotDifferentiable.apply(a, b, np.floor_divide, "floor_divide")


binary_operator("mod", "remainder", _remainder_of,
                lambda self, other: NotDifferentiable.apply(other, self, np.remainder, "remainder"))


binary_operator("floordiv", "floor_divide", _floor_divided, lambda self, other: _floor_divided(other, self))


# -- division with rounding, the step function, and the in-place forms --------------------------
def _trunc_divide(x, y):
    """The quotient rounded towards 0 (C's integer division; NumPy's // rounds down)."""
    if np.result_type(x, y).kind == "f":
        return np.trunc(np.true_divide(x, y))
    q = np.floor_divide(x, y)
    return np.where((np.remainder(x, y) != 0) & ((np.asarray(x) < 0) != (np.asarray(y) < 0)), q + 1, q)


class DivRounding(Function):
    """``div(a, b, rounding_mode='trunc' or 'floor')``: a step function of a and b, so both gradients are 0."""

    node_name = "DivBackward2"
    _operands = (0, 1)

    @staticmethod
    def forward(ctx, a, b, rounding_mode):
        ctx.shapes = _shape(a), _shape(b)
        if _is_bool(a) and _is_bool(b):
            raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for 'Bool': convert with "
                                      ".long() first")
        return _divided(_trunc_divide if rounding_mode == "trunc" else np.floor_divide, a, b)

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad[:2]
        zeros = [Tensor._wrap(np.zeros(shape, grad._data.dtype)) if need else None
                 for shape, need in zip(ctx.shapes, (need_a, need_b))]
        return zeros[0], zeros[1], None


@tensor_method("div", "divide", top_level=True)
def div(self, other, *, rounding_mode: str | None = None) -> Tensor:
    """``self / other``; ``rounding_mode='trunc'`` rounds the quotient towards 0, ``'floor'`` down
    (then integers stay integers, as in ``//``)."""
    other = _argument("div", other)
    if _rounding_mode(rounding_mode) is None:
        return self / other if isinstance(self, Tensor) else other.__rtruediv__(self)
    return DivRounding.apply(self, other, rounding_mode)


@tensor_method("div_", "divide_", "__itruediv__")
def div_(self, other, *, rounding_mode: str | None = None) -> Tensor:
    other = _argument("div_", other)
    if _rounding_mode(rounding_mode) is None:
        return self._inplace(Div, other)
    return self._inplace(DivRounding, other, rounding_mode)


def _rounding_mode(rounding_mode) -> str | None:
    if rounding_mode is not None and not isinstance(rounding_mode, str):
        raise TypeError(f"div(): argument 'rounding_mode' must be str or None, not {type_name(rounding_mode)}")
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"{rounding_mode!r}")
    return rounding_mode


class Heaviside(NotDifferentiable):
    """The step function: 0 below 0, 1 above, ``values`` at 0 (NaN at NaN). PyTorch has no derivative for it."""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, a, values):
        ctx.op = "heaviside"
        x, v = a._data, values._data
        if x.dtype != v.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes: convert "
                               f"values with .to({a.dtype})")
        return _binary(lambda x, v: np.where(x == 0, v, np.where(np.isnan(x), x, x > 0)), a, values, x.dtype)


@tensor_method(top_level=True)
def heaviside(self, values: Tensor) -> Tensor:
    return Heaviside.apply(self, _tensor_argument("heaviside", "values", 1, values))


@tensor_method()
def heaviside_(self, values: Tensor) -> Tensor:
    return self._inplace(Heaviside, _tensor_argument("heaviside_", "values", 1, values))


alias("fix", "trunc", top_level=True)
