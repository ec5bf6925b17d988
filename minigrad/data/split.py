"""Split a dataset into a training and a test part.

Measuring accuracy on the points a model was trained on rewards memorising;
holding out a test part measures generalisation. Stratifying keeps each
class's share the same in both parts, so a small test set is not by chance
short of some class (which would make its accuracy noisy or misleading).
"""
from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["train_test_split"]


def train_test_split(
    X: ArrayLike,
    y: ArrayLike,
    test_size: float = 0.2,
    seed: int = 0,
    stratify: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Shuffle with ``seed`` and return ``(X_train, X_test, y_train, y_test)``.

    ``test_size`` is a fraction in (0, 1) (rounded to a whole number of rows)
    or a number of rows. With ``stratify`` every class of ``y`` is split in
    (nearly) the same proportion. Both parts come out in shuffled order.
    """
    X, y = np.asarray(X), np.asarray(y)
    n = len(X)
    if len(y) != n:
        raise ValueError(f"X and y must have the same length, got {n} and {len(y)}")
    n_test = _test_count(test_size, n)

    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    if stratify:
        classes, counts = np.unique(y, return_counts=True)
        is_test = np.zeros(n, dtype=bool)
        for c, k in zip(classes, _allocate(counts, n_test)):
            members = perm[y[perm] == c]  # this class's rows, in shuffled order
            is_test[members[:k]] = True
        test, train = perm[is_test[perm]], perm[~is_test[perm]]
    else:
        test, train = perm[:n_test], perm[n_test:]
    return X[train], X[test], y[train], y[test]


def _test_count(test_size: float, n: int) -> int:
    """Turn a fraction or a count into a count, leaving both parts non-empty."""
    if isinstance(test_size, bool):
        raise ValueError("test_size must be a fraction or a count, not a bool")
    if isinstance(test_size, numbers.Integral):
        n_test = int(test_size)
    elif isinstance(test_size, numbers.Real) and 0.0 < test_size < 1.0:
        n_test = round(test_size * n)
    else:
        raise ValueError(f"test_size must be a fraction in (0, 1) or a count, got {test_size!r}")
    if not 0 < n_test < n:
        raise ValueError(
            f"test_size={test_size!r} gives {n_test} test rows out of {n}; "
            "both the training and the test part need at least one"
        )
    return n_test


def _allocate(counts: np.ndarray, total: int) -> np.ndarray:
    """Share ``total`` out in proportion to ``counts``, summing to exactly ``total``.

    Each class gets the floor of its fair share; the rows left over go to the
    classes with the largest remainders (the "largest remainder" method).
    """
    ideal = counts * total / counts.sum()
    quota = np.floor(ideal).astype(np.int64)
    leftover = total - quota.sum()
    quota[np.argsort(quota - ideal, kind="stable")[:leftover]] += 1
    return quota
