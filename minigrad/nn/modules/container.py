"""Containers: ``Sequential`` (a pipeline), ``ModuleList`` and ``ModuleDict`` (layers in a list or a
dict), ``ParameterList`` and ``ParameterDict`` (parameters in a list or a dict).

A plain Python list or dict of layers or parameters is invisible to ``parameters()``: only
attributes that are Modules or Parameters get registered. These containers register what they
hold under its position ("0", "1", ...) or its key, so ``model.parameters()``, ``state_dict()``,
``.to()`` and ``zero_grad()`` see it, with PyTorch's names: ``"layers.0.weight"``, ``"params.a"``.
"""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain
from typing import Any, Iterator

from minigrad.nn.module import Module, _addindent
from minigrad.nn.parameter import Parameter
from minigrad._tensor import Tensor


class _IndexedModules(Module):
    """What Sequential and ModuleList share: sub-modules named by their position."""

    def _index(self, idx: int) -> int:
        idx, n = operator.index(idx), len(self)
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

    def __delitem__(self, idx) -> None:
        """Remove a layer (or a slice of them); the rest are renumbered from 0, as in PyTorch."""
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[self._index(idx)]]):
            delattr(self, key)
        self._renumber(list(self._modules.values()))

    def _renumber(self, modules: list) -> None:
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(modules))

    def pop(self, key) -> Module:
        """Remove the layer at ``key`` (an index or a slice) and return it."""
        value = self[key]
        del self[key]
        return value

    def insert(self, index: int, module: Module) -> "_IndexedModules":
        """Put ``module`` before position ``index`` (negative counts from the end); later layers move up."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)
        return self

    def append(self, module: Module) -> "_IndexedModules":
        """Add ``module`` at the end, named by its position."""
        self.add_module(str(len(self)), module)
        return self

    def __dir__(self) -> list:
        return [key for key in super().__dir__() if not key.isdigit()]


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

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        for module in sequential:
            self.append(module)
        return self

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return self.extend(other)

    def _repeats(self, other: int) -> int:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return other

    def __mul__(self, other: int) -> "Sequential":
        """The same layers (the same objects, so shared parameters) ``other`` times over."""
        return Sequential(*(list(self) * self._repeats(other)))

    def __rmul__(self, other: int) -> "Sequential":
        return self.__mul__(other)

    def __imul__(self, other: int) -> "Sequential":
        return self.extend(list(self) * (self._repeats(other) - 1))

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
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got {type(modules).__name__}")
        for module in modules:
            self.append(module)
        return self

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before position ``index``, as ``list.insert`` does (PyTorch's returns None too;
        for an index outside 0..len(self) it files the layer under a wrong name, which minigrad does not copy)."""
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        return ModuleList(chain(self, other))

    def __repr__(self) -> str:
        reprs = [repr(m) for m in self]
        name = type(self).__name__  # (a subclass, such as parametrize's ParametrizationList, shows its own)
        if not reprs:
            return f"{name}()"
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
        return f"{name}(\n  " + "\n  ".join(lines) + "\n)"


def _pairs(container: str, items) -> Iterator[tuple]:
    """The (key, value) pairs of ``update``'s argument, with PyTorch's errors for anything else."""
    if not isinstance(items, Iterable):
        spelled = "ParametersDict" if container == "ParameterDict" else container  # (PyTorch's spelling)
        raise TypeError(f"{spelled}.update should be called with an iterable of key/value pairs, "
                        f"but got {type(items).__name__}")
    if isinstance(items, (Mapping, ModuleDict, ParameterDict)):
        yield from items.items()
        return
    for j, pair in enumerate(items):
        if not isinstance(pair, Iterable):
            raise TypeError(f"{container} update sequence element #{j} should be Iterable; is{type(pair).__name__}")
        if len(pair) != 2:
            raise ValueError(f"{container} update sequence element #{j} has length {len(pair)}; 2 is required")
        yield pair[0], pair[1]


class ModuleDict(Module):
    """Layers by name, as a dict that ``parameters()`` can see: ``ModuleDict({"conv": ..., "pool": ...})``.

    Insertion order is kept (that of the dict or the (key, module) pairs given). You
    write the forward that picks from it; ``state_dict`` keys read ``"conv.weight"``.
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        value = self[key]
        del self[key]
        return value

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        """Add (or replace) the layers of a mapping or of an iterable of (key, module) pairs."""
        for key, module in _pairs("ModuleDict", modules):
            self[key] = module


def _describe(value: Any, dtype_name: str) -> str:
    """PyTorch's line for one entry of a ParameterList or ParameterDict."""
    if isinstance(value, Tensor):
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        return f"{kind} containing: [{dtype_name} of size {'x'.join(map(str, value.shape))}]"
    return f"Object of type: {type(value).__name__}"


class ParameterList(Module):
    """Parameters in a list that ``parameters()`` can see, named "0", "1", ... (``"params.0"``).

    A tensor put in it becomes a Parameter (as in PyTorch); any other object is
    kept as it is (a Module is registered as a sub-module).
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _key(self, idx: int) -> str:
        idx, n = operator.index(idx), len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._key(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        key = self._key(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, key, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> "ParameterList":
        return self.extend(parameters)

    def __dir__(self) -> list:
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> "ParameterList":
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        if not isinstance(values, Iterable) or isinstance(values, Tensor):  # (a tensor is not unpacked)
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_describe(p, str(getattr(p, 'dtype', '')))}" for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Parameters by name, as a dict that ``parameters()`` can see (``"params.a"``).

    A tensor put in it becomes a Parameter; keys must be strings. ``update`` with a
    plain dict adds its keys in sorted order, as PyTorch does (an OrderedDict, a
    ParameterDict or (key, value) pairs keep theirs).
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is "
                f"not a string (type is '{type(key).__name__}'). Open an issue on "
                "github if you need non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)
        self._keys[key] = None  # (after setattr, which may refuse the key: PyTorch keeps such a key, unusable)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def copy(self) -> "ParameterDict":
        """A new ParameterDict holding the same Parameter objects."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any | None = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted (key, value) pair."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def get(self, key: str, default: Any | None = None) -> Any:
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any | None = None) -> "ParameterDict":
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterator[Any]:
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        """Add (or replace) the entries of a mapping or of an iterable of (key, value) pairs."""
        pairs = _pairs("ParameterDict", parameters)
        if isinstance(parameters, Mapping) and not isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = sorted(pairs)
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_describe(p, p.type() if isinstance(p, Tensor) else '')}" for k, p in self.items())

    def __call__(self, input: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: "ParameterDict") -> "ParameterDict":
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: "ParameterDict") -> "ParameterDict":
        self.update(other)
        return self
