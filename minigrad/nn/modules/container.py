"""Containers: ``Sequential`` (a pipeline) and ``ModuleList`` (a list that registers its layers).

A plain Python list of layers is invisible to ``parameters()``: only
attributes that are Modules get registered. Both containers store their layers
as sub-modules named "0", "1", ..., so ``model.parameters()`` finds them and
``state_dict`` keys read ``"0.weight"``.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Iterable, Iterator

from minigrad.nn.module import Module, _addindent
from minigrad.tensor import Tensor


class _IndexedModules(Module):
    """What Sequential and ModuleList share: sub-modules named by their position."""

    def _index(self, idx: int) -> int:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._from_items(list(self._modules.items())[idx])
        return list(self._modules.values())[self._index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[self._index(idx)]
        setattr(self, key, module)

    def append(self, module: Module) -> "_IndexedModules":
        """Add ``module`` at the end, named by its position."""
        self.add_module(str(len(self)), module)
        return self


class Sequential(_IndexedModules):
    """Layers applied one after the other: ``Sequential(Linear(64, 128), ReLU(), Linear(128, 10))``.

    Also accepts an ``OrderedDict`` of named layers. Indexing gives a layer;
    a slice gives a new Sequential of the same layer objects.
    """

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for module in args:
                self.append(module)

    @classmethod
    def _from_items(cls, items: list) -> "Sequential":
        return cls(OrderedDict(items))  # a slice keeps the layers' names, as in PyTorch

    def forward(self, input: Tensor) -> Tensor:
        for module in self:
            input = module(input)
        return input


class ModuleList(_IndexedModules):
    """A list of layers that ``parameters()`` can see; you write the forward that uses them.

    Its repr groups identical neighbours, as PyTorch does: ``(0-2): 3 x ReLU()``.
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @classmethod
    def _from_items(cls, items: list) -> "ModuleList":
        return cls(module for _, module in items)  # renumbered from 0, as in PyTorch

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        for module in modules:
            self.append(module)
        return self

    def __repr__(self) -> str:
        reprs = [repr(m) for m in self]
        if not reprs:
            return "ModuleList()"
        runs = []  # [first index, last index, repr] of each run of equal reprs
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = [
            _addindent(f"({start}): {r}" if start == end else f"({start}-{end}): {end - start + 1} x {r}", 2)
            for start, end, r in runs
        ]
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"
