"""Stage 03: what an operation keeps for its backward pass, and how it is kept safely.

The learner writes ``Context`` (``save_for_backward``, ``saved_tensors`` with a
version check, ``release``, ``needs_input_grad``), then the Functions ``Exp``,
``Log``, ``Sigmoid``, ``Tanh`` and ``Mul`` (on ``minigrad.autograd.Function``),
each saving what its derivative needs, and ``saved_bytes(output)``: the memory
a graph keeps alive for backward, each saved array counted once.

``mini_apply`` runs a Function with the learner's ``Context`` inside one real
minigrad node, so the learner's Context drives minigrad's engine: the engine
calls ``ctx.release()`` where it would free a node's saved tensors.
"""
from __future__ import annotations

import gc
import re
import weakref

import numpy as np

import minigrad
from minigrad.autograd import Function, engine
from minigrad.course.checks import Check, Stage, Verdict, close, fmt


# -- the bridge: a Function run with the learner's Context, inside a real node -------------------
class MiniApply(Function):
    """One minigrad node whose forward and backward are ``fn``'s, run with a Context of your own."""

    @staticmethod
    def forward(node, fn, ctx, *inputs):
        node.fn, node.ctx = fn, ctx
        node.release_variables = ctx.release  # the engine calls this after backward, unless retain_graph
        return fn.forward(ctx, *inputs)

    @staticmethod
    def backward(node, *grads):
        input_grads = node.fn.backward(node.ctx, *grads)
        if not isinstance(input_grads, tuple):
            input_grads = (input_grads,)
        return (None, None, *input_grads)


def mini_apply(Context, fn, *inputs):
    ctx = Context(tuple(isinstance(x, minigrad.Tensor) and x.requires_grad for x in inputs))
    return MiniApply.apply(fn, ctx, *inputs)


def _tensor(rng: np.random.Generator, *shape, requires_grad: bool = False):
    return minigrad.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


# -- Context ----------------------------------------------------------------------------------
def probe_context_saves(ns: dict, rng: np.random.Generator) -> dict:
    Context = ns["Context"]
    a, b = _tensor(rng, 3), _tensor(rng, 2, 2)
    ctx = Context((True, False, True))
    ctx.save_for_backward(a, None, b)
    saved = ctx.saved_tensors
    empty = Context(())
    empty.save_for_backward()
    return {"needs": list(ctx.needs_input_grad), "is_tuple": isinstance(saved, tuple), "count": len(saved),
            "same": [s is t for s, t in zip(saved, (a, None, b))],
            "copy": [isinstance(s, minigrad.Tensor) and s is not t for s, t in zip(saved, (a, None, b))],
            "empty": len(empty.saved_tensors)}


def judge_context_saves(mine: dict, ref: dict) -> Verdict:
    if mine["needs"] != ref["needs"]:
        return Verdict(False, f"Context((True, False, True)).needs_input_grad is {mine['needs']}: "
                              "keep the tuple you are given")
    if mine["count"] != 3:
        return Verdict(False, f"after save_for_backward(a, None, b), saved_tensors has {mine['count']} entries: "
                              "return every argument, None included, in order")
    if any(mine["copy"]):
        i = mine["copy"].index(True)
        return Verdict(False, f"saved_tensors[{i}] is not the tensor you saved but a copy. Keep the tensor itself: a copy "
                              "doubles the memory, and it hides in-place changes, because the version check can only "
                              "see changes to the tensor that was saved")
    if not all(mine["same"]):
        return Verdict(False, "after save_for_backward(a, None, b), saved_tensors is not (a, None, b): "
                              "return the saved objects themselves, in order")
    if not mine["is_tuple"]:
        return Verdict(False, "saved_tensors should be a tuple, like the arguments of save_for_backward")
    if mine["empty"] != 0:
        return Verdict(False, f"after save_for_backward() with no arguments, saved_tensors has {mine['empty']} entries")
    return Verdict(True)


def probe_context_type_error(ns: dict, rng: np.random.Generator) -> dict:
    Context = ns["Context"]
    results = []
    for args, what in (((_tensor(rng, 2), 3), "int"), ((np.ones(2),), "ndarray"),
                       ((_tensor(rng, 2), None, [1.0]), "list")):
        try:
            Context(()).save_for_backward(*args)
        except NotImplementedError:
            raise
        except Exception as e:  # noqa: BLE001 - the type and message are the data
            results.append({"what": what, "type": type(e).__name__, "message": str(e)[:300]})
        else:
            results.append({"what": what, "type": None, "message": ""})
    return {"results": results}


