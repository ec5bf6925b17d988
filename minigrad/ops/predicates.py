"""Questions about each element (isnan, isinf, isfinite, isposinf, isneginf), logic on truth
values (logical_and, logical_or, logical_xor, logical_not), and nan_to_num, which answers them.

The predicates and the logic give bool tensors outside the graph: a yes or no has no
derivative. A nonzero number, NaN included, is true. ``nan_to_num`` replaces NaN, +inf and -inf
with finite numbers (0 and the dtype's largest and smallest by default); it is the identity
elsewhere, so its gradient passes where the value is kept and is 0 where it was replaced.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.function import Function
from minigrad.ops.broadcast import broadcast_error, number
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, _tensor_argument


def _floating(a: Tensor) -> np.ndarray | None:
    """The values that can be NaN or infinite; None for integers and bools, which never are."""
    return a._data if a._data.dtype.kind == "f" else None


def _each(a: Tensor, numpy_fn, integers: bool) -> Tensor:
    """``numpy_fn`` of each value (``integers``: the answer for an integer or bool tensor)."""
    x = _floating(a)
    return Tensor._wrap(np.full(a._data.shape, integers) if x is None else np.asarray(numpy_fn(x)))


def _logical(name: str, numpy_fn, a: Tensor, b) -> Tensor:
    x, y = a._data, _tensor_argument(name, "other", 1, b)._data
    try:
        return Tensor._wrap(np.asarray(numpy_fn(x != 0, y != 0)))  # (NaN != 0: NaN is true)
    except ValueError:
        raise broadcast_error(x.shape, y.shape) from None


def _number(name: str, argument: str, position: int, value) -> float | None:
    return value if value is None else number(value, argument)


class NanToNum(Function):
    node_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, a, nan=0.0, posinf=None, neginf=None):
        x = _floating(a)
        if x is None:
            return Tensor._wrap(a._data.copy())
        ctx.save_for_backward(a)  # (as PyTorch: changing it in place before backward is an error)
        return Tensor._wrap(np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf))

    @staticmethod
    def backward(ctx, grad):  # (PyTorch's grad * isfinite(x): an inf gradient at a replaced value gives NaN)
        a, = ctx.saved_tensors
        return grad * Tensor._wrap(np.isfinite(a._data).astype(grad._data.dtype)), None, None, None


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method(top_level=True, out=False)
def isnan(self) -> Tensor:
    return _each(self, np.isnan, False)


@tensor_method(top_level=True, out=False)
def isinf(self) -> Tensor:
    return _each(self, np.isinf, False)


@tensor_method(top_level=True, out=False)
def isfinite(self) -> Tensor:
    return _each(self, np.isfinite, True)


@tensor_method(top_level=True)
def isposinf(self) -> Tensor:
    return _each(self, np.isposinf, False)


@tensor_method(top_level=True)
def isneginf(self) -> Tensor:
    return _each(self, np.isneginf, False)


@tensor_method(top_level=True)
def logical_not(self) -> Tensor:
    return Tensor._wrap(np.asarray(self._data == 0))


@tensor_method(top_level=True)
def logical_and(self, other: Tensor) -> Tensor:
    return _logical("logical_and", np.logical_and, self, other)


@tensor_method(top_level=True)
def logical_or(self, other: Tensor) -> Tensor:
    return _logical("logical_or", np.logical_or, self, other)


@tensor_method(top_level=True)
def logical_xor(self, other: Tensor) -> Tensor:
    return _logical("logical_xor", np.logical_xor, self, other)


def _overwrite(self: Tensor, answer: Tensor) -> Tensor:
    """The logic in place: ``answer`` written into self as 1 or 0 in self's dtype. As in PyTorch, the
    graph does not see it: no node is recorded, a leaf that requires grad is not refused, and backward
    goes on as if the old values were still there (only the version counter moves)."""
    if answer.shape != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(answer.shape)}")
    self._data[...] = answer._data
    self._version_counter.value += 1
    return self


@tensor_method()
def logical_not_(self) -> Tensor:
    return _overwrite(self, logical_not(self))


@tensor_method()
def logical_and_(self, other: Tensor) -> Tensor:
    return _overwrite(self, _logical("logical_and_", np.logical_and, self, other))


@tensor_method()
def logical_or_(self, other: Tensor) -> Tensor:
    return _overwrite(self, _logical("logical_or_", np.logical_or, self, other))


@tensor_method()
def logical_xor_(self, other: Tensor) -> Tensor:
    return _overwrite(self, _logical("logical_xor_", np.logical_xor, self, other))


@tensor_method(top_level=True)
def nan_to_num(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    args = [_number("nan_to_num", name, i + 1, v) for i, (name, v) in enumerate(
        (("nan", nan), ("posinf", posinf), ("neginf", neginf)))]
    return NanToNum.apply(self, 0.0 if args[0] is None else args[0], *args[1:])


@tensor_method(top_level=True)
def nan_to_num_(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    args = [_number("nan_to_num_", name, i + 1, v) for i, (name, v) in enumerate(
        (("nan", nan), ("posinf", posinf), ("neginf", neginf)))]
    return self._inplace(NanToNum, 0.0 if args[0] is None else args[0], *args[1:])
