"""scaled_dot_product_attention, MultiheadAttention (and F.multi_head_attention_forward), RMSNorm and
Bilinear, against PyTorch and by gradcheck.

The torch comparisons draw shapes, heads, masks and options with hypothesis and run the same inputs
and weights (torch's state_dict, loaded into minigrad) through both libraries in eval mode: the
outputs, the attention weights and the gradients of every input and parameter agree, within a
tolerance from the dtype; bad input raises torch's exception type. The gradchecks need no torch.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

try:
    import torch
except ImportError:  # the comparisons skip; the gradchecks still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (the [torch] extra)")
FEW = settings(max_examples=40, deadline=None)
DTYPES = {"float64": (np.float64, 1e-10), "float32": (np.float32, 2e-4)}


def _leaf(rng, shape):
    return minigrad.tensor(rng.standard_normal(shape), dtype=minigrad.float64, requires_grad=True)


def _visible_mask(rng, shape) -> np.ndarray:
    """A random bool mask (True: may look) in which every query sees at least one key."""
    mask = rng.random(shape) < 0.6
    mask[..., 0] = True
    return mask


# -- gradcheck in float64, without torch ----------------------------------------------------------
MASK = _visible_mask(np.random.default_rng(0), (3, 4))
GRADCHECKS = {  # name: (function of the leaves, leaf shapes)
    "sdpa": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [(2, 3, 2), (2, 4, 2), (2, 4, 3)]),
    "sdpa bool mask": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, minigrad.tensor(MASK)),
                       [(3, 2), (4, 2), (4, 3)]),
    "sdpa float mask": (lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m),
                        [(3, 2), (4, 2), (4, 3), (3, 4)]),
    "sdpa causal gqa": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
                        [(4, 3, 2), (2, 3, 2), (1, 3, 2)]),
    "mha": (lambda q, k, w, b, ow: F.multi_head_attention_forward(q, k, k, 4, 2, w, b, None, None, False, 0.0, ow,
                                                                  None)[0],
            [(3, 1, 4), (2, 1, 4), (12, 4), (12,), (4, 4)]),
    "rms_norm": (lambda x, w: F.rms_norm(x, (3,), w, 1e-3), [(2, 3), (3,)]),
    "bilinear": (lambda a, b, w, c: F.bilinear(a, b, w, c), [(2, 3), (2, 2), (4, 3, 2), (4,)]),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck_and_gradgradcheck(name):
    fn, shapes = GRADCHECKS[name]
    rng = np.random.default_rng(len(name))
    leaves = [_leaf(rng, shape) for shape in shapes]
    assert gradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)


def test_a_query_that_sees_no_key_gets_zeros_and_zero_gradients():
    """PyTorch's safe softmax: not the NaN a plain softmax of a row of -inf gives (and no NaN gradient)."""
    rng = np.random.default_rng(1)
    q, k, v = _leaf(rng, (3, 2)), _leaf(rng, (4, 2)), _leaf(rng, (4, 2))
    mask = np.ones((3, 4), bool)
    mask[1] = False
    out = F.scaled_dot_product_attention(q, k, v, minigrad.tensor(mask))
    out.sum().backward()
    assert np.all(out.detach().numpy()[1] == 0) and np.all(q.grad.numpy()[1] == 0)
    assert all(np.isfinite(t.grad.numpy()).all() for t in (q, k, v))


# -- comparisons with torch -----------------------------------------------------------------------
def _both(array: np.ndarray, grad: bool = False):
    """The same values as a minigrad and a torch tensor."""
    mine = minigrad.tensor(array, requires_grad=grad)
    theirs = torch.tensor(array, requires_grad=grad)
    return mine, theirs


def _close(mine, theirs, tol: float, what: str) -> None:
    assert (mine is None) == (theirs is None), what
    if mine is not None:
        expected = theirs.detach().numpy()
        assert mine.dtype == minigrad.tensor(expected).dtype, what
        np.testing.assert_allclose(mine.detach().numpy(), expected, rtol=tol, atol=tol, err_msg=what)


def _outcome(fn):
    """(None, result) or (the exception's type name, None)."""
    try:
        return None, fn()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__, None


