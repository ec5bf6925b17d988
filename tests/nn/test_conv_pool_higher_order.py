"""conv2d and max_pool2d differentiated twice and more: gradgradcheck in float64, and torch's values.

Their ordinary backward runs Numba kernels; under create_graph=True it is a node of its own
whose backward is written with conv2d, the backward node and gather (``nn/ops/conv.py``).
"""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

CONVS = [  # (x shape, weight shape, bias, stride, padding)
    ((1, 1, 4, 4), (1, 1, 3, 3), False, 1, 0),
    ((2, 2, 5, 5), (3, 2, 3, 3), True, 2, 1),
    ((1, 3, 5, 4), (2, 3, 2, 3), True, (2, 1), (1, 0)),
    ((2, 1, 3, 3), (2, 1, 1, 1), True, 1, 0),
]
POOLS = [((1, 1, 4, 4), 2, None, 0), ((2, 2, 5, 5), 3, 2, 1), ((1, 2, 5, 4), (2, 3), 1, (1, 0))]


def _leaf(rng, shape):
    return minigrad.tensor(rng.standard_normal(shape), dtype=minigrad.float64, requires_grad=True)


@pytest.mark.parametrize("x_shape, w_shape, bias, stride, padding", CONVS)
def test_conv2d_gradgradcheck(x_shape, w_shape, bias, stride, padding):
    rng = np.random.default_rng(len(x_shape) + sum(w_shape))
    inputs = [_leaf(rng, x_shape), _leaf(rng, w_shape)] + ([_leaf(rng, w_shape[:1])] if bias else [])

    def conv(x, w, b=None):
        return F.conv2d(x, w, b, stride=stride, padding=padding)
    assert gradcheck(conv, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(conv, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("x_shape, kernel, stride, padding", POOLS)
def test_max_pool2d_gradgradcheck(x_shape, kernel, stride, padding):
    # distinct values, far apart: a small step never changes which element is a window's max
    x = minigrad.tensor(np.random.default_rng(3).permutation(int(np.prod(x_shape))).reshape(x_shape) * 0.1,
                        dtype=minigrad.float64, requires_grad=True)

    def pool(t):
        return F.max_pool2d(t, kernel, stride=stride, padding=padding) ** 2
    assert gradcheck(pool, [x], eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(pool, [x], eps=1e-6, atol=1e-5, rtol=1e-3)


def test_third_derivative_of_a_convolution():
    """d3/dx3 of sum(conv(x, w)^3) is 6 * (sum of w over each x's windows)^3 type terms: compare with
    the same computed from the second derivative by finite differences."""
    rng = np.random.default_rng(0)
    x, w = _leaf(rng, (1, 1, 3, 3)), _leaf(rng, (1, 1, 2, 2))
    g, = minigrad.autograd.grad((F.conv2d(x, w) ** 3).sum(), x, create_graph=True)
    gg, = minigrad.autograd.grad(g.sum(), x, create_graph=True)
    ggg, = minigrad.autograd.grad(gg.sum(), x)
    eps, base = 1e-6, x.detach().numpy().copy()
    numeric = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        for sign in (1, -1):
            xp = base.copy()
            xp[i] += sign * eps
            t = minigrad.tensor(xp, requires_grad=True)
            g1, = minigrad.autograd.grad((F.conv2d(t, w.detach()) ** 3).sum(), t, create_graph=True)
            g2, = minigrad.autograd.grad(g1.sum(), t)
            numeric[i] += sign * g2.sum().item() / (2 * eps)
    np.testing.assert_allclose(ggg.numpy(), numeric, rtol=1e-4, atol=1e-6)


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("x_shape, w_shape, bias, stride, padding", CONVS)
def test_conv2d_second_derivatives_match_torch(x_shape, w_shape, bias, stride, padding):
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)] + ([rng.standard_normal(w_shape[:1])] if bias else [])
    results = {}
    for lib in (minigrad, torch):
        ts = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        y = lib.nn.functional.conv2d(*ts, stride=stride, padding=padding)
        grads = lib.autograd.grad((y ** 2).sum(), ts, create_graph=True)
        names = [g.grad_fn.name() for g in grads]
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), ts)
        results[lib.__name__] = ([g.detach().numpy() for g in grads], names, [s.numpy() for s in second])
    (m_first, m_names, m_second), (t_first, t_names, t_second) = results["minigrad"], results["torch"]
    assert m_names == t_names
    for m, t in zip(m_first + m_second, t_first + t_second):
        np.testing.assert_allclose(m, t, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("x_shape, kernel, stride, padding", POOLS)
def test_max_pool2d_second_derivatives_match_torch(x_shape, kernel, stride, padding):
    values = np.random.default_rng(5).permutation(int(np.prod(x_shape))).reshape(x_shape) * 0.1
    results = {}
    for lib in (minigrad, torch):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.max_pool2d(x, kernel, stride=stride, padding=padding)
        g, = lib.autograd.grad((y ** 3).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x, create_graph=True)
        (g.sum() + gg.sum()).backward()
        results[lib.__name__] = (g.grad_fn.name(), g.detach().numpy(), gg.detach().numpy(), x.grad.numpy())
    m, t = results["minigrad"], results["torch"]
    assert m[0] == t[0]
    for a, b in zip(m[1:], t[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def _both(arrays):
    """The same float64 leaves in minigrad and in torch."""
    return {lib: [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays] for lib in (minigrad, torch)}


def _name(t):
    return None if t is None or t.grad_fn is None else t.grad_fn.name()


@pytest.mark.parametrize("power", [1, 2], ids=["linear", "squared"])
@pytest.mark.parametrize("chosen", [(0,), (1,), (2,), (0, 1), (1, 2), (0, 1, 2)], ids=str)
def test_conv2d_third_order_nodes_match_torch(chosen, power):
    """Differentiating only some of the gradients: the others reach ConvolutionBackward as None (torch's
    undefined gradients), so the nodes of the second derivatives and which ones are None match torch's."""
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal((2, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3)), rng.standard_normal(3)]
    results = {}
    for lib, ts in _both(arrays).items():
        y = lib.nn.functional.conv2d(*ts, stride=2, padding=1)
        grads = lib.autograd.grad((y ** power).sum(), ts, create_graph=True)
        second = lib.autograd.grad(sum((grads[i] ** 2).sum() for i in chosen), ts, create_graph=True, allow_unused=True)
        results[lib.__name__] = ([_name(s) for s in second], [None if s is None else s.detach().numpy() for s in second])
    (m_names, m_values), (t_names, t_values) = results["minigrad"], results["torch"]
    assert m_names == t_names
    for m, t in zip(m_values, t_values):
        assert (m is None) == (t is None)
        if m is not None:
            np.testing.assert_allclose(m, t, rtol=1e-9, atol=1e-9)


def test_hessian_vector_product_of_a_small_cnn_matches_torch():
    """H v for the parameters of conv -> max_pool -> conv -> sum of squares, as a second-order optimizer computes it."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 1, 8, 8))
    params = [rng.standard_normal((4, 1, 3, 3)), rng.standard_normal(4), rng.standard_normal((2, 4, 2, 2)), rng.standard_normal(2)]
    vectors = [rng.standard_normal(p.shape) for p in params]
    results = {}
    for lib, ps in _both(params).items():
        F_ = lib.nn.functional
        h = F_.max_pool2d(F_.conv2d(lib.tensor(x, dtype=lib.float64), ps[0], ps[1], padding=1), 2)
        loss = (F_.conv2d(h, ps[2], ps[3], stride=2) ** 2).sum()
        grads = lib.autograd.grad(loss, ps, create_graph=True)
        dot = sum((g * lib.tensor(v, dtype=lib.float64)).sum() for g, v in zip(grads, vectors))
        results[lib.__name__] = [hv.numpy() for hv in lib.autograd.grad(dot, ps)]
    for m, t in zip(results["minigrad"], results["torch"]):
        np.testing.assert_allclose(m, t, rtol=1e-9, atol=1e-9)