def judge_context_type_error(mine: dict, ref: dict) -> Verdict:
    calls = ["save_for_backward(t, 3)", "save_for_backward(np.ones(2))", "save_for_backward(t, None, [1.0])"]
    for call, got, want in zip(calls, mine["results"], ref["results"]):
        if got["type"] is None:
            return Verdict(False, f"{call} did not raise: only tensors (and None) can be saved. A number or a list "
                                  "belongs in an attribute (ctx.alpha = 3), and a NumPy array in a tensor. "
                                  "Raise TypeError for anything else")
        if got["type"] != "TypeError":
            return Verdict(False, f"{call} raised {got['type']}: {got['message']}. Check every argument before "
                                  "using it, and raise TypeError for anything that is not a minigrad.Tensor or None")
        index = re.search(r"argument (\d+)", want["message"]).group(1)
        if f"argument {index}" not in got["message"] or got["what"] not in got["message"]:
            return Verdict(False, f"{call} raised TypeError('{got['message']}'): say which argument and its type, "
                                  f"like PyTorch: '{want['message']}'")
    return Verdict(True)


def probe_context_version(ns: dict, rng: np.random.Generator) -> dict:
    Context = ns["Context"]

    def read(ctx):
        try:
            ctx.saved_tensors
        except NotImplementedError:
            raise
        except Exception as e:  # noqa: BLE001
            return {"type": type(e).__name__, "message": str(e)[:400]}
        return {"type": None, "message": ""}

    s = _tensor(rng, 4)
    s.add_(1.0)
    s.add_(1.0)  # version 2 before it is saved: that is harmless
    ctx = Context(())
    ctx.save_for_backward(s, None)
    before = read(ctx)
    t = _tensor(rng, 4)
    t.add_(1.0)
    t.add_(1.0)
    ctx = Context(())
    ctx.save_for_backward(None, t)  # saved at version 2
    t.mul_(2.0)
    t.add_(1.0)
    t.sub_(1.0)  # version 5 at the first read
    after = read(ctx)
    u, v = _tensor(rng, 2), _tensor(rng, 2)
    ctx2 = Context(())
    ctx2.save_for_backward(u, v)
    first = read(ctx2)
    v.mul_(3.0)
    second = read(ctx2)
    return {"before": before, "after": after, "first": first, "second": second}


def judge_context_version(mine: dict, ref: dict) -> Verdict:
    if mine["before"]["type"] is not None:
        return Verdict(False, f"a tensor went through 2 in-place operations before it was saved, and saved_tensors raised "
                              f"{mine['before']['type']}: {mine['before']['message']}. Changes before saving are "
                              "harmless: compare with the version it had when it was saved, not with 0")
    if mine["first"]["type"] is not None:
        return Verdict(False, f"saved_tensors raised {mine['first']['type']} although nothing was modified: "
                              f"{mine['first']['message']}")
    after = mine["after"]
    if after["type"] is None:
        return Verdict(False, "t was saved at version 2, then 3 in-place operations took it to version 5, and "
                              "saved_tensors returned it without complaint: backward would use the new values and "
                              "compute a wrong gradient. In save_for_backward, record each tensor's _version; in "
                              "saved_tensors, compare it with the tensor's _version now")
    if after["type"] != "RuntimeError":
        return Verdict(False, f"a saved tensor modified in place made saved_tensors raise {after['type']}; "
                              "raise RuntimeError")
    message = after["message"]
    if "modified by an inplace operation" not in message or not (re.search(r"\b5\b", message)
                                                                 and re.search(r"\b2\b", message)):
        return Verdict(False, f"your error says '{message}'. Say what happened and name both versions, like "
                              f"PyTorch: '{ref['after']['message']}'")
    if mine["second"]["type"] != "RuntimeError":
        return Verdict(False, "saved_tensors was read once, then v was modified in place, and a second read did not "
                              "raise: compare the versions on every read, with the versions recorded when saving")
    return Verdict(True)


def probe_context_release(ns: dict, rng: np.random.Generator) -> dict:
    Context = ns["Context"]
    t = _tensor(rng, 1000)
    alive = weakref.ref(t)
    ctx = Context(())
    ctx.save_for_backward(t, None)
    del t
    ctx.saved_tensors  # readable before release
    ctx.release()
    gc.collect()
    try:
        ctx.saved_tensors
    except NotImplementedError:
        raise
    except Exception as e:  # noqa: BLE001
        return {"type": type(e).__name__, "message": str(e)[:400], "alive": alive() is not None}
    return {"type": None, "message": "", "alive": alive() is not None}


