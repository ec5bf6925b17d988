"""Broadcasting: the shape of ``a op b``, and summing a gradient back to an input's shape.

When ``a`` of shape (3, 1) is added to ``b`` of shape (4,), each element of
``a`` is used 4 times, so its gradient is the *sum* of the 4 gradients it
received. ``sum_to`` does that sum (over added leading dims and stretched 1s).
"""
from __future__ import annotations

import numpy as np


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


def sum_to(grad, shape: tuple):
    """Sum ``grad`` (a Tensor) down to ``shape``, undoing broadcasting. Differentiable."""
    grad_shape = grad._data.shape
    if grad_shape == shape:
        return grad
    lead = len(grad_shape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad_shape[lead + i] != 1
    )
    if dims:
        grad = grad.sum(dim=dims, keepdim=True)
    return grad.reshape(shape) if grad._data.shape != shape else grad


def normalize_dims(dim, ndim: int) -> tuple:
    """``dim`` (None, an int or a sequence, negatives allowed) as a tuple of positive axes."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    dims = tuple(wrap_dim(d, ndim) for d in dims)
    return () if ndim == 0 else dims  # a 0-d tensor accepts dim 0 / -1 but has no axis to reduce


def wrap_dim(dim: int, ndim: int) -> int:
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not low <= dim <= high:
        raise IndexError(f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})")
    return dim % max(ndim, 1)
