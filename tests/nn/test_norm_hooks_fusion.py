"""The older hook-based ``nn.utils.weight_norm`` / ``spectral_norm``, the batch-norm fusions and
``skip_init``, against PyTorch's: the same code runs with both libraries, torch's state is loaded
into minigrad's, and values, gradients, buffers, state_dict keys, warnings and exception types agree.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad
import minigrad.nn as mnn
from minigrad.nn.utils.fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval
from minigrad.nn.utils.init import skip_init
from minigrad.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from minigrad.nn.utils.weight_norm import remove_weight_norm, weight_norm

torch = pytest.importorskip("torch")
from tests.nn.test_parametrize import arr, make_input, make_layer, same, to_minigrad  # noqa: E402

UTILS = {
    minigrad: dict(weight_norm=weight_norm, remove_weight_norm=remove_weight_norm, spectral_norm=spectral_norm,
                   remove_spectral_norm=remove_spectral_norm, fuse_conv_bn_eval=fuse_conv_bn_eval,
                   fuse_conv_bn_weights=fuse_conv_bn_weights, fuse_linear_bn_eval=fuse_linear_bn_eval,
                   skip_init=skip_init),
    torch: {name: getattr(torch.nn.utils, name) for name in
            ("weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "fuse_conv_bn_eval",
             "fuse_conv_bn_weights", "fuse_linear_bn_eval", "skip_init")},
}


KINDS = ["Linear", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]


def run(layers: dict, x: np.ndarray) -> None:
    """Forward and backward in both libraries: outputs and every parameter's gradient agree."""
    m, t = layers[minigrad], layers[torch]
    ym, yt = m(minigrad.tensor(x)), t(torch.tensor(x))
    same(ym, yt)
    weights = np.cos(np.arange(ym.numel())).reshape(tuple(ym.shape))
    (ym * minigrad.tensor(weights)).sum().backward()
    (yt * torch.tensor(weights)).sum().backward()
    mp, tp = dict(m.named_parameters()), dict(t.named_parameters())
    assert list(mp) == list(tp)
    for name in tp:
        same(mp[name].grad, tp[name].grad, rtol=1e-7, atol=1e-9)
        mp[name].grad, tp[name].grad = None, None


def same_state(layers: dict, **tolerances) -> None:
    ms, ts = layers[minigrad].state_dict(), layers[torch].state_dict()
    assert [(k, tuple(v.shape)) for k, v in ms.items()] == [(k, tuple(v.shape)) for k, v in ts.items()]
    for k in ts:
        same(ms[k], ts[k], **tolerances)


@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(KINDS), cin=st.integers(1, 3), cout=st.integers(1, 3), k=st.integers(1, 3),
       dim=st.sampled_from([0, 1, None]), seed=st.integers(0, 2**16))
def test_hook_weight_norm_matches_torch(kind, cin, cout, k, dim, seed):
    rng = np.random.default_rng(seed)
    layers = {}
    for L, utils in UTILS.items():
        with pytest.warns(FutureWarning, match="deprecated"):
            layers[L] = utils["weight_norm"](make_layer(L, kind, (cin, cout, k)), dim=dim)
        assert type(layers[L]).__name__ == kind and "weight" not in layers[L]._parameters
    layers[minigrad].load_state_dict(to_minigrad(layers[torch].state_dict()))
    same_state(layers)
    for _ in range(2):
        run(layers, make_input(kind, (cin, cout, k), rng))
    same(layers[minigrad].weight, layers[torch].weight)
    for L, utils in UTILS.items():
        with pytest.raises(RuntimeError), pytest.warns(FutureWarning):  # (it warns, then refuses)
            utils["weight_norm"](layers[L], dim=dim)
        utils["remove_weight_norm"](layers[L])
        with pytest.raises(ValueError):
            utils["remove_weight_norm"](layers[L])
    same_state(layers)
    assert isinstance(layers[minigrad].weight, mnn.Parameter)


@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(KINDS), cin=st.integers(1, 3), cout=st.integers(1, 3), k=st.integers(1, 3),
       n_power_iterations=st.integers(1, 3), eps=st.sampled_from([1e-12, 1e-2]), dim=st.sampled_from([None, 0, 1]),
       seed=st.integers(0, 2**16))
def test_hook_spectral_norm_matches_torch(kind, cin, cout, k, n_power_iterations, eps, dim, seed):
    rng = np.random.default_rng(seed)
    layers = {L: utils["spectral_norm"](make_layer(L, kind, (cin, cout, k)), n_power_iterations=n_power_iterations,
                                        eps=eps, dim=dim) for L, utils in UTILS.items()}
    layers[minigrad].load_state_dict(to_minigrad(layers[torch].state_dict()))
    assert layers[minigrad].state_dict()._metadata == layers[torch].state_dict()._metadata  # (the version: 1)
    for _ in range(2):  # training: n_power_iterations steps on weight_u / weight_v at each call
        run(layers, make_input(kind, (cin, cout, k), rng))
        same_state(layers, rtol=1e-7, atol=1e-9)
    for layer in layers.values():
        layer.eval()
    u = arr(layers[minigrad].weight_u)
    run(layers, make_input(kind, (cin, cout, k), rng))
    np.testing.assert_array_equal(arr(layers[minigrad].weight_u), u)
    for L, utils in UTILS.items():
        with pytest.raises(RuntimeError):
            utils["spectral_norm"](layers[L])
        utils["remove_spectral_norm"](layers[L])
        with pytest.raises(ValueError):
            utils["remove_spectral_norm"](layers[L])
    same_state(layers, rtol=1e-7, atol=1e-9)
    assert layers[minigrad].state_dict()._metadata == layers[torch].state_dict()._metadata


