"""Part ``relu``: ``ReLU``, the gradient through where x > 0."""
from __future__ import annotations

import numpy as np

from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s05_custom_functions.probing import (
    _apply, _array, _changed, _changed_problem, _const, _leaf, _snapshot, _version_check, _version_problem, _vjp,
)


def probe_relu(ns: dict, rng: np.random.Generator) -> dict:
    n = int(rng.integers(6, 11))
    # zeros, and values on both sides of 0 near it and far from it (a mask x > 1 or x > -1 shows)
    near = [rng.uniform(0.05, 0.9), -rng.uniform(0.05, 0.9)]
    values = np.concatenate([[0.0, 0.0], near, rng.uniform(1.1, 2.5, n // 2), -rng.uniform(1.1, 2.5, n - n // 2)])
    x = _leaf(rng.permutation(values))
    g = _const(rng.standard_normal(len(values)))
    before = _snapshot(x)
    relu = _apply(ns, "ReLU")
    y = relu(x)
    if _changed(before, x):
        return {"changed": _changed(before, x)}
    (gx,) = _vjp(y, x, g)
    changed = _changed(before, x)
    z = _leaf(rng.standard_normal(5))
    return {"x": before[0], "g": g, "y": y, "grad": gx, "changed": changed,
            "version": _version_check(lambda: relu(z), [z], z) if not changed else None}


def judge_relu(mine: dict, ref: dict) -> Verdict:
    x, g = _array(ref["x"]), _array(ref["g"])
    problem = _changed_problem("ReLU", mine["changed"])
    if problem:
        return Verdict(False, problem)
    if not close(mine["y"], ref["y"]):
        return Verdict(False, f"ReLU.apply(x) with x = {fmt(ref['x'])} gave {fmt(mine['y'])}, expected {fmt(ref['y'])}")
    got = mine["grad"]
    if got is None:
        return Verdict(False, "no gradient reached x through ReLU: backward must return grad_output * mask")
    if close(got, ref["grad"]):
        problem = _version_problem("ReLU", "its input x", mine["version"], ref["version"])
        return Verdict(False, problem) if problem else Verdict(True)
    if close(got, g * (x >= 0)):
        at_zero = fmt(_array(got)[x == 0].tolist())
        return Verdict(False, f"where x = 0 your gradient is {at_zero}, expected [0, 0]: you used the mask x >= 0. "
                              "At 0 ReLU has no derivative, and the convention (PyTorch's and minigrad's) is 0: "
                              "use x > 0")
    if close(got, g * (x <= 0)) or close(got, g * (x < 0)):
        return Verdict(False, "ReLU's gradient flows where x is negative and is blocked where x is positive: "
                              "the mask is inverted. The gradient passes where x > 0")
    if close(got, g * (g > 0)) or close(got, np.maximum(g, 0)):
        return Verdict(False, "ReLU's gradient keeps the positive entries of grad_output: the mask must come from "
                              "the input x (x > 0), not from the incoming gradient")
    if close(got, g):
        return Verdict(False, "ReLU's backward returned grad_output unchanged: multiply it by the mask (x > 0)")
    return Verdict(False, f"with x = {fmt(ref['x'])} and grad_output = {fmt(ref['g'])}, ReLU's gradient is "
                          f"{fmt(got)}, expected grad_output · (x > 0) = {fmt(ref['grad'])}")

