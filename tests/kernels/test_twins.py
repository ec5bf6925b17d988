"""Two derivative formulas that must not disagree, and graphs that keep only what backward needs.

Part 1. Several ops have a fast backward (a Numba kernel or plain NumPy) for an
ordinary pass and a twin made of tensor operations for ``create_graph=True``
(relu, leaky_relu, sigmoid, tanh, softmax, gelu (both forms), layer_norm, embedding, attention, the fused linear and cross-entropy, the
target gradient of binary_cross_entropy, prod). For every
such op, and for the ops whose backward masks a gradient (clamp, maximum,
max, where, pow, ...), each input class (zeros, negatives, -0.0, inf, NaN,
ties, empty) and each class of upstream gradient (zeros, inf, NaN) is run
through both backward passes: they must agree with each other, and with
PyTorch when it is installed, NaN and inf positions included.

Part 2. As in PyTorch, an op saves an operand only if a gradient it must
compute uses it (``ctx.needs_input_grad``): ``x * w`` keeps ``w`` for ``x``'s
gradient and nothing for ``w``'s. An operand nobody needs can be changed in
place afterwards, and the graph holds no reference to it; changing one that
is needed raises, as in PyTorch. And what was saved is freed by backward: a
second backward raises exactly for the ops that raise in PyTorch.
"""
from __future__ import annotations

import weakref
from typing import Callable, NamedTuple

import numpy as np
import pytest

import minigrad

try:
    import torch
except ImportError:  # the twins are still checked against each other
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (pip install minigrad[torch])")
DTYPES = [np.float32, np.float64]
# inf and NaN inputs are the point here: NumPy's "invalid value encountered" warnings are expected
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning",
                                        "ignore:divide by zero encountered:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")


def tol(dtype, n: int) -> dict:
    """How far two correct gradients may be apart, from the dtype and the reduction length ``n``.

    A sum of ``n`` terms added in another order differs by up to ``n`` roundings of
    ``eps`` on the terms' scale (so also in ``atol``: a sum that cancels to near zero
    keeps the absolute error of its terms); each library's exp/tanh and the few
    operations around the sum add a few roundings more, counted by the ``+ 4``.
    """
    eps = float(np.finfo(dtype).eps)
    bound = 2 * (n + 4) * eps
    return dict(rtol=bound, atol=bound)


def assert_same_gradient(got: np.ndarray, want: np.ndarray, dtype, n: int, what: str) -> None:
    """Same shape, NaN at the same places, the same infinities, and close elsewhere."""
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaN positions differ")
    for inf in (np.inf, -np.inf):
        np.testing.assert_array_equal(got == inf, want == inf, err_msg=f"{what}: {inf} positions differ")
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], **tol(dtype, n), err_msg=what)


