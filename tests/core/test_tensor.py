"""The Tensor class: construction, dtypes, factories, repr, conversions, in-place
rules, type promotion and error messages (expectations from PyTorch's rules)."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad

try:  # only used to confirm the hand-written expectations, never as the reference of minigrad itself
    import torch
except ImportError:  # pragma: no cover
    torch = None


def leaf(values, dtype=np.float64):
    return minigrad.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


# -- construction and dtype inference -----------------------------------------------------------
@pytest.mark.parametrize(
    "data,dtype",
    [
        (1.5, minigrad.float32),
        ([1.0, 2.0], minigrad.float32),
        ([1, 2.5], minigrad.float32),
        (3, minigrad.int64),
        ([[1, 2], [3, 4]], minigrad.int64),
        ([True, False], minigrad.bool),
        (True, minigrad.bool),
        (np.array([1.0, 2.0]), minigrad.float64),
        (np.array([1.0], dtype=np.float32), minigrad.float32),
        (np.array([1, 2], dtype=np.int32), minigrad.int32),
        (np.array([1, 2], dtype=np.int64), minigrad.int64),
        (np.float64(1.5), minigrad.float64),
        (np.float32(1.5), minigrad.float32),
    ],
)
def test_dtype_inference(data, dtype):
    t = minigrad.tensor(data)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(data))


def test_float16_kept_and_other_numpy_dtypes_refused():
    assert minigrad.tensor(np.array([1.0], dtype=np.float16)).dtype == minigrad.float16
    assert minigrad.from_numpy(np.array([1.0], dtype=np.float16)).dtype == minigrad.half
    with pytest.raises(TypeError):
        minigrad.tensor(np.array([1], dtype=np.int16))
    with pytest.raises(TypeError):
        minigrad.from_numpy(np.array([1.0], dtype=np.longdouble))


def test_explicit_dtype_and_copy_semantics():
    a = np.array([1.0, 2.0])
    t = minigrad.tensor(a, dtype=minigrad.float32)
    assert t.dtype == minigrad.float32
    t64 = minigrad.tensor(a)
    a[0] = 100.0
    assert t64.tolist() == [1.0, 2.0]  # tensor() copies
    shared = minigrad.from_numpy(a)
    a[1] = -5.0
    assert shared.tolist() == [100.0, -5.0]  # from_numpy shares
    assert minigrad.tensor([1, 2], dtype=minigrad.float64).dtype == minigrad.float64
    assert minigrad.tensor(minigrad.tensor([1.5])).dtype == minigrad.float32


ARRAYS = {
    "reversed": lambda: np.arange(4.0)[::-1], "reversed columns": lambda: np.arange(6.0).reshape(2, 3)[:, ::-1],
    "every other": lambda: np.arange(6.0).reshape(2, 3)[:, ::2], "transposed": lambda: np.arange(6.0).reshape(2, 3).T,
    "list": lambda: [1.0, 2.0], "numpy scalar": lambda: np.float64(1.0),
}


@pytest.mark.parametrize("make", ["from_numpy(a)", "as_tensor(a)", "as_tensor(a, dtype=lib.float32)", "tensor(a)"])
@pytest.mark.parametrize("array", sorted(ARRAYS))
def test_arrays_a_tensor_cannot_hold_are_refused_as_in_torch(array, make):
    """PyTorch has no negative strides: it refuses ``a[::-1]`` (ValueError, even where it would copy),
    and from_numpy takes only an ndarray (TypeError); other strides are fine."""
    torch = pytest.importorskip("torch")
    outcomes = []
    for lib in (minigrad, torch):
        a = ARRAYS[array]()
        try:
            outcomes.append(("ok", np.asarray(eval(f"lib.{make}").tolist())))
        except Exception as e:  # noqa: BLE001  (the type is what is compared)
            outcomes.append((type(e).__name__, None))
    assert outcomes[0][0] == outcomes[1][0], f"minigrad {outcomes[0][0]}, torch {outcomes[1][0]}"
    if outcomes[0][0] == "ok":
        np.testing.assert_array_equal(outcomes[0][1], outcomes[1][1])


def test_the_negative_stride_refusal_says_how_to_fix_it():
    with pytest.raises(ValueError, match=r"negative.*array\.copy\(\)"):
        minigrad.from_numpy(np.arange(3.0)[::-1])
    assert minigrad.from_numpy(np.arange(3.0)[::-1].copy()).tolist() == [2.0, 1.0, 0.0]


def test_dtype_aliases():
    assert minigrad.float is minigrad.float32
    assert minigrad.double is minigrad.float64
    assert minigrad.long is minigrad.int64
    assert minigrad.float32.is_floating_point and not minigrad.int64.is_floating_point
    assert repr(minigrad.float64) == "minigrad.float64"


def test_ragged_data_raises():
    with pytest.raises(ValueError):
        minigrad.tensor([[1.0, 2.0], [3.0]])


# -- factories -------------------------------------------------------------------------------------
def test_zeros_ones_full_eye():
    z = minigrad.zeros(2, 3)
    assert z.shape == (2, 3) and z.dtype == minigrad.float32
    np.testing.assert_array_equal(z.numpy(), np.zeros((2, 3)))
    assert minigrad.zeros((2, 3)).shape == (2, 3)
    o = minigrad.ones(4, dtype=minigrad.int64)
    assert o.dtype == minigrad.int64 and o.tolist() == [1, 1, 1, 1]
    f = minigrad.full((2, 2), 1.5)
    assert f.dtype == minigrad.float32 and f.tolist() == [[1.5, 1.5], [1.5, 1.5]]
    assert minigrad.full((2,), 3).dtype == minigrad.int64
    e = minigrad.eye(3)
    assert e.dtype == minigrad.float32
    np.testing.assert_array_equal(e.numpy(), np.eye(3))
    np.testing.assert_array_equal(minigrad.eye(2, 3).numpy(), np.eye(2, 3))
    assert minigrad.zeros(2, requires_grad=True).requires_grad
    assert minigrad.zeros(0, 3).shape == (0, 3)


def test_full_with_bool_is_bool():
    # PyTorch infers the dtype from the fill value: True -> torch.bool
    assert minigrad.full((2,), True).dtype == minigrad.bool


def test_arange():
    a = minigrad.arange(5)
    assert a.dtype == minigrad.int64 and a.tolist() == [0, 1, 2, 3, 4]
    assert minigrad.arange(2, 5).tolist() == [2, 3, 4]
    b = minigrad.arange(0, 1, 0.25)
    assert b.dtype == minigrad.float32 and b.tolist() == [0.0, 0.25, 0.5, 0.75]
    assert minigrad.arange(3.0).dtype == minigrad.float32
    assert minigrad.arange(5, dtype=minigrad.float64).dtype == minigrad.float64


def test_like_factories_keep_dtype_and_shape():
    x = minigrad.tensor([[1, 2, 3]], dtype=minigrad.int32)
    z, o = minigrad.zeros_like(x), minigrad.ones_like(x)
    assert z.shape == o.shape == (1, 3)
    assert z.dtype == o.dtype == minigrad.int32
    assert z.tolist() == [[0, 0, 0]] and o.tolist() == [[1, 1, 1]]
    assert minigrad.zeros_like(x, dtype=minigrad.float64).dtype == minigrad.float64


def test_random_factories():
    minigrad.manual_seed(123)
    r = minigrad.randn(10_000)
    assert r.dtype == minigrad.float32 and r.shape == (10_000,)
    assert abs(float(r.mean().item())) < 0.05
    assert abs(float(((r - r.mean()) ** 2).mean().item()) - 1.0) < 0.06
    u = minigrad.rand(3, 4, dtype=minigrad.float64)
    assert u.shape == (3, 4) and u.dtype == minigrad.float64
    assert (u >= 0).all().item() and (u < 1).all().item()
    assert minigrad.randn(2, 3, requires_grad=True).requires_grad


def test_manual_seed_reproducibility():
    minigrad.manual_seed(7)
    a, b = minigrad.randn(5), minigrad.rand(3)
    minigrad.manual_seed(7)
    c, d = minigrad.randn(5), minigrad.rand(3)
    assert a.tolist() == c.tolist() and b.tolist() == d.tolist()
    minigrad.manual_seed(8)
    assert minigrad.randn(5).tolist() != a.tolist()


# -- repr -------------------------------------------------------------------------------------------
def _repr_cases():
    cases = [
        ("tensor([1., 2., 3.])", lambda m: m.tensor([1.0, 2.0, 3.0])),
        ("tensor([1.5000, 2.2500])", lambda m: m.tensor([1.5, 2.25])),
        ("tensor([-1.5000,  0.2500])", lambda m: m.tensor([-1.5, 0.25])),
        ("tensor(3)", lambda m: m.tensor(3)),
        ("tensor(2.5000)", lambda m: m.tensor(2.5)),
        ("tensor([[1, 2],\n        [3, 4]])", lambda m: m.tensor([[1, 2], [3, 4]])),
        ("tensor([[ 1.5000, -2.0000],\n        [ 3.0000,  4.0000]])", lambda m: m.tensor([[1.5, -2.0], [3.0, 4.0]])),
        ("tensor([ True, False])", lambda m: m.tensor([True, False])),
        ("tensor([True, True])", lambda m: m.tensor([True, True])),
        ("tensor([[False],\n        [ True]])", lambda m: m.tensor([[False], [True]])),
        ("tensor([])", lambda m: m.tensor([])),
        ("tensor([1., 2.], dtype=minigrad.float64)", lambda m: m.tensor([1.0, 2.0], dtype=m.float64)),
        ("tensor([1, 2], dtype=minigrad.int32)", lambda m: m.tensor([1, 2], dtype=m.int32)),
        ("tensor([1., 2.], requires_grad=True)", lambda m: m.tensor([1.0, 2.0], requires_grad=True)),
        ("tensor([1.5000], dtype=minigrad.float64, requires_grad=True)",
         lambda m: m.tensor([1.5], dtype=m.float64, requires_grad=True)),
        ("tensor([2., 4.], grad_fn=<MulBackward0>)", lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2),
        ("tensor([1.0000e-03, 1.0000e+03])", lambda m: m.tensor([0.001, 1000.0])),
        ("tensor([1.0000e+10])", lambda m: m.tensor([1e10])),
        ("tensor([1., nan, inf])", lambda m: m.tensor([1.0, float("nan"), float("inf")])),
        ("tensor([1.0000e-05, 5.0000e-01])", lambda m: m.tensor([1e-5, 0.5])),
        ("tensor([  -inf, 2.5000])", lambda m: m.tensor([-float("inf"), 2.5])),
        ("tensor([nan])", lambda m: m.tensor([float("nan")])),
        ("tensor([ -1.,   2., 100.])", lambda m: m.tensor([-1.0, 2.0, 100.0])),
        ("tensor([], size=(2, 0))", lambda m: m.zeros(2, 0)),
        ("tensor([   0,    1,    2,  ..., 1997, 1998, 1999])", lambda m: m.arange(2000)),
    ]
    return cases


REPR_CASES = _repr_cases()


@pytest.mark.parametrize("expected,make", REPR_CASES,
                         ids=[(c.values[0] if hasattr(c, "values") else c[0]).replace("\n", "") for c in REPR_CASES])
def test_repr(expected, make):
    if torch is not None:  # the expectation is PyTorch's own output
        assert repr(make(torch)).replace("torch.", "minigrad.") == expected
    assert repr(make(minigrad)) == expected


def test_size_repr():
    assert repr(minigrad.zeros(2, 3).shape) == "minigrad.Size([2, 3])"


# -- conversion and inspection --------------------------------------------------------------------
def test_item_tolist_numpy():
    assert minigrad.tensor(2.5).item() == 2.5 and isinstance(minigrad.tensor(2.5).item(), float)
    assert minigrad.tensor([7]).item() == 7 and isinstance(minigrad.tensor([7]).item(), int)
    assert minigrad.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert minigrad.tensor(1.5).tolist() == 1.5
    t = minigrad.tensor([1.0, 2.0])
    a = t.numpy()
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    a[0] = 9.0
    assert t.tolist() == [9.0, 2.0]  # shares memory
    assert leaf([1.5]).item() == 1.5  # item() is fine on a tensor requiring grad
    assert float(minigrad.tensor(3.5)) == 3.5 and int(minigrad.tensor(3)) == 3


def test_numpy_of_requires_grad_raises():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match=r"Use tensor\.detach\(\)\.numpy\(\)"):
        x.numpy()
    np.testing.assert_array_equal(x.detach().numpy(), [1.0])


def test_shape_size_ndim_numel():
    t = minigrad.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
    assert t.size() == (2, 3, 4)
    assert t.size(1) == 3 and t.size(-1) == 4
    assert t.ndim == 3 and t.dim() == 3
    assert t.numel() == 24
    s = minigrad.tensor(5.0)
    assert s.shape == () and s.ndim == 0 and s.numel() == 1
    assert len(t) == 2
    assert minigrad.zeros(0, 3).numel() == 0


# -- requires_grad and leaves ---------------------------------------------------------------------
def test_requires_grad_on_integer_tensor_raises():
    with pytest.raises(RuntimeError, match="floating point"):
        minigrad.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError):
        minigrad.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError):
        minigrad.tensor([True]).requires_grad = True


def test_requires_grad_and_is_leaf():
    x = leaf([1.0])
    c = minigrad.tensor([2.0])
    assert x.is_leaf and x.requires_grad and x.grad_fn is None
    assert c.is_leaf and not c.requires_grad
    y = x * c
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    z = c * 2.0
    assert not z.requires_grad and z.is_leaf
    with pytest.raises(RuntimeError):
        y.requires_grad_(False)
    x.requires_grad_(False)
    assert not x.requires_grad


# -- comparisons -----------------------------------------------------------------------------------
def test_comparisons_are_bool_without_grad_fn():
    x = leaf([-1.0, 0.0, 2.0])
    for r, expected in [
        (x > 0, [False, False, True]),
        (x >= 0, [False, True, True]),
        (x < 0, [True, False, False]),
        (x <= 0, [True, True, False]),
        (x == 0, [False, True, False]),
        (x != 0, [True, False, True]),
        (x == minigrad.tensor([-1.0, 1.0, 2.0], dtype=minigrad.float64), [True, False, True]),
    ]:
        assert r.dtype == minigrad.bool
        assert r.grad_fn is None and not r.requires_grad
        assert r.tolist() == expected


def test_mask_times_tensor_is_float_and_differentiable():
    x = minigrad.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = (x > 0) * x
    assert y.dtype == minigrad.float32
    assert y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


# -- type promotion --------------------------------------------------------------------------------
def _t(values, dtype):
    return minigrad.tensor(values, dtype=dtype)


F32, F64, I32, I64, B = minigrad.float32, minigrad.float64, minigrad.int32, minigrad.int64, minigrad.bool

PROMOTION = [
    # (description, thunk, expected dtype)  -- PyTorch's rules
    ("int64 + float32", lambda: _t([1], I64) + _t([1.0], F32), F32),
    ("float32 + int64", lambda: _t([1.0], F32) + _t([1], I64), F32),
    ("int64 * 2.5", lambda: _t([1], I64) * 2.5, F32),
    ("int32 * 2.5", lambda: _t([1], I32) * 2.5, F32),
    ("2.5 * int64", lambda: 2.5 * _t([1], I64), F32),
    ("float32 + float64", lambda: _t([1.0], F32) + _t([1.0], F64), F64),
    ("bool + int64", lambda: _t([True], B) + _t([1], I64), I64),
    ("bool + 2", lambda: _t([True], B) + 2, I64),
    ("bool * 1.5", lambda: _t([True], B) * 1.5, F32),
    ("bool + bool", lambda: _t([True], B) + _t([True], B), B),
    ("int64 / int64", lambda: _t([1], I64) / _t([2], I64), F32),
    ("int32 / int32", lambda: _t([1], I32) / _t([2], I32), F32),
    ("int64 / 2", lambda: _t([1], I64) / 2, F32),
    ("int32 + int64", lambda: _t([1], I32) + _t([1], I64), I64),
    ("int32 + 5", lambda: _t([1], I32) + 5, I32),
    ("float32 * 2", lambda: _t([1.0], F32) * 2, F32),
    ("float32 * 2.5", lambda: _t([1.0], F32) * 2.5, F32),
    ("float64 * 2.5", lambda: _t([1.0], F64) * 2.5, F64),
    ("int64 + True", lambda: _t([1], I64) + True, I64),
    ("float32 - np.float64 scalar", lambda: _t([1.0], F32) - np.float64(2.0), F32),
    ("int64 ** 2.0", lambda: _t([2], I64) ** 2.0, F32),
    ("2.0 ** int64", lambda: 2.0 ** _t([2], I64), F32),
    ("int64 ** int64", lambda: _t([2], I64) ** _t([2], I64), I64),
    # zero-dim tensors don't promote a dimensioned tensor of the same category
    ("float32[2] + float64[]", lambda: _t([1.0, 2.0], F32) + _t(1.0, F64), F32),
    ("int32[2] + int64[]", lambda: _t([1, 2], I32) + _t(1, I64), I32),
    ("int64[2] + float64[]", lambda: _t([1, 2], I64) + _t(1.5, F64), F64),
    ("float64[] + float32[]", lambda: _t(1.0, F64) + _t(1.0, F32), F64),
    ("where(int64, 2.5)", lambda: minigrad.where(_t([True], B), _t([1], I64), 2.5), F32),
    ("maximum(int64, float32)", lambda: minigrad.maximum(_t([1], I64), _t([2.0], F32)), F32),
    ("cat(int64, float32)", lambda: minigrad.cat([_t([1], I64), _t([2.0], F32)]), F32),
    ("int64.sum()", lambda: _t([1, 2], I64).sum(), I64),
    ("bool.sum()", lambda: _t([True, True], B).sum(), I64),
    ("int32.sum()", lambda: _t([1, 2], I32).sum(), I64),
]


@pytest.mark.parametrize("name,thunk,expected", PROMOTION, ids=[p[0] for p in PROMOTION])
def test_type_promotion(name, thunk, expected):
    assert thunk().dtype == expected


def test_promotion_values():
    r = _t([1, 2], I64) / _t([2, 4], I64)
    assert r.tolist() == [0.5, 0.5]
    assert (_t([3], I64) * 2.5).tolist() == [7.5]


def test_reflected_ops_with_python_scalars():
    x = minigrad.tensor([1.0, 2.0, 4.0])
    np.testing.assert_allclose((2 - x).numpy(), [1.0, 0.0, -2.0])
    np.testing.assert_allclose((2 / x).numpy(), [2.0, 1.0, 0.5])
    np.testing.assert_allclose((2 ** x).numpy(), [2.0, 4.0, 16.0])
    np.testing.assert_allclose((3 * x).numpy(), [3.0, 6.0, 12.0])
    np.testing.assert_allclose((1 + x).numpy(), [2.0, 3.0, 5.0])
    np.testing.assert_allclose((-x).numpy(), [-1.0, -2.0, -4.0])


def test_reflected_ops_with_numpy_arrays():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    a = np.array([3.0, 4.0], dtype=np.float32)
    for result, expected in [
        (a * x, [3.0, 8.0]),
        (a + x, [4.0, 6.0]),
        (a - x, [2.0, 2.0]),
        (a / x, [3.0, 2.0]),
        (x * a, [3.0, 8.0]),
    ]:
        assert isinstance(result, minigrad.Tensor)
        assert result.requires_grad
        np.testing.assert_allclose(result.detach().numpy(), expected)
    m = np.eye(2, dtype=np.float32) * 2
    r = m @ x
    assert isinstance(r, minigrad.Tensor)
    np.testing.assert_allclose(r.detach().numpy(), [2.0, 4.0])
    (a * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


# -- in-place operations ---------------------------------------------------------------------------
def test_inplace_on_leaf_requiring_grad_raises():
    x = leaf([1.0, 2.0])
    for op in (lambda t: t.add_(1.0), lambda t: t.mul_(2.0), lambda t: t.zero_(),
               lambda t: t.__setitem__(0, 5.0), lambda t: t.copy_(minigrad.tensor([0.0, 0.0]))):
        with pytest.raises(RuntimeError, match="leaf Tensor"):
            op(x)
    assert x.detach().tolist() == [1.0, 2.0]


def test_inplace_on_leaf_under_no_grad_allowed():
    x = leaf([1.0, 2.0])
    v = x._version
    with minigrad.no_grad():
        x.add_(1.0)
        x -= minigrad.tensor([0.5, 0.5], dtype=minigrad.float64)
        x.mul_(2.0)
        x[0] = 10.0
    assert x.detach().tolist() == [10.0, 5.0]
    assert x._version == v + 4
    assert x.requires_grad and x.is_leaf and x.grad_fn is None


def test_inplace_on_view_in_graph_rewrites_the_base_history():
    """y's history becomes CopySlices: the view's region gets the in-place op's gradient."""
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2.0
    v = y[1:]
    v.mul_(minigrad.tensor([3.0, 5.0]))
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert y.detach().tolist() == [2.0, 12.0, 30.0]
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 6.0, 10.0]


