"""Broadcasting: the shape of ``a op b``, and summing a gradient back to an input's shape.

When ``a`` of shape (3, 1) is added to ``b`` of shape (4,), each element of
``a`` is used 4 times, so its gradient is the *sum* of the 4 gradients it
received. ``sum_to`` (the core's) does that sum (over added leading dims and stretched 1s).

The dims such sums take are checked here too (``wrap_dim``, ``normalize_dims``), with the
other non-tensor arguments (``integer``, ``number``, ``flag``): PyTorch's TypeError for a wrong type,
not an error from deep inside NumPy.
"""
from __future__ import annotations

import operator

import numpy as np

from minigrad.core.broadcast import sum_to  # noqa: F401  (the core's: undoing broadcasting)


class _NotGiven:
    """An argument left out, told apart from an explicit None: PyTorch's overloads (max(), max(dim),
    squeeze(dim), round(decimals=)) refuse None where the argument may only be omitted."""

    def __repr__(self) -> str:  # (what help() shows as the default)
        return "<not given>"


NOT_GIVEN = _NotGiven()


def broadcast_error(shape_a: tuple, shape_b: tuple) -> RuntimeError:
    """PyTorch's message, naming the first dimension (from the right) that clashes."""
    for i in range(1, min(len(shape_a), len(shape_b)) + 1):
        a, b = shape_a[-i], shape_b[-i]
        if a != b and a != 1 and b != 1:
            dim = max(len(shape_a), len(shape_b)) - i
            return RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
                f"dimension {dim} (shapes {list(shape_a)} and {list(shape_b)})"
            )
    return RuntimeError(f"shapes {list(shape_a)} and {list(shape_b)} cannot be broadcast together")


def normalize_dims(dim, ndim: int) -> tuple:
    """``dim`` (None, an int or a sequence, negatives allowed) as a tuple of positive axes."""
    if dim is None:
        return tuple(range(ndim))
    dims = tuple(wrap_dim(d, ndim) for d in (dim if isinstance(dim, (tuple, list)) else (dim,)))
    return () if ndim == 0 else dims  # a 0-d tensor accepts dim 0 / -1 but has no axis to reduce


def type_name(value) -> str:
    """A value's type as PyTorch's messages name it (``numpy.ndarray``, ``str``)."""
    cls = type(value)
    return cls.__name__ if cls.__module__.split(".")[0] in ("builtins", "minigrad") else f"{cls.__module__}.{cls.__name__}"


def integer(value, argument: str = "dim") -> int:
    """``value`` as an int: a NumPy integer and a one-element integer tensor are ones (their
    ``__index__``); a bool, a float, a str, None or an array is PyTorch's TypeError."""
    if type(value) is int:
        return value
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise TypeError(f"argument '{argument}' must be int, not {type_name(value)}") from None


def number(value, argument: str):
    """``value`` if it is a Python or NumPy number (alpha, a fill value, a clamp bound), or the
    number in a 0-d tensor, which PyTorch takes there too."""
    if isinstance(value, (int, float, np.number, np.bool_)):
        return value
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):  # (a Tensor: not imported here)
        return value.item()
    raise TypeError(f"argument '{argument}' must be Number, not {type_name(value)}")


def flag(value, argument: str) -> bool:
    """``value`` if it is a bool (keepdim, descending, ...): PyTorch refuses 0, 1 and None there."""
    if value is True or value is False or isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"argument '{argument}' must be bool, not {type_name(value)}")


def wrap_dim(dim: int, ndim: int) -> int:
    if type(dim) is not int:
        dim = integer(dim)
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not low <= dim <= high:
        raise IndexError(f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})")
    return dim % max(ndim, 1)