# -- input classes ------------------------------------------------------------------------------
def _sprinkle(rng, x: np.ndarray, values: list) -> np.ndarray:
    """``x`` with about a third of its elements replaced by ``values`` (each at least once)."""
    x = x.copy()
    flat = x.reshape(-1)
    picks = rng.permutation(flat.size)[: max(len(values), flat.size // 3)]
    for i, p in enumerate(picks):
        flat[p] = values[i % len(values)]
    return x


X_CLASSES: dict[str, Callable] = {
    "random": lambda rng, shape: rng.standard_normal(shape),
    "zeros": lambda rng, shape: np.zeros(shape),
    "negatives": lambda rng, shape: -np.abs(rng.standard_normal(shape)) - 0.25,
    "signed_zeros": lambda rng, shape: _sprinkle(rng, np.full(shape, -0.0), [0.0]),
    "inf": lambda rng, shape: _sprinkle(rng, rng.standard_normal(shape), [np.inf, -np.inf]),
    "nan": lambda rng, shape: _sprinkle(rng, rng.standard_normal(shape), [np.nan]),
    # few distinct values: ties for max, between the operands of maximum, and at clamp's bounds
    "ties": lambda rng, shape: rng.choice([-1.0, -0.5, 0.5, 2.0], shape),
    "empty": lambda rng, shape: np.zeros((0, *shape[1:])),  # applied to the first input only
}
G_CLASSES: dict[str, Callable] = {
    "random": lambda rng, shape: rng.standard_normal(shape),
    "zeros": lambda rng, shape: _sprinkle(rng, np.zeros(shape), [-0.0]),
    "inf": lambda rng, shape: _sprinkle(rng, rng.standard_normal(shape), [np.inf, -np.inf]),
    "nan": lambda rng, shape: _sprinkle(rng, rng.standard_normal(shape), [np.nan]),
}


class Case(NamedTuple):
    shapes: tuple  # of the float inputs, all requiring grad
    fn: Callable  # fn(lib, *inputs) with lib = minigrad or torch
    n: int  # the longest reduction in its backward (for the tolerance)


def _F(lib):
    return lib.nn.functional


def _targets(lib, n_rows: int):
    return lib.tensor(np.array([0, 3, 1, 2, 3][:n_rows], dtype=np.int64))


def _cross_entropy(reduction: str) -> Callable:
    return lambda lib, x: _F(lib).cross_entropy(x, _targets(lib, x.shape[0]), reduction=reduction)


CASES: dict[str, Case] = {
    # a fast path and its create_graph twin
    "relu": Case(((3, 4),), lambda lib, x: x.relu(), 1),
    "sigmoid": Case(((3, 4),), lambda lib, x: x.sigmoid(), 1),
    "tanh": Case(((3, 4),), lambda lib, x: x.tanh(), 1),
    "softmax_last": Case(((3, 4),), lambda lib, x: x.softmax(-1), 4),
    "softmax_first": Case(((3, 4),), lambda lib, x: x.softmax(0), 3),
    "log_softmax": Case(((3, 4),), lambda lib, x: x.log_softmax(1), 4),
    "linear": Case(((3, 4), (5, 4), (5,)), lambda lib, x, w, b: _F(lib).linear(x, w, b), 5),
    "linear_no_bias": Case(((3, 4), (5, 4)), lambda lib, x, w: _F(lib).linear(x, w), 5),
    "cross_entropy_mean": Case(((3, 4),), _cross_entropy("mean"), 4),
    "cross_entropy_sum": Case(((3, 4),), _cross_entropy("sum"), 4),
    "cross_entropy_none": Case(((3, 4),), _cross_entropy("none"), 4),
    "gelu": Case(((3, 4),), lambda lib, x: _F(lib).gelu(x), 1),
    "gelu_tanh": Case(((3, 4),), lambda lib, x: _F(lib).gelu(x, approximate="tanh"), 1),
    "attention": Case(((2, 2, 3, 4),) * 3, lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q, k, v), 12),
    "attention_causal": Case(((1, 2, 4, 3), (1, 2, 5, 3), (1, 2, 5, 3)),
                             lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q, k, v, is_causal=True), 15),
    "layer_norm": Case(((3, 4), (4,), (4,)), lambda lib, x, w, b: _F(lib).layer_norm(x, (4,), w, b), 4),
    "leaky_relu": Case(((3, 4),), lambda lib, x: _F(lib).leaky_relu(x, 0.1), 1),
    "huber_loss": Case(((3, 4), (3, 4)), lambda lib, x, t: _F(lib).huber_loss(x, t, reduction="none", delta=0.5), 1),
    "smooth_l1_loss": Case(((3, 4), (3, 4)), lambda lib, x, t: _F(lib).smooth_l1_loss(x, t, reduction="sum", beta=0.5), 12),
    "binary_cross_entropy": Case(  # probabilities from sigmoid; the target's gradient has two paths too
        ((3, 4), (3, 4)), lambda lib, x, t: _F(lib).binary_cross_entropy(x.sigmoid(), t.sigmoid()), 1),
    "prod_dim": Case(((3, 4),), lambda lib, x: x.prod(1), 4),
    "prod_all": Case(((3, 4),), lambda lib, x: x.prod(), 12),
    # one formula, but one that masks the gradient: where, not grad * mask
    "clamp": Case(((3, 4),), lambda lib, x: x.clamp(-0.5, 0.5), 1),
    "clamp_min": Case(((3, 4),), lambda lib, x: x.clamp(min=0.0), 1),
    "maximum": Case(((3, 4), (4,)), lambda lib, x, y: lib.maximum(x, y), 3),
    "max_all": Case(((3, 4),), lambda lib, x: x.max(), 12),
    "min_all": Case(((3, 4),), lambda lib, x: x.min(), 12),
    "max_dim": Case(((3, 4),), lambda lib, x: x.max(1).values, 1),
    "where": Case(((3, 4), (4,)), lambda lib, x, y: lib.where(x > 0, x, y), 3),
    "pow_scalar": Case(((3, 4),), lambda lib, x: x ** 2.0, 1),
    "pow_zero": Case(((3, 4),), lambda lib, x: x ** 0.0, 1),
    "pow_tensor": Case(((3, 4), (4,)), lambda lib, x, y: x ** y, 3),
    "pow_scalar_base": Case(((3, 4),), lambda lib, x: 2.0 ** x, 1),
    "pow_zero_base": Case(((3, 4),), lambda lib, x: 0.0 ** x, 1),
    "div": Case(((3, 4), (4,)), lambda lib, x, y: x / y, 3),
    "abs": Case(((3, 4),), lambda lib, x: x.abs(), 1),
}


