"""Pooling, padding and embedding as one node each, named as PyTorch names them, differentiable to any order.

``nn/ops/linear_map.py`` runs each (linear) function as one node whose backward is
its adjoint, itself a node. Compared with torch: values, the node names of the
output and of its gradient under create_graph, first and second derivatives;
gradgradcheck in float64 without torch.
"""
from __future__ import annotations

import numpy as np
import pytest

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

X = np.random.default_rng(1).standard_normal((2, 2, 5, 5))
W = np.random.default_rng(2).standard_normal((5, 3))

CALLS = {
    "avg_pool2d(2)": lambda F, x: F.avg_pool2d(x, 2),
    "avg_pool2d(3, 2, 1)": lambda F, x: F.avg_pool2d(x, 3, 2, 1),
    "avg_pool2d ceil_mode": lambda F, x: F.avg_pool2d(x, 2, ceil_mode=True),
    "avg_pool2d no pad count": lambda F, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
    "avg_pool2d divisor_override": lambda F, x: F.avg_pool2d(x, 2, divisor_override=3),
    "avg_pool2d 3-d": lambda F, x: F.avg_pool2d(x[0], 2),
    "avg_pool2d too small": lambda F, x: F.avg_pool2d(x[:, :, :1, :1], 2),
    "adaptive_avg_pool2d((2, 3))": lambda F, x: F.adaptive_avg_pool2d(x, (2, 3)),
    "adaptive_avg_pool2d(1)": lambda F, x: F.adaptive_avg_pool2d(x, 1),
    "pad constant": lambda F, x: F.pad(x, (1, 2)),
    "pad constant value": lambda F, x: F.pad(x, (1, 2, 0, 1), value=2.5),
    "pad crop": lambda F, x: F.pad(x, (-1, 2)),
    "pad nothing": lambda F, x: F.pad(x, (0, 0)),
    "pad reflect 2-d": lambda F, x: F.pad(x, (1, 2, 1, 1), mode="reflect"),
    "pad replicate 2-d": lambda F, x: F.pad(x, (1, 2, 1, 1), mode="replicate"),
    "pad replicate 3-d": lambda F, x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="replicate"),
    "pad reflect of a 2-d input": lambda F, x: F.pad(x[0, 0], (1, 1, 1, 1), mode="reflect"),
}
LOOKUPS = {
    "embedding": lambda F, w: F.embedding(minigrad_or_torch(w).tensor([1, 2, 1]), w),
    "embedding padding_idx": lambda F, w: F.embedding(minigrad_or_torch(w).tensor([[1, 2], [1, 4]]), w, padding_idx=1),
}


def minigrad_or_torch(t):
    return minigrad if isinstance(t, minigrad.Tensor) else pytest.importorskip("torch")


