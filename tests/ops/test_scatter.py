"""scatter, scatter_reduce, the index_* family, index_put, put, masked_scatter, take_along_dim,
Tensor.where and diagonal/select/slice_scatter, against PyTorch.

Hypothesis draws shapes, dims (negative too), index tensors with repeated entries, dtypes and
some invalid arguments (an index out of range, an int32 or float index, a source of the wrong
shape or dtype); each call runs through both libraries on the same values: either both raise,
with the same exception type, or the values, the dtype, the output's node name and the
gradients of every input (backward of a weighted sum) agree. The in-place forms must bump the
version, refuse a leaf that requires grad, and pass the same gradient back through a non-leaf.
A gradcheck (no torch needed) covers the reductions to second order.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

try:
    import torch
except ImportError:  # the comparisons skip; the gradchecks still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (the [torch] extra)")
FEW = settings(max_examples=60, deadline=None)
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]


def make_leaves(lib, arrays, dtype):
    """One tensor per array; the float ones need a gradient."""
    out = []
    for a in arrays:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            t = lib.tensor(a, dtype=getattr(lib, dtype))
            out.append(t.requires_grad_() if dtype.startswith("float") else t)
        elif isinstance(a, np.ndarray):
            out.append(lib.tensor(a))
        else:
            out.append(a)
    return out


def _outcome(lib, fn, arrays, dtype):
    """("raised", type name) or ("ok", values, dtype, node name, gradients)."""
    leaves = make_leaves(lib, arrays, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(lib, *leaves)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            return ("raised", type(e).__name__)
    node = None if out.grad_fn is None else type(out.grad_fn).__name__.rpartition("::")[2]
    grads = None
    if out.requires_grad:
        weights = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))
        try:
            (out * lib.tensor(weights, dtype=out.dtype)).sum().backward()
            grads = [None if not isinstance(t, lib.Tensor) or t.grad is None else t.grad.numpy()
                     for t in leaves]
        except Exception as e:  # noqa: BLE001
            grads = ("raised", type(e).__name__)
    return ("ok", out.detach().numpy().copy(), str(out.dtype).split(".")[-1], node, grads)


def assert_same_gradients(mg, tg, tol: float) -> None:
    """The leaves' gradients of two outcomes agree: none, the same refusal, or close arrays leaf by leaf."""
    assert (mg is None) == (tg is None) and (isinstance(mg, tuple) == isinstance(tg, tuple)), (mg, tg)
    if isinstance(mg, tuple):
        assert mg == tg
    elif mg is not None:
        for a, b in zip(mg, tg):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def assert_same(fn, arrays, dtype="float64"):
    mine, theirs = _outcome(minigrad, fn, arrays, dtype), _outcome(torch, fn, arrays, dtype)
    assert mine[0] == theirs[0] and (mine[0] == "ok" or mine[1] == theirs[1]), f"minigrad {mine}, torch {theirs}"
    if mine[0] == "raised":
        return
    tol = 1e-10 if dtype == "float64" else 1e-5
    (_, mv, md, mn, mg), (_, tv, td, tn, tg) = mine, theirs
    assert md == td and mv.shape == tv.shape
    np.testing.assert_allclose(mv, tv, rtol=tol, atol=tol)
    assert mn == tn
    assert_same_gradients(mg, tg, tol)


# -- drawing cases --------------------------------------------------------------------------------
@st.composite
def shapes(draw, min_dims=1, max_dims=3):
    return tuple(draw(st.lists(st.integers(1, 4), min_size=min_dims, max_size=max_dims)))


