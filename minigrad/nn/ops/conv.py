"""conv2d, conv_transpose2d and max_pool2d as Functions around the kernels in ``minigrad.kernels``.

A convolution built from tensor operations (unfold, reshape, matmul) would
record dozens of nodes and copy every window through NumPy; here forward and
backward are one kernel call each. Kernels compute with NumPy arrays, which
autograd cannot see, so each backward has two paths, as PyTorch's:

- an ordinary backward (grad mode off) calls the kernel and wraps its arrays;
- under ``create_graph=True`` (grad mode on during backward) the backward is a
  node of its own (``ConvolutionBackward``, ``MaxPool2dBackward``): its forward
  calls the same kernel, and its backward is written with conv2d, the backward
  node itself and gather, so it can be differentiated again, to any order.

The second derivatives follow from linearity: the input gradient of a
convolution is linear in (grad, weight) and the weight gradient in (grad, x),
so each derivative of a gradient is another convolution or convolution
gradient (see ``ConvolutionBackward.backward``).

The kernels know stride and padding only; the rest is arranged around them. A
dilated kernel is the kernel spread out with zeros between its taps; ``groups``
are one kernel call per slice of the channels; a conv1d is a conv2d over a
height of 1. A transposed convolution is conv2d's input gradient, so it needs no kernel of its
own (``ConvTranspose2d``). A max pool with dilation or ceil_mode, and an adaptive max pool,
copy each window's cells side by side and let the kernel pool those with
stride = kernel (``_windowed_max``), arranged so that it picks the cell
PyTorch's kernel picks, ties included.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import kernels
from minigrad.kernels import reference as ref
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.functional_ops import cat
from minigrad._tensor import Tensor


def _wrapped(arrays: tuple) -> tuple:
    return tuple(None if a is None else Tensor._wrap(a) for a in arrays)


# -- convolution ------------------------------------------------------------------
class Conv2d(Function):
    """y = conv2d(x, weight, bias); backward gives the gradients of all three in one kernel call.

    ``dilation`` and ``groups`` as in PyTorch (see ``_convolve``). A 3-D x and weight are a conv1d's,
    computed as a conv2d over a height of 1 (stride, padding and dilation are then pairs whose
    first entries are 1, 0 and 1).
    """

    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding, dilation=1, groups=1):
        ctx.save_for_backward(x, weight)
        ctx.geometry = stride, padding, dilation, groups
        return Tensor._wrap(_convolve(x._data, weight._data, None if bias is None else bias._data, *ctx.geometry))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        needed = tuple(ctx.needs_input_grad[:3])  # the first layer needs no gradient for its input images
        if is_grad_enabled():
            grads = ConvolutionBackward.apply(grad, x, weight, ctx.geometry, needed)
        else:
            grads = _wrapped(_convolve_backward(x._data, weight._data, grad._data, *ctx.geometry, needed))
        return (*grads, None, None, None, None)


class ConvolutionBackward(Function):
    """conv2d's backward as a node: (grad_x, grad_weight, grad_bias) from (grad, x, weight).

    With gg_x, gg_weight and gg_bias the gradients of its three outputs:

        d/d grad   = conv2d(gg_x, weight) + conv2d(x, gg_weight) + gg_bias (broadcast)
        d/d x      = the input gradient of a conv with weight gg_weight, for output gradient grad
        d/d weight = the weight gradient of a conv of gg_x, for output gradient grad
    """

    node_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x, weight, geometry, needed):
        ctx.save_for_backward(grad, x, weight)
        ctx.set_materialize_grads(False)  # an output nobody differentiated gives None, and its terms are skipped
        ctx.geometry = geometry
        return _wrapped(_convolve_backward(x._data, weight._data, grad._data, *geometry, needed))

    @staticmethod
    def backward(ctx, gg_x, gg_weight, gg_bias):
        grad, x, weight = ctx.saved_tensors
        need_grad, need_x, need_weight = ctx.needs_input_grad[:3]
        geometry = ctx.geometry
        d_grad = d_x = d_weight = None
        if need_grad:
            terms = [Conv2d.apply(gg_x, weight, None, *geometry) if gg_x is not None else None,
                     Conv2d.apply(x, gg_weight, None, *geometry) if gg_weight is not None else None,
                     gg_bias.reshape(1, -1, *[1] * (grad.ndim - 2)).expand(grad.shape) if gg_bias is not None
                     else None]
            for term in terms:
                if term is not None:
                    d_grad = term if d_grad is None else d_grad + term
        if need_x and gg_weight is not None:
            d_x = ConvolutionBackward.apply(grad, x, gg_weight, geometry, (True, False, False))[0]
        if need_weight and gg_x is not None:
            d_weight = ConvolutionBackward.apply(grad, gg_x, weight, geometry, (False, True, False))[1]
        return d_grad, d_x, d_weight, None, None


def _planar(a: np.ndarray) -> np.ndarray:
    """A conv1d's (N, C, L) array as conv2d's (N, C, 1, L); a 4-D one as it is."""
    return a[:, :, None, :] if a.ndim == 3 else a


def _dilated(weight: np.ndarray, dilation) -> np.ndarray:
    """The kernel with dilation - 1 zeros between its taps: a conv with it is the dilated conv."""
    if dilation == 1 or dilation == (1, 1):
        return weight
    dh, dw = ref.pair("dilation", dilation)
    o, c, kh, kw = weight.shape
    spread = np.zeros((o, c, (kh - 1) * dh + 1, (kw - 1) * dw + 1), weight.dtype)
    spread[:, :, ::dh, ::dw] = weight
    return spread


def _join(parts: list, axis: int) -> np.ndarray | None:
    if parts[0] is None:
        return None
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis)


def _convolve(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, stride, padding, dilation,
              groups: int) -> np.ndarray:
    """PyTorch's conv2d (or conv1d) from the kernel's plain one: the dilated kernel spread out with zeros
    (``_dilated``), and each of the ``groups`` convolving its own slice of the channels with its own filters."""
    x4, w4 = _planar(x), _dilated(_planar(weight), dilation)
    if groups == 1:
        y = kernels.conv2d_forward(x4, w4, bias, stride, padding)
    else:
        c, o = x4.shape[1] // groups, w4.shape[0] // groups
        y = np.concatenate([kernels.conv2d_forward(x4[:, g * c:(g + 1) * c], w4[g * o:(g + 1) * o],
                                                   None if bias is None else bias[g * o:(g + 1) * o], stride, padding)
                            for g in range(groups)], 1)
    return y[:, :, 0] if x.ndim == 3 else y


def _convolve_backward(x: np.ndarray, weight: np.ndarray, grad: np.ndarray, stride, padding, dilation, groups: int,
                       needed: tuple) -> tuple:
    """(grad_x, grad_weight, grad_bias) of ``_convolve``, None where ``needed`` says so; the weight's
    gradient is the spread kernel's, at the taps."""
    x4, w4, g4 = _planar(x), _planar(weight), _planar(grad)
    spread = _dilated(w4, dilation)
    if groups == 1:  # (the common case, without slicing and joining)
        grad_x, grad_weight, grad_bias = kernels.conv2d_backward(x4, spread, g4, stride, padding, needed)
    else:
        c, o = x4.shape[1] // groups, w4.shape[0] // groups
        parts = [kernels.conv2d_backward(x4[:, g * c:(g + 1) * c], spread[g * o:(g + 1) * o],
                                         g4[:, g * o:(g + 1) * o], stride, padding, needed) for g in range(groups)]
        grad_x, grad_weight, grad_bias = (_join([p[i] for p in parts], 0 if i else 1) for i in range(3))
    if grad_weight is not None and spread is not w4:  # dilated: the gradient at the taps
        dh, dw = ref.pair("dilation", dilation)
        grad_weight = np.ascontiguousarray(grad_weight[:, :, ::dh, ::dw])
    if x.ndim == 3:
        grad_x = None if grad_x is None else grad_x[:, :, 0]
        grad_weight = None if grad_weight is None else grad_weight[:, :, 0]
    return grad_x, grad_weight, grad_bias


