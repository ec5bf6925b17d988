"""Part ``mul_constant``: ``MulConstant``, a None gradient for the constant."""
from __future__ import annotations

import re

import numpy as np

from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s05_custom_functions.probing import _apply, _attempt, _const, _leaf, _vjp


def probe_mul_constant(ns: dict, rng: np.random.Generator) -> dict:
    x = _leaf(rng.standard_normal(4))
    g = _const(rng.standard_normal(4))
    c = float(rng.choice([-2.5, 0.5, 3.0]))

    def run():
        y = _apply(ns, "MulConstant")(x, c)
        (gx,) = _vjp(y, x, g)
        return {"y": y, "grad": gx}

    return {"c": c, "x": x, **_attempt(run)}


def judge_mul_constant(mine: dict, ref: dict) -> Verdict:
    c = ref["c"]
    if "error" in mine:
        error = mine["error"]
        if "incorrect number of gradients" in error:
            got = re.search(r"got (\d+)", error)
            got = got.group(1) if got else "too few"
            return Verdict(False, f"MulConstant's backward returned {got} gradient(s), but forward took 2 arguments "
                                  f"(x and c = {c:g}): minigrad raised \"incorrect number of gradients\". Return one "
                                  "per forward argument, None for the constant: `return grad_output * ctx.c, None`")
        if "different than None" in error:
            return Verdict(False, f"backward returned a gradient for c = {c:g}, a Python float: an argument that is "
                                  "not a tensor has no gradient, so its entry must be None")
        if "save_for_backward" in error:
            return Verdict(False, f"save_for_backward(..., c) failed because c = {c:g} is not a tensor: keep plain "
                                  "values as attributes of ctx (ctx.c = c)")
        return Verdict(False, f"MulConstant.apply(x, {c:g}) and its backward raised {error}")
    out = mine["ok"]
    if not close(out["y"], ref["ok"]["y"]):
        return Verdict(False, f"MulConstant.apply(x, {c:g}) gave {fmt(out['y'])}, expected {fmt(ref['ok']['y'])}")
    if out["grad"] is None or not close(out["grad"], ref["ok"]["grad"]):
        return Verdict(False, f"with c = {c:g} the gradient for x is {fmt(out['grad'])}, expected grad_output · c = "
                              f"{fmt(ref['ok']['grad'])}")
    return Verdict(True)

