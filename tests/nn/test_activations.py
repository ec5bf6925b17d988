"""The activations PyTorch tutorials use beyond ReLU, as functions and Modules, against torch 2.13.

For each: values and gradients on generated inputs (float64 and float32, 0-d, empty and batched
shapes) with the kinks (0, +-lambd, the thresholds, +-3, 6) planted in them, and on infinities
and NaN; gradcheck and gradgradcheck in float64 away from the kinks; the in-place forms; the
Modules' reprs and PReLU's parameter; the exceptions for bad arguments and integer inputs.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

# name -> the call, the same in both libraries (F is minigrad.nn.functional or torch.nn.functional;
# w is PReLU's weight, see _slopes)
CALLS = {
    "hardtanh": lambda F, x, w: F.hardtanh(x),
    "hardtanh(-0.5, 2)": lambda F, x, w: F.hardtanh(x, -0.5, 2.0),
    "relu6": lambda F, x, w: F.relu6(x),
    "selu": lambda F, x, w: F.selu(x),
    "celu": lambda F, x, w: F.celu(x),
    "celu(alpha=2)": lambda F, x, w: F.celu(x, alpha=2.0),
    "celu(alpha=0.5)": lambda F, x, w: F.celu(x, 0.5),
    "mish": lambda F, x, w: F.mish(x),
    "softsign": lambda F, x, w: F.softsign(x),
    "softmin(-1)": lambda F, x, w: F.softmin(x, -1),
    "softmin(0)": lambda F, x, w: F.softmin(x, dim=0),
    "logsigmoid": lambda F, x, w: F.logsigmoid(x),
    "hardsigmoid": lambda F, x, w: F.hardsigmoid(x),
    "hardswish": lambda F, x, w: F.hardswish(x),
    "glu": lambda F, x, w: F.glu(x),  # (an odd or missing dimension: the error, compared)
    "glu(0)": lambda F, x, w: F.glu(x, 0),
    "threshold(1, 2)": lambda F, x, w: F.threshold(x, 1.0, 2.0),
    "threshold(-0.5, -7)": lambda F, x, w: F.threshold(x, -0.5, -7.0),
    "hardshrink": lambda F, x, w: F.hardshrink(x),
    "hardshrink(1)": lambda F, x, w: F.hardshrink(x, 1.0),
    "softshrink": lambda F, x, w: F.softshrink(x),
    "softshrink(0)": lambda F, x, w: F.softshrink(x, 0.0),
    "softshrink(2)": lambda F, x, w: F.softshrink(x, lambd=2.0),
    "tanhshrink": lambda F, x, w: F.tanhshrink(x),
    "prelu one slope": lambda F, x, w: F.prelu(x, w),
    "prelu per channel": lambda F, x, w: F.prelu(x, w),
}
KINKS = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 6.0, 20.0, -20.0]
SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 4), (2, 0, 2)]


def _lib(x):
    return minigrad if isinstance(x, minigrad.Tensor) else torch


def _slopes(call: str, x):
    """PReLU's weight for ``call``: slopes -1.5 .. 0.75 in x's dtype, one per channel or one; None otherwise."""
    if "prelu" not in call:
        return None
    n = x.shape[1] if "channel" in call and x.ndim >= 2 else 1
    return _lib(x).tensor(np.linspace(-1.5, 0.75, n), dtype=x.dtype, requires_grad=True)


def _inputs(shape: tuple, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3
    flat = x.reshape(-1)
    if flat.size:
        picks = rng.choice(flat.size, size=min(flat.size, 6), replace=False)
        flat[picks] = rng.choice(KINKS, size=picks.size)
    return x.astype(dtype)


def _run(lib, call, data: np.ndarray, upstream_seed: int = 1):
    """Value and the gradients (input, and PReLU's slopes) for a random upstream gradient."""
    F = lib.nn.functional
    x = lib.tensor(data, requires_grad=True)
    w = _slopes(call, x)
    y = CALLS[call](F, x, w)
    slopes = [] if w is None else [w]
    g = np.random.default_rng(upstream_seed).standard_normal(tuple(y.shape)).astype(data.dtype)
    grads = lib.autograd.grad(y, [x] + slopes, lib.tensor(g), allow_unused=True)
    return y.detach().numpy(), [None if t is None else t.numpy() for t in grads]


PIECEWISE = ("hardtanh", "relu6", "hardsigmoid", "hardswish", "threshold", "hardshrink", "softshrink", "prelu")


def _close(mine, theirs, dtype, what):
    assert mine.dtype == theirs.dtype, what
    assert mine.shape == theirs.shape, what
    rtol, atol = (1e-12, 1e-14) if dtype == "float64" else (2e-6, 1e-6)
    if "hardsigmoid" in what:
        rtol = max(rtol, 4e-8)  # torch's backward multiplies by 1/6 rounded to float32, in float64 too
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    if what.startswith(PIECEWISE):  # each entry on the piece torch puts it on: its exact zeros too
        assert np.array_equal(mine == 0, theirs == 0), what


VALUE_CASES = [(call, shape, dtype) for call in CALLS for shape in SHAPES for dtype in ("float64", "float32")]


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__, str(e).split("\n")[0]


@pytest.mark.parametrize("call,shape,dtype", VALUE_CASES)
def test_values_and_gradients_as_torch_with_the_kinks(call, shape, dtype):
    data = _inputs(shape, dtype, seed=len(call) * 31 + len(shape))
    mine, theirs = _outcome(lambda: _run(minigrad, call, data)), _outcome(lambda: _run(torch, call, data))
    assert mine[0] == theirs[0], f"{call} {shape}: minigrad {mine}, torch {theirs}"
    if mine[0] != "ok":
        return
    (value_m, grads_m), (value_t, grads_t) = mine[1], theirs[1]
    _close(value_m, value_t, dtype, f"{call} value")
    for i, (gm, gt) in enumerate(zip(grads_m, grads_t, strict=True)):
        if gt is None:
            assert gm is None or not gm.any()
        else:
            _close(gm, gt, dtype, f"{call} gradient {i}")


SPECIAL = np.array([np.inf, -np.inf, np.nan, 1e300, -1e300, 40.0, -40.0, 1e-300, -1e-300, 0.0, -0.0, 3.0, -3.0])


@pytest.mark.parametrize("call", [c for c in CALLS if not c.startswith(("glu", "softmin"))])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_infinities_nan_and_extremes_as_torch(call, dtype):
    with np.errstate(over="ignore"):
        data = SPECIAL.astype(dtype)
    (value_m, grads_m), (value_t, grads_t) = _run(minigrad, call, data), _run(torch, call, data)
    _close(value_m, value_t, dtype, f"{call} value")
    # (at NaN torch's own gradient differs between float32 and float64, its vectorised and scalar
    # loops, for hardtanh, relu6, hardshrink and softshrink: not compared there)
    number = ~np.isnan(data)
    _close(grads_m[0][number], grads_t[0][number], dtype, f"{call} gradient")


def _smooth_input(shape, seed):
    """float64 values at least 0.05 from every kink, where finite differences are valid."""
    x = np.random.default_rng(seed).standard_normal(shape) * 2.5
    for k in KINKS:
        near = np.abs(x - k) < 0.05
        x[near] = k + 0.1
    return x


@pytest.mark.parametrize("call", list(CALLS))
def test_gradcheck_and_gradgradcheck(call):
    F = minigrad.nn.functional
    x = minigrad.tensor(_smooth_input((2, 3, 2), seed=len(call)), requires_grad=True)
    w = _slopes(call, x)
    if w is not None:
        fn, inputs = (lambda t, s: F.prelu(t, s)), (x, w)
    else:
        fn, inputs = (lambda t: CALLS[call](F, t, None)), (x,)
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)


