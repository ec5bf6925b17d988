"""The indices output an op saves for backward (sort, topk, max(dim), cummax, kthvalue, median, mode).

PyTorch saves that output as the tensor itself, since it has no history: backward scatters at its
values as they are then, a ``.data`` of another integer dtype included, refuses a float one, and a
change in place is a version error that names no producer. Compared with torch on every op.
"""
from __future__ import annotations

import pytest

import minigrad

torch = pytest.importorskip("torch")

OPS = {
    "sort": lambda t, x: t.sort(x, -1),
    "sort_descending": lambda t, x: t.sort(x, -1, descending=True),
    "topk": lambda t, x: t.topk(x, 1),
    "max_dim": lambda t, x: t.max(x, -1),
    "min_dim_keepdim": lambda t, x: t.min(x, -1, keepdim=True),
    "cummax": lambda t, x: t.cummax(x, -1),
    "kthvalue": lambda t, x: t.kthvalue(x, 1, -1),
    "median_dim": lambda t, x: t.median(x, -1),
    "mode": lambda t, x: t.mode(x, -1),
}
SHAPES = [(), (3,), (2, 3)]
VALUES = [3.0, 1.0, 2.0, 0.5, 4.0, 6.0]


def outcome(t, op, shape, change):
    n = 1
    for s in shape:
        n *= s
    x = t.tensor(VALUES[:n], dtype=t.float64).reshape(shape).requires_grad_()
    values, indices = OPS[op](t, x * 1)
    if change == "float":
        indices.data = t.zeros(indices.shape)
    elif change == "int32_reversed":
        indices.data = indices.flip(-1).to(t.int32) if indices.ndim else indices.to(t.int32)
    elif change == "in_place":
        indices.add_(0)
    try:
        values.backward(t.ones(values.shape, dtype=t.float64))
    except RuntimeError as e:
        return "RuntimeError", "version" if "modified by an inplace operation" in str(e) else str(e)
    return "ok", x.grad.tolist()


@pytest.mark.parametrize("change", ["none", "float", "int32_reversed", "in_place"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(OPS))
def test_backward_uses_the_indices_output_as_torch(op, shape, change):
    if op == "topk" and shape == (2, 3) and change == "int32_reversed":
        pytest.skip("topk's indices are (2, 1): flipping them changes nothing")
    assert outcome(minigrad, op, shape, change) == outcome(torch, op, shape, change)


def test_a_changed_indices_output_names_no_producer():
    x = minigrad.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, indices = minigrad.sort(x * 1)
    indices.add_(0)
    with pytest.raises(RuntimeError, match=r"\[minigrad.int64 \[3\]\] is at version 1") as info:
        values.sum().backward()
    assert "which is output" not in str(info.value)
