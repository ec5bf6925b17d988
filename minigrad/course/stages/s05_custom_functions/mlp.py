"""Part ``mlp``: ``TinyMLP`` on the learner's ``LinearFunction``."""
from __future__ import annotations

import numpy as np

from minigrad import nn
from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s05_custom_functions.probing import _const, _vjp

MLP_SHAPES = {"w1": (6, 3), "b1": (6,), "w2": (2, 6), "b2": (2,)}


def probe_mlp(ns: dict, rng: np.random.Generator) -> dict:
    big = ns["TinyMLP"](64, 128, 32)  # how the worksheet's text says to start: shapes, scales, zero biases
    start = {}
    for name, fan_in in (("w1", 64), ("b1", None), ("w2", 128), ("b2", None)):
        p = getattr(big, name, None)
        if p is None or not hasattr(p, "shape"):
            continue
        values = np.asarray(p.detach().numpy(), dtype=np.float64)
        start[name] = {"shape": list(values.shape),
                       "scale": float(values.std() * fan_in ** 0.5) if fan_in else float(np.abs(values).max(initial=0))}
    model = ns["TinyMLP"](3, 6, 2)
    registered = sorted(name for name, _ in model.named_parameters())
    for name, shape in MLP_SHAPES.items():
        setattr(model, name, nn.Parameter(_const(rng.standard_normal(shape))))
    x, g = _const(rng.standard_normal((7, 3))), _const(rng.standard_normal((7, 2)))
    y = model(x)
    grads = _vjp(y, [getattr(model, name) for name in MLP_SHAPES], g)
    return {"n_params": len(list(model.parameters())), "registered": registered, "y": y, "grads": grads,
            "last_node": y.grad_fn.name() if y.grad_fn is not None else None, "start": start}


def judge_mlp(mine: dict, ref: dict) -> Verdict:
    missing = [name for name in ref["registered"] if name not in mine["registered"]]
    if missing:
        return Verdict(False, f"TinyMLP(3, 6, 2).parameters() does not list {' and '.join(missing)} (it lists "
                              f"{mine['registered'] or 'nothing'}): an optimizer updates only what parameters() "
                              f"lists, so {' and '.join(missing)} would never train. Wrap each tensor in "
                              "nn.Parameter(...) when you assign it to self")
    if mine["last_node"] != ref["last_node"]:
        return Verdict(False, f"TinyMLP's output was made by {mine['last_node']}, not by your LinearFunction "
                              f"({ref['last_node']}): compute each layer with LinearFunction.apply(h, weight, bias)")
    if not close(mine["y"], ref["y"]):
        extra = (f" It has {mine['n_params']} parameters, expected 4: use exactly the attributes w1, b1, w2, b2."
                 if mine["n_params"] != ref["n_params"] else "")
        return Verdict(False, f"with the parameters set to known values, TinyMLP gave {fmt(mine['y'])}, expected "
                              f"{fmt(ref['y'])}: forward is relu(x @ w1.T + b1) @ w2.T + b2.{extra}")
    for name, got, want in zip(MLP_SHAPES, mine["grads"], ref["grads"]):
        if got is None or not close(got, want):
            return Verdict(False, f"TinyMLP's gradient for {name} is {fmt(got)}, expected {fmt(want)}")
    fan_in = {"w1": 64, "w2": 128}
    for name, want in ref["start"].items():
        got = mine["start"].get(name)
        where = f"TinyMLP(64, 128, 32) starts {name}"
        if got is None:
            return Verdict(False, f"{where} as something that is not a tensor")
        if got["shape"] != want["shape"]:
            return Verdict(False, f"{where} with shape {tuple(got['shape'])}, expected {tuple(want['shape'])}: a "
                                  "weight is (out_features, in_features), since LinearFunction computes x @ weight.T")
        if name.startswith("b") and got["scale"] != 0:
            return Verdict(False, f"{where} with values up to {got['scale']:.3g} in absolute value: start the biases "
                                  "at zero (minigrad.zeros)")
        if name.startswith("w") and not 0.85 <= got["scale"] <= 1.15:  # std * sqrt(n) is 1, within sampling
            n = fan_in[name]
            return Verdict(False, f"{where} with a standard deviation of {got['scale'] / n ** 0.5:.3g}, expected "
                                  f"about {n ** -0.5:.3g}: randn(...) * {n} ** -0.5, one over the "
                                  "square root of the layer's number of inputs, so the outputs start small")
    return Verdict(True)

