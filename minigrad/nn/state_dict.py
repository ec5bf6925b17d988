"""Saving and loading a Module: ``state_dict``, ``load_state_dict`` (each module loads its own part
in ``_load_from_state_dict``), their hooks, and the extra state a layer may save beside its tensors.

``Module`` gets these methods from ``_ModuleStateDict`` (``minigrad/nn/module.py`` says how its
methods are laid out); they behave as PyTorch's, which keeps them in ``Module``'s one file.
"""
from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Any, Callable, TypeVar

from minigrad.autograd.grad_mode import no_grad
from minigrad.autograd.graph import RemovableHandle
from minigrad.nn.parameter import Parameter, is_lazy
from minigrad._tensor import Tensor


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys the model expected but did not get, and the others."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"  # state_dict's key for what get_extra_state returns


def _quoted(keys: list) -> str:
    return ", ".join(f'"{k}"' for k in keys)


class _ModuleStateDict:
    """``Module``'s saving and loading (mixed into ``Module``: use them on a Module)."""

    T_destination = TypeVar("T_destination", bound=dict)

    def state_dict(self, *args: Any, destination: T_destination | None = None, prefix: str = "",
                   keep_vars: bool = False) -> T_destination:
        """Every parameter and persistent buffer by its dotted name, detached (sharing memory).

        Unlike ``named_parameters``, a shared parameter appears under each of its names. A layer
        that defines ``get_extra_state`` adds what it returns under ``<prefix>_extra_state``. The
        result (an OrderedDict, or ``destination`` filled in) carries ``_metadata``: each
        module's ``_version``, which ``load_state_dict`` hands back to ``_load_from_state_dict``.
        The state_dict hooks run around each module's part: pre-hooks ``hook(module, prefix,
        keep_vars)`` before it, post-hooks ``hook(module, state_dict, prefix, local_metadata)`` after.
        """
        if args:  # PyTorch's older positional form (destination, prefix, keep_vars)
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                          " for details.", FutureWarning, stacklevel=2)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=f"{prefix}{name}.", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:  # (the private hook's old rule: a returned dict replaces it)
                destination = result
        return destination

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """This module's own entries of ``state_dict`` (not its sub-modules'): a layer that saves
        something else overrides it (a lazy module keeps its placeholders)."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        if type(self).get_extra_state is not _ModuleStateDict.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """Define it (with ``set_extra_state``) to save more than tensors in ``state_dict``: what it
        returns is stored under ``<prefix>_extra_state``, and should pickle."""
        raise RuntimeError("Module.get_extra_state() is only called when a subclass defines it: define "
                           "get_extra_state and set_extra_state together in your module.")

    def set_extra_state(self, state: Any) -> None:
        """Receives what ``get_extra_state`` saved, when ``load_state_dict`` loads it."""
        raise RuntimeError("Module.set_extra_state() is only called when a subclass defines it: define "
                           "get_extra_state and set_extra_state together in your module.")

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before this module's part of ``state_dict``."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after this module's part of
        ``state_dict``; it edits ``state_dict`` in place and must return None."""
        hook._from_public_api = True  # (what tells it from the private form's hooks, as in PyTorch)
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """PyTorch's older post-hook: a dict it returns replaces the result (at the root module only)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was "
                               "previously registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its part; it may rewrite the keys
        under ``prefix`` (how a layer keeps reading checkpoints saved in an older layout)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False) -> RemovableHandle:
        """The same hook without the module argument (unless ``with_module``): PyTorch's older form."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self) if with_module else hook
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after this module and its sub-modules are
        loaded; editing ``incompatible_keys.missing_keys`` / ``unexpected_keys`` in place changes
        what a strict load complains about. It must return None."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy the values of ``state_dict`` into this model's tensors, in place.

        Keys must match ``self.state_dict()``'s; with ``strict=False`` missing and unexpected
        keys are returned instead of raised. A shape mismatch is an error either way; as in
        PyTorch, the entries that fit are loaded before the error is raised. ``assign=True``
        puts the checkpoint's tensors themselves into the model instead of copying their values
        (each parameter keeps its ``requires_grad``): build the optimizer after it. Each module
        loads its own part (``_load_from_state_dict``), sub-modules after their parent.
        Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # the modules' steps may rewrite keys: never in the caller's dict
        self._load_tree(state_dict, "", metadata, assign, missing, unexpected, errors)
        if strict:  # PyTorch's order: missing keys, unexpected keys, then the other errors
            if unexpected:
                errors.insert(0, f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. ")
            if missing:
                errors.insert(0, f"Missing key(s) in state_dict: {_quoted(missing)}. ")
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__, "\n\t".join(errors))
            )
        return _IncompatibleKeys(missing, unexpected)

    def _load_tree(self, state_dict: dict, prefix: str, metadata: dict | None, assign: bool,
                   missing: list, unexpected: list, errors: list) -> None:
        """``load_state_dict``'s walk: this module's part, each sub-module's (with the keys under
        its prefix), then this module's post-hooks."""
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = True
        self._load_from_state_dict(state_dict, prefix, local_metadata, True, missing, unexpected, errors)
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = f"{prefix}{name}."
                child_state = {k: v for k, v in state_dict.items() if k.startswith(child_prefix)}
                child._load_tree(child_state, child_prefix, metadata, assign, missing, unexpected, errors)
        incompatible = _IncompatibleKeys(missing, unexpected)
        for hook in self._load_state_dict_post_hooks.values():
            if hook(self, incompatible) is not None:
                raise AssertionError(
                    "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return new "
                    "values, if incompatible_keys need to be modified, it should be done inplace."
                )

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        """Load this module's own entries (keys ``prefix + name``) and record what does not fit.

        A layer overrides it to read older checkpoints (``local_metadata["version"]`` is the
        ``_version`` they were saved with) and calls ``super()._load_from_state_dict(...)``.
        ``state_dict`` is a copy: the override may add or remove keys. The load pre-hooks run first.
        """
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {name: t for name, t in itertools.chain(
            self._parameters.items(),
            ((n, b) for n, b in self._buffers.items() if n not in self._non_persistent_buffers)) if t is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected a Tensor from checkpoint '
                                  f"but received {type(value)}")
                continue
            lazy = is_lazy(param)  # (a lazy module's pre-hook has given it the saved shape, if there was one)
            if not lazy and param.ndim == 0 and value.shape == (1,):  # (PyTorch 0.3's checkpoints kept (1,))
                value = value[0]
            if not lazy and value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():  # copying into a leaf that requires grad is not a recorded operation
                    if assign:
                        if isinstance(param, Parameter):
                            if isinstance(value, Parameter):
                                value.requires_grad_(param.requires_grad)
                            else:
                                value = Parameter(value, requires_grad=param.requires_grad)
                        setattr(self, name, value)
                    elif not lazy:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, "
                                  f"an exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not _ModuleStateDict.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    first, *rest = key[len(prefix):].split(".", 1)
                    if first not in (self._modules if rest else local_state):  # (a dotted name: a sub-module's)
                        unexpected_keys.append(key)

