"""Your autograd, end to end: run minigrad with the pieces you wrote in the worksheets.

    with minigrad.course.mine("my-course"):        # or: minigrad-course mine my-course
        model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
        ...                                       # every gradient comes from your code

Each worksheet rebuilds one piece of the core (``minigrad/core/``): stage 03 the ctx
and its saved tensors, 04 the order and the backward pass, 05 the Functions, 06
un-broadcasting, 07 the kernels, 08 the saved tensors' version check, 10 the
layers and optimizers, 11 the convolution, 12 GELU, LayerNorm, causal attention
and cross-entropy (so nanoGPT-style code on ``F.*`` runs on the learner's Functions). ``mine`` reads your worksheets, grades
each piece with the stage's own checks, and puts each piece that passes in place
of the shipped one for the duration of the block; a piece whose worksheet is
unsolved or fails a check stays shipped (being stuck never blocks), and the
table it prints says which is which. ``self_test`` then runs the core's checks on
the mix and names the piece whose code a failure came from.

What ``mine`` swaps is the learner's *gradients*: a learner's Function computes its
forward with minigrad's own ops (``x.exp()`` inside ``Exp.forward``), which run
shipped, as every forward runs without recording. The learner's backward pass
(stage 04) runs a plain ``backward()``; one with ``create_graph``, ``inputs`` or
several roots keeps the shipped engine, since the worksheet's engine does not do them.
"""
from __future__ import annotations

import contextlib
import functools
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

import minigrad
from minigrad.core import broadcast as _core_broadcast, differentiate as _core_differentiate
from minigrad.core import engine as _core_engine, function as _core_function
from minigrad.core.function import FunctionCtx
from minigrad.core.graph import SavedTensor
from minigrad.core.grad_mode import is_grad_enabled
from minigrad.core.tensor import Tensor


@dataclass(frozen=True)
class Piece:
    stage: str  # the worksheet's template key ("04_topological_backward")
    part: str  # the graded cell (grade_id) that holds it
    what: str  # what it is, for the table
    core: str  # what of the shipped library it replaces
    install: Callable[[dict, "_Patches"], None]
    shipped: tuple[str, ...] = ()  # the shipped code to read beside it: "module:qualname"


@dataclass
class Choice:
    piece: Piece
    yours: bool
    why: str  # for a shipped piece: unsolved, or the check it fails


class _Patches:
    """Attribute replacements, undone in reverse order."""

    def __init__(self) -> None:
        self._undo: list[tuple[object, str, object, bool]] = []

    def set(self, obj: object, name: str, value: object) -> None:
        had = name in vars(obj) if isinstance(obj, type) else hasattr(obj, name)
        self._undo.append((obj, name, getattr(obj, name, None), had))
        setattr(obj, name, value)

    def undo(self) -> None:
        for obj, name, old, had in reversed(self._undo):
            if had:
                setattr(obj, name, old)
            else:
                delattr(obj, name)
        self._undo.clear()


def _recording(*tensors) -> bool:
    """Whether a call on these would be recorded: only then does a learner's Function run (its forward
    calls minigrad's own op, which must not come back to it)."""
    return is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad for t in tensors)


def _unary(function: type, shipped: Callable) -> Callable:
    @functools.wraps(shipped)
    def method(self, *args, **kwargs):
        if args or kwargs or not _recording(self):
            return shipped(self, *args, **kwargs)
        return function.apply(self)
    return method


def _binary(function: type, shipped: Callable, reflected: bool = False, min_ndim: int = 0) -> Callable:
    @functools.wraps(shipped)
    def method(self, other, *args, **kwargs):
        if (args or kwargs or not isinstance(other, Tensor) or not _recording(self, other)
                or self._data.dtype.kind != "f" or other._data.dtype != self._data.dtype
                or min(self._data.ndim, other._data.ndim) < min_ndim):
            return shipped(self, other, *args, **kwargs)
        return function.apply(other, self) if reflected else function.apply(self, other)
    return method