# -- transposed convolution ---------------------------------------------------------
class ConvTranspose2d(Function):
    """y = conv_transpose2d(x, weight, bias): the input gradient of a conv2d with ``weight`` (whose
    input has y's shape), for the output gradient x; plus the bias.

    So forward is conv2d's backward kernel call, and backward is conv2d itself (x's gradient) and
    conv2d's weight gradient with the roles of image and output gradient swapped: the kernels and
    nodes conv2d already has (``Conv2d``, ``ConvolutionBackward``), so it differentiates to any
    order. ``geometry`` is conv2d's (stride, padding, dilation, groups); ``out_size`` is y's spatial
    size, which output_padding chose among those a conv2d maps back to x's size. A 3-D x and weight
    are a conv_transpose1d's, as in ``Conv2d``.
    """

    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, geometry, out_size):
        ctx.save_for_backward(x, weight)
        ctx.geometry = geometry
        ctx.extra = _extra(x.shape, weight.shape, geometry, out_size)
        data, w = _zero_extended(x._data, ctx.extra), weight._data
        y_shape = (data.shape[0], w.shape[1] * geometry[3], *out_size)
        # only the input's shape matters for its gradient: a zero-strided stand-in, no memory
        y = _convolve_backward(np.broadcast_to(np.zeros((), data.dtype), y_shape), w, data, *geometry,
                               (True, False, False))[0]
        if bias is not None:
            y += bias._data.reshape(-1, *[1] * len(out_size))
        return Tensor._wrap(y)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need_x, need_weight, need_bias = ctx.needs_input_grad[:3]
        geometry, extra = ctx.geometry, ctx.extra
        grad_x = grad_weight = grad_bias = None
        if is_grad_enabled():
            if need_x:
                grad_x = Conv2d.apply(grad, weight, None, *geometry)
            if need_weight:
                extended = _zero_extended_tensor(x, extra)
                grad_weight = ConvolutionBackward.apply(extended, grad, weight, geometry, (False, True, False))[1]
        else:
            if need_x:
                grad_x = Tensor._wrap(_convolve(grad._data, weight._data, None, *geometry))
            if need_weight:
                grad_weight = Tensor._wrap(_convolve_backward(grad._data, weight._data,
                                                              _zero_extended(x._data, extra), *geometry,
                                                              (False, True, False))[1])
        if grad_x is not None and any(extra):  # the positions x was extended by
            grad_x = grad_x[(slice(None), slice(None), *(slice(0, n) for n in x.shape[2:]))]
        if need_bias:
            grad_bias = grad.sum(dim=(0, *range(2, grad.ndim)))
        return grad_x, grad_weight, grad_bias, None, None


