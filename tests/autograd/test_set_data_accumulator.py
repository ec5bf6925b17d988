"""``x.data = y`` of another dtype: PyTorch gives the leaf a new gradient accumulator (set_data resets
it), so a graph recorded before still accumulates into ``x.grad`` through the old one, while
``autograd.grad`` with respect to ``x`` finds ``x`` unused in that graph. Compared with torch."""
from __future__ import annotations

import pytest

import minigrad

torch = pytest.importorskip("torch")


def outcome(t, mode, new_dtype):
    x = t.tensor(0.5, dtype=t.float32, requires_grad=True)
    w = t.where(x > 0, x, x) * 3
    x.data = t.tensor(0.125, dtype=getattr(t, new_dtype))
    try:
        if mode == "grad":
            return "ok", [float(g) for g in t.autograd.grad(w, [x])]
        if mode == "grad_of_a_new_graph_too":
            return "ok", [float(g) for g in t.autograd.grad(w + x.abs(), [x])]
        w.backward()
        return "ok", str(x.grad.dtype).split(".")[-1], float(x.grad)
    except RuntimeError:
        return "RuntimeError"


@pytest.mark.parametrize("new_dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["grad", "grad_of_a_new_graph_too", "backward"])
def test_a_graph_recorded_before_the_new_data_as_torch(mode, new_dtype):
    assert outcome(minigrad, mode, new_dtype) == outcome(torch, mode, new_dtype)
