"""``Dataset``, ``TensorDataset`` and ``DataLoader``: feed a model mini-batches, as ``torch.utils.data`` does.

(``minigrad.utils.data`` is where PyTorch code finds these names; it re-exports this module.)

A *dataset* answers two questions: how many samples (``len``) and what is
sample i (``dataset[i]``, a tuple such as ``(x, y)``). A *loader* turns it into
batches: it chooses the order of the indices (shuffled each epoch if asked),
cuts them into groups of ``batch_size`` and stacks each group's samples into
one tensor per field, so ``for x, y in loader`` gets ``x`` of shape
(batch_size, ...). Single-process and minimal: no worker processes, samplers or pinning.
"""
from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Mapping
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from minigrad.random import generator as _default_generator
from minigrad.creation import tensor as _tensor
from minigrad.functional_ops import stack
from minigrad.tensor import Tensor

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "DataLoader", "default_collate", "random_split"]


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else _tensor(x)


class Dataset:
    """A map-style dataset: subclass it and define ``__getitem__`` (and ``__len__``, which DataLoader needs).

    ``dataset[i]`` returns sample i, typically a tuple ``(x, y)``; ``a + b``
    concatenates two datasets.
    """

    def __getitem__(self, index) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is ``(t[i] for t in tensors)``: e.g. ``TensorDataset(X, y)``.

    NumPy arrays are accepted and converted (copied) to tensors of the same dtype.
    Tensors of different lengths raise ValueError (PyTorch uses an assert).
    """

    def __init__(self, *tensors) -> None:
        self.tensors = tuple(_as_tensor(t) for t in tensors)
        if any(len(t) != len(self.tensors[0]) for t in self.tensors):
            raise ValueError(
                "Size mismatch between tensors: lengths "
                + ", ".join(str(len(t)) for t in self.tensors)
            )

    def __getitem__(self, index) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors[0]) if self.tensors else 0


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order (what ``random_split`` returns)."""

    def __init__(self, dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several datasets one after the other: index ``len(first)`` is the second's sample 0."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


def random_split(dataset, lengths: Sequence[int | float], generator: np.random.Generator | None = None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given lengths.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to
    1 (floored, then the leftover samples dealt out one by one from the first
    part, as in PyTorch). The order comes from ``generator`` (a NumPy
    Generator) or minigrad's, so ``minigrad.manual_seed`` fixes the split.
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(math.floor(n * frac))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, count in enumerate(counts):
            if count == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    rng = generator if generator is not None else _default_generator()
    order = rng.permutation(n).tolist()
    return [Subset(dataset, order[end - length:end]) for end, length in zip(itertools.accumulate(lengths), lengths)]


def default_collate(samples: Sequence) -> Any:
    """Stack a list of samples into a batch, field by field, as PyTorch's ``default_collate``.

    Tensors and NumPy arrays are stacked; Python ints become an int64 tensor
    and floats a float64 one; strings are left as they come. A tuple or list
    sample gives a *list* of fields (``for x, y in loader`` unpacks it all the
    same), a named tuple a named tuple, a dict a dict.
    """
    first = samples[0]
    if isinstance(first, Mapping):
        return {key: default_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, (str, bytes)):
        return samples
    if isinstance(first, (tuple, list)):
        if any(len(sample) != len(first) for sample in samples):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(field) for field in zip(*samples)]
        return type(first)(*fields) if hasattr(first, "_fields") else fields
    if isinstance(first, Tensor):
        return stack(samples)
    if isinstance(first, np.ndarray):
        return _tensor(np.stack(samples))
    if isinstance(first, (bool, int, float, np.number)):
        return _tensor(samples, dtype=np.float64 if isinstance(first, float) else None)
    raise TypeError(
        f"default_collate: batch must contain tensors, NumPy arrays, numbers, strings, dicts or lists; "
        f"found {type(first).__name__}"
    )


class DataLoader:
    """Batches of ``dataset``: ``for x, y in DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)``.

    With ``shuffle=True`` each pass draws a new order from ``generator`` (a
    ``numpy.random.Generator``; PyTorch's is a ``torch.Generator``) or, by
    default, from minigrad's, so ``minigrad.manual_seed`` fixes the batches.
    ``drop_last=True`` skips a final batch smaller than ``batch_size``.
    ``collate_fn`` turns a list of samples into a batch (``default_collate``
    by default). ``len(loader)`` is the number of batches per pass.
    ``num_workers`` and ``pin_memory`` are accepted for PyTorch's signature;
    samples are always loaded in the main process, in the same order.
    """

    def __init__(self, dataset, batch_size: int = 1, shuffle: bool = False, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False, drop_last: bool = False,
                 generator: np.random.Generator | None = None) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.num_workers = num_workers
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.pin_memory = pin_memory
        self.drop_last = drop_last
        self.generator = generator

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _order(self) -> np.ndarray:
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        rng = self.generator if self.generator is not None else _default_generator()
        return rng.permutation(n)

    def __iter__(self) -> Iterator:
        order = self._order()
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            indices = order[start:start + self.batch_size]
            if isinstance(self.dataset, TensorDataset) and self.collate_fn is default_collate:
                # One fancy-index per tensor fetches the whole batch: no per-sample stacking.
                yield list(self.dataset[indices])
            else:
                yield self.collate_fn([self.dataset[int(i)] for i in indices])
