"""Copies: ``clone``, ``contiguous``, ``to`` (dtype and device), ``copy_``, ``fill_`` and ``zero_``, and
the copy of a gradient that ``.grad`` stores (``_copy_grad``). Each gradient passes the incoming
gradient through (cast back to the input's dtype for ``to``).
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.device import device as _device_type, resolve as _resolve_device
from minigrad.ops.broadcast import flag, number, sum_to, type_name
from minigrad.ops.layout import copy_keeping_layout
from minigrad._tensor import Tensor, _argument
from minigrad.ops.registry import tensor_method
from minigrad.ops.subscript import IndexPut


class ToCopy(Function):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, numpy_dtype):
        ctx.input_dtype = a._data.dtype
        return Tensor._wrap(copy_keeping_layout(a._data, numpy_dtype))

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.input_dtype), None


def _is_dtype(value) -> bool:
    """A minigrad dtype, a Python type PyTorch takes as one (float, int, bool), or a NumPy dtype."""
    return (isinstance(value, (dtypes.dtype, np.dtype)) or value is float or value is int or value is bool
            or isinstance(value, type) and issubclass(value, np.generic))


@tensor_method()
def to(self, *args, dtype=None, device=None, non_blocking: bool = False, copy: bool = False) -> Tensor:
    """This tensor in another dtype, as a copy that gradients flow through (cast back to this dtype).

    As in PyTorch, the first argument picks the overload: ``to(device, dtype=None)`` (a str, a
    ``minigrad.device``, None, or an int, which names an accelerator), ``to(dtype)``, or ``to(other)``
    (other's dtype; a Python float or bool stands for a 0-d tensor of it, float64 or bool), each
    followed by ``non_blocking`` and ``copy``; or keywords. The device can only be the CPU (see
    ``minigrad.device``). Returns ``self`` when nothing changes, unless ``copy=True``.
    """
    flags = list(args[1:])
    if args:
        first = args[0]
        if first is None or isinstance(first, (str, _device_type, int, np.integer)) and not isinstance(first, bool):
            device = int(first) if isinstance(first, np.integer) else first
            if flags:
                dtype = flags.pop(0)
                if dtype is not None and not _is_dtype(dtype):
                    raise TypeError(f"to(): after the device comes the dtype, not {type_name(dtype)}: "
                                    f"x.to('cpu', minigrad.float64, non_blocking, copy)")
        elif _is_dtype(first):
            dtype = first
        elif isinstance(first, Tensor):
            dtype = first.dtype
        elif isinstance(first, (float, np.floating, bool)):
            dtype = dtypes.bool_ if isinstance(first, bool) else dtypes.float64
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type_name(first)}): "
                            "pass a dtype (minigrad.float64), a device ('cpu') or a tensor whose dtype to take")
    if len(flags) > 2:
        raise TypeError(f"to() received {len(args)} positional arguments: after the dtype, the device and dtype, "
                        "or the tensor come only non_blocking and copy")
    non_blocking, copy = flags + [non_blocking, copy][len(flags):]
    flag(non_blocking, "non_blocking")
    flag(copy, "copy")
    if dtype is not None and not _is_dtype(dtype):
        raise TypeError(f"to(): argument 'dtype' must be minigrad.dtype, not {type_name(dtype)}")
    _resolve_device(device)
    target = self._data.dtype if dtype is None else dtypes.to_numpy_dtype(dtype)
    if target == self._data.dtype and not copy:
        return self
    return ToCopy.apply(self, target)


class Contiguous(Function):
    """``x.contiguous()`` of a tensor that is not: a row-major copy (PyTorch's node is a clone's)."""

    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return Tensor._wrap(np.asarray(a._data, order="C"))

    @staticmethod
    def backward(ctx, grad):
        return grad


@tensor_method()
def contiguous(self) -> Tensor:
    """This tensor if it is contiguous, else a contiguous copy (recorded, as PyTorch's clone)."""
    return self if self._data.flags.c_contiguous else Contiguous.apply(self)


class Clone(Function):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return Tensor._wrap(copy_keeping_layout(a._data))

    @staticmethod
    def backward(ctx, grad):
        return grad


@tensor_method(top_level=True, out=False)
def clone(self) -> Tensor:
    return Clone.apply(self)


class CopyGrad(Clone):
    """The copy a leaf's ``.grad`` starts as under ``create_graph`` (PyTorch's node name)."""

    node_name = "torch::autograd::CopyBackwards"


@tensor_method()
def _copy_grad(self, retained: bool = False) -> Tensor:
    """A copy of this gradient, about to be stored in ``.grad``: never the incoming object.

    Under ``create_graph`` the copy is recorded (PyTorch names that node
    ``CopyBackwards`` for a leaf's ``.grad``, ``CloneBackward0`` for a retained one).
    """
    if is_grad_enabled() and self._requires_grad:
        return (Clone if retained else CopyGrad).apply(self)
    return Tensor._wrap(self._data.copy())


class Copy(IndexPut):
    """``a.copy_(src)``: ``a[...] = src`` (PyTorch's node name)."""

    node_name = "torch::autograd::CopyBackwards"

    @staticmethod
    def backward(ctx, grad):
        need_a, _, need_value = ctx.needs_input_grad
        # every element was overwritten: PyTorch's zeros_like(grad), a constant even under create_graph
        grad_a = Tensor._wrap(np.zeros_like(grad._data)) if need_a else None
        # the value's is the gradient itself (PyTorch's grad.to(src's options)): no view of it
        grad_value = sum_to(grad, ctx.value_shape) if need_value else None
        return grad_a, None, grad_value


@tensor_method()
def copy_(self, src: Tensor) -> Tensor:
    src = _argument("copy_", src)  # a number too, as in PyTorch: every element becomes it
    return self._inplace(Copy, (Ellipsis,), src if isinstance(src, Tensor) else Tensor._wrap(np.asarray(src)))


class Fill(Function):
    """The out-of-place form of ``fill_(number)``: the old values get a zero gradient.

    Zeros, not None, as in PyTorch: the nodes below still run (and a freed one
    still raises), and a leaf's ``.grad`` becomes zeros rather than staying None.
    """

    node_name = "FillBackward2"

    @staticmethod
    def forward(ctx, a, value):
        return Tensor._wrap(np.full_like(a._data, value))

    @staticmethod
    def backward(ctx, grad):
        return Tensor._wrap(np.zeros_like(grad._data)), None


class Zero(Fill):
    """``zero_``: PyTorch names its node apart from fill_'s."""

    node_name = "ZeroBackward0"


class FillTensor(Function):
    """``fill_(value)`` with a 0-d tensor: every element is that value, so its gradient is the sum."""

    node_name = "FillBackward3"

    @staticmethod
    def forward(ctx, a, value):
        return Tensor._wrap(np.full_like(a._data, value._data))

    @staticmethod
    def backward(ctx, grad):
        return Tensor._wrap(np.zeros_like(grad._data)), grad.sum() if ctx.needs_input_grad[1] else None


@tensor_method(top_level=True)
def fill_(self, value) -> Tensor:
    if isinstance(value, Tensor):  # differentiable in the value (FillBackward3)
        if value.ndim:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
            )
        return self._inplace(FillTensor, value)
    return self._inplace(Fill, number(value, "value"))


@tensor_method(top_level=True)
def zero_(self) -> Tensor:
    return self._inplace(Zero, 0)
