"""minigrad.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) against PyTorch's, and
against finite differences.

Hypothesis writes a small program (a few differentiable ops over one to three inputs; the same
program runs in both libraries) and the arguments of the call: single or tuple inputs and
outputs, create_graph, strict, v, vectorize, grad mode on or off. Sometimes it spoils one (a
non-tensor input, a v of the wrong shape or length, a list returned for a tuple, a bad strategy).
With torch installed both libraries run the call and must agree on the nesting of the result, the
shapes, dtypes, values and requires_grad of its tensors, on the gradient of a create_graph=True
result back to the arguments, or on the exception type and message. Without torch, the
finite-difference tests still check every value.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import event, given, settings, strategies as st

import minigrad
from minigrad.autograd import functional

# ---- Programs: an expression per output, over the inputs, written once for both libraries ----

UNARY = {
    "sin": lambda a: a.sin(),
    "tanh": lambda a: a.tanh(),
    "sigmoid": lambda a: a.sigmoid(),
    "exp": lambda a: a.exp(),
    "square": lambda a: a * a,       # its third derivative is zero
    "scale": lambda a: a * 1.5,      # linear: its second derivative is zero
    "detach": lambda a: a.detach(),  # the result does not depend on the inputs
}
BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}
REDUCE = {None: lambda a: a, "sum": lambda a: a.sum(), "sum0": lambda a: a.sum(0) if a.dim() else a}


def evaluate(expr: tuple, xs: tuple, lib):
    """An expression's value: a leaf is an input (``x``) or a constant shaped like one (``const``);
    a binary op between different shapes takes the sum of its right side."""
    kind = expr[0]
    if kind == "x":
        return xs[expr[1]]
    if kind == "const":
        return lib.ones_like(xs[expr[1]]) * 0.5
    if kind in UNARY:
        return UNARY[kind](evaluate(expr[1], xs, lib))
    a, b = evaluate(expr[1], xs, lib), evaluate(expr[2], xs, lib)
    return BINARY[kind](a, b if b.shape == a.shape else b.sum())


def expressions(n_inputs: int, unary: list):
    leaf = st.tuples(st.sampled_from(["x", "x", "x", "const"]), st.integers(0, n_inputs - 1))
    return st.recursive(leaf, lambda sub: st.one_of(st.tuples(st.sampled_from(unary), sub),
                                                    st.tuples(st.sampled_from(sorted(BINARY)), sub, sub)),
                        max_leaves=4)


SCALAR_FUNCTIONS = ("hessian", "vhp", "hvp")  # func must return one tensor of a single element
WITH_V = ("vjp", "jvp", "vhp", "hvp")
SPOILS = {
    "any": ["input_number", "inputs_list", "output_list", "output_number"],
    "v": ["v_none", "v_number", "v_shape", "v_length"],
    "scalar": ["output_tuple", "output_unreduced"],
    "strategy": ["forward_mode", "bad_strategy"],
}


@dataclass
class Case:
    fn: str
    inputs: list  # NumPy arrays
    dtypes: list  # "float32" or "float64", per input, then v's
    inputs_require_grad: list
    inputs_tuple: bool
    outputs: list  # (expression, reduction) pairs
    outputs_tuple: bool
    v: list | None  # NumPy arrays
    v_requires_grad: bool
    kwargs: dict
    grad_enabled: bool
    spoil: str | None

    def arguments(self, lib) -> tuple:
        """(func, inputs, kwargs, the input tensors) for ``lib``, spoiled as the case says."""
        xs = tuple(lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=rg)
                   for a, dtype, rg in zip(self.inputs, self.dtypes, self.inputs_require_grad))
        inputs = xs if self.inputs_tuple else xs[0]
        if self.spoil == "input_number":
            inputs = (*xs[:-1], 1.0) if self.inputs_tuple else 1.0
        elif self.spoil == "inputs_list":
            inputs = list(xs)

        def func(*args):
            outs = tuple(REDUCE[reduce](evaluate(expr, args, lib)) for expr, reduce in self.outputs)
            if self.fn in SCALAR_FUNCTIONS and self.spoil != "output_unreduced":
                outs = tuple(out.sum() for out in outs)
            if self.spoil == "output_list":
                return list(outs)
            if self.spoil == "output_number":
                return (*outs, 2.0)
            return outs if self.outputs_tuple or self.spoil == "output_tuple" else outs[0]

        kwargs = dict(self.kwargs)
        if self.fn in WITH_V:
            kwargs["v"] = self._v(lib)
        if self.spoil == "forward_mode":
            kwargs["outer_jacobian_strategy" if self.fn == "hessian" else "strategy"] = "forward-mode"
        elif self.spoil == "bad_strategy":
            kwargs["outer_jacobian_strategy" if self.fn == "hessian" else "strategy"] = "reverse"
        return func, inputs, kwargs, xs

    def _v(self, lib):
        if self.v is None or self.spoil == "v_none":
            return None
        vs = [lib.tensor(a, dtype=getattr(lib, self.dtypes[-1]), requires_grad=self.v_requires_grad) for a in self.v]
        if self.spoil == "v_number":
            vs[-1] = 3.0
        elif self.spoil == "v_shape":
            vs[-1] = lib.tensor(np.ones(self.v[-1].shape + (2,)), dtype=lib.float64)
        elif self.spoil == "v_length":
            vs.append(vs[-1])
        return tuple(vs) if len(vs) > 1 or self.v_tuple else vs[0]

    @property
    def v_tuple(self) -> bool:
        """v nests as what it multiplies: the outputs for vjp, the inputs for the others."""
        return self.outputs_tuple if self.fn == "vjp" else self.inputs_tuple


@st.composite
def cases(draw, fn: str, spoil: bool = True, strict: bool | None = None, detach: bool = True,
          dtypes: tuple = ("float32", "float64")) -> Case:
    """A call of ``fn``; ``spoil=False``: valid arguments; ``detach=False``: no detach in the program
    (finite differences see through it)."""
    n_inputs = draw(st.integers(1, 3))
    shapes = [tuple(draw(st.lists(st.integers(1, 3), max_size=2))) for _ in range(n_inputs)]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = [rng.uniform(-1.5, 1.5, shape) for shape in shapes]
    inputs_tuple = n_inputs > 1 or draw(st.booleans())
    n_outputs = 1 if fn in SCALAR_FUNCTIONS else draw(st.integers(1, 3))
    reductions = [None] if fn in SCALAR_FUNCTIONS else list(REDUCE)
    unary = sorted(name for name in UNARY if detach or name != "detach")
    outputs = [(draw(expressions(n_inputs, unary)), draw(st.sampled_from(reductions))) for _ in range(n_outputs)]
    outputs_tuple = n_outputs > 1 or (fn not in SCALAR_FUNCTIONS and draw(st.booleans()))
    kwargs = {"create_graph": draw(st.booleans()),
              "strict": draw(st.booleans()) if strict is None else strict}
    if fn in ("jacobian", "hessian"):
        kwargs["vectorize"] = draw(st.booleans())
    v = None
    if fn in WITH_V:
        if fn == "vjp":
            xs = tuple(minigrad.tensor(a) for a in inputs)
            like = [REDUCE[reduce](evaluate(expr, xs, minigrad)).shape for expr, reduce in outputs]
        else:
            like = shapes
        v = [rng.uniform(-1, 1, tuple(shape)) for shape in like]
    choices = SPOILS["any"] + SPOILS["v"] * (fn in WITH_V) + SPOILS["scalar"] * (fn in SCALAR_FUNCTIONS) \
        + SPOILS["strategy"] * (fn in ("jacobian", "hessian"))
    return Case(fn, inputs, [draw(st.sampled_from(dtypes)) for _ in range(n_inputs + 1)],
                [draw(st.booleans()) for _ in inputs], inputs_tuple, outputs, outputs_tuple, v,
                draw(st.booleans()), kwargs, draw(st.booleans()),
                draw(st.sampled_from([None] * len(choices) + choices)) if spoil else None)


FUNCTIONS = ("vjp", "jvp", "jacobian", "hessian", "vhp", "hvp")


# ---- Against PyTorch ----

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def call(case: Case, lib, module):
    """(result or None, exception or None, the input tensors, v) of the case's call in ``lib``."""
    func, inputs, kwargs, xs = case.arguments(lib)
    try:
        with lib.set_grad_enabled(case.grad_enabled):
            return getattr(module, case.fn)(func, inputs, **kwargs), None, xs, kwargs.get("v")
    except Exception as error:  # noqa: BLE001 (any exception is compared with PyTorch's)
        return None, error, xs, kwargs.get("v")


