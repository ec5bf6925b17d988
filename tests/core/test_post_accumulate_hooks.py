"""``Tensor.register_post_accumulate_grad_hook`` and ``autograd.graph.increment_version`` against PyTorch.

Generated programs: leaves with post-accumulate hooks (recording what ``.grad`` holds, or
stepping and clearing it as an optimizer-in-backward does), tensor hooks beside them, and a
sequence of passes (backward, backward with inputs, autograd.grad, create_graph). The hook
calls, in order, and the final gradients must be torch's.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad

torch = pytest.importorskip("torch")

PASSES = ("backward", "backward_inputs", "grad", "create_graph")


def run(lib, hooks_on: list, kinds: list, passes: list, remove_after: int | None):
    log = []
    leaves = [lib.tensor([1.0 + i, -0.5 * i], dtype=lib.float64, requires_grad=True) for i in range(3)]
    handles = []
    for i, (on, kind) in enumerate(zip(hooks_on, kinds)):
        if not on:
            continue
        leaf = leaves[i]
        if kind == "record":
            handles.append(leaf.register_post_accumulate_grad_hook(
                lambda t, i=i: log.append(("post", i, t.grad.detach().numpy().tolist()))))
        elif kind == "step":  # an optimizer step inside backward, then the gradient dropped
            def step(t, i=i):
                with lib.no_grad():
                    t.sub_(0.1 * t.grad)
                log.append(("step", i, t.detach().numpy().tolist()))
                t.grad = None
            handles.append(leaf.register_post_accumulate_grad_hook(step))
        else:  # a tensor hook too: it runs before accumulation
            leaf.register_hook(lambda g, i=i: log.append(("pre", i, g.detach().numpy().tolist())))
            handles.append(leaf.register_post_accumulate_grad_hook(
                lambda t, i=i: log.append(("post", i, t.grad.detach().numpy().tolist()))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's create_graph reference-cycle warning
        for n, kind in enumerate(passes):
            if remove_after is not None and n == remove_after:
                for h in handles:
                    h.remove()
            a, b, c = leaves
            loss = (a * b).sum() + (b * c * c).sum() + a.sum()
            if kind == "backward":
                loss.backward()
            elif kind == "backward_inputs":
                loss.backward(inputs=[leaves[0], leaves[2]])
            elif kind == "grad":
                lib.autograd.grad(loss, [leaves[1]])
            else:
                loss.backward(create_graph=True)
            log.append(("pass", n))
    return log, [None if t.grad is None else t.grad.detach().numpy().tolist() for t in leaves]


@settings(max_examples=120, deadline=None)
@given(hooks_on=st.lists(st.booleans(), min_size=3, max_size=3),
       kinds=st.lists(st.sampled_from(["record", "step", "with_tensor_hook"]), min_size=3, max_size=3),
       passes=st.lists(st.sampled_from(PASSES), min_size=1, max_size=4),
       remove_after=st.one_of(st.none(), st.integers(0, 3)))
def test_post_accumulate_hooks_match_torch(hooks_on, kinds, passes, remove_after):
    (got_log, got_grads), (want_log, want_grads) = (run(lib, hooks_on, kinds, passes, remove_after)
                                                    for lib in (minigrad, torch))
    assert got_grads == want_grads
    assert got_log == want_log  # the same calls in the same order (tests/core/test_engine_order.py: why)


@pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])
def test_refusals(lib):
    x = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        lib.ones(2).register_post_accumulate_grad_hook(lambda t: None)
    x.register_post_accumulate_grad_hook(lambda t: t.grad * 2)
    with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return None."):
        (x * 2).sum().backward()


@pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])
def test_increment_version_makes_a_stale_saved_tensor_an_error(lib):
    x = lib.ones(3, requires_grad=True)
    y = x.exp()
    y.detach().numpy()[0] = 5.0  # a write autograd cannot see
    lib.autograd.graph.increment_version(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    before = [t._version for t in (x, y)]
    lib.autograd.graph.increment_version([x, y])
    assert [t._version for t in (x, y)] == [v + 1 for v in before]
    np.testing.assert_allclose(y.detach().numpy()[1:], np.e, rtol=1e-6)
