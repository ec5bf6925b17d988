"""Part ``layer_norm``: ``LayerNormFunction`` over the last axis, what it keeps, and the ``LayerNorm`` Module."""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad import nn
from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s12_attention.probing import (
    EPS, _apply, _budget_problem, _const, _grads, _inplace_probe, _inplace_problem, _kept_bytes, _leaf, _numeric,
    _torch_grads,
)
from minigrad.nn import functional as F


def probe_layer_norm(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "LayerNormFunction")
    cases = {}
    for label, shape, scale in (("3-D input (B, T, C)", (2, 3, 5), 1.0), ("rows of small variance", (4, 6), 1e-3)):
        x0 = rng.standard_normal(shape) * scale + rng.standard_normal(shape[:-1] + (1,))
        w0, b0 = rng.standard_normal(shape[-1]), rng.standard_normal(shape[-1])
        g0 = rng.standard_normal(shape)
        x, w, b = _leaf(x0), _leaf(w0), _leaf(b0)
        y = apply(x, w, b, EPS)
        try:
            grads = _grads(y, [x, w, b], _const(g0))
        except RuntimeError as e:
            cases[label] = {"error": str(e)[:300], "y": y.detach()}
            continue
        xm, wm, bm = _leaf(x0), _leaf(w0), _leaf(b0)
        ym = F.layer_norm(xm, (shape[-1],), wm, bm, EPS)
        own = _grads(ym, [xm, wm, bm], _const(g0))

        def value(xa, wa, ba):
            with minigrad.no_grad():
                return float((apply(_const(xa), _const(wa), _const(ba), EPS).detach().numpy() * g0).sum())

        numeric = _numeric(value, [x0, w0, b0]) if label.startswith("3-D") else None
        torch = _torch_grads(lambda t, a, w_, b_: t.nn.functional.layer_norm(a, (shape[-1],), w_, b_, EPS),
                             [x0, w0, b0], g0)
        cases[label] = {"x": x0, "w": w0, "b": b0, "shape": list(shape), "y": y.detach(), "grads": grads,
                        "own": {"y": ym.detach(), "grads": own}, "numeric": numeric, "torch": torch}
    return cases


def judge_layer_norm(mine: dict, ref: dict) -> Verdict:
    for label, r in ref.items():  # the values first, in every case: a wrong forward explains wrong gradients
        m = mine[label]
        where = f"with {label}, x of shape {tuple(r['shape'])}"
        x, w, b = (np.asarray(r[key]) for key in ("x", "w", "b"))
        if "y" in m and not close(m["y"], r["own"]["y"]):
            centred = x - x.mean(-1, keepdims=True)
            for xhat, why in ((centred / np.sqrt(x.var(-1, ddof=1, keepdims=True) + EPS),
                               "the unbiased variance (dividing by C − 1)"),
                              (centred / (np.sqrt(x.var(-1, keepdims=True)) + EPS), "eps outside the square root")):
                if close(m["y"], xhat * w + b):
                    return Verdict(False, f"LayerNormFunction {where} used {why}: LayerNorm (PyTorch's, and "
                                          "GPT's) divides by √(var + eps), with var the mean of (x − mean)² over the "
                                          "last axis (dividing by C)")
            return Verdict(False, f"LayerNormFunction {where} gave {fmt(m['y'])}, expected {fmt(r['own']['y'])}: "
                                  "y = (x − mean) / √(var + eps) · weight + bias, over the last axis")
    for label, r in ref.items():
        m = mine[label]
        where = f"with {label}, x of shape {tuple(r['shape'])}"
        if "error" in m:
            return Verdict(False, f"LayerNormFunction {where}: backward failed: {m['error']}. Return three gradients "
                                  "(x, weight, bias) and None for eps; weight's and bias's are shaped (C,): sum over "
                                  "every axis but the last")
        for name, got, want, numeric, torch in zip(("x", "weight", "bias"), m["grads"], r["own"]["grads"],
                                                    m["numeric"] or [None] * 3,
                                                    (r["torch"] or {"grads": [None] * 3})["grads"]):
            if got is None:
                return Verdict(False, f"LayerNormFunction {where}: no gradient reached {name}")
            if close(got, want) and (numeric is None or close(got, numeric, rtol=1e-4, atol=1e-5)) and (
                    torch is None or close(got, torch)):
                continue
            hint = ""
            if name == "x":
                hint = (": x enters y three times, directly and through the mean and the variance, so dx = rstd · "
                        "(dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)), with dx̂ = grad · weight and the means over the last "
                        "axis. Leaving out either mean term is the usual mistake")
            elif name == "weight":
                hint = ": weight[c] multiplies x̂[..., c] in every row, so its gradient sums grad · x̂ over all other axes"
            else:
                hint = ": bias[c] is added in every row, so its gradient sums grad over all other axes"
            numbers = f"got {fmt(got)}, minigrad's F.layer_norm gives {fmt(want)}"
            if numeric is not None:
                numbers += f", finite differences of your forward {fmt(numeric)}"
            return Verdict(False, f"LayerNormFunction {where}, the gradient of {name}: {numbers}{hint}")
    return Verdict(True)


