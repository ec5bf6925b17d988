"""minigrad: a small autograd library with PyTorch's names, on NumPy and Numba.

    import minigrad
    x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([2., 4., 6.])

The autograd is ``minigrad/core/`` (read it in the order its ``__init__`` gives);
``minigrad/layers.py`` plugs the rest of the library into it, and this package
publishes what it defines. ``import minigrad.core`` alone loads the core only:
the library follows on first use of any other name of ``minigrad`` (after a
core-only start, use ``minigrad.<name>`` or ``import minigrad`` before importing a
library submodule such as ``minigrad.nn`` directly, so that the layers are in place).
"""
import sys as _sys


def _importing_core_alone() -> bool:
    """Whether the import that is running this file was asked for ``minigrad.core`` (or one of
    its modules): the outermost import in progress, read off the import system's frames."""
    frame, requested = _sys._getframe(1), None
    while frame is not None:
        if frame.f_code.co_name == "_find_and_load" and isinstance(frame.f_locals.get("name"), str):
            requested = frame.f_locals["name"]
        frame = frame.f_back
    return requested is not None and (requested == "minigrad.core" or requested.startswith("minigrad.core."))


def _load_library() -> None:
    import types

    from minigrad import layers

    for name, value in vars(layers).items():
        if name.startswith("__") and name.endswith("__") and name != "__version__":
            continue
        if isinstance(value, types.ModuleType) and value.__name__ != f"minigrad.{name}" and name not in _TORCH_NAMED:
            continue  # an op family module layers.py imports (minigrad.ops.elementwise is not minigrad.elementwise)
        globals()[name] = value
    globals().pop("__getattr__", None)


_TORCH_NAMED = {"special"}  # a module of minigrad.ops that PyTorch has at the top: torch.special


if _importing_core_alone():
    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        _load_library()
        try:
            return globals()[name]
        except KeyError:
            raise AttributeError(f"module 'minigrad' has no attribute {name!r}") from None
else:
    _load_library()
