"""The backward engine: graph shapes, accumulation, retain_graph, hooks, grad modes,
autograd.grad, the order of execution, and freeing memory.

Expected gradients are closed forms computed with NumPy.
"""
from __future__ import annotations

import gc
import tracemalloc
import warnings
import weakref

import numpy as np
import pytest

import minigrad
from minigrad.autograd import Function, engine
from minigrad.autograd.function import FunctionCtx


def leaf(values, dtype=np.float64):
    return minigrad.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def close(t, expected, rtol=1e-12, atol=1e-12):
    assert t is not None, "gradient is None"
    np.testing.assert_allclose(t.detach().numpy(), expected, rtol=rtol, atol=atol)


def graph_nodes(root):
    """Every node reachable from root (a plain DFS, independent of the engine)."""
    seen, stack = {root}, [root]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


# -- graph shapes ---------------------------------------------------------------------
def test_diamond():
    xv = np.array([0.3, -0.7, 1.1])
    x = leaf(xv)
    a = x * 2.0
    b = a * 3.0          # path 1
    c = a.exp()          # path 2
    loss = (b * c).sum()  # the paths rejoin
    loss.backward()
    av = 2 * xv
    close(x.grad, 2 * (3 * np.exp(av) + 3 * av * np.exp(av)))


def test_double_diamond_with_shared_leaf_on_every_level():
    xv = np.array([0.5, 1.5])
    x = leaf(xv)
    a = x * x          # x twice in one node
    b = a + x          # and again
    c = b * a          # a twice across levels
    c.sum().backward()
    # c = (x^2 + x) * x^2 = x^4 + x^3
    close(x.grad, 4 * xv**3 + 3 * xv**2)


def test_heavy_fan_out_and_hook_sees_full_gradient_once():
    x = leaf([1.0, -2.0])
    calls = []
    x.register_hook(lambda g: calls.append(g.numpy().copy()))
    total = x * 0.0
    for i in range(1000):
        total = total + x * float(i)
    total.sum().backward()
    expected = sum(range(1000))
    close(x.grad, [expected, expected])
    assert len(calls) == 1
    np.testing.assert_allclose(calls[0], [expected, expected])


def test_fan_out_same_node_many_inputs():
    x = leaf([2.0])
    parts = [x for _ in range(1000)]
    out = minigrad.stack(parts).sum()
    out.backward()
    close(x.grad, [1000.0])


def test_deep_chain_no_recursion_error():
    x = leaf([1.0, 2.0])
    y = x
    for _ in range(100_000):
        y = -y  # NegBackward0 saves nothing: cheap
    y.sum().backward()
    close(x.grad, [1.0, 1.0])  # an even number of negations
    del y  # freeing a 100,000-node chain must not overflow either


def test_deep_chain_with_saved_tensors():
    x = leaf([0.5])
    y = x
    for _ in range(3000):
        y = y * 1.0001
    y.backward()
    close(x.grad, [1.0001**3000], rtol=1e-10)


# -- accumulation and retain_graph -------------------------------------------------------
def test_gradient_accumulates_across_backward_calls():
    xv = np.array([0.2, 0.4])
    x = leaf(xv)
    (x * x).sum().backward()
    close(x.grad, 2 * xv)
    (x * x * x).sum().backward()
    close(x.grad, 2 * xv + 3 * xv**2)
    x.grad = None
    (x * 5.0).sum().backward()
    close(x.grad, [5.0, 5.0])


def test_accumulated_grad_is_not_aliased_to_a_hook_gradient():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(g))
    (x * 3.0).sum().backward()
    (x * 3.0).sum().backward()
    close(x.grad, [6.0, 6.0])
    close(seen[0], [3.0, 3.0])  # the first gradient object was not modified by accumulation


def test_second_backward_raises_without_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"retain_graph=True"):
        y.backward()


def test_retain_graph_allows_second_backward_and_doubles_grad():
    xv = np.array([1.0, 2.0])
    x = leaf(xv)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    close(x.grad, 2 * first)
    close(x.grad, 2 * (np.exp(xv) * xv + np.exp(xv)))


def test_backward_on_a_leaf_itself():
    x = leaf(3.0)
    x.backward()
    close(x.grad, 1.0)
    y = leaf([1.0, 2.0])
    y.backward(minigrad.tensor([0.5, 2.0], dtype=minigrad.float64))
    close(y.grad, [0.5, 2.0])


