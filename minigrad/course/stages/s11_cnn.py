"""Stage 11: convolution, forward and backward, and a CNN trained on it (the capstone).

The learner writes ``conv2d_forward(x, w, b, stride, padding)`` with im2col
(``sliding_window_view`` + ``tensordot``), ``conv2d_backward(x, w, grad_y, stride, padding)
-> (grad_x, grad_w, grad_b)`` with a col2im scatter-add for ``grad_x``, the Function
``Conv2dFunction`` and the Module ``Conv2d`` around them, and ``CNN``: conv3x3(1->8), ReLU,
conv3x3(8->16), ReLU (both with padding 1), flatten, Linear(1024 -> 10), trained on the 8x8
digits. ``stride`` and ``padding`` are ints, the same along both axes.

The reference is ``minigrad.kernels.reference`` (NumPy) for the arrays, and minigrad's own
``Conv2d`` Function and Module. The backward is probed on cases chosen so that the common
mistakes show up in different ones: overlapping windows (stride 1), non-overlapping windows
with a stride, padding alone, and everything together with rows and columns no window reads
(a stride larger than the kernel).
"""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad import nn
from minigrad.course.checks import Check, Stage, Verdict, clip, close, fmt
from minigrad.data import DataLoader, TensorDataset, load_digits, train_test_split
from minigrad.kernels import reference as kref
from minigrad.nn import functional as F
from minigrad.nn.ops.conv import Conv2d as ConvFunction

EPOCHS = 4
TARGET_ACCURACY = 0.93

# (what the case exercises, N, C, H, W, O, k, stride, padding, bias)
FORWARD_CASES = [
    ("stride 1, no padding", 2, 3, 7, 6, 4, 3, 1, 0, True),
    ("stride 2, padding 1", 2, 2, 7, 7, 3, 3, 2, 1, True),
    ("a 2x2 kernel, stride 2, no bias", 1, 2, 6, 5, 2, 2, 2, 0, False),
    ("padding 2", 2, 1, 5, 5, 3, 3, 1, 2, True),
    ("stride 3, padding 1", 1, 3, 8, 8, 2, 3, 3, 1, True),
]
BACKWARD_CASES = [
    ("stride 1, no padding: overlapping windows", 2, 3, 6, 5, 3, 3, 1, 0),
    ("stride 2 with a 2x2 kernel: windows side by side", 2, 2, 6, 6, 3, 2, 2, 0),
    ("padding 1, stride 1", 1, 2, 5, 5, 3, 3, 1, 1),
    ("stride 2, padding 1", 2, 3, 7, 7, 2, 3, 2, 1),
    ("kernel 2, stride 3, padding 1: rows and columns no window reads", 1, 1, 8, 7, 2, 2, 3, 1),
]


