"""Pooling: ``MaxPool2d`` keeps each window's largest value, ``AvgPool2d`` its mean.

``AdaptiveAvgPool2d`` averages whatever the input size is down to a fixed output size.
"""
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


class AvgPool2d(Module):
    """Mean over ``kernel_size`` windows, moved by ``stride`` (default: ``kernel_size``); see ``F.avg_pool2d``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average any (H, W) down to ``output_size``: ``AdaptiveAvgPool2d(1)`` is a global average pool."""

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
