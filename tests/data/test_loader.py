"""Tests for minigrad.data.TensorDataset and DataLoader."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.data import DataLoader, TensorDataset


def make_dataset(n=10):
    X = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    y = np.arange(n, dtype=np.int64)
    return X, y


def test_tensor_dataset_indexing_and_numpy_conversion():
    X, y = make_dataset()
    ds = TensorDataset(X, minigrad.tensor(y))
    assert len(ds) == 10
    x3, y3 = ds[3]
    assert x3.tolist() == [6.0, 7.0] and y3.item() == 3
    assert ds.tensors[0].dtype == minigrad.float32 and ds.tensors[1].dtype == minigrad.int64
    X[0, 0] = 99.0  # arrays are copied
    assert ds[0][0].tolist() == [0.0, 1.0]


def test_tensor_dataset_size_mismatch():
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(np.zeros(3), np.zeros(4))


def test_batches_in_order_with_a_short_last_batch():
    X, y = make_dataset(10)
    loader = DataLoader(TensorDataset(X, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    xb, yb = batches[0]
    assert isinstance(batches[0], list)  # as PyTorch yields
    assert xb.shape == (4, 2) and xb.dtype == minigrad.float32 and yb.dtype == minigrad.int64
    np.testing.assert_array_equal(xb.numpy(), X[:4])


def test_drop_last():
    X, y = make_dataset(10)
    loader = DataLoader(TensorDataset(X, y), batch_size=4, drop_last=True)
    assert len(loader) == 2
    assert [b[1].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_shuffle_covers_everything_once_and_changes_each_epoch():
    X, y = make_dataset(50)
    loader = DataLoader(TensorDataset(X, y), batch_size=8, shuffle=True)
    epoch1 = np.concatenate([yb.numpy() for _, yb in loader])
    epoch2 = np.concatenate([yb.numpy() for _, yb in loader])
    assert sorted(epoch1) == list(range(50)) and sorted(epoch2) == list(range(50))
    assert not np.array_equal(epoch1, np.arange(50))
    assert not np.array_equal(epoch1, epoch2)
    # the pairs stay together
    for xb, yb in loader:
        np.testing.assert_array_equal(xb.numpy(), X[yb.numpy()])


def test_shuffle_is_reproducible():
    X, y = make_dataset(30)
    ds = TensorDataset(X, y)

    def order(**kwargs):
        return np.concatenate([yb.numpy() for _, yb in DataLoader(ds, batch_size=7, shuffle=True, **kwargs)])

    minigrad.manual_seed(3)
    a = order()
    minigrad.manual_seed(3)
    assert np.array_equal(a, order())
    b = order(generator=np.random.default_rng(5))
    assert np.array_equal(b, order(generator=np.random.default_rng(5)))


class Squares:
    """A map-style dataset that is not a TensorDataset: samples are collated one by one."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return np.array([i, i * i], dtype=np.float32), i, float(i) / 2


def test_generic_dataset_is_collated():
    batches = list(DataLoader(Squares(), batch_size=2))
    assert len(batches) == 3
    x, i, half = batches[1]
    assert x.tolist() == [[2.0, 4.0], [3.0, 9.0]] and x.dtype == minigrad.float32
    assert i.tolist() == [2, 3] and i.dtype == minigrad.int64
    assert half.tolist() == [1.0, 1.5] and half.dtype == minigrad.float64  # Python floats, as in PyTorch


def test_batch_size_must_be_positive():
    with pytest.raises(ValueError, match="^batch_size should be a positive integer value, but got batch_size=0$"):
        DataLoader(TensorDataset(np.zeros(3)), batch_size=0)