def _out_hw(h, w, k, s, p) -> tuple[int, int]:
    return (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1


def _arrays(rng, n, c, h, w, o, k, s, p):
    x = rng.standard_normal((n, c, h, w))
    weight = rng.standard_normal((o, c, k, k))
    grad_y = rng.standard_normal((n, o, *_out_hw(h, w, k, s, p)))
    return x, weight, grad_y


def _facts(a) -> dict:
    if hasattr(a, "_data"):
        a = a._data
    if not isinstance(a, np.ndarray):
        return {"values": None, "shape": None, "type": type(a).__name__}
    return {"values": a, "shape": list(a.shape), "type": "ndarray", "contiguous": bool(a.flags.c_contiguous)}


# -- forward ----------------------------------------------------------------------------------
def probe_forward(ns: dict, rng: np.random.Generator) -> list:
    results = []
    for label, n, c, h, w, o, k, s, p, has_bias in FORWARD_CASES:
        x, weight, _ = _arrays(rng, n, c, h, w, o, k, s, p)
        bias = rng.standard_normal(o) if has_bias else None
        y = ns["conv2d_forward"](x, weight, bias, s, p)
        results.append({"case": label, "x": x, "w": weight, "b": bias, "stride": s, "padding": p,
                        "shapes": [list(x.shape), list(weight.shape)], **_facts(y)})
    return results


def judge_forward(mine: list, ref: list) -> Verdict:
    for m, r in zip(mine, ref):
        (n, c, h, w), (o, _, k, _) = r["shapes"]
        s, p = r["stride"], r["padding"]
        where = f"with {r['case']} (x {tuple(r['shapes'][0])}, w {tuple(r['shapes'][1])})"
        if m["type"] != "ndarray":
            return Verdict(False, f"conv2d_forward returned a {m['type']} {where}: return a NumPy array")
        if m["shape"] != r["shape"]:
            oh, ow = r["shape"][2:]
            return Verdict(False, f"conv2d_forward {where} returned shape {tuple(m['shape'])}, expected {tuple(r['shape'])}: "
                                  f"(N, O, OH, OW) with OH = (H + 2·padding − k) // stride + 1 = ({h} + {2 * p} − {k}) // "
                                  f"{s} + 1 = {oh}, and the same for OW = {ow}")
        if close(m["values"], r["values"]):
            continue
        x, weight = np.asarray(r["x"]), np.asarray(r["w"])
        bias = None if r["b"] is None else np.asarray(r["b"])
        flipped = kref.conv2d_forward(x, np.ascontiguousarray(weight[:, :, ::-1, ::-1]), bias, s, p)
        if close(m["values"], flipped):
            return Verdict(False, f"conv2d_forward {where} flips the kernel: that is the convolution of signal "
                                  "processing. Deep learning's conv2d is a cross-correlation: y[n, o, i, j] = "
                                  "sum over (c, a, b) of w[o, c, a, b] * x_padded[n, c, i*stride + a, j*stride + b]")
        if bias is not None and close(m["values"], kref.conv2d_forward(x, weight, None, s, p)):
            return Verdict(False, f"conv2d_forward {where} leaves out the bias: add b[o] to every output of channel o "
                                  "(b[None, :, None, None] broadcasts it)")
        return Verdict(False, f"conv2d_forward {where} gave {fmt(m['values'])}, expected {fmt(r['values'])}")
    return Verdict(True)


def judge_forward_contiguous(mine: list, ref: list) -> Verdict:
    for m, r in zip(mine, ref):
        if not m["contiguous"]:
            return Verdict(False, f"conv2d_forward with {r['case']} returns the right numbers in a non-contiguous array "
                                  "(the transposed view of tensordot's result): return np.ascontiguousarray(...), as "
                                  "the worksheet asks, since the next layer reads it")
    return Verdict(True)


# -- backward ---------------------------------------------------------------------------------
def probe_backward(ns: dict, rng: np.random.Generator) -> list:
    results = []
    for label, n, c, h, w, o, k, s, p in BACKWARD_CASES:
        x, weight, grad_y = _arrays(rng, n, c, h, w, o, k, s, p)
        out = ns["conv2d_backward"](x, weight, grad_y, s, p)
        if not (isinstance(out, tuple) and len(out) == 3):
            results.append({"case": label, "triple": False, "type": type(out).__name__})
            continue
        gx, gw, gb = out
        results.append({"case": label, "triple": True, "stride": s, "padding": p, "k": k,
                        "x": x, "w": weight, "grad_y": grad_y,
                        "shapes": [list(x.shape), list(weight.shape), list(grad_y.shape)],
                        "grad_x": _facts(gx), "grad_w": _facts(gw), "grad_b": _facts(gb)})
    return results


def _where(r: dict) -> str:
    x, w, gy = (tuple(s) for s in r["shapes"])
    return f"with {r['case']} (x {x}, w {w})"


def _check_triple(mine: list) -> Verdict | None:
    for m in mine:
        if not m["triple"]:
            return Verdict(False, f"conv2d_backward returned a {m['type']}: return the tuple (grad_x, grad_w, grad_b)")
    return None


def judge_grad_bias(mine: list, ref: list) -> Verdict:
    problem = _check_triple(mine)
    if problem:
        return problem
    for m, r in zip(mine, ref):
        got, want = m["grad_b"], r["grad_b"]
        if got["shape"] != want["shape"]:
            n, o = r["shapes"][2][:2]
            hint = ""
            if got["shape"] == [n, o]:
                hint = ": you summed over space but not over the batch"
            elif got["shape"] == [o] + r["shapes"][2][2:]:
                hint = ": you summed over the batch but not over space"
            return Verdict(False, f"grad_b {_where(r)} has shape {tuple(got['shape'] or ())}, expected {tuple(want['shape'])}"
                                  f"{hint}. b[o] is added to every output of channel o, in every sample at every "
                                  "position, so its gradient sums grad_y over axes (0, 2, 3)")
        if not close(got["values"], want["values"]):
            return Verdict(False, f"grad_b {_where(r)} is {fmt(got['values'])}, expected grad_y.sum(axis=(0, 2, 3)) = "
                                  f"{fmt(want['values'])}")
    return Verdict(True)


def judge_grad_weight(mine: list, ref: list) -> Verdict:
    problem = _check_triple(mine)
    if problem:
        return problem
    for m, r in zip(mine, ref):
        got, want = m["grad_w"], r["grad_w"]
        o, c = r["shapes"][1][:2]
        if got["shape"] != want["shape"]:
            hint = ""
            if got["shape"] is not None and sorted(got["shape"]) == sorted(want["shape"]):
                hint = ": the axes are in the wrong order (transposed)"
            return Verdict(False, f"grad_w {_where(r)} has shape {tuple(got['shape'] or ())}, expected w's shape "
                                  f"{tuple(want['shape'])}, (O, C, KH, KW){hint}. With tensordot over the axes "
                                  "(N, OH, OW) of grad_y and of the windows, grad_y's remaining axis O comes first")
        if not close(got["values"], want["values"]):
            if close(np.asarray(got["values"]), np.asarray(want["values"]).transpose(1, 0, 2, 3)):
                return Verdict(False, f"grad_w {_where(r)} holds at [o, c] what belongs at [c, o]: it is transposed "
                                      f"(here O = C = {o}, so the shapes agree but the values do not). Keep grad_y's "
                                      "channel axis O first, then the windows' C, KH, KW")
            return Verdict(False, f"grad_w {_where(r)} is {fmt(got['values'])}, expected {fmt(want['values'])}: each "
                                  "weight w[o, c, a, b] multiplies the window cell (a, b) of channel c at every output "
                                  "position, so grad_w[o, c, a, b] sums grad_y[n, o, i, j] · window[n, c, i, j, a, b]")
    return Verdict(True)


def judge_grad_input(mine: list, ref: list) -> Verdict:
    problem = _check_triple(mine)
    if problem:
        return problem
    for m, r in zip(mine, ref):
        got, want = m["grad_x"], r["grad_x"]
        if got["shape"] != want["shape"]:
            return Verdict(False, f"grad_x {_where(r)} has shape {tuple(got['shape'] or ())}, expected x's shape "
                                  f"{tuple(want['shape'])}: scatter into the padded frame, then crop the padding off")
        if close(got["values"], want["values"]):
            continue
        s, p, k = r["stride"], r["padding"], r["k"]
        numbers = f"grad_x = {fmt(got['values'])}, expected {fmt(want['values'])}"
        x, weight, grad_y = (np.asarray(r[key]) for key in ("x", "w", "grad_y"))
        flipped = kref.conv2d_backward(x, np.ascontiguousarray(weight[:, :, ::-1, ::-1]), grad_y, s, p)[0]
        if close(got["values"], flipped):
            return Verdict(False, f"grad_x {_where(r)}: {numbers}. Your grad_x uses the kernel flipped: each "
                                  "grad_y[n, o, i, j] sends w[o, c, a, b] · grad_y[n, o, i, j] back to "
                                  f"x_padded[n, c, i·{s} + a, j·{s} + b], with w as it is (the forward is a "
                                  "cross-correlation, and its backward scatters with the same, unflipped, w)")
        if any(close(got["values"], assigned) for assigned in _assigned_col2im(x, weight, grad_y, s, p)):
            return Verdict(False, f"grad_x {_where(r)}: {numbers}. Where windows overlap, a pixel lies in several "
                                  "windows, and its gradient is the sum of what each of them sends back; your col2im "
                                  "assigns (=), which keeps only the last window's. Accumulate (+=, or np.add.at)")
        if p == 0:
            return Verdict(False, f"grad_x {_where(r)}: {numbers}. The stride-1 case passed, so look at the stride: "
                                  f"window (i, j) starts at row i·{s} and column j·{s} of the padded input, so the kernel "
                                  f"cell (a, b) of every window lands on rows a, a + {s}, a + {2 * s}, ...: slice "
                                  "with a step of stride, grad_padded[:, :, a : a + stride·OH : stride, b : ...]")
        if s == 1:
            return Verdict(False, f"grad_x {_where(r)}: {numbers}. The cases without padding passed, so look at the "
                                  f"padding: windows index the padded input, (H + {2 * p}) x (W + {2 * p}); scatter into an "
                                  f"array of that size and return rows and columns {p} to {p} + H and W: the first "
                                  f"{p} row(s) and column(s) belong to the padding, not to x")
        return Verdict(False, f"grad_x {_where(r)}: {numbers}")
    return Verdict(True)


def _assigned_col2im(x, weight, grad_y, s: int, p: int) -> list[np.ndarray]:
    """grad_x as a col2im that assigns instead of adding gives it, in the two loop orders learners
    write (over kernel cells (a, b), or over windows (i, j)): a judge's guess at the mistake."""
    n, c, h, w = x.shape
    k = weight.shape[2]
    oh, ow = grad_y.shape[2:]
    cols = np.einsum("noij,ocab->ncijab", grad_y, weight)
    by_cell, by_window = (np.zeros((n, c, h + 2 * p, w + 2 * p)) for _ in range(2))
    for a in range(k):
        for b in range(k):
            by_cell[:, :, a:a + s * oh:s, b:b + s * ow:s] = cols[:, :, :, :, a, b]
    for i in range(oh):
        for j in range(ow):
            by_window[:, :, i * s:i * s + k, j * s:j * s + k] = cols[:, :, i, j]
    return [g[:, :, p:p + h, p:p + w] for g in (by_cell, by_window)]


# -- the Function and the Module ----------------------------------------------------------------
def _numeric(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(x)
    for i in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus.flat[i] += eps
        minus.flat[i] -= eps
        grad.flat[i] = (f(plus) - f(minus)) / (2 * eps)
    return grad


def probe_function(ns: dict, rng: np.random.Generator) -> dict:
    apply = ns["Conv2dFunction"].apply
    x0, w0, _ = _arrays(rng, 2, 2, 5, 4, 2, 3, 2, 1)
    b0 = rng.standard_normal(2)
    y_shape = (2, 2, *_out_hw(5, 4, 3, 2, 1))
    g = minigrad.tensor(rng.standard_normal(y_shape))
    x, w, b = (minigrad.tensor(a, requires_grad=True) for a in (x0, w0, b0))
    y = apply(x, w, b, 2, 1)
    saved = [next((name for name, t in (("x", x), ("w", w), ("b", b))
                   if np.shares_memory(s.detach().numpy(), t.detach().numpy())), "other")
             for s in y.grad_fn.saved_tensors]
    (y * g).sum().backward()

    def loss(xa, wa, ba):
        with minigrad.no_grad():
            return float((apply(minigrad.tensor(xa), minigrad.tensor(wa), minigrad.tensor(ba), 2, 1) * g).sum().item())

    numeric = {"x": _numeric(lambda a: loss(a, w0, b0), x0), "w": _numeric(lambda a: loss(x0, a, b0), w0),
               "b": _numeric(lambda a: loss(x0, w0, a), b0)}
    x2, w2 = (minigrad.tensor(a, requires_grad=True) for a in (x0, w0))
    try:
        no_bias = apply(x2, w2, None, 2, 1)
        (no_bias * g).sum().backward()
        without = {"y": no_bias.detach(), "x": x2.grad, "w": w2.grad, "error": None}
    except RuntimeError as e:  # e.g. a gradient returned for the missing bias
        without = {"error": clip(str(e), 300)}
    return {"y": y.detach(), "grads": {"x": x.grad, "w": w.grad, "b": b.grad}, "numeric": numeric,
            "without_bias": without, "saved": saved}


def judge_function(mine: dict, ref: dict) -> Verdict:
    if not close(mine["y"], ref["y"]):
        return Verdict(False, f"Conv2dFunction.apply(x, w, b, 2, 1) gave {fmt(mine['y'])}, expected {fmt(ref['y'])}: "
                              "forward must return conv2d_forward of the inputs' arrays, as a tensor")
    for name in ("x", "w", "b"):
        got = mine["grads"][name]
        if got is None:
            return Verdict(False, f"after backward through Conv2dFunction, {name}.grad is None: backward returns "
                                  "(grad_x, grad_w, grad_b, None, None), one per forward argument")
        if not close(got, ref["numeric"][name], rtol=1e-5):
            return Verdict(False, f"after (Conv2dFunction.apply(x, w, b, 2, 1) * g).sum().backward() (g: fixed random "
                                  f"weights), {name}.grad = "
                                  f"{fmt(got)}, but finite differences give {fmt(ref['numeric'][name])}")
    without, want = mine["without_bias"], ref["without_bias"]
    if without["error"] is not None:
        return Verdict(False, f"Conv2dFunction.apply(x, w, None, 2, 1), without a bias, then backward, raised: "
                              f"{without['error'][:160]}. When b is None, backward's third gradient must be None "
                              "(remember in forward whether there was a bias)")
    for name in ("y", "x", "w"):
        if without[name] is None or not close(without[name], want[name]):
            label = "the output" if name == "y" else f"{name}.grad"
            return Verdict(False, f"Conv2dFunction.apply(x, w, None, 2, 1), without a bias: {label} is "
                                  f"{fmt(without[name])}, expected {fmt(want[name])}")
    if mine["saved"] != ref["saved"]:
        return Verdict(False, f"Conv2dFunction saved {mine['saved'] or 'nothing'} with save_for_backward, expected "
                              f"{ref['saved']}: save x and w, ctx.save_for_backward(x, w), as the worksheet asks. "
                              "Tensors kept as plain ctx attributes escape the version check that catches an "
                              "in-place change before backward reads them")
    return Verdict(True)


def _param(values) -> nn.Parameter:
    return nn.Parameter(minigrad.tensor(np.asarray(values, dtype=np.float64)))


def probe_module(ns: dict, rng: np.random.Generator) -> dict:
    layer = ns["Conv2d"](3, 5, 3, stride=2, padding=1)
    named = [[name, list(p.shape), isinstance(p, nn.Parameter)] for name, p in layer.named_parameters()]
    weight = np.asarray(layer.weight.detach().numpy(), dtype=np.float64)
    stats = {"w_max": float(np.abs(weight).max()), "w_std": float(weight.std())}
    result = {"named": named, "module": isinstance(layer, nn.Module), **stats}
    if [shape for _, shape, _ in named] != [[5, 3, 3, 3], [5]]:
        return result
    layer.weight, layer.bias = _param(rng.standard_normal((5, 3, 3, 3))), _param(rng.standard_normal(5))
    x = minigrad.tensor(rng.standard_normal((2, 3, 7, 6)))
    y = layer(x)
    result.update(y=y.detach(), function=type(y.grad_fn) is ns["Conv2dFunction"]._backward_cls)
    return result


def judge_module(mine: dict, ref: dict) -> Verdict:
    if not mine["module"]:
        return Verdict(False, "Conv2d(3, 5, 3) is not an nn.Module: subclass minigrad.nn.Module")
    want = [shape for _, shape, _ in ref["named"]]
    got = [shape for _, shape, _ in mine["named"]]
    if [n for n, *_ in mine["named"]] != ["weight", "bias"] or got != want:
        return Verdict(False, f"Conv2d(3, 5, 3) registers {[(n, tuple(s)) for n, s, _ in mine['named']]}, expected "
                              "weight (5, 3, 3, 3) and bias (5,), as nn.Parameters: weight is (out_channels, "
                              "in_channels, k, k)")
    bound = 1 / math.sqrt(3 * 3 * 3)
    if mine["w_max"] > bound * 1.0001 or mine["w_max"] < 0.8 * bound:
        return Verdict(False, f"Conv2d(3, 5, 3).weight reaches {mine['w_max']:.4f}; PyTorch draws it uniformly in "
                              f"±1/sqrt(fan_in) = ±{bound:.4f}, where fan_in = in_channels · k · k = 27 is the number "
                              "of inputs each output sums")
    if not mine["function"]:
        return Verdict(False, "Conv2d's output was not made by your Conv2dFunction: forward must return "
                              "Conv2dFunction.apply(x, self.weight, self.bias, self.stride, self.padding)")
    if not close(mine["y"], ref["y"]):
        return Verdict(False, f"Conv2d(3, 5, 3, stride=2, padding=1) gave {fmt(mine['y'])}, expected {fmt(ref['y'])}: "
                              "pass the layer's stride and padding on to the Function")
    return Verdict(True)


# -- the CNN ------------------------------------------------------------------------------------
def _conv_nodes(root, backward_cls) -> int:
    """How many nodes of the graph below ``root`` are of class ``backward_cls``."""
    seen, stack, count = set(), [root], 0
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        count += type(node) is backward_cls
        stack.extend(child for child, _ in node.next_functions)
    return count


CNN_SHAPES = [[8, 1, 3, 3], [8], [16, 8, 3, 3], [16], [10, 1024], [10]]
CNN_VARIANTS = {  # the layers' order with a ReLU left out: computed by the probe with minigrad's own ops
    "no_relu": "has no ReLU at all: both ReLUs are missing",
    "no_first_relu": "has no ReLU after conv1",
    "no_second_relu": "has no ReLU after conv2",
}


def _cnn_variants(params: list, x) -> dict:
    """The CNN's output with the given parameter values, as minigrad computes it, with and without each ReLU."""
    w1, b1, w2, b2, w3, b3 = params
    out = {}
    with minigrad.no_grad():
        for name, (first, second) in {"expected": (True, True), "no_relu": (False, False),
                                      "no_first_relu": (False, True), "no_second_relu": (True, False)}.items():
            h = F.conv2d(x, w1, b1, padding=1)
            h = h.relu() if first else h
            h = F.conv2d(h, w2, b2, padding=1)
            h = h.relu() if second else h
            out[name] = F.linear(h.flatten(1), w3, b3)
    return out


def probe_cnn(ns: dict, rng: np.random.Generator) -> dict:
    model = ns["CNN"]()
    params = list(model.parameters())
    shapes = [list(p.shape) for p in params]
    x = minigrad.tensor(rng.random((5, 1, 8, 8)).astype(np.float32))
    values = [minigrad.tensor((rng.standard_normal(s) * (0.5 if len(s) > 1 else 0.3)).astype(np.float32))
              for s in CNN_SHAPES]
    if shapes == CNN_SHAPES:  # known values, so that the output can be compared (and a missing ReLU named)
        with minigrad.no_grad():
            for p, v in zip(params, values):
                p.copy_(v.to(p.dtype))
    y = model(x)
    return {"module": isinstance(model, nn.Module), "shapes": shapes, "out": list(y.shape),
            "convs": _conv_nodes(y.grad_fn, ns["Conv2dFunction"]._backward_cls),
            "y": y.detach() if shapes == CNN_SHAPES else None, "variants": _cnn_variants(values, x)}


def judge_cnn(mine: dict, ref: dict) -> Verdict:
    if not mine["module"]:
        return Verdict(False, "CNN() is not an nn.Module")
    if mine["shapes"] != ref["shapes"]:
        return Verdict(False, f"CNN().parameters() has shapes {mine['shapes']}, expected {ref['shapes']}: "
                              "Conv2d(1, 8, 3, padding=1), Conv2d(8, 16, 3, padding=1), then Linear(16 · 8 · 8, 10), "
                              "registered in that order")
    if mine["out"] != ref["out"]:
        return Verdict(False, f"CNN() on 5 images of shape (1, 8, 8) gave shape {tuple(mine['out'])}, expected (5, 10)")
    if mine["convs"] != 2:
        return Verdict(False, f"CNN's output graph has {mine['convs']} node(s) of your Conv2dFunction, expected 2: "
                              "use your Conv2d layers")
    if mine["y"] is not None and not close(mine["y"], ref["variants"]["expected"], rtol=1e-3, atol=1e-4):
        for variant, words in CNN_VARIANTS.items():
            if close(mine["y"], ref["variants"][variant], rtol=1e-3, atol=1e-4):
                return Verdict(False, f"with its parameters set to known values, your CNN's output is that of a CNN "
                                      f"that {words}: conv1, ReLU, conv2, ReLU, flatten, fc. Without a ReLU between "
                                      "them, linear layers in a row collapse into one linear map")
        return Verdict(False, f"with its parameters set to known values, CNN() gave {fmt(mine['y'])}, expected "
                              f"{fmt(ref['variants']['expected'])}: conv1, ReLU, conv2, ReLU, flatten, fc")
    return Verdict(True)


def probe_training(ns: dict, rng: np.random.Generator) -> dict:
    minigrad.manual_seed(int(rng.integers(1 << 30)))
    X, y = load_digits(return_images=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, seed=0)
    model = ns["CNN"]()
    optimizer = minigrad.optim.Adam(model.parameters(), lr=0.01)
    loader = DataLoader(TensorDataset(X_train, y_train), batch_size=64, shuffle=True,
                        generator=np.random.default_rng(int(rng.integers(1 << 30))))
    losses = []
    for _ in range(EPOCHS):
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item()
        losses.append(total / len(loader))
    with minigrad.no_grad():
        accuracy = (model(minigrad.tensor(X_test)).argmax(1) == minigrad.tensor(y_test)).float().mean().item()
    return {"losses": losses, "accuracy": accuracy}


def judge_training(mine: dict, ref: dict) -> Verdict:
    if mine["accuracy"] < TARGET_ACCURACY:
        losses = ", ".join(f"{v:.3f}" for v in mine["losses"])
        return Verdict(False, f"your CNN, trained with Adam(lr=0.01) for {EPOCHS} epochs of batches of 64, reached "
                              f"{mine['accuracy']:.1%} test accuracy, expected at least {TARGET_ACCURACY:.0%} "
                              f"(minigrad's own conv reaches {ref['accuracy']:.1%}). Epoch losses: {losses}")
    return Verdict(True)


# -- reference ----------------------------------------------------------------------------------
def reference() -> dict:
    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
            self.fc = nn.Linear(16 * 8 * 8, 10)

        def forward(self, x):
            x = self.conv2(self.conv1(x).relu()).relu()
            return self.fc(x.flatten(1))

    def conv2d_forward(x, w, b, stride, padding):
        return kref.conv2d_forward(x, w, b, stride, padding)

    def conv2d_backward(x, w, grad_y, stride, padding):
        return kref.conv2d_backward(x, w, grad_y, stride, padding)

    return {"conv2d_forward": conv2d_forward, "conv2d_backward": conv2d_backward, "Conv2dFunction": ConvFunction,
            "Conv2d": nn.Conv2d, "CNN": CNN}


BACKWARD = ("conv2d_backward",)
DIAGNOSES = {  # the phrase the feedback says for each known mistake (tests/mutants/s11_cnn.py)
    "padding_forgotten_in_backward": "look at the padding",
    "stride_ignored_in_col2im": "look at the stride",
    "overlapping_windows_overwritten": "your col2im assigns (=), which keeps only the last window's",
    "backward_scatters_with_the_flipped_kernel": "uses the kernel flipped",
    "bias_gradient_not_summed_over_batch": "not over the batch",
    "bias_gradient_not_summed_over_space": "not over space",
    "forward_flips_the_kernel": "flips the kernel",
    "forward_returns_a_transposed_view": "return np.ascontiguousarray(...)",
    "gradient_for_a_missing_bias": "backward's third gradient must be None",
    "function_keeps_arrays_on_ctx": "save x and w, ctx.save_for_backward(x, w)",
    "conv_init_with_in_channels_only": "fan_in = in_channels · k · k",
    "cnn_with_minigrads_conv": "use your Conv2d layers",
    "cnn_without_relu": "has no ReLU at all",
    "cnn_without_the_second_relu": "has no ReLU after conv2",
}

STAGE = Stage(
    number="11",
    name="cnn",
    title="Convolution, forward and backward, and a CNN",
    parts={"conv_forward": ("conv2d_forward",), "conv_backward": BACKWARD,
           "conv_module": ("Conv2dFunction", "Conv2d"), "cnn": ("CNN",)},
    checks=(
        Check("forward", 2, "conv2d_forward matches the reference: strides, paddings, no bias", probe_forward,
              judge_forward, part="conv_forward"),
        Check("forward_contiguous", 1, "conv2d_forward returns a C-contiguous array", probe_forward,
              judge_forward_contiguous, needs=("forward",), part="conv_forward"),
        Check("grad_bias", 1, "grad_b sums grad_y over batch and space", probe_backward, judge_grad_bias,
              part="conv_backward"),
        Check("grad_weight", 1, "grad_w matches the reference", probe_backward, judge_grad_weight,
              part="conv_backward"),
        Check("grad_input", 2, "grad_x (col2im) matches: overlaps, strides, padding", probe_backward,
              judge_grad_input, part="conv_backward"),
        Check("function", 1, "Conv2dFunction's gradients match finite differences", probe_function,
              judge_function, needs=("forward", "grad_bias", "grad_weight", "grad_input"), part="conv_module"),
        Check("module", 1, "Conv2d registers weight and bias, initialised like PyTorch, and uses the Function",
              probe_module, judge_module, needs=("forward",), part="conv_module"),
        Check("cnn", 1, "CNN: conv(1->8), ReLU, conv(8->16), ReLU, flatten, Linear(1024->10)", probe_cnn, judge_cnn,
              needs=("module",), part="cnn"),
        Check("training", 2, f"the CNN reaches {TARGET_ACCURACY:.0%} test accuracy in {EPOCHS} epochs", probe_training,
              judge_training, needs=("function", "cnn"), part="cnn"),
    ),
    reference=reference,
    forbidden={  # methods and functions, not classes: the sandbox wraps each name in a function
        "conv_forward": ("minigrad.kernels.conv2d_forward", "minigrad.kernels.reference.conv2d_forward",
                         "minigrad.nn.functional.conv2d"),
        "conv_backward": ("minigrad.kernels.conv2d_backward", "minigrad.kernels.reference.conv2d_backward"),
        "conv_module": ("minigrad.nn.functional.conv2d", "minigrad.nn.Conv2d.forward",
                        "minigrad.kernels.conv2d_forward", "minigrad.kernels.conv2d_backward",
                        "minigrad.kernels.reference.conv2d_forward", "minigrad.kernels.reference.conv2d_backward"),
        "cnn": ("minigrad.nn.Conv2d.forward", "minigrad.nn.functional.conv2d"),
    },
)