INPLACE = {
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 2.0, inplace=True),
    "hardtanh_": lambda F, x: F.hardtanh_(x, -0.5, 2.0),
    "relu6": lambda F, x: F.relu6(x, inplace=True),
    "selu": lambda F, x: F.selu(x, True),
    "selu_": lambda F, x: F.selu_(x),
    "celu": lambda F, x: F.celu(x, 2.0, inplace=True),
    "celu_": lambda F, x: F.celu_(x, 2.0),
    "mish": lambda F, x: F.mish(x, inplace=True),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x, inplace=True),
    "hardswish": lambda F, x: F.hardswish(x, inplace=True),
    "threshold": lambda F, x: F.threshold(x, 1.0, 2.0, inplace=True),
    "threshold_": lambda F, x: F.threshold_(x, 1.0, 2.0),
}


@pytest.mark.parametrize("call", list(INPLACE))
def test_inplace_forms_overwrite_and_differentiate_as_torch(call):
    data = _inputs((4, 5), "float64", seed=3)

    def run(lib):
        leaf = lib.tensor(data, requires_grad=True)
        x = leaf * 1.0
        y = INPLACE[call](lib.nn.functional, x)
        assert y is x
        y.sum().backward()
        plain = lib.tensor(data)
        INPLACE[call](lib.nn.functional, plain)  # no graph: simply overwritten
        return x.detach().numpy(), leaf.grad.numpy(), plain.numpy()
    for m, t in zip(run(minigrad), run(torch), strict=True):
        _close(m, t, "float64", call)
    # a leaf that requires grad cannot be overwritten
    for lib in (minigrad, torch):
        with pytest.raises(RuntimeError, match="leaf"):
            INPLACE[call](lib.nn.functional, lib.tensor(data, requires_grad=True))


