"""TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer
against PyTorch: the same state_dict keys, parameter shapes and repr; with torch's weights loaded, in
eval mode (dropout off), the same outputs and gradients of every input and parameter, for
hypothesis-drawn sizes, heads, activations, norm_first, batch_first, bias and masks.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import gradgradcheck

torch = pytest.importorskip("torch")

FEW = settings(max_examples=15, deadline=None)
DTYPES = {"float64": (np.float64, 1e-10), "float32": (np.float32, 5e-4)}


def _activation(lib, name: str):
    """The same activation in either library: a name, a function or a Module."""
    functional = minigrad.nn.functional if lib is minigrad else torch.nn.functional
    return {"relu": "relu", "gelu": "gelu", "F.gelu": functional.gelu, "GELU()": lib.nn.GELU()}[name]


def _pair(build):
    """``build(lib)`` in both libraries, torch's weights loaded into minigrad's, both in eval mode."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's warning that its nested-tensor fast path is off)
        theirs = build(torch).eval()
    mine = build(minigrad).eval()
    assert repr(mine) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({key: minigrad.tensor(value.numpy()) for key, value in theirs.state_dict().items()})
    return mine, theirs


def _both(array: np.ndarray, grad: bool = False):
    return minigrad.tensor(array, requires_grad=grad), torch.tensor(array, requires_grad=grad)


def _close(mine, theirs, tol: float, what: str) -> None:
    assert (mine is None) == (theirs is None), what
    if mine is not None:
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol, err_msg=what)


def _compare(mine, theirs, inputs: dict, tol: float) -> None:
    """Run both modules on ``inputs`` (name: (minigrad, torch) pair or plain value); compare the output
    and the gradients of the float inputs and of every parameter."""
    outs = []
    for i, module in enumerate((mine, theirs)):
        out = module(**{k: v[i] if isinstance(v, tuple) else v for k, v in inputs.items()})
        (out * out).sum().backward()
        outs.append(out)
    _close(outs[0], outs[1], tol, "output")
    for name, value in inputs.items():
        if isinstance(value, tuple) and value[1].requires_grad:
            _close(value[0].grad, value[1].grad, tol, f"gradient of {name}")
    their_params = dict(theirs.named_parameters())
    for name, p in mine.named_parameters():
        _close(p.grad, their_params[name].grad, tol, f"gradient of {name}")


@st.composite
def layer_options(draw, module_activation: bool = True):
    """A layer's arguments. ``module_activation=False`` leaves out an activation Module: torch's decoder
    stacks lose it (the copies TransformerDecoder makes run ReLU, as TransformerDecoderLayer.__setstate__
    sets ``activation`` to F.relu when the copied state holds it under ``_modules``; PyTorch fixed the
    encoder layer only, pytorch/pytorch#81832). minigrad's copies keep it: see the test below."""
    nhead = draw(st.sampled_from([1, 2]))
    activations = ["relu", "gelu", "F.gelu"] + (["GELU()"] if module_activation else [])
    return {
        "d_model": nhead * draw(st.integers(1, 3)), "nhead": nhead, "dim_feedforward": draw(st.integers(1, 5)),
        "activation": draw(st.sampled_from(activations)),
        "layer_norm_eps": draw(st.sampled_from([1e-5, 1e-3])), "batch_first": draw(st.booleans()),
        "norm_first": draw(st.booleans()), "bias": draw(st.booleans()),
    }


@st.composite
def sequences(draw):
    return {"batched": draw(st.booleans()), "N": draw(st.integers(1, 2)), "S": draw(st.integers(1, 4)),
            "T": draw(st.integers(1, 3)), "mask": draw(st.sampled_from([None, "causal", "bool", "padding"])),
            "is_causal": draw(st.sampled_from([None, False, True])), "dtype": draw(st.sampled_from(list(DTYPES)))}


def _sequence(rng, seq, length: int, width: int, batch_first: bool, np_dtype):
    if not seq["batched"]:
        shape = (length, width)
    else:
        shape = (seq["N"], length, width) if batch_first else (length, seq["N"], width)
    return _both(rng.standard_normal(shape).astype(np_dtype), grad=True)