def test_inplace_on_view_of_leaf_requiring_grad_raises():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="a view of a leaf Tensor that requires grad"):
        x[1:].mul_(2.0)


def test_inplace_on_base_of_a_view_in_graph_is_not_silently_wrong():
    """y.mul_(3) changes v = y[:1] too: v's gradient must follow it (PyTorch: 6); a stale 2 is wrong."""
    x = leaf([1.0, 2.0])
    y = x * 2.0
    v = y[:1]
    y.mul_(3.0)
    v.sum().backward()
    assert v.detach().tolist() == [6.0]
    assert x.grad.tolist() == [6.0, 0.0], "gradient of a view ignores an in-place change of its base"


def test_inplace_with_own_detached_value_is_caught():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    y.mul_(y.detach())  # the saved factor shares y's version counter
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_on_view_outside_graph_updates_base_and_shares_version():
    base = minigrad.zeros(4)
    v = base[1:3]
    version = base._version
    v.add_(1.0)
    assert base.tolist() == [0.0, 1.0, 1.0, 0.0]
    assert base._version == version + 1 == v._version
    r = base.view(2, 2)
    r[1, 1] = 5.0
    assert base.tolist() == [0.0, 1.0, 1.0, 5.0]


def test_int_tensor_add_float_raises():
    t = minigrad.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        t.add_(1.5)
    assert t.tolist() == [1, 2]
    t.add_(3)
    assert t.tolist() == [4, 5] and t.dtype == minigrad.int64


