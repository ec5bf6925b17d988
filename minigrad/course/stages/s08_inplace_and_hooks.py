"""Stage 08: in-place operations (version counters, ``mark_dirty``) and tensor hooks.

The learner writes ``SavedValue`` (the version check that guards saved tensors),
``ExpInplace`` (a Function that overwrites its input and calls ``ctx.mark_dirty``),
``clip_gradients_hook(max_norm)`` (a hook that rescales a gradient by its norm,
returning a new tensor) and ``GradientRecorder`` (hooks on several tensors, with
handles to remove them).

Probes catch the errors that the mistakes lead to (a missing version error, a
leaf modified in place without complaint) and return them as data. Hooks are
probed both through a real backward pass and by calling them directly, which is
the only way to see a hook that changes its argument in place.
"""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad.autograd import Function
from minigrad.autograd import grad as autograd_grad
from minigrad.course.checks import Check, Stage, Verdict, clip, close, fmt

F64 = minigrad.float64


def _leaf(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64, requires_grad=True)


def _const(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64)


def _apply(ns: dict, name: str):
    fn = ns[name]
    return getattr(fn, "apply", fn)


def _attempt(fn) -> dict:
    """``{"ok": fn()}``, or ``{"error": "Type: message"}`` for an exception (a stub's NotImplementedError passes)."""
    try:
        return {"ok": fn()}
    except NotImplementedError:
        raise
    except Exception as e:  # noqa: BLE001 - which error, and its words, are what the judges look at
        return {"error": clip(f"{type(e).__name__}: {e}", 400)}


# -- SavedValue ----------------------------------------------------------------------------
def probe_saved_value(ns: dict, rng: np.random.Generator) -> dict:
    t = _const(rng.standard_normal(3))
    for _ in range(3):
        t.add_(1.0)  # version 3 before saving
    saved = ns["SavedValue"](t)
    first = _attempt(lambda: saved.unpack() is t)
    t.mul_(2.0)
    t.sub_(1.0)  # version 5
    second = _attempt(lambda: saved.unpack() is t)
    return {"saved_at": 3, "now": t._version, "first": first, "second": second}


def judge_saved_value(mine: dict, ref: dict) -> Verdict:
    saved_at, now = ref["saved_at"], ref["now"]
    first, second = mine["first"], mine["second"]
    if "error" in first:
        return Verdict(False, f"t was at version {saved_at} when it was saved and was not changed since, yet unpack() "
                              f"raised {first['error']}. Compare the version now with the version at saving time "
                              "(not with 0: a tensor may have been modified before it was saved)")
    if first["ok"] is not True:
        return Verdict(False, "unpack() of an unchanged tensor must return that very tensor")
    if "error" not in second:
        return Verdict(False, f"t was saved at version {saved_at} and then changed in place twice (now version {now}), "
                              "but unpack() returned it without complaint. Record t._version (an int) in __init__ "
                              "and raise a RuntimeError in unpack when t._version differs")
    message = second["error"]
    if not message.startswith("RuntimeError"):
        return Verdict(False, f"unpack() raised {message}: raise a RuntimeError, as minigrad and PyTorch do")
    if str(saved_at) not in message or str(now) not in message:
        return Verdict(False, f"unpack() raised \"{message}\": name both versions in the message (it is at version "
                              f"{now}; expected version {saved_at}), they are what the reader needs to find the change")
    return Verdict(True)


# -- ExpInplace ----------------------------------------------------------------------------
def probe_inplace_forward(ns: dict, rng: np.random.Generator) -> dict:
    a = _leaf(rng.uniform(-1, 1, 4))
    y = a * 1.0  # a non-leaf copy, which may be modified in place
    before = y._version
    out = _apply(ns, "ExpInplace")(y)
    return {"a": a, "y": y, "same": out is y, "version_bumped": y._version > before,
            "node": y.grad_fn.name() if y.grad_fn is not None else None}


