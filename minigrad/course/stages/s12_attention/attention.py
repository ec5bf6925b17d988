"""Part ``attention``: ``CausalAttentionFunction`` (masked, scaled, stable), what it keeps, and the
``CausalSelfAttention`` Module (heads split as nanoGPT's)."""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad import nn
from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s12_attention.probing import (
    F64, _apply, _budget_problem, _const, _grads, _inplace_probe, _inplace_problem, _kept_arrays, _kept_bytes, _leaf,
    _node_names, _numeric, _torch_grads,
)
from minigrad.nn import functional as F


def causal_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    t, d = q.shape[-2:]
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)
    s = np.where(np.tri(t, dtype=bool), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


ATTENTION_CASES = (("(B, H, T, D) = (1, 2, 4, 3)", (1, 2, 4, 3), 1.0),
                   ("(T, D) = (5, 2), without batch or head axes", (5, 2), 1.0),
                   ("large scores (q and k times 30)", (1, 1, 4, 2), 30.0))


def probe_attention(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "CausalAttentionFunction")
    cases = {}
    for label, shape, scale in ATTENTION_CASES:
        q0, k0, v0 = (rng.standard_normal(shape) * s for s in (scale, scale, 1.0))
        g0 = rng.standard_normal(shape)
        q, k, v = _leaf(q0), _leaf(k0), _leaf(v0)
        y = apply(q, k, v)
        try:
            grads = _grads(y, [q, k, v], _const(g0))
        except RuntimeError as e:
            cases[label] = {"error": str(e)[:300], "y": y.detach()}
            continue
        qm, km, vm = _leaf(q0), _leaf(k0), _leaf(v0)
        ym = F.scaled_dot_product_attention(qm, km, vm, is_causal=True)
        own = _grads(ym, [qm, km, vm], _const(g0))

        def value(qa, ka, va):
            with minigrad.no_grad():
                return float((apply(_const(qa), _const(ka), _const(va)).detach().numpy() * g0).sum())

        numeric = _numeric(value, [q0, k0, v0]) if scale == 1.0 else None
        torch = _torch_grads(lambda t, a, b, c: t.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True),
                             [q0, k0, v0], g0)
        cases[label] = {"q": q0, "k": k0, "v": v0, "g": g0, "shape": list(shape), "y": y.detach(), "grads": grads,
                        "own": {"y": ym.detach(), "grads": own}, "numeric": numeric, "torch": torch}
    return cases


def _attention_variants(q, k, v) -> dict:
    """What the common forward mistakes compute: the judge's guesses."""
    t, d = q.shape[-2:]
    s = q @ np.swapaxes(k, -1, -2)

    def softmax_rows(z, mask):
        z = np.where(mask, z, -np.inf)
        with np.errstate(invalid="ignore"):
            e = np.exp(z - z.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)

    full = np.ones((t, t), dtype=bool)
    return {
        "no mask: every position also reads the positions after it, which a language model must not see": (
            softmax_rows(s / math.sqrt(d), full) @ v),
        "no scale: the scores must be divided by √D, so that their spread (and the softmax's sharpness) does not "
        "grow with the head size": softmax_rows(s, np.tri(t, dtype=bool)) @ v,
        "scores divided by D instead of √D": softmax_rows(s / d, np.tri(t, dtype=bool)) @ v,
        "the mask also hides the diagonal: position i must read positions 0 to i, itself included (np.tri(T), or "
        "np.tril of ones, keeps the diagonal)": softmax_rows(s / math.sqrt(d), np.tri(t, k=-1, dtype=bool)) @ v,
    }


