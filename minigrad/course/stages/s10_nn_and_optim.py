"""Stage 10: Modules, optimizers, and a training loop.

The learner writes ``Linear`` (an ``nn.Module`` with ``weight`` (out, in) and ``bias``
Parameters, initialised like PyTorch), ``MLP(sizes)`` (Linear layers with ReLU between),
the optimizers ``SGD`` (momentum, dampening, Nesterov, weight decay) and ``Adam`` (bias
correction, weight decay as an L2 term), each with ``step()`` and ``zero_grad()``, and
``train_epoch(model, optimizer, loader)``; then trains an MLP on the digits.

The optimizers are run for several steps on fixed gradients and compared with
``minigrad.optim`` (which follows PyTorch's update rules line by line). When a trajectory
differs, the judge replays the common mistakes in NumPy on the same inputs (taken from
the reference's run) to name the one that was made. ``train_epoch`` is probed with
minigrad's own model and a recording optimizer, so it is graded independently of the
learner's Linear and optimizers.
"""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad import nn
from minigrad.course.checks import Check, Stage, Verdict, clip, close, fmt
from minigrad.data import DataLoader, TensorDataset, load_digits, train_test_split
from minigrad.nn import functional as F

STEPS = 5  # optimizer steps per trajectory
TARGET_ACCURACY = 0.92
EPOCHS = 10


def _param(values) -> nn.Parameter:
    return nn.Parameter(minigrad.tensor(np.asarray(values, dtype=np.float64)))


def _values(t) -> np.ndarray:
    return np.array(t.detach().numpy(), dtype=np.float64, copy=True)


# -- Linear ---------------------------------------------------------------------------------
def _described(module) -> list:
    return [[name, list(p.shape), isinstance(p, nn.Parameter), bool(p.requires_grad)]
            for name, p in module.named_parameters()]


def probe_linear_parameters(ns: dict, rng: np.random.Generator) -> dict:
    layer = ns["Linear"](5, 3)
    plain = ns["Linear"](5, 3, bias=False)
    return {"module": isinstance(layer, nn.Module), "with_bias": _described(layer),
            "without_bias": _described(plain), "bias_is_none": getattr(plain, "bias", "missing") is None}


def judge_linear_parameters(mine: dict, ref: dict) -> Verdict:
    if not mine["module"]:
        return Verdict(False, "Linear(5, 3) is not an nn.Module: subclass minigrad.nn.Module and call "
                              "super().__init__() first in __init__")
    got, want = mine["with_bias"], ref["with_bias"]
    if not got:
        return Verdict(False, "Linear(5, 3).named_parameters() is empty: assign nn.Parameter(...) to self.weight and "
                              "self.bias. A plain tensor attribute is not registered, so no optimizer would ever see it")
    names = [n for n, *_ in got]
    if names != [n for n, *_ in want]:
        return Verdict(False, f"Linear(5, 3) registers the parameters {names}, expected ['weight', 'bias'] in that "
                              "order (the names PyTorch uses, so that state_dicts match)")
    for (name, shape, is_param, grad), (_, ref_shape, *_rest) in zip(got, want):
        if shape == list(reversed(ref_shape)) and len(shape) == 2:
            return Verdict(False, f"Linear(5, 3).weight has shape {tuple(shape)}, expected {tuple(ref_shape)}: "
                                  "PyTorch stores weight as (out_features, in_features), one row per output unit, "
                                  "and forward computes x @ weight.T + bias")
        if shape != ref_shape:
            return Verdict(False, f"Linear(5, 3).{name} has shape {tuple(shape)}, expected {tuple(ref_shape)}")
        if not is_param or not grad:
            return Verdict(False, f"Linear(5, 3).{name} must be an nn.Parameter that requires grad")
    if [n for n, *_ in mine["without_bias"]] != ["weight"] or not mine["bias_is_none"]:
        return Verdict(False, f"Linear(5, 3, bias=False) registers {[n for n, *_ in mine['without_bias']]} and its "
                              "bias is not None: without a bias, register only weight and set self.bias = None "
                              "(or self.register_parameter('bias', None), as PyTorch does)")
    return Verdict(True)


