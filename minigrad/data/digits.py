"""The UCI handwritten digits: 1797 real 8x8 images, small enough to ship.

MNIST needs a download and minutes of training; this set needs neither, yet it
is real data, so a course can train an MLP or a small CNN on it in seconds.

Source: E. Alpaydin and C. Kaynak (1998), "Optical Recognition of Handwritten
Digits", UCI Machine Learning Repository, https://archive.ics.uci.edu/dataset/80
(CC BY 4.0). The file ``digits.csv.gz`` is the test part of that set as
redistributed by scikit-learn (BSD-3-Clause), copied unchanged; see
``DIGITS_LICENSE.txt``. Each row holds 64 pixel counts in 0..16 and the label.
"""
from __future__ import annotations

import gzip
from functools import lru_cache
from importlib import resources

import numpy as np

__all__ = ["load_digits"]

_FILE = "digits.csv.gz"
_N_SAMPLES, _N_PIXELS = 1797, 64


def load_digits(return_images: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(X, y)``: pixels scaled to [0, 1] as float32, labels 0..9 as int64.

    ``X`` is ``(1797, 64)`` for an MLP, or ``(1797, 1, 8, 8)`` (NCHW, one
    channel) for ``conv2d`` when ``return_images`` is true. Rows come in file
    order; use ``train_test_split`` to shuffle and split them.
    """
    X, y = _read()
    X = X.reshape(-1, 1, 8, 8) if return_images else X
    return X.copy(), y.copy()  # copies: a caller's in-place edit must not reach the cache


@lru_cache(maxsize=1)
def _read() -> tuple[np.ndarray, np.ndarray]:
    """Parse the file once per process; later calls only pay for a copy."""
    # importlib.resources finds the file even if the package is installed zipped
    with resources.files(__package__).joinpath(_FILE).open("rb") as raw:
        with gzip.open(raw, "rt") as text:
            table = np.loadtxt(text, delimiter=",", dtype=np.float32)
    if table.shape != (_N_SAMPLES, _N_PIXELS + 1):
        raise RuntimeError(f"{_FILE} is damaged: expected 1797 rows of 65, got {table.shape}")
    X = table[:, :_N_PIXELS] / np.float32(16.0)
    y = table[:, _N_PIXELS].astype(np.int64)
    X.setflags(write=False)  # the cached arrays must stay as read
    y.setflags(write=False)
    return X, y