def flat(result) -> list:
    return [t for r in result for t in flat(r)] if isinstance(result, tuple) else [result]


def assert_same(mine, theirs, tolerance: dict, requires_grad: bool = True, where: str = "result") -> None:
    """Same nesting; tensors of the same shape, dtype, values (and requires_grad)."""
    if isinstance(theirs, tuple):
        assert isinstance(mine, tuple) and len(mine) == len(theirs), f"{where}: {mine!r} vs {theirs!r}"
        for i, (m, t) in enumerate(zip(mine, theirs)):
            assert_same(m, t, tolerance, requires_grad, f"{where}[{i}]")
        return
    assert isinstance(mine, minigrad.Tensor), f"{where}: {type(mine)} where torch gives a tensor"
    assert tuple(mine.shape) == tuple(theirs.shape), f"{where}: shape {mine.shape} vs {theirs.shape}"
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], f"{where}: dtype"
    assert not requires_grad or mine.requires_grad == theirs.requires_grad, f"{where}: requires_grad"
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), err_msg=where, **tolerance)


def tolerance(case: Case) -> dict:
    """Two libraries' float32 exp or sin may differ by an ulp, which exp(exp(exp(x))) multiplies by ~50."""
    return {"rtol": 1e-4, "atol": 1e-5} if "float32" in case.dtypes else {"rtol": 1e-9, "atol": 1e-12}