def judge_attention(mine: dict, ref: dict) -> Verdict:
    for label, r in ref.items():
        m = mine[label]
        where = f"with {label}"
        if not close(m["y"], r["own"]["y"]):
            got = np.asarray(m["y"], dtype=np.float64)
            if not np.all(np.isfinite(got)):
                if "large" in label:
                    return Verdict(False, f"CausalAttentionFunction {where} gave inf or nan: exp of a large score "
                                          "overflows. Subtract each row's maximum before exp (softmax does not change: "
                                          "the factor e^−max cancels between numerator and denominator)")
                return Verdict(False, f"CausalAttentionFunction {where} gave nan in {fmt(m['y'])}: a row of the mask "
                                      "with no visible position has softmax 0/0. Position i reads positions 0..i, "
                                      "itself included")
            for mistake, wrong in _attention_variants(np.asarray(r["q"]), np.asarray(r["k"]), np.asarray(r["v"])).items():
                if np.all(np.isfinite(wrong)) and close(got, wrong):
                    return Verdict(False, f"CausalAttentionFunction {where}: {mistake}")
            return Verdict(False, f"CausalAttentionFunction {where} gave {fmt(m['y'])}, expected "
                                  f"{fmt(r['own']['y'])}: softmax(q·kᵀ / √D, with the positions after each row's masked "
                                  "to −inf) · v")
        if "error" in m:
            return Verdict(False, f"backward through CausalAttentionFunction {where} failed: {m['error']}. Return "
                                  "three gradients, shaped like q, k and v")
        for name, got, want, numeric, torch in zip("qkv", m["grads"], r["own"]["grads"], m["numeric"] or [None] * 3,
                                                    (r["torch"] or {"grads": [None] * 3})["grads"]):
            if got is None:
                return Verdict(False, f"CausalAttentionFunction {where}: no gradient reached {name}")
            if close(got, want) and (numeric is None or close(got, numeric, rtol=1e-4, atol=1e-5)) and (
                    torch is None or close(got, torch)):
                continue
            hint = {"v": ": y = P·v, so dv = Pᵀ·grad (P: the attention weights, each row summing to 1)",
                    "q": ": with dP = grad·vᵀ, the softmax's backward is dS = P ⊙ (dP − rowsum(dP ⊙ P)), and "
                         "S = q·kᵀ/√D gives dq = dS·k/√D",
                    "k": ": with dS = P ⊙ (dP − rowsum(dP ⊙ P)), S = q·kᵀ/√D gives dk = dSᵀ·q/√D (the transpose "
                         "of dS: k's row j met every query row i in S[i, j])"}[name]
            qa, ka, va, ga = (np.asarray(r[key]) for key in ("q", "k", "v", "g"))
            d = qa.shape[-1]
            p = _weights(qa, ka)
            dp = ga @ np.swapaxes(va, -1, -2)
            if name in "qk":
                for ds, mistake in ((p * dp / math.sqrt(d), "the softmax's backward needs − rowsum(dP ⊙ P): each "
                                     "weight depends on every score of its row, through the sum that normalises it"),
                                    (p * (dp - (dp * p).sum(-1, keepdims=True)),
                                     "the 1/√D of the forward is missing in backward")):
                    wrong = ds @ ka if name == "q" else np.swapaxes(ds, -1, -2) @ qa
                    if close(got, wrong):
                        return Verdict(False, f"CausalAttentionFunction {where}, the gradient of {name}: {mistake}")
            numbers = f"got {fmt(got)}, minigrad's F.scaled_dot_product_attention gives {fmt(want)}"
            if numeric is not None:
                numbers += f", finite differences of your forward {fmt(numeric)}"
            return Verdict(False, f"CausalAttentionFunction {where}, the gradient of {name}: {numbers}{hint}")
    return Verdict(True)


