"""Run one program (a list of steps, see ``program.py``) with minigrad or torch, and compare.

The interpreter is written once, against the API both libraries share, and takes
the library module as a parameter: both runs execute exactly the same Python.
What a run produces is a *trace*, a list of events in the order they happened:

- ``("val", step, slot, dtype, shape, requires_grad, is_leaf, values)`` for every
  live slot after every step (so a change through a view shows up at once);
- ``("grad", step, slot, warned, grad)`` for every slot after each backward and at
  the end (``warned``: reading ``.grad`` gave the non-leaf warning);
- ``("hook", step, hook_step, grad)``, ``("prehook" | "posthook", ...)`` and
  ``("fbw", step, function, grads)`` in the order backward called them;
- ``("raise", step, exception_type)``: the step raised, and the run stops there;
- ``("unspecified", step)`` (torch runs only): the step's result depends on the order torch's loop
  visits the elements, or the step hit one of torch's internal assertions (a bug in torch, not a
  semantics to copy), so there is nothing to compare with; the run stops there.

Two traces must be equal event by event; float arrays are compared with a
tolerance derived from float64's epsilon and the program's size.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Sequence

import numpy as np

Step = tuple
Program = Sequence[Step]

# The program's step currently running, and its event list: read by the hooks and
# by the backward of the custom Functions, which cannot take extra arguments.
_current: dict[str, Any] = {"step": -1, "events": None}


# -- data ---------------------------------------------------------------------------------------------
def leaf_values(shape: tuple, seed: int, kind: str) -> np.ndarray:
    """The values of a leaf: random normals (float64, or float32 to check type promotion), or
    small integers (zeros and ties) for edge cases."""
    rng = np.random.default_rng(seed)
    if kind == "int":
        return rng.integers(-2, 3, size=shape).astype(np.float64)
    if kind == "float32":
        return rng.standard_normal(shape).astype(np.float32)
    return rng.standard_normal(shape)


def weights(shape: tuple, seed: int) -> np.ndarray:
    """The gradient a backward step starts from: float64 even for a float32 output (torch casts it)."""
    return np.random.default_rng(seed + 7919).standard_normal(shape)


def mask(shape: tuple, seed: int) -> np.ndarray:
    return np.random.default_rng(seed + 104729).random(shape) < 0.5


def _array(t) -> np.ndarray:
    t = t.detach()
    if getattr(t, "_is_zerotensor", lambda: False)():
        # torch's lazily materialized zeros (e.g. abs's second derivative) refuse numpy() without force=
        return np.zeros(tuple(t.shape), dtype=_dtype_name(t))
    return np.array(t.numpy(), copy=True)


def _dtype_name(t) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


# -- the op tables (names -> code written against the shared API) ------------------------------------
# Ops with a restricted domain get their input mapped into it, the same way in both libraries.
UNARY = {
    "neg": lambda t: -t,
    "exp": lambda t: t.exp(),
    "tanh": lambda t: t.tanh(),
    "sigmoid": lambda t: t.sigmoid(),
    "relu": lambda t: t.relu(),
    "abs": lambda t: t.abs(),
    "log": lambda t: (t.abs() + 0.5).log(),
    "sqrt": lambda t: (t.abs() + 0.5).sqrt(),
    "clamp": lambda t: t.clamp(-0.5, 1.0),
    "clamp_min": lambda t: t.clamp(min=0.0),
    "square": lambda t: t ** 2,
    "cube": lambda t: t ** 3,
    "pow_half": lambda t: (t.abs() + 0.5) ** 0.5,
    "rpow": lambda t: 2.0 ** t,
    "rsub": lambda t: 1.0 - t,
    "rdiv": lambda t: 1.0 / (t.abs() + 0.5),
    "scale": lambda t: t * 1.5,
    "shift": lambda t: t + 0.25,
    "sin": lambda t: t.sin(),
    "cos": lambda t: t.cos(),
    "tan": lambda t: (t * 0.5).tan(),
    "sinh": lambda t: t.sinh(),
    "cosh": lambda t: t.cosh(),
    "log1p": lambda t: t.abs().log1p(),
    "expm1": lambda t: t.expm1(),
    "sign": lambda t: t.sign(),
}
# The Tensor methods each entry needs: an op is generated only once minigrad has them.
UNARY_NEEDS = {"sin": ("sin",), "cos": ("cos",), "tan": ("tan",), "sinh": ("sinh",), "cosh": ("cosh",),
               "log1p": ("log1p",), "expm1": ("expm1",), "sign": ("sign",)}

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b,
    "maximum": lambda a, b: a.maximum(b),
    "matmul": lambda a, b: a @ b,
    "mm": lambda a, b: a.mm(b),
    "mv": lambda a, b: a.mv(b),
    "bmm": lambda a, b: a.bmm(b),
}

INPLACE = {
    "add_": lambda t, o: t.add_(o),
    "sub_": lambda t, o: t.sub_(o),
    "mul_": lambda t, o: t.mul_(o),
    "div_": lambda t, o: t.div_(o),
    "copy_": lambda t, o: t.copy_(o),
    "zero_": lambda t, o: t.zero_(),
    "fill_": lambda t, o: t.fill_(o),
    "clamp_": lambda t, o: t.clamp_(-0.5, 1.0),
    "iadd": lambda t, o: t.__iadd__(o),
    # In-place ops with no operand whose backward reads the values they overwrite (or their result).
    "exp_": lambda t, o: t.exp_(),
    "neg_": lambda t, o: t.neg_(),
    "sigmoid_": lambda t, o: t.sigmoid_(),
    "tanh_": lambda t, o: t.tanh_(),
    "relu_": lambda t, o: t.relu_(),
    "abs_": lambda t, o: t.abs_(),
}
INPLACE_NO_OPERAND = {"zero_", "clamp_", "exp_", "neg_", "sigmoid_", "tanh_", "relu_", "abs_"}

# Activations of ``nn.functional`` (``F``), applied like the unary ops.
FUNCTIONAL = {
    "gelu": lambda F, t: F.gelu(t),
    "gelu_tanh": lambda F, t: F.gelu(t, approximate="tanh"),
    "silu": lambda F, t: F.silu(t),
    "leaky_relu": lambda F, t: F.leaky_relu(t, 0.1),
    "elu": lambda F, t: F.elu(t),
    "softplus": lambda F, t: F.softplus(t, beta=2.0),
}

# Losses of ``nn.functional`` on an input and a target of the same shape.
LOSSES = {
    "mse_loss": lambda F, a, b, r: F.mse_loss(a, b, reduction=r),
    "l1_loss": lambda F, a, b, r: F.l1_loss(a, b, reduction=r),
    "smooth_l1_loss": lambda F, a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.5),
    "huber_loss": lambda F, a, b, r: F.huber_loss(a, b, reduction=r, delta=1.5),
    "bce_with_logits": lambda F, a, b, r: F.binary_cross_entropy_with_logits(a, b.sigmoid(), reduction=r),
}


def _reduce(lib, op: str, t, dim, keepdim: bool) -> list:
    """The reduction ``op``; a list because max/min over a dim also return indices."""
    if op in ("sum", "mean"):
        return [getattr(t, op)() if dim is None else getattr(t, op)(dim, keepdim=keepdim)]
    if op in ("max", "min"):
        if dim is None:
            return [getattr(t, op)()]
        values, indices = getattr(t, op)(dim, keepdim=keepdim)
        return [values, indices]
    if op in ("softmax", "log_softmax", "cumsum"):
        return [getattr(t, op)(dim)]
    if op in ("logsumexp",):
        return [t.logsumexp(dim, keepdim=keepdim)]
    if op in ("prod",):
        return [t.prod() if dim is None else t.prod(dim, keepdim=keepdim)]
    if op == "norm":
        return [t.norm() if dim is None else t.norm(2, dim, keepdim=keepdim)]
    if op == "norm1":
        return [t.norm(1, dim, keepdim=keepdim)]
    if op in ("std", "var"):
        return [getattr(t, op)() if dim is None else getattr(t, op)(dim, keepdim=keepdim)]
    if op in ("std0", "var0"):  # the population statistic: correction=0
        return [getattr(t, op[:-1])(dim, keepdim=keepdim, correction=0)]
    if op in ("var_mean", "std_mean"):  # two outputs of one node: (the spread, the mean)
        return list(getattr(lib, op)(t) if dim is None else getattr(lib, op)(t, dim, keepdim=keepdim))
    if op in ("sort", "sort_descending"):  # stable, so ties (integer leaves) give the same indices
        # (torch's overload with stable= takes dim only by keyword)
        values, indices = t.sort(dim=dim, descending=op == "sort_descending", stable=True)
        return [values, indices]
    raise ValueError(f"unknown reduction {op!r}")


def _shape_op(lib, op: str, t, args: tuple):
    """Ops that move or select values: ``args`` as the step carries them, masks and index lists built here."""
    if op == "masked_fill":
        seed, value = args
        return t.masked_fill(lib.tensor(mask(tuple(t.shape), seed)), value)
    if op == "index_select":
        dim, index = args
        return t.index_select(dim, lib.tensor(list(index), dtype=lib.int64))
    if op == "gather":
        dim, seed, index_shape = args
        size = t.shape[dim]
        index = np.random.default_rng(seed).integers(0, size, size=index_shape)
        return t.gather(dim, lib.tensor(index, dtype=lib.int64))
    return getattr(t, op)(*args)


def _view(op: str, t, args: tuple):
    if op == "T":
        return t.T
    if op == "flatten":
        return t.flatten()
    if op == "squeeze":
        return t.squeeze() if args == () else t.squeeze(*args)
    return getattr(t, op)(*args)


def _key(lib, key: tuple, shape: tuple) -> tuple:
    """Turn an encoded index into one the library takes (lists and tensors are built here)."""
    out = []
    for part in key:
        if isinstance(part, tuple) and part and part[0] == "list":
            out.append(list(part[1]))
        elif isinstance(part, tuple) and part and part[0] == "t0":
            out.append(lib.tensor(part[1]))
        elif isinstance(part, tuple) and part and part[0] == "mask":
            out.append(lib.tensor(mask(shape, part[1])))
        else:
            out.append(part)
    return tuple(out)


# -- custom Functions, built once per library ----------------------------------------------------------
def _log_backward(name: str, grads: tuple) -> None:
    _current["events"].append(
        ("fbw", _current["step"], name, tuple(None if g is None else _array(g) for g in grads))
    )


@functools.lru_cache(maxsize=None)
def functions(lib) -> dict:
    """The custom Functions the programs call: each exercises one part of the ctx API."""
    Function = lib.autograd.Function

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            _log_backward("Square", (g,))
            x, = ctx.saved_tensors
            return 2 * x * g

    class MulConst(Function):  # a non-tensor argument, which gets a None gradient
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            _log_backward("MulConst", (g,))
            return g * ctx.k, None

    class DirtyMul(Function):  # modifies its input in place
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            _log_backward("DirtyMul", (g,))
            return g * 2

    class ExpNonDiff(Function):  # a second output marked non-differentiable
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            y = x.exp()
            z = x * 3
            ctx.mark_non_differentiable(z)
            ctx.save_for_backward(y)
            return y, z

        @staticmethod
        def backward(ctx, gy, gz):
            _log_backward("ExpNonDiff", (gy, gz))
            y, = ctx.saved_tensors
            return (None if gy is None else gy * y), None

    class TwoOut(Function):  # an output that may get no gradient (materialized or None)
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            _log_backward("TwoOut", (g1, g2))
            grad = None
            if g1 is not None:
                grad = g1 * 2
            if g2 is not None:
                grad = g2 * 3 if grad is None else grad + g2 * 3
            return grad, None

    class NoneGrad(Function):  # returns None for an input that needs a gradient
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            _log_backward("NoneGrad", (g,))
            x, y = ctx.saved_tensors
            return g * y, None

    class Ident(Function):  # returns its input as-is
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            _log_backward("Ident", (g,))
            return g

    class NonTensorOut(Function):  # a Python number among the outputs
        @staticmethod
        def forward(ctx, x):
            return x * 2, 7

        @staticmethod
        def backward(ctx, g, g_int):
            _log_backward("NonTensorOut", (g, g_int))
            return g * 2

    class TempView(Function):  # returns a view of a temporary it changed in place
        @staticmethod
        def forward(ctx, x):
            tmp = x.clone()
            view = tmp[...]
            view.mul_(2)
            return view

        @staticmethod
        def backward(ctx, g):
            _log_backward("TempView", (g,))
            return g * 2

    class Defaults(Function):  # setup_context style, with a default argument setup_context must see
        @staticmethod
        def forward(x, k=3.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            _log_backward("Defaults", (g,))
            return g * ctx.k, None

    return {f.__name__: f for f in (Square, MulConst, DirtyMul, ExpNonDiff, TwoOut, NoneGrad, Ident, NonTensorOut,
                                    TempView, Defaults)}


# Arity of each Function in tensors, then the extra (non-tensor) arguments the step carries.
FUNCTION_ARITY = {"Square": 1, "MulConst": 1, "DirtyMul": 1, "ExpNonDiff": 1, "TwoOut": 1,
                  "NoneGrad": 2, "Ident": 1, "NonTensorOut": 1, "TempView": 1, "Defaults": 1}


# -- grad modes, as decorators of a function or a generator -----------------------------------------------
def _modes(lib) -> dict:
    return {"no_grad": lib.no_grad, "enable_grad": lib.enable_grad, "inference_mode": lib.inference_mode,
            "set_grad_enabled": lambda: lib.set_grad_enabled(False)}


def _mode_call(lib, mode: str, generator: bool, op: str, t):
    """``UNARY[op](t)`` inside a function (or a generator, resumed once) decorated with the grad mode; it
    logs whether recording was on inside and whether the result is an inference tensor."""
    decorate = _modes(lib)[mode]()

    if generator:
        @decorate
        def body(x):
            yield lib.is_grad_enabled(), UNARY[op](x)
        enabled, out = next(body(t))
    else:
        @decorate
        def body(x):
            return lib.is_grad_enabled(), UNARY[op](x)
        enabled, out = body(t)
    _current["events"].append(("mode", _current["step"], enabled, lib.is_grad_enabled(), out.is_inference()))
    return out


def _post_accumulate_hook(hook_step: int, scale):
    """A post-accumulate-grad hook that reads ``.grad`` (and, with ``scale``, changes it in place)."""
    def hook(t):
        _current["events"].append(("post_acc", _current["step"], hook_step, _array(t.grad)))
        if scale is not None:
            t.grad.mul_(scale)
    return hook


def _legacy_leaf(lib, values: np.ndarray, requires_grad: bool, how: str):
    if how == "Variable":
        return lib.autograd.Variable(lib.tensor(values), requires_grad=requires_grad)
    typed = {"float64": lib.DoubleTensor, "float32": lib.FloatTensor, "int64": lib.LongTensor}[values.dtype.name]
    out = typed(values.tolist())
    assert isinstance(out, typed) and not isinstance(out, lib.BoolTensor)
    return out.requires_grad_(requires_grad)


# -- hooks -----------------------------------------------------------------------------------------------
def _tensor_hook(hook_step: int, scale):
    def hook(g):
        # torch calls the hooks of an input that a custom backward gave None, with None.
        _current["events"].append(("hook", _current["step"], hook_step, None if g is None else _array(g)))
        return None if scale is None or g is None else g * scale
    return hook


def _prehook(hook_step: int, scale):
    def hook(grad_outputs):
        _current["events"].append(("prehook", _current["step"], hook_step,
                                   tuple(None if g is None else _array(g) for g in grad_outputs)))
        if scale is None:
            return None
        return tuple(None if g is None else g * scale for g in grad_outputs)
    return hook


def _posthook(hook_step: int, scale):
    def hook(grad_inputs, grad_outputs):
        _current["events"].append(("posthook", _current["step"], hook_step,
                                   tuple(None if g is None else _array(g) for g in grad_inputs)))
        if scale is None:
            return None
        return tuple(None if g is None else g * scale for g in grad_inputs)
    return hook


# -- running -------------------------------------------------------------------------------------------
def _attempt(read):
    """``read()``, or the exception's type: torch checks some views lazily, when their history is read."""
    try:
        return read()
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return ("raises", _exception_name(e))


