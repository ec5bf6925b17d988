"""The course's two memory claims, measured: lesson 08's "``t += g`` needs no second buffer" and
worksheet 10's "minigrad's optimizers allocate nothing" (after the first step, beyond their state).

NumPy reports its allocations to ``tracemalloc``, so the peak traced while an operation runs is the
memory it allocated on the way, arrays included. The tensors are 8 MB; a second buffer would show
as 8 MB, and the bound is a tenth of that. Every case also checks its values (and, where a graph is
recorded, its gradients) against NumPy or torch, so a fast path that skips the work fails too.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import minigrad

N = 1_000_000  # 8 MB of float64


@pytest.fixture
def torch():
    return pytest.importorskip("torch")  # (only the tests that compare with it need it)


def peak_bytes(fn) -> int:
    """The most memory traced at any moment while ``fn()`` ran, beyond what was held before."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def data(seed: int, n: int = N, dtype=np.float64) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.5, 2.0, n).astype(dtype)


# -- in place: t += g writes into t's memory -------------------------------------------------------

ARITHMETIC = {  # name -> (the in-place call, the NumPy reference)
    "+= tensor": (lambda t, g: t.__iadd__(g), lambda x, y: x + y),
    "-= tensor": (lambda t, g: t.__isub__(g), lambda x, y: x - y),
    "*= tensor": (lambda t, g: t.__imul__(g), lambda x, y: x * y),
    "/= tensor": (lambda t, g: t.__itruediv__(g), lambda x, y: x / y),
    "add_ row": (lambda t, g: t.add_(g[: t.shape[-1]]), lambda x, y: x + y[: x.shape[-1]]),
    "sub_ float": (lambda t, g: t.sub_(0.25), lambda x, y: x - 0.25),
    "mul_ float": (lambda t, g: t.mul_(2.5), lambda x, y: x * 2.5),
    "div_ int": (lambda t, g: t.div_(3), lambda x, y: x / 3),
}


@pytest.mark.parametrize("name", ARITHMETIC)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_in_place_arithmetic_allocates_no_second_buffer(name, dtype):
    call, reference = ARITHMETIC[name]
    x, y = data(0, dtype=dtype), data(1, dtype=dtype)
    t, g = minigrad.tensor(x.copy()), minigrad.tensor(y)
    if name == "add_ row":
        t = t.reshape(1000, 1000)
    memory, version = t._data, t._version
    peak = peak_bytes(lambda: call(t, g))
    assert peak < x.nbytes / 10, f"{name} allocated {peak / 1e6:.1f} MB for a {x.nbytes / 1e6:.0f} MB tensor"
    assert t._data is memory and t._version == version + 1
    np.testing.assert_array_equal(t.numpy().reshape(-1), reference(x.reshape(t.shape), y).reshape(-1))


def test_in_place_on_a_parameter_under_no_grad_allocates_nothing():
    p = minigrad.nn.Parameter(minigrad.tensor(data(0)))
    g = minigrad.tensor(data(1))
    with minigrad.no_grad():
        peak = peak_bytes(lambda: p.__isub__(g))
    assert peak < N * 8 / 10
    np.testing.assert_array_equal(p.detach().numpy(), data(0) - data(1))
    assert p.grad_fn is None and p.requires_grad


def _recorded(L, view: bool, mul_by_grad: bool):
    """In place on a non-leaf (or on a view of one), recorded; then a backward. Returns the
    in-place ops' peak, the result, the leaves' gradients and the non-leaf's node name."""
    x = L.tensor(data(0), requires_grad=True)
    w = L.tensor(data(1), requires_grad=True)
    g = L.tensor(data(2))
    b = x * 2
    t = b[::2] if view else b
    n = t.shape[0]

    def ops():
        t.add_(g[:n])
        t.__imul__(3.0)
        t.__itruediv__(g[:n])
        t.__isub__(w[:n])
        if mul_by_grad:
            t.mul_(w[:n])  # w's gradient needs t's old values: kept, as PyTorch keeps them

    peak = peak_bytes(ops)
    (b * b).sum().backward()
    name = b.grad_fn.name()
    return peak, b.detach().numpy(), x.grad.numpy(), w.grad.numpy(), name


@pytest.mark.parametrize("view", [False, True], ids=["tensor", "view"])
@pytest.mark.parametrize("mul_by_grad", [False, True], ids=["", "mul_by_grad"])
def test_recorded_in_place_arithmetic_keeps_torchs_graph(view, mul_by_grad, torch):
    peak, values, grad_x, grad_w, name = _recorded(minigrad, view, mul_by_grad)
    _, values_t, grad_x_t, grad_w_t, name_t = _recorded(torch, view, mul_by_grad)
    np.testing.assert_allclose(values, values_t, rtol=1e-12)
    np.testing.assert_allclose(grad_x, grad_x_t, rtol=1e-12)
    np.testing.assert_allclose(grad_w, grad_w_t, rtol=1e-12)
    assert name == name_t
    if not mul_by_grad:  # (with it, t's old values are needed, and copied, by design)
        assert peak < N * 8 / 10, f"recorded in-place ops allocated {peak / 1e6:.1f} MB"


