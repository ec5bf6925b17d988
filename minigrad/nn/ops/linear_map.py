"""Pooling, padding, interpolation, embedding lookups and rearrangements (pixel and channel shuffles,
unfold and fold) as single nodes named as PyTorch names them.

Each of these is linear in its tensor input: ``f(x) = L x`` (plus a constant, for
padding with a value). ``nn.functional`` writes ``f`` with tensor operations a
learner can read (slices, ``cat``, sums over windows); recorded as they are, the
graph would show the last of them (``CatBackward0``) where PyTorch shows one node
(``ConstantPadNdBackward0``). ``LinearMap`` runs ``f`` without recording and is
that one node. Its backward applies the adjoint ``L^T`` (the vector-Jacobian
product, the same at every x because f is linear), found by differentiating ``f``
itself; the adjoint is a node too (``AvgPool2DBackwardBackward0``...), whose
backward is ``L`` again, so the pair differentiates to any order.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from minigrad.autograd.differentiate import grad as autograd_grad
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import enable_grad, no_grad
from minigrad._tensor import Tensor


class LinearMap(Function):
    """``f(x)`` for a linear (or affine) ``f``; ``linear`` is its linear part (f without the constant).

    Subclasses name the node and its adjoint; ``records_input``: PyTorch's backward node also
    takes x (pooling and reflect/replicate padding do), so the gradient has an edge to x, with
    derivative 0, even when the upstream gradient is a constant.
    """

    adjoint: type
    records_input = True

    @staticmethod
    def forward(ctx, x, f: Callable, linear: Callable):
        ctx.linear, ctx.input_shape, ctx.node = linear, x.shape, ctx._forward_cls
        if ctx.node.records_input:
            ctx.save_for_backward(x)  # as PyTorch's: changing x in place before backward is an error
        with no_grad():
            out = f(x)._data
        # a new tensor, never x's memory (f may hand back x itself, as padding by 0 does)
        return Tensor._wrap(out.copy() if np.may_share_memory(out, x._data) else out)

    @staticmethod
    def backward(ctx, grad):
        x = ctx.saved_tensors[0] if ctx.node.records_input else None
        return ctx.node.adjoint.apply(grad, x, ctx.linear, ctx.input_shape), None, None


class Adjoint(Function):
    """``L^T grad``: the gradient of ``<grad, L x>`` with respect to x, for any x (zeros here)."""

    @staticmethod
    def forward(ctx, grad, x, linear: Callable, input_shape: tuple):
        ctx.linear, ctx.input_shape, ctx.node = linear, input_shape, ctx._forward_cls.forward_of
        probe = Tensor._wrap(np.zeros(input_shape, grad._data.dtype)).requires_grad_()
        with enable_grad():
            out = linear(probe)
        g, = autograd_grad(out, probe, grad.detach(), allow_unused=True)
        return Tensor._wrap(np.zeros(input_shape, grad._data.dtype) if g is None else g._data)

    @staticmethod
    def backward(ctx, gg):
        # <gg, L^T grad> = <L gg, grad>: the derivative with respect to grad is L gg; with respect
        # to x it is 0 (PyTorch's zeros, a tensor, not None)
        need_grad, need_x = ctx.needs_input_grad[:2]
        d_grad = ctx.node.apply(gg, ctx.linear, ctx.linear) if need_grad else None
        d_x = Tensor._wrap(np.zeros(ctx.input_shape, gg._data.dtype)) if need_x else None
        return d_grad, d_x, None, None


def linear_map(name: str, records_input: bool = True) -> type:
    """A LinearMap node named ``name`` (PyTorch's) and its adjoint, named as PyTorch names it."""
    adjoint = type(f"{name}Adjoint", (Adjoint,), {"node_name": f"{name}BackwardBackward0", "__doc__": Adjoint.__doc__})
    node = type(name, (LinearMap,), {"node_name": f"{name}Backward0", "adjoint": adjoint,
                                     "records_input": records_input, "__doc__": LinearMap.__doc__})
    adjoint.forward_of = node
    return node


AvgPool2d = linear_map("AvgPool2D")
AdaptiveAvgPool2d = linear_map("AdaptiveAvgPool2D")
AvgPool3d = linear_map("AvgPool3D")
AdaptiveAvgPool3d = linear_map("AdaptiveAvgPool3D")
ReflectionPad = {n: linear_map(f"ReflectionPad{n}D") for n in (1, 2, 3)}
ReplicationPad = {n: linear_map(f"ReplicationPad{n}D") for n in (1, 2, 3)}
ConstantPadNd = linear_map("ConstantPadNd", records_input=False)
UpsampleNearest = {n: linear_map(f"UpsampleNearest{n}D", records_input=False) for n in (1, 2, 3)}
UpsampleNearestExact = {n: linear_map(f"UpsampleNearestExact{n}D", records_input=False) for n in (1, 2, 3)}
UpsampleLinear1d = linear_map("UpsampleLinear1D", records_input=False)
UpsampleBilinear2d = linear_map("UpsampleBilinear2D", records_input=False)
UpsampleTrilinear3d = linear_map("UpsampleTrilinear3D", records_input=False)
UpsampleBicubic2d = linear_map("UpsampleBicubic2D", records_input=False)
UpsampleBilinear2dAa = linear_map("UpsampleBilinear2DAa", records_input=False)
UpsampleBicubic2dAa = linear_map("UpsampleBicubic2DAa", records_input=False)
UpsampleLanczos2dAa = linear_map("UpsampleLanczos2DAa", records_input=False)
MaxUnpool = {n: linear_map(f"MaxUnpool{n}D", records_input=False) for n in (2, 3)}
Embedding = linear_map("Embedding", records_input=False)
PixelShuffle = linear_map("PixelShuffle", records_input=False)
PixelUnshuffle = linear_map("PixelUnshuffle", records_input=False)
ChannelShuffle = linear_map("ChannelShuffle", records_input=False)
Im2Col = linear_map("Im2Col", records_input=False)
Col2Im = linear_map("Col2Im", records_input=False)