@st.composite
def sdpa_cases(draw):
    heads, kv_heads = draw(st.sampled_from([(1, 1), (2, 2), (4, 2), (4, 1), (1, 1), (2, 2), (4, 2), (3, 2)]))
    L, S, E, Ev = (draw(st.integers(1, 4)) for _ in range(4))
    batch = draw(st.sampled_from([(), (2,), (2, 1)]))
    gqa = kv_heads != heads or draw(st.booleans())
    q_shape = (*batch, heads, L, E)
    kv_batch = draw(st.sampled_from([batch, batch[1:]]))  # key and value may broadcast over batch dims
    # (mostly valid: one case in five or so is refused, by both)
    mask = draw(st.sampled_from(["none", "bool", "float", "causal"] * 3 + ["bool+causal", "too big", "1-D"]))
    return {
        "q": q_shape, "k": (*kv_batch, kv_heads, S, E + draw(st.sampled_from([0] * 9 + [1]))),  # (+1: refused)
        "v": (*kv_batch, kv_heads, S, Ev),
        "gqa": gqa, "mask": mask, "mask_shape": draw(st.sampled_from([(L, S), (heads, L, S), (1, L, 1)])),
        "scale": draw(st.sampled_from([None, 0.5, 2.0])), "dtype": draw(st.sampled_from(list(DTYPES))),
    }


@needs_torch
@FEW
@given(sdpa_cases(), st.integers(0, 2 ** 16))
def test_scaled_dot_product_attention_as_torch(case, seed):
    rng = np.random.default_rng(seed)
    np_dtype, tol = DTYPES[case["dtype"]]
    q, k, v = (_both(rng.standard_normal(case[name]).astype(np_dtype), grad=True) for name in "qkv")
    kwargs = {"scale": case["scale"], "enable_gqa": case["gqa"]}
    mask = case["mask"]
    if mask in ("bool", "bool+causal"):
        kwargs["attn_mask"] = _both(_visible_mask(rng, case["mask_shape"]))
    elif mask == "float":
        kwargs["attn_mask"] = _both(rng.standard_normal(case["mask_shape"]).astype(np_dtype), grad=True)
    elif mask == "too big":
        kwargs["attn_mask"] = _both(np.ones((3, *case["q"][:-1], case["k"][-2]), bool))
    elif mask == "1-D" and len(case["q"]) < 4:  # (torch's fused CPU kernel, taken for 4-D input, raises an
        kwargs["attn_mask"] = _both(np.ones(case["k"][-2], bool))  # IndexError there: minigrad broadcasts)
    if "causal" in mask:
        kwargs["is_causal"] = True
    results = []
    for i, (lib, F_) in enumerate(((minigrad, F), (torch, torch.nn.functional))):
        args = {key: value[i] if isinstance(value, tuple) else value for key, value in kwargs.items()}
        error, out = _outcome(lambda: F_.scaled_dot_product_attention(q[i], k[i], v[i], **args))
        if out is not None:
            (out * out).sum().backward()
        results.append((error, out))
    (my_error, mine), (their_error, theirs) = results
    assert my_error == their_error, (my_error, their_error)
    if theirs is None:
        return
    _close(mine, theirs, tol, "output")
    tensors = [q, k, v] + ([kwargs["attn_mask"]] if mask == "float" else [])
    for name, (m, t) in zip("qkvm", tensors):
        _close(m.grad, t.grad, tol, f"gradient of {name}")


@needs_torch
def test_scaled_dot_product_attention_refuses_as_torch():
    rng = np.random.default_rng(2)
    q, k, v = (_both(rng.standard_normal((2, 3, 4))) for _ in range(3))
    calls = {
        "mask with is_causal": lambda i, F_: F_.scaled_dot_product_attention(
            q[i], k[i], v[i], attn_mask=_both(np.ones((3, 3), bool))[i], is_causal=True),
        "mixed dtypes": lambda i, F_: F_.scaled_dot_product_attention(q[i], k[i], v[i].float()),
        "integers": lambda i, F_: F_.scaled_dot_product_attention(q[i].long(), k[i].long(), v[i].long()),
        "integer mask": lambda i, F_: F_.scaled_dot_product_attention(q[i], k[i], v[i],
                                                                      _both(np.ones((3, 3), np.int64))[i]),
        "1-D": lambda i, F_: F_.scaled_dot_product_attention(q[i][0, 0], k[i][0, 0], v[i][0, 0]),
        "dropout_p > 1": lambda i, F_: F_.scaled_dot_product_attention(q[i], k[i], v[i], dropout_p=1.5),
        "scale by position": lambda i, F_: F_.scaled_dot_product_attention(q[i], k[i], v[i], None, 0.0, False, 1.0),
        "a list": lambda i, F_: F_.scaled_dot_product_attention([1.0], k[i], v[i]),
    }
    for name, call in calls.items():
        mine, theirs = _outcome(lambda: call(0, F)), _outcome(lambda: call(1, torch.nn.functional))
        assert mine[0] == theirs[0] and mine[0] is not None, (name, mine[0], theirs[0])