def _observe_values(events: list, i: int, env: list) -> None:
    for slot, t in enumerate(env):
        if t is None:
            events.append(("val", i, slot, None))
        else:
            events.append(("val", i, slot, _dtype_name(t), tuple(t.shape), _attempt(lambda: bool(t.requires_grad)),
                           _attempt(lambda: bool(t.is_leaf)), _array(t)))


def _observe_grads(events: list, i: int, env: list) -> None:
    for slot, t in enumerate(env):
        if t is None:
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            g = _attempt(lambda: t.grad)
        warned = any("not a leaf" in str(w.message) for w in caught)
        events.append(("grad", i, slot, warned, g if g is None or isinstance(g, tuple) else _array(g)))


def _execute(lib, step: Step, env: list, i: int) -> None:
    """Run one step, appending the tensors it creates to ``env``."""
    kind = step[0]
    if kind == "leaf":
        _, shape, requires_grad, seed, data_kind = step
        env.append(lib.tensor(leaf_values(shape, seed, data_kind), requires_grad=requires_grad))
    elif kind == "unary":
        _, op, src = step
        env.append(FUNCTIONAL[op](lib.nn.functional, env[src]) if op in FUNCTIONAL else UNARY[op](env[src]))
    elif kind == "binary":
        _, op, a, b = step
        env.append(BINARY[op](env[a], env[b]))
    elif kind == "binary_scalar":
        _, op, a, scalar, reverse = step
        env.append(BINARY[op](scalar, env[a]) if reverse else BINARY[op](env[a], scalar))
    elif kind == "loss":
        _, op, a, b, reduction = step
        env.append(LOSSES[op](lib.nn.functional, env[a], env[b], reduction))
    elif kind == "reduce":
        _, op, src, dim, keepdim = step
        env.extend(_reduce(lib, op, env[src], dim, keepdim))
    elif kind == "view":
        _, op, src, args = step
        env.append(_view(op, env[src], args))
    elif kind == "shape_op":
        _, op, src, args = step
        env.append(_shape_op(lib, op, env[src], args))
    elif kind == "multi":  # chunk / split / unbind: several views of one tensor
        _, op, src, args, _count = step
        env.extend(getattr(env[src], op)(*args))
    elif kind == "join":
        _, op, slots, dim = step
        env.append(getattr(lib, op)([env[j] for j in slots], dim))
    elif kind == "where":
        _, seed, a, b = step
        shape = np.broadcast_shapes(tuple(env[a].shape), tuple(env[b].shape))
        env.append(lib.where(lib.tensor(mask(shape, seed)), env[a], env[b]))
    elif kind == "index":
        _, src, key = step
        env.append(env[src][_key(lib, key, tuple(env[src].shape))])
    elif kind == "inplace":
        _, op, target, operand, scalar, no_grad = step
        value = scalar if operand is None else env[operand]
        with lib.no_grad() if no_grad else _nothing():
            INPLACE[op](env[target], value)
        if lib.__name__ == "torch" and operand is not None and _order_dependent(env[target], value):
            raise Unspecified
    elif kind == "setitem":
        _, target, key, operand, scalar, no_grad = step
        value = scalar if operand is None else env[operand]
        t = env[target]
        with lib.no_grad() if no_grad else _nothing():
            t[_key(lib, key, tuple(t.shape))] = value
            basic = not any(isinstance(part, tuple) and part[0] in ("list", "mask") for part in key)
            # a 0-d value is read once (torch fills with its item()), whatever it aliases
            if lib.__name__ == "torch" and operand is not None and value.dim() > 0:
                if basic:
                    dependent = _order_dependent(t[_key(lib, key, tuple(t.shape))], value)
                else:  # index_put_: where the elements it writes lie in memory, in the key's order
                    where = lib.from_numpy(_memory_positions(t, tuple(t.shape)))[_key(lib, key, tuple(t.shape))]
                    dependent = _shares_storage(t, value) and _reads_a_written_element(where.numpy(), value)
                if dependent:
                    raise Unspecified
    elif kind == "hook":
        _, slot, scale = step
        env[slot].register_hook(_tensor_hook(i, scale))
    elif kind == "node_hook":
        _, slot, which, scale = step
        node = env[slot].grad_fn
        if which == "pre":
            node.register_prehook(_prehook(i, scale))
        else:
            node.register_hook(_posthook(i, scale))
    elif kind == "retain_grad":
        env[step[1]].retain_grad()
    elif kind == "backward":
        _, slot, seed, retain_graph, create_graph, inputs = step
        t = env[slot]
        gradient = None if (t.dim() == 0 and seed % 2) else lib.tensor(weights(tuple(t.shape), seed))
        t.backward(gradient, retain_graph=retain_graph, create_graph=create_graph,
                   inputs=None if inputs is None else [env[j] for j in inputs])
    elif kind == "grad":
        _, slot, inputs, seed, retain_graph, create_graph, allow_unused = step
        t = env[slot]
        env.extend(lib.autograd.grad(
            t, [env[j] for j in inputs], lib.tensor(weights(tuple(t.shape), seed)),
            retain_graph=retain_graph, create_graph=create_graph, allow_unused=allow_unused,
        ))
    elif kind == "func":
        _, name, args, extra = step
        outputs = functions(lib)[name].apply(*[env[j] for j in args], *extra)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        env.extend(o for o in outputs if isinstance(o, lib.Tensor))
    elif kind == "legacy_leaf":
        _, shape, requires_grad, seed, data_kind, how = step
        env.append(_legacy_leaf(lib, leaf_values(shape, seed, data_kind), requires_grad, how))
    elif kind == "mode_call":
        _, mode, generator, op, src = step
        env.append(_mode_call(lib, mode, generator, op, env[src]))
    elif kind == "post_acc_hook":
        _, slot, scale = step
        env[slot].register_post_accumulate_grad_hook(_post_accumulate_hook(i, scale))
    elif kind == "set_data":
        _, target, src = step
        env[target].data = env[src]
    elif kind == "detach":
        env.append(env[step[1]].detach())
    elif kind == "clone":
        env.append(env[step[1]].clone())
    elif kind == "take_grad":
        env.append(env[step[1]].grad)  # the object itself: later in-place accumulation must not change it
    elif kind == "zero_grad":
        env[step[1]].grad = None
    else:
        raise ValueError(f"unknown step {step!r}")


