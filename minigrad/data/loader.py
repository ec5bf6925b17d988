"""``TensorDataset`` and ``DataLoader``: feed a model mini-batches, as ``torch.utils.data`` does.

A *dataset* answers two questions: how many samples (``len``) and what is
sample i (``dataset[i]``, a tuple such as ``(x, y)``). A *loader* turns it into
batches: it chooses the order of the indices (shuffled each epoch if asked),
cuts them into groups of ``batch_size`` and stacks each group's samples into
one tensor per field, so ``for x, y in loader`` gets ``x`` of shape
(batch_size, ...). Single-process and minimal: no workers, samplers or pinning.
"""
from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

from minigrad.creation import generator as _default_generator
from minigrad.creation import tensor as _tensor
from minigrad.functional_ops import stack
from minigrad.tensor import Tensor

__all__ = ["TensorDataset", "DataLoader"]


def _as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else _tensor(x)


class TensorDataset:
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


def default_collate(samples: list) -> Any:
    """Stack a list of samples into a batch, field by field (tuples stay tuples).

    Tensors and NumPy arrays are stacked; Python ints become an int64 tensor
    and floats a float64 one, as in PyTorch. (PyTorch returns a list of fields
    for tuple samples; here it is a tuple.)
    """
    first = samples[0]
    if isinstance(first, (tuple, list)):
        return tuple(default_collate(list(field)) for field in zip(*samples))
    if isinstance(first, Tensor):
        return stack(samples)
    if isinstance(first, np.ndarray):
        return _tensor(np.stack(samples))
    if isinstance(first, (bool, int, float, np.number)):
        return _tensor(samples, dtype=np.float64 if isinstance(first, float) else None)
    raise TypeError(
        f"default_collate: batch must contain tensors, NumPy arrays or numbers; found {type(first).__name__}"
    )


class DataLoader:
    """Batches of ``dataset``: ``for x, y in DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)``.

    With ``shuffle=True`` each pass draws a new order from ``generator`` (a
    ``numpy.random.Generator``; PyTorch's is a ``torch.Generator``) or, by
    default, from minigrad's, so ``minigrad.manual_seed`` fixes the batches.
    ``drop_last=True`` skips a final batch smaller than ``batch_size``.
    ``len(loader)`` is the number of batches per pass.
    """

    def __init__(self, dataset, batch_size: int = 1, shuffle: bool = False, drop_last: bool = False,
                 generator: np.random.Generator | None = None) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
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
            if isinstance(self.dataset, TensorDataset):
                # One fancy-index per tensor fetches the whole batch: no per-sample stacking.
                yield self.dataset[indices]
            else:
                yield default_collate([self.dataset[int(i)] for i in indices])
