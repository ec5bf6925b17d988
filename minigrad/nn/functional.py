"""``minigrad.nn.functional``: the layers and losses as plain functions (``import ... as F``).

A Module such as ``Linear`` only stores its parameters and calls the
function here; the function does the computation. Most are a line or two of
tensor operations, so autograd differentiates them (to any order) with no
extra code. A few have a Function of their own in ``minigrad/nn/ops``:
``conv2d`` and ``max_pool2d`` (Numba kernels), ``cross_entropy`` and
``linear`` (fused: one node instead of several, for speed), ``gelu`` (a Numba
kernel), ``softplus`` (overflow-free), and ``nll_loss``, ``mse_loss``,
``binary_cross_entropy`` (PyTorch's clamps at 0 and 1) and
``binary_cross_entropy_with_logits``: one node each, reduction included, named
as in PyTorch.

What minigrad leaves out, compared with ``torch.nn.functional``: dilation, groups and string
padding in conv2d; ``ceil_mode`` and ``dilation`` in max_pool2d;
``scale_grad_by_freq`` and ``sparse`` in embedding; inputs without a batch dimension
in conv2d and max_pool2d (they take NCHW). The ``inplace=True`` forms of the
activations composed of tensor operations (hardtanh, selu, celu, mish, ...) write
their result back into the input: the same values and gradients as PyTorch's, under
a ``CopyBackwards`` node instead of PyTorch's in-place one.

Each function opens with a guard that costs nothing when its arguments are tensors: anything else
goes to ``_check_tensors``, which refuses a list, a NumPy array or a number with PyTorch's
TypeError (also where PyTorch's own function, written in Python, fails with an AttributeError).
"""
from __future__ import annotations

import inspect
import math
import warnings

import numpy as np

from minigrad.autograd.grad_mode import no_grad
from minigrad.random import generator
from minigrad.dtypes import bool_, from_numpy_dtype, int32, int64, scalar_type_name
from minigrad.functional_ops import broadcast_tensors, cat, where, write_out
from minigrad.nn.ops.activation import (
    Elu, EluInplace, Gelu, GeluTanh, LeakyRelu, LeakyReluInplace, Silu, Softplus, _check_float,
)
from minigrad.nn.ops.binary_cross_entropy import BinaryCrossEntropy
from minigrad.nn.ops.conv import Conv2d, MaxPool2d
from minigrad.nn.ops.linear_map import (
    AdaptiveAvgPool2d, AvgPool2d, ConstantPadNd, Embedding, ReflectionPad, ReplicationPad,
)
from minigrad.nn.ops.linear import Linear as FusedLinear, LinearNoBias as FusedLinearNoBias, fits_fused_linear
from minigrad.nn.ops.loss import CrossEntropy
from minigrad.nn.ops.normalization import NativeBatchNorm, NativeLayerNorm, batch_statistics
from minigrad.nn.ops.reduced_loss import BinaryCrossEntropyWithLogits, HuberLoss, MseLoss, NllLoss, NllLoss2d, SmoothL1Loss
from minigrad.nn.parameter import Parameter
from minigrad.ops.elementwise import DivScalar
from minigrad.ops.softmax import LogSoftmax, Softmax
from minigrad.tensor import Tensor, _operand, check_tensor

_REDUCTIONS = ("mean", "sum", "none")
# What the guard at the top of each function lets through at once (a layer's weight is a
# Parameter); _check_tensors judges anything else, a Tensor subclass included.
_TENSORS = (Tensor, Parameter)
_TENSORS_OR_NONE = (Tensor, Parameter, type(None))