def judge_inplace_forward(mine: dict, ref: dict) -> Verdict:
    if not close(mine["y"], ref["y"]):
        return Verdict(False, f"after ExpInplace.apply(y), y holds {fmt(mine['y'])}, expected e^y = {fmt(ref['y'])}: "
                              "forward must overwrite its input (write into x.detach().numpy())")
    aliased = (" (That is also why apply handed back a new tensor rather than y: an input returned without being "
               "marked dirty comes back as a fresh alias.)" if not mine["same"] else "")
    if not mine["version_bumped"]:
        return Verdict(False, "y was changed in place but its version did not move, so nothing can notice the change "
                              "(NumPy's writes are invisible to minigrad). Call ctx.mark_dirty(x) in forward: it bumps "
                              "the version and moves x's history onto this node." + aliased)
    if mine["node"] != ref["node"]:
        return Verdict(False, f"after the in-place call, y.grad_fn is {mine['node']}, expected {ref['node']}: y now "
                              "holds this Function's output, so its history must be this node. Call "
                              "ctx.mark_dirty(x) in forward." + aliased)
    if not mine["same"]:
        return Verdict(False, "ExpInplace.apply(y) returned a new tensor: an in-place Function returns the input it "
                              "modified, x itself")
    return Verdict(True)


def probe_inplace_backward(ns: dict, rng: np.random.Generator) -> dict:
    a = _leaf(rng.uniform(-1, 1, 5))
    g = _const(rng.standard_normal(5))
    y = a * 1.0
    _apply(ns, "ExpInplace")(y)
    (grad_a,) = autograd_grad(y, a, g, allow_unused=True)
    return {"a": a, "g": g, "grad": grad_a}


def judge_inplace_backward(mine: dict, ref: dict) -> Verdict:
    a, g = np.asarray(ref["a"]), np.asarray(ref["g"])
    got = mine["grad"]
    if got is None:
        return Verdict(False, "no gradient reached a through y = a * 1 and ExpInplace.apply(y)")
    if close(got, ref["grad"]):
        return Verdict(True)
    if close(got, g * np.exp(np.exp(a))):
        return Verdict(False, f"the gradient is g · exp(e^a) = {fmt(got)}, expected g · e^a = {fmt(ref['grad'])} (g: "
                              "the gradient flowing into ExpInplace's output): your "
                              "backward took exp of the saved tensor, but forward overwrote that tensor with e^x. "
                              "After an in-place op the saved tensor holds the output, which here already is the "
                              "derivative")
    if close(got, g):
        return Verdict(False, "the gradient passed through unchanged: multiply by the derivative of exp")
    return Verdict(False, f"the gradient for a is {fmt(got)}, expected g · e^a = {fmt(ref['grad'])} (g: the gradient "
                          "flowing into ExpInplace's output)")


def probe_inplace_guards(ns: dict, rng: np.random.Generator) -> dict:
    exp_inplace = _apply(ns, "ExpInplace")
    leaf = _leaf(rng.uniform(-1, 1, 3))
    on_leaf = _attempt(lambda: exp_inplace(leaf) is not None)

    a = _leaf(rng.uniform(-1, 1, 3))
    y = a * 1.0
    w = y * y  # Mul saves y
    exp_inplace(y)
    stale = _attempt(lambda: autograd_grad(w.sum(), a) is not None)
    return {"on_leaf": on_leaf, "stale": stale}


def judge_inplace_guards(mine: dict, ref: dict) -> Verdict:
    if "error" not in mine["on_leaf"]:
        return Verdict(False, "ExpInplace.apply(leaf) on a leaf that requires grad ran without complaint: its values "
                              "changed, but leaf.grad will be computed as if they had not. ctx.mark_dirty(x) lets "
                              "minigrad refuse this")
    if "leaf" not in mine["on_leaf"]["error"]:
        return Verdict(False, f"ExpInplace.apply(leaf) on a leaf that requires grad raised {mine['on_leaf']['error']}, "
                              "expected minigrad's refusal to let a leaf that requires grad be changed in place")
    if "error" not in mine["stale"]:
        return Verdict(False, "w = y * y saved y; then ExpInplace.apply(y) overwrote it, and w's backward ran without "
                              "complaint on the new values, silently wrong. ctx.mark_dirty(x) bumps y's version, so "
                              "the saved copy is seen to be stale")
    if "modified by an inplace operation" not in mine["stale"]["error"]:
        return Verdict(False, f"w's backward after the in-place call raised {mine['stale']['error']}, expected the "
                              "error that a saved tensor was modified by an inplace operation")
    return Verdict(True)


