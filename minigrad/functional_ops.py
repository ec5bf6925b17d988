"""Top-level functions that combine several tensors: cat, stack, where, maximum."""
from __future__ import annotations

from typing import Sequence

from minigrad.ops import elementwise, linalg, reduction, shape, softmax as _softmax
from minigrad.tensor import Tensor, _operand


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    return shape.Cat.apply(dim, *tensors)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    return shape.Stack.apply(dim, *tensors)


def where(condition: Tensor, input, other) -> Tensor:
    return elementwise.Where.apply(condition, _operand(input), _operand(other))


def maximum(input: Tensor, other: Tensor) -> Tensor:
    return elementwise.Maximum.apply(input, _operand(other))


def matmul(input: Tensor, other: Tensor) -> Tensor:
    return linalg.matmul(input, other)


def softmax(input: Tensor, dim: int) -> Tensor:
    return _softmax.Softmax.apply(input, dim)


def log_softmax(input: Tensor, dim: int) -> Tensor:
    return _softmax.LogSoftmax.apply(input, dim)


def clamp(input: Tensor, min=None, max=None) -> Tensor:
    return elementwise.Clamp.apply(input, min, max)


def argmax(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return reduction.argmax(input, dim, keepdim)