# -- how each piece goes in ------------------------------------------------------------------------
def _install_context(ns: dict, patches: _Patches) -> None:
    Context = ns["Context"]
    shipped_saved = FunctionCtx.saved_tensors
    shipped_release = FunctionCtx.release_variables

    def save_for_backward(self, *tensors):
        ctx = Context(self.needs_input_grad)
        ctx.save_for_backward(*tensors)
        self.__dict__["_mine_ctx"] = ctx  # (a Function's node class has a __dict__)
        self._to_save = ()

    def saved_tensors(self):
        ctx = self.__dict__.get("_mine_ctx")
        return shipped_saved.fget(self) if ctx is None else tuple(ctx.saved_tensors)

    def release_variables(self):
        ctx = self.__dict__.get("_mine_ctx")
        if ctx is not None:
            ctx.release()
        shipped_release(self)

    patches.set(FunctionCtx, "save_for_backward", save_for_backward)
    patches.set(FunctionCtx, "saved_tensors", property(saved_tensors))
    patches.set(FunctionCtx, "release_variables", release_variables)


def _install_order(ns: dict, patches: _Patches) -> None:
    learner_order, shipped = ns["topological_order"], _core_engine.topological_order

    def order(roots):
        return learner_order(roots[0]) if len(roots) == 1 else shipped(roots)

    patches.set(_core_engine, "_order_function", order)
    patches.set(minigrad.autograd.engine, "topological_order", order)  # what the worksheets' engines call


def _install_run_backward(ns: dict, patches: _Patches) -> None:
    learner_run, shipped = ns["run_backward"], _core_differentiate.run_backward

    def run_backward(roots, root_grads, retain_graph, create_graph, inputs=(), accumulate=True):
        if len(roots) == 1 and roots[0][1] == 0 and not inputs and not create_graph:
            learner_run(roots[0][0], root_grads[0], retain_graph)
            return []
        return shipped(roots, root_grads, retain_graph, create_graph, inputs, accumulate)

    patches.set(_core_differentiate, "run_backward", run_backward)


def _install_unary(pairs: dict[str, str]) -> Callable[[dict, _Patches], None]:
    """``{"Exp": "exp"}``: the learner's Function ``Exp`` behind ``Tensor.exp`` (and ``F.<name>`` if any)."""
    def install(ns: dict, patches: _Patches) -> None:
        for cls_name, method in pairs.items():
            patches.set(Tensor, method, _unary(ns[cls_name], getattr(Tensor, method)))
            functional = minigrad.nn.functional
            if hasattr(functional, method):
                shipped_f = getattr(functional, method)
                patches.set(functional, method, functools.wraps(shipped_f)(
                    lambda input, *a, _m=method, _s=shipped_f, **k: getattr(Tensor, _m)(input) if not (a or k) else _s(input, *a, **k)))
    return install


def _install_linear_function(ns: dict, patches: _Patches) -> None:
    LinearFunction, shipped = ns["LinearFunction"], minigrad.nn.functional.linear

    def linear(input, weight, bias=None):
        if not _recording(input, weight, bias) or input._data.ndim != 2:
            return shipped(input, weight, bias)
        return LinearFunction.apply(input, weight, bias)

    patches.set(minigrad.nn.functional, "linear", linear)


def _install_unbroadcast(ns: dict, patches: _Patches) -> None:
    unbroadcast, shipped = ns["unbroadcast"], _core_broadcast.sum_to

    def sum_to(grad, shape):
        return unbroadcast(grad, tuple(shape)) if grad._data.shape != tuple(shape) else grad

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("minigrad.") and getattr(module, "sum_to", None) is shipped:
            patches.set(module, "sum_to", sum_to)


def _install_add_mul(ns: dict, patches: _Patches) -> None:
    for cls_name, names in (("BroadcastAdd", ("__add__", "add")), ("BroadcastMul", ("__mul__", "mul"))):
        for name in names:
            patches.set(Tensor, name, _binary(ns[cls_name], getattr(Tensor, name)))
        reflected = names[0].replace("__", "__r", 1)
        patches.set(Tensor, reflected, _binary(ns[cls_name], getattr(Tensor, reflected), reflected=True))


