"""Comparing whole tensors: isclose (elementwise), allclose and equal (one bool). No gradients.

``isclose`` tests ``|a - b| <= atol + rtol * |b|``: note it is not symmetric, ``b``
is the reference. The tolerances are for float32 by default; for float64 results
pass tighter ones. As in PyTorch, the two tensors must have the same dtype
(convert one with ``.to``), and ``equal`` is False for different shapes.
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.ops.broadcast import broadcast_error, number, type_name
from minigrad._tensor import Tensor, _tensor_argument
from minigrad.ops.registry import tensor_method

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
