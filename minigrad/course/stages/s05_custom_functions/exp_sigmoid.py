"""Part ``exp_sigmoid``: ``Exp`` and ``Sigmoid``, what they save, and a sigmoid of the learner's own."""
from __future__ import annotations

import numpy as np

from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s03_save_for_backward import _kind as _saved_kind
from minigrad.course.stages.s03_save_for_backward import saved_problem
from minigrad.course.stages.s05_custom_functions.probing import (
    G, _apply, _array, _changed, _changed_problem, _const, _leaf, _snapshot, _vjp,
)


def probe_exp_sigmoid(ns: dict, rng: np.random.Generator) -> dict:
    result = {}
    for name in ("Exp", "Sigmoid"):
        x = _leaf(rng.uniform(-3, 3, 6))
        g = _const(rng.standard_normal(6))
        before = _snapshot(x)
        y = _apply(ns, name)(x)
        if _changed(before, x):
            return {**result, name: {"changed": _changed(before, x)}}
        (gx,) = _vjp(y, x, g)
        result[name] = {"x": before[0], "g": g, "y": y, "grad": gx, "changed": _changed(before, x)}
    return result


def judge_exp_sigmoid(mine: dict, ref: dict) -> Verdict:
    for name in ("Exp", "Sigmoid"):
        problem = _changed_problem(name, mine.get(name, {}).get("changed"))
        if problem:
            return Verdict(False, problem)
    for name, formula in (("Exp", "g · eˣ (g: the gradient backward receives, grad_output; eˣ: the output y)"),
                          ("Sigmoid", "g · s · (1 − s) (g: the gradient backward receives, grad_output; "
                                      "s = sigmoid(x): the output)")):
        m, r = mine[name], ref[name]
        x, g, y = _array(r["x"]), _array(r["g"]), _array(r["y"])
        if not close(m["y"], r["y"]):
            return Verdict(False, f"{name}.apply(x) with x = {fmt(r['x'])} gave {fmt(m['y'])}, expected {fmt(r['y'])}: "
                                  "check the forward formula")
        if m["grad"] is None:
            return Verdict(False, f"no gradient reached x through {name}: backward must return grad_output times "
                                  "the derivative, one tensor for the one input")
        if close(m["grad"], r["grad"]):
            continue
        if name == "Sigmoid" and close(m["grad"], g * x * (1 - x)):
            return Verdict(False, f"Sigmoid's gradient is g · x · (1 − x) = {fmt(m['grad'])}{G}, expected "
                                  f"{fmt(r['grad'])}: "
                                  "you used the input x where the output s = sigmoid(x) was needed. Save the output "
                                  "in forward (ctx.save_for_backward(s)) and use s · (1 − s)")
        if name == "Sigmoid" and close(m["grad"], g * y):
            return Verdict(False, f"Sigmoid's gradient is g · s{G}, with s = sigmoid(x) the saved output: the "
                                  "derivative of sigmoid is s · (1 − s), you left out the (1 − s)")
        if name == "Exp" and close(m["grad"], g * np.exp(y)):
            return Verdict(False, f"Exp's gradient is g · exp(eˣ) = {fmt(m['grad'])}{G}, expected g · eˣ = "
                                  f"{fmt(r['grad'])}: you saved the output eˣ and exponentiated it again. The saved "
                                  "output already is the derivative: return grad_output * y")
        return Verdict(False, f"{name}'s gradient at x = {fmt(r['x'])} is {fmt(m['grad'])}, expected {formula} = "
                              f"{fmt(r['grad'])}")
    return Verdict(True)


def probe_exp_sigmoid_saved(ns: dict, rng: np.random.Generator) -> dict:
    """What Exp and Sigmoid save for backward, classified as stage 03 does (input, output, other)."""
    found = {}
    for name in ("Exp", "Sigmoid"):
        x = _leaf(rng.uniform(-3, 3, 5))
        out = _apply(ns, name)(x)
        found[name] = [_saved_kind(s, [x], out) for s in out.grad_fn.saved_tensors]
    return found


def judge_exp_sigmoid_saved(mine: dict, ref: dict) -> Verdict:
    for name in ("Exp", "Sigmoid"):
        problem = saved_problem(name, mine[name], ref[name])
        if problem:
            return Verdict(False, problem)
    return Verdict(True)


def probe_own_sigmoid(ns: dict, rng: np.random.Generator) -> int:
    """How many times Sigmoid's forward and backward ran minigrad's own sigmoid (x.sigmoid(), F.sigmoid...)."""
    from minigrad.ops import elementwise

    original = elementwise.Sigmoid.__dict__["forward"]
    calls = [0]

    def counted(*args, **kwargs):
        calls[0] += 1
        return original.__func__(*args, **kwargs)

    x = _leaf(rng.uniform(-3, 3, 5))
    elementwise.Sigmoid.forward = staticmethod(counted)
    try:
        y = _apply(ns, "Sigmoid")(x)
        _vjp(y, x, _const(np.ones(5)))
    finally:
        elementwise.Sigmoid.forward = original
    return calls[0]


def judge_own_sigmoid(mine: int, ref: int) -> Verdict:
    if mine == 0:
        return Verdict(True)
    return Verdict(False, "your Sigmoid runs minigrad's own sigmoid (x.sigmoid(), or F.sigmoid): the worksheet asks "
                          "you to write the formula, 1 / (1 + (-x).exp()), so that your Function computes it")

