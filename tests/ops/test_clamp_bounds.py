"""``clamp`` with tensor bounds (PyTorch's ``clamp.Tensor``, node ``ClampBackward0``), against torch:
generated inputs on a half-integer grid, so that ties between the input and a bound (where the
gradient's rule matters) come up often."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
SHAPES = [(3,), (2, 3), (1, 3), ()]


def _cases(count: int, seed: int):
    rng = np.random.default_rng(seed)
    while count:
        sx, sl, sh = SHAPES[rng.integers(2)], SHAPES[rng.integers(4)], SHAPES[rng.integers(4)]
        if np.broadcast_shapes(sx, sl, sh) != sx:  # (torch's backward fails when a bound enlarges the output)
            continue
        use = [(True, True), (True, False), (False, True)][rng.integers(3)]  # (min given, max given)
        count -= 1
        yield [rng.integers(-3, 4, s) * 0.5 for s in (sx, sl, sh)], use


def _run(lib, values, use, inplace=False):
    x, low, high = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values)
    bounds = (low if use[0] else None, high if use[1] else None)
    y = (x * 1).clamp_(*bounds) if inplace else x.clamp(*bounds)
    (y * lib.arange(1.0, 1.0 + y.numel(), dtype=lib.float64).reshape(y.shape)).sum().backward()
    grads = [None if t.grad is None or not t.grad.numpy().any() else t.grad.numpy() for t in (x, low, high)]
    return y.detach().numpy(), y.grad_fn.name().split("::")[-1], grads


@pytest.mark.parametrize("inplace", [False, True], ids=["clamp", "clamp_"])
@pytest.mark.parametrize("seed", range(4))
def test_tensor_bounds_match_torch(seed, inplace):
    for values, use in _cases(100, seed):
        (ym, nm, gm), (yt, nt, gt) = _run(minigrad, values, use, inplace), _run(torch, values, use, inplace)
        np.testing.assert_array_equal(ym, yt)
        assert nm == nt
        for mine, theirs in zip(gm, gt):
            assert (mine is None) == (theirs is None), (values, use, gm, gt)
            if mine is not None:
                np.testing.assert_array_equal(mine, theirs)


def test_tensor_bounds_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(5)
    x = minigrad.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    low = minigrad.tensor(rng.standard_normal(3) - 0.5, requires_grad=True)
    high = minigrad.tensor(rng.standard_normal((2, 1)) + 0.5, requires_grad=True)
    assert gradcheck(lambda a, b, c: a.clamp(b, c), (x, low, high))
    assert gradgradcheck(lambda a, b, c: a.clamp(b, c), (x, low, high))
    assert gradcheck(lambda a, b: minigrad.clamp(a, max=b), (x, high))


def test_a_bound_that_enlarges_the_output_gets_its_summed_gradient():
    """torch's own backward fails here (output [3] vs broadcast [1, 3]); the closed form: each
    element of min collects the gradient of the positions where it won."""
    x = minigrad.tensor([0.0, 1.0, 2.0], dtype=minigrad.float64, requires_grad=True)
    low = minigrad.tensor([[1.5], [0.5]], dtype=minigrad.float64, requires_grad=True)
    y = x.clamp(min=low)
    assert y.shape == (2, 3)
    y.sum().backward()
    np.testing.assert_array_equal(low.grad.numpy(), [[2.0], [1.0]])  # 0, 1 < 1.5; 0 < 0.5
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 2.0])  # 2 >= 1.5; 1, 2 >= 0.5


@pytest.mark.parametrize("call", ["x.clamp(lib.zeros(3), 1.0)", "x.clamp(0.0, lib.ones(3))", "x.clamp(min=lib.zeros(3), max=1)",
                                  "x.clamp(None, lib.ones(3))", "lib.clamp(x, min=lib.zeros(2, 1))",
                                  "lib.ones(3, dtype=lib.int64).clamp(lib.zeros(3))", "x.clamp(lib.zeros(4))",
                                  "x.clamp(None, None)", "x.clip(lib.zeros(3), lib.ones(3))", "x.clamp(lib.tensor(0), 1.0)",
                                  "x.clamp(lib.tensor(0.0), lib.ones(3))", "x.clamp_(lib.zeros(3), 1.0)"])
def test_tensor_bound_calls_as_in_torch(call):
    outcomes = []
    for lib in (minigrad, torch):
        x = lib.tensor([-1.0, 0.5, 2.0])
        try:
            y = eval(call)
            outcomes.append(("ok", str(y.dtype).split(".")[-1], y.tolist()))
        except Exception as e:  # noqa: BLE001  (the type is what is compared)
            outcomes.append((type(e).__name__,))
    assert outcomes[0] == outcomes[1]
