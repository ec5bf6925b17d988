"""Part ``gelu``: ``GELUFunction`` (the tanh form), its values and gradients, and what it keeps."""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s12_attention.probing import (
    GELU_C, _apply, _budget_problem, _const, _grads, _inplace_probe, _inplace_problem, _kept_bytes, _leaf, _numeric,
    _torch_grads,
)
from minigrad.nn import functional as F


def gelu_tanh(a: np.ndarray) -> np.ndarray:
    return 0.5 * a * (1 + np.tanh(GELU_C * (a + 0.044715 * a * a * a)))


def probe_gelu(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "GELUFunction")
    x0 = np.concatenate([rng.uniform(-4, 4, 9), [-12.0, 0.0, 9.0]]).reshape(3, 4)
    g0 = rng.standard_normal(x0.shape)
    x = _leaf(x0)
    y = apply(x)
    (gx,) = _grads(y, [x], _const(g0))
    xm = _leaf(x0)
    ym = F.gelu(xm, approximate="tanh")
    (gm,) = _grads(ym, [xm], _const(g0))

    def value(a):
        with minigrad.no_grad():
            return float((apply(_const(a)).detach().numpy() * g0).sum())

    (numeric,) = _numeric(value, [x0])
    torch = _torch_grads(lambda t, a: t.nn.functional.gelu(a, approximate="tanh"), [x0], g0)
    return {"x": x0, "g": g0, "y": y.detach(), "grad": gx, "own": {"y": ym.detach(), "grad": gm},
            "numeric": numeric, "torch": torch, "dtype": str(y.dtype),
            "float32": str(apply(minigrad.tensor(x0.astype(np.float32))).dtype)}


def judge_gelu(mine: dict, ref: dict) -> Verdict:
    x, g = np.asarray(ref["x"]), np.asarray(ref["g"])
    want_y, want_grad = ref["own"]["y"], ref["own"]["grad"]
    where = f"at x = {fmt(ref['x'])}"
    if not close(mine["y"], want_y):
        erf = np.vectorize(math.erf)
        if close(mine["y"], 0.5 * x * (1 + erf(x / math.sqrt(2)))):
            return Verdict(False, f"GELUFunction {where} gave the exact GELU, x·Φ(x) with erf: the worksheet asks for "
                                  "GPT-2's tanh approximation, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). They differ "
                                  "by up to 5e-4, enough for a model trained with one to drift from the other")
        return Verdict(False, f"GELUFunction {where} gave {fmt(mine['y'])}, expected {fmt(want_y)} "
                              "(0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))))")
    if mine["dtype"] != ref["dtype"] or mine["float32"] != ref["float32"]:
        return Verdict(False, f"GELUFunction turned float64 into {mine['dtype']} and float32 into {mine['float32']}: "
                              "keep the input's dtype (NumPy keeps it if you multiply by Python floats)")
    got = mine["grad"]
    if got is None:
        return Verdict(False, "no gradient reached x through GELUFunction: backward returns grad_output times "
                              "GELU'(x)")
    if close(got, want_grad) and close(got, mine["numeric"], rtol=1e-5) and (
            ref["torch"] is None or close(got, ref["torch"]["grads"][0])):
        return Verdict(True)
    t = np.tanh(GELU_C * (x + 0.044715 * x ** 3))
    if close(got, g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C)):
        return Verdict(False, f"GELUFunction's gradient {where} leaves out the inner derivative: u = √(2/π)·(x + "
                              "0.044715·x³) has du/dx = √(2/π)·(1 + 3·0.044715·x²), and the chain rule needs all of it")
    if close(got, g * 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x)):
        return Verdict(False, f"GELUFunction's gradient {where} has only half of the product rule: y = 0.5·x·(1 + "
                              "tanh(u)) is x times a function of x, so y' = 0.5·(1 + tanh(u)) + 0.5·x·(1 − tanh²(u))·u'")
    return Verdict(False, f"GELUFunction's gradient {where} (g: fixed random weights of the outputs) is {fmt(got)}; "
                          f"minigrad's F.gelu(approximate='tanh') gives {fmt(want_grad)}, and finite differences of "
                          f"your own forward {fmt(mine['numeric'])}")


def probe_gelu_saved(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "GELUFunction")
    x0 = rng.standard_normal((6, 8))
    x = _leaf(x0)
    node = apply(x * 1.0).grad_fn
    g = _const(rng.standard_normal((6, 8)))
    return {"kept": _kept_bytes(node), "budget": x0.nbytes,
            "inplace": _inplace_probe(apply, lambda: [_leaf(x0)], 0, g)}


def judge_gelu_saved(mine: dict, ref: dict) -> Verdict:
    problem = _budget_problem("GELUFunction", mine["kept"], mine["budget"], "one array the size of x",
                              "Backward needs x and nothing else: tanh(u) is cheap to compute again, and keeping it "
                              "too doubles the memory of every GELU in the model until backward runs")
    return Verdict(False, problem) if problem else (
        Verdict(False, _inplace_problem("GELUFunction", "x", mine["inplace"]))
        if _inplace_problem("GELUFunction", "x", mine["inplace"]) else Verdict(True))