def test_create_graph_implies_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(create_graph=True)
    y.backward()  # the graph was retained
    close(x.grad.detach(), 2 * (np.exp([1.0, 2.0]) * (np.array([1.0, 2.0]) + 1)))


def test_backward_with_explicit_gradient():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    y.backward(minigrad.tensor([1.0, 0.5, 0.0], dtype=minigrad.float64))
    close(x.grad, [2.0, 2.0, 0.0])


# -- hooks -------------------------------------------------------------------------------
def test_hook_on_non_leaf_gets_full_gradient_once():
    x = leaf([1.0, 2.0])
    h = x * 2.0
    calls = []
    h.register_hook(lambda g: calls.append(g.numpy().copy()))
    (h * 3.0 + h * 4.0).sum().backward()
    assert len(calls) == 1
    np.testing.assert_allclose(calls[0], [7.0, 7.0])
    close(x.grad, [14.0, 14.0])


def test_hook_replacement_is_used_leaf_and_non_leaf():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 10)
    (x * 3.0).sum().backward()
    close(x.grad, [30.0, 30.0])

    z = leaf([1.0, 2.0])
    h = z * 2.0
    h.register_hook(lambda g: g * 0 + 1.5)
    (h * 100.0).sum().backward()
    close(z.grad, [3.0, 3.0])  # 1.5 (replaced) * 2


def test_hooks_chain_in_registration_order():
    x = leaf([1.0])
    seen = []
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: seen.append(g.item()) or g * 2)
    (x * 3.0).sum().backward()
    assert seen == [4.0]
    close(x.grad, [8.0])


def test_hook_returning_none_keeps_gradient():
    x = leaf([1.0])
    x.register_hook(lambda g: None)
    (x * 3.0).backward()
    close(x.grad, [3.0])


def test_handle_remove():
    x = leaf([1.0, 2.0])
    calls = []
    handle = x.register_hook(lambda g: calls.append(1) or g * 100)
    handle.remove()
    (x * 3.0).sum().backward()
    assert calls == []
    close(x.grad, [3.0, 3.0])

    h = leaf([1.0]) * 2.0
    handle = h.register_hook(lambda g: calls.append(1) or g * 100)
    handle.remove()
    h.backward()
    assert calls == []


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError):
        minigrad.tensor([1.0]).register_hook(lambda g: g)


# -- retain_grad ---------------------------------------------------------------------------
def test_retain_grad():
    xv = np.array([0.5, -1.0])
    x = leaf(xv)
    h = x * x
    h.retain_grad()
    loss = (h * 3.0 + h.exp()).sum()
    loss.backward()
    close(h.grad, 3.0 + np.exp(xv**2))
    close(x.grad, (3.0 + np.exp(xv**2)) * 2 * xv)


def test_non_leaf_grad_is_none_and_warns_without_retain_grad():
    x = leaf([1.0])
    h = x * 2.0
    h.backward()
    with pytest.warns(UserWarning, match="retain_grad"):
        assert h.grad is None


def test_retain_grad_accumulates_and_sees_hook_result():
    x = leaf([1.0])
    h = x * 2.0
    h.retain_grad()
    h.register_hook(lambda g: g * 5)
    (h * 3.0).backward(retain_graph=True)
    close(h.grad, [15.0])
    (h * 3.0).backward()
    close(h.grad, [30.0])


# -- grad modes ------------------------------------------------------------------------------
def test_no_grad():
    x = leaf([1.0])
    with minigrad.no_grad():
        y = x * 2.0
        assert not minigrad.is_grad_enabled()
    assert minigrad.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_enable_grad_inside_no_grad():
    x = leaf([1.0])
    with minigrad.no_grad():
        with minigrad.enable_grad():
            y = x * 2.0
        z = x * 2.0
    assert y.requires_grad and y.grad_fn is not None
    assert not z.requires_grad


def test_set_grad_enabled():
    x = leaf([1.0])
    with minigrad.set_grad_enabled(False):
        assert not (x * 2.0).requires_grad
    assert minigrad.is_grad_enabled()
    with minigrad.set_grad_enabled(True):
        assert (x * 2.0).requires_grad
    minigrad.set_grad_enabled(False)
    try:
        assert not minigrad.is_grad_enabled()
        assert not (x * 2.0).requires_grad
    finally:
        minigrad.set_grad_enabled(True)
    assert minigrad.is_grad_enabled()


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with minigrad.no_grad():
            raise ValueError
    assert minigrad.is_grad_enabled()