def _install_matmul(ns: dict, patches: _Patches) -> None:
    for name in ("__matmul__", "matmul"):
        patches.set(Tensor, name, _binary(ns["BatchedMatMul"], getattr(Tensor, name), min_ndim=2))


def _cross_entropy_with(function_name: str) -> Callable[[dict, _Patches], None]:
    """The learner's cross-entropy Function behind ``F.cross_entropy`` for 2-D logits and 1-D integer targets
    with no other argument (what the worksheets' Functions take); anything else stays shipped."""
    def install(ns: dict, patches: _Patches) -> None:
        CrossEntropy, shipped = ns[function_name], minigrad.nn.functional.cross_entropy

        def cross_entropy(input, target, *args, **kwargs):
            if (args or kwargs or not _recording(input) or input._data.ndim != 2 or target._data.ndim != 1
                    or target._data.dtype.kind not in "iu"):
                return shipped(input, target, *args, **kwargs)
            return CrossEntropy.apply(input, target)

        patches.set(minigrad.nn.functional, "cross_entropy", cross_entropy)
    return install


def _install_kernel_functions(ns: dict, patches: _Patches) -> None:
    patches.set(Tensor, "sigmoid", _unary(ns["Sigmoid"], getattr(Tensor, "sigmoid")))
    _cross_entropy_with("CrossEntropy")(ns, patches)


def _install_saved_value(ns: dict, patches: _Patches) -> None:
    SavedValue = ns["SavedValue"]
    # the class core/function.py's _record packs saved tensors with (a SavedTensor, with PyTorch's refusals)
    name = next(n for n, v in vars(_core_function).items() if isinstance(v, type) and issubclass(v, SavedTensor))
    shipped = getattr(_core_function, name)

    class YourSavedTensor(shipped):
        __slots__ = ("yours",)

        def __init__(self, tensor, output_nr):
            super().__init__(tensor, output_nr)
            self.yours = SavedValue(tensor) if output_nr is None and self.unpack_hook is None else None

        def unpack(self, node):
            return super().unpack(node) if self.yours is None else self.yours.unpack()

    patches.set(_core_function, name, YourSavedTensor)


def _install_class(module: Callable[[], object], name: str, learner_name: str) -> Callable[[dict, _Patches], None]:
    def install(ns: dict, patches: _Patches) -> None:
        patches.set(module(), name, ns[learner_name])
    return install


def _install_conv(ns: dict, patches: _Patches) -> None:
    Conv2dFunction, shipped = ns["Conv2dFunction"], minigrad.nn.functional.conv2d

    def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        if (dilation != 1 or groups != 1 or not isinstance(stride, int) or not isinstance(padding, int)
                or not _recording(input, weight, bias)):
            return shipped(input, weight, bias, stride, padding, dilation, groups)
        return Conv2dFunction.apply(input, weight, bias, stride, padding)

    patches.set(minigrad.nn.functional, "conv2d", conv2d)
    patches.set(minigrad.nn, "Conv2d", ns["Conv2d"])


def _install_gelu(ns: dict, patches: _Patches) -> None:
    GELU, shipped = ns["GELUFunction"], minigrad.nn.functional.gelu

    def gelu(input, approximate="none"):
        if approximate != "tanh" or not _recording(input):  # the worksheet's GELU is the tanh formula
            return shipped(input, approximate)
        return GELU.apply(input)

    patches.set(minigrad.nn.functional, "gelu", gelu)


def _install_layer_norm(ns: dict, patches: _Patches) -> None:
    LayerNormFunction, shipped = ns["LayerNormFunction"], minigrad.nn.functional.layer_norm

    def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if len(shape) != 1 or weight is None or bias is None or not _recording(input, weight, bias):
            return shipped(input, normalized_shape, weight, bias, eps)
        return LayerNormFunction.apply(input, weight, bias, eps)

    patches.set(minigrad.nn.functional, "layer_norm", layer_norm)