def test_dropout_in_attention_keeps_the_expected_value():
    """dropout_p is always applied (PyTorch's rule): each weight zeroed with probability p, the rest scaled."""
    minigrad.manual_seed(0)
    q, k, v = minigrad.zeros(1, 2), minigrad.zeros(4, 2), minigrad.ones(4, 3)
    outs = np.stack([F.scaled_dot_product_attention(q, k, v, dropout_p=0.25).numpy() for _ in range(400)])
    assert np.any(outs != 1.0) and abs(outs.mean() - 1.0) < 0.05


# -- MultiheadAttention -------------------------------------------------------------------------
@st.composite
def mha_cases(draw):
    heads = draw(st.sampled_from([1, 2, 3]))
    embed = heads * draw(st.integers(1, 3))
    L, S, N = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    return {
        "embed_dim": embed, "num_heads": heads, "bias": draw(st.booleans()), "add_bias_kv": draw(st.booleans()),
        "add_zero_attn": draw(st.booleans()), "kdim": draw(st.sampled_from([None, embed, 2])),
        "vdim": draw(st.sampled_from([None, 3])), "batch_first": draw(st.booleans()),
        "L": L, "S": S, "N": N, "batched": draw(st.booleans()), "self": draw(st.booleans()),
        "kpm": draw(st.sampled_from([None, "bool", "float"])),
        "mask": draw(st.sampled_from([None, "bool", "float", "3-D", "causal"])),
        "need_weights": draw(st.booleans()), "average": draw(st.booleans()),
        "dtype": draw(st.sampled_from(list(DTYPES))),
    }


def _mha_pair(case):
    """A torch MultiheadAttention and a minigrad one with its weights, both in eval mode."""
    options = {key: case[key] for key in ("embed_dim", "num_heads", "bias", "add_bias_kv", "add_zero_attn", "kdim",
                                          "vdim", "batch_first")}
    theirs = torch.nn.MultiheadAttention(**options, dtype=getattr(torch, case["dtype"])).eval()
    mine = nn.MultiheadAttention(**options, dtype=getattr(minigrad, case["dtype"])).eval()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({key: minigrad.tensor(value.numpy()) for key, value in theirs.state_dict().items()})
    return mine, theirs


@needs_torch
@FEW
@given(mha_cases(), st.integers(0, 2 ** 16))
def test_multihead_attention_as_torch(case, seed):
    rng = np.random.default_rng(seed)
    np_dtype, tol = DTYPES[case["dtype"]]
    mine, theirs = _mha_pair(case)
    E, L, S, N, H = case["embed_dim"], case["L"], case["S"], case["N"], case["num_heads"]
    kdim, vdim = case["kdim"] or E, case["vdim"] or E

    def shape(length, width):
        if not case["batched"]:
            return (length, width)
        return (N, length, width) if case["batch_first"] else (length, N, width)

    self_attention = case["self"] and kdim == vdim == E
    q = _both(rng.standard_normal(shape(L, E)).astype(np_dtype), grad=True)
    k = q if self_attention else _both(rng.standard_normal(shape(S, kdim)).astype(np_dtype), grad=True)
    v = q if self_attention else _both(rng.standard_normal(shape(S, vdim)).astype(np_dtype), grad=True)
    S = L if self_attention else S
    kwargs = {"need_weights": case["need_weights"], "average_attn_weights": case["average"]}
    kpm_shape = (N, S) if case["batched"] else (S,)
    if case["kpm"] == "bool":
        kwargs["key_padding_mask"] = _both(~_visible_mask(rng, kpm_shape))
    elif case["kpm"] == "float":
        kwargs["key_padding_mask"] = _both(rng.standard_normal(kpm_shape).astype(np_dtype))
    mask = case["mask"]
    if mask in ("bool", "causal"):
        causal = np.triu(np.ones((L, S), bool), 1)
        kwargs["attn_mask"] = _both(~_visible_mask(rng, (L, S)) if mask == "bool" else causal)
        kwargs["is_causal"] = mask == "causal"
    elif mask == "float":
        kwargs["attn_mask"] = _both(rng.standard_normal((L, S)).astype(np_dtype))
    elif mask == "3-D":
        kwargs["attn_mask"] = _both(~_visible_mask(rng, ((N if case["batched"] else 1) * H, L, S)))
    results = []
    for i, module in enumerate((mine, theirs)):
        args = {key: value[i] if isinstance(value, tuple) else value for key, value in kwargs.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (mismatched mask types: deprecated in both)
            error, out = _outcome(lambda: module(q[i], k[i], v[i], **args))
        if out is not None:
            loss = (out[0] * out[0]).sum()
            (loss if out[1] is None else loss + out[1].sum()).backward()
        results.append((error, out))
    (my_error, mine_out), (their_error, their_out) = results
    assert my_error == their_error, (my_error, their_error)
    if their_out is None:
        return
    _close(mine_out[0], their_out[0], tol, "output")
    _close(mine_out[1], their_out[1], tol, "attention weights")
    for name, m, t in (("query", *q), ("key", *k), ("value", *v)):
        _close(m.grad, t.grad, tol, f"gradient of {name}")
    their_params = dict(theirs.named_parameters())
    for name, p in mine.named_parameters():
        _close(p.grad, their_params[name].grad, tol, f"gradient of {name}")


@needs_torch
@pytest.mark.parametrize("options", [{}, {"bias": False}, {"kdim": 3, "vdim": 5}, {"add_bias_kv": True},
                                     {"kdim": 2, "add_bias_kv": True, "bias": False, "batch_first": True}])
def test_multihead_attention_parameters_and_repr_are_torchs(options):
    theirs, mine = torch.nn.MultiheadAttention(4, 2, **options), nn.MultiheadAttention(4, 2, **options)
    assert repr(mine) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "bias_k",
                 "bias_v", "embed_dim", "kdim", "vdim", "head_dim", "num_heads", "dropout", "batch_first",
                 "_qkv_same_embed_dim", "add_zero_attn"):
        assert (getattr(mine, name) is None) == (getattr(theirs, name) is None), name
    if mine.in_proj_bias is not None:  # zero biases, Xavier-uniform projections
        assert not mine.in_proj_bias.detach().numpy().any() and not mine.out_proj.bias.detach().numpy().any()
    weight = mine.in_proj_weight if mine.in_proj_weight is not None else mine.q_proj_weight
    assert np.abs(weight.detach().numpy()).max() <= np.sqrt(6 / sum(weight.shape))


