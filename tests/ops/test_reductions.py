"""Products (dot ... einsum, addmm), extrema and scans (amax ... nanmean), rearrangements (movedim ... unfold).

Each case runs through tests/ops/test_creation_and_devices.py's checks: gradcheck and gradgradcheck in float64,
then the same inputs through PyTorch (values, gradients, dtypes, shapes, node names), in float64
and float32. Edge values and bad input are compared with PyTorch too.
"""
from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck
from tests.ops import test_creation_and_devices as base
from tests.ops.test_creation_and_devices import distinct, index, needs_torch, normal, outputs, raised, run, tolerance, with_zeros

torch = base.torch
INF, NAN = float("inf"), float("nan")

CASES = {
    "dot": (lambda L, a, b: a.dot(b), [(normal, (4,)), (normal, (4,))]),
    "dot_fn": (lambda L, a, b: L.dot(a, b), [(normal, (1,)), (normal, (1,))]),
    "outer": (lambda L, a, b: a.outer(b), [(normal, (3,)), (normal, (2,))]),
    "outer_fn": (lambda L, a, b: L.outer(a, b), [(normal, (1,)), (normal, (4,))]),
    "inner_1d": (lambda L, a, b: a.inner(b), [(normal, (3,)), (normal, (3,))]),
    "inner_nd": (lambda L, a, b: L.inner(a, b), [(normal, (2, 3)), (normal, (4, 2, 3))]),
    "inner_0d": (lambda L, a, b: L.inner(a, b), [(normal, (2, 3)), (normal, ())]),
    "diag_from_vector": (lambda L, x: x.diag(), [(normal, (3,))]),
    "trace": (lambda L, x: x.trace(), [(normal, (3, 3))]),
    "trace_wide": (lambda L, x: L.trace(x), [(normal, (2, 4))]),
    "kron_2d": (lambda L, a, b: a.kron(b), [(normal, (2, 3)), (normal, (3, 2))]),
    "kron_ranks": (lambda L, a, b: L.kron(a, b), [(normal, (3,)), (normal, (2, 2))]),
    "addmm": (lambda L, c, a, b: c.addmm(a, b), [(normal, (2, 4)), (normal, (2, 3)), (normal, (3, 4))]),
    "addmm_scaled": (lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=-2.0),
                     [(normal, (4,)), (normal, (2, 3)), (normal, (3, 4))]),
    "addmm_beta0": (lambda L, c, a, b: L.addmm(c, a, b, beta=0), [(normal, (2, 1)), (normal, (2, 3)), (normal, (3, 4))]),
}
# diag and diagonal: every offset from one past the last diagonal to one past the first, every dim pair
for k in range(-3, 4):
    CASES[f"diag_vector_{k}"] = (lambda L, x, k=k: L.diag(x, k), [(normal, (2,))])
    CASES[f"diag_matrix_{k}"] = (lambda L, x, k=k: x.diag(k), [(normal, (3, 4))])
for d1, d2 in itertools.permutations(range(-3, 3), 2):
    if d1 % 3 != d2 % 3:
        for k in (-1, 0, 2):
            CASES[f"diagonal_{d1}_{d2}_{k}"] = (lambda L, x, k=k, d1=d1, d2=d2: x.diagonal(k, d1, d2) * 1,
                                                [(normal, (2, 3, 4))])
# tensordot: each count of trailing dims, and explicit dim lists
for n in range(3):
    CASES[f"tensordot_{n}"] = (lambda L, a, b, n=n: L.tensordot(a, b, n), [(normal, (2, 3, 4)), (normal, (3, 4)[2 - n:] + (2,))])
CASES["tensordot_lists"] = (lambda L, a, b: L.tensordot(a, b, ([0, 2], [2, 0])), [(normal, (2, 3, 4)), (normal, (4, 5, 2))])
CASES["tensordot_vectors"] = (lambda L, a, b: L.tensordot(a, b, 1), [(normal, (3,)), (normal, (3,))])
# einsum: its node is its own (PyTorch's result is the last of the ops it runs), the rest as PyTorch's
EINSUM = {
    "matmul": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "matmul_implicit": ("ij,jk", [(2, 3), (3, 4)]),
    "transpose": ("ij->ji", [(2, 3)]),
    "sum_all": ("ij->", [(2, 3)]),
    "sum_rows": ("ij->i", [(2, 3)]),
    "outer": ("i,j->ij", [(3,), (2,)]),
    "dot": ("i,i->", [(3,), (3,)]),
    "batch": ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    "hadamard": ("ij,ij->ij", [(2, 3), (2, 3)]),
    "three": ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 4)]),
    "summed_alone": ("ij,k->j", [(2, 3), (4,)]),
    "bilinear": ("bi,ij,bj->b", [(2, 3), (3, 4), (2, 4)]),
    "reorder": ("abc->cab", [(2, 3, 4)]),
    "diagonal": ("ii->i", [(3, 3)]),
    "trace": ("ii", [(3, 3)]),
    "diagonal_summed": ("iij->j", [(2, 2, 3)]),
    "diagonal_with_other": ("ii,ij->j", [(3, 3), (3, 2)]),
    "diagonal_three": ("iji->ij", [(2, 3, 2)]),
    "ellipsis_transpose": ("...ij->...ji", [(2, 3, 4)]),
    "ellipsis_batch_matmul": ("...ij,...jk", [(2, 2, 3), (2, 3, 4)]),
    "ellipsis_sum_front": ("i...->...", [(2, 3, 2)]),
    "ellipsis_ranks": ("...i,...i->...", [(3, 4), (2, 3, 4)][::-1]),
    "ellipsis_empty": ("...ij,jk->...ik", [(2, 3), (3, 2)]),
    # a size 1 broadcasts, '...' dims and named ones alike (the operand is expanded first)
    "broadcast_ellipsis": ("...i,...i", [(2, 3), (1, 3)]),
    "broadcast_ellipsis_out": ("...i,...i->...", [(1, 2, 3), (4, 2, 3)]),
    "broadcast_named": ("ij,ij->", [(2, 3), (1, 3)]),
    "broadcast_batch": ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]),
}
for name, (equation, shapes) in EINSUM.items():
    CASES[f"einsum_{name}"] = (lambda L, *xs, e=equation: L.einsum(e, *xs), [(normal, s) for s in shapes])
