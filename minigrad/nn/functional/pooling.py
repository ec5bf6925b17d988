"""Pooling: max, average, adaptive and power-average (``lp_pool``) pools in one to three dimensions,
the ``*_with_indices`` forms, and ``max_unpool``.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.dtypes import int64, scalar_type_name
from minigrad.functional_ops import cat, where
from minigrad.nn.ops.conv import (
    AdaptiveMaxPool2d, MaxPool2d, adaptive_bins, adaptive_windows, pool_out_size, pool_windows,
)
from minigrad.nn.ops.linear_map import AdaptiveAvgPool2d, AdaptiveAvgPool3d, AvgPool2d, AvgPool3d, MaxUnpool
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _check_tensors
from minigrad.nn.functional.padding import pad
from minigrad.nn.functional.conv import _CONV_LENGTH, _MAX_POOL1D_LENGTH, _POOL1D_LENGTH, _POOL2D_LENGTH, _ntuple


def _window_sum(x: Tensor, kernel: tuple[int, int], stride: tuple[int, int], out_hw: tuple[int, int]) -> Tensor:
    """Sum of each kernel window of NCHW ``x``: one strided slice per kernel offset, added up.

    Slices are views and addition is differentiable to any order, so the pool
    needs no Function of its own (at kH * kW nodes, fine for small kernels).
    """
    (kh, kw), (sh, sw), (oh, ow) = kernel, stride, out_hw
    total = None
    for i in range(kh):
        for j in range(kw):
            part = x[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
            total = part if total is None else total + part
    return total


def _pool_geometry(fn: str, input: Tensor, kernel_size, stride, padding, dilation, ceil_mode: bool) -> tuple:
    """(kernel, stride, padding, dilation, output (H, W)) of a 2-D pool, as pairs, with PyTorch's checks."""
    kernel = _ntuple(fn, "kernel_size", kernel_size, 2, _POOL2D_LENGTH)
    strides = kernel if stride in (None, [], ()) else _ntuple(fn, "stride", stride, 2, _POOL2D_LENGTH)
    pads = _ntuple(fn, "padding", padding, 2, _POOL2D_LENGTH)
    dilations = _ntuple(fn, "dilation", dilation, 2, _POOL2D_LENGTH)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, got {input.ndim}D")
    if min(strides) <= 0:
        raise RuntimeError("stride should not be zero" if 0 in strides else
                           f"stride should be greater than zero, but got dH: {strides[0]} dW: {strides[1]}")
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}")
    if min(dilations) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dilations[0]} "
                           f"dilationW: {dilations[1]}")
    for k, p, d in zip(kernel, pads, dilations):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    if any(p > k // 2 for k, p in zip(kernel, pads)):  # (PyTorch checks both halves: this one ignores dilation)
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pads[1]}, "
                           f"padH = {pads[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
    out_hw = tuple(pool_out_size(n, k, s, p, ceil_mode, d)
                   for n, k, s, p, d in zip(input.shape[-2:], kernel, strides, pads, dilations))
    if min(out_hw) < 1:
        sizes = "x".join(map(str, input.shape[-3:])), "x".join(map(str, (input.shape[-3],) + out_hw))
        raise RuntimeError(f"Given input size: ({sizes[0]}). Calculated output size: ({sizes[1]}). "
                           f"Output size is too small")
    return kernel, strides, pads, dilations, out_hw


def _single(fn: str, name: str, value, wrong_length: str = _POOL1D_LENGTH) -> int:
    """A 1-D pool's size: an int or a sequence of one."""
    return _ntuple(fn, name, value, 1, wrong_length)[0]


