"""``Conv2d``: slide a small learned filter over an image, with shared weights."""
from __future__ import annotations

from minigrad.creation import zeros
from minigrad.nn import functional as F
from minigrad.nn.module import Module
from minigrad.nn.modules.linear import reset_weight_and_bias
from minigrad.nn.parameter import Parameter
from minigrad.tensor import Tensor


class Conv2d(Module):
    """2-D convolution over NCHW input: ``out_channels`` filters of ``in_channels x kH x kW``.

    Each filter sees only a small window and is reused at every position,
    which is why a CNN needs far fewer weights than an MLP on images.
    Initialised like PyTorch: U(±1/sqrt(in_channels * kH * kW)).
    Unlike PyTorch: no dilation, groups or padding_mode, and padding is a
    number (or pair), not "same" or "valid".
    """

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, bias: bool = True,
        device=None, dtype=None,
    ) -> None:
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = F._pair("kernel_size", kernel_size)
        self.stride = F._pair("stride", stride)
        self.padding = F._pair("padding", padding)
        self.weight = Parameter(zeros(out_channels, in_channels, *self.kernel_size, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(zeros(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.bias is None:
            s += ", bias=False"
        return s