OWN_NODE = {f"einsum_{name}" for name in EINSUM}


def with_nan(*shape):
    """Normal values with a NaN in every row but the last: nansum's and nanmean's case."""
    x = base.RNG.standard_normal(shape)
    x.reshape(-1, shape[-1])[:-1, 0] = np.nan
    return x


# -- group 2: extrema and scans
for dim in [(), 0, -1, (0, 2), [1, 2], (0, 1, 2)]:
    for keepdim in (False, True):
        for op in ("amax", "amin"):
            CASES[f"{op}_{dim}_{keepdim}"] = (lambda L, x, op=op, dim=dim, k=keepdim: getattr(x, op)(dim, k),
                                              [(distinct, (2, 3, 2))])
CASES["amax_fn_default"] = (lambda L, x: L.amax(x), [(distinct, (2, 3))])
CASES["amin_0d"] = (lambda L, x: L.amin(x, 0), [(normal, ())])
for dim in (0, 1, -1):
    for zeros in (0, 1, 2):
        CASES[f"cumprod_{dim}_{zeros}_zeros"] = (lambda L, x, d=dim: x.cumprod(d), [(with_zeros(zeros), (3, 4))])
    CASES[f"cummax_{dim}"] = (lambda L, x, d=dim: x.cummax(d), [(distinct, (3, 4))])
    CASES[f"cummin_{dim}"] = (lambda L, x, d=dim: L.cummin(x, d), [(distinct, (3, 4))])
CASES["cumprod_0d"] = (lambda L, x: L.cumprod(x, 0), [(normal, ())])
CASES["cumprod_3d_zeros"] = (lambda L, x: x.cumprod(1), [(with_zeros(2), (2, 3, 2))])
CASES["cummax_0d"] = (lambda L, x: x.cummax(0), [(normal, ())])
CASES["cummin_empty"] = (lambda L, x: x.cummin(1), [(normal, (2, 0))])
for op in ("var_mean", "std_mean"):
    for label, call in {"all": lambda L, f, x: f(x), "dim": lambda L, f, x: f(x, 1),
                        "keepdim": lambda L, f, x: f(x, 0, keepdim=True),
                        "correction0": lambda L, f, x: f(x, (0, 2), correction=0),
                        "correction2": lambda L, f, x: f(x, -1, correction=2),
                        "unbiased_positional": lambda L, f, x: f(x, 1, False, True),
                        "unbiased_only": lambda L, f, x: f(x, False)}.items():
        CASES[f"{op}_{label}"] = (lambda L, x, op=op, call=call: call(L, getattr(L, op), x), [(normal, (2, 3, 3))])
for op in ("nansum", "nanmean"):
    for label, call in {"all": lambda x, f: f(), "dim": lambda x, f: f(1), "keepdim": lambda x, f: f((0, 1), keepdim=True),
                        "negative_dim": lambda x, f: f(-1, True)}.items():
        CASES[f"{op}_{label}"] = (lambda L, x, op=op, call=call: call(x, getattr(x, op)), [(with_nan, (3, 4))])
    CASES[f"{op}_fn"] = (lambda L, x, op=op: getattr(L, op)(x, 0), [(with_nan, (3, 4))])

# -- group 3: rearrangements
for source, destination in [(0, 2), (-1, 0), ((0, 1), (2, 0)), ([2], [1]), ((0, 1, 2), (1, 2, 0))]:
    for op in ("movedim", "moveaxis"):
        CASES[f"{op}_{source}_{destination}"] = (
            lambda L, x, op=op, s=source, d=destination: getattr(L, op)(x, s, d) * 1, [(normal, (2, 3, 4))])
for d0, d1 in itertools.combinations(range(-3, 3), 2):
    CASES[f"swapaxes_{d0}_{d1}"] = (lambda L, x, a=d0, b=d1: x.swapaxes(a, b) * 1, [(normal, (2, 3, 4))])