def _check_1d_pool_input(fn: str, input: Tensor) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {fn})")


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The max of each window of (N, C, L) or (C, L) ``input``: ``max_pool2d`` over a height of 1, as in PyTorch
    (whose node on top is the squeeze); the indices, if returned, are positions along L.

    max_pool1d's own checks come first, with its messages, as in PyTorch.
    """
    if type(input) not in _TENSORS:
        _check_tensors("max_pool1d", input=input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    k = _single("max_pool1d", "kernel_size", kernel_size, _MAX_POOL1D_LENGTH)
    s = k if stride in (None, [], ()) else _single("max_pool1d", "stride", stride, _MAX_POOL1D_LENGTH)
    p = _single("max_pool1d", "padding", padding, _MAX_POOL1D_LENGTH)
    d = _single("max_pool1d", "dilation", dilation, _MAX_POOL1D_LENGTH)
    for name, value, bad, needs in (("kernel_size", k, k <= 0, "greater than zero"),
                                    ("stride", s, s <= 0, "greater than zero"), ("padding", p, p < 0, "non-negative"),
                                    ("dilation", d, d <= 0, "greater than zero")):
        if bad:
            raise RuntimeError(f"max_pool1d() {name} must be {needs}, but got {value}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    out = pool_out_size(input.shape[-1], k, s, p, ceil_mode, d)
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    out = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    return tuple(t.squeeze(-2) for t in out) if return_indices else out.squeeze(-2)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The max of each kernel_size window of (N, C, H, W) or (C, H, W) ``input``; ``stride`` defaults to
    ``kernel_size``.

    Padding counts as -inf (it never wins); ``dilation`` spaces a window's cells; with ``ceil_mode`` a
    last, partial window is kept. ``return_indices``: also where each max came from (flat in H*W).
    One node, differentiable to any order.
    """
    if type(input) not in _TENSORS:
        _check_tensors("max_pool2d", input=input)
    kernel, strides, pads, dilations, _ = _pool_geometry("max_pool2d", input, kernel_size, stride, padding,
                                                         dilation, ceil_mode)
    return MaxPool2d.apply(input, kernel, strides, pads, dilations, ceil_mode, return_indices)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each window of (N, C, L) or (C, L) ``input``: ``avg_pool2d`` over a height of 1, as in PyTorch."""
    if type(input) not in _TENSORS:
        _check_tensors("avg_pool1d", input=input)
    _check_1d_pool_input("avg_pool1d", input)
    k = _single("avg_pool1d", "kernel_size", kernel_size)
    s = k if stride in (None, [], ()) else _single("avg_pool1d", "stride", stride)
    p = _single("avg_pool1d", "padding", padding)
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad).squeeze(-2)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each kernel_size window of (N, C, H, W) or (C, H, W) ``input``.

    ``stride`` defaults to ``kernel_size``. Zero padding counts in the divisor
    unless ``count_include_pad=False``; ``divisor_override`` replaces the
    divisor. With ``ceil_mode`` a last, partial window is kept (its divisor
    counts only the cells inside input and padding, as in PyTorch).
    """
    if type(input) not in _TENSORS:
        _check_tensors("avg_pool2d", input=input)
    kernel, strides, pads, _, out_hw = _pool_geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    h, w = input.shape[-2:]
    # Pad by `padding`, plus zeros past the padding for the windows ceil_mode adds.
    extra = [max(0, (o - 1) * s + k - (n + 2 * p)) for o, s, k, n, p in zip(out_hw, strides, kernel, (h, w), pads)]

    def pooled(t: Tensor) -> Tensor:
        batched = t if t.ndim == 4 else t.unsqueeze(0)
        padded = pad(batched, (pads[1], pads[1] + extra[1], pads[0], pads[0] + extra[0]))
        sums = _window_sum(padded, kernel, strides, out_hw)
        if divisor_override is not None:
            out = sums / divisor_override
        else:
            counted = np.zeros((1, 1) + padded.shape[2:], dtype=padded._data.dtype)  # cells that count
            if count_include_pad:
                counted[..., :h + 2 * pads[0], :w + 2 * pads[1]] = 1
            else:
                counted[..., pads[0]:pads[0] + h, pads[1]:pads[1] + w] = 1
            out = sums / _window_sum(Tensor._wrap(counted), kernel, strides, out_hw)
        return out if t.ndim == 4 else out.squeeze(0)
    return AvgPool2d.apply(input, pooled, pooled)


