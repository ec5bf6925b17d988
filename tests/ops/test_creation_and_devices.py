"""The ops, creation functions and devices of issue 10 (§3 devices, §4 operations).

Every differentiable op is
1. gradchecked and gradgradchecked in float64 (finite differences, minigrad only);
2. cross-checked with PyTorch on the same float64 inputs: values, the gradient of a
   random-weighted sum of the outputs, output dtypes and shapes, and the node name;
3. checked to raise PyTorch's exception type on bad dims, shapes and dtypes.
The PyTorch parts are skipped when torch is not installed.

Tolerances of the cross-check come from float64's epsilon times the number of
values an output element can depend on (the reduction length), times a small
constant for the few roundings per value.
"""
from __future__ import annotations

import math
import pickle
import zlib

import numpy as np
import pytest

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

try:
    import torch
except ImportError:  # the cross-checks below are skipped
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
LIBS = [minigrad] + ([torch] if torch is not None else [])
EPS64 = np.finfo(np.float64).eps

RNG = np.random.default_rng(1010)


def normal(*shape):
    return RNG.standard_normal(shape)


def small(*shape):
    """In (-1.2, 1.2): where tan is tame."""
    return RNG.uniform(-1.2, 1.2, shape)


def above(low):
    return lambda *shape: RNG.uniform(low + 0.3, low + 2.0, shape)


