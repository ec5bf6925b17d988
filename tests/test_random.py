"""Random sampling: multinomial, bernoulli, normal, poisson, randint_like, the in-place samplers,
generators and the generator state.

minigrad's numbers are not PyTorch's (another generator), so what is compared is what must agree:
shapes, dtypes, nodes and (zero) gradients against torch for hypothesis-drawn shapes and dtypes,
PyTorch's exception types for bad input, the distributions themselves (means, variances,
frequencies of large samples, within a few standard errors), reproducibility under manual_seed,
and get_rng_state/set_rng_state and Generator round trips.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from tests.ops.test_creation_and_devices import raised

torch = pytest.importorskip("torch")
N = 40_000


def close(sample, expected: float, spread: float, n: int = N) -> None:
    """``sample``'s mean within 5 standard errors of ``expected`` (``spread``: one draw's standard deviation)."""
    assert abs(float(np.mean(sample)) - expected) < 5 * spread / math.sqrt(n) + 1e-12, (np.mean(sample), expected)


# -- shapes, dtypes, nodes and gradients against torch --------------------------------------------------
CALLS = {
    "multinomial": lambda L, x: L.multinomial(x.abs() + 0.1, 3, True),
    "multinomial_rows": lambda L, x: (x.abs().reshape(-1, x.shape[-1]) + 0.1).multinomial(1),
    "bernoulli": lambda L, x: L.bernoulli(x.sigmoid()),
    "bernoulli_p": lambda L, x: x.bernoulli(0.3),
    "normal_tensor_tensor": lambda L, x: L.normal(x, x.abs() + 1),
    "normal_tensor_float": lambda L, x: L.normal(x, 2.0),
    "normal_float_tensor": lambda L, x: L.normal(1.0, x.abs()),
    "normal_float_float": lambda L, x: L.normal(0.0, 1.0, tuple(x.shape)),
    "poisson": lambda L, x: L.poisson(x.abs() * 3),
    "randint_like": lambda L, x: L.randint_like(x, 5),
    "randint_like_low": lambda L, x: L.randint_like(x, -3, 4, dtype=L.int64),
}


# PyTorch records a node it cannot differentiate ("derivative for aten::bernoulli is not implemented");
# minigrad records none: only the draws are compared.
NO_DERIVATIVE_IN_TORCH = {"bernoulli_p"}


def outcome(lib, name: str, shape: tuple, dtype: str):
    x = lib.tensor(np.random.default_rng(0).standard_normal(shape), dtype=getattr(lib, dtype))
    if dtype.startswith("float") and name not in NO_DERIVATIVE_IN_TORCH:
        x.requires_grad_()
    try:
        out = CALLS[name](lib, x)
    except Exception as e:  # noqa: BLE001  (multinomial of a 3-D tensor: the same refusal)
        return type(e).__name__
    grad = None
    if out.requires_grad:
        grad = lib.autograd.grad(out.sum(), x)[0].numpy()
    return tuple(out.shape), str(out.dtype).split(".")[-1], out.grad_fn and out.grad_fn.name(), grad


@pytest.mark.parametrize("name", list(CALLS))
@settings(max_examples=6, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple), dtype=st.sampled_from(["float32", "float64"]))
def test_shapes_dtypes_and_gradients_match_torch(name, shape, dtype):
    ours, theirs = outcome(minigrad, name, shape, dtype), outcome(torch, name, shape, dtype)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert ours[:3] == theirs[:3]
    if theirs[3] is not None:
        np.testing.assert_array_equal(ours[3], theirs[3])  # zeros: sampling has no useful derivative


# -- reproducibility -----------------------------------------------------------------------------------
DRAWS = {
    "multinomial": lambda: minigrad.multinomial(minigrad.tensor([0.2, 0.3, 0.5]), 5, replacement=True),
    "multinomial_without": lambda: minigrad.multinomial(minigrad.rand(2, 6), 4),
    "bernoulli": lambda: minigrad.bernoulli(minigrad.full((5,), 0.5)),
    "bernoulli_": lambda: minigrad.zeros(5).bernoulli_(0.5),
    "normal": lambda: minigrad.normal(minigrad.zeros(5), 1.0),
    "normal_sized": lambda: minigrad.normal(2.0, 3.0, (5,)),
    "poisson": lambda: minigrad.poisson(minigrad.full((5,), 4.0)),
    "randint_like": lambda: minigrad.randint_like(minigrad.zeros(5), 100),
    "random_": lambda: minigrad.zeros(5).random_(),
    "exponential_": lambda: minigrad.zeros(5).exponential_(),
    "geometric_": lambda: minigrad.zeros(5).geometric_(0.3),
    "log_normal_": lambda: minigrad.zeros(5).log_normal_(),
    "cauchy_": lambda: minigrad.zeros(5).cauchy_(),
}


@pytest.mark.parametrize("name", list(DRAWS))
def test_manual_seed_repeats_the_draws(name):
    minigrad.manual_seed(123)
    first = DRAWS[name]().numpy().copy()
    again = DRAWS[name]().numpy().copy()
    minigrad.manual_seed(123)
    np.testing.assert_array_equal(DRAWS[name]().numpy(), first)
    assert not np.array_equal(again, first) or name == "multinomial_without", "the second draw repeated the first"


def test_rng_state_round_trip_repeats_what_followed():
    minigrad.manual_seed(7)
    minigrad.randn(3)
    state = minigrad.get_rng_state()
    assert isinstance(state, minigrad.Tensor) and state.dtype == minigrad.uint8 and state.ndim == 1
    expected = [minigrad.randn(4).numpy(), minigrad.multinomial(minigrad.ones(5), 3).numpy(), minigrad.rand(2).numpy()]
    minigrad.randn(10)
    minigrad.set_rng_state(state)
    got = [minigrad.randn(4).numpy(), minigrad.multinomial(minigrad.ones(5), 3).numpy(), minigrad.rand(2).numpy()]
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(e, g)
    # an odd number of 32-bit draws leaves half a word cached: the state keeps it
    minigrad.randint(0, 10, (1,), dtype=minigrad.int32)
    state = minigrad.get_rng_state()
    after = minigrad.rand(3).numpy()
    minigrad.set_rng_state(state)
    np.testing.assert_array_equal(minigrad.rand(3).numpy(), after)


def test_a_generator_is_its_own_stream():
    g = minigrad.Generator().manual_seed(5)
    assert g.initial_seed() == 5
    minigrad.manual_seed(0)
    plain = minigrad.randn(3).numpy()
    minigrad.manual_seed(0)
    first = minigrad.multinomial(minigrad.ones(6), 6, generator=g).numpy()
    np.testing.assert_array_equal(minigrad.randn(3).numpy(), plain)  # the global stream was not used
    state = g.get_state()
    following = minigrad.zeros(4).exponential_(generator=g).numpy()
    g.set_state(state)
    np.testing.assert_array_equal(minigrad.zeros(4).exponential_(generator=g).numpy(), following)
    np.testing.assert_array_equal(minigrad.multinomial(minigrad.ones(6), 6, generator=g.manual_seed(5)).numpy(), first)
    ints = minigrad.randint_like(minigrad.zeros(5), 100, generator=g.manual_seed(1)).numpy()
    np.testing.assert_array_equal(minigrad.randint_like(minigrad.zeros(5), 100, generator=g.manual_seed(1)).numpy(), ints)
    assert sorted(first.tolist()) == list(range(6))


# -- the distributions ----------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def seeded():
    minigrad.manual_seed(2024)


def test_multinomial_frequencies():
    p = np.array([0.1, 0.0, 0.3, 0.6])
    draws = minigrad.multinomial(minigrad.tensor(p * 5), N, replacement=True).numpy()
    for i, pi in enumerate(p):
        close(draws == i, pi, math.sqrt(pi * (1 - pi)))
    rows = minigrad.multinomial(minigrad.tensor(np.tile(p * 5, (N // 10, 1))), 3).numpy()
    assert all(len(set(r)) == 3 for r in rows) and not (rows == 1).any()  # zero weight: never while others remain
    for i, pi in enumerate(p):  # the first draw of each row follows the weights
        close(rows[:, 0] == i, pi, math.sqrt(pi * (1 - pi)), N // 10)
    assert minigrad.multinomial(minigrad.tensor([1.0, 0.0, 0.0]), 3).tolist()[0] == 0


def test_bernoulli_and_bernoulli_():
    p = minigrad.tensor([0.0, 0.25, 1.0]).expand(N, 3)
    draws = minigrad.bernoulli(p).numpy()
    close(draws[:, 1], 0.25, math.sqrt(0.25 * 0.75))
    assert draws[:, 0].sum() == 0 and draws[:, 2].all()
    close(minigrad.zeros(N).bernoulli_(0.7).numpy(), 0.7, math.sqrt(0.21))
    close(minigrad.zeros(N, dtype=minigrad.int64).bernoulli_(minigrad.full((N,), 0.4)).numpy(), 0.4, math.sqrt(0.24))


def test_normal_overloads():
    a = minigrad.normal(minigrad.full((N,), 3.0), minigrad.full((N,), 2.0)).numpy()
    close(a, 3.0, 2.0)
    close((a - 3.0) ** 2, 4.0, 4.0 * math.sqrt(2))
    close(minigrad.normal(minigrad.full((N,), -1.0), 0.5).numpy(), -1.0, 0.5)
    close(minigrad.normal(2.0, minigrad.full((N,), 3.0)).numpy(), 2.0, 3.0)
    b = minigrad.normal(0.0, 1.5, (N,), dtype=minigrad.float64)
    assert b.dtype == minigrad.float64
    close(b.numpy() ** 2, 2.25, 2.25 * math.sqrt(2))


def test_poisson_mean_and_variance():
    draws = minigrad.poisson(minigrad.full((N,), 4.0)).numpy()
    close(draws, 4.0, 2.0)
    close((draws - 4.0) ** 2, 4.0, math.sqrt(4.0 * (1 + 2 * 4.0)))
    assert (draws == np.round(draws)).all() and minigrad.poisson(minigrad.zeros(3)).tolist() == [0.0, 0.0, 0.0]


def test_integers_from_random_and_randint_like():
    ints = minigrad.randint_like(minigrad.zeros(N, dtype=minigrad.int32), -2, 3)
    assert ints.dtype == minigrad.int32 and set(ints.tolist()) == {-2, -1, 0, 1, 2}
    close(ints.numpy(), 0.0, math.sqrt(2))
    assert set(minigrad.zeros(N).random_(4).tolist()) == {0, 1, 2, 3}
    assert set(minigrad.zeros(N).random_(2, 4).tolist()) == {2, 3}
    for dtype, top in ((minigrad.float32, 2 ** 24), (minigrad.float64, 2 ** 53), (minigrad.int32, 2 ** 31 - 1)):
        values = minigrad.zeros(N, dtype=dtype).random_().numpy().astype(np.float64)
        assert values.min() >= 0 and values.max() <= top and values.max() > top / 2, dtype
        assert (values == np.round(values)).all()


def test_in_place_continuous_samplers():
    close(minigrad.zeros(N).exponential_(2.0).numpy(), 0.5, 0.5)
    geometric = minigrad.zeros(N, dtype=minigrad.float64).geometric_(0.25).numpy()
    assert geometric.min() == 1 and (geometric == np.round(geometric)).all()
    close(geometric, 4.0, math.sqrt(0.75) / 0.25)
    logs = np.log(minigrad.zeros(N, dtype=minigrad.float64).log_normal_(1.0, 0.5).numpy())
    close(logs, 1.0, 0.5)
    cauchy = minigrad.zeros(N, dtype=minigrad.float64).cauchy_(2.0, 3.0).numpy()
    quartiles = np.percentile(cauchy, [25, 50, 75])
    assert abs(quartiles[1] - 2.0) < 0.2 and abs((quartiles[2] - quartiles[0]) - 6.0) < 0.4


def test_in_place_samplers_return_the_tensor_and_bump_its_version():
    x = minigrad.zeros(3)
    version = x._version
    for fill in (lambda t: t.random_(3), lambda t: t.exponential_(), lambda t: t.geometric_(0.5),
                 lambda t: t.log_normal_(), lambda t: t.cauchy_(), lambda t: t.bernoulli_()):
        assert fill(x) is x
    assert x._version > version


BAD = {
    "multinomial_integer": lambda L: L.multinomial(L.tensor([1, 1]), 1),
    "multinomial_3d": lambda L: L.multinomial(L.ones(2, 2, 2), 1),
    "multinomial_negative": lambda L: L.multinomial(L.tensor([-1.0, 1.0]), 1),
    "multinomial_zero_sum": lambda L: L.multinomial(L.zeros(2), 1),
    "multinomial_no_samples": lambda L: L.multinomial(L.ones(2), 0),
    "multinomial_too_many": lambda L: L.multinomial(L.ones(2), 3),
    "multinomial_nan": lambda L: L.multinomial(L.tensor([float("nan"), 1.0]), 1),
    "bernoulli_above_one": lambda L: L.bernoulli(L.tensor([1.5])),
    "bernoulli_p_above_one": lambda L: L.bernoulli(L.ones(2), 1.5),
    "bernoulli_integer": lambda L: L.bernoulli(L.ones(2, dtype=L.int64)),
    "bernoulli__above_one": lambda L: L.ones(2).bernoulli_(1.5),
    "normal_negative_std": lambda L: L.normal(L.zeros(2), -1.0),
    "normal_negative_std_tensor": lambda L: L.normal(0.0, L.tensor([1.0, -1.0])),
    "normal_numbers_without_size": lambda L: L.normal(0.0, 1.0),
    "poisson_negative": lambda L: L.poisson(L.tensor([-1.0])),
    "geometric_p_zero": lambda L: L.ones(2).geometric_(0),
    "exponential_negative": lambda L: L.ones(2).exponential_(-1),
    "exponential_integer": lambda L: L.ones(2, dtype=L.int64).exponential_(),
    "random_reversed": lambda L: L.ones(2).random_(5, 2),
    "randint_like_reversed": lambda L: L.randint_like(L.ones(2), 5, 2),
    "cauchy_negative": lambda L: L.ones(2).cauchy_(0, -1),
    "log_normal_negative": lambda L: L.ones(2).log_normal_(1, -1),
    "set_rng_state_float": lambda L: L.set_rng_state(L.ones(3)),
    "set_rng_state_size": lambda L: L.set_rng_state(L.get_rng_state()[:-1]),
    "random_leaf": lambda L: L.ones(2, requires_grad=True).random_(),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_torchs_type(name):
    theirs, ours = raised(BAD[name], torch), raised(BAD[name], minigrad)
    assert theirs is not None, f"torch accepts {name}: the case is wrong"
    assert isinstance(ours, type(theirs)), f"minigrad raised {ours!r}; torch {theirs!r}"
