"""``Flatten``: turn each sample's feature maps into one vector, between a conv and a Linear."""
from __future__ import annotations

from minigrad.nn.module import Module
from minigrad.tensor import Tensor


class Flatten(Module):
    """Merge dimensions start_dim..end_dim; the default keeps dimension 0, the batch."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
