"""The 3-D family against PyTorch: conv3d / conv_transpose3d, the 3-D pools (max, avg, adaptive, LP),
BatchNorm3d, InstanceNorm3d and the 3-D padding layers.

Hypothesis draws shapes, strides, paddings, dilations, groups, ceil_mode and dtypes, some invalid; the same
inputs go through both libraries (``compare`` from test_nn_spatial): the same exception type, or the same
values, indices and gradients of every float input. Layers are compared with torch's weights loaded, with
their reprs and state_dicts. gradcheck and gradgradcheck run without torch.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck
from tests.nn.test_spatial import FEW, compare, needs_torch, same_module, torch


def _triple(draw, low: int, high: int):
    values = tuple(draw(st.integers(low, high)) for _ in range(3))
    return values[0] if len(set(values)) == 1 and draw(st.booleans()) else values


def _spread(draw, shape: tuple) -> np.ndarray:
    """Distinct values, far apart: no ties in a max, and a finite step moves none."""
    return np.random.default_rng(draw(st.integers(0, 2 ** 16))).permutation(int(np.prod(shape))).reshape(shape) * 0.1


# -- convolutions ----------------------------------------------------------------------------------------
@st.composite
def convolutions(draw):
    groups = draw(st.integers(1, 2))
    channels, out_channels = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(3))
    stride, dilation = _triple(draw, 1, 2), _triple(draw, 1, 2)
    padding = draw(st.sampled_from(["same", "valid", _triple(draw, 0, 2)]))
    spatial = tuple(draw(st.integers(3, 6)) for _ in range(3))
    batch = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    x = rng.standard_normal((*batch, channels, *spatial))
    w = rng.standard_normal((out_channels, channels // groups, *kernel))
    b = rng.standard_normal(out_channels) if draw(st.booleans()) else None
    broken = draw(st.sampled_from([None] * 10 + ["channels", "groups", "stride", "padding"]))
    if broken == "channels":
        w = rng.standard_normal((out_channels, channels // groups + 1, *kernel))
    elif broken == "groups":
        groups = draw(st.sampled_from([0, 3]))
    elif broken == "stride":
        stride = 0
    elif broken == "padding":
        padding = draw(st.sampled_from([-1, "full"]))
    return x, w, b, stride, padding, dilation, groups, draw(st.sampled_from(["float64", "float32"]))


@needs_torch
@FEW
@given(convolutions())
def test_conv3d_matches_torch(case):
    x, w, b, stride, padding, dilation, groups, dtype = case
    compare(lambda lib, x, w, *b: lib.nn.functional.conv3d(x, w, *b, stride, padding, dilation, groups),
            [x, w] + ([] if b is None else [b]), dtype, terms=int(np.prod(w.shape[1:])) * 2)


@st.composite
def transposed_convolutions(draw):
    groups = draw(st.integers(1, 2))
    channels, out_channels = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(3))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(3))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(3))
    padding = tuple(draw(st.integers(0, 1)) for _ in range(3))
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    if draw(st.integers(0, 9)) == 0:  # too large
        output_padding = stride
    spatial = tuple(draw(st.integers(1, 4)) for _ in range(3))
    # (an empty output, which PyTorch gives and minigrad's 1-D and 2-D transposed convolutions refuse too, is left out)
    padding = tuple(p if (n - 1) * s - 2 * p + d * (k - 1) + 1 + o > 0 else 0 for n, s, p, d, k, o in
                    zip(spatial, stride, padding, dilation, kernel, output_padding))
    batch = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    x = rng.standard_normal((*batch, channels, *spatial))
    w = rng.standard_normal((channels, out_channels // groups, *kernel))
    b = rng.standard_normal(out_channels) if draw(st.booleans()) else None
    return x, w, b, stride, padding, output_padding, groups, dilation, draw(st.sampled_from(["float64", "float32"]))


@needs_torch
@FEW
@given(transposed_convolutions())
def test_conv_transpose3d_matches_torch(case):
    x, w, b, stride, padding, output_padding, groups, dilation, dtype = case
    compare(lambda lib, x, w, *b: lib.nn.functional.conv_transpose3d(x, w, *(b or [None]), stride, padding,
                                                                      output_padding, groups, dilation),
            [x, w] + ([] if b is None else [b]), dtype, terms=int(np.prod(w.shape)) * 2)


def _loaded(name: str, *args, **kwargs):
    """The layer in both libraries, in float64, minigrad's with torch's weights."""
    mine, theirs = same_module(name, *args, **kwargs)
    mine.double()
    theirs.double()
    mine.load_state_dict({k: minigrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


@needs_torch
@pytest.mark.parametrize("args", [dict(in_channels=2, out_channels=4, kernel_size=3),
                                  dict(in_channels=2, out_channels=2, kernel_size=(1, 2, 3), stride=2, padding=1,
                                       groups=2, bias=False),
                                  dict(in_channels=2, out_channels=3, kernel_size=2, padding=1, dilation=2,
                                       padding_mode="reflect"),
                                  dict(in_channels=2, out_channels=3, kernel_size=3, padding="same",
                                       padding_mode="circular")])
def test_conv3d_layer_matches_torch(args):
    mine, theirs = _loaded("Conv3d", **args)
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 4, 6))
    np.testing.assert_allclose(mine(minigrad.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12, atol=1e-12)


@needs_torch
def test_conv_transpose3d_layer_output_size_matches_torch():
    mine, theirs = _loaded("ConvTranspose3d", 2, 3, (3, 2, 2), stride=2, padding=1)
    x = np.random.default_rng(1).standard_normal((1, 2, 3, 2, 4))
    for size in ([5, 2, 6], [6, 3, 7], [1, 3, 6, 3, 7]):
        np.testing.assert_allclose(mine(minigrad.tensor(x), size).detach().numpy(),
                                   theirs(torch.tensor(x), size).detach().numpy(), rtol=1e-12, atol=1e-12)
    for layer, lib in ((mine, minigrad), (theirs, torch)):
        with pytest.raises(ValueError):
            layer(lib.tensor(x), [7, 3, 7])
    same_module("ConvTranspose3d", 4, 2, 3, output_padding=1, stride=2, dilation=2)


# -- pools -------------------------------------------------------------------------------------------------
@st.composite
def pools(draw, kind: str):
    spatial = tuple(draw(st.integers(1, 6)) for _ in range(3))
    batch = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    x = _spread(draw, (*batch, draw(st.integers(1, 2)), *spatial))
    if kind.startswith("adaptive"):
        size = tuple(draw(st.sampled_from([None, 1, 2, 3, 4])) for _ in range(3))
        if draw(st.booleans()) and None not in size:
            size = size[0]
        if draw(st.integers(0, 9)) == 0:
            size = (2, 2)
        return kind, x, dict(output_size=size)
    kernel = _triple(draw, 1, 3)
    args = dict(kernel_size=kernel, stride=draw(st.sampled_from([None, _triple(draw, 1, 3)])),
                ceil_mode=draw(st.booleans()))
    ks = (kernel,) * 3 if isinstance(kernel, int) else kernel
    if kind != "lp":
        args["padding"] = tuple(draw(st.integers(0, k // 2 + (draw(st.integers(0, 9)) == 0))) for k in ks)
    if kind == "max":
        args.update(dilation=_triple(draw, 1, 2), return_indices=draw(st.booleans()))
    elif kind == "avg":
        args.update(count_include_pad=draw(st.booleans()),
                    divisor_override=draw(st.sampled_from([None, None, 3])))
    else:
        args["norm_type"] = draw(st.sampled_from([1.0, 2.0, 3.0]))
        x = np.abs(x) + 0.1
    return kind, x, args


@needs_torch
@pytest.mark.parametrize("kind", ["max", "avg", "adaptive_max", "adaptive_avg", "lp"])
def test_pools_match_torch(kind):
    @FEW
    @given(pools(kind), st.sampled_from(["float64", "float32"]))
    def check(case, dtype):
        _compare_pool(*case, dtype)
    check()


def _compare_pool(kind: str, x: np.ndarray, args: dict, dtype: str) -> None:
    name = {"max": "max_pool3d", "avg": "avg_pool3d", "adaptive_max": "adaptive_max_pool3d",
            "adaptive_avg": "adaptive_avg_pool3d", "lp": "lp_pool3d"}[kind]
    if kind == "adaptive_max":
        args["return_indices"] = True
    compare(lambda lib, x: getattr(lib.nn.functional, name)(x, **args), [x], dtype, terms=27)


@needs_torch
@pytest.mark.parametrize("call", [
    lambda F, x: F.max_pool3d(x, (1, 1, 2), None, (0, 0, 1), (1, 1, 2), return_indices=True),  # a window over padding
    lambda F, x: F.max_pool3d(x, 3, 2, 1, 1, True, True),  # ceil_mode's last window starts in the padding
    lambda F, x: F.avg_pool3d(x, 3, 2, 1, True, True),
    lambda F, x: F.avg_pool3d(x, (2, 2, 3), 1, 0),  # smaller than the kernel: refused
    lambda F, x: F.adaptive_max_pool3d(x, (3, 0, 2), True),
])
def test_pool_edge_cases_match_torch(call):
    x = np.random.default_rng(0).permutation(8).reshape(1, 2, 1, 2, 2) * 0.1
    compare(lambda lib, x: call(lib.nn.functional, x), [x])


@needs_torch
@pytest.mark.parametrize("name", ["max_pool3d", "avg_pool3d"])
def test_pool_size_messages_are_torchs(name):
    messages = []
    for lib in (minigrad, torch):
        with pytest.raises(RuntimeError) as raised:
            getattr(lib.nn.functional, name)(lib.zeros(1, 1, 4, 4, 4), (2, 2))
        messages.append(str(raised.value))
    assert messages[0] == messages[1]


@needs_torch
@pytest.mark.parametrize("name, args", [("MaxPool3d", (2,)), ("MaxPool3d", ((1, 2, 3), 1, (0, 1, 1), 2, True, True)),
                                        ("AvgPool3d", (3, 2, 1, True, False, 2)),
                                        ("AdaptiveAvgPool3d", ((2, None, 3),)), ("AdaptiveMaxPool3d", (2, True)),
                                        ("LPPool3d", (2, 2)), ("LPPool3d", (1.5, (1, 2, 2), 1, True))])
def test_pool_layers_match_torch(name, args):
    mine, theirs = same_module(name, *args)
    x = np.random.default_rng(0).permutation(2 * 2 * 4 * 5 * 6).reshape(2, 2, 4, 5, 6) * 0.1
    outs = [layer(lib.tensor(x)) for lib, layer in ((minigrad, mine), (torch, theirs))]
    outs = [o if isinstance(o, tuple) else (o,) for o in outs]
    for m, t in zip(*outs):
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-12)


# -- normalisation and padding -----------------------------------------------------------------------------
@needs_torch
@pytest.mark.parametrize("name, args", [("BatchNorm3d", dict(num_features=3)),
                                        ("BatchNorm3d", dict(num_features=3, momentum=None, affine=False)),
                                        ("InstanceNorm3d", dict(num_features=3)),
                                        ("InstanceNorm3d", dict(num_features=3, affine=True,
                                                                track_running_stats=True))])
def test_norm_layers_match_torch_in_training_and_eval(name, args):
    mine, theirs = _loaded(name, **args)
    rng = np.random.default_rng(0)
    for step in range(3):
        x = rng.standard_normal((2, 3, 2, 3, 4)) * 2 + 1
        if step == 2:
            mine.eval()
            theirs.eval()
        np.testing.assert_allclose(mine(minigrad.tensor(x)).detach().numpy(),
                                   theirs(torch.tensor(x)).detach().numpy(), rtol=1e-10, atol=1e-10)
    for (key, m), t in zip(mine.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-12, err_msg=key)
    wrong = (2, 3, 4, 5) if name == "BatchNorm3d" else (3, 4, 5)  # (InstanceNorm3d takes one (C, D, H, W) volume)
    for layer, lib in ((mine, minigrad), (theirs, torch)):
        with pytest.raises(ValueError):
            layer(lib.zeros(*wrong, dtype=lib.float64))


@needs_torch
@FEW
@given(st.sampled_from(["ConstantPad3d", "ZeroPad3d", "ReflectionPad3d", "ReplicationPad3d", "CircularPad3d"]),
       st.integers(0, 2 ** 16), st.booleans(), st.sampled_from([None, 1, 2]))
def test_padding_layers_match_torch(name, seed, batched, single):
    rng = np.random.default_rng(seed)
    padding = single if single is not None else tuple(int(p) for p in rng.integers(0, 3, 6))
    args = (padding, 1.5) if name == "ConstantPad3d" else (padding,)
    mine, theirs = same_module(name, *args)
    x = rng.standard_normal((2, 3, 4, 3, 3)[1 - batched:])
    compare(lambda lib, x: (mine if lib is minigrad else theirs)(x), [x])


# -- gradcheck in float64, without torch ---------------------------------------------------------------------
GRADCHECKS = {  # name: (function of the leaves, leaf shapes)
    "conv3d groups stride dilation": (lambda x, w, b: F.conv3d(x, w, b, (2, 1, 1), (1, 0, 1), (1, 2, 1), 2),
                                      [(1, 4, 4, 5, 3), (2, 2, 2, 2, 2), (2,)]),
    "conv_transpose3d": (lambda x, w, b: F.conv_transpose3d(x, w, b, (2, 1, 2), 1, (1, 0, 0), 1, (1, 2, 1)),
                         [(1, 2, 2, 3, 2), (2, 2, 2, 2, 2), (2,)]),
    "max_pool3d": (lambda x: F.max_pool3d(x, 2, 1, 1, 1, True) ** 2, [(1, 2, 3, 3, 2)]),
    "avg_pool3d": (lambda x: F.avg_pool3d(x, (2, 1, 2), 2, (1, 0, 1), True, False), [(1, 2, 3, 3, 3)]),
    "adaptive_avg_pool3d": (lambda x: F.adaptive_avg_pool3d(x, (2, 3, 1)), [(2, 1, 3, 4, 2)]),
    "adaptive_max_pool3d": (lambda x: F.adaptive_max_pool3d(x, (2, 2, 1)) ** 2, [(1, 2, 3, 3, 2)]),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck_and_gradgradcheck(name):
    fn, shapes = GRADCHECKS[name]
    rng = np.random.default_rng(len(name))
    leaves = [minigrad.tensor(rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1 + 0.05,
                              dtype=minigrad.float64, requires_grad=True) for shape in shapes]
    assert gradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
