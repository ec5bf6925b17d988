"""Stage 12: attention, the capstone. A small GPT whose every new gradient is the learner's.

The learner writes four Functions whose forward and backward are NumPy of their own (one
node each, as minigrad's and PyTorch's fused ops are): ``GELUFunction`` (the tanh
approximation, as GPT-2 and nanoGPT), ``LayerNormFunction`` (over the last axis),
``CausalAttentionFunction`` (scaled dot-product attention with a causal mask, on
``(..., T, D)`` queries, keys and values) and ``CrossEntropyFunction`` (mean over rows of
``(N, V)`` logits, integer targets). Then the Modules ``LayerNorm`` and
``CausalSelfAttention`` around them, and ``Block`` and ``GPT`` assembled from them, trained
on Shakespeare (``minigrad.data.load_shakespeare``).

Each Function is checked three ways on float64 inputs: against minigrad's own operation
(``F.gelu(approximate="tanh")``, ``F.layer_norm``, ``F.scaled_dot_product_attention(
is_causal=True)``, ``F.cross_entropy``, by autograd), against central finite differences of
the learner's own forward, and against PyTorch where it is installed. A second check per
Function measures what its graph node keeps for backward (saved tensors and array attributes
of ctx, each array counted once) against a budget the worksheet states, and changes the input
in place after forward: backward must then raise the version error or give the gradient of
the original input, never a silently wrong one.

The reference (``reference()``) is the solution's code, written here; the checks compare the
learner's numbers with minigrad's own operations, not with it.
"""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad import nn
from minigrad.autograd import Function, once_differentiable
from minigrad.autograd import grad as autograd_grad
from minigrad.course.checks import Check, Stage, Verdict, close, fmt
from minigrad.nn import functional as F

F64 = minigrad.float64
GELU_C = math.sqrt(2 / math.pi)
EPS = 1e-5

# the training check: a one-block GPT on Shakespeare, a fixed number of Adam steps
TRAIN = {"block_size": 32, "n_embd": 32, "n_head": 2, "n_layer": 1}
TRAIN_BATCH, TRAIN_STEPS, TRAIN_LR = 16, 150, 1e-2
TARGET_LOSS = 2.7  # nats per character, mean of the last 25 steps; see judge_training

# minigrad's own nodes that must not appear in the learner's GPT: every gradient of the new
# operations comes from the learner's backward
NATIVE_NODES = ("NativeLayerNormBackward0", "GeluBackward0", "SoftmaxBackward0", "LogSoftmaxBackward0",
                "NllLossBackward0", "TanhBackward0", "ExpBackward0", "SqrtBackward0", "RsqrtBackward0",
                "VarBackward0", "VarMeanBackward0", "MaskedFillBackward0", "AmaxBackward0", "MaxBackward0",
                "LogsumexpBackward0")


# -- helpers for probes ---------------------------------------------------------------------------
def _leaf(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64, requires_grad=True)


def _const(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64)


def _apply(ns: dict, name: str):
    fn = ns[name]
    return getattr(fn, "apply", fn)


def _grads(outputs, inputs, g) -> list:
    return list(autograd_grad(outputs, inputs, g, allow_unused=True))


def _numeric(f, arrays: list, eps: float = 1e-6) -> list:
    """Central differences of the scalar ``f(*arrays)`` with respect to each array."""
    result = []
    for k, a in enumerate(arrays):
        grad = np.zeros_like(a)
        for i in range(a.size):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[k].flat[i] += eps
            minus[k].flat[i] -= eps
            grad.flat[i] = (f(*plus) - f(*minus)) / (2 * eps)
        result.append(grad)
    return result


def _torch_grads(build, arrays: list, g: np.ndarray | None):
    """PyTorch's output and gradients for ``build(torch, *tensors)``, or None without torch."""
    try:
        import torch
    except (ImportError, OSError):  # not installed, or installed without its libraries: no torch column
        return None
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    y = build(torch, *tensors)
    weight = torch.ones((), dtype=torch.float64) if g is None else torch.tensor(g, dtype=torch.float64)
    (y * weight).sum().backward()
    return {"y": y.detach().numpy(), "grads": [t.grad.numpy() for t in tensors]}


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _kept_arrays(node) -> list:
    """Every array a node keeps for backward: its saved tensors, and arrays or tensors stored as
    attributes of ctx (in tuples and lists too), each underlying buffer once."""
    found = []
    try:
        found += [t for t in node.saved_tensors if t is not None]
    except RuntimeError:
        pass
    stack = list(getattr(node, "__dict__", {}).values())
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, (np.ndarray, minigrad.Tensor)):
            found.append(value)
    arrays, seen = [], set()
    for value in found:
        array = value.detach().numpy() if isinstance(value, minigrad.Tensor) else value
        root = _root(array)
        if id(root) not in seen:
            seen.add(id(root))
            arrays.append(root)
    return arrays


def _kept_bytes(node) -> int:
    return int(sum(a.nbytes for a in _kept_arrays(node)))


def _inplace_probe(apply, make_inputs, changed: int, g) -> dict:
    """Change input ``changed`` in place after forward, then run backward: did it raise, and
    else which gradients came out? The gradients of the unchanged computation are ``reference``."""
    leaves = make_inputs()
    y = apply(*leaves)
    reference = _grads(y, [t for t in leaves if isinstance(t, minigrad.Tensor) and t.requires_grad], g)
    leaves = make_inputs()
    used = list(leaves)
    used[changed] = leaves[changed] * 1.0  # not a leaf: a leaf that requires grad cannot change in place
    y = apply(*used)
    with minigrad.no_grad():
        used[changed].add_(0.75)
    try:
        grads = _grads(y, [t for t in leaves if isinstance(t, minigrad.Tensor) and t.requires_grad], g)
    except RuntimeError as e:
        return {"raised": True, "message": str(e)[:200]}
    return {"raised": False, "grads": grads, "reference": reference}


def _inplace_problem(name: str, what: str, mine: dict) -> str | None:
    if mine["raised"]:
        return None
    if all(got is not None and close(got, want) for got, want in zip(mine["grads"], mine["reference"])):
        return None
    return (f"after y = {name}.apply(...), {what} was changed in place (add_(0.75)) before backward, and backward "
            "returned the gradient of the changed values without a word: something it reads shares memory with "
            f"{what} but escaped the version check. Keep what backward reads with ctx.save_for_backward (minigrad "
            "then raises when a saved tensor was changed), or keep a new array computed in forward (not a view of "
            f"{what}'s array)")