@st.composite
def values(draw, shape, ties: bool = False, zeros: bool = False):
    """float64 values; ``ties``: whole numbers, so that max and min tie; ``zeros``: some exact zeros."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(-2, 3, shape).astype(np.float64) if ties else rng.uniform(-2, 2, shape)
    if zeros:
        x[rng.random(shape) < 0.3] = 0.0
    return x


@st.composite
def scatter_index(draw, shape, dim, bad: bool = True):
    """An index no larger than ``shape``, entries in [0, shape[dim]) (repeats likely), sometimes one out of range."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    index_shape = tuple(draw(st.integers(1, n)) for n in shape)
    index = rng.integers(0, shape[dim], index_shape)
    if bad and draw(st.booleans()) and draw(st.booleans()):
        index.reshape(-1)[0] = draw(st.sampled_from([-1, shape[dim]]))
    return index


# -- scatter, scatter_reduce ----------------------------------------------------------------------
@needs_torch
@FEW
@given(data=st.data())
def test_scatter_matches_torch(data):
    shape = data.draw(shapes())
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    index = data.draw(scatter_index(shape, d % len(shape)))
    x, src = data.draw(values(shape)), data.draw(values(index.shape))
    dtype = data.draw(st.sampled_from(["float64", "float32", "int64"]))
    if data.draw(st.booleans()):
        assert_same(lambda L, x, s, i: x.scatter(d, i, s), [x, src, index], dtype)
    else:
        value = data.draw(st.sampled_from([2.5, -1, 0.0]))
        assert_same(lambda L, x, i: L.scatter(x, d, i, value=value) if dtype == "float64" else x.scatter(d, i, value),
                    [x, index], dtype)


@needs_torch
@FEW
@given(data=st.data())
def test_scatter_reduce_matches_torch(data):
    shape = data.draw(shapes())
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    index = data.draw(scatter_index(shape, d % len(shape)))
    reduce = data.draw(st.sampled_from(REDUCTIONS))
    include_self = data.draw(st.booleans())
    ties, zeros = data.draw(st.booleans()), reduce == "prod" and data.draw(st.booleans())
    x, src = data.draw(values(shape, ties, zeros)), data.draw(values(index.shape, ties, zeros))
    dtype = data.draw(st.sampled_from(["float64", "float64", "float32", "int64"]))
    assert_same(lambda L, x, s, i: x.scatter_reduce(d, i, s, reduce, include_self=include_self), [x, src, index],
                dtype)


@needs_torch
@pytest.mark.parametrize("call", [
    lambda L, x, s, i: x.scatter(0, i.int(), s),  # int32 index: taken
    lambda L, x, s, i: x.scatter(0, i.float(), s),
    lambda L, x, s, i: x.scatter(0, i, s.float()),
    lambda L, x, s, i: x.scatter(0, i[None], s),
    lambda L, x, s, i: x.scatter(2, i, s),
    lambda L, x, s, i: x.scatter(0, i, [1.0]),
    lambda L, x, s, i: x.scatter(0, i, s, reduce="add"),
    lambda L, x, s, i: x.scatter(0, i, 2.0, reduce="multiply"),
    lambda L, x, s, i: x.scatter(0, i, s, reduce="mean"),
    lambda L, x, s, i: x.scatter_reduce(0, i, s, "add"),  # (PyTorch's forward takes an undocumented "max")
    lambda L, x, s, i: x.scatter_reduce(0, i, s, None),
    lambda L, x, s, i: x.scatter_reduce(0, i, s.float(), "sum"),
    lambda L, x, s, i: x.scatter_reduce(0, i + 5, s, "sum"),
], ids=["int32", "float index", "src dtype", "index rank", "dim", "src list", "reduce add", "reduce multiply value",
        "reduce mean", "reduce add", "reduce None", "reduce src dtype", "out of range"])
def test_scatter_refusals_match_torch(call):
    x, src = np.arange(12.0).reshape(3, 4), np.linspace(-1, 1, 8).reshape(2, 4)
    assert_same(call, [x, src, np.array([[0, 1, 2, 0], [2, 2, 1, 0]])])


