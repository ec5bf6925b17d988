"""Lazy layers and their placeholders against PyTorch's: the same code runs with both libraries
(generated layers and inputs), then reprs, state_dicts, the class each becomes, shapes, and, with
torch's values loaded, outputs and gradients must agree; so must the exception types."""
from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad
from minigrad.nn.parameter import is_lazy

torch = pytest.importorskip("torch")


def arr(t) -> np.ndarray:
    return t.detach().numpy().copy()


def layout(module) -> list:
    return [(k, repr(v) if is_lazy(v) or isinstance(v, torch.nn.parameter.UninitializedTensorMixin)
             else tuple(v.shape)) for k, v in module.state_dict().items()]


@st.composite
def lazy_cases(draw):
    """(class name, constructor kwargs, input shape)."""
    kind = draw(st.sampled_from(["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConvTranspose1d",
                                 "LazyConvTranspose2d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyInstanceNorm1d",
                                 "LazyInstanceNorm2d", "LazyConv3d", "LazyConvTranspose3d", "LazyBatchNorm3d",
                                 "LazyInstanceNorm3d"]))
    channels = draw(st.integers(1, 4))
    batch = draw(st.integers(1, 3))
    if kind == "LazyLinear":
        lead = draw(st.lists(st.integers(1, 3), max_size=2))
        return kind, {"out_features": draw(st.integers(1, 4)), "bias": draw(st.booleans())}, (*lead, channels)
    if "Conv" in kind:
        dims = int(kind[-2])
        groups = draw(st.sampled_from([1, channels]))
        kwargs = {"out_channels": groups * draw(st.integers(1, 2)), "kernel_size": draw(st.integers(1, 2)),
                  "groups": groups, "bias": draw(st.booleans())}
        spatial = tuple(draw(st.integers(2, 4)) for _ in range(dims))
        unbatched = draw(st.booleans())
        return kind, kwargs, ((channels,) if unbatched else (batch, channels)) + spatial
    kwargs = {"affine": draw(st.booleans()), "track_running_stats": draw(st.booleans()), "eps": 1e-3,
              "momentum": draw(st.sampled_from([0.1, None]))}
    if kind.startswith("LazyInstanceNorm"):
        kwargs["momentum"] = 0.1
        spatial = {"1d": (3,), "2d": (2, 3), "3d": (2, 2, 3)}[kind[-2:]]
        return kind, kwargs, (batch, channels) + spatial
    if kind == "LazyBatchNorm1d":
        return kind, kwargs, (batch + 1, channels) + draw(st.sampled_from([(), (3,)]))
    return kind, kwargs, (batch + 1, channels, 2, 2) + ((2,) if kind.endswith("3d") else ())


