"""addcmul, addcdiv, addmv, addr, addbmm, baddbmm (and their in-place forms, and addmm_) against torch 2.13.

Hypothesis draws the shapes (broadcast inputs, 0-d and empty ones), beta, alpha and value
(ints, floats, bools, 0) and the dtypes of the three operands: the result (or the exception
type) must be torch's, its dtype and values, and for float64 the gradients of every operand
by backward. gradcheck and gradgradcheck check the derivatives without torch; the in-place
forms bump the version, refuse a leaf that requires grad, and pass the gradient through a
non-leaf and through a view.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

DTYPES = ["bool", "int32", "int64", "float32", "float64"]
SCALARS = st.sampled_from([1, 0, 2, -1, 0.5, 1.5, -2.7, True, False])


def _data(shape, dtype: str, rng) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("int"):
        return rng.integers(-3, 4, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _run(lib, name: str, arrays, kwargs, inplace: bool):
    """(result array and dtype, or the exception type), then the operands' gradients for float64."""
    tensors = [lib.tensor(a, requires_grad=a.dtype == np.float64) for a in arrays]
    try:
        if inplace:
            first = tensors[0] * 1 if tensors[0].requires_grad else tensors[0].clone()  # (a non-leaf)
            out = getattr(first, name + "_")(*tensors[1:], **kwargs)
            assert out is first
        else:
            out = getattr(lib, name)(*tensors, **kwargs)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e), None
    grads = None
    if out.requires_grad:
        weights = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))
        try:
            (out * weights).sum().backward()
        except RuntimeError:  # (torch's addcdiv cannot cast its gradient for a bool tensor2 into it)
            return (str(out.dtype).split(".")[1], out.detach().numpy()), "backward failed"
        grads = [None if t.grad is None else t.grad.numpy() for t in tensors]
    return (str(out.dtype).split(".")[1], out.detach().numpy()), grads


def _compare(name, arrays, kwargs, inplace=False):
    mine, my_grads = _run(minigrad, name, arrays, kwargs, inplace)
    theirs, their_grads = _run(torch, name, arrays, kwargs, inplace)
    if isinstance(theirs, type):
        assert mine is theirs or isinstance(mine, type) and issubclass(mine, theirs), (mine, theirs)
        return
    assert not isinstance(mine, type), f"minigrad raised {mine}, torch gave {theirs}"
    assert mine[0] == theirs[0]
    tolerance = 1e-4 if mine[0] == "float32" else 1e-10
    np.testing.assert_allclose(mine[1], theirs[1], rtol=tolerance, atol=tolerance)
    if their_grads == "backward failed":
        return
    assert (my_grads is None) == (their_grads is None)
    for g, h in zip(my_grads or (), their_grads or ()):
        assert (g is None) == (h is None)
        if g is not None:
            np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-10)


def _shapes(draw, product_shape: tuple) -> tuple:
    """The input's shape: the product's, or one that broadcasts to it, or (rarely) one that does not."""
    kind = draw(st.sampled_from(["same", "broadcast", "scalar", "bad"]))
    if kind == "same":
        return product_shape
    if kind == "scalar":
        return ()
    if kind == "broadcast":
        return tuple(n if draw(st.booleans()) else 1 for n in product_shape)[draw(st.integers(0, len(product_shape))):]
    return tuple(n + 1 for n in product_shape)