def distinct(*shape):
    """Distinct values 0.08 or more apart, in both signs, none within 0.04 of 0: no ties, no kinks."""
    n = int(np.prod(shape, dtype=np.int64))
    values = (RNG.permutation(n) - (n - 1) // 2) * 0.1 + 0.05 + RNG.uniform(-0.01, 0.01, n)
    return values.reshape(shape)


def with_zeros(count):
    """Nonzero values with ``count`` zeros in the first row: prod's special case."""
    def make(*shape):
        x = RNG.uniform(0.5, 1.5, shape) * RNG.choice([-1.0, 1.0], shape)
        x.reshape(-1)[:count] = 0.0
        return x
    return make


def index(L, data):
    return L.tensor(data, dtype=L.int64)


# Each case: (fn(L, *inputs), input makers with shapes). fn returns a tensor or a tuple.
CASES = {
    # -- elementwise math
    "sin": (lambda L, x: x.sin(), [(normal, (2, 3))]),
    "sin_fn": (lambda L, x: L.sin(x), [(normal, (4,))]),
    "cos": (lambda L, x: x.cos(), [(normal, (2, 3))]),
    "cos_0d": (lambda L, x: L.cos(x), [(normal, ())]),
    "tan": (lambda L, x: x.tan(), [(small, (2, 3))]),
    "sinh": (lambda L, x: x.sinh(), [(normal, (2, 3))]),
    "cosh": (lambda L, x: L.cosh(x), [(normal, (2, 3))]),
    "log1p": (lambda L, x: x.log1p(), [(above(-1), (2, 3))]),
    "expm1": (lambda L, x: L.expm1(x), [(normal, (2, 3))]),
    "exp2": (lambda L, x: x.exp2(), [(normal, (2, 3))]),
    "exp2_fn": (lambda L, x: L.exp2(x), [(normal, (4,))]),
    "sign": (lambda L, x: x.sign() * x, [(distinct, (2, 3))]),
    "sin_empty": (lambda L, x: x.sin(), [(normal, (0, 3))]),
    # -- matrix products
    "mm": (lambda L, a, b: a.mm(b), [(normal, (2, 3)), (normal, (3, 4))]),
    "mm_fn": (lambda L, a, b: L.mm(a, b), [(normal, (1, 3)), (normal, (3, 1))]),
    "mv": (lambda L, a, v: a.mv(v), [(normal, (2, 3)), (normal, (3,))]),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(normal, (2, 2, 3)), (normal, (2, 3, 4))]),
    "mm_empty": (lambda L, a, b: a.mm(b), [(normal, (0, 3)), (normal, (3, 2))]),
    "mm_empty_inner": (lambda L, a, b: a.mm(b), [(normal, (2, 0)), (normal, (0, 2))]),
    "mv_empty": (lambda L, a, v: a.mv(v), [(normal, (2, 0)), (normal, (0,))]),
    "bmm_empty": (lambda L, a, b: a.bmm(b), [(normal, (0, 2, 3)), (normal, (0, 3, 4))]),
    "t": (lambda L, x: x.t() * 1, [(normal, (2, 3))]),
    "t_1d": (lambda L, x: L.t(x) * 1, [(normal, (3,))]),
    "t_0d": (lambda L, x: x.t() * 1, [(normal, ())]),
    # -- products and running sums
    "prod": (lambda L, x: x.prod(), [(normal, (2, 3))]),
    "prod_dim": (lambda L, x: x.prod(1), [(normal, (2, 3))]),
    "prod_keepdim": (lambda L, x: L.prod(x, 0, keepdim=True), [(normal, (3, 2))]),
    "prod_one_zero": (lambda L, x: x.prod(), [(with_zeros(1), (2, 3))]),
    "prod_two_zeros": (lambda L, x: x.prod(), [(with_zeros(2), (2, 3))]),
    "prod_dim_one_zero": (lambda L, x: x.prod(1), [(with_zeros(1), (2, 3))]),
    "prod_dim_two_zeros": (lambda L, x: x.prod(-1), [(with_zeros(2), (2, 3))]),
    "prod_0d": (lambda L, x: x.prod(0), [(normal, ())]),
    "prod_empty": (lambda L, x: x.prod(), [(normal, (0, 3))]),
    "cumsum": (lambda L, x: x.cumsum(1), [(normal, (2, 3))]),
    "cumsum_fn": (lambda L, x: L.cumsum(x, -2), [(normal, (3, 2))]),
    "cumsum_0d": (lambda L, x: x.cumsum(0), [(normal, ())]),
    "logsumexp_0d": (lambda L, x: x.logsumexp(0, keepdim=True), [(normal, ())]),
    "gather_0d": (lambda L, x: x.gather(0, L.tensor(0)), [(normal, ())]),
    "index_select_0d": (lambda L, x: x.index_select(0, index(L, [0])), [(normal, ())]),
    "sort_0d": (lambda L, x: x.sort(), [(normal, ())]),
    "topk_0d": (lambda L, x: x.topk(1), [(normal, ())]),
    "masked_fill_0d": (lambda L, x: x.masked_fill(L.tensor(False), 1.0), [(normal, ())]),
    "scatter_add_0d": (lambda L, x, s: x.scatter_add(0, L.tensor(0), s), [(normal, ()), (normal, ())]),
    "norm_0d": (lambda L, x: x.norm(dim=0), [(distinct, ())]),
    "cumsum_dtype": (lambda L, x: x.cumsum(0, dtype=L.float32), [(normal, (3,))]),
    "prod_dtype": (lambda L, x: L.prod(x, 1, dtype=L.float32), [(normal, (2, 3))]),
    # -- norms and statistics
    "norm": (lambda L, x: x.norm(), [(normal, (2, 3))]),
    "norm_fro": (lambda L, x: x.norm("fro"), [(normal, (2, 3))]),
    "norm_1": (lambda L, x: x.norm(1), [(distinct, (2, 3))]),
    "norm_inf": (lambda L, x: x.norm(float("inf")), [(distinct, (2, 3))]),
    "norm_minus_inf": (lambda L, x: x.norm(-float("inf"), dim=1), [(distinct, (2, 3))]),
    "norm_3": (lambda L, x: x.norm(3), [(distinct, (2, 3))]),
    "norm_dim": (lambda L, x: x.norm(dim=1), [(normal, (2, 3))]),
    "norm_dim_keepdim": (lambda L, x: L.norm(x, 2, dim=0, keepdim=True), [(normal, (2, 3))]),
    "norm_1_dims": (lambda L, x: x.norm(1, dim=(0, 2)), [(distinct, (2, 3, 2))]),
    "norm_inf_dim": (lambda L, x: x.norm(float("inf"), dim=-1, keepdim=True), [(distinct, (2, 3))]),
    "norm_0": (lambda L, x: x.norm(0) + x.sum(), [(distinct, (2, 3))]),
    "var": (lambda L, x: x.var(), [(normal, (2, 3))]),
    "var_dim": (lambda L, x: x.var(1), [(normal, (2, 3))]),
    "var_keepdim": (lambda L, x: L.var(x, 0, keepdim=True), [(normal, (3, 2))]),
    "var_correction0": (lambda L, x: x.var(correction=0), [(normal, (2, 3))]),
    "var_correction2": (lambda L, x: x.var(dim=1, correction=2), [(normal, (2, 4))]),
    "var_unbiased_false": (lambda L, x: x.var(unbiased=False), [(normal, (2, 3))]),
    "var_positional": (lambda L, x: x.var(1, False, True), [(normal, (2, 3))]),
    "var_bool_first": (lambda L, x: x.var(False), [(normal, (2, 3))]),
    "var_dims": (lambda L, x: x.var((0, 2)), [(normal, (2, 3, 2))]),
    "std": (lambda L, x: x.std(), [(normal, (2, 3))]),
    "std_dim": (lambda L, x: L.std(x, -1), [(normal, (2, 3))]),
    "std_keepdim_c0": (lambda L, x: x.std(0, keepdim=True, correction=0), [(normal, (3, 2))]),
    "logsumexp": (lambda L, x: x.logsumexp(1), [(normal, (2, 3))]),
    "logsumexp_fn": (lambda L, x: L.logsumexp(x, (0, 1)), [(normal, (2, 3))]),
    "logsumexp_keepdim": (lambda L, x: x.logsumexp(0, keepdim=True), [(normal, (2, 3))]),
    "logsumexp_large": (lambda L, x: (x * 300).logsumexp(1), [(normal, (2, 3))]),
    # -- pieces
    "chunk": (lambda L, x: x.chunk(2), [(normal, (4, 3))]),
    "chunk_uneven": (lambda L, x: L.chunk(x, 3, 1), [(normal, (2, 5))]),
    "split": (lambda L, x: x.split(2, 1), [(normal, (2, 5))]),
    "split_list": (lambda L, x: L.split(x, [1, 3], 0), [(normal, (4, 2))]),
    "unbind": (lambda L, x: x.unbind(), [(normal, (3, 2))]),
    "unbind_dim": (lambda L, x: L.unbind(x, -1), [(normal, (3, 2))]),
    "chunk_partial_use": (lambda L, x: x.chunk(3)[1] * 2, [(normal, (3, 2))]),
    "sort_empty": (lambda L, x: x.sort(0), [(normal, (0, 2))]),
    "gather_empty_index": (lambda L, x: x.gather(1, L.zeros(2, 0, dtype=L.int64)), [(normal, (2, 3))]),
    "masked_fill_empty": (lambda L, x: x.masked_fill(L.zeros(0, 3, dtype=L.bool), 1.0), [(normal, (0, 3))]),
    "repeat_empty": (lambda L, x: x.repeat(2, 0), [(normal, (2, 3))]),
    "tril_empty": (lambda L, x: x.tril(), [(normal, (0, 3))]),
    # -- copies and rearrangements
    "repeat": (lambda L, x: x.repeat(2, 1), [(normal, (2, 3))]),
    "repeat_new_dims": (lambda L, x: x.repeat(2, 1, 3), [(normal, (2, 3))]),
    "repeat_1d": (lambda L, x: x.repeat((3,)), [(normal, (2,))]),
    "flip": (lambda L, x: x.flip(0), [(normal, (2, 3))]),
    "flip_dims": (lambda L, x: L.flip(x, (0, -1)), [(normal, (2, 3))]),
    "flip_keyword": (lambda L, x: L.flip(x, dims=[1]), [(normal, (2, 3))]),
    "flip_method_keyword": (lambda L, x: x.flip(dims=(0,)), [(normal, (2, 3))]),
    "keywords": (lambda L, x: x.split(split_size=2, dim=1)[0].cumsum(dim=0).roll(shifts=1, dims=0)
                 .gather(dim=1, index=index(L, [[1], [0]])).masked_fill(mask=L.tensor([True, False])[:, None], value=0.5)
                 .index_select(dim=0, index=index(L, [1])).norm(p=2, dim=1, keepdim=True), [(normal, (2, 5))]),
    "roll_flat": (lambda L, x: x.roll(2), [(normal, (2, 3))]),
    "roll_dim": (lambda L, x: L.roll(x, -1, 1), [(normal, (2, 3))]),
    "roll_dims": (lambda L, x: x.roll((1, 2), (0, 1)), [(normal, (2, 3))]),
    "tril": (lambda L, x: x.tril(), [(normal, (3, 3))]),
    "tril_diag": (lambda L, x: L.tril(x, -1), [(normal, (3, 4))]),
    "triu": (lambda L, x: x.triu(1), [(normal, (3, 4))]),
    "triu_batch": (lambda L, x: L.triu(x), [(normal, (2, 3, 3))]),
    # -- indexing with index tensors
    "gather": (lambda L, x: x.gather(1, index(L, [[0, 0], [2, 1]])), [(normal, (2, 3))]),
    "gather_dim0": (lambda L, x: L.gather(x, 0, index(L, [[1, 0, 1]])), [(normal, (2, 3))]),
    "scatter_add": (lambda L, x, s: x.scatter_add(1, index(L, [[0, 0], [2, 1]]), s),
                    [(normal, (2, 3)), (normal, (2, 2))]),
    "scatter_add_big_src": (lambda L, x, s: L.scatter_add(x, 0, index(L, [[1, 0, 1]]), s),
                            [(normal, (2, 3)), (normal, (2, 3))]),
    "index_select": (lambda L, x: x.index_select(1, index(L, [2, 0, 2])), [(normal, (2, 3))]),
    "index_select_fn": (lambda L, x: L.index_select(x, 0, index(L, [1])), [(normal, (2, 3))]),
    "masked_fill": (lambda L, x: x.masked_fill(x > 0, -1.5), [(distinct, (2, 3))]),
    "masked_fill_broadcast": (lambda L, x: L.masked_fill(x, L.tensor([True, False, True]), 2.0), [(normal, (2, 3))]),
    "masked_fill_tensor_value": (lambda L, x, v: x.masked_fill(L.tensor([[True], [False]]), v),
                                 [(normal, (2, 3)), (normal, ())]),
    # -- values and where they came from
    "max_dim": (lambda L, x: x.max(1), [(distinct, (2, 3))]),
    "min_dim": (lambda L, x: L.min(x, 0, keepdim=True), [(distinct, (2, 3))]),
    "sort": (lambda L, x: x.sort(), [(distinct, (2, 3))]),
    "sort_desc": (lambda L, x: L.sort(x, 0, descending=True), [(distinct, (3, 2))]),
    "topk": (lambda L, x: x.topk(2), [(distinct, (2, 4))]),
    "topk_smallest": (lambda L, x: L.topk(x, 1, 0, largest=False), [(distinct, (3, 2))]),
    # -- copies and conversions
    "clone": (lambda L, x: x.clone(), [(normal, (2, 3))]),
    "contiguous": (lambda L, x: x.t().contiguous() * 1, [(normal, (2, 3))]),
    "type_as": (lambda L, x: x.float().type_as(x), [(normal, (2, 3))]),
    "double": (lambda L, x: x.float().double(), [(normal, (2, 3))]),
    "to_other": (lambda L, x: x.to(L.zeros(1, dtype=L.float32)).to(L.float64), [(normal, (2, 3))]),
    "to_copy": (lambda L, x: x.to(dtype=L.float64, device="cpu", copy=True), [(normal, (2, 3))]),
    # -- in-place forms, on a non-leaf
    "sin_": (lambda L, x: (x * 1).sin_(), [(normal, (2, 3))]),
    "cos_": (lambda L, x: (x * 1).cos_(), [(normal, (2, 3))]),
    "tan_": (lambda L, x: (x * 1).tan_(), [(small, (2, 3))]),
    "sinh_": (lambda L, x: (x * 1).sinh_(), [(normal, (2, 3))]),
    "cosh_": (lambda L, x: (x * 1).cosh_(), [(normal, (2, 3))]),
    "log1p_": (lambda L, x: (x * 1).log1p_(), [(above(-1), (2, 3))]),
    "expm1_": (lambda L, x: (x * 1).expm1_(), [(normal, (2, 3))]),
    "sign_": (lambda L, x: (x * 1).sign_() * x, [(distinct, (2, 3))]),
    "masked_fill_": (lambda L, x: (x * 1).masked_fill_(L.tensor([True, False, True]), 0.5), [(normal, (2, 3))]),
    "scatter_add_": (lambda L, x, s: (x * 1).scatter_add_(0, index(L, [[1, 1, 0]]), s),
                     [(normal, (2, 3)), (normal, (1, 3))]),
    "exp_": (lambda L, x: (x * 1).exp_(), [(normal, (2, 3))]),
    "log_": (lambda L, x: (x * 1).log_(), [(above(0), (2, 3))]),
    "sqrt_": (lambda L, x: (x * 1).sqrt_(), [(above(0), (2, 3))]),
    "abs_": (lambda L, x: (x * 1).abs_(), [(distinct, (2, 3))]),
    "neg_": (lambda L, x: (x * 1).neg_(), [(normal, (2, 3))]),
    "tanh_": (lambda L, x: (x * 1).tanh_(), [(normal, (2, 3))]),
    "sigmoid_": (lambda L, x: (x * 1).sigmoid_(), [(normal, (2, 3))]),
    "relu_": (lambda L, x: (x * 1).relu_(), [(distinct, (2, 3))]),
    "pow_": (lambda L, x: (x * 1).pow_(3), [(normal, (2, 3))]),
    "tril_": (lambda L, x: (x * 1).tril_(), [(normal, (3, 3))]),
    "triu_": (lambda L, x: (x * 1).triu_(-1), [(normal, (3, 3))]),
}

