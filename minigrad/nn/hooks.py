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

Hooks on every module (``register_module_forward_hook`` and the other ``register_module_*``
functions, for debugging and profiling: PyTorch's, at PyTorch's path
``minigrad.nn.modules.module``) run before each module's own hooks of the same kind. The
registration hooks run when a module registers a parameter, a buffer or a sub-module, and
may replace it.
"""
from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, Callable

from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.autograd.graph import RemovableHandle
from minigrad._tensor import Tensor

# The hooks of every module, by handle id, as PyTorch's torch.nn.modules.module keeps them.
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()
_global_is_full_backward_hook: bool | None = None
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()
_global_parameter_registration_hooks: OrderedDict = OrderedDict()
# The ids of the four kinds above that run in a call: ``Module.__call__`` tests this one dict
# (its handles forget their id here too), so a model with no hook at all pays one check for them.
global_call_hooks: OrderedDict = OrderedDict()


def _add(hooks: OrderedDict, handle: RemovableHandle, hook: Callable, prepend: bool) -> None:
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)


class _ModuleHooks:
    """The hooks of one module: ``Module`` gets these methods from here (mixed into ``Module``)."""

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward; a returned value replaces ``args``
        (a non-tuple becomes a 1-tuple). ``with_kwargs``: ``hook(module, args, kwargs)``, which
        may return a new ``(args, kwargs)``."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        _add(self._forward_pre_hooks, handle, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward; a returned value replaces the
        output. ``with_kwargs``: ``hook(module, args, kwargs, output)``. ``always_call``: run it
        even when forward raises (with output None), as a ``finally`` would."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[
            self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        _add(self._forward_hooks, handle, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the outputs are known; a
        returned tuple replaces them (for this module's backward and everything before it)."""
        handle = RemovableHandle(self._backward_pre_hooks)
        _add(self._backward_pre_hooks, handle, hook, prepend)
        return handle

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the module's
        positional inputs are known; a returned tuple replaces ``grad_input``."""
        self._check_backward_hook_kind(True)
        handle = RemovableHandle(self._backward_hooks)
        _add(self._backward_hooks, handle, hook, prepend)
        return handle

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """PyTorch's older backward hook, kept for old code: ``hook(module, grad_input, grad_output)``
        with the gradients of the node that made the first output, not of the whole module (they
        agree only for a module made of one op). Use ``register_full_backward_hook``. (PyTorch also
        warns in some of the cases where the two disagree; minigrad does not.)"""
        self._check_backward_hook_kind(False)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _check_backward_hook_kind(self, full: bool) -> None:
        if self._is_full_backward_hook is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = full


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, args)`` before the forward of every module (before its own pre-hooks)."""
    return _register_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """Call ``hook(module, args, output)`` after the forward of every module (before its own
    forward hooks); ``with_kwargs`` and ``always_call`` as in ``Module.register_forward_hook``."""
    handle = _register_global(_global_forward_hooks, hook,
                              [_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called])
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """``Module.register_full_backward_pre_hook`` for every module (called before the module's own)."""
    return _register_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """``Module.register_full_backward_hook`` for every module (called before the module's own)."""
    _check_global_backward_hook_kind(True)
    return _register_global(_global_backward_hooks, hook)


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """``Module.register_backward_hook`` (the older, per-node kind) for every module; deprecated,
    as in PyTorch: use ``register_module_full_backward_hook``."""
    _check_global_backward_hook_kind(False)
    return _register_global(_global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, name, buffer)`` whenever a module registers a buffer; a returned value replaces it."""
    return _register_global(_global_buffer_registration_hooks, hook, counted=False)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, name, submodule)`` whenever a module registers a sub-module; a returned value replaces it."""
    return _register_global(_global_module_registration_hooks, hook, counted=False)


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(module, name, param)`` whenever a module registers a parameter; a returned value replaces it."""
    return _register_global(_global_parameter_registration_hooks, hook, counted=False)


def _register_global(hooks: OrderedDict, hook: Callable, extra: list | None = None,
                     counted: bool = True) -> RemovableHandle:
    extra = list(extra or [])
    if counted:
        extra.append(global_call_hooks)
    handle = RemovableHandle(hooks, extra_dict=extra)
    hooks[handle.id] = hook
    if counted:
        global_call_hooks[handle.id] = True
    return handle


def _check_global_backward_hook_kind(full: bool) -> None:
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook = full


def run_registration_hooks(kind: str, module, name: str, value):
    """``value`` (a ``kind``: "buffer", "module" or "parameter") after each global registration
    hook of that kind has had the chance to replace it."""
    hooks = {"buffer": _global_buffer_registration_hooks, "module": _global_module_registration_hooks,
             "parameter": _global_parameter_registration_hooks}[kind]
    for hook in tuple(hooks.values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


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
    input side of the backward hooks, forward, forward hooks, the output side. The hooks of
    every module come before the module's own ones of each kind."""
    result = None
    called = set()  # the always_call forward hooks that ran
    with_kwargs = module._forward_hooks_with_kwargs
    always_called = module._forward_hooks_always_called
    try:
        for hook_id, hook in (*_global_forward_pre_hooks.items(), *module._forward_pre_hooks.items()):
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

        full_hooks, other_hooks = _backward_hooks_of(module)
        pre_hooks = [*_global_backward_pre_hooks.values(), *module._backward_pre_hooks.values()]
        backward_hook = None
        if full_hooks or pre_hooks:
            backward_hook = _BackwardHook(module, full_hooks, pre_hooks)
            args = backward_hook.setup_input_hook(args)

        result = forward(*args, **kwargs)
        for hook_id, hook in (*_global_forward_hooks.items(), *module._forward_hooks.items()):
            if hook_id in always_called or hook_id in _global_forward_hooks_always_called:
                called.add(hook_id)
            new = _call_forward_hook(hook_id, hook, with_kwargs, module, args, kwargs, result)
            if new is not None:
                result = new

        if backward_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(result)}", stacklevel=3)
            result = backward_hook.setup_output_hook(result)
        if other_hooks:
            _register_non_full_hooks(module, other_hooks, result)
        return result
    except Exception:
        for hook_id, hook in (*_global_forward_hooks.items(), *module._forward_hooks.items()):
            if hook_id in called or not (hook_id in always_called or hook_id in _global_forward_hooks_always_called):
                continue  # (always_call hooks run even now, once)
            try:
                new = _call_forward_hook(hook_id, hook, with_kwargs, module, args, kwargs, result)
                if new is not None:
                    result = new
            except Exception as e:
                scope = "global module" if hook_id in _global_forward_hooks else "module"
                warnings.warn(f"{scope} forward hook with ``always_call=True`` raised an exception that was "
                              f"silenced as another error was raised in forward: {e}", stacklevel=3)
        raise


