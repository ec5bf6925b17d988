"""Top-level functions that combine several tensors (cat, stack, where, maximum), and ``out=``.

Each refuses an argument that is not a tensor with PyTorch's TypeError (``check_tensor``), where
it would otherwise fail deep inside with an AttributeError, or silently take a NumPy array.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from minigrad.autograd.grad_mode import is_grad_enabled, no_grad

from minigrad.ops import elementwise, shape
from minigrad.ops.broadcast import broadcast_error, type_name
from minigrad._tensor import Size, Tensor, _described, check_tensor

# What the guards of where's and pow's arguments let through at once; check_tensor judges the rest.
_TENSOR_OR_NUMBER = (Tensor, int, float)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    _check_tensor_list("cat", tensors)
    return shape.Cat.apply(dim, *tensors)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    _check_tensor_list("stack", tensors)
    return shape.Stack.apply(dim, *tensors)


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of ``shapes`` broadcast to (an int stands for a 1-d shape)."""
    result: tuple = ()
    for i, sizes in enumerate(shapes):
        sizes = (sizes,) if isinstance(sizes, (int, np.integer)) else sizes
        if not isinstance(sizes, Sequence):  # (a NumPy array is not one: its shape is)
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {sizes}")
        try:
            result = np.broadcast_shapes(result, tuple(sizes))
        except ValueError:
            raise RuntimeError(f"Shape mismatch at argument {i}: {list(sizes)} cannot be broadcast to "
                               f"{list(result)} (sizes must be equal, or one of them 1)") from None
    return Size(result)


def broadcast_tensors(*tensors: Tensor) -> tuple:
    """Each tensor expanded to the common shape (a tensor already of that shape is returned as is)."""
    shape: tuple = ()
    for i, t in enumerate(tensors):
        if type(t) is not Tensor:
            _check_element(i, t)
        try:
            shape = np.broadcast_shapes(shape, t.shape)
        except ValueError:
            raise broadcast_error(shape, tuple(t.shape)) from None
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def where(condition: Tensor, input, other) -> Tensor:
    """``input`` where ``condition`` is True, else ``other``; either may be a Python number."""
    if type(condition) is not Tensor:
        check_tensor("where", "condition", 1, condition)
    if type(input) not in _TENSOR_OR_NUMBER:
        check_tensor("where", "input", 2, input, numbers=True)
    if type(other) not in _TENSOR_OR_NUMBER:
        check_tensor("where", "other", 3, other, numbers=True)
    if condition._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{condition.dtype}: compare it (x > 0) or use .bool()")
    return elementwise.Where.apply(condition, input, other)


def maximum(input: Tensor, other: Tensor) -> Tensor:
    if type(input) is not Tensor or type(other) is not Tensor:
        check_tensor("maximum", "input", 1, input)
        check_tensor("maximum", "other", 2, other)
    return elementwise.Maximum.apply(input, other)


def pow(input, exponent, *, out: Tensor | None = None) -> Tensor:
    """``input ** exponent``; either one may be a Python number (``pow(2, x)`` is ``2 ** x``)."""
    if type(input) not in _TENSOR_OR_NUMBER:
        check_tensor("pow", "input", 1, input, numbers=True)
    if type(exponent) not in _TENSOR_OR_NUMBER:
        check_tensor("pow", "exponent", 2, exponent, numbers=True)
    if isinstance(input, Tensor):
        result = input.pow(exponent)
    elif isinstance(exponent, Tensor):
        result = exponent.__rpow__(input)
    else:
        raise TypeError(f"pow() needs a Tensor as input or exponent, got ({type(input).__name__}, "
                        f"{type(exponent).__name__}): wrap one in minigrad.tensor(...)")
    return result if out is None else write_out("pow", result, out)


def _check_tensor_list(fn: str, tensors) -> None:
    """cat's and stack's argument: a list or tuple of tensors, as in PyTorch (``cat(t)`` would
    otherwise join the rows of ``t``)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not {type_name(tensors)}")
    for i, t in enumerate(tensors):
        if type(t) is not Tensor:
            _check_element(i, t)


def _check_element(index: int, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"expected Tensor as element {index} in argument 0, but got {_described(value)}")


def write_out(name: str, result: Tensor, out: Tensor) -> Tensor:
    """PyTorch's ``out=``: write ``result`` into ``out`` (resized if its shape differs) and return ``out``.

    Writing into an existing tensor is not differentiable, so, as in PyTorch, it
    is refused when gradients are being recorded for any of the tensors involved.
    """
    if not isinstance(result, Tensor):
        raise TypeError(f"{name}(): minigrad supports out= only for functions that return one tensor")
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic differentiation, but one "
            "of the arguments requires grad. Drop out= (use the returned tensor) or compute under no_grad()."
        )
    if not np.can_cast(result._data.dtype, out._data.dtype, "same_kind"):
        raise RuntimeError(f"result type {result.dtype} can't be cast to the desired output type {out.dtype}")
    if out.shape != result.shape:
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(out.shape)}, which "
                f"does not match the required output shape {list(result.shape)}.",
                UserWarning,
                stacklevel=3,
            )
        out._data = np.empty(result.shape, dtype=out._data.dtype)
    with no_grad():
        out.copy_(result)
    return out
