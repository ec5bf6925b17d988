"""``MaxPool2d``: keep the largest value of each window, shrinking the image."""
from __future__ import annotations

from minigrad.nn import functional as F
from minigrad.nn.module import Module
from minigrad.tensor import Tensor


class MaxPool2d(Module):
    """Max over ``kernel_size`` windows, moved by ``stride`` (default: ``kernel_size``).

    Unlike PyTorch: no dilation, ceil_mode or return_indices, so the repr
    shows only kernel_size, stride and padding.
    """

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding

    def forward(self, input: Tensor) -> Tensor:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