def _torch_passes_differ(name: str, arrays: list) -> bool:
    """prod() of two zeros or more: PyTorch's ordinary backward returns zeros without
    reading the gradient (a shortcut taken only when grad mode is off), its create_graph
    pass multiplies the gradient by the products of the others (an inf or NaN gradient
    gives NaN). minigrad follows each pass; test_backward_matches_torch holds both to torch."""
    return name == "prod_all" and np.count_nonzero(arrays[0] == 0) > 1


def _arrays(case: Case, x_class: str, dtype, seed: int) -> list:
    rng = np.random.default_rng(seed)
    make = X_CLASSES[x_class]
    arrays = []
    for i, shape in enumerate(case.shapes):
        if x_class == "empty" and i > 0:
            arrays.append(rng.standard_normal(shape))  # only the batch is empty
        else:
            arrays.append(make(rng, shape))
    return [a.astype(dtype) for a in arrays]


def _backward(lib, case: Case, arrays: list, g_class: str, create_graph: bool):
    """(gradients of every input as arrays) or the exception type forward/backward raised."""
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    try:
        out = case.fn(lib, *inputs)
    except Exception as e:  # noqa: BLE001 - the type is compared with the other library's
        return type(e)
    g = G_CLASSES[g_class](np.random.default_rng(7), tuple(out.shape)).astype(arrays[0].dtype)
    g = lib.tensor(g, requires_grad=create_graph)
    grads = lib.autograd.grad(out, inputs, g, create_graph=create_graph)
    if create_graph and lib is minigrad and case.fn is not CASES["pow_zero"].fn:
        # every formula here is linear in the upstream gradient: a recorded twin depends on it
        assert all(r.requires_grad for r in grads), "create_graph=True did not record the backward"
    return [r.detach().numpy().copy() for r in grads]