@needs_torch
def test_multihead_attention_refuses_as_torch():
    rng = np.random.default_rng(3)
    x = _both(rng.standard_normal((3, 2, 4)))
    calls = {
        "4-D query": lambda lib, m, x: m(x.unsqueeze(0), x.unsqueeze(0), x.unsqueeze(0)),
        "2-D key for 3-D query": lambda lib, m, x: m(x, x[0], x[0]),
        "integer mask": lambda lib, m, x: m(x, x, x, attn_mask=lib.zeros(3, 3, dtype=lib.int64)),
        "wrong mask shape": lambda lib, m, x: m(x, x, x, attn_mask=lib.zeros(3, 2, dtype=lib.bool)),
        "wrong 3-D mask shape": lambda lib, m, x: m(x, x, x, attn_mask=lib.zeros(2, 3, 3, dtype=lib.bool)),
        "is_causal without mask": lambda lib, m, x: m(x, x, x, is_causal=True),
        "wrong padding mask": lambda lib, m, x: m(x, x, x, key_padding_mask=lib.zeros(2, 2, dtype=lib.bool)),
        "wrong width": lambda lib, m, x: m(x[..., :2], x[..., :2], x[..., :2]),
        "heads do not divide": lambda lib, m, x: lib.nn.MultiheadAttention(4, 3),
        "no heads": lambda lib, m, x: lib.nn.MultiheadAttention(4, 0),
    }
    modules = (nn.MultiheadAttention(4, 2), torch.nn.MultiheadAttention(4, 2))
    for name, call in calls.items():
        mine = _outcome(lambda: call(minigrad, modules[0], x[0]))
        theirs = _outcome(lambda: call(torch, modules[1], x[1]))
        assert mine[0] == theirs[0] and mine[0] is not None, (name, mine[0], theirs[0])


def test_multihead_attention_second_derivatives():
    """Composed of tensor operations, so its gradient has a gradient (gradgradcheck of the module's output)."""
    minigrad.manual_seed(0)
    module = nn.MultiheadAttention(4, 2, add_bias_kv=True, kdim=3, dtype=minigrad.float64)
    rng = np.random.default_rng(4)
    q, k, v = _leaf(rng, (2, 1, 4)), _leaf(rng, (3, 1, 3)), _leaf(rng, (3, 1, 4))
    assert gradgradcheck(lambda q, k, v: module(q, k, v)[0], [q, k, v], eps=1e-6, atol=1e-5, rtol=1e-3)


