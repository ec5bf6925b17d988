"""``Flatten``: turn each sample's feature maps into one vector, between a conv and a Linear;
``Unflatten``: the way back, one dimension split into several."""
from __future__ import annotations

import math

from minigrad.nn.module import Module
from minigrad._tensor import Tensor


class Flatten(Module):
    """Merge dimensions start_dim..end_dim; the default keeps dimension 0, the batch."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (a tuple or list of ints, one may be -1)."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                f"unflattened_size must be a tuple of ints, but found type {type(unflattened_size).__name__}")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                f"{type(elem).__name__} at pos {idx}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        n = input.ndim
        if not -max(n, 1) <= self.dim < max(n, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], "
                             f"but got {self.dim})")
        if n == 0:
            raise RuntimeError(f"Dimension specified as {self.dim} but tensor has no dimensions")
        dim, sizes, size = self.dim % n, list(self.unflattened_size), input.shape[self.dim]
        if sizes.count(-1) == 1:
            rest = math.prod(s for s in sizes if s != -1)
            if rest and size % rest == 0:
                sizes[sizes.index(-1)] = size // rest  # (worked out here: reshape cannot when size is 0)
        if -1 in sizes or math.prod(sizes) != size:
            raise RuntimeError(f"unflatten: Provided sizes {list(self.unflattened_size)} don't multiply up to the "
                               f"size of dim {self.dim} ({size}) in the input tensor")
        return input.reshape(*input.shape[:dim], *sizes, *input.shape[dim + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
