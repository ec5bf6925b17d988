"""conv2d and max_pool2d as Functions around the kernels in ``minigrad.kernels``.

A convolution built from tensor operations (unfold, reshape, matmul) would
record dozens of nodes and copy every window through NumPy; here forward and
backward are one kernel call each. The price: the kernels compute with NumPy
arrays, so their gradients are not recorded, and the backward is marked
``@once_differentiable`` (a second derivative through conv2d or max_pool2d
raises instead of silently giving zeros). PyTorch can differentiate them twice.
"""
from __future__ import annotations

from minigrad import kernels
from minigrad.autograd.function import Function, once_differentiable
from minigrad.tensor import Tensor


class Conv2d(Function):
    """y = conv2d(x, weight, bias); backward gives the gradients of all three in one kernel call."""

    node_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, stride, padding):
        ctx.save_for_backward(x, weight)
        ctx.stride, ctx.padding = stride, padding
        y = kernels.conv2d_forward(x._data, weight._data, None if bias is None else bias._data, stride, padding)
        return Tensor._wrap(y)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        needed = ctx.needs_input_grad[:3]  # the first layer needs no gradient for its input images
        grads = kernels.conv2d_backward(x._data, weight._data, grad._data, ctx.stride, ctx.padding, needed)
        return tuple(None if g is None else Tensor._wrap(g) for g in grads) + (None, None)


class MaxPool2d(Function):
    """Each output is the max of its window; backward sends its gradient to that one input cell."""

    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding):
        y, indices = kernels.max_pool2d_forward(x._data, kernel_size, stride, padding)
        # where each max came from; saved (not kept on ctx) so that a second backward raises, as in PyTorch
        ctx.save_for_backward(Tensor._wrap(indices))
        ctx.input_shape = x.shape
        return Tensor._wrap(y)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        indices, = ctx.saved_tensors
        grad_x = kernels.max_pool2d_backward(grad._data, indices._data, ctx.input_shape)
        return Tensor._wrap(grad_x), None, None, None