# -- activations --------------------------------------------------------------
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0), elementwise; ``inplace=True`` overwrites ``input`` (``input.relu_()``) and returns it."""
    if type(input) not in _TENSORS:
        _check_tensors("relu", input=input)
    return input.relu_() if inplace else input.relu()


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)), elementwise."""
    if type(input) not in _TENSORS:
        _check_tensors("sigmoid", input=input)
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    if type(input) not in _TENSORS:
        _check_tensors("tanh", input=input)
    return input.tanh()


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """PyTorch's legacy choice when ``dim`` is left out: 0 for 0-, 1- and 3-D input, else 1 (with a warning)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``; ``dtype`` converts the input first, as in PyTorch."""
    if type(input) not in _TENSORS:
        _check_tensors("softmax", input=input)
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return Softmax.apply(input, dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed without ever taking the log of a rounded-to-0 value."""
    if type(input) not in _TENSORS:
        _check_tensors("log_softmax", input=input)
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return LogSoftmax.apply(input, dim)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF; ``approximate="tanh"`` uses PyTorch's tanh formula."""
    if type(input) not in _TENSORS:
        _check_tensors("gelu", input=input)
    if approximate == "none":
        return Gelu.apply(input)
    if approximate == "tanh":
        return GeluTanh.apply(input)
    raise RuntimeError("approximate argument must be either none or tanh.")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (also called swish); ``inplace=True`` overwrites ``input`` and returns it."""
    if type(input) not in _TENSORS:
        _check_tensors("silu", input=input)
    return input._inplace(Silu) if inplace else Silu.apply(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x (the derivative at 0 is negative_slope, as in PyTorch).

    ``inplace=True`` (or ``leaky_relu_``) overwrites ``input``: node ``LeakyReluBackward1``, which
    keeps the result, not the overwritten input.
    """
    if type(input) not in _TENSORS:
        _check_tensors("leaky_relu", input=input)
    return input._inplace(LeakyReluInplace, negative_slope) if inplace else LeakyRelu.apply(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    if type(input) not in _TENSORS:
        _check_tensors("leaky_relu_", input=input)
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1): one node, ``EluBackward0``; ``inplace=True`` (or
    ``elu_``) overwrites ``input`` (``EluBackward1``, which keeps the result)."""
    if type(input) not in _TENSORS:
        _check_tensors("elu", input=input)
    return input._inplace(EluInplace, alpha) if inplace else Elu.apply(input, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    if type(input) not in _TENSORS:
        _check_tensors("elu_", input=input)
    return elu(input, alpha, inplace=True)


def relu_(input: Tensor) -> Tensor:
    if type(input) not in _TENSORS:
        _check_tensors("relu_", input=input)
    return input.relu_()


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, smooth ReLU; x itself where beta * x > threshold."""
    if type(input) not in _TENSORS:
        _check_tensors("softplus", input=input)
    return Softplus.apply(input, beta, threshold)



# The activations below are compositions of differentiable tensor operations (so they have
# gradients to any order for free). Their kinks follow PyTorch's derivatives exactly: each
# piecewise one picks its pieces with ``where`` on a mask of the input, so the derivative at a
# threshold is whichever piece PyTorch's backward formula takes there.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _constant(input: Tensor, values) -> Tensor:
    """A constant (no gradient) of ``input``'s dtype: the value of a flat piece."""
    return Tensor._wrap(np.asarray(values, dtype=input._data.dtype))


def _overwrite(input: Tensor, fn, *args) -> Tensor:
    """The ``inplace=True`` form: ``fn`` of a copy of ``input``, written back into ``input``.

    Its node is ``CopyBackwards`` (PyTorch's in-place kernels have nodes of their own); the
    gradient is the same, and a leaf that requires grad is refused, as in PyTorch.
    """
    return input.copy_(fn(input.clone(), *args))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """x clamped to [min_val, max_val]; the derivative is 1 strictly inside, 0 at the bounds (PyTorch's)."""
    if type(input) not in _TENSORS:
        _check_tensors("hardtanh", input=input)
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype == bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if inplace:
        return _overwrite(input, hardtanh, min_val, max_val)
    d = input._data
    with np.errstate(invalid="ignore"):
        inside = (d > min_val) & (d < max_val)
        return where(Tensor._wrap(inside), input, _constant(input, np.clip(d, min_val, max_val)))


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    if type(input) not in _TENSORS:
        _check_tensors("hardtanh_", input=input)
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): ``hardtanh(x, 0, 6)``, as in PyTorch (the derivative at 0 and 6 is 0)."""
    if type(input) not in _TENSORS:
        _check_tensors("relu6", input=input)
    return hardtanh(input, 0.0, 6.0, inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants; the derivative at 0 is scale * alpha."""
    if type(input) not in _TENSORS:
        _check_tensors("selu", input=input)
    if inplace:
        return _overwrite(input, selu)
    return Elu.apply(input, _SELU_ALPHA) * _SELU_SCALE


