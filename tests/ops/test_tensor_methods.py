"""More Tensor methods against torch 2.13: the diagonal (diag_embed, diagflat, fill_diagonal_), copies
of pieces (narrow_copy, unsafe_split/chunk/split_with_sizes, msort), renorm_, hardshrink and prelu as
methods, what kind of tensor this is (layout, is_cpu, itemsize, dim_order ...), the conversions to
dtypes minigrad lacks, and the legacy constructor ``new``.

Hypothesis draws shapes, offsets, dims and dtypes: values, dtypes, exception types and the
gradients by backward must be torch's; gradcheck and gradgradcheck check the derivatives without
torch; the in-place forms bump the version, refuse a leaf and pass the gradient through a non-leaf.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _outcome(lib, fn, data: np.ndarray, grad: bool = True):
    """(values and dtype of each result, and the input's gradient), or the exception type."""
    x = lib.tensor(data, requires_grad=grad and data.dtype == np.float64)
    try:
        out = fn(x, lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    outs = out if isinstance(out, tuple) else (out,)
    values = [(str(o.dtype).split(".")[1], o.detach().numpy().copy()) for o in outs]
    gradient = None
    if x.requires_grad and any(o.requires_grad for o in outs):
        total = sum((o * lib.arange(o.numel(), dtype=lib.float64).reshape(o.shape)).sum() for o in outs)
        total.backward()
        gradient = x.grad.numpy()
    return values, gradient


def _same(fn, data: np.ndarray, grad: bool = True) -> None:
    mine, theirs = _outcome(minigrad, fn, data, grad), _outcome(torch, fn, data, grad)
    if isinstance(theirs, type):
        assert mine is theirs, f"minigrad: {mine}, torch raised {theirs}"
        return
    assert not isinstance(mine, type), f"minigrad raised {mine}, torch: {theirs}"
    assert len(mine[0]) == len(theirs[0])
    for (dtype, value), (their_dtype, their_value) in zip(mine[0], theirs[0]):
        assert dtype == their_dtype
        np.testing.assert_allclose(value, their_value, rtol=1e-6, atol=1e-12)
    assert (mine[1] is None) == (theirs[1] is None)
    if mine[1] is not None:
        np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-10, atol=1e-12)


def _array(draw, max_dims: int = 3, dtypes=("float64", "float32", "int64", "bool")) -> np.ndarray:
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=max_dims)))
    dtype = draw(st.sampled_from(dtypes))
    values = np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal(shape) * 3
    return (values > 0) if dtype == "bool" else values.astype(dtype)


DIMS = st.integers(-4, 3)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_diag_embed_and_diagflat_match_torch(data):
    x = _array(data.draw)
    offset, dim1, dim2 = data.draw(st.integers(-3, 3)), data.draw(DIMS), data.draw(DIMS)
    if data.draw(st.booleans()):
        _same(lambda t, lib: lib.diag_embed(t, offset, dim1, dim2), x)
    else:
        _same(lambda t, lib: t.diagflat(offset), x)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_fill_diagonal_matches_torch(data):
    n = data.draw(st.integers(0, 4))
    shape = data.draw(st.sampled_from([(n, data.draw(st.integers(0, 7))), (data.draw(st.integers(0, 9)), n),
                                       (n, n, n), (n,), (2, 3, 2)]))
    x = np.random.default_rng(n).standard_normal(shape)
    transposed, wrap = data.draw(st.booleans()), data.draw(st.booleans())
    value = data.draw(st.sampled_from([2.5, -1, True, 0]))
    dtype = data.draw(st.sampled_from(["float64", "int64"]))

    def fill(t, lib):
        t = t.to(getattr(lib, dtype)) * 1  # (a non-leaf, written in place)
        t = t.mT if transposed and t.ndim == 2 else t
        version = t._version
        out = t.fill_diagonal_(value, wrap=wrap)
        assert out is t and t._version > version
        return out

    _same(fill, x)


