"""conv1d (and conv2d's dilation, groups and string padding), the 1-D and adaptive max pools,
group and instance normalisation and interpolation, against PyTorch and by gradcheck.

The torch comparisons draw shapes and hyperparameters with hypothesis, some of them invalid, and
run the same float64 inputs (and weights) through both libraries: either both raise, with the same
exception type, or the values, the indices, the gradients of every input and the name of the
output's node agree. Tolerances come from the dtype and the length of the longest sum
(``_tolerance``). The gradchecks at the top need no torch; the rest skip without it.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

try:
    import torch
except ImportError:  # the comparisons skip; the gradchecks still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (the [torch] extra)")
FEW = settings(max_examples=100, deadline=None)


def _tolerance(dtype, terms: int = 1) -> float:
    """A few ulps per term of the longest sum in the computation."""
    return 16 * np.finfo(dtype).eps * max(1, terms)


def _leaf(rng, shape, spread: bool = False):
    """float64 values that need a gradient; ``spread``: far apart, so a finite step moves no max."""
    values = rng.permutation(math.prod(shape)).reshape(shape) * 0.1 if spread else rng.standard_normal(shape)
    return minigrad.tensor(values, dtype=minigrad.float64, requires_grad=True)


# -- gradcheck in float64, without torch ----------------------------------------------------------
GRADCHECKS = {  # name: (function of the leaves, leaf shapes, spread values apart)
    "conv1d groups dilation stride": (lambda x, w, b: F.conv1d(x, w, b, 2, 1, 2, 2), [(2, 4, 7), (4, 2, 2), (4,)],
                                      False),
    "conv1d same, even kernel": (lambda x, w: F.conv1d(x, w, padding="same"), [(1, 2, 5), (3, 2, 2)], False),
    "conv1d unbatched": (lambda x, w: F.conv1d(x, w), [(2, 5), (3, 2, 3)], False),
    "conv2d groups dilation": (lambda x, w, b: F.conv2d(x, w, b, 1, (1, 0), (1, 2), 3),
                               [(1, 3, 4, 5), (3, 1, 2, 2), (3,)], False),
    "max_pool1d dilation ceil_mode": (lambda x: F.max_pool1d(x, 2, 2, 1, 2, True) ** 2, [(2, 2, 7)], True),
    "max_pool2d dilation ceil_mode": (lambda x: F.max_pool2d(x, (2, 3), (2, 1), (1, 1), (1, 2), True) ** 2,
                                      [(1, 2, 5, 6)], True),
    "adaptive_max_pool1d": (lambda x: F.adaptive_max_pool1d(x, 3) ** 2, [(2, 2, 7)], True),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (2, 4)) ** 2, [(2, 5, 3)], True),
    "avg_pool1d": (lambda x: F.avg_pool1d(x, 3, 2, 1, True, False), [(2, 2, 6)], False),
    "adaptive_avg_pool1d": (lambda x: F.adaptive_avg_pool1d(x, 4), [(2, 2, 7)], False),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)], False),
    "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b), [(2, 3, 2, 2), (3,), (3,)], False),
    "interpolate nearest": (lambda x: F.interpolate(x, size=(3, 5)), [(1, 2, 2, 3)], False),
    "interpolate bilinear": (lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"), [(1, 1, 3, 2)], False),
    "interpolate linear, corners": (lambda x: F.interpolate(x, 5, mode="linear", align_corners=True), [(2, 1, 3)],
                                    False),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck_and_gradgradcheck(name):
    fn, shapes, spread = GRADCHECKS[name]
    rng = np.random.default_rng(len(name))
    leaves = [_leaf(rng, shape, spread) for shape in shapes]
    assert gradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)


# -- the harness: the same call in both libraries ------------------------------------------------
class Const:
    """An input without a gradient (a running statistic); its value after the call is compared too."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def _run(lib, fn, inputs: list, dtype) -> dict:
    """``fn(lib, *tensors)``, then backward with a fixed random upstream gradient; what it raised, or
    the outputs, the output's node, every leaf's gradient and every Const's value afterwards."""
    tensors = [None if a is None else lib.tensor(a.array, dtype=getattr(lib, dtype)) if isinstance(a, Const)
               else lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(lib, *tensors)
        except Exception as error:  # noqa: BLE001  (the type is what is compared)
            return {"raised": type(error).__name__, "message": str(error)}
    values, indices = out if isinstance(out, tuple) else (out, None)
    result = {"raised": None, "values": values.detach().numpy(), "node": values.grad_fn.name(),
              "indices": None if indices is None else indices.numpy()}
    upstream = np.random.default_rng(0).standard_normal(tuple(values.shape))
    if values.numel():  # (torch's backward of an empty adaptive pool raises)
        values.backward(lib.tensor(upstream, dtype=getattr(lib, dtype)))
    result["grads"] = [None if t is None or isinstance(a, Const) or t.grad is None else t.grad.numpy()
                       for a, t in zip(inputs, tensors)]
    result["consts"] = [t.numpy() for a, t in zip(inputs, tensors) if isinstance(a, Const)]
    return result


def _compare(fn, inputs: list, terms: int = 1, dtype: str = "float64", gain: float = 1.0, grads=None) -> dict:
    """Both raise the same exception type, or agree (see the module docstring). Returns torch's result.

    ``gain`` bounds how much the computation magnifies a rounding error (a normalisation divides by
    sqrt(var + eps), up to 1 / sqrt(eps) for a group of equal values). ``grads``: a function of
    torch's result giving the gradients to expect instead of torch's.
    """
    mine, theirs = _run(minigrad, fn, inputs, dtype), _run(torch, fn, inputs, dtype)
    if grads is not None and not theirs["raised"]:
        theirs["grads"] = grads(theirs)
    assert mine["raised"] == theirs["raised"], (mine.get("message"), theirs.get("message"))
    if theirs["raised"]:
        return theirs
    tol = _tolerance(np.dtype(dtype), terms) * gain
    np.testing.assert_allclose(mine["values"], theirs["values"], rtol=tol, atol=tol)
    assert mine["values"].shape == theirs["values"].shape
    assert mine["node"] == theirs["node"]
    if theirs["indices"] is not None:
        np.testing.assert_array_equal(mine["indices"], theirs["indices"])
    for name in ("grads", "consts"):
        for m, t in zip(mine[name], theirs[name]):
            assert (m is None) == (t is None)
            if t is not None:
                np.testing.assert_allclose(m, t, rtol=tol, atol=tol, err_msg=name)
    return theirs


def _size(draw, n: int, low: int, high: int, as_int: bool = True):
    """n sizes, sometimes given as one int (when they are equal), as PyTorch accepts them."""
    sizes = tuple(draw(st.integers(low, high)) for _ in range(n))
    return sizes[0] if as_int and len(set(sizes)) == 1 and draw(st.booleans()) else sizes


def _shape(draw, batched: bool, channels: int, spatial: tuple) -> tuple:
    return ((draw(st.integers(1, 2)),) if batched else ()) + (channels,) + spatial


# -- convolution ------------------------------------------------------------------------------------
@st.composite
def convolutions(draw):
    n = draw(st.sampled_from([1, 2]))
    groups = draw(st.integers(1, 3))
    channels, out_channels = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(n))
    stride, dilation = _size(draw, n, 1, 2), _size(draw, n, 1, 2)
    padding = draw(st.sampled_from(["same", "valid", _size(draw, n, 0, 2), _size(draw, n, 0, 2)]))
    spatial = tuple(draw(st.integers(2, 8)) for _ in range(n))
    x_shape = _shape(draw, draw(st.booleans()), channels, spatial)
    w_shape = (out_channels, channels // groups, *kernel)
    bias = draw(st.booleans())
    broken = draw(st.sampled_from([None] * 21 + ["channels", "groups", "stride", "padding", "dilation", "bias",
                                                 "ndim"]))
    if broken == "channels":
        w_shape = (out_channels, channels // groups + 1, *kernel)
    elif broken == "groups":
        groups = draw(st.sampled_from([0, groups + 1]))
    elif broken == "stride":
        stride = (0,) * n
    elif broken == "padding":
        padding = draw(st.sampled_from([(-1,) * n, "full"]))
    elif broken == "dilation":
        dilation = 0
    elif broken == "ndim":
        x_shape = (1,) + x_shape if len(x_shape) == n + 2 else x_shape[1:]
    b_shape = (out_channels + (broken == "bias"),)
    return n, x_shape, w_shape, b_shape if bias else None, stride, padding, dilation, groups


@needs_torch
@settings(max_examples=200, deadline=None)
@given(convolutions(), st.integers(0, 2 ** 16))
def test_convolution_matches_torch(case, seed):
    n, x_shape, w_shape, b_shape, stride, padding, dilation, groups = case
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(x_shape), rng.standard_normal(w_shape),
              None if b_shape is None else rng.standard_normal(b_shape)]

    def conv(lib, x, w, b):
        return getattr(lib.nn.functional, f"conv{n}d")(x, w, b, stride, padding, dilation, groups)
    _compare(conv, inputs, terms=math.prod(w_shape[1:]))


@needs_torch
@settings(max_examples=40, deadline=None)
@given(convolutions(), st.integers(0, 2 ** 16))
def test_convolution_second_derivatives_match_torch(case, seed):
    """Gradients with create_graph, differentiated again: the backward node's own backward, with groups and dilation."""
    n, x_shape, w_shape, b_shape, stride, padding, dilation, groups = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]
    arrays += [] if b_shape is None else [rng.standard_normal(b_shape)]

    def second(lib):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        try:
            y = getattr(lib.nn.functional, f"conv{n}d")(*leaves[:2], leaves[2] if b_shape else None, stride, padding,
                                                        dilation, groups)
        except Exception as error:  # noqa: BLE001
            return type(error).__name__
        grads = lib.autograd.grad((y ** 2).sum(), leaves, create_graph=True)
        return [g.detach().numpy() for g in lib.autograd.grad(sum((g * g).sum() for g in grads), leaves)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, theirs = second(minigrad), second(torch)
    if isinstance(theirs, str):
        assert mine == theirs
        return
    tol = _tolerance(np.float64, 4 * math.prod(w_shape[1:]) * math.prod(x_shape[-n:]))
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol)


