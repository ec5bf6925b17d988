"""Grad mode: one global switch that says whether operations are recorded.

``no_grad`` turns recording off (evaluation, optimizer steps, the inside of a
Function's forward); ``enable_grad`` turns it back on. The engine sets it to
``create_graph`` while running backward, which is what makes derivatives of
derivatives possible.
"""
from __future__ import annotations

import functools
from typing import Callable


class _GradMode:
    enabled = True
    inference = False  # inside inference_mode (which also turns recording off)


def is_grad_enabled() -> bool:
    """True when new operations are recorded in the graph."""
    return _GradMode.enabled


class set_grad_enabled:
    """Set grad mode on or off, as a function call or a context manager."""

    def __init__(self, mode: bool) -> None:
        self.prev = _GradMode.enabled
        _GradMode.enabled = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _GradMode.enabled = self.prev


class _GradModeContext:
    """Base of ``no_grad`` / ``enable_grad``: a context manager and a decorator."""

    mode: bool

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)  # ``@no_grad`` without parentheses, as PyTorch 2 allows

    def __enter__(self) -> None:
        self.prev = _GradMode.enabled
        _GradMode.enabled = self.mode

    def __exit__(self, *exc) -> None:
        _GradMode.enabled = self.prev

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Record nothing inside this block: results have ``requires_grad=False``."""

    mode = False


class enable_grad(_GradModeContext):
    """Record operations again, even inside ``no_grad``."""

    mode = True


class inference_mode(_GradModeContext):
    """``no_grad`` under PyTorch's name for inference: ``with inference_mode():`` or ``@inference_mode()``.

    ``inference_mode(False)`` switches it off for one block, and turns recording on, as PyTorch's does.
    minigrad deliberately differs in one point: PyTorch also marks the tensors made inside
    as *inference tensors*, which may never enter a recorded graph later; minigrad's are
    ordinary tensors that require no grad, as under ``no_grad``.
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

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self.inference):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return _GradMode.inference