def _extra(x_shape: tuple, weight_shape: tuple, geometry: tuple, out_size: tuple) -> tuple:
    """Per spatial dimension, how many positions more than x has a conv2d of y's size gives back.

    0 unless output_padding >= stride (allowed when dilation is larger): y then reaches past what
    conv2d's last window covers, and x, extended by that many zeros, matches conv2d's output.
    """
    n = len(out_size)
    stride, padding, dilation = (g[-n:] for g in geometry[:3])
    return tuple((o + 2 * p - d * (k - 1) - 1) // s + 1 - i for o, i, k, s, p, d in
                 zip(out_size, x_shape[2:], weight_shape[2:], stride, padding, dilation))


def _zero_extended(x: np.ndarray, extra: tuple) -> np.ndarray:
    return np.pad(x, [(0, 0), (0, 0), *((0, e) for e in extra)]) if any(extra) else x


def _zero_extended_tensor(x: Tensor, extra: tuple) -> Tensor:
    """``_zero_extended`` for a tensor, differentiably (under create_graph)."""
    for dim, e in enumerate(extra, start=2):
        if e:
            zeros = Tensor._wrap(np.zeros((*x.shape[:dim], e, *x.shape[dim + 1:]), x._data.dtype))
            x = cat([x, zeros], dim)
    return x