CASES["swapdims"] = (lambda L, x: L.swapdims(x, 0, -1) * 1, [(normal, (2, 3))])
CASES["fliplr"] = (lambda L, x: x.fliplr(), [(normal, (2, 3, 2))])
CASES["flipud"] = (lambda L, x: L.flipud(x), [(normal, (3,))])
for k in range(-5, 6):
    CASES[f"rot90_{k}"] = (lambda L, x, k=k: x.rot90(k), [(normal, (2, 3))])
for dims in [(1, 2), (2, 0), (-1, -3)]:
    CASES[f"rot90_dims_{dims}"] = (lambda L, x, dims=dims: L.rot90(x, 1, dims), [(normal, (2, 3, 4))])
for reps in [(2,), (1, 2), (2, 1, 3), (3, 1, 1, 2), ()]:
    CASES[f"tile_{reps}"] = (lambda L, x, r=reps: L.tile(x, r), [(normal, (2, 3))])
CASES["tile_method_varargs"] = (lambda L, x: x.tile(2, 2), [(normal, (2,))])
for dim in (None, 0, 1, -1):
    for repeats in (0, 1, 3):
        CASES[f"repeat_interleave_{repeats}_{dim}"] = (lambda L, x, r=repeats, d=dim: x.repeat_interleave(r, d),
                                                       [(normal, (2, 3))])
CASES["repeat_interleave_tensor"] = (lambda L, x: L.repeat_interleave(x, index(L, [2, 0, 1]), dim=1), [(normal, (2, 3))])
CASES["repeat_interleave_tensor_flat"] = (lambda L, x: x.repeat_interleave(index(L, [1, 2, 0, 3])), [(normal, (2, 2))])
CASES["repeat_interleave_one_count"] = (lambda L, x: x.repeat_interleave(index(L, [2]), dim=0), [(normal, (2, 3))])
CASES["repeat_interleave_0d"] = (lambda L, x: x.repeat_interleave(2), [(normal, ())])
for op in ("hstack", "vstack", "dstack", "column_stack"):
    for shapes in [[(3,), (2,)] if op == "hstack" else [(3,), (3,)], [(2, 3), (2, 3)], [(), ()] if op != "vstack" else [(), ()],
                   [(2, 1, 2), (2, 1, 2)]]:
        CASES[f"{op}_{shapes}"] = (lambda L, *xs, op=op: getattr(L, op)(list(xs)), [(normal, s) for s in shapes])
CASES["column_stack_mixed"] = (lambda L, a, b: L.column_stack((a, b)), [(normal, (3,)), (normal, (3, 2))])
CASES["concat"] = (lambda L, a, b: L.concat([a, b], 1), [(normal, (2, 1)), (normal, (2, 3))])
CASES["concatenate"] = (lambda L, a, b: L.concatenate((a, b), dim=-1), [(normal, (2, 1)), (normal, (2, 3))])
for indexing in ("ij", "xy"):
    CASES[f"meshgrid_{indexing}"] = (lambda L, a, b, c, i=indexing: L.meshgrid(a, b, c, indexing=i),
                                     [(normal, (2,)), (normal, (3,)), (normal, ())])
    CASES[f"meshgrid_list_{indexing}"] = (lambda L, a, b, i=indexing: L.meshgrid([a, b], indexing=i),
                                          [(normal, (2,)), (normal, (3,))])
CASES["meshgrid_one"] = (lambda L, a: L.meshgrid(a, indexing="xy"), [(normal, (3,))])
CASES["masked_select"] = (lambda L, x: x.masked_select(x > 0), [(distinct, (2, 3))])
CASES["masked_select_broadcast"] = (lambda L, x: L.masked_select(x, L.tensor([True, False, True])), [(normal, (2, 3))])
CASES["masked_select_input_broadcast"] = (lambda L, x: x.masked_select(L.tensor([[True], [False]])), [(normal, (3,))])
CASES["take"] = (lambda L, x: x.take(index(L, [[0, 5], [-1, 0]])), [(normal, (2, 3))])
CASES["take_fn"] = (lambda L, x: L.take(x, index(L, [2, 2, -6])), [(normal, (3, 2))])
CASES["take_0d"] = (lambda L, x: L.take(x, index(L, 0)), [(normal, ())])
CASES["reshape_as"] = (lambda L, x, y: x.reshape_as(y) * y, [(normal, (2, 3)), (normal, (3, 2))])
for dim, size, step in [(0, 2, 1), (1, 3, 2), (-1, 1, 1), (1, 4, 1), (1, 2, 3), (0, 0, 1)]:
    CASES[f"unfold_{dim}_{size}_{step}"] = (lambda L, x, a=(dim, size, step): x.unfold(*a) * 1, [(normal, (3, 4))])
CASES["unfold_0d"] = (lambda L, x: x.unfold(0, 1, 1) * 1, [(normal, ())])