def _install_attention(ns: dict, patches: _Patches) -> None:
    Attention, shipped = ns["CausalAttentionFunction"], minigrad.nn.functional.scaled_dot_product_attention

    def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *,
                                     scale=None, enable_gqa=False):
        if (attn_mask is not None or dropout_p or not is_causal or scale is not None or enable_gqa
                or query.shape != key.shape or not _recording(query, key, value)):
            return shipped(query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa)
        return Attention.apply(query, key, value)

    patches.set(minigrad.nn.functional, "scaled_dot_product_attention", scaled_dot_product_attention)


PIECES: tuple[Piece, ...] = (
    Piece("03_save_for_backward", "context", "the ctx and its saved tensors",
          "core/function.py: FunctionCtx.save_for_backward, saved_tensors", _install_context,
          ("minigrad.core.function:FunctionCtx.save_for_backward", "minigrad.core.function:FunctionCtx.saved_tensors")),
    Piece("04_topological_backward", "topological_order", "the topological order",
          "core/engine.py: topological_order", _install_order,
          ("minigrad.core.engine:topological_order",)),
    Piece("04_topological_backward", "run_backward", "the backward pass",
          "core/engine.py: run_backward", _install_run_backward,
          ("minigrad.core.engine:run_backward",)),
    Piece("05_custom_functions", "exp_sigmoid", "exp and sigmoid", "Tensor.exp, Tensor.sigmoid",
          _install_unary({"Exp": "exp", "Sigmoid": "sigmoid"}),
          ("minigrad.ops.exp_log:Exp", "minigrad.ops.activations:Sigmoid")),
    Piece("05_custom_functions", "relu", "relu", "Tensor.relu, F.relu (nn.ReLU)", _install_unary({"ReLU": "relu"}),
          ("minigrad.ops.activations:Relu",)),
    Piece("05_custom_functions", "linear", "the linear layer's Function", "F.linear (nn.Linear)",
          _install_linear_function, ("minigrad.nn.ops.linear:Linear",)),
    Piece("06_broadcasting", "unbroadcast", "un-broadcasting", "core/broadcast.py: sum_to", _install_unbroadcast,
          ("minigrad.core.broadcast:sum_to",)),
    Piece("06_broadcasting", "add_mul", "+ and * with broadcasting", "Tensor.__add__, __mul__", _install_add_mul,
          ("minigrad.ops.elementwise:Add", "minigrad.ops.elementwise:Mul")),
    Piece("06_broadcasting", "batched_matmul", "batched matmul", "Tensor.__matmul__", _install_matmul,
          ("minigrad.ops.matmul:MatMul",)),
    Piece("07_numba", "functions", "sigmoid and cross-entropy on your kernels", "Tensor.sigmoid, F.cross_entropy",
          _install_kernel_functions, ("minigrad.ops.activations:Sigmoid",)),
    Piece("08_inplace_and_hooks", "saved_value", "the saved tensors' version check",
          "core/graph.py: SavedTensor.unpack", _install_saved_value,
          ("minigrad.core.graph:SavedTensor",)),
    Piece("10_nn_and_optim", "linear", "the Linear layer", "nn.Linear",
          _install_class(lambda: minigrad.nn, "Linear", "Linear"),
          ("minigrad.nn.modules.linear:Linear",)),
    Piece("10_nn_and_optim", "sgd", "SGD", "optim.SGD", _install_class(lambda: minigrad.optim, "SGD", "SGD"),
          ("minigrad.optim.sgd:SGD",)),
    Piece("10_nn_and_optim", "adam", "Adam", "optim.Adam", _install_class(lambda: minigrad.optim, "Adam", "Adam"),
          ("minigrad.optim.adam:Adam",)),
    Piece("11_cnn", "conv_module", "the convolution", "F.conv2d, nn.Conv2d", _install_conv,
          ("minigrad.nn.ops.conv:Conv2d",)),
    Piece("12_attention", "gelu", "GELU (tanh)", "F.gelu(approximate='tanh'), nn.GELU('tanh')", _install_gelu,
          ("minigrad.nn.functional:gelu",)),
    Piece("12_attention", "layer_norm", "LayerNorm", "F.layer_norm (nn.LayerNorm)", _install_layer_norm,
          ("minigrad.nn.functional:layer_norm",)),
    Piece("12_attention", "attention", "causal attention", "F.scaled_dot_product_attention(is_causal=True)",
          _install_attention, ("minigrad.nn.functional:scaled_dot_product_attention",)),
    Piece("12_attention", "cross_entropy", "cross-entropy", "F.cross_entropy", _cross_entropy_with("CrossEntropyFunction"),
          ("minigrad.nn.functional:cross_entropy",)),
)