def test_hook_spectral_norm_loads_a_checkpoint_without_weight_v():
    """Version 0 saved ``weight`` and ``weight_u`` only: the load pre-hook solves ``weight_v``."""
    rng = np.random.default_rng(3)
    old = {"bias": rng.standard_normal(3), "weight_orig": rng.standard_normal((3, 4)),
           "weight_u": rng.standard_normal(3)}
    old["weight"] = old["weight_orig"] / 2.5
    got = {}
    for L, utils in UTILS.items():
        layer = utils["spectral_norm"](L.nn.Linear(4, 3).double())
        layer.load_state_dict({k: L.tensor(v) for k, v in old.items()})
        got[L] = arr(layer.weight_v)
    np.testing.assert_allclose(got[minigrad], got[torch], rtol=1e-8)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # (weight_norm warns before it refuses)
def test_hook_norm_refusals():
    for L, utils in UTILS.items():
        with pytest.raises(ValueError):
            utils["spectral_norm"](L.nn.Linear(3, 3), n_power_iterations=0)
        with pytest.raises(ValueError):
            utils["spectral_norm"](L.nn.Linear(3, 3, bias=False), name="bias")
        with pytest.raises(KeyError):
            utils["spectral_norm"](L.nn.Linear(3, 3), name="nothing")
        with pytest.raises(ValueError):
            utils["weight_norm"](L.nn.LazyLinear(3))
        with pytest.raises(ValueError):
            utils["spectral_norm"](L.nn.LazyLinear(3))


# -- fusion ---------------------------------------------------------------------------------
@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(KINDS), cin=st.integers(1, 3), cout=st.integers(1, 3), k=st.integers(1, 3),
       bias=st.booleans(), affine=st.booleans(), one_feature=st.booleans(), seed=st.integers(0, 2**16))
def test_fuse_bn_matches_torch(kind, cin, cout, k, bias, affine, one_feature, seed):
    rng = np.random.default_rng(seed)
    transposed = kind.startswith("ConvTranspose")
    features = 1 if kind == "Linear" and one_feature else cout
    bn_state = {"running_mean": rng.standard_normal(features), "running_var": rng.uniform(0.2, 3.0, features),
                "num_batches_tracked": np.array(7)}
    if affine:
        bn_state.update(weight=rng.standard_normal(features), bias=rng.standard_normal(features))
    layer_state, x = None, make_input(kind, (cin, cout, k), rng)
    out, fused_params = {}, {}
    for L, utils in UTILS.items():
        layer = make_layer(L, kind, (cin, cout, k), bias=bias).eval()
        if layer_state is None:
            layer_state = {key: arr(v) for key, v in layer.state_dict().items()}
        layer.load_state_dict({key: L.tensor(v) for key, v in layer_state.items()})
        bn = L.nn.BatchNorm1d(features, affine=affine).double().eval()
        bn.load_state_dict({key: L.tensor(v) for key, v in bn_state.items()})
        if kind == "Linear" and not affine:  # (unlike the conv fusion, PyTorch's needs bn's weight and bias)
            with pytest.raises(TypeError):
                utils["fuse_linear_bn_eval"](layer, bn)
            return
        if kind == "Linear":
            fused = utils["fuse_linear_bn_eval"](layer, bn)
        else:
            fused = utils["fuse_conv_bn_eval"](layer, bn, transpose=transposed)
        assert fused is not layer and type(fused) is type(layer)
        out[L] = arr(fused(L.tensor(x)))
        fused_params[L] = (fused.weight.requires_grad, isinstance(fused.bias, L.nn.Parameter))
        with pytest.raises(AssertionError):
            (utils["fuse_linear_bn_eval"] if kind == "Linear" else utils["fuse_conv_bn_eval"])(layer.train(), bn)
    np.testing.assert_allclose(out[minigrad], out[torch], rtol=1e-9, atol=1e-12)
    assert fused_params[minigrad] == fused_params[torch]


def test_fuse_weights_dtypes_and_refusals():
    for L, utils in UTILS.items():
        conv_w = L.ones(2, 1, 3, dtype=L.float64, requires_grad=True)
        w, b = utils["fuse_conv_bn_weights"](conv_w, None, L.zeros(2), L.ones(2), 1e-5, None, None)
        assert (w.dtype, b.dtype, w.requires_grad, b.requires_grad) == (L.float64, L.float64, True, False)
        with pytest.raises(AssertionError):
            utils["fuse_linear_bn_eval"](L.nn.Linear(2, 3).eval(), L.nn.BatchNorm1d(2).eval())
        with pytest.raises(AssertionError):
            utils["fuse_conv_bn_eval"](L.nn.Conv1d(2, 3, 1).eval(),
                                       L.nn.BatchNorm1d(3, track_running_stats=False).eval())


def test_skip_init():
    for L, utils in UTILS.items():
        layer = utils["skip_init"](L.nn.Linear, 3, 4, bias=False)
        assert type(layer) is L.nn.Linear and tuple(layer.weight.shape) == (4, 3) and layer.bias is None
        with pytest.raises(RuntimeError):
            utils["skip_init"](int)
        with pytest.raises(RuntimeError):
            utils["skip_init"](L.nn.ReLU)
