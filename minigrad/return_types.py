"""The named results of ops that give values and their indices, as ``torch.return_types``.

``x.max(dim)`` returns a ``minigrad.return_types.max``: a tuple (so
``values, indices = x.max(0)`` works) whose parts also have names
(``x.max(0).indices``), printed as PyTorch prints them.
"""
from __future__ import annotations

from collections import namedtuple


def _values_and_indices(name: str) -> type:
    def __repr__(self) -> str:
        return f"minigrad.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"

    return type(name, (namedtuple(name, ["values", "indices"]),),
                {"__slots__": (), "__repr__": __repr__, "__module__": __name__, "__qualname__": name})


max = _values_and_indices("max")  # noqa: A001  (PyTorch's names: torch.return_types.max, ...)
min = _values_and_indices("min")  # noqa: A001
sort = _values_and_indices("sort")
topk = _values_and_indices("topk")
cummax = _values_and_indices("cummax")
cummin = _values_and_indices("cummin")
