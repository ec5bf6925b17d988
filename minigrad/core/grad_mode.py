"""Grad mode: one global switch that says whether operations are recorded.

``no_grad`` turns recording off (evaluation, optimizer steps, the inside of a
Function's forward); ``enable_grad`` turns it back on. The engine sets it to
``create_graph`` while running backward, which is what makes derivatives of
derivatives possible.
"""
from __future__ import annotations

import functools
import inspect
from typing import Callable


class _GradModeState:
    """The switch is an object's slot, not a class attribute: Python reads a slot faster, and every
    write to a class attribute empties the caches of the lookups on that class."""

    __slots__ = ("enabled", "inference")  # inference: inside inference_mode (minigrad.autograd.grad_mode)


_GradMode = _GradModeState()
_GradMode.enabled, _GradMode.inference = True, False  # (inference_mode also turns recording off)


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
    """Base of ``no_grad`` / ``enable_grad``: a context manager and a decorator.

    As a decorator of a generator function, each resumption of the generator
    runs in the mode (PyTorch's ``_DecoratorContextManager``), not only its creation.
    """

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

    def clone(self) -> "_GradModeContext":
        return self.__class__()

    def __call__(self, fn: Callable) -> Callable:
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self.clone, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper


def _wrap_generator(make_context: Callable, fn: Callable) -> Callable:
    """A generator function whose every step (first, after each ``send``, ``throw``) runs inside a
    fresh ``make_context()``: the caller's mode is back in force between steps."""
    @functools.wraps(fn)
    def generator(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            with make_context():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_context():
                        gen.close()
                    raise
                except BaseException as error:
                    with make_context():
                        response = gen.throw(error)
                else:
                    with make_context():
                        response = gen.send(request)
        except StopIteration as stop:  # the generator returned: so does this one, with its value
            return stop.value
    return generator


class no_grad(_GradModeContext):
    """Record nothing inside this block: results have ``requires_grad=False``."""

    mode = False


class enable_grad(_GradModeContext):
    """Record operations again, even inside ``no_grad``."""

    mode = True