def _budget_problem(name: str, kept: int, budget: int, allowed: str, why: str) -> str | None:
    if kept <= budget:
        return None
    return (f"{name}'s node keeps {kept} bytes for backward (saved tensors and arrays on ctx, each counted once); "
            f"the budget is {budget} bytes: {allowed}. {why}")


# -- GELU -------------------------------------------------------------------------------------------
def gelu_tanh(a: np.ndarray) -> np.ndarray:
    return 0.5 * a * (1 + np.tanh(GELU_C * (a + 0.044715 * a * a * a)))


def probe_gelu(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "GELUFunction")
    x0 = np.concatenate([rng.uniform(-4, 4, 9), [-12.0, 0.0, 9.0]]).reshape(3, 4)
    g0 = rng.standard_normal(x0.shape)
    x = _leaf(x0)
    y = apply(x)
    (gx,) = _grads(y, [x], _const(g0))
    xm = _leaf(x0)
    ym = F.gelu(xm, approximate="tanh")
    (gm,) = _grads(ym, [xm], _const(g0))

    def value(a):
        with minigrad.no_grad():
            return float((apply(_const(a)).detach().numpy() * g0).sum())

    (numeric,) = _numeric(value, [x0])
    torch = _torch_grads(lambda t, a: t.nn.functional.gelu(a, approximate="tanh"), [x0], g0)
    return {"x": x0, "g": g0, "y": y.detach(), "grad": gx, "own": {"y": ym.detach(), "grad": gm},
            "numeric": numeric, "torch": torch, "dtype": str(y.dtype),
            "float32": str(apply(minigrad.tensor(x0.astype(np.float32))).dtype)}


def judge_gelu(mine: dict, ref: dict) -> Verdict:
    x, g = np.asarray(ref["x"]), np.asarray(ref["g"])
    want_y, want_grad = ref["own"]["y"], ref["own"]["grad"]
    where = f"at x = {fmt(ref['x'])}"
    if not close(mine["y"], want_y):
        erf = np.vectorize(math.erf)
        if close(mine["y"], 0.5 * x * (1 + erf(x / math.sqrt(2)))):
            return Verdict(False, f"GELUFunction {where} gave the exact GELU, x·Φ(x) with erf: the worksheet asks for "
                                  "GPT-2's tanh approximation, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). They differ "
                                  "by up to 5e-4, enough for a model trained with one to drift from the other")
        return Verdict(False, f"GELUFunction {where} gave {fmt(mine['y'])}, expected {fmt(want_y)} "
                              "(0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))))")
    if mine["dtype"] != ref["dtype"] or mine["float32"] != ref["float32"]:
        return Verdict(False, f"GELUFunction turned float64 into {mine['dtype']} and float32 into {mine['float32']}: "
                              "keep the input's dtype (NumPy keeps it if you multiply by Python floats)")
    got = mine["grad"]
    if got is None:
        return Verdict(False, "no gradient reached x through GELUFunction: backward returns grad_output times "
                              "GELU'(x)")
    if close(got, want_grad) and close(got, mine["numeric"], rtol=1e-5) and (
            ref["torch"] is None or close(got, ref["torch"]["grads"][0])):
        return Verdict(True)
    t = np.tanh(GELU_C * (x + 0.044715 * x ** 3))
    if close(got, g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C)):
        return Verdict(False, f"GELUFunction's gradient {where} leaves out the inner derivative: u = √(2/π)·(x + "
                              "0.044715·x³) has du/dx = √(2/π)·(1 + 3·0.044715·x²), and the chain rule needs all of it")
    if close(got, g * 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x)):
        return Verdict(False, f"GELUFunction's gradient {where} has only half of the product rule: y = 0.5·x·(1 + "
                              "tanh(u)) is x times a function of x, so y' = 0.5·(1 + tanh(u)) + 0.5·x·(1 − tanh²(u))·u'")
    return Verdict(False, f"GELUFunction's gradient {where} (g: fixed random weights of the outputs) is {fmt(got)}; "
                          f"minigrad's F.gelu(approximate='tanh') gives {fmt(want_grad)}, and finite differences of "
                          f"your own forward {fmt(mine['numeric'])}")


def probe_gelu_saved(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "GELUFunction")
    x0 = rng.standard_normal((6, 8))
    x = _leaf(x0)
    node = apply(x * 1.0).grad_fn
    g = _const(rng.standard_normal((6, 8)))
    return {"kept": _kept_bytes(node), "budget": x0.nbytes,
            "inplace": _inplace_probe(apply, lambda: [_leaf(x0)], 0, g)}


def judge_gelu_saved(mine: dict, ref: dict) -> Verdict:
    problem = _budget_problem("GELUFunction", mine["kept"], mine["budget"], "one array the size of x",
                              "Backward needs x and nothing else: tanh(u) is cheap to compute again, and keeping it "
                              "too doubles the memory of every GELU in the model until backward runs")
    return Verdict(False, problem) if problem else (
        Verdict(False, _inplace_problem("GELUFunction", "x", mine["inplace"]))
        if _inplace_problem("GELUFunction", "x", mine["inplace"]) else Verdict(True))


# -- LayerNorm --------------------------------------------------------------------------------------
def probe_layer_norm(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "LayerNormFunction")
    cases = {}
    for label, shape, scale in (("3-D input (B, T, C)", (2, 3, 5), 1.0), ("rows of small variance", (4, 6), 1e-3)):
        x0 = rng.standard_normal(shape) * scale + rng.standard_normal(shape[:-1] + (1,))
        w0, b0 = rng.standard_normal(shape[-1]), rng.standard_normal(shape[-1])
        g0 = rng.standard_normal(shape)
        x, w, b = _leaf(x0), _leaf(w0), _leaf(b0)
        y = apply(x, w, b, EPS)
        try:
            grads = _grads(y, [x, w, b], _const(g0))
        except RuntimeError as e:
            cases[label] = {"error": str(e)[:300], "y": y.detach()}
            continue
        xm, wm, bm = _leaf(x0), _leaf(w0), _leaf(b0)
        ym = F.layer_norm(xm, (shape[-1],), wm, bm, EPS)
        own = _grads(ym, [xm, wm, bm], _const(g0))

        def value(xa, wa, ba):
            with minigrad.no_grad():
                return float((apply(_const(xa), _const(wa), _const(ba), EPS).detach().numpy() * g0).sum())

        numeric = _numeric(value, [x0, w0, b0]) if label.startswith("3-D") else None
        torch = _torch_grads(lambda t, a, w_, b_: t.nn.functional.layer_norm(a, (shape[-1],), w_, b_, EPS),
                             [x0, w0, b0], g0)
        cases[label] = {"x": x0, "w": w0, "b": b0, "shape": list(shape), "y": y.detach(), "grads": grads,
                        "own": {"y": ym.detach(), "grads": own}, "numeric": numeric, "torch": torch}
    return cases