def selu_(input: Tensor) -> Tensor:
    if type(input) not in _TENSORS:
        _check_tensors("selu_", input=input)
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x / alpha) - 1): ``alpha * elu(x / alpha)``, derivative 1 at 0."""
    if type(input) not in _TENSORS:
        _check_tensors("celu", input=input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    _check_float(input, "elu")
    if inplace:
        return _overwrite(input, celu, alpha)
    return Elu.apply(input / alpha, 1.0) * alpha


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    if type(input) not in _TENSORS:
        _check_tensors("celu_", input=input)
    return celu(input, alpha, inplace=True)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x)): a smooth ReLU that dips slightly below 0."""
    if type(input) not in _TENSORS:
        _check_tensors("mish", input=input)
    _check_float(input, "mish")
    if inplace:
        return _overwrite(input, mish)
    return input * Softplus.apply(input, 1.0, 20.0).tanh()


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|), PyTorch's composition."""
    if type(input) not in _TENSORS:
        _check_tensors("softsign", input=input)
    if input.dtype == bool_:
        raise NotImplementedError('"abs" not implemented for minigrad.bool: call .float() first')
    return input / (input.abs() + 1)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along ``dim``: the smallest entries get the most weight."""
    if type(input) not in _TENSORS:
        _check_tensors("softmin", input=input)
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
    return softmax(-input, dim, dtype=dtype)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), without overflow or a log of 0 at either end."""
    if type(input) not in _TENSORS:
        _check_tensors("logsigmoid", input=input)
    _check_float(input, "log_sigmoid")
    return -Softplus.apply(-input, 1.0, float("inf"))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """(x + 3) / 6 clamped to [0, 1]; the derivative is 1/6 strictly between -3 and 3, else 0."""
    if type(input) not in _TENSORS:
        _check_tensors("hardsigmoid", input=input)
    _check_float(input, "hardsigmoid")
    if inplace:
        return _overwrite(input, hardsigmoid)
    d = input._data
    with np.errstate(invalid="ignore"):
        inside = (d > -3) & (d < 3)
        return where(Tensor._wrap(inside), (input + 3) / 6, _constant(input, np.clip((d + 3) / 6, 0, 1)))


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x); PyTorch's derivative: 0 up to -3, x / 3 + 0.5 strictly between -3 and 3, 1 from 3."""
    if type(input) not in _TENSORS:
        _check_tensors("hardswish", input=input)
    _check_float(input, "hardswish")
    if inplace:
        return _overwrite(input, hardswish)
    d = input._data
    with np.errstate(invalid="ignore"):
        middle, below = (d > -3) & (d < 3), d <= -3
    x = where(Tensor._wrap(middle), input, 0.0)  # (0 outside: no inf * 0 in the middle piece's gradient)
    curve = x * (x + 3) / 6
    return where(Tensor._wrap(middle), curve, where(Tensor._wrap(below), input * 0.0, input))  # (-inf * 0: NaN)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of ``input`` along ``dim`` (a gated linear unit)."""
    if type(input) not in _TENSORS:
        _check_tensors("glu", input=input)
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    _check_float(input, "glu")
    if not -input.ndim <= dim < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {dim})")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.ndim} is size {size}")
    half = size // 2
    return input.narrow(dim, 0, half) * input.narrow(dim, half, half).sigmoid()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value`` (NaN stays NaN); the derivative is 0 at the threshold."""
    if type(input) not in _TENSORS:
        _check_tensors("threshold", input=input)
    if input.dtype == bool_:
        raise NotImplementedError('"threshold" not implemented for minigrad.bool')
    if inplace:
        return _overwrite(input, globals()["threshold"], threshold, value)
    d = input._data
    limit = d.dtype.type(threshold) if d.dtype.kind != "f" else threshold  # (an integer input: cast, as in PyTorch)
    with np.errstate(invalid="ignore"):
        replaced = d <= limit
    return where(Tensor._wrap(~replaced), input, _constant(input, value))


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    if type(input) not in _TENSORS:
        _check_tensors("threshold_", input=input)
    return globals()["threshold"](input, threshold, value, inplace=True)


def _shrunk(input: Tensor, lambd: float) -> np.ndarray:
    """Where |x| > lambd (NaN included): the entries hardshrink and softshrink keep, and differentiate."""
    d = input._data
    with np.errstate(invalid="ignore"):
        return ~((d >= -lambd) & (d <= lambd))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0 (the derivative at +-lambd is 0)."""
    if type(input) not in _TENSORS:
        _check_tensors("hardshrink", input=input)
    _check_float(input, "hardshrink")
    return where(Tensor._wrap(_shrunk(input, lambd)), input, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0: x shrunk toward 0 by lambd."""
    if type(input) not in _TENSORS:
        _check_tensors("softshrink", input=input)
    _check_float(input, "softshrink")
    largest = float(np.finfo(input._data.dtype).max)
    if not 0 <= lambd <= largest:
        raise RuntimeError(f"lambda must be in range [0, {largest:g}] for input dtype "
                           f"{scalar_type_name(input._data.dtype)}, but found {lambd:g}")
    keep = _shrunk(input, lambd)
    with np.errstate(invalid="ignore"):
        shift = np.where(input._data > lambd, lambd, -lambd)
    return where(Tensor._wrap(keep), input - _constant(input, shift), 0.0)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    if type(input) not in _TENSORS:
        _check_tensors("tanhshrink", input=input)
    return input - input.tanh()


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x, with one learnt slope per channel (dimension 1) or one for all.

    The derivative at 0 is the slope, as in PyTorch; the slope's gradient sums x * grad over x <= 0.
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS:
        _check_tensors("prelu", input=input, weight=weight)
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    if input._data.dtype != weight._data.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {scalar_type_name(input._data.dtype)} and "
                           f"{scalar_type_name(weight._data.dtype)}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    count = weight.numel()
    if count != 1 and count != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{count} and channel size = {channels}.")
    slope = weight.reshape(()) if count == 1 else weight.reshape([1, count] + [1] * (input.ndim - 2))
    with np.errstate(invalid="ignore"):
        positive = Tensor._wrap(input._data > 0)
    return where(positive, input, slope * where(positive, 0.0, input))  # (0, not x: no inf * 0 in the slope's grad)


# -- layers -------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: weight is (out_features, in_features), as in PyTorch."""
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("linear", input=input, weight=weight, bias=bias)
    if bias is not None and bias._data.dtype != weight._data.dtype:
        raise RuntimeError(
            f"linear: bias is {bias.dtype} but weight is {weight.dtype}; they must have the same dtype "
            "(PyTorch: 'self and mat2 must have the same dtype'). Convert one with .to(dtype)"
        )
    if fits_fused_linear(input, weight, bias):
        return (FusedLinear if bias is not None else FusedLinearNoBias).apply(input, weight, bias)
    if bias is not None and input.ndim != 2 and input.ndim > 0 and weight.ndim == 2:
        # PyTorch: the rows as one matrix (addmm), viewed back to the input's leading dimensions
        return linear(input.reshape(-1, input.shape[-1]), weight, bias).reshape(*input.shape[:-1], weight.shape[0])
    out = input @ weight.T
    return out if bias is None else out + bias


def _pair(name: str, value) -> tuple[int, int]:
    """3 -> (3, 3): conv and pool take one size per spatial dimension."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) for v in pair):
        raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")
    return int(pair[0]), int(pair[1])


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0) -> Tensor:
    """2-D convolution of NCHW ``input`` with (out_channels, in_channels, kH, kW) ``weight``.

    Numba kernels forward and backward, differentiable to any order (``minigrad/nn/ops/conv.py``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv2d", input=input, weight=weight, bias=bias)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.dtype != input.dtype:
            raise RuntimeError(f"Input type ({input.dtype}) and {name} type ({t.dtype}) should be the same")
    return Conv2d.apply(input, weight, bias, _pair("stride", stride), _pair("padding", padding))


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0) -> Tensor:
    """The max of each kernel_size window of NCHW ``input``; ``stride`` defaults to ``kernel_size``.

    Padding counts as -inf (it never wins). Differentiable to any order.
    """
    if type(input) not in _TENSORS:
        _check_tensors("max_pool2d", input=input)
    kernel_size = _pair("kernel_size", kernel_size)
    stride = kernel_size if stride is None else _pair("stride", stride)
    return MaxPool2d.apply(input, kernel_size, stride, _pair("padding", padding))


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p).

    The scaling ("inverted dropout") keeps each element's expected value, so
    nothing needs rescaling at evaluation time, when dropout is the identity.
    The mask is drawn from minigrad's generator (``minigrad.manual_seed``).
    """
    if type(input) not in _TENSORS:
        _check_tensors("dropout", input=input)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    dtype = input._data.dtype
    if p == 1.0:
        scale = Tensor._wrap(np.zeros(input.shape, dtype))
    else:
        keep = generator().random(input.shape) >= p  # True with probability 1 - p
        scale = Tensor._wrap(keep.astype(dtype) / dtype.type(1.0 - p))
    return input.mul_(scale) if inplace else input * scale


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions start_dim..end_dim into one (``torch.flatten``)."""
    if type(input) not in _TENSORS:
        _check_tensors("flatten", input=input)
    return input.flatten(start_dim, end_dim)


