"""Module hooks: your code, run around a layer's forward and backward, to look inside a model.

Register them on any Module (each call returns a handle; ``handle.remove()`` undoes it)::

    hook(module, args) -> None or new args                       register_forward_pre_hook
    hook(module, args, output) -> None or new output             register_forward_hook
    hook(module, grad_output) -> None or new grad_output         register_full_backward_pre_hook
    hook(module, grad_input, grad_output) -> None or new grad_input   register_full_backward_hook

``grad_output`` holds the gradients of the module's outputs, ``grad_input`` those of its
positional inputs (None for an argument that is not a tensor or needs no gradient), both as
tuples. A classroom use: record every layer's activations with a forward hook, and the size
of the gradient reaching each layer with a backward hook, to see vanishing gradients.

How the backward hooks see a whole module, not one op: as in PyTorch, the module's tensor
inputs pass through an identity Function (``BackwardHookFunction``) before forward, and its
outputs through another one after. Backward reaches the outputs' identity node first: its
node hook keeps ``grad_output`` (after the pre-hooks). It reaches the inputs' identity node
once the module's own nodes have run: its node hook calls the backward hooks with both.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.tensor import Tensor


class BackwardHookFunction(Function):
    """The identity, as a node the backward hooks can watch (PyTorch's, by the same name)."""

    _custom = True  # as in PyTorch, a custom Function: its node has an edge per tensor and sees every gradient

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def call_with_hooks(module, forward: Callable, args: tuple, kwargs: dict) -> Any:
    """``module(*args, **kwargs)`` with its hooks, in PyTorch's order: forward pre-hooks, the
    input side of the backward hooks, forward, forward hooks, the output side."""
    result = None
    called = set()  # the always_call forward hooks that ran
    try:
        for hook_id, hook in tuple(module._forward_pre_hooks.items()):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                new = hook(module, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError(
                            f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got {new}."
                        )
                    args, kwargs = new
            else:
                new = hook(module, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)

        backward_hook = None
        full_hooks = list(module._backward_hooks.values()) if module._is_full_backward_hook else []
        if full_hooks or module._backward_pre_hooks:
            backward_hook = _BackwardHook(module, full_hooks, list(module._backward_pre_hooks.values()))
            args = backward_hook.setup_input_hook(args)

        result = forward(*args, **kwargs)
        for hook_id, hook in tuple(module._forward_hooks.items()):
            if hook_id in module._forward_hooks_always_called:
                called.add(hook_id)
            if hook_id in module._forward_hooks_with_kwargs:
                new = hook(module, args, kwargs, result)
            else:
                new = hook(module, args, result)
            if new is not None:
                result = new

        if backward_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(result)}", stacklevel=3)
            result = backward_hook.setup_output_hook(result)
        if module._is_full_backward_hook is False and module._backward_hooks:
            _register_non_full_hooks(module, result)
        return result
    except Exception:
        for hook_id, hook in tuple(module._forward_hooks.items()):  # always_call hooks run even now
            if hook_id in module._forward_hooks_always_called and hook_id not in called:
                try:
                    if hook_id in module._forward_hooks_with_kwargs:
                        new = hook(module, args, kwargs, result)
                    else:
                        new = hook(module, args, result)
                    if new is not None:
                        result = new
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {e}", stacklevel=3)
        raise


class _BackwardHook:
    """One call's backward hooks: the gradients seen at the outputs wait here for the inputs' node."""

    def __init__(self, module, hooks: list, pre_hooks: list) -> None:
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_positions = self.output_positions = None  # where the tensors are among the arguments

    def setup_input_hook(self, args: tuple) -> tuple:
        args, self.input_positions = _through_identity(args, self._on_inputs)
        self.n_inputs = len(args)
        return args

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        outputs, self.output_positions = _through_identity(outputs, self._on_outputs)
        self.n_outputs = len(outputs)
        return outputs[0] if single else outputs

    def _on_outputs(self, grad_inputs: tuple, grad_outputs: tuple):
        """Node hook of the outputs' identity: keep grad_output (after the pre-hooks), pass it on."""
        self.grad_outputs = _spread(self.output_positions, grad_outputs, self.n_outputs)
        for pre_hook in self.pre_hooks:
            new = pre_hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                   f"got {len(new)}, but expected {len(self.grad_outputs)}")
            self.grad_outputs = new
        grad_outputs = self.grad_outputs
        if self.input_positions is None:  # no input needs a gradient: the hooks are called now
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                          "outputs since no inputs require gradients.", stacklevel=2)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                new = hook(self.module, grad_inputs, self.grad_outputs)
                if new is not None and not (isinstance(new, tuple) and all(g is None for g in new)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                       "always return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(grad_outputs[i] for i in self.output_positions)

    def _on_inputs(self, grad_inputs: tuple, grad_outputs: tuple):
        """Node hook of the inputs' identity: call the backward hooks with grad_input and grad_output."""
        if self.grad_outputs is None:  # the gradient reached the inputs without passing the outputs
            return None
        result = _spread(self.input_positions, grad_inputs, self.n_inputs)
        for hook in self.hooks:
            new = hook(self.module, result, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(result):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(new)}, but expected {len(result)}")
            result = new
        self.grad_outputs = None
        return tuple(result[i] for i in self.input_positions)


def _through_identity(args: tuple, node_hook: Callable) -> tuple[tuple, list | None]:
    """``args`` with their tensors passed through one BackwardHookFunction whose node calls
    ``node_hook``, and the positions of those tensors; unchanged, and None, if nothing is recorded."""
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if not (is_grad_enabled() and any(args[i].requires_grad for i in positions)):
        return args, None
    passed = BackwardHookFunction.apply(*[args[i] for i in positions])
    node = next(t.grad_fn for t in passed if t.grad_fn is not None)
    node.register_hook(node_hook)
    args = list(args)
    for i, t in zip(positions, passed):
        args[i] = t
    return tuple(args), positions


def _spread(positions: list, values: tuple, size: int) -> tuple:
    """``values`` placed at ``positions`` among ``size`` slots, None elsewhere."""
    result = [None] * size
    for i, v in zip(positions, values):
        result[i] = v
    return tuple(result)


def _register_non_full_hooks(module, result) -> None:
    """``register_backward_hook``'s older hooks: node hooks on the grad_fn of the first output tensor."""
    first = result
    while not isinstance(first, Tensor):
        first = next(v for v in first.values() if isinstance(v, Tensor)) if isinstance(first, dict) else first[0]
    node = first.grad_fn
    if node is not None:
        for hook in module._backward_hooks.values():
            node.register_hook(lambda grad_inputs, grad_outputs, hook=hook: hook(module, grad_inputs, grad_outputs))
