"""Programs the differential tester found where minigrad and torch differed, shrunk and kept.

Each test runs one program (the IR of ``tests/differential/``) on both libraries
through the same interpreter as ``test_differential.py`` and requires identical
traces: values, ``.grad``, hook calls and exception types.
"""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from tests.differential.interpreter import check  # noqa: E402


def leaf(shape=(), requires_grad=True, seed=0, kind="normal") -> tuple:
    return ("leaf", shape, requires_grad, seed, kind)


def test_backward_with_empty_inputs_raises():
    check([leaf(), ("backward", 0, 0, None, False, [])])


def test_negative_slice_step_raises_value_error():
    check([leaf((3,), False), ("index", 0, (slice(None, None, -1),))])


def test_negative_slice_step_in_setitem_raises_value_error():
    check([leaf((3,), False), ("setitem", 0, (slice(0, None, -1),), None, 2.0, False)])


def test_empty_index_of_a_0d_tensor_is_a_view():
    check([leaf((), False), ("index", 0, ()), ("inplace", "mul_", 1, None, 2.0, False)])


def test_int_index_of_a_1d_tensor_is_a_view():
    check([leaf((3,), False), ("index", 0, (0,)), ("inplace", "mul_", 1, None, 2.0, False)])


def test_in_place_through_an_int_index_reaches_the_gradient():
    check([leaf((3,)), ("unary", "scale", 0), ("index", 1, (0,)), ("inplace", "mul_", 2, None, 2.0, False),
           ("backward", 1, 0, None, False, None)])


def test_function_may_return_a_python_number():
    check([leaf(), ("func", "NonTensorOut", (0,), ()), ("backward", 1, 0, None, False, None)])


def test_grad_taken_before_a_create_graph_backward_keeps_its_value():
    check([leaf(), ("unary", "scale", 0), ("backward", 1, 0, True, False, None), ("take_grad", 0),
           ("backward", 1, 0, True, True, None)])


def test_in_place_on_a_view_of_a_graph_tensor():
    check([leaf((2, 3)), ("unary", "scale", 0), ("index", 1, (slice(None), 1)),
           ("inplace", "mul_", 2, None, 2.0, False), ("backward", 1, 0, None, False, None)])


def test_views_require_grad_once_their_base_gets_history_through_setitem():
    check([leaf((2,), False), leaf((2,), True, 1), ("index", 0, (Ellipsis,)), ("setitem", 0, (Ellipsis,), 1, None, False)])


def test_hooks_stay_with_the_version_they_were_registered_on():
    check([leaf((1,)), ("clone", 0), ("hook", 1, 2.0), ("inplace", "mul_", 1, None, 2.0, False), ("hook", 1, 2.0),
           ("backward", 1, 0, None, False, None)])


def test_retain_grad_follows_an_in_place_op():
    check([leaf((1,)), ("clone", 0), ("retain_grad", 1), ("inplace", "mul_", 1, None, 2.0, False),
           ("backward", 1, 0, None, False, None)])


def test_setitem_of_a_scaled_slice_backward():
    check([leaf((2, 2)), ("unary", "scale", 0), ("index", 1, (slice(None), 1)), ("binary_scalar", "mul", 2, 2.0, False),
           ("setitem", 1, (slice(None), 1), 3, None, False), ("backward", 1, 0, None, False, None)])


def test_second_backward_through_an_index_without_retain_graph():
    check([leaf((2, 2)), ("unary", "scale", 0), ("index", 1, (0,)), ("backward", 2, 0, False, False, None),
           ("backward", 2, 0, False, False, None)])


def test_backward_inputs_make_a_non_leaf_retain_its_grad():
    check([leaf(), leaf(seed=1), ("clone", 1), ("backward", 0, 0, None, False, [2])])


def test_0d_tensor_index_is_a_view():
    check([leaf((3,), False), ("index", 0, (("t0", 1),)), ("inplace", "mul_", 1, None, 2.0, False)])


def test_fill_of_a_zero_element_expand():
    check([leaf((1,), False), ("view", "expand", 0, ((0,),)), ("inplace", "fill_", 1, None, 3.0, True)])


def test_in_place_on_an_expand_that_repeats_nothing():
    check([leaf((1, 3), False), ("view", "expand", 0, ((1, 3),)), ("inplace", "clamp_", 1, None, None, False)])


def test_setitem_shape_mismatch_raises_runtime_error():
    check([leaf((2,), False), leaf((3,), False, 1), ("setitem", 0, (slice(None),), 1, None, False)])


def test_setitem_of_zero_elements_records_history():
    check([leaf((0, 3), False), leaf((0, 3), True, 1), ("setitem", 0, (slice(None),), 1, None, False)])


def test_setitem_of_zero_elements_of_a_view_of_a_leaf_raises():
    check([leaf((2, 1)), ("view", "unsqueeze", 0, (-1,)), ("setitem", 1, (slice(None), slice(1, 2)), None, 2.0, False)])


def test_setitem_from_an_overlapping_tensor_raises():
    check([leaf((1,), False), ("setitem", 0, (("list", (0,)),), 0, None, False)])


def test_backward_inputs_accumulate_in_place():
    check([leaf((3,)), ("backward", 0, 1, True, False, None), ("take_grad", 0), ("backward", 0, 2, True, False, [0])])
