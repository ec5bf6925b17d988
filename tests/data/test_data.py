"""Tests for minigrad.data: toy sets, the shipped digits and train_test_split."""
from __future__ import annotations

import importlib
import socket
import sys

import numpy as np
import pytest

import minigrad
from minigrad.data import (
    load_digits,
    load_shakespeare,
    make_circles,
    make_moons,
    make_spirals,
    train_test_split,
)

TOY = [make_moons, make_circles, make_spirals]


# --- toy sets -----------------------------------------------------------------


@pytest.mark.parametrize("make", TOY)
def test_toy_shapes_and_dtypes(make):
    X, y = make(n_samples=90, seed=1)
    assert X.shape == (90, 2) and X.dtype == np.float32
    assert y.shape == (90,) and y.dtype == np.int64
    assert np.isfinite(X).all()


@pytest.mark.parametrize("make", TOY)
def test_toy_deterministic_for_a_seed_and_differs_across_seeds(make):
    X1, y1 = make(seed=3)
    X2, y2 = make(seed=3)
    X3, _ = make(seed=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)


@pytest.mark.parametrize("make", TOY)
@pytest.mark.parametrize("n", [60, 61, 100, 7])
def test_toy_classes_balanced(make, n):
    _, y = make(n_samples=n)
    counts = np.bincount(y)
    assert counts.sum() == n and counts.min() > 0
    assert counts.max() - counts.min() <= 1


@pytest.mark.parametrize("make", TOY)
def test_toy_rows_are_shuffled(make):
    _, y = make()
    assert len(np.unique(y[:20])) > 1  # not sorted by class


def test_spirals_classes_and_radius():
    X, y = make_spirals(n_samples=500, n_classes=5, noise=0.3)
    assert np.bincount(y).tolist() == [100] * 5
    # noise only bends the angle, so every point stays in the unit disc
    assert np.linalg.norm(X, axis=1).max() <= 1.0 + 1e-6


def test_noiseless_moons_lie_on_their_arcs():
    X, y = make_moons(n_samples=101, noise=0.0)
    upper, lower = X[y == 0].astype(np.float64), X[y == 1].astype(np.float64)
    np.testing.assert_allclose(np.hypot(*upper.T), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1, lower[:, 1] - 0.5), 1.0, atol=1e-6)
    assert (upper[:, 1] >= -1e-6).all() and (lower[:, 1] <= 0.5 + 1e-6).all()


def test_noiseless_circles_have_radii_one_and_factor():
    X, y = make_circles(n_samples=100, noise=0.0, factor=0.3)
    r = np.linalg.norm(X.astype(np.float64), axis=1)
    np.testing.assert_allclose(r[y == 0], 1.0, atol=1e-6)
    np.testing.assert_allclose(r[y == 1], 0.3, atol=1e-6)


@pytest.mark.parametrize(
    "call",
    [
        lambda: make_spirals(n_samples=2, n_classes=3),
        lambda: make_spirals(n_classes=1),
        lambda: make_moons(n_samples=1),
        lambda: make_moons(n_samples=10.5),
        lambda: make_circles(n_samples=True),
        lambda: make_moons(noise=-0.1),
        lambda: make_spirals(noise=float("nan")),
        lambda: make_circles(factor=1.0),
        lambda: make_circles(factor=0.0),
    ],
)
def test_toy_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


# --- shakespeare -----------------------------------------------------------------


def test_shakespeare_is_the_documented_cut_of_tiny_shakespeare():
    text = load_shakespeare()
    # the first 399,862 characters of char-rnn's data/tinyshakespeare/input.txt (commit 6f9487a), whose
    # SHA-256 was computed from that file, not from ours
    import hashlib

    assert len(text) == 399_862 and len(set(text)) == 63
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "8256a020fbc19d31e553583a6c8c0fbaccb3e3f8104c876f2f6921068a52dc7c")
    assert text.startswith("First Citizen:\nBefore we proceed any further, hear me speak.\n")
    assert text.endswith("Servant:\nWhat, are they dead?\n")
    assert not any(ch.isdigit() for ch in text)


# --- digits -------------------------------------------------------------------


def test_digits_shapes_dtypes_and_range():
    X, y = load_digits()
    assert X.shape == (1797, 64) and X.dtype == np.float32
    assert y.shape == (1797,) and y.dtype == np.int64
    assert X.min() == 0.0 and X.max() == 1.0
    # pixels are counts 0..16, so 16*X must be whole numbers
    np.testing.assert_array_equal(16 * X, np.round(16 * X))


def test_digits_known_properties_of_the_uci_test_set():
    X, y = load_digits()
    # class counts published by UCI for optdigits.tes
    assert np.bincount(y).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    assert y[:10].tolist() == list(range(10))
    # the first image is a zero; its top row and the sum of all pixel counts
    assert (16 * X[0, :8]).tolist() == [0, 0, 5, 13, 9, 1, 0, 0]
    assert int(np.round(16 * X.astype(np.float64)).sum()) == 561718


