"""Convolutions: ``conv1d``, ``conv2d``, ``conv3d``, their transposes, and ``unfold``/``fold``. The
nodes (Numba kernels) are in ``minigrad/nn/ops/conv.py``.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.nn.ops.conv import Conv2d, ConvTranspose2d
from minigrad.nn.ops.linear_map import Col2Im, Im2Col
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _TENSORS_OR_NONE, _check_tensors
from minigrad.nn.functional.padding import pad


# PyTorch's messages for a size list of the wrong length (templates of fn, name, value, size and n)
_CONV_LENGTH = ("expected {name} to be a single integer value or a list of {n} values to match the convolution "
                "dimensions, but got {name}={value}")
_POOL2D_LENGTH = "{fn}: {name} must either be a single int, or a tuple of two ints"
_POOL1D_LENGTH = "{fn}() argument '{name}' should contain one int (got {size})"
_MAX_POOL1D_LENGTH = "{fn}() {name} must be an int, list of ints or tuple of ints of size 1 but got size {size}"


def _ntuple(fn: str, name: str, value, n: int, wrong_length: str) -> tuple:
    """A size given once for all ``n`` spatial dimensions or one per dimension, like PyTorch's int lists:
    ``3`` or ``(3,)`` -> (3, 3) for n = 2. Anything but ints is a TypeError; another length a RuntimeError,
    with PyTorch's message (one of the templates above)."""
    if type(value) is int or isinstance(value, np.integer):
        return (int(value),) * n
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, (int, np.integer)) for v in value):
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, but got {value!r}")
    if len(value) == 1:
        return (int(value[0]),) * n
    if len(value) != n:
        raise RuntimeError(wrong_length.format(fn=fn, name=name, value=list(value), size=len(value), n=n))
    return tuple(int(v) for v in value)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """1-D convolution of (N, C, L) or unbatched (C, L) ``input`` with (out_channels, C / groups, k) ``weight``.

    The conv2d Function over a height of 1: one ``ConvolutionBackward0`` node, as PyTorch's.
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv1d", input=input, weight=weight, bias=bias)
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-D convolution of (N, C, H, W) or unbatched (C, H, W) ``input`` with (out_channels, C / groups, kH, kW)
    ``weight``.

    ``padding`` is a size, a pair, "valid" (none) or "same" (the output as long as the input; stride 1).
    ``dilation`` spaces the kernel's taps; ``groups`` splits the channels into that many independent
    convolutions. Numba kernels forward and backward, differentiable to any order (``minigrad/nn/ops/conv.py``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv2d", input=input, weight=weight, bias=bias)
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def _convolution(fn: str, n: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation,
                 groups: int) -> Tensor:
    """conv1d and conv2d over ``n`` spatial dimensions, with PyTorch's checks and messages."""
    shape, weight_shape = input._data.shape, weight._data.shape  # (tuples: read once, this runs per call)
    if len(shape) not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {fn}, but got input of "
                           f"size: {list(input.shape)}")
    if len(shape) == n + 1:  # unbatched: a batch of one, and PyTorch's node on top is the squeeze
        return _convolution(fn, n, input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._data.dtype != input._data.dtype:
            raise RuntimeError(f"Input type ({input.dtype}) and {name} type ({t.dtype}) should be the same")
    stride = _ntuple(fn, "stride", stride, n, _CONV_LENGTH)
    dilation = _ntuple(fn, "dilation", dilation, n, _CONV_LENGTH)
    if len(weight_shape) != len(shape):
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if isinstance(padding, str):
        input, padding = _string_padding(input, weight, padding, stride, dilation)
        shape = input._data.shape
    else:
        padding = _ntuple(fn, "padding", padding, n, _CONV_LENGTH)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("non-positive dilation is not supported")
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    out_channels, channels = weight_shape[0], shape[1]
    if out_channels % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{list(weight.shape)}] instead")
    if weight_shape[1] * groups != channels:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got {channels} "
                           f"channels instead")
    if bias is not None and bias._data.shape != (out_channels,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")
    for size, p, d, k in zip(shape[2:], padding, dilation, weight_shape[2:]):
        if d * (k - 1) + 1 > size + 2 * p:
            padded = " x ".join(str(size + 2 * p) for size, p in zip(input.shape[2:], padding))
            spans = " x ".join(str(d * (k - 1) + 1) for d, k in zip(dilation, weight.shape[2:]))
            raise RuntimeError(f"Calculated padded input size per channel: ({padded}). Kernel size: ({spans}). "
                               "Kernel size can't be greater than actual input size")
    if n == 1:  # the conv2d Function over a height of 1
        stride, padding, dilation = (1, *stride), (0, *padding), (1, *dilation)
    if n == 3:
        return _planes_convolution(input, weight, bias, stride, padding, dilation, groups)
    return Conv2d.apply(input, weight, bias, stride, padding, dilation, groups)


def _string_padding(input: Tensor, weight: Tensor, padding: str, stride: tuple, dilation: tuple) -> tuple:
    """padding="valid" is none; "same" pads d * (k - 1) in all, half on each side. When that is odd, PyTorch
    pads the input by the extra one on the right first (a ``ConstantPadNdBackward0`` under the convolution)."""
    if padding == "valid":
        return input, (0,) * len(stride)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if max(stride) != 1:
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    if any(total % 2 for total in totals):
        input = pad(input, [amount for total in reversed(totals) for amount in (0, total % 2)])
    return input, tuple(total // 2 for total in totals)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transposed 1-D convolution of (N, C, L) or unbatched (C, L) ``input`` with (C, out_channels / groups, k)
    ``weight``: conv1d's gradient with respect to its input (see ``conv_transpose2d``)."""
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv_transpose1d", input=input, weight=weight, bias=bias)
    return _transposed_convolution("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                                   dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transposed 2-D convolution of (N, C, H, W) or unbatched (C, H, W) ``input`` with
    (C, out_channels / groups, kH, kW) ``weight``: conv2d's gradient with respect to its input.

    It scatters each input value, times the kernel, onto a ``stride`` times larger output (an upsampling
    a network learns), undoing a conv2d's shape: ``(H - 1) * stride - 2 * padding + dilation * (kH - 1) + 1
    + output_padding``. Since a strided conv2d maps several sizes to one, ``output_padding`` (smaller than
    stride or dilation) picks the larger ones. Runs on conv2d's kernels (``minigrad/nn/ops/conv.py``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv_transpose2d", input=input, weight=weight, bias=bias)
    return _transposed_convolution("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                                   dilation)


def _transposed_convolution(fn: str, n: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding,
                            output_padding, groups: int, dilation) -> Tensor:
    """conv_transpose1d and conv_transpose2d over ``n`` spatial dimensions, with PyTorch's checks and messages."""
    shape, weight_shape = input._data.shape, weight._data.shape
    if len(shape) not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {fn}, but got input of "
                           f"size: {list(input.shape)}")
    if len(shape) == n + 1:  # unbatched: a batch of one, and PyTorch's node on top is the squeeze
        return _transposed_convolution(fn, n, input.unsqueeze(0), weight, bias, stride, padding, output_padding,
                                       groups, dilation).squeeze(0)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._data.dtype != input._data.dtype:
            raise RuntimeError(f"Input type ({input.dtype}) and {name} type ({t.dtype}) should be the same")
    stride, padding, output_padding, dilation = (_ntuple(fn, name, value, n, _CONV_LENGTH) for name, value in (
        ("stride", stride), ("padding", padding), ("output_padding", output_padding), ("dilation", dilation)))
    if len(weight_shape) != len(shape):
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    for name, values, low in (("stride", stride, 1), ("dilation", dilation, 1), ("padding", padding, 0),
                              ("output_padding", output_padding, 0), ("groups", (groups,), 1)):
        if min(values) < low:
            raise RuntimeError(f"{'non-positive' if low else 'negative'} {name} is not supported")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                           f"output_padding={list(output_padding)}, stride={list(stride)}, dilation={list(dilation)}: "
                           "pass output_size to the module, or a smaller output_padding")
    in_channels, channels = weight_shape[0], shape[1]
    if in_channels % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{list(weight.shape)}] instead")
    if in_channels != channels:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {in_channels} channels, but got {channels} channels instead")
    out_channels = weight_shape[1] * groups
    if bias is not None and bias._data.shape != (out_channels,):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size {list(bias.shape)} "
                           "instead")
    out_size = tuple((size - 1) * s - 2 * p + d * (k - 1) + 1 + op for size, s, p, d, k, op in
                     zip(shape[2:], stride, padding, dilation, weight_shape[2:], output_padding))
    if min(out_size) <= 0:
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, shape[2:]))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, out_size))}). Output size is too small")
    if n == 1:  # the conv_transpose2d Function over a height of 1
        stride, padding, dilation = (1, *stride), (0, *padding), (1, *dilation)
    if n == 3:
        return _planes_transposed_convolution(input, weight, bias, stride, padding, dilation, groups, out_size)
    return ConvTranspose2d.apply(input, weight, bias, (stride, padding, dilation, groups), out_size)


