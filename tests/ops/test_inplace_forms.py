"""The in-place forms (``x.floor_()``, ``x.eq_(y)``, ``x.cumsum_(0)`` ...) and PyTorch's second names,
against torch: generated shapes (the other operand broadcast to x's), on a non-leaf, a view of one,
and a leaf that requires grad.

Each in-place call must give torch's values, return x itself, move x's version counter as torch's
moves, leave x with torch's grad_fn (CopySlices on a view), pass torch's gradients back to the leaf,
and be refused on a leaf that requires grad exactly when torch refuses it (the logic ops are not
refused: PyTorch records nothing for them). The second names must be the very same functions.
"""
from __future__ import annotations

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402


def _any(x):
    return x


def _positive(x):
    return np.abs(x) + 0.5


# name -> (call(L, x, other), what x's values must be, whether the other operand is used)
FORMS = {
    "floor_": (lambda L, x, o: x.floor_(), _any, False),
    "ceil_": (lambda L, x, o: L.ceil_(x), _any, False),
    "round_": (lambda L, x, o: x.round_(), _any, False),
    "round_decimals_": (lambda L, x, o: x.round_(decimals=2), _any, False),
    "trunc_": (lambda L, x, o: x.trunc_(), _any, False),
    "fix_": (lambda L, x, o: x.fix_(), _any, False),
    "frac_": (lambda L, x, o: x.frac_(), _any, False),
    "reciprocal_": (lambda L, x, o: x.reciprocal_(), _positive, False),
    "rsqrt_": (lambda L, x, o: L.rsqrt_(x), _positive, False),
    "exp2_": (lambda L, x, o: x.exp2_(), _any, False),
    "sinc_": (lambda L, x, o: x.sinc_(), _any, False),
    "deg2rad_": (lambda L, x, o: x.deg2rad_(), _any, False),
    "rad2deg_": (lambda L, x, o: L.rad2deg_(x), _any, False),
    "clip_": (lambda L, x, o: x.clip_(-0.5, 0.75), _any, False),
    "negative_": (lambda L, x, o: x.negative_(), _any, False),
    "absolute_": (lambda L, x, o: x.absolute_(), _any, False),
    "cumsum_": (lambda L, x, o: x.cumsum_(-1), _any, False),
    "cumprod_": (lambda L, x, o: x.cumprod_(0), _any, False),
    "lgamma_": (lambda L, x, o: x.lgamma_(), _positive, False),
    "digamma_": (lambda L, x, o: x.digamma_(), _positive, False),
    "polygamma_": (lambda L, x, o: x.polygamma_(1), _positive, False),
    "mvlgamma_": (lambda L, x, o: x.mvlgamma_(2), _positive, False),
    "i0_": (lambda L, x, o: L.i0_(x), _any, False),
    "multiply_": (lambda L, x, o: x.multiply_(o), _any, True),
    "divide_": (lambda L, x, o: x.divide_(o), _any, True),
    "divide_trunc_": (lambda L, x, o: x.divide_(o, rounding_mode="trunc"), _any, True),
    "subtract_": (lambda L, x, o: x.subtract_(o, alpha=2), _any, True),
    "floor_divide_": (lambda L, x, o: x.floor_divide_(o), _any, True),
    "remainder_": (lambda L, x, o: x.remainder_(o), _any, True),
    "fmod_": (lambda L, x, o: x.fmod_(o), _any, True),
    "xlogy_": (lambda L, x, o: x.xlogy_(o), _any, True),
    "copysign_": (lambda L, x, o: x.copysign_(o), _any, True),
    "nextafter_": (lambda L, x, o: x.nextafter_(o), _any, True),
    "ldexp_": (lambda L, x, o: L.ldexp_(x, o), _any, True),
    "heaviside_": (lambda L, x, o: x.heaviside_(o), _any, True),
    "eq_": (lambda L, x, o: x.eq_(o), _any, True),
    "not_equal_": (lambda L, x, o: x.not_equal_(o), _any, True),
    "lt_number_": (lambda L, x, o: x.lt_(0.25), _any, False),
    "greater_equal_": (lambda L, x, o: x.greater_equal_(o), _any, True),
    "less_equal_": (lambda L, x, o: x.less_equal_(o), _any, True),
    "logical_and_": (lambda L, x, o: x.logical_and_(o), _any, True),
    "logical_or_": (lambda L, x, o: x.logical_or_(o), _any, True),
    "logical_xor_": (lambda L, x, o: x.logical_xor_(o), _any, True),
    "logical_not_": (lambda L, x, o: x.logical_not_(), _any, False),
}
# In-place forms PyTorch cannot differentiate (its backward raises): values, versions and nodes only.
NOT_DIFFERENTIABLE = {"floor_divide_", "heaviside_"}


