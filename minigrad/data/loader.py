"""``Dataset``, ``TensorDataset`` and ``DataLoader``: feed a model mini-batches, as ``torch.utils.data`` does.

(``minigrad.utils.data`` is where PyTorch code finds these names; it re-exports this module.)

A *dataset* answers two questions: how many samples (``len``) and what is
sample i (``dataset[i]``, a tuple such as ``(x, y)``). A *loader* turns it into
batches: it chooses the order of the indices (shuffled each epoch if asked),
cuts them into groups of ``batch_size`` and stacks each group's samples into
one tensor per field, so ``for x, y in loader`` gets ``x`` of shape
(batch_size, ...). The order is a sampler's (``minigrad/data/sampler.py``); an
``IterableDataset`` gives its samples as a stream instead. Single process: no
worker processes or pinned memory (the arguments are accepted and checked).
"""
from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Mapping
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from minigrad.creation import tensor as _tensor
from minigrad.random import generator as _generator_of
from minigrad.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from minigrad.functional_ops import stack
from minigrad._tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "Subset", "ConcatDataset", "ChainDataset",
           "DataLoader", "default_collate", "default_convert", "get_worker_info", "random_split"]


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


class IterableDataset(Dataset):
    """A dataset read as a stream: subclass it and define ``__iter__`` (a file read line by line, a
    generator of synthetic samples). The DataLoader batches the samples in the order they come."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: "Dataset") -> "ChainDataset":
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Several iterable datasets, one stream after the other."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class StackDataset(Dataset):
    """Datasets of one length side by side: sample i is ``(a[i], b[i])`` for ``StackDataset(a, b)``,
    ``{"x": a[i], "y": b[i]}`` for ``StackDataset(x=a, y=b)``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = list(args or kwargs.values())
        self._length = len(datasets[0])
        if any(len(d) != self._length for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


def get_worker_info() -> None:
    """Information about the loading worker process: None, since minigrad loads in the main process."""
    return None


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


def random_split(dataset, lengths: Sequence[int | float], generator=None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given lengths.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to
    1 (floored, then the leftover samples dealt out one by one from the first
    part, as in PyTorch). The order comes from ``generator`` (a
    ``minigrad.Generator``) or minigrad's, so ``minigrad.manual_seed`` fixes the split.
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
    order = _generator_of(generator).permutation(n).tolist()
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


def default_convert(data: Any) -> Any:
    """A sample as a tensor without batching (``batch_size=None``): NumPy arrays and numbers become
    tensors, inside dicts, tuples and lists too; anything else stays as it is."""
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        return _tensor(data)
    if isinstance(data, np.number):
        return _tensor(data)
    if isinstance(data, Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):
        return type(data)(default_convert(d) for d in data)
    return data


class DataLoader:
    """Batches of ``dataset``: ``for x, y in DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)``.

    The indices come from ``sampler`` (default: ``RandomSampler`` with ``shuffle=True``, which
    draws a new order each pass from ``generator``, else ``SequentialSampler``) and are cut into
    lists of ``batch_size`` (``BatchSampler``; ``drop_last=True`` skips a short last one), or
    come as lists from ``batch_sampler``. ``collate_fn`` turns a list of samples into a batch
    (``default_collate``). ``batch_size=None`` turns batching off: each sample comes alone,
    through ``default_convert``. ``len(loader)`` is the number of batches per pass.

    minigrad loads in the main process: ``num_workers``, ``pin_memory``, ``timeout``,
    ``worker_init_fn``, ``multiprocessing_context``, ``prefetch_factor``,
    ``persistent_workers``, ``pin_memory_device`` and ``in_order`` are checked as PyTorch
    checks them and change nothing (``worker_init_fn`` is never called).
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None, batch_sampler: Sampler | Iterable | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable | None = None,
                 multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                             f"but got num_workers={num_workers}")
        if isinstance(dataset, IterableDataset):
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None and not isinstance(dataset, IterableDataset):
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not isinstance(dataset, IterableDataset):
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.num_workers, self.pin_memory, self.timeout, self.worker_init_fn = num_workers, pin_memory, timeout, worker_init_fn
        self.multiprocessing_context, self.prefetch_factor = multiprocessing_context, prefetch_factor
        self.persistent_workers, self.pin_memory_device, self.in_order = persistent_workers, pin_memory_device, in_order
        batched = batch_size is not None or batch_sampler is not None
        self.collate_fn = collate_fn if collate_fn is not None else default_collate if batched else default_convert

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):  # the stream's length, if it has one, in batches
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self) -> Iterator:
        if isinstance(self.dataset, IterableDataset):
            yield from self._stream()
        elif self.batch_sampler is None:  # batching off: one sample at a time
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
        else:
            fast = isinstance(self.dataset, TensorDataset) and self.collate_fn is default_collate
            for indices in self.batch_sampler:
                if fast:  # one fancy-index per tensor fetches the whole batch: no per-sample stacking
                    yield list(self.dataset[np.asarray(indices, dtype=np.int64)])
                else:
                    yield self.collate_fn([self.dataset[i] for i in indices])

    def _stream(self) -> Iterator:
        """The batches of an IterableDataset: its samples in the order they come, ``batch_size`` at a time."""
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)