def _output_sizes(fn: str, input: Tensor, output_size, n: int) -> tuple:
    """An adaptive pool's ``output_size`` for ``n`` dimensions: an int for all, or one per dimension with
    None keeping the input's size there; PyTorch's checks of its form."""
    if isinstance(output_size, (int, np.integer)):
        return (int(output_size),) * n
    sizes = tuple(output_size)
    if input.ndim <= len(sizes):
        raise ValueError(f"Input dimension should be at least {len(sizes) + 1}")
    sizes = tuple(size if o is None else o for o, size in zip(sizes, input.shape[-len(sizes):]))
    if not all(isinstance(o, (int, np.integer)) for o in sizes):
        raise TypeError(f"{fn}(): argument 'output_size' must be tuple of ints, but got {output_size!r}")
    return sizes


def _adaptive_sizes(fn: str, input: Tensor, output_size) -> tuple[int, int]:
    """An adaptive 2-D pool's output (H, W): ``output_size`` an int or a pair, None keeping that dimension;
    PyTorch's checks."""
    sizes = _output_sizes(fn, input, output_size, 2)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{fn}(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    if len(sizes) != 2:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be 2")
    if min(sizes) < 0:
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{sizes[0]}, {sizes[1]}}}")
    for dim in (input.ndim - 2, input.ndim - 1):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {dim} being empty")
    return int(sizes[0]), int(sizes[1])


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, L) or (C, L) ``input`` down to ``output_size`` cells: adaptive_avg_pool2d over a height of 1."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_avg_pool1d", input=input)
    _check_1d_pool_input("adaptive_avg_pool1d", input)
    size = _single("adaptive_avg_pool1d", "output_size", output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, H, W) or (C, H, W) ``input`` down to ``output_size`` cells, whatever H and W are.

    ``output_size`` is an int or a pair; None in the pair keeps that dimension.
    ``adaptive_avg_pool2d(x, 1)`` is the global average pool of a CNN's head.
    """
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_avg_pool2d", input=input)
    oh, ow = _adaptive_sizes("adaptive_avg_pool2d", input, output_size)
    h, w = input.shape[-2:]
    if (oh, ow) == (1, 1):  # the global average: PyTorch's node is a mean's too
        return input.mean((-2, -1), keepdim=True)

    def pooled(t: Tensor) -> Tensor:
        rows = [t[..., a:b, :].mean(-2, keepdim=True) for a, b in adaptive_bins(h, oh)] or [t[..., :0, :]]
        x = cat(rows, -2) if len(rows) > 1 else rows[0]
        cols = [x[..., a:b].mean(-1, keepdim=True) for a, b in adaptive_bins(w, ow)] or [x[..., :0]]
        return cat(cols, -1) if len(cols) > 1 else cols[0]
    return AdaptiveAvgPool2d.apply(input, pooled, pooled)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """The max of each of ``output_size`` bins of (N, C, L) or (C, L) ``input``: ``adaptive_max_pool2d`` over a
    height of 1."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool1d", input=input)
    _check_1d_pool_input("adaptive_max_pool1d", input)
    size = _single("adaptive_max_pool1d", "output_size", output_size)
    out = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices)
    return tuple(t.squeeze(-2) for t in out) if return_indices else out.squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """The max of each of PyTorch's adaptive bins (as in ``adaptive_avg_pool2d``) of (N, C, H, W) or (C, H, W)
    ``input``; ``return_indices``: also where each max came from (flat in H*W). One node."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool2d", input=input)
    return AdaptiveMaxPool2d.apply(input, _adaptive_sizes("adaptive_max_pool2d", input, output_size), return_indices)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False) -> Tensor:
    """The p-norm (sum of x^p) ** (1/p) of each window of (N, C, L) or (C, L) ``input``, p = ``norm_type``:
    p = 1 is sum pooling, p = inf max pooling of |x|. An average pool of x^p, times the window size."""
    if type(input) not in _TENSORS:
        _check_tensors("lp_pool1d", input=input)
    if type(kernel_size) is not int:
        raise TypeError(f"lp_pool1d: kernel_size must be an int, but got {kernel_size!r}")
    if norm_type in (math.inf, -math.inf):
        return _lp_pool_limit(max_pool1d, input, norm_type, kernel_size, stride, ceil_mode)
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``lp_pool1d`` over (N, C, H, W) or (C, H, W) ``input``, in kernel_size windows (an int or a pair)."""
    if type(input) not in _TENSORS:
        _check_tensors("lp_pool2d", input=input)
    kernel = _ntuple("lp_pool2d", "kernel_size", kernel_size, 2, _POOL2D_LENGTH)
    if norm_type in (math.inf, -math.inf):
        return _lp_pool_limit(max_pool2d, input, norm_type, kernel_size, stride, ceil_mode)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel[0] * kernel[1]).pow(1.0 / norm_type)