def test_no_grad_as_decorator_with_parentheses():
    x = leaf([1.0])

    @minigrad.no_grad()
    def f(t):
        return t * 2.0

    y = f(x)
    assert not y.requires_grad
    assert minigrad.is_grad_enabled()
    assert f.__name__ == "f"


def test_no_grad_as_bare_decorator():
    # PyTorch 2.x accepts @torch.no_grad without parentheses
    x = leaf([1.0])

    @minigrad.no_grad
    def f(t):
        return t * 2.0

    assert not f(x).requires_grad
    assert minigrad.is_grad_enabled()


def test_enable_grad_as_decorator_inside_no_grad():
    x = leaf([1.0])

    @minigrad.enable_grad()
    def f(t):
        return t * 2.0

    with minigrad.no_grad():
        y = f(x)
        assert not minigrad.is_grad_enabled()
    assert y.requires_grad


# -- detach ----------------------------------------------------------------------------------
def test_detach_shares_memory_and_version_counter():
    x = leaf([1.0, 2.0])
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    v = x._version
    d.add_(1.0)
    assert x._version == v + 1
    close(x.detach(), [2.0, 3.0])


def test_detach_inplace_change_is_caught_by_saved_tensor_check():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    x.detach().mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


# -- autograd.grad ----------------------------------------------------------------------------
def test_grad_leaves_dot_grad_untouched():
    xv = np.array([1.0, 3.0])
    x = leaf(xv)
    (gx,) = minigrad.autograd.grad((x**3).sum(), x)
    close(gx, 3 * xv**2)
    assert x.grad is None
    assert not gx.requires_grad


def test_grad_allow_unused():
    x, z = leaf([1.0]), leaf([2.0])
    y = (x * 2.0).sum()
    with pytest.raises(RuntimeError, match="allow_unused"):
        minigrad.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = minigrad.autograd.grad(y, [x, z], allow_unused=True)
    close(gx, [2.0])
    assert gz is None


def test_grad_create_graph_second_derivative():
    xv = np.array([0.5, 2.0])
    x = leaf(xv)
    (g,) = minigrad.autograd.grad((x**3).sum(), x, create_graph=True)
    assert g.requires_grad
    (gg,) = minigrad.autograd.grad(g.sum(), x)
    close(gg, 6 * xv)
    # third derivative through create_graph again
    x2 = leaf(xv)
    (g1,) = minigrad.autograd.grad((x2**3).sum(), x2, create_graph=True)
    (g2,) = minigrad.autograd.grad(g1.sum(), x2, create_graph=True)
    (g3,) = minigrad.autograd.grad(g2.sum(), x2)
    close(g3, [6.0, 6.0])


def test_backward_create_graph_makes_grad_differentiable():
    xv = np.array([0.5, 2.0])
    x = leaf(xv)
    (x.exp() * x).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    (gg,) = minigrad.autograd.grad(g.sum(), x)
    close(gg, np.exp(xv) * (xv + 2))


def test_grad_of_non_leaf_intermediate():
    xv = np.array([0.5, -2.0])
    x = leaf(xv)
    h = x * 2.0
    y = (h * h).sum()
    gh, gx = minigrad.autograd.grad(y, [h, x])
    close(gh, 2 * (2 * xv))
    close(gx, 8 * xv)


def test_grad_with_grad_outputs_and_multiple_outputs():
    x = leaf([1.0, 2.0])
    a, b = x * 2.0, x * x
    (g,) = minigrad.autograd.grad([a, b], x, grad_outputs=[minigrad.ones_like(a), minigrad.ones_like(b) * 3])
    close(g, [2 + 6 * 1.0, 2 + 6 * 2.0])


def test_grad_on_input_not_requiring_grad_raises():
    x = leaf([1.0])
    c = minigrad.tensor([1.0])
    with pytest.raises(RuntimeError):
        minigrad.autograd.grad((x * c).sum(), c)


def test_backward_inputs_accumulates_only_into_those():
    xv, wv = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    x, w = leaf(xv), leaf(wv)
    loss = ((x * w) ** 2).sum()
    loss.backward(inputs=[x])
    close(x.grad, 2 * xv * wv**2)
    assert w.grad is None
    loss2 = (x * w).sum()
    loss2.backward(inputs=[w])
    close(w.grad, xv)
    close(x.grad, 2 * xv * wv**2)  # unchanged