def test_fill_diagonal_refuses_a_leaf_and_writes_through_a_view():
    for lib in (minigrad, torch):
        with pytest.raises(RuntimeError):
            lib.ones(2, 2, requires_grad=True).fill_diagonal_(0)
    results = []
    for lib in (minigrad, torch):
        leaf = lib.ones(4, 3, dtype=lib.float64, requires_grad=True)
        y = leaf * 2
        y[1:].fill_diagonal_(0.5)
        assert y.grad_fn.name().endswith("CopySlices")
        (y * lib.arange(12, dtype=lib.float64).reshape(4, 3)).sum().backward()
        results.append((y.detach().numpy(), leaf.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_array_equal(mine, theirs)


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_pieces_msort_and_narrow_copy_match_torch(data):
    x = _array(data.draw)
    dim, size, length = data.draw(DIMS), data.draw(st.integers(-1, 4)), data.draw(st.integers(-1, 3))
    calls = {
        "unsafe_split": lambda t, lib: t.unsafe_split(size, dim),
        "unsafe_chunk": lambda t, lib: lib.unsafe_chunk(t, size, dim),
        "unsafe_split_with_sizes": lambda t, lib: t.unsafe_split_with_sizes([size, 1], dim),
        "msort": lambda t, lib: lib.msort(t),
        "narrow_copy": lambda t, lib: t.narrow_copy(dim, size, length),
    }
    _same(calls[data.draw(st.sampled_from(sorted(calls)))], x)


def test_unsafe_pieces_share_memory_but_are_not_views_and_node_names():
    for lib in (minigrad, torch):
        x = lib.arange(6.0, requires_grad=True)
        pieces = x.unsafe_split(4)
        assert [p._base for p in pieces] == [None, None]
        assert pieces[0].grad_fn.name() == "UnsafeSplitBackward0"
        assert x.unsafe_split_with_sizes([1, 5])[0].grad_fn.name() == "UnsafeSplitWithSizesBackward0"
        assert x.narrow_copy(0, 1, 2).grad_fn.name() == "NarrowCopyBackward0"
        assert lib.diag_embed(x).grad_fn.name() == "DiagEmbedBackward0"
        assert lib.msort(x).grad_fn.name() == "SortBackward0"
        y = lib.arange(4.0)
        y.unsafe_chunk(2)[1].add_(10)  # writes into y, which does not know (hence "unsafe")
        assert y.tolist() == [0.0, 1.0, 12.0, 13.0] and y._version == 0


CALLS = {
    "diag_embed": (lambda x: minigrad.diag_embed(x, 1, 0, 2), (2, 3)),
    "diagflat": (lambda x: x.diagflat(-1), (2, 2)),
    "narrow_copy": (lambda x: x.narrow_copy(1, 1, 2) ** 2, (2, 3)),
    "unsafe_split": (lambda x: x.unsafe_split(2, 1)[1] ** 2, (2, 3)),
    "msort": (lambda x: minigrad.msort(x) ** 2, (3, 2)),
    "renorm_": (lambda x: (x * 1).renorm_(2, 0, 0.8), (3, 2)),
    "fill_diagonal_": (lambda x: (x * x).fill_diagonal_(1.5, wrap=True), (5, 2)),
    "hardshrink": (lambda x: (x * x).hardshrink(0.3), (2, 3)),
    "prelu": (lambda x: x.prelu(minigrad.tensor([0.25, -0.5, 2.0], dtype=minigrad.float64)) ** 2, (2, 3)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_gradcheck_and_gradgradcheck(name):
    fn, shape = CALLS[name]
    x = minigrad.tensor(np.random.default_rng(1).uniform(0.4, 1.5, shape) * [1, -1][len(name) % 2],
                        requires_grad=True)
    assert gradcheck(fn, (x,), eps=1e-6, atol=1e-5, rtol=1e-4)
    assert gradgradcheck(fn, (x,), eps=1e-6, atol=1e-5, rtol=1e-4)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_renorm_inplace_matches_torch(data):
    x = _array(data.draw, dtypes=("float64", "float32", "int64"))
    p, dim = data.draw(st.sampled_from([1, 2, 3.5, 0])), data.draw(DIMS)
    maxnorm = data.draw(st.sampled_from([0.5, 2.0]))

    def renorm_(t, lib):
        t = t * 1
        out = t.renorm_(p, dim, maxnorm)
        assert out is t
        return out

    _same(renorm_, x)


def test_renorm_inplace_version_and_leaf():
    for lib in (minigrad, torch):
        with pytest.raises(RuntimeError):
            lib.ones(2, 2, requires_grad=True).renorm_(2, 0, 1.0)
        x = lib.ones(2, 2)
        x.renorm_(2, 0, 1.0)
        assert x._version == 1


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_hardshrink_and_prelu_methods_match_torch(data):
    x = _array(data.draw, dtypes=("float64", "float32", "int64"))
    lambd = data.draw(st.sampled_from([0.5, 0.0, 2.0]))
    if data.draw(st.booleans()):
        _same(lambda t, lib: t.hardshrink(lambd) if lambd != 0.5 else lib.hardshrink(t), x)
    else:
        count = data.draw(st.sampled_from([1, x.shape[1] if x.ndim > 1 else 1, 2]))

        _same(lambda t, lib: lib.prelu(t, lib.linspace(-1, 2, count).to(t.dtype)), x)
    assert minigrad.tensor([1.0, -2.0], requires_grad=True).hardshrink().grad_fn is not None


# -- what kind of tensor ---------------------------------------------------------------------------------
PROPERTIES = ["is_cpu", "is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_mkldnn", "is_nested", "is_xpu",
              "is_mps", "is_ipu", "is_xla", "is_vulkan", "is_maia", "is_mtia", "itemsize"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_properties_and_questions_answer_as_torch(dtype):
    mine = minigrad.ones(2, 3, dtype=getattr(minigrad, dtype))
    theirs = torch.ones(2, 3, dtype=getattr(torch, dtype))
    for name in PROPERTIES:
        assert getattr(mine, name) == getattr(theirs, name), name
    for name in ("get_device", "is_inference", "is_pinned", "is_shared"):
        assert getattr(mine, name)() == getattr(theirs, name)(), name
    assert minigrad.get_device(mine) == torch.get_device(theirs) == -1
    assert minigrad.is_inference(mine) is torch.is_inference(theirs) is False
    with minigrad.inference_mode(), torch.inference_mode():  # both make inference tensors (issue 27)
        assert minigrad.ones(1).is_inference() is torch.ones(1).is_inference() is True


def test_layout_is_the_strided_singleton():
    x = minigrad.ones(2)
    assert x.layout is minigrad.strided and isinstance(minigrad.strided, minigrad.layout)
    assert repr(x.layout) == "minigrad.strided" and repr(torch.ones(2).layout) == "torch.strided"
    assert pickle.loads(pickle.dumps(minigrad.strided)) is minigrad.strided


def test_pin_memory_and_share_memory_return_the_tensor():
    x = minigrad.ones(2)
    assert x.pin_memory() is x and x.share_memory_() is x and x.is_pinned() is False


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_dim_order_matches_torch(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 3), max_size=4)))
    perm = data.draw(st.permutations(range(len(shape))))
    step = data.draw(st.sampled_from([1, 2]))
    expand = data.draw(st.booleans())
    check = data.draw(st.booleans())

    def order(t, lib):
        t = t.permute(*perm) if t.ndim else t
        if t.ndim and step == 2:
            t = t[..., ::2]
        if expand and t.ndim:
            t = t[..., :1].expand(*t.shape[:-1], 2)
        return lib.tensor(t.dim_order(ambiguity_check=check))

    _same(order, np.random.default_rng(0).standard_normal(shape), grad=False)


def test_byte_is_uint8_as_torch():
    values = [0.0, 1.9, 255.0, 7.5]
    got, want = minigrad.tensor(values).byte(), torch.tensor(values).byte()
    assert str(got.dtype) == "minigrad.uint8" and got.tolist() == want.tolist()
    assert minigrad.tensor([3, 250]).byte().tolist() == torch.tensor([3, 250]).byte().tolist()


@pytest.mark.parametrize("name", ["char", "short", "bfloat16", "chalf", "cfloat", "cdouble"])
def test_conversions_to_dtypes_minigrad_lacks_say_what_to_use(name):
    assert getattr(torch.ones(2), name)().shape == (2,)  # (torch has them)
    with pytest.raises(TypeError, match="minigrad has no .* dtype.*: .*use|minigrad has no complex"):
        getattr(minigrad.ones(2), name)()
    with pytest.raises(TypeError):  # as Tensor.to does for a NumPy dtype minigrad lacks
        minigrad.ones(2).to(np.int16)


@pytest.mark.parametrize("args", [(), (2, 3), ((2, 3),), ([1.7, 2],), ("size",), (2.5,), ("same",), ("long",),
                                  (np.int64(2),)])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_new_as_torchs_legacy_constructor(args, dtype):
    results = []
    for lib in (minigrad, torch):
        x = lib.ones(2, dtype=getattr(lib, dtype))
        named = {"size": lib.ones(2, 3).shape, "same": x * 3, "long": lib.ones(2, dtype=lib.int64) * 3}
        built = [named.get(a, a) if isinstance(a, str) else a for a in args]
        try:
            out = x.new(*built)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            results.append(type(e))
            continue
        assert not out.requires_grad
        values = out.numpy() if args and isinstance(args[0], (list, str)) and args[0] != "size" else None
        results.append((str(out.dtype).split(".")[1], tuple(out.shape), None if values is None else values.tolist()))
    assert results[0] == results[1]
