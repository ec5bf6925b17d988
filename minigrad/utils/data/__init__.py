"""``minigrad.utils.data``: datasets and mini-batches, where PyTorch code imports them from.

    from minigrad.utils.data import DataLoader, Dataset, TensorDataset

The code lives in ``minigrad/data/loader.py`` (beside the shipped datasets of
``minigrad.data``); this module gives it PyTorch's address.
"""
from minigrad.data.loader import (
    ConcatDataset, DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split,
)

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "DataLoader", "default_collate", "random_split"]