def judge_layer_norm(mine: dict, ref: dict) -> Verdict:
    for label, r in ref.items():  # the values first, in every case: a wrong forward explains wrong gradients
        m = mine[label]
        where = f"with {label}, x of shape {tuple(r['shape'])}"
        x, w, b = (np.asarray(r[key]) for key in ("x", "w", "b"))
        if "y" in m and not close(m["y"], r["own"]["y"]):
            centred = x - x.mean(-1, keepdims=True)
            for xhat, why in ((centred / np.sqrt(x.var(-1, ddof=1, keepdims=True) + EPS),
                               "the unbiased variance (dividing by C − 1)"),
                              (centred / (np.sqrt(x.var(-1, keepdims=True)) + EPS), "eps outside the square root")):
                if close(m["y"], xhat * w + b):
                    return Verdict(False, f"LayerNormFunction {where} used {why}: LayerNorm (PyTorch's, and "
                                          "GPT's) divides by √(var + eps), with var the mean of (x − mean)² over the "
                                          "last axis (dividing by C)")
            return Verdict(False, f"LayerNormFunction {where} gave {fmt(m['y'])}, expected {fmt(r['own']['y'])}: "
                                  "y = (x − mean) / √(var + eps) · weight + bias, over the last axis")
    for label, r in ref.items():
        m = mine[label]
        where = f"with {label}, x of shape {tuple(r['shape'])}"
        if "error" in m:
            return Verdict(False, f"LayerNormFunction {where}: backward failed: {m['error']}. Return three gradients "
                                  "(x, weight, bias) and None for eps; weight's and bias's are shaped (C,): sum over "
                                  "every axis but the last")
        for name, got, want, numeric, torch in zip(("x", "weight", "bias"), m["grads"], r["own"]["grads"],
                                                    m["numeric"] or [None] * 3,
                                                    (r["torch"] or {"grads": [None] * 3})["grads"]):
            if got is None:
                return Verdict(False, f"LayerNormFunction {where}: no gradient reached {name}")
            if close(got, want) and (numeric is None or close(got, numeric, rtol=1e-4, atol=1e-5)) and (
                    torch is None or close(got, torch)):
                continue
            hint = ""
            if name == "x":
                hint = (": x enters y three times, directly and through the mean and the variance, so dx = rstd · "
                        "(dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)), with dx̂ = grad · weight and the means over the last "
                        "axis. Leaving out either mean term is the usual mistake")
            elif name == "weight":
                hint = ": weight[c] multiplies x̂[..., c] in every row, so its gradient sums grad · x̂ over all other axes"
            else:
                hint = ": bias[c] is added in every row, so its gradient sums grad over all other axes"
            numbers = f"got {fmt(got)}, minigrad's F.layer_norm gives {fmt(want)}"
            if numeric is not None:
                numbers += f", finite differences of your forward {fmt(numeric)}"
            return Verdict(False, f"LayerNormFunction {where}, the gradient of {name}: {numbers}{hint}")
    return Verdict(True)


def probe_layer_norm_saved(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "LayerNormFunction")
    x0, w0, b0 = rng.standard_normal((4, 5, 8)), rng.standard_normal(8), rng.standard_normal(8)
    x, w, b = _leaf(x0), _leaf(w0), _leaf(b0)
    node = apply(x * 1.0, w, b, EPS).grad_fn
    rows = x0.size // x0.shape[-1]
    g = _const(rng.standard_normal(x0.shape))
    return {"kept": _kept_bytes(node), "budget": x0.nbytes + 2 * rows * 8 + w0.nbytes + b0.nbytes,
            "inplace": _inplace_probe(apply, lambda: [_leaf(x0), _leaf(w0), _leaf(b0), EPS], 0, g)}


def judge_layer_norm_saved(mine: dict, ref: dict) -> Verdict:
    problem = _budget_problem("LayerNormFunction", mine["kept"], mine["budget"],
                              "one array the size of x, two numbers per row (the mean and 1/√(var + eps), say) "
                              "and the weight and bias",
                              "Backward needs x̂ (or x with the row statistics to make it again) and 1/√(var + eps): "
                              "keeping both x and x̂, or x − mean as well, keeps a second copy of every activation")
    if problem:
        return Verdict(False, problem)
    problem = _inplace_problem("LayerNormFunction", "x", mine["inplace"])
    return Verdict(False, problem) if problem else Verdict(True)


def probe_layer_norm_module(ns: dict, rng: np.random.Generator) -> dict:
    layer = ns["LayerNorm"](6)
    named = [[name, list(p.shape), isinstance(p, nn.Parameter)] for name, p in layer.named_parameters()]
    values = {name: p.detach().numpy().tolist() for name, p in layer.named_parameters()}
    x = minigrad.tensor(rng.standard_normal((2, 3, 6)).astype(np.float32))
    y = layer(x)
    cls = ns["LayerNormFunction"]._backward_cls
    return {"module": isinstance(layer, nn.Module), "named": named, "values": values,
            "function": y.grad_fn is not None and type(y.grad_fn) is cls, "y": y.detach(),
            "own": F.layer_norm(x, (6,), eps=EPS).detach()}


