"""finfo, iinfo, promote_types, result_type, can_cast, get/set_num_threads and is_same_size against PyTorch.

Every minigrad dtype and every pair of them; result_type over generated pairs of tensors (0-d or
not, of each dtype) and Python numbers. Bad input must raise PyTorch's exception type.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from tests.ops.test_creation_and_devices import raised

torch = pytest.importorskip("torch")
DTYPES = ["float32", "float64", "int32", "int64", "uint8", "bool"]
FLOATS = [d for d in DTYPES if d.startswith("float")]
INTEGERS = [d for d in DTYPES if d not in FLOATS and d != "bool"]


@pytest.mark.parametrize("name", FLOATS + [None])
def test_finfo_matches_torch(name):
    ours = minigrad.finfo(getattr(minigrad, name)) if name else minigrad.finfo()
    theirs = torch.finfo(getattr(torch, name)) if name else torch.finfo()
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", INTEGERS)
def test_iinfo_matches_torch(name):
    ours, theirs = minigrad.iinfo(getattr(minigrad, name)), torch.iinfo(getattr(torch, name))
    for field in ("bits", "max", "min", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert repr(ours) == repr(theirs)


PYTHON_TYPES = {"float": float, "int": int, "bool": bool}


@pytest.mark.parametrize("a, b", list(itertools.product(DTYPES, repeat=2)) + [("float", "int32"), ("int", "bool")])
def test_promote_types_and_can_cast_match_torch(a, b):
    def dtype(lib, name):
        return PYTHON_TYPES[name] if name in PYTHON_TYPES else getattr(lib, name)

    ours = minigrad.promote_types(dtype(minigrad, a), dtype(minigrad, b))
    assert str(ours).split(".")[-1] == str(torch.promote_types(dtype(torch, a), dtype(torch, b))).split(".")[-1]
    assert minigrad.can_cast(dtype(minigrad, a), dtype(minigrad, b)) == torch.can_cast(dtype(torch, a), dtype(torch, b))


def operand(lib, kind):
    if kind in (1, 2.5, True):
        return kind
    dtype, zero_d = kind
    return lib.ones(() if zero_d else (2,), dtype=getattr(lib, dtype))


kinds = st.one_of(st.sampled_from([1, 2.5, True]), st.tuples(st.sampled_from(DTYPES), st.booleans()))


@settings(max_examples=80, deadline=None)
@given(a=kinds, b=kinds, default=st.sampled_from(["float32", "float64"]))
def test_result_type_matches_torch(a, b, default):
    outcomes = []
    for lib in (minigrad, torch):
        previous = lib.get_default_dtype()
        lib.set_default_dtype(getattr(lib, default))
        try:
            outcomes.append(str(lib.result_type(operand(lib, a), operand(lib, b))).split(".")[-1])
        except Exception as e:  # noqa: BLE001  (two numbers: the same refusal)
            outcomes.append(type(e).__name__)
        finally:
            lib.set_default_dtype(previous)
    assert outcomes[0] == outcomes[1]


def test_num_threads_round_trip():
    before = minigrad.get_num_threads()
    assert isinstance(before, int) and before >= 1
    try:
        minigrad.set_num_threads(1)
        assert minigrad.get_num_threads() == 1
    finally:
        minigrad.set_num_threads(before)
    assert minigrad.get_num_threads() == before


@pytest.mark.parametrize("shapes", [((2,), (2,)), ((2,), (2, 1)), ((), ()), ((0, 3), (0, 3)), ((1,), ())])
def test_is_same_size(shapes):
    ours = minigrad.is_same_size(minigrad.zeros(shapes[0]), minigrad.zeros(shapes[1]))
    assert ours == torch.is_same_size(torch.zeros(shapes[0]), torch.zeros(shapes[1]))
    assert minigrad.zeros(shapes[0]).is_same_size(minigrad.zeros(shapes[1])) == ours


BAD = {
    "finfo_integer": lambda L: L.finfo(L.int32),
    "finfo_bool": lambda L: L.finfo(L.bool),
    "iinfo_float": lambda L: L.iinfo(L.float32),
    "iinfo_bool": lambda L: L.iinfo(L.bool),
    "promote_types_not_a_dtype": lambda L: L.promote_types(L.float32, "float64"),
    "can_cast_not_a_dtype": lambda L: L.can_cast("float32", L.float32),
    "result_type_list": lambda L: L.result_type([1.0], L.ones(2)),
    "set_num_threads_zero": lambda L: L.set_num_threads(0),
    "is_same_size_list": lambda L: L.is_same_size(L.ones(2), [1.0, 2.0]),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_torchs_type(name):
    theirs, ours = raised(BAD[name], torch), raised(BAD[name], minigrad)
    assert theirs is not None, f"torch accepts {name}: the case is wrong"
    assert isinstance(ours, type(theirs)), f"minigrad raised {ours!r}; torch {theirs!r}"


def test_dtype_names_are_the_numpy_ones():
    assert {str(np.dtype(getattr(minigrad, d).numpy)) for d in DTYPES} == set(DTYPES)
