"""Two-dimensional toy classification sets, generated from a seed.

These are the sets a course draws decision boundaries on: two moons, two
circles and the CS231n spirals. None is linearly separable, so they show what
a hidden layer buys. They are made with NumPy from ``np.random.default_rng(seed)``
so a seed always gives the same points, on every machine and without a download.

Each function returns ``(X, y)``: ``X`` float32 of shape ``(n, 2)`` (the dtype
minigrad and PyTorch default to) and ``y`` int64 of shape ``(n,)`` (the dtype
``cross_entropy`` expects for class indices). Classes are balanced: their
sizes differ by at most one. Rows are shuffled, so that any slice or batch
holds a mix of classes.
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = ["make_moons", "make_circles", "make_spirals"]


def make_moons(
    n_samples: int = 200, noise: float = 0.1, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles: class 0 on top, class 1 below and shifted right."""
    _check_args(n_samples, 2, noise)
    rng = np.random.default_rng(seed)
    n0, n1 = _class_sizes(n_samples, 2)
    t0, t1 = np.linspace(0.0, np.pi, n0), np.linspace(0.0, np.pi, n1)
    upper = np.stack([np.cos(t0), np.sin(t0)], axis=1)
    lower = np.stack([1.0 - np.cos(t1), 0.5 - np.sin(t1)], axis=1)
    return _finish(rng, [upper, lower], noise)


def make_circles(
    n_samples: int = 200, noise: float = 0.05, factor: float = 0.5, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A unit circle (class 0) around a smaller one of radius ``factor`` (class 1)."""
    _check_args(n_samples, 2, noise)
    if not 0.0 < factor < 1.0:
        raise ValueError(f"factor must be in (0, 1) so the circles differ, got {factor}")
    rng = np.random.default_rng(seed)
    n0, n1 = _class_sizes(n_samples, 2)
    # endpoint=False: 0 and 2*pi are the same point, so don't draw it twice
    t0 = np.linspace(0.0, 2 * np.pi, n0, endpoint=False)
    t1 = np.linspace(0.0, 2 * np.pi, n1, endpoint=False)
    outer = np.stack([np.cos(t0), np.sin(t0)], axis=1)
    inner = factor * np.stack([np.cos(t1), np.sin(t1)], axis=1)
    return _finish(rng, [outer, inner], noise)


def make_spirals(
    n_samples: int = 300, n_classes: int = 3, noise: float = 0.2, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The CS231n spiral set: ``n_classes`` arms winding out from the origin.

    Along each arm the radius grows from 0 to 1 while the angle sweeps 4
    radians; ``noise`` jitters the angle (not the position), as in CS231n.
    """
    _check_args(n_samples, n_classes, noise)
    rng = np.random.default_rng(seed)
    arms = []
    for k, n in enumerate(_class_sizes(n_samples, n_classes)):
        r = np.linspace(0.0, 1.0, n)
        t = np.linspace(4.0 * k, 4.0 * (k + 1), n) + noise * rng.standard_normal(n)
        arms.append(np.stack([r * np.sin(t), r * np.cos(t)], axis=1))
    return _finish(rng, arms, noise=0.0)  # the noise is already in the angle


def _check_args(n_samples: int, n_classes: int, noise: float) -> None:
    """Fail early with a message, rather than with a shape error deep in NumPy."""
    for name, value in (("n_samples", n_samples), ("n_classes", n_classes)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise ValueError(f"{name} must be an int, got {value!r}")
    if n_classes < 2:
        raise ValueError(f"n_classes must be at least 2, got {n_classes}")
    if n_samples < n_classes:
        raise ValueError(
            f"n_samples ({n_samples}) must be at least n_classes ({n_classes}) "
            "so that every class has a point"
        )
    if not noise >= 0.0:  # also rejects NaN
        raise ValueError(f"noise must be >= 0, got {noise}")


def _class_sizes(n_samples: int, n_classes: int) -> list[int]:
    """Spread ``n_samples`` over the classes so that sizes differ by at most one."""
    base, extra = divmod(n_samples, n_classes)
    return [base + (k < extra) for k in range(n_classes)]


def _finish(
    rng: np.random.Generator, parts: list[np.ndarray], noise: float
) -> tuple[np.ndarray, np.ndarray]:
    """Stack the per-class points, label them, add Gaussian noise and shuffle."""
    X = np.concatenate(parts)
    y = np.concatenate([np.full(len(p), k, dtype=np.int64) for k, p in enumerate(parts)])
    if noise > 0:
        X = X + noise * rng.standard_normal(X.shape)
    order = rng.permutation(len(y))
    return X[order].astype(np.float32), y[order]
