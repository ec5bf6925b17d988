"""tensor_split and hsplit/vsplit/dsplit, split_with_sizes, unflatten, ravel, atleast_nd, sum_to_size,
the layout queries, block_diag, cartesian_prod, combinations, tril/triu_indices, diff, cross, and
unique, unique_consecutive, bincount, histc, searchsorted, bucketize and isin, against PyTorch.

Hypothesis draws shapes, dims (negative too), split arguments, dtypes and some invalid arguments;
each call runs through both libraries on the same values: either both raise, with the same
exception type, or every output's values, dtype, shape and node name agree, and so do the
gradients of every input (backward of a weighted sum of the outputs).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck
from tests.ops.test_scatter import assert_same_gradients, make_leaves

try:
    import torch
except ImportError:  # the comparisons skip; the gradchecks still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (the [torch] extra)")
FEW = settings(max_examples=60, deadline=None)


def _outputs(result, lib) -> list:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _outcome(lib, fn, arrays, dtype):
    """("raised", type name) or ("ok", [(values, dtype, node, requires_grad) per output], gradients)."""
    leaves = make_leaves(lib, arrays, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = fn(lib, *leaves)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            return ("raised", type(e).__name__)
    if not isinstance(result, (tuple, list, lib.Tensor)):
        return ("ok", result, None)
    outs = _outputs(result, lib)
    described = [(o.detach().numpy().copy(), str(o.dtype).split(".")[-1],
                  None if o.grad_fn is None else type(o.grad_fn).__name__, o.requires_grad) for o in outs]
    total, grads = None, None
    for o in outs:
        if o.requires_grad and o.dtype.is_floating_point:
            term = (o * lib.tensor(np.linspace(0.5, 1.5, o.numel()).reshape(tuple(o.shape)), dtype=o.dtype)).sum()
            total = term if total is None else total + term
    if total is not None:
        try:
            total.backward()
            grads = [t.grad.numpy() if isinstance(t, lib.Tensor) and t.grad is not None else None for t in leaves]
        except Exception as e:  # noqa: BLE001
            grads = ("raised", type(e).__name__)
    return ("ok", described, grads)


def assert_same(fn, arrays, dtype="float64"):
    mine, theirs = _outcome(minigrad, fn, arrays, dtype), _outcome(torch, fn, arrays, dtype)
    assert mine[0] == theirs[0] and (mine[0] == "ok" or mine[1] == theirs[1]), f"minigrad {mine}, torch {theirs}"
    if mine[0] == "raised":
        return
    tol = 1e-10 if dtype == "float64" else 1e-5
    (_, mo, mg), (_, to, tg) = mine, theirs
    if not isinstance(mo, list):
        assert mo == to
        return
    assert len(mo) == len(to)
    for (mv, md, mn, mr), (tv, td, tn, tr) in zip(mo, to):
        assert (md, mv.shape, mr) == (td, tv.shape, tr)
        np.testing.assert_allclose(mv, tv, rtol=tol, atol=tol)
        assert mn == tn
    assert_same_gradients(mg, tg, tol)


@st.composite
def shapes(draw, min_dims=1, max_dims=3, max_size=4):
    return tuple(draw(st.lists(st.integers(0 if draw(st.integers(0, 9)) == 0 else 1, max_size),
                               min_size=min_dims, max_size=max_dims)))


@st.composite
def values(draw, shape, whole: bool = False):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return rng.integers(-2, 3, shape).astype(np.float64) if whole else rng.uniform(-2, 2, shape)


DTYPES = st.sampled_from(["float64", "float64", "float32", "int64", "int32"])


# -- splits ---------------------------------------------------------------------------------------
@st.composite
def split_arguments(draw):
    """An int, a list of ints (any order, some beyond the size), a 0-d or 1-d tensor, or something invalid."""
    kind = draw(st.sampled_from(["int", "list", "tensor0", "tensor1", "bad"]))
    if kind == "int":
        return draw(st.integers(-1, 5))
    indices = draw(st.lists(st.integers(-5, 6), max_size=4))
    if kind == "list":
        return indices if draw(st.booleans()) else tuple(indices)
    if kind == "tensor0":
        return ("tensor", draw(st.integers(1, 4)))
    if kind == "tensor1":
        return ("tensor", indices, draw(st.sampled_from(["int64", "int64", "float32"])))
    return draw(st.sampled_from([2.0, "a", None, [1.5]]))


def _split_argument(L, value):
    if isinstance(value, tuple) and value[:1] == ("tensor",):
        return L.tensor(value[1]) if len(value) == 2 else L.tensor(value[1], dtype=getattr(L, value[2]))
    return value


@needs_torch
@FEW
@given(shape=shapes(0), data=st.data(), dtype=DTYPES)
def test_tensor_split_and_hvdsplit_match_torch(shape, data, dtype):
    arg = data.draw(split_arguments())
    op = data.draw(st.sampled_from(["tensor_split", "hsplit", "vsplit", "dsplit"]))
    dim = data.draw(st.integers(-3, 2))
    if op == "tensor_split":
        call = lambda L, x: x.tensor_split(_split_argument(L, arg), dim)  # noqa: E731
    else:
        call = lambda L, x: getattr(L, op)(x, _split_argument(L, arg))  # noqa: E731
    assert_same(call, [data.draw(values(shape))], dtype)


@needs_torch
@FEW
@given(shape=shapes(), data=st.data(), dtype=DTYPES)
def test_split_with_sizes_and_unflatten_match_torch(shape, data, dtype):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    sizes = data.draw(st.sampled_from([[n], [0, n], [1, n - 1], [n - 1, 2], [n + 1]]))
    x = data.draw(values(shape))
    assert_same(lambda L, x: x.split_with_sizes(sizes, dim), [x], dtype)
    factors = data.draw(st.sampled_from([(n,), (1, n), (n, 1), (-1, 1), (-1,), (2, -1), (n, 2), (-1, -1), ()]))
    assert_same(lambda L, x: L.unflatten(x, dim, factors), [x], dtype)


@needs_torch
@FEW
@given(shape=shapes(0), data=st.data(), dtype=DTYPES)
def test_ravel_atleast_and_sum_to_size_match_torch(shape, data, dtype):
    x = data.draw(values(shape))
    transpose = len(shape) >= 2 and data.draw(st.booleans())
    assert_same(lambda L, x: (x.transpose(0, 1) if transpose else x).ravel(), [x], dtype)
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        assert_same(lambda L, x: getattr(L, name)(x), [x], dtype)
        assert_same(lambda L, x: getattr(L, name)(x, x[None]), [x], dtype)
        assert_same(lambda L, x: getattr(L, name)([x]), [x], dtype)
    target = tuple(data.draw(st.sampled_from([1, n, n + 1])) for n in shape[data.draw(st.integers(0, len(shape))):])
    if data.draw(st.booleans()):
        target = (1,) + target
    assert_same(lambda L, x: x.sum_to_size(target), [x], dtype)
    assert_same(lambda L, x: x.sum_to_size(*target), [x], dtype)


@needs_torch
def test_layout_queries_match_torch():
    for lib in (minigrad, torch):
        x = lib.arange(24.0).reshape(2, 3, 4)
        assert x.ndimension() == 3 and x.storage_offset() == 0
        assert [v.storage_offset() for v in (x[1], x[1, 2], x[:, 1:], x[1, :, 3], x.transpose(0, 2)[3])] == \
            [12, 20, 4, 15, 3]
        y = x.new_empty_strided((2, 3), (1, 2))
        assert y.shape == (2, 3) and y.stride() == (1, 2) and y.dtype == x.dtype
        assert x.new_empty_strided((2, 3), (3, 1), dtype=lib.int64).dtype == lib.int64
        with pytest.raises(RuntimeError):
            x.new_empty_strided((2, 3), (1,))


# -- block_diag, cartesian_prod, combinations, tril/triu_indices ----------------------------------
@needs_torch
@FEW
@given(data=st.data())
def test_block_diag_and_cartesian_prod_match_torch(data):
    shapes_ = data.draw(st.lists(shapes(0, 3, 3).filter(lambda s: 0 not in s), max_size=3))
    dtypes_ = [data.draw(st.sampled_from(["float64", "float32", "int64", "int32"])) for _ in shapes_]
    arrays = [data.draw(values(s)) for s in shapes_]

    def made(L, *leaves):
        return [t.to(getattr(L, d)) for t, d in zip(leaves, dtypes_)]
    assert_same(lambda L, *xs: L.block_diag(*made(L, *xs)), arrays)
    same_dtype = data.draw(st.booleans())
    assert_same(lambda L, *xs: L.cartesian_prod(*(xs if same_dtype else made(L, *xs))), arrays)


def test_block_diag_passes_each_block_its_own_gradient_after_an_empty_one():
    """PyTorch 2.13's backward gives the block after an empty vector the gradient of the wrong place
    (it does not count the empty vector's row); minigrad cuts each block from where it was put."""
    empty, x = minigrad.zeros(0, requires_grad=True), minigrad.tensor(2.0, requires_grad=True)
    out = minigrad.block_diag(empty, x)
    assert out.tolist() == [[0.0], [2.0]]
    (out * minigrad.tensor([[10.0], [1.0]])).sum().backward()
    assert x.grad.item() == 1.0 and empty.grad.shape == (0,)


@needs_torch
@FEW
@given(n=st.integers(0, 5), r=st.integers(-1, 4), with_replacement=st.booleans(), dtype=DTYPES,
       two_d=st.integers(0, 9))
def test_combinations_match_torch(n, r, with_replacement, dtype, two_d):
    x = np.linspace(-1, 2, n).reshape((1, n) if two_d == 0 else (n,))
    assert_same(lambda L, x: L.combinations(x, r, with_replacement), [x], dtype)
    assert_same(lambda L, x: L.combinations(x, r=r), [x], dtype)


@needs_torch
@FEW
@given(row=st.integers(-1, 5), col=st.integers(-1, 5), offset=st.integers(-6, 6),
       dtype=st.sampled_from(["int64", "int32", "float32"]))
def test_tril_and_triu_indices_match_torch(row, col, offset, dtype):
    for name in ("tril_indices", "triu_indices"):
        assert_same(lambda L: getattr(L, name)(row, col, offset, dtype=getattr(L, dtype)), [])
    assert_same(lambda L: L.tril_indices(max(row, 0), max(col, 0)), [])


# -- diff, cross ----------------------------------------------------------------------------------
@needs_torch
@FEW
@given(shape=shapes(0), data=st.data(), dtype=st.sampled_from(["float64", "float32", "int64", "bool"]))
def test_diff_matches_torch(shape, data, dtype):
    n, dim = data.draw(st.integers(-1, 4)), data.draw(st.integers(-3, 2))
    extra = {}
    for name in ("prepend", "append"):
        choice = data.draw(st.sampled_from(["none", "none", "same", "flat", "number"]))
        if choice == "same":
            extra[name] = data.draw(values(shape[:-1] + (data.draw(st.integers(0, 2)),) if shape else ()))
        elif choice == "flat":
            extra[name] = data.draw(values((2,)))
        elif choice == "number":
            extra[name] = 1.5

    def call(L, x, *given):
        kwargs = dict(zip(extra, given))
        kwargs = {k: v if isinstance(v, float) else (v > 0 if dtype == "bool" else v) for k, v in kwargs.items()}
        return (x > 0 if dtype == "bool" else x).diff(n, dim, **kwargs)
    assert_same(call, [data.draw(values(shape, whole=True)), *extra.values()], "float64" if dtype == "bool" else dtype)


@needs_torch
@FEW
@given(data=st.data(), dtype=st.sampled_from(["float64", "float32", "int64"]))
def test_cross_matches_torch(data, dtype):
    ndim = data.draw(st.integers(1, 3))
    shape = [data.draw(st.sampled_from([1, 2, 3, 3])) for _ in range(ndim)]
    other = [data.draw(st.sampled_from([1, n])) if n != 3 else n for n in shape]
    dim = data.draw(st.sampled_from([None, None, -1, 0, 1, 2]))
    other_dtype = data.draw(st.sampled_from([dtype, dtype, "float32"]))
    a, b = data.draw(values(tuple(shape))), data.draw(values(tuple(other)))
    assert_same(lambda L, a, b: L.cross(a, b.to(getattr(L, other_dtype)), dim=dim), [a, b], dtype)
    assert_same(lambda L, a, b: a.cross(b) if dim is None else a.cross(b, dim), [a, b], dtype)


# -- unique, unique_consecutive, bincount, histc --------------------------------------------------
@needs_torch
@FEW
@given(shape=shapes(0), data=st.data(), dtype=st.sampled_from(["float64", "float32", "int64", "int32"]))
def test_unique_and_unique_consecutive_match_torch(shape, data, dtype):
    x = data.draw(values(shape, whole=True))
    flags = data.draw(st.tuples(st.booleans(), st.booleans(), st.booleans()))
    dim = data.draw(st.sampled_from([None, None, 0, -1, 1]))
    assert_same(lambda L, x: x.unique(*flags, dim=dim), [x], dtype)
    # (by keyword: PyTorch's top-level unique_consecutive picks what to return from return_inverse given by
    # keyword only, so a positional one misaligns its outputs)
    assert_same(lambda L, x: L.unique_consecutive(x, return_inverse=flags[1], return_counts=flags[2], dim=dim),
                [x], dtype)
    assert_same(lambda L, x: x.unique_consecutive(flags[1], flags[2], dim), [x], dtype)


@needs_torch
def test_unique_keeps_each_nan_and_has_no_derivative_as_in_torch():
    assert_same(lambda L, x: x.unique(return_counts=True), [np.array([1.0, np.nan, 2.0, np.nan, 1.0])])
    assert_same(lambda L, x: x.unique(), [np.array([1.0, 3.0, 1.0])])  # (its backward raises NotImplementedError)


@needs_torch
@FEW
@given(data=st.data(), weights=st.sampled_from([None, "float64", "float32", "int64"]))
def test_bincount_matches_torch(data, weights):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n = data.draw(st.integers(0, 6))
    x = rng.integers(-1 if data.draw(st.integers(0, 9)) == 0 else 0, 5, n)
    kind = data.draw(st.sampled_from(["int64", "int64", "int32", "float64", "2d"]))
    minlength = data.draw(st.integers(-1, 8))
    w = rng.uniform(0, 2, n + (1 if data.draw(st.integers(0, 9)) == 0 else 0))

    def call(L, w):
        xs = L.tensor(x.reshape(1, -1) if kind == "2d" else x, dtype=getattr(L, "int64" if kind == "2d" else kind))
        given = None if weights is None else w.to(getattr(L, weights))
        return xs.bincount(given, minlength=minlength)
    assert_same(call, [w])


@needs_torch
@FEW
@given(shape=shapes(0), data=st.data(), dtype=st.sampled_from(["float64", "float32", "int64"]))
def test_histc_matches_torch(shape, data, dtype):
    x = data.draw(values(shape))
    if data.draw(st.integers(0, 5)) == 0 and x.size and dtype != "int64":
        x.reshape(-1)[0] = data.draw(st.sampled_from([np.nan, np.inf]))
    bins = data.draw(st.integers(-1, 7))
    low, high = data.draw(st.sampled_from([(0, 0), (-1, 1), (-0.5, 2.5), (1, 1), (2, -2), (0, 1.0)]))
    assert_same(lambda L, x: x.histc(bins, low, high), [x], dtype)


# -- searchsorted, bucketize, isin ----------------------------------------------------------------
@needs_torch
@FEW
@given(data=st.data(), dtype=st.sampled_from(["float64", "int64", "float32"]))
def test_searchsorted_and_bucketize_match_torch(data, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lead = data.draw(st.sampled_from([(), (), (2,), (2, 1)]))
    n = data.draw(st.integers(1, 5))
    seq = np.sort(rng.integers(-3, 4, lead + (n,)).astype(np.float64), axis=-1)
    value_lead = lead if data.draw(st.integers(0, 5)) else (3,)
    vals = rng.integers(-4, 5, value_lead + (data.draw(st.integers(1, 3)),)).astype(np.float64)
    right = data.draw(st.booleans())
    side = data.draw(st.sampled_from([None, None, "left", "right", "middle"]))
    out_int32 = data.draw(st.booleans())
    scalar = data.draw(st.integers(0, 5)) == 0
    sorter = data.draw(st.booleans())
    perm = np.stack([rng.permutation(n) for _ in range(int(np.prod(lead, dtype=int)))]).reshape(lead + (n,))
    shuffled = np.take_along_axis(seq, np.argsort(perm, axis=-1), axis=-1)  # shuffled[perm] is seq

    def call(L, s, v):
        kwargs = {"right": right, "side": side, "out_int32": out_int32}
        if sorter:
            s, kwargs["sorter"] = L.tensor(shuffled).to(s.dtype), L.tensor(perm)
        return L.searchsorted(s, 1.5 if scalar else v, **kwargs)
    assert_same(call, [seq, vals], dtype)
    assert_same(lambda L, s, v: L.bucketize(1 if scalar else v, s, right=right, out_int32=out_int32), [seq, vals],
                dtype)


@needs_torch
@FEW
@given(shape=shapes(0), data=st.data(), dtype=st.sampled_from(["float64", "int64"]))
def test_isin_matches_torch(shape, data, dtype):
    x, test = data.draw(values(shape, whole=True)), data.draw(values(data.draw(shapes(0)), whole=True))
    invert, assume_unique = data.draw(st.booleans()), data.draw(st.booleans())
    assert_same(lambda L, x, t: L.isin(x, t, invert=invert, assume_unique=assume_unique), [x, test], dtype)
    assert_same(lambda L, x, t: L.isin(x, 1), [x, test], dtype)
    assert_same(lambda L, x, t: L.isin(1.0, t, invert=invert), [x, test], dtype)


# -- gradcheck, without torch ---------------------------------------------------------------------
GRADCHECKS = {
    "tensor_split": (lambda x: x.tensor_split([1, 3], dim=1)[1] * 2, [(2, 4)]),
    "unflatten": (lambda x: x.unflatten(1, (2, 2)) ** 2, [(2, 4)]),
    "sum_to_size": (lambda x: x.sum_to_size(1, 4) ** 2, [(3, 4)]),
    "block_diag": (lambda x, y: minigrad.block_diag(x, y) ** 2, [(2, 3), (2,)]),
    "cartesian_prod": (lambda x, y: minigrad.cartesian_prod(x, y) ** 2, [(2,), (3,)]),
    "combinations": (lambda x: minigrad.combinations(x, 2, True) ** 2, [(3,)]),
    "diff": (lambda x, p: x.diff(2, 0, prepend=p) ** 2, [(3, 2), (1, 2)]),
    "cross": (lambda x, y: x.cross(y, dim=1), [(2, 3), (1, 3)]),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck_and_gradgradcheck(name):
    fn, leaf_shapes = GRADCHECKS[name]
    rng = np.random.default_rng(len(name))
    leaves = [minigrad.tensor(rng.standard_normal(s), dtype=minigrad.float64, requires_grad=True) for s in leaf_shapes]
    assert gradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
