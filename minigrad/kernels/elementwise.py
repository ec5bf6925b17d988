"""Fused elementwise activations: one pass over memory instead of NumPy's one pass per operator.

``grad * y * (1 - y)`` in NumPy is three loops and two temporary arrays; the
kernel below is one loop that reads ``y`` and ``grad`` once and writes ``out``
once. Each kernel is a plain loop over flat C-contiguous 1-D views; the Python
wrapper checks the inputs, makes them contiguous and allocates ``out`` if the
caller did not pass one (passing one is what gets a kernel to memory bandwidth).

Only the kernels that beat their reference in ``bench/bench_kernels.py`` are
here: the three backward passes, and GELU forward and backward (NumPy has no
erf). The forward passes of sigmoid, tanh and ReLU are NumPy's (the rule and
the reasons are in ``minigrad/kernels/__init__.py``).

``error_model="numpy"``: 1/0 gives inf as in NumPy instead of raising, and a
division needs no zero check, so LLVM can vectorise the loop.

No ``parallel=True``: a parallel launch can stall when BLAS's spinning threads
(right after a matmul, as in every layer) hold the cores; the measurements are
in ``bench/README.md``.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from minigrad.kernels import reference as ref

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@numba.njit(cache=True, error_model="numpy")
def _sigmoid_backward(y, grad, out):
    for i in range(y.size):
        out[i] = grad[i] * y[i] * (1.0 - y[i])


@numba.njit(cache=True, error_model="numpy")
def _tanh_backward(y, grad, out):
    for i in range(y.size):
        out[i] = grad[i] * (1.0 - y[i] * y[i])


@numba.njit(cache=True, error_model="numpy")
def _relu_backward(x, grad, out):
    for i in range(x.size):
        out[i] = 0.0 if x[i] <= 0.0 else grad[i]  # a NaN x passes grad, as torch's threshold_backward


@numba.njit(cache=True, error_model="numpy")
def _gelu_forward(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = 0.5 * v * (1.0 + math.erf(v * _SQRT_HALF))


@numba.njit(cache=True, error_model="numpy")
def _gelu_backward(x, grad, out):
    for i in range(x.size):
        v = x[i]
        cdf = 0.5 * (1.0 + math.erf(v * _SQRT_HALF))
        pdf = _INV_SQRT_2PI * math.exp(-0.5 * v * v)
        out[i] = grad[i] * (cdf + v * pdf)


@numba.njit(cache=True, error_model="numpy")
def _sgd_step(p, g, lr):
    for i in range(p.size):
        p[i] -= lr * g[i]  # lr * g rounded to p's dtype, then the subtraction: NumPy's two steps, bit for bit


def sgd_step_(p: np.ndarray, g: np.ndarray, lr: float) -> np.ndarray:
    """p -= lr * g, in place, in one pass and with no scratch array (NumPy needs a product array, then
    the subtraction: two passes). ``lr`` is a Python number, cast to p's dtype as NumPy casts it.
    Returns p."""
    p = ref.check_float("p", p)
    g = ref.check_like("g", g, p)
    if not (p.flags.c_contiguous and g.flags.c_contiguous):
        return ref.sgd_step_(p, g, lr)  # (any layout: NumPy's iteration)
    _sgd_step(p.reshape(-1), g.reshape(-1), p.dtype.type(lr))
    return p


def _run(kernel, out, first: np.ndarray, *rest: np.ndarray) -> np.ndarray:
    """Call ``kernel(*flat_inputs, flat_out)`` on C-contiguous copies/views of checked arrays."""
    arrays = [np.asarray(a, order="C") for a in (first, *rest)]  # copies only if non-contiguous
    out = ref.check_out(out, arrays[0])
    dst = out if out.flags.c_contiguous else np.empty_like(arrays[0])
    kernel(*[a.reshape(-1) for a in arrays], dst.reshape(-1))  # reshape of contiguous = view
    if dst is not out:
        np.copyto(out, dst)
    return out


def sigmoid_backward(y: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad * y * (1 - y) from the saved output y: no exp in the backward pass."""
    y = ref.check_float("y", y)
    return _run(_sigmoid_backward, out, y, ref.check_like("grad", grad, y))


