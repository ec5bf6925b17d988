"""Small datasets for the course, and tools to feed them to a model.

Everything here works offline: nothing is ever downloaded. The toy sets are
generated from a seed, and the digits ship inside the package
(``digits.csv.gz``, UCI data under CC BY 4.0; see ``DIGITS_LICENSE.txt``), and so does
400 KB of Shakespeare (``shakespeare.txt.gz``, public domain; see
``SHAKESPEARE_LICENSE.txt``).

Datasets (NumPy arrays in, NumPy arrays out):

- ``make_moons``, ``make_circles``, ``make_spirals``: 2-D toy classification
- ``load_digits``: 1797 real 8x8 handwritten digits, 10 classes
- ``load_shakespeare``: 399,862 characters of Shakespeare's plays, as one string
- ``train_test_split``: a seeded, optionally stratified split
"""
from __future__ import annotations

# --- datasets ----------------------------------------------------------------
from .digits import load_digits
from .shakespeare import load_shakespeare
from .split import train_test_split
from .toy import make_circles, make_moons, make_spirals

__all__ = [
    "make_moons",
    "make_circles",
    "make_spirals",
    "load_digits",
    "load_shakespeare",
    "train_test_split",
]

# --- loading (TensorDataset, DataLoader) -------------------------------------
# Kept in loader.py; its imports and __all__ entries go here.
from .loader import DataLoader, Dataset, TensorDataset

__all__ += ["Dataset", "TensorDataset", "DataLoader"]