@pytest.mark.parametrize("x_class", list(X_CLASSES))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(CASES))
def test_both_backward_passes_agree(name, dtype, x_class):
    case = CASES[name]
    arrays = _arrays(case, x_class, dtype, seed=len(name))
    for g_class in G_CLASSES:
        plain = _backward(minigrad, case, arrays, g_class, create_graph=False)
        recorded = _backward(minigrad, case, arrays, g_class, create_graph=True)
        if isinstance(plain, type):
            assert recorded is plain
            return
        if _torch_passes_differ(name, arrays):
            np.testing.assert_array_equal(plain[0], np.zeros_like(arrays[0]))
            continue
        for i, (p, r) in enumerate(zip(plain, recorded)):
            assert_same_gradient(r, p, dtype, case.n, f"{name}, {g_class} gradient: input {i}, create_graph vs plain")


@needs_torch
@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
@pytest.mark.parametrize("x_class", list(X_CLASSES))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", list(CASES))
def test_backward_matches_torch(name, dtype, x_class, create_graph):
    case = CASES[name]
    arrays = _arrays(case, x_class, dtype, seed=len(name))
    for g_class in G_CLASSES:
        if name.startswith("attention") and (g_class in ("inf", "nan") or x_class in ("inf", "nan")):
            # where inf or NaN spreads inside torch's flash kernel is its own: it visits some masked pairs and
            # not others, and sums dS = P * (dP - rowsum(dP * P)) in another order (inf - inf elsewhere). Our
            # two passes are checked against each other on these above; finite data is compared with torch
            continue
        want = _backward(torch, case, arrays, g_class, create_graph)
        got = _backward(minigrad, case, arrays, g_class, create_graph)
        if isinstance(want, type) or isinstance(got, type):
            assert got is want, f"{name}: minigrad gives {got}, torch {want}"
            return
        for i, (m, t) in enumerate(zip(got, want)):
            assert_same_gradient(m, t, dtype, case.n, f"{name}, {g_class} gradient: input {i} vs torch")


def test_relu_inf_gradient_at_a_dead_unit_is_zero_in_both_passes():
    """The case that started this: 0 in the kernel, NaN in the twin (inf * 0)."""
    for create_graph in (False, True):
        x = minigrad.tensor([-1.0, 0.0, 2.0, float("nan")], requires_grad=True)
        g = minigrad.tensor([float("inf")] * 4, requires_grad=create_graph)
        (grad,) = minigrad.autograd.grad(x.relu(), x, g, create_graph=create_graph)
        # torch.threshold_backward: 0 where the output is <= 0, else the gradient (NaN passes it)
        np.testing.assert_array_equal(grad.detach().numpy(), [0.0, 0.0, np.inf, np.inf])


# -- Part 2: save only what the needed gradients use ------------------------------------------------
def test_the_issue_example_writes_into_a_product_by_a_constant():
    x = minigrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    h = x * 1
    h[:, 1] = h[:, 1] * 2  # h[:, 1] * 2 saves nothing: only the constant's gradient would need it
    h.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 2.0], [1.0, 2.0]])


def _saved(t) -> list:
    """What ``t``'s node saved; for a batched matmul, PyTorch's steps (``UnsafeViewBackward0`` of
    an ``mm``), what the ``mm`` saved, each the operand it is a view of (its fold)."""
    node = t.grad_fn
    if node.name() == "UnsafeViewBackward0":
        node = node.next_functions[0][0]
    return [s if s._base is None else s._base for s in node.saved_tensors if s is not None]


