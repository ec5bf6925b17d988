"""``minigrad.<name>`` as PyTorch's ``torch.<name>``, for every name the ops declare.

The top-level functions are made from the ops' own declarations
(``@tensor_method(top_level=True)`` in ``minigrad/ops/``), not from a hand-kept
list, so these tests walk the declarations: every such name must exist in
torch, and every one that takes just a tensor must give torch's values,
gradients and ``out=`` behaviour.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import minigrad
from minigrad.ops.registry import TOP_LEVEL

torch = pytest.importorskip("torch")

# Declared one-tensor functions (the method takes only self): exp, sin, floor, relu, ..., exp_.
ONE_TENSOR = sorted(name for name, fn in TOP_LEVEL.items()
                    if list(inspect.signature(fn).parameters) == ["self"] and name not in ("t",))
# Values in (0.1, 0.9): inside the domain of every one of them (log, sqrt, rsqrt, acos-like ...).
X = np.random.default_rng(0).uniform(0.1, 0.9, (2, 3))


def test_the_walk_finds_the_declared_functions():
    assert {"exp", "sum", "add", "matmul", "exp_", "eq", "clip"} <= set(TOP_LEVEL)
    assert {"exp", "sin", "floor", "relu", "exp_", "neg"} <= set(ONE_TENSOR)


@pytest.mark.parametrize("name", sorted(TOP_LEVEL))
def test_every_declared_top_level_name_is_torchs(name):
    assert callable(getattr(torch, name, None)), f"minigrad.{name} exists, torch.{name} does not"
    assert callable(getattr(minigrad, name)) and getattr(minigrad, name).__name__ == name


def _run(lib, name: str):
    x = lib.tensor(X, requires_grad=True)
    out = getattr(lib, name)(x * 1 if name.endswith("_") else x)  # (in place on a copy: x stays a leaf)
    grad = None
    if out.requires_grad:
        out.sum().backward()
        grad = x.grad.numpy()
    return out.detach().numpy(), grad


@pytest.mark.parametrize("name", ONE_TENSOR)
def test_one_tensor_function_matches_torch(name):
    (mv, mg), (tv, tg) = _run(minigrad, name), _run(torch, name)
    assert mv.dtype == tv.dtype
    np.testing.assert_allclose(mv, tv, rtol=1e-12, atol=1e-12)
    assert (mg is None) == (tg is None), f"gradient: minigrad {mg}, torch {tg}"
    if mg is not None:
        np.testing.assert_allclose(mg, tg, rtol=1e-12, atol=1e-12)


def _takes_out(lib, name: str) -> bool:
    try:
        getattr(lib, name)(lib.tensor(X), out=lib.zeros(2, 3, dtype=lib.float64))
    except TypeError:
        return False
    return True


@pytest.mark.parametrize("name", ONE_TENSOR + ["detach", "numel", "is_floating_point"])
def test_out_is_accepted_where_torch_accepts_it(name):
    assert _takes_out(minigrad, name) == _takes_out(torch, name)


@pytest.mark.parametrize("name", [n for n in ONE_TENSOR if _takes_out(torch, n)])
def test_out_writes_into_the_given_tensor(name):
    results = []
    for lib in (minigrad, torch):
        x, out = lib.tensor(X), lib.zeros(2, 3, dtype=lib.float64)
        returned = getattr(lib, name)(x, out=out)
        assert returned is out
        results.append(out.numpy())
    np.testing.assert_allclose(*results, rtol=1e-12, atol=1e-12)