# -- max pooling ------------------------------------------------------------------
class MaxPool2d(Function):
    """Each output is the max of its window; backward sends its gradient to that one input cell.

    With ``return_indices``, also where each came from (flat in H*W), a second output without a
    gradient. x is (N, C, H, W) or (C, H, W); the sizes are pairs.
    """

    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, dilation=(1, 1), ceil_mode=False, return_indices=False):
        data = _batched(x._data)
        if dilation == (1, 1) and not ceil_mode:
            y, indices = kernels.max_pool2d_forward(data, kernel_size, stride, padding)
        else:
            y, indices = _windowed_max(data, *(
                pool_windows(n, k, s, p, d, ceil_mode)
                for n, k, s, p, d in zip(data.shape[2:], kernel_size, stride, padding, dilation)))
        return _pooled(ctx, x, y, indices, return_indices)

    @staticmethod
    def backward(ctx, grad, *_grad_indices):
        x, indices = ctx.saved_tensors
        if is_grad_enabled():
            grad_x = ctx._forward_cls.backward_node.apply(grad, x, indices)
        else:
            grad_x = Tensor._wrap(_scattered(grad._data, indices._data, x.shape))
        return grad_x, None, None, None, None, None, None


class AdaptiveMaxPool2d(MaxPool2d):
    """The max of each of PyTorch's adaptive bins (``adaptive_bins``) along H and W: ``output_size`` a pair."""

    node_name = "AdaptiveMaxPool2DBackward0"

    @staticmethod
    def forward(ctx, x, output_size, return_indices=False):
        data = _batched(x._data)
        y, indices = _windowed_max(data, *(adaptive_windows(n, o) for n, o in zip(data.shape[2:], output_size)))
        return _pooled(ctx, x, y, indices, return_indices)


class MaxPool2dBackward(Function):
    """max_pool2d's backward as a node: ``grad`` scattered to where each max came from.

    It is linear in grad, so its derivative gathers gg at those same places; with respect to
    the input values it is 0 (moving a value a little does not move its max), as in PyTorch.
    """

    node_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x, indices):
        ctx.save_for_backward(indices)
        ctx.input_shape = x.shape
        return Tensor._wrap(_scattered(grad._data, indices._data, x.shape))

    @staticmethod
    def backward(ctx, gg):
        indices, = ctx.saved_tensors
        planes = math.prod(indices.shape[:-2])
        d_grad = gg.reshape(planes, -1).gather(1, indices.reshape(planes, -1)).reshape(indices.shape)
        d_x = Tensor._wrap(np.zeros(ctx.input_shape, gg._data.dtype)) if ctx.needs_input_grad[1] else None
        return d_grad, d_x, None


class AdaptiveMaxPool2dBackward(MaxPool2dBackward):
    node_name = "AdaptiveMaxPool2DBackwardBackward0"


MaxPool2d.backward_node = MaxPool2dBackward
AdaptiveMaxPool2d.backward_node = AdaptiveMaxPool2dBackward


def _batched(a: np.ndarray) -> np.ndarray:
    """An unbatched (C, H, W) array as a batch of one."""
    return a[None] if a.ndim == 3 else a


def _pooled(ctx, x: Tensor, y: np.ndarray, indices: np.ndarray, return_indices: bool):
    """The output (and the indices), unbatched again if x was; the indices saved (not kept on ctx) so
    that a second backward raises, as in PyTorch."""
    if x.ndim == 3:
        y, indices = y[0], indices[0]
    indices = Tensor._wrap(indices)
    ctx.save_for_backward(x, indices)
    if not return_indices:
        return Tensor._wrap(y)
    ctx.mark_non_differentiable(indices)
    return Tensor._wrap(y), indices


