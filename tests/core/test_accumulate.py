"""AccumulateGrad takes a leaf's first gradient itself when nothing else can see it, as PyTorch
does, and copies it otherwise: a gradient held elsewhere must never become an alias of ``.grad``
(which later passes add into in place)."""
from __future__ import annotations

import weakref

import numpy as np

import minigrad


def _double_keeping_a_weakref(refs: list):
    class Double(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            out = g * 2.0
            refs.append(weakref.ref(out))
            return out

    return Double


def test_a_gradient_nothing_else_holds_becomes_grad_without_a_copy():
    refs = []
    x = minigrad.tensor([1.5, -2.0], requires_grad=True)
    _double_keeping_a_weakref(refs).apply(x).sum().backward()
    assert x.grad is refs[0]()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_a_gradient_a_hook_holds_is_copied():
    held = []
    w = minigrad.ones(3, requires_grad=True)
    q = w * 2.0
    q.register_hook(held.append)
    (q * 3.0).sum().backward()
    (w * 5.0).sum().backward()  # adds into w.grad in place
    np.testing.assert_array_equal(held[0].numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(w.grad.numpy(), [11.0, 11.0, 11.0])


def test_one_gradient_sent_to_two_leaves_is_not_shared():
    x, y = minigrad.zeros(2, requires_grad=True), minigrad.zeros(2, requires_grad=True)
    (x + y).sum().backward()
    assert x.grad is not y.grad and not np.shares_memory(x.grad.numpy(), y.grad.numpy())
    (x * 4.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])
    np.testing.assert_array_equal(y.grad.numpy(), [1.0, 1.0])


def test_a_gradient_passed_to_backward_is_copied():
    x = minigrad.zeros(2, requires_grad=True)
    g = minigrad.tensor([1.0, 2.0])
    x.backward(g)
    (x * 1.0).backward(g)
    np.testing.assert_array_equal(g.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_a_gradient_that_requires_grad_is_not_taken():
    """A custom backward may return a fresh tensor that requires grad; without create_graph
    ``.grad`` never does (the copy is a plain tensor)."""
    class Odd(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return minigrad.tensor([3.0, 4.0], requires_grad=True)

    x = minigrad.zeros(2, requires_grad=True)
    Odd.apply(x).sum().backward()
    assert not x.grad.requires_grad and x.grad.grad_fn is None
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])
