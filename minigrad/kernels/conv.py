"""2-D convolution and max pooling, NCHW, as in ``torch.nn.functional``.

Convolution is im2col + one batched matrix multiply: Numba copies every
receptive field of sample n into column p of ``cols[n]`` (shape C*KH*KW by
OH*OW), then ``weight (O, C*KH*KW) @ cols[n]`` gives the (O, OH*OW) output of
sample n, already in NCHW order. The multiply is left to BLAS through
``np.matmul``: in a prototype, a direct Numba loop nest was several times
slower than BLAS on the course's 8 -> 16 channel layer. What Numba wins is the gather (NumPy's
``sliding_window_view`` + ``tensordot`` copies through a 6-D strided view and
then transposes the result) and the scatter-add of the backward pass.

Max pooling is a plain loop: NumPy needs a padded copy, a window copy, an
argmax and two gathers, where the loop reads each input once.
"""
from __future__ import annotations

import numba
import numpy as np

from minigrad.kernels import reference as ref
from minigrad.kernels.reference import Pair

@numba.njit(cache=True, error_model="numpy")
def _im2col(x, kh_size, kw_size, sh, sw, ph, pw, oh_size, ow_size, cols):
    """cols[n, (c, kh, kw), (oh, ow)] = x[n, c, oh*sh - ph + kh, ow*sw - pw + kw], 0 in the padding."""
    n_size, c_size, h_size, w_size = x.shape
    for n in range(n_size):
        for c in range(c_size):
            for kh in range(kh_size):
                for kw in range(kw_size):
                    k = (c * kh_size + kh) * kw_size + kw
                    for oh in range(oh_size):
                        ih = oh * sh - ph + kh
                        for ow in range(ow_size):
                            iw = ow * sw - pw + kw
                            inside = 0 <= ih < h_size and 0 <= iw < w_size
                            cols[n, k, oh * ow_size + ow] = x[n, c, ih, iw] if inside else 0.0


@numba.njit(cache=True, error_model="numpy")
def _col2im(cols, kh_size, kw_size, sh, sw, ph, pw, oh_size, ow_size, grad_x):
    """The transpose of _im2col: add each column entry back where it was read from."""
    n_size, c_size, h_size, w_size = grad_x.shape
    grad_x[...] = 0.0
    for n in range(n_size):
        for c in range(c_size):
            for kh in range(kh_size):
                for kw in range(kw_size):
                    k = (c * kh_size + kh) * kw_size + kw
                    for oh in range(oh_size):
                        ih = oh * sh - ph + kh
                        if 0 <= ih < h_size:
                            for ow in range(ow_size):
                                iw = ow * sw - pw + kw
                                if 0 <= iw < w_size:
                                    grad_x[n, c, ih, iw] += cols[n, k, oh * ow_size + ow]


def _columns(x: np.ndarray, weight: np.ndarray, stride, padding, out_hw) -> np.ndarray:
    n, c, kh, kw = x.shape[0], x.shape[1], weight.shape[2], weight.shape[3]
    cols = np.empty((n, c * kh * kw, out_hw[0] * out_hw[1]), x.dtype)
    _im2col(np.ascontiguousarray(x), kh, kw, *stride, *padding, *out_hw, cols)
    return cols


def conv2d_forward(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None,
                   stride: Pair = (1, 1), padding: Pair = (0, 0)) -> np.ndarray:
    """Like ``F.conv2d(x, weight, bias, stride, padding)`` (dilation 1, groups 1)."""
    x, weight, bias, stride, padding, out_hw = ref.check_conv(x, weight, bias, stride, padding)
    cols = _columns(x, weight, stride, padding, out_hw)
    y = np.matmul(weight.reshape(weight.shape[0], -1), cols)  # (N, O, OH*OW)
    if bias is not None:
        y += bias[:, None]
    return y.reshape(x.shape[0], weight.shape[0], *out_hw)


