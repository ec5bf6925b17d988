"""The recorded graph: nodes, the edges between them, and saved tensors.

Every operation on tensors that require grad creates one *node*. A node knows
where to send the gradient of each of its inputs: ``next_functions[i]`` is the
pair ``(node, output_nr)`` that produced input ``i``, or ``(None, 0)`` when that
input needs no gradient. Leaves that require grad end in an ``AccumulateGrad``
node, which adds the gradient it receives into ``leaf.grad``.

Nodes point only backwards (to their inputs' producers), never to the tensors
they produced, so when the last tensor of a graph goes out of scope the whole
graph is freed at once by reference counting, without waiting for the cycle
collector.
"""
from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from typing import Callable

import minigrad.tensor as _tensor  # Tensor is defined after this module: look it up at call time

_sequence_numbers = itertools.count()
# Leaf accumulators run as soon as they are ready: PyTorch gives them the
# largest sequence numbers, and the engine runs the largest first.
_ACCUMULATE_GRAD_BASE = 1 << 62


class Node:
    """One step of the backward pass."""

    next_functions: tuple = ()
    _num_outputs = 1
    _pre_hooks: dict | None = None  # output_nr -> OrderedDict of tensor hooks (made when first needed)
    _retains_grad: dict | None = None  # output_nr -> weakref to the tensor

    def __init__(self) -> None:
        self._sequence_nr = next(_sequence_numbers)

    def name(self) -> str:
        return type(self).__name__

    @property
    def num_outputs(self) -> int:
        """How many tensors this node produced (a minigrad addition: PyTorch keeps it in C++)."""
        return self._num_outputs

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def _call_pre_hooks(self, grads: list) -> list:
        """Run the hooks of the tensors this node produced, on their full gradients."""
        if self._pre_hooks is None and self._retains_grad is None:
            return grads
        for output_nr, hooks in (self._pre_hooks or {}).items():
            for hook in hooks.values():
                if grads[output_nr] is None:
                    break
                replacement = hook(grads[output_nr])
                if replacement is not None:
                    grads[output_nr] = replacement
        for output_nr, tensor_ref in (self._retains_grad or {}).items():
            tensor = tensor_ref()
            if tensor is not None and grads[output_nr] is not None:
                g = grads[output_nr]
                tensor.grad = g.detach() if tensor.grad is None else tensor.grad + g.detach()
        return grads

    def __call__(self, *grad_outputs):
        """Run this node's backward: gradients of its outputs in, of its inputs out.

        As in PyTorch, ``y.grad_fn(g)`` is how you run one step of backward by hand.
        """
        return self._run_backward(list(grad_outputs))

    def _run_backward(self, grad_outputs: list) -> tuple:
        raise NotImplementedError

    def release_variables(self) -> None:
        """Free what was saved for backward (PyTorch's engine calls this after each node
        unless ``retain_graph``; it is not public in PyTorch's Python API)."""


class AccumulateGrad(Node):
    """The node at the end of a leaf tensor: adds incoming gradients into ``.grad``."""

    def __init__(self, variable) -> None:
        super().__init__()
        self._sequence_nr += _ACCUMULATE_GRAD_BASE
        self.variable = variable

    def _call_pre_hooks(self, grads: list) -> list:
        hooks = self.variable._hooks
        if not hooks:
            return grads
        self._pre_hooks = {0: hooks}
        return super()._call_pre_hooks(grads)

    def _run_backward(self, grad_outputs: list) -> tuple:
        self.accumulate(grad_outputs[0])
        return ()

    def accumulate(self, grad) -> None:
        variable = self.variable
        current = variable._grad  # not .grad: the shapes already match, and no warning applies
        if current is None:
            # Keep a copy: the same gradient may be held by a hook or sent to
            # another leaf too (AddBackward passes one gradient to both inputs),
            # and a plain .grad is later accumulated in place.
            variable._grad = grad if grad.grad_fn is not None else type(grad)._wrap(grad._data.copy())
        elif grad.grad_fn is not None or current.grad_fn is not None:
            variable._grad = current + grad  # create_graph: keep it differentiable
        else:
            current._data += grad._data
            current._version_counter.value += 1


class RemovableHandle:
    """Returned by ``register_hook``; ``handle.remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks: OrderedDict) -> None:
        self._hooks_ref = weakref.ref(hooks)
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def add_hook(hooks: OrderedDict, fn: Callable) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class SavedTensor:
    """What ``save_for_backward`` keeps of one tensor: its values and their version.

    An *output* of the node is not kept as the Tensor object itself: that tensor
    points to the node through ``grad_fn``, and the node pointing back would make
    a reference cycle that only the garbage collector could free. So we keep the
    array and rebuild a tensor with ``grad_fn=node`` when backward unpacks it.
    """

    __slots__ = ("tensor", "data", "version_counter", "saved_version", "output_nr", "requires_grad")

    def __init__(self, tensor, output_nr: int | None) -> None:
        self.output_nr = output_nr
        self.version_counter = tensor._version_counter
        self.saved_version = tensor._version_counter.value
        if output_nr is None:
            self.tensor = tensor
        else:
            self.tensor = None
            self.data = tensor._data
            self.requires_grad = tensor.requires_grad

    def unpack(self, node: Node):
        if self.version_counter.value != self.saved_version:
            if self.tensor is not None:
                t = self.tensor
                producer = f", which is output {t._output_nr} of {t.grad_fn.name()}," if t.grad_fn else ""
                shape, dtype = list(t.shape), t.dtype
            else:
                producer = f", which is output {self.output_nr} of {node.name()},"
                shape, dtype = list(self.data.shape), _tensor.Tensor._wrap(self.data).dtype
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{dtype} {shape}]{producer} is at version "
                f"{self.version_counter.value}; expected version {self.saved_version} instead. "
                f"It was saved by {node.name()}. Hint: find the in-place operation (a method "
                "ending in '_', or an assignment into the tensor) that changed it after it was "
                "saved, and use its out-of-place form or .clone() the tensor first."
            )
        if self.tensor is not None:
            return self.tensor
        out = _tensor.Tensor._wrap(self.data)
        out._version_counter = self.version_counter
        if self.requires_grad:
            out._requires_grad = True
            out.grad_fn, out._output_nr = node, self.output_nr
        return out