def probe_linear_forward(ns: dict, rng: np.random.Generator) -> dict:
    layer = ns["Linear"](5, 3)
    layer.weight = _param(rng.standard_normal((3, 5)))
    layer.bias = _param(rng.standard_normal(3))
    x = minigrad.tensor(rng.standard_normal((2, 4, 5)), requires_grad=True)
    g = minigrad.tensor(rng.standard_normal((2, 4, 3)))
    y = layer(x)
    (y * g).sum().backward()
    plain = ns["Linear"](5, 3, bias=False)
    plain.weight = layer.weight
    try:
        without = {"y": plain(x).detach()}
    except Exception as e:  # noqa: BLE001 - adding a None bias is the mistake this looks for
        without = {"error": clip(f"{type(e).__name__}: {e}", 300)}
    return {"y": y.detach(), "shape": list(y.shape), "x_grad": x.grad, "w_grad": layer.weight.grad,
            "b_grad": layer.bias.grad, "no_bias": (y.detach() - layer.bias.detach()), "without_bias": without}


def judge_linear_forward(mine: dict, ref: dict) -> Verdict:
    if mine["shape"] != ref["shape"]:
        return Verdict(False, f"Linear(5, 3) on x of shape (2, 4, 5) gave shape {tuple(mine['shape'])}, expected "
                              f"{tuple(ref['shape'])}: it maps the last dimension, x @ weight.T + bias")
    if not close(mine["y"], ref["y"]):
        if close(mine["y"], ref["no_bias"]):
            return Verdict(False, "Linear's output is x @ weight.T without the bias: add self.bias")
        return Verdict(False, f"Linear(5, 3)(x) gave {fmt(mine['y'])}, expected x @ weight.T + bias = {fmt(ref['y'])}")
    for name in ("x_grad", "w_grad", "b_grad"):
        if mine[name] is None or not close(mine[name], ref[name]):
            return Verdict(False, f"after backward through Linear, {name.replace('_grad', '')}.grad = "
                                  f"{fmt(mine[name])}, expected {fmt(ref[name])}: build forward from tensor "
                                  "operations (@, .T, +) so that autograd records it")
    without = mine["without_bias"]
    if "error" in without:
        return Verdict(False, f"Linear(5, 3, bias=False)(x) raised {without['error']}: its bias is None, so "
                              "forward must add nothing (y = x @ weight.T, plus the bias only when it is not None)")
    if not close(without["y"], ref["without_bias"]["y"]):
        return Verdict(False, f"Linear(5, 3, bias=False)(x) gave {fmt(without['y'])}, expected x @ weight.T = "
                              f"{fmt(ref['without_bias']['y'])}")
    return Verdict(True)


def probe_linear_init(ns: dict, rng: np.random.Generator) -> dict:
    layer = ns["Linear"](400, 100)
    w, b = _values(layer.weight), _values(layer.bias)
    return {"w_max": float(np.abs(w).max()), "w_std": float(w.std()), "w_mean": float(w.mean()),
            "b_max": float(np.abs(b).max()), "b_std": float(b.std()), "dtype": str(layer.weight.dtype)}


def judge_linear_init(mine: dict, ref: dict) -> Verdict:
    bound = 1 / math.sqrt(400)  # PyTorch: U(-1/sqrt(in_features), 1/sqrt(in_features)) for weight and bias
    uniform_std = bound / math.sqrt(3)
    w_max, w_std = mine["w_max"], mine["w_std"]
    if w_std == 0:
        return Verdict(False, "Linear(400, 100).weight is constant: every output unit would compute the same thing "
                              "and get the same gradient, forever. Draw it at random")
    if abs(w_max - 1 / math.sqrt(100)) < 0.01 * bound:
        return Verdict(False, f"Linear(400, 100).weight lies in ±{w_max:.4f} = ±1/sqrt(100): you used out_features. "
                              f"The bound is 1/sqrt(in_features) = {bound:.4f}: each output sums in_features "
                              "terms, and that is the count that makes the sum grow")
    if w_max > bound * 1.0001:
        if abs(w_std - bound) < 0.1 * bound:
            return Verdict(False, f"Linear(400, 100).weight has std {w_std:.4f} and reaches {w_max:.4f}: a normal "
                                  f"distribution. PyTorch draws uniformly in ±1/sqrt(in_features) = ±{bound:.4f}")
        return Verdict(False, f"Linear(400, 100).weight reaches {w_max:.4f}, beyond PyTorch's bound "
                              f"1/sqrt(in_features) = {bound:.4f}")
    if w_max < 0.9 * bound or abs(w_std - uniform_std) > 0.1 * uniform_std or abs(mine["w_mean"]) > 0.05 * bound:
        return Verdict(False, f"Linear(400, 100).weight has max |w| {w_max:.4f}, std {w_std:.4f} and mean "
                              f"{mine['w_mean']:.4f}; uniform in ±{bound:.4f} gives max ≈ {bound:.4f}, std "
                              f"{uniform_std:.4f}, mean 0. Use (2 * rand(...) - 1) * bound")
    if mine["b_max"] == 0:
        return Verdict(False, f"Linear(400, 100).bias is all zeros: PyTorch draws the bias uniformly in the same "
                              f"range as the weight, ±1/sqrt(in_features) = ±{bound:.4f}")
    if mine["b_max"] > bound * 1.0001 or mine["b_max"] < 0.5 * bound:
        return Verdict(False, f"Linear(400, 100).bias reaches {mine['b_max']:.4f}; PyTorch draws it uniformly in "
                              f"±1/sqrt(in_features) = ±{bound:.4f}")
    return Verdict(True)