def make_inputs(name):
    base.RNG = np.random.default_rng(zlib.crc32(name.encode()))
    fn, makers = CASES[name]
    return fn, [make(*shape) for make, shape in makers]


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(name):
    fn, arrays = make_inputs(name)
    inputs = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(lambda *xs: fn(minigrad, *xs), inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", list(CASES))
def test_gradgradcheck(name):
    fn, arrays = make_inputs(name)
    inputs = [minigrad.tensor(a, requires_grad=True) for a in arrays]

    def float_outputs(*xs):
        return tuple(o for o in outputs(fn(minigrad, *xs)) if o.is_floating_point())

    assert gradgradcheck(float_outputs, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


def _compare(name, dtype):
    fn, arrays = make_inputs(name)
    mv, mg, md, mn, mt = run(minigrad, fn, arrays, dtype=dtype)
    tv, tg, td, tn, tt = run(torch, fn, arrays, dtype=dtype)
    assert md == td, f"dtypes: minigrad {md}, torch {td}"
    if name in OWN_NODE:
        assert mn == ["EinsumBackward0"]
    else:
        assert mn == tn, f"node names: minigrad {mn}, torch {tn}"
    assert mt == tt, "(values, indices) results must be named tuples of PyTorch's type names"
    tol = tolerance(arrays, dtype)
    assert len(mv) == len(tv) and len(mg) == len(tg)
    for i, (m, t) in enumerate(zip(mv + mg, tv + tg)):
        assert m.shape == t.shape and m.dtype == t.dtype, f"output/gradient {i}: {m.shape} {m.dtype}, torch {t.shape} {t.dtype}"
        finite = np.isfinite(t)
        scale = max(1.0, float(np.abs(t[finite]).max())) if finite.any() else 1.0
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol * scale, err_msg=f"output/gradient {i}")


@needs_torch
@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    _compare(name, np.float64)


@needs_torch
@pytest.mark.parametrize("name", list(CASES))
def test_float32_matches_torch(name):
    _compare(name, np.float32)


# -- values at the edges and of other dtypes, against PyTorch ---------------------------------------------
EDGE_VALUES = {
    "dot_int": lambda L: L.tensor([1, 2]).dot(L.tensor([3, 4])),
    "dot_empty": lambda L: L.zeros(0).dot(L.zeros(0)),
    "dot_inf_zero": lambda L: L.tensor([INF, 1.0]).dot(L.tensor([0.0, 1.0])),
    "outer_int_float": lambda L: L.tensor([1, 2]).outer(L.tensor([0.5, 1.5])),
    "outer_bool": lambda L: L.tensor([True, False]).outer(L.tensor([True, True])),
    "inner_int": lambda L: L.tensor([[1, 2]]).inner(L.tensor([[3, 4]])),
    "diag_int": lambda L: L.tensor([1, 2]).diag(1),
    "diag_empty": lambda L: L.zeros(2, 3).diag(5),
    "diagonal_far": lambda L: L.zeros(2, 3).diagonal(7),
    "trace_int": lambda L: L.tensor([[1, 2], [3, 4]], dtype=L.int32).trace(),
    "trace_nan": lambda L: L.tensor([[NAN, 1.0], [2.0, 3.0]]).trace(),
    "kron_int": lambda L: L.tensor([1, 2]).kron(L.tensor([[1, 0], [0, 1]])),
    "kron_0d": lambda L: L.tensor(2.0).kron(L.tensor([1.0, 3.0])),
    "tensordot_int": lambda L: L.tensordot(L.tensor([[1, 2]]), L.tensor([[3], [4]]), 1),
    "einsum_int": lambda L: L.einsum("ij,jk->ik", L.tensor([[1, 2]]), L.tensor([[3], [4]])),
    "einsum_list": lambda L: L.einsum("i,i", [L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])]),
    "einsum_spaces": lambda L: L.einsum("i j -> j", L.ones(2, 3)),
    "addmm_beta0_nan": lambda L: L.addmm(L.tensor([[NAN]]), L.ones(1, 2), L.ones(2, 1), beta=0),
    "addmm_int": lambda L: L.addmm(L.tensor([1]), L.tensor([[1, 2]]), L.tensor([[3], [4]]), alpha=2),
    "addmm_empty_inner": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 0), L.ones(0, 2)),
    "amax_int": lambda L: L.tensor([[1, 5], [3, 2]]).amax(0),
    "amax_bool": lambda L: L.tensor([True, False]).amax(),
    "amin_nan": lambda L: L.tensor([[1.0, NAN], [0.0, 2.0]]).amin(1),
    "amax_inf": lambda L: L.tensor([-INF, 1.0]).amax(),
    "amax_empty_other_dim": lambda L: L.zeros(0, 2).amax(1),
    "cumprod_int": lambda L: L.tensor([1, 2, 3], dtype=L.int32).cumprod(0),
    "cumprod_bool": lambda L: L.tensor([True, True, False]).cumprod(0),
    "cumprod_dtype": lambda L: L.tensor([1, 2, 3]).cumprod(0, dtype=L.float64),
    "cumprod_inf_zero": lambda L: L.tensor([INF, 0.0, 2.0]).cumprod(0),
    "cummax_ties_indices": lambda L: L.tensor([1.0, 3.0, 3.0, 2.0, 3.0]).cummax(0).indices,
    "cummin_ties_indices": lambda L: L.tensor([3, 1, 1, 2, 1]).cummin(0).indices,
    "cummax_nan": lambda L: L.tensor([1.0, NAN, 5.0, NAN]).cummax(0).values,
    "cummax_nan_indices": lambda L: L.tensor([1.0, NAN, 5.0, NAN, 7.0]).cummax(0).indices,
    "cummin_bool": lambda L: L.tensor([True, False, True]).cummin(0).values,
    "count_nonzero": lambda L: L.tensor([[0.0, 1.0], [NAN, -0.0]]).count_nonzero(),
    "count_nonzero_dims": lambda L: L.count_nonzero(L.tensor([[[0, 1], [2, 0]]]), (0, 2)),
    "count_nonzero_bool_dim": lambda L: L.tensor([[True, False], [True, True]]).count_nonzero(-1),
    "count_nonzero_0d": lambda L: L.tensor(3.0).count_nonzero(),
    "var_mean_one_value": lambda L: L.stack(L.var_mean(L.tensor([2.0]))),
    "std_mean_empty": lambda L: L.stack(L.std_mean(L.zeros(0))),
    "nansum_int": lambda L: L.tensor([1, 2], dtype=L.int32).nansum(),
    "nansum_bool": lambda L: L.tensor([True, True]).nansum(),
    "nansum_all_nan": lambda L: L.tensor([NAN, NAN]).nansum(),
    "nansum_dtype": lambda L: L.tensor([1, 2]).nansum(dtype=L.float32),
    "nanmean_all_nan": lambda L: L.tensor([[NAN, NAN], [1.0, NAN]]).nanmean(1),
    "nanmean_inf": lambda L: L.tensor([INF, NAN, 1.0]).nanmean(),
    "movedim_0d": lambda L: L.tensor(2.0).movedim(0, -1),
    "rot90_int": lambda L: L.tensor([[1, 2], [3, 4]]).rot90(3),
    "rot90_empty": lambda L: L.zeros(0, 3).rot90(),
    "tile_0d": lambda L: L.tensor(2).tile((2, 3)),
    "repeat_interleave_counts": lambda L: L.repeat_interleave(L.tensor([2, 0, 3])),
    "repeat_interleave_empty_counts": lambda L: L.repeat_interleave(L.tensor([], dtype=L.int64)),
    "repeat_interleave_output_size": lambda L: L.tensor([1, 2]).repeat_interleave(L.tensor([1, 2]), 0, output_size=3),
    "repeat_interleave_bool": lambda L: L.tensor([True, False]).repeat_interleave(2),
    "hstack_int_float": lambda L: L.hstack([L.tensor([1, 2]), L.tensor([0.5])]),
    "vstack_0d": lambda L: L.vstack([L.tensor(1.0), L.tensor(2.0)]),
    "dstack_0d": lambda L: L.dstack((L.tensor(1), L.tensor(2))),
    "column_stack_0d": lambda L: L.column_stack([L.tensor(1.0), L.tensor([[2.0, 3.0]])]),
    "hstack_empty": lambda L: L.hstack([L.zeros(0), L.ones(2)]),
    "meshgrid_int": lambda L: L.stack(L.meshgrid(L.tensor([1, 2]), L.tensor([3, 4, 5]), indexing="xy")),
    "meshgrid_empty": lambda L: L.stack(L.meshgrid(L.zeros(0), L.zeros(2), indexing="ij")),
    "masked_select_none": lambda L: L.ones(2, 2).masked_select(L.zeros(2, 2, dtype=L.bool)),
    "masked_select_int": lambda L: L.tensor([1, 2, 3]).masked_select(L.tensor([True, False, True])),
    "take_empty_index": lambda L: L.ones(2, 2).take(L.zeros(0, 3, dtype=L.int64)),
    "take_int": lambda L: L.tensor([[1, 2], [3, 4]]).take(L.tensor([3, -4])),
    "nonzero": lambda L: L.tensor([[0.0, 1.0, NAN], [-0.0, 0.0, 2.0]]).nonzero(),
    "nonzero_1d": lambda L: L.tensor([0, 3, 0, 1]).nonzero(),
    "nonzero_0d": lambda L: L.tensor(2.0).nonzero(),
    "nonzero_0d_zero": lambda L: L.tensor(0.0).nonzero(),
    "nonzero_as_tuple": lambda L: L.stack(L.tensor([[0, 1], [2, 0]]).nonzero(as_tuple=True)),
    "nonzero_as_tuple_0d": lambda L: L.stack(L.tensor(2.0).nonzero(as_tuple=True)),
    "nonzero_empty": lambda L: L.zeros(0, 3).nonzero(),
    "argwhere": lambda L: L.argwhere(L.tensor([[True, False], [True, True]])),
    "unfold_int": lambda L: L.arange(6).unfold(0, 2, 2),
    "unfold_overlap_big_step": lambda L: L.arange(7.0).unfold(0, 3, 5),
}