def _window_sum(x: Tensor, kernel: tuple[int, int], stride: tuple[int, int], out_hw: tuple[int, int]) -> Tensor:
    """Sum of each kernel window of NCHW ``x``: one strided slice per kernel offset, added up.

    Slices are views and addition is differentiable to any order, so the pool
    needs no Function of its own (at kH * kW nodes, fine for small kernels).
    """
    (kh, kw), (sh, sw), (oh, ow) = kernel, stride, out_hw
    total = None
    for i in range(kh):
        for j in range(kw):
            part = x[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
            total = part if total is None else total + part
    return total


def _pool_out_size(size: int, k: int, s: int, p: int, ceil_mode: bool) -> int:
    """PyTorch's output length; with ceil_mode the last window must start inside the input or left padding."""
    span = size + 2 * p - k
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each kernel_size window of (N, C, H, W) or (C, H, W) ``input``.

    ``stride`` defaults to ``kernel_size``. Zero padding counts in the divisor
    unless ``count_include_pad=False``; ``divisor_override`` replaces the
    divisor. With ``ceil_mode`` a last, partial window is kept (its divisor
    counts only the cells inside input and padding, as in PyTorch).
    """
    if type(input) not in _TENSORS:
        _check_tensors("avg_pool2d", input=input)
    kernel = _pair("kernel_size", kernel_size)
    strides = kernel if stride is None or stride == [] else _pair("stride", stride)
    pads = _pair("padding", padding)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, got {input.ndim}D")
    for k, p in zip(kernel, pads):
        if p > k // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} and dilation=1"
            )
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    h, w = input.shape[-2:]
    out_hw = tuple(_pool_out_size(n, k, s, p, ceil_mode) for n, k, s, p in zip((h, w), kernel, strides, pads))
    if min(out_hw) < 1:
        sizes = "x".join(map(str, input.shape[-3:])), "x".join(map(str, (input.shape[-3],) + out_hw))
        raise RuntimeError(f"Given input size: ({sizes[0]}). Calculated output size: ({sizes[1]}). "
                           f"Output size is too small")
    # Pad by `padding`, plus zeros past the padding for the windows ceil_mode adds.
    extra = [max(0, (o - 1) * s + k - (n + 2 * p)) for o, s, k, n, p in zip(out_hw, strides, kernel, (h, w), pads)]

    def pooled(t: Tensor) -> Tensor:
        batched = t if t.ndim == 4 else t.unsqueeze(0)
        padded = pad(batched, (pads[1], pads[1] + extra[1], pads[0], pads[0] + extra[0]))
        sums = _window_sum(padded, kernel, strides, out_hw)
        if divisor_override is not None:
            out = sums / divisor_override
        else:
            counted = np.zeros((1, 1) + padded.shape[2:], dtype=padded._data.dtype)  # cells that count
            if count_include_pad:
                counted[..., :h + 2 * pads[0], :w + 2 * pads[1]] = 1
            else:
                counted[..., pads[0]:pads[0] + h, pads[1]:pads[1] + w] = 1
            out = sums / _window_sum(Tensor._wrap(counted), kernel, strides, out_hw)
        return out if t.ndim == 4 else out.squeeze(0)
    return AvgPool2d.apply(input, pooled, pooled)


def _adaptive_bins(size: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's bins: from floor(i * size / out) to ceil((i + 1) * size / out); they may overlap."""
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, H, W) or (C, H, W) ``input`` down to ``output_size`` cells, whatever H and W are.

    ``output_size`` is an int or a pair; None in the pair keeps that dimension.
    ``adaptive_avg_pool2d(x, 1)`` is the global average pool of a CNN's head.
    """
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_avg_pool2d", input=input)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    sizes = (output_size, output_size) if isinstance(output_size, (int, np.integer)) else tuple(output_size)
    if len(sizes) != 2:
        raise ValueError(f"adaptive_avg_pool2d: output_size must be an int or a pair, got {output_size!r}")
    h, w = input.shape[-2:]
    oh, ow = (n if o is None else int(o) for o, n in zip(sizes, (h, w)))
    if (oh, ow) == (1, 1):  # the global average: PyTorch's node is a mean's too
        return input.mean((-2, -1), keepdim=True)

    def pooled(t: Tensor) -> Tensor:
        rows = [t[..., a:b, :].mean(-2, keepdim=True) for a, b in _adaptive_bins(h, oh)]
        x = cat(rows, -2) if len(rows) > 1 else rows[0]
        cols = [x[..., a:b].mean(-1, keepdim=True) for a, b in _adaptive_bins(w, ow)]
        return cat(cols, -1) if len(cols) > 1 else cols[0]
    return AdaptiveAvgPool2d.apply(input, pooled, pooled)


def _pad_indices(mode: str, n: int, left: int, right: int, dim: int, shape: tuple) -> np.ndarray:
    """The source index of every output position along one dimension, for the non-constant modes."""
    positions = np.arange(-left, n + right)
    if mode == "replicate":
        return np.clip(positions, 0, n - 1)
    if mode == "circular":
        if left > n or right > n:
            raise ValueError("Padding value causes wrapping around more than once.")
        return positions % n
    if left >= n or right >= n:
        raise RuntimeError(
            f"Argument #4: Padding size should be less than the corresponding input dimension, but got: "
            f"padding ({left}, {right}) at dimension {dim} of input {list(shape)}"
        )
    return _reflect(positions, n)


def _reflect(positions: np.ndarray, n: int) -> np.ndarray:
    """Mirror positions outside [0, n) back inside, without repeating the edge (PyTorch's "reflect")."""
    period = 2 * (n - 1)
    folded = np.abs(positions) % period if period else np.zeros_like(positions)
    return np.where(folded >= n, period - folded, folded)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad (or, with negative sizes, crop) the last ``len(pad) // 2`` dimensions.

    ``pad`` lists (left, right) for the last dimension, then the one before it,
    and so on, as in PyTorch. ``mode`` is "constant" (filled with ``value``,
    default 0), "reflect", "replicate" or "circular". Built from ``cat``, slicing
    and indexing (``_padded``), run as one node named as PyTorch's (``nn/ops/linear_map.py``).
    """
    if type(input) not in _TENSORS:
        _check_tensors("pad", input=input)
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension "
                           f"but got padding length {len(pad)} and input of dimension {input.ndim}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unsupported padding mode: {mode}")
    if mode != "constant" and value not in (None, 0):
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument.')
    if mode == "circular":  # (PyTorch's node is a CopySlices here: left as the composition)
        return _padded(input, pad, mode, value)
    dims = len(pad) // 2
    if mode != "constant" and not (dims in (1, 2, 3) and input.ndim in (dims + 1, dims + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor: {mode} padding of the "
            f"last 1, 2 or 3 dimensions needs an input with one or two more (a batch and a channel dimension)"
        )
    node = ConstantPadNd if mode == "constant" else (ReflectionPad if mode == "reflect" else ReplicationPad)[dims]
    return node.apply(input, lambda t: _padded(t, pad, mode, value), lambda t: _padded(t, pad, mode, None))


def _padded(input: Tensor, pad: tuple, mode: str, value: float | None) -> Tensor:
    """``pad``'s result from cat, slicing and indexing (with the padding mode's source indices)."""
    out = input
    for i in range(len(pad) // 2):
        dim = input.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if mode != "constant" and (left > 0 or right > 0):
            idx = _pad_indices(mode, out.shape[dim], max(left, 0), max(right, 0), dim, tuple(input.shape))
            out = out[(slice(None),) * dim + (idx,)]
            left, right = min(left, 0), min(right, 0)
        if left < 0 or right < 0:  # negative padding crops
            n = out.shape[dim]
            out = out[(slice(None),) * dim + (slice(max(-left, 0), n - max(-right, 0)),)]
        blocks = []
        for size in (left, right):
            if size > 0:
                shape = out.shape[:dim] + (size,) + out.shape[dim + 1:]
                blocks.append(Tensor._wrap(np.full(shape, 0 if value is None else value, dtype=out._data.dtype)))
            else:
                blocks.append(None)
        if blocks[0] is not None or blocks[1] is not None:
            out = cat([b for b in (blocks[0], out, blocks[1]) if b is not None], dim)
    return out


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """(..., num_classes) int64 with a 1 at each class index; ``num_classes=-1`` means max + 1."""
    if type(tensor) not in _TENSORS:
        _check_tensors("one_hot", tensor=tensor)
    if tensor.dtype != int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    t = tensor._data
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size and t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if t.size and t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._wrap((t[..., None] == np.arange(num_classes)).astype(np.int64))


def _check_embedding_options(scale_grad_by_freq: bool, sparse: bool) -> None:
    if scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "minigrad's embedding supports neither scale_grad_by_freq nor sparse gradients: "
            "leave them at their defaults"
        )


def _renorm_rows(weight: Tensor, indices: np.ndarray, max_norm: float, norm_type: float) -> None:
    """PyTorch's embedding_renorm_: each looked-up row longer than ``max_norm`` is scaled back to it,
    in ``weight`` itself (not recorded), before the lookup."""
    rows = np.unique(indices)
    norms = np.linalg.norm(weight._data[rows], ord=norm_type, axis=1)
    long = norms > max_norm
    with no_grad():
        if long.any():
            scale = (max_norm / (norms[long] + 1e-7)).astype(weight._data.dtype)[:, None]
            weight[Tensor._wrap(rows[long])] = weight.detach()[Tensor._wrap(rows[long])] * Tensor._wrap(scale)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Row ``input[...]`` of ``weight`` for every index: a lookup table, differentiable in ``weight``.

    The row at ``padding_idx`` is looked up like any other but gets no gradient,
    so a padding vector stays as it was initialised (zeros, in ``nn.Embedding``).
    With ``max_norm``, the looked-up rows longer than it are first scaled back to
    it in ``weight`` itself, as in PyTorch.
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS:
        _check_tensors("embedding", input=input, weight=weight)
    _check_embedding_options(scale_grad_by_freq, sparse)
    if input.dtype not in (int64, int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {input.dtype} instead (while checking arguments for embedding)"
        )
    n = weight.shape[0]
    idx = input._data
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    if padding_idx is None:
        return Embedding.apply(weight, lambda w: w[input], lambda w: w[input])
    padding_idx = padding_idx + n if padding_idx < 0 else padding_idx
    frozen = Tensor._wrap(idx[..., None] == padding_idx)  # padding rows: the value, not its gradient
    return Embedding.apply(weight, lambda w: w[input], lambda w: where(frozen, 0.0, w[input]))


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise each sample over its last ``len(normalized_shape)`` dimensions, then scale and shift.

    (x - mean) / sqrt(var + eps) * weight + bias, with the biased variance (as PyTorch):
    one node, ``NativeLayerNormBackward0`` (``nn/ops/normalization.py``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("layer_norm", input=input, weight=weight, bias=bias)
    shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, {', '.join(map(str, shape))}], "
            f"but got input of size{list(input.shape)}"
        )
    dims = tuple(range(input.ndim - k, input.ndim))
    return NativeLayerNorm.apply(input, weight, bias, dims, shape, eps, None, True)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dimension 1) over the batch and any spatial dimensions.

    Training: use the batch's mean and biased variance, and move the running
    statistics (if given) toward the batch's, in place:
    ``running = (1 - momentum) * running + momentum * batch`` (the running
    variance takes the *unbiased* batch variance, as in PyTorch). Evaluation:
    use the running statistics, so a sample's output does not depend on its batch.
    """
    if (type(input) not in _TENSORS or type(running_mean) not in _TENSORS_OR_NONE
            or type(running_var) not in _TENSORS_OR_NONE or type(weight) not in _TENSORS_OR_NONE
            or type(bias) not in _TENSORS_OR_NONE):
        _check_tensors("batch_norm", input=input, running_mean=running_mean, running_var=running_var, weight=weight,
                       bias=bias)
    if input.ndim < 2:
        raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")
    channels = input.shape[1]
    view = (1, channels) + (1,) * (input.ndim - 2)
    dims = (0,) + tuple(range(2, input.ndim))
    if training:
        count = input.numel() // channels
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
        stats = mean, var = batch_statistics(input._data, dims)  # computed once, for the output and the running ones
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(Tensor._wrap(mean.reshape(channels)) * momentum)
            if running_var is not None:
                unbiased = Tensor._wrap(var.reshape(channels)) * (count / (count - 1))
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm: running_mean and running_var must be given when training=False")
        stats = (running_mean._data.reshape(view), running_var._data.reshape(view))
    return NativeBatchNorm.apply(input, weight, bias, dims, view, eps, stats, training)