# -- reading the worksheets ------------------------------------------------------------------------
def _worksheet(course: Path, key: str) -> Path | None:
    for folder in (course / "exercises", course):
        if (folder / f"{key}.ipynb").is_file():
            return folder / f"{key}.ipynb"
    return None


def choose(course: str | Path, pieces: tuple[Piece, ...] = PIECES) -> tuple[list[Choice], dict[str, dict]]:
    """Grade each worksheet once and decide, piece by piece, whose code runs; also the namespaces."""
    from minigrad.course.checks import run_stage
    from minigrad.course.grading.grader import find_templates, load_templates
    from minigrad.course.program import execute_program, learner_program, load_notebook

    course = Path(course)
    templates = load_templates(find_templates())
    namespaces: dict[str, dict] = {}
    passed: dict[str, dict[str, str | None]] = {}  # stage -> part -> None (passed) or why not
    for key in dict.fromkeys(piece.stage for piece in pieces):
        path = _worksheet(course, key)
        if path is None or key not in templates:
            passed[key] = {}
            continue
        stage, template = templates[key]
        with _quiet():
            program = learner_program(template, load_notebook(path))[0]
            namespace, _ = execute_program(program)
            report = run_stage(stage, namespace)
        namespaces[key] = namespace
        verdicts: dict[str, str | None] = {}
        for check, result in zip(stage.checks, report.results):  # unsolved, else its first failed check
            if result.status == "not_implemented":
                verdicts[check.part] = "unsolved"
            elif result.status != "passed" and verdicts.get(check.part) is None:
                verdicts[check.part] = f"fails its check '{check.id}'"
            else:
                verdicts.setdefault(check.part, None)
        passed[key] = verdicts
    choices = []
    for piece in pieces:
        verdict = passed[piece.stage].get(piece.part, "no worksheet" if not passed[piece.stage] else "no check")
        choices.append(Choice(piece, verdict is None, verdict or ""))
    return choices, namespaces


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Worksheets print and warn as they run; the table is what ``mine`` shows."""
    import io
    import warnings

    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def table(choices: list[Choice]) -> str:
    rows = [f"{'stage':<24} {'piece':<42} {'running':<8} replaces"]
    for c in choices:
        whose = "yours" if c.yours else "shipped"
        note = c.piece.core if c.yours else f"{c.piece.core} ({c.why})"
        rows.append(f"{c.piece.stage:<24} {c.piece.what:<42} {whose:<8} {note}")
    return "\n".join(rows)


class Mix:
    """The pieces of yours that are in place, with what undoes them."""

    def __init__(self, choices: list[Choice], namespaces: dict[str, dict]) -> None:
        self.choices, self.namespaces, self._patches = choices, namespaces, _Patches()

    def install(self, leave_out: Piece | None = None) -> None:
        self._patches.undo()
        for choice in self.choices:
            if choice.yours and choice.piece is not leave_out:
                choice.piece.install(self.namespaces[choice.piece.stage], self._patches)

    def undo(self) -> None:
        self._patches.undo()


@contextlib.contextmanager
def mine(course: str | Path = ".", verbose: bool = True) -> Iterator[Mix]:
    """Run the block with every piece of yours that passes its checks in place of the shipped one."""
    choices, namespaces = choose(course)
    if verbose:
        print(table(choices))
    mix = Mix(choices, namespaces)
    try:
        mix.install()
        yield mix
    finally:
        mix.undo()


# -- the core's checks, run on the mix -------------------------------------------------------------
def _double(*shape, requires_grad=True, positive=False):
    array = np.random.default_rng(sum(shape) + 7).standard_normal(shape)
    return minigrad.tensor(np.abs(array) + 0.5 if positive else array, dtype=minigrad.float64,
                           requires_grad=requires_grad)


def _gradcheck(fn, *inputs) -> None:
    if not minigrad.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4, raise_exception=False):
        raise AssertionError("the gradient differs from finite differences")


def _check_diamond() -> None:
    a = minigrad.tensor([1.5, -2.0], requires_grad=True)
    h = a.exp()
    ((h * 3.0) + (h * 4.0) + h * h).sum().backward()
    expected = (7 + 2 * np.exp(a.detach().numpy())) * np.exp(a.detach().numpy())
    if not np.allclose(a.grad.numpy(), expected, rtol=1e-5):
        raise AssertionError(f"a diamond's gradient is {a.grad.tolist()}, expected {expected.tolist()}")


def _check_version() -> None:
    x = _double(3)
    y = x.exp()
    z = (y * y).sum()
    with minigrad.no_grad():
        y.mul_(2.0)
    try:
        z.backward()
    except RuntimeError:
        return
    raise AssertionError("a saved tensor changed in place after it was saved, and backward did not refuse it")


def _check_training() -> None:
    minigrad.manual_seed(0)
    model = minigrad.nn.Sequential(minigrad.nn.Linear(4, 8), minigrad.nn.ReLU(), minigrad.nn.Linear(8, 3))
    x, y = minigrad.randn(32, 4), minigrad.tensor(np.arange(32) % 3)
    opt = minigrad.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = minigrad.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if not losses[-1] < 0.7 * losses[0]:
        raise AssertionError(f"a small network did not learn: loss {losses[0]:.3f} -> {losses[-1]:.3f}")


SELF_TESTS: tuple[tuple[str, Callable[[], None]], ...] = (
    ("exp, sigmoid, relu and tanh match finite differences",
     lambda: _gradcheck(lambda x: (x.exp() + x.sigmoid() * x.relu()).tanh(), _double(5))),
    ("+ and * broadcast their gradients back",
     lambda: _gradcheck(lambda a, b: a * b + b, _double(3, 1), _double(4))),
    ("batched matmul", lambda: _gradcheck(lambda a, b: a @ b, _double(2, 3, 4), _double(4, 5))),
    ("a linear layer", lambda: _gradcheck(minigrad.nn.functional.linear, _double(3, 4), _double(2, 4), _double(2))),
    ("cross-entropy", lambda: _gradcheck(
        lambda z: minigrad.nn.functional.cross_entropy(z, minigrad.tensor([0, 2, 1])), _double(3, 4))),
    ("conv2d", lambda: _gradcheck(lambda x, w: minigrad.nn.functional.conv2d(x, w, None, 1, 1),
                                  _double(1, 2, 4, 4), _double(3, 2, 3, 3))),
    ("GELU, LayerNorm and causal attention", lambda: _gradcheck(
        lambda x, w, b: minigrad.nn.functional.scaled_dot_product_attention(
            *(minigrad.nn.functional.gelu(minigrad.nn.functional.layer_norm(x, (4,), w, b), approximate="tanh"),) * 3,
            is_causal=True), _double(2, 3, 4), _double(4), _double(4))),
    ("a tensor used several times (a diamond)", _check_diamond),
    ("a saved tensor changed in place is refused", _check_version),
    ("a small network trains", _check_training),
)


def self_test(mix: Mix) -> list[tuple[str, str | None, str | None]]:
    """Run the core's checks on the mix: ``(check, failure or None, the piece it came from or None)``."""
    results = []
    for name, test in SELF_TESTS:
        error = _run(test)
        culprit = None if error is None else _culprit(error, mix, test)
        results.append((name, None if error is None else f"{type(error).__name__}: {str(error)[:200]}", culprit))
    return results