class Unspecified(Exception):
    """torch's result of a step depends on the order its loop visits the elements."""


def _order_dependent(written, read) -> bool:
    """Whether an elementwise write into ``written`` from ``read`` reads an element that the write
    of another element changes (torch tensors).

    torch refuses such a partial overlap when it can prove it (both tensors dense); on other strided
    layouts (``x.add_(x[:, :1])``) it runs its loop anyway and the result depends on the loop's order.
    """
    return (written.numel() > 0 and _shares_storage(written, read)
            and _reads_a_written_element(_memory_positions(written, tuple(written.shape)), read))


def _shares_storage(a, b) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _reads_a_written_element(written: np.ndarray, read) -> bool:
    """Whether a write to the storage positions ``written`` from ``read`` (a torch tensor on the same
    storage, broadcast to their shape) reads, for some element, a position another element writes."""
    w, r = written.reshape(-1), _memory_positions(read, written.shape).reshape(-1)
    return bool(np.any(np.isin(r, w) & (r != w)))


def _memory_positions(t, shape: tuple) -> np.ndarray:
    """Where each element of the torch tensor ``t``, broadcast to ``shape``, lies in its storage
    (no torch op: they check views)."""
    grid = np.indices(shape).reshape(len(shape), int(np.prod(shape)))
    strides = np.zeros(len(shape), dtype=np.int64)
    for k, (n, stride) in enumerate(zip(reversed(t.shape), reversed(t.stride()))):
        if k < len(shape):  # (t's leading dimensions beyond shape are 1s: they place nothing)
            strides[len(shape) - 1 - k] = stride if n != 1 else 0
    return (t.storage_offset() + strides @ grid).reshape(shape)


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _uses(step: Step) -> list[int]:
    """The slots a step reads (a step that reads a None slot is skipped in both runs)."""
    kind = step[0]
    if kind in ("unary",):
        return [step[2]]
    if kind in ("binary", "loss"):
        return [step[2], step[3]]
    if kind in ("binary_scalar", "reduce", "view", "shape_op", "multi"):
        return [step[2]]
    if kind == "join":
        return list(step[2])
    if kind == "where":
        return [step[2], step[3]]
    if kind == "index":
        return [step[1]]
    if kind == "inplace":
        return [step[2]] + ([] if step[3] is None else [step[3]])
    if kind == "setitem":
        return [step[1]] + ([] if step[3] is None else [step[3]])
    if kind in ("hook", "node_hook", "retain_grad", "detach", "clone", "take_grad", "zero_grad", "post_acc_hook"):
        return [step[1]]
    if kind == "mode_call":
        return [step[4]]
    if kind == "set_data":
        return [step[1], step[2]]
    if kind == "backward":
        return [step[1]] + list(step[5] or ())
    if kind == "grad":
        return [step[1]] + list(step[2])
    if kind == "func":
        return list(step[2])
    return []