@needs_torch
def test_scatter_with_reduce_warns_and_has_no_derivative_as_in_torch():
    for lib in (minigrad, torch):
        x = lib.zeros(2, 3, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:  # (PyTorch warns once per process)
            warnings.simplefilter("always")
            out = x.scatter(0, lib.tensor([[1, 0, 1]]), lib.ones(1, 3, dtype=lib.float64), reduce="add")
        assert lib is torch or any("deprecated" in str(w.message) for w in caught)
        assert out.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
        with pytest.raises(RuntimeError):
            out.sum().backward()


def test_scatter_takes_the_gradient_of_a_larger_src_where_torch_fails():
    """minigrad's scatter, as its scatter_add, gives the unused part of a src larger than the index a zero
    gradient; PyTorch's backward raises (its gradient has the index's shape)."""
    src = minigrad.ones(2, 3, dtype=minigrad.float64, requires_grad=True)
    minigrad.zeros(2, 3, dtype=minigrad.float64).scatter(0, minigrad.tensor([[1, 0]]), src).sum().backward()
    assert src.grad.tolist() == [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]


# -- index_add, index_copy, index_fill, index_reduce ----------------------------------------------
@st.composite
def index_case(draw):
    """(self values, dim, index vector, source values of self's shape with the index's length at dim)."""
    shape = draw(shapes())
    d = draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = shape[d]
    index = rng.integers(0, n, draw(st.integers(1, 5)))
    if draw(st.booleans()) and draw(st.booleans()):
        index[0] = draw(st.sampled_from([-1, n, -n - 1]))
    source_shape = list(shape)
    source_shape[d] = index.size + (1 if draw(st.integers(0, 9)) == 0 else 0)  # sometimes one too many
    return draw(values(shape, ties=True)), d, index, draw(values(tuple(source_shape), ties=True))


@needs_torch
@FEW
@given(case=index_case(), op=st.sampled_from(["index_add", "index_copy", "index_fill", "index_fill_tensor"]),
       dtype=st.sampled_from(["float64", "float32", "int64"]), index_dtype=st.sampled_from(["int64", "int64", "int32"]))
def test_index_add_copy_fill_match_torch(case, op, dtype, index_dtype):
    x, d, index, source = case
    index = index.astype(index_dtype)
    if op == "index_copy" and len(set(index.tolist())) != index.size:
        index = np.unique(index)[:1]  # (with repeats PyTorch does not say which copy wins)
        source = np.take(source, [0], axis=d)
    calls = {
        "index_add": lambda L, x, s, i: x.index_add(d, i, s, alpha=2),
        "index_copy": lambda L, x, s, i: L.index_copy(x, d, i, s),
        "index_fill": lambda L, x, s, i: x.index_fill(d, i, -1.5),
        "index_fill_tensor": lambda L, x, s, i: x.index_fill(d, i, L.tensor(0.5, dtype=x.dtype,
                                                                             requires_grad=x.is_floating_point())),
    }
    assert_same(calls[op], [x, source, index], dtype)


@needs_torch
@FEW
@given(case=index_case(), reduce=st.sampled_from(["prod", "mean", "amax", "amin", "sum"]),
       include_self=st.booleans(), dtype=st.sampled_from(["float64", "float64", "float32", "int64"]))
def test_index_reduce_matches_torch(case, reduce, include_self, dtype):
    x, d, index, source = case
    assert_same(lambda L, x, s, i: x.index_reduce(d, i, s, reduce, include_self=include_self), [x, source, index],
                dtype)


# -- index_put, put, masked_scatter, take_along_dim, where ----------------------------------------
@needs_torch
@FEW
@given(data=st.data())
def test_index_put_matches_torch(data):
    shape = data.draw(shapes())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    k = data.draw(st.integers(1, len(shape)))
    count = data.draw(st.integers(1, 4))
    indices = [rng.integers(-shape[j], shape[j] + (1 if data.draw(st.integers(0, 7)) == 0 else 0), count)
               for j in range(k)]
    accumulate = data.draw(st.booleans())
    if not accumulate:  # (repeated places: PyTorch does not say which value wins)
        keep = np.unique(np.ravel_multi_index([i % n for i, n in zip(indices, shape)], shape[:k]), return_index=True)[1]
        indices = [i[keep] for i in indices]
    value_shape = data.draw(st.sampled_from([(indices[0].size,) + shape[k:], shape[k:], (1,)]))
    v = data.draw(values(value_shape))
    dtype = data.draw(st.sampled_from(["float64", "float32", "int64"]))
    assert_same(lambda L, x, v, *i: x.index_put(tuple(i), v, accumulate), [data.draw(values(shape)), v, *indices],
                dtype)


@needs_torch
@pytest.mark.parametrize("call", [
    lambda L, x, v, i: x.index_put((i.float(),), v),
    lambda L, x, v, i: x.index_put(i, v),
    lambda L, x, v, i: x.index_put((i + 3,), v, True),
    lambda L, x, v, i: x.index_put((i, i, i), v),
    lambda L, x, v, i: x.index_put((i,), v.float()),
    lambda L, x, v, i: x.index_put((i,), v[:2]),
    lambda L, x, v, i: x.index_put((i > 0,), v[:1]),
], ids=["float index", "not a tuple", "out of range", "too many", "values dtype", "values shape", "bool index"])
def test_index_put_refusals_match_torch(call):
    assert_same(call, [np.arange(12.0).reshape(3, 4), np.ones(4), np.array([2, 0, 1])])


@needs_torch
@FEW
@given(shape=shapes(), data=st.data(), accumulate=st.booleans(), dtype=st.sampled_from(["float64", "float32"]))
def test_put_matches_torch(shape, data, accumulate, dtype):
    n = int(np.prod(shape))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    index = rng.integers(-n - (data.draw(st.integers(0, 9)) == 0), n, data.draw(st.integers(1, 5)))
    if not accumulate:
        index = index[np.unique(index % n, return_index=True)[1]]
    index = index.reshape(data.draw(st.sampled_from([(-1,), (1, -1)])))
    source = data.draw(values(index.shape if data.draw(st.integers(0, 9)) else (index.size + 1,)))
    assert_same(lambda L, x, s, i: x.put(i, s, accumulate=accumulate), [data.draw(values(shape)), source, index],
                dtype)


@needs_torch
@FEW
@given(shape=shapes(), data=st.data(), dtype=st.sampled_from(["float64", "float32", "int64"]))
def test_masked_scatter_matches_torch(shape, data, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    mask_shape = shape[data.draw(st.integers(0, len(shape))):]  # broadcasts against self
    mask = rng.random(mask_shape) < 0.5
    needed = int(np.broadcast_to(mask, shape).sum())
    source = data.draw(values((needed + data.draw(st.integers(-1 if needed else 0, 3)),)))
    assert_same(lambda L, x, s, m: x.masked_scatter(m, s), [data.draw(values(shape)), source, mask], dtype)


@needs_torch
@FEW
@given(shape=shapes(), data=st.data())
def test_take_along_dim_matches_torch(shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    if data.draw(st.booleans()):
        dim = None
        index = rng.integers(0, int(np.prod(shape)), data.draw(shapes()))
    else:
        dim = data.draw(st.integers(-len(shape), len(shape) - 1))
        index_shape = tuple(data.draw(st.sampled_from([1, n])) for n in shape)
        d = dim % len(shape)
        index_shape = index_shape[:d] + (data.draw(st.integers(1, 4)),) + index_shape[d + 1:]
        index = rng.integers(0, shape[dim], index_shape)
    index = index.astype(data.draw(st.sampled_from(["int64", "int64", "int32"])))
    assert_same(lambda L, x, i: x.take_along_dim(i, dim) if dim is not None else L.take_along_dim(x, i),
                [data.draw(values(shape)), index])


@needs_torch
@FEW
@given(shape=shapes(), data=st.data())
def test_where_method_matches_torch(shape, data):
    y = data.draw(st.sampled_from([None, 0.5]))
    condition = data.draw(values(shape)) > 0
    other = data.draw(values(shape[1:])) if y is None else y
    assert_same(lambda L, x, c: x.where(c, other if y is not None else L.tensor(other, requires_grad=True)),
                [data.draw(values(shape)), condition])
    assert_same(lambda L, x, c: x.where(c.float(), 1.0), [data.draw(values(shape)), condition])
    assert_same(lambda L, x, c: L.where(c.long(), x, 1.0), [data.draw(values(shape)), condition])


# -- diagonal_scatter, select_scatter, slice_scatter ----------------------------------------------
@needs_torch
@FEW
@given(shape=shapes(2, 3), data=st.data(), dtype=st.sampled_from(["float64", "float32"]))
def test_view_scatters_match_torch(shape, data, dtype):
    x = data.draw(values(shape))
    op = data.draw(st.sampled_from(["diagonal", "select", "slice"]))
    nd = len(shape)
    if op == "diagonal":
        offset = data.draw(st.integers(-2, 2))
        dim1, dim2 = data.draw(st.lists(st.integers(-nd, nd - 1), min_size=2, max_size=2))
        part = torch.zeros(shape).diagonal(offset, dim1, dim2).shape if dim1 % nd != dim2 % nd else (1,)
        fn = lambda L, x, s: x.diagonal_scatter(s, offset, dim1, dim2)  # noqa: E731
    elif op == "select":
        dim = data.draw(st.integers(-nd, nd - 1))
        index = data.draw(st.integers(-shape[dim] - 1, shape[dim]))
        part = shape[:dim % nd] + shape[dim % nd + 1:]
        fn = lambda L, x, s: L.select_scatter(x, s, dim, index)  # noqa: E731
    else:
        dim = data.draw(st.integers(-nd, nd - 1))
        start, end = data.draw(st.sampled_from([None, -1, 0, 1])), data.draw(st.sampled_from([None, -1, 2, 5]))
        step = data.draw(st.integers(1, 2))
        part = torch.zeros(shape).narrow(dim, 0, shape[dim])[(slice(None),) * (dim % nd) + (slice(start, end, step),)]
        part = part.shape
        fn = lambda L, x, s: x.slice_scatter(s, dim, start, end, step)  # noqa: E731
    if data.draw(st.integers(0, 9)) == 0:
        part = tuple(part) + (1,)  # the wrong shape
    src_dtype = data.draw(st.sampled_from([dtype, "float32"]))
    assert_same(lambda L, x, s: fn(L, x, s.to(getattr(L, src_dtype))), [x, data.draw(values(tuple(part)))], dtype)


# -- in place -------------------------------------------------------------------------------------
IN_PLACE = {
    "scatter_": lambda L, t, s, i: t.scatter_(1, i, s),
    "scatter_value": lambda L, t, s, i: t.scatter_(1, i, 2.0),
    "scatter_reduce_": lambda L, t, s, i: t.scatter_reduce_(1, i, s, "amax", include_self=False),
    "scatter_reduce_prod": lambda L, t, s, i: t.scatter_reduce_(1, i, s, "prod"),
    "scatter_reduce_mean": lambda L, t, s, i: t.scatter_reduce_(1, i, s, "mean"),
    "index_add_": lambda L, t, s, i: t.index_add_(1, i[0], s, alpha=-1),
    "index_copy_": lambda L, t, s, i: t.index_copy_(1, L.tensor([2, 0]), s[:, :2]),
    "index_fill_": lambda L, t, s, i: t.index_fill_(1, i[0], -2.0),
    "index_reduce_": lambda L, t, s, i: t.index_reduce_(1, i[0], s, "prod"),
    "index_put_": lambda L, t, s, i: t.index_put_((i[1],), s[0], accumulate=True),
    "put_": lambda L, t, s, i: t.put_(i[0], s[0], accumulate=True),
    "masked_scatter_": lambda L, t, s, i: t.masked_scatter_(t > 0, s),
}


def _in_place_run(lib, name):
    base = lib.tensor(np.linspace(-1, 2, 12).reshape(3, 4), requires_grad=True)
    src = lib.tensor(np.linspace(0.5, 3, 12).reshape(3, 4), requires_grad=True)
    index = lib.tensor([[1, 1, 3, 0], [2, 0, 0, 0], [3, 3, 3, 1]])
    t = base * 1
    version = t._version
    out = IN_PLACE[name](lib, t, src, index)
    assert out is t and t._version == version + 1
    node = type(t.grad_fn).__name__
    (t * lib.tensor(np.linspace(1, 2, 12).reshape(3, 4))).sum().backward()
    return t.detach().numpy(), node, base.grad.numpy(), None if src.grad is None else src.grad.numpy()


@needs_torch
@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_form_bumps_the_version_and_differentiates_as_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (mv, mn, mb, ms), (tv, tn, tb, ts) = _in_place_run(minigrad, name), _in_place_run(torch, name)
    np.testing.assert_allclose(mv, tv, rtol=1e-12)
    assert mn == tn
    np.testing.assert_allclose(mb, tb, rtol=1e-12, atol=1e-12)
    assert (ms is None) == (ts is None)
    if ms is not None:
        np.testing.assert_allclose(ms, ts, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_form_refuses_a_leaf_that_requires_grad(name):
    leaf = minigrad.zeros(3, 4, dtype=minigrad.float64, requires_grad=True)
    src = minigrad.ones(3, 4, dtype=minigrad.float64)
    with pytest.raises(RuntimeError, match="leaf"):
        IN_PLACE[name](minigrad, leaf, src, minigrad.tensor([[1, 1, 3, 0], [2, 0, 0, 0], [3, 3, 3, 1]]))


# -- gradcheck, without torch ---------------------------------------------------------------------
INDEX = minigrad.tensor([[0, 2, 2], [1, 1, 0]])
GRADCHECKS = {
    "scatter": lambda x, s: x.scatter(1, minigrad.tensor([[0, 2, 1], [1, 0, 2]]), s),  # (no repeats: one write each)
    "scatter_reduce sum": lambda x, s: x.scatter_reduce(1, INDEX, s, "sum", include_self=False),
    "scatter_reduce mean": lambda x, s: x.scatter_reduce(1, INDEX, s, "mean"),
    "scatter_reduce prod": lambda x, s: x.scatter_reduce(1, INDEX, s, "prod"),
    "scatter_reduce amax": lambda x, s: x.scatter_reduce(1, INDEX, s, "amax"),
    "index_add": lambda x, s: x.index_add(1, INDEX[0], s, alpha=0.5),
    "index_reduce mean": lambda x, s: x.index_reduce(1, INDEX[0], s, "mean", include_self=False),
    "put accumulate": lambda x, s: x.put(INDEX, s, accumulate=True),
    "masked_scatter": lambda x, s: x.masked_scatter(x > 0, s),
    "diagonal_scatter": lambda x, s: x.diagonal_scatter(s[0, :2]),
    "slice_scatter": lambda x, s: x.slice_scatter(s[:, :2], 1, 1),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck_and_gradgradcheck(name):
    rng = np.random.default_rng(len(name))
    # distinct values away from 0: no ties for amax, no zero factors for prod
    x = minigrad.tensor(rng.permutation(6).reshape(2, 3) * 0.3 + 0.4, dtype=minigrad.float64, requires_grad=True)
    s = minigrad.tensor(rng.permutation(6).reshape(2, 3) * 0.25 + 0.55, dtype=minigrad.float64, requires_grad=True)
    assert gradcheck(GRADCHECKS[name], (x, s), eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(GRADCHECKS[name], (x, s), eps=1e-6, atol=1e-5, rtol=1e-3)
