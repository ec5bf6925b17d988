"""Part ``sin_cos``: ``SinCos``, two outputs whose gradients both reach x."""
from __future__ import annotations

import numpy as np

from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s05_custom_functions.probing import AB, _apply, _array, _const, _leaf, _vjp


def probe_sin_cos(ns: dict, rng: np.random.Generator) -> dict:
    sin_cos = _apply(ns, "SinCos", outputs=2)
    x = _leaf(rng.uniform(-3, 3, 6))
    a, b = _const(rng.standard_normal(6)), _const(rng.standard_normal(6))
    s, c = sin_cos(x)
    (both,) = _vjp((s, c), x, (a, b))
    s2, _ = sin_cos(x)
    (sin_only,) = _vjp(s2, x, a)
    return {"x": x, "a": a, "b": b, "s": s, "c": c, "both": both, "sin_only": sin_only}


def judge_sin_cos(mine: dict, ref: dict) -> Verdict:
    x, a, b = _array(ref["x"]), _array(ref["a"]), _array(ref["b"])
    if not (close(mine["s"], ref["s"]) and close(mine["c"], ref["c"])):
        return Verdict(False, f"SinCos.apply(x) gave ({fmt(mine['s'])}, {fmt(mine['c'])}), expected "
                              f"(sin x, cos x) = ({fmt(ref['s'])}, {fmt(ref['c'])})")
    got = mine["both"]
    if got is None:
        return Verdict(False, "no gradient reached x through SinCos")
    if not close(got, ref["both"]):
        if close(got, a * np.cos(x)):
            return Verdict(False, f"with loss = (a·sin x + b·cos x).sum(){AB}, x's gradient is a·cos x = {fmt(got)}: "
                                  "your backward ignored the gradient of the second output. backward receives one "
                                  "gradient per output (grad_sin, grad_cos); x gets the sum of both contributions")
        if close(got, -b * np.sin(x)):
            return Verdict(False, "your backward ignored the gradient of the first output (sin): x gets "
                                  "grad_sin · cos x − grad_cos · sin x (grad_sin, grad_cos: the gradients backward "
                                  "receives for sin x and cos x)")
        if close(got, a * np.cos(x) + b * np.sin(x)):
            return Verdict(False, "the cos part has the wrong sign: d(cos x)/dx = −sin x")
        return Verdict(False, f"with loss = (a·sin x + b·cos x).sum(){AB}, x's gradient is {fmt(got)}, expected "
                              f"a·cos x − b·sin x = {fmt(ref['both'])}")
    if mine["sin_only"] is None or not close(mine["sin_only"], ref["sin_only"]):
        return Verdict(False, f"when only sin is used, in (a·sin x).sum(){AB}, x's gradient is "
                              f"{fmt(mine['sin_only'])}, expected a·cos x = "
                              f"{fmt(ref['sin_only'])}: the unused output's gradient arrives as zeros")
    return Verdict(True)

