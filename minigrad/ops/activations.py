"""``tanh``, ``sigmoid`` and ``relu``: each Function, then its Tensor methods (and the in-place forms).

Each backward has a fused Numba kernel (``minigrad.kernels``) for an ordinary backward and its
differentiable twin from tensor operations for ``create_graph=True`` (``_tanh_backward`` and the
others); the two agree on every input, inf and NaN included (``tests/kernels/test_twins.py``).
"""
from __future__ import annotations

import numpy as np

from minigrad import kernels
from minigrad.autograd.function import Function
from minigrad.core.builtin import plain, record
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad._tensor import Tensor
from minigrad.ops.where import _float
from minigrad.ops.registry import tensor_method


def _tanh_backward(out: Tensor, grad: Tensor) -> Tensor:
    """grad * (1 - y*y) from the saved output y: the kernel, or its recorded twin."""
    if not is_grad_enabled():
        return Tensor._wrap(kernels.tanh_backward(out._data, grad._data))
    return grad * (1 - out * out)


class Tanh(Function):
    node_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, a):
        out = Tensor._wrap(np.tanh(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return _tanh_backward(out, grad)


@tensor_method(top_level=True)
def tanh(self) -> Tensor:
    return Tanh.apply(self)


@tensor_method(top_level=True)
def tanh_(self) -> Tensor:
    return self._inplace(Tanh)


def _sigmoid_backward(out: Tensor, grad: Tensor) -> Tensor:
    """grad * y * (1 - y) from the saved output y: the kernel, or its recorded twin."""
    if not is_grad_enabled():
        return Tensor._wrap(kernels.sigmoid_backward(out._data, grad._data))
    return grad * out * (1 - out)


class Sigmoid(Function):
    node_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx, a):
        x = _float(a)
        # exp(-|x|) never overflows: the two branches are the same function
        e = np.exp(-np.abs(x))
        out = Tensor._wrap(np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return _sigmoid_backward(out, grad)


@tensor_method(top_level=True)
def sigmoid(self) -> Tensor:
    return Sigmoid.apply(self)


@tensor_method(top_level=True)
def sigmoid_(self) -> Tensor:
    return self._inplace(Sigmoid)


def _relu_backward(out: Tensor, grad: Tensor) -> Tensor:
    """grad, and 0 where the output is <= 0: PyTorch's ``threshold_backward``.

    An inf or NaN gradient at a dead unit gives 0 (not NaN), and a NaN unit passes
    its gradient (NaN <= 0 is false). The kernel, or the same kernel recorded as a node.
    """
    if not is_grad_enabled():
        return Tensor._wrap(kernels.relu_backward(out._data, grad._data))
    return ThresholdBackward.apply(grad, out)


class ThresholdBackward(Function):
    """relu's backward as a node of its own, as PyTorch records it under ``create_graph``.

    Its result depends on the saved output (with a zero derivative), so it requires
    grad whenever that output does, even when the upstream gradient does not: as in
    PyTorch, ``x.grad`` of ``relu(x).sum().backward(create_graph=True)`` requires grad.
    """

    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(out)
        return Tensor._wrap(kernels.relu_backward(out._data, grad._data))

    @staticmethod
    def backward(ctx, grad_grad):
        out, = ctx.saved_tensors
        return _relu_backward(out, grad_grad), Tensor._wrap(np.zeros_like(out._data))


_ZEROS: dict = {}  # (shape, dtype) -> read-only zeros, for _relu


def _relu(x: np.ndarray) -> np.ndarray:
    """``np.maximum(x, 0)``, bit for bit (NaN stays NaN, -0.0 becomes 0.0). For a small row-major
    float array, against a cached array of zeros: NumPy's loop with a scalar operand is about three
    times slower (3.8 against 1.35 us at 64x128 float32)."""
    if x.size > 65536 or x.dtype.kind != "f" or not x.flags.c_contiguous:
        return np.maximum(x, 0).astype(x.dtype, copy=False)
    key = (x.shape, x.dtype)
    zeros = _ZEROS.get(key)
    if zeros is None:
        if len(_ZEROS) >= 64:  # (a bound: shapes come and go with batch sizes)
            _ZEROS.clear()
        zeros = _ZEROS[key] = np.zeros(x.shape, x.dtype)
        zeros.flags.writeable = False
    return np.maximum(x, zeros)


class Relu(Function):
    node_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, a):
        out = Tensor._wrap(_relu(a._data))
        ctx._to_save = (out,)  # (save_for_backward's checks are for user code)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return _relu_backward(out, grad)


@tensor_method(top_level=True, out=False)
def relu(self) -> Tensor:
    if self._requires_grad and plain(self):  # a plain call, recorded directly (core/builtin.py)
        out = Tensor._wrap(_relu(self._data))
        record(Relu, (self,), out, (True,), (out,))
        return out
    return Relu.apply(self)


@tensor_method(top_level=True)
def relu_(self) -> Tensor:
    return self._inplace(Relu)