# -- MLP --------------------------------------------------------------------------------------
SIZES = [6, 5, 4, 3]


def probe_mlp(ns: dict, rng: np.random.Generator) -> dict:
    model = ns["MLP"](SIZES)
    params = list(model.parameters())
    shapes = [list(p.shape) for p in params]
    expected = [s for a, b in zip(SIZES[:-1], SIZES[1:]) for s in ([b, a], [b])]
    x = minigrad.tensor(rng.standard_normal((7, SIZES[0])))
    values = [rng.standard_normal(s) for s in expected]
    if shapes != expected:
        return {"shapes": shapes, "y": None}
    for p, v in zip(params, values):
        with minigrad.no_grad():
            p.copy_(minigrad.tensor(v))
    y = model(x.to(params[0].dtype))
    return {"shapes": shapes, "y": y.detach(), "module": isinstance(model, nn.Module)}


def judge_mlp(mine: dict, ref: dict) -> Verdict:
    got, want = mine["shapes"], ref["shapes"]
    if not got:
        return Verdict(False, f"MLP({SIZES}).parameters() is empty: layers kept in a plain Python list are invisible "
                              "to Module. Use nn.ModuleList([...]), or assign each layer to an attribute")
    missing = [k for k in range(len(want)) if want[:k] + want[k + 1:] == got]
    if missing:
        k = missing[0]
        return Verdict(False, f"MLP({SIZES}).parameters() lacks the {'weight' if k % 2 == 0 else 'bias'} of layer "
                              f"{k // 2 + 1} (shape {want[k]}): it is not a Parameter, so no optimizer would ever "
                              "train it. Build every layer with your Linear, whose tensors are nn.Parameter")
    if got != want:
        return Verdict(False, f"MLP({SIZES}).parameters() has shapes {got}, expected {want}: one Linear(a, b) per "
                              "pair of consecutive sizes, each with its weight then its bias, in order")
    y, expected = np.asarray(mine["y"]), np.asarray(ref["y"])
    if close(y, expected, rtol=1e-3, atol=1e-4):
        return Verdict(True)
    if close(y, np.maximum(expected, 0), rtol=1e-3, atol=1e-4):
        return Verdict(False, "MLP's output is never negative: you apply ReLU after the last layer too. The last "
                              "layer's outputs are logits, which cross_entropy needs unclamped; ReLU goes between layers")
    return Verdict(False, f"MLP({SIZES})(x) gave {fmt(mine['y'])}, expected {fmt(ref['y'])}: Linear, ReLU, Linear, "
                          "ReLU, Linear")


# -- optimizers: trajectories, and the mistakes replayed in NumPy ----------------------------
SGD_CONFIGS = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "dampening": 0.5},
    {"lr": 0.05, "momentum": 0.8, "nesterov": True},
    {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.05},
    {"lr": 0.1, "weight_decay": 0.1},
]
ADAM_CONFIGS = [
    {"lr": 0.01},
    {"lr": 0.05, "betas": (0.8, 0.9)},
    {"lr": 0.01, "eps": 0.1},
    {"lr": 0.01, "weight_decay": 0.1},
]


def _random_sgd_config(rng: np.random.Generator) -> dict:
    config = {"lr": round(float(rng.uniform(0.01, 0.2)), 3), "momentum": round(float(rng.uniform(0.5, 0.95)), 2)}
    if rng.random() < 0.5:
        config["nesterov"] = True
    else:
        config["dampening"] = round(float(rng.uniform(0.1, 0.6)), 2)
    if rng.random() < 0.5:
        config["weight_decay"] = round(float(rng.uniform(0.01, 0.2)), 3)
    return config


