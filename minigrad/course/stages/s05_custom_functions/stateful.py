"""Part ``stateful``: the instance-style ``StatefulSigmoid``, one fresh instance per call."""
from __future__ import annotations

import numpy as np

from minigrad.autograd import StatefulFunction
from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s05_custom_functions.probing import _attempt, _const, _leaf, _vjp


def probe_stateful(ns: dict, rng: np.random.Generator) -> dict:
    instance = ns["StatefulSigmoid"]()
    x, g = _leaf(rng.uniform(-3, 3, 5)), _const(rng.standard_normal(5))
    y = instance(x)
    (gx,) = _vjp(y, x, g)
    a, b = _leaf(rng.uniform(-3, 3, 4)), _leaf(rng.uniform(-3, 3, 4))
    ga, gb = _const(rng.standard_normal(4)), _const(rng.standard_normal(4))

    def twice():
        ya, yb = ns["stateful_sigmoid"](a), ns["stateful_sigmoid"](b)
        return _vjp((ya, yb), (a, b), (ga, gb))

    return {"stateful": isinstance(instance, StatefulFunction), "x": x, "y": y, "grad": gx, "twice": _attempt(twice)}


def judge_stateful(mine: dict, ref: dict) -> Verdict:
    if not mine["stateful"]:
        return Verdict(False, "StatefulSigmoid must subclass minigrad.autograd.StatefulFunction, with "
                              "forward(self, x) and backward(self, dy) keeping their state on self")
    if not close(mine["y"], ref["y"]):
        return Verdict(False, f"StatefulSigmoid()(x) gave {fmt(mine['y'])}, expected {fmt(ref['y'])}")
    if mine["grad"] is None or not close(mine["grad"], ref["grad"]):
        return Verdict(False, f"StatefulSigmoid's gradient is {fmt(mine['grad'])}, expected {fmt(ref['grad'])}: "
                              "keep the output on self in forward (self.y = ...) and return dy * y * (1 - y)")
    twice = mine["twice"]
    if "error" in twice:
        if "already called once" in twice["error"]:
            return Verdict(False, "the second call of stateful_sigmoid reused the instance of the first, and "
                                  "minigrad refused: that instance's self.y belongs to the first call's node, and a "
                                  "second forward would overwrite it before backward. Create a new "
                                  "StatefulSigmoid() inside stateful_sigmoid, once per call")
        return Verdict(False, f"calling stateful_sigmoid twice in one graph raised {twice['error']}")
    for name, got, want in zip("ab", twice["ok"], ref["twice"]["ok"]):
        if got is None or not close(got, want):
            return Verdict(False, f"with stateful_sigmoid used on a and on b in one graph, {name}'s gradient is "
                                  f"{fmt(got)}, expected {fmt(want)}: each call needs its own instance")
    return Verdict(True)