def judge_context_release(mine: dict, ref: dict) -> Verdict:
    if mine["type"] is None:
        return Verdict(False, "after release(), saved_tensors still answered. A released Context has given its tensors "
                              "back; reading them again means a second backward through a freed graph: raise "
                              "RuntimeError and tell the user about retain_graph=True")
    if mine["type"] != "RuntimeError" or "retain_graph" not in mine["message"]:
        return Verdict(False, f"after release(), saved_tensors raised {mine['type']}: '{mine['message']}'. Raise "
                              "RuntimeError and mention retain_graph=True, the fix the user needs")
    if mine["alive"]:
        return Verdict(False, "after release() and with no other reference left, the saved tensor is still alive: "
                              "your Context still holds it. release() exists to free memory: drop the references "
                              "(self.saved = None or ()), then remember that it was released")
    return Verdict(True)


class RefExp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * y


class RefLog(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.log()

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad / x


class RefSigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.sigmoid()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * y * (1 - y)


class RefTanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.tanh()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * (1 - y * y)


class RefMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        return grad * b if need_a else None, grad * a if need_b else None


def probe_context_drives_backward(ns: dict, rng: np.random.Generator) -> dict:
    Context = ns["Context"]
    x, w = _tensor(rng, 4, requires_grad=True), _tensor(rng, 4, requires_grad=True)
    c = _tensor(rng, 4)
    y = mini_apply(Context, RefExp, x)
    loss = (mini_apply(Context, RefMul, y, w) + mini_apply(Context, RefMul, y, c)).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    return {"x": x.grad, "w": w.grad}


def judge_context_drives_backward(mine: dict, ref: dict) -> Verdict:
    for name in ("x", "w"):
        if mine[name] is None or not close(mine[name], ref[name]):
            return Verdict(False, f"with your Context inside minigrad's engine, two backward passes through "
                                  f"(exp(x) * w + exp(x) * c).sum() gave {name}.grad = {fmt(mine[name])}, "
                                  f"expected {fmt(ref[name])}")
    return Verdict(True)


# -- the Functions -------------------------------------------------------------------------------
FUNCTIONS = ("Exp", "Log", "Sigmoid", "Tanh", "Mul")
DERIVATIVES = {
    "Exp": "d/dx exp(x) = exp(x) = y",
    "Log": "d/dx log(x) = 1 / x",
    "Sigmoid": "d/dx sigmoid(x) = y * (1 - y), with y = sigmoid(x)",
    "Tanh": "d/dx tanh(x) = 1 - y**2, with y = tanh(x)",
    "Mul": "a * b sends grad * b to a and grad * a to b (grad: the gradient backward receives)",
}


def _inputs(name: str, rng: np.random.Generator) -> list:
    if name == "Log":
        return [minigrad.tensor(rng.uniform(0.5, 3.0, 5), requires_grad=True)]
    if name == "Mul":
        return [_tensor(rng, 5, requires_grad=True), _tensor(rng, 5, requires_grad=True)]
    return [_tensor(rng, 5, requires_grad=True)]


def probe_functions_gradients(ns: dict, rng: np.random.Generator) -> dict:
    found = {}
    for name in FUNCTIONS:
        inputs = _inputs(name, rng)
        before = [t.detach().numpy().copy() for t in inputs]
        out = ns[name].apply(*inputs)
        changed = [i for i, (t, b) in enumerate(zip(inputs, before))
                   if not np.array_equal(t.detach().numpy(), b, equal_nan=True)]
        if changed:
            found[name] = {"changed": changed, "before": before[changed[0]], "after": inputs[changed[0]]}
            continue
        (out * minigrad.tensor(rng.standard_normal(5))).sum().backward()
        found[name] = {"out": out.detach(), "grads": [t.grad for t in inputs], "changed": []}
    return found


def judge_functions_gradients(mine: dict, ref: dict) -> Verdict:
    for name in FUNCTIONS:
        got, want = mine[name], ref[name]
        if got.get("changed"):
            which = "x" if len(want["grads"]) == 1 else "ab"[got["changed"][0]]
            return Verdict(False, f"{name}.apply({'x' if which == 'x' else 'a, b'}) changed its input {which} from "
                                  f"{fmt(got['before'])} to {fmt(got['after'])}: forward must leave the caller's "
                                  "tensors as they are. Compute a new tensor (x.exp(), not x.exp_(); no assignment "
                                  "into an input)")
        if not close(got["out"], want["out"]):
            return Verdict(False, f"{name}.apply gives {fmt(got['out'])}, expected {fmt(want['out'])}")
        for i, (g, w) in enumerate(zip(got["grads"], want["grads"])):
            if g is None or not close(g, w):
                which = "" if len(got["grads"]) == 1 else f" for input {'ab'[i]}"
                return Verdict(False, f"{name}'s backward gives the gradient {fmt(g)}{which}, expected {fmt(w)}: "
                                      f"{DERIVATIVES[name]}")
    return Verdict(True)


def _kind(saved, inputs: list, out) -> str:
    if saved is None:
        return "None"
    values = saved.detach().numpy()
    if np.shares_memory(values, out.detach().numpy()):
        return "output"
    for i, x in enumerate(inputs):
        if np.shares_memory(values, x.detach().numpy()):
            return "input" if len(inputs) == 1 else f"input {'ab'[i]}"
    return "other"


def probe_functions_saved(ns: dict, rng: np.random.Generator) -> dict:
    found = {}
    for name in FUNCTIONS:
        inputs = _inputs(name, rng)
        out = ns[name].apply(*inputs)
        found[name] = [_kind(s, inputs, out) for s in out.grad_fn.saved_tensors]
    return found


WHY = {
    "Exp": "the derivative of exp is exp itself: save the output y, and backward is grad * y with nothing computed "
           "again. Saving x works, but backward must then compute exp(x) a second time",
    "Log": "the derivative 1 / x needs the input x: save it",
    "Sigmoid": "sigmoid'(x) = y * (1 - y) is written with the output y: save y, and backward needs no exp",
    "Tanh": "tanh'(x) = 1 - y**2 is written with the output y: save y, and backward needs no tanh",
    "Mul": "d(a * b)/da = b and d(a * b)/db = a: save both inputs",
}


def saved_problem(name: str, got: list[str], want: list[str]) -> str | None:
    """What a Function saved for backward (``_kind`` of each saved tensor) against what it should:
    the feedback, or None. Stage 05 judges its Exp and Sigmoid with this too: one mistake, one verdict."""
    if got == want:
        return None
    said = f"{name} saved {got or 'nothing'}, expected {want}"
    if "other" in got:
        return (f"{said}: a saved tensor that is neither an input nor the output (a copy, or a value computed "
                f"again) is extra memory the graph keeps alive until backward runs. Here, {WHY[name]}")
    return f"{said}: {WHY[name]}"


def judge_functions_saved(mine: dict, ref: dict) -> Verdict:
    for name in FUNCTIONS:
        problem = saved_problem(name, mine[name], ref[name])
        if problem:
            return Verdict(False, problem)
    return Verdict(True)


# -- saved_bytes ---------------------------------------------------------------------------------
def probe_saved_bytes(ns: dict, rng: np.random.Generator) -> dict:
    saved_bytes = ns["saved_bytes"]
    a, b = _tensor(rng, 5, requires_grad=True), _tensor(rng, 5, requires_grad=True)
    y = a.exp()
    x, W = _tensor(rng, 3, 4, requires_grad=True), _tensor(rng, 4, 2, requires_grad=True)
    a32, b32 = a.detach().float().requires_grad_(), b.detach().float().requires_grad_()
    return {"mul": saved_bytes((a * b).sum()), "add": saved_bytes((a + b).sum()),
            "shared": saved_bytes((y * b).sum()), "float32": saved_bytes((a32 * b32).sum()),
            "layer": saved_bytes((x @ W).tanh()), "leaf": saved_bytes(a)}


def judge_saved_bytes(mine: dict, ref: dict) -> Verdict:
    exprs = {"leaf": "a leaf a (no grad_fn)", "mul": "(a * b).sum()", "add": "(a + b).sum()",
             "shared": "(y * b).sum() with y = a.exp()", "float32": "(a * b).sum() in float32",
             "layer": "(x @ W).tanh()"}
    for key, expr in exprs.items():
        got, want = mine[key], ref[key]
        if got == want:
            continue
        said = f"for {expr} you count {fmt(got)} bytes, expected {want}"
        if key == "shared" and isinstance(got, (int, float)) and got == want + 40:
            return Verdict(False, f"{said}: y is saved twice, by ExpBackward0 (its output) and by MulBackward0 (an "
                                  "input), but it is one array in memory. Count each array once: remember the "
                                  "id() of every array you have counted")
        if key == "float32" and isinstance(got, (int, float)) and got == 2 * want:
            return Verdict(False, f"{said}: a float32 element takes 4 bytes, not 8. Use the array's .nbytes")
        if key == "leaf":
            return Verdict(False, f"{said}: a tensor that no operation produced has no graph behind it: return 0")
        return Verdict(False, f"{said}: add up .nbytes of every distinct array that a node of the graph saved "
                              "(node.saved_tensors; AccumulateGrad nodes have none)")
    return Verdict(True)


def reference() -> dict:
    class Context:
        def __init__(self, needs_input_grad=()):
            self.needs_input_grad = tuple(needs_input_grad)
            self.saved, self.versions, self.released = (), (), False

        def save_for_backward(self, *tensors):
            for i, t in enumerate(tensors):
                if t is not None and not isinstance(t, minigrad.Tensor):
                    raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                    f"is of type {type(t).__name__}")
            self.saved = tensors
            self.versions = tuple(None if t is None else t._version for t in tensors)

        @property
        def saved_tensors(self):
            if self.released:
                raise RuntimeError("Trying to backward through the graph a second time (or directly access saved "
                                   "tensors after they have already been freed). Specify retain_graph=True if you "
                                   "need to backward through the graph a second time.")
            for i, (t, version) in enumerate(zip(self.saved, self.versions)):
                if t is not None and t._version != version:
                    raise RuntimeError(f"one of the variables needed for gradient computation has been modified by "
                                       f"an inplace operation: saved tensor {i} is at version {t._version}; "
                                       f"expected version {version} instead")
            return self.saved

        def release(self):
            self.saved, self.versions, self.released = (), (), True

    def saved_bytes(output):
        if output.grad_fn is None:
            return 0
        counted, total = set(), 0
        for node in engine.topological_order([output.grad_fn]):
            for t in getattr(node, "saved_tensors", ()):
                if t is None:
                    continue
                array = t.detach().numpy()
                if id(array) not in counted:
                    counted.add(id(array))
                    total += array.nbytes
        return total

    return {"Context": Context, "Exp": RefExp, "Log": RefLog, "Sigmoid": RefSigmoid, "Tanh": RefTanh,
            "Mul": RefMul, "saved_bytes": saved_bytes}