def _random_adam_config(rng: np.random.Generator) -> dict:
    config = {"lr": round(float(rng.uniform(0.005, 0.1)), 3),
              "betas": (round(float(rng.uniform(0.6, 0.95)), 2), round(float(rng.uniform(0.8, 0.999)), 3))}
    if rng.random() < 0.5:
        config["weight_decay"] = round(float(rng.uniform(0.01, 0.2)), 3)
    return config


def _trajectory(optimizer_class, config: dict, rng: np.random.Generator) -> dict:
    rows, cols = (int(n) for n in rng.integers(1, 4, 2))
    p0 = [rng.standard_normal(int(rng.integers(2, 6))), rng.standard_normal((rows, cols + 1))]
    grads = [[rng.standard_normal(p.shape) for p in p0] for _ in range(STEPS)]
    params = [_param(p) for p in p0]
    optimizer = optimizer_class(params, **config)
    path = []
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = minigrad.tensor(g)
        optimizer.step()
        path.append([_values(p) for p in params])
    return {"config": config, "p0": p0, "grads": grads, "path": path}


def _sgd_numpy(p0, grads, config, mistake=None) -> list:
    lr, m = config["lr"], config.get("momentum", 0)
    damp, wd, nesterov = config.get("dampening", 0), config.get("weight_decay", 0), config.get("nesterov", False)
    params, bufs, path = [np.array(p, dtype=float) for p in p0], [None] * len(p0), []
    for step_grads in grads:
        for i, g in enumerate(step_grads):
            p, g = params[i], np.array(g, dtype=float)
            if wd and mistake != "decay_after_momentum":
                g = g + wd * p
            if m:
                if bufs[i] is None or mistake == "buffer_not_kept":
                    bufs[i] = (1 - damp) * g if mistake == "dampened_first_step" else g.copy()
                else:
                    bufs[i] = m * bufs[i] + (1 - damp) * g
                g = g + m * bufs[i] if nesterov else bufs[i]
            if wd and mistake == "decay_after_momentum":
                g = g + wd * p
            params[i] = p - lr * g
        path.append([p.copy() for p in params])
    return path


def _adam_numpy(p0, grads, config, mistake=None) -> list:
    lr, (b1, b2) = config["lr"], config.get("betas", (0.9, 0.999))
    eps, wd = config.get("eps", 1e-8), config.get("weight_decay", 0)
    params = [np.array(p, dtype=float) for p in p0]
    ms, vs, path = [np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params], []
    for t, step_grads in enumerate(grads, start=1):
        for i, g in enumerate(step_grads):
            p, g = params[i], np.array(g, dtype=float)
            if wd and mistake != "decoupled_decay":
                g = g + wd * p
            ms[i] = b1 * ms[i] + (1 - b1) * g
            vs[i] = b2 * vs[i] + (1 - b2) * g * g
            if mistake == "no_bias_correction":
                m_hat, v_hat = ms[i], vs[i]
            else:
                k = t + 1 if mistake == "bias_correction_t_plus_1" else t
                m_hat, v_hat = ms[i] / (1 - b1**k), vs[i] / (1 - b2**k)
            step = m_hat / (np.sqrt(v_hat + eps) if mistake == "eps_inside_sqrt" else np.sqrt(v_hat) + eps)
            if wd and mistake == "decoupled_decay":
                step = step + wd * p
            params[i] = p - lr * step
        path.append([p.copy() for p in params])
    return path


def _paths_close(a, b) -> bool:
    return all(close(x, y, rtol=1e-6, atol=1e-9) for step_a, step_b in zip(a, b) for x, y in zip(step_a, step_b))


def _first_difference(mine_path, ref_path) -> tuple[int, int]:
    for step, (a, b) in enumerate(zip(mine_path, ref_path)):
        for i, (x, y) in enumerate(zip(a, b)):
            if not close(x, y, rtol=1e-6, atol=1e-9):
                return step, i
    return -1, -1


def _config_text(config: dict) -> str:
    return ", ".join(f"{k}={tuple(v) if isinstance(v, list) else v}" for k, v in config.items())