def judge_layer_norm_module(mine: dict, ref: dict) -> Verdict:
    if not mine["module"]:
        return Verdict(False, "LayerNorm(6) is not an nn.Module: subclass minigrad.nn.Module")
    if mine["named"] != [["weight", [6], True], ["bias", [6], True]]:
        return Verdict(False, f"LayerNorm(6) registers {[(n, tuple(s)) for n, s, _ in mine['named']]}, expected weight "
                              "(6,) and bias (6,), as nn.Parameters, in that order")
    if mine["values"]["weight"] != [1.0] * 6 or mine["values"]["bias"] != [0.0] * 6:
        return Verdict(False, "LayerNorm starts as the identity after normalising, as PyTorch's: weight all ones, bias "
                              f"all zeros. Yours: weight {fmt(mine['values']['weight'])}, bias {fmt(mine['values']['bias'])}")
    if not mine["function"]:
        return Verdict(False, "LayerNorm's output was not made by your LayerNormFunction: forward must return "
                              "LayerNormFunction.apply(x, self.weight, self.bias, self.eps)")
    if not close(mine["y"], mine["own"], rtol=1e-4, atol=1e-5):
        return Verdict(False, f"LayerNorm(6) gave {fmt(mine['y'])}, expected {fmt(mine['own'])} (eps = 1e-5)")
    return Verdict(True)


# -- attention --------------------------------------------------------------------------------------
def causal_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    t, d = q.shape[-2:]
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)
    s = np.where(np.tri(t, dtype=bool), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


ATTENTION_CASES = (("(B, H, T, D) = (1, 2, 4, 3)", (1, 2, 4, 3), 1.0),
                   ("(T, D) = (5, 2), without batch or head axes", (5, 2), 1.0),
                   ("large scores (q and k times 30)", (1, 1, 4, 2), 30.0))


def probe_attention(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "CausalAttentionFunction")
    cases = {}
    for label, shape, scale in ATTENTION_CASES:
        q0, k0, v0 = (rng.standard_normal(shape) * s for s in (scale, scale, 1.0))
        g0 = rng.standard_normal(shape)
        q, k, v = _leaf(q0), _leaf(k0), _leaf(v0)
        y = apply(q, k, v)
        try:
            grads = _grads(y, [q, k, v], _const(g0))
        except RuntimeError as e:
            cases[label] = {"error": str(e)[:300], "y": y.detach()}
            continue
        qm, km, vm = _leaf(q0), _leaf(k0), _leaf(v0)
        ym = F.scaled_dot_product_attention(qm, km, vm, is_causal=True)
        own = _grads(ym, [qm, km, vm], _const(g0))

        def value(qa, ka, va):
            with minigrad.no_grad():
                return float((apply(_const(qa), _const(ka), _const(va)).detach().numpy() * g0).sum())

        numeric = _numeric(value, [q0, k0, v0]) if scale == 1.0 else None
        torch = _torch_grads(lambda t, a, b, c: t.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True),
                             [q0, k0, v0], g0)
        cases[label] = {"q": q0, "k": k0, "v": v0, "g": g0, "shape": list(shape), "y": y.detach(), "grads": grads,
                        "own": {"y": ym.detach(), "grads": own}, "numeric": numeric, "torch": torch}
    return cases


def _attention_variants(q, k, v) -> dict:
    """What the common forward mistakes compute: the judge's guesses."""
    t, d = q.shape[-2:]
    s = q @ np.swapaxes(k, -1, -2)

    def softmax_rows(z, mask):
        z = np.where(mask, z, -np.inf)
        with np.errstate(invalid="ignore"):
            e = np.exp(z - z.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)

    full = np.ones((t, t), dtype=bool)
    return {
        "no mask: every position also reads the positions after it, which a language model must not see": (
            softmax_rows(s / math.sqrt(d), full) @ v),
        "no scale: the scores must be divided by √D, so that their spread (and the softmax's sharpness) does not "
        "grow with the head size": softmax_rows(s, np.tri(t, dtype=bool)) @ v,
        "scores divided by D instead of √D": softmax_rows(s / d, np.tri(t, dtype=bool)) @ v,
        "the mask also hides the diagonal: position i must read positions 0 to i, itself included (np.tri(T), or "
        "np.tril of ones, keeps the diagonal)": softmax_rows(s / math.sqrt(d), np.tri(t, k=-1, dtype=bool)) @ v,
    }


def judge_attention(mine: dict, ref: dict) -> Verdict:
    for label, r in ref.items():
        m = mine[label]
        where = f"with {label}"
        if not close(m["y"], r["own"]["y"]):
            got = np.asarray(m["y"], dtype=np.float64)
            if not np.all(np.isfinite(got)):
                if "large" in label:
                    return Verdict(False, f"CausalAttentionFunction {where} gave inf or nan: exp of a large score "
                                          "overflows. Subtract each row's maximum before exp (softmax does not change: "
                                          "the factor e^−max cancels between numerator and denominator)")
                return Verdict(False, f"CausalAttentionFunction {where} gave nan in {fmt(m['y'])}: a row of the mask "
                                      "with no visible position has softmax 0/0. Position i reads positions 0..i, "
                                      "itself included")
            for mistake, wrong in _attention_variants(np.asarray(r["q"]), np.asarray(r["k"]), np.asarray(r["v"])).items():
                if np.all(np.isfinite(wrong)) and close(got, wrong):
                    return Verdict(False, f"CausalAttentionFunction {where}: {mistake}")
            return Verdict(False, f"CausalAttentionFunction {where} gave {fmt(m['y'])}, expected "
                                  f"{fmt(r['own']['y'])}: softmax(q·kᵀ / √D, with the positions after each row's masked "
                                  "to −inf) · v")
        if "error" in m:
            return Verdict(False, f"backward through CausalAttentionFunction {where} failed: {m['error']}. Return "
                                  "three gradients, shaped like q, k and v")
        for name, got, want, numeric, torch in zip("qkv", m["grads"], r["own"]["grads"], m["numeric"] or [None] * 3,
                                                    (r["torch"] or {"grads": [None] * 3})["grads"]):
            if got is None:
                return Verdict(False, f"CausalAttentionFunction {where}: no gradient reached {name}")
            if close(got, want) and (numeric is None or close(got, numeric, rtol=1e-4, atol=1e-5)) and (
                    torch is None or close(got, torch)):
                continue
            hint = {"v": ": y = P·v, so dv = Pᵀ·grad (P: the attention weights, each row summing to 1)",
                    "q": ": with dP = grad·vᵀ, the softmax's backward is dS = P ⊙ (dP − rowsum(dP ⊙ P)), and "
                         "S = q·kᵀ/√D gives dq = dS·k/√D",
                    "k": ": with dS = P ⊙ (dP − rowsum(dP ⊙ P)), S = q·kᵀ/√D gives dk = dSᵀ·q/√D (the transpose "
                         "of dS: k's row j met every query row i in S[i, j])"}[name]
            qa, ka, va, ga = (np.asarray(r[key]) for key in ("q", "k", "v", "g"))
            d = qa.shape[-1]
            p = _weights(qa, ka)
            dp = ga @ np.swapaxes(va, -1, -2)
            if name in "qk":
                for ds, mistake in ((p * dp / math.sqrt(d), "the softmax's backward needs − rowsum(dP ⊙ P): each "
                                     "weight depends on every score of its row, through the sum that normalises it"),
                                    (p * (dp - (dp * p).sum(-1, keepdims=True)),
                                     "the 1/√D of the forward is missing in backward")):
                    wrong = ds @ ka if name == "q" else np.swapaxes(ds, -1, -2) @ qa
                    if close(got, wrong):
                        return Verdict(False, f"CausalAttentionFunction {where}, the gradient of {name}: {mistake}")
            numbers = f"got {fmt(got)}, minigrad's F.scaled_dot_product_attention gives {fmt(want)}"
            if numeric is not None:
                numbers += f", finite differences of your forward {fmt(numeric)}"
            return Verdict(False, f"CausalAttentionFunction {where}, the gradient of {name}: {numbers}{hint}")
    return Verdict(True)


