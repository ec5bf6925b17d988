"""Taking a view again from its base, and writing through a view: ``replay``, ``AsStrided`` and
``CopySlices``.

A view records the steps that made it (``view_of(..., step)`` in ``shape.py``); when an in-place
operation changes the base's history, the view is taken again by replaying them (``replay``, or one
``AsStrided`` node). An in-place operation on a view becomes a ``CopySlices`` node on the base, as
PyTorch's: it runs the op's node on the view's region of the base's gradient.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import no_grad
from minigrad.ops.elementwise import Where
from minigrad.ops.layout import repeats_memory
from minigrad._tensor import Tensor
from minigrad.ops.shape import Reshape


def replay(t: Tensor, steps: tuple, on_gradient: bool = False) -> Tensor:
    """Take a view again: apply the view ``steps`` (``_ViewMeta.steps``) to ``t``.

    On a gradient, whose memory layout may differ from the base's, ``view``
    steps become ``reshape`` (same values, a copy only where it must).
    """
    for op, args in steps:
        if on_gradient and op is Reshape:
            args = args[:1]
        t = op.apply(t, *args)
    return t


def _memory_order(a: np.ndarray) -> tuple:
    """The dimensions of ``a`` from the largest stride to the smallest."""
    return tuple(sorted(range(a.ndim), key=lambda d: -abs(a.strides[d])))


def _laid_out(memory: np.ndarray, shape: tuple, order: tuple) -> np.ndarray:
    """``memory`` (1-d, a new array) seen as ``shape`` laid out in ``order``, as the base was."""
    return memory.reshape([shape[d] for d in order]).transpose(np.argsort(order))


def _filled_with_region(shape: tuple, order: tuple, dtype, steps: tuple, fill) -> tuple:
    """A new array of ``shape`` (laid out in ``order``, as the base was) filled with ``fill``,
    and the view ``steps`` select in it: where a view's region lies in its base."""
    full = _laid_out(np.full(math.prod(shape), fill, dtype), shape, order)
    with no_grad():
        region = replay(Tensor._wrap(full), steps)._data
    if region.size and not np.may_share_memory(region, full):
        raise RuntimeError(f"the view steps {steps} copy instead of viewing; please report this as a minigrad bug")
    return full, region


class AsStrided(Function):
    """A view taken again from its base in one step (PyTorch's name for the node it then gets).

    After an in-place change of the base, a view's history is rebuilt with this
    node: its gradient goes into zeros of the base's shape, at the view's region.
    """

    node_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, base, steps):
        ctx.steps, ctx.shape, ctx.order = steps, base.shape, _memory_order(base._data)
        return Tensor._wrap(replay(base, steps)._data)

    @staticmethod
    def backward(ctx, grad):
        if grad._data.size == 0:
            # PyTorch's as_strided_backward: a view with no elements gives new row-major zeros, a
            # constant (so a leaf's .grad from it does not require grad, even under create_graph)
            return Tensor._wrap(np.zeros(ctx.shape, grad._data.dtype)), None
        full = AsStridedScatter.apply(grad, ctx.steps, ctx.shape, ctx.order)
        # As PyTorch's as_strided_backward, the gradient is a view of a new 1-d buffer (in the base's
        # memory order): made in backward, it is a view made in no_grad mode unless create_graph.
        order = ctx.order
        buffer = full.permute(order).reshape(-1).clone()
        return buffer.view([ctx.shape[d] for d in order]).permute(tuple(np.argsort(order).tolist())), None


class AsStridedScatter(Function):
    """Zeros of the base's shape with ``grad`` at the view's region: AsStrided's backward (and the reverse)."""

    node_name = "AsStridedScatterBackward0"

    @staticmethod
    def forward(ctx, grad, steps, shape, order):
        ctx.steps = steps
        full, region = _filled_with_region(shape, order, grad._data.dtype, steps, 0)
        if repeats_memory(region):
            # An expand() among the steps: several elements of the view are one element of the
            # base, and their gradients add up (an assignment would keep only the last of them).
            # So replay the steps on each element's position in memory and add at those positions.
            memory = np.zeros(full.size, full.dtype)
            with no_grad():
                positions = replay(Tensor._wrap(_laid_out(np.arange(full.size), shape, order)), steps)._data
            np.add.at(memory, positions.reshape(-1), grad._data.reshape(-1))
            full = _laid_out(memory, shape, order)
        else:
            region[...] = grad._data
        return Tensor._wrap(full)

    @staticmethod
    def backward(ctx, grad):
        return replay(grad, ctx.steps, on_gradient=True), None, None, None


class CopySlices(Function):
    """The base's history after an in-place operation on one of its views (PyTorch's name).

    It owns the in-place op's node ``fn`` (the node of ``values``, what the op
    wrote into the view). Its edges are PyTorch's: the base's old history, then
    ``fn``'s other inputs (``others``); ``fn``'s edge to the view's old values
    is never followed. In backward ``fn`` runs on the view's region of the
    gradient: its gradient for the view (input ``view_input``) replaces that
    region of the base's gradient, its other gradients go to the other edges.
    """

    node_name = "torch::autograd::CopySlices"

    @staticmethod
    def forward(ctx, base, written, steps, view_input, *others):
        # PyTorch's CopySlices drops fn when released, so a second backward through it always
        # fails; holding ``values`` (fn's output) as a saved tensor does that here. (It comes in
        # a tuple: as an argument it would be an edge.)
        (values,) = written
        ctx.save_for_backward(values)
        ctx.fn, ctx.output_nr, ctx.view_input = values._grad_fn, values._output_nr, view_input
        ctx.steps, ctx.order = steps, _memory_order(base._data)
        return Tensor._wrap(base._data)  # the in-place op already wrote ``values`` into the base's memory

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # raises after a backward without retain_graph, as in PyTorch
        fn = ctx.fn
        grads = [None] * fn._num_outputs
        grads[ctx.output_nr] = replay(grad, ctx.steps, on_gradient=True)
        results = list(fn._run_backward(grads))
        of_view = results.pop(ctx.view_input)
        grad_base = None
        if of_view is None and not ctx.needs_input_grad[0]:
            return (None, None, None, None, *results)
        outside, region = _filled_with_region(grad.shape, ctx.order, bool, ctx.steps, True)
        if of_view is not None and repeats_memory(region):
            # PyTorch copies the view's gradient into that region of the base's: impossible for an expand()
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to a single "
                "memory location. Please clone() the tensor before performing the operation."
            )
        if ctx.needs_input_grad[0]:
            region[...] = False
            grad_base = Where.apply(outside, grad, 0.0)  # exactly 0 in the view's region, even for inf
            if of_view is not None:
                grad_base = grad_base + AsStridedScatter.apply(of_view, ctx.steps, grad.shape, ctx.order)
        return (grad_base, None, None, None, *results)  # (the arguments that are not tensors get None)
