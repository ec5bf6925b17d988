"""Elementwise math PyTorch has beyond the basics: inverse trigonometry (ops/inverse_trig.py).

Each op runs through the checks of tests/test_ops_extra.py: gradcheck and gradgradcheck in
float64; values, gradients, dtypes, shapes and node names against PyTorch in float64 and
float32; a second backward and an in-place change before backward failing exactly where
PyTorch's do. Then, generated rather than picked: every op on a grid of special values
(±0, ±1, ±inf, NaN, and points out of each domain), every input dtype, and bad input
against PyTorch's exception type.
"""
from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck
from tests.test_ops_extra import (
    backward_twice, change_then_backward, needs_torch, outputs, raised, run, tolerance, torch,
)

INF, NAN = float("inf"), float("nan")


def uniform(low, high):
    return lambda rng, *shape: rng.uniform(low, high, shape)


normal = lambda rng, *shape: rng.standard_normal(shape)  # noqa: E731
inside = uniform(-0.9, 0.9)  # asin, acos, atanh: away from the poles at ±1
above_one = uniform(1.2, 3.0)  # acosh

# Each case: (fn(L, *inputs), input makers with shapes). fn returns a tensor or a tuple.
CASES = {
    "asin": (lambda L, x: x.asin(), [(inside, (2, 3))]),
    "arcsin_fn": (lambda L, x: L.arcsin(x), [(inside, (4,))]),
    "acos": (lambda L, x: L.acos(x), [(inside, (2, 3))]),
    "arccos": (lambda L, x: x.arccos(), [(inside, ())]),
    "atan": (lambda L, x: x.atan(), [(normal, (2, 3))]),
    "arctan_fn": (lambda L, x: L.arctan(x), [(normal, (3,))]),
    "asinh": (lambda L, x: x.asinh(), [(normal, (2, 3))]),
    "arcsinh_fn": (lambda L, x: L.arcsinh(x), [(normal, (3,))]),
    "acosh": (lambda L, x: L.acosh(x), [(above_one, (2, 3))]),
    "arccosh": (lambda L, x: x.arccosh(), [(above_one, (3,))]),
    "atanh": (lambda L, x: x.atanh(), [(inside, (2, 3))]),
    "arctanh_fn": (lambda L, x: L.arctanh(x), [(inside, (3,))]),
    "asin_empty": (lambda L, x: x.asin(), [(inside, (0, 3))]),
    "atan2": (lambda L, y, x: y.atan2(x), [(normal, (2, 3)), (normal, (2, 3))]),
    "atan2_fn": (lambda L, y, x: L.atan2(y, x), [(normal, (2, 3)), (normal, (3,))]),
    "atan2_broadcast_both": (lambda L, y, x: L.arctan2(y, x), [(normal, (2, 1)), (normal, (1, 3))]),
    "arctan2_0d": (lambda L, y, x: y.arctan2(x), [(normal, ()), (normal, (2,))]),
    # in place, on a non-leaf
    "asin_": (lambda L, x: (x * 1).asin_(), [(inside, (2, 3))]),
    "arccos_": (lambda L, x: L.arccos_(x * 1), [(inside, (2, 3))]),
    "atan_": (lambda L, x: (x * 1).atan_(), [(normal, (3,))]),
    "asinh_": (lambda L, x: (x * 1).asinh_(), [(normal, (3,))]),
    "acosh_": (lambda L, x: (x * 1).acosh_(), [(above_one, (3,))]),
    "arctanh_": (lambda L, x: (x * 1).arctanh_(), [(inside, (3,))]),
    "atan2_": (lambda L, y, x: (y * 1).atan2_(x), [(normal, (2, 3)), (normal, (3,))]),
    "arctan2_": (lambda L, y, x: (y * 1).arctan2_(x), [(normal, (2, 3)), (normal, (2, 3))]),
}