def tanh_backward(y: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad * (1 - y*y) from the saved output y."""
    y = ref.check_float("y", y)
    return _run(_tanh_backward, out, y, ref.check_like("grad", grad, y))


def relu_backward(x: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """0 where x <= 0, else grad (from the saved x): a NaN x passes its gradient, as in torch."""
    if (out is None and type(x) is np.ndarray and type(grad) is np.ndarray and x.dtype in _FLOATS
            and grad.dtype == x.dtype and grad.shape == x.shape and x.flags.c_contiguous
            and grad.flags.c_contiguous):  # (every layer's backward: what _run does, without its checks)
        out = np.empty_like(x)
        _relu_backward(x.reshape(-1), grad.reshape(-1), out.reshape(-1))
        return out
    x = ref.check_float("x", x)
    return _run(_relu_backward, out, x, ref.check_like("grad", grad, x))


def gelu_forward(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """x * Phi(x) with the exact erf (torch's default approximate='none'); NumPy has no erf."""
    x = ref.check_float("x", x)
    return _run(_gelu_forward, out, x)


def gelu_backward(x: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad * (Phi(x) + x * phi(x)) from the saved input x."""
    x = ref.check_float("x", x)
    return _run(_gelu_backward, out, x, ref.check_like("grad", grad, x))


# GELU, approximate='tanh': Numba computes the tanh's argument, NumPy takes tanh of the whole array at
# once (SIMD, where Numba calls libm per element: see softmax.py), Numba finishes in one more pass.
# Three passes over memory instead of NumPy's dozen (each operator a pass and a temporary).
_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


@numba.njit(cache=True, error_model="numpy")
def _gelu_tanh_inner(x, out):
    for i in range(x.size):
        v = x[i]
        out[i] = _GELU_K * (v + _GELU_C * v * v * v)


@numba.njit(cache=True, error_model="numpy")
def _gelu_tanh_finish(x, t, out):
    for i in range(x.size):
        out[i] = 0.5 * x[i] * (1.0 + t[i])


@numba.njit(cache=True, error_model="numpy")
def _gelu_tanh_backward_finish(x, grad, t, out):
    for i in range(x.size):
        v, tv = x[i], t[i]
        out[i] = grad[i] * (0.5 * (1.0 + tv) + 0.5 * v * (1.0 - tv * tv) * _GELU_K * (1.0 + 3.0 * _GELU_C * v * v))


def _gelu_tanh_t(x: np.ndarray) -> np.ndarray:
    """tanh(k (x + 0.044715 x^3)) of the flat C-contiguous x."""
    t = np.empty_like(x)
    _gelu_tanh_inner(x, t)
    return np.tanh(t, out=t)


def gelu_tanh_forward(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """0.5 x (1 + tanh(k (x + 0.044715 x^3))), k = sqrt(2/pi): torch's ``gelu(approximate='tanh')``."""
    x = ref.check_float("x", x)
    if out is None:  # the result's own memory holds the tanh first: one fresh array, not two (page faults)
        x = np.asarray(x, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        result = np.empty_like(x)
        flat, t = x.reshape(-1), result.reshape(-1)
        _gelu_tanh_inner(flat, t)
        _gelu_tanh_finish(flat, np.tanh(t, out=t), t)
        return result
    return _run(lambda a, dst: _gelu_tanh_finish(a, _gelu_tanh_t(a), dst), out, x)


def gelu_tanh_backward(x: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad * d/dx gelu_tanh(x), from the saved input x (the tanh recomputed: nothing else is kept)."""
    x = ref.check_float("x", x)
    grad = ref.check_like("grad", grad, x)
    if out is None:  # as in the forward: the tanh in the result's memory
        x, grad = np.asarray(x, order="C"), np.asarray(grad, order="C")
        result = np.empty_like(x)
        flat, t = x.reshape(-1), result.reshape(-1)
        _gelu_tanh_inner(flat, t)
        _gelu_tanh_backward_finish(flat, grad.reshape(-1), np.tanh(t, out=t), t)
        return result
    return _run(lambda a, g, dst: _gelu_tanh_backward_finish(a, g, _gelu_tanh_t(a), dst), out, x, grad)