# -- distances and similarities ---------------------------------------------------
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``: each slice scaled to norm 1 (zero slices stay 0)."""
    if type(input) not in _TENSORS or type(out) not in _TENSORS_OR_NONE:
        _check_tensors("normalize", input=input, out=out)
    result = input / input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return result if out is None else write_out("normalize", result, out)


def _floor_value(norm: Tensor, eps: float) -> Tensor:
    """``norm`` raised to ``eps`` in value only: PyTorch clamps the norms in place under no_grad, so the
    gradient still flows through the unclamped norm."""
    return norm + (norm.clamp(min=eps) - norm).detach()


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """<x1, x2> / (max(||x1||, eps) * max(||x2||, eps)) along ``dim``, after broadcasting x1 and x2."""
    if type(x1) not in _TENSORS or type(x2) not in _TENSORS:
        _check_tensors("cosine_similarity", x1=x1, x2=x2)
    common = np.result_type(x1._data.dtype, x2._data.dtype)
    if common.kind != "f":
        word = {"b": "Bool", "i": "Long" if common.itemsize == 8 else "Int"}.get(common.kind, str(common))
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {word}")
    x1, x2 = broadcast_tensors(x1.to(from_numpy_dtype(common)), x2.to(from_numpy_dtype(common)))
    norm1 = _floor_value(x1.norm(2, dim, keepdim=True), eps)
    norm2 = _floor_value(x2.norm(2, dim, keepdim=True), eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dimension (eps keeps the norm's gradient finite at x1 == x2)."""
    if type(x1) not in _TENSORS or type(x2) not in _TENSORS:
        _check_tensors("pairwise_distance", x1=x1, x2=x2)
    innermost = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p, innermost, keepdim=keepdim)

