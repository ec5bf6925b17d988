"""``Conv1d``, ``Conv2d`` and ``Conv3d``: slide small learned filters over a sequence, an image or a volume,
with shared weights; ``ConvTranspose1d``/``2d``/``3d``: their transposes, which map back up to the larger size; and
their lazy forms, which read ``in_channels`` from the first input."""
from __future__ import annotations

from minigrad.autograd.grad_mode import no_grad
from minigrad.creation import zeros
from minigrad.nn import functional as F
from minigrad.nn.module import Module
from minigrad.nn.modules.lazy import LazyModuleMixin
from minigrad.nn.modules.linear import reset_weight_and_bias
from minigrad.nn.parameter import Parameter, UninitializedParameter
from minigrad._tensor import Tensor

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int) -> tuple:
    """PyTorch's ``_single``/``_pair``: a number repeated n times; a sequence kept as it is (checked by F)."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _ConvNd(Module):
    """What the convolutions share: ``out_channels`` filters of ``in_channels / groups x kernel_size``.

    Each filter sees only a small window and is reused at every position, which is why a CNN
    needs far fewer weights than an MLP on images. ``groups`` splits the channels into that many
    independent convolutions (``groups=in_channels``: one filter per channel, "depthwise").
    ``padding_mode`` other than "zeros" pads the input with ``F.pad`` first, as PyTorch does.
    Initialised like PyTorch: U(±1/sqrt(fan_in)), fan_in the weight's ``shape[1] * prod(kernel_size)``.
    A transposed convolution's weight is (in_channels, out_channels / groups, *kernel_size), as in PyTorch.
    """

    _dims: int

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride, padding, dilation, transposed: bool,
                 output_padding, groups: int, bias: bool, padding_mode: str, device, dtype) -> None:
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation, self.output_padding = (
            _ntuple(v, n) for v in (kernel_size, stride, dilation, output_padding))
        self.transposed = transposed
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._reversed_padding()
        filters = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(zeros(*filters, *self.kernel_size, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(zeros(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _reversed_padding(self) -> list[int]:
        """F.pad's list (last dimension first, left then right) for padding_mode: "same" puts the odd one right."""
        if self.padding == "valid":
            return [0, 0] * self._dims
        if self.padding == "same":
            totals = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            return [amount for total in reversed(totals) for amount in (total // 2, total - total // 2)]
        return [p for p in reversed(self.padding) for _ in range(2)]

    def reset_parameters(self) -> None:
        reset_weight_and_bias(self.weight, self.bias)

    def _conv_forward(self, conv, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        n = self._dims
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) sequences (or one (C, L) sequence): filters of in_channels / groups x k."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(F.conv1d, input)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) images (or one (C, H, W) image): filters of in_channels / groups x kH x kW."""

    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(F.conv2d, input)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) volumes or videos (or one (C, D, H, W)): filters of
    in_channels / groups x kD x kH x kW."""

    _dims = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(F.conv3d, input)


class _ConvTransposeNd(_ConvNd):
    """What ConvTranspose1d and ConvTranspose2d share: only zero padding, and ``output_size`` in forward.

    A strided convolution maps several input sizes to one output size, so its transpose has a choice
    of output sizes: ``output_padding`` fixes it when the layer is built, or ``output_size`` per call
    (the size of the tensor a matching Conv layer took in, say).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride, padding, dilation, output_padding,
                 groups: int, bias: bool, padding_mode: str, device, dtype) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """The output_padding that gives ``output_size`` (its last ``n`` entries), or the layer's own."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        leading = 2 if input.ndim == n + 2 else 1
        output_size = tuple(output_size)
        if len(output_size) == leading + n:
            output_size = output_size[leading:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or {leading + n} "
                             f"elements (got {len(output_size)})")
        smallest = [(size - 1) * s - 2 * p + d * (k - 1) + 1 for size, s, p, d, k in
                    zip(input.shape[-n:], self.stride, self.padding, self.dilation, self.kernel_size)]
        largest = [low + s - 1 for low, s in zip(smallest, self.stride)]
        if any(not low <= size <= high for size, low, high in zip(output_size, smallest, largest)):
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {smallest} to "
                             f"{largest} (for an input of {input.shape[-n:]})")
        return tuple(size - low for size, low in zip(output_size, smallest))

    def _conv_transpose_forward(self, conv_transpose, input: Tensor, output_size) -> Tensor:
        return conv_transpose(input, self.weight, self.bias, self.stride, self.padding,
                              self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution over (N, C, L) sequences (or one (C, L)): conv1d's input gradient, a learned
    upsampling; weight (in_channels, out_channels / groups, k)."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, groups,
                         bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        return self._conv_transpose_forward(F.conv_transpose1d, input, output_size)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution over (N, C, H, W) images (or one (C, H, W)): conv2d's input gradient, a learned
    upsampling (decoders, GAN generators); weight (in_channels, out_channels / groups, kH, kW)."""

    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, groups,
                         bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        return self._conv_transpose_forward(F.conv_transpose2d, input, output_size)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over (N, C, D, H, W) volumes (or one (C, D, H, W)): conv3d's input gradient;
    weight (in_channels, out_channels / groups, kD, kH, kW)."""

    _dims = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, groups,
                         bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        return self._conv_transpose_forward(F.conv_transpose3d, input, output_size)


class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share: ``in_channels`` read from the first input's channel dimension."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            with no_grad():
                self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._dims + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.ndim == unbatched + 1 else input.shape[0]

    def _lazy_init(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` is read from its first input (``nn/modules/lazy.py``)."""

    cls_to_become = Conv1d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                         device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` is read from its first input (``nn/modules/lazy.py``)."""

    cls_to_become = Conv2d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                         device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` is read from its first input (``nn/modules/lazy.py``)."""

    cls_to_become = ConvTranspose1d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` is read from its first input (``nn/modules/lazy.py``)."""

    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` is read from its first input (``nn/modules/lazy.py``)."""

    cls_to_become = Conv3d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                         device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    """A ``ConvTranspose3d`` whose ``in_channels`` is read from its first input (``nn/modules/lazy.py``)."""

    cls_to_become = ConvTranspose3d

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                 bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)
