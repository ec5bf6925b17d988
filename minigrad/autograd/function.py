"""``Function``, as ``torch.autograd.function``: the core's ``Function`` and its ctx
(``minigrad/core/function.py``), plus ``once_differentiable``, the two classes
PyTorch keeps from 0.x (``InplaceFunction``, ``NestedIOFunction``) and its rules for the 0.x
style (``saved_variables``; an instance warns, calling it is refused).
"""
from __future__ import annotations

import functools
import warnings

from minigrad.core.function import Function, FunctionCtx, _index_of  # noqa: F401
from minigrad.core.grad_mode import is_grad_enabled, no_grad
from minigrad.core.tensor import Tensor
from minigrad.ops.broadcast import type_name


def _saved_variables(self) -> tuple:
    """The PyTorch 0.x name of ``saved_tensors`` (from when tensors were wrapped in Variables)."""
    warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
    return self.saved_tensors


FunctionCtx.saved_variables = property(_saved_variables)


def _warn_instantiated(self, *args, **kwargs) -> None:
    """``Function.__init__``: instances are PyTorch 0.x's style; ``apply`` is called on the class."""
    warnings.warn(
        f"{type(self).__name__} should not be instantiated. Methods on autograd functions are "
        "all static, so you should invoke them on the class itself.",
        DeprecationWarning,
        stacklevel=2,
    )


def _refuse_instance_call(self, *args, **kwargs):
    """``Function.__call__``: calling an instance (the 0.x style) is refused, as in PyTorch."""
    raise RuntimeError(
        "Legacy autograd function with non-static forward method is deprecated. Please use "
        "new-style autograd function with static forward method: call "
        f"{type(self).__name__}.apply(...) on the class, not on an instance. (For the old "
        "instance style, subclass minigrad.autograd.StatefulFunction.)"
    )


# PyTorch 0.x's instance style: an instance warns, calling one is refused (StatefulFunction keeps the style)
Function.__init__, Function.__call__ = _warn_instantiated, _refuse_instance_call


def once_differentiable(backward):
    """Decorate a backward that uses NumPy, so it cannot be differentiated again.

    It runs without recording, and if the caller asked for ``create_graph`` its
    results carry a node that raises as soon as a second backward reaches it.
    """

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with no_grad():
            grads = backward(ctx, *grad_outputs)
        if not is_grad_enabled() or not any(g is not None and g._requires_grad for g in grad_outputs):
            return grads
        single = not isinstance(grads, tuple)
        grads = (grads,) if single else grads
        # The results were computed without recording; route them through a node
        # that raises, so a second differentiation fails loudly instead of giving zeros.
        grads = tuple(None if g is None else _DelayedError.apply(g.detach().requires_grad_(), ctx.name()) for g in grads)
        return grads[0] if single else grads

    return wrapper


class _DelayedError(Function):
    node_name = "DelayedError"

    @staticmethod
    def forward(ctx, grad, name):
        ctx.fn_name = name
        return grad._alias()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            f"trying to differentiate twice a function that was marked with @once_differentiable "
            f"({ctx.fn_name}): its backward is not built from differentiable operations. "
            "Write backward with tensor operations to support create_graph=True."
        )



# -- Kept from PyTorch 0.x: both still live in torch.autograd.function ---------------------


