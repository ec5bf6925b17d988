"""``LazyModuleMixin``: a layer that learns its input size from its first input.

``nn.LazyLinear(10)`` does not ask for ``in_features``: its weight starts as an
``UninitializedParameter`` (a placeholder that refuses every computation), and a forward
pre-hook, at the first call, reads the input's last dimension, gives the placeholders their
shapes (``materialize``), runs the layer's usual initialisation and then turns the module
into a plain ``nn.Linear`` (``cls_to_become``), hooks removed. Loading a ``state_dict``
into a lazy layer gives the placeholders the saved shapes instead.

Build the optimizer after the first call: before it, the parameters have no values.
"""
from __future__ import annotations

import itertools
from typing import Any

from minigrad.autograd.grad_mode import no_grad
from minigrad.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Put it first among the bases (``class LazyLinear(LazyModuleMixin, Linear)``) and define
    ``initialize_parameters(*inputs)``, which materializes the placeholders."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """As Module's, except that a placeholder is saved as it is (it cannot be detached)."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs) -> None:
        """Give each placeholder the shape of the tensor saved under its name (load_state_dict copies it in)."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) and not is_lazy(state_dict[key]):
                with no_grad():
                    param.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialize the placeholders from the first input (each lazy layer defines it)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args: tuple, kwargs: dict | None = None) -> None:
        """The first forward's pre-hook: initialize, remove both hooks, become ``cls_to_become``."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {type(self).__name__} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become
