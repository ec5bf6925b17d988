"""Comparisons. Elementwise: ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` (``eq`` ... ``ge`` and PyTorch's
longer names, ``greater`` ...), boolean tensors outside the graph, and their in-place forms (``x.eq_(y)``:
the answer as 1 or 0 in x's dtype, a node with zero gradients). Of whole tensors: isclose
(elementwise), allclose and equal (one bool). No gradients.

``isclose`` tests ``|a - b| <= atol + rtol * |b|``: note it is not symmetric, ``b``
is the reference. The tolerances are for float32 by default; for float64 results
pass tighter ones. As in PyTorch, the two tensors must have the same dtype
(convert one with ``.to``), and ``equal`` is False for different shapes.
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import broadcast_error, number, type_name
from minigrad._tensor import Tensor, _argument, _operand, _tensor_argument
from minigrad.ops.where import _array, _shape
from minigrad.ops.registry import alias, tensor_method

def _arrays(fn: str, a: Tensor, b: Tensor) -> tuple:
    b = _tensor_argument(fn, "other", 1, b)
    x, y = a._data, b._data
    if x.dtype != y.dtype:
        raise RuntimeError(f"{dtypes.scalar_type_name(y.dtype)} did not match {dtypes.scalar_type_name(x.dtype)}: "
                           "convert one tensor with .to(other.dtype)")
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise broadcast_error(x.shape, y.shape) from None
    return x, y


def _tolerance(fn: str, name: str, value) -> float:
    try:
        value = number(value, name)
    except TypeError:
        raise TypeError(f"{fn}(): argument '{name}' must be float, not {type_name(value)}") from None
    if value < 0:
        raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value}")
    return float(value)


def _isclose(fn: str, a: Tensor, other: Tensor, rtol, atol, equal_nan: bool) -> np.ndarray:
    x, y = _arrays(fn, a, other)
    rtol, atol = _tolerance(fn, "rtol", rtol), _tolerance(fn, "atol", atol)
    return x == y if x.dtype.kind == "b" else np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)


@tensor_method(top_level=True, out=False)
def isclose(a: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    return Tensor._wrap(np.asarray(_isclose("isclose", a, other, rtol, atol, equal_nan)))


@tensor_method(top_level=True)
def allclose(a: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(_isclose("allclose", a, other, rtol, atol, equal_nan).all())


@tensor_method(top_level=True)
def equal(a: Tensor, other: Tensor) -> bool:
    """True if the shapes and all values are the same (NaN is never equal)."""
    other = _tensor_argument("equal", "other", 1, other)
    return a.shape == other.shape and bool(np.array_equal(a._data, other._data))


# -- elementwise ----------------------------------------------------------------------------------
def compare(numpy_fn, a, b):
    """A comparison: a boolean tensor, outside the graph (it has no gradient)."""
    b = _operand(b)
    if b is NotImplemented:  # e.g. tensor == None: let Python answer False
        return NotImplemented
    x, y = _array(a), _array(b)
    try:
        return Tensor._wrap(np.asarray(numpy_fn(x, y)))
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None


def comparison(dunder: str, method: str, numpy_fn) -> None:
    """Declare the operator (``x == None`` is NotImplemented, so Python answers False) and the
    method form, which refuses a non-operand (``x.eq(None)``) with PyTorch's TypeError."""
    tensor_method(dunder)(lambda self, other: compare(numpy_fn, self, other))
    tensor_method(method, top_level=True)(
        lambda self, other: compare(numpy_fn, self, _argument(method, other)))


comparison("__eq__", "eq", np.equal)
comparison("__ne__", "ne", np.not_equal)
comparison("__lt__", "lt", np.less)
comparison("__le__", "le", np.less_equal)
comparison("__gt__", "gt", np.greater)
comparison("__ge__", "ge", np.greater_equal)



class Comparison(Function):
    """``x.eq_(y)`` and the other comparisons in place: the answer written as 1 or 0 in x's dtype.
    It is flat, so each gradient is 0 (a number ``y`` gets no edge: PyTorch's Scalar overload)."""

    node_name = "EqBackward1"

    @staticmethod
    def forward(ctx, a, b, numpy_fn):
        ctx.shapes = a._data.shape, _shape(b)
        return Tensor._wrap(compare(numpy_fn, a, b)._data.astype(a._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad[:2]
        zeros = [Tensor._wrap(np.zeros(shape, grad._data.dtype)) if need else None
                 for shape, need in zip(ctx.shapes, (need_a, need_b))]
        return zeros[0], zeros[1], None


def comparison_inplace(method: str, numpy_fn, longer: str) -> None:
    """``x.<method>_(y)``, and PyTorch's longer name for it and for ``x.<method>(y)`` (``greater``)."""
    nodes = {tensor_other: type(f"{method.capitalize()}{'Tensor' if tensor_other else 'Scalar'}", (Comparison,), {
        "node_name": f"{method.capitalize()}Backward{int(tensor_other)}", "__module__": __name__})
        for tensor_other in (False, True)}

    def inplace(self, other) -> Tensor:
        other = _argument(method + "_", other)
        return self._inplace(nodes[isinstance(other, Tensor)], other, numpy_fn)

    tensor_method(method + "_")(inplace)
    if longer:
        alias(longer, method, top_level=True)
        alias(longer + "_", method + "_")


for _method, _numpy_fn, _longer in (("eq", np.equal, ""), ("ne", np.not_equal, "not_equal"),
                                    ("lt", np.less, "less"), ("le", np.less_equal, "less_equal"),
                                    ("gt", np.greater, "greater"), ("ge", np.greater_equal, "greater_equal")):
    comparison_inplace(_method, _numpy_fn, _longer)