def _masks(rng, seq, length: int, prefix: str, np_dtype) -> dict:
    """A causal or random attention mask, or a key padding mask; a query always sees key 0."""
    kind = seq["mask"]
    if kind == "causal":
        m = minigrad.nn.Transformer.generate_square_subsequent_mask(length, dtype=getattr(minigrad, np_dtype.__name__))
        return {f"{prefix}mask": (m, torch.nn.Transformer.generate_square_subsequent_mask(
            length, dtype=getattr(torch, np_dtype.__name__)))}
    if kind == "bool":
        mask = rng.random((length, length)) < 0.4
        mask[:, 0] = False
        return {f"{prefix}mask": _both(mask)}
    if kind == "padding":
        padding = rng.random((seq["N"], length) if seq["batched"] else (length,)) < 0.4
        padding[..., 0] = False
        return {f"{prefix}key_padding_mask": _both(padding)}
    return {}


def _layer_options(lib, options: dict, dtype: str) -> dict:
    return {**options, "activation": _activation(lib, options["activation"]), "dtype": getattr(lib, dtype)}


@FEW
@given(layer_options(), sequences(), st.integers(0, 2 ** 16))
def test_encoder_layer_and_encoder_as_torch(options, seq, seed):
    rng = np.random.default_rng(seed)
    np_dtype, tol = DTYPES[seq["dtype"]]
    stack = seed % 2 == 0
    def build(lib):
        layer = lib.nn.TransformerEncoderLayer(**_layer_options(lib, options, seq["dtype"]))
        if not stack:
            return layer
        norm = lib.nn.LayerNorm(options["d_model"], dtype=getattr(lib, seq["dtype"]))
        return lib.nn.TransformerEncoder(layer, 2, norm)
    mine, theirs = _pair(build)
    inputs = {"src": _sequence(rng, seq, seq["S"], options["d_model"], options["batch_first"], np_dtype)}
    masks = _masks(rng, seq, seq["S"], "src_" if not stack else "", np_dtype)
    if stack:  # TransformerEncoder names them mask and src_key_padding_mask
        masks = {("src_key_padding_mask" if k == "key_padding_mask" else k): v for k, v in masks.items()}
        inputs["is_causal"] = seq["is_causal"] if seq["mask"] == "causal" else None
    elif seq["mask"] == "causal":
        inputs["is_causal"] = bool(seq["is_causal"])
    _compare(mine, theirs, {**inputs, **masks}, tol)


@FEW
@given(layer_options(module_activation=False), sequences(), st.integers(0, 2 ** 16))
def test_decoder_layer_and_decoder_as_torch(options, seq, seed):
    rng = np.random.default_rng(seed)
    np_dtype, tol = DTYPES[seq["dtype"]]
    stack = seed % 2 == 0
    def build(lib):
        layer = lib.nn.TransformerDecoderLayer(**_layer_options(lib, options, seq["dtype"]))
        return lib.nn.TransformerDecoder(layer, 2) if stack else layer
    mine, theirs = _pair(build)
    inputs = {"tgt": _sequence(rng, seq, seq["T"], options["d_model"], options["batch_first"], np_dtype),
              "memory": _sequence(rng, seq, seq["S"], options["d_model"], options["batch_first"], np_dtype)}
    masks = _masks(rng, seq, seq["T"], "tgt_", np_dtype)
    if seq["mask"] == "causal":
        inputs["tgt_is_causal"] = seq["is_causal"] if stack else bool(seq["is_causal"])
    if seq["mask"] == "padding":  # the memory's padding too
        padding = rng.random((seq["N"], seq["S"]) if seq["batched"] else (seq["S"],)) < 0.4
        padding[..., 0] = False
        masks["memory_key_padding_mask"] = _both(padding)
    _compare(mine, theirs, {**inputs, **masks}, tol)


@FEW
@given(layer_options(module_activation=False), sequences(), st.integers(0, 2 ** 16))
def test_transformer_as_torch(options, seq, seed):
    rng = np.random.default_rng(seed)
    np_dtype, tol = DTYPES[seq["dtype"]]
    options = {**options, "num_encoder_layers": 1, "num_decoder_layers": 2}
    mine, theirs = _pair(lambda lib: lib.nn.Transformer(**_layer_options(lib, options, seq["dtype"])))
    inputs = {"src": _sequence(rng, seq, seq["S"], options["d_model"], options["batch_first"], np_dtype),
              "tgt": _sequence(rng, seq, seq["T"], options["d_model"], options["batch_first"], np_dtype)}
    masks = _masks(rng, seq, seq["T"], "tgt_", np_dtype)
    if seq["mask"] == "causal":
        inputs["tgt_is_causal"] = seq["is_causal"]
    _compare(mine, theirs, {**inputs, **masks}, tol)