def message(error: Exception, fn: str) -> str:
    text = str(error).replace("torch.Size", "Size").replace("minigrad.Size", "Size")
    text = text.replace("torch.autograd.functional.", "minigrad.autograd.functional.")  # (minigrad names itself)
    if fn in ("jacobian", "hessian"):
        # PyTorch names the output's index where it means the input's; minigrad names the input.
        text = re.sub(r"input \d+(?=\. This is not allowed in strict mode when)", "input N", text)
    return text


def assert_same_graph(mine, theirs, mine_args: list, their_args: list, torch, tolerance: dict) -> None:
    """A create_graph=True result differentiates back to the caller's tensors as PyTorch's does."""
    pairs = [(m, t) for m, t in zip(flat(mine), flat(theirs)) if t.requires_grad]
    m_args = [a for a in mine_args if isinstance(a, minigrad.Tensor) and a.requires_grad]
    t_args = [a for a in their_args if isinstance(a, torch.Tensor) and a.requires_grad]
    if not pairs or not t_args:
        return
    weights = [np.linspace(0.5, 1.5, t.numel()).reshape(t.shape) for _, t in pairs]
    m_loss = sum((m * minigrad.tensor(w)).sum() for (m, _), w in zip(pairs, weights))
    t_loss = sum((t * torch.tensor(w)).sum() for (_, t), w in zip(pairs, weights))
    m_grads = minigrad.autograd.grad(m_loss, m_args, allow_unused=True)
    t_grads = torch.autograd.grad(t_loss, t_args, allow_unused=True)
    for i, (m, t) in enumerate(zip(m_grads, t_grads)):
        assert (m is None) == (t is None), f"gradient of the result to argument {i}: {m} vs {t}"
        if t is not None:
            np.testing.assert_allclose(m.numpy(), t.numpy(), **tolerance)


@pytest.mark.parametrize("fn", FUNCTIONS)
@settings(max_examples=150)
@given(data=st.data())
def test_same_as_pytorch(torch, fn, data):
    case = data.draw(cases(fn))
    mine, my_error, my_xs, my_v = call(case, minigrad, functional)
    theirs, their_error, their_xs, their_v = call(case, torch, torch.autograd.functional)
    event(f"torch raised {type(their_error).__name__}" if their_error else "a result")
    if case.spoil == "forward_mode" and their_error is None:
        # PyTorch computes it with vectorize=True; minigrad has no forward-mode AD (its docstring says so).
        assert isinstance(my_error, NotImplementedError) and "reverse-mode" in str(my_error)
        return
    if their_error is not None:
        assert type(my_error) is type(their_error), f"torch raised {their_error!r}, minigrad {my_error!r}"
        if not isinstance(their_error, NotImplementedError):  # (minigrad's says what it lacks)
            assert message(my_error, fn) == message(their_error, fn)
        return
    assert my_error is None, f"torch gave a result, minigrad raised {my_error!r}"
    # PyTorch's vectorize=True takes one batched backward pass per input, so that every block of an input
    # requires grad if one does; minigrad computes each block from its own rows, as with vectorize=False.
    vectorize = case.kwargs.get("vectorize", False)
    assert_same(mine, theirs, tolerance(case), requires_grad=not vectorize)
    if case.kwargs["create_graph"] and not vectorize:
        my_v = [] if my_v is None else flat(my_v)
        their_v = [] if their_v is None else flat(their_v)
        assert_same_graph(mine, theirs, [*my_xs, *my_v], [*their_xs, *their_v], torch, tolerance(case))


# ---- Against finite differences (no torch needed) ----

def numpy_function(case: Case):
    """The case's program on flat float64 arrays: x (all inputs, concatenated) -> y (all outputs)."""
    sizes = [a.size for a in case.inputs]
    func, *_ = case.arguments(minigrad)

    def f(x: np.ndarray) -> np.ndarray:
        parts = np.split(x, np.cumsum(sizes)[:-1])
        args = [minigrad.tensor(p.reshape(a.shape)) for p, a in zip(parts, case.inputs)]
        with minigrad.no_grad():
            outs = func(*args)
        return np.concatenate([o.numpy().reshape(-1) for o in (outs if isinstance(outs, tuple) else (outs,))])

    return f, np.concatenate([a.reshape(-1) for a in case.inputs])