# (op, shapes of a and b): binary ops of two tensors
BINARY: dict[str, tuple[Callable, tuple, tuple]] = {
    "add": (lambda lib, a, b: a + b, (2, 3), (3,)),
    "sub": (lambda lib, a, b: a - b, (2, 3), (3,)),
    "mul": (lambda lib, a, b: a * b, (2, 3), (3,)),
    "div": (lambda lib, a, b: a / b, (2, 3), (3,)),
    "pow": (lambda lib, a, b: a ** b, (2, 3), (3,)),
    "maximum": (lambda lib, a, b: lib.maximum(a, b), (2, 3), (3,)),
    "where": (lambda lib, a, b: lib.where(lib.tensor([True, False, True]), a, b), (2, 3), (3,)),
    "mm": (lambda lib, a, b: a @ b, (2, 3), (3, 4)),
    "mv": (lambda lib, a, b: a @ b, (2, 3), (3,)),
    "dot": (lambda lib, a, b: a @ b, (3,), (3,)),
    "matmul_batched": (lambda lib, a, b: a @ b, (2, 2, 3), (3, 4)),
    "linear": (lambda lib, a, b: lib.nn.functional.linear(a, b), (2, 3), (4, 3)),
}
# Which operands (0 = a, 1 = b) each op saves when only operand ``needs`` requires grad:
# what that one gradient's formula reads, as PyTorch's ops save.
_OTHER = {0: {1}, 1: {0}}  # d(a*b)/da = b, d(a@b)/da uses b, and the reverse
SAVED: dict[str, dict[int, set]] = {
    "add": {0: set(), 1: set()}, "sub": {0: set(), 1: set()}, "where": {0: set(), 1: set()},
    "mul": _OTHER, "mm": _OTHER, "mv": _OTHER, "dot": _OTHER, "matmul_batched": _OTHER, "linear": _OTHER,
    "div": {0: {1}, 1: {0, 1}},  # d(a/b)/da = 1/b; d(a/b)/db = -(a/b)/b
    "maximum": {0: {0, 1}, 1: {0, 1}},  # both decide who won
    "pow": {0: {0, 1}, 1: {0, 1}},  # both, and the output (PyTorch saves it whenever b is a tensor)
}
EXTRA_SAVED = {"pow": 1, "where": 1}  # pow's output, where's condition: PyTorch saves them too


@pytest.mark.parametrize("needs", [0, 1])
@pytest.mark.parametrize("name", list(BINARY))
def test_an_operand_no_gradient_uses_is_not_saved(name, needs):
    fn, shape_a, shape_b = BINARY[name]
    operands = [minigrad.ones(*shape_a), minigrad.ones(*shape_b)]
    operands[needs].requires_grad_()
    gone = weakref.ref(operands[1 - needs])
    out = fn(minigrad, *operands)
    saved = _saved(out)
    assert len(saved) == len(SAVED[name][needs]) + EXTRA_SAVED.get(name, 0)
    for i in (0, 1):
        assert any(s is operands[i] for s in saved) == (i in SAVED[name][needs])
    del operands, saved  # nothing here makes a reference cycle: the count drops at once
    other_saved = 1 - needs in SAVED[name][needs]
    assert (gone() is None) != other_saved, f"{name}: the graph holds what no gradient needs"


def _binary_program(lib, name: str, needs: int, mutate: int):
    """``a op b`` where only operand ``needs`` requires grad (through a non-leaf, so
    that it can be changed in place), then operand ``mutate`` is changed in place."""
    fn, shape_a, shape_b = BINARY[name]
    rng = np.random.default_rng(5)
    arrays = [rng.uniform(0.5, 2.0, shape_a), rng.uniform(0.5, 2.0, shape_b)]
    leaf = lib.tensor(arrays[needs], requires_grad=True)
    operands = [lib.tensor(a) for a in arrays]
    operands[needs] = leaf * 1
    out = fn(lib, *operands)
    operands[mutate].mul_(3)
    try:
        out.sum().backward()
    except RuntimeError:
        return RuntimeError
    return leaf.grad.numpy().copy()


@pytest.mark.parametrize("mutate", [0, 1])
@pytest.mark.parametrize("needs", [0, 1])
@pytest.mark.parametrize("name", list(BINARY))
def test_changing_an_operand_in_place_after_the_op(name, needs, mutate):
    """Backward succeeds exactly when the changed operand was not saved, and then with
    PyTorch's gradient; otherwise it raises, as in PyTorch."""
    got = _binary_program(minigrad, name, needs, mutate)
    if mutate in SAVED[name][needs]:
        assert got is RuntimeError, f"{name}: an operand backward needs was changed, and no error"
    else:
        assert isinstance(got, np.ndarray), f"{name}: backward raised though nothing it needs changed"
    if torch is not None:
        want = _binary_program(torch, name, needs, mutate)
        if isinstance(want, type) or isinstance(got, type):
            assert got is want, f"{name}: minigrad gives {got}, torch {want}"
        else:
            n = max(max(BINARY[name][1]), max(BINARY[name][2]))
            np.testing.assert_allclose(got, want, **tol(np.float64, n))


