"""Stage 00: a first gradient and a first training step, with minigrad doing the calculus."""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad.course.checks import Check, Stage, Verdict, close, fmt


def probe_gradient(ns: dict, rng: np.random.Generator) -> dict:
    x = minigrad.tensor(rng.uniform(-2, 2, 5), dtype=minigrad.float64)
    original, calls = minigrad.Tensor.backward, [0]

    def counted(self, *args, **kwargs):
        calls[0] += 1
        return original(self, *args, **kwargs)

    minigrad.Tensor.backward = counted
    try:
        value, grad = ns["value_and_grad"](x)
    finally:
        minigrad.Tensor.backward = original
    return {"x": x, "value": float(value), "value_type": type(value).__name__, "grad": grad,
            "backward_calls": calls[0], "x_grad_after": x.grad, "x_requires_grad": x.requires_grad}


def judge_gradient(mine: dict, ref: dict) -> Verdict:
    if mine["value_type"] != "float":
        return Verdict(False, f"value_and_grad returned f(x) as a {mine['value_type']}: return it as a Python "
                              "float, value.item() (a tensor would keep its graph alive, and prints differently)")
    if not close(mine["value"], ref["value"]):
        return Verdict(False, f"f(x) = {fmt(mine['value'])}, expected {fmt(ref['value'])}: f(x) = (x**2 + 3*x).sum()")
    if mine["grad"] is None:
        return Verdict(False, "the gradient is None: make a copy of x that requires grad "
                              "(x.detach().requires_grad_()) and call .backward() on f's value")
    if close(mine["grad"], [2 * v for v in mine["x"]]):
        return Verdict(False, "you returned 2x: that is the gradient of x**2 alone; let backward() do the whole sum")
    if not close(mine["grad"], ref["grad"]):
        return Verdict(False, f"the gradient is {fmt(mine['grad'])}, expected {fmt(ref['grad'])} (= 2x + 3)")
    if mine["backward_calls"] == 0:
        return Verdict(False, "the gradient is right, but backward() was never called: the worksheet asks for the "
                              "gradient by backward(), from f's value, not worked out by hand (2x + 3)")
    if mine["x_requires_grad"]:
        return Verdict(False, "the gradient is right, but the x passed in now requires grad: work on a copy "
                              "(x.detach().requires_grad_()) so the caller's tensor is left as it was")
    return Verdict(True)


def _moons(rng: np.random.Generator):
    X, y = minigrad.data.make_moons(200, noise=0.1, seed=int(rng.integers(1000)))
    return minigrad.tensor(X, dtype=minigrad.float64), minigrad.tensor(y)


def _params(rng: np.random.Generator) -> list:
    shapes = [(2, 16), (16,), (16, 2), (2,)]
    return [minigrad.tensor(rng.standard_normal(s) * 0.5, requires_grad=True) for s in shapes]


def _loss(params, X, y):
    w1, b1, w2, b2 = params
    logits = (X @ w1 + b1).tanh() @ w2 + b2
    return minigrad.nn.functional.cross_entropy(logits, y), logits


def probe_one_step(ns: dict, rng: np.random.Generator) -> dict:
    X, y = _moons(rng)
    params = _params(rng)
    before = [p.detach().clone() for p in params]
    loss, _ = _loss(params, X, y)
    loss.backward()
    grads = [p.grad.detach().clone() for p in params]
    ns["sgd_step"](params, 0.1)
    return {"moved": [(p - b) for p, b in zip(params, before)], "grads": grads,
            "grads_after": [None if p.grad is None else p.grad for p in params],
            "leaf": all(p.is_leaf for p in params)}


def judge_one_step(mine: dict, ref: dict) -> Verdict:
    if not mine["leaf"]:
        return Verdict(False, "after your step a parameter has a grad_fn: update it in place inside "
                              "`with minigrad.no_grad():` (p -= lr * p.grad), not with p = p - lr * p.grad")
    for i, (moved, grad) in enumerate(zip(mine["moved"], mine["grads"])):
        if close(moved, (0.1 * np.asarray(grad)).tolist()):
            return Verdict(False, f"parameter {i} moved up its gradient: subtract lr * grad to go downhill")
        if not close(moved, ref["moved"][i]):
            return Verdict(False, f"parameter {i} moved by {fmt(moved)}, expected {fmt(ref['moved'][i])} (= -lr * grad)")
    if any(g is not None and np.any(np.asarray(g) != 0) for g in mine["grads_after"]):
        return Verdict(False, "after the step the gradients are still there: set p.grad = None (or zero it), "
                              "otherwise the next backward adds to them")
    return Verdict(True)


def probe_training(ns: dict, rng: np.random.Generator) -> dict:
    X, y = _moons(rng)
    params = _params(rng)
    for _ in range(300):
        loss, logits = _loss(params, X, y)
        loss.backward()
        ns["sgd_step"](params, 0.5)
    return {"accuracy": float((logits.argmax(1) == y).float().mean().item())}


def judge_training(mine: dict, ref: dict) -> Verdict:
    if mine["accuracy"] < 0.9:
        return Verdict(False, f"300 steps of your sgd_step reached {mine['accuracy']:.0%} accuracy on two moons "
                              f"(minigrad's: {ref['accuracy']:.0%}); expected at least 90%")
    return Verdict(True)


def reference() -> dict:
    def value_and_grad(x):
        x = x.detach().requires_grad_()
        value = (x ** 2 + 3 * x).sum()
        value.backward()
        return value.item(), x.grad

    def sgd_step(params, lr):
        with minigrad.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None

    return {"value_and_grad": value_and_grad, "sgd_step": sgd_step}


# The mistakes the feedback names (issue 28), each by the name of its catalogued mutant: a phrase
# appears only for that mistake's results (tests/course/test_mutants.py: no mutant is told another's).
DIAGNOSES = {
    "hand_derived_partial": "gradient of x**2 alone",
    "modifies_callers_tensor": "now requires grad",
    "value_as_a_tensor": "return it as a Python float",
    "gradient_by_hand": "backward() was never called",
    "step_uphill": "subtract lr * grad",
    "never_clears": "gradients are still there",
    "rebinds_instead_of_updating": "after your step a parameter has a grad_fn",
}


STAGE = Stage(
    number="00",
    name="tour",
    title="A tour: gradients and a first training loop",
    parts={"value_and_grad": ("value_and_grad",), "sgd_step": ("sgd_step",)},
    checks=(
        Check("gradient", 2, "f(x) = (x**2 + 3x).sum() and its gradient, by backward()", probe_gradient,
              judge_gradient, part="value_and_grad"),
        Check("sgd_step", 2, "one gradient-descent step, then gradients cleared", probe_one_step, judge_one_step,
              part="sgd_step"),
        Check("training", 1, "your step trains a network on two moons", probe_training, judge_training,
              needs=("sgd_step",), part="sgd_step"),
    ),
    reference=reference,
)