MISTAKES_SGD = {
    "buffer_not_kept": "the momentum buffer starts afresh at every step, so momentum has no effect: keep each "
                       "parameter's buffer between steps (in a dict keyed by the parameter) and update it: "
                       "buf = momentum * buf + (1 - dampening) * g",
    "decay_after_momentum": "weight decay is added after momentum: PyTorch adds weight_decay * p to the gradient "
                            "first, and the momentum buffer then averages the decayed gradient",
    "dampened_first_step": "the first step's buffer is (1 - dampening) * g: PyTorch starts the buffer at g itself "
                           "and applies dampening only from the second step on",
}
MISTAKES_ADAM = {
    "no_bias_correction": "m and v are used without bias correction: they start at 0, so their early averages are "
                          "too small (by the factors 1 - beta1**t and 1 - beta2**t). Divide by them: "
                          "m_hat = m / (1 - beta1**t), v_hat = v / (1 - beta2**t), with t the step count from 1",
    "bias_correction_t_plus_1": "your Adam's bias correction uses step t+1: the first step must divide m by "
                                "1 - beta1**1 and v by 1 - beta2**1, with t counted from 1 (increment t before "
                                "using it, once per step)",
    "eps_inside_sqrt": "eps goes inside the square root: PyTorch computes m_hat / (sqrt(v_hat) + eps)",
    "decoupled_decay": "weight decay is decoupled from the gradient (that is AdamW): Adam adds weight_decay * p to "
                       "the gradient before updating m and v",
}


def _judge_trajectories(name: str, mine: list, ref: list, replay, mistakes: dict) -> Verdict:
    for m, r in zip(mine, ref):
        if _paths_close(m["path"], r["path"]):
            continue
        config = _config_text(r["config"])
        step, i = _first_difference(m["path"], r["path"])
        if all(close(x, y) for x, y in zip(m["path"][-1], r["p0"])):
            return Verdict(False, f"{name}({config}) never changed the parameters: update them in place "
                                  "(p -= lr * d, with d the direction your rule computes, inside `with minigrad.no_grad():`), "
                                  "not by making new tensors")
        for mistake, advice in mistakes.items():
            if _paths_close(m["path"], replay(r["p0"], r["grads"], r["config"], mistake)):
                return Verdict(False, f"{name}({config}): after {step + 1} step(s), parameter {i} is "
                                      f"{fmt(m['path'][step][i])}, expected {fmt(r['path'][step][i])}. "
                                      f"That is what happens when {advice}")
        if not np.all(np.isfinite(np.asarray(m["path"][step][i], dtype=np.float64))):
            return Verdict(False, f"{name}({config}): after {step + 1} step(s), parameter {i} is "
                                  f"{fmt(m['path'][step][i])}: a division by zero or a square root of a negative "
                                  "number (a step count t that starts at 0 makes 1 - beta**t zero)")
        return Verdict(False, f"{name}({config}): after {step + 1} step(s) on fixed gradients, parameter {i} is "
                              f"{fmt(m['path'][step][i])}, expected {fmt(r['path'][step][i])} (PyTorch's rule)")
    return Verdict(True)


def probe_sgd(ns: dict, rng: np.random.Generator) -> list:
    return [_trajectory(ns["SGD"], config, rng) for config in SGD_CONFIGS + [_random_sgd_config(rng)]]


def judge_sgd(mine: list, ref: list) -> Verdict:
    return _judge_trajectories("SGD", mine, ref, _sgd_numpy, MISTAKES_SGD)


def probe_adam(ns: dict, rng: np.random.Generator) -> list:
    return [_trajectory(ns["Adam"], config, rng) for config in ADAM_CONFIGS + [_random_adam_config(rng)]]


def judge_adam(mine: list, ref: list) -> Verdict:
    return _judge_trajectories("Adam", mine, ref, _adam_numpy, MISTAKES_ADAM)


def probe_zero_grad(ns: dict, rng: np.random.Generator) -> dict:
    a, b = _param(rng.standard_normal(3)), _param(rng.standard_normal(2))
    try:
        ns["SGD"]([a, b], lr=0.1).zero_grad()  # before any backward: every grad is None
    except (AttributeError, TypeError) as e:
        return {"fresh_error": clip(f"{type(e).__name__}: {e}", 300)}
    c = minigrad.tensor(rng.standard_normal(3))
    optimizer = ns["SGD"]([a, b], lr=0.1, momentum=0.9)
    ((a * a).sum() + (b * 3).sum()).backward()
    optimizer.zero_grad()
    cleared = [p.grad is None or not np.any(_values(p.grad)) for p in (a, b)]
    (a * c).sum().backward()  # b is not used: its grad stays None (or zero)
    a_grad = _values(a.grad)
    b_before = _values(b)
    try:
        optimizer.step()
    except (AttributeError, TypeError) as e:
        return {"cleared": cleared, "a_grad": a_grad, "step_error": clip(f"{type(e).__name__}: {e}", 300)}
    return {"cleared": cleared, "a_grad": a_grad, "step_error": None, "a": _values(a), "b_moved": bool(
        np.any(_values(b) != b_before))}


