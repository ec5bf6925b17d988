"""set_printoptions changes how tensors print, as PyTorch's does.

Hypothesis draws options (precision, threshold, edgeitems, linewidth, sci_mode, a profile) and
tensors (shapes, magnitudes, whole numbers, integers, bools); minigrad's repr must be PyTorch's
with 'torch.' read as 'minigrad.'. The options are reset after each case.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def default_options():
    yield
    for lib in (minigrad, torch):
        lib.set_printoptions(profile="default")


options = st.fixed_dictionaries({}, optional={
    "precision": st.integers(0, 6), "threshold": st.sampled_from([3, 10, 1000]), "edgeitems": st.integers(1, 3),
    "linewidth": st.sampled_from([40, 80, 120]), "sci_mode": st.sampled_from([None, True, False]),
    "profile": st.sampled_from(["default", "short", "full"]),
})


def values(rng, shape, kind):
    if kind == "whole":
        return np.round(rng.standard_normal(shape) * 10)
    if kind == "int":
        return rng.integers(-50, 50, shape)
    if kind == "bool":
        return rng.random(shape) > 0.5
    return rng.standard_normal(shape) * 10.0 ** rng.integers(-5, 6) if kind == "wide" else rng.standard_normal(shape)


@settings(max_examples=60, deadline=None)
@given(opts=options, shape=st.lists(st.integers(0, 12), min_size=0, max_size=3).map(tuple),
       kind=st.sampled_from(["normal", "wide", "whole", "int", "bool"]), single=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_repr_follows_the_options_as_torch(opts, shape, kind, single, seed):
    data = values(np.random.default_rng(seed), shape, kind)
    if single and data.dtype.kind == "f":
        data = data.astype(np.float32)
    reprs = []
    for lib in (minigrad, torch):
        lib.set_printoptions(profile="default")
        lib.set_printoptions(**opts)
        reprs.append(repr(lib.tensor(data)))
    assert reprs[0] == reprs[1].replace("torch.", "minigrad.")


def test_profiles_reset_every_option():
    minigrad.set_printoptions(precision=1, threshold=4, edgeitems=1)
    minigrad.set_printoptions(profile="default")
    assert repr(minigrad.tensor([1.23456, 2.0])) == "tensor([1.2346, 2.0000])"
    minigrad.set_printoptions(profile="short")
    assert repr(minigrad.tensor([1.23456, 2.0])) == "tensor([1.23, 2.00])"
    minigrad.set_printoptions(profile="nonsense")  # (PyTorch ignores an unknown profile)
    assert repr(minigrad.tensor([1.23456, 2.0])) == "tensor([1.23, 2.00])"