def test_inplace_keeps_dtype():
    t = minigrad.tensor([1.0, 2.0])
    t.add_(minigrad.tensor([0.5, 0.5], dtype=minigrad.float64))
    assert t.dtype == minigrad.float32 and t.tolist() == [1.5, 2.5]


def test_inplace_shape_mismatch_raises():
    t = minigrad.zeros(3)
    with pytest.raises(RuntimeError):
        t.add_(minigrad.zeros(2, 3))


def test_version_counter_increments():
    t = minigrad.zeros(3)
    ops = [lambda: t.add_(1.0), lambda: t.sub_(1.0), lambda: t.mul_(2.0), lambda: t.div_(2.0),
           lambda: t.zero_(), lambda: t.fill_(3.0), lambda: t.copy_(minigrad.ones(3)),
           lambda: t.__setitem__(0, 2.0), lambda: t.clamp_(0.0, 1.0)]
    for i, op in enumerate(ops, start=1):
        op()
        assert t._version == i
    assert t.tolist() == [1.0, 1.0, 1.0]
    u = t * 1.0
    assert u._version == 0


def test_inplace_on_non_leaf_records_history():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    out = y.add_(1.0)
    assert out is y
    assert y.grad_fn is not None and y.grad_fn.name() == "AddBackward0"
    y.mul_(y.detach().clone())  # d/dx (3x+1)*c = 3c
    y.sum().backward()
    assert x.grad.tolist() == [12.0, 21.0]