def test_digits_images_match_flat_rows():
    X, y = load_digits()
    images, y_img = load_digits(return_images=True)
    assert images.shape == (1797, 1, 8, 8) and images.dtype == np.float32
    np.testing.assert_array_equal(images.reshape(1797, 64), X)
    np.testing.assert_array_equal(y_img, y)
    # row-major: pixel (row 2, column 5) of image 0 is flat index 2*8+5
    assert images[0, 0, 2, 5] == X[0, 21]


def test_digits_returns_writable_copies_that_do_not_touch_the_cache():
    X, y = load_digits()
    X[:] = -1.0
    y[:] = -1
    X2, y2 = load_digits()
    assert X2.min() == 0.0 and y2.min() == 0
    images, _ = load_digits(return_images=True)
    images[:] = 5.0
    assert load_digits()[0].max() == 1.0


def test_nearest_centroid_beats_80_percent_on_digits():
    """If labels were misaligned with images, this would be near 10%."""
    X, y = load_digits()
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, seed=0)
    centroids = np.stack([X_tr[y_tr == k].mean(axis=0) for k in range(10)])
    dists = ((X_te[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
    accuracy = (dists.argmin(axis=1) == y_te).mean()
    assert accuracy > 0.8


# --- train_test_split ---------------------------------------------------------


def _rows(X):
    return {tuple(r) for r in np.atleast_2d(X.reshape(len(X), -1))}


def test_split_sizes_and_no_overlap():
    X = np.arange(200).reshape(100, 2)
    y = np.arange(100) % 3
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2)
    assert (len(X_tr), len(X_te), len(y_tr), len(y_te)) == (80, 20, 80, 20)
    assert not _rows(X_tr) & _rows(X_te)
    assert _rows(X_tr) | _rows(X_te) == _rows(X)
    # rows stay paired with their labels
    np.testing.assert_array_equal(y_tr, (X_tr[:, 0] // 2) % 3)
    np.testing.assert_array_equal(y_te, (X_te[:, 0] // 2) % 3)


def test_split_count_and_unstratified():
    X, y = np.arange(50), np.zeros(50, dtype=np.int64)
    X_tr, X_te, _, _ = train_test_split(X, y, test_size=7, stratify=False)
    assert len(X_tr) == 43 and len(X_te) == 7
    assert sorted(np.concatenate([X_tr, X_te]).tolist()) == list(range(50))


def test_split_deterministic_for_a_seed_and_differs_across_seeds():
    X, y = load_digits()
    a = train_test_split(X, y, seed=5)
    b = train_test_split(X, y, seed=5)
    c = train_test_split(X, y, seed=6)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[1], c[1])


def test_split_is_stratified():
    y = np.array([0] * 60 + [1] * 30 + [2] * 10)
    X = np.arange(100)
    _, _, y_tr, y_te = train_test_split(X, y, test_size=0.2, seed=1)
    assert np.bincount(y_te).tolist() == [12, 6, 2]
    assert np.bincount(y_tr).tolist() == [48, 24, 8]


def test_stratified_split_hits_the_exact_size_when_shares_are_fractional():
    X, y = load_digits()
    _, X_te, _, y_te = train_test_split(X, y, test_size=0.2)
    assert len(X_te) == round(0.2 * 1797)
    expected = 0.2 * np.bincount(y)
    assert np.abs(np.bincount(y_te) - expected).max() < 1.0


def test_unstratified_split_can_be_unbalanced_but_stratified_is_not():
    # with one rare class, some seed leaves it out of an unstratified test set
    y = np.array([0] * 95 + [1] * 5)
    X = np.arange(100)
    missing = [s for s in range(20) if 1 not in train_test_split(X, y, 0.2, s, False)[3]]
    assert missing
    for s in missing:
        assert np.bincount(train_test_split(X, y, 0.2, s, True)[3]).tolist() == [19, 1]


@pytest.mark.parametrize("test_size", [0.0, 1.0, 1.5, -3, 0, 10, True, "0.2"])
def test_split_bad_test_size_raises(test_size):
    with pytest.raises(ValueError):
        train_test_split(np.arange(10), np.arange(10) % 2, test_size=test_size)


def test_split_length_mismatch_raises():
    with pytest.raises(ValueError, match="same length"):
        train_test_split(np.arange(10), np.arange(9))


# --- offline --------------------------------------------------------------------


def test_import_and_load_never_touch_the_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("minigrad.data tried to use the network")

    for name in ("socket", "create_connection", "getaddrinfo"):
        monkeypatch.setattr(socket, name, no_network)
    # re-import from scratch, so the import itself and an uncached load run under the patch
    # (and afterwards put back the modules, and minigrad's attribute, that other tests hold)
    monkeypatch.setattr(minigrad, "data", minigrad.data)
    for name in [m for m in sys.modules if m == "minigrad.data" or m.startswith("minigrad.data.")]:
        monkeypatch.delitem(sys.modules, name)
    data = importlib.import_module("minigrad.data")

    assert data.load_digits()[0].shape == (1797, 64)
    assert data.load_digits(return_images=True)[0].shape == (1797, 1, 8, 8)
    for make in (data.make_moons, data.make_circles, data.make_spirals):
        make()
    data.train_test_split(*data.load_digits())