@st.composite
def conv_modules(draw):
    n = draw(st.sampled_from([1, 2]))
    groups = draw(st.integers(1, 2))
    kwargs = dict(stride=_size(draw, n, 1, 2), dilation=_size(draw, n, 1, 2), groups=groups,
                  bias=draw(st.booleans()), padding_mode=draw(st.sampled_from(["zeros", "reflect", "replicate",
                                                                                "circular", "mirror"])))
    kwargs["padding"] = draw(st.one_of(st.sampled_from(["same", "valid", "full"]), st.just(_size(draw, n, 0, 2))))
    args = (groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2)) + draw(st.sampled_from([0] * 6 + [1])),
            _size(draw, n, 1, 3))
    spatial = tuple(draw(st.integers(3, 6)) for _ in range(n))
    return n, args, kwargs, _shape(draw, draw(st.booleans()), args[0], spatial)


def _copy_parameters(mine, theirs) -> None:
    with minigrad.no_grad():
        for name, p in theirs.named_parameters():
            getattr(mine, name).copy_(minigrad.tensor(p.detach().numpy()))


@needs_torch
@FEW
@given(conv_modules(), st.integers(0, 2 ** 16))
def test_conv_modules_match_torch(case, seed):
    """Construction (its ValueErrors), repr, parameter shapes, and forward with torch's weights, every padding_mode."""
    n, args, kwargs, x_shape = case
    made = {}
    for lib in (minigrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                made[lib] = getattr(lib.nn, f"Conv{n}d")(*args, **kwargs).double()
            except ValueError:
                made[lib] = None
    assert (made[minigrad] is None) == (made[torch] is None)
    if made[torch] is None:
        return
    mine, theirs = made[minigrad], made[torch]
    assert repr(mine) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in mine.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    _copy_parameters(mine, theirs)
    x = np.random.default_rng(seed).standard_normal(x_shape)
    _compare(lambda lib, t: (mine if lib is minigrad else theirs)(t), [x], terms=math.prod(theirs.weight.shape[1:]))


# -- pooling --------------------------------------------------------------------------------------
def _pool_input(draw, rng, shape):
    """Standard normal values, or small integers, whose ties the two libraries must break alike."""
    return rng.integers(0, 3, shape).astype(float) if draw(st.booleans()) else rng.standard_normal(shape)


@needs_torch
@FEW
@given(st.data(), st.integers(0, 2 ** 16))
def test_max_pool_matches_torch(data, seed):
    draw = data.draw
    n = draw(st.sampled_from([1, 2]))
    rarely = draw(st.integers(0, 14)) == 0  # an invalid argument
    kernel, dilation = _size(draw, n, 1, 3), _size(draw, n, 1, 3)
    kernels = kernel if isinstance(kernel, tuple) else (kernel,) * n
    padding = tuple(draw(st.integers(0, k // 2 + rarely)) for k in kernels)
    stride = draw(st.one_of(st.none(), st.just(_size(draw, n, 0 if rarely else 1, 3))))
    ceil_mode, return_indices = draw(st.booleans()), draw(st.booleans())
    shape = _shape(draw, draw(st.booleans()), draw(st.integers(1, 2)), tuple(draw(st.integers(1, 8)) for _ in range(n)))
    x = _pool_input(draw, np.random.default_rng(seed), shape)

    def pool(lib, t):
        return getattr(lib.nn.functional, f"max_pool{n}d")(t, kernel, stride, padding[0] if n == 1 else padding,
                                                           dilation, ceil_mode, return_indices)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        try:
            values = pool(torch, torch.tensor(x))
        except RuntimeError:
            values = None
    values = values[0] if isinstance(values, tuple) else values
    if values is not None and not torch.isfinite(values).all():
        # a dilated window over padding only: -inf, and an index outside the input, which torch's
        # backward would write to (corrupting memory): the values only
        mine = pool(minigrad, minigrad.tensor(x))
        np.testing.assert_array_equal((mine[0] if isinstance(mine, tuple) else mine).numpy(), values.numpy())
        return
    _compare(pool, [x])


@needs_torch
@FEW
@given(st.data(), st.integers(0, 2 ** 16))
def test_avg_pool1d_matches_torch(data, seed):
    draw = data.draw
    rarely = draw(st.integers(0, 14)) == 0  # an invalid argument
    kernel = draw(st.integers(0 if rarely else 1, 4))
    stride = draw(st.sampled_from([None, 1, 2, 3, (2,)] + [(1, 1)] * rarely))
    padding = draw(st.integers(-rarely, kernel // 2 + rarely))
    ceil_mode, count_include_pad = draw(st.booleans()), draw(st.booleans())
    shape = _shape(draw, draw(st.booleans()), draw(st.integers(1, 2)), (draw(st.integers(2, 9)),))
    x = np.random.default_rng(seed).standard_normal(shape)
    _compare(lambda lib, t: lib.nn.functional.avg_pool1d(t, kernel, stride, padding, ceil_mode, count_include_pad),
             [x], terms=kernel)


@needs_torch
@FEW
@given(st.data(), st.integers(0, 2 ** 16))
def test_adaptive_pools_match_torch(data, seed):
    draw = data.draw
    n, kind = draw(st.sampled_from([1, 2])), draw(st.sampled_from(["avg", "max"]))
    sizes = [draw(st.integers(-1 if draw(st.integers(0, 14)) == 0 else 0, 9)) for _ in range(n)]
    if n == 2:
        sizes = [None if draw(st.integers(0, 4)) == 0 else s for s in sizes]
    output_size = sizes[0] if n == 1 or (sizes[0] == sizes[1] and draw(st.booleans())) else tuple(sizes)
    shape = _shape(draw, draw(st.booleans()), draw(st.integers(1, 2)), tuple(draw(st.integers(1, 7)) for _ in range(n)))
    return_indices = kind == "max" and draw(st.booleans())
    x = _pool_input(draw, np.random.default_rng(seed), shape)

    def pool(lib, t):
        fn = getattr(lib.nn.functional, f"adaptive_{kind}_pool{n}d")
        return fn(t, output_size, return_indices) if kind == "max" else fn(t, output_size)
    _compare(pool, [x], terms=math.prod(shape[-n:]))


# -- normalisation ----------------------------------------------------------------------------------
def _norm_gain(x: np.ndarray, eps: float) -> float:
    return 1 + np.abs(x).max(initial=0) / math.sqrt(eps)


@needs_torch
@FEW
@given(st.data(), st.integers(0, 2 ** 16))
def test_group_norm_matches_torch(data, seed):
    draw = data.draw
    groups, per_group = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    channels = groups * per_group + (draw(st.integers(0, 9)) == 0)  # sometimes not divisible
    spatial = tuple(draw(st.integers(1, 4)) for _ in range(draw(st.integers(0, 2))))
    shape = (draw(st.integers(1, 3)), channels, *spatial)
    rng = np.random.default_rng(seed)
    # no weight, or a weight, or a weight and a bias (torch's backward fails on a bias without a weight)
    affine = [rng.standard_normal(channels + (draw(st.integers(0, 14)) == 0)) for _ in range(draw(st.integers(0, 2)))]
    eps = draw(st.sampled_from([1e-5, 1e-3, 0.5]))
    x = rng.standard_normal(shape)
    _compare(lambda lib, x, w=None, b=None: lib.nn.functional.group_norm(x, groups, w, b, eps),
             [x, *affine], terms=8 * per_group * math.prod(spatial), gain=_norm_gain(x, eps))


@needs_torch
@FEW
@given(st.data(), st.integers(0, 2 ** 16))
def test_instance_norm_matches_torch(data, seed):
    """Values and gradients, and the running statistics it updates (the mean of their N copies)."""
    draw = data.draw
    channels = draw(st.integers(1, 3))
    shape = (draw(st.integers(1, 3)), channels, *(draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 2)))))
    rng = np.random.default_rng(seed)
    running = [Const(rng.standard_normal(channels)), Const(rng.uniform(0.5, 2, channels))]
    use_input_stats, momentum = draw(st.booleans()), draw(st.sampled_from([0.1, 0.5, 1.0]))
    tracked = not use_input_stats or draw(st.booleans())
    inputs = [rng.standard_normal(shape), *(running if tracked != (draw(st.integers(0, 14)) == 0) else [None, None]),
              *(rng.standard_normal(channels) if draw(st.booleans()) else None for _ in range(2))]
    _compare(lambda lib, x, mean, var, w, b: lib.nn.functional.instance_norm(x, mean, var, w, b, use_input_stats,
                                                                             momentum, 1e-5),
             inputs, terms=8 * math.prod(shape[2:]), gain=_norm_gain(inputs[0], 1e-5))


@needs_torch
@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("affine, track", [(False, False), (True, False), (False, True), (True, True)])
def test_instance_norm_modules_train_and_evaluate_like_torch(dims, affine, track):
    rng = np.random.default_rng(dims)
    mine, theirs = (getattr(lib.nn, f"InstanceNorm{dims}d")(3, affine=affine, track_running_stats=track).double()
                    for lib in (minigrad, torch))
    if affine:
        for p in theirs.parameters():
            p.data.normal_()
        _copy_parameters(mine, theirs)
    spatial = (5,) if dims == 1 else (3, 4)
    for step, training in enumerate([True, True, False, True]):
        mine.train(training)
        theirs.train(training)
        x = rng.standard_normal((2 - step % 2, 3, *spatial) if step < 3 else (3, *spatial))  # the last: unbatched
        _compare(lambda lib, t: (mine if lib is minigrad else theirs)(t), [x], terms=8 * math.prod(spatial),
                 gain=_norm_gain(x, 1e-5))
        for name, buffer in theirs.named_buffers():
            np.testing.assert_allclose(getattr(mine, name).numpy(), buffer.numpy(), rtol=1e-12, atol=1e-12)


# -- interpolation --------------------------------------------------------------------------------
SCALES = [0.3, 0.5, 0.75, 1.0, 1 / 3, 1.3, 1.5, 2.0, 2.5, 3.0]


@needs_torch
@FEW
@given(st.data(), st.integers(0, 2 ** 16))
def test_interpolate_matches_torch(data, seed):
    draw = data.draw
    n = draw(st.sampled_from([1, 2]))
    mode = draw(st.sampled_from(["nearest", "linear" if n == 1 else "bilinear"] + ["linear", "trilinear", "foo"]
                                * (draw(st.integers(0, 9)) == 0)))
    corners = draw(st.sampled_from([None, False, True])) if mode != "nearest" or draw(st.integers(0, 9)) == 0 else None
    if draw(st.booleans()):
        size, scale = _size(draw, n, 0 if draw(st.integers(0, 14)) == 0 else 1, 9), None
    else:
        factors = tuple(draw(st.one_of(st.sampled_from(SCALES), st.floats(0.25, 4.0))) for _ in range(n))
        size, scale = None, factors[0] if draw(st.booleans()) else factors
    recompute = draw(st.sampled_from([None, False] + [True] * (size is None or draw(st.integers(0, 14)) == 0)))
    if draw(st.integers(0, 14)) == 0:
        size = size or 3  # both given: a ValueError
    dtype = draw(st.sampled_from(["float32", "float64"]))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *(draw(st.integers(1, 6)) for _ in range(n)))
    x = np.random.default_rng(seed).standard_normal(shape)

    def resize(lib, t):
        return lib.nn.functional.interpolate(t, size, scale, mode, corners, recompute)

    def copied(result):
        """The gradient of the cells torch's nearest forward copied: its backward picks them with another formula
        (nearest_idx: a size kept or doubled is copied exactly, the scale in float32), which disagrees with its
        forward in a few cases, such as 2 cells resized by 1.3 (forward: cell 0 twice; backward: cells 0 and 1)."""
        cells = resize(torch, torch.arange(x.size, dtype=torch.float64).reshape(shape)).long().numpy()
        grad = np.zeros(x.size)
        np.add.at(grad, cells.ravel(), np.random.default_rng(0).standard_normal(cells.shape).ravel())
        return [grad.reshape(shape)]
    _compare(resize, [x], terms=4, dtype=dtype, grads=copied if mode == "nearest" else None)


# -- the modules: construction, repr, parameters and buffers --------------------------------------
MODULES = [
    ("Conv1d", (4, 6, 3), {}), ("Conv1d", (4, 6, 3), dict(stride=2, padding=1, dilation=2, groups=2, bias=False)),
    ("Conv1d", (4, 6, 4), dict(padding="same", padding_mode="circular")), ("Conv2d", (4, 6, (2, 3)), dict(groups=2)),
    ("Conv2d", (3, 6, 3), dict(padding="valid", dilation=(1, 2))),
    ("MaxPool1d", (3,), {}), ("MaxPool1d", (3, 2, 1, 2, True, True), {}), ("MaxPool2d", ((2, 3),), dict(dilation=2)),
    ("AvgPool1d", (3,), {}), ("AvgPool1d", (3, 2, 1), dict(ceil_mode=True)), ("AdaptiveAvgPool1d", (5,), {}),
    ("AdaptiveMaxPool1d", (4, True), {}), ("AdaptiveMaxPool2d", ((3, None),), {}),
    ("GroupNorm", (2, 4), {}), ("GroupNorm", (2, 4), dict(affine=False)), ("GroupNorm", (1, 3), dict(bias=False)),
    ("InstanceNorm1d", (4,), {}),
    ("InstanceNorm2d", (3,), dict(affine=True, track_running_stats=True, momentum=None)),
    ("Upsample", (), dict(scale_factor=2)), ("Upsample", ((3, 4),), dict(mode="bilinear", align_corners=True)),
    ("Upsample", (), dict(scale_factor=(2, 3), mode="bilinear")), ("UpsamplingNearest2d", (), dict(scale_factor=2)),
    ("UpsamplingBilinear2d", (5,), {}),
]
REFUSED = [("GroupNorm", (3, 4), {}), ("GroupNorm", (0, 4), {}), ("Conv1d", (4, 6, 3), dict(groups=3)),
           ("Conv2d", (4, 6, 3), dict(padding="same", stride=2)), ("Conv1d", (4, 6, 3), dict(padding_mode="mirror"))]


@needs_torch
@pytest.mark.parametrize("name, args, kwargs", MODULES + REFUSED, ids=[f"{n}{a}{k}" for n, a, k in MODULES + REFUSED])
def test_module_construction_and_repr_match_torch(name, args, kwargs):
    made = {}
    for lib in (minigrad, torch):
        try:
            made[lib] = getattr(lib.nn, name)(*args, **kwargs)
        except Exception as error:  # noqa: BLE001
            made[lib] = type(error).__name__
    mine, theirs = made[minigrad], made[torch]
    if isinstance(theirs, str):
        assert mine == theirs
        return
    assert repr(mine) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == \
           {k: tuple(v.shape) for k, v in theirs.state_dict().items()}


@needs_torch
@pytest.mark.parametrize("name, args, kwargs", MODULES, ids=[f"{n}{a}{k}" for n, a, k in MODULES])
def test_modules_compute_what_torch_computes(name, args, kwargs):
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    mine = getattr(minigrad.nn, name)(*args, **kwargs).double()
    for p in theirs.parameters():
        p.data.normal_()
    _copy_parameters(mine, theirs)
    dims = 1 if name[-2:] == "1d" else 2
    channels = args[0] if name.startswith(("Conv", "InstanceNorm")) else args[1] if name == "GroupNorm" else 4
    x = np.random.default_rng(3).standard_normal((2, channels, *(7,) * dims))
    _compare(lambda lib, t: (mine if lib is minigrad else theirs)(t), [x], terms=50)


@needs_torch
def test_instance_norm_module_checks_its_input_like_torch():
    for lib in (minigrad, torch):
        layer = lib.nn.InstanceNorm2d(3, affine=True)
        with pytest.raises(ValueError, match="expected 3D or 4D input"):
            layer(lib.zeros(3, 4))
        with pytest.raises(ValueError, match="to match num_features"):
            layer(lib.zeros(2, 4, 3, 3))
        with pytest.warns(UserWarning, match="does not match num_features"):
            lib.nn.InstanceNorm2d(3)(lib.zeros(2, 4, 3, 3))