class InplaceFunction(Function):
    """A ``Function`` whose constructor stores an ``inplace`` flag; PyTorch keeps it only for old code.

    In PyTorch 0.x a Function was an instance made per call (``Dropout(p, inplace=True)(x)``),
    and this class held the flag. ``apply`` never calls the constructor, so
    today the flag is an argument of ``forward``, and an in-place forward
    declares what it changed with ``ctx.mark_dirty``::

        class Scale(InplaceFunction):
            @staticmethod
            def forward(ctx, x, inplace=False):
                if inplace:
                    ctx.mark_dirty(x)
                    return x.mul_(2)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, None

    As with any Function, instantiating it warns and calling an instance raises.
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """The PyTorch 0.x instance-style Function whose inputs and outputs may be nested tuples and lists.

    Write ``forward_extended(self, *nested_inputs)`` and
    ``backward_extended(self, *nested_grad_outputs)``, and call an instance
    once: ``out = PairSum()((a, b), [c])``. The call flattens the tensors out
    of the nesting, runs one node on the flat list, and rebuilds the nesting
    for the outputs (and, in backward, for the gradients); backward returns
    gradients nested like the inputs (None for no gradient).
    ``self.save_for_backward`` takes nested structures too, and
    ``self.saved_tensors`` gives them back nested the same way.

    PyTorch 2.x still ships this class, but calling an instance there fails
    (``AttributeError``: the ``_do_forward`` it relies on was removed);
    minigrad keeps it working, as a flatten/unflatten example. Leaves must be
    tensors or None, as in PyTorch (anything else is a ``ValueError``).
    """

    _used = False
    _ctx: FunctionCtx | None = None  # this call's node, set only while forward or backward runs

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # One Function per subclass, so the node is named after it: PairSumBackward.
        cls._function = type(cls.__name__, (_NestedIOCall,), {})

    def __init__(self) -> None:
        """Instances are the point of this class, so unlike Function it does not warn."""

    def __call__(self, *nested_input):
        if self._used:
            raise RuntimeError(
                f"this {type(self).__name__} instance was already called once: create a new instance per "
                f"call, {type(self).__name__}()(...), since its state belongs to that call's node."
            )
        self._used = True
        self._nested_input = nested_input
        flat_output = self._function.apply(self, *_iter_tensors(nested_input))
        return _unflatten(flat_output, self._nested_output)

    def forward_extended(self, *nested_input):
        raise NotImplementedError("subclasses of NestedIOFunction must implement forward_extended(self, *inputs)")

    def backward_extended(self, *nested_grad_output):
        raise NotImplementedError("subclasses of NestedIOFunction must implement backward_extended(self, *grad_outputs)")

    def save_for_backward(self, *nested) -> None:
        self._to_save_nested = _structure(nested)
        self._ctx.save_for_backward(*_iter_tensors(nested))

    @property
    def saved_tensors(self) -> tuple:
        return _unflatten(self._ctx.saved_tensors, self._to_save_nested)

    def mark_dirty(self, *args, **kwargs) -> None:
        self._ctx.mark_dirty(*_iter_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs) -> None:
        self._ctx.mark_non_differentiable(*_iter_tensors((args, kwargs)))


class _NestedIOCall(Function):
    """Runs a NestedIOFunction instance as one node over its flattened tensors."""

    @staticmethod
    def forward(ctx, instance: NestedIOFunction, *flat_input):
        ctx.instance, instance._ctx = instance, ctx
        try:
            result = instance.forward_extended(*instance._nested_input)
        finally:
            instance._ctx = None
        del instance._nested_input
        # Keep the nesting, not the output tensors: they point to this node,
        # which points to the instance, and that would be a reference cycle.
        instance._nested_output = _structure(result)
        return tuple(_iter_tensors(result))

    @staticmethod
    def backward(ctx, *flat_grads):
        instance = ctx.instance
        instance._ctx = ctx
        try:
            result = instance.backward_extended(*_unflatten(flat_grads, instance._nested_output))
        finally:
            instance._ctx = None
        return (None, *_iter_tensors(result, allow_none=True))


def _iter_tensors(obj, allow_none: bool = False):
    """The tensors of a nesting of tuples, lists and dicts, depth first (with its Nones if ``allow_none``)."""
    if isinstance(obj, Tensor):
        yield obj
    elif obj is None:
        if allow_none:
            yield None
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _iter_tensors(item, allow_none)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _iter_tensors(item, allow_none)
    else:
        name = type_name(obj)
        raise ValueError(
            f"Auto nesting doesn't know how to process an input object of type {name}. "
            "Accepted types: Tensors, or lists/tuples of them"
        )


def _structure(obj):
    """The nesting of ``obj`` with each tensor replaced by a placeholder (0): what ``_unflatten`` needs."""
    if isinstance(obj, (list, tuple)):
        return type(obj)(_structure(item) for item in obj)
    return None if obj is None else 0


def _unflatten(flat: tuple, structure):
    """Rebuild ``structure``'s nesting of lists and tuples, taking its leaves from ``flat`` in order."""
    leaves = iter(flat)

    def build(proto):
        if proto is None:
            return None
        if isinstance(proto, (list, tuple)):
            return type(proto)(build(item) for item in proto)
        return next(leaves)

    return build(structure)