def test_decoder_copies_keep_an_activation_module():
    """Each layer of a TransformerDecoder applies the activation it was given (in torch 2.13 the copies apply
    ReLU instead when it is a Module: see layer_options)."""
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(2, 1, 3, dropout=0.0, activation=nn.Tanh()), 2)
    assert all(type(layer.activation) is nn.Tanh for layer in decoder.layers)
    layer = decoder.layers[1]
    x = minigrad.randn(4, 2)
    assert np.allclose(layer._ff_block(x).detach().numpy(),
                       layer.linear2(layer.linear1(x).tanh()).detach().numpy())


def test_generate_square_subsequent_mask_is_torchs():
    for size in (1, 4):
        mine = nn.Transformer.generate_square_subsequent_mask(size)
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(size)
        assert mine.dtype == minigrad.float32
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=minigrad.float64).dtype == minigrad.float64


def test_default_transformer_has_torchs_parameters_and_repr():
    """The default sizes (d_model=512, 6 + 6 layers), with every weight matrix Xavier-uniform."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.Transformer(d_model=8, nhead=2, dim_feedforward=16)
    mine = nn.Transformer(d_model=8, nhead=2, dim_feedforward=16)
    assert repr(mine) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    for name, p in mine.named_parameters():
        if p.dim() > 1:
            assert np.abs(p.detach().numpy()).max() <= np.sqrt(6 / sum(p.shape)), name
    assert (mine.d_model, mine.nhead, mine.batch_first) == (8, 2, False)
    assert len(mine.encoder.layers) == 6 and len(mine.decoder.layers) == 6
    assert mine.encoder.layers[0].linear1.weight is not mine.encoder.layers[1].linear1.weight


def test_transformer_refuses_as_torch():
    def outcome(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001  (the type is what is compared)
            return type(e).__name__
        return None

    rng = np.random.default_rng(0)
    calls = {
        "batch sizes differ": lambda lib, x: lib.nn.Transformer(4, 2, 1, 1, 8)(x, x[:, :1]),
        "wrong width": lambda lib, x: lib.nn.Transformer(6, 2, 1, 1, 8)(x, x),
        "unknown activation": lambda lib, x: lib.nn.TransformerEncoderLayer(4, 2, activation="tanh"),
        "heads do not divide": lambda lib, x: lib.nn.TransformerEncoderLayer(4, 3),
    }
    x = _both(rng.standard_normal((3, 2, 4)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, call in calls.items():
            mine, theirs = outcome(lambda: call(minigrad, x[0])), outcome(lambda: call(torch, x[1]))
            assert mine == theirs and mine is not None, (name, mine, theirs)


def test_encoder_keeps_the_fast_path_arguments():
    layer = nn.TransformerEncoderLayer(4, 2, 8)
    encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False, mask_check=False)
    assert (encoder.enable_nested_tensor, encoder.mask_check) == (False, False)


def test_encoder_layer_second_derivatives():
    """Composed of tensor operations, so its gradient has a gradient."""
    minigrad.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 3, dropout=0.0, activation=F.gelu, norm_first=True,
                                       dtype=minigrad.float64)
    src = minigrad.tensor(np.random.default_rng(1).standard_normal((3, 1, 4)), requires_grad=True)
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=minigrad.float64)
    assert gradgradcheck(lambda s: layer(s, src_mask=mask), [src], eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
                                  "TransformerDecoderLayer", "MultiheadAttention", "RMSNorm", "Bilinear"])
def test_signatures_are_torchs(name):
    """The same argument names, order and defaults (a function default, F.relu, compared by name)."""
    for method in ("__init__", "forward"):
        mine = inspect.signature(getattr(getattr(nn, name), method)).parameters.values()
        theirs = inspect.signature(getattr(getattr(torch.nn, name), method)).parameters.values()
        described = lambda ps: [(p.name, p.kind, getattr(p.default, "__name__", p.default)) for p in ps]  # noqa: E731
        assert described(mine) == described(theirs), method


def test_functional_signatures_are_torchs():
    for name in ("multi_head_attention_forward", "rms_norm", "bilinear"):
        mine = inspect.signature(getattr(F, name)).parameters.values()
        try:
            theirs = inspect.signature(getattr(torch.nn.functional, name)).parameters.values()
        except ValueError:  # (a builtin without a signature: bilinear)
            continue
        assert [(p.name, p.kind, p.default) for p in mine] == [(p.name, p.kind, p.default) for p in theirs], name
