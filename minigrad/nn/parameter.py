"""``Parameter``: a tensor that a Module should train.

A Parameter is an ordinary leaf tensor with ``requires_grad=True``; its class
is the only difference. Assigning one to a Module attribute (``self.weight =
Parameter(...)``) is what registers it, so ``model.parameters()`` finds it
and an optimizer updates it. A plain tensor attribute is not registered.
"""
from __future__ import annotations

from minigrad.tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor registered by Modules: ``Parameter(data, requires_grad=True)``.

    Like ``torch.nn.Parameter`` it shares memory with ``data`` (no copy) and
    keeps its dtype. Operations on a Parameter give plain Tensors.
    """

    __slots__ = ()

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            data = Tensor()
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(data) expects a Tensor, but got {type(data).__name__}: "
                "wrap it first, e.g. Parameter(minigrad.tensor(data))"
            )
        self._init(data._data)
        self._version_counter = data._version_counter  # shared memory, so a shared version
        if requires_grad:
            self.requires_grad_()

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