def n_outputs(step: Step) -> int:
    """How many slots a step appends (a skipped step appends as many Nones)."""
    kind = step[0]
    if kind in ("leaf", "unary", "binary", "binary_scalar", "view", "index", "detach", "clone", "take_grad",
                "shape_op", "join", "where", "loss", "legacy_leaf", "mode_call"):
        return 1
    if kind == "multi":
        return step[4]
    if kind == "reduce":
        # (values, indices)
        return 2 if (step[1] in ("max", "min") and step[3] is not None) or step[1].startswith("sort") or (
            step[1] in ("var_mean", "std_mean")) else 1
    if kind == "grad":
        return len(step[2])
    if kind == "func":
        return {"ExpNonDiff": 2, "TwoOut": 2}.get(step[1], 1)
    return 0


def run(lib, program: Program) -> list:
    """Run ``program`` with ``lib`` (the minigrad or torch module); return its trace."""
    events: list = []
    env: list = []
    _current["events"] = events
    lib.set_grad_enabled(True)  # (a decorator made with set_grad_enabled(False) leaves it off, in both libraries)
    try:
        for i, step in enumerate(program):
            _current["step"] = i
            if any(env[j] is None for j in _uses(step)):
                events.append(("skip", i))
                env.extend([None] * n_outputs(step))
                continue
            size = len(env)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _execute(lib, step, env, i)
            except Unspecified:
                events.append(("unspecified", i))
                return events
            except Exception as e:  # noqa: BLE001 - the type is what we compare
                # e.g. an in-place op on the second output of a custom Function that retains its grad
                # (which backward(inputs=[it]) makes it do): torch looks for the retain_grad hook under
                # output 0 of the old node and fails "out != nullptr INTERNAL ASSERT FAILED"
                if lib.__name__ == "torch" and "INTERNAL ASSERT FAILED" in str(e):
                    events.append(("unspecified", i))
                    return events
                events.append(("raise", i, _exception_name(e)))
                return events
            made, expected = len(env) - size, n_outputs(step)
            if made != expected:  # e.g. chunk making another number of pieces: a difference, and keep slots aligned
                events.append(("outputs", i, made))
                del env[size + expected:]
                env.extend([None] * (size + expected - len(env)))
            _observe_values(events, i, env)
            if step[0] in ("backward", "grad"):
                _observe_grads(events, i, env)
        _observe_grads(events, len(program), env)
    finally:
        _current["events"] = None
        lib.set_grad_enabled(True)
    return events