def conv2d_backward(x: np.ndarray, weight: np.ndarray, grad_y: np.ndarray, stride: Pair = (1, 1),
                    padding: Pair = (0, 0), output_mask: tuple[bool, bool, bool] = (True, True, True),
                    ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """(grad_x, grad_weight, grad_bias) of conv2d_forward for the output gradient grad_y.

    ``output_mask`` says which of the three to compute (None for the others), as in
    PyTorch's ``convolution_backward``: a network's first layer needs no gradient
    for its input images, and skipping it saves a matmul and the scatter-add.
    """
    x, weight, _, stride, padding, out_hw = ref.check_conv(x, weight, None, stride, padding)
    grad_y = ref.check_conv_grad(grad_y, x, weight, out_hw)
    need_x, need_weight, need_bias = output_mask
    o = weight.shape[0]
    gy = np.ascontiguousarray(grad_y).reshape(x.shape[0], o, out_hw[0] * out_hw[1])  # (N, O, OH*OW); N may be 0
    grad_x = grad_weight = grad_bias = None
    if need_weight:
        cols = _columns(x, weight, stride, padding, out_hw)
        grad_weight = np.matmul(gy, cols.transpose(0, 2, 1)).sum(axis=0).reshape(weight.shape)
    if need_x:
        grad_cols = np.matmul(weight.reshape(o, -1).T, gy)  # (N, C*KH*KW, OH*OW)
        grad_x = np.empty(x.shape, x.dtype)
        _col2im(grad_cols, weight.shape[2], weight.shape[3], *stride, *padding, *out_hw, grad_x)
    if need_bias:
        grad_bias = gy.sum(axis=(0, 2))
    return grad_x, grad_weight, grad_bias


@numba.njit(cache=True, error_model="numpy")
def _max_pool2d_forward(x, kh_size, kw_size, sh, sw, ph, pw, y, indices):
    n_size, c_size, h_size, w_size = x.shape
    for n in range(n_size):
        for c in range(c_size):
            for oh in range(y.shape[2]):
                h0, h1 = max(oh * sh - ph, 0), min(oh * sh - ph + kh_size, h_size)
                for ow in range(y.shape[3]):
                    w0, w1 = max(ow * sw - pw, 0), min(ow * sw - pw + kw_size, w_size)
                    # Only real cells are visited, so padding acts as -inf. The window is never
                    # empty since padding <= kernel // 2.
                    best, arg = x[n, c, h0, w0], h0 * w_size + w0
                    for h in range(h0, h1):
                        for w in range(w0, w1):
                            v = x[n, c, h, w]
                            # the first max wins; a NaN wins and then stays (like argmax)
                            if v > best or (v != v and best == best):
                                best, arg = v, h * w_size + w
                    y[n, c, oh, ow] = best
                    indices[n, c, oh, ow] = arg


@numba.njit(cache=True, error_model="numpy")
def _max_pool2d_backward(grad_y, indices, grad_x):
    """grad_y, indices: (N*C, OH*OW); grad_x: (N*C, H*W), zeroed. Overlaps accumulate."""
    for r in range(grad_y.shape[0]):
        for i in range(grad_y.shape[1]):
            grad_x[r, indices[r, i]] += grad_y[r, i]


def max_pool2d_forward(x: np.ndarray, kernel_size: Pair, stride: Pair | None = None,
                       padding: Pair = (0, 0)) -> tuple[np.ndarray, np.ndarray]:
    """(y, indices) like ``F.max_pool2d(..., return_indices=True)``: indices are flat in H*W."""
    x, kernel, stride, padding, out_hw = ref.check_pool(x, kernel_size, stride, padding)
    y = np.empty((*x.shape[:2], *out_hw), x.dtype)
    indices = np.empty(y.shape, np.int64)
    _max_pool2d_forward(np.ascontiguousarray(x), *kernel, *stride, *padding, y, indices)
    return y, indices


def max_pool2d_backward(grad_y: np.ndarray, indices: np.ndarray, input_shape: tuple[int, ...]) -> np.ndarray:
    """Scatter-add grad_y to the positions in indices; overlapping windows accumulate."""
    grad_y, indices, input_shape = ref.check_pool_grad(grad_y, indices, input_shape)
    n, c, h, w = input_shape
    grad_x = np.zeros((n * c, h * w), grad_y.dtype)
    rows = n * c
    _max_pool2d_backward(np.ascontiguousarray(grad_y).reshape(rows, -1),
                         np.ascontiguousarray(indices).reshape(rows, -1), grad_x)
    return grad_x.reshape(input_shape)
