"""One place per op: the code that defines an op also declares the names it is called by.

``minigrad/tensor.py`` holds what a tensor *is* (its data, its history, its views); it
imports no op. Each module here gives ``Tensor`` the methods of its ops::

    @tensor_method(top_level=True)
    def exp(self) -> Tensor:
        return Exp.apply(self)

makes ``x.exp()`` and, with ``top_level=True``, ``minigrad.exp(x)`` (which also takes
``out=``, as PyTorch's does). So adding an op touches one file: its ``Function`` and
its method side by side. ``minigrad/__init__.py`` imports every op module and
publishes ``TOP_LEVEL``. Functions with no method form, which combine several tensors
(``cat``, ``stack``, ``where``), are in ``minigrad/functional_ops.py``.
"""
from __future__ import annotations

from typing import Callable

from minigrad.tensor import Tensor, _argument, _operand

# name -> the method that ``minigrad.<name>(input, ...)`` calls on its first argument
TOP_LEVEL: dict[str, Callable] = {}
# the top-level names that, as in PyTorch, take no ``out=`` (in-place ops, and those declared ``out=False``)
WITHOUT_OUT: set[str] = set()


def tensor_method(*names: str, top_level: bool = False, out: bool = True) -> Callable:
    """Make the decorated function ``Tensor.<name>`` for each of ``names`` (default: its own name).

    An op named like a builtin (``sum``, ``max``, ``abs``, ``round``) is defined as ``_sum`` and
    declared ``@tensor_method("sum")``, so the builtin keeps working inside its module.
    ``out=False``: ``minigrad.<name>`` takes no ``out=``, where PyTorch's takes none (views,
    rearrangements, and the functions PyTorch gives no out overload).
    """
    def declare(fn: Callable) -> Callable:
        if hasattr(fn, "__qualname__"):  # (a property has none) help() and tracebacks say Tensor.exp
            fn.__name__ = names[0] if names else fn.__name__
            fn.__qualname__ = f"Tensor.{fn.__name__}"
        for name in names or (fn.__name__,):
            setattr(Tensor, name, fn)
            if top_level and not name.startswith("_"):
                TOP_LEVEL[name] = fn
                if not out or name.endswith("_"):
                    WITHOUT_OUT.add(name)
        return fn
    return declare


def binary_operator(name: str, method: str | None, forward: Callable, reflected: Callable,
                    top_level: bool = True) -> None:
    """Declare ``Tensor.__<name>__`` (``x + y`` is ``forward(x, y)``), ``Tensor.__r<name>__``
    (``2 + x`` is ``reflected(x, 2)``) and the method form ``Tensor.<method>`` (None: the op declares
    its method itself, as ``div`` does for its ``rounding_mode``).

    The operators take a Tensor or a Python number (a NumPy array becomes a tensor); any other
    operand is NotImplemented, so Python tries the other side, then raises TypeError, as in
    PyTorch. The method form (``x.add(y)``) raises that TypeError itself; ``top_level``
    makes it ``minigrad.<method>`` too.
    """
    def operator(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else forward(self, other)

    def reflected_operator(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else reflected(self, other)

    def method_form(self, other):
        return forward(self, _argument(method, other))

    for dunder, fn in ((f"__{name}__", operator), (f"__r{name}__", reflected_operator), (method, method_form)):
        if dunder is not None:
            fn.__name__, fn.__qualname__ = dunder, f"Tensor.{dunder}"
            setattr(Tensor, dunder, fn)
    if top_level and method is not None:
        TOP_LEVEL[method] = method_form


def alias(name: str, of: str, top_level: bool = False) -> None:
    """``Tensor.<name>`` is the very function ``Tensor.<of>`` (PyTorch's second names: ``multiply``
    for ``mul``, ``greater`` for ``gt``); ``top_level``: ``minigrad.<name>`` is ``minigrad.<of>`` too."""
    setattr(Tensor, name, getattr(Tensor, of))
    if top_level:
        TOP_LEVEL[name] = TOP_LEVEL[of]
        if of in WITHOUT_OUT:
            WITHOUT_OUT.add(name)