# -- losses -------------------------------------------------------------------
def _reduce(losses: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return losses.mean()
    return losses.sum() if reduction == "sum" else losses


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """PyTorch's deprecated ``size_average``/``reduce`` pair, turned into a ``reduction`` (with its warning)."""
    if size_average is None and reduce is None:
        _check_reduction(reduction)
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return reduction


def _warn_size_mismatch(input: Tensor, target: Tensor) -> None:
    """(N, 1) against (N,) broadcasts to (N, N), which is almost never what was meant: PyTorch warns."""
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _check_class_targets(input: Tensor, target: Tensor, fn: str, ignore_index: int = -100) -> bool:
    """(N, C) scores and N int64 class indices in [0, C), with PyTorch's errors (the fused path).

    Returns False when some target equals ``ignore_index``: those need the general path.
    In the common case this costs one pass over the targets, as the bounds check alone did.
    """
    if input.ndim != 2:
        raise RuntimeError(
            f"{fn} expects input of shape (N, C), one row of class scores per sample, but got "
            f"shape {list(input.shape)} (minigrad supports only this 2-D form)"
        )
    _check_target_dtype(target)
    if target.ndim != 1:
        raise RuntimeError(
            f"0D or 1D target tensor expected, multi-target not supported: got target of shape "
            f"{list(target.shape)} for input of shape {list(input.shape)}"
        )
    if target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )
    t, classes = target._data, input.shape[1]
    if 0 <= ignore_index < classes and (t == ignore_index).any():
        return False
    if not t.size or 0 <= np.minimum.reduce(t) and np.maximum.reduce(t) < classes:  # (two C passes, the common case)
        return True
    bad = t[(t < 0) | (t >= classes)]
    if bad.size:
        if (bad == ignore_index).all():
            return False
        raise IndexError(f"Target {bad[bad != ignore_index][0]} is out of bounds.")
    return True


def _check_target_dtype(target: Tensor) -> None:
    if target.dtype != int64:
        raise RuntimeError(
            f"expected target dtype to be Long (minigrad.int64), but got {target.dtype}: class "
            "indices must be int64 (call .long()), class probabilities must have the input's shape"
        )