# The mistakes the feedback names (issue 28), each by the name of its catalogued mutant: a phrase
# appears only for that mistake's results (tests/course/test_mutants.py: no mutant is told another's).
DIAGNOSES = {
    "no_version_check": "record each tensor's _version",
    "compares_with_version_zero": "not with 0",
    "error_without_versions": "name both versions",
    "saves_copies": "but a copy",
    "no_type_check": "raise TypeError for anything",
    "type_error_without_details": "say which argument and its type",
    "release_does_nothing": "still answered",
    "release_keeps_the_tensors": "your Context still holds it",
    "exp_saves_its_input": "Exp saved ['input'], expected ['output']: the derivative of exp is exp itself",
    "log_saves_its_output": "needs the input x",
    "sigmoid_saves_a_copy": "neither an input nor the output",
    "mul_swaps_the_gradients": "Mul's backward",
    "tanh_derivative_with_plus": "1 - y**2",
    "counts_shared_arrays_twice": "Count each array once",
    "assumes_8_bytes_per_element": "4 bytes, not 8",
    "exp_forward_in_place": "changed its input x",
}


STAGE = Stage(
    number="03",
    name="save_for_backward",
    title="save_for_backward: what backward needs, kept safely",
    parts={"context": ("Context",), "functions": FUNCTIONS, "saved_bytes": ("saved_bytes",)},
    checks=(
        Check("context_saves", 1, "saved_tensors gives back the very tensors saved, and needs_input_grad",
              probe_context_saves, judge_context_saves, part="context"),
        Check("context_type_error", 1, "TypeError, naming the argument and its type, for non-tensors",
              probe_context_type_error, judge_context_type_error, part="context"),
        Check("context_version", 2, "a saved tensor modified in place is refused, naming the versions",
              probe_context_version, judge_context_version, needs=("context_saves",), part="context"),
        Check("context_release", 1, "release() frees the tensors; reading them after raises about retain_graph",
              probe_context_release, judge_context_release, needs=("context_saves",), part="context"),
        Check("context_drives_backward", 1, "your Context inside minigrad's engine, with retain_graph",
              probe_context_drives_backward, judge_context_drives_backward, needs=("context_saves",),
              part="context"),
        Check("functions_gradients", 2, "Exp, Log, Sigmoid, Tanh and Mul: values and gradients",
              probe_functions_gradients, judge_functions_gradients, part="functions"),
        Check("functions_saved", 2, "each saves what its derivative needs: the input or the output",
              probe_functions_saved, judge_functions_saved, needs=("functions_gradients",), part="functions"),
        Check("saved_bytes_counts", 1, "the bytes a graph keeps for backward, each array once", probe_saved_bytes,
              judge_saved_bytes, part="saved_bytes"),
    ),
    reference=reference,
)