def _exception_name(e: BaseException) -> str:
    """The builtin class an exception is, or derives from (torch's own errors subclass them)."""
    for cls in type(e).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return type(e).__name__


# -- comparing -----------------------------------------------------------------------------------------
def tolerance(program: Program) -> float:
    """The epsilon of the least precise dtype used, scaled by the longest reduction and the number
    of steps whose rounding errors can compound."""
    leaves = [s for s in program if s[0] in ("leaf", "legacy_leaf")]
    numel = max((int(np.prod(s[1])) for s in leaves), default=1)
    dtype = np.float32 if any(s[4] == "float32" for s in leaves) else np.float64
    return float(np.finfo(dtype).eps) * 64 * (max(numel, 1) + len(program))


def _close(a, b, tol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_close(x, y, tol) for x, y in zip(a, b)))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            return False
        if a.dtype == b.dtype and a.tobytes() == b.tobytes():
            return True  # the common case, and cheap: most values agree to the bit
        if a.dtype.kind != "f":
            return bool(np.array_equal(a, b))
        finite = np.abs(b[np.isfinite(b)])
        scale = 1.0 + (float(finite.max()) if finite.size else 0.0)
        return bool(np.allclose(a, b, rtol=tol, atol=tol * scale, equal_nan=True))
    return a == b


