"""Part ``max_with_mask``: ``MaxWithMask``, a gradient to the maxima and a mask marked non-differentiable."""
from __future__ import annotations

import numpy as np

from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s05_custom_functions.probing import _apply, _const, _leaf, _vjp


def probe_max_with_mask(ns: dict, rng: np.random.Generator) -> dict:
    x = _leaf(rng.standard_normal((4, 5)))
    a = _const(rng.standard_normal(4))
    values, mask = _apply(ns, "MaxWithMask", outputs=2)(x)
    (gx,) = _vjp(values, x, a) if values.requires_grad else (None,)
    return {"values": values, "mask": mask, "values_requires_grad": values.requires_grad,
            "mask_requires_grad": mask.requires_grad, "grad": gx}


def judge_max_with_mask(mine: dict, ref: dict) -> Verdict:
    if not close(mine["values"], ref["values"]):
        return Verdict(False, f"the row maxima are {fmt(mine['values'])}, expected {fmt(ref['values'])}")
    if not close(mine["mask"], ref["mask"]):
        return Verdict(False, f"the mask is {fmt(mine['mask'])}, expected a one-hot float mask of each row's maximum "
                              f"{fmt(ref['mask'])}")
    if mine["mask_requires_grad"]:
        return Verdict(False, "the mask requires grad, so anything computed from it is recorded in the graph, and "
                              "mask.numpy() refuses to run. A mask is piecewise constant: it has no useful gradient. "
                              "Call ctx.mark_non_differentiable(mask) in forward")
    if not mine["values_requires_grad"]:
        return Verdict(False, "the maxima don't require grad: mark only the mask as non-differentiable")
    if mine["grad"] is None or not close(mine["grad"], ref["grad"]):
        return Verdict(False, f"with loss = (a · values).sum() (a: fixed random weights, one per row), x's gradient is "
                              f"{fmt(mine['grad'])}, expected "
                              f"{fmt(ref['grad'])}: each row's gradient goes to the position of its maximum "
                              "(grad_values[:, None] * mask, with grad_values the gradient backward receives for "
                              "values)")
    return Verdict(True)

