"""Part ``functions``: ``Sigmoid`` and ``CrossEntropy`` around the kernels, their gradients against finite
differences, and ``@once_differentiable``."""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad.autograd import grad as autograd_grad
from minigrad.course.checks import Verdict, clip, close, fmt
from minigrad.course.stages.s07_numba.probing import _single_threaded


def _leaf(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=minigrad.float64, requires_grad=True)


def _numeric(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d f / d x by central differences, f a scalar function of an array."""
    grad = np.zeros_like(x)
    for k in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus.flat[k] += eps
        minus.flat[k] -= eps
        grad.flat[k] = (f(plus) - f(minus)) / (2 * eps)
    return grad


@_single_threaded
def probe_sigmoid_function(ns: dict, rng: np.random.Generator) -> dict:
    apply = ns["Sigmoid"].apply
    x0, g = rng.standard_normal((3, 4)) * 2, rng.standard_normal((3, 4))
    x = _leaf(x0)
    y = apply(x)
    (y * minigrad.tensor(g)).sum().backward()

    def f(values):
        with minigrad.no_grad():
            return float((apply(minigrad.tensor(values)) * minigrad.tensor(g)).sum().item())

    return {"y": y.detach(), "grad": x.grad, "numeric": _numeric(f, x0), "x": x0, "g": g}


def judge_sigmoid_function(mine: dict, ref: dict) -> Verdict:
    if not close(mine["y"], ref["y"]):
        return Verdict(False, f"Sigmoid.apply(x) gave {fmt(mine['y'])}, expected {fmt(ref['y'])}")
    if mine["grad"] is None:
        return Verdict(False, "after (Sigmoid.apply(x) * g).sum().backward() (g: fixed random weights), x.grad is None: "
                              "backward must return "
                              "a tensor, the gradient for x")
    if not close(mine["grad"], ref["numeric"], rtol=1e-5):
        return Verdict(False, f"after (Sigmoid.apply(x) * g).sum().backward() (g: fixed random weights), "
                              f"x.grad = {fmt(mine['grad'])}, but "
                              f"finite differences give {fmt(ref['numeric'])}: backward must return "
                              "sigmoid_backward(y, grad_output), with y the output saved in forward")
    return Verdict(True)


@_single_threaded
def probe_ce_function(ns: dict, rng: np.random.Generator) -> dict:
    apply = ns["CrossEntropy"].apply
    z0 = rng.standard_normal((5, 4)) * 2
    targets = minigrad.tensor(rng.integers(0, 4, 5))
    z = _leaf(z0)
    loss = apply(z, targets)
    (loss * 2.5).backward()

    def f(values):
        with minigrad.no_grad():
            return 2.5 * float(apply(minigrad.tensor(values), targets).item())

    return {"loss": loss.detach(), "shape": list(loss.shape), "grad": z.grad, "numeric": _numeric(f, z0)}


def judge_ce_function(mine: dict, ref: dict) -> Verdict:
    if mine["shape"] != []:
        return Verdict(False, f"CrossEntropy.apply(logits, targets) has shape {tuple(mine['shape'])}: the loss is "
                              "one number, a 0-d tensor (minigrad.tensor(loss))")
    if not close(mine["loss"], ref["loss"]):
        return Verdict(False, f"CrossEntropy.apply(logits, targets) gave {fmt(mine['loss'])}, expected {fmt(ref['loss'])}")
    if mine["grad"] is None:
        return Verdict(False, "after (CrossEntropy.apply(logits, targets) * 2.5).backward(), logits.grad is None: "
                              "backward returns (gradient for logits, None for targets)")
    if not close(mine["grad"], ref["numeric"], rtol=1e-5):
        if close(np.asarray(mine["grad"]) * 2.5, ref["numeric"], rtol=1e-5):
            return Verdict(False, f"after (loss * 2.5).backward(), logits.grad = {fmt(mine['grad'])}, 2.5 times too "
                                  "small: backward receives grad_output = 2.5 and must pass it on as grad_scalar "
                                  "(grad_output.item())")
        return Verdict(False, f"after (loss * 2.5).backward(), logits.grad = {fmt(mine['grad'])}, but finite "
                              f"differences give {fmt(ref['numeric'])}")
    return Verdict(True)


@_single_threaded
def probe_once_differentiable(ns: dict, rng: np.random.Generator) -> dict:
    """A second derivative through each Function. The incoming gradient must itself require grad
    (here: y * x, and loss * w), or there is nothing for a second derivative to follow."""
    results = {}
    x = _leaf(rng.standard_normal(4))
    z = _leaf(rng.standard_normal((3, 4)))
    w = _leaf(1.5)
    targets = minigrad.tensor(rng.integers(0, 4, 3))
    for name, make, leaf in (("Sigmoid", lambda: (ns["Sigmoid"].apply(x) * x).sum(), x),
                             ("CrossEntropy", lambda: ns["CrossEntropy"].apply(z, targets) * w, z)):
        (g,) = autograd_grad(make(), [leaf], create_graph=True)
        try:
            (g * g).sum().backward()
        except RuntimeError as e:
            results[name] = clip(str(e), 300)
        else:
            results[name] = None
    return results


def judge_once_differentiable(mine: dict, ref: dict) -> Verdict:
    for name in ("Sigmoid", "CrossEntropy"):
        message = mine[name]
        if message is not None and "once_differentiable" in message:
            continue
        if message is None:
            happened = "ran without an error"
        else:
            happened = f"raised \"{message[:120]}\""
        return Verdict(False, f"differentiating {name}'s gradient a second time (grad(..., create_graph=True), then "
                              f"backward) {happened}. A backward computed with NumPy is invisible to autograd, so "
                              "a second derivative through it would be wrong or fail obscurely. Put "
                              "@once_differentiable under @staticmethod on backward: it then fails with a clear "
                              "message")
    return Verdict(True)