def _weights(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    t, d = q.shape[-2:]
    s = np.where(np.tri(t, dtype=bool), q @ np.swapaxes(k, -1, -2) / math.sqrt(d), -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def probe_attention_saved(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "CausalAttentionFunction")
    b, h, t, d = 2, 2, 8, 2
    arrays = [rng.standard_normal((b, h, t, d)) for _ in range(3)]
    node = apply(*(_leaf(a) * 1.0 for a in arrays)).grad_fn
    g = _const(rng.standard_normal((b, h, t, d)))
    budget = 4 * arrays[0].nbytes + (b * h * t * t + 2 * b * h * t) * 8
    squares = sum(a.size == b * h * t * t for a in _kept_arrays(node))
    return {"kept": _kept_bytes(node), "budget": budget, "squares": squares,
            "inplace": _inplace_probe(apply, lambda: [_leaf(a) for a in arrays], 0, g)}


def judge_attention_saved(mine: dict, ref: dict) -> Verdict:
    extra = ""
    if mine["squares"] > 1:
        extra = (f" Yours keeps {mine['squares']} arrays of that size: keep the weights P only, the scores S are not "
                 "needed once P is known (dS is written with P)")
    problem = _budget_problem("CausalAttentionFunction", mine["kept"], mine["budget"],
                              "q, k, v and the output, one (B, H, T, T) array and two numbers per row",
                              "The (B, H, T, T) arrays are what attention costs: T² numbers per head, against T·D for "
                              "q, k or v." + extra)
    if problem:
        return Verdict(False, problem)
    problem = _inplace_problem("CausalAttentionFunction", "q", mine["inplace"])
    return Verdict(False, problem) if problem else Verdict(True)


def _linear_param(rng, *shape) -> nn.Parameter:
    return nn.Parameter(minigrad.tensor(rng.standard_normal(shape) * 0.4, dtype=F64))


def probe_attention_module(ns: dict, rng: np.random.Generator) -> dict:
    layer = ns["CausalSelfAttention"](8, 2)
    named = [[name, list(p.shape)] for name, p in layer.named_parameters()]
    result = {"module": isinstance(layer, nn.Module), "named": named}
    if named != [["qkv.weight", [24, 8]], ["qkv.bias", [24]], ["proj.weight", [8, 8]], ["proj.bias", [8]]]:
        return result
    values = [rng.standard_normal(p.shape) * 0.4 for _, p in layer.named_parameters()]
    with minigrad.no_grad():
        for p, v in zip(layer.parameters(), values):
            p.copy_(minigrad.tensor(v.astype(np.asarray(p.detach().numpy()).dtype)))
    x0 = rng.standard_normal((2, 5, 8))
    x = minigrad.tensor(x0.astype(layer.qkv.weight.detach().numpy().dtype))
    y = layer(x)
    nodes = _node_names(y.grad_fn, {ns["CausalAttentionFunction"]._backward_cls: "yours"})
    # the expected output, by the numbers: nanoGPT's layout (q, k, v side by side; heads split in C)
    w, bias, pw, pb = values
    qkv = x0 @ w.T + bias
    q, k, v = (a.reshape(2, 5, 2, 4).transpose(0, 2, 1, 3) for a in np.split(qkv, 3, axis=-1))
    want = causal_attention(q, k, v).transpose(0, 2, 1, 3).reshape(2, 5, 8) @ pw.T + pb
    return {**result, "y": y.detach(), "want": want, "yours": nodes.count("yours")}


def judge_attention_module(mine: dict, ref: dict) -> Verdict:
    if not mine["module"]:
        return Verdict(False, "CausalSelfAttention(8, 2) is not an nn.Module")
    if mine["named"] != ref["named"]:
        return Verdict(False, f"CausalSelfAttention(8, 2) registers {[(n, tuple(s)) for n, s in mine['named']]}, expected "
                              "qkv = nn.Linear(8, 24) and proj = nn.Linear(8, 8), in that order")
    if mine["yours"] != 1:
        return Verdict(False, f"CausalSelfAttention's output graph has {mine['yours']} node(s) of your "
                              "CausalAttentionFunction, expected 1: apply it once, to all heads at once")
    if not close(mine["y"], mine["want"], rtol=1e-3, atol=1e-4):
        return Verdict(False, f"CausalSelfAttention(8, 2) gave {fmt(mine['y'])}, expected {fmt(mine['want'])}. The "
                              "layout, as nanoGPT's: qkv(x) is (B, T, 3C) with q, k and v side by side, each (B, T, C) "
                              "split into H heads of D = C/H: view(B, T, 3, H, D).permute(2, 0, 3, 1, 4) gives q, k, v "
                              "as (B, H, T, D). After attention, transpose(1, 2) and reshape(B, T, C) put the heads "
                              "side by side again, before proj")
    return Verdict(True)

