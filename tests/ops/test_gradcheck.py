"""gradcheck (and gradgradcheck) of every differentiable op, over random shapes.

Shapes come from hypothesis and include broadcasting, size-1 and zero-size
dimensions. Values are drawn away from the points where an op is not
differentiable (kinks of abs/relu/clamp/max, log/sqrt of non-positives).

``check`` does three things for every case:
1. ``gradcheck``: the analytical Jacobian (one backward per output element)
   agrees with central finite differences;
2. one ordinary backward of a random-weighted sum of the outputs, checking that
   every gradient has its input's shape and dtype (this is the only backward
   that runs when an output has zero elements, where the Jacobian is empty);
3. optionally ``gradgradcheck`` (second derivatives).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minigrad
from minigrad.autograd import Function, GradcheckError, gradcheck, gradgradcheck

SETTINGS = settings(max_examples=15, deadline=None, derandomize=True)
FEW = settings(max_examples=8, deadline=None, derandomize=True)

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
nonempty_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)
# for ops taking a ``dim``: 0-d inputs with a dim are tested on their own (test_zero_dim_with_dim)
shapes_1d = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3)
nonempty_shapes_1d = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)
seeds = st.integers(0, 2**32 - 1)


# -- helpers -------------------------------------------------------------------------
def leaf(array) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def normal(rng, shape):
    return rng.standard_normal(shape)


def positive(rng, shape, low=0.5, high=2.0):
    return rng.uniform(low, high, shape)


def away_from_grid(rng, shape, step=0.2):
    """Values at least ~0.07 from every multiple of ``step`` (so from 0 and the clamp bounds)."""
    return (rng.integers(-10, 10, shape) + 0.5) * step + rng.uniform(-0.03, 0.03, shape)


def distinct(rng, shape):
    """All values distinct and at least ~0.08 apart: no ties for max/min."""
    n = int(np.prod(shape, dtype=np.int64))
    return ((rng.permutation(n) - n / 2) * 0.1 + rng.uniform(-0.01, 0.01, n)).reshape(shape)


def broadcast_to_shape(draw, shape):
    """A shape that broadcasts to ``shape`` (a suffix of it, some sides set to 1)."""
    k = draw(st.integers(0, len(shape)))
    suffix = shape[len(shape) - k:]
    return tuple(1 if draw(st.booleans()) else n for n in suffix)


def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


def check(fn, *inputs, gradgrad=False, seed=0):
    """gradcheck + a shape-checking backward (+ gradgradcheck)."""
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)
    diff = [x for x in inputs if isinstance(x, minigrad.Tensor) and x.requires_grad]
    outs = [o for o in _outputs(fn(*inputs)) if o.requires_grad]
    assert outs, "the op's output does not require grad"
    rng = np.random.default_rng(seed)
    loss = None
    for o in outs:
        w = minigrad.tensor(rng.standard_normal(o.shape))
        term = (o * w).sum()
        loss = term if loss is None else loss + term
    grads = minigrad.autograd.grad(loss, diff, allow_unused=True)
    for x, g in zip(diff, grads):
        if g is not None:
            assert g.shape == x.shape
            assert g.dtype == x.dtype
    if gradgrad:
        assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


# -- gradcheck itself must be able to fail ---------------------------------------------
class _WrongSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return minigrad.tensor(x.detach().numpy() ** 2)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x * 3  # wrong: should be 2x


def test_gradcheck_detects_a_wrong_backward():
    x = leaf([0.5, -1.5, 2.0])
    with pytest.raises(GradcheckError):
        gradcheck(_WrongSquare.apply, (x,))
    assert gradcheck(_WrongSquare.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_detects_a_wrong_double_backward():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return minigrad.tensor(x.detach().numpy() ** 3)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            # right first derivative (3x^2) written so that its own derivative is wrong:
            return grad * 3 * x.detach() * x  # d/dx = 3x, not 6x

    x = leaf([0.5, -1.5, 2.0])
    assert gradcheck(Cube.apply, (x,))
    with pytest.raises(GradcheckError):
        gradgradcheck(Cube.apply, (x,))


# -- binary arithmetic ----------------------------------------------------------------
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b,
}


@pytest.mark.parametrize("op", list(BINARY))
@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3),
       seed=seeds)
def test_binary_tensor_tensor(op, shapes, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    a = leaf(positive(rng, sa))  # positive base for pow (log a in d/db)
    b = leaf(positive(rng, sb) * rng.choice([-1, 1], sb) if op != "pow" else rng.uniform(-2, 2, sb))
    check(BINARY[op], a, b, gradgrad=True, seed=seed)


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("scalar", [2.5, -1.5, 3])
@SETTINGS
@given(shape=shapes, seed=seeds)
def test_binary_tensor_scalar(op, scalar, shape, seed):
    rng = np.random.default_rng(seed)
    a = leaf(positive(rng, shape))
    check(lambda x: BINARY[op](x, scalar), a, gradgrad=True, seed=seed)


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("scalar", [2.5, 1.5, 3])
@SETTINGS
@given(shape=shapes, seed=seeds)
def test_binary_scalar_tensor(op, scalar, shape, seed):
    rng = np.random.default_rng(seed)
    a = leaf(positive(rng, shape))
    check(lambda x: BINARY[op](scalar, x), a, gradgrad=True, seed=seed)


# -- unary elementwise -------------------------------------------------------------------
UNARY = {
    "neg": (lambda x: -x, normal),
    "neg_method": (lambda x: x.neg(), normal),
    "exp": (lambda x: x.exp(), normal),
    "log": (lambda x: x.log(), positive),
    "sqrt": (lambda x: x.sqrt(), positive),
    "abs": (lambda x: x.abs(), away_from_grid),
    "tanh": (lambda x: x.tanh(), normal),
    "sigmoid": (lambda x: x.sigmoid(), normal),
    "relu": (lambda x: x.relu(), away_from_grid),
    "clamp_min": (lambda x: x.clamp(min=-0.4), away_from_grid),
    "clamp_max": (lambda x: x.clamp(max=0.6), away_from_grid),
    "clamp_both": (lambda x: x.clamp(-0.4, 0.6), away_from_grid),
    "clamp_function": (lambda x: minigrad.clamp(x, min=-0.4, max=0.6), away_from_grid),
    "exp_function": (lambda x: minigrad.exp(x), normal),
    "clone": (lambda x: x.clone(), normal),
    "sigmoid_large": (lambda x: (x * 20).sigmoid(), normal),
}


@pytest.mark.parametrize("name", list(UNARY))
@SETTINGS
@given(shape=shapes, seed=seeds)
def test_unary(name, shape, seed):
    fn, values = UNARY[name]
    rng = np.random.default_rng(seed)
    check(fn, leaf(values(rng, shape)), gradgrad=True, seed=seed)


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3),
       seed=seeds)
def test_maximum(shapes, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    # a on odd multiples of 0.1, b on even ones: never closer than ~0.08, so no ties.
    a = leaf((2 * rng.integers(-5, 5, sa) + 1) * 0.1 + rng.uniform(-0.01, 0.01, sa))
    b = leaf(2 * rng.integers(-5, 5, sb) * 0.1 + rng.uniform(-0.01, 0.01, sb))
    check(lambda x, y: minigrad.maximum(x, y), a, b, gradgrad=True, seed=seed)
    check(lambda x, y: x.maximum(y), a, b, seed=seed)


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=3),
       seed=seeds)
def test_where(shapes, seed):
    rng = np.random.default_rng(seed)
    sc, sa, sb = shapes.input_shapes
    cond = minigrad.tensor(rng.random(sc) > 0.5)
    a, b = leaf(normal(rng, sa)), leaf(normal(rng, sb))
    check(lambda x, y: minigrad.where(cond, x, y), a, b, gradgrad=True, seed=seed)
    check(lambda x: minigrad.where(cond, x, 2.5), a, seed=seed)
    check(lambda y: minigrad.where(cond, -1.0, y), b, seed=seed)


# -- reductions --------------------------------------------------------------------------
@st.composite
def shape_and_dim(draw, nonempty_dim=False, allow_tuple=True):
    shape = draw(nonempty_shapes_1d if nonempty_dim else shapes_1d)
    ndim = len(shape)
    kind = draw(st.sampled_from(["int", "tuple"] if allow_tuple else ["int"]))
    if kind == "int":
        d = draw(st.integers(-ndim, ndim - 1))
        dim = d
    else:
        axes = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
        dim = tuple(a - ndim if draw(st.booleans()) else a for a in axes)  # some negative
    return shape, dim, draw(st.booleans())


@pytest.mark.parametrize("op", ["sum", "mean"])
@SETTINGS
@given(shape=shapes, seed=seeds)
def test_reduce_all(op, shape, seed):
    rng = np.random.default_rng(seed)
    x = leaf(normal(rng, shape))
    check(lambda t: getattr(t, op)(), x, gradgrad=True, seed=seed)
    check(lambda t: getattr(minigrad, op)(t), x, seed=seed)


@pytest.mark.parametrize("op", ["sum", "mean"])
@SETTINGS
@given(sdk=shape_and_dim(), seed=seeds)
def test_reduce_dim(op, sdk, seed):
    shape, dim, keepdim = sdk
    rng = np.random.default_rng(seed)
    x = leaf(normal(rng, shape))
    check(lambda t: getattr(t, op)(dim, keepdim=keepdim), x, gradgrad=True, seed=seed)
    check(lambda t: getattr(t, op)(dim=dim, keepdim=keepdim), x, seed=seed)


@pytest.mark.parametrize("op", ["max", "min"])
@SETTINGS
@given(shape=nonempty_shapes, seed=seeds)
def test_max_min_all(op, shape, seed):
    rng = np.random.default_rng(seed)
    x = leaf(distinct(rng, shape))
    check(lambda t: getattr(t, op)(), x, gradgrad=True, seed=seed)


@pytest.mark.parametrize("op", ["max", "min"])
@SETTINGS
@given(sdk=shape_and_dim(nonempty_dim=True, allow_tuple=False), seed=seeds)
def test_max_min_dim_values(op, sdk, seed):
    shape, dim, keepdim = sdk
    rng = np.random.default_rng(seed)
    x = leaf(distinct(rng, shape))
    check(lambda t: getattr(t, op)(dim, keepdim=keepdim).values, x, gradgrad=True, seed=seed)
    check(lambda t: getattr(t, op)(dim, keepdim)[0], x, seed=seed)


@pytest.mark.parametrize("dim", [0, -1, (0,), (-1,)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_zero_dim_with_dim(dim, keepdim):
    """A 0-d tensor accepts dim 0 / -1 (PyTorch treats it as one element along one dim)."""
    x = leaf(1.25)
    check(lambda t: t.sum(dim, keepdim=keepdim), x, gradgrad=True)
    check(lambda t: t.mean(dim, keepdim=keepdim), x, gradgrad=True)
    if not isinstance(dim, tuple):
        check(lambda t: t.max(dim, keepdim=keepdim).values, x)
        check(lambda t: t.min(dim, keepdim=keepdim).values, x)
        check(lambda t: t.softmax(dim), x)
        check(lambda t: t.log_softmax(dim), x)
        check(lambda t: t.unsqueeze(dim), x)


def test_max_min_zero_size_non_reduced_dim():
    x = leaf(np.zeros((0, 3)))
    check(lambda t: t.max(1).values, x)
    check(lambda t: t.min(-1, keepdim=True).values, x)


# -- shape operations --------------------------------------------------------------------
@st.composite
def reshape_case(draw):
    shape = draw(shapes)
    numel = int(np.prod(shape, dtype=np.int64))
    options = [(numel,), tuple(reversed(shape)), shape + (1,), (1,) + shape]
    if numel > 0:
        options += [(-1,), (1, -1), (-1, 1)]
        divisors = [d for d in range(1, numel + 1) if numel % d == 0]
        d = draw(st.sampled_from(divisors))
        options += [(d, numel // d), (d, -1)]
    if numel == 1:
        options.append(())
    return shape, draw(st.sampled_from(options))


@SETTINGS
@given(case=reshape_case(), seed=seeds)
def test_reshape_view(case, seed):
    shape, target = case
    rng = np.random.default_rng(seed)
    x = leaf(normal(rng, shape))
    check(lambda t: t.reshape(target), x, gradgrad=True, seed=seed)
    if target:
        check(lambda t: t.reshape(*target), x, seed=seed)
    check(lambda t: t.view(target), x, seed=seed)
    check(lambda t: t.view(*target) if target else t.view(target), x, seed=seed)


@SETTINGS
@given(shape=shapes, data=st.data(), seed=seeds)
def test_flatten(shape, data, seed):
    rng = np.random.default_rng(seed)
    x = leaf(normal(rng, shape))
    check(lambda t: t.flatten(), x, gradgrad=True, seed=seed)
    check(lambda t: minigrad.flatten(t), x, seed=seed)
    if len(shape) >= 1:
        start = data.draw(st.integers(-len(shape), len(shape) - 1))
        end = data.draw(st.integers(-len(shape), len(shape) - 1))
        if start % len(shape) <= end % len(shape):
            check(lambda t: t.flatten(start, end), x, seed=seed)


@SETTINGS
@given(shape=shapes, data=st.data(), seed=seeds)
def test_transpose_permute_T(shape, data, seed):
    rng = np.random.default_rng(seed)
    x = leaf(normal(rng, shape))
    ndim = len(shape)
    if ndim >= 1:
        d0 = data.draw(st.integers(-ndim, ndim - 1))
        d1 = data.draw(st.integers(-ndim, ndim - 1))
        check(lambda t: t.transpose(d0, d1), x, gradgrad=True, seed=seed)
        # a non-contiguous result flowing into another op
        check(lambda t: t.transpose(d0, d1) * 2.0, x, seed=seed)
    perm = data.draw(st.permutations(range(ndim)))
    check(lambda t: t.permute(*perm), x, gradgrad=True, seed=seed)
    check(lambda t: t.permute(tuple(perm)), x, seed=seed)
    if ndim == 2:
        check(lambda t: t.T, x, seed=seed)
        check(lambda t: t.T @ t, x, seed=seed)


@SETTINGS
@given(shape=shapes, data=st.data(), seed=seeds)
def test_squeeze_unsqueeze(shape, data, seed):
    rng = np.random.default_rng(seed)
    x = leaf(normal(rng, shape))
    ndim = len(shape)
    check(lambda t: t.squeeze(), x, gradgrad=True, seed=seed)
    if ndim:
        d = data.draw(st.integers(-ndim, ndim - 1))
        check(lambda t: t.squeeze(d), x, seed=seed)  # a no-op when that side is not 1
        dims = tuple(data.draw(st.lists(st.integers(0, ndim - 1), min_size=1, unique=True)))
        check(lambda t: t.squeeze(dims), x, seed=seed)
    u = data.draw(st.integers(-ndim - 1, ndim))
    check(lambda t: t.unsqueeze(u), x, gradgrad=True, seed=seed)
    check(lambda t: minigrad.unsqueeze(t, u).squeeze(u), x, seed=seed)


@SETTINGS
@given(shape=shapes, data=st.data(), seed=seeds)
def test_expand(shape, data, seed):
    rng = np.random.default_rng(seed)
    # make some sides 1 so that they can be expanded
    small = tuple(1 if data.draw(st.booleans()) else n for n in shape)
    lead = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    target = lead + tuple(
        data.draw(st.sampled_from([n, -1])) if s == n else n for s, n in zip(small, shape)
    )
    x = leaf(normal(rng, small))
    check(lambda t: t.expand(*target), x, gradgrad=True, seed=seed)
    full = lead + shape
    weight = minigrad.tensor(rng.standard_normal(full))
    check(lambda t: t.expand(full) * weight, x, seed=seed)
    other = minigrad.zeros(*full, dtype=minigrad.float64)
    check(lambda t: t.expand_as(other), x, seed=seed)


# -- matmul --------------------------------------------------------------------------------
MATMUL_SHAPES = [
    ((3,), (3,)),                       # dot
    ((2, 3), (3,)),                     # mv
    ((3,), (3, 4)),                     # vector @ matrix
    ((2, 3), (3, 4)),                   # mm
    ((1, 1), (1, 1)),
    ((2, 0), (0, 3)),                   # empty inner dimension
    ((0, 3), (3, 2)),
    ((2, 2, 3), (2, 3, 4)),             # batched
    ((2, 1, 2, 3), (3, 3, 2)),          # broadcast batch dims
    ((4, 2, 3), (3, 2)),                # batch @ matrix
    ((2, 3), (4, 3, 2)),                # matrix @ batch
    ((3,), (2, 3, 4)),                  # vector @ batch
    ((2, 2, 3), (3,)),                  # batch @ vector
    ((1, 2, 3), (5, 3, 1)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul(sa, sb):
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    a, b = leaf(normal(rng, sa)), leaf(normal(rng, sb))
    check(lambda x, y: x @ y, a, b, gradgrad=True)
    check(lambda x, y: minigrad.matmul(x, y), a, b)
    check(lambda x, y: x.matmul(y), a, b)


@SETTINGS
@given(n=st.integers(1, 3), k=st.integers(0, 3), m=st.integers(1, 3),
       batch=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, min_side=1, max_side=3),
       seed=seeds)
def test_matmul_random_batched(n, k, m, batch, seed):
    rng = np.random.default_rng(seed)
    ba, bb = batch.input_shapes
    a, b = leaf(normal(rng, ba + (n, k))), leaf(normal(rng, bb + (k, m)))
    check(lambda x, y: x @ y, a, b, gradgrad=True, seed=seed)


# -- softmax -------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@SETTINGS
@given(sdk=shape_and_dim(allow_tuple=False), seed=seeds)
def test_softmax(op, sdk, seed):
    shape, dim, _ = sdk
    rng = np.random.default_rng(seed)
    x = leaf(normal(rng, shape) * 3)
    check(lambda t: getattr(t, op)(dim), x, gradgrad=True, seed=seed)
    check(lambda t: getattr(minigrad, op)(t, dim=dim), x, seed=seed)


def test_softmax_large_inputs_stay_finite_and_correct():
    x = leaf([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0]])
    check(lambda t: t.softmax(1), x, gradgrad=True)
    check(lambda t: t.log_softmax(-1), x, gradgrad=True)


# -- cat / stack ---------------------------------------------------------------------------
@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), data=st.data(), seed=seeds)
def test_cat(shape, data, seed):
    rng = np.random.default_rng(seed)
    ndim = len(shape)
    d = data.draw(st.integers(-ndim, ndim - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    parts = []
    for s in sizes:
        sh = list(shape)
        sh[d] = s
        parts.append(leaf(normal(rng, tuple(sh))))
    check(lambda *ts: minigrad.cat(list(ts), dim=d), *parts, gradgrad=True, seed=seed)
    check(lambda *ts: minigrad.cat(ts, d), *parts, seed=seed)


@SETTINGS
@given(shape=shapes, data=st.data(), seed=seeds)
def test_stack(shape, data, seed):
    rng = np.random.default_rng(seed)
    ndim = len(shape)
    d = data.draw(st.integers(-ndim - 1, ndim))
    n = data.draw(st.integers(1, 3))
    parts = [leaf(normal(rng, shape)) for _ in range(n)]
    check(lambda *ts: minigrad.stack(list(ts), dim=d), *parts, gradgrad=True, seed=seed)


def test_cat_with_input_not_requiring_grad():
    rng = np.random.default_rng(0)
    a = leaf(normal(rng, (2, 3)))
    const = minigrad.tensor(normal(rng, (1, 3)))
    check(lambda t: minigrad.cat([const, t, const], 0), a, gradgrad=True)


# -- indexing ------------------------------------------------------------------------------
MASK = np.random.default_rng(7).random((4, 5)) > 0.5

INDEX_KEYS = {
    "int": 1,
    "negative_int": -1,
    "int_int": (2, -3),
    "int_int_int": (0, 1, 2),
    "slice": slice(1, 3),
    "slice_step": slice(0, None, 2),
    "slice_step_3": (slice(None), slice(None, None, 3)),
    "negative_slice": slice(-3, -1),
    "slice_past_end": slice(2, 10),
    "empty_slice": slice(3, 1),
    "none": None,
    "none_middle": (slice(None), None, 1),
    "ellipsis": (Ellipsis, 1),
    "ellipsis_none": (None, Ellipsis, slice(0, 2)),
    "int_list_repeats": [0, 0, 2, 0],
    "int_list_negative": [-1, 1, -1],
    "int_tensor_repeats": "tensor:[3, 3, 1]",
    "two_arrays": ([0, 0, 3], [1, 1, 2]),
    "array_and_slice": (slice(1, None), [2, 2, 0]),
    "array_2d": "tensor2d",
    "bool_mask_full": "mask",
    "bool_mask_rows": "rowmask",
    "mask_then_slice": "rowmask_slice",
    "empty_int_list": "empty_list",
}


def _key(name):
    key = INDEX_KEYS[name]
    if key == "tensor:[3, 3, 1]":
        return minigrad.tensor([3, 3, 1])
    if key == "tensor2d":
        return minigrad.tensor([[0, 1], [1, 0], [3, 3]])
    if key == "mask":
        return minigrad.tensor(MASK[:, :5])
    if key == "rowmask":
        return minigrad.tensor(np.array([True, False, True, True]))
    if key == "rowmask_slice":
        return (minigrad.tensor(np.array([False, True, True, False])), slice(1, 4))
    if key == "empty_list":
        return (slice(None), [], 1)
    return key


@pytest.mark.parametrize("name", list(INDEX_KEYS))
def test_indexing(name):
    rng = np.random.default_rng(3)
    shape = (4, 5, 3) if name not in ("bool_mask_full",) else (4, 5)
    x = leaf(normal(rng, shape))
    key = _key(name)
    check(lambda t: t[key], x, gradgrad=True)
    # the result flowing into another op
    check(lambda t: t[key] * 3.0 + 1.0, x)


@pytest.mark.parametrize("key", [slice(None), (Ellipsis, 1), (slice(None), slice(1, 3)), (Ellipsis, None), [0, 0]])
def test_indexing_zero_size(key):
    x = leaf(np.zeros((2, 0, 3))) if not isinstance(key, list) else leaf(np.zeros((2, 0)))
    check(lambda t: t[key], x)


def test_select():
    rng = np.random.default_rng(1)
    x = leaf(normal(rng, (3, 4)))
    check(lambda t: t.select(1, -1), x, gradgrad=True)
    check(lambda t: t.select(0, 2), x)


# -- dtype conversion, clone -------------------------------------------------------------
def test_to_same_dtype_and_roundtrip():
    rng = np.random.default_rng(2)
    x = leaf(normal(rng, (2, 3)))
    check(lambda t: t.to(minigrad.float64) * 2.0, x)
    check(lambda t: t.double(), x)
    # float64 -> float32 is not gradcheckable (precision); check the gradient dtype and value instead
    y = x.float()
    assert y.dtype == minigrad.float32
    (y * 3.0).sum().backward()
    assert x.grad.dtype == minigrad.float64
    np.testing.assert_allclose(x.grad.numpy(), 3.0)


# -- in-place operations on non-leaf tensors ------------------------------------------------
@st.composite
def inplace_case(draw):
    shape = draw(shapes)
    return shape, broadcast_to_shape(draw, shape)


INPLACE = {
    "add_": lambda t, y: t.add_(y),
    "add_alpha": lambda t, y: t.add_(y, alpha=-2.5),
    "sub_": lambda t, y: t.sub_(y),
    "sub_alpha": lambda t, y: t.sub_(y, alpha=0.5),
    "mul_": lambda t, y: t.mul_(y),
    "div_": lambda t, y: t.div_(y),
    "iadd": lambda t, y: t.__iadd__(y),
    "imul": lambda t, y: t.__imul__(y),
    "copy_": lambda t, y: t.copy_(y),
}


@pytest.mark.parametrize("op", list(INPLACE))
@SETTINGS
@given(case=inplace_case(), seed=seeds)
def test_inplace_tensor_operand(op, case, seed):
    shape, yshape = case
    rng = np.random.default_rng(seed)
    x = leaf(normal(rng, shape))
    y = leaf(positive(rng, yshape) * rng.choice([-1, 1], yshape))

    def fn(a, b):
        t = a * 1.5  # a non-leaf whose node does not save its output
        out = INPLACE[op](t, b)
        assert out is t
        return t

    check(fn, x, y, gradgrad=True, seed=seed)

    def fn_then_more(a, b):
        t = a.clone()
        INPLACE[op](t, b)
        return (t * a).tanh()  # uses the modified t and the original a

    check(fn_then_more, x, y, seed=seed)


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
@SETTINGS
@given(shape=shapes, seed=seeds)
def test_inplace_scalar_operand(op, shape, seed):
    rng = np.random.default_rng(seed)
    x = leaf(normal(rng, shape))

    def fn(a):
        t = a + 0.0
        getattr(t, op)(-2.5)
        return t

    check(fn, x, gradgrad=True, seed=seed)


@pytest.mark.parametrize("op", ["zero_", "fill_"])
@SETTINGS
@given(shape=shapes, seed=seeds)
def test_inplace_zero_fill(op, shape, seed):
    rng = np.random.default_rng(seed)
    x, y = leaf(normal(rng, shape)), leaf(normal(rng, shape))

    def fn(a, b):
        t = a * b
        t.zero_() if op == "zero_" else t.fill_(1.25)
        return t + a  # d/da = 1, d/db = 0

    check(fn, x, y, seed=seed)


SETITEM_KEYS = [
    1, -1, slice(0, 2), slice(None, None, 2), (Ellipsis, 0), (slice(None), [0, 2]),
    [0, 2], "mask", (None, 1),
]


@pytest.mark.parametrize("key", SETITEM_KEYS, ids=[str(k) for k in SETITEM_KEYS])
@pytest.mark.parametrize("value_kind", ["tensor", "broadcast_tensor", "scalar"])
def test_setitem(key, value_kind):
    rng = np.random.default_rng(5)
    x = leaf(normal(rng, (4, 3)))
    if key == "mask":
        key = minigrad.tensor(np.array([True, False, True, True]))
    target_shape = np.zeros((4, 3))[key._data if isinstance(key, minigrad.Tensor) else key].shape
    if value_kind == "tensor":
        v = leaf(normal(rng, target_shape))
    elif value_kind == "broadcast_tensor":
        v = leaf(normal(rng, target_shape[-1:] if target_shape else ()))
    else:
        v = None

    def fn(a, *maybe_v):
        t = a * 2.0
        t[key] = maybe_v[0] if maybe_v else 7.5
        return t * a  # the original a, and the written result

    inputs = (x, v) if v is not None else (x,)
    check(fn, *inputs, gradgrad=True)


def test_setitem_rows_with_list():
    # t[[0, 2]] = v: the overwritten rows send their gradient to v, nothing to a's rows 0 and 2
    x = leaf(np.arange(6.0).reshape(3, 2) + 1)
    v = leaf([10.0, 20.0])

    def fn(a, b):
        t = a.clone()
        t[[0, 2]] = b
        return t

    check(fn, x, v, gradgrad=True)


# -- rounding and remainders: flat steps (derivative 0), frac and the remainders' slopes ----------------
@pytest.mark.parametrize("op", ["remainder", "fmod", "frac", "floor", "round"])
@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=3),
       seed=seeds)
def test_rounding_and_remainders(op, shapes, seed):
    """Away from the jumps (a / b near a whole number, x near a multiple of 0.5) the finite differences
    see the slopes: 1 and -floor(a / b) (remainder), -trunc(a / b) (fmod), 1 (frac), 0 (floor, round)."""
    rng = np.random.default_rng(seed)
    (shape_a, shape_b), _ = shapes
    b = positive(rng, shape_b) * rng.choice([-1.0, 1.0], shape_b)
    quotient = rng.uniform(-4, 4, np.broadcast_shapes(shape_a, shape_b)).round() + rng.uniform(0.2, 0.8)
    a = quotient * b  # a / b is at least 0.2 from a whole number
    if op in ("remainder", "fmod"):
        check(lambda x, y: getattr(x, op)(y), leaf(a), leaf(np.broadcast_to(b, quotient.shape)), gradgrad=True)
    else:
        check(lambda x: getattr(x, op)(), leaf(quotient), gradgrad=True)