def judge_zero_grad(mine: dict, ref: dict) -> Verdict:
    if "fresh_error" in mine:
        return Verdict(False, f"zero_grad() before any backward raised {mine['fresh_error']}: a parameter has no "
                              "gradient yet (grad is None) before the first backward, and one the loss does not use "
                              "never gets one, so p.grad.zero_() fails. Set p.grad = None, as PyTorch does")
    if not all(mine["cleared"]):
        return Verdict(False, "after optimizer.zero_grad() a parameter still has a nonzero gradient: set every "
                              "parameter's grad to None (PyTorch's default), so the next backward starts afresh")
    if not close(mine["a_grad"], ref["a_grad"]):
        return Verdict(False, f"after zero_grad() and a new backward, a.grad = {fmt(mine['a_grad'])}, expected only "
                              f"the new gradient {fmt(ref['a_grad'])}")
    if mine["step_error"]:
        return Verdict(False, f"step() raised {mine['step_error']} when one parameter had no gradient (grad None, "
                              "because the loss did not use it): skip parameters whose grad is None, as PyTorch does")
    if mine["b_moved"]:
        return Verdict(False, "step() moved a parameter that had no gradient: skip parameters whose grad is None")
    if not close(mine["a"], ref["a"]):
        return Verdict(False, f"after zero_grad, backward and step, a = {fmt(mine['a'])}, expected {fmt(ref['a'])}")
    return Verdict(True)


# -- the training loop ------------------------------------------------------------------------
class RecordingLoader:
    """A loader's batches, remembering the last one handed out."""

    def __init__(self, loader) -> None:
        self.loader, self.last = loader, None

    def __iter__(self):
        for batch in self.loader:
            self.last = batch
            yield batch

    def __len__(self) -> int:
        return len(self.loader)


class RecordingSGD:
    """Plain SGD that records, at each step, every parameter's gradient (or None) and the loss of
    the current batch (computed here, so the judge need not trust the learner's number)."""

    def __init__(self, model, loader: RecordingLoader, lr: float) -> None:
        self.model, self.loader, self.lr = model, loader, lr
        self.params = list(model.parameters())
        self.seen, self.losses, self.sizes = [], [], []
        self.erased = []  # per step: whether a zero_grad since the last step found gradients to erase
        self._erased = False

    def zero_grad(self) -> None:
        self._erased = self._erased or any(p.grad is not None for p in self.params)
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        self.erased.append(self._erased)
        self._erased = False
        self.seen.append([None if p.grad is None else _values(p.grad) for p in self.params])
        with minigrad.no_grad():
            if self.loader.last is not None:
                x, y = self.loader.last
                self.losses.append(F.cross_entropy(self.model(x), y).item())
                self.sizes.append(len(x))
            for p in self.params:
                if p.grad is not None:
                    p -= self.lr * p.grad


def probe_train_epoch(ns: dict, rng: np.random.Generator) -> dict:
    minigrad.manual_seed(int(rng.integers(1 << 30)))
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    X = rng.standard_normal((20, 4)).astype(np.float32)
    y = rng.integers(0, 3, 20)
    loader = RecordingLoader(DataLoader(TensorDataset(X, y), batch_size=8))
    optimizer = RecordingSGD(model, loader, lr=0.1)
    result = ns["train_epoch"](model, optimizer, loader)
    kind = ("none" if result is None else "float" if isinstance(result, (int, float, np.floating, np.integer))
            and not isinstance(result, bool) else "graph" if isinstance(result, minigrad.Tensor)
            and result.grad_fn is not None else "tensor" if isinstance(result, minigrad.Tensor)
            else type(result).__name__)
    try:
        result = None if result is None else float(result)
    except (TypeError, ValueError, RuntimeError):
        result = None
    return {"result": result, "kind": kind, "seen": optimizer.seen, "erased": optimizer.erased,
            "losses": optimizer.losses, "sizes": optimizer.sizes, "batches": len(loader)}


