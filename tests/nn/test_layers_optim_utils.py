"""The nn/optim/utils additions of issue 10, checked against finite differences and against PyTorch.

Every new function of ``nn.functional`` is gradchecked (and gradgradchecked) in
float64, and compared with ``torch.nn.functional`` for values, gradients and
the exception type of each error. Modules are compared for repr, parameter
and buffer names, and behaviour; optimizers and schedulers step next to
PyTorch's with the same parameters and gradients. Tests that need torch skip
when it is not installed.

Tolerances: float64 results agree to ``_rtol(float64, n)`` and float32 ones to
``_rtol(float32, n)``, where ``n`` is the length of the longest sum in the
computation (rounding error grows with it).
"""
from __future__ import annotations

import io
import math
import pickle
import warnings

import numpy as np
import pytest

import minigrad
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # the torch cross-checks skip; gradchecks still run
    class _Absent:
        """Stands for torch.nn.functional in the case tables; the tests that call it are skipped."""

        def __getattr__(self, name):
            return None

    torch, TF = None, _Absent()

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (the [torch] extra)")


def _rtol(dtype, n: int = 1) -> float:
    """Relative tolerance for a result built from sums of up to ``n`` terms, a few ulps each."""
    eps = np.finfo(np.float64 if dtype in (np.float64, minigrad.float64) else np.float32).eps
    return 16 * eps * max(1, n)