def _scattered(grad: np.ndarray, indices: np.ndarray, input_shape: tuple) -> np.ndarray:
    """Each gradient added at the position its max came from (overlapping windows accumulate)."""
    shape = input_shape if len(input_shape) == 4 else (1, *input_shape)
    return kernels.max_pool2d_backward(_batched(grad), _batched(indices), shape).reshape(input_shape)


def pool_out_size(size: int, k: int, s: int, p: int, ceil_mode: bool, dilation: int = 1) -> int:
    """PyTorch's output length; with ceil_mode the last window must start inside the input or left padding."""
    span = size + 2 * p - dilation * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def adaptive_bins(size: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's bins: from floor(i * size / out) to ceil((i + 1) * size / out); they may overlap."""
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def pool_windows(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> tuple:
    """The cells of each window along one dimension: (out, k) positions, see ``_window_cells``."""
    out = pool_out_size(size, k, s, p, ceil_mode, d)
    positions = (np.arange(out) * s - p)[:, None] + np.arange(k) * d
    return _window_cells(positions, np.zeros(out, np.int64), np.full(out, size))


def adaptive_windows(size: int, out: int) -> tuple:
    bins = np.array(adaptive_bins(size, out), np.int64).reshape(out, 2)
    width = int((bins[:, 1] - bins[:, 0]).max(initial=0))
    return _window_cells(bins[:, :1] + np.arange(width), bins[:, 0], bins[:, 1])


def _window_cells(positions: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple:
    """Window i's cells ``positions[i]``, those outside [low[i], high[i]) (padding, or past a short
    adaptive bin) replaced by the window's first cell inside if before it, its last if after it.

    So each window has k real cells, and the kernel's scan (first max wins) picks what PyTorch's does:
    a copy of a cell is scanned just before or after the cell itself. Also returns which windows
    have no cell inside at all (dilated windows over padding): their max is -inf, as in PyTorch.
    """
    inside = (positions >= low[:, None]) & (positions < high[:, None])
    rows, k = np.arange(len(positions)), positions.shape[1]
    first = positions[rows, inside.argmax(1)] if k else low
    last = positions[rows, k - 1 - inside[:, ::-1].argmax(1)] if k else low
    cells = np.where(positions < low[:, None], first[:, None],
                     np.where(positions >= high[:, None], last[:, None], positions))
    empty = ~inside.any(1)
    cells[empty] = 0
    return cells, empty


def _windowed_max(x: np.ndarray, rows: tuple, cols: tuple) -> tuple:
    """(y, indices) of the max over the windows ``rows[0][i] x cols[0][j]`` of (N, C, H, W) ``x``.

    The windows' cells are copied side by side (OH*KH by OW*KW) and the kernel pools them with
    stride = kernel; its indices are then mapped back to x's H*W.
    """
    (row_cells, empty_rows), (col_cells, empty_cols) = rows, cols
    (oh, kh), (ow, kw) = row_cells.shape, col_cells.shape
    if not (oh and ow and kh and kw):
        return np.empty((*x.shape[:2], oh, ow), x.dtype), np.zeros((*x.shape[:2], oh, ow), np.int64)
    cells = np.ascontiguousarray(x[:, :, row_cells.reshape(-1)[:, None], col_cells.reshape(-1)])  # (the -inf below)
    if empty_rows.any() or empty_cols.any():
        blocks = cells.reshape(*x.shape[:2], oh, kh, ow, kw)
        blocks[:, :, empty_rows] = -np.inf
        blocks[..., empty_cols, :] = -np.inf
    y, flat = kernels.max_pool2d_forward(cells, (kh, kw), (kh, kw), (0, 0))
    r, c = np.divmod(flat, ow * kw)
    return y, row_cells.reshape(-1)[r] * x.shape[3] + col_cells.reshape(-1)[c]