def _weights(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    t, d = q.shape[-2:]
    s = np.where(np.tri(t, dtype=bool), q @ np.swapaxes(k, -1, -2) / math.sqrt(d), -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def probe_attention_saved(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "CausalAttentionFunction")
    b, h, t, d = 2, 2, 8, 2
    arrays = [rng.standard_normal((b, h, t, d)) for _ in range(3)]
    node = apply(*(_leaf(a) * 1.0 for a in arrays)).grad_fn
    g = _const(rng.standard_normal((b, h, t, d)))
    budget = 4 * arrays[0].nbytes + (b * h * t * t + 2 * b * h * t) * 8
    squares = sum(a.size == b * h * t * t for a in _kept_arrays(node))
    return {"kept": _kept_bytes(node), "budget": budget, "squares": squares,
            "inplace": _inplace_probe(apply, lambda: [_leaf(a) for a in arrays], 0, g)}


def judge_attention_saved(mine: dict, ref: dict) -> Verdict:
    extra = ""
    if mine["squares"] > 1:
        extra = (f" Yours keeps {mine['squares']} arrays of that size: keep the weights P only, the scores S are not "
                 "needed once P is known (dS is written with P)")
    problem = _budget_problem("CausalAttentionFunction", mine["kept"], mine["budget"],
                              "q, k, v and the output, one (B, H, T, T) array and two numbers per row",
                              "The (B, H, T, T) arrays are what attention costs: T² numbers per head, against T·D for "
                              "q, k or v." + extra)
    if problem:
        return Verdict(False, problem)
    problem = _inplace_problem("CausalAttentionFunction", "q", mine["inplace"])
    return Verdict(False, problem) if problem else Verdict(True)


def _linear_param(rng, *shape) -> nn.Parameter:
    return nn.Parameter(minigrad.tensor(rng.standard_normal(shape) * 0.4, dtype=F64))


def probe_attention_module(ns: dict, rng: np.random.Generator) -> dict:
    layer = ns["CausalSelfAttention"](8, 2)
    named = [[name, list(p.shape)] for name, p in layer.named_parameters()]
    result = {"module": isinstance(layer, nn.Module), "named": named}
    if named != [["qkv.weight", [24, 8]], ["qkv.bias", [24]], ["proj.weight", [8, 8]], ["proj.bias", [8]]]:
        return result
    values = [rng.standard_normal(p.shape) * 0.4 for _, p in layer.named_parameters()]
    with minigrad.no_grad():
        for p, v in zip(layer.parameters(), values):
            p.copy_(minigrad.tensor(v.astype(np.asarray(p.detach().numpy()).dtype)))
    x0 = rng.standard_normal((2, 5, 8))
    x = minigrad.tensor(x0.astype(layer.qkv.weight.detach().numpy().dtype))
    y = layer(x)
    nodes = _node_names(y.grad_fn, {ns["CausalAttentionFunction"]._backward_cls: "yours"})
    # the expected output, by the numbers: nanoGPT's layout (q, k, v side by side; heads split in C)
    w, bias, pw, pb = values
    qkv = x0 @ w.T + bias
    q, k, v = (a.reshape(2, 5, 2, 4).transpose(0, 2, 1, 3) for a in np.split(qkv, 3, axis=-1))
    want = causal_attention(q, k, v).transpose(0, 2, 1, 3).reshape(2, 5, 8) @ pw.T + pb
    return {**result, "y": y.detach(), "want": want, "yours": nodes.count("yours")}


def judge_attention_module(mine: dict, ref: dict) -> Verdict:
    if not mine["module"]:
        return Verdict(False, "CausalSelfAttention(8, 2) is not an nn.Module")
    if mine["named"] != ref["named"]:
        return Verdict(False, f"CausalSelfAttention(8, 2) registers {[(n, tuple(s)) for n, s in mine['named']]}, expected "
                              "qkv = nn.Linear(8, 24) and proj = nn.Linear(8, 8), in that order")
    if mine["yours"] != 1:
        return Verdict(False, f"CausalSelfAttention's output graph has {mine['yours']} node(s) of your "
                              "CausalAttentionFunction, expected 1: apply it once, to all heads at once")
    if not close(mine["y"], mine["want"], rtol=1e-3, atol=1e-4):
        return Verdict(False, f"CausalSelfAttention(8, 2) gave {fmt(mine['y'])}, expected {fmt(mine['want'])}. The "
                              "layout, as nanoGPT's: qkv(x) is (B, T, 3C) with q, k and v side by side, each (B, T, C) "
                              "split into H heads of D = C/H: view(B, T, 3, H, D).permute(2, 0, 3, 1, 4) gives q, k, v "
                              "as (B, H, T, D). After attention, transpose(1, 2) and reshape(B, T, C) put the heads "
                              "side by side again, before proj")
    return Verdict(True)


# -- cross-entropy --------------------------------------------------------------------------------
def probe_cross_entropy(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "CrossEntropyFunction")
    cases = {}
    for label, (n, v), scale in (("logits (6, 5)", (6, 5), 1.0), ("large logits (times 500)", (4, 3), 500.0)):
        z0 = rng.standard_normal((n, v)) * scale
        y0 = rng.integers(0, v, n)
        g0 = float(rng.uniform(0.5, 2.0))
        z = _leaf(z0)
        targets = minigrad.tensor(y0)
        loss = apply(z, targets)
        (gz,) = _grads(loss, [z], _const(g0))
        zm = _leaf(z0)
        lm = F.cross_entropy(zm, targets)
        (gm,) = _grads(lm, [zm], _const(g0))

        def value(za):
            with minigrad.no_grad():
                return float(apply(_const(za), targets).item()) * g0

        numeric = _numeric(value, [z0])[0] if scale == 1.0 else None
        torch = _torch_grads(lambda t, a: t.nn.functional.cross_entropy(a, t.tensor(y0)), [z0], np.asarray(g0))
        cases[label] = {"z": z0, "y": y0, "g": g0, "loss": loss.detach(), "shape": list(loss.shape), "grad": gz,
                        "own": {"loss": lm.detach(), "grad": gm}, "numeric": numeric, "torch": torch}
    return cases


def judge_cross_entropy(mine: dict, ref: dict) -> Verdict:
    for label, r in ref.items():
        m = mine[label]
        where = f"with {label}"
        if m["shape"] != []:
            return Verdict(False, f"CrossEntropyFunction {where} returned shape {tuple(m['shape'])}: return the mean "
                                  "over the rows, a 0-d tensor")
        z, y = np.asarray(r["z"]), np.asarray(r["y"]).astype(np.int64)
        n = z.shape[0]
        if not close(m["loss"], r["own"]["loss"]):
            got = float(np.asarray(m["loss"], dtype=np.float64))
            if not math.isfinite(got):
                return Verdict(False, f"CrossEntropyFunction {where} gave {got}: exp of a large logit overflows. "
                                      "Subtract each row's maximum before exp: log-sum-exp is max + log Σ exp(z − max)")
            lse = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
            if close(got, (lse - z[np.arange(n), y]).sum()):
                return Verdict(False, f"CrossEntropyFunction {where} gave the sum over the {n} rows, {got:.4g}: return "
                                      "their mean, as F.cross_entropy does")
            return Verdict(False, f"CrossEntropyFunction {where} gave {got:.6g}, expected "
                                  f"{float(np.asarray(r['own']['loss'])):.6g}: the mean over rows of "
                                  "logsumexp(z) − z[target]")
        got = m["grad"]
        if got is None:
            return Verdict(False, f"CrossEntropyFunction {where}: no gradient reached the logits")
        want = r["own"]["grad"]
        numeric, torch = m["numeric"], (r["torch"] or {"grads": [None]})["grads"][0]
        if close(got, want) and (numeric is None or close(got, numeric, rtol=1e-4, atol=1e-5)) and (
                torch is None or close(got, torch)):
            continue
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        onehot = np.eye(z.shape[1])[y]
        g = r["g"]
        if close(got, (p - onehot) * g):
            return Verdict(False, f"CrossEntropyFunction {where}: the gradient is (softmax − one_hot) · g, without the "
                                  f"1/N: the loss is a mean over N = {n} rows, so each row's gradient is divided by N")
        if close(got, p * g / n):
            return Verdict(False, f"CrossEntropyFunction {where}: the gradient is softmax/N, without subtracting the "
                                  "one-hot of the targets: the − z[target] term of the loss gives −1 at each row's "
                                  "target")
        if close(got, (p - onehot) / n):
            return Verdict(False, f"CrossEntropyFunction {where}: the gradient ignores grad_output (here "
                                  f"{g:.3g}): multiply by it, the loss may be scaled before backward")
        numbers = f"got {fmt(got)}, minigrad's F.cross_entropy gives {fmt(want)}"
        if numeric is not None:
            numbers += f", finite differences of your forward {fmt(numeric)}"
        return Verdict(False, f"CrossEntropyFunction {where}, the gradient of the logits: {numbers}: "
                              "(softmax(z) − one_hot(target)) · grad_output / N")
    return Verdict(True)


def probe_cross_entropy_saved(ns: dict, rng: np.random.Generator) -> dict:
    apply = _apply(ns, "CrossEntropyFunction")
    n, v = 12, 7
    z0, y0 = rng.standard_normal((n, v)), rng.integers(0, v, n)
    targets = minigrad.tensor(y0)
    node = apply(_leaf(z0) * 1.0, targets).grad_fn
    budget = z0.nbytes + y0.nbytes + 2 * n * 8
    return {"kept": _kept_bytes(node), "budget": budget,
            "inplace": _inplace_probe(apply, lambda: [_leaf(z0), targets], 0, _const(1.0))}


def judge_cross_entropy_saved(mine: dict, ref: dict) -> Verdict:
    problem = _budget_problem("CrossEntropyFunction", mine["kept"], mine["budget"],
                              "one (N, V) array, the targets and two numbers per row",
                              "Backward needs softmax(z) (or z and each row's log-sum-exp to make it again) and the "
                              "targets: with a vocabulary of V, every (N, V) array kept is N·V more numbers")
    if problem:
        return Verdict(False, problem)
    problem = _inplace_problem("CrossEntropyFunction", "the logits", mine["inplace"])
    return Verdict(False, problem) if problem else Verdict(True)


# -- the GPT ----------------------------------------------------------------------------------------
def _node_names(root, mine: dict) -> list:
    """The name of every node below ``root``; nodes of the classes in ``mine`` are named by it."""
    seen, stack, names = set(), [root], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(mine.get(type(node), node.name()))
        stack.extend(child for child, _ in node.next_functions)
    return names


GPT_CONFIG = {"vocab_size": 11, "block_size": 8, "n_embd": 16, "n_head": 2, "n_layer": 2}


def probe_gpt(ns: dict, rng: np.random.Generator) -> dict:
    model = ns["GPT"](**GPT_CONFIG)
    named = [[name, list(p.shape)] for name, p in model.named_parameters()]
    values = [rng.standard_normal(p.shape) * 0.3 for p in model.parameters()]
    idx = rng.integers(0, GPT_CONFIG["vocab_size"], (3, 6))
    result = {"module": isinstance(model, nn.Module), "named": named, "idx": idx}
    with minigrad.no_grad():
        for p, v in zip(model.parameters(), values):
            p.copy_(minigrad.tensor(v).to(p.dtype))
    logits = model(minigrad.tensor(idx))
    classes = {ns[name]._backward_cls: name for name in ("GELUFunction", "LayerNormFunction",
                                                           "CausalAttentionFunction")}
    names = _node_names(logits.grad_fn, classes)
    counts = {name: names.count(name) for name in classes.values()}
    return {**result, "shape": list(logits.shape), "logits": logits.detach(), "counts": counts,
            "native": sorted({n for n in names if n in NATIVE_NODES})}


def judge_gpt(mine: dict, ref: dict) -> Verdict:
    if not mine["module"]:
        return Verdict(False, "GPT(...) is not an nn.Module")
    if mine["named"] != ref["named"]:
        got = [(n, tuple(s)) for n, s in mine["named"]]
        want = [(n, tuple(s)) for n, s in ref["named"]]
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        return Verdict(False, f"GPT(vocab_size=11, block_size=8, n_embd=16, n_head=2, n_layer=2) registers "
                              f"{len(got)} parameters, expected {len(want)}; the first difference is at number {first}: "
                              f"{got[first] if first < len(got) else 'nothing'}, expected "
                              f"{want[first] if first < len(want) else 'nothing'}. The worksheet lists the names, "
                              "shapes and order")
    cfg = GPT_CONFIG
    if mine["shape"] != ref["shape"]:
        return Verdict(False, f"GPT on a (3, 6) batch of indices gave shape {tuple(mine['shape'])}, expected (3, 6, "
                              f"{cfg['vocab_size']}): one logit per vocabulary entry, at every position")
    want = {"LayerNormFunction": 2 * cfg["n_layer"] + 1, "CausalAttentionFunction": cfg["n_layer"],
            "GELUFunction": cfg["n_layer"]}
    for name, count in want.items():
        if mine["counts"][name] != count:
            return Verdict(False, f"the graph of GPT's output has {mine['counts'][name]} node(s) of your {name}, "
                                  f"expected {count} with {cfg['n_layer']} blocks: use your modules and Functions "
                                  "everywhere (two LayerNorms per block, one at the end)")
    if mine["native"]:
        return Verdict(False, f"the graph of GPT's output holds minigrad's own {', '.join(mine['native'])}: every "
                              "LayerNorm, GELU, softmax and attention must be yours, so that their gradients come "
                              "from your backward")
    if not close(mine["logits"], ref["logits"], rtol=1e-3, atol=1e-4):
        return Verdict(False, f"with the same parameters as the reference (set in order), GPT gave logits "
                              f"{fmt(mine['logits'])}, expected {fmt(ref['logits'])}. Check the order of each block, "
                              "pre-norm with residuals: x = x + attn(ln1(x)); x = x + proj(gelu(fc(ln2(x)))); and "
                              "the embedding: tok(idx) + pos(arange(T)); then ln_f and head")
    return Verdict(True)


def probe_training(ns: dict, rng: np.random.Generator) -> dict:
    from minigrad.data import load_shakespeare

    text = load_shakespeare()
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    data = np.array([lookup[c] for c in text[: int(0.9 * len(text))]], dtype=np.int64)
    minigrad.manual_seed(int(rng.integers(1 << 30)))
    model = ns["GPT"](vocab_size=len(chars), **TRAIN)
    optimizer = minigrad.optim.Adam(model.parameters(), lr=TRAIN_LR)
    loss_fn = _apply(ns, "CrossEntropyFunction")
    block = TRAIN["block_size"]
    losses = []
    for _ in range(TRAIN_STEPS):
        starts = rng.integers(0, len(data) - block - 1, TRAIN_BATCH)
        x = minigrad.tensor(np.stack([data[s:s + block] for s in starts]))
        y = minigrad.tensor(np.stack([data[s + 1:s + block + 1] for s in starts]))
        logits = model(x)
        loss = loss_fn(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.item()))
    return {"losses": losses}


def judge_training(mine: dict, ref: dict) -> Verdict:
    """The mean loss of the last 25 of 150 Adam steps, in nats per character, below 2.7. A model that
    learned only the characters' frequencies stays near their entropy, 3.30 nats (4.76 bits); a
    table of which character follows which reaches 2.48 nats (3.58 bits) on held-out text. The
    reference ends at 2.46-2.50 over seeds 0-2 (measured with the probe), so 2.7 leaves a margin
    for a learner's different but correct code, while a model that learned nothing beyond the
    characters' frequencies stays near 3.3. (Wrong gradients are the Functions' checks' business:
    with Adam, a gradient off by a constant factor still trains.)"""
    last = mine["losses"][-25:]
    mean = float(np.mean(last)) if last else float("nan")
    if math.isfinite(mean) and mean < TARGET_LOSS:
        return Verdict(True)
    shown = ", ".join(f"{v:.3f}" for v in mine["losses"][:: max(1, len(mine["losses"]) // 6)])
    return Verdict(False, f"your GPT ({TRAIN['n_layer']} block, n_embd {TRAIN['n_embd']}, {TRAIN['n_head']} heads, "
                          f"block_size {TRAIN['block_size']}), trained with Adam(lr={TRAIN_LR}) for {TRAIN_STEPS} steps "
                          f"of {TRAIN_BATCH} sequences, ended at a mean loss of {mean:.3f} over its last 25 steps, "
                          f"expected below {TARGET_LOSS} (the reference reaches "
                          f"{float(np.mean(ref['losses'][-25:])):.3f}). Losses along the way: {shown}")


# -- the reference: the solution's code -------------------------------------------------------------
def _array(t) -> np.ndarray:
    return t.detach().numpy()


class GELUFunction(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return minigrad.from_numpy(gelu_tanh(_array(x)))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        a = _array(x)
        t = np.tanh(GELU_C * (a + 0.044715 * a * a * a))
        slope = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * a * a)
        return minigrad.from_numpy(_array(grad) * slope)


class LayerNormFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        a = _array(x)
        centred = a - a.mean(-1, keepdims=True)
        rstd = 1 / np.sqrt((centred * centred).mean(-1, keepdims=True) + eps)
        xhat = centred * rstd
        ctx.save_for_backward(minigrad.from_numpy(xhat), minigrad.from_numpy(rstd), weight)
        return minigrad.from_numpy(xhat * _array(weight) + _array(bias))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        xhat, rstd, weight = (_array(t) for t in ctx.saved_tensors)
        g = _array(grad)
        dxhat = g * weight
        dx = rstd * (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True))
        axes = tuple(range(g.ndim - 1))
        return (minigrad.from_numpy(dx), minigrad.from_numpy((g * xhat).sum(axes)),
                minigrad.from_numpy(g.sum(axes)), None)


class LayerNorm(nn.Module):
    def __init__(self, n_embd, eps=EPS):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(minigrad.ones(n_embd))
        self.bias = nn.Parameter(minigrad.zeros(n_embd))

    def forward(self, x):
        return LayerNormFunction.apply(x, self.weight, self.bias, self.eps)


class CausalAttentionFunction(Function):
    @staticmethod
    def forward(ctx, q, k, v):
        qa, ka, va = _array(q), _array(k), _array(v)
        t, d = qa.shape[-2:]
        s = qa @ np.swapaxes(ka, -1, -2) / math.sqrt(d)
        s = np.where(np.tri(t, dtype=bool), s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        ctx.save_for_backward(q, k, v, minigrad.from_numpy(p))
        return minigrad.from_numpy(p @ va)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        qa, ka, va, p = (_array(t) for t in ctx.saved_tensors)
        g = _array(grad)
        dv = np.swapaxes(p, -1, -2) @ g
        dp = g @ np.swapaxes(va, -1, -2)
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / math.sqrt(qa.shape[-1])
        return (minigrad.from_numpy(ds @ ka), minigrad.from_numpy(np.swapaxes(ds, -1, -2) @ qa),
                minigrad.from_numpy(dv))


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_head, c // self.n_head).permute(2, 0, 3, 1, 4)
        y = CausalAttentionFunction.apply(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class CrossEntropyFunction(Function):
    @staticmethod
    def forward(ctx, logits, targets):
        z, y = _array(logits), _array(targets)
        shifted = z - z.max(-1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
        rows = np.arange(z.shape[0])
        ctx.save_for_backward(minigrad.from_numpy(np.exp(log_p)), targets)
        return minigrad.from_numpy(np.asarray(-log_p[rows, y].mean(), dtype=z.dtype))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        p, targets = (_array(t) for t in ctx.saved_tensors)
        d = p.copy()
        d[np.arange(p.shape[0]), targets] -= 1
        return minigrad.from_numpy(d * (_array(grad) / p.shape[0])), None


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln1 = LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln2 = LayerNorm(n_embd)
        self.fc = nn.Linear(n_embd, 4 * n_embd)
        self.proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(GELUFunction.apply(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd, n_head, n_layer):
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab_size, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(minigrad.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def reference() -> dict:
    return {"GELUFunction": GELUFunction, "LayerNormFunction": LayerNormFunction, "LayerNorm": LayerNorm,
            "CausalAttentionFunction": CausalAttentionFunction, "CausalSelfAttention": CausalSelfAttention,
            "CrossEntropyFunction": CrossEntropyFunction, "Block": Block, "GPT": GPT}


FUNCTIONAL = ("minigrad.nn.functional.gelu", "minigrad.nn.functional.layer_norm",
              "minigrad.nn.functional.scaled_dot_product_attention", "minigrad.nn.functional.softmax",
              "minigrad.nn.functional.log_softmax", "minigrad.nn.functional.cross_entropy",
              "minigrad.nn.functional.nll_loss")
STAGE = Stage(
    number="12",
    name="attention",
    title="Attention: a small GPT from your own Functions",
    parts={"gelu": ("GELUFunction",), "layer_norm": ("LayerNormFunction", "LayerNorm"),
           "attention": ("CausalAttentionFunction", "CausalSelfAttention"),
           "cross_entropy": ("CrossEntropyFunction",), "gpt": ("Block", "GPT")},
    checks=(
        Check("gelu", 2, "GELUFunction (tanh form): values, and gradients against minigrad, finite differences, "
              "PyTorch", probe_gelu, judge_gelu, part="gelu"),
        Check("gelu_saved", 1, "GELUFunction keeps one array the size of x, safely", probe_gelu_saved,
              judge_gelu_saved, needs=("gelu",), part="gelu"),
        Check("layer_norm", 2, "LayerNormFunction: values, and gradients of x, weight, bias", probe_layer_norm,
              judge_layer_norm, part="layer_norm"),
        Check("layer_norm_saved", 1, "LayerNormFunction keeps one array the size of x and row statistics, safely",
              probe_layer_norm_saved, judge_layer_norm_saved, needs=("layer_norm",), part="layer_norm"),
        Check("layer_norm_module", 1, "LayerNorm: weight ones, bias zeros, and your Function", probe_layer_norm_module,
              judge_layer_norm_module, needs=("layer_norm",), part="layer_norm"),
        Check("attention", 3, "CausalAttentionFunction: masked, scaled, stable; gradients of q, k, v",
              probe_attention, judge_attention, part="attention"),
        Check("attention_saved", 1, "CausalAttentionFunction keeps q, k, v, the output and one (B, H, T, T) array, "
              "safely", probe_attention_saved, judge_attention_saved, needs=("attention",), part="attention"),
        Check("attention_module", 1, "CausalSelfAttention: qkv and proj, heads split as nanoGPT's",
              probe_attention_module, judge_attention_module, needs=("attention",), part="attention"),
        Check("cross_entropy", 2, "CrossEntropyFunction: mean loss, stable, and its gradient", probe_cross_entropy,
              judge_cross_entropy, part="cross_entropy"),
        Check("cross_entropy_saved", 1, "CrossEntropyFunction keeps one (N, V) array and the targets, safely",
              probe_cross_entropy_saved, judge_cross_entropy_saved, needs=("cross_entropy",), part="cross_entropy"),
        Check("gpt", 2, "GPT: parameters, pre-norm blocks with residuals, only your Functions", probe_gpt, judge_gpt,
              needs=("gelu", "layer_norm_module", "attention_module"), part="gpt"),
        Check("training", 2, f"the GPT reaches a loss below {TARGET_LOSS} in {TRAIN_STEPS} Adam steps on Shakespeare",
              probe_training, judge_training, needs=("gpt", "cross_entropy"), part="gpt"),
    ),
    reference=reference,
    forbidden={"gelu": FUNCTIONAL, "layer_norm": FUNCTIONAL, "attention": FUNCTIONAL,
               "cross_entropy": FUNCTIONAL, "gpt": FUNCTIONAL},
)