# -- clip_gradients_hook -------------------------------------------------------------------
def _random_shape(rng: np.random.Generator, least: int = 1) -> tuple:
    """A gradient's shape drawn from the seed: a vector, a matrix (not square) or a 3-D block, with at
    least ``least`` dimensions."""
    dims = int(rng.integers(least, 4))
    shape = [int(n) for n in rng.integers(2, 6, dims)]
    if dims == 2 and shape[0] == shape[1]:
        shape[1] += 1
    return tuple(shape)


def probe_clip_engine(ns: dict, rng: np.random.Generator) -> dict:
    max_norm = float(rng.uniform(0.5, 1.5))
    shape = _random_shape(rng, least=2)  # a gradient's norm is over all its elements, not row by row
    direction = rng.standard_normal(shape)
    direction /= np.linalg.norm(direction)
    results = {"max_norm": max_norm, "shape": list(shape)}
    for case, norm in (("large", 5.0), ("small", 0.3)):
        x = _leaf(rng.standard_normal(shape))
        x.register_hook(ns["clip_gradients_hook"](max_norm))
        (x * _const(norm * direction)).sum().backward()
        results[case] = {"norm": norm, "grad": x.grad, "raw": norm * direction}
    x = _leaf(rng.standard_normal(shape))
    h = x * 2.0
    h.register_hook(ns["clip_gradients_hook"](max_norm))
    (h * _const(3.0 * direction)).sum().backward()
    results["intermediate"] = {"grad": x.grad}
    return results


def judge_clip_engine(mine: dict, ref: dict) -> Verdict:
    max_norm = ref["max_norm"]
    large = mine["large"]
    raw = np.asarray(ref["large"]["raw"])
    if large["grad"] is None:
        return Verdict(False, "with the hook on x, x.grad stayed None")
    got = np.asarray(large["grad"], dtype=np.float64)
    if not close(got, ref["large"]["grad"]):
        if got.shape == raw.shape and raw.ndim > 1 and close(
                got, raw * np.minimum(1.0, max_norm / np.linalg.norm(raw, axis=-1, keepdims=True))):
            return Verdict(False, f"a gradient of shape {tuple(raw.shape)} and norm 5 was scaled row by row (each "
                                  "row's own norm): the norm of a gradient is over all of its elements, "
                                  "(grad * grad).sum().sqrt(), one number for the whole tensor")
        if close(got, np.clip(raw, -max_norm, max_norm)):
            return Verdict(False, f"a gradient of norm 5 with max_norm = {max_norm:.3g} became {fmt(got.tolist())}: you "
                                  "clipped each element to ±max_norm, which changes the gradient's direction. Scale "
                                  "the whole gradient instead: grad * (max_norm / norm) when its norm is larger")
        return Verdict(False, f"a gradient of norm 5 with max_norm = {max_norm:.3g} became {fmt(got.tolist())} (norm "
                              f"{np.linalg.norm(got):.3g}), expected {fmt(ref['large']['grad'])} (norm {max_norm:.3g}, "
                              "same direction): grad * (max_norm / norm), with norm the gradient's norm")
    small = np.asarray(mine["small"]["grad"], dtype=np.float64)
    if not close(small, ref["small"]["grad"]):
        return Verdict(False, f"a gradient of norm 0.3, below max_norm = {max_norm:.3g}, became {fmt(small.tolist())} "
                              f"(norm {np.linalg.norm(small):.3g}): only scale gradients whose norm is larger than "
                              "max_norm, and leave the others unchanged")
    if mine["intermediate"]["grad"] is None or not close(mine["intermediate"]["grad"], ref["intermediate"]["grad"]):
        return Verdict(False, f"with the hook on h = x * 2, x.grad is {fmt(mine['intermediate']['grad'])}, expected "
                              f"{fmt(ref['intermediate']['grad'])}")
    return Verdict(True)