@needs_torch
@pytest.mark.parametrize("name", list(EDGE_VALUES))
def test_edge_values_match_torch(name):
    ours, theirs = EDGE_VALUES[name](minigrad), EDGE_VALUES[name](torch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=0)


def fixed(values):
    return lambda: np.array(values, dtype=np.float64)


EDGE_GRADS = {
    "dot_inf": (lambda L, a, b: a.dot(b), [fixed([INF, 1.0]), fixed([0.0, 2.0])]),
    "trace_of_inf": (lambda L, x: x.trace(), [fixed([[INF, 1.0], [2.0, 3.0]])]),
    "addmm_beta0": (lambda L, c, a, b: L.addmm(c, a, b, beta=0), [fixed([[NAN]]), fixed([[1.0]]), fixed([[2.0]])]),
    "amax_ties": (lambda L, x: x.amax(1), [fixed([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])]),
    "amin_ties_all": (lambda L, x: x.amin(), [fixed([[1.0, 3.0], [1.0, 1.0]])]),
    "amax_nan": (lambda L, x: x.amax(1), [fixed([[1.0, NAN], [2.0, 0.0]])]),
    "cumprod_all_zeros": (lambda L, x: x.cumprod(0), [fixed([0.0, 0.0, 0.0])]),
    "cumprod_zero_first": (lambda L, x: x.cumprod(1), [fixed([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]])]),
    "cumprod_zero_last": (lambda L, x: x.cumprod(0), [fixed([2.0, 3.0, 0.0])]),
    "cummax_ties": (lambda L, x: x.cummax(0).values, [fixed([1.0, 3.0, 3.0, 2.0])]),
    "cummin_nan": (lambda L, x: x.cummin(0).values, [fixed([2.0, NAN, 1.0])]),
    "std_mean_constant": (lambda L, x: L.std_mean(x), [fixed([2.0, 2.0, 2.0])]),
    "var_mean_one_value": (lambda L, x: L.var_mean(x, correction=0), [fixed([2.0])]),
    "nansum_nan": (lambda L, x: x.nansum(), [fixed([NAN, 1.0, 2.0])]),
    "nanmean_all_nan_row": (lambda L, x: x.nanmean(1), [fixed([[NAN, NAN], [1.0, NAN]])]),
}