def _as_rows(input: Tensor, target: Tensor) -> tuple[Tensor, np.ndarray]:
    """(C,), (N, C) or (N, C, d1, ...) scores as (M, C) rows, and the targets as M indices.

    The class dimension is 1 (0 for a single sample), as in PyTorch.
    """
    _check_target_dtype(target)
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError(
                f"For an unbatched input of shape {list(input.shape)} the target must be a 0-D class index, "
                f"but got target of shape {list(target.shape)}"
            )
        return input.unsqueeze(0), target._data.reshape(1)
    if input.ndim < 1 or target.ndim != input.ndim - 1:
        raise RuntimeError(
            f"0D or 1D target tensor expected, multi-target not supported: got target of shape "
            f"{list(target.shape)} for input of shape {list(input.shape)}"
        )
    if target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )
    if target.shape[1:] != input.shape[2:]:
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})")
    classes = input.shape[1]
    if input.ndim > 2:  # move the class dimension last, then one row per position
        input = input.permute(0, *range(2, input.ndim), 1).reshape(-1, classes)
    return input, target._data.reshape(-1)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """The loss of classifying with scores ``input`` (N, C, raw logits) when ``target`` is right.

    ``target`` is either class indices (int64 in [0, C), shape (N,)) or, as in
    PyTorch, class probabilities (a float tensor of the input's shape). Equal
    to ``nll_loss(log_softmax(input, 1), target, ...)``; the common case
    (2-D scores, class indices, no weight, smoothing or ignored targets) is one fused node.
    ``label_smoothing`` mixes in the uniform distribution over the C classes, as in PyTorch.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("cross_entropy", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if target.is_floating_point():
        return _cross_entropy_with_probabilities(input, target, weight, reduction, label_smoothing)
    if not label_smoothing and weight is None and input.ndim == 2 and _check_class_targets(
            input, target, "cross_entropy", ignore_index):
        return CrossEntropy.apply(input, target, reduction)
    if input.ndim < 1:
        raise RuntimeError(f"cross_entropy expects class scores of shape (C,), (N, C) or (N, C, d1, ...), "
                           f"but got shape {list(input.shape)}")
    class_dim = 0 if input.ndim == 1 else 1
    log_probs = input.log_softmax(class_dim)
    nll = nll_loss(log_probs, target, weight, None, ignore_index, None, reduction)
    if not label_smoothing:
        return nll
    return (1 - label_smoothing) * nll + _smoothing_term(log_probs, target, weight, ignore_index, reduction,
                                                         class_dim) * (label_smoothing / input.shape[class_dim])


def _cross_entropy_with_probabilities(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                                      label_smoothing: float) -> Tensor:
    """-sum over classes of target * log_softmax(input), in PyTorch's order of operations (its node names).

    Any input shape cross_entropy takes, (C,), (N, C) or (N, C, d1, ...); "mean" divides by the number
    of samples (input.numel() / C), not by the weights.
    """
    class_dim = 0 if input.ndim == 1 else 1
    if input.ndim == 0:
        raise IndexError("cross_entropy: the input has no class dimension; pass scores of shape (C,) or (N, C)")
    if target.shape != input.shape:
        batch_differs = input.ndim > 1 and target.ndim > 0 and target.shape[0] != input.shape[0]
        raise (ValueError if batch_differs else RuntimeError)(
            f"cross_entropy: a float target holds class probabilities and must have the input's shape, but got "
            f"target of shape {list(target.shape)} for input of shape {list(input.shape)}; pass class indices "
            f"as an int64 tensor instead"
        )
    classes = input.shape[class_dim]
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    products = input.log_softmax(class_dim) * target
    if weight is not None:
        products = products * weight.reshape([classes] + [1] * (input.ndim - class_dim - 1))
    if reduction == "none":
        return -products.sum(class_dim)
    if reduction == "sum" or input.numel() == 0:
        total = products.sum()
        return -(total if reduction == "sum" else total.fill_(float("nan")))  # an empty mean is NaN
    return DivScalar.apply(-products.sum(), _operand(input.numel() // classes))


def _smoothing_term(log_probs: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str,
                    class_dim: int) -> Tensor:
    """PyTorch's label-smoothing part for class-index targets: -sum over classes of (weighted) log-probabilities.

    Ignored targets add 0; "mean" divides by the weights of the counted targets, as ``nll_loss`` does.
    """
    if weight is not None:
        shape = [1] * log_probs.ndim
        shape[class_dim] = weight.shape[0]
        log_probs = log_probs * weight.reshape(shape)
    counted = target._data != ignore_index
    # masked_fill, not a product with the mask: an ignored target's gradient is 0 even where the mean
    # divides by a total weight of 0 (0 * inf would be NaN)
    smooth = (-log_probs.sum(class_dim)).masked_fill(Tensor._wrap(~counted), 0.0)
    if reduction == "none":
        return smooth
    if reduction == "sum":
        return smooth.sum()
    kept = target._data[counted]
    total = float(weight._data[kept].sum()) if weight is not None else float(counted.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return smooth.sum() / Tensor._wrap(np.asarray(total, dtype=log_probs._data.dtype))


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood: ``-weight[t] * input[i, t]`` for each sample i with target class t.

    ``input`` holds log-probabilities, (N, C) or (N, C, d1, ...) or (C,).
    Targets equal to ``ignore_index`` add nothing. ``"mean"`` divides by the
    summed weights of the targets that count (not by N), as PyTorch does.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("nll_loss", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    rows, t = _as_rows(input, target)
    classes = rows.shape[1]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {classes} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}"
        )
    counts = t != ignore_index
    bad = t[counts & ((t < 0) | (t >= classes))]
    if bad.size:
        raise IndexError(f"Target {bad[0]} is out of bounds.")
    safe = np.where(counts, t, 0)
    dtype = rows._data.dtype
    w = counts.astype(dtype) if weight is None else weight._data[safe].astype(dtype) * counts
    if input.ndim <= 2:
        return NllLoss.apply(rows, safe, w, counts, reduction, tuple(target.shape))
    # PyTorch's spatial form (its nll_loss2d): a 4-D input directly, others viewed as 4-D and back
    if reduction != "none" or input.ndim == 4:
        return NllLoss2d.apply(rows, safe, w, counts, reduction, tuple(target.shape))
    return NllLoss2d.apply(rows, safe, w, counts, reduction, (t.size,)).reshape(target.shape)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error, ``((input - target) ** 2).mean()``: one ``MseLossBackward0`` node.

    Shapes that differ are broadcast, with PyTorch's warning: (N, 1) against
    (N,) broadcasts to (N, N), which is almost never what was meant.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("mse_loss", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    expanded_input, expanded_target = broadcast_tensors(input, target)
    if weight is None:
        return MseLoss.apply(expanded_input, expanded_target, reduction)
    diff = expanded_input - expanded_target
    return _weighted(diff * diff, weight, input, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error, ``(input - target).abs().mean()`` (the derivative at 0 is 0)."""
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("l1_loss", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    expanded_input, expanded_target = broadcast_tensors(input, target)
    losses = (expanded_input - expanded_target).abs()
    return _reduce(losses, reduction) if weight is None else _weighted(losses, weight, input, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Squared below ``beta``, absolute above: 0.5 d^2 / beta if |d| < beta, else |d| - 0.5 beta.

    Quadratic near 0 (smooth), linear far out (robust to outliers); beta = 0 is the L1 loss.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("smooth_l1_loss", input=input, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    expanded_input, expanded_target = broadcast_tensors(input, target)
    if beta == 0:
        return _reduce((expanded_input - expanded_target).abs(), reduction)
    return SmoothL1Loss.apply(expanded_input, expanded_target, reduction, beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``delta * smooth_l1_loss(..., beta=delta)``: 0.5 d^2 if |d| < delta, else delta * (|d| - 0.5 delta).

    With ``weight``, the mean is the plain mean of the weighted losses, as in
    PyTorch (``mse_loss`` and ``l1_loss`` divide by the sum of the weights instead).
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("huber_loss", input=input, target=target, weight=weight)
    _check_reduction(reduction)
    _warn_size_mismatch(input, target)
    expanded_input, expanded_target = broadcast_tensors(input, target)
    if weight is None:
        return HuberLoss.apply(expanded_input, expanded_target, reduction, delta)
    _check_weight(weight, input)
    return _reduce(HuberLoss.apply(expanded_input, expanded_target, "none", delta) * weight, reduction)



def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence of ``target`` from the distribution whose log-probabilities are ``input``.

    Pointwise target * (log(target) - input), 0 where target is 0 (or, with ``log_target``, both
    given as logs: exp(target) * (target - input)). ``reduction="batchmean"`` (sum / batch size) is
    the divergence's definition; "mean" divides by every element too, and PyTorch warns about it.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("kl_div", input=input, target=target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        if reduction != "batchmean":
            _check_reduction(reduction)
    if input._data.dtype.kind != "f" or target._data.dtype.kind != "f":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        losses = target.exp() * (target - input)
    else:
        nonzero = where(Tensor._wrap(target._data == 0), 1.0, target)  # xlogy: 0 * log 0 is 0 (and its gradient 0)
        losses = target * nonzero.log() - target * input
    if reduction == "batchmean":
        total = losses.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduce(losses, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of ``target`` under normal distributions of mean ``input`` and variance ``var``.

    0.5 * (log(var) + (input - target)^2 / var), plus 0.5 * log(2 pi) if ``full``. ``var`` has the
    input's shape, or one dimension of size 1 (one variance shared along it), or lacks the last
    dimension; a float is one variance for all. It is raised to ``eps`` in value only, as PyTorch
    does it (in place under no_grad), so its gradient passes unclamped.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or (
            type(var) not in _TENSORS and not isinstance(var, float)):
        # PyTorch's function is Python arithmetic: a target that is a number or an ndarray works there too
        _check_tensors("gaussian_nll_loss", input=input,
                       **({} if isinstance(target, (int, float, np.ndarray)) else {"target": target}),
                       **({} if isinstance(var, float) else {"var": var}))
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = Tensor._wrap(np.full(input.shape, var, dtype=input._data.dtype))
    elif (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")  # (the heteroscedastic case passes: one dimension of 1)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = _floor_value(var, eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)

def _check_weight(weight: Tensor, input: Tensor) -> None:
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def _weighted(losses: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    """PyTorch's weighted mse/l1 losses: a weighted mean divides by the sum of the weights."""
    _check_weight(weight, input)
    weighted = losses * weight
    if reduction == "mean":
        return weighted.sum() / weight.sum()
    return _reduce(weighted, reduction)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)) for probabilities ``input`` in [0, 1] and targets ``t``.

    Each log is clamped at -100 (as in PyTorch), so a probability of exactly 0
    or 1 gives a finite loss and gradient; see ``nn/ops/binary_cross_entropy.py``.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("binary_cross_entropy", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is "
            "deprecated. Please ensure they have the same size."
        )
    x = input._data
    if x.size and not ((x >= 0) & (x <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    _no_grad_for("binary_cross_entropy", weight=weight)
    if weight is not None:
        weight = weight.expand(input.shape)
    return BinaryCrossEntropy.apply(input, target.to(input.dtype), weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """``binary_cross_entropy(sigmoid(input), target)`` computed from the logits, without overflow.

    PyTorch's arrangement (see ``nn/ops/reduced_loss.py``); ``pos_weight``
    (one per class, the last dimension) weighs the positive targets.
    """
    if (type(input) not in _TENSORS or type(target) not in _TENSORS
            or type(weight) not in _TENSORS_OR_NONE or type(pos_weight) not in _TENSORS_OR_NONE):
        _check_tensors("binary_cross_entropy_with_logits", input=input, target=target, weight=weight,
                       pos_weight=pos_weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _no_grad_for("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def _no_grad_for(fn: str, **tensors: Tensor | None) -> None:
    """Loss weights are constants in PyTorch: a weight that requires grad is refused, with its error."""
    for name, t in tensors.items():
        if t is not None and t.requires_grad:
            raise RuntimeError(
                f"The function '{fn}' is not differentiable with respect to argument '{name}'. "
                "This input cannot have requires_grad True."
            )


# -- arguments that are not tensors ---------------------------------------------
def _check_tensors(fn: str, **arguments) -> None:
    """PyTorch's TypeError for an argument of the function ``fn`` that is not a tensor (``check_tensor``),
    named and numbered as in its signature; None passes where the annotation allows it (``Tensor | None``).

    The slow path behind the guard at the top of each function, so it may take its time.
    """
    parameters = inspect.signature(globals()[fn]).parameters.values()
    for position, parameter in enumerate(parameters, start=1):
        if parameter.name in arguments:
            value = arguments[parameter.name]
            if value is not None or "None" not in str(parameter.annotation):
                check_tensor(fn, parameter.name, position, value)