@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_addcmul_and_addcdiv_match_torch(data):
    name = data.draw(st.sampled_from(["addcmul", "addcdiv"]))
    shape = tuple(data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=3)))
    shapes = [shape] + [data.draw(st.sampled_from([shape, shape[1:], (1,) * len(shape), ()])) for _ in range(2)]
    if data.draw(st.booleans()):  # the input is the one that broadcasts
        shapes = [shapes[1], shape, shapes[2]]
    dtypes = data.draw(st.sampled_from([["float64"] * 3, ["float32"] * 3]) | st.lists(st.sampled_from(DTYPES),
                                                                                       min_size=3, max_size=3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    arrays = [_data(s, d, rng) for s, d in zip(shapes, dtypes)]
    if name == "addcdiv" and arrays[2].dtype.kind == "f":
        arrays[2] = np.where(np.abs(arrays[2]) < 0.2, 1.0, arrays[2]).astype(arrays[2].dtype)  # (no division by ~0)
    kwargs = {} if data.draw(st.booleans()) else {"value": data.draw(SCALARS)}
    _compare(name, arrays, kwargs, inplace=data.draw(st.booleans()))


PRODUCTS = {  # name -> the shapes of the two factors and of their product, from (b, n, k, m)
    "addmv": lambda b, n, k, m: ((n, k), (k,), (n,)),
    "addr": lambda b, n, k, m: ((n,), (m,), (n, m)),
    "addbmm": lambda b, n, k, m: ((b, n, k), (b, k, m), (n, m)),
    "baddbmm": lambda b, n, k, m: ((b, n, k), (b, k, m), (b, n, m)),
    "addmm": lambda b, n, k, m: ((n, k), (k, m), (n, m)),
}


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_beta_alpha_products_match_torch(data):
    name = data.draw(st.sampled_from(sorted(PRODUCTS)))
    sizes = [data.draw(st.integers(0, 3)) for _ in range(4)]
    shape_a, shape_b, product = PRODUCTS[name](*sizes)
    inplace = data.draw(st.booleans())
    # a factor of the wrong shape (torch's addbmm_ then resizes its input, and gives whatever memory held)
    if data.draw(st.integers(0, 9)) == 0 and 0 not in sizes and not inplace:
        shape_b = (*shape_b[:-1], shape_b[-1] + 1) if name != "addr" else (2, 2)
    # (an in-place input of another shape: torch's addbmm_ resizes it and gives whatever memory held;
    # test_inplace_refuses_a_broadcast_input_and_a_result_it_cannot_hold has the others)
    shapes = [product if inplace else _shapes(data.draw, product), shape_a, shape_b]
    dtypes = data.draw(st.sampled_from([["float64"] * 3, ["float32"] * 3, ["int64"] * 3])
                       | st.lists(st.sampled_from(DTYPES), min_size=3, max_size=3))
    if 0 in sizes:  # (torch skips its dtype checks for an empty product, and keeps an empty addmv's input shape)
        shapes[0], dtypes = product, [dtypes[0]] * 3
        assume(dtypes[0] != "bool")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    arrays = [_data(s, d, rng) for s, d in zip(shapes, dtypes)]
    if data.draw(st.integers(0, 4)) == 0 and arrays[0].dtype.kind == "f" and arrays[0].size:
        arrays[0].reshape(-1)[0] = np.nan  # ignored when beta is 0
    kwargs = {k: data.draw(SCALARS) for k in data.draw(st.sets(st.sampled_from(["beta", "alpha"])))}
    _compare(name, arrays, kwargs, inplace)


NODE = {"addcmul": "AddcmulBackward0", "addcdiv": "AddcdivBackward0", "addmv": "AddmvBackward0",
        "addr": "AddrBackward0", "addbmm": "AddbmmBackward0", "baddbmm": "BaddbmmBackward0",
        "addmm": "AddmmBackward0", "vdot": "VdotBackward0"}
CALLS = {
    "addcmul": (lambda x, a, b: minigrad.addcmul(x, a, b, value=-0.7), [(2, 3), (3,), (2, 1)]),
    "addcdiv": (lambda x, a, b: minigrad.addcdiv(x, a, b.exp() + 0.5, value=1.3), [(2, 3), (2, 3), (3,)]),
    "addmv": (lambda x, a, b: minigrad.addmv(x, a, b, beta=0.5, alpha=-2.0), [(3,), (3, 2), (2,)]),
    "addr": (lambda x, a, b: minigrad.addr(x, a, b, beta=-1.5, alpha=0.3), [(1, 2), (3,), (2,)]),
    "addbmm": (lambda x, a, b: minigrad.addbmm(x, a, b, beta=2, alpha=0.5), [(2, 2), (3, 2, 2), (3, 2, 2)]),
    "baddbmm": (lambda x, a, b: minigrad.baddbmm(x, a, b, beta=0.5, alpha=1.5), [(2, 1), (2, 2, 3), (2, 3, 1)]),
    "vdot": (lambda x, a, b: minigrad.vdot(x, a * b), [(3,), (3,), (3,)]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_gradcheck_gradgradcheck_and_node(name):
    fn, shapes = CALLS[name]
    rng = np.random.default_rng(3)
    inputs = tuple(minigrad.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes)
    assert fn(*inputs).grad_fn.name() == NODE[name] or name == "vdot"
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)


def test_node_names_are_torchs():
    for lib in (minigrad, torch):
        x = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        v = lib.ones(2, dtype=lib.float64, requires_grad=True)
        b = lib.ones(1, 2, 2, dtype=lib.float64, requires_grad=True)
        names = [lib.addcmul(x, x, x).grad_fn.name(), lib.addcdiv(x, x, x).grad_fn.name(),
                 lib.addmv(v, x, v).grad_fn.name(), lib.addr(x, v, v).grad_fn.name(),
                 lib.addbmm(x, b, b).grad_fn.name(), lib.baddbmm(b, b, b).grad_fn.name(),
                 lib.vdot(v, v).grad_fn.name()]
        if lib is minigrad:
            mine = names
    assert mine == names == [NODE[n] for n in ("addcmul", "addcdiv", "addmv", "addr", "addbmm", "baddbmm", "vdot")]


INPLACE = {
    "addcmul_": lambda x, lib: x.addcmul_(lib.ones(2, 2, dtype=lib.float64), lib.ones(2), value=2),
    "addcdiv_": lambda x, lib: x.addcdiv_(lib.ones(2, 2, dtype=lib.float64), lib.ones(2) + 1),
    "addmm_": lambda x, lib: x.addmm_(lib.ones(2, 3, dtype=lib.float64), lib.ones(3, 2, dtype=lib.float64), beta=2),
    "addr_": lambda x, lib: x.addr_(lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64), alpha=3),
    "addbmm_": lambda x, lib: x.addbmm_(lib.ones(3, 2, 1, dtype=lib.float64), lib.ones(3, 1, 2, dtype=lib.float64)),
    "baddbmm_": lambda x, lib: x.baddbmm_(lib.ones(1, 2, 1, dtype=lib.float64), lib.ones(1, 1, 2, dtype=lib.float64)),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_forms_version_leaf_and_views(name):
    def reshaped(x, lib):  # baddbmm_ writes a 3-D input
        return x.reshape(1, 2, 2) if name == "baddbmm_" else x

    results = {}
    for lib in (minigrad, torch):
        leaf = lib.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError):
            INPLACE[name](reshaped(leaf, lib), lib)
        x = leaf * 2
        version = x._version
        out = INPLACE[name](reshaped(x, lib), lib)
        assert x._version > version
        (out * lib.arange(4, dtype=lib.float64).reshape(out.shape)).sum().backward()
        base = lib.zeros(3, 2, dtype=lib.float64, requires_grad=True) * 1  # through a view of a non-leaf
        view = base[1:]
        INPLACE[name](reshaped(view, lib), lib)
        assert base.grad_fn.name().endswith("CopySlices")
        results[lib] = leaf.grad.numpy(), base.detach().numpy()
    for mine, theirs in zip(results[minigrad], results[torch]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_inplace_refuses_a_broadcast_input_and_a_result_it_cannot_hold():
    for lib in (minigrad, torch):
        with pytest.raises(RuntimeError):  # the input must have the product's shape
            lib.ones(1, 2).addmm_(lib.ones(3, 2), lib.ones(2, 2))
        with pytest.raises(RuntimeError):
            lib.ones(2).addmv_(lib.ones(3, 2), lib.ones(2))
        with pytest.raises(RuntimeError):  # a float result into an integer tensor
            lib.ones(2, dtype=lib.int64).addcmul_(lib.ones(2), lib.ones(2))
        with pytest.raises(RuntimeError):
            lib.ones(1).addcmul_(lib.ones(3), lib.ones(3))


@pytest.mark.parametrize("call", [
    lambda lib: lib.addcmul(lib.ones(2), [1.0, 2.0], lib.ones(2)),
    lambda lib: lib.addcmul(lib.ones(2), lib.ones(2), lib.ones(2), value="a"),
    lambda lib: lib.addcmul(lib.ones(2), lib.ones(2), lib.ones(2), value=None),
    lambda lib: lib.addcdiv(lib.ones(2), lib.ones(2), 2.0),
    lambda lib: lib.addmv(lib.ones(2), lib.ones(2, 2), lib.ones(2), beta="a"),
    lambda lib: lib.addmv(lib.ones(2), np.ones((2, 2)), lib.ones(2)),
    lambda lib: lib.ones(2).addr(lib.ones(2), None),
    lambda lib: lib.baddbmm(lib.ones(1, 2, 2), lib.ones(2, 2), lib.ones(1, 2, 2)),
    lambda lib: lib.addbmm(lib.ones(2, 2), lib.ones(2, 2, 2), lib.ones(3, 2, 2)),
    lambda lib: lib.addmv(lib.ones(2, 2), lib.ones(2, 2), lib.ones(2)),
    lambda lib: lib.addr(lib.ones(2, 2), lib.ones(2, 1), lib.ones(2)),
    lambda lib: lib.addr(lib.ones(2, 2, dtype=lib.int64), lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64),
                         beta=1.5),
    lambda lib: lib.addr(lib.ones(2, 2), lib.ones(2), lib.ones(2), alpha=True),
    lambda lib: lib.vdot(lib.ones(2), lib.ones(3)),
    lambda lib: lib.vdot(lib.ones(2, 1), lib.ones(2)),
    lambda lib: lib.vdot(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.vdot(lib.ones(2), 2.0),
    lambda lib: lib.ger(lib.ones(2, 2), lib.ones(2)),
])
def test_bad_arguments_fail_as_in_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type):
        call(minigrad)


def test_vdot_and_ger_values():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    for lib_fn in ("vdot", "ger"):
        mine = getattr(minigrad, lib_fn)(minigrad.tensor(a), minigrad.tensor(b)).numpy()
        theirs = getattr(torch, lib_fn)(torch.tensor(a), torch.tensor(b)).numpy()
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)
    assert minigrad.Tensor.ger is minigrad.Tensor.outer


def test_out_argument():
    for lib in (minigrad, torch):
        out = lib.empty(2)
        result = lib.addcmul(lib.ones(2), lib.ones(2), lib.ones(2), value=3, out=out)
        assert result is out and out.tolist() == [4.0, 4.0]
        out = lib.empty(1, 2, 2)
        assert lib.baddbmm(lib.ones(2), lib.ones(1, 2, 1), lib.ones(1, 1, 2), alpha=2, out=out) is out
        assert out.tolist() == [[[3.0, 3.0], [3.0, 3.0]]]