# -- errors ---------------------------------------------------------------------------------------
def _message(excinfo):
    return str(excinfo.value)


def test_broadcast_mismatch_error():
    with pytest.raises(RuntimeError) as info:
        minigrad.zeros(2, 3) + minigrad.zeros(4)
    msg = _message(info)
    assert "non-singleton dimension" in msg and "(3)" in msg and "(4)" in msg
    with pytest.raises(RuntimeError, match="non-singleton dimension"):
        minigrad.zeros(2, 3) * minigrad.zeros(2, 4)
    with pytest.raises(RuntimeError, match="non-singleton dimension"):
        minigrad.zeros(5) > minigrad.zeros(3)


def test_matmul_shape_mismatch_error():
    with pytest.raises(RuntimeError) as info:
        minigrad.zeros(2, 3) @ minigrad.zeros(4, 5)
    msg = _message(info)
    assert "cannot be multiplied" in msg and "2x3" in msg and "4x5" in msg
    with pytest.raises(RuntimeError):
        minigrad.zeros(3) @ minigrad.zeros(4)
    with pytest.raises(RuntimeError):
        minigrad.zeros(2, 2, 3) @ minigrad.zeros(2, 4, 5)
    with pytest.raises(RuntimeError):
        minigrad.zeros(2, 2, 3) @ minigrad.zeros(3, 3, 5)  # batch dims 2 vs 3