@needs_torch
@pytest.mark.parametrize("name", list(EDGE_GRADS))
def test_edge_gradients_match_torch(name):
    fn, makers = EDGE_GRADS[name]
    arrays = [make() for make in makers]
    mv, mg, md, mn, _ = run(minigrad, fn, arrays)
    tv, tg, td, tn, _ = run(torch, fn, arrays)
    assert (md, mn) == (td, tn)
    for m, t_ in zip(mv + mg, tv + tg):
        np.testing.assert_allclose(m, t_, rtol=1e-12, atol=1e-12)


# -- bad input: PyTorch's exception type ------------------------------------------------------------------
def z(L, *shape, dtype=None):
    return L.zeros(*shape, dtype=dtype or L.float32)


BAD = {
    "dot_2d": lambda L: z(L, 2, 2).dot(z(L, 2)),
    "dot_sizes": lambda L: z(L, 2).dot(z(L, 3)),
    "dot_dtypes": lambda L: z(L, 2).dot(z(L, 2, dtype=L.float64)),
    "dot_number": lambda L: z(L, 2).dot(2.0),
    "outer_2d": lambda L: z(L, 2, 2).outer(z(L, 2)),
    "inner_sizes": lambda L: z(L, 2, 3).inner(z(L, 2)),
    "diag_3d": lambda L: z(L, 2, 2, 2).diag(),
    "diag_0d": lambda L: L.tensor(1.0).diag(),
    "diag_float_offset": lambda L: z(L, 2).diag(1.0),
    "diagonal_1d": lambda L: z(L, 2).diagonal(),
    "diagonal_same_dims": lambda L: z(L, 2, 2).diagonal(0, 1, -1),
    "diagonal_dim": lambda L: z(L, 2, 2).diagonal(0, 0, 2),
    "trace_1d": lambda L: z(L, 3).trace(),
    "trace_bool": lambda L: L.tensor([[True, True], [False, True]]).trace(),
    "trace_3d": lambda L: z(L, 2, 2, 2).trace(),
    "tensordot_sizes": lambda L: L.tensordot(z(L, 2, 3), z(L, 2, 3), 1),
    "tensordot_too_many": lambda L: L.tensordot(z(L, 2), z(L, 2), 2),
    "tensordot_negative": lambda L: L.tensordot(z(L, 2), z(L, 2), -1),
    "tensordot_lengths": lambda L: L.tensordot(z(L, 2, 2), z(L, 2, 2), ([0, 1], [0])),
    "tensordot_dim": lambda L: L.tensordot(z(L, 2, 2), z(L, 2, 2), ([3], [0])),
    "einsum_operand_count": lambda L: L.einsum("ij,jk", z(L, 2, 2)),
    "einsum_rank": lambda L: L.einsum("ijk", z(L, 2, 2)),
    "einsum_sizes": lambda L: L.einsum("ij,jk", z(L, 2, 3), z(L, 2, 2)),
    "einsum_repeated_sizes": lambda L: L.einsum("ii->i", z(L, 1, 3)),
    "einsum_ellipsis_sizes": lambda L: L.einsum("...i,...i", z(L, 2, 3), z(L, 4, 3)),
    "einsum_bad_letter": lambda L: L.einsum("i1", z(L, 2, 2)),
    "einsum_output_unknown": lambda L: L.einsum("ij->k", z(L, 2, 2)),
    "einsum_output_twice": lambda L: L.einsum("ij->ii", z(L, 2, 2)),
    "einsum_dtypes": lambda L: L.einsum("i,i", z(L, 2), z(L, 2, dtype=L.float64)),
    "einsum_not_tensor": lambda L: L.einsum("i", [1.0, 2.0]),
    "einsum_diagonal_sizes": lambda L: L.einsum("ii", z(L, 2, 3)),
    "einsum_two_ellipses": lambda L: L.einsum("......", z(L, 2, 3)),
    "einsum_stray_dot": lambda L: L.einsum("i.j", z(L, 2, 3)),
    "einsum_ellipsis_rank": lambda L: L.einsum("...ijk", z(L, 2, 3)),
    "kron_number": lambda L: z(L, 2).kron(2.0),
    "addmm_1d_mat": lambda L: L.addmm(z(L, 2), z(L, 2), z(L, 2, 2)),
    "addmm_shapes": lambda L: L.addmm(z(L, 2, 2), z(L, 2, 3), z(L, 2, 2)),
    "addmm_input_shape": lambda L: L.addmm(z(L, 3, 2), z(L, 2, 3), z(L, 3, 2)),
    "addmm_dtypes": lambda L: L.addmm(z(L, 2, 2), z(L, 2, 2), z(L, 2, 2, dtype=L.float64)),
    "amax_empty_dim": lambda L: z(L, 0, 2).amax(0),
    "amin_empty_all": lambda L: z(L, 0).amin(),
    "amax_dim": lambda L: z(L, 2).amax(1),
    "amin_dims": lambda L: z(L, 2, 2).amin((0, 3)),
    "cumprod_dim": lambda L: z(L, 2).cumprod(1),
    "cumprod_no_dim": lambda L: z(L, 2).cumprod(),
    "cummax_dim": lambda L: z(L, 2, 2).cummax(-3),
    "cummin_0d_dim": lambda L: L.tensor(1.0).cummin(1),
    "count_nonzero_dim": lambda L: z(L, 2).count_nonzero(2),
    "var_mean_int": lambda L: L.var_mean(L.tensor([1, 2])),
    "std_mean_dim": lambda L: L.std_mean(z(L, 2), 3),
    "var_mean_not_tensor": lambda L: L.var_mean([1.0, 2.0]),
    "nansum_dim": lambda L: z(L, 2).nansum(-2),
    "nanmean_int": lambda L: L.tensor([1, 2]).nanmean(),
    "nanmean_bool": lambda L: L.tensor([True]).nanmean(),
    "nanmean_int_dtype": lambda L: L.tensor([1, 2]).nanmean(dtype=L.float64),
    "movedim_int_and_tuple": lambda L: z(L, 2, 2).movedim((0, 1), 0),
    "movedim_lengths": lambda L: z(L, 2, 2).movedim((0, 1), (0,)),
    "repeat_interleave_2d_counts": lambda L: L.repeat_interleave(L.tensor([[1, 2]])),
    "repeat_interleave_float_counts_alone": lambda L: L.repeat_interleave(L.tensor([1.0])),
    "meshgrid_nothing": lambda L: L.meshgrid([], indexing="ij"),
    "concat_empty": lambda L: L.concat([]),
    "concatenate_empty": lambda L: L.concatenate(()),
    "dstack_empty": lambda L: L.dstack(()),
    "movedim_repeated": lambda L: z(L, 2, 2).movedim((0, 0), (0, 1)),
    "movedim_dim": lambda L: z(L, 2, 2).movedim(2, 0),
    "swapaxes_dim": lambda L: z(L, 2).swapaxes(0, 1),
    "fliplr_1d": lambda L: z(L, 2).fliplr(),
    "flipud_0d": lambda L: L.tensor(1.0).flipud(),
    "rot90_1d": lambda L: z(L, 2).rot90(),
    "rot90_same_dims": lambda L: z(L, 2, 2).rot90(1, (1, 1)),
    "rot90_three_dims": lambda L: z(L, 2, 2, 2).rot90(1, (0, 1, 2)),
    "rot90_dim": lambda L: z(L, 2, 2).rot90(1, (0, 2)),
    "rot90_float_k": lambda L: z(L, 2, 2).rot90(1.0),
    "tile_negative": lambda L: z(L, 2).tile((-1,)),
    "repeat_interleave_negative": lambda L: z(L, 2).repeat_interleave(-1),
    "repeat_interleave_counts_size": lambda L: z(L, 3).repeat_interleave(L.tensor([1, 2])),
    "repeat_interleave_float_counts": lambda L: z(L, 2).repeat_interleave(L.tensor([1.0, 2.0])),
    "repeat_interleave_negative_counts": lambda L: L.repeat_interleave(L.tensor([1, -1])),
    "repeat_interleave_dim": lambda L: z(L, 2).repeat_interleave(2, 1),
    "hstack_shapes": lambda L: L.hstack([z(L, 2, 2), z(L, 3, 2)]),
    "vstack_shapes": lambda L: L.vstack([z(L, 2), z(L, 3)]),
    "hstack_empty_list": lambda L: L.hstack([]),
    "hstack_not_list": lambda L: L.hstack(z(L, 2)),
    "vstack_number": lambda L: L.vstack([z(L, 2), 1.0]),
    "concat_dim": lambda L: L.concat([z(L, 2), z(L, 2)], 1),
    "meshgrid_2d": lambda L: L.meshgrid(z(L, 2, 2), indexing="ij"),
    "meshgrid_indexing": lambda L: L.meshgrid(z(L, 2), indexing="ji"),
    "meshgrid_dtypes": lambda L: L.meshgrid(z(L, 2), z(L, 2, dtype=L.float64), indexing="ij"),
    "masked_select_float_mask": lambda L: z(L, 2).masked_select(z(L, 2)),
    "masked_select_shapes": lambda L: z(L, 2).masked_select(L.tensor([True, False, True])),
    "take_float_index": lambda L: z(L, 2).take(L.tensor([0.0])),
    "take_out_of_range": lambda L: z(L, 2, 3).take(L.tensor([6])),
    "take_negative_out_of_range": lambda L: z(L, 2, 3).take(L.tensor([-7])),
    "take_from_empty": lambda L: z(L, 0).take(L.tensor([0])),
    "unfold_too_big": lambda L: z(L, 3).unfold(0, 4, 1),
    "unfold_step_0": lambda L: z(L, 3).unfold(0, 2, 0),
    "unfold_negative_size": lambda L: z(L, 3).unfold(0, -1, 1),
    "unfold_dim": lambda L: z(L, 3).unfold(1, 1, 1),
    "reshape_as_numel": lambda L: z(L, 3).reshape_as(z(L, 2)),
    "amax_dims_empty": lambda L: z(L, 2, 0).amax(()),
}


