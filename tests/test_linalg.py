"""minigrad.linalg and torch's top-level det, inverse, ... against PyTorch.

Hypothesis draws batch shapes and sizes; the matrices are well conditioned (an orthogonal
matrix times distinct singular values in [1, 3], so that eigen- and singular vectors have
gradients). Each case runs through both libraries in float64: values, the gradient of a
random-weighted sum of the outputs, dtypes and node names; then gradcheck and gradgradcheck
(finite differences) without torch. Eigen- and singular vectors (and QR's factors) are compared
through their absolute values, which do not depend on the sign LAPACK picks for each vector.
Bad input must raise PyTorch's exception type (``LinAlgError`` where torch raises its own).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck
from tests.ops.test_creation_and_devices import outputs, raised

torch = pytest.importorskip("torch")


def conditioned(rng, *shape, symmetric=False, positive=False):
    """A batch of matrices with distinct singular values in [1, 3] (eigenvalues, if symmetric)."""
    *batch, m, n = shape
    k = min(m, n)
    values = 1 + 2 * (np.arange(k) + rng.uniform(0.2, 0.8, (*batch, k))) / max(k, 1)
    if symmetric:
        Q = np.linalg.qr(rng.standard_normal((*batch, n, n)))[0]
        signs = 1 if positive else rng.choice([-1.0, 1.0], (*batch, k))
        return (Q * (values * signs)[..., None, :]) @ np.swapaxes(Q, -1, -2)
    U = np.linalg.qr(rng.standard_normal((*batch, m, k)))[0]
    V = np.linalg.qr(rng.standard_normal((*batch, n, k)))[0]
    return (U * values[..., None, :]) @ np.swapaxes(V, -1, -2)


CASES = {
    # name: (function of (library, *inputs), input kinds: "square", "spd", "sym", "wide", "tall", "rhs", "vec3")
    "det": (lambda L, A: L.linalg.det(A), ("square",)),
    "det_top": (lambda L, A: L.det(A), ("square",)),
    "det_method": (lambda L, A: A.det(), ("square",)),
    "slogdet": (lambda L, A: tuple(L.linalg.slogdet(A)), ("square",)),
    "slogdet_top": (lambda L, A: tuple(L.slogdet(A)), ("square",)),
    "logdet": (lambda L, A: L.logdet(A), ("spd",)),
    "inv": (lambda L, A: L.linalg.inv(A), ("square",)),
    "inverse": (lambda L, A: A.inverse(), ("square",)),
    "solve": (lambda L, A, B: L.linalg.solve(A, B), ("square", "rhs")),
    "solve_vector": (lambda L, A, b: L.linalg.solve(A, b), ("square", "rhs_vector")),
    "solve_right": (lambda L, A, B: L.linalg.solve(A, B.mT, left=False), ("square", "rhs")),
    "solve_triangular": (lambda L, A, B: L.linalg.solve_triangular(A, B, upper=True), ("square", "rhs")),
    "pinv_tall": (lambda L, A: L.linalg.pinv(A), ("tall",)),
    "pinv_wide": (lambda L, A: L.pinverse(A), ("wide",)),
    "qr_tall": (lambda L, A: tuple(o.abs() for o in L.linalg.qr(A)), ("tall",)),
    "qr_square": (lambda L, A: tuple(o.abs() for o in L.linalg.qr(A)), ("square",)),
    "qr_wide": (lambda L, A: tuple(o.abs() for o in L.linalg.qr(A)), ("wide",)),
    "eigh": (lambda L, A: (L.linalg.eigh(A)[0], L.linalg.eigh(A)[1].abs()), ("sym",)),
    "eigh_upper": (lambda L, A: L.linalg.eigh(A, UPLO="U")[1].abs(), ("sym",)),
    "eigvalsh": (lambda L, A: L.linalg.eigvalsh(A), ("sym",)),
    "svd_tall": (lambda L, A: tuple(o.abs() for o in L.linalg.svd(A, full_matrices=False)), ("tall",)),
    "svd_wide": (lambda L, A: tuple(o.abs() for o in L.linalg.svd(A, full_matrices=False)), ("wide",)),
    "svd_square": (lambda L, A: tuple(o.abs() for o in L.linalg.svd(A)), ("square",)),
    "svd_full": (lambda L, A: L.linalg.svd(A)[1], ("tall",)),
    "svd_top": (lambda L, A: tuple(o.abs() for o in L.svd(A)), ("tall",)),
    "svdvals": (lambda L, A: L.linalg.svdvals(A), ("wide",)),
    "cholesky": (lambda L, A: L.linalg.cholesky(A), ("spd",)),
    "cholesky_upper": (lambda L, A: L.linalg.cholesky(A, upper=True), ("spd",)),
    "cholesky_top": (lambda L, A: L.cholesky(A), ("spd",)),
    "matrix_exp": (lambda L, A: L.linalg.matrix_exp(A), ("square",)),
    "matrix_power_0": (lambda L, A: L.linalg.matrix_power(A, 0) + A, ("square",)),
    "matrix_power_3": (lambda L, A: L.matrix_power(A, 3), ("square",)),
    "matrix_power_5": (lambda L, A: A.matrix_power(5), ("square",)),
    "matrix_power_-2": (lambda L, A: L.linalg.matrix_power(A, -2), ("square",)),
    "cross": (lambda L, a, b: L.linalg.cross(a, b), ("vec3", "vec3")),
    "vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), ("tall", "tall")),
    "matmul": (lambda L, A, B: L.linalg.matmul(A, B), ("square", "rhs")),
    "inv_ex": (lambda L, A: tuple(L.linalg.inv_ex(A)), ("square",)),
    "cholesky_ex": (lambda L, A: tuple(L.linalg.cholesky_ex(A, upper=True)), ("spd",)),
    "solve_ex": (lambda L, A, B: tuple(L.linalg.solve_ex(A, B, left=False)), ("square", "rhs_square")),
    "diagonal": (lambda L, A: L.linalg.diagonal(A, offset=-1) * 1, ("tall",)),
    "vander": (lambda L, A: L.linalg.vander(A[..., :, 0]), ("tall",)),
    "vander_n": (lambda L, A: L.linalg.vander(A[..., 0], N=4), ("tall",)),
    **{f"cond_{p}": (lambda L, A, p=p: L.linalg.cond(A, p), ("square",))
       for p in (None, "fro", "nuc", 1, -1, math.inf, -2)},
    "tensorinv": (lambda L, A: L.linalg.tensorinv(first(A).reshape(A.shape[-1], 1, A.shape[-1]), ind=1), ("square",)),
    "tensorsolve": (lambda L, A, b: L.linalg.tensorsolve(first(A).reshape(A.shape[-1], 1, A.shape[-1]),
                                                         b.reshape(-1, b.shape[-1])[0]), ("square", "rhs_vector")),
    "multi_dot": (lambda L, a, b: L.linalg.multi_dot([a[:, 0], b, b.mT, a]), ("wide1", "wide1")),
    "lstsq": (lambda L, A, B: L.linalg.lstsq(A, B).solution, ("tall", "rhs_tall")),
    "norm": (lambda L, A: L.linalg.norm(A), ("tall",)),
    "vector_norm_3": (lambda L, A: L.linalg.vector_norm(A, 3, dim=-1), ("tall",)),
    "norm_dim": (lambda L, A: L.linalg.norm(A, dim=-2, keepdim=True), ("tall",)),
    **{f"matrix_norm_{o}": (lambda L, A, o=o: L.linalg.matrix_norm(A, o), ("tall",))
       for o in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf)},
    "matrix_norm_keepdim": (lambda L, A: L.linalg.matrix_norm(A, "nuc", keepdim=True), ("tall",)),
}
# composed of other nodes in minigrad (solve_right is solve of the transposes, solve_triangular reads
# A's triangle with triu, multi_dot ends in a matmul)
NODE_NAMES_DIFFER = {"solve_right", "solve_triangular", "multi_dot", "solve_ex", "cond_None", "cond_-2",
                     "tensorinv", "tensorsolve"}


def first(A):
    """The first matrix of a batch."""
    return A.reshape(-1, *A.shape[-2:])[0]


def make(kind: str, rng, batch: tuple, n: int):
    if kind == "square":
        return conditioned(rng, *batch, n, n) * rng.choice([-1.0, 1.0])
    if kind in ("spd", "sym"):
        return conditioned(rng, *batch, n, n, symmetric=True, positive=kind == "spd")
    if kind == "tall":
        return conditioned(rng, *batch, n + 2, n)
    if kind == "wide1":
        return conditioned(rng, n + 2, n + 1)
    if kind == "wide":
        return conditioned(rng, *batch, n, n + 2)
    if kind == "rhs":
        return rng.standard_normal((*batch, n, 2))
    if kind == "rhs_square":
        return rng.standard_normal((*batch, n, n))
    if kind == "rhs_vector":
        return rng.standard_normal((*batch, n))
    if kind == "rhs_tall":
        return rng.standard_normal((*batch, n + 2, 2))
    if kind == "vec3":
        return rng.standard_normal((*batch, n, 3))
    raise ValueError(kind)


def inputs(name: str, batch: tuple, n: int, seed: int):
    rng = np.random.default_rng(seed)
    fn, kinds = CASES[name]
    return fn, [make(kind, rng, batch, n) for kind in kinds]


# PyTorch 2.13 cannot differentiate cond in these norms (its inverse is changed in place: "modified
# by an inplace operation"); only values are compared with it, gradcheck checks minigrad's gradients.
VALUES_ONLY = {"cond_fro", "cond_nuc", "cond_1", "cond_-1", "cond_inf"}


def run(lib, fn, arrays, seed=0, requires_grad=True):
    xs = [lib.tensor(a, requires_grad=requires_grad) for a in arrays]
    outs = outputs(fn(lib, *xs))
    if not requires_grad:
        return [o.numpy() for o in outs], [], [str(o.dtype).split(".")[-1] for o in outs], []
    rng = np.random.default_rng(seed)
    loss = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outs if o.requires_grad)
    grads = lib.autograd.grad(loss, xs)
    return ([o.detach().numpy() for o in outs], [g.numpy() for g in grads],
            [str(o.dtype).split(".")[-1] for o in outs], [o.grad_fn and o.grad_fn.name() for o in outs])


shapes = st.tuples(st.sampled_from([(), (2,), (1, 2)]), st.integers(1, 4), st.integers(0, 2 ** 16))


@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=4, deadline=None)
@given(shapes)
def test_matches_torch(name, shape):
    batch, n, seed = shape
    if name.startswith("matrix_norm") and batch == (1, 2):
        batch = (2,)
    fn, arrays = inputs(name, batch, n, seed)
    mv, mg, md, mn = run(minigrad, fn, arrays, requires_grad=name not in VALUES_ONLY)
    tv, tg, td, tn = run(torch, fn, arrays, requires_grad=name not in VALUES_ONLY)
    assert md == td
    if name not in NODE_NAMES_DIFFER:
        assert mn == tn
    for m, t in zip(mv, tv):
        assert m.shape == t.shape
        np.testing.assert_allclose(m, t, rtol=1e-9, atol=1e-9)
    for m, t in zip(mg, tg):
        np.testing.assert_allclose(m, t, rtol=1e-7, atol=1e-7)


GRADGRAD = ["det", "slogdet", "logdet", "inv", "solve", "solve_vector", "pinv_tall", "qr_tall", "qr_wide",
            "eigh", "svd_tall", "svd_wide", "cholesky", "matrix_exp", "cross", "lstsq", "matrix_norm_nuc"]


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(name):
    fn, arrays = inputs(name, (2,), 3, 7)
    xs = [minigrad.tensor(a, requires_grad=True) for a in arrays]

    def float_outputs(*args):
        # a symmetric input is read from one triangle: finite differences of the other would see
        # nothing, so differentiate through a symmetric matrix (as PyTorch's own gradchecks do)
        args = [(x + x.mT) / 2 if kind in ("spd", "sym") else x for x, kind in zip(args, CASES[name][1])]
        return tuple(o for o in outputs(fn(minigrad, *args)) if o.requires_grad)

    assert gradcheck(float_outputs, xs, eps=1e-6, atol=1e-5, rtol=1e-3)
    if name in GRADGRAD:
        assert gradgradcheck(float_outputs, xs, eps=1e-6, atol=1e-5, rtol=1e-3)


def test_float32_keeps_its_dtype():
    A = minigrad.tensor(conditioned(np.random.default_rng(0), 3, 3), dtype=minigrad.float32, requires_grad=True)
    for out in (minigrad.linalg.inv(A), minigrad.linalg.det(A), minigrad.linalg.matrix_exp(A),
                minigrad.linalg.svd(A).S, minigrad.linalg.qr(A).R, minigrad.linalg.pinv(A)):
        assert out.dtype == minigrad.float32
    assert minigrad.linalg.matrix_rank(A).dtype == minigrad.int64


def test_singular_values_and_factors_reconstruct():
    A = minigrad.tensor(np.random.default_rng(1).standard_normal((2, 4, 3)))
    U, S, Vh = minigrad.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(((U * S.unsqueeze(-2)) @ Vh).numpy(), A.numpy(), atol=1e-12)
    Q, R = minigrad.linalg.qr(A)
    np.testing.assert_allclose((Q @ R).numpy(), A.numpy(), atol=1e-12)
    assert type(minigrad.linalg.qr(A)).__name__ == "linalg_qr" and minigrad.linalg.eigh(A @ A.mT)._fields == (
        "eigenvalues", "eigenvectors")


def test_lstsq_and_rank_match_torch():
    rng = np.random.default_rng(2)
    A, B = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    A[:, 2] = A[:, 0] + A[:, 1]  # rank 2
    for driver in (None, "gelsd", "gelss", "gels"):
        if driver == "gels":
            A = rng.standard_normal((5, 3))
        ours = minigrad.linalg.lstsq(minigrad.tensor(A), minigrad.tensor(B), driver=driver)
        theirs = torch.linalg.lstsq(torch.tensor(A), torch.tensor(B), driver=driver)
        assert type(ours).__name__ == type(theirs).__name__ == "linalg_lstsq"
        for o, t in zip(ours, theirs):
            assert tuple(o.shape) == tuple(t.shape) and str(o.dtype)[9:] == str(t.dtype)[6:], driver
            np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1e-10)
    for atol, rtol in ((None, None), (0.5, None), (None, 0.3), (1.0, 0.1)):
        M = rng.standard_normal((2, 4, 3)) * [1, 0.4, 1e-17]
        got = minigrad.linalg.matrix_rank(minigrad.tensor(M), atol=atol, rtol=rtol)
        assert got.tolist() == torch.linalg.matrix_rank(torch.tensor(M), atol=atol, rtol=rtol).tolist()


SINGULAR = [np.zeros((3, 3)), np.ones((2, 2)), [[1.0, 2, 3], [2, 4, 6], [1, 0, 1]], [[0.0, 1], [1, 0]],
            [[4.0, 2, 0], [2, 1, 0], [0, 0, 1]], [[1.0, 2], [2, 1]], -np.eye(2), [[[1.0, 0], [0, 0]], [[2.0, 1], [1, 2]]]]


@pytest.mark.parametrize("matrix", range(len(SINGULAR)))
def test_ex_forms_give_lapacks_info(matrix):
    for op in ("inv_ex", "cholesky_ex", "solve_ex"):
        outcomes = []
        for lib in (minigrad, torch):
            A = lib.tensor(np.array(SINGULAR[matrix], dtype=np.float64))
            args = (A, lib.ones(A.shape[:-1], dtype=A.dtype)) if op == "solve_ex" else (A,)
            result = getattr(lib.linalg, op)(*args)
            assert type(result).__name__ == f"linalg_{op}"
            outcomes.append((result.info.tolist(), str(result.info.dtype).split(".")[-1]))
            if not result.info.any():
                outcomes[-1] += (result[0].numpy().round(8).tolist(),)
        assert outcomes[0] == outcomes[1], op


def test_linalg_error_is_a_runtime_error():
    assert issubclass(minigrad.linalg.LinAlgError, RuntimeError)
    assert minigrad.linalg.__name__ == "minigrad.linalg"


BAD = {
    "inv_singular": lambda L: L.linalg.inv(L.zeros(3, 3, dtype=L.float64)),
    "inv_not_square": lambda L: L.linalg.inv(L.zeros(2, 3)),
    "inv_integer": lambda L: L.linalg.inv(L.zeros(3, 3, dtype=L.int64)),
    "inverse_1d": lambda L: L.inverse(L.zeros(3)),
    "det_1d": lambda L: L.linalg.det(L.ones(3)),
    "det_not_square": lambda L: L.det(L.ones(2, 3)),
    "solve_singular": lambda L: L.linalg.solve(L.zeros(2, 2), L.ones(2)),
    "solve_shapes": lambda L: L.linalg.solve(L.eye(2), L.ones(3)),
    "solve_dtypes": lambda L: L.linalg.solve(L.eye(2, dtype=L.float64), L.ones(2)),
    "cholesky_not_pd": lambda L: L.linalg.cholesky(-L.eye(2)),
    "cholesky_not_square": lambda L: L.cholesky(L.ones(2, 3)),
    "eigh_not_square": lambda L: L.linalg.eigh(L.zeros(2, 3)),
    "eigh_uplo": lambda L: L.linalg.eigh(L.eye(2), UPLO="X"),
    "matrix_power_singular": lambda L: L.linalg.matrix_power(L.zeros(2, 2), -1),
    "matrix_power_not_square": lambda L: L.matrix_power(L.zeros(2, 3), 2),
    "qr_mode": lambda L: L.linalg.qr(L.zeros(3, 3), mode="x"),
    "qr_r_backward": lambda L: L.linalg.qr(L.eye(2, requires_grad=True), mode="r")[1].sum().backward(),
    "qr_complete_backward": lambda L: L.linalg.qr(L.ones(3, 2, requires_grad=True), mode="complete")[0].sum().backward(),
    "svd_1d": lambda L: L.linalg.svd(L.ones(3)),
    "cross_length": lambda L: L.linalg.cross(L.ones(2), L.ones(2)),
    "multi_dot_one": lambda L: L.linalg.multi_dot([L.ones(2, 2)]),
    "multi_dot_3d": lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2, 2, 2)]),
    "norm_3d_ord": lambda L: L.linalg.norm(L.ones(2, 2, 2), "fro"),
    "matrix_norm_ord": lambda L: L.linalg.matrix_norm(L.ones(2, 2), 3),
    "matrix_norm_1d": lambda L: L.linalg.matrix_norm(L.ones(2)),
    "lstsq_rows": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(2, 1)),
    "lstsq_driver": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 1), driver="x"),
    "inv_ex_check_errors": lambda L: L.linalg.inv_ex(L.zeros(2, 2), check_errors=True),
    "cholesky_ex_check_errors": lambda L: L.linalg.cholesky_ex(-L.eye(2), check_errors=True),
    "cond_fro_singular_shape": lambda L: L.linalg.cond(L.ones(2, 3), "fro"),
    "tensorinv_ind": lambda L: L.linalg.tensorinv(L.eye(4), ind=0),
    "tensorinv_shape": lambda L: L.linalg.tensorinv(L.ones(2, 3), ind=1),
    "tensorsolve_shape": lambda L: L.linalg.tensorsolve(L.ones(2, 3), L.ones(3)),
    "vander_0d": lambda L: L.linalg.vander(L.tensor(1.0)),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_torchs_type(name):
    theirs, ours = raised(BAD[name], torch), raised(BAD[name], minigrad)
    assert theirs is not None, f"torch accepts {name}: the case is wrong"
    expected = minigrad.linalg.LinAlgError if isinstance(theirs, torch.linalg.LinAlgError) else type(theirs)
    assert isinstance(ours, expected), f"minigrad raised {type(ours).__name__}: {ours}; torch {theirs!r}"
    assert not str(ours).startswith("torch")