def test_backward_inputs_non_leaf():
    x = leaf([1.0, 2.0])
    h = x * 3.0
    h.retain_grad()
    (h * h).sum().backward(inputs=[h])
    close(h.grad, [6.0, 12.0])
    assert x.grad is None


# -- engine order ------------------------------------------------------------------------------
def _build_graph():
    x = leaf([0.3, -0.4, 0.9])
    w = leaf([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]])
    a = x.exp()
    b = a @ w
    c = (a * 2.0).sum() * b
    d = minigrad.cat([b, c, b * a[:2]]).tanh()
    loss = d.sum() + a.sum()
    return x, w, loss


def test_topological_order_every_node_after_its_consumers():
    x, w, loss = _build_graph()
    order = engine.topological_order([loss.grad_fn])
    assert len(order) == len(set(order)), "a node appears twice"
    assert set(order) == graph_nodes(loss.grad_fn)
    position = {node: i for i, node in enumerate(order)}
    for node in order:
        for child, _ in node.next_functions:
            if child is not None:
                assert position[child] > position[node], f"{child.name()} before its consumer {node.name()}"


def test_use_order_hook_is_really_used():
    x, w, loss = _build_graph()
    x_ref, w_ref, loss_ref = _build_graph()
    loss_ref.backward()

    calls = []

    def recording(roots):
        calls.append(list(roots))
        return engine.topological_order(roots)

    with engine.use_order(recording):
        loss.backward(retain_graph=True)
    assert len(calls) == 1 and calls[0][0] is loss.grad_fn
    close(x.grad, x_ref.grad.numpy())
    close(w.grad, w_ref.grad.numpy())

    x.grad = w.grad = None
    with engine.use_order(lambda roots: list(reversed(engine.topological_order(roots)))):
        loss.backward(retain_graph=True)
    wrong = x.grad is None or not np.allclose(x.grad.numpy(), x_ref.grad.numpy())
    assert wrong, "a reversed order gave the right gradients: use_order's function was ignored"

    # the default order is back after the block
    x.grad = w.grad = None
    loss.backward()
    close(x.grad, x_ref.grad.numpy())


# -- freeing memory ---------------------------------------------------------------------------------
class _Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * grad * x


def _graph_refs():
    """Build a varied graph; return (x, loss, weakrefs to its intermediates and nodes)."""
    x = leaf(np.linspace(-1, 1, 12).reshape(3, 4))
    w = leaf(np.linspace(0.5, 1.5, 8).reshape(4, 2))
    h1 = x.exp()
    h2 = h1 * x
    h2.retain_grad()
    h3 = (h2 @ w).sigmoid()
    h4 = h3.softmax(1)[:, [1, 1, 0]]
    h5 = _Square.apply(h4)
    h6 = h5.max(1).values + h5.min(0, keepdim=True).values.sum()
    t = h6 * 1.0
    t.add_(h6)  # in-place on a non-leaf
    loss = t.log().sum() + minigrad.where(x > 0, x, x * 2.0).sum()
    tensors = [h1, h2, h3, h4, h5, h6, t]
    refs = [weakref.ref(o) for o in tensors] + [weakref.ref(o.grad_fn) for o in tensors]
    refs += [weakref.ref(n) for n in graph_nodes(loss.grad_fn)]
    return x, w, loss, refs


def test_graph_freed_after_backward_and_del_with_gc_disabled():
    gc.collect()
    gc.disable()
    try:
        x, w, loss, refs = _graph_refs()
        loss.backward()
        del loss
        alive = [r() for r in refs if r() is not None]
        names = sorted({type(a).__name__ if not isinstance(a, minigrad.Tensor) else "Tensor" for a in alive})
        assert not alive, f"{len(alive)} objects of the graph still alive (reference cycle?): {names}"
        assert x.grad is not None and w.grad is not None
    finally:
        gc.enable()


def test_graph_freed_by_del_without_backward_with_gc_disabled():
    gc.collect()
    gc.disable()
    try:
        x, w, loss, refs = _graph_refs()
        del loss
        assert all(r() is None for r in refs)
    finally:
        gc.enable()