def test_matmul_dtype_mismatch_error():
    with pytest.raises(RuntimeError) as info:
        minigrad.zeros(2, 3) @ minigrad.zeros(3, 2, dtype=minigrad.float64)
    msg = _message(info)
    assert ("float32" in msg or "float" in msg) and ("float64" in msg or "double" in msg)
    assert "dtype" in msg


def test_item_on_multi_element_error():
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        minigrad.zeros(2, 3).item()


def test_view_on_non_contiguous_error():
    x = minigrad.zeros(2, 3).transpose(0, 1)
    with pytest.raises(RuntimeError, match=r"Use \.reshape"):
        x.view(6)
    assert x.reshape(6).shape == (6,)


def test_reshape_invalid_error():
    with pytest.raises(RuntimeError, match="is invalid for input of size 6"):
        minigrad.zeros(2, 3).reshape(4, 2)
    with pytest.raises(RuntimeError, match="is invalid for input of size 6"):
        minigrad.zeros(2, 3).view(-1, 4)
    with pytest.raises(RuntimeError):
        minigrad.zeros(2, 3).reshape(-1, -1)


@pytest.mark.parametrize(
    "op",
    [
        lambda t: t.sum(2),
        lambda t: t.sum(-3),
        lambda t: t.mean((0, 5)),
        lambda t: t.softmax(2),
        lambda t: t.transpose(0, 2),
        lambda t: t.unsqueeze(3),
        lambda t: t.max(2),
        lambda t: t.squeeze(2),
        lambda t: t.log_softmax(-3),
        lambda t: t.flatten(0, 2),
        lambda t: minigrad.cat([t, t], dim=2),
    ],
)
def test_dim_out_of_range_error(op):
    with pytest.raises(IndexError, match="Dimension out of range"):
        op(minigrad.zeros(2, 3))