@pytest.mark.parametrize("call", [c for c in CALLS if "too small" not in c and "2-d input" not in c])
def test_gradgradcheck(call):
    x = minigrad.tensor(X[:1, :1], requires_grad=True)
    assert gradcheck(lambda t: CALLS[call](minigrad.nn.functional, t), (x,), eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(lambda t: CALLS[call](minigrad.nn.functional, t) ** 2, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("call", sorted(LOOKUPS))
def test_embedding_gradgradcheck(call):
    w = minigrad.tensor(W, requires_grad=True)
    assert gradgradcheck(lambda t: LOOKUPS[call](minigrad.nn.functional, t) ** 2, (w,), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_padding_by_nothing_is_a_new_tensor():
    x = minigrad.tensor(X, requires_grad=True)
    y = minigrad.nn.functional.pad(x, (0, 0))
    assert not np.shares_memory(y.detach().numpy(), x.detach().numpy())


def _run(lib, make, f):
    try:
        inputs = make(lib)
        y = f(lib.nn.functional, inputs)
        weights = lib.tensor(np.random.default_rng(0).standard_normal(tuple(y.shape)), dtype=lib.float64)
        g, = lib.autograd.grad((y * weights).sum(), [inputs], create_graph=True)
        name = None if g.grad_fn is None else g.grad_fn.name()
        second = None
        if (g * g).sum().requires_grad:
            second, = lib.autograd.grad((g * g).sum(), [inputs], allow_unused=True)
        return ("ok", y.grad_fn.name(), y.detach().numpy(), name, g.detach().numpy(),
                None if second is None else second.numpy())
    except Exception as e:  # noqa: BLE001 - the exception type is what we compare
        return ("raised", type(e).__name__)


@pytest.mark.parametrize("call", sorted(CALLS) + sorted(LOOKUPS))
def test_same_as_torch(call):
    torch = pytest.importorskip("torch")
    if call in CALLS:
        make, f = (lambda lib: lib.tensor(X, requires_grad=True)), CALLS[call]
    else:
        make, f = (lambda lib: lib.tensor(W, requires_grad=True)), LOOKUPS[call]
    m, t = _run(minigrad, make, f), _run(torch, make, f)
    assert m[0] == t[0] and m[1] == t[1], f"minigrad {m[:2]}, torch {t[:2]}"
    if t[0] == "ok":
        np.testing.assert_allclose(m[2], t[2], rtol=1e-12, atol=1e-12)
        if call not in ("avg_pool2d 3-d", "pad reflect of a 2-d input"):  # (they index x first: x[0]'s own
            # gradient under create_graph is IndexAddBackward0 in minigrad, SelectBackwardBackward0 in torch)
            assert m[3] == t[3]
        np.testing.assert_allclose(m[4], t[4], rtol=1e-12, atol=1e-12)
        assert (m[5] is None) == (t[5] is None)
        if t[5] is not None:
            np.testing.assert_allclose(m[5], t[5], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("max_norm, norm_type, padding_idx", [(1.0, 2.0, None), (0.5, 1.0, 0), (10.0, 2.0, None)])
def test_embedding_max_norm_renormalizes_the_rows_it_looks_up(max_norm, norm_type, padding_idx):
    torch = pytest.importorskip("torch")
    results = []
    for lib in (minigrad, torch):
        e = lib.nn.Embedding.from_pretrained(lib.tensor(W * 3), freeze=False, max_norm=max_norm,
                                             norm_type=norm_type, padding_idx=padding_idx)
        out = e(lib.tensor([0, 2, 2]))
        out.sum().backward()
        results.append((out.detach().numpy(), e.weight.detach().numpy(), e.weight.grad.numpy(), repr(e)))
    for m, t in zip(*results):
        if isinstance(t, str):
            assert m == t
        else:
            np.testing.assert_allclose(m, t, rtol=1e-6, atol=1e-7)


# -- layer_norm and batch_norm (nn/ops/normalization.py) -----------------------------------------------
NORM_X = np.random.default_rng(1).standard_normal((3, 2, 4))


def _norm_call(kind: str, training: bool = True, stats: bool = True):
    def call(lib, x, w, b):
        F = lib.nn.functional
        if kind == "layer":
            shape = (2, 4) if w is not None and w.ndim == 2 else (4,)
            return F.layer_norm(x, shape, w, b, eps=1e-5), []
        rm = lib.tensor(np.linspace(-1, 1, 2)) if stats else None
        rv = lib.tensor(np.linspace(0.5, 2, 2)) if stats else None
        return F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3), [t for t in (rm, rv) if t is not None]
    return call


NORMS = {
    "layer_norm (4,)": (_norm_call("layer"), (4,)), "layer_norm (2, 4)": (_norm_call("layer"), (2, 4)),
    "layer_norm no affine": (_norm_call("layer"), None),
    "batch_norm training": (_norm_call("batch"), (2,)), "batch_norm training, no running stats": (_norm_call("batch", stats=False), (2,)),
    "batch_norm evaluation": (_norm_call("batch", training=False), (2,)), "batch_norm no affine": (_norm_call("batch"), None),
}


def _norm_inputs(lib, params):
    x = lib.tensor(NORM_X, requires_grad=True)
    w = lib.tensor(np.random.default_rng(2).standard_normal(params), requires_grad=True) if params else None
    b = lib.tensor(np.random.default_rng(3).standard_normal(params), requires_grad=True) if params else None
    return [t for t in (x, w, b) if t is not None], x, w, b


@pytest.mark.parametrize("case", sorted(NORMS))
def test_normalization_gradgradcheck(case):
    call, params = NORMS[case]
    inputs, *_ = _norm_inputs(minigrad, params)

    def f(*ts):
        x, w, b = (list(ts) + [None, None])[:3]
        return call(minigrad, x, w, b)[0] ** 2
    assert gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("case", sorted(NORMS))
def test_normalization_same_as_torch(case):
    """One node each (NativeLayerNormBackward0, NativeBatchNormBackward0; they were DivBackward0), with
    torch's values, running statistics, first and second derivatives (the gradients' own node names
    under create_graph are minigrad's backward formula's, where torch has one node)."""
    torch = pytest.importorskip("torch")
    call, params = NORMS[case]
    results = []
    for lib in (minigrad, torch):
        inputs, x, w, b = _norm_inputs(lib, params)
        y, running = call(lib, x, w, b)
        weights = lib.tensor(np.random.default_rng(4).standard_normal(tuple(y.shape)))
        grads = lib.autograd.grad((y * weights).sum(), inputs, create_graph=True)
        total = sum((g * g).sum() for g in grads)
        second = lib.autograd.grad(total, inputs, allow_unused=True) if total.requires_grad else [None] * len(inputs)
        results.append((y.grad_fn.name(), y.detach().numpy(), [g.detach().numpy() for g in grads],
                        [None if s is None else s.numpy() for s in second], [r.numpy() for r in running]))
    (m_name, *m), (t_name, *t) = results
    assert m_name == t_name
    for a, b in zip(m, t):
        for p, q in (zip(a, b) if isinstance(a, list) else [(a, b)]):
            assert (p is None) == (q is None)
            if q is not None:
                np.testing.assert_allclose(p, q, rtol=1e-7, atol=1e-9)