# x op number, and number op x: the number never needs saving, and x only if its gradient uses it
SCALAR = {
    "x + 2": lambda x: x + 2, "2 - x": lambda x: 2 - x, "x * 2": lambda x: x * 2,
    "2 * x": lambda x: 2 * x, "x / 2": lambda x: x / 2, "x ** 2": lambda x: x ** 2,
    "2 ** x": lambda x: 2 ** x, "relu": lambda x: x.relu(), "sum": lambda x: x.sum(),
    "2 / x": lambda x: 2 / x,  # reciprocal(x) * 2, as PyTorch: the private reciprocal is saved, not x
}


@needs_torch
@pytest.mark.parametrize("op", list(SCALAR.values()), ids=list(SCALAR))
def test_changing_the_input_after_an_op_with_a_number_matches_torch(op):
    def program(lib):
        x = lib.tensor([[0.5, -1.0], [2.0, 3.0]], requires_grad=True)
        h = x * 1
        out = op(h)
        h.mul_(3)
        try:
            out.sum().backward()
        except RuntimeError:
            return RuntimeError
        return x.grad.numpy().copy()

    got, want = program(minigrad), program(torch)
    if isinstance(want, type) or isinstance(got, type):
        assert got is want, f"minigrad gives {got}, torch {want}"
    else:
        np.testing.assert_allclose(got, want, **tol(np.float64, 1))


@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("needs", ["input", "weight", "both"])
def test_fused_linear_saves_input_for_weight_and_weight_for_input(needs, with_bias):
    x = minigrad.ones(2, 3, requires_grad=needs in ("input", "both"))
    w = minigrad.ones(4, 3, requires_grad=needs in ("weight", "both"))
    b = minigrad.ones(4, requires_grad=True) if with_bias else None
    out = minigrad.nn.functional.linear(x, w, b)
    assert out.grad_fn.name() == ("AddmmBackward0" if with_bias else "MmBackward0")  # the fused node
    saved = _saved(out)
    assert any(s is x for s in saved) == (needs in ("weight", "both"))
    assert any(s is w for s in saved) == (needs in ("input", "both"))


# A node that saved tensors is freed by backward: a second backward through it raises, exactly
# for the ops whose PyTorch counterpart saves something (add, sum, x * 2 save nothing there either).
SECOND_PASS = {
    "x + 1": lambda lib, x: x + 1, "x * 2": lambda lib, x: x * 2, "x * x": lambda lib, x: x * x,
    "x / 2": lambda lib, x: x / 2, "2 / x": lambda lib, x: 2 / x, "x ** 2": lambda lib, x: x ** 2, "sum(1)": lambda lib, x: x.sum(1),
    "mean": lambda lib, x: x.mean(), "neg": lambda lib, x: -x, "relu": lambda lib, x: x.relu(),
    "sigmoid": lambda lib, x: x.sigmoid(), "tanh": lambda lib, x: x.tanh(), "exp": lambda lib, x: x.exp(),
    "abs": lambda lib, x: x.abs(), "clamp": lambda lib, x: x.clamp(0, 1),
    "max()": lambda lib, x: x.max(), "min()": lambda lib, x: x.min(),
    "max(1)": lambda lib, x: x.max(1).values, "max(1, keepdim)": lambda lib, x: x.max(1, keepdim=True).values,
    "maximum": lambda lib, x: lib.maximum(x, lib.ones(2, 3)),
    "where": lambda lib, x: lib.where(lib.tensor([True, False, True]), x, lib.ones(2, 3)),
    "softmax": lambda lib, x: x.softmax(1), "log_softmax": lambda lib, x: x.log_softmax(1),
    "x @ w": lambda lib, x: x @ lib.ones(3, 2), "linear": lambda lib, x: lib.nn.functional.linear(x, lib.ones(4, 3)),
    "cross_entropy": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 2])),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x.reshape(1, 1, 2, 3), 2),
}


