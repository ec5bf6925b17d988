"""as_strided and as_strided_scatter against torch 2.13.

Hypothesis draws a base (row-major or transposed, sliced or not), sizes, strides (0 too: repeated
elements) and storage offsets, inside the storage and beyond it: the values, the exception
types, the gradient of the base by backward, and for as_strided_scatter those of the input and
of src, must be torch's; gradcheck and gradgradcheck check the derivatives without torch.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _base(lib, rows: int, columns: int, transposed: bool, sliced: bool, requires_grad: bool):
    leaf = lib.tensor(np.arange(rows * columns, dtype=np.float64).reshape(rows, columns) / 7 - 1,
                      requires_grad=requires_grad)
    x = leaf * 1  # (a non-leaf base: its storage is its own memory)
    x = x.t() if transposed else x
    return leaf, (x[1:] if sliced and x.shape[0] > 1 else x)


def _run(lib, shape, transposed, sliced, call, requires_grad=True):
    leaf, x = _base(lib, *shape, transposed, sliced, requires_grad)
    try:
        out = call(lib, x)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e), None, None
    grad = None
    if requires_grad and out.requires_grad and out.numel():
        (out * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        grad = leaf.grad.numpy()
    return "ok", out.detach().numpy().copy(), grad


def _compare(shape, transposed, sliced, call) -> None:
    mine, theirs = _run(minigrad, shape, transposed, sliced, call), _run(torch, shape, transposed, sliced, call)
    assert mine[0] == theirs[0], f"minigrad: {mine[0]}, torch: {theirs[0]}"
    if mine[0] == "ok":
        np.testing.assert_array_equal(mine[1], theirs[1])
        assert (mine[2] is None) == (theirs[2] is None)
        if mine[2] is not None:
            np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-12, atol=1e-12)




@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_as_strided_matches_torch(data):
    shape = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    transposed, sliced = data.draw(st.booleans()), data.draw(st.booleans())
    size = tuple(data.draw(st.lists(st.integers(0, 3), max_size=3)))
    stride = tuple(data.draw(st.integers(0, 3)) for _ in size)
    offset = data.draw(st.none() | st.integers(0, 8))
    if data.draw(st.booleans()):
        _compare(shape, transposed, sliced, lambda lib, x: x.as_strided(size, stride, offset))
    else:  # a view of it, then more math
        _compare(shape, transposed, sliced, lambda lib, x: lib.as_strided(x, size, stride, offset).exp())


def _scatter(lib, x, src, size, stride, offset):
    """minigrad's as_strided_scatter; for torch, the steps its documentation gives (a clone, written through
    as_strided). torch 2.13's own gradient for the input is wrong: it keeps the written places, not the others
    (``as_strided_scatter(torch.zeros(3, requires_grad=True), torch.ones(2), (2,), (2,))`` gives it (1, 0, 1))."""
    if lib is minigrad:
        return minigrad.as_strided_scatter(x, src, size, stride, offset)
    out = x.clone()
    out.as_strided(size, stride, offset or 0).copy_(src)
    return out


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_as_strided_scatter_matches_torch(data):
    shape = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    transposed, sliced = data.draw(st.booleans()), data.draw(st.booleans())
    size = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    stride = tuple(data.draw(st.integers(0, 2)) for _ in size)
    offset = data.draw(st.none() | st.integers(0, 6))
    rows, columns = shape[::-1] if transposed else shape
    storage = rows * columns - (columns if sliced and rows > 1 else 0)
    # (in the storage, and no place written twice: which write wins is not PyTorch's promise)
    places = [(offset or 0) + sum(i * s for i, s in zip(index, stride)) for index in np.ndindex(*size)]
    assume(max(places, default=0) < storage and len(set(places)) == len(places))
    results = []
    for lib in (minigrad, torch):
        leaf, x = _base(lib, *shape, transposed, sliced, True)
        src = lib.linspace(5, 6, int(np.prod(size)), dtype=lib.float64).reshape(size).requires_grad_()
        out = _scatter(lib, x, src, size, stride, offset)
        (out * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        results.append((out.detach().numpy(), leaf.grad.numpy(), src.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda lib, x: x.as_strided((2,), (1, 1)),
    lambda lib, x: x.as_strided((2,), (-1,)),
    lambda lib, x: x.as_strided((-1,), (1,)),
    lambda lib, x: x.as_strided((2,), (1,), -1),
    lambda lib, x: x.as_strided((4,), (3,), 0),
    lambda lib, x: x.as_strided(2, (1,)),
    lambda lib, x: x.as_strided((2,), (1,), 1.5),
    lambda lib, x: lib.as_strided_scatter(x.detach(), lib.ones(3, dtype=lib.float64), (2,), (1,)),
    lambda lib, x: lib.as_strided_scatter(x.detach(), [1.0, 2.0], (2,), (1,)),
])
def test_bad_arguments_fail_as_in_torch(call):
    _compare((2, 3), False, False, call)


def test_a_sliding_window_shares_memory_and_its_gradient_counts_each_use():
    for lib in (minigrad, torch):
        x = lib.arange(5.0)
        windows = x.as_strided((3, 3), (1, 1))
        assert windows.tolist() == [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]
        assert windows._base is x
        with lib.no_grad():
            x.as_strided((2,), (2,), 1).mul_(10)  # (outside a graph: written into x's memory)
        assert x.tolist() == [0.0, 10.0, 2.0, 30.0, 4.0]
        y = lib.ones(5, dtype=lib.float64, requires_grad=True)
        y.as_strided((3, 3), (1, 1)).sum().backward()
        assert y.grad.tolist() == [1.0, 2.0, 3.0, 2.0, 1.0]
        z = lib.ones(1, dtype=lib.float64, requires_grad=True)
        z.expand(3).as_strided((3,), (0,)).sum().backward()  # (an expanded input shares the gradient)
        assert z.grad.tolist() == [3.0]


def test_inplace_on_an_as_strided_view_inside_a_graph_is_refused():
    """A known limit: minigrad takes a view again from its base by replaying steps, also on gradients,
    whose memory is not the base's, so an as_strided view records no step and may not be written in place
    while recorded (PyTorch allows it)."""
    x = minigrad.ones(4, requires_grad=True) * 1
    with pytest.raises(RuntimeError):
        x.as_strided((2,), (2,)).mul_(2)


@pytest.mark.parametrize("name", ["as_strided", "as_strided_scatter"])
def test_gradcheck_and_gradgradcheck(name):
    x = minigrad.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    src = minigrad.tensor(np.random.default_rng(1).standard_normal((2, 3)), requires_grad=True)
    if name == "as_strided":
        def fn(x, src):
            return x.t().as_strided((2, 3), (1, 2), 1) ** 2 * src
    else:
        def fn(x, src):
            return minigrad.as_strided_scatter(x.t() ** 2, src, (2, 3), (1, 2), 1) * 3
    assert gradcheck(fn, (x, src), eps=1e-6, atol=1e-5, rtol=1e-4)
    assert gradgradcheck(fn, (x, src), eps=1e-6, atol=1e-5, rtol=1e-4)