def _lp_pool_limit(max_pool, input: Tensor, norm_type: float, kernel_size, stride, ceil_mode: bool) -> Tensor:
    """The p-norm's limits: the largest |x| of each window for p = inf, the smallest for p = -inf."""
    if norm_type > 0:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` returning (values, indices) whatever ``return_indices`` says (PyTorch's name for it)."""
    if type(input) not in _TENSORS:
        _check_tensors("max_pool1d_with_indices", input=input)
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` returning (values, indices) whatever ``return_indices`` says (PyTorch's name for it)."""
    if type(input) not in _TENSORS:
        _check_tensors("max_pool2d_with_indices", input=input)
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d`` returning (values, indices) whatever ``return_indices`` says."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool1d_with_indices", input=input)
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d`` returning (values, indices) whatever ``return_indices`` says."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool2d_with_indices", input=input)
    return adaptive_max_pool2d(input, output_size, return_indices=True)


_POOL3D_LENGTH = "{fn}: {name} must be a single int, or a tuple of three ints"  # (max_pool3d's: "must either be")


def _pool3d_geometry(fn: str, input: Tensor, kernel_size, stride, padding, dilation, ceil_mode: bool) -> tuple:
    """(kernel, stride, padding, dilation, output (D, H, W)) of a 3-D pool, as triples, with PyTorch's checks
    (pool3d_shape_check; avg_pool3d's also refuses an input smaller than the kernel, padding or not)."""
    length = _POOL3D_LENGTH.replace("must be", "must either be") if fn == "max_pool3d" else _POOL3D_LENGTH
    kernel = _ntuple(fn, "kernel_size", kernel_size, 3, length)
    strides = kernel if stride in (None, [], ()) else _ntuple(fn, "stride", stride, 3, length)
    pads = _ntuple(fn, "padding", padding, 3, length)
    dilations = _ntuple(fn, "dilation", dilation, 3, length)
    named = [" ".join(f"{axis}: {v}" for axis, v in zip(names, values)) for names, values in
             ((("kT", "kH", "kW"), kernel), (("dT", "dH", "dW"), strides),
              (("dilationT", "dilationH", "dilationW"), dilations))]
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got {named[0]}")
    if min(strides) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got {named[1]}")
    if min(dilations) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {named[2]}")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{fn}: Expected 4D or 5D tensor for input, but got: {list(input.shape)}")
    if fn == "avg_pool3d" and any(n < k for n, k in zip(input.shape[-3:], kernel)):
        sizes = " ".join(f"{axis}: {n}" for axis, n in zip("THW", input.shape[-3:]))
        raise RuntimeError(f"input image ({sizes}) smaller than kernel size ({named[0]})")
    if min(pads) < 0 or any(p > k // 2 for k, p in zip(kernel, pads)):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {kernel[0]} "
                           f"kW: {kernel[2]} kH: {kernel[1]} padT: {pads[0]} padW: {pads[2]} padH: {pads[1]}")
    out = tuple(pool_out_size(n, k, s, p, ceil_mode, d)
                for n, k, s, p, d in zip(input.shape[-3:], kernel, strides, pads, dilations))
    if min(out) < 1 or 0 in input.shape[-3:]:
        sizes = "x".join(map(str, input.shape[-4:])), "x".join(map(str, (input.shape[-4],) + out))
        raise RuntimeError(f"Given input size: ({sizes[0]}). Calculated output size: ({sizes[1]}). "
                           "Output size is too small")
    return kernel, strides, pads, dilations, out


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each kernel_size window of (N, C, D, H, W) or (C, D, H, W) ``input``; ``avg_pool2d``'s
    options. A sum of strided slices, one per kernel cell, as one node (``AvgPool3DBackward0``)."""
    if type(input) not in _TENSORS:
        _check_tensors("avg_pool3d", input=input)
    kernel, strides, pads, _, out = _pool3d_geometry("avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    sizes = input.shape[-3:]
    extra = [max(0, (o - 1) * s + k - (n + 2 * p)) for o, s, k, n, p in zip(out, strides, kernel, sizes, pads)]
    widths = [amount for i in (2, 1, 0) for amount in (pads[i], pads[i] + extra[i])]

    def window_sums(t: Tensor) -> Tensor:
        total = None
        for offset in np.ndindex(*kernel):
            part = t[(Ellipsis, *(slice(i, i + s * (o - 1) + 1, s) for i, s, o in zip(offset, strides, out)))]
            total = part if total is None else total + part
        return total

    def pooled(t: Tensor) -> Tensor:
        sums = window_sums(pad(t, widths))
        if divisor_override is not None:
            return sums / divisor_override
        counted = np.zeros(tuple(n + 2 * p + e for n, p, e in zip(sizes, pads, extra)), t._data.dtype)
        counted[tuple(slice(0, n + 2 * p) if count_include_pad else slice(p, p + n)
                      for n, p in zip(sizes, pads))] = 1
        return sums / window_sums(Tensor._wrap(counted))
    return AvgPool3d.apply(input, pooled, pooled)


def _max_over_windows(input: Tensor, windows: list, return_indices: bool, starts: list | None = None):
    """The max of each window of the last three dimensions, with its flat index in D*H*W.

    ``windows`` holds, per dimension, ``window_cells``' (out, k) cells and which windows are empty: the
    cells are gathered into (..., D_out, H_out, W_out, kD*kH*kW) and reduced with max, whose gradient goes to
    the cell it picked. Cells outside a window repeat its nearest inside cell, so the first max is PyTorch's.
    An empty window (dilated, over padding alone) is -inf at PyTorch's index: that of its first tap at or
    past 0 (``starts``, per dimension), outside the input.
    """
    (cd, _), (ch, _), (cw, _) = windows
    if 0 in (len(cd), len(ch), len(cw)):  # an output size of 0: nothing to take the max of
        values = input.flatten(-3)[..., :0].reshape(*input.shape[:-3], len(cd), len(ch), len(cw))
        return (values, Tensor._wrap(np.zeros(values.shape, np.int64))) if return_indices else values
    k = cd.shape[1] * ch.shape[1] * cw.shape[1]
    d = cd[:, None, None, :, None, None]
    h = ch[None, :, None, None, :, None]
    w = cw[None, None, :, None, None, :]
    values = input[(Ellipsis, d, h, w)]
    values, picked = values.reshape(*values.shape[:-3], k).max(-1)
    empty = windows[0][1][:, None, None] | windows[1][1][None, :, None] | windows[2][1][None, None, :]
    if empty.any():  # a dilated window over padding alone: -inf, as in PyTorch
        values = where(Tensor._wrap(empty), Tensor._wrap(np.array(-np.inf, input._data.dtype)), values)
    if not return_indices:
        return values
    depth, height, width = input.shape[-3:]
    flat = (d * height + h) * width + w
    flat = flat.reshape(*flat.shape[:3], k)
    indices = np.take_along_axis(np.broadcast_to(flat, (*picked.shape, k)), picked._data[..., None], -1)[..., 0]
    if empty.any():
        sd, sh, sw = np.meshgrid(*starts, indexing="ij")
        indices = np.where(empty, (sd * height + sh) * width + sw, indices)
    return values, Tensor._wrap(indices.astype(np.int64))


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The max of each kernel_size window of (N, C, D, H, W) or (C, D, H, W) ``input``; ``max_pool2d``'s options,
    the indices flat in D*H*W. Composed of a gather and a max (``_max_over_windows``)."""
    if type(input) not in _TENSORS:
        _check_tensors("max_pool3d", input=input)
    kernel, strides, pads, dilations, _ = _pool3d_geometry("max_pool3d", input, kernel_size, stride, padding,
                                                           dilation, ceil_mode)
    windows = [pool_windows(n, k, s, p, d, ceil_mode)
               for n, k, s, p, d in zip(input.shape[-3:], kernel, strides, pads, dilations)]
    firsts = [np.arange(len(cells)) * s - p for (cells, _), s, p in zip(windows, strides, pads)]
    starts = [first + d * (np.maximum(-first, 0) // d + (np.maximum(-first, 0) % d > 0))
              for first, d in zip(firsts, dilations)]
    return _max_over_windows(input, windows, return_indices, starts)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool3d`` returning (values, indices) whatever ``return_indices`` says (PyTorch's name for it)."""
    if type(input) not in _TENSORS:
        _check_tensors("max_pool3d_with_indices", input=input)
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def _adaptive_sizes3d(fn: str, input: Tensor, output_size) -> tuple[int, int, int]:
    """An adaptive 3-D pool's output (D, H, W): an int or a triple, None keeping that dimension."""
    sizes = _output_sizes(fn, input, output_size, 3)
    if len(sizes) != 3:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be 3")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{fn}(): Expected 4D or 5D tensor, but got {list(input.shape)}")
    if min(sizes) < 0:
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, sizes))}}}")
    for dim in range(input.ndim - 3, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {dim} being empty")
    return tuple(int(o) for o in sizes)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, D, H, W) or (C, D, H, W) ``input`` down to ``output_size`` cells (an int or a triple, None
    keeping that dimension), in PyTorch's bins (``adaptive_bins``); one node."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_avg_pool3d", input=input)
    out = _adaptive_sizes3d("adaptive_avg_pool3d", input, output_size)
    if out == (1, 1, 1):  # the global average: PyTorch's node is a mean's too
        return input.mean((-3, -2, -1), keepdim=True)
    sizes = input.shape[-3:]

    def pooled(t: Tensor) -> Tensor:
        for dim, n, o in zip((-3, -2, -1), sizes, out):
            parts = [t.narrow(dim, a, b - a).mean(dim, keepdim=True) for a, b in adaptive_bins(n, o)]
            t = (cat(parts, dim) if len(parts) > 1 else parts[0]) if parts else t.narrow(dim, 0, 0)
        return t
    return AdaptiveAvgPool3d.apply(input, pooled, pooled)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """The max of each of PyTorch's adaptive bins of (N, C, D, H, W) or (C, D, H, W) ``input``;
    ``return_indices``: also where each came from (flat in D*H*W)."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool3d", input=input)
    out = _adaptive_sizes3d("adaptive_max_pool3d", input, output_size)
    windows = [adaptive_windows(n, o) for n, o in zip(input.shape[-3:], out)]
    return _max_over_windows(input, windows, return_indices)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d`` returning (values, indices) whatever ``return_indices`` says."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool3d_with_indices", input=input)
    return adaptive_max_pool3d(input, output_size, return_indices=True)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``lp_pool1d`` over (N, C, D, H, W) or (C, D, H, W) ``input``, in kernel_size windows (an int or a triple)."""
    if type(input) not in _TENSORS:
        _check_tensors("lp_pool3d", input=input)
    kernel = _ntuple("lp_pool3d", "kernel_size", kernel_size, 3, _POOL3D_LENGTH)
    if norm_type in (math.inf, -math.inf):
        return _lp_pool_limit(max_pool3d, input, norm_type, kernel_size, stride, ceil_mode)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(math.prod(kernel)).pow(1.0 / norm_type)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``max_pool1d``'s partial inverse: each value of (N, C, L) or (C, L) ``input`` put back at its index
    (from ``return_indices=True``), zeros everywhere else. ``output_size`` picks among the lengths a
    max_pool1d maps to L (default: the smallest)."""
    if type(input) not in _TENSORS or type(indices) not in _TENSORS:
        _check_tensors("max_unpool1d", input=input, indices=indices)
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 1)
    return _max_unpool("max_unpooling2d", input.unsqueeze(-1), indices.unsqueeze(-1), [*size, 1], 2).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``max_unpool1d`` for ``max_pool2d``: (N, C, H, W) or (C, H, W) values put back at their flat indices in the
    (H_out, W_out) output, zeros elsewhere. One node, ``MaxUnpool2DBackward0``."""
    if type(input) not in _TENSORS or type(indices) not in _TENSORS:
        _check_tensors("max_unpool2d", input=input, indices=indices)
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 2)
    return _max_unpool("max_unpooling2d", input, indices, size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``max_unpool2d`` for ``max_pool3d``: (N, C, D, H, W) or (C, D, H, W) values at their flat indices."""
    if type(input) not in _TENSORS or type(indices) not in _TENSORS:
        _check_tensors("max_unpool3d", input=input, indices=indices)
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 3)
    return _max_unpool("max_unpooling3d", input, indices, size, 3)


def _unpool_size(input: Tensor, kernel_size, stride, padding, output_size, n: int) -> list[int]:
    """PyTorch's _unpool_output_size: (in - 1) * stride + kernel - 2 * padding, or ``output_size`` (with or without
    N and C) if it lies strictly within a stride of that."""
    fn = f"max_unpool{n}d"
    kernel = _ntuple(fn, "kernel_size", kernel_size, n, _CONV_LENGTH)
    strides = kernel if stride is None else _ntuple(fn, "stride", stride, n, _CONV_LENGTH)
    pads = _ntuple(fn, "padding", padding, n, _CONV_LENGTH)
    default = [(input.shape[i - n] - 1) * strides[i] + kernel[i] - 2 * pads[i] for i in range(n)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length "
                         f"of '{len(output_size)}'")
    for d in range(n):
        low, high = default[d] - strides[d], default[d] + strides[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return [int(o) for o in output_size]


def _max_unpool(fn: str, input: Tensor, indices: Tensor, size: list, n: int) -> Tensor:
    """The scatter, with PyTorch's checks of max_unpooling2d/3d."""
    if indices.dtype != int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {scalar_type_name(indices.dtype)}")
    if n == 2 and len(size) != 2:
        raise RuntimeError(f"There should be exactly two elements (height, width) in output_size, but got "
                           f"{len(size)} elements.")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to {fn} should be a {n + 1}d or {n + 2}d Tensor, but got a tensor with "
                           f"{input.ndim} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(indices.shape)}) "
                           f"but got indices tensor with shape: {list(input.shape)}")
    for dim in range(1, input.ndim):
        if input.shape[dim] <= 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but got "
                               f"{list(input.shape)} with dimension {dim} being empty.")
    cells = math.prod(size)
    index = indices._data.reshape(*input.shape[:-n], -1)
    bad = (index < 0) | (index >= cells)
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {index[bad][0]} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")
    lead = tuple(input.shape[:-n])
    where_to = Tensor._wrap(index)

    def unpooled(t: Tensor) -> Tensor:
        zeros = Tensor._wrap(np.zeros((*lead, cells), t._data.dtype))
        return zeros.scatter(-1, where_to, t.reshape(*lead, -1)).reshape(*lead, *size)
    return MaxUnpool[n].apply(input, unpooled, unpooled)