MODULES = {
    "Hardtanh()": lambda nn: nn.Hardtanh(),
    "Hardtanh(-2, 3, True)": lambda nn: nn.Hardtanh(-2.0, 3.0, True),
    "Hardtanh(min_value)": lambda nn: nn.Hardtanh(min_value=-0.25, max_value=0.5),
    "ReLU6()": lambda nn: nn.ReLU6(),
    "ReLU6(True)": lambda nn: nn.ReLU6(inplace=True),
    "SELU()": lambda nn: nn.SELU(),
    "SELU(True)": lambda nn: nn.SELU(True),
    "CELU()": lambda nn: nn.CELU(),
    "CELU(0.5, True)": lambda nn: nn.CELU(0.5, inplace=True),
    "Mish()": lambda nn: nn.Mish(),
    "Mish(True)": lambda nn: nn.Mish(inplace=True),
    "Softsign()": lambda nn: nn.Softsign(),
    "Softmin(1)": lambda nn: nn.Softmin(1),
    "Softmin()": lambda nn: nn.Softmin(),
    "LogSigmoid()": lambda nn: nn.LogSigmoid(),
    "Hardsigmoid()": lambda nn: nn.Hardsigmoid(),
    "Hardsigmoid(True)": lambda nn: nn.Hardsigmoid(inplace=True),
    "Hardswish()": lambda nn: nn.Hardswish(),
    "Hardswish(True)": lambda nn: nn.Hardswish(True),
    "GLU()": lambda nn: nn.GLU(),
    "GLU(1)": lambda nn: nn.GLU(dim=1),
    "Threshold(0.1, 20)": lambda nn: nn.Threshold(0.1, 20),
    "Threshold(0.1, 20, True)": lambda nn: nn.Threshold(0.1, 20.0, inplace=True),
    "Hardshrink()": lambda nn: nn.Hardshrink(),
    "Hardshrink(1)": lambda nn: nn.Hardshrink(1),
    "Softshrink()": lambda nn: nn.Softshrink(),
    "Softshrink(0.25)": lambda nn: nn.Softshrink(lambd=0.25),
    "Tanhshrink()": lambda nn: nn.Tanhshrink(),
    "PReLU()": lambda nn: nn.PReLU(),
    "PReLU(4, 0.1)": lambda nn: nn.PReLU(4, init=0.1),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_modules_repr_parameters_and_forward_as_torch(name):
    data = _inputs((3, 4, 2), "float32", seed=5)

    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer = MODULES[name](lib.nn)
            leaf = lib.tensor(data, requires_grad=True)
            y = layer(leaf * 1.0)
        y.sum().backward()
        params = [(n, tuple(p.shape), p.detach().numpy().tolist(), p.grad.numpy()) for n, p in layer.named_parameters()]
        return (repr(layer), [(w.category.__name__, str(w.message)) for w in caught], list(layer.state_dict()),
                y.detach().numpy(), leaf.grad.numpy(), params)
    mine, theirs = run(minigrad), run(torch)
    assert mine[:3] == theirs[:3]
    _close(mine[3], theirs[3], "float32", name)
    _close(mine[4], theirs[4], "float32", name)
    for pm, pt in zip(mine[5], theirs[5], strict=True):
        assert pm[:3] == pt[:3]
        _close(pm[3], pt[3], "float32", name)


def test_prelu_module_trains_saves_and_loads():
    layer = minigrad.nn.PReLU(3, init=0.5, dtype=minigrad.float64)
    assert layer.weight.dtype == minigrad.float64 and layer.weight.tolist() == [0.5] * 3
    other = minigrad.nn.PReLU(3)
    other.load_state_dict({"weight": minigrad.tensor(np.array([1.0, 2.0, 3.0], np.float32))})
    assert other.weight.tolist() == [1.0, 2.0, 3.0] and isinstance(other.weight, minigrad.nn.Parameter)
    x = minigrad.tensor(-np.ones((2, 3, 2), np.float32))
    other(x).sum().backward()
    assert other.weight.grad.tolist() == [-4.0, -4.0, -4.0]
    other.reset_parameters()
    assert other.weight.tolist() == [0.25] * 3


BAD = {
    "hardtanh min > max": lambda F, x: F.hardtanh(x, 2.0, 1.0),
    "Hardtanh max <= min": lambda F, x: _nn(x).Hardtanh(1.0, 1.0),
    "softshrink negative": lambda F, x: F.softshrink(x, -1.0),
    "glu 0-d": lambda F, x: F.glu(x.sum()),
    "glu odd": lambda F, x: F.glu(x),
    "glu odd dim 0": lambda F, x: F.glu(x, 0),
    "glu dim out of range": lambda F, x: F.glu(x, 3),
    "prelu count": lambda F, x: F.prelu(x, _lib(x).ones(2, dtype=x.dtype)),
    "prelu 2-d weight": lambda F, x: F.prelu(x, _lib(x).ones(1, 1, dtype=x.dtype)),
    "prelu dtype": lambda F, x: F.prelu(x, _lib(x).ones(1, dtype=_lib(x).float32)),
    "prelu 0-d weight": lambda F, x: F.prelu(x, _lib(x).tensor(0.5, dtype=x.dtype)),
    "prelu 1-d input": lambda F, x: F.prelu(x[0], _lib(x).ones(1, dtype=x.dtype)),
    "prelu 1-d input 3 slopes": lambda F, x: F.prelu(x[0], _lib(x).ones(3, dtype=x.dtype)),
    "prelu 0-d input": lambda F, x: F.prelu(x[0, 0], _lib(x).ones(1, dtype=x.dtype)),
    "softmin no dim": lambda F, x: F.softmin(x),
    "softmin dtype": lambda F, x: F.softmin(x, 1, dtype=_lib(x).float32),
}


def _nn(x):
    return _lib(x).nn


@pytest.mark.parametrize("case", list(BAD))
def test_bad_arguments_as_torch(case):
    data = np.arange(6.0).reshape(2, 3) - 2.5

    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = BAD[case](lib.nn.functional, lib.tensor(data))
        return out.detach().numpy().tolist(), [w.category.__name__ for w in caught]
    mine, theirs = _outcome(lambda: run(minigrad)), _outcome(lambda: run(torch))
    assert mine[0] == theirs[0], f"minigrad {mine}, torch {theirs}"
    if mine[0] == "ok":
        np.testing.assert_allclose(mine[1][0], theirs[1][0], rtol=1e-6)
        assert mine[1][1] == theirs[1][1]
    elif "glu" in case or "prelu" in case or "softshrink" in case or "hardtanh" in case:
        assert mine[1] == theirs[1]


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_integer_and_bool_inputs_as_torch(call, dtype):
    data = np.array([[-4, 0, 3, 5], [1, 2, -1, 7]]).astype(dtype)

    def run(lib):
        x = lib.tensor(data)
        y = CALLS[call](lib.nn.functional, x, lib.tensor([0.25]))
        return str(y.dtype).split(".")[-1], y.numpy().tolist()
    mine, theirs = _outcome(lambda: run(minigrad)), _outcome(lambda: run(torch))
    assert mine[0] == theirs[0], f"minigrad {mine}, torch {theirs}"
    if mine[0] == "ok":
        assert mine[1][0] == theirs[1][0]
        np.testing.assert_allclose(mine[1][1], theirs[1][1], rtol=1e-6)
