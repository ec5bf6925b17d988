"""Integer arithmetic (ops/integer.py) against torch: & | ^ ~ << >>, their bitwise_* methods and
in-place forms, gcd and lcm, on generated shapes (broadcast against each other) and every pair of
dtypes (int32, int64, bool, float32, and Python numbers), with values chosen to reach the edges:
negative numbers, zeros, and shifts by a negative amount or by the width of the type or more.

Each call must give torch's values and dtype, or raise torch's exception type.
"""
from __future__ import annotations

import operator

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

BINARY = {
    "and": operator.and_, "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
    "rshift": operator.rshift,
    "bitwise_and": lambda a, b: a.bitwise_and(b), "bitwise_or_fn": lambda a, b: _lib(a).bitwise_or(a, b),
    "bitwise_xor": lambda a, b: a.bitwise_xor(b), "bitwise_left_shift": lambda a, b: a.bitwise_left_shift(b),
    "bitwise_right_shift_fn": lambda a, b: _lib(a).bitwise_right_shift(a, b),
    "gcd": lambda a, b: a.gcd(b), "lcm_fn": lambda a, b: _lib(a).lcm(a, b),
    "iand": operator.iand, "ior": operator.ior, "ixor": operator.ixor, "ilshift": operator.ilshift,
    "irshift": operator.irshift, "bitwise_and_": lambda a, b: a.bitwise_and_(b),
    "bitwise_left_shift_": lambda a, b: a.bitwise_left_shift_(b), "gcd_": lambda a, b: a.gcd_(b),
    "lcm_": lambda a, b: _lib(a).lcm_(a, b),
}
UNARY = {"invert": operator.invert, "bitwise_not": lambda a: a.bitwise_not(), "bitwise_not_fn": lambda a: _lib(a).bitwise_not(a),
         "bitwise_not_": lambda a: a.bitwise_not_()}
DTYPES = ["int32", "int64", "bool", "float32"]


def _lib(t):
    return minigrad if isinstance(t, minigrad.Tensor) else torch


def _make(lib, operand):
    if isinstance(operand, tuple):
        values, dtype = operand
        return lib.tensor(values, dtype=getattr(lib, dtype))
    return operand


def outcome(fn, *operands):
    """The result's dtype and values (and, in place, whether it is the first operand), or the error's type."""
    try:
        out = fn(*operands)
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__
    return str(out.dtype).split(".")[-1], out.numpy().tolist(), out is operands[0]


def values(draw, shape, dtype):
    """Small integers with negatives and zeros, and shift amounts past the width of int32 and int64."""
    array = draw(hnp.arrays(np.int64, shape, elements=st.sampled_from([-70, -9, -2, -1, 0, 1, 2, 3, 7, 31, 32, 63, 64])))
    return (array != 0).tolist() if dtype == "bool" else array.tolist() if dtype != "float32" else (array / 2).tolist()


@st.composite
def operands(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    other_shape = draw(hnp.broadcastable_shapes(shape, max_dims=3))
    a_dtype, b_dtype = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES + ["number"]))
    a = (values(draw, shape, a_dtype), a_dtype)
    b = draw(st.sampled_from([3, -1, 65, True, 1.5])) if b_dtype == "number" else (values(draw, other_shape, b_dtype), b_dtype)
    return a, b


@pytest.mark.parametrize("name", list(BINARY))
@settings(max_examples=25, deadline=None, derandomize=True)
@given(pair=operands())
def test_binary_matches_torch(name, pair):
    a, b = pair
    ours = outcome(BINARY[name], *(_make(minigrad, v) for v in (a, b)))
    theirs = outcome(BINARY[name], *(_make(torch, v) for v in (a, b)))
    assert ours == theirs


@pytest.mark.parametrize("name", ["and", "or", "xor", "lshift", "rshift"])
@pytest.mark.parametrize("number", [3, True, 2.5])
def test_a_number_on_the_left_matches_torch(name, number):
    for dtype in DTYPES:
        a = ([-3, 0, 5], dtype)
        assert outcome(BINARY[name], number, _make(minigrad, a)) == outcome(BINARY[name], number, _make(torch, a))


@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_matches_torch(name, dtype):
    a = ([[-3, 0], [5, 64]], dtype)
    assert outcome(UNARY[name], _make(minigrad, a)) == outcome(UNARY[name], _make(torch, a))


def test_inplace_moves_the_version_counter_as_torch():
    versions = []
    for lib in (minigrad, torch):
        x = lib.tensor([6, -4, 9])
        view = x[1:]
        view &= 7
        view.gcd_(lib.tensor([4, 6]))
        x.bitwise_not_()
        versions.append((x._version, view._version, x.tolist()))
    assert versions[0] == versions[1]