# -- RMSNorm and Bilinear ---------------------------------------------------------------------------
@needs_torch
@FEW
@given(st.sampled_from([(3,), (2, 3), [3]]), st.sampled_from([None, 1e-3]), st.booleans(),
       st.sampled_from(list(DTYPES)), st.integers(0, 2 ** 16))
def test_rms_norm_as_torch(shape, eps, affine, dtype, seed):
    rng = np.random.default_rng(seed)
    np_dtype, tol = DTYPES[dtype]
    theirs = torch.nn.RMSNorm(shape, eps, affine, dtype=getattr(torch, dtype))
    mine = nn.RMSNorm(shape, eps, affine, dtype=getattr(minigrad, dtype))
    assert repr(mine) == repr(theirs) and list(mine.state_dict()) == list(theirs.state_dict())
    if affine:
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(rng.standard_normal(theirs.weight.shape)))
        mine.load_state_dict({"weight": minigrad.tensor(theirs.weight.detach().numpy())})
    x = _both(rng.standard_normal((2, 2, 3)).astype(np_dtype) * 0.1, grad=True)
    outs = [module(t) for module, t in zip((mine, theirs), x)]
    for out in outs:
        (out * out).sum().backward()
    _close(outs[0], outs[1], tol, "output")
    _close(x[0].grad, x[1].grad, tol, "gradient of input")
    if affine:
        _close(mine.weight.grad, theirs.weight.grad, tol, "gradient of weight")


@needs_torch
@FEW
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.sampled_from([(), (2,), (2, 3)]),
       st.booleans(), st.sampled_from(list(DTYPES)), st.integers(0, 2 ** 16))
def test_bilinear_as_torch(in1, in2, out, batch, bias, dtype, seed):
    rng = np.random.default_rng(seed)
    np_dtype, tol = DTYPES[dtype]
    theirs = torch.nn.Bilinear(in1, in2, out, bias, dtype=getattr(torch, dtype))
    mine = nn.Bilinear(in1, in2, out, bias, dtype=getattr(minigrad, dtype))
    assert repr(mine) == repr(theirs) and list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict({key: minigrad.tensor(value.numpy()) for key, value in theirs.state_dict().items()})
    a = _both(rng.standard_normal((*batch, in1)).astype(np_dtype), grad=True)
    b = _both(rng.standard_normal((*batch, in2)).astype(np_dtype), grad=True)
    outs = [module(x, y) for module, x, y in zip((mine, theirs), a, b)]
    for o in outs:
        (o * o).sum().backward()
    _close(outs[0], outs[1], tol, "output")
    for name, (m, t) in (("input1", a), ("input2", b)):
        _close(m.grad, t.grad, tol, f"gradient of {name}")
    their_params = dict(theirs.named_parameters())
    for name, p in mine.named_parameters():
        _close(p.grad, their_params[name].grad, tol, f"gradient of {name}")


@needs_torch
def test_rms_norm_and_bilinear_refuse_as_torch():
    rng = np.random.default_rng(5)
    x, y = _both(rng.standard_normal((2, 3))), _both(rng.standard_normal((2, 4)))
    w = _both(rng.standard_normal((5, 3, 4)))
    calls = {
        "rms_norm shape": lambda i, F_: F_.rms_norm(x[i], (4,)),
        "rms_norm int shape": lambda i, F_: F_.rms_norm(x[i], 3),
        "rms_norm weight": lambda i, F_: F_.rms_norm(x[i], (3,), y[i][0]),
        "rms_norm too few dims": lambda i, F_: F_.rms_norm(x[i], (1, 2, 3)),
        "rms_norm integers": lambda i, F_: F_.rms_norm(x[i].long(), (3,)),
        "bilinear batch": lambda i, F_: F_.bilinear(x[i], y[i][:1], w[i]),
        "bilinear in1": lambda i, F_: F_.bilinear(y[i], y[i], w[i]),
        "bilinear in2": lambda i, F_: F_.bilinear(x[i], x[i], w[i]),
        "bilinear bias": lambda i, F_: F_.bilinear(x[i], y[i], w[i], x[i][0]),
        "bilinear dims": lambda i, F_: F_.bilinear(x[i], y[i][0], w[i]),
        "bilinear dtypes": lambda i, F_: F_.bilinear(x[i], y[i], w[i].float()),
    }
    for name, call in calls.items():
        mine, theirs = _outcome(lambda: call(0, F)), _outcome(lambda: call(1, torch.nn.functional))
        assert mine[0] == theirs[0] and mine[0] is not None, (name, mine[0], theirs[0])