def fd_jacobian(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    columns = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = h
        columns.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(columns, axis=1)


def fd_hessian(f, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    n = x.size
    hessian = np.empty((n, n))
    for a in range(n):
        for b in range(n):
            ea, eb = np.eye(n)[a] * h, np.eye(n)[b] * h
            hessian[a, b] = (f(x + ea + eb) - f(x + ea - eb) - f(x - ea + eb) + f(x - ea - eb))[0] / (4 * h * h)
    return hessian


def as_matrix(result, rows_tuple: bool, columns_tuple: bool, column_sizes: list) -> np.ndarray:
    """A nested Jacobian or Hessian as one matrix: a row per output element, a column per input element."""
    rows = result if rows_tuple else (result,)
    return np.block([[block.detach().numpy().reshape(-1, size)
                      for block, size in zip(row if columns_tuple else (row,), column_sizes)] for row in rows])


def as_vector(result) -> np.ndarray:
    return np.concatenate([t.detach().numpy().reshape(-1) for t in flat(result)])


def vector_like(shapes: list, rng, is_tuple: bool):
    vs = tuple(minigrad.tensor(rng.uniform(-1, 1, tuple(s))) for s in shapes)
    return vs if is_tuple else vs[0]


@settings(max_examples=80)
@given(data=st.data())
def test_first_derivatives_match_finite_differences(data):
    case = data.draw(cases("jacobian", spoil=False, strict=False, detach=False, dtypes=("float64",)))
    f, x = numpy_function(case)
    expected = fd_jacobian(f, x)
    func, inputs, _, _ = case.arguments(minigrad)
    create_graph = case.kwargs["create_graph"]
    jac = functional.jacobian(func, inputs, create_graph=create_graph)
    sizes = [a.size for a in case.inputs]
    np.testing.assert_allclose(as_matrix(jac, case.outputs_tuple, case.inputs_tuple, sizes), expected,
                               rtol=1e-6, atol=1e-6)

    rng = np.random.default_rng(0)
    outputs = func(*(inputs if case.inputs_tuple else (inputs,)))
    output_shapes = [o.shape for o in (outputs if case.outputs_tuple else (outputs,))]
    v = vector_like(output_shapes, rng, case.outputs_tuple)
    np.testing.assert_allclose(as_vector(functional.vjp(func, inputs, v, create_graph)[1]),
                               as_vector(v) @ expected, rtol=1e-6, atol=1e-6)
    u = vector_like([a.shape for a in case.inputs], rng, case.inputs_tuple)
    np.testing.assert_allclose(as_vector(functional.jvp(func, inputs, u, create_graph)[1]),
                               expected @ as_vector(u), rtol=1e-6, atol=1e-6)


@settings(max_examples=50)
@given(data=st.data())
def test_second_derivatives_match_finite_differences(data):
    case = data.draw(cases("hessian", spoil=False, strict=False, detach=False, dtypes=("float64",)))
    f, x = numpy_function(case)
    expected = fd_hessian(f, x)
    func, inputs, _, _ = case.arguments(minigrad)
    create_graph = case.kwargs["create_graph"]
    tolerance = {"rtol": 1e-4, "atol": 1e-4}
    hessian = functional.hessian(func, inputs, create_graph)
    sizes = [a.size for a in case.inputs]
    np.testing.assert_allclose(as_matrix(hessian, case.inputs_tuple, case.inputs_tuple, sizes), expected, **tolerance)
    u = vector_like([a.shape for a in case.inputs], np.random.default_rng(1), case.inputs_tuple)
    np.testing.assert_allclose(as_vector(functional.hvp(func, inputs, u, create_graph)[1]),
                               expected @ as_vector(u), **tolerance)
    np.testing.assert_allclose(as_vector(functional.vhp(func, inputs, u, create_graph)[1]),
                               as_vector(u) @ expected, **tolerance)


# ---- Where minigrad differs from PyTorch on purpose ----

@pytest.mark.parametrize("fn, strategy", [("jacobian", "strategy"), ("hessian", "outer_jacobian_strategy")])
def test_forward_mode_is_refused_with_the_fix(fn, strategy):
    """PyTorch computes these with vectorize=True; minigrad has no forward-mode AD and names the default."""
    with pytest.raises(NotImplementedError, match='use "reverse-mode"'):
        getattr(functional, fn)(lambda x: (x * x).sum(), minigrad.ones(2), vectorize=True, **{strategy: "forward-mode"})


def test_vectorize_gives_the_same_jacobian():
    """minigrad has no vmap: vectorize=True is accepted and computes the same Jacobian row by row."""
    x = minigrad.tensor([0.5, -1.0, 2.0], dtype=minigrad.float64)
    plain, vectorized = (functional.jacobian(lambda t: t.sin() * t.sum(), x, vectorize=flag) for flag in (False, True))
    np.testing.assert_array_equal(plain.numpy(), vectorized.numpy())