def _arr(shape, seed=0, low=None, high=None, avoid=None):
    """Random float64 values; ``avoid`` keeps them at least 0.05 away from kinks such as 0."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(low, high, shape) if low is not None else rng.standard_normal(shape)
    for k in avoid or ():
        close = np.abs(x - k) < 0.05
        x[close] += 0.1
    return x


def _mg(a, requires_grad=True, dtype=minigrad.float64):
    return minigrad.tensor(a, dtype=dtype, requires_grad=requires_grad)


def _compare_with_torch(fn_m, fn_t, arrays, *, grad_of=None, dtype=np.float64, n=1, seed=1):
    """Run both on the same inputs: equal values, and equal gradients for a random upstream gradient."""
    grad_of = range(len(arrays)) if grad_of is None else grad_of
    m_dtype = minigrad.float64 if dtype == np.float64 else minigrad.float32
    t_dtype = torch.float64 if dtype == np.float64 else torch.float32
    ms = [minigrad.tensor(a.astype(dtype), requires_grad=i in grad_of) if a.dtype.kind == "f"
          else minigrad.tensor(a) for i, a in enumerate(arrays)]
    ts = [torch.tensor(a.astype(dtype), requires_grad=i in grad_of) if a.dtype.kind == "f"
          else torch.tensor(a) for i, a in enumerate(arrays)]
    out_m, out_t = fn_m(*ms), fn_t(*ts)
    assert out_m.dtype == m_dtype and out_t.dtype == t_dtype
    rtol = _rtol(dtype, n)
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), rtol=rtol, atol=rtol)
    g = np.random.default_rng(seed).standard_normal(tuple(out_t.shape)).astype(dtype)
    out_m.backward(minigrad.tensor(g))
    out_t.backward(torch.tensor(g))
    for i in grad_of:
        np.testing.assert_allclose(ms[i].grad.numpy(), ts[i].grad.numpy(), rtol=rtol, atol=rtol,
                                   err_msg=f"gradient of input {i}")


def _check(fn_m, arrays, grad_of=None, second_order=True):
    """gradcheck (and gradgradcheck) in float64 with respect to the float inputs in ``grad_of``."""
    grad_of = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"] if grad_of is None else grad_of
    inputs = tuple(_mg(a, requires_grad=i in grad_of) if a.dtype.kind == "f" else minigrad.tensor(a)
                   for i, a in enumerate(arrays))
    assert gradcheck(fn_m, inputs)
    if second_order:
        assert gradgradcheck(fn_m, inputs)


# =============================================================================
# The functions: (name, minigrad fn, torch fn, input arrays, inputs to differentiate, longest sum)
# =============================================================================

def _cases():
    x = _arr((3, 4), avoid=(0,))
    img = _arr((1, 2, 5, 6))  # small: gradgradcheck's cost grows with the square of the element count
    probs = _arr((3, 4), low=0.05, high=0.95)
    targets01 = _arr((3, 4), seed=2, low=0, high=1)
    labels = np.array([2, 0, 3])
    labels_ignored = np.array([2, -100, 3])
    class_w = _arr((4,), seed=3, low=0.5, high=2)
    k_dim_labels = np.array([[0, 2, 1, 1, 0], [2, 2, 0, 1, 1]])
    d = _arr((3, 4), seed=4)
    y = d + _arr((3, 4), seed=5, avoid=(0, 0.5, -0.5, 0.8, -0.8))  # differences away from 0, ±beta, ±delta
    cases = [
        ("gelu", F.gelu, lambda t: TF.gelu(t), [x], 1),
        ("gelu_tanh", lambda t: F.gelu(t, approximate="tanh"), lambda t: TF.gelu(t, approximate="tanh"), [x], 1),
        ("silu", F.silu, TF.silu, [x], 1),
        ("leaky_relu", lambda t: F.leaky_relu(t, 0.2), lambda t: TF.leaky_relu(t, 0.2), [x], 1),
        ("elu", lambda t: F.elu(t, 0.7), lambda t: TF.elu(t, 0.7), [x], 1),
        ("softplus", lambda t: F.softplus(t, 2.0, 1.5), lambda t: TF.softplus(t, 2.0, 1.5), [x * 2], 1),
        ("l1_loss", F.l1_loss, TF.l1_loss, [d, y], 12),
        ("l1_loss_sum", lambda a, b: F.l1_loss(a, b, reduction="sum"),
         lambda a, b: TF.l1_loss(a, b, reduction="sum"), [d, y], 12),
        ("smooth_l1_loss", lambda a, b: F.smooth_l1_loss(a, b, beta=0.5),
         lambda a, b: TF.smooth_l1_loss(a, b, beta=0.5), [d, y], 12),
        ("smooth_l1_loss_beta0", lambda a, b: F.smooth_l1_loss(a, b, reduction="none", beta=0.0),
         lambda a, b: TF.smooth_l1_loss(a, b, reduction="none", beta=0.0), [d, y], 1),
        ("huber_loss", lambda a, b: F.huber_loss(a, b, delta=0.8),
         lambda a, b: TF.huber_loss(a, b, delta=0.8), [d, y], 12),
        ("mse_loss_none", lambda a, b: F.mse_loss(a, b, reduction="none"),
         lambda a, b: TF.mse_loss(a, b, reduction="none"), [d, y], 1),
        ("nll_loss", lambda a, t: F.nll_loss(a, t), lambda a, t: TF.nll_loss(a, t), [x, labels], 3),
        ("nll_loss_weight_ignore", lambda a, t, w: F.nll_loss(a, t, weight=w, ignore_index=-100),
         lambda a, t, w: TF.nll_loss(a, t, weight=w, ignore_index=-100), [x, labels_ignored, class_w], 3),
        ("nll_loss_ignore_class", lambda a, t: F.nll_loss(a, t, ignore_index=0, reduction="none"),
         lambda a, t: TF.nll_loss(a, t, ignore_index=0, reduction="none"), [x, labels], 1),
        ("nll_loss_k_dim", lambda a, t: F.nll_loss(a, t, reduction="sum"),
         lambda a, t: TF.nll_loss(a, t, reduction="sum"), [_arr((2, 3, 5)), k_dim_labels], 10),
        ("cross_entropy_weight", lambda a, t, w: F.cross_entropy(a, t, weight=w),
         lambda a, t, w: TF.cross_entropy(a, t, weight=w), [x, labels, class_w], 4),
        ("cross_entropy_ignore", lambda a, t: F.cross_entropy(a, t), lambda a, t: TF.cross_entropy(a, t),
         [x, labels_ignored], 4),
        ("cross_entropy_ignore_class", lambda a, t: F.cross_entropy(a, t, ignore_index=0, reduction="sum"),
         lambda a, t: TF.cross_entropy(a, t, ignore_index=0, reduction="sum"), [x, labels], 12),
        ("cross_entropy_k_dim", F.cross_entropy, TF.cross_entropy, [_arr((2, 3, 5)), k_dim_labels], 10),
        ("cross_entropy_smoothing", lambda a, t: F.cross_entropy(a, t, label_smoothing=0.2),
         lambda a, t: TF.cross_entropy(a, t, label_smoothing=0.2), [x, labels_ignored], 12),
        ("cross_entropy_smoothing_weight_k_dim",
         lambda a, t, w: F.cross_entropy(a, t, weight=w, label_smoothing=0.3, ignore_index=1),
         lambda a, t, w: TF.cross_entropy(a, t, weight=w, label_smoothing=0.3, ignore_index=1),
         [_arr((2, 3, 5)), k_dim_labels, class_w[:3].copy()], 30),
        ("cross_entropy_smoothing_none", lambda a, t: F.cross_entropy(a, t, label_smoothing=0.1, reduction="none"),
         lambda a, t: TF.cross_entropy(a, t, label_smoothing=0.1, reduction="none"), [x, labels_ignored], 4),
        ("cross_entropy_probs_smoothing", lambda a, p: F.cross_entropy(a, p, label_smoothing=0.1),
         lambda a, p: TF.cross_entropy(a, p, label_smoothing=0.1), [x, probs / probs.sum(1, keepdims=True)], 12),
        ("binary_cross_entropy", F.binary_cross_entropy, TF.binary_cross_entropy, [probs, targets01], 12),
        ("binary_cross_entropy_weight", lambda a, t, w: F.binary_cross_entropy(a, t, weight=w, reduction="sum"),
         lambda a, t, w: TF.binary_cross_entropy(a, t, weight=w, reduction="sum"), [probs, targets01, class_w], 12),
        ("bce_with_logits", F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits,
         [x * 3, targets01], 12),
        ("bce_with_logits_weights",
         lambda a, t, w, pw: F.binary_cross_entropy_with_logits(a, t, weight=w, pos_weight=pw, reduction="none"),
         lambda a, t, w, pw: TF.binary_cross_entropy_with_logits(a, t, weight=w, pos_weight=pw, reduction="none"),
         [x * 3, targets01, class_w, class_w[::-1].copy()], 1),
        ("avg_pool2d", lambda a: F.avg_pool2d(a, 2), lambda a: TF.avg_pool2d(a, 2), [img], 4),
        ("avg_pool2d_padded", lambda a: F.avg_pool2d(a, 3, 2, 1), lambda a: TF.avg_pool2d(a, 3, 2, 1), [img], 9),
        ("avg_pool2d_no_pad_count", lambda a: F.avg_pool2d(a, 3, 2, 1, count_include_pad=False),
         lambda a: TF.avg_pool2d(a, 3, 2, 1, count_include_pad=False), [img], 9),
        ("avg_pool2d_ceil", lambda a: F.avg_pool2d(a, (2, 3), (3, 2), (1, 0), ceil_mode=True),
         lambda a: TF.avg_pool2d(a, (2, 3), (3, 2), (1, 0), ceil_mode=True), [img], 6),
        ("avg_pool2d_divisor", lambda a: F.avg_pool2d(a, 2, divisor_override=3),
         lambda a: TF.avg_pool2d(a, 2, divisor_override=3), [img], 4),
        ("avg_pool2d_unbatched", lambda a: F.avg_pool2d(a, 2, 1), lambda a: TF.avg_pool2d(a, 2, 1), [img[0]], 4),
        ("adaptive_avg_pool2d_1", lambda a: F.adaptive_avg_pool2d(a, 1),
         lambda a: TF.adaptive_avg_pool2d(a, 1), [img], 30),
        ("adaptive_avg_pool2d_uneven", lambda a: F.adaptive_avg_pool2d(a, (3, 4)),
         lambda a: TF.adaptive_avg_pool2d(a, (3, 4)), [img], 6),
        ("adaptive_avg_pool2d_none", lambda a: F.adaptive_avg_pool2d(a, (2, None)),
         lambda a: TF.adaptive_avg_pool2d(a, (2, None)), [img], 3),
        ("pad_constant", lambda a: F.pad(a, (1, 2, 0, 3), value=1.5),
         lambda a: TF.pad(a, (1, 2, 0, 3), value=1.5), [img], 1),
        ("pad_negative", lambda a: F.pad(a, (-1, 2, 1, -2)), lambda a: TF.pad(a, (-1, 2, 1, -2)), [img], 1),
        ("pad_reflect", lambda a: F.pad(a, (2, 1, 3, 4), mode="reflect"),
         lambda a: TF.pad(a, (2, 1, 3, 4), mode="reflect"), [img], 1),
        ("pad_replicate", lambda a: F.pad(a, (2, 1, 3, 4), mode="replicate"),
         lambda a: TF.pad(a, (2, 1, 3, 4), mode="replicate"), [img], 1),
        ("pad_circular", lambda a: F.pad(a, (2, 1, 3, 4), mode="circular"),
         lambda a: TF.pad(a, (2, 1, 3, 4), mode="circular"), [img], 1),
        ("embedding", lambda i, w: F.embedding(i, w), lambda i, w: TF.embedding(i, w),
         [np.array([[1, 0, 4], [4, 4, 2]]), _arr((5, 3))], 3),
        ("embedding_padding", lambda i, w: F.embedding(i, w, padding_idx=4),
         lambda i, w: TF.embedding(i, w, padding_idx=4), [np.array([[1, 0, 4], [4, 4, 2]]), _arr((5, 3))], 3),
        ("layer_norm", lambda a, w, b: F.layer_norm(a, (5, 6), w, b), lambda a, w, b: TF.layer_norm(a, (5, 6), w, b),
         [img, _arr((5, 6), 7), _arr((5, 6), 8)], 30),
        ("layer_norm_plain", lambda a: F.layer_norm(a, 4), lambda a: TF.layer_norm(a, (4,)), [x], 4),
        ("batch_norm_train", lambda a, w, b: F.batch_norm(a, None, None, w, b, training=True),
         lambda a, w, b: TF.batch_norm(a, None, None, w, b, training=True), [img, _arr(2, 7), _arr(2, 8)], 30),
        ("batch_norm_1d_train", lambda a: F.batch_norm(a, None, None, training=True),
         lambda a: TF.batch_norm(a, None, None, training=True), [x], 3),
    ]
    return cases


_CASES = _cases()
_IDS = [c[0] for c in _CASES]


# Finite differences see the padding row that padding_idx keeps out of the gradient: that case is
# checked against torch and by test_embedding_padding_row_gets_no_gradient instead.
_GRADCHECKED = [c for c in _CASES if c[0] != "embedding_padding"]


@pytest.mark.parametrize("case", _GRADCHECKED, ids=[c[0] for c in _GRADCHECKED])
def test_gradcheck_and_gradgradcheck_in_float64(case):
    name, fn_m, _, arrays, _ = case
    grad_of = [0, 1] if "bce" in name or "binary" in name else [0]  # targets of BCE are differentiable too
    if name == "embedding" or name == "embedding_padding":
        grad_of = [1]
    if name in ("layer_norm", "batch_norm_train"):
        grad_of = [0, 1, 2]
    _check(fn_m, arrays, grad_of)


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", _CASES, ids=_IDS)
def test_values_and_gradients_match_torch(case, dtype):
    name, fn_m, fn_t, arrays, n = case
    grad_of = [0, 1] if "bce" in name or name == "binary_cross_entropy" else [0]
    if name.startswith("embedding"):
        grad_of = [1]
    if name in ("layer_norm", "batch_norm_train"):
        grad_of = [0, 1, 2]
    _compare_with_torch(fn_m, fn_t, arrays, grad_of=grad_of, dtype=dtype, n=n)


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_activations_at_the_edges_match_torch(dtype):
    """Zeros, large values either side (overflow territory), and the softplus threshold itself."""
    edge = np.array([0.0, -0.0, 1e-8, -1e-8, 20.0, -20.0, 30.0, -30.0, 100.0, -100.0, 700.0, -700.0, 10.0])
    for fm, ft in [
        (F.gelu, TF.gelu), (F.silu, TF.silu), (F.elu, TF.elu), (F.leaky_relu, TF.leaky_relu),
        (F.softplus, TF.softplus), (lambda t: F.softplus(t, 2.0, 20.0), lambda t: TF.softplus(t, 2.0, 20.0)),
        (lambda t: F.gelu(t, approximate="tanh"), lambda t: TF.gelu(t, approximate="tanh")),
    ]:
        _compare_with_torch(fm, ft, [edge], dtype=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_binary_cross_entropy_is_finite_at_exactly_0_and_1_like_torch(dtype):
    p = np.array([0.0, 1.0, 0.0, 1.0, 0.5])
    t = np.array([0.0, 1.0, 1.0, 0.0, 0.3])
    _compare_with_torch(lambda a, b: F.binary_cross_entropy(a, b, reduction="none"),
                        lambda a, b: TF.binary_cross_entropy(a, b, reduction="none"), [p, t], dtype=dtype)


@needs_torch
def test_nll_loss_with_every_target_ignored_is_nan_like_torch():
    x = _arr((3, 4))
    out = F.nll_loss(_mg(x), minigrad.tensor([-100, -100, -100]))
    assert math.isnan(out.item()) and math.isnan(TF.nll_loss(torch.tensor(x), torch.tensor([-100] * 3)).item())


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_fused_losses_have_torchs_node_names(reduction):
    """The tutorials print ``loss.grad_fn``: these losses are one node each, named as in PyTorch."""
    x, t = _arr((3, 4)), _arr((3, 4), seed=1, low=0, high=1)
    for name, args in [("mse_loss", (x, t)), ("binary_cross_entropy_with_logits", (x, t)),
                       ("binary_cross_entropy", (t, t[::-1].copy())), ("cross_entropy", (x, np.array([0, 3, 1]))),
                       ("nll_loss", (x, np.array([0, 3, 1])))]:
        ours = getattr(F, name)(_mg(args[0]), minigrad.tensor(args[1]), reduction=reduction)
        theirs = getattr(TF, name)(torch.tensor(args[0], requires_grad=True), torch.tensor(args[1]),
                                   reduction=reduction)
        assert ours.grad_fn.name() == type(theirs.grad_fn).__name__


@needs_torch
def test_loss_weights_that_require_grad_are_refused_like_torch():
    x, t, w = _arr(3), _arr(3, seed=1, low=0, high=1), _arr(3, seed=2, low=0.5, high=1)
    for fn, kwargs in [("binary_cross_entropy_with_logits", "weight"),
                       ("binary_cross_entropy_with_logits", "pos_weight"), ("binary_cross_entropy", "weight")]:
        probs = 1 / (1 + np.exp(-x))
        inp = probs if fn == "binary_cross_entropy" else x
        with pytest.raises(RuntimeError, match=f"not differentiable with respect to argument '{kwargs}'"):
            getattr(TF, fn)(torch.tensor(inp), torch.tensor(t), **{kwargs: torch.tensor(w, requires_grad=True)})
        with pytest.raises(RuntimeError, match=f"not differentiable with respect to argument '{kwargs}'"):
            getattr(F, fn)(_mg(inp), _mg(t, False), **{kwargs: _mg(w)})


@needs_torch
def test_one_hot_matches_torch():
    t = np.array([[0, 3], [2, 1]])
    np.testing.assert_array_equal(F.one_hot(minigrad.tensor(t)).numpy(), TF.one_hot(torch.tensor(t)).numpy())
    np.testing.assert_array_equal(F.one_hot(minigrad.tensor(t), 6).numpy(), TF.one_hot(torch.tensor(t), 6).numpy())
    assert F.one_hot(minigrad.tensor(t)).dtype == minigrad.int64


@needs_torch
def test_softmax_dtype_converts_first_like_torch():
    x = _arr((3, 4)).astype(np.float32)
    ours = F.softmax(minigrad.tensor(x), 1, dtype=minigrad.float64)
    theirs = TF.softmax(torch.tensor(x), 1, dtype=torch.float64)
    assert ours.dtype == minigrad.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=_rtol(np.float64, 4))


def test_embedding_padding_row_gets_no_gradient():
    w = _mg(_arr((5, 3)))
    F.embedding(minigrad.tensor([[1, 4], [4, 0]]), w, padding_idx=4).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[4], 0.0)
    np.testing.assert_array_equal(w.grad.numpy()[1], 1.0)


def test_softmax_without_dim_warns_and_picks_pytorchs_dimension():
    x = minigrad.randn(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = nn.Softmax()(x)
    np.testing.assert_allclose(out.numpy().sum(1), 1.0, rtol=1e-6)
    with pytest.warns(UserWarning, match="log_softmax"):
        F.log_softmax(minigrad.randn(3))


# =============================================================================
# Errors: the same exception type as torch, for the same mistake
# =============================================================================

def _error_cases():
    x = _arr((3, 4))
    return [
        ("nll target out of bounds", lambda m: m.nll_loss(m_(x).log_softmax(1), t_([0, 5, 1]))),
        ("nll batch mismatch", lambda m: m.nll_loss(m_(x), t_([0, 1]))),
        ("nll float target", lambda m: m.nll_loss(m_(x), m_(np.array([0.0, 1.0, 1.0])))),
        ("nll wrong weight", lambda m: m.nll_loss(m_(x), t_([0, 1, 1]), weight=m_(np.ones(3)))),
        ("one_hot too large", lambda m: m.one_hot(t_([0, 5]), 3)),
        ("one_hot negative", lambda m: m.one_hot(t_([0, -1]), 3)),
        ("one_hot float", lambda m: m.one_hot(m_(np.array([0.0, 1.0])), 3)),
        ("bce out of range", lambda m: m.binary_cross_entropy(m_(np.array([1.5])), m_(np.array([1.0])))),
        ("bce size mismatch", lambda m: m.binary_cross_entropy(m_(np.array([0.5, 0.2])), m_(np.array([1.0])))),
        ("bce logits mismatch",
         lambda m: m.binary_cross_entropy_with_logits(m_(np.array([0.5, 0.2])), m_(np.array([1.0])))),
        ("embedding out of range", lambda m: m.embedding(t_([0, 5]), m_(np.ones((3, 2))))),
        ("embedding float index", lambda m: m.embedding(m_(np.array([0.0, 1.0])), m_(np.ones((3, 2))))),
        ("layer_norm shape", lambda m: m.layer_norm(m_(np.ones((2, 3))), (4,))),
        ("batch_norm one value", lambda m: m.batch_norm(m_(np.ones((1, 3))), m_(np.zeros(3)), m_(np.ones(3)),
                                                        training=True)),
        ("avg_pool2d big pad", lambda m: m.avg_pool2d(m_(np.ones((1, 1, 4, 4))), 2, padding=2)),
        ("smooth_l1 negative beta", lambda m: m.smooth_l1_loss(m_(np.ones(3)), m_(np.ones(3)), beta=-1)),
        ("pad reflect too big", lambda m: m.pad(m_(np.ones((1, 3))), (3, 3), mode="reflect")),
        ("pad odd length", lambda m: m.pad(m_(np.ones((1, 3))), (1,))),
        ("gelu approximate", lambda m: m.gelu(m_(np.ones(3)), approximate="foo")),
        ("bad reduction", lambda m: m.l1_loss(m_(np.ones(3)), m_(np.ones(3)), reduction="foo")),
    ]


def m_(a):
    """A float64 tensor of the library the current error case runs on (set by the test)."""
    return _LIB["tensor"](a)


def t_(values):
    return _LIB["long"](values)


_LIB: dict = {}


@needs_torch
@pytest.mark.parametrize("case", _error_cases(), ids=[c[0] for c in _error_cases()])
def test_errors_have_torchs_exception_type(case):
    _, call = case
    types = []
    for lib, module in (("torch", TF), ("minigrad", F)):
        if lib == "torch":
            _LIB.update(tensor=lambda a: torch.tensor(a, dtype=torch.float64), long=lambda v: torch.tensor(v))
        else:
            _LIB.update(tensor=lambda a: minigrad.tensor(a, dtype=minigrad.float64), long=lambda v: minigrad.tensor(v))
        with pytest.raises(Exception) as info:
            call(module)
        types.append(type(info.value))
    torch_type, minigrad_type = types
    assert issubclass(minigrad_type, torch_type), (torch_type, minigrad_type)


# =============================================================================
# Modules
# =============================================================================

def _module_pairs():
    return [
        ("GELU()", {}), ("GELU(approximate='tanh')", {}), ("SiLU()", {}), ("LeakyReLU()", {}),
        ("LeakyReLU(0.2)", {}), ("ELU(alpha=0.5)", {}), ("Softplus(beta=2, threshold=10)", {}),
        ("Softmax(dim=1)", {}), ("Softmax()", {}), ("LogSoftmax(dim=-1)", {}), ("LayerNorm(10)", {}),
        ("LayerNorm((2, 3), eps=1e-3, elementwise_affine=False)", {}), ("LayerNorm(4, bias=False)", {}),
        ("BatchNorm1d(10)", {}), ("BatchNorm2d(3, momentum=None)", {}), ("BatchNorm1d(3, affine=False)", {}),
        ("BatchNorm2d(3, track_running_stats=False)", {}), ("Embedding(10, 3)", {}),
        ("Embedding(10, 3, padding_idx=-1)", {}), ("BCELoss()", {}), ("BCEWithLogitsLoss()", {}), ("NLLLoss()", {}),
        ("L1Loss()", {}), ("SmoothL1Loss(beta=0.5)", {}), ("HuberLoss(delta=2.0)", {}), ("AvgPool2d(2)", {}),
        ("AvgPool2d(3, stride=2, padding=1)", {}), ("AdaptiveAvgPool2d(1)", {}), ("AdaptiveAvgPool2d((2, None))", {}),
        ("Identity(54, unused='x')", {}), ("Flatten()", {}), ("ReLU()", {}), ("ReLU(inplace=True)", {}),
        ("CrossEntropyLoss(label_smoothing=0.1)", {}),
    ]


@needs_torch
@pytest.mark.parametrize("spec", [s for s, _ in _module_pairs()])
def test_module_repr_and_state_dict_names_match_torch(spec):
    ours = eval("nn." + spec, {"nn": nn})
    theirs = eval("tnn." + spec, {"tnn": torch.nn})
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname and tuple(p.shape) == tuple(tp.shape) and p.requires_grad
    for (name, b), (tname, tb) in zip(ours.named_buffers(), theirs.named_buffers()):
        assert name == tname and tuple(b.shape) == tuple(tb.shape)
        assert b.dtype.name == str(tb.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(b.numpy(), tb.numpy())  # running_mean 0, running_var 1, count 0


def test_module_initialisation_follows_pytorch():
    ln = nn.LayerNorm(4)
    assert ln.weight.tolist() == [1.0] * 4 and ln.bias.tolist() == [0.0] * 4
    bn = nn.BatchNorm2d(3)
    assert bn.weight.tolist() == [1.0] * 3 and bn.bias.tolist() == [0.0] * 3
    minigrad.manual_seed(0)
    emb = nn.Embedding(2000, 8, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert np.all(w[3] == 0)
    rest = np.delete(w, 3, axis=0).ravel()
    assert abs(rest.mean()) < 4 / math.sqrt(rest.size) and abs(rest.std() - 1) < 0.05  # N(0, 1)


def test_modules_compute_their_functions():
    x = minigrad.randn(2, 3, 4, 4, dtype=minigrad.float64)
    np.testing.assert_allclose(nn.GELU("tanh")(x).numpy(), F.gelu(x, approximate="tanh").numpy())
    np.testing.assert_allclose(nn.AvgPool2d(2)(x).numpy(), F.avg_pool2d(x, 2).numpy())
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d(1)(x).numpy(), x.numpy().mean((2, 3), keepdims=True),
                               rtol=1e-12)
    assert nn.Identity()(x) is x
    probs = minigrad.rand(3, 2, dtype=minigrad.float64) * 0.8 + 0.1
    t = minigrad.tensor([[0.0, 1.0]] * 3, dtype=minigrad.float64)
    w = minigrad.tensor([1.0, 2.0], dtype=minigrad.float64)
    np.testing.assert_allclose(nn.BCELoss(weight=w)(probs, t).item(),
                               F.binary_cross_entropy(probs, t, weight=w).item())
    assert "weight" in nn.BCELoss(weight=w).state_dict()


@pytest.mark.parametrize("module, exact", [
    (nn.ReLU(inplace=True), lambda v: max(v, 0.0)), (nn.SiLU(inplace=True), lambda v: v / (1 + np.exp(-v))),
    (nn.ELU(inplace=True), lambda v: v if v > 0 else np.expm1(v)),
    (nn.LeakyReLU(0.1, inplace=True), lambda v: v if v > 0 else 0.1 * v),
])
def test_inplace_activations_overwrite_their_input(module, exact):
    values = [-1.5, 0.5, 2.0]
    x = minigrad.tensor(values, dtype=minigrad.float64, requires_grad=True)
    h = x * 1
    out = module(h)
    assert out is h and np.allclose(h.tolist(), [exact(v) for v in values]) and "inplace=True" in repr(module)
    out.sum().backward()
    eps = 1e-6  # the gradient of what the activation wrote, against central differences of the formula
    np.testing.assert_allclose(x.grad.numpy(), [(exact(v + eps) - exact(v - eps)) / (2 * eps) for v in values],
                               rtol=1e-6)
    with pytest.raises(RuntimeError, match="leaf Tensor that requires grad"):
        module(x)


@needs_torch
@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
@pytest.mark.parametrize("cls, shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)),
                                        ("BatchNorm2d", (4, 3, 2, 5))])
def test_batchnorm_running_stats_and_eval_match_torch(cls, shape, momentum):
    ours = getattr(nn, cls)(3, momentum=momentum).double()
    theirs = getattr(torch.nn, cls)(3, momentum=momentum).double()
    with minigrad.no_grad():
        ours.weight.copy_(minigrad.tensor([0.5, 1.5, -1.0], dtype=minigrad.float64))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor([0.5, 1.5, -1.0], dtype=torch.float64))
    n = int(np.prod(shape)) // 3
    for step in range(4):
        x = _arr(shape, seed=step) * (step + 1) + step
        xm, xt = _mg(x), torch.tensor(x, requires_grad=True)
        out_m, out_t = ours(xm), theirs(xt)
        np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), rtol=_rtol(np.float64, n),
                                   atol=_rtol(np.float64, n))
        out_m.sum().backward()
        (out_t.sum()).backward()
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-9)
        for key in ("running_mean", "running_var", "num_batches_tracked"):
            np.testing.assert_allclose(getattr(ours, key).numpy(), getattr(theirs, key).numpy(), rtol=1e-12)
    ours.eval()
    theirs.eval()
    x = _arr(shape, seed=9)
    np.testing.assert_allclose(ours(_mg(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    assert ours.num_batches_tracked.item() == 4  # eval does not count


@needs_torch
def test_batchnorm_without_running_stats_uses_batch_statistics_in_eval_too():
    ours = nn.BatchNorm1d(3, track_running_stats=False).double().eval()
    theirs = torch.nn.BatchNorm1d(3, track_running_stats=False).double().eval()
    x = _arr((5, 3))
    np.testing.assert_allclose(ours(_mg(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12)


def test_batchnorm_checks_input_rank():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        nn.BatchNorm2d(3)(minigrad.randn(2, 3))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(minigrad.randn(2, 3, 1, 1))


def test_gradcheck_through_modules_with_parameters():
    minigrad.manual_seed(0)
    for layer, shape in [(nn.LayerNorm((3, 4)), (2, 3, 4)), (nn.BatchNorm2d(3), (2, 3, 2, 2)),
                         (nn.BatchNorm1d(3), (4, 3))]:
        layer.double()
        with minigrad.no_grad():
            layer.weight.copy_(minigrad.randn(*layer.weight.shape, dtype=minigrad.float64))
        x = _mg(_arr(shape))
        assert gradcheck(lambda inp, w, b: layer(inp), (x, layer.weight, layer.bias))


# =============================================================================
# Module.to, cpu, float, double, type
# =============================================================================

def test_module_to_dtype_keeps_the_parameter_objects_and_integer_buffers():
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    params = list(model.parameters())
    opt = minigrad.optim.SGD(model.parameters(), lr=0.1)
    model(minigrad.randn(4, 3)).sum().backward()
    assert model.to(minigrad.float64) is model
    assert [p is q for p, q in zip(model.parameters(), params)] == [True] * 4
    assert opt.param_groups[0]["params"][0] is model[0].weight
    assert all(p.dtype == minigrad.float64 and p.grad.dtype == minigrad.float64 for p in model.parameters())
    assert model[1].running_mean.dtype == minigrad.float64 and model[1].num_batches_tracked.dtype == minigrad.int64
    model.float()
    assert model[0].weight.dtype == minigrad.float32
    model.to("cpu", minigrad.float64)
    assert model[0].bias.dtype == minigrad.float64
    model.to(minigrad.zeros(1))  # another tensor's dtype
    assert model[0].bias.dtype == minigrad.float32
    assert model.cpu() is model and model.to(minigrad.device("cpu")) is model
    model.type(minigrad.float64)
    assert model[1].num_batches_tracked.dtype == minigrad.float64  # type() casts every tensor, as in PyTorch
    model.double()
    loss = model(minigrad.randn(4, 3, dtype=minigrad.float64)).sum()
    loss.backward()
    opt.step()


def test_module_to_refuses_other_devices_and_integer_dtypes():
    model = nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="CPU only"):
        model.to("cuda")
    with pytest.raises(AssertionError):  # a CPU-only PyTorch raises AssertionError for .cuda()
        model.cuda()
    with pytest.raises(TypeError, match="floating point"):
        model.to(minigrad.int64)


def test_no_accelerator_is_reported():
    assert minigrad.cuda.is_available() is False and minigrad.cuda.device_count() == 0
    assert minigrad.backends.mps.is_available() is False
    assert minigrad.accelerator.is_available() is False and minigrad.accelerator.current_accelerator() is None


# =============================================================================
# Optimizers and schedulers, step by step next to torch
# =============================================================================

def _run_optimizer(make_m, make_t, dtype, steps=6, groups=False):
    """Same initial parameters and the same gradients each step: compare the parameters after every step."""
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (4,)]
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    pm = [nn.Parameter(minigrad.tensor(a.copy())) for a in init]
    pt = [torch.nn.Parameter(torch.tensor(a.copy())) for a in init]
    if groups:
        opt_m = make_m([{"params": [pm[0]]}, {"params": [pm[1]], "lr": 0.05}])
        opt_t = make_t([{"params": [pt[0]]}, {"params": [pt[1]], "lr": 0.05}])
    else:
        opt_m, opt_t = make_m(pm), make_t(pt)
    for step in range(steps):
        for m, t in zip(pm, pt):
            g = (rng.standard_normal(m.shape) * (step + 1)).astype(dtype)
            m.grad = minigrad.tensor(g)
            t.grad = torch.tensor(g)
        opt_m.step()
        opt_t.step()
        for m, t in zip(pm, pt):
            # each step adds a few roundings; they compound a little from step to step
            rtol = _rtol(dtype, 4 * (step + 1))
            np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=rtol,
                                       err_msg=f"step {step + 1}")
    return opt_m, opt_t


_OPTIMIZERS = [
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.1, betas=(0.5, 0.9), maximize=True)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.1, weight_decay=0.3, amsgrad=True, eps=1e-3)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.05, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.05, momentum=0.9)),
    ("RMSprop", dict(lr=0.05, momentum=0.5, centered=True, weight_decay=0.01)),
    ("RMSprop", dict(lr=0.05, centered=True, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.1, maximize=True)),
]


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, kwargs", _OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(_OPTIMIZERS)])
def test_optimizer_matches_torch_step_by_step(name, kwargs, dtype):
    _run_optimizer(lambda p: getattr(minigrad.optim, name)(p, **kwargs),
                   lambda p: getattr(torch.optim, name)(p, **kwargs), dtype)


@needs_torch
def test_optimizer_param_groups_and_state_dict_round_trip():
    opt_m, _ = _run_optimizer(lambda p: minigrad.optim.RMSprop(p, lr=0.01, momentum=0.9, centered=True),
                              lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.9, centered=True),
                              np.float64, steps=3, groups=True)
    state = opt_m.state_dict()
    assert sorted(state["state"][0]) == ["grad_avg", "momentum_buffer", "square_avg", "step"]
    assert state["state"][0]["step"] == 3 and state["param_groups"][1]["lr"] == 0.05


def test_optimizer_arguments_are_validated():
    p = [nn.Parameter(minigrad.zeros(2))]
    with pytest.raises(ValueError, match="Invalid alpha value"):
        minigrad.optim.RMSprop(p, alpha=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        minigrad.optim.AdamW(p, betas=(0.9, 1.0))
    assert minigrad.optim.AdamW(p).defaults["weight_decay"] == 0.01


def _lrs(sched_cls, lib, epochs, **kwargs):
    if lib == "torch":
        params = [torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))]
        opt = torch.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=0.1)
        sched = getattr(torch.optim.lr_scheduler, sched_cls)(opt, **kwargs)
    else:
        params = [nn.Parameter(minigrad.zeros(1)), nn.Parameter(minigrad.zeros(1))]
        opt = minigrad.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=0.1)
        sched = getattr(minigrad.optim.lr_scheduler, sched_cls)(opt, **kwargs)
    seen = [sched.get_last_lr()]
    for _ in range(epochs):
        opt.step()
        sched.step()
        seen.append(sched.get_last_lr())
        assert [g["lr"] for g in opt.param_groups] == seen[-1]
    return seen, sched, opt


@needs_torch
@pytest.mark.parametrize("cls, kwargs", [
    ("StepLR", dict(step_size=3)), ("StepLR", dict(step_size=2, gamma=0.5)),
    ("CosineAnnealingLR", dict(T_max=7)), ("CosineAnnealingLR", dict(T_max=5, eta_min=0.01)),
])
def test_schedulers_match_torch_epoch_by_epoch(cls, kwargs):
    ours, _, _ = _lrs(cls, "minigrad", 25, **kwargs)
    theirs, _, _ = _lrs(cls, "torch", 25, **kwargs)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-13, atol=1e-15)


@needs_torch
def test_scheduler_closed_form_step_and_state_dict():
    for lib in ("minigrad", "torch"):
        _, sched, _ = _lrs("CosineAnnealingLR", lib, 3, T_max=10)
        with pytest.warns(UserWarning, match="epoch parameter"):
            sched.step(6)
        if lib == "minigrad":
            ours = sched.get_last_lr()
            state = sched.state_dict()
        else:
            np.testing.assert_allclose(ours, sched.get_last_lr(), rtol=1e-13)
    assert "optimizer" not in state and state["last_epoch"] == 6 and state["T_max"] == 10
    _, fresh, _ = _lrs("CosineAnnealingLR", "minigrad", 0, T_max=10)
    fresh.load_state_dict(state)
    assert fresh.last_epoch == 6 and fresh.get_last_lr() == ours


def test_scheduler_warns_when_stepped_before_the_optimizer():
    p = [nn.Parameter(minigrad.zeros(1))]
    sched = minigrad.optim.lr_scheduler.StepLR(minigrad.optim.SGD(p, lr=0.1), step_size=1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.raises(TypeError, match="is not an Optimizer"):
        minigrad.optim.lr_scheduler.StepLR(p, step_size=1)


# =============================================================================
# minigrad.utils.data
# =============================================================================

def test_utils_data_is_the_loader_of_minigrad_data():
    from minigrad.utils.data import DataLoader, Dataset, TensorDataset

    assert DataLoader is minigrad.data.DataLoader and TensorDataset is minigrad.data.TensorDataset
    assert issubclass(TensorDataset, Dataset)


def test_custom_dataset_with_dict_samples_and_strings():
    from minigrad.utils.data import DataLoader, Dataset

    class Pairs(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": minigrad.tensor([float(i), 2.0 * i]), "label": i, "name": f"s{i}"}

    batches = list(DataLoader(Pairs(), batch_size=2, drop_last=True))
    assert len(batches) == 2
    first = batches[0]
    assert first["x"].tolist() == [[0.0, 0.0], [1.0, 2.0]] and first["label"].tolist() == [0, 1]
    assert first["name"] == ["s0", "s1"]
    with pytest.raises(NotImplementedError):
        Dataset()[0]


def _collated(value):
    """A library-independent form of a collated batch: container types kept, tensors as (dtype, values)."""
    if isinstance(value, (minigrad.Tensor,)) or type(value).__name__ == "Tensor":
        return ("tensor", str(value.dtype).split(".")[-1], value.tolist())
    if isinstance(value, dict):
        return {k: _collated(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        kind = "namedtuple" if hasattr(value, "_fields") else type(value).__name__
        return (kind, [_collated(v) for v in value])
    return value


@needs_torch
@pytest.mark.parametrize("samples", ["tuples", "lists", "namedtuples", "dicts of tuples", "strings and ints",
                                     "arrays", "ragged"])
def test_default_collate_and_loader_batches_match_torch(samples):
    """Tuple samples give a list of fields, as in PyTorch (``for x, y in loader`` unpacks either)."""
    import collections

    pair = collections.namedtuple("pair", "a b")
    batch = {"tuples": [(1, 2.0), (3, 4.0)], "lists": [[1, 2.0], [3, 4.0]],
             "namedtuples": [pair(1, 2.0), pair(3, 4.0)], "dicts of tuples": [{"a": (1, 2)}, {"a": (3, 4)}],
             "strings and ints": [("s", 1), ("t", 2)], "arrays": [np.ones(2, np.float32), np.zeros(2, np.float32)],
             "ragged": [(1, 2), (3,)]}[samples]
    results = []
    for collate in (minigrad.utils.data.default_collate, torch.utils.data.default_collate):
        try:
            results.append(_collated(collate(batch)))
        except Exception as error:  # the exception type is what is compared
            results.append(type(error))
    assert results[0] == results[1]


@needs_torch
def test_tensor_dataset_batches_are_lists_as_in_torch():
    got = []
    for lib in (minigrad, torch):
        ds = lib.utils.data.TensorDataset(lib.arange(6.0), lib.arange(6))
        got.append([_collated(b) for b in lib.utils.data.DataLoader(ds, batch_size=4)])
    assert got[0] == got[1]


def test_collate_fn_is_used():
    from minigrad.utils.data import DataLoader, TensorDataset

    ds = TensorDataset(np.arange(6.0), np.arange(6))
    out = list(DataLoader(ds, batch_size=4, collate_fn=lambda samples: len(samples)))
    assert out == [4, 2]


def test_random_split_counts_fractions_and_reproducibility():
    from minigrad.utils.data import ConcatDataset, Subset, TensorDataset, random_split

    ds = TensorDataset(np.arange(10))
    minigrad.manual_seed(0)
    a, b = random_split(ds, [7, 3])
    assert isinstance(a, Subset) and (len(a), len(b)) == (7, 3)
    values = sorted([a[i][0].item() for i in range(7)] + [b[i][0].item() for i in range(3)])
    assert values == list(range(10))
    parts = random_split(ds, [0.5, 0.3, 0.2], generator=np.random.default_rng(1))
    assert [len(p) for p in parts] == [5, 3, 2]
    again = random_split(ds, [0.5, 0.3, 0.2], generator=np.random.default_rng(1))
    assert parts[0].indices == again[0].indices
    assert [len(p) for p in random_split(ds, [0.33, 0.33, 0.34])] == [4, 3, 3]  # leftovers dealt from the first
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])
    both = ConcatDataset([a, b])
    assert len(both) == 10 and both[7][0].item() == b[0][0].item() and both[-1][0].item() == b[2][0].item()
    assert len(a + b) == 10


@needs_torch
def test_random_split_lengths_match_torch():
    from minigrad.utils.data import TensorDataset, random_split

    for n, fractions in [(10, [0.33, 0.33, 0.34]), (7, [0.5, 0.5]), (101, [0.8, 0.1, 0.1])]:
        ours = [len(p) for p in random_split(TensorDataset(np.arange(n)), fractions)]
        theirs = [len(p) for p in torch.utils.data.random_split(torch.utils.data.TensorDataset(torch.arange(n)),
                                                                 fractions)]
        assert ours == theirs


# =============================================================================
# minigrad.save / minigrad.load
# =============================================================================

def test_save_and_load_tensors_state_dicts_and_optimizer_state(tmp_path):
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    opt = minigrad.optim.Adam(model.parameters(), lr=0.01)
    model(minigrad.randn(4, 3)).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.pth"
    minigrad.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3,
                   "t": minigrad.tensor([1, 2]), "list": [minigrad.ones(2), 1.5, None]}, path)
    ckpt = minigrad.load(path)  # weights_only=True is the default and suffices
    fresh = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    fresh.load_state_dict(ckpt["model"])
    for (k, v), (k2, v2) in zip(model.state_dict().items(), fresh.state_dict().items()):
        assert k == k2 and v.dtype == v2.dtype and np.array_equal(v.numpy(), v2.numpy())
    opt2 = minigrad.optim.Adam(fresh.parameters(), lr=0.01)
    opt2.load_state_dict(ckpt["opt"])
    assert opt2.state[fresh[0].weight]["step"] == 1
    assert ckpt["epoch"] == 3 and ckpt["t"].dtype == minigrad.int64 and ckpt["list"][1:] == [1.5, None]
    buffer = io.BytesIO()
    minigrad.save(minigrad.tensor([1.0, 2.0], requires_grad=True), buffer)
    buffer.seek(0)
    t = minigrad.load(buffer, map_location="cpu")
    assert t.requires_grad and t.tolist() == [1.0, 2.0] and t.grad_fn is None


def test_load_refuses_whole_models_unless_weights_only_is_false(tmp_path):
    path = tmp_path / "model.pth"
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    minigrad.save(model, str(path))
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
        minigrad.load(path)
    loaded = minigrad.load(path, weights_only=False)
    assert repr(loaded) == repr(model) and np.array_equal(loaded[0].weight.detach().numpy(),
                                                          model[0].weight.detach().numpy())
    with pytest.raises(RuntimeError, match="pickle_module"):
        minigrad.load(path, pickle_module=pickle)
    with pytest.raises(RuntimeError, match="CPU only"):
        minigrad.load(path, map_location="cuda:0", weights_only=False)


def test_weights_only_refuses_code_execution(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("should never run",))

    path = tmp_path / "evil.pth"
    with open(path, "wb") as f:
        pickle.dump({"x": Evil()}, f)
    with pytest.raises(pickle.UnpicklingError, match="builtins.print"):
        minigrad.load(path)


def test_legacy_size_average_and_reduce_warn_and_map_to_reduction():
    a, b = minigrad.tensor([1.0, 3.0]), minigrad.tensor([0.0, 0.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert F.l1_loss(a, b, size_average=False).item() == 4.0
        assert F.l1_loss(a, b, reduce=False).tolist() == [1.0, 3.0]
    assert len(caught) == 2 and "reduction='sum'" in str(caught[0].message)


@needs_torch
def test_numpy_asarray_of_a_tensor_as_in_torch():
    """matplotlib's imshow(tensor) in the data tutorial goes through np.asarray (Tensor.__array__)."""
    t = minigrad.tensor([[1.0, 2.0]])
    assert np.asarray(t).dtype == np.asarray(torch.tensor([[1.0, 2.0]])).dtype == np.float32
    assert np.asarray(t, dtype=np.float64).tolist() == [[1.0, 2.0]]
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(minigrad.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(torch.ones(2, requires_grad=True))