def _backward_hooks_of(module) -> tuple[list, list]:
    """The full backward hooks and the older per-node ones that apply to ``module``, global ones first."""
    full, other = [], []
    for is_full, hooks in ((_global_is_full_backward_hook, _global_backward_hooks),
                           (module._is_full_backward_hook, module._backward_hooks)):
        if is_full is not None:
            (full if is_full else other).extend(hooks.values())
    return full, other


def _call_forward_hook(hook_id: int, hook: Callable, with_kwargs: dict, module, args: tuple, kwargs: dict, result):
    """``hook(module, args, result)``, or with ``kwargs`` before ``result`` if it was registered ``with_kwargs``."""
    if hook_id in with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
        return hook(module, args, kwargs, result)
    return hook(module, args, result)


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


def _register_non_full_hooks(module, hooks: list, result) -> None:
    """``register_backward_hook``'s older hooks: node hooks on the grad_fn of the first output tensor."""
    first = result
    while not isinstance(first, Tensor):
        first = next(v for v in first.values() if isinstance(v, Tensor)) if isinstance(first, dict) else first[0]
    node = first.grad_fn
    if node is not None:
        for hook in hooks:
            node.register_hook(lambda grad_inputs, grad_outputs, hook=hook: hook(module, grad_inputs, grad_outputs))
