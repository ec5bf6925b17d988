"""``minigrad.utils.data``: datasets and mini-batches, where PyTorch code imports them from.

    from minigrad.utils.data import DataLoader, Dataset, TensorDataset

The code lives in ``minigrad/data/loader.py`` (beside the shipped datasets of
``minigrad.data``); this module gives it PyTorch's address.
"""
from minigrad.data.loader import (
    ChainDataset, ConcatDataset, DataLoader, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
    default_collate, default_convert, get_worker_info, random_split,
)
from minigrad.data.sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "Subset", "ConcatDataset", "ChainDataset",
           "DataLoader", "default_collate", "default_convert", "get_worker_info", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler"]