# These round values to float32 on the way: finite differences in float32 cannot check them.
# Their gradients are checked against PyTorch's (test_matches_torch) and in closed form below.
THROUGH_FLOAT32 = {"type_as", "double", "to_other", "cumsum_dtype", "prod_dtype"}
DIFFERENTIABLE = [n for n in CASES if n not in THROUGH_FLOAT32]
# PyTorch 2.13's own backward fails here ("ScatterAddBackward0 returned an invalid gradient ... got
# [1, 3] but expected shape compatible with [2, 3]") when src is larger than index; gradcheck covers it.
TORCH_FAILS = {"scatter_add_big_src"}


def make_inputs(name):
    """The case's function and inputs; the same inputs whatever order the tests run in."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(name.encode()))
    fn, makers = CASES[name]
    return fn, [make(*shape) for make, shape in makers]


def outputs(out) -> tuple:
    return tuple(out) if isinstance(out, tuple) else (out,)


# -- 1. gradcheck and gradgradcheck (float64) -------------------------------------------------------
@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradcheck(name):
    fn, arrays = make_inputs(name)
    inputs = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(lambda *xs: fn(minigrad, *xs), inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradgradcheck(name):
    fn, arrays = make_inputs(name)
    inputs = [minigrad.tensor(a, requires_grad=True) for a in arrays]

    def float_outputs(*xs):  # indices (sort, topk, max) get no gradient, so no grad_outputs either
        return tuple(o for o in outputs(fn(minigrad, *xs)) if o.is_floating_point())

    assert gradgradcheck(float_outputs, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


# -- 2. the same inputs through PyTorch ------------------------------------------------------------------
def run(lib, fn, arrays, seed=0, dtype=np.float64):
    inputs = [lib.tensor(np.array(a, dtype=dtype), requires_grad=True) for a in arrays]
    outs = outputs(fn(lib, *inputs))
    rng = np.random.default_rng(seed)
    values, names, dtypes_, loss = [], [], [], None
    for o in outs:
        values.append(o.detach().numpy().copy())
        dtypes_.append(str(o.dtype).split(".")[-1])
        names.append(o.grad_fn.name() if o.grad_fn is not None else None)
        if o.requires_grad:
            term = (o * lib.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype))).sum()
            loss = term if loss is None else loss + term
    grads = []
    if loss is not None:
        found = lib.autograd.grad(loss, inputs, allow_unused=True)
        grads = [np.zeros(a.shape, dtype) if g is None else g.detach().numpy().copy() for a, g in zip(arrays, found)]
    result = fn(lib, *inputs)
    named = (hasattr(result, "values"), hasattr(result, "indices"), type(result).__name__) if isinstance(result, tuple) else None
    return values, grads, dtypes_, names, named


def tolerance(arrays, dtype=np.float64) -> float:
    """Rounding in ``dtype``: a few ulps per value an output can depend on."""
    n = max([np.size(a) for a in arrays] + [1])
    return 16 * n * np.finfo(dtype).eps


@needs_torch
@pytest.mark.parametrize("name", [n for n in CASES if n not in TORCH_FAILS])
def test_matches_torch(name):
    fn, arrays = make_inputs(name)
    mv, mg, md, mn, mt = run(minigrad, fn, arrays)
    tv, tg, td, tn, tt = run(torch, fn, arrays)
    assert md == td, f"dtypes: minigrad {md}, torch {td}"
    assert mn == tn, f"node names: minigrad {mn}, torch {tn}"
    assert mt == tt, "(values, indices) results must be named tuples of PyTorch's type names (return_types.max, ...)"
    tol = tolerance(arrays, np.float32 if name in THROUGH_FLOAT32 else np.float64)
    assert len(mv) == len(tv)
    for i, (m, t) in enumerate(zip(mv, tv)):
        assert m.shape == t.shape, f"output {i}: shape {m.shape}, torch {t.shape}"
        scale = max(1.0, float(np.abs(t[np.isfinite(t)]).max())) if np.isfinite(t).any() else 1.0
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol * scale, err_msg=f"value of output {i}")
    assert len(mg) == len(tg)
    for i, (m, t) in enumerate(zip(mg, tg)):
        scale = max(1.0, float(np.abs(t).max())) if t.size else 1.0
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol * scale, err_msg=f"gradient of input {i}")


@needs_torch
@pytest.mark.parametrize("name", [n for n in CASES if n not in TORCH_FAILS])
def test_float32_matches_torch(name):
    """In float32: the same dtypes for outputs and gradients, values within float32 rounding."""
    fn, arrays = make_inputs(name)
    mv, mg, md, mn, mt = run(minigrad, fn, arrays, dtype=np.float32)
    tv, tg, td, tn, tt = run(torch, fn, arrays, dtype=np.float32)
    assert (md, mn, mt) == (td, tn, tt)
    assert [g.dtype for g in mg] == [g.dtype for g in tg]
    n = max([np.size(a) for a in arrays] + [1])
    tol = 16 * n * np.finfo(np.float32).eps
    for m, t_ in zip(mv + mg, tv + tg):
        assert m.shape == t_.shape
        scale = max(1.0, float(np.abs(t_[np.isfinite(t_)]).max())) if np.isfinite(t_).any() else 1.0
        np.testing.assert_allclose(m, t_, rtol=tol, atol=tol * scale)


# -- prod: the plain backward and the differentiable one agree, zeros included ---------------------
@pytest.mark.parametrize("zeros", [0, 1, 2])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_backward_twins_agree(zeros, dim):
    x = minigrad.tensor(with_zeros(zeros)(3, 4), requires_grad=True)
    g = minigrad.tensor(normal(*((x.prod() if dim is None else x.prod(dim)).shape)))

    def grad_of(create_graph):
        out = x.prod() if dim is None else x.prod(dim)
        (grad,) = minigrad.autograd.grad(out, x, g, create_graph=create_graph)
        return grad.detach().numpy()

    np.testing.assert_allclose(grad_of(False), grad_of(True), rtol=8 * 12 * EPS64, atol=1e-15)


# -- 3. PyTorch's exception types ------------------------------------------------------------------------
def t(L, *shape, dtype=None):
    return L.zeros(*shape, dtype=dtype or L.float32)


BAD = {
    "mm_vector": lambda L: t(L, 3).mm(t(L, 3, 2)),
    "mm_shapes": lambda L: t(L, 2, 3).mm(t(L, 2, 3)),
    "mm_dtypes": lambda L: t(L, 2, 3).mm(t(L, 3, 2, dtype=L.float64)),
    "mv_matrix": lambda L: t(L, 2, 3).mv(t(L, 3, 1)),
    "mv_size": lambda L: t(L, 2, 3).mv(t(L, 2)),
    "bmm_2d": lambda L: t(L, 2, 3).bmm(t(L, 3, 2)),
    "bmm_batch": lambda L: t(L, 2, 2, 3).bmm(t(L, 3, 3, 2)),
    "t_3d": lambda L: t(L, 2, 2, 3).t(),
    "cumsum_dim": lambda L: t(L, 2).cumsum(1),
    "prod_dim": lambda L: t(L, 2).prod(2),
    "norm_int": lambda L: L.tensor([1, 2]).norm(),
    "norm_fro_3_dims": lambda L: t(L, 2, 2, 2).norm(dim=(0, 1, 2)),
    "norm_inf_empty": lambda L: t(L, 0).norm(float("inf")),
    "var_int": lambda L: L.tensor([1, 2]).var(),
    "std_dim": lambda L: t(L, 2, 2).std(dim=5),
    "logsumexp_dim": lambda L: t(L, 2).logsumexp(3),
    "logsumexp_no_dim": lambda L: t(L, 2).logsumexp(),
    "chunk_0": lambda L: t(L, 4).chunk(0),
    "chunk_0d": lambda L: L.tensor(1.0).chunk(1),
    "split_0": lambda L: t(L, 4).split(0),
    "split_negative": lambda L: t(L, 4).split(-1),
    "split_sizes": lambda L: t(L, 4).split([1, 2]),
    "unbind_dim": lambda L: t(L, 2).unbind(1),
    "unbind_0d": lambda L: L.tensor(1.0).unbind(),
    "gather_float_index": lambda L: t(L, 1, 2).gather(1, L.tensor([[1.0]])),
    "gather_out_of_bounds": lambda L: t(L, 1, 2).gather(1, index(L, [[3]])),
    "gather_negative": lambda L: t(L, 1, 2).gather(1, index(L, [[-1]])),
    "gather_ndim": lambda L: t(L, 1, 2).gather(1, index(L, [1])),
    "scatter_add_dtype": lambda L: t(L, 2, 3).scatter_add(0, index(L, [[0, 1]]), t(L, 2, 3, dtype=L.float64)),
    "scatter_add_out_of_bounds": lambda L: t(L, 2, 3).scatter_add(0, index(L, [[0, 5]]), t(L, 2, 3)),
    "scatter_add_small_src": lambda L: t(L, 2, 3).scatter_add(0, index(L, [[0, 1]]), t(L, 1, 1)),
    "index_select_2d": lambda L: t(L, 1, 2).index_select(1, index(L, [[1]])),
    "index_select_float": lambda L: t(L, 1, 2).index_select(1, L.tensor([1.0])),
    # PyTorch raises IndexError here, but RuntimeError for the last dim of a 2-D tensor (another kernel)
    "index_select_out_of_range": lambda L: t(L, 2, 1).index_select(0, index(L, [2])),
    "index_select_negative": lambda L: t(L, 3).index_select(0, index(L, [-1])),
    "masked_fill_long_mask": lambda L: t(L, 3).masked_fill(index(L, [1, 0, 1]), 1.0),
    "masked_fill_1d_value": lambda L: t(L, 3).masked_fill(t(L, 3) == 0, L.tensor([1.0, 2.0])),
    "repeat_few_dims": lambda L: t(L, 2, 2).repeat(2),
    "repeat_negative": lambda L: t(L, 2).repeat(-1),
    "flip_duplicate": lambda L: t(L, 2, 2).flip(0, 0),
    "flip_dim": lambda L: t(L, 2, 2).flip(2),
    "roll_misaligned": lambda L: t(L, 2, 2).roll((1, 1), 0),
    "roll_dim": lambda L: t(L, 2, 2).roll(1, 2),
    "tril_1d": lambda L: t(L, 2).tril(),
    "triu_0d": lambda L: L.tensor(1.0).triu(),
    "topk_too_many": lambda L: t(L, 3).topk(4),
    "topk_negative": lambda L: t(L, 3).topk(-1),
    "sort_dim": lambda L: t(L, 3).sort(1),
    "roll_0d_dim": lambda L: L.tensor(1.0).roll(1, 0),
    "index_select_0d_two": lambda L: L.tensor(1.0).index_select(0, index(L, [0, 0])),
    "allclose_dtypes": lambda L: L.allclose(t(L, 1), t(L, 1, dtype=L.float64)),
    "isclose_shapes": lambda L: L.isclose(t(L, 2), t(L, 3)),
    "sin_int_inplace": lambda L: L.tensor([1, 2]).sin_(),
    "full_int_size": lambda L: L.full(2, 3.0),
    "eye_negative": lambda L: L.eye(-1),
    "linspace_negative": lambda L: L.linspace(0, 1, -1),
    "randn_like_int": lambda L: L.randn_like(L.tensor([1, 2])),
    "randn_int_dtype": lambda L: L.randn(2, dtype=L.int64),
    "tensor_positional_dtype": lambda L: L.tensor([1.0], L.float64),  # dtype= and device= are keyword-only
    "full_positional_dtype": lambda L: L.full((2,), 1.0, L.float64),
    "type_python_float": lambda L: t(L, 2).type(float),
    "type_cuda_name": lambda L: t(L, 2).type("torch.cuda.FloatTensor"),
    "to_bad_string": lambda L: t(L, 2).to("float"),
    # devices: a CPU-only PyTorch raises AssertionError for CUDA and NotImplementedError for MPS
    "zeros_cuda": lambda L: L.zeros(2, device="cuda"),
    "tensor_cuda0": lambda L: L.tensor([1.0], device="cuda:0"),
    "ones_cuda_device": lambda L: L.ones(2, device=L.device("cuda")),
    "to_cuda": lambda L: t(L, 2).to("cuda"),
    "to_cuda_dtype": lambda L: t(L, 2).to("cuda", L.float64),
    "cuda_method": lambda L: t(L, 2).cuda(),
    "randn_cuda": lambda L: L.randn(2, device="cuda"),
    "zeros_mps": lambda L: L.zeros(2, device="mps"),
    "device_unknown": lambda L: L.device("gpu"),
    "zeros_int_device": lambda L: L.zeros(1, device=0),
    "arange_unknown_device": lambda L: L.arange(3, device="tpu"),
}


def raised(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return e
    return None


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises(name):
    error = raised(BAD[name], minigrad)
    assert error is not None, f"minigrad accepted {name}"
    assert str(error), "an error must say what went wrong"


@needs_torch
@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_torchs_type(name):
    theirs = raised(BAD[name], torch)
    ours = raised(BAD[name], minigrad)
    assert theirs is not None, f"torch accepts {name}: the case is wrong"
    assert isinstance(ours, type(theirs)), f"minigrad raised {type(ours).__name__}: {ours}; torch {type(theirs).__name__}: {theirs}"


# -- creation functions ------------------------------------------------------------------------------
CREATION = {
    "full_int": lambda L: L.full((2, 3), 3),
    "full_float": lambda L: L.full((2,), 3.5),
    "full_bool": lambda L: L.full([2], True),
    "full_dtype": lambda L: L.full((2,), 3, dtype=L.float64, device="cpu"),
    "full_like": lambda L: L.full_like(L.tensor([1, 2]), 3.7),
    "full_like_dtype": lambda L: L.full_like(L.tensor([1, 2]), 3.7, dtype=L.float32),
    "eye": lambda L: L.eye(3),
    "eye_rect": lambda L: L.eye(2, 3, dtype=L.int64, device="cpu"),
    "linspace": lambda L: L.linspace(0, 1, 5),
    "linspace_one": lambda L: L.linspace(-2, 3, 1),
    "linspace_none": lambda L: L.linspace(0, 1, 0),
    "linspace_int": lambda L: L.linspace(0, 10, 3, dtype=L.int64),
    "linspace_int_trunc": lambda L: L.linspace(-3, 4, 4, dtype=L.int32),
    "zeros_device": lambda L: L.zeros(2, 3, device="cpu"),
    "ones_device_obj": lambda L: L.ones((2,), device=L.device("cpu")),
    "tensor_device": lambda L: L.tensor([1, 2], device="cpu:0"),
    "arange_device": lambda L: L.arange(4, device="cpu"),
    "zeros_like_device": lambda L: L.zeros_like(L.tensor([1.5]), device="cpu"),
    "ones_like_dtype": lambda L: L.ones_like(L.tensor([1.5]), dtype=L.int32),
    "new_zeros": lambda L: L.tensor([1.5], dtype=L.float64).new_zeros(2, 3),
    "new_zeros_tuple": lambda L: L.tensor([1]).new_zeros((2,), dtype=L.float32),
    "new_ones": lambda L: L.tensor([1], dtype=L.int32).new_ones(2),
    "new_full": lambda L: L.tensor([1.5]).new_full((2,), 3),
    "new_tensor": lambda L: L.tensor([1.5]).new_tensor([1, 2]),
    "new_tensor_int": lambda L: L.tensor([1]).new_tensor([1.5, 2.0]),
    "new_tensor_dtype": lambda L: L.tensor([1]).new_tensor([1.5], dtype=L.float64),
    "float": lambda L: L.tensor([1, 2]).float(),
    "double": lambda L: L.tensor([1.5]).double(),
    "long": lambda L: L.tensor([1.7, -1.7]).long(),
    "int": lambda L: L.tensor([1.7, -1.7]).int(),
    "bool": lambda L: L.tensor([0.0, 2.0]).bool(),
    "type_dtype": lambda L: L.tensor([1.5]).type(L.int64),
    "type_name": lambda L: L.tensor([1.5]).type("torch.DoubleTensor"),
    "isclose": lambda L: L.isclose(L.tensor([1.0, 1.0, float("nan")]), L.tensor([1.0 + 1e-6, 1.1, float("nan")])),
    "isclose_nan": lambda L: L.tensor([1.0, float("nan")]).isclose(L.tensor([1.0, float("nan")]), equal_nan=True),
    "isclose_int": lambda L: L.isclose(L.tensor([1, 2]), L.tensor([1, 3])),
    "isclose_tolerances": lambda L: L.isclose(L.tensor([1.0, 2.0]), L.tensor([1.05, 2.3]), rtol=0.1, atol=0.0),
}
RANDOM = {
    "empty": lambda L: L.empty(2, 3),
    "empty_tuple": lambda L: L.empty((2, 3), dtype=L.int64, device="cpu"),
    "empty_like": lambda L: L.empty_like(L.tensor([1, 2])),
    "new_empty": lambda L: L.tensor([1.5]).new_empty((2,)),
    "randn_like": lambda L: L.randn_like(L.zeros(2, 3, dtype=L.float64)),
    "rand_like": lambda L: L.rand_like(L.zeros(2, 3), device="cpu"),
    "rand_like_dtype": lambda L: L.rand_like(L.zeros(2, dtype=L.int64), dtype=L.float32),
    "randn_device": lambda L: L.randn(2, 3, device="cpu"),
    "rand_device": lambda L: L.rand(2, device="cpu", dtype=L.float64),
    "randint_device": lambda L: L.randint(0, 5, (3,), device="cpu"),
    "randperm_device": lambda L: L.randperm(4, device="cpu"),
    "randint_high_size": lambda L: L.randint(10, (3,)),
}


@needs_torch
@pytest.mark.parametrize("name", list(CREATION))
def test_creation_matches_torch(name):
    ours, theirs = CREATION[name](minigrad), CREATION[name](torch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@needs_torch
@pytest.mark.parametrize("name", list(RANDOM))
def test_random_creation_shape_and_dtype(name):
    ours, theirs = RANDOM[name](minigrad), RANDOM[name](torch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)


def test_random_like_draws_from_the_seeded_generator():
    minigrad.manual_seed(3)
    a = minigrad.randn_like(minigrad.zeros(1000))
    minigrad.manual_seed(3)
    b = minigrad.randn_like(minigrad.zeros(1000))
    assert minigrad.equal(a, b)
    # mean of 1000 standard normals: 5 standard errors is a 1-in-a-million miss
    assert abs(a.mean().item()) < 5 / math.sqrt(1000)
    u = minigrad.rand_like(minigrad.zeros(1000, dtype=minigrad.float64))
    assert u.dtype == minigrad.float64 and 0 <= u.min().item() and u.max().item() < 1


def test_creation_requires_grad():
    for t_ in (minigrad.full((2,), 1.5, requires_grad=True), minigrad.eye(2, requires_grad=True),
               minigrad.empty(2, requires_grad=True), minigrad.randn_like(minigrad.zeros(2), requires_grad=True),
               minigrad.zeros(2).new_zeros(3, requires_grad=True), minigrad.linspace(0, 1, 3, requires_grad=True)):
        assert t_.requires_grad and t_.is_leaf


# -- whole-tensor comparisons ---------------------------------------------------------------------------
@pytest.mark.parametrize("lib", LIBS, ids=lambda L: L.__name__)
def test_allclose_and_equal(lib):
    a = lib.tensor([1.0, 2.0])
    assert lib.allclose(a, a + 1e-9) is True
    assert lib.allclose(a, a + 1e-3) is False
    assert a.allclose(a + 1e-3, atol=1e-2) is True
    assert lib.allclose(lib.tensor([1.0, 1.0]), lib.tensor([1.0])) is True  # broadcasts
    assert lib.allclose(lib.tensor([float("nan")]), lib.tensor([float("nan")])) is False
    assert lib.allclose(lib.tensor([float("nan")]), lib.tensor([float("nan")]), equal_nan=True) is True
    assert lib.equal(a, lib.tensor([1.0, 2.0])) is True
    assert lib.equal(a, lib.tensor([1.0])) is False  # shapes differ: False, no broadcasting
    assert lib.equal(lib.tensor([float("nan")]), lib.tensor([float("nan")])) is False
    assert a.equal(lib.tensor([1.0, 2.5])) is False


# -- method and function forms, and what the results are --------------------------------------------
def test_max_min_with_dim_return_named_values_and_indices():
    x = minigrad.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    values, indices = x.max(1)
    assert x.max(1).values.tolist() == [5.0, 7.0] and x.max(1).indices.tolist() == [1, 0]
    assert minigrad.min(x, 0).indices.tolist() == [0, 1, 0]
    assert values.tolist() == [5.0, 7.0] and indices.dtype == minigrad.int64
    s = x.sort(descending=True)
    assert s.values.tolist() == [[5.0, 2.0, 1.0], [7.0, 3.0, 0.0]] and s.indices.tolist() == [[1, 2, 0], [0, 2, 1]]
    k = minigrad.topk(x, 2, dim=0)
    assert type(k).__name__ == "topk" and k.indices.tolist() == [[1, 0, 1], [0, 1, 0]]


@pytest.mark.parametrize("lib", LIBS, ids=lambda L: L.__name__)
def test_sort_is_stable_and_puts_nan_last_or_first(lib):
    x = lib.tensor([2.0, float("nan"), 1.0, 2.0, 1.0])
    up = x.sort(stable=True)
    down = x.sort(descending=True, stable=True)
    assert up.indices.tolist() == [2, 4, 0, 3, 1]
    assert down.indices.tolist() == [1, 0, 3, 2, 4]


def test_split_pieces_are_views_sharing_memory_and_version():
    x = minigrad.arange(6.0)
    a, b = x.split(3)
    x.add_(1)
    assert a.tolist() == [1.0, 2.0, 3.0] and b._version == x._version
    assert [p.item() for p in x.unbind()] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert minigrad.zeros(2, 0).unbind(1) == ()


def test_index_ops_accumulate_repeated_indices():
    x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.index_select(0, minigrad.tensor([0, 0, 2])).sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 1.0]
    z = minigrad.zeros(3).scatter_add(0, minigrad.tensor([1, 1, 2]), minigrad.tensor([1.0, 2.0, 3.0]))
    assert z.tolist() == [0.0, 3.0, 3.0]


def test_inplace_variants_bump_the_version_and_keep_the_tensor():
    x = minigrad.tensor([0.5, -0.5])
    for op in ("sin_", "cos_", "tan_", "sinh_", "cosh_", "expm1_", "log1p_", "sign_", "exp_", "abs_", "neg_",
               "tanh_", "sigmoid_", "relu_"):
        before = x._version
        assert getattr(x, op)() is x and x._version == before + 1
    m = minigrad.zeros(2, 2)
    assert m.masked_fill_(minigrad.tensor([True, False]), 3.0) is m and m.tolist() == [[3.0, 0.0], [3.0, 0.0]]
    assert m.tril_() is m and m.tolist() == [[3.0, 0.0], [3.0, 0.0]]
    assert m.triu_() is m and m.tolist() == [[3.0, 0.0], [0.0, 0.0]]


def test_inplace_on_a_leaf_that_requires_grad_is_refused():
    x = minigrad.tensor([0.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.sin_()


# -- conversions, type() and contiguous ---------------------------------------------------------------------
def test_type_names_and_conversions():
    x = minigrad.tensor([1.5, -2.5])
    assert x.type() == "minigrad.FloatTensor"
    assert x.double().type() == "minigrad.DoubleTensor"
    assert x.long().type() == "minigrad.LongTensor" and x.long().tolist() == [1, -2]
    assert x.int().type() == "minigrad.IntTensor" and x.bool().type() == "minigrad.BoolTensor"
    assert x.type("minigrad.DoubleTensor").dtype == minigrad.float64
    assert x.type("torch.LongTensor").dtype == minigrad.int64  # PyTorch's spelling works unchanged
    assert x.type(minigrad.float32) is x and x.float() is x and x.contiguous() is x
    assert x.to(minigrad.float32) is x and x.to("cpu") is x and x.cpu() is x
    assert x.to(copy=True) is not x and x.to(copy=True).tolist() == x.tolist()
    assert x.to(minigrad.tensor([1])).dtype == minigrad.int64
    assert x.to(minigrad.device("cpu"), minigrad.float64).dtype == minigrad.float64
    assert x.to(device="cpu", dtype=minigrad.float64, non_blocking=True).dtype == minigrad.float64
    assert x.to(minigrad.float32, False, True) is not x and x.to(minigrad.float32, False, False) is x


@needs_torch
def test_type_names_are_torchs_with_minigrads_prefix():
    for dtype in ("float32", "float64", "int32", "int64", "bool"):
        ours = minigrad.zeros(1, dtype=getattr(minigrad, dtype)).type()
        theirs = torch.zeros(1, dtype=getattr(torch, dtype)).type()
        assert ours.replace("minigrad.", "torch.") == theirs


def test_conversions_carry_gradients_back_in_the_original_dtype():
    x = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64, requires_grad=True)
    (x.float() * 3).sum().backward()
    assert x.grad.dtype == minigrad.float64 and x.grad.tolist() == [3.0, 3.0]
    y = x.to(dtype=minigrad.float64, copy=True)
    assert y is not x and y.grad_fn.name() == "ToCopyBackward0"


# -- devices ------------------------------------------------------------------------------------------------
def test_device_object():
    d = minigrad.device("cpu")
    assert d.type == "cpu" and d.index is None and repr(d) == "device(type='cpu')" and str(d) == "cpu"
    assert minigrad.device("cpu:0") == minigrad.device("cpu", 0) and repr(minigrad.device("cpu:0")) == "device(type='cpu', index=0)"
    assert minigrad.device("cpu") != minigrad.device("cpu:0")
    assert minigrad.device(d) == d and hash(minigrad.device("cpu")) == hash(d)
    assert minigrad.device("cuda").type == "cuda"  # made, as in PyTorch; only using it fails
    assert pickle.loads(pickle.dumps(d)) == d


@pytest.mark.parametrize("lib", LIBS, ids=lambda L: L.__name__)
def test_device_equality_follows_torch(lib):
    d = lib.device("cpu")
    assert (d == "cpu") is False  # PyTorch: a device never equals a string; compare d.type
    assert lib.zeros(1).device == lib.device("cpu") and lib.zeros(1).device.type == "cpu"
    assert lib.zeros(1, device="cpu:1").device == lib.device("cpu")
    assert lib.zeros(1).is_cuda is False
    assert lib.get_default_device() == lib.device("cpu")


def test_every_creation_function_accepts_device():
    cpu = minigrad.device("cpu")
    makers = [
        lambda d: minigrad.tensor([1.0], device=d), lambda d: minigrad.zeros(2, device=d),
        lambda d: minigrad.ones(2, device=d), lambda d: minigrad.rand(2, device=d),
        lambda d: minigrad.randn(2, device=d), lambda d: minigrad.arange(2, device=d),
        lambda d: minigrad.full((2,), 1.0, device=d), lambda d: minigrad.empty(2, device=d),
        lambda d: minigrad.eye(2, device=d), lambda d: minigrad.linspace(0, 1, 2, device=d),
        lambda d: minigrad.zeros_like(minigrad.zeros(1), device=d), lambda d: minigrad.ones_like(minigrad.zeros(1), device=d),
        lambda d: minigrad.full_like(minigrad.zeros(1), 2, device=d), lambda d: minigrad.empty_like(minigrad.zeros(1), device=d),
        lambda d: minigrad.rand_like(minigrad.zeros(1), device=d), lambda d: minigrad.randn_like(minigrad.zeros(1), device=d),
        lambda d: minigrad.randint(3, size=(2,), device=d), lambda d: minigrad.randperm(3, device=d),
        lambda d: minigrad.zeros(1).new_zeros(2, device=d), lambda d: minigrad.zeros(1).new_ones(2, device=d),
        lambda d: minigrad.zeros(1).new_full((2,), 1.0, device=d), lambda d: minigrad.zeros(1).new_empty(2, device=d),
        lambda d: minigrad.zeros(1).new_tensor([1.0], device=d),
    ]
    for make in makers:
        for d in ("cpu", cpu, None, "cpu:0"):
            assert make(d).device == cpu
        with pytest.raises(RuntimeError, match="CPU only"):
            make("cuda")


def test_cuda_error_is_caught_as_runtime_and_assertion_error():
    with pytest.raises(RuntimeError, match="minigrad runs on the CPU only"):
        minigrad.zeros(2).to("cuda:0")
    with pytest.raises(AssertionError):
        minigrad.zeros(2, device="cuda")
    with pytest.raises(NotImplementedError):
        minigrad.zeros(2, device="mps")


def test_set_default_device():
    minigrad.set_default_device("cpu")
    assert minigrad.get_default_device() == minigrad.device("cpu")
    minigrad.set_default_device(None)
    assert minigrad.zeros(1).device.type == "cpu"
    with pytest.raises(RuntimeError, match="CPU only"):
        minigrad.set_default_device("cuda")
    assert minigrad.get_default_device().type == "cpu"  # unchanged by the refused call


def test_device_resolve_is_the_one_public_check():
    from minigrad.device import resolve

    assert resolve("cpu") == resolve(None) == resolve(minigrad.device("cpu", 3)) == minigrad.device("cpu")
    with pytest.raises(RuntimeError, match="CPU only"):
        resolve(minigrad.device("cuda", 1))


def test_a_tutorial_preamble_runs():
    cuda = getattr(minigrad, "cuda", None)
    available = cuda.is_available() if cuda is not None else False
    device = minigrad.device("cuda" if available else "cpu")
    x = minigrad.randn(3, 2, device=device, dtype=minigrad.float32)
    w = minigrad.randn(2, 1, device=device, requires_grad=True)
    loss = (x.to(device) @ w).pow(2).mean()
    loss.backward()
    assert w.grad.shape == w.shape and w.grad.device == device


# -- special values: PyTorch's results at the edges --------------------------------------------------------
INF, NAN = float("inf"), float("nan")
EDGE_VALUES = {
    "sin_int": lambda L: L.tensor([1, 2]).sin(),
    "log1p_bool": lambda L: L.tensor([True, False]).log1p(),
    "sign_int": lambda L: L.tensor([3, 0, -2]).sign(),
    "sign_bool": lambda L: L.tensor([True, False]).sign(),
    "sign_nan_zero": lambda L: L.tensor([NAN, -0.0, 0.0, -INF]).sign(),
    "expm1_tiny": lambda L: L.tensor([1e-12, -1e-15], dtype=L.float64).expm1(),
    "log1p_tiny": lambda L: L.tensor([1e-12, -1e-15], dtype=L.float64).log1p(),
    "sinh_overflow": lambda L: L.tensor([100.0, -100.0]).sinh(),
    "cumsum_int32": lambda L: L.tensor([1, 2], dtype=L.int32).cumsum(0),
    "cumsum_bool": lambda L: L.tensor([True, True]).cumsum(0),
    "cumsum_int_to_float": lambda L: L.tensor([1, 2]).cumsum(0, dtype=L.float64),
    "prod_int_to_float": lambda L: L.tensor([[1, 2]]).prod(dtype=L.float32),
    "prod_int32": lambda L: L.tensor([2, 3], dtype=L.int32).prod(),
    "prod_bool_dim": lambda L: L.tensor([[True, False]]).prod(1),
    "prod_empty": lambda L: L.zeros(0).prod(),
    "logsumexp_int": lambda L: L.tensor([1, 2]).logsumexp(0),
    "logsumexp_minus_inf_row": lambda L: L.tensor([[-INF, -INF], [0.0, 1.0]]).logsumexp(1),
    "logsumexp_inf": lambda L: L.tensor([INF, 1.0]).logsumexp(0),
    "logsumexp_empty": lambda L: L.zeros(2, 0).logsumexp(1),
    "norm_zero": lambda L: L.zeros(3).norm(),
    "norm_empty": lambda L: L.zeros(0).norm(),
    "norm_0": lambda L: L.tensor([0.0, 2.0, -1.0]).norm(0),
    "var_one_value": lambda L: L.tensor([1.0]).var(),
    "var_big_correction": lambda L: L.tensor([1.0, 2.0]).var(correction=3),
    "std_empty": lambda L: L.zeros(0).std(),
    "masked_fill_int": lambda L: L.tensor([1, 2]).masked_fill(L.tensor([True, False]), 2.5),
    "masked_fill_int_value_tensor": lambda L: L.zeros(3).masked_fill(L.tensor([True, False, True]), L.tensor(2)),
    "repeat_zero": lambda L: L.ones(2).repeat(0),
    "roll_0d": lambda L: L.tensor(3.0).roll(1),
    "flip_0d": lambda L: L.tensor(3.0).flip(0),
    "eye_0": lambda L: L.eye(0),
    "sort_nan": lambda L: L.tensor([1.0, NAN, 0.0]).sort(descending=True).indices,
    "topk_0": lambda L: L.tensor([1.0, 2.0]).topk(0).values,
    "split_empty": lambda L: L.stack([L.tensor(float(len(L.zeros(0).split(2))))]),
    "chunk_empty": lambda L: L.stack([L.tensor(float(len(L.zeros(0).chunk(3))))]),
    "chunk_fewer": lambda L: L.stack([L.tensor(float(len(L.zeros(6).chunk(4))))]),
    "isclose_inf": lambda L: L.isclose(L.tensor([INF, -INF, INF]), L.tensor([INF, INF, 1.0])),
}


@needs_torch
@pytest.mark.filterwarnings("ignore:.*degrees of freedom is:UserWarning")
@pytest.mark.parametrize("name", list(EDGE_VALUES))
def test_edge_values_match_torch(name):
    ours, theirs = EDGE_VALUES[name](minigrad), EDGE_VALUES[name](torch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    expected = theirs.numpy()
    tol = 4 * np.finfo(expected.dtype).eps if expected.dtype.kind == "f" else 0
    np.testing.assert_allclose(ours.numpy(), expected, rtol=tol, atol=0)


def fixed(values):
    return lambda *shape: np.array(values, dtype=np.float64)


# Gradients at points where a formula needs care (zeros, infinities, ties, nothing to average).
EDGE_GRADS = {
    "norm_at_zero": (lambda L, x: x.norm(), [fixed([0.0, 0.0, 0.0])]),
    "norm_dim_one_zero_row": (lambda L, x: x.norm(dim=1), [fixed([[0.0, 0.0], [3.0, 4.0]])]),
    "norm_1_with_zeros": (lambda L, x: x.norm(1), [fixed([0.0, -2.0, 1.0])]),
    "norm_inf_ties": (lambda L, x: x.norm(INF), [fixed([2.0, -2.0, 1.0])]),
    "norm_3_with_zero": (lambda L, x: x.norm(3), [fixed([0.0, -2.0, 1.0])]),
    "logsumexp_some_minus_inf": (lambda L, x: x.logsumexp(0), [fixed([-INF, 0.0, 1.0])]),
    "var_one_value": (lambda L, x: x.var(), [fixed([1.5])]),
    "std_constant": (lambda L, x: x.std(), [fixed([2.0, 2.0, 2.0])]),
    "masked_fill_everything": (lambda L, x: x.masked_fill(L.tensor([True, True]), 0.0), [fixed([1.0, 2.0])]),
    "prod_all_zeros": (lambda L, x: x.prod(0), [fixed([[0.0, 1.0], [0.0, 0.0]])]),
    "cumsum_empty": (lambda L, x: x.cumsum(0), [fixed(np.zeros((0, 2)))]),
    "sort_empty": (lambda L, x: x.sort().values, [fixed(np.zeros((2, 0)))]),
    "gather_empty": (lambda L, x: x.gather(0, L.zeros(0, 2, dtype=L.int64)), [fixed([[1.0, 2.0]])]),
}


@needs_torch
@pytest.mark.filterwarnings("ignore:.*degrees of freedom is:UserWarning")
@pytest.mark.parametrize("name", list(EDGE_GRADS))
def test_edge_gradients_match_torch(name):
    fn, makers = EDGE_GRADS[name]
    arrays = [make() for make in makers]
    mv, mg, md, mn, _ = run(minigrad, fn, arrays)
    tv, tg, td, tn, _ = run(torch, fn, arrays)
    assert (md, mn) == (td, tn)
    tol = tolerance(arrays)
    for m, t_ in zip(mv + mg, tv + tg):
        assert m.shape == t_.shape
        np.testing.assert_allclose(m, t_, rtol=tol, atol=tol)


# -- out= (PyTorch's tensors tutorial writes torch.mul(t, t, out=z) and torch.matmul(t, t.T, out=y)) ----
@pytest.mark.parametrize("lib", LIBS, ids=lambda L: L.__name__)
def test_out_argument(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
    z = lib.rand_like(x)
    assert lib.mul(x, x, out=z) is z and z.tolist() == [[1.0, 4.0], [9.0, 16.0]]
    y = lib.zeros(0)
    assert lib.matmul(x, x.T, out=y) is y and y.tolist() == [[5.0, 11.0], [11.0, 25.0]]
    d = lib.zeros(2, 2, dtype=lib.float64)
    assert lib.add(x, 1, out=d).dtype == lib.float64 and d.tolist() == [[2.0, 3.0], [4.0, 5.0]]
    s = lib.zeros(2)
    assert lib.sin(lib.zeros(2), out=s) is s and lib.sum(x, 0, out=s).tolist() == [4.0, 6.0]
    with pytest.warns(UserWarning, match="resized"):
        lib.mul(x, x, out=lib.zeros(3))
    with pytest.raises(RuntimeError, match="can't be cast"):
        lib.mul(x, x, out=lib.zeros(2, 2, dtype=lib.int64))
    w = lib.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        lib.mul(w, x, out=lib.zeros(2, 2))
    with lib.no_grad():
        assert lib.mul(w, x, out=z) is z


# -- ops taking a dim, over generated shapes (zero-size and size-1 dims included) --------------------
DIM_OPS = {
    "prod": lambda L, x, d, k: x.prod(d, keepdim=k),
    "cumsum": lambda L, x, d, k: x.cumsum(d),
    "norm2": lambda L, x, d, k: x.norm(2, dim=d, keepdim=k),
    "norm1": lambda L, x, d, k: x.norm(1, dim=d, keepdim=k),
    "norm_inf": lambda L, x, d, k: x.norm(float("inf"), dim=d, keepdim=k),
    "var": lambda L, x, d, k: x.var(d, keepdim=k),
    "std_c0": lambda L, x, d, k: x.std(d, keepdim=k, correction=0),
    "logsumexp": lambda L, x, d, k: x.logsumexp(d, keepdim=k),
    "flip": lambda L, x, d, k: x.flip(d),
    "roll": lambda L, x, d, k: x.roll(1, d),
    "sort": lambda L, x, d, k: x.sort(d, descending=k),
    "topk": lambda L, x, d, k: x.topk(min(1, x.shape[d]), d, largest=k),
    "split": lambda L, x, d, k: x.split(2, d),
    "chunk": lambda L, x, d, k: x.chunk(2, d),
    "unbind": lambda L, x, d, k: x.unbind(d),
    "max": lambda L, x, d, k: x.max(d, keepdim=k),
    "min": lambda L, x, d, k: x.min(d, keepdim=k),
    "index_select": lambda L, x, d, k: x.index_select(d, index(L, [0, 0] if x.shape[d] else [])),
    "gather": lambda L, x, d, k: x.gather(d, L.zeros(*x.shape, dtype=L.int64)),
    "tril": lambda L, x, d, k: x.tril(d),
    "repeat": lambda L, x, d, k: x.repeat(*([2] * x.ndim)),
}


def compare_or_same_error(fn, arrays):
    """Both raise the same type, or both give the same values, dtypes, node names and gradients."""
    try:
        theirs = run(torch, fn, arrays)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            run(minigrad, fn, arrays)
        return
    ours = run(minigrad, fn, arrays)
    assert ours[2:] == theirs[2:], "dtypes, node names or result kinds differ"
    tol = tolerance(arrays)
    for m, t_ in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        assert m.shape == t_.shape
        np.testing.assert_allclose(m, t_, rtol=tol, atol=tol)


try:
    from hypothesis import given, settings, strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError:  # pragma: no cover - hypothesis is a dev dependency
    given = None

if given is not None and torch is not None:
    @pytest.mark.filterwarnings("ignore:.*degrees of freedom is:UserWarning")
    @pytest.mark.parametrize("op", list(DIM_OPS))
    @settings(max_examples=12, deadline=None, derandomize=True)
    @given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), data=st.data())
    def test_dim_ops_over_shapes_match_torch(op, shape, data):
        dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
        keepdim = data.draw(st.booleans(), label="keepdim")
        compare_or_same_error(lambda L, x: DIM_OPS[op](L, x, dim, keepdim), [distinct(*shape)])


# -- pieces of split/chunk/unbind are views: in-place changes to them follow PyTorch ------------------
PIECE_INPLACE = {
    "split_piece": lambda L, h: h.split(2)[0].mul_(2),
    "split_list_piece": lambda L, h: h.split([1, 3])[1].mul_(2),
    "chunk_piece": lambda L, h: h.chunk(2)[1].add_(1),
    "unbind_piece_1d": lambda L, h: h.unbind()[0].mul_(2),
    "unbind_piece_2d": lambda L, h: h.view(2, 2).unbind(1)[0].mul_(2),
}


@pytest.mark.parametrize("lib", LIBS, ids=lambda L: L.__name__)
def test_pieces_are_views_without_grad(lib):
    z = lib.zeros(4)
    z.split(2)[1].add_(1)
    z.unbind()[0].add_(5)  # a 0-d piece of a 1-D tensor is a view too (NumPy would copy it)
    assert z.tolist() == [5.0, 0.0, 1.0, 1.0]


@needs_torch
@pytest.mark.parametrize("name", list(PIECE_INPLACE))
def test_inplace_on_a_piece_in_a_graph_matches_torch(name):
    def attempt(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        h = x * 1
        PIECE_INPLACE[name](lib, h)
        h.sum().backward()
        return x.grad.tolist()

    theirs, ours = raised(attempt, torch), raised(attempt, minigrad)
    if theirs is None:
        assert ours is None and attempt(minigrad) == attempt(torch)
    else:
        assert isinstance(ours, type(theirs)), f"minigrad: {ours!r}; torch: {theirs!r}"


# -- a second backward without retain_graph: PyTorch fails exactly when a node saved something ----------
def backward_twice(lib, fn, arrays):
    inputs = [lib.tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in arrays]
    loss = sum(o.sum() for o in outputs(fn(lib, *inputs)) if o.requires_grad)
    loss.backward()
    try:
        loss.backward()
    except RuntimeError as e:
        assert "second time" in str(e) or "freed" in str(e), e
        return "raises"
    return "runs"


@needs_torch
@pytest.mark.parametrize("name", [n for n in CASES if n not in TORCH_FAILS])
def test_second_backward_matches_torch(name):
    fn, arrays = make_inputs(name)
    assert backward_twice(minigrad, fn, arrays) == backward_twice(torch, fn, arrays)


# -- changing an input or an output in place before backward: PyTorch fails exactly when it was saved ----
def change_then_backward(lib, fn, arrays, change):
    leaves = [lib.tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in arrays]
    inputs = [x * 1 for x in leaves]  # non-leaves, so they may be changed in place
    outs = [o for o in outputs(fn(lib, *inputs)) if o.requires_grad]
    try:
        if change == "input":
            inputs[0].add_(1)
        else:
            outs[0].mul_(1)
        sum(o.sum() for o in outs).backward()
    except RuntimeError as e:
        return type(e).__name__
    return "runs"


# dtype= converts the input before the op, so the op saves the converted copy, not the input itself
CONVERTS_FIRST = {"prod_dtype", "cumsum_dtype"}


@needs_torch
@pytest.mark.parametrize("change", ["input", "output"])
@pytest.mark.parametrize("name", [n for n in CASES if n not in TORCH_FAILS | CONVERTS_FIRST and not n.endswith("_")])
def test_inplace_change_before_backward_matches_torch(name, change):
    fn, arrays = make_inputs(name)
    assert change_then_backward(minigrad, fn, arrays, change) == change_then_backward(torch, fn, arrays, change)


# -- type promotion: PyTorch's result_type, for every op that combines dtypes ---------------------------
# torch.result_type ranks operands in three groups: dimensioned tensors, then 0-d tensors, then
# Python numbers; a lower group decides the dtype only when it is of a higher category (bool < int
# < float). cat and stack see dimensioned tensors only (stack unsqueezes its 0-d inputs first).
PROMOTION_DTYPES = ["float32", "float64", "int32", "int64", "bool"]
PROMOTING = {
    "add": lambda L, a, b: a + b, "sub": lambda L, a, b: a - b, "rsub": lambda L, a, b: b - a,
    "mul": lambda L, a, b: a * b, "div": lambda L, a, b: a / b, "pow": lambda L, a, b: a ** b,
    "maximum": lambda L, a, b: L.maximum(a, b) if isinstance(b, L.Tensor) else L.maximum(a, L.tensor(b)),
    "where": lambda L, a, b: L.where(L.ones(a.shape, dtype=L.bool), a, b),
    "stack": lambda L, a, b: L.stack([a, b.expand(a.shape)]),
    "cat": lambda L, a, b: L.cat([a.reshape(-1), b.reshape(-1)]),
    "matmul": lambda L, a, b: a.reshape(-1) @ b.reshape(-1),
    "masked_fill": lambda L, a, b: a.masked_fill(L.ones(a.shape, dtype=L.bool), b),
}


def _promotion_result(lib, name: str, a_dtype: str, a_shape: tuple, b) -> str:
    """The result's dtype name, or the exception type's name."""
    a = lib.ones(a_shape, dtype=getattr(lib, a_dtype))
    if isinstance(b, tuple):  # (dtype, shape) of a tensor operand
        b = lib.ones(b[1], dtype=getattr(lib, b[0]))
    try:
        return str(PROMOTING[name](lib, a, b).dtype).split(".")[-1]
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__


@needs_torch
@pytest.mark.parametrize("name", list(PROMOTING))
def test_result_dtype_matches_torch(name):
    """Every pair of dtypes, as dimensioned or 0-d tensors, and Python numbers: torch's dtype or error."""
    shapes = [(2,), ()]
    others = [(d, s) for d in PROMOTION_DTYPES for s in shapes]
    if name not in ("cat", "stack", "matmul"):
        others += [2, 2.5, True]
    if name == "masked_fill":
        others = [(d, ()) for d in PROMOTION_DTYPES] + [2, 2.5, True]  # the value must be 0-d
    wrong = []
    for a_dtype in PROMOTION_DTYPES:
        for a_shape in shapes:
            for b in others:
                want = _promotion_result(torch, name, a_dtype, a_shape, b)
                got = _promotion_result(minigrad, name, a_dtype, a_shape, b)
                if got != want:
                    wrong.append(f"{a_dtype}{list(a_shape)} with {b}: {got}, torch {want}")
    assert not wrong, f"{name}: " + "; ".join(wrong)


