"""``nn.init`` against ``torch.nn.init``, and ``generator=`` everywhere minigrad draws random numbers.

The deterministic initialisers (eye_, dirac_) must give torch's values; the random ones the
distribution they promise (bounds, spread, orthogonality, zeros per column), with tolerances
from the sample size, never torch's random stream.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad
import minigrad.nn.init as minit
from minigrad.utils.data import DataLoader, RandomSampler, SubsetRandomSampler, TensorDataset, WeightedRandomSampler, \
    random_split

torch = pytest.importorskip("torch")
tinit = torch.nn.init

INITS = ["uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_", "xavier_uniform_",
         "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_", "calculate_gain",
         "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
         "kaiming_normal", "orthogonal", "sparse"]


@pytest.mark.parametrize("name", INITS)
def test_signature_matches_torch(name):
    got = [p.name for p in inspect.signature(getattr(minit, name)).parameters.values()]
    want = [p.name for p in inspect.signature(getattr(tinit, name)).parameters.values()]
    assert got == want or name in {"uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                                   "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"}


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=5), groups=st.integers(1, 3))
def test_deterministic_initialisers_match_torch(shape, groups):
    for name, args in (("eye_", ()), ("dirac_", (groups,))):
        results = []
        for lib, init in ((minigrad, minit), (torch, tinit)):
            t = lib.full(tuple(shape), 7.0)
            try:
                getattr(init, name)(t, *args)
                results.append(("ok", t.numpy().tolist()))
            except Exception as e:  # noqa: BLE001
                results.append((type(e).__name__, str(e).split(":")[0]))
        assert results[0] == results[1], name


def spread_ok(values: np.ndarray, std: float) -> bool:
    """The sample standard deviation within 6 standard errors of ``std`` (normal-ish samples)."""
    n = values.size
    return abs(values.std() - std) <= 6 * std / math.sqrt(2 * n)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nonlinearity,a", [("relu", 0.0), ("leaky_relu", 0.2), ("tanh", 0.0), ("linear", 0.0)])
def test_kaiming_and_xavier_spread(mode, nonlinearity, a):
    w = minigrad.empty(256, 64, 3)
    fan = 64 * 3 if mode == "fan_in" else 256 * 3
    std = tinit.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    minit.kaiming_normal_(w, a=a, mode=mode, nonlinearity=nonlinearity)
    assert spread_ok(w.numpy(), std)
    minit.kaiming_uniform_(w, a=a, mode=mode, nonlinearity=nonlinearity)
    assert np.abs(w.numpy()).max() <= math.sqrt(3) * std * (1 + 1e-6)
    assert spread_ok(w.numpy(), std)
    minit.xavier_normal_(w, gain=2.0)
    assert spread_ok(w.numpy(), 2.0 * math.sqrt(2.0 / (64 * 3 + 256 * 3)))


@pytest.mark.parametrize("lib,init", [(minigrad, minit), (torch, tinit)], ids=["minigrad", "torch"])
def test_kaiming_refuses_a_bad_mode(lib, init):
    with pytest.raises(ValueError, match=r"Mode fan_x not supported, please use one of \['fan_in', 'fan_out'\]"):
        init.kaiming_normal_(lib.empty(2, 2), mode="fan_x")


@pytest.mark.parametrize("a,b", [(-2.0, 2.0), (-0.5, 0.3), (1.5, 2.5), (2.0, 3.0)])
def test_trunc_normal_is_the_truncated_normal(a, b):
    w = minigrad.empty(40000, dtype=minigrad.float64)
    minit.trunc_normal_(w, mean=0.0, std=1.0, a=a, b=b)
    values = w.numpy()
    assert values.min() >= a and values.max() <= b
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    mass = (math.erf(b / math.sqrt(2)) - math.erf(a / math.sqrt(2))) / 2
    mean = (phi(a) - phi(b)) / mass  # the truncated normal's mean, in closed form
    variance = 1 + (a * phi(a) - b * phi(b)) / mass - mean ** 2
    assert abs(values.mean() - mean) <= 6 * math.sqrt(variance / values.size)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=2, max_size=4), gain=st.sampled_from([1.0, 0.5, 3.0]))
def test_orthogonal_rows_or_columns(shape, gain):
    w = minigrad.empty(*shape, dtype=minigrad.float64)
    minit.orthogonal_(w, gain=gain)
    flat = w.numpy().reshape(shape[0], -1) / gain
    small = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(small, np.eye(len(small)), atol=1e-10)


@pytest.mark.parametrize("lib,init", [(minigrad, minit), (torch, tinit)], ids=["minigrad", "torch"])
def test_refusals_match(lib, init):
    for call, message in ((lambda: init.orthogonal_(lib.empty(3)), "Only tensors with 2 or more dimensions"),
                          (lambda: init.sparse_(lib.empty(3, 3, 3), 0.5), "Only tensors with 2 dimensions"),
                          (lambda: init.eye_(lib.empty(3)), "Only tensors with 2 dimensions"),
                          (lambda: init.dirac_(lib.empty(3, 3)), "Only tensors with 3, 4, or 5 dimensions"),
                          (lambda: init.dirac_(lib.empty(3, 3, 3), 2), "dim 0 must be divisible by groups")):
        with pytest.raises(ValueError, match=message):
            call()


def test_sparse_zeros_per_column():
    w = minigrad.empty(10, 30)
    minit.sparse_(w, sparsity=0.25, std=0.5)
    zeros = (w.numpy() == 0).sum(axis=0)
    assert (zeros == math.ceil(0.25 * 10)).all()


def test_deprecated_names_warn_as_torch():
    for name in ("uniform", "kaiming_normal", "orthogonal"):
        with pytest.warns(FutureWarning, match=f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`"):
            getattr(minit, name)(minigrad.empty(3, 3))
        with pytest.warns(FutureWarning, match=f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`"):
            getattr(tinit, name)(torch.empty(3, 3))


DRAWS = {
    "randn": lambda g: minigrad.randn(5, generator=g),
    "rand": lambda g: minigrad.rand(2, 3, generator=g),
    "randint": lambda g: minigrad.randint(0, 10, (6,), generator=g),
    "randperm": lambda g: minigrad.randperm(7, generator=g),
    "randn_like": lambda g: minigrad.randn_like(minigrad.ones(3), generator=g),
    "normal_": lambda g: minigrad.empty(4).normal_(0.0, 2.0, generator=g),
    "uniform_": lambda g: minigrad.empty(4).uniform_(-1.0, 1.0, generator=g),
    "init.kaiming_normal_": lambda g: minit.kaiming_normal_(minigrad.empty(3, 4), generator=g),
    "init.orthogonal_": lambda g: minit.orthogonal_(minigrad.empty(3, 4), generator=g),
    "init.trunc_normal_": lambda g: minit.trunc_normal_(minigrad.empty(9), generator=g),
    "RandomSampler": lambda g: minigrad.tensor(list(RandomSampler(range(9), generator=g))),
    "SubsetRandomSampler": lambda g: minigrad.tensor(list(SubsetRandomSampler([3, 4, 5, 6], generator=g))),
    "WeightedRandomSampler": lambda g: minigrad.tensor(list(WeightedRandomSampler([1.0, 2.0, 0.5], 8, generator=g))),
    "random_split": lambda g: minigrad.tensor(random_split(range(10), [0.3, 0.7], generator=g)[0].indices),
    "DataLoader": lambda g: next(iter(DataLoader(TensorDataset(minigrad.arange(9)), batch_size=9, shuffle=True,
                                                 generator=g)))[0],
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_a_generator_repeats_its_draws_and_leaves_the_global_one_alone(name):
    draw = DRAWS[name]
    first = draw(minigrad.Generator().manual_seed(5)).numpy()
    minigrad.manual_seed(0)
    expected_global = minigrad.rand(3).numpy()
    minigrad.manual_seed(0)
    again = draw(minigrad.Generator().manual_seed(5)).numpy()
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(minigrad.rand(3).numpy(), expected_global)  # the global stream did not move
    other = draw(minigrad.Generator().manual_seed(6)).numpy()
    assert first.size < 3 or not np.array_equal(first, other)
    np.testing.assert_array_equal(draw(np.random.default_rng(1)).numpy(), draw(np.random.default_rng(1)).numpy())


def test_a_wrong_generator_is_a_type_error():
    with pytest.raises(TypeError, match="generator must be a minigrad.Generator, not int"):
        minigrad.randn(3, generator=3)
    with pytest.raises(TypeError, match="generator must be a minigrad.Generator, not str"):
        list(RandomSampler(range(3), generator="seed"))
