"""Grad mode, as ``torch.autograd.grad_mode``: the core's switch (``minigrad/core/grad_mode.py``)
plus ``inference_mode``."""
from __future__ import annotations

from minigrad.core.grad_mode import (  # noqa: F401
    _GradMode, _GradModeContext, enable_grad, is_grad_enabled, no_grad, set_grad_enabled as _set_grad_enabled,
)


class set_grad_enabled(_set_grad_enabled):
    """The core's switch (set at once, as a call), plus PyTorch's decorator: ``@set_grad_enabled(False)``
    puts the mode back as it was when decorating, and runs each call (each step of a generator) in
    ``mode``."""

    def __init__(self, mode: bool) -> None:
        super().__init__(mode)
        self.mode = bool(mode)

    def __enter__(self) -> None:
        _GradMode.enabled = self.mode

    def __call__(self, fn):
        _GradMode.enabled = self.prev
        return _GradModeContext.__call__(self, fn)

    def clone(self) -> "set_grad_enabled":
        return set_grad_enabled(self.mode)


class inference_mode(_GradModeContext):
    """``no_grad`` under PyTorch's name for inference: ``with inference_mode():`` or ``@inference_mode()``.

    ``inference_mode(False)`` switches it off for one block, and turns recording on, as PyTorch's does.
    The tensors made inside are *inference tensors* (``is_inference()``, their views and ``detach()``
    too), which a recorded op later refuses to save for backward, as PyTorch's: clone one first.
    """

    def __new__(cls, mode=True):
        if callable(mode):  # @inference_mode without parentheses
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.inference = bool(mode)

    def __enter__(self) -> None:
        self.prev, self.prev_inference = _GradMode.enabled, _GradMode.inference
        _GradMode.enabled, _GradMode.inference = not self.inference, self.inference

    def __exit__(self, *exc) -> None:
        _GradMode.enabled, _GradMode.inference = self.prev, self.prev_inference

    def clone(self) -> "inference_mode":
        return inference_mode(self.inference)


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return _GradMode.inference