def test_saved_tensors_freed_after_backward_while_graph_alive():
    x = leaf([0.5, 1.5])
    a = x + 1.0        # AddBackward saves nothing
    b = a * a          # MulBackward0 saves a (an input)
    e = b.exp()        # ExpBackward0 saves e (an output)
    loss = e.sum()
    a_ref, e_data_ref = weakref.ref(a), weakref.ref(e._data)
    del a, b, e
    assert a_ref() is not None and e_data_ref() is not None  # still needed by backward
    loss.backward()  # retain_graph=False: every node frees what it saved
    assert loss.grad_fn is not None  # the graph itself is still alive...
    assert e_data_ref() is None, "ExpBackward0 still holds its saved output"
    assert a_ref() is None, "MulBackward0 still holds its saved input after backward"


def test_saved_tensors_freed_right_after_each_node_runs():
    x = leaf([0.5, 1.5])
    h = x.exp()
    y = h * h
    mul_node = y.grad_fn
    loss = y.sum()
    states = []

    def hook(g):  # runs when ExpBackward0 starts, i.e. after MulBackward0 ran
        try:
            mul_node.saved_tensors
            states.append("alive")
        except RuntimeError as e:
            states.append("freed" if "second time" in str(e) else repr(e))
        return g

    h.register_hook(hook)
    loss.backward()
    assert states == ["freed"]
    exp_node = h.grad_fn
    for node in (mul_node, exp_node):
        with pytest.raises(RuntimeError, match="retain_graph=True"):
            node.saved_tensors


def test_saved_tensors_kept_with_retain_graph():
    x = leaf([0.5, 1.5])
    y = x * x
    y.sum().backward(retain_graph=True)
    (saved_a, saved_b) = y.grad_fn.saved_tensors
    close(saved_a, [0.5, 1.5])


def _train(steps, record_at):
    minigrad.manual_seed(0)
    rng = np.random.default_rng(0)
    X = minigrad.tensor(rng.standard_normal((32, 4)))
    Y = minigrad.tensor(np.sin(rng.standard_normal((32, 1))))
    W1 = minigrad.tensor(rng.standard_normal((4, 16)) * 0.5, requires_grad=True)
    b1 = minigrad.zeros(16, dtype=minigrad.float64, requires_grad=True)
    W2 = minigrad.tensor(rng.standard_normal((16, 1)) * 0.5, requires_grad=True)
    b2 = minigrad.zeros(1, dtype=minigrad.float64, requires_grad=True)
    params = [W1, b1, W2, b2]
    first_loss = last_loss = None
    records = {}
    for step in range(steps):
        h = (X @ W1 + b1).tanh()
        out = h @ W2 + b2
        loss = ((out - Y) ** 2).mean() + 1e-4 * (W1 * W1).sum()
        loss.backward()
        last_loss = loss.item()
        first_loss = last_loss if first_loss is None else first_loss
        with minigrad.no_grad():
            for p in params:
                p -= 0.05 * p.grad
                if step % 2:
                    p.grad = None
                else:
                    p.grad.zero_()
        del h, out, loss
        if step in record_at:
            objects = len(gc.get_objects())  # before any collection: leaked cycles are still counted
            gc.collect()  # empties CPython's free lists, which otherwise look like growth to tracemalloc
            records[step] = (objects, tracemalloc.get_traced_memory()[0])
    return first_loss, last_loss, records


def test_training_loop_memory_is_flat():
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        first_loss, last_loss, records = _train(2000, record_at={499, 1999})
    finally:
        tracemalloc.stop()
        gc.enable()
    assert last_loss < 0.5 * first_loss, "the MLP did not train"
    objects_first, memory_first = records[499]
    objects_last, memory_last = records[1999]
    # A leak of a single object (or reference cycle) per step adds 1500 objects over the last 1500 steps.
    assert objects_last - objects_first < 150, (objects_first, objects_last)
    # A leak of one ~100-byte object per step is 150 KB; of one 32x16 float64 array, 6 MB.
    assert memory_last - memory_first < 64_000, (memory_first, memory_last)


# -- Function outputs: non-differentiable, unused ----------------------------------------------------
class _SplitScale(Function):
    """Two outputs: 2x and 3x. Records the gradients it receives."""

    received: list = []
    materialize = True

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(_SplitScale.materialize)
        return x * 2.0, x * 3.0

    @staticmethod
    def backward(ctx, g1, g2):
        _SplitScale.received.append((g1, g2))
        total = None
        if g1 is not None:
            total = g1 * 2.0
        if g2 is not None:
            total = g2 * 3.0 if total is None else total + g2 * 3.0
        return total


