"""Part ``cross_entropy``: ``CrossEntropyFunction`` (mean over rows, integer targets) and what it keeps."""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s12_attention.probing import (
    _apply, _budget_problem, _const, _grads, _inplace_probe, _inplace_problem, _kept_bytes, _leaf, _numeric,
    _torch_grads,
)
from minigrad.nn import functional as F


def probe_cross_entropy(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "CrossEntropyFunction")
    cases = {}
    for label, (n, v), scale in (("logits (6, 5)", (6, 5), 1.0), ("large logits (times 500)", (4, 3), 500.0)):
        z0 = rng.standard_normal((n, v)) * scale
        y0 = rng.integers(0, v, n)
        g0 = float(rng.uniform(0.5, 2.0))
        z = _leaf(z0)
        targets = minigrad.tensor(y0)
        loss = apply(z, targets)
        (gz,) = _grads(loss, [z], _const(g0))
        zm = _leaf(z0)
        lm = F.cross_entropy(zm, targets)
        (gm,) = _grads(lm, [zm], _const(g0))

        def value(za):
            with minigrad.no_grad():
                return float(apply(_const(za), targets).item()) * g0

        numeric = _numeric(value, [z0])[0] if scale == 1.0 else None
        torch = _torch_grads(lambda t, a: t.nn.functional.cross_entropy(a, t.tensor(y0)), [z0], np.asarray(g0))
        cases[label] = {"z": z0, "y": y0, "g": g0, "loss": loss.detach(), "shape": list(loss.shape), "grad": gz,
                        "own": {"loss": lm.detach(), "grad": gm}, "numeric": numeric, "torch": torch}
    return cases


def judge_cross_entropy(mine: dict, ref: dict) -> Verdict:
    for label, r in ref.items():
        m = mine[label]
        where = f"with {label}"
        if m["shape"] != []:
            return Verdict(False, f"CrossEntropyFunction {where} returned shape {tuple(m['shape'])}: return the mean "
                                  "over the rows, a 0-d tensor")
        z, y = np.asarray(r["z"]), np.asarray(r["y"]).astype(np.int64)
        n = z.shape[0]
        if not close(m["loss"], r["own"]["loss"]):
            got = float(np.asarray(m["loss"], dtype=np.float64))
            if not math.isfinite(got):
                return Verdict(False, f"CrossEntropyFunction {where} gave {got}: exp of a large logit overflows. "
                                      "Subtract each row's maximum before exp: log-sum-exp is max + log Σ exp(z − max)")
            lse = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
            if close(got, (lse - z[np.arange(n), y]).sum()):
                return Verdict(False, f"CrossEntropyFunction {where} gave the sum over the {n} rows, {got:.4g}: return "
                                      "their mean, as F.cross_entropy does")
            return Verdict(False, f"CrossEntropyFunction {where} gave {got:.6g}, expected "
                                  f"{float(np.asarray(r['own']['loss'])):.6g}: the mean over rows of "
                                  "logsumexp(z) − z[target]")
        got = m["grad"]
        if got is None:
            return Verdict(False, f"CrossEntropyFunction {where}: no gradient reached the logits")
        want = r["own"]["grad"]
        numeric, torch = m["numeric"], (r["torch"] or {"grads": [None]})["grads"][0]
        if close(got, want) and (numeric is None or close(got, numeric, rtol=1e-4, atol=1e-5)) and (
                torch is None or close(got, torch)):
            continue
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        onehot = np.eye(z.shape[1])[y]
        g = r["g"]
        if close(got, (p - onehot) * g):
            return Verdict(False, f"CrossEntropyFunction {where}: the gradient is (softmax − one_hot) · g, without the "
                                  f"1/N: the loss is a mean over N = {n} rows, so each row's gradient is divided by N")
        if close(got, p * g / n):
            return Verdict(False, f"CrossEntropyFunction {where}: the gradient is softmax/N, without subtracting the "
                                  "one-hot of the targets: the − z[target] term of the loss gives −1 at each row's "
                                  "target")
        if close(got, (p - onehot) / n):
            return Verdict(False, f"CrossEntropyFunction {where}: the gradient ignores grad_output (here "
                                  f"{g:.3g}): multiply by it, the loss may be scaled before backward")
        numbers = f"got {fmt(got)}, minigrad's F.cross_entropy gives {fmt(want)}"
        if numeric is not None:
            numbers += f", finite differences of your forward {fmt(numeric)}"
        return Verdict(False, f"CrossEntropyFunction {where}, the gradient of the logits: {numbers}: "
                              "(softmax(z) − one_hot(target)) · grad_output / N")
    return Verdict(True)


def probe_cross_entropy_saved(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "CrossEntropyFunction")
    n, v = 12, 7
    z0, y0 = rng.standard_normal((n, v)), rng.integers(0, v, n)
    targets = minigrad.tensor(y0)
    node = apply(_leaf(z0) * 1.0, targets).grad_fn
    budget = z0.nbytes + y0.nbytes + 2 * n * 8
    return {"kept": _kept_bytes(node), "budget": budget,
            "inplace": _inplace_probe(apply, lambda: [_leaf(z0), targets], 0, _const(1.0))}


def judge_cross_entropy_saved(mine: dict, ref: dict) -> Verdict:
    problem = _budget_problem("CrossEntropyFunction", mine["kept"], mine["budget"],
                              "one (N, V) array, the targets and two numbers per row",
                              "Backward needs softmax(z) (or z and each row's log-sum-exp to make it again) and the "
                              "targets: with a vocabulary of V, every (N, V) array kept is N·V more numbers")
    if problem:
        return Verdict(False, problem)
    problem = _inplace_problem("CrossEntropyFunction", "the logits", mine["inplace"])
    return Verdict(False, problem) if problem else Verdict(True)

