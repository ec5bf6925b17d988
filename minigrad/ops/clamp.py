"""``clamp`` (``clip``): with number bounds (``Clamp``) or tensor bounds broadcast against the input
(``ClampTensor``), as PyTorch's two overloads, and the in-place ``clamp_``."""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import broadcast_error, number, sum_to
from minigrad._tensor import Tensor
from minigrad.ops.where import _zero_where
from minigrad.ops.registry import alias, tensor_method


class Clamp(Function):
    node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, a, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None: pass min=, max= or both")
        ctx.save_for_backward(a)
        ctx.bounds = min, max
        want = a._data.dtype  # int_tensor.clamp(min=0.5) is float32, as in PyTorch
        for bound in (min, max):
            if bound is not None:
                want = dtypes.result_type(np.empty(0, want), bound)
        return Tensor._wrap(np.clip(a._data, min, max).astype(want, copy=False))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        low, high = ctx.bounds
        outside = np.zeros(a.shape, dtype=bool)  # NaN is outside: its gradient is 0, as in PyTorch
        if low is not None:
            outside |= ~(a._data >= low)
        if high is not None:
            outside |= ~(a._data <= high)
        return _zero_where(outside, grad), None, None


class ClampTensor(Function):
    """``clamp`` with tensor bounds (either may be None), broadcast against the input, as PyTorch's
    ``clamp.Tensor``. The input's gradient passes where min <= x <= max; a bound gets it where it
    decided the value: min where x < min (and min < max), max where x > max (or max < min, since
    then max wins everywhere)."""

    node_name = "ClampBackward0"

    @staticmethod
    def forward(ctx, a, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None: pass min=, max= or both")
        ctx.save_for_backward(a, min, max)
        x, out, want = a._data, a._data, a._data.dtype
        for bound, numpy_fn in ((min, np.maximum), (max, np.minimum)):
            if bound is not None:
                try:
                    out = numpy_fn(out, bound._data)
                except ValueError:
                    raise broadcast_error(np.shape(out), bound.shape) from None
                want = dtypes.result_type(np.empty((0,) * x.ndim, want), bound._data)
        return Tensor._wrap(out.astype(want, copy=False))

    @staticmethod
    def backward(ctx, grad):
        a, low, high = ctx.saved_tensors
        need_a, need_low, need_high = ctx.needs_input_grad
        x = a._data
        keep = np.ones(np.shape(grad._data), dtype=bool)  # where x itself is the result (NaN x: nowhere)
        if low is not None:
            keep &= x >= low._data
        if high is not None:
            keep &= x <= high._data
        grad_low = grad_high = None
        if need_low:
            decided = x < low._data
            if high is not None:
                decided = decided & (low._data < high._data)
            grad_low = sum_to(_zero_where(~np.broadcast_to(decided, keep.shape), grad), low.shape)
        if need_high:
            decided = x > high._data
            if low is not None:
                decided = decided | (high._data < low._data)
            grad_high = sum_to(_zero_where(~np.broadcast_to(decided, keep.shape), grad), high.shape)
        return (sum_to(_zero_where(~keep, grad), a.shape) if need_a else None), grad_low, grad_high


@tensor_method("clamp", "clip", top_level=True)
def clamp(self, min=None, max=None) -> Tensor:
    if _tensor_bounds(min, max):
        return ClampTensor.apply(self, min, max)
    return Clamp.apply(self, _bound(min, "min"), _bound(max, "max"))


def _bound(value, argument: str):
    """A clamp bound: None or a number (a 0-d tensor is one, as in PyTorch)."""
    return value if value is None else number(value, argument)


def _tensor_bounds(min, max) -> bool:
    """Whether the bounds take PyTorch's tensor overload: each a tensor or None, one of them a tensor
    that is not 0-d (a 0-d tensor beside a number counts as a number, as there)."""
    tensors = [b for b in (min, max) if isinstance(b, Tensor)]
    if not tensors:
        return False
    others = [(name, b) for name, b in (("min", min), ("max", max)) if b is not None and not isinstance(b, Tensor)]
    if not others:
        return True
    if all(t.ndim == 0 for t in tensors):
        return False
    name, value = others[0]
    raise TypeError(f"clamp(): argument '{name}' must be a Tensor or None when the other bound is a tensor, not "
                    f"{type(value).__name__}: wrap it with minigrad.tensor(...) (PyTorch has no mixed overload)")


@tensor_method(top_level=True)
def clamp_(self, min=None, max=None) -> Tensor:
    if _tensor_bounds(min, max):
        return self._inplace(ClampTensor, min, max)
    return self._inplace(Clamp, _bound(min, "min"), _bound(max, "max"))


alias("clip_", "clamp_", top_level=True)