# PyTorch's message for a size of unfold and fold that is not one int or two (its int[2] arguments)
_BLOCK_LENGTH = "It is expected {name} equals to {n}, but got size {size}"


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """The sliding blocks of (N, C, H, W) or (C, H, W) ``input`` as columns (im2col): (N, C * kH * kW, L),
    column l holding the cells of the l-th window a conv2d with these sizes sees, channel by channel.

    A conv2d is then one matrix product, ``weight.view(O, -1) @ unfold(x, ...)``: how minigrad's kernel
    computes it, and what unfold runs on (``_im2col``). One ``Im2ColBackward0`` node, as in PyTorch.
    """
    if type(input) not in _TENSORS:
        _check_tensors("unfold", input=input)
    kernel, dilation, padding, stride = _block_sizes("unfold", kernel_size=kernel_size, dilation=dilation,
                                                     padding=padding, stride=stride)
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise IndexError(f"Dimension out of range: unfold takes a 3D (C, H, W) or 4D (N, C, H, W) input, but got "
                         f"input of size {list(shape)}")
    if len(shape) > 4 or 0 in shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    blocks = _block_counts(shape[-2:], kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size {shape[-2:]}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, calculated shape of the array of sliding blocks as {blocks}, but its "
                           "components must be at least one.")
    im2col = lambda t: _im2col(t, kernel, dilation, padding, stride)  # noqa: E731
    return Im2Col.apply(input, im2col, im2col)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """unfold's transpose (col2im): (N, C * kH * kW, L) or (C * kH * kW, L) columns -> (N, C, *output_size),
    each column's cells added back where unfold took them from, overlapping ones summed.

    So fold(unfold(x)) is x times the number of blocks covering each cell. One ``Col2ImBackward0`` node.
    """
    if type(input) not in _TENSORS:
        _check_tensors("fold", input=input)
    output_size, kernel, dilation, padding, stride = _block_sizes(
        "fold", output_size=output_size, kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    shape = tuple(input.shape)
    if len(shape) not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    if shape[-2] % math.prod(kernel):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={shape[-2]} and kernel_size={kernel}.")
    blocks = _block_counts(output_size, kernel, dilation, padding, stride)
    sizes = f"Given output_size={output_size}, kernel_size={kernel}, dilation={dilation}, padding={padding}, " \
            f"stride={stride}"
    if shape[-1] != math.prod(blocks):
        raise RuntimeError(f"{sizes}, expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {math.prod(blocks)}, but got input.size(2)={shape[-1]}.")
    if min(blocks) < 1:
        raise RuntimeError(f"{sizes}, calculated shape of the array of sliding blocks as {blocks}, which is too small "
                           "(non-positive)")
    col2im = lambda t: _col2im(t, output_size, blocks, kernel, dilation, padding, stride)  # noqa: E731
    return Col2Im.apply(input, col2im, col2im)


def _block_sizes(fn: str, **sizes) -> list[tuple[int, int]]:
    """unfold's and fold's sizes as pairs (one int, or exactly two), checked in PyTorch's order."""
    pairs = {}
    for name, value in sizes.items():
        if isinstance(value, (tuple, list)) and len(value) == 1:  # (where _ntuple would repeat it)
            raise RuntimeError(_BLOCK_LENGTH.format(name=name, n=2, size=1))
        pairs[name] = _ntuple(fn, name, value, 2, _BLOCK_LENGTH)
    for name, words, low in (("kernel_size", "kernel size should be greater than zero", 1),
                             ("stride", "stride should be greater than zero", 1),
                             ("dilation", "dilation should be greater than zero", 1),
                             ("padding", "padding should be non-negative", 0)):
        if min(pairs[name]) < low:
            prefix = {"kernel_size": "kernel", "padding": "pad"}.get(name, name)
            raise RuntimeError(f"{words}, but got {prefix}_height: {pairs[name][0]} {prefix}_width: {pairs[name][1]}")
    return list(pairs.values())


def _block_counts(size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> tuple:
    """How many blocks fit along each dimension: a conv2d's output size."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride))


def _one_hot_filters(kernel: tuple, like: Tensor) -> Tensor:
    """kH * kW filters of one channel, filter (i, j) 1 at (i, j) only: a conv2d with them copies cell (i, j) of
    every window to output channel i * kW + j."""
    taps = math.prod(kernel)
    return Tensor._wrap(np.eye(taps, dtype=like._data.dtype).reshape(taps, 1, *kernel))


def _im2col(x: Tensor, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> Tensor:
    """unfold as a conv2d of each channel, on its own, with the one-hot filters."""
    *lead, h, w = x.shape
    planes = x.reshape(math.prod(lead), 1, h, w)
    y = conv2d(planes, _one_hot_filters(kernel, x), None, stride, padding, dilation)  # (N * C, kH * kW, *blocks)
    return y.reshape(*lead[:-1], lead[-1] * y.shape[1], y.shape[2] * y.shape[3])


def _col2im(cols: Tensor, output_size: tuple, blocks: tuple, kernel: tuple, dilation: tuple, padding: tuple,
            stride: tuple) -> Tensor:
    """fold as the transpose of ``_im2col``: a conv_transpose2d of each channel's columns with the one-hot
    filters, output_padding picking output_size among the sizes with this many blocks."""
    *lead, rows, _ = cols.shape
    taps = math.prod(kernel)
    planes = cols.reshape(math.prod(lead) * (rows // taps), taps, *blocks)
    output_padding = [size - ((b - 1) * s - 2 * p + d * (k - 1) + 1)
                      for size, b, s, p, d, k in zip(output_size, blocks, stride, padding, dilation, kernel)]
    y = conv_transpose2d(planes, _one_hot_filters(kernel, cols), None, stride, padding, output_padding, 1, dilation)
    return y.reshape(*lead, rows // taps, *output_size)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """3-D convolution of (N, C, D, H, W) or unbatched (C, D, H, W) ``input`` with
    (out_channels, C / groups, kD, kH, kW) ``weight``, for videos and medical volumes.

    One conv2d over the depth planes each output plane sees, stacked as channels (``_planes_convolution``):
    the Numba kernel does the work, and the composition differentiates to any order.
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv3d", input=input, weight=weight, bias=bias)
    return _convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _planes_convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple, padding: tuple,
                        dilation: tuple, groups: int) -> Tensor:
    """conv3d as one conv2d: output plane z sums, over the kernel's depth k, the 2-D convolution of input plane
    z * stride + k * dilation with weight[:, :, k]; those kD planes side by side as channels (each group's
    together, so ``groups`` carries over) are one conv2d input, of a batch N * D_out."""
    (sd, *s2), (pd, *p2), (dd, *d2) = stride, padding, dilation
    batch, channels, depth, height, width = input.shape
    out_channels, group_channels, kd, kh, kw = weight.shape
    if pd:
        input = pad(input, (0, 0, 0, 0, pd, pd))
    planes = (depth + 2 * pd - dd * (kd - 1) - 1) // sd + 1
    seen = np.arange(planes)[:, None] * sd + np.arange(kd) * dd  # (D_out, kD): the input planes of each output
    x = input[:, :, seen].reshape(batch, groups, group_channels, planes, kd, height, width)
    x = x.permute(0, 3, 1, 4, 2, 5, 6).reshape(batch * planes, groups * kd * group_channels, height, width)
    w = weight.permute(0, 2, 1, 3, 4).reshape(out_channels, kd * group_channels, kh, kw)
    y = Conv2d.apply(x, w, bias, tuple(s2), tuple(p2), tuple(d2), groups)
    return y.reshape(batch, planes, out_channels, *y.shape[2:]).transpose(1, 2)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transposed 3-D convolution of (N, C, D, H, W) or unbatched (C, D, H, W) ``input`` with
    (C, out_channels / groups, kD, kH, kW) ``weight``: conv3d's gradient with respect to its input
    (see ``conv_transpose2d``), as one conv_transpose2d over the depth planes (``_planes_transposed_convolution``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv_transpose3d", input=input, weight=weight, bias=bias)
    return _transposed_convolution("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding,
                                   groups, dilation)


def _planes_transposed_convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple,
                                   padding: tuple, dilation: tuple, groups: int, out_size: tuple) -> Tensor:
    """conv_transpose3d as one conv_transpose2d: input plane z, transposed-convolved with weight[:, :, k], lands on
    output plane z * stride + k * dilation - padding. The kD weights side by side as output channels give every
    (z, k) pair at once; each k's planes are then spread ``stride`` apart and added at their offset."""
    (sd, *s2), (pd, *p2), (dd, *d2) = stride, padding, dilation
    batch, channels, depth, height, width = input.shape
    _, group_out, kd, kh, kw = weight.shape
    w = weight.permute(0, 2, 1, 3, 4).reshape(channels, kd * group_out, kh, kw)
    x = input.transpose(1, 2).reshape(batch * depth, channels, height, width)
    y = ConvTranspose2d.apply(x, w, None, (tuple(s2), tuple(p2), tuple(d2), groups), tuple(out_size[1:]))
    y = y.reshape(batch, depth, groups, kd, group_out, *out_size[1:])
    full = out_size[0] + 2 * pd  # every plane before the padding is cut off
    out = None
    for k in range(kd):
        planes = y[:, :, :, k]  # (N, D, G, O / G, H', W')
        if sd > 1:  # spread stride apart: stride - 1 planes of zeros after each
            planes = pad(planes.unsqueeze(2), (0, 0) * 4 + (0, sd - 1)).flatten(1, 2)[:, :(depth - 1) * sd + 1]
        planes = pad(planes, (0, 0) * 4 + (k * dd, full - k * dd - planes.shape[1]))
        out = planes if out is None else out + planes
    out = out[:, pd:pd + out_size[0]].reshape(batch, out_size[0], groups * group_out, *out_size[1:]).transpose(1, 2)
    return out if bias is None else out + bias.reshape(-1, 1, 1, 1)
