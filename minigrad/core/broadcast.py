"""Broadcasting, backwards: summing a gradient back to an input's shape.

When ``a`` of shape (3, 1) is added to ``b`` of shape (4,), each element of
``a`` is used 4 times, so its gradient is the *sum* of the 4 gradients it
received. ``sum_to`` does that sum (over added leading dims and stretched 1s).
"""
from __future__ import annotations


def sum_to(grad, shape: tuple):
    """Sum ``grad`` (a Tensor) down to ``shape``, undoing broadcasting. Differentiable."""
    grad_shape = grad._data.shape
    if grad_shape == shape:
        return grad
    if not shape:  # PyTorch's sum(): a new tensor, not a view of one (a reshape would be)
        return grad.sum()
    lead = len(grad_shape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad_shape[lead + i] != 1
    )
    if dims:
        grad = grad.sum(dim=dims, keepdim=True)
    return grad.reshape(shape) if grad._data.shape != shape else grad


def is_expandable_to(shape: tuple, desired: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``desired`` (so a gradient can be summed back)."""
    if len(shape) > len(desired):
        return False
    return all(s == 1 or s == d for s, d in zip(reversed(shape), reversed(desired)))