def judge_train_epoch(mine: dict, ref: dict) -> Verdict:
    seen, want = mine["seen"], ref["seen"]
    if len(seen) != len(want):
        return Verdict(False, f"train_epoch called optimizer.step() {len(seen)} times on a loader of {ref['batches']} "
                              "batches: once per batch")
    for k, (got, expected) in enumerate(zip(seen, want)):
        if any(g is None for g in got):
            if mine["erased"][k]:
                return Verdict(False, f"at step {k + 1} the parameters had no gradient when step() ran, because "
                                      "optimizer.zero_grad() ran after loss.backward() and erased what it had just "
                                      "computed: zero_grad goes before the backward (zero_grad, loss, backward, step)")
            return Verdict(False, f"at step {k + 1} a parameter had no gradient when step() ran: call loss.backward() "
                                  "before optimizer.step()")
        if all(close(g, e) for g, e in zip(got, expected)):
            continue
        if k > 0:
            # Without zero_grad, .grad at step k is the previous step's .grad plus this batch's gradient.
            # After the first step the parameters drift from the reference's, so test the increment
            # (exact at step 2, where both runs made the same first step) as well as the plain sum.
            summed = [np.sum([np.asarray(seen_j[i]) for seen_j in want[:k + 1]], axis=0) for i in range(len(got))]
            fresh = [np.asarray(got[i]) - np.asarray(seen[k - 1][i]) for i in range(len(got))]
            if all(close(f, e, rtol=1e-3, atol=1e-5) for f, e in zip(fresh, expected)) or all(
                    close(g, s, rtol=1e-3, atol=1e-5) for g, s in zip(got, summed)):
                return Verdict(False, f"at step {k + 1} each gradient is the sum of the gradients of the last {k + 1} "
                                      "batches: backward adds into .grad, it never overwrites. Call "
                                      "optimizer.zero_grad() before each backward")
        return Verdict(False, f"at step {k + 1} the first weight's gradient is {fmt(got[0])}, expected "
                              f"{fmt(expected[0])}: zero_grad, loss = F.cross_entropy(model(x), y), backward, step")
    if mine["kind"] == "graph":
        return Verdict(False, "train_epoch returned a tensor that requires grad: adding up the loss tensors chains "
                              "every batch's graph into one, and it all stays in memory as long as the result "
                              "lives. Add up loss.item() (a Python float) instead")
    if mine["kind"] == "none" or mine["result"] is None:
        return Verdict(False, "train_epoch returned None: return the mean of the batch losses, as a float")
    if mine["kind"] != "float":
        return Verdict(False, f"train_epoch returned a {mine['kind']}, not a float: add up loss.item() (a Python "
                              "float) and return their mean")
    losses, sizes = np.asarray(ref["losses"]), np.asarray(ref["sizes"])
    mean, weighted = float(losses.mean()), float((losses * sizes).sum() / sizes.sum())
    if not close(mine["result"], mean, rtol=1e-4) and not close(mine["result"], weighted, rtol=1e-4):
        return Verdict(False, f"train_epoch returned {mine['result']:.5f}, but the batch losses were "
                              f"{fmt(ref['losses'])}: return their mean, {mean:.5f}")
    return Verdict(True)


def probe_training(ns: dict, rng: np.random.Generator) -> dict:
    minigrad.manual_seed(int(rng.integers(1 << 30)))
    X, y = load_digits()
    X_train, X_test, y_train, y_test = train_test_split(X, y, seed=0)
    model = ns["MLP"]([64, 64, 10])
    optimizer = ns["Adam"](model.parameters(), lr=0.01)
    loader = DataLoader(TensorDataset(X_train, y_train), batch_size=64, shuffle=True,
                        generator=np.random.default_rng(int(rng.integers(1 << 30))))
    losses = [float(ns["train_epoch"](model, optimizer, loader)) for _ in range(EPOCHS)]
    with minigrad.no_grad():
        accuracy = (model(minigrad.tensor(X_test)).argmax(1) == minigrad.tensor(y_test)).float().mean().item()
    return {"losses": losses, "accuracy": accuracy}


def judge_training(mine: dict, ref: dict) -> Verdict:
    if mine["accuracy"] < TARGET_ACCURACY:
        losses = ", ".join(f"{v:.3f}" for v in mine["losses"])
        return Verdict(False, f"MLP([64, 64, 10]) with your Adam(lr=0.01), {EPOCHS} epochs of batches of 64: test "
                              f"accuracy {mine['accuracy']:.1%}, expected at least {TARGET_ACCURACY:.0%} (minigrad's "
                              f"own classes reach {ref['accuracy']:.1%}). Epoch losses: {losses}")
    return Verdict(True)