@needs_torch
@pytest.mark.parametrize("op", list(SECOND_PASS.values()), ids=list(SECOND_PASS))
def test_a_second_backward_raises_exactly_as_in_torch(op):
    def program(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [3.0, -0.5, 1.5]], requires_grad=True)
        y = op(lib, x).sum()
        y.backward()
        try:
            y.backward()
        except RuntimeError:
            return RuntimeError
        return x.grad.numpy().copy()

    got, want = program(minigrad), program(torch)
    if isinstance(want, type) or isinstance(got, type):
        assert got is want, f"minigrad gives {got}, torch {want}"
    else:
        np.testing.assert_allclose(got, want, **tol(np.float32, 3))


@needs_torch
@pytest.mark.parametrize("shapes, kwargs", [
    (((2, 2, 3, 4),) * 3, {}), (((2, 2, 3, 4),) * 3, {"is_causal": True}), (((2, 3, 4),) * 3, {"is_causal": True}),
    (((2, 2, 3, 4),) * 3, {"attn_mask": "bool"}), (((1, 1, 3, 4), (1, 1, 5, 4), (1, 1, 5, 4)), {"scale": 0.3}),
    (((1, 1, 3, 4), (1, 1, 5, 4), (1, 1, 5, 2)), {})], ids=str)