@pytest.mark.filterwarnings("ignore:input's size at dim")  # (an instance norm without parameters stays at 0)
@settings(max_examples=40, deadline=None)
@given(case=lazy_cases(), seed=st.integers(0, 2**16))
def test_lazy_layers_match_torch(case, seed):
    kind, kwargs, shape = case
    rng = np.random.default_rng(seed)
    x, x2 = rng.standard_normal(shape), rng.standard_normal(shape)
    layers, records = {}, {}
    for L in (minigrad, torch):
        layer = getattr(L.nn, kind)(**kwargs).double()
        before = (repr(layer), layout(layer), layer.has_uninitialized_params())
        layer(L.tensor(x))  # the first call gives the placeholders their shapes
        records[L] = (before, type(layer).__name__, repr(layer), layout(layer), layer.has_uninitialized_params()
                      if hasattr(layer, "has_uninitialized_params") else None,
                      [str(p.dtype).split(".")[-1] for p in layer.parameters()])
        layers[L] = layer
    assert records[minigrad] == records[torch]
    m, t = layers[minigrad], layers[torch]
    m.load_state_dict({k: minigrad.tensor(arr(v)) for k, v in t.state_dict().items()})
    xm, xt = minigrad.tensor(x2, requires_grad=True), torch.tensor(x2, requires_grad=True)
    ym, yt = m(xm), t(xt)
    np.testing.assert_allclose(arr(ym), arr(yt), rtol=1e-9, atol=1e-10)
    weights = np.sin(np.arange(yt.numel())).reshape(tuple(yt.shape))
    (ym * minigrad.tensor(weights)).sum().backward()
    (yt * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(arr(xm.grad), arr(xt.grad), rtol=1e-7, atol=1e-9)
    for (name, p), (_, q) in zip(m.named_parameters(), t.named_parameters()):
        np.testing.assert_allclose(arr(p.grad), arr(q.grad), rtol=1e-8, atol=1e-10, err_msg=name)
    for (name, b), (_, c) in zip(m.named_buffers(), t.named_buffers()):
        np.testing.assert_allclose(arr(b), arr(c), rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.filterwarnings("ignore:input's size at dim")
@settings(max_examples=20, deadline=None)
@given(case=lazy_cases(), seed=st.integers(0, 2**16))
def test_loading_a_state_dict_gives_the_placeholders_their_shapes(case, seed):
    kind, kwargs, shape = case
    x = np.random.default_rng(seed).standard_normal(shape)
    source = getattr(torch.nn, kind)(**kwargs).double()
    source(torch.tensor(x))
    state = source.state_dict()
    records = {}
    for L in (minigrad, torch):
        layer = getattr(L.nn, kind)(**kwargs).double()
        layer.load_state_dict({k: L.tensor(arr(v)) for k, v in state.items()})
        loaded = (type(layer).__name__, layout(layer), layer.has_uninitialized_params())
        try:
            y = arr(layer(L.tensor(x)))
        except ValueError:  # an affine instance norm then still has num_features=0, in PyTorch too
            y = "ValueError"
        records[L] = (loaded, type(layer).__name__, repr(layer), y)  # (a lazy conv keeps in_channels=0 here)
    (*got, y_got), (*want, y_want) = records[minigrad], records[torch]
    assert got == want
    if isinstance(y_want, str):
        assert y_got == y_want
    else:
        np.testing.assert_allclose(y_got, y_want, rtol=1e-9, atol=1e-10)


def test_placeholders_match_torch():
    for L in (minigrad, torch):
        p = L.nn.UninitializedParameter()
        assert (repr(p), tuple(p.size()), p.dtype, p.requires_grad) == ("<UninitializedParameter>", (0,), L.float32,
                                                                         True)
        with pytest.raises(ValueError):
            p + 1
        with pytest.raises(ValueError):
            L.nn.functional.linear(L.ones(2, 3), p)
        with pytest.raises(RuntimeError):
            p.shape
        twin = copy.deepcopy(p)
        assert type(twin) is L.nn.UninitializedParameter and twin is not p
        p.materialize((2, 3), dtype=L.float64)
        assert type(p) is L.nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == L.float64 and p.requires_grad
        b = L.nn.UninitializedBuffer()
        assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
        b.materialize((4,))
        assert type(b) is L.Tensor and tuple(b.shape) == (4,)


def test_lazy_refusals_match_torch():
    for L in (minigrad, torch):
        with pytest.raises(RuntimeError):  # neither (C, L) nor (N, C, L)
            L.nn.LazyConv1d(2, 1)(L.ones(5))
        with pytest.raises(ValueError):
            L.nn.LazyConv2d(2, 1, groups=2)(L.ones(1, 3, 2, 2))
        layer = L.nn.LazyLinear(2)
        layer.load_state_dict({"weight": L.ones(2, 3), "bias": L.ones(2)})
        with pytest.raises(AssertionError):  # in_features from the weight: 3, not 4
            layer(L.ones(1, 4))
        with pytest.raises(ValueError):  # PyTorch's rule: num_features = input.shape[1], here L
            L.nn.LazyInstanceNorm1d()(L.ones(3, 5))
        with pytest.raises(RuntimeError):  # an initialized layer refuses a placeholder's state
            L.nn.Linear(3, 2).load_state_dict(L.nn.LazyLinear(2).state_dict())

        class Half(L.nn.modules.lazy.LazyModuleMixin, L.nn.Module):
            def forward(self, x):
                return x

        with pytest.raises(NotImplementedError):
            Half()(L.ones(1))


def test_a_lazy_layer_in_a_model_and_its_dtype():
    for L in (minigrad, torch):
        model = L.nn.Sequential(L.nn.LazyLinear(4), L.nn.ReLU(), L.nn.LazyLinear(2)).double()
        assert model[0].has_uninitialized_params() and model[0].weight.dtype == L.float64
        y = model(L.ones(5, 3, dtype=L.float64))
        assert tuple(y.shape) == (5, 2) and [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear"]
        assert [tuple(p.shape) for p in model.parameters()] == [(4, 3), (4,), (2, 4), (2,)]
        assert model[0]._forward_pre_hooks == {} and not hasattr(model[0], "_initialize_hook")


def test_a_nested_lazy_layer_loads_by_its_prefix():
    source = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    x = np.random.default_rng(0).standard_normal((5, 3))
    outputs = []
    for L in (minigrad, torch):
        model = L.nn.Sequential(L.nn.LazyLinear(4), L.nn.Tanh(), L.nn.LazyLinear(2)).double()
        model.load_state_dict({k: L.tensor(arr(v)) for k, v in source.state_dict().items()})
        assert [tuple(p.shape) for p in model.parameters()] == [(4, 3), (4,), (2, 4), (2,)]
        outputs.append(arr(model(L.tensor(x))))
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-12)