# PyTorch 2.13 has no derivative for these in-place forms ("the derivative for 'inplace version of
# asinh' is not implemented"); minigrad gives the out-of-place one's, which is what torch is run on.
TORCH_HAS_NO_DERIVATIVE = {"asinh_": lambda L, x: L.asinh(x * 1), "acosh_": lambda L, x: (x * 1).acosh(),
                           "arctanh_": lambda L, x: (x * 1).arctanh()}


def torch_fn(name, fn):
    return TORCH_HAS_NO_DERIVATIVE.get(name, fn)


def make_inputs(name):
    """The case's function and inputs; the same inputs whatever order the tests run in."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    fn, makers = CASES[name]
    return fn, [make(rng, *shape) for make, shape in makers]


# -- finite differences, once and twice (float64) ----------------------------------------------------
@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(name):
    fn, arrays = make_inputs(name)
    inputs = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(lambda *xs: fn(minigrad, *xs), inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", list(CASES))
def test_gradgradcheck(name):
    fn, arrays = make_inputs(name)
    inputs = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    float_outputs = lambda *xs: tuple(o for o in outputs(fn(minigrad, *xs)) if o.is_floating_point())  # noqa: E731
    assert gradgradcheck(float_outputs, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


# -- the same inputs through PyTorch ------------------------------------------------------------------
def assert_close(ours, theirs, tol):
    for i, (m, t) in enumerate(zip(ours, theirs)):
        assert m.shape == t.shape, f"{i}: shape {m.shape}, torch {t.shape}"
        scale = max(1.0, float(np.abs(t[np.isfinite(t)]).max())) if np.isfinite(t).any() else 1.0
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol * scale, err_msg=f"output or gradient {i}")


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name, dtype):
    fn, arrays = make_inputs(name)
    mv, mg, md, mn, _ = run(minigrad, fn, arrays, dtype=dtype)
    tv, tg, td, tn, _ = run(torch, torch_fn(name, fn), arrays, dtype=dtype)
    assert (md, mn) == (td, tn), f"dtypes and node names: minigrad {md} {mn}, torch {td} {tn}"
    assert [g.dtype for g in mg] == [g.dtype for g in tg] and len(mv) == len(tv) and len(mg) == len(tg)
    assert_close(mv + mg, tv + tg, tolerance(arrays, dtype))


@needs_torch
@pytest.mark.parametrize("name", list(CASES))
def test_second_backward_matches_torch(name):
    fn, arrays = make_inputs(name)
    assert backward_twice(minigrad, fn, arrays) == backward_twice(torch, torch_fn(name, fn), arrays)


@needs_torch
@pytest.mark.parametrize("change", ["input", "output"])
@pytest.mark.parametrize("name", [n for n in CASES if not n.endswith("_")])
def test_inplace_change_before_backward_matches_torch(name, change):
    fn, arrays = make_inputs(name)
    assert change_then_backward(minigrad, fn, arrays, change) == change_then_backward(torch, fn, arrays, change)


# -- special values, generated: every op on every point of a grid (pairs of points for two inputs) -------
SPECIAL = [-INF, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, INF, NAN]
UNARY = {
    "asin": lambda L, x: x.asin(), "acos": lambda L, x: x.acos(), "atan": lambda L, x: x.atan(),
    "asinh": lambda L, x: x.asinh(), "acosh": lambda L, x: x.acosh(), "atanh": lambda L, x: x.atanh(),
}
BINARY = {
    "atan2": lambda L, a, b: L.atan2(a, b),
}


def special_inputs(name):
    if name in UNARY:
        return UNARY[name], [np.array(SPECIAL)]
    a, b = zip(*itertools.product(SPECIAL, SPECIAL))
    return BINARY[name], [np.array(a), np.array(b)]


def _signbits(values):
    return [np.signbit(v[v == 0]) for v in values]


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(UNARY) + list(BINARY))
def test_special_values_match_torch(name, dtype):
    """Values and gradients, NaN where PyTorch's is, and the sign of a zero."""
    fn, arrays = special_inputs(name)
    mv, mg, md, mn, _ = run(minigrad, fn, arrays, dtype=dtype)
    tv, tg, td, tn, _ = run(torch, fn, arrays, dtype=dtype)
    assert (md, mn) == (td, tn)
    tol = 4 * np.finfo(dtype).eps
    for m, t in zip(mv + mg, tv + tg):
        np.testing.assert_allclose(m, t, rtol=tol, atol=0)
    for m, t in zip(_signbits(mv), _signbits(tv)):
        np.testing.assert_array_equal(m, t, err_msg="the sign of a zero")


