"""``core/builtin.py``: a built-in op's plain call, recorded directly, makes the very node that
``Function.apply`` makes, field for field, for generated calls; the calls that are not plain go
through ``apply``; and the gradients are the closed forms."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import minigrad
from minigrad.autograd.graph import saved_tensors_hooks
from minigrad.core import builtin
from minigrad.ops import activations, elementwise, reduction
from minigrad.ops.elementwise import Add, Mul
from minigrad.ops.activations import Relu
from minigrad.ops.reduction import SumAll
from minigrad.nn.ops import linear as linear_module, loss as loss_module
from minigrad.nn.ops.linear import Linear, LinearNoBias
from minigrad.nn.ops.loss import CrossEntropy
import minigrad.nn.functional as F

MISSING = object()
CLASS_DEFAULTS = ("_to_save", "_freed", "_dirty", "_non_differentiable", "_materialize_grads", "_output_positions")


def node_state(node) -> dict:
    """Every field of a node: its slots, its class defaults, its own attributes; saved tensors as
    what they keep, the sequence number left out (each call takes the next one)."""
    state = {}
    for cls in type(node).__mro__:
        for name in cls.__dict__.get("__slots__", ()):
            if name not in ("__weakref__", "__dict__", "_sequence_nr"):
                state[name] = getattr(node, name, MISSING)
    for name in CLASS_DEFAULTS:
        state[name] = getattr(node, name)
    state.update(vars(node))
    saved = node._saved
    state["_saved"] = None if saved is None else tuple(
        None if s is None else (type(s), s.tensor, s.output_nr, "the output's" if s.tensor is None else s.version_counter,
                                s.saved_version, s.had_history, s.unpack_hook) for s in saved)
    state["type"], state["name"] = type(node), node.name()
    return state


def counting_records(monkeypatch) -> list:
    calls = []
    for module in (elementwise, reduction, activations, linear_module, loss_module):
        def counted(*args, _record=builtin.record, **kwargs):
            calls.append(args[0].__name__)
            return _record(*args, **kwargs)
        monkeypatch.setattr(module, "record", counted)
    return calls


SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2,)), ((1,), ())]
DTYPES = [np.float32, np.float64]


def operands(shape_a, shape_b, dtype_a, dtype_b, need_a, need_b, through_node_a):
    rng = np.random.default_rng(0)
    a = minigrad.tensor(rng.standard_normal(shape_a).astype(dtype_a), requires_grad=need_a)
    b = minigrad.tensor(rng.standard_normal(shape_b).astype(dtype_b), requires_grad=need_b)
    if through_node_a == "node" and need_a:
        a = Mul.apply(a, minigrad.tensor(1.5, dtype=a.dtype))  # a non-leaf: its edge is a node's, not an accumulator's
    elif through_node_a == "second output" and need_a:
        a = TwoOutputs.apply(a)[1]  # its edge names output 1 of the node
    return a, b


class TwoOutputs(minigrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g2, g3):
        return g2 * 2 + g3 * 3


@pytest.mark.parametrize("op, cls", [("mul", Mul), ("add", Add)])
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtypes", list(itertools.product(DTYPES, DTYPES)))
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("through_node", [False, "node", "second output"])
def test_a_plain_binary_call_makes_the_node_apply_makes(monkeypatch, op, cls, shapes, dtypes, needs, through_node):
    a, b = operands(*shapes, *dtypes, *needs, through_node)
    by_apply = cls.apply(a, b)
    calls = counting_records(monkeypatch)
    direct = a * b if op == "mul" else a + b
    assert calls == [cls.__name__], "the plain call was recorded directly"
    assert node_state(direct.grad_fn) == node_state(by_apply.grad_fn)
    assert direct.grad_fn._sequence_nr > by_apply.grad_fn._sequence_nr
    for field in ("requires_grad", "is_leaf", "_output_nr", "dtype", "shape"):
        assert getattr(direct, field) == getattr(by_apply, field), field
    np.testing.assert_array_equal(direct.numpy(force=True), by_apply.numpy(force=True))


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("through_node", [False, "node", "second output"])
def test_a_plain_sum_makes_the_node_apply_makes(monkeypatch, shape, keepdim, through_node):
    a, _ = operands(shape, (), np.float32, np.float32, True, False, through_node)
    by_apply = SumAll.apply(a, None, keepdim)
    calls = counting_records(monkeypatch)
    direct = a.sum(keepdim=keepdim)
    assert calls == ["SumAll"]
    assert node_state(direct.grad_fn) == node_state(by_apply.grad_fn)
    np.testing.assert_array_equal(direct.numpy(force=True), by_apply.numpy(force=True))


@pytest.mark.parametrize("through_node", [False, "node", "second output"])
def test_a_plain_relu_saves_its_output_as_apply_does(monkeypatch, through_node):
    a, _ = operands((2, 3), (), np.float64, np.float32, True, False, through_node)
    by_apply = Relu.apply(a)
    calls = counting_records(monkeypatch)
    direct = a.relu()
    assert calls == ["Relu"]
    assert node_state(direct.grad_fn) == node_state(by_apply.grad_fn)
    (saved,) = direct.grad_fn._saved
    assert saved.tensor is None and saved.requires_grad, "an output is saved as its data, with its requires_grad"
    assert saved.data is direct._data and saved.version_counter is direct._version_counter


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("needs", list(itertools.product([True, False], repeat=3)))
@pytest.mark.parametrize("through_node", [False, "node"])
def test_a_plain_linear_makes_the_node_apply_makes(monkeypatch, bias, needs, through_node):
    rng = np.random.default_rng(2)
    x, w = operands((4, 3), (5, 3), np.float32, np.float32, needs[0], needs[1], through_node)
    b = minigrad.tensor(rng.standard_normal(5).astype(np.float32), requires_grad=needs[2]) if bias else None
    by_apply = (Linear if bias else LinearNoBias).apply(x, w, b)
    calls = counting_records(monkeypatch)
    direct = F.linear(x, w, b)
    recorded = needs[0] or needs[1] or (bias and needs[2])
    assert calls == ([("Linear" if bias else "LinearNoBias")] if recorded else [])
    if recorded:
        assert node_state(direct.grad_fn) == node_state(by_apply.grad_fn)
    assert direct.requires_grad == by_apply.requires_grad
    np.testing.assert_array_equal(direct.numpy(force=True), by_apply.numpy(force=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("through_node", [False, "node"])
def test_a_plain_cross_entropy_makes_the_node_apply_makes(monkeypatch, reduction, through_node):
    logits, _ = operands((4, 3), (), np.float32, np.float32, True, False, through_node)
    target = minigrad.tensor([0, 2, 1, 2])
    by_apply = CrossEntropy.apply(logits, target, reduction)
    calls = counting_records(monkeypatch)
    direct = F.cross_entropy(logits, target, reduction=reduction)
    assert calls == ["CrossEntropy"]
    state, expected = node_state(direct.grad_fn), node_state(by_apply.grad_fn)
    for name in ("targets", "_on_target"):  # arrays: compared by value
        np.testing.assert_array_equal(state.pop(name), expected.pop(name))
    # the saved log-probabilities are a private tensor of each call: compared by value
    (kind, mine, *rest), = state.pop("_saved")
    (kind_expected, theirs, *rest_expected), = expected.pop("_saved")
    assert (kind, rest[:1] + rest[2:]) == (kind_expected, rest_expected[:1] + rest_expected[2:])
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert state == expected


def test_saved_tensor_hooks_see_the_same_packs():
    """Under saved_tensors_hooks the direct record packs what apply packs, in the same order."""
    packed = []
    a, b = operands((2, 3), (3,), np.float32, np.float32, True, True, "node")
    with saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        Mul.apply(a, b)
        by_apply, packed[:] = list(packed), []
        a * b
    assert [id(t) for t in packed] == [id(t) for t in by_apply] and len(packed) == 2


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
@pytest.mark.parametrize("case", ["view", "number", "anomaly", "no_grad", "int"])
def test_calls_that_are_not_plain_go_through_apply(monkeypatch, case):
    a = minigrad.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3), requires_grad=True)
    b = minigrad.tensor(np.ones(3, np.float32), requires_grad=True)
    calls = counting_records(monkeypatch)
    if case == "view":
        a[0] * b, b + a[1], a.t() * b[:2]
    elif case == "number":
        a * 2.0, a + 1, minigrad.mul(2.0, a), minigrad.add(1, b), b.mul(2)
    elif case == "anomaly":
        with minigrad.autograd.detect_anomaly(check_nan=False):
            (a * b).sum()
    elif case == "no_grad":
        with minigrad.no_grad():
            a * b, (a + b).sum()
    else:
        minigrad.tensor([1, 2]) * minigrad.tensor([3, 4])  # nothing requires grad: nothing recorded
    assert calls == []


def test_gradients_are_the_closed_forms():
    rng = np.random.default_rng(1)
    x0, y0, z0 = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal((2, 1))
    x, y, z = (minigrad.tensor(v, requires_grad=True) for v in (x0, y0, z0))
    ((x * y + z) * x).sum().backward()  # d/dx = 2xy + z, d/dy = sum_rows x^2, d/dz = sum_cols x
    np.testing.assert_allclose(x.grad.numpy(), 2 * x0 * y0 + z0)
    np.testing.assert_allclose(y.grad.numpy(), (x0 * x0).sum(0))
    np.testing.assert_allclose(z.grad.numpy(), x0.sum(1, keepdims=True))


def test_a_saved_operand_changed_in_place_is_still_refused():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    y = minigrad.tensor([3.0, 4.0], requires_grad=True)
    w = x * 1.0
    out = (w * y).sum()
    with minigrad.no_grad():
        w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