def _matmul_result(lib, a_shape: tuple, b_shape: tuple, a_grad: bool, b_grad: bool) -> str:
    """float32 @ float64: the result's shape and dtype and the gradients' dtypes, or the error type."""
    a = lib.zeros(a_shape, dtype=lib.float32, requires_grad=a_grad)
    b = lib.zeros(b_shape, dtype=lib.float64, requires_grad=b_grad)
    try:
        out = a @ b
        if out.requires_grad:
            out.sum().backward()
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__
    return str((tuple(out.shape), out.dtype, a.grad is not None and a.grad.dtype, b.grad is not None and b.grad.dtype))


@needs_torch
def test_matmul_of_two_dtypes_matches_torch():
    """PyTorch refuses two dtypes except in a batched product with nothing to compute (an empty
    result or an inner size 0), which its folding rules decide from ranks and requires_grad."""
    import itertools

    shapes = [s for nd in (1, 2, 3) for s in itertools.product((0, 1, 2), repeat=nd)]
    wrong = []
    for a_shape, b_shape in itertools.product(shapes, shapes):
        if len(a_shape) < 3 and len(b_shape) < 3:
            continue
        for a_grad, b_grad in itertools.product((False, True), repeat=2):
            want = _matmul_result(torch, a_shape, b_shape, a_grad, b_grad).replace("torch.", "")
            got = _matmul_result(minigrad, a_shape, b_shape, a_grad, b_grad).replace("minigrad.", "")
            if got != want:
                wrong.append(f"{a_shape} @ {b_shape} (requires_grad {a_grad}, {b_grad}): {got}, torch {want}")
    assert not wrong, f"{len(wrong)} differ, e.g. " + "; ".join(wrong[:5])