def _run(test: Callable[[], None]) -> Exception | None:
    try:
        with _quiet():
            test()
    except Exception as error:  # noqa: BLE001 - a learner's piece may raise anything
        return error
    return None


def _culprit(error: BaseException, mix: Mix, test: Callable[[], None]) -> str | None:
    """The piece a failure came from: the innermost frame of a learner's cell in its traceback (worksheet
    cells run from files named after their grade_id: ``program.cell_file``); for a wrong value, which no
    frame shows, the one piece of yours whose shipped twin makes the check pass. None: shipped code."""
    from minigrad.course.program import cell_key

    yours = [c.piece for c in mix.choices if c.yours]
    by_part = {piece.part: piece for piece in yours}
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        piece = by_part.get(cell_key(frame.filename))
        if piece is not None:
            return f"{piece.stage} / {piece.part} ({piece.what}), line {frame.lineno}: {frame.line}"
    try:
        for piece in yours:
            mix.install(leave_out=piece)
            if _run(test) is None:
                return f"{piece.stage} / {piece.part} ({piece.what}): the check passes with the shipped one"
    finally:
        mix.install()
    return None


def main(course: str = ".") -> int:
    """``minigrad-course mine [COURSE_DIR]``: the table, then the core's checks on the mix."""
    with mine(course) as mix:
        results, choices = self_test(mix), mix.choices
    print()
    failed = 0
    for name, failure, culprit in results:
        print(f"{'ok' if failure is None else 'FAIL':<5} {name}")
        if failure is not None:
            failed += 1
            print(f"      {failure}")
            print(f"      from {culprit or 'shipped code (no line of yours was running)'}")
    yours = sum(c.yours for c in choices)
    print(f"\n{yours} of {len(choices)} pieces are yours; {len(results) - failed} of {len(results)} checks pass.")
    return 1 if failed else 0


