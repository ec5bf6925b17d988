"""minigrad against PyTorch itself: the same float64 inputs through both libraries.

For every op: the values, and the gradients of a random-weighted sum of the
outputs, agree to 1e-10 (relative). Then: the dtypes chosen by type promotion,
and the exception types of the error cases, agree.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minigrad  # noqa: E402

RTOL, ATOL = 1e-10, 1e-12


# -- machinery -------------------------------------------------------------------------------------
def _grad(lib, loss, inputs):
    if lib is torch:
        return torch.autograd.grad(loss, inputs, allow_unused=True)
    return minigrad.autograd.grad(loss, inputs, allow_unused=True)


def _np(t):
    return t.detach().numpy()


def run(lib, fn, arrays, seed=0):
    """Values of fn(lib, *inputs) and the gradients of sum_i <w_i, out_i> w.r.t. the inputs."""
    inputs = [lib.tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    outs = out if isinstance(out, tuple) else (out,)
    rng = np.random.default_rng(seed)
    values, loss = [], None
    for o in outs:
        values.append(_np(o).copy())
        if not o.requires_grad or not o.is_floating_point():
            continue
        w = lib.tensor(rng.standard_normal(tuple(o.shape)))
        term = (o * w).sum()
        loss = term if loss is None else loss + term
    grads = []
    if loss is not None:
        for x, g in zip(inputs, _grad(lib, loss, inputs)):
            grads.append(np.zeros(tuple(x.shape)) if g is None else _np(g).copy())
    return values, grads, [str(o.dtype).split(".")[-1] for o in outs]


def compare(fn, *arrays, seed=0):
    mv, mg, md = run(minigrad, fn, arrays, seed)
    tv, tg, td = run(torch, fn, arrays, seed)
    assert md == td, f"dtypes differ: minigrad {md}, torch {td}"
    assert len(mv) == len(tv)
    for i, (m, t) in enumerate(zip(mv, tv)):
        assert m.shape == t.shape, f"output {i}: shape {m.shape} vs torch {t.shape}"
        np.testing.assert_allclose(m, t, rtol=RTOL, atol=ATOL, err_msg=f"value of output {i}")
    assert len(mg) == len(tg)
    for i, (m, t) in enumerate(zip(mg, tg)):
        assert m.shape == t.shape, f"grad {i}: shape {m.shape} vs torch {t.shape}"
        np.testing.assert_allclose(m, t, rtol=RTOL, atol=ATOL, err_msg=f"gradient of input {i}")


RNG = np.random.default_rng(20240601)


def normal(*shape):
    return RNG.standard_normal(shape)


def positive(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def nonzero(*shape):
    return RNG.uniform(0.5, 2.0, shape) * RNG.choice([-1.0, 1.0], shape)


# -- elementwise binary -------------------------------------------------------------------------------
BROADCAST_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((3, 1), (1, 4)), ((), (2,)), ((2,), ()),
                   ((1,), (0,)), ((2, 1, 3), (4, 1)), ((0, 3), (1, 3))]
BINARY = {
    "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: a - b,
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b,
    "pow": lambda L, a, b: a ** b,
    "add_method": lambda L, a, b: a.add(b),
    "mul_method": lambda L, a, b: a.mul(b),
    "pow_function": lambda L, a, b: L.pow(a, b),
}


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("sa,sb", BROADCAST_PAIRS)
def test_binary(op, sa, sb):
    a = positive(*sa)
    b = normal(*sb) if op.startswith("pow") else nonzero(*sb)
    compare(BINARY[op], a, b)


SCALAR_OPS = {
    "t+s": lambda s: lambda L, a: a + s,
    "t-s": lambda s: lambda L, a: a - s,
    "t*s": lambda s: lambda L, a: a * s,
    "t/s": lambda s: lambda L, a: a / s,
    "t**s": lambda s: lambda L, a: a ** s,
    "s+t": lambda s: lambda L, a: s + a,
    "s-t": lambda s: lambda L, a: s - a,
    "s*t": lambda s: lambda L, a: s * a,
    "s/t": lambda s: lambda L, a: s / a,
    "s**t": lambda s: lambda L, a: abs(s) ** a,
}


@pytest.mark.parametrize("op", list(SCALAR_OPS))
@pytest.mark.parametrize("scalar", [2.5, -1.5, 3, 0.5])
@pytest.mark.parametrize("shape", [(2, 3), (), (0,)])
def test_scalar_binary(op, scalar, shape):
    compare(SCALAR_OPS[op](scalar), positive(*shape))


# -- elementwise unary ----------------------------------------------------------------------------------
UNARY = {
    "neg": (lambda L, x: -x, normal),
    "exp": (lambda L, x: x.exp(), normal),
    "exp_fn": (lambda L, x: L.exp(x), normal),
    "log": (lambda L, x: x.log(), positive),
    "sqrt": (lambda L, x: x.sqrt(), positive),
    "abs": (lambda L, x: x.abs(), normal),
    "tanh": (lambda L, x: x.tanh(), normal),
    "sigmoid": (lambda L, x: x.sigmoid(), normal),
    "sigmoid_far": (lambda L, x: (x * 40).sigmoid(), normal),
    "relu": (lambda L, x: x.relu(), normal),
    "clamp_min": (lambda L, x: x.clamp(min=-0.3), normal),
    "clamp_max": (lambda L, x: x.clamp(max=0.4), normal),
    "clamp_both": (lambda L, x: x.clamp(-0.3, 0.4), normal),
    "clamp_fn": (lambda L, x: L.clamp(x, min=-0.3, max=0.4), normal),
    "clone": (lambda L, x: x.clone(), normal),
    "neg_method": (lambda L, x: x.neg(), normal),
}


@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("shape", [(2, 3), (), (0, 3), (5,)])
def test_unary(name, shape):
    fn, values = UNARY[name]
    compare(fn, values(*shape))


KINKS = np.array([-1.0, -0.3, 0.0, 0.4, 1.0])


@pytest.mark.parametrize("name", ["abs", "relu", "clamp_min", "clamp_max", "clamp_both"])
def test_unary_at_kinks(name):
    """At the non-differentiable points both libraries must pick the same subgradient."""
    compare(UNARY[name][0], KINKS)


def test_maximum():
    for sa, sb in BROADCAST_PAIRS:
        compare(lambda L, a, b: L.maximum(a, b), normal(*sa), normal(*sb))
    # ties split the gradient
    compare(lambda L, a, b: L.maximum(a, b), np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0]))
    compare(lambda L, a, b: a.maximum(b), np.array([[1.0, 2.0]]), np.array([[2.0], [1.0]]))


@pytest.mark.parametrize("sc,sa,sb", [((2, 3), (2, 3), (2, 3)), ((3,), (2, 3), ()), ((2, 1), (1, 3), (3,)),
                                      ((), (2,), (2,)), ((0, 2), (2,), (1,))])
def test_where(sc, sa, sb):
    cond = RNG.random(sc) > 0.5

    def fn(L, a, b):
        return L.where(L.tensor(cond), a, b)

    compare(fn, normal(*sa), normal(*sb))
    compare(lambda L, a: L.where(L.tensor(cond), a, 2.5), normal(*sa))


# -- reductions -------------------------------------------------------------------------------------
REDUCE_DIMS = [None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2)]


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("dim", REDUCE_DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean(op, dim, keepdim):
    x = normal(2, 3, 4)
    if dim is None:
        compare(lambda L, t: getattr(t, op)(), x)
    else:
        compare(lambda L, t: getattr(t, op)(dim, keepdim=keepdim), x)
        compare(lambda L, t: getattr(L, op)(t, dim=dim, keepdim=keepdim), x)


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_sum_mean_zero_size(op):
    compare(lambda L, t: getattr(t, op)(1), np.zeros((2, 0, 3)))
    compare(lambda L, t: getattr(t, op)(0, keepdim=True), np.zeros((2, 0, 3)))
    compare(lambda L, t: getattr(t, op)(), np.zeros((0,)))


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("dim", [0, -1])
def test_sum_mean_zero_dim_tensor(op, dim):
    compare(lambda L, t: getattr(t, op)(dim), np.array(1.5))


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min(op):
    x = normal(3, 4)
    compare(lambda L, t: getattr(t, op)(), x)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            compare(lambda L, t: getattr(t, op)(dim, keepdim=keepdim).values, x)
            compare(lambda L, t: getattr(t, op)(dim, keepdim)[0], x)
            mi = getattr(minigrad.tensor(x), op)(dim, keepdim=keepdim).indices.numpy()
            ti = getattr(torch.tensor(x), op)(dim, keepdim=keepdim).indices.numpy()
            np.testing.assert_array_equal(mi, ti)
    compare(lambda L, t: getattr(L, op)(t), x)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_ties(op):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    if op == "min":
        x = -x
    compare(lambda L, t: getattr(t, op)(), x)  # all-reduce: ties share the gradient
    compare(lambda L, t: getattr(t, op)(1).values, x)
    compare(lambda L, t: getattr(t, op)(0).values, np.array([[5.0, 1.0], [5.0, 1.0]]) * (1 if op == "max" else -1))


def test_max_binary_form():
    compare(lambda L, a, b: a.max(b), normal(2, 3), normal(3))
    compare(lambda L, a, b: a.min(b), normal(2, 3), normal(3))


# -- shape ops ------------------------------------------------------------------------------------------
SHAPE_OPS = [
    ("reshape", (2, 3, 4), lambda L, t: t.reshape(4, 6)),
    ("reshape_tuple", (2, 3, 4), lambda L, t: t.reshape((6, -1))),
    ("reshape_scalar", (1, 1), lambda L, t: t.reshape(())),
    ("reshape_zero", (2, 0, 3), lambda L, t: t.reshape(0, 6)),
    ("view", (2, 3, 4), lambda L, t: t.view(3, 8)),
    ("view_minus1", (2, 3, 4), lambda L, t: t.view(-1)),
    ("flatten", (2, 3, 4), lambda L, t: t.flatten()),
    ("flatten_1", (2, 3, 4), lambda L, t: t.flatten(1)),
    ("flatten_0_1", (2, 3, 4), lambda L, t: t.flatten(0, 1)),
    ("flatten_0d", (), lambda L, t: t.flatten()),
    ("flatten_zero", (2, 0, 3), lambda L, t: t.flatten(1)),
    ("flatten_fn", (2, 3), lambda L, t: L.flatten(t)),
    ("transpose", (2, 3, 4), lambda L, t: t.transpose(0, 2)),
    ("transpose_neg", (2, 3, 4), lambda L, t: t.transpose(-1, -2) * 2.0),
    ("transpose_fn", (2, 3), lambda L, t: L.transpose(t, 0, 1)),
    ("permute", (2, 3, 4), lambda L, t: t.permute(2, 0, 1)),
    ("permute_tuple", (2, 3, 4), lambda L, t: t.permute((1, 2, 0))),
    ("T", (2, 3), lambda L, t: t.T),
    ("T_matmul", (2, 3), lambda L, t: t.T @ t),
    ("mT", (2, 3, 4), lambda L, t: t.mT),
    ("squeeze", (1, 3, 1), lambda L, t: t.squeeze()),
    ("squeeze_dim", (1, 3, 1), lambda L, t: t.squeeze(-1)),
    ("squeeze_not_1", (1, 3, 1), lambda L, t: t.squeeze(1)),
    ("squeeze_tuple", (1, 3, 1), lambda L, t: t.squeeze((0, 2))),
    ("unsqueeze", (2, 3), lambda L, t: t.unsqueeze(1)),
    ("unsqueeze_neg", (2, 3), lambda L, t: t.unsqueeze(-1)),
    ("unsqueeze_0d", (), lambda L, t: t.unsqueeze(0)),
    ("expand", (3, 1), lambda L, t: t.expand(2, 3, 4)),
    ("expand_minus1", (3, 1), lambda L, t: t.expand(-1, 5)),
    ("expand_zero", (3, 1), lambda L, t: t.expand(3, 0)),
    ("expand_as", (1, 3), lambda L, t: t.expand_as(L.zeros(4, 3, dtype=L.float64))),
    ("select", (3, 4), lambda L, t: t.select(1, -1)),
    ("contiguous", (3, 4), lambda L, t: t.transpose(0, 1).contiguous()),
    ("view_as", (3, 4), lambda L, t: t.view_as(L.zeros(2, 6))),
]


@pytest.mark.parametrize("name,shape,fn", SHAPE_OPS, ids=[s[0] for s in SHAPE_OPS])
def test_shape_ops(name, shape, fn):
    compare(fn, normal(*shape))


# -- matmul -------------------------------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((1, 1), (1, 1)),
    ((2, 0), (0, 3)), ((0, 3), (3, 2)), ((2, 2, 3), (2, 3, 4)), ((2, 1, 2, 3), (3, 3, 2)),
    ((4, 2, 3), (3, 2)), ((2, 3), (4, 3, 2)), ((3,), (2, 3, 4)), ((2, 2, 3), (3,)), ((1, 2, 3), (5, 3, 1)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul(sa, sb):
    compare(lambda L, a, b: a @ b, normal(*sa), normal(*sb))
    compare(lambda L, a, b: L.matmul(a, b), normal(*sa), normal(*sb))


# -- softmax --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((2, 3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((5,), 0),
                                       ((2, 0), 1), ((2, 0), 0), ((), 0)])
def test_softmax(op, shape, dim):
    compare(lambda L, t: getattr(t, op)(dim), normal(*shape) * 3)
    compare(lambda L, t: getattr(L, op)(t, dim), normal(*shape) * 3)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_large(op):
    compare(lambda L, t: getattr(t, op)(1), np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0]]))


# -- cat / stack ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes,dim", [([(2, 3), (1, 3), (4, 3)], 0), ([(2, 3), (2, 1)], 1), ([(2, 3), (2, 0)], -1),
                                        ([(3,)], 0), ([(0, 2), (0, 2)], 0)])
def test_cat(shapes, dim):
    compare(lambda L, *ts: L.cat(list(ts), dim), *[normal(*s) for s in shapes])
    compare(lambda L, *ts: L.cat(ts, dim=dim), *[normal(*s) for s in shapes])


@pytest.mark.parametrize("shape,dim,n", [((2, 3), 0, 3), ((2, 3), 2, 2), ((2, 3), -1, 2), ((), 0, 4), ((0,), 1, 2)])
def test_stack(shape, dim, n):
    compare(lambda L, *ts: L.stack(list(ts), dim=dim), *[normal(*shape) for _ in range(n)])


# -- indexing ----------------------------------------------------------------------------------------------------
MASK = np.random.default_rng(7).random((4, 5)) > 0.5
INDEX_KEYS = [
    ("int", lambda L: 1),
    ("negative_int", lambda L: -1),
    ("ints", lambda L: (2, -3)),
    ("slice", lambda L: slice(1, 3)),
    ("slice_step", lambda L: slice(0, None, 2)),
    ("slice_step3", lambda L: (slice(None), slice(None, None, 3))),
    ("negative_slice", lambda L: slice(-3, -1)),
    ("slice_past_end", lambda L: slice(2, 10)),
    ("empty_slice", lambda L: slice(3, 1)),
    ("none", lambda L: None),
    ("none_middle", lambda L: (slice(None), None, 1)),
    ("ellipsis", lambda L: (Ellipsis, 1)),
    ("ellipsis_none", lambda L: (None, Ellipsis, slice(0, 2))),
    ("list_repeats", lambda L: [0, 0, 2, 0]),
    ("list_negative", lambda L: [-1, 1, -1]),
    ("tensor_repeats", lambda L: L.tensor([3, 3, 1])),
    ("two_lists", lambda L: ([0, 0, 3], [1, 1, 2])),
    ("slice_and_list", lambda L: (slice(1, None), [2, 2, 0])),
    ("tensor_2d", lambda L: L.tensor([[0, 1], [1, 0], [3, 3]])),
    ("row_mask", lambda L: L.tensor(np.array([True, False, True, True]))),
    ("mask_and_slice", lambda L: (L.tensor(np.array([False, True, True, False])), slice(1, 4))),
    ("empty_list", lambda L: (slice(None), [], 1)),
    ("int_then_list", lambda L: (1, [0, 4, 4])),
    ("list_slice_list", lambda L: ([0, 1], slice(None), [2, 0])),
]


@pytest.mark.parametrize("name,key", INDEX_KEYS, ids=[k[0] for k in INDEX_KEYS])
def test_indexing(name, key):
    compare(lambda L, t: t[key(L)], normal(4, 5, 3))


def test_indexing_full_mask():
    compare(lambda L, t: t[L.tensor(MASK)], normal(4, 5))


# -- dtype conversion ---------------------------------------------------------------------------------------------
def test_to_float32_and_back():
    x = normal(2, 3)
    m = minigrad.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    mf, tf = m.float(), t.float()
    assert str(mf.dtype).split(".")[-1] == str(tf.dtype).split(".")[-1] == "float32"
    np.testing.assert_array_equal(mf.detach().numpy(), tf.detach().numpy())
    w = np.arange(6.0).reshape(2, 3)
    (mf * minigrad.tensor(w, dtype=minigrad.float32)).sum().backward()
    (tf * torch.tensor(w, dtype=torch.float32)).sum().backward()
    assert m.grad.dtype == minigrad.float64
    np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())


# -- in-place on non-leaf tensors ------------------------------------------------------------------------------------
INPLACE = [
    ("add_", lambda t, y: t.add_(y)),
    ("add_alpha", lambda t, y: t.add_(y, alpha=-2.5)),
    ("sub_", lambda t, y: t.sub_(y)),
    ("sub_alpha", lambda t, y: t.sub_(y, alpha=0.5)),
    ("mul_", lambda t, y: t.mul_(y)),
    ("div_", lambda t, y: t.div_(y)),
    ("copy_", lambda t, y: t.copy_(y)),
    ("iadd", lambda t, y: t.__iadd__(y)),
    ("isub", lambda t, y: t.__isub__(y)),
    ("imul", lambda t, y: t.__imul__(y)),
    ("itruediv", lambda t, y: t.__itruediv__(y)),
]


@pytest.mark.parametrize("name,op", INPLACE, ids=[i[0] for i in INPLACE])
@pytest.mark.parametrize("ys", [(2, 3), (3,), (1, 1), ()], ids=str)
def test_inplace(name, op, ys):
    def fn(L, x, y):
        t = x * 1.5
        op(t, y)
        return t * x

    compare(fn, normal(2, 3), nonzero(*ys))


@pytest.mark.parametrize("name", ["zero_", "fill_", "clamp_"])
def test_inplace_unary(name):
    def fn(L, x, y):
        t = x * y
        if name == "zero_":
            t.zero_()
        elif name == "fill_":
            t.fill_(1.25)
        else:
            t.clamp_(-0.5, 0.5)
        return t + x

    compare(fn, normal(2, 3), normal(2, 3))


SETITEM = [
    ("int", lambda L: 1, (3,)),
    ("slice", lambda L: slice(0, 2), (2, 3)),
    ("step", lambda L: slice(None, None, 2), (3,)),
    ("ellipsis", lambda L: (Ellipsis, 0), (4,)),
    ("list_rows", lambda L: [0, 2], (2, 3)),
    ("col_list", lambda L: (slice(None), [0, 2]), (4, 2)),
    ("mask", lambda L: L.tensor(np.array([True, False, True, True])), (3,)),
    ("none", lambda L: (None, 1), (3,)),
]


@pytest.mark.parametrize("name,key,vshape", SETITEM, ids=[s[0] for s in SETITEM])
def test_setitem(name, key, vshape):
    def fn(L, x, v):
        t = x * 2.0
        t[key(L)] = v
        return t * x

    compare(fn, normal(4, 3), normal(*vshape))

    def fn_scalar(L, x):
        t = x * 2.0
        t[key(L)] = 7.5
        return t * x

    compare(fn_scalar, normal(4, 3))


# -- a composite: an MLP step --------------------------------------------------------------------------------
def test_mlp_composite():
    def fn(L, X, W1, b1, W2):
        h = (X @ W1 + b1).tanh()
        logits = h @ W2
        return logits.log_softmax(1)[L.tensor([0, 1, 2, 0]), L.tensor([1, 0, 2, 2])].mean().neg()

    compare(fn, normal(4, 5), normal(5, 6), normal(6), normal(6, 3))


# -- dtype promotion ---------------------------------------------------------------------------------------------
def _t(L, values, dtype):
    return L.tensor(values, dtype=getattr(L, dtype))


PROMOTION = [
    ("int64+float32", lambda L: _t(L, [1], "int64") + _t(L, [1.0], "float32")),
    ("int64*2.5", lambda L: _t(L, [1], "int64") * 2.5),
    ("2.5*int32", lambda L: 2.5 * _t(L, [1], "int32")),
    ("float32+float64", lambda L: _t(L, [1.0], "float32") + _t(L, [1.0], "float64")),
    ("bool+int64", lambda L: _t(L, [True], "bool") + _t(L, [1], "int64")),
    ("bool+2", lambda L: _t(L, [True], "bool") + 2),
    ("bool*1.5", lambda L: _t(L, [True], "bool") * 1.5),
    ("bool+bool", lambda L: _t(L, [True], "bool") + _t(L, [True], "bool")),
    ("bool*bool", lambda L: _t(L, [True], "bool") * _t(L, [True], "bool")),
    ("int64/int64", lambda L: _t(L, [1], "int64") / _t(L, [2], "int64")),
    ("int32/int32", lambda L: _t(L, [1], "int32") / _t(L, [2], "int32")),
    ("int32+int64", lambda L: _t(L, [1], "int32") + _t(L, [1], "int64")),
    ("int32+5", lambda L: _t(L, [1], "int32") + 5),
    ("int32-True", lambda L: _t(L, [1], "int32") * True),
    ("float32*2", lambda L: _t(L, [1.0], "float32") * 2),
    ("float64*2.5", lambda L: _t(L, [1.0], "float64") * 2.5),
    ("int64**2.0", lambda L: _t(L, [2], "int64") ** 2.0),
    ("2.0**int64", lambda L: 2.0 ** _t(L, [2], "int64")),
    ("int64**int64", lambda L: _t(L, [2], "int64") ** _t(L, [2], "int64")),
    ("float32[2]+float64[]", lambda L: _t(L, [1.0, 2.0], "float32") + _t(L, 1.0, "float64")),
    ("int32[2]+int64[]", lambda L: _t(L, [1, 2], "int32") + _t(L, 1, "int64")),
    ("int64[2]+float64[]", lambda L: _t(L, [1, 2], "int64") + _t(L, 1.5, "float64")),
    ("float64[]+float32[]", lambda L: _t(L, 1.0, "float64") + _t(L, 1.0, "float32")),
    ("where_int_float", lambda L: L.where(_t(L, [True], "bool"), _t(L, [1], "int64"), 2.5)),
    ("where_int32_int64", lambda L: L.where(_t(L, [True], "bool"), _t(L, [1], "int32"), _t(L, [1], "int64"))),
    ("maximum_int_float", lambda L: L.maximum(_t(L, [1], "int64"), _t(L, [2.0], "float32"))),
    ("cat_int_float", lambda L: L.cat([_t(L, [1], "int64"), _t(L, [2.0], "float32")])),
    ("stack_int32_int64", lambda L: L.stack([_t(L, [1], "int32"), _t(L, [2], "int64")])),
    ("sum_int32", lambda L: _t(L, [1, 2], "int32").sum()),
    ("sum_bool", lambda L: _t(L, [True, True], "bool").sum()),
    ("sum_dim_int32", lambda L: _t(L, [[1, 2]], "int32").sum(0)),
    ("max_int32", lambda L: _t(L, [1, 2], "int32").max()),
    ("neg_int32", lambda L: -_t(L, [1, 2], "int32")),
    ("abs_int64", lambda L: _t(L, [-1, 2], "int64").abs()),
    ("exp_int64", lambda L: _t(L, [1, 2], "int64").exp()),
    ("sqrt_int64", lambda L: _t(L, [1, 4], "int64").sqrt()),
    ("sigmoid_int64", lambda L: _t(L, [1, 2], "int64").sigmoid()),
    ("relu_int64", lambda L: _t(L, [-1, 2], "int64").relu()),
    ("clamp_int_float", lambda L: _t(L, [-1, 2], "int64").clamp(min=0.5)),
    ("matmul_int", lambda L: _t(L, [[1, 2]], "int64") @ _t(L, [[3], [4]], "int64")),
    ("tensor_float", lambda L: L.tensor(1.5)),
    ("tensor_int", lambda L: L.tensor([1, 2])),
    ("tensor_mixed", lambda L: L.tensor([1, 2.5])),
    ("tensor_np_float64", lambda L: L.tensor(np.array([1.0]))),
    ("tensor_np_int32", lambda L: L.tensor(np.array([1], dtype=np.int32))),
    ("full_int", lambda L: L.full((2,), 3)),
    ("full_float", lambda L: L.full((2,), 1.5)),
    ("full_bool", lambda L: L.full((2,), True)),
    ("arange_int", lambda L: L.arange(5)),
    ("arange_float", lambda L: L.arange(0, 1, 0.25)),
    ("zeros_like_int32", lambda L: L.zeros_like(_t(L, [1], "int32"))),
    ("comparison", lambda L: _t(L, [1.0], "float32") > 0),
    ("mask_times_float", lambda L: (_t(L, [1.0], "float32") > 0) * _t(L, [1.0], "float32")),
    ("argmax", lambda L: _t(L, [1.0, 3.0], "float32").argmax()),
]


@pytest.mark.parametrize("name,fn", PROMOTION, ids=[p[0] for p in PROMOTION])
def test_promotion_dtype(name, fn):
    try:
        t_out = fn(torch)
    except Exception as e:  # torch refuses it: minigrad must refuse it with the same type
        with pytest.raises(type(e)):
            fn(minigrad)
        return
    m_out = fn(minigrad)
    assert str(m_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(m_out.tolist(), dtype=float), np.asarray(t_out.tolist(), dtype=float),
                               rtol=1e-6)


# -- exception types ---------------------------------------------------------------------------------------------
def _second_backward(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    y.backward()


def _grad_unused(L):
    x, z = L.tensor([1.0], requires_grad=True), L.tensor([1.0], requires_grad=True)
    L.autograd.grad((x * 2).sum(), [x, z])


def _inplace_leaf(L):
    x = L.tensor([1.0], requires_grad=True)
    x.add_(1.0)


def _saved_modified(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1.0)
    y.sum().backward()


def _inplace_own_detached(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    y.mul_(y.detach())
    y.sum().backward()


def _bad_grad_assign(L):
    x = L.tensor([1.0, 2.0], requires_grad=True)
    x.grad = L.zeros(3)


ERRORS = [
    ("broadcast", lambda L: L.zeros(2, 3) + L.zeros(4)),
    ("broadcast_compare", lambda L: L.zeros(2, 3) < L.zeros(2, 4)),
    ("matmul_shapes", lambda L: L.zeros(2, 3) @ L.zeros(4, 5)),
    ("matmul_1d", lambda L: L.zeros(3) @ L.zeros(4)),
    ("matmul_batch", lambda L: L.zeros(2, 2, 3) @ L.zeros(3, 3, 5)),
    ("matmul_0d", lambda L: L.zeros(()) @ L.zeros(3)),
    ("matmul_dtype", lambda L: L.zeros(2, 3) @ L.zeros(3, 2, dtype=L.float64)),
    ("item_multi", lambda L: L.zeros(2, 3).item()),
    ("view_non_contiguous", lambda L: L.zeros(2, 3).transpose(0, 1).view(6)),
    ("reshape_invalid", lambda L: L.zeros(2, 3).reshape(4, 2)),
    ("reshape_two_minus1", lambda L: L.zeros(2, 3).reshape(-1, -1)),
    ("dim_sum", lambda L: L.zeros(2, 3).sum(2)),
    ("dim_softmax", lambda L: L.zeros(2, 3).softmax(-3)),
    ("dim_transpose", lambda L: L.zeros(2, 3).transpose(0, 2)),
    ("dim_unsqueeze", lambda L: L.zeros(2, 3).unsqueeze(3)),
    ("dim_max", lambda L: L.zeros(2, 3).max(2)),
    ("dim_cat", lambda L: L.cat([L.zeros(2), L.zeros(2)], 1)),
    ("backward_non_scalar", lambda L: (L.tensor([1.0, 2.0], requires_grad=True) * 2).backward()),
    ("backward_no_grad", lambda L: L.tensor(1.0).backward()),
    ("numpy_requires_grad", lambda L: L.tensor([1.0], requires_grad=True).numpy()),
    ("requires_grad_int", lambda L: L.tensor([1, 2]).requires_grad_()),
    ("inplace_leaf", _inplace_leaf),
    ("inplace_int_float", lambda L: L.tensor([1, 2]).add_(1.5)),
    ("inplace_shape", lambda L: L.zeros(3).add_(L.zeros(2, 3))),
    ("second_backward", _second_backward),
    ("saved_modified", _saved_modified),
    ("inplace_own_detached", _inplace_own_detached),
    ("grad_unused", _grad_unused),
    ("bool_multi", lambda L: bool(L.zeros(2))),
    ("float_index", lambda L: L.zeros(3)[L.tensor([0.0])]),
    ("index_out_of_range", lambda L: L.zeros(3)[5]),
    ("ragged", lambda L: L.tensor([[1.0, 2.0], [3.0]])),
    ("max_empty", lambda L: L.zeros(0).max()),
    ("max_dim_empty", lambda L: L.zeros(2, 0).max(1)),
    ("cat_sizes", lambda L: L.cat([L.zeros(2, 3), L.zeros(2, 4)])),
    ("cat_empty_list", lambda L: L.cat([])),
    ("stack_empty_list", lambda L: L.stack([])),
    ("stack_sizes", lambda L: L.stack([L.zeros(2), L.zeros(3)])),
    ("expand_bad", lambda L: L.zeros(3).expand(4)),
    ("permute_bad", lambda L: L.zeros(2, 3).permute(0, 0)),
    ("mean_int", lambda L: L.tensor([1, 2]).mean()),
    ("clamp_no_bounds", lambda L: L.zeros(2).clamp()),
    ("len_0d", lambda L: len(L.tensor(1.0))),
    ("iter_0d", lambda L: iter(L.tensor(1.0))),
    ("hook_no_grad", lambda L: L.zeros(2).register_hook(lambda g: g)),
    ("retain_grad_no_grad", lambda L: L.zeros(2).retain_grad()),
    ("requires_grad_false_non_leaf", lambda L: (L.tensor([1.0], requires_grad=True) * 2).requires_grad_(False)),
    ("grad_wrong_shape", _bad_grad_assign),
    ("backward_grad_shape", lambda L: (L.tensor([1.0, 2.0], requires_grad=True) * 2).backward(L.ones(3))),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_exception_types_agree(name, fn):
    with pytest.raises(Exception) as torch_info:
        fn(torch)
    with pytest.raises(Exception) as mini_info:
        fn(minigrad)
    assert type(mini_info.value) is type(torch_info.value), (
        f"torch raised {type(torch_info.value).__name__}: {torch_info.value}\n"
        f"minigrad raised {type(mini_info.value).__name__}: {mini_info.value}"
    )