# PyTorch names a node after the overload it dispatched to: each case here has a name of its own.
OPERATOR_NODES = {
    "tensor ** number": lambda x, y: x ** 2.0, "tensor ** int": lambda x, y: x ** 3,
    "tensor ** tensor": lambda x, y: x ** y, "number ** tensor": lambda x, y: 2.0 ** x,
    "tensor / number": lambda x, y: x / 2.0, "number / tensor": lambda x, y: 2.0 / x,
    "tensor / tensor": lambda x, y: x / y, "number - tensor": lambda x, y: 2.0 - x,
    "tensor - number": lambda x, y: x - 2.0, "tensor * number": lambda x, y: x * 2.0,
    "tensor.pow(tensor)": lambda x, y: x.pow(y),
}


@needs_torch
@pytest.mark.parametrize("case", list(OPERATOR_NODES))
def test_operator_node_names_match_torch(case):
    def name(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([0.5, 3.0], requires_grad=True)
        return OPERATOR_NODES[case](x, y).grad_fn.name()

    assert name(minigrad) == name(torch)


@needs_torch
@pytest.mark.parametrize("call", ["max(0)", "min(1)", "max(1, keepdim=True)", "sort(1)", "sort(0, descending=True)", "topk(1)"])
def test_values_and_indices_print_as_torchs(call):
    """``print(x.max(0))`` in a lesson shows what PyTorch shows, with minigrad's module name."""
    data = [[1.0, 5.0], [3.0, 2.0]]
    ours = eval(f"x.{call}", {"x": minigrad.tensor(data, requires_grad=True)})
    theirs = eval(f"x.{call}", {"x": torch.tensor(data, requires_grad=True)})
    assert repr(ours) == repr(theirs).replace("torch.return_types.", "minigrad.return_types.")
    assert type(ours).__name__ == type(theirs).__name__ and tuple(ours)[0] is ours.values

