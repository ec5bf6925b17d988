"""conv2d and max_pool2d as Functions around the kernels in ``minigrad.kernels``.

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
"""
from __future__ import annotations

import numpy as np

from minigrad import kernels
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.tensor import Tensor


def _wrapped(arrays: tuple) -> tuple:
    return tuple(None if a is None else Tensor._wrap(a) for a in arrays)


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
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        needed = tuple(ctx.needs_input_grad[:3])  # the first layer needs no gradient for its input images
        if is_grad_enabled():
            grads = ConvolutionBackward.apply(grad, x, weight, ctx.stride, ctx.padding, needed)
        else:
            grads = _wrapped(kernels.conv2d_backward(x._data, weight._data, grad._data, ctx.stride, ctx.padding, needed))
        return (*grads, None, None)


class ConvolutionBackward(Function):
    """conv2d's backward as a node: (grad_x, grad_weight, grad_bias) from (grad, x, weight).

    With gg_x, gg_weight and gg_bias the gradients of its three outputs:

        d/d grad   = conv2d(gg_x, weight) + conv2d(x, gg_weight) + gg_bias (broadcast)
        d/d x      = the input gradient of a conv with weight gg_weight, for output gradient grad
        d/d weight = the weight gradient of a conv of gg_x, for output gradient grad
    """

    node_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x, weight, stride, padding, needed):
        ctx.save_for_backward(grad, x, weight)
        ctx.set_materialize_grads(False)  # an output nobody differentiated gives None, and its terms are skipped
        ctx.stride, ctx.padding = stride, padding
        return _wrapped(kernels.conv2d_backward(x._data, weight._data, grad._data, stride, padding, needed))

    @staticmethod
    def backward(ctx, gg_x, gg_weight, gg_bias):
        grad, x, weight = ctx.saved_tensors
        need_grad, need_x, need_weight = ctx.needs_input_grad[:3]
        stride, padding = ctx.stride, ctx.padding
        d_grad = d_x = d_weight = None
        if need_grad:
            terms = [Conv2d.apply(gg_x, weight, None, stride, padding) if gg_x is not None else None,
                     Conv2d.apply(x, gg_weight, None, stride, padding) if gg_weight is not None else None,
                     gg_bias.reshape(1, -1, 1, 1).expand(grad.shape) if gg_bias is not None else None]
            for term in terms:
                if term is not None:
                    d_grad = term if d_grad is None else d_grad + term
        if need_x and gg_weight is not None:
            d_x = ConvolutionBackward.apply(grad, x, gg_weight, stride, padding, (True, False, False))[0]
        if need_weight and gg_x is not None:
            d_weight = ConvolutionBackward.apply(grad, gg_x, weight, stride, padding, (False, True, False))[1]
        return d_grad, d_x, d_weight, None, None, None


class MaxPool2d(Function):
    """Each output is the max of its window; backward sends its gradient to that one input cell."""

    node_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding):
        y, indices = kernels.max_pool2d_forward(x._data, kernel_size, stride, padding)
        # where each max came from; saved (not kept on ctx) so that a second backward raises, as in PyTorch
        ctx.save_for_backward(x, Tensor._wrap(indices))
        return Tensor._wrap(y)

    @staticmethod
    def backward(ctx, grad):
        x, indices = ctx.saved_tensors
        if is_grad_enabled():
            return MaxPool2dBackward.apply(grad, x, indices), None, None, None
        return Tensor._wrap(kernels.max_pool2d_backward(grad._data, indices._data, x.shape)), None, None, None


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
        return Tensor._wrap(kernels.max_pool2d_backward(grad._data, indices._data, x.shape))

    @staticmethod
    def backward(ctx, gg):
        indices, = ctx.saved_tensors
        n, c = indices.shape[:2]
        d_grad = gg.reshape(n, c, -1).gather(2, indices.reshape(n, c, -1)).reshape(indices.shape)
        d_x = Tensor._wrap(np.zeros(ctx.input_shape, gg._data.dtype)) if ctx.needs_input_grad[1] else None
        return d_grad, d_x, None
