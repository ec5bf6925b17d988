"""One place per op: the code that defines an op also declares the names it is called by.

The core (``minigrad/core/``) holds what a tensor *is* (its data, its history) and the
primitive ops; ``tensor_method`` is the core's op table, into which each module here
gives ``Tensor`` the methods of its ops::

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

import numpy as np

from minigrad._tensor import Tensor, _argument, _operand
from minigrad.core.grad_mode import _GradMode
from minigrad.core.extension import TOP_LEVEL, WITHOUT_OUT, tensor_method  # noqa: F401  (the core's op table)


FLOAT_DTYPES = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))


def binary_operator(name: str, method: str | None, forward: Callable, reflected: Callable,
                    top_level: bool = True, ufunc: np.ufunc | None = None) -> None:
    """Declare ``Tensor.__<name>__`` (``x + y`` is ``forward(x, y)``), ``Tensor.__r<name>__``
    (``2 + x`` is ``reflected(x, 2)``) and the method form ``Tensor.<method>`` (None: the op declares
    its method itself, as ``div`` does for its ``rounding_mode``).

    The operators take a Tensor or a Python number (a NumPy array becomes a tensor); any other
    operand is NotImplemented, so Python tries the other side, then raises TypeError, as in
    PyTorch. The method form (``x.add(y)``) raises that TypeError itself; ``top_level``
    makes it ``minigrad.<method>`` too.

    ``ufunc``: the NumPy ufunc that ``forward`` computes when nothing records. Then, with grad
    mode off (every op a backward or a custom Function's forward runs), a row-major float tensor
    and a Python float, as in ``grad * 2.0``, go straight to it: NumPy computes in the tensor's
    dtype and lays the result out as the tensor, all that ``forward``'s rules would see to.
    """
    def operator(self, other):
        if type(other) is float:
            if ufunc is not None and not _GradMode.enabled and type(self) is Tensor:
                x = self._data
                if x.flags.c_contiguous and x.dtype in FLOAT_DTYPES:
                    return Tensor._wrap(ufunc(x, np.array(other, x.dtype)))  # (a 0-d array: quicker than a float)
        elif type(other) is not Tensor:  # (the usual cases need no look)
            other = _operand(other)
            if other is NotImplemented:
                return NotImplemented
        return forward(self, other)

    def reflected_operator(self, other):
        if type(other) is not Tensor:
            other = _operand(other)
            if other is NotImplemented:
                return NotImplemented
        return reflected(self, other)

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