# -- reference ----------------------------------------------------------------------------------
def reference() -> dict:
    class MLP(nn.Module):
        def __init__(self, sizes):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])

        def forward(self, x):
            for i, layer in enumerate(self.layers):
                x = layer(x)
                if i < len(self.layers) - 1:
                    x = x.relu()
            return x

    def train_epoch(model, optimizer, loader):
        total, count = 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total, count = total + loss.item(), count + 1
        return total / count

    return {"Linear": nn.Linear, "MLP": MLP, "SGD": minigrad.optim.SGD, "Adam": minigrad.optim.Adam,
            "train_epoch": train_epoch}


DIAGNOSES = {  # the phrase the feedback says for each known mistake (tests/mutants/s10_nn_and_optim.py)
    "momentum_buffer_not_kept": "momentum buffer starts afresh at every step",
    "weight_decay_after_momentum": "weight decay is added after momentum",
    "update_not_in_place": "never changed the parameters",
    "step_does_not_skip_missing_grads": "when one parameter had no gradient (grad None",
    "adam_without_bias_correction": "without bias correction",
    "adam_eps_inside_sqrt": "eps goes inside the square root",
    "zero_grad_not_called": "Call optimizer.zero_grad() before each backward",
    "linear_weight_transposed": "PyTorch stores weight as (out_features, in_features)",
    "linear_init_with_the_wrong_fan": "you used out_features",
    "linear_bias_zeros": "bias is all zeros",
    "mlp_layers_in_a_plain_list": "plain Python list",
    "relu_after_the_last_layer": "ReLU after the last layer",
    "linear_adds_a_none_bias": "its bias is None, so forward must add nothing",
    "mlp_first_weight_is_not_a_parameter": "it is not a Parameter, so no optimizer would ever train it",
    "zero_grad_zeroes_in_place": "zero_grad() before any backward raised",
    "train_epoch_returns_the_loss_tensor": "returned a tensor that requires grad",
    "zero_grad_between_backward_and_step": "optimizer.zero_grad() ran after loss.backward() and erased",
    "adam_bias_correction_one_step_ahead": "your Adam's bias correction uses step t+1",
}

STAGE = Stage(
    number="10",
    name="nn_and_optim",
    title="Modules, optimizers and a training loop",
    parts={"linear": ("Linear",), "mlp": ("MLP",), "sgd": ("SGD",), "adam": ("Adam",), "train": ("train_epoch",)},
    checks=(
        Check("linear_parameters", 1, "Linear registers weight (out, in) and bias as Parameters",
              probe_linear_parameters, judge_linear_parameters, part="linear"),
        Check("linear_forward", 1, "Linear computes x @ weight.T + bias, and autograd follows it",
              probe_linear_forward, judge_linear_forward, needs=("linear_parameters",), part="linear"),
        Check("linear_init", 1, "Linear's initial values are uniform in ±1/sqrt(in_features)", probe_linear_init,
              judge_linear_init, needs=("linear_parameters",), part="linear"),
        Check("mlp", 1, "MLP registers its layers in order, with ReLU between them", probe_mlp, judge_mlp,
              needs=("linear_forward",), part="mlp"),
        Check("sgd", 2, "SGD's trajectories: plain, momentum, dampening, Nesterov, weight decay", probe_sgd,
              judge_sgd, part="sgd"),
        Check("zero_grad", 1, "zero_grad clears gradients; step skips parameters without one", probe_zero_grad,
              judge_zero_grad, part="sgd"),
        Check("adam", 2, "Adam's trajectories: bias correction, betas, eps, weight decay", probe_adam, judge_adam,
              part="adam"),
        Check("train_epoch", 1, "train_epoch: zero_grad, loss, backward, step for every batch", probe_train_epoch,
              judge_train_epoch, part="train"),
        Check("training", 2, f"an MLP trained with your classes reaches {TARGET_ACCURACY:.0%} on the digits",
              probe_training, judge_training,
              needs=("mlp", "linear_init", "adam", "zero_grad", "train_epoch"), part="train"),
    ),
    reference=reference,
    forbidden={  # methods and functions, not classes: the sandbox wraps each name in a function
        "linear": ("minigrad.nn.Linear.forward", "minigrad.nn.functional.linear"),
        "mlp": ("minigrad.nn.Linear.forward",),
        "sgd": ("minigrad.optim.SGD._update",),
        "adam": ("minigrad.optim.Adam._update",),
    },
)