def canonical(trace: list, program: Program) -> list:
    """The trace with each run of back-to-back tensor-hook calls ordered by tensor (stably).

    The order of the hooks of one tensor is kept and compared, and so is their order relative to
    node hooks and custom backward calls; only the order between different tensors whose hooks
    fire back to back is not: torch runs leaf accumulators of equal priority in the order its
    binary heap happens to pop them, which is no contract.
    """
    out, run = [], []
    for event in trace + [("end",)]:
        if event[0] == "hook":
            run.append(event)
            continue
        out.extend(sorted(run, key=lambda e: program[e[2]][1]))
        run = []
        out.append(event)
    return out[:-1]


def first_difference(minigrad_trace: list, torch_trace: list, tol: float) -> str | None:
    """None if the traces agree, else a description of the first event where they differ."""
    for k, (m, t) in enumerate(zip(minigrad_trace, torch_trace)):
        if len(m) != len(t) or not all(_close(x, y, tol) for x, y in zip(m, t)):
            return f"event {k}:\n  minigrad: {_show(m)}\n  torch:    {_show(t)}"
    if len(minigrad_trace) != len(torch_trace):
        k = min(len(minigrad_trace), len(torch_trace))
        extra_m = _show(minigrad_trace[k]) if k < len(minigrad_trace) else "(end)"
        extra_t = _show(torch_trace[k]) if k < len(torch_trace) else "(end)"
        return f"event {k}:\n  minigrad: {extra_m}\n  torch:    {extra_t}"
    return None


def _show(event: tuple) -> str:
    return repr(tuple(e.tolist() if isinstance(e, np.ndarray) else e for e in event))


def format_program(program: Program) -> str:
    return "[\n" + "".join(f"    {step!r},\n" for step in program) + "]"


def check(program: Program) -> None:
    """Run ``program`` with both libraries; fail with the program and the first difference."""
    import minigrad
    import torch

    tol = tolerance(program)
    difference = first_difference(canonical(run(minigrad, program), program), canonical(run(torch, program), program), tol)
    if difference is not None:
        raise AssertionError(f"minigrad and torch differ on this program:\n{format_program(program)}\n{difference}")
