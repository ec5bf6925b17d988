"""Order statistics, sample statistics, distances and integrals against PyTorch.

median, nanmedian, kthvalue, mode, quantile, nanquantile, logcumsumexp, aminmax, cov, corrcoef,
histogram, cdist, dist, cosine_similarity, pairwise_distance, trapezoid, trapz,
cumulative_trapezoid, vander and renorm. Hypothesis draws shapes, dims and arguments; each case
runs through both libraries in float64 (values, the gradient of a random-weighted sum, dtypes),
then through gradcheck and gradgradcheck without torch. Where PyTorch leaves the index of a tied
value unspecified (median, kthvalue and mode along a dim), the values are distinct, except in
the tie tests, which check only that each index points at its value. Bad input must raise
PyTorch's exception type.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck
from tests.ops.test_creation_and_devices import outputs, raised

torch = pytest.importorskip("torch")
NAN = float("nan")


def distinct(rng, shape):
    return np.asarray(rng.permutation(np.prod(shape, dtype=int)).reshape(shape) * 0.37 - 1 + rng.uniform(0, 0.1, shape))


def with_ties(rng, shape):
    return rng.integers(0, 3, shape).astype(np.float64)


def with_nans(rng, shape):
    x = distinct(rng, shape)
    x[rng.random(shape) < 0.3] = NAN
    return x


# name: (function of (library, x, dim), input maker, differentiable)
CASES = {
    "median_all": (lambda L, x, d: L.median(x), with_ties, True),
    "median_all_nan": (lambda L, x, d: x.median(), with_nans, False),
    "median_dim": (lambda L, x, d: tuple(L.median(x, d)), distinct, True),
    "median_dim_keepdim": (lambda L, x, d: tuple(x.median(d, keepdim=True)), distinct, True),
    "median_dim_nan": (lambda L, x, d: L.median(x, d).values, with_nans, False),
    "nanmedian_all": (lambda L, x, d: L.nanmedian(x), with_nans, True),
    "nanmedian_dim": (lambda L, x, d: tuple(L.nanmedian(x, d)), with_nans, False),
    "kthvalue": (lambda L, x, d: tuple(L.kthvalue(x, 1 + x.shape[d] // 2 if x.ndim else 1, d)), distinct, True),
    "kthvalue_keepdim": (lambda L, x, d: tuple(x.kthvalue(1, d, True)), distinct, True),
    "mode": (lambda L, x, d: L.mode(x, d).values, with_ties, True),
    "mode_keepdim": (lambda L, x, d: x.mode(d, keepdim=True).values, with_ties, True),
    **{f"quantile_{how}": (lambda L, x, d, how=how: L.quantile(x, 0.3, d, interpolation=how), distinct, True)
       for how in ("linear", "lower", "higher", "midpoint", "nearest")},
    "quantile_all": (lambda L, x, d: x.quantile(0.75), distinct, True),
    "quantile_all_keepdim": (lambda L, x, d: L.quantile(x, 0.5, None, True), distinct, True),
    "quantile_tensor_q": (lambda L, x, d: L.quantile(x, L.tensor([0.0, 0.25, 0.5, 1.0], dtype=L.float64), d,
                                                      keepdim=True), distinct, True),
    "quantile_nan": (lambda L, x, d: L.quantile(x, 0.4, d), with_nans, False),
    "nanquantile": (lambda L, x, d: L.nanquantile(x, L.tensor([0.1, 0.9], dtype=L.float64), d), with_nans, False),
    "nanquantile_all": (lambda L, x, d: x.nanquantile(0.5, interpolation="midpoint"), with_nans, False),
    "logcumsumexp": (lambda L, x, d: L.logcumsumexp(x, d), distinct, True),
    "aminmax": (lambda L, x, d: tuple(L.aminmax(x, dim=d)), distinct, True),
    "aminmax_all": (lambda L, x, d: tuple(x.aminmax()), with_ties, True),
    "renorm": (lambda L, x, d: L.renorm(x, 2, d, 1.5), distinct, True),
    "renorm_p1": (lambda L, x, d: x.renorm(1, d, 2.0), distinct, True),
    "dist": (lambda L, x, d: L.dist(x, x.flip(-1) * 0.5), distinct, True),
    "dist_p3": (lambda L, x, d: x.dist(x * 0.3 + 1, 3), distinct, True),
    "trapezoid": (lambda L, x, d: L.trapezoid(x, dim=d), distinct, True),
    "trapezoid_dx": (lambda L, x, d: L.trapezoid(x, dx=0.3, dim=d), distinct, True),
    "trapezoid_x": (lambda L, x, d: L.trapezoid(x, x.cumsum(d) * 1 if x.ndim else x, dim=d), distinct, True),
    "trapz": (lambda L, x, d: L.trapz(x, dim=d), distinct, True),
    "cumulative_trapezoid": (lambda L, x, d: L.cumulative_trapezoid(x, dim=d), distinct, True),
    "cumulative_trapezoid_x": (lambda L, x, d: L.cumulative_trapezoid(x, x.exp(), dim=d), distinct, True),
}
MATRIX_CASES = {  # inputs of two dims at least
    "cov": (lambda L, x: L.cov(x), True),
    "cov_correction0": (lambda L, x: x.cov(correction=0), True),
    "cov_weights": (lambda L, x: L.cov(x, fweights=L.arange(x.shape[-1]) % 3 + 1,
                                       aweights=L.linspace(0.5, 2, x.shape[-1], dtype=L.float64)), True),
    "corrcoef": (lambda L, x: L.corrcoef(x), True),
    "cdist": (lambda L, x: L.cdist(x, x[..., :1, :] * 2 + 1), True),
    "cdist_p1": (lambda L, x: L.cdist(x, x.flip(-2) * 0.5, p=1.0), True),
    "cdist_p0": (lambda L, x: L.cdist(x, x * 2, p=0), False),
    "cdist_pinf": (lambda L, x: L.cdist(x, x * 2 - 1, p=float("inf")), True),
    "cdist_mm": (lambda L, x: L.cdist(x, x + 1, compute_mode="donot_use_mm_for_euclid_dist"), True),
    "cosine_similarity": (lambda L, x: L.cosine_similarity(x, x.flip(-1) + 0.5, dim=-1), True),
    "pairwise_distance": (lambda L, x: L.pairwise_distance(x, x * 0.5), True),
    "vander": (lambda L, x: L.vander(x[0]), True),
    "vander_n_increasing": (lambda L, x: L.vander(x[0], N=4, increasing=True), True),
}
# PyTorch 2.13 cannot differentiate vander (its cumprod runs in place on a slice it saved: "modified
# by an inplace operation"); minigrad's is composed out of place, so only values are compared.
VALUES_ONLY = {"vander", "vander_n_increasing"}
ONE_DIM_ONLY = {"cov", "cov_correction0", "cov_weights", "corrcoef", "vander", "vander_n_increasing"}


def run(lib, fn, array, seed=0, requires_grad=True):
    x = lib.tensor(array, requires_grad=requires_grad)
    outs = outputs(fn(lib, x))
    values = [o.detach().numpy() for o in outs]
    dtypes = [str(o.dtype).split(".")[-1] for o in outs]
    differentiable = [o for o in outs if o.requires_grad]
    grad = None
    if differentiable:
        rng = np.random.default_rng(seed)
        loss = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in differentiable)
        grad = lib.autograd.grad(loss, x)[0].numpy()
    return values, grad, dtypes


def compare(fn, array, requires_grad=True):
    try:
        tv, tg, td = run(torch, fn, array, requires_grad=requires_grad)
    except Exception as e:  # noqa: BLE001  (a 0-d input to renorm ...: the same refusal)
        with pytest.raises(type(e)):
            run(minigrad, fn, array, requires_grad=requires_grad)
        return
    mv, mg, md = run(minigrad, fn, array, requires_grad=requires_grad)
    assert md == td
    assert len(mv) == len(tv)
    for m, t in zip(mv, tv):
        assert m.shape == t.shape
        np.testing.assert_allclose(m, t, rtol=1e-10, atol=1e-10)
    assert (mg is None) == (tg is None)
    if mg is not None:
        np.testing.assert_allclose(mg, tg, rtol=1e-9, atol=1e-9)


shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=8, deadline=None)
@given(shape=shapes, dim=st.integers(-3, 2), seed=st.integers(0, 2 ** 16))
def test_matches_torch(name, shape, dim, seed):
    fn, make, _ = CASES[name]
    d = dim % max(len(shape), 1)
    compare(lambda L, x: fn(L, x, d), make(np.random.default_rng(seed), shape))


@pytest.mark.parametrize("name", list(MATRIX_CASES))
@settings(max_examples=8, deadline=None)
@given(batch=st.sampled_from([(), (2,)]), rows=st.integers(1, 4), cols=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_matrix_cases_match_torch(name, batch, rows, cols, seed):
    if name in ONE_DIM_ONLY:
        batch = ()
    fn, _ = MATRIX_CASES[name]
    compare(fn, distinct(np.random.default_rng(seed), (*batch, rows, cols)), requires_grad=name not in VALUES_ONLY)


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case[2]])
def test_gradcheck(name):
    fn, make, _ = CASES[name]
    array = make(np.random.default_rng(3), (3, 4))
    if make is with_ties:  # a tie moves under finite differences: check where the values are apart
        array = distinct(np.random.default_rng(3), (3, 4))
    x = minigrad.tensor(array, requires_grad=True)

    def floats(t):
        return tuple(o for o in outputs(fn(minigrad, t, 1)) if o.requires_grad)

    assert gradcheck(floats, [x], eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(floats, [x], eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", [n for n, case in MATRIX_CASES.items() if case[1]])
def test_matrix_gradcheck(name):
    x = minigrad.tensor(distinct(np.random.default_rng(4), (3, 4)), requires_grad=True)
    fn = MATRIX_CASES[name][0]
    assert gradcheck(lambda t: fn(minigrad, t), [x], eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(lambda t: fn(minigrad, t), [x], eps=1e-6, atol=1e-5, rtol=1e-3)


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), dim=st.integers(0, 2),
       seed=st.integers(0, 2 ** 16))
def test_tied_values_point_at_themselves(shape, dim, seed):
    """With ties the index is any position of the value (PyTorch's is unspecified): values as torch's."""
    x = with_ties(np.random.default_rng(seed), shape)
    d = dim % len(shape)
    for op, args in (("median", (d,)), ("nanmedian", (d,)), ("mode", (d,)), ("kthvalue", (1, d))):
        ours = getattr(minigrad.tensor(x), op)(*args)
        theirs = getattr(torch.tensor(x), op)(*args)
        assert type(ours).__name__ == type(theirs).__name__ and ours._fields == ("values", "indices")
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        picked = np.take_along_axis(x, np.expand_dims(ours.indices.numpy(), d), d).squeeze(d)
        np.testing.assert_array_equal(picked, ours.values.numpy())


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 30), bins=st.integers(1, 6), seed=st.integers(0, 2 ** 16), weighted=st.booleans(),
       density=st.booleans(), explicit=st.booleans())
def test_histogram_matches_torch(n, bins, seed, weighted, density, explicit):
    rng = np.random.default_rng(seed)
    x, w, edges = rng.standard_normal(n), rng.uniform(0, 2, n), np.sort(rng.standard_normal(bins + 1))
    results = []
    for L in (minigrad, torch):
        kwargs = {"weight": L.tensor(w)} if weighted else {}
        if not explicit:
            kwargs["range"] = (-1.0, 1.5)
        results.append(L.histogram(L.tensor(x), L.tensor(edges) if explicit else bins, density=density, **kwargs))
    assert type(results[0]).__name__ == "histogram" and results[0]._fields == ("hist", "bin_edges")
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_integer_inputs_take_torchs_dtypes():
    x = np.array([[3, 1, 2], [0, 5, 4]])
    for fn in (lambda L: L.median(L.tensor(x)), lambda L: L.tensor(x).median(1).values,
               lambda L: L.tensor(x).mode(0).values, lambda L: L.tensor(x).kthvalue(2).values,
               lambda L: L.vander(L.tensor(x[0])), lambda L: L.cov(L.tensor(x)),
               lambda L: L.aminmax(L.tensor(x)).max, lambda L: L.trapezoid(L.tensor(x))):
        ours, theirs = fn(minigrad), fn(torch)
        assert str(ours.dtype)[9:] == str(theirs.dtype)[6:]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


BAD = {
    "median_dim_out_of_range": lambda L: L.median(L.ones(2, 3), 2),
    "median_empty_dim": lambda L: L.zeros(2, 0).median(1),
    "kthvalue_k_too_large": lambda L: L.kthvalue(L.ones(3), 4),
    "kthvalue_k_zero": lambda L: L.ones(3).kthvalue(0),
    "quantile_q_range": lambda L: L.quantile(L.ones(3), 1.5),
    "quantile_q_negative": lambda L: L.ones(3).quantile(L.tensor([-0.1, 0.5])),
    "quantile_integer": lambda L: L.quantile(L.ones(3, dtype=L.int64), 0.5),
    "quantile_q_dtype": lambda L: L.quantile(L.ones(3), L.tensor([0.5], dtype=L.float64)),
    "quantile_q_2d": lambda L: L.quantile(L.ones(3), L.ones(1, 1) * 0.5),
    "quantile_interpolation": lambda L: L.quantile(L.ones(3), 0.5, interpolation="cubic"),
    "quantile_empty": lambda L: L.quantile(L.ones(0), 0.5),
    "cov_3d": lambda L: L.cov(L.ones(2, 2, 2)),
    "cov_float_fweights": lambda L: L.cov(L.ones(2, 3), fweights=L.ones(3)),
    "cov_integer_aweights": lambda L: L.cov(L.ones(2, 3), aweights=L.ones(3, dtype=L.int64)),
    "cov_negative_fweights": lambda L: L.cov(L.ones(2, 3), fweights=L.tensor([1, -1, 1])),
    "cov_fweights_length": lambda L: L.cov(L.ones(2, 3), fweights=L.tensor([1, 1])),
    "cdist_1d": lambda L: L.cdist(L.ones(3), L.ones(2, 3)),
    "cdist_columns": lambda L: L.cdist(L.ones(2, 3), L.ones(2, 4)),
    "cdist_negative_p": lambda L: L.cdist(L.ones(2, 3), L.ones(2, 3), p=-1.0),
    "cdist_integer": lambda L: L.cdist(L.ones(2, 3, dtype=L.int64), L.ones(2, 3, dtype=L.int64)),
    "cdist_mode": lambda L: L.cdist(L.ones(2, 3), L.ones(2, 3), compute_mode="fast"),
    "renorm_p0": lambda L: L.renorm(L.ones(2, 3), 0, 0, 1.0),
    "renorm_negative_maxnorm": lambda L: L.ones(2, 3).renorm(2, 0, -1.0),
    "renorm_integer": lambda L: L.ones(2, 3, dtype=L.int64).renorm(2, 0, 1.0),
    "histogram_integer": lambda L: L.histogram(L.ones(3, dtype=L.int64), 3),
    "histogram_zero_bins": lambda L: L.histogram(L.ones(3), 0),
    "histogram_reversed_range": lambda L: L.histogram(L.ones(3), 3, range=(1.0, 0.0)),
    "histogram_edges_and_range": lambda L: L.histogram(L.ones(3), L.tensor([0.0, 1.0]), range=(0.0, 1.0)),
    "trapezoid_x_length": lambda L: L.trapezoid(L.ones(3), L.ones(4)),
    "vander_2d": lambda L: L.vander(L.ones(2, 2)),
    "vander_negative_n": lambda L: L.vander(L.ones(2), N=-1),
    "aminmax_empty": lambda L: L.aminmax(L.ones(0)),
    "mode_empty_dim": lambda L: L.ones(2, 0).mode(1),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_torchs_type(name):
    theirs, ours = raised(BAD[name], torch), raised(BAD[name], minigrad)
    assert theirs is not None, f"torch accepts {name}: the case is wrong"
    assert isinstance(ours, type(theirs)), f"minigrad raised {ours!r}; torch {theirs!r}"