def test_attention_is_one_node_where_torch_makes_one(shapes, kwargs):
    """4-D inputs without mask or dropout: one node named as torch's flash node; other cases keep the
    composed graph. The same values and gradients as torch's in every case."""
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    mask = np.tril(np.ones((shapes[0][-2], shapes[1][-2]), bool)) if kwargs.get("attn_mask") else None
    outs = []
    for lib in (minigrad, torch):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        kw = dict(kwargs, attn_mask=None if mask is None else lib.tensor(mask))
        out = _F(lib).scaled_dot_product_attention(*inputs, **kw)
        grads = lib.autograd.grad(out, inputs, lib.tensor(np.ones(out.shape, np.float32)))
        outs.append((out.grad_fn.name(), out.detach().numpy(), [g.numpy() for g in grads]))
    (name, value, grads), (torch_name, torch_value, torch_grads) = outs
    if len(shapes[0]) == 4 and "attn_mask" not in kwargs and shapes[2][-1] == shapes[0][-1]:
        assert name == torch_name == "ScaledDotProductFlashAttentionForCpuBackward0"
    else:  # (torch 2.x's flash node takes a mask too; ours composes then)
        assert name != "ScaledDotProductFlashAttentionForCpuBackward0"
    np.testing.assert_allclose(value, torch_value, rtol=1e-5, atol=1e-6)
    for g, t in zip(grads, torch_grads):
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("x_class", ["ordinary", "zeros", "inf", "nan"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_embedding_backward_passes_agree_and_match_torch(dtype, x_class):
    """The scatter-add kernel (plain backward) and the recorded adjoint (create_graph), repeated indices
    included, against each other and torch; an upstream gradient with inf/NaN rows spreads them the same way."""
    indices = np.array([[0, 3, 1], [3, 3, 2]])
    weight = np.random.default_rng(1).standard_normal((5, 4)).astype(dtype)
    g = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(dtype)
    g[0, 1] = {"ordinary": g[0, 1], "zeros": 0.0, "inf": np.inf, "nan": np.nan}[x_class]
    results = []
    for lib, create_graph in [(minigrad, False), (minigrad, True)] + ([(torch, False)] if torch else []):
        w = lib.tensor(weight, requires_grad=True)
        out = _F(lib).embedding(lib.tensor(indices), w)
        assert out.grad_fn.name() == "EmbeddingBackward0"
        got, = lib.autograd.grad(out, w, lib.tensor(g, requires_grad=create_graph), create_graph=create_graph)
        assert got.requires_grad == create_graph
        results.append(got.detach().numpy())
    for other in results[1:]:
        assert_same_gradient(results[0], other, dtype, 3, "embedding")


@pytest.mark.parametrize("name", ["relu_backward", "sigmoid_backward", "tanh_backward", "gelu_backward",
                                  "gelu_tanh_backward"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_elementwise_kernels_match_their_references_on_special_values(name, dtype):
    """The Numba kernels behind the fast paths and their NumPy references, on every
    pairing of special saved values and special gradients (tests/kernels/test_kernels.py uses finite data)."""
    from minigrad.kernels import elementwise as numba_kernels, reference

    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan], dtype)
    saved, grad = (a.reshape(-1).copy() for a in np.meshgrid(special, special))  # every pair
    got = getattr(numba_kernels, name)(saved, grad)
    want = getattr(reference, name)(saved, grad)
    assert_same_gradient(got, want, dtype, 1, name)


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("mutate", [False, True], ids=["kept", "logits changed in place"])
def test_cross_entropy_saves_log_probs_not_logits_in_both_passes(mutate, reduction):
    """PyTorch saves the log-probabilities: changing the logits after the loss is allowed, in an
    ordinary backward and under create_graph, and the second derivative is still right."""
    def program(lib):
        x = lib.tensor([[1.0, 2.0, 0.5], [0.0, 3.0, -1.0]], dtype=lib.float64, requires_grad=True)
        logits = x * 1
        loss = lib.nn.functional.cross_entropy(logits, lib.tensor([0, 2]), reduction=reduction)
        if mutate:
            logits.mul_(2)
        g_out = lib.tensor([1.0, -2.0], dtype=lib.float64) if reduction == "none" else None
        (plain,) = lib.autograd.grad(loss, x, g_out, retain_graph=True)
        (g,) = lib.autograd.grad(loss, x, g_out, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return [plain.numpy(), g.detach().numpy(), gg.numpy()]

    for got, want in zip(program(minigrad), program(torch)):
        np.testing.assert_allclose(got, want, **tol(np.float64, 3))


@pytest.mark.parametrize("op", ["attention_causal", "attention", "layer_norm_gelu_tanh", "embedding"])
def test_fused_capstone_nodes_differentiate_twice(op):
    """The one-node attention, the layer_norm and gelu(tanh) kernels and the embedding scatter-add: the plain
    backward against finite differences, and the recorded twin's own derivative (gradgradcheck) too; that the
    twin equals the plain pass is test_both_backward_passes_agree's (it catches a twin missing the scale)."""
    rng = np.random.default_rng(8)
    F = minigrad.nn.functional

    def t(*shape):
        return minigrad.tensor(rng.standard_normal(shape), requires_grad=True)

    fn, inputs = {
        "attention_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), (t(1, 2, 3, 4), t(1, 2, 5, 4), t(1, 2, 5, 4))),
        "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.7), (t(2, 1, 3, 2),) * 1 + (t(2, 1, 4, 2), t(2, 1, 4, 2))),
        "layer_norm_gelu_tanh": (lambda x, w, b: F.gelu(F.layer_norm(x, (4,), w, b), approximate="tanh"), (t(2, 3, 4), t(4), t(4))),
        "embedding": (lambda w: F.embedding(minigrad.tensor([[0, 3, 3], [1, 4, 0]]), w), (t(5, 4),)),
    }[op]
    assert minigrad.autograd.gradcheck(fn, inputs)
    assert minigrad.autograd.gradgradcheck(fn, inputs)