@needs_torch
@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_torchs_type(name):
    theirs, ours = raised(BAD[name], torch), raised(BAD[name], minigrad)
    assert theirs is not None, f"torch accepts {name}: the case is wrong"
    assert isinstance(ours, type(theirs)), f"minigrad raised {type(ours).__name__}: {ours}; torch {type(theirs).__name__}: {theirs}"
    assert str(ours)


def test_unfold_is_a_view_as_in_torch():
    for L in base.LIBS:  # (minigrad alone when torch is not installed)
        x = L.zeros(5)
        x.unfold(0, 2, 2)[1] += 1
        assert x.tolist() == [0.0, 0.0, 1.0, 1.0, 0.0]


@needs_torch
def test_meshgrid_warns_as_torch_without_indexing():
    for L in (minigrad, torch):
        with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
            L.meshgrid(L.zeros(2), L.zeros(3))


def test_diagonal_is_a_view_as_in_torch():
    for L in base.LIBS:  # (minigrad alone when torch is not installed)
        x = L.zeros(3, 3)
        d = x.diagonal(1)
        d += 1
        assert x.sum().item() == 2 and x[0, 1].item() == 1
        assert x.diag().sum().item() == 0  # diag of a matrix is a copy


@pytest.mark.parametrize("call", ["amax(0)", "amin(0)", "amax((0, 1), keepdim=True)", "nansum(1)", "nansum()"])
def test_an_in_place_change_to_the_input_before_backward_is_caught(call):
    """amax/amin find the winners and nansum the NaNs in backward, from the saved input, as PyTorch
    does: changing the input in place in between is the usual error, not a stale gradient."""
    for L in base.LIBS:  # (minigrad alone when torch is not installed)
        x = L.tensor([[1.0, 3.0, 2.0], [4.0, NAN, 0.0]], requires_grad=True)
        y = x * 1
        z = eval(f"y.{call}")
        with L.no_grad():
            y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


@needs_torch
@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.sampled_from([-1.0, 0.0, 2.0, 2.0, INF, -INF, NAN]), min_size=6, max_size=6),
       largest=st.booleans(), form=st.sampled_from(["method", "function"]))
def test_max_and_min_of_two_tensors_as_in_torch(values, largest, form):
    """x.min(y) is PyTorch's minimum: its node, its gradients (ties share, NaN passes to both, +0.0 not -0.0)."""
    name = "max" if largest else "min"
    results = []
    for L in (minigrad, torch):
        a = L.tensor(values[:3], dtype=L.float64, requires_grad=True)
        b = L.tensor(values[3:], dtype=L.float64, requires_grad=True)
        out = getattr(a, name)(b) if form == "method" else getattr(L, name)(a, b)
        out.backward(L.tensor([1.0, -2.0, 3.0], dtype=L.float64))
        results.append((out.grad_fn.name(), out.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    (m_node, *mine), (t_node, *theirs) = results
    assert m_node == t_node
    for m, t in zip(mine, theirs):
        np.testing.assert_array_equal(m, t)
        np.testing.assert_array_equal(np.signbit(m), np.signbit(t))  # (the sign of a zero gradient too)