def outcome(fn):
    """What a call gives, comparably: its results, or the exception type's name."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__


def _grad_fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def run(lib, name: str, x: np.ndarray, other: np.ndarray, where: str):
    """``where``: "leaf" (in place on a leaf that requires grad), "nonleaf" (on x * 1), "view" (on
    a view of x * 1, so the history goes to the base as CopySlices)."""
    call = FORMS[name][0]
    leaf = lib.tensor(x, requires_grad=True)
    o = lib.tensor(other)
    if where == "leaf":
        return outcome(lambda: (call(lib, leaf, o), leaf._version)[1])
    base = leaf * 1
    target = base if where == "nonleaf" else base[..., :]
    before = target._version
    returned = outcome(lambda: call(lib, target, o))  # (an other that broadcasts past x: refused)
    if isinstance(returned, str):
        return returned
    result = (returned is target, target._version - before, _grad_fn_name(target), _grad_fn_name(base),
              target.detach().numpy().copy())
    if name in NOT_DIFFERENTIABLE or not base.requires_grad:
        return result
    weights = lib.tensor(np.linspace(-1.0, 2.0, base.numel()).reshape(base.shape))
    grad = outcome(lambda: lib.autograd.grad((base * weights).sum(), leaf)[0].numpy().copy())
    return result + (grad,)


def _same(ours, theirs) -> None:
    if isinstance(theirs, str) or isinstance(ours, str):
        assert ours == theirs
        return
    if not isinstance(theirs, tuple):
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    for m, t in zip(ours, theirs):
        if isinstance(t, np.ndarray):
            assert isinstance(m, np.ndarray) and m.dtype == t.dtype and m.shape == t.shape
            np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-12)
        else:
            assert m == t


shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)


@pytest.mark.parametrize("where", ["nonleaf", "view", "leaf"])
@pytest.mark.parametrize("name", list(FORMS))
@settings(max_examples=3, deadline=None, derandomize=True)
@given(shape=shapes, data=st.data())
def test_inplace_form_matches_torch(name, where, shape, data):
    _, domain, binary = FORMS[name]
    other_shape = data.draw(hnp.broadcastable_shapes(shape, max_dims=len(shape)), label="other") if binary else ()
    rng = np.random.default_rng(len(shape) * 7 + sum(shape))
    x = domain(np.round(rng.uniform(-3, 3, shape), 1)).astype(np.float64)
    other = np.round(rng.uniform(-3, 3, other_shape), 1) if binary else np.zeros(())
    if name == "ldexp_":
        other = np.round(other)  # (whole exponents: 2^e exact)
    if name in ("divide_trunc_", "floor_divide_", "remainder_", "fmod_", "divide_"):
        other = np.where(other == 0, 0.7, other)
    ours = run(minigrad, name, x, other, where)
    theirs = run(torch, name, x, other, where)
    _same(ours, theirs)


# -- the same function under two names -------------------------------------------------------------
SECOND_NAMES = [("multiply", "mul"), ("multiply_", "mul_"), ("subtract", "sub"), ("subtract_", "sub_"),
                ("negative", "neg"), ("negative_", "neg_"), ("absolute", "abs"), ("absolute_", "abs_"),
                ("greater", "gt"), ("greater_", "gt_"), ("greater_equal", "ge"), ("greater_equal_", "ge_"),
                ("less", "lt"), ("less_", "lt_"), ("less_equal", "le"), ("less_equal_", "le_"),
                ("not_equal", "ne"), ("not_equal_", "ne_"), ("divide", "div"), ("divide_", "div_"),
                ("fix", "trunc"), ("fix_", "trunc_"), ("clip_", "clamp_"), ("positive", "__pos__")]


@pytest.mark.parametrize("second, first", SECOND_NAMES)
def test_a_second_name_is_the_same_method(second, first):
    assert getattr(minigrad.Tensor, second) is getattr(minigrad.Tensor, first)


def test_positive_is_the_tensor_itself_and_refuses_bools_as_torch():
    x = minigrad.tensor([1.0, -2.0], requires_grad=True)
    assert x.positive() is x and +x is x and minigrad.positive(x) is x
    for lib in (minigrad, torch):
        with pytest.raises(RuntimeError, match="bool"):
            +lib.tensor([True])


@pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])
def test_the_complex_api_on_a_real_tensor(lib):
    x = lib.tensor([1.0, -2.0, 0.0])
    assert x.real is x and lib.real(x) is x and x.resolve_conj() is x and lib.resolve_neg(x) is x
    assert not (x.is_complex() or lib.is_complex(x) or x.is_conj() or lib.is_neg(x))
    assert x.isreal().tolist() == [True, True, True] and x.angle().tolist() == [0.0, np.float32(np.pi), 0.0]
    assert x.is_signed() and not lib.tensor([True]).is_signed() and lib.tensor([2]).is_nonzero()
    with pytest.raises(RuntimeError, match="imag"):
        x.imag  # noqa: B018


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("other", [2.5, 3, "tensor"])
def test_arithmetic_without_recording_matches_recording_and_writes_in_place(name, other):
    """apply's shortcut when nothing records (an op's own ``_unrecorded``) gives the recorded op's
    values bit for bit, and is not inherited: the in-place forms still write into self under no_grad."""
    x = minigrad.tensor([[1.5, -2.25, 0.1], [7.0, 0.3, -4.0]], requires_grad=True)
    y = minigrad.tensor([0.7, -1.3, 2.0]) if other == "tensor" else other
    recorded = getattr(x, name)(y)
    with minigrad.no_grad():
        plain = getattr(x, name)(y)
        target = x.detach().clone()
        memory = target._data
        getattr(target, name + "_")(y)
    assert recorded.grad_fn is not None and plain.grad_fn is None
    assert np.array_equal(plain.numpy(), recorded.detach().numpy())
    assert target._data is memory and np.array_equal(memory, plain.numpy())
