"""Hooks and ``retain_grad``: a first reading of the core skips this file.

What a node or a tensor keeps so that code can watch or change the gradients
flowing through it in backward: hooks on a node (``register_prehook``,
``register_hook``), on a tensor's gradient (``register_hook``), after a leaf's
``.grad`` is summed (``register_post_accumulate_grad_hook``), and a non-leaf's
own ``.grad`` (``retain_grad``). The engine runs them where
``Node._call_pre_hooks``, ``instrumented.py`` and ``AccumulateGrad`` say; a
node or tensor without any costs nothing.
"""
from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict
from typing import Callable

from minigrad.core.graph import Node
from minigrad.core.tensor import Tensor, extend_tensor


class RemovableHandle:
    """Returned by ``register_hook``; ``handle.remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks: OrderedDict, *, extra_dict: dict | list | None = None) -> None:
        """``extra_dict``: more dicts that may hold this hook's id (a Module's record of which hooks
        take keyword arguments, say); ``remove`` forgets it there too."""
        self._hooks_ref = weakref.ref(hooks)
        extra = [] if extra_dict is None else extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self._extra_refs = [weakref.ref(d) for d in extra]
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        for ref in (self._hooks_ref, *self._extra_refs):
            hooks = ref()
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


class _NodeHooks:
    """Given to ``Node`` (below)."""

    def register_prehook(self, fn: Callable) -> "RemovableHandle":
        """Call ``fn(grad_outputs)`` before this node runs; a returned tuple replaces ``grad_outputs``.

        It runs after the hooks of the tensors this node produced and after
        ``retain_grad`` has filled their ``.grad``, as in PyTorch's engine.
        """
        return add_hook(self._hook_dicts()[0], fn)

    def register_hook(self, fn: Callable) -> "RemovableHandle":
        """Call ``fn(grad_inputs, grad_outputs)`` after this node runs; a returned tuple replaces ``grad_inputs``."""
        return add_hook(self._hook_dicts()[1], fn)

    def _hook_dicts(self) -> tuple[OrderedDict, OrderedDict]:
        if self._node_hooks is None:
            self._node_hooks = (OrderedDict(), OrderedDict())
        return self._node_hooks


for _name in ("register_prehook", "register_hook", "_hook_dicts"):
    setattr(Node, _name, vars(_NodeHooks)[_name])



@extend_tensor
class _TensorHooks:
    """Given to ``Tensor`` (``extend_tensor``)."""

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf whose ``.grad`` backward fills (``retain_grad()`` was called)."""
        return self._retains_grad

    @property
    def _retains_grad(self) -> bool:
        node = self._grad_fn
        return node is not None and self._output_nr in (node._retains_grad or ())

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward.

        It follows the tensor through in-place operations (``_set_history``
        moves it), so ``.grad`` is the gradient of the current values.
        """
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._retains_grad:  # already kept: PyTorch returns before reading (and checking) the history
            return
        node = self.grad_fn
        if node is not None:
            if node._retains_grad is None:
                node._retains_grad = {}
            node._retains_grad[self._output_nr] = weakref.ref(self)

    def _accumulate_retained(self, grad: Tensor) -> None:
        """PyTorch's retain_grad rule: a copy first (recorded under create_graph), then out-of-place sums."""
        self._grad = grad._copy_grad(retained=True) if self._grad is None else self._grad + grad

    def _set_history(self, grad_fn, output_nr: int) -> None:
        """Give this tensor a new producer after an in-place change.

        Hooks registered so far stay with the old node (they belong to the old
        values) and the next ``register_hook`` starts a new dict on the new one;
        ``retain_grad()`` moves to the new node, as in PyTorch.
        """
        old = self._grad_fn
        retained = old is not None and old._retains_grad and old._retains_grad.get(self._output_nr)
        if retained and retained() is self:
            del old._retains_grad[self._output_nr]
        self._requires_grad, self._grad_fn, self._output_nr = grad_fn is not None, grad_fn, output_nr
        self._hooks = None
        if retained and retained() is self:
            self.retain_grad()

    def register_hook(self, hook) -> RemovableHandle:
        """Call ``hook(grad)`` with this tensor's full gradient; a returned tensor replaces it.

        On a non-leaf the hook belongs to the current version. As in PyTorch,
        the tensor keeps one dict of hooks, attached to its ``grad_fn`` by the
        first ``register_hook``; an in-place operation gives the tensor a new
        node and a fresh dict, and the old hooks keep firing at the old node,
        with the gradient of the values before it.
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        hooks = self._hooks
        if hooks is None:
            hooks = self._hooks = OrderedDict()
            node = self.grad_fn
            if node is not None:
                node._pre_hooks = (node._pre_hooks or ()) + ((self._output_nr, hooks),)
            else:  # a leaf: its AccumulateGrad reads the tensor's own dict, once told there is one
                accumulator = self._grad_accumulator and self._grad_accumulator()
                if accumulator is not None:
                    accumulator._pre_hooks = ()
        return add_hook(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
        """Call ``hook(tensor)`` on this leaf each time backward has added into its ``.grad``: for
        example, to take an optimizer step per parameter during backward, and free that ``.grad``
        early. The hook returns None (it acts on ``tensor.grad``; it cannot replace it)."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = OrderedDict()
        return add_hook(self._post_accumulate_grad_hooks, hook)