# -- yours beside the shipped one ------------------------------------------------------------------
def _shipped_source(target: str) -> str:
    import importlib
    import inspect

    module_name, qualname = target.split(":")
    obj = importlib.import_module(module_name)
    for name in qualname.split("."):
        obj = getattr(obj, name)
    if isinstance(obj, property):
        obj = obj.fget
    return inspect.getsource(obj)


def side_by_side(part: str, namespace: dict | None = None, stage: str | None = None):
    """Your code for a worksheet's ``part`` beside the shipped code it rebuilds (call it once the part
    passes: ``side_by_side("run_backward")``). In a notebook, two columns; elsewhere, the text."""
    import inspect

    from minigrad.course.stages import get_stage

    if namespace is None:
        namespace = inspect.currentframe().f_back.f_globals
    pieces = [p for p in PIECES if p.part == part and (stage is None or p.stage.startswith(stage))]
    if len(pieces) != 1:
        known = ", ".join(sorted({p.part for p in PIECES}))
        raise ValueError(f"no single core piece is the part {part!r}" + (f" of stage {stage}" if stage else "")
                         + f": pass one of {known} (and stage= if two stages share the name)")
    piece = pieces[0]
    names = get_stage(piece.stage).parts[part]
    yours_text = "\n\n".join(_learner_source(namespace.get(name), name) for name in names)
    shipped_text = "\n\n".join(_shipped_source(target) for target in piece.shipped)
    title = f"{piece.what}: yours | shipped ({piece.core})"
    try:
        from IPython import get_ipython
        from IPython.display import HTML
    except ImportError:
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        return f"{title}\n--- yours\n{yours_text}\n--- shipped\n{shipped_text}"
    import html

    column = ("<div style='flex:1;min-width:0'><b>{}</b><pre style='white-space:pre-wrap;font-size:12px'>{}</pre>"
              "</div>")
    return HTML(f"<div><b>{html.escape(title)}</b><div style='display:flex;gap:12px'>"
                + column.format("yours", html.escape(yours_text)) + column.format("shipped", html.escape(shipped_text))
                + "</div></div>")


def _learner_source(obj, name: str) -> str:
    import inspect

    if obj is None:
        return f"# {name}: not defined yet"
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        pass
    if isinstance(obj, type):  # a class defined in a notebook cell: its methods' sources, which IPython keeps
        methods = []
        for value in vars(obj).values():
            function = getattr(value, "__func__", getattr(value, "fget", value))
            try:
                methods.append(inspect.getsource(function))
            except (OSError, TypeError):
                continue
        if methods:
            return f"class {obj.__name__}(...):\n" + "\n".join(methods)
    return f"# {name}: its source is not available (run its cell again)"