def probe_clip_direct(ns: dict, rng: np.random.Generator) -> dict:
    hook = ns["clip_gradients_hook"](1.0)
    g = _const(rng.standard_normal(_random_shape(rng, least=2)) * 4)
    before = g.numpy().copy()
    returned = hook(g)
    after = g.numpy()
    return {"returned_none": returned is None, "changed": not np.array_equal(before, after),
            "before": before, "after": after}


def judge_clip_direct(mine: dict, ref: dict) -> Verdict:
    if mine["changed"]:
        return Verdict(False, f"calling your hook on a gradient changed that gradient in place (from "
                              f"{fmt(mine['before'])} to {fmt(mine['after'])}). The same gradient tensor may be held "
                              "elsewhere too: AddBackward passes one tensor to both of its inputs, and retain_grad "
                              "keeps it. Return a new tensor (grad * scale) and leave the argument alone")
    if mine["returned_none"]:
        return Verdict(False, "your hook returned None for a gradient that needed clipping: return the clipped "
                              "gradient, which replaces the original")
    return Verdict(True)


# -- GradientRecorder ----------------------------------------------------------------------
def _record_run(x, w, g):
    h = x * w
    return (h.tanh() * g).sum(), h


def probe_recorder(ns: dict, rng: np.random.Generator) -> dict:
    shape = _random_shape(rng)
    x, w = _leaf(rng.standard_normal(shape)), _const(rng.standard_normal(shape))
    g = _const(rng.standard_normal(shape))
    counts = []
    loss, h = _record_run(x, w, g)
    recorder = ns["GradientRecorder"]({"x": x, "h": h})
    loss.backward()
    loss2, _ = _record_run(x, w, g)  # a second graph: h's hook is not in it
    loss2.backward()
    counts.append({k: len(v) for k, v in recorder.grads.items()})
    recorder.remove()
    loss3, _ = _record_run(x, w, g)
    loss3.backward()
    counts.append({k: len(v) for k, v in recorder.grads.items()})
    grads = {k: [r for r in v] for k, v in recorder.grads.items()}
    return {"counts": counts, "grads": grads, "x_grad": x.grad}


def judge_recorder_records(mine: dict, ref: dict) -> Verdict:
    want = ref["counts"][0]
    got = mine["counts"][0]
    if sorted(got) != sorted(want):
        return Verdict(False, f"recorder.grads has the keys {sorted(got)}, expected {sorted(want)}: one list per name")
    if got != want:
        return Verdict(False, f"after two backward passes (h belongs only to the first graph), recorder.grads holds "
                              f"{got} gradients, expected {want}. Register one hook per tensor; if every hook records "
                              "into the last name, your hooks share one loop variable: build each in a function "
                              "that takes the name (a closure made inside a loop sees the loop's final value)")
    for name, grads in ref["grads"].items():
        for i, want_grad in enumerate(grads[:want[name]]):
            got_grad = mine["grads"][name][i]
            if not close(got_grad, want_grad):
                return Verdict(False, f"the gradient recorded for {name} in pass {i + 1} is {fmt(got_grad)}, expected "
                                      f"{fmt(want_grad)}")
    return Verdict(True)


def judge_recorder_removes(mine: dict, ref: dict) -> Verdict:
    before, after = mine["counts"]
    if after != before:
        grew = [k for k in after if after[k] != before.get(k)]
        return Verdict(False, f"after recorder.remove(), another backward pass still recorded gradients for {grew} "
                              f"({before} -> {after}): keep the handle that register_hook returns for every hook, "
                              "and call handle.remove() on each of them")
    if mine["x_grad"] is None or not close(mine["x_grad"], ref["x_grad"]):
        return Verdict(False, f"after three backward passes x.grad is {fmt(mine['x_grad'])}, expected "
                              f"{fmt(ref['x_grad'])}: the recording hooks must not change the gradient (return None)")
    return Verdict(True)