def test_unused_output_gets_materialized_zeros():
    _SplitScale.received, _SplitScale.materialize = [], True
    x = leaf([1.0, 2.0])
    a, b = _SplitScale.apply(x)
    (a * 5.0).sum().backward()
    (g1, g2), = _SplitScale.received
    close(g1, [5.0, 5.0])
    assert isinstance(g2, minigrad.Tensor) and g2.shape == b.shape
    close(g2, [0.0, 0.0])
    close(x.grad, [10.0, 10.0])


def test_unused_output_gets_none_without_materialize():
    _SplitScale.received, _SplitScale.materialize = [], False
    try:
        x = leaf([1.0, 2.0])
        a, b = _SplitScale.apply(x)
        (b * 5.0).sum().backward()
        (g1, g2), = _SplitScale.received
        assert g1 is None
        close(g2, [5.0, 5.0])
        close(x.grad, [15.0, 15.0])
    finally:
        _SplitScale.materialize = True


class _ValueAndRank(Function):
    received: list = []

    @staticmethod
    def forward(ctx, x):
        order = minigrad.tensor(np.argsort(np.argsort(x.detach().numpy())).astype(np.float64))
        ctx.mark_non_differentiable(order)
        return x * 1.0, order

    @staticmethod
    def backward(ctx, g, g_order):
        _ValueAndRank.received.append(g_order)
        return g


def test_mark_non_differentiable():
    _ValueAndRank.received = []
    x = leaf([3.0, 1.0, 2.0])
    value, order = _ValueAndRank.apply(x)
    assert value.requires_grad and not order.requires_grad
    assert order.grad_fn is None
    close(order, [2.0, 0.0, 1.0])
    (value * order).sum().backward()
    close(x.grad, [2.0, 0.0, 1.0])
    (g_order,) = _ValueAndRank.received
    assert isinstance(g_order, minigrad.Tensor)
    close(g_order, [0.0, 0.0, 0.0])


def test_max_dim_indices_are_non_differentiable():
    x = leaf([[1.0, 5.0], [7.0, 2.0]])
    values, indices = x.max(1)
    assert values.requires_grad and not indices.requires_grad
    assert indices.dtype == minigrad.int64
    values.sum().backward()
    close(x.grad, [[0.0, 1.0], [1.0, 0.0]])


# -- edges and gradient slots, compared with torch ------------------------------------------------
EDGE_CASES = [
    "x * 2", "2 * x", "x + 2", "2 + x", "x - 2", "2 - x", "x / 2", "2 / x", "x ** 2", "2 ** x", "x * w",
    "x[0]", "x.sum(0)", "x.max(0).values", "x.reshape(3, 1)", "x.clamp(0, 1)", "x.masked_fill(x > 0, 1.0)",
    "x.index_select(0, lib.tensor([0]))", "x.gather(0, lib.tensor([0]))", "x[lib.tensor([0, 1])]",
    "lib.where(x > 0, x, 0.0)", "lib.where(x > 0, 0.0, x)", "x.expand(2, 3)", "x.sort().values",
]


def _edges(lib, expression: str) -> list:
    """For each edge of the node ``expression`` records: which leaf it leads to, or None."""
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = lib.tensor([0.5, 0.5, 0.5])
    node = eval(expression, {"lib": lib, "x": x, "w": w}).grad_fn
    return [None if child is None else type(child).__name__ for child, _ in node.next_functions]


@pytest.mark.parametrize("expression", EDGE_CASES)
def test_next_functions_have_one_edge_per_differentiable_argument_as_in_torch(expression):
    torch = pytest.importorskip("torch")
    assert _edges(minigrad, expression) == _edges(torch, expression)


def _hook_calls(lib) -> list:
    """What node hooks see on a custom Function with a non-tensor argument and on max(dim)."""

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, k, b):
            return a * k + b

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, g  # b needs no gradient: PyTorch still hands this one to post-hooks

    seen = []
    a, b = lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0])
    y = Scale.apply(a, 3.0, b)
    y.grad_fn.register_hook(lambda gi, go: seen.append(("post", [None if g is None else g.tolist() for g in gi])))
    values = lib.tensor([1.0, 3.0, 2.0], requires_grad=True).max(0).values
    values.grad_fn.register_prehook(lambda go: seen.append(("pre", [None if g is None else g.tolist() for g in go])))
    (y.sum() + values).backward()
    return seen


def test_node_hooks_see_one_gradient_per_edge_and_per_differentiable_output_as_in_torch():
    torch = pytest.importorskip("torch")
    assert _hook_calls(minigrad) == _hook_calls(torch)