# -- dtypes, generated: every input dtype (and Python numbers where the op takes them) -----------------
DTYPES = ["float32", "float64", "int32", "int64", "bool"]


def outcome(fn):
    """The result's dtype name and values, or the exception type's name."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__, None
    return str(out.dtype).split(".")[-1], out.detach().numpy()


def _operand(L, dtype, shape):
    return L.tensor(np.resize(np.array([0.25, 1.0, 0.0]), shape), dtype=getattr(L, dtype))


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_result_dtype_matches_torch(name, dtype):
    ours, theirs = (outcome(lambda: UNARY[name](L, _operand(L, dtype, (3,)))) for L in (minigrad, torch))
    assert ours[0] == theirs[0]
    if theirs[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


@needs_torch
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_result_dtype_matches_torch(name):
    """Every pair of dtypes, as dimensioned or 0-d tensors, and Python numbers: torch's dtype or error."""
    operands = [(d, s) for d in DTYPES for s in [(3,), ()]] + [2, 0.5, True]
    wrong = []
    for a, b in itertools.product(operands, repeat=2):
        results = []
        for L in (minigrad, torch):
            x, y = (_operand(L, *v) if isinstance(v, tuple) else v for v in (a, b))
            results.append(outcome(lambda: BINARY[name](L, x, y)))
        if results[0][0] != results[1][0]:
            wrong.append(f"{a} with {b}: {results[0][0]}, torch {results[1][0]}")
        elif results[1][1] is not None:
            np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
    assert not wrong, f"{name}: " + "; ".join(wrong)


# -- bad input: PyTorch's exception type ------------------------------------------------------------
def z(L, *shape, dtype=None):
    return L.zeros(*shape, dtype=dtype or L.float32)


BAD = {
    "atan2_shapes": lambda L: z(L, 2).atan2(z(L, 3)),
    "atan2_number": lambda L: z(L, 2).atan2(2.0),
    "atan2_fn_number": lambda L: L.atan2(z(L, 2), 2.0),
    "atan2_list": lambda L: z(L, 2).atan2([1.0, 2.0]),
    "atan2_ndarray": lambda L: L.arctan2(z(L, 2), np.ones(2)),
    "atan2_inplace_broadcast": lambda L: z(L, 3).atan2_(z(L, 2, 3)),
    "atan2_inplace_int": lambda L: L.tensor([1, 2]).atan2_(z(L, 2)),
    "asin_inplace_int": lambda L: L.tensor([1, 2]).asin_(),
    "acosh_inplace_leaf": lambda L: L.ones(2, requires_grad=True).acosh_(),
}


@needs_torch
@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_torchs_type(name):
    theirs, ours = raised(BAD[name], torch), raised(BAD[name], minigrad)
    assert theirs is not None, f"torch accepts {name}: the case is wrong"
    assert isinstance(ours, type(theirs)), f"minigrad raised {type(ours).__name__}: {ours}; torch {type(theirs).__name__}: {theirs}"
    assert str(ours), "an error must say what went wrong"


def test_aliases_are_the_same_function():
    for short, long in [("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"), ("asinh", "arcsinh"),
                        ("acosh", "arccosh"), ("atanh", "arctanh"), ("atan2", "arctan2"), ("asin_", "arcsin_")]:
        assert getattr(minigrad.Tensor, short) is getattr(minigrad.Tensor, long)
