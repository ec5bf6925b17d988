"""Samplers: the order in which a DataLoader visits a dataset's indices, as ``torch.utils.data``'s.

A sampler is any iterable of indices; a batch sampler, of lists of indices. The DataLoader
asks its sampler for indices and cuts them into batches (``BatchSampler``), so changing the
order never touches the dataset:

- ``SequentialSampler``: 0, 1, 2, ... (``shuffle=False``).
- ``RandomSampler``: a new permutation each pass (``shuffle=True``), or draws with replacement.
- ``SubsetRandomSampler``: a permutation of some indices (a validation split without copying data).
- ``WeightedRandomSampler``: indices drawn in proportion to weights (oversampling a rare class).

Randomness comes from ``generator`` (a ``minigrad.Generator``, or a ``numpy.random.Generator``)
or minigrad's own, so ``minigrad.manual_seed`` fixes the order.
"""
from __future__ import annotations

from typing import Iterable, Iterator, Sequence

import numpy as np

from minigrad.random import generator as _rng


class Sampler:
    """Base class: subclass it and define ``__iter__`` (yielding indices) and, if known, ``__len__``."""

    def __init__(self, data_source=None) -> None:
        """``data_source`` is accepted and ignored, as in PyTorch (where it is deprecated)."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The indices in order: 0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A new random order on each pass; with ``replacement``, ``num_samples`` independent draws."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source, self.replacement, self._num_samples, self.generator = (
            data_source, replacement, num_samples, generator)
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, rng = len(self.data_source), _rng(self.generator)
        if self.replacement:
            yield from rng.integers(0, n, size=self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):  # more samples than data: whole permutations, then part of one
            yield from rng.permutation(n).tolist()
        if self.num_samples % n:
            yield from rng.permutation(n)[: self.num_samples % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a new random order on each pass."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        for i in _rng(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices, index i drawn with probability ``weights[i] / sum(weights)``
    (the weights need not sum to 1); without ``replacement`` each index at most once (once
    the indices of nonzero weight are used up, those of weight 0 follow in order, as in PyTorch)."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = np.asarray(weights.numpy() if hasattr(weights, "numpy") else weights, dtype=np.float64)
        if weights.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(weights.shape)}")
        self.weights, self.num_samples, self.replacement, self.generator = weights, num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        weights = self.weights
        if (weights < 0).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.isfinite(weights).all():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        if weights.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement and self.num_samples > len(weights):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        nonzero = np.count_nonzero(weights)
        draws = _rng(self.generator).choice(len(weights), size=min(self.num_samples, nonzero) if not self.replacement
                                            else self.num_samples, replace=self.replacement, p=weights / weights.sum())
        yield from draws.tolist()
        if not self.replacement:  # then, as PyTorch, the indices of weight 0, in order
            yield from np.flatnonzero(weights == 0)[: self.num_samples - nonzero].tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (the last one shorter, unless ``drop_last``)."""

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