def test_in_place_write_still_bumps_the_version_a_saved_tensor_checks():
    x = minigrad.tensor(data(0, 10), requires_grad=True)
    w = minigrad.tensor(data(1, 10), requires_grad=True)
    t = x * 2
    y = t * w  # saves t for w's gradient
    t += 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_in_place_on_an_expand_is_still_refused():
    t = minigrad.zeros(1, dtype=minigrad.float64).expand(4)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        t += minigrad.ones(4, dtype=minigrad.float64)


# -- optimizers: a step after the first allocates nothing of the parameter's size -------------------

OPTIMIZERS = {
    "SGD": ("SGD", dict(lr=0.1)),
    "SGD momentum wd": ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    "SGD nesterov": ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)),
    "SGD dampening maximize": ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01, maximize=True)),
    "Adam": ("Adam", dict(lr=0.01)),
    "Adam wd": ("Adam", dict(lr=0.01, weight_decay=0.1)),
    "Adam amsgrad maximize": ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    "Adam beta1 0.3": ("Adam", dict(lr=0.01, betas=(0.3, 0.9))),  # (the other side of PyTorch's lerp)
    "AdamW": ("AdamW", dict(lr=0.01)),
    "AdamW amsgrad": ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
}


def _train(L, name: str, shape, transposed_grad: bool, steps: int = 3, dtype=np.float64):
    """``steps`` steps of an optimizer on one parameter; the peak traced during each step."""
    cls, kwargs = OPTIMIZERS[name]
    n = int(np.prod(shape))
    p = L.nn.Parameter(L.tensor(data(0, n, dtype).reshape(shape)))
    opt = getattr(L.optim, cls)([p], **kwargs)
    peaks = []
    for step in range(steps):
        g = data(step + 1, n, dtype)
        # a gradient in the other memory order than p: the blocks then come from np.nditer
        p.grad = L.tensor(g.reshape(shape[::-1])).T if transposed_grad else L.tensor(g.reshape(shape))
        peaks.append(peak_bytes(opt.step))
    return p.detach().numpy(), peaks


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_steps_allocate_nothing_after_the_first_and_match_torch(name, torch):
    shape = (N,)
    values, peaks = _train(minigrad, name, shape, transposed_grad=False)
    expected, _ = _train(torch, name, shape, transposed_grad=False)
    np.testing.assert_allclose(values, expected, rtol=1e-12, atol=1e-15)
    assert max(peaks[1:]) < N * 8 / 10, (
        f"{name}: steps after the first allocated {[round(p / 1e6, 2) for p in peaks]} MB for an 8 MB parameter")


@pytest.mark.parametrize("name", ["SGD nesterov", "Adam amsgrad maximize", "AdamW"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_optimizer_steps_in_blocks_on_any_layout(name, dtype, torch):
    shape = (1000, 1100)  # more than one block; the gradient transposed in memory
    values, peaks = _train(minigrad, name, shape, transposed_grad=True, dtype=dtype)
    expected, _ = _train(torch, name, shape, transposed_grad=True, dtype=dtype)
    tolerance = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(values, expected, rtol=tolerance, atol=tolerance)
    assert max(peaks[1:]) < 1000 * 1100 * np.dtype(dtype).itemsize / 5


def test_blocks_give_the_whole_array_computation_bit_for_bit():
    from minigrad.optim.optimizer import BLOCK, blocks

    rng = np.random.default_rng(0)
    for shape, orders in [((3, 5), "CC"), ((BLOCK + 7,), "CC"), ((300, 500), "CF"), ((300, 500), "FF")]:
        p = np.asarray(rng.standard_normal(shape), order=orders[0])
        g = np.asarray(rng.standard_normal(shape), order=orders[1])
        expected = p - 0.1 * (g + 0.01 * p)
        for P, G, s in blocks([p, g], [True, False], scratch=1):
            np.multiply(P, 0.01, out=s)
            np.add(G, s, out=s)
            np.multiply(s, 0.1, out=s)
            np.subtract(P, s, out=P)
        np.testing.assert_array_equal(p, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(128, 128), (64,)], ids=str)
def test_plain_sgd_on_one_block_allocates_nothing_and_matches_the_blocked_update(shape, dtype):
    """Plain SGD on a parameter of one block (an MLP's layers) takes its own short path: it must
    allocate nothing either, and give p - lr * g computed as the blocked loop computes it."""
    n = int(np.prod(shape))
    p = minigrad.nn.Parameter(minigrad.tensor(data(0, n, dtype).reshape(shape)))
    opt = minigrad.optim.SGD([p], lr=0.1)
    expected = p.detach().numpy().copy()
    peaks = []
    for step in range(3):
        g = data(step + 1, n, dtype).reshape(shape)
        p.grad = minigrad.tensor(g)
        memory, version = p._data, p._version
        peaks.append(peak_bytes(opt.step))
        expected = expected - np.multiply(g, 0.1)
        assert p._data is memory and p._version == version + 1
        np.testing.assert_array_equal(p.detach().numpy(), expected)
    if n * np.dtype(dtype).itemsize >= 1 << 16:  # (a small array's allocation hides in the interpreter's own)
        assert max(peaks[1:]) < n * np.dtype(dtype).itemsize / 10, peaks