def test_backward_on_non_scalar_error():
    y = leaf([1.0, 2.0]) * 2.0
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()


def test_backward_on_tensor_not_requiring_grad_error():
    with pytest.raises(RuntimeError, match="does not require grad"):
        minigrad.tensor(1.0).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        (minigrad.tensor([1.0]) * 2.0).sum().backward()


def test_bool_of_multi_element_error():
    with pytest.raises(RuntimeError):
        bool(minigrad.zeros(2))
    assert bool(minigrad.tensor([1.0])) is True


def test_float_index_error():
    with pytest.raises(IndexError):
        minigrad.zeros(3)[minigrad.tensor([0.0])]


DATA = {"str": "a", "None": None, "list of str": ["a"], "list with None": [1.0, None], "dict": {1: 2},
        "object": object(), "ragged": [[1, 2], [3]], "mixed": [1, 2.5], "nested mixed": [[1], [2.0]],
        "bools": [True, False], "numpy ints": [np.int64(1), np.int64(2)]}


@pytest.mark.parametrize("dtype", [None, "float32", "int64"])  # (given a dtype, PyTorch converts each element to it)
@pytest.mark.parametrize("data", sorted(DATA))
def test_tensor_of_data_that_is_not_numbers_fails_as_in_torch(data, dtype):
    torch = pytest.importorskip("torch")
    outcomes = []
    for lib in (minigrad, torch):
        try:
            made = lib.tensor(DATA[data], dtype=dtype and getattr(lib, dtype))
            outcomes.append(("ok", str(made.dtype).split(".")[-1], made.tolist()))
        except Exception as e:  # noqa: BLE001  (the type is what is compared)
            outcomes.append((type(e).__name__,))
    assert outcomes[0] == outcomes[1]


SIZES = ["2.0", "'a'", "None", "(2, 'a')", "[2.0, 3]", "np.ones(2)", "(2, -1)", "2, 3", "(2, 3)", "[]", "np.int64(2)"]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("make", ["zeros", "ones", "empty", "rand", "randn"])
def test_creation_sizes_are_checked_as_in_torch(make, size):
    torch = pytest.importorskip("torch")
    outcomes = []
    for lib in (minigrad, torch):
        try:
            outcomes.append(("ok", tuple(eval(f"lib.{make}({size})").shape)))
        except Exception as e:  # noqa: BLE001
            outcomes.append((type(e).__name__,))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("fill", ["'a'", "None", "[1.0]", "np.ones(2)", "1.5", "True", "3", "lib.tensor(2.0)"])
def test_full_fill_values_are_checked_as_in_torch(fill):
    torch = pytest.importorskip("torch")
    outcomes = []
    for lib in (minigrad, torch):
        try:
            made = eval(f"lib.full((2,), {fill})")
            outcomes.append(("ok", str(made.dtype).split(".")[-1], made.tolist()))
        except Exception as e:  # noqa: BLE001
            outcomes.append((type(e).__name__,))
    assert outcomes[0] == outcomes[1]
