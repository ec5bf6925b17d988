"""``minigrad.compile``: PyTorch's compiler entry point, which here compiles nothing.

    model = minigrad.compile(model)          # the same model, run as written

    @minigrad.compile(mode="max-autotune")
    def step(x): ...

Where minigrad differs, deliberately: it has no compiler (no graph capture, no generated
kernels), so ``compile`` returns the function or module itself, unchanged, and the same code
runs uncompiled, as fast as minigrad's ops are. PyTorch returns a wrapper (an
``OptimizedModule`` for a module). The arguments are checked as PyTorch checks them, so a
mistake in them shows here as it would there. ``Module.compile`` is the in-place form.
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["compile"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,  # noqa: A001
            backend: str | Callable = "inductor", mode: str | None = None, options: dict[str, Any] | None = None,
            disable: bool = False) -> Callable:
    """``model`` itself (see the module docstring); without a model, a decorator that returns
    what it decorates."""
    if model is None:
        def decorator(model: Callable) -> Callable:
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return decorator
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if backend == "inductor" and mode is not None and mode not in _MODES:  # (other backends ignore it)
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return model