def probe_layer_norm_saved(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "LayerNormFunction")
    x0, w0, b0 = rng.standard_normal((4, 5, 8)), rng.standard_normal(8), rng.standard_normal(8)
    x, w, b = _leaf(x0), _leaf(w0), _leaf(b0)
    node = apply(x * 1.0, w, b, EPS).grad_fn
    rows = x0.size // x0.shape[-1]
    g = _const(rng.standard_normal(x0.shape))
    return {"kept": _kept_bytes(node), "budget": x0.nbytes + 2 * rows * 8 + w0.nbytes + b0.nbytes,
            "inplace": _inplace_probe(apply, lambda: [_leaf(x0), _leaf(w0), _leaf(b0), EPS], 0, g)}


def judge_layer_norm_saved(mine: dict, ref: dict) -> Verdict:
    problem = _budget_problem("LayerNormFunction", mine["kept"], mine["budget"],
                              "one array the size of x, two numbers per row (the mean and 1/√(var + eps), say) "
                              "and the weight and bias",
                              "Backward needs x̂ (or x with the row statistics to make it again) and 1/√(var + eps): "
                              "keeping both x and x̂, or x − mean as well, keeps a second copy of every activation")
    if problem:
        return Verdict(False, problem)
    problem = _inplace_problem("LayerNormFunction", "x", mine["inplace"])
    return Verdict(False, problem) if problem else Verdict(True)


def probe_layer_norm_module(ns: dict, rng: np.random.Generator) -> dict:
    layer = ns["LayerNorm"](6)
    named = [[name, list(p.shape), isinstance(p, nn.Parameter)] for name, p in layer.named_parameters()]
    values = {name: p.detach().numpy().tolist() for name, p in layer.named_parameters()}
    x = minigrad.tensor(rng.standard_normal((2, 3, 6)).astype(np.float32))
    y = layer(x)
    cls = ns["LayerNormFunction"]._backward_cls
    return {"module": isinstance(layer, nn.Module), "named": named, "values": values,
            "function": y.grad_fn is not None and type(y.grad_fn) is cls, "y": y.detach(),
            "own": F.layer_norm(x, (6,), eps=EPS).detach()}


def judge_layer_norm_module(mine: dict, ref: dict) -> Verdict:
    if not mine["module"]:
        return Verdict(False, "LayerNorm(6) is not an nn.Module: subclass minigrad.nn.Module")
    if mine["named"] != [["weight", [6], True], ["bias", [6], True]]:
        return Verdict(False, f"LayerNorm(6) registers {[(n, tuple(s)) for n, s, _ in mine['named']]}, expected weight "
                              "(6,) and bias (6,), as nn.Parameters, in that order")
    if mine["values"]["weight"] != [1.0] * 6 or mine["values"]["bias"] != [0.0] * 6:
        return Verdict(False, "LayerNorm starts as the identity after normalising, as PyTorch's: weight all ones, bias "
                              f"all zeros. Yours: weight {fmt(mine['values']['weight'])}, bias {fmt(mine['values']['bias'])}")
    if not mine["function"]:
        return Verdict(False, "LayerNorm's output was not made by your LayerNormFunction: forward must return "
                              "LayerNormFunction.apply(x, self.weight, self.bias, self.eps)")
    if not close(mine["y"], mine["own"], rtol=1e-4, atol=1e-5):
        return Verdict(False, f"LayerNorm(6) gave {fmt(mine['y'])}, expected {fmt(mine['own'])} (eps = 1e-5)")
    return Verdict(True)