# -- the reference -------------------------------------------------------------------------
class SavedValue:
    def __init__(self, tensor):
        self.tensor, self.version = tensor, tensor._version

    def unpack(self):
        if self.tensor._version != self.version:
            raise RuntimeError(f"a saved tensor was modified by an inplace operation: it is at version "
                               f"{self.tensor._version}; expected version {self.version}")
        return self.tensor


class ExpInplace(Function):
    @staticmethod
    def forward(ctx, x):
        array = x.detach().numpy()
        np.exp(array, out=array)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


def clip_gradients_hook(max_norm):
    def hook(grad):
        norm = (grad * grad).sum().sqrt().item()
        return grad * (max_norm / norm) if norm > max_norm else grad

    return hook


class GradientRecorder:
    def __init__(self, tensors):
        self.grads = {name: [] for name in tensors}
        self.handles = [t.register_hook(self._hook(name)) for name, t in tensors.items()]

    def _hook(self, name):
        def record(grad):
            self.grads[name].append(grad.detach().clone())

        return record

    def remove(self):
        for handle in self.handles:
            handle.remove()


def reference() -> dict:
    return {"SavedValue": SavedValue, "ExpInplace": ExpInplace, "clip_gradients_hook": clip_gradients_hook,
            "GradientRecorder": GradientRecorder}


DIAGNOSES = {  # the phrase the feedback says for each known mistake (tests/mutants/s08_inplace_and_hooks.py)
    "saved_value_compares_with_zero": "not with 0",
    "forgot_mark_dirty": "Call ctx.mark_dirty(x)",
    "inplace_backward_takes_exp_of_the_overwritten_tensor": "forward overwrote that tensor with e^x",
    "hook_clips_each_element": "you clipped each element",
    "hook_changes_the_gradient_in_place": "changed that gradient in place",
    "hook_scales_every_gradient_to_max_norm": "only scale gradients whose norm is larger than max_norm",
    "recorder_never_removes": "call handle.remove() on each of them",
    "recorder_hooks_share_the_loop_variable": "a closure made inside a loop sees the loop's final value",
    "clip_norm_per_row": "was scaled row by row",
}

STAGE = Stage(
    number="08",
    name="inplace_and_hooks",
    title="In-place operations and hooks",
    parts={
        "saved_value": ("SavedValue",),
        "exp_inplace": ("ExpInplace",),
        "clip_hook": ("clip_gradients_hook",),
        "recorder": ("GradientRecorder",),
    },
    checks=(
        Check("saved_value", 2, "unpack returns the tensor, or raises if its version moved", probe_saved_value,
              judge_saved_value, part="saved_value"),
        Check("inplace_forward", 1, "ExpInplace overwrites its input, marks it dirty and returns it",
              probe_inplace_forward, judge_inplace_forward, part="exp_inplace"),
        Check("inplace_backward", 2, "ExpInplace's gradient, from the overwritten tensor", probe_inplace_backward,
              judge_inplace_backward, needs=("inplace_forward",), part="exp_inplace"),
        Check("inplace_guards", 1, "in-place on a leaf, and on a tensor saved for backward, are refused",
              probe_inplace_guards, judge_inplace_guards, needs=("inplace_forward",), part="exp_inplace"),
        Check("clip_by_norm", 2, "the hook rescales gradients larger than max_norm, during backward",
              probe_clip_engine, judge_clip_engine, part="clip_hook"),
        Check("clip_returns_new", 1, "the hook returns a new tensor and leaves its argument alone",
              probe_clip_direct, judge_clip_direct, needs=("clip_by_norm",), part="clip_hook"),
        Check("recorder_records", 1, "one hook per tensor records each gradient", probe_recorder,
              judge_recorder_records, part="recorder"),
        Check("recorder_removes", 1, "remove() unregisters every hook", probe_recorder, judge_recorder_removes,
              needs=("recorder_records",), part="recorder"),
    ),
    reference=reference,
)
