"""``minigrad.nn.functional``: the layers and losses as plain functions (``import ... as F``).

A Module such as ``Linear`` only stores its parameters and calls the
function here; the function does the computation. Most are a line or two of
tensor operations, so autograd differentiates them (to any order) with no
extra code. A few have a Function of their own in ``minigrad/nn/ops``:
``conv2d`` and ``max_pool2d`` (Numba kernels; ``conv1d`` and ``max_pool1d`` run
them over a height of 1, as PyTorch does; ``conv_transpose2d`` runs conv2d's kernels
the other way round, and ``unfold``/``fold`` are conv2d/conv_transpose2d with one-hot
filters), ``cross_entropy`` and
``linear`` (fused: one node instead of several, for speed), ``gelu`` (a Numba
kernel), ``softplus`` (overflow-free), and ``nll_loss``, ``mse_loss``,
``binary_cross_entropy`` (PyTorch's clamps at 0 and 1) and
``binary_cross_entropy_with_logits``: one node each, reduction included, named
as in PyTorch.

What minigrad leaves out, compared with ``torch.nn.functional``: ``scale_grad_by_freq``
and ``sparse`` in embedding and embedding_bag; interpolate's modes other than nearest, linear and
bilinear. The ``inplace=True`` forms of the
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
from collections.abc import Callable

import numpy as np

from minigrad.autograd.grad_mode import no_grad
from minigrad.random import generator
from minigrad.dtypes import bool_, from_numpy_dtype, int32, int64, scalar_type_name
from minigrad.functional_ops import broadcast_tensors, cat, where, write_out
from minigrad.nn.ops.activation import (
    Elu, EluInplace, Gelu, GeluTanh, LeakyRelu, LeakyReluInplace, Silu, Softplus, _check_float,
)
from minigrad.nn.ops.binary_cross_entropy import BinaryCrossEntropy
from minigrad.nn.ops.conv import (
    AdaptiveMaxPool2d, Conv2d, ConvTranspose2d, MaxPool2d, adaptive_bins, adaptive_windows, pool_out_size, pool_windows,
)
from minigrad.nn.ops.ctc import CtcLoss
from minigrad.nn.ops.linear_map import (
    AdaptiveAvgPool2d, AdaptiveAvgPool3d, AvgPool2d, AvgPool3d, ChannelShuffle, Col2Im, ConstantPadNd, Embedding,
    Im2Col, MaxUnpool, PixelShuffle, PixelUnshuffle, ReflectionPad, ReplicationPad, UpsampleBicubic2d,
    UpsampleBicubic2dAa, UpsampleBilinear2d, UpsampleBilinear2dAa, UpsampleLanczos2dAa, UpsampleLinear1d,
    UpsampleNearest, UpsampleNearestExact, UpsampleTrilinear3d,
)
from minigrad.nn.ops.linear import Linear as FusedLinear, LinearNoBias as FusedLinearNoBias, fits_fused_linear
from minigrad.nn.ops.loss import CrossEntropy
from minigrad.nn.ops.normalization import NativeBatchNorm, NativeGroupNorm, NativeLayerNorm, batch_statistics
from minigrad.nn.ops.reduced_loss import BinaryCrossEntropyWithLogits, HuberLoss, MseLoss, NllLoss, NllLoss2d, SmoothL1Loss
from minigrad.nn.parameter import Parameter
from minigrad.ops.broadcast import integer, number
from minigrad.ops.elementwise import DivScalar
from minigrad.ops.registry import tensor_method
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
    _check_float(input, "prelu")
    slope = weight.reshape(()) if count == 1 else weight.reshape([1, count] + [1] * (input.ndim - 2))
    with np.errstate(invalid="ignore"):
        positive = Tensor._wrap(input._data > 0)
    return where(positive, input, slope * where(positive, 0.0, input))  # (0, not x: no inf * 0 in the slope's grad)


# x.hardshrink(lambd), x.prelu(weight), minigrad.hardshrink(x) and minigrad.prelu(x, weight), as in PyTorch
@tensor_method("hardshrink", top_level=True)
def _hardshrink_method(self, lambd: float = 0.5) -> Tensor:
    return hardshrink(self, number(lambd, "lambd"))


@tensor_method("prelu", top_level=True, out=False)
def _prelu_method(self, weight: Tensor) -> Tensor:
    return prelu(self, weight)


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


# PyTorch's messages for a size list of the wrong length (templates of fn, name, value, size and n)
_CONV_LENGTH = ("expected {name} to be a single integer value or a list of {n} values to match the convolution "
                "dimensions, but got {name}={value}")
_POOL2D_LENGTH = "{fn}: {name} must either be a single int, or a tuple of two ints"
_POOL1D_LENGTH = "{fn}() argument '{name}' should contain one int (got {size})"
_MAX_POOL1D_LENGTH = "{fn}() {name} must be an int, list of ints or tuple of ints of size 1 but got size {size}"


def _ntuple(fn: str, name: str, value, n: int, wrong_length: str) -> tuple:
    """A size given once for all ``n`` spatial dimensions or one per dimension, like PyTorch's int lists:
    ``3`` or ``(3,)`` -> (3, 3) for n = 2. Anything but ints is a TypeError; another length a RuntimeError,
    with PyTorch's message (one of the templates above)."""
    if type(value) is int or isinstance(value, np.integer):
        return (int(value),) * n
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, (int, np.integer)) for v in value):
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, but got {value!r}")
    if len(value) == 1:
        return (int(value[0]),) * n
    if len(value) != n:
        raise RuntimeError(wrong_length.format(fn=fn, name=name, value=list(value), size=len(value), n=n))
    return tuple(int(v) for v in value)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """1-D convolution of (N, C, L) or unbatched (C, L) ``input`` with (out_channels, C / groups, k) ``weight``.

    The conv2d Function over a height of 1: one ``ConvolutionBackward0`` node, as PyTorch's.
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv1d", input=input, weight=weight, bias=bias)
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-D convolution of (N, C, H, W) or unbatched (C, H, W) ``input`` with (out_channels, C / groups, kH, kW)
    ``weight``.

    ``padding`` is a size, a pair, "valid" (none) or "same" (the output as long as the input; stride 1).
    ``dilation`` spaces the kernel's taps; ``groups`` splits the channels into that many independent
    convolutions. Numba kernels forward and backward, differentiable to any order (``minigrad/nn/ops/conv.py``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv2d", input=input, weight=weight, bias=bias)
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def _convolution(fn: str, n: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation,
                 groups: int) -> Tensor:
    """conv1d and conv2d over ``n`` spatial dimensions, with PyTorch's checks and messages."""
    shape, weight_shape = input._data.shape, weight._data.shape  # (tuples: read once, this runs per call)
    if len(shape) not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {fn}, but got input of "
                           f"size: {list(input.shape)}")
    if len(shape) == n + 1:  # unbatched: a batch of one, and PyTorch's node on top is the squeeze
        return _convolution(fn, n, input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._data.dtype != input._data.dtype:
            raise RuntimeError(f"Input type ({input.dtype}) and {name} type ({t.dtype}) should be the same")
    stride = _ntuple(fn, "stride", stride, n, _CONV_LENGTH)
    dilation = _ntuple(fn, "dilation", dilation, n, _CONV_LENGTH)
    if len(weight_shape) != len(shape):
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if isinstance(padding, str):
        input, padding = _string_padding(input, weight, padding, stride, dilation)
        shape = input._data.shape
    else:
        padding = _ntuple(fn, "padding", padding, n, _CONV_LENGTH)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError("non-positive dilation is not supported")
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    out_channels, channels = weight_shape[0], shape[1]
    if out_channels % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{list(weight.shape)}] instead")
    if weight_shape[1] * groups != channels:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got {channels} "
                           f"channels instead")
    if bias is not None and bias._data.shape != (out_channels,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")
    for size, p, d, k in zip(shape[2:], padding, dilation, weight_shape[2:]):
        if d * (k - 1) + 1 > size + 2 * p:
            padded = " x ".join(str(size + 2 * p) for size, p in zip(input.shape[2:], padding))
            spans = " x ".join(str(d * (k - 1) + 1) for d, k in zip(dilation, weight.shape[2:]))
            raise RuntimeError(f"Calculated padded input size per channel: ({padded}). Kernel size: ({spans}). "
                               "Kernel size can't be greater than actual input size")
    if n == 1:  # the conv2d Function over a height of 1
        stride, padding, dilation = (1, *stride), (0, *padding), (1, *dilation)
    if n == 3:
        return _planes_convolution(input, weight, bias, stride, padding, dilation, groups)
    return Conv2d.apply(input, weight, bias, stride, padding, dilation, groups)


def _string_padding(input: Tensor, weight: Tensor, padding: str, stride: tuple, dilation: tuple) -> tuple:
    """padding="valid" is none; "same" pads d * (k - 1) in all, half on each side. When that is odd, PyTorch
    pads the input by the extra one on the right first (a ``ConstantPadNdBackward0`` under the convolution)."""
    if padding == "valid":
        return input, (0,) * len(stride)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if max(stride) != 1:
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    if any(total % 2 for total in totals):
        input = pad(input, [amount for total in reversed(totals) for amount in (0, total % 2)])
    return input, tuple(total // 2 for total in totals)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transposed 1-D convolution of (N, C, L) or unbatched (C, L) ``input`` with (C, out_channels / groups, k)
    ``weight``: conv1d's gradient with respect to its input (see ``conv_transpose2d``)."""
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv_transpose1d", input=input, weight=weight, bias=bias)
    return _transposed_convolution("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                                   dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transposed 2-D convolution of (N, C, H, W) or unbatched (C, H, W) ``input`` with
    (C, out_channels / groups, kH, kW) ``weight``: conv2d's gradient with respect to its input.

    It scatters each input value, times the kernel, onto a ``stride`` times larger output (an upsampling
    a network learns), undoing a conv2d's shape: ``(H - 1) * stride - 2 * padding + dilation * (kH - 1) + 1
    + output_padding``. Since a strided conv2d maps several sizes to one, ``output_padding`` (smaller than
    stride or dilation) picks the larger ones. Runs on conv2d's kernels (``minigrad/nn/ops/conv.py``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv_transpose2d", input=input, weight=weight, bias=bias)
    return _transposed_convolution("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                                   dilation)


def _transposed_convolution(fn: str, n: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding,
                            output_padding, groups: int, dilation) -> Tensor:
    """conv_transpose1d and conv_transpose2d over ``n`` spatial dimensions, with PyTorch's checks and messages."""
    shape, weight_shape = input._data.shape, weight._data.shape
    if len(shape) not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {fn}, but got input of "
                           f"size: {list(input.shape)}")
    if len(shape) == n + 1:  # unbatched: a batch of one, and PyTorch's node on top is the squeeze
        return _transposed_convolution(fn, n, input.unsqueeze(0), weight, bias, stride, padding, output_padding,
                                       groups, dilation).squeeze(0)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._data.dtype != input._data.dtype:
            raise RuntimeError(f"Input type ({input.dtype}) and {name} type ({t.dtype}) should be the same")
    stride, padding, output_padding, dilation = (_ntuple(fn, name, value, n, _CONV_LENGTH) for name, value in (
        ("stride", stride), ("padding", padding), ("output_padding", output_padding), ("dilation", dilation)))
    if len(weight_shape) != len(shape):
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    for name, values, low in (("stride", stride, 1), ("dilation", dilation, 1), ("padding", padding, 0),
                              ("output_padding", output_padding, 0), ("groups", (groups,), 1)):
        if min(values) < low:
            raise RuntimeError(f"{'non-positive' if low else 'negative'} {name} is not supported")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                           f"output_padding={list(output_padding)}, stride={list(stride)}, dilation={list(dilation)}: "
                           "pass output_size to the module, or a smaller output_padding")
    in_channels, channels = weight_shape[0], shape[1]
    if in_channels % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size [{list(weight.shape)}] instead")
    if in_channels != channels:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {in_channels} channels, but got {channels} channels instead")
    out_channels = weight_shape[1] * groups
    if bias is not None and bias._data.shape != (out_channels,):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size {list(bias.shape)} "
                           "instead")
    out_size = tuple((size - 1) * s - 2 * p + d * (k - 1) + 1 + op for size, s, p, d, k, op in
                     zip(shape[2:], stride, padding, dilation, weight_shape[2:], output_padding))
    if min(out_size) <= 0:
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, shape[2:]))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, out_size))}). Output size is too small")
    if n == 1:  # the conv_transpose2d Function over a height of 1
        stride, padding, dilation = (1, *stride), (0, *padding), (1, *dilation)
    if n == 3:
        return _planes_transposed_convolution(input, weight, bias, stride, padding, dilation, groups, out_size)
    return ConvTranspose2d.apply(input, weight, bias, (stride, padding, dilation, groups), out_size)


# PyTorch's message for a size of unfold and fold that is not one int or two (its int[2] arguments)
_BLOCK_LENGTH = "It is expected {name} equals to {n}, but got size {size}"


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """The sliding blocks of (N, C, H, W) or (C, H, W) ``input`` as columns (im2col): (N, C * kH * kW, L),
    column l holding the cells of the l-th window a conv2d with these sizes sees, channel by channel.

    A conv2d is then one matrix product, ``weight.view(O, -1) @ unfold(x, ...)``: how minigrad's kernel
    computes it, and what unfold runs on (``_im2col``). One ``Im2ColBackward0`` node, as in PyTorch.
    """
    if type(input) not in _TENSORS:
        _check_tensors("unfold", input=input)
    kernel, dilation, padding, stride = _block_sizes("unfold", kernel_size=kernel_size, dilation=dilation,
                                                     padding=padding, stride=stride)
    shape = tuple(input.shape)
    if len(shape) < 3:
        raise IndexError(f"Dimension out of range: unfold takes a 3D (C, H, W) or 4D (N, C, H, W) input, but got "
                         f"input of size {list(shape)}")
    if len(shape) > 4 or 0 in shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    blocks = _block_counts(shape[-2:], kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size {shape[-2:]}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, calculated shape of the array of sliding blocks as {blocks}, but its "
                           "components must be at least one.")
    im2col = lambda t: _im2col(t, kernel, dilation, padding, stride)  # noqa: E731
    return Im2Col.apply(input, im2col, im2col)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """unfold's transpose (col2im): (N, C * kH * kW, L) or (C * kH * kW, L) columns -> (N, C, *output_size),
    each column's cells added back where unfold took them from, overlapping ones summed.

    So fold(unfold(x)) is x times the number of blocks covering each cell. One ``Col2ImBackward0`` node.
    """
    if type(input) not in _TENSORS:
        _check_tensors("fold", input=input)
    output_size, kernel, dilation, padding, stride = _block_sizes(
        "fold", output_size=output_size, kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    shape = tuple(input.shape)
    if len(shape) not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(shape)}")
    if shape[-2] % math.prod(kernel):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={shape[-2]} and kernel_size={kernel}.")
    blocks = _block_counts(output_size, kernel, dilation, padding, stride)
    sizes = f"Given output_size={output_size}, kernel_size={kernel}, dilation={dilation}, padding={padding}, " \
            f"stride={stride}"
    if shape[-1] != math.prod(blocks):
        raise RuntimeError(f"{sizes}, expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {math.prod(blocks)}, but got input.size(2)={shape[-1]}.")
    if min(blocks) < 1:
        raise RuntimeError(f"{sizes}, calculated shape of the array of sliding blocks as {blocks}, which is too small "
                           "(non-positive)")
    col2im = lambda t: _col2im(t, output_size, blocks, kernel, dilation, padding, stride)  # noqa: E731
    return Col2Im.apply(input, col2im, col2im)


def _block_sizes(fn: str, **sizes) -> list[tuple[int, int]]:
    """unfold's and fold's sizes as pairs (one int, or exactly two), checked in PyTorch's order."""
    pairs = {}
    for name, value in sizes.items():
        if isinstance(value, (tuple, list)) and len(value) == 1:  # (where _ntuple would repeat it)
            raise RuntimeError(_BLOCK_LENGTH.format(name=name, n=2, size=1))
        pairs[name] = _ntuple(fn, name, value, 2, _BLOCK_LENGTH)
    for name, words, low in (("kernel_size", "kernel size should be greater than zero", 1),
                             ("stride", "stride should be greater than zero", 1),
                             ("dilation", "dilation should be greater than zero", 1),
                             ("padding", "padding should be non-negative", 0)):
        if min(pairs[name]) < low:
            prefix = {"kernel_size": "kernel", "padding": "pad"}.get(name, name)
            raise RuntimeError(f"{words}, but got {prefix}_height: {pairs[name][0]} {prefix}_width: {pairs[name][1]}")
    return list(pairs.values())


def _block_counts(size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> tuple:
    """How many blocks fit along each dimension: a conv2d's output size."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride))


def _one_hot_filters(kernel: tuple, like: Tensor) -> Tensor:
    """kH * kW filters of one channel, filter (i, j) 1 at (i, j) only: a conv2d with them copies cell (i, j) of
    every window to output channel i * kW + j."""
    taps = math.prod(kernel)
    return Tensor._wrap(np.eye(taps, dtype=like._data.dtype).reshape(taps, 1, *kernel))


def _im2col(x: Tensor, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> Tensor:
    """unfold as a conv2d of each channel, on its own, with the one-hot filters."""
    *lead, h, w = x.shape
    planes = x.reshape(math.prod(lead), 1, h, w)
    y = conv2d(planes, _one_hot_filters(kernel, x), None, stride, padding, dilation)  # (N * C, kH * kW, *blocks)
    return y.reshape(*lead[:-1], lead[-1] * y.shape[1], y.shape[2] * y.shape[3])


def _col2im(cols: Tensor, output_size: tuple, blocks: tuple, kernel: tuple, dilation: tuple, padding: tuple,
            stride: tuple) -> Tensor:
    """fold as the transpose of ``_im2col``: a conv_transpose2d of each channel's columns with the one-hot
    filters, output_padding picking output_size among the sizes with this many blocks."""
    *lead, rows, _ = cols.shape
    taps = math.prod(kernel)
    planes = cols.reshape(math.prod(lead) * (rows // taps), taps, *blocks)
    output_padding = [size - ((b - 1) * s - 2 * p + d * (k - 1) + 1)
                      for size, b, s, p, d, k in zip(output_size, blocks, stride, padding, dilation, kernel)]
    y = conv_transpose2d(planes, _one_hot_filters(kernel, cols), None, stride, padding, output_padding, 1, dilation)
    return y.reshape(*lead, rows // taps, *output_size)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p).

    The scaling ("inverted dropout") keeps each element's expected value, so
    nothing needs rescaling at evaluation time, when dropout is the identity.
    The mask is drawn from minigrad's generator (``minigrad.manual_seed``).
    """
    if type(input) not in _TENSORS:
        _check_tensors("dropout", input=input)
    _check_probability(p)
    return _dropout(input, p, training, inplace, feature=False)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each channel of (N, C, L) or unbatched (C, L) ``input``, whole, with probability ``p``; scale the
    rest by 1 / (1 - p). Neighbouring positions carry much the same signal, so only dropping a whole
    channel takes it away (``nn.Dropout1d``)."""
    if type(input) not in _TENSORS:
        _check_tensors("dropout1d", input=input)
    _check_probability(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 2:  # unbatched: a batch of one (which in place writes through to input)
        out = _dropout(input.unsqueeze(0), p, training, inplace, feature=True)
        return input if inplace else out.squeeze(0)
    return _dropout(input, p, training, inplace, feature=True)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each channel of (N, C, H, W) ``input``, a whole feature map, with probability ``p``; scale the rest
    by 1 / (1 - p) (see dropout1d for why). As in PyTorch, a 3-D input is taken as (N, C, L), with a warning."""
    if type(input) not in _TENSORS:
        _check_tensors("dropout2d", input=input)
    _check_probability(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
                      "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "Use dropout1d for that, or unsqueeze an unbatched (C, H, W) image to (1, C, H, W).",
                      stacklevel=2)
    return _dropout(input, p, training, inplace, feature=True)


def _check_probability(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    """input times a random mask: 0 with probability p, 1 / (1 - p) otherwise. One draw per element, or with
    ``feature``, per (sample, channel): a mask of shape (N, C, 1, ...) that broadcasts over the rest."""
    if not training or p == 0.0:
        return input
    dtype = input._data.dtype
    if p == 1.0:
        scale = Tensor._wrap(np.zeros((), dtype))
    else:
        shape = input.shape
        if feature:
            if input.ndim < 2:
                raise RuntimeError("Feature dropout requires at least 2 dimensions in the input: a batch and a "
                                   "channel dimension")
            shape = (*shape[:2], *[1] * (input.ndim - 2))
        keep = generator().random(shape) >= p  # True with probability 1 - p
        scale = Tensor._wrap(keep.astype(dtype) / dtype.type(1.0 - p))
    return input.mul_(scale) if inplace else input * scale


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r), r = upscale_factor: each r^2 channels of a pixel become an
    r x r block of pixels (channel i * r + j at offset (i, j)). One ``PixelShuffleBackward0`` node."""
    if type(input) not in _TENSORS:
        _check_tensors("pixel_shuffle", input=input)
    r = integer(upscale_factor, "upscale_factor")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    b = len(batch)

    def shuffle(t: Tensor) -> Tensor:
        blocks = t.reshape(*batch, c // (r * r), r, r, h, w).permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
        return blocks.reshape(*batch, c // (r * r), h * r, w * r)
    return PixelShuffle.apply(input, shuffle, shuffle)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W): pixel_shuffle's inverse, each r x r block of pixels
    becoming r^2 channels. One ``PixelUnshuffleBackward0`` node."""
    if type(input) not in _TENSORS:
        _check_tensors("pixel_unshuffle", input=input)
    r = integer(downscale_factor, "downscale_factor")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    b = len(batch)

    def unshuffle(t: Tensor) -> Tensor:
        blocks = t.reshape(*batch, c, h // r, r, w // r, r).permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
        return blocks.reshape(*batch, c * r * r, h // r, w // r)
    return PixelUnshuffle.apply(input, unshuffle, unshuffle)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, g * c, *) -> channel i * g + j of the output is channel j * c + i of the input: the g groups'
    channels interleaved (ShuffleNet), so that a following grouped conv mixes them. Dimension 1 is the
    channels, in an unbatched input too (as in PyTorch). One ``ChannelShuffleBackward0`` node."""
    if type(input) not in _TENSORS:
        _check_tensors("channel_shuffle", input=input)
    g = integer(groups, "groups")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    n, c, *rest = input.shape
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {g} groups.")

    def shuffle(t: Tensor) -> Tensor:
        return t.reshape(n, g, c // g, *rest).transpose(1, 2).reshape(n, c, *rest)
    return ChannelShuffle.apply(input, shuffle, shuffle)


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


def _pool_geometry(fn: str, input: Tensor, kernel_size, stride, padding, dilation, ceil_mode: bool) -> tuple:
    """(kernel, stride, padding, dilation, output (H, W)) of a 2-D pool, as pairs, with PyTorch's checks."""
    kernel = _ntuple(fn, "kernel_size", kernel_size, 2, _POOL2D_LENGTH)
    strides = kernel if stride in (None, [], ()) else _ntuple(fn, "stride", stride, 2, _POOL2D_LENGTH)
    pads = _ntuple(fn, "padding", padding, 2, _POOL2D_LENGTH)
    dilations = _ntuple(fn, "dilation", dilation, 2, _POOL2D_LENGTH)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, got {input.ndim}D")
    if min(strides) <= 0:
        raise RuntimeError("stride should not be zero" if 0 in strides else
                           f"stride should be greater than zero, but got dH: {strides[0]} dW: {strides[1]}")
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}")
    if min(dilations) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dilations[0]} "
                           f"dilationW: {dilations[1]}")
    for k, p, d in zip(kernel, pads, dilations):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    if any(p > k // 2 for k, p in zip(kernel, pads)):  # (PyTorch checks both halves: this one ignores dilation)
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pads[1]}, "
                           f"padH = {pads[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
    out_hw = tuple(pool_out_size(n, k, s, p, ceil_mode, d)
                   for n, k, s, p, d in zip(input.shape[-2:], kernel, strides, pads, dilations))
    if min(out_hw) < 1:
        sizes = "x".join(map(str, input.shape[-3:])), "x".join(map(str, (input.shape[-3],) + out_hw))
        raise RuntimeError(f"Given input size: ({sizes[0]}). Calculated output size: ({sizes[1]}). "
                           f"Output size is too small")
    return kernel, strides, pads, dilations, out_hw


def _single(fn: str, name: str, value, wrong_length: str = _POOL1D_LENGTH) -> int:
    """A 1-D pool's size: an int or a sequence of one."""
    return _ntuple(fn, name, value, 1, wrong_length)[0]


def _check_1d_pool_input(fn: str, input: Tensor) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {fn})")


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The max of each window of (N, C, L) or (C, L) ``input``: ``max_pool2d`` over a height of 1, as in PyTorch
    (whose node on top is the squeeze); the indices, if returned, are positions along L.

    max_pool1d's own checks come first, with its messages, as in PyTorch.
    """
    if type(input) not in _TENSORS:
        _check_tensors("max_pool1d", input=input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    k = _single("max_pool1d", "kernel_size", kernel_size, _MAX_POOL1D_LENGTH)
    s = k if stride in (None, [], ()) else _single("max_pool1d", "stride", stride, _MAX_POOL1D_LENGTH)
    p = _single("max_pool1d", "padding", padding, _MAX_POOL1D_LENGTH)
    d = _single("max_pool1d", "dilation", dilation, _MAX_POOL1D_LENGTH)
    for name, value, bad, needs in (("kernel_size", k, k <= 0, "greater than zero"),
                                    ("stride", s, s <= 0, "greater than zero"), ("padding", p, p < 0, "non-negative"),
                                    ("dilation", d, d <= 0, "greater than zero")):
        if bad:
            raise RuntimeError(f"max_pool1d() {name} must be {needs}, but got {value}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    out = pool_out_size(input.shape[-1], k, s, p, ceil_mode, d)
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    out = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    return tuple(t.squeeze(-2) for t in out) if return_indices else out.squeeze(-2)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The max of each kernel_size window of (N, C, H, W) or (C, H, W) ``input``; ``stride`` defaults to
    ``kernel_size``.

    Padding counts as -inf (it never wins); ``dilation`` spaces a window's cells; with ``ceil_mode`` a
    last, partial window is kept. ``return_indices``: also where each max came from (flat in H*W).
    One node, differentiable to any order.
    """
    if type(input) not in _TENSORS:
        _check_tensors("max_pool2d", input=input)
    kernel, strides, pads, dilations, _ = _pool_geometry("max_pool2d", input, kernel_size, stride, padding,
                                                         dilation, ceil_mode)
    return MaxPool2d.apply(input, kernel, strides, pads, dilations, ceil_mode, return_indices)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each window of (N, C, L) or (C, L) ``input``: ``avg_pool2d`` over a height of 1, as in PyTorch."""
    if type(input) not in _TENSORS:
        _check_tensors("avg_pool1d", input=input)
    _check_1d_pool_input("avg_pool1d", input)
    k = _single("avg_pool1d", "kernel_size", kernel_size)
    s = k if stride in (None, [], ()) else _single("avg_pool1d", "stride", stride)
    p = _single("avg_pool1d", "padding", padding)
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad).squeeze(-2)


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
    kernel, strides, pads, _, out_hw = _pool_geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    h, w = input.shape[-2:]
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


def _output_sizes(fn: str, input: Tensor, output_size, n: int) -> tuple:
    """An adaptive pool's ``output_size`` for ``n`` dimensions: an int for all, or one per dimension with
    None keeping the input's size there; PyTorch's checks of its form."""
    if isinstance(output_size, (int, np.integer)):
        return (int(output_size),) * n
    sizes = tuple(output_size)
    if input.ndim <= len(sizes):
        raise ValueError(f"Input dimension should be at least {len(sizes) + 1}")
    sizes = tuple(size if o is None else o for o, size in zip(sizes, input.shape[-len(sizes):]))
    if not all(isinstance(o, (int, np.integer)) for o in sizes):
        raise TypeError(f"{fn}(): argument 'output_size' must be tuple of ints, but got {output_size!r}")
    return sizes


def _adaptive_sizes(fn: str, input: Tensor, output_size) -> tuple[int, int]:
    """An adaptive 2-D pool's output (H, W): ``output_size`` an int or a pair, None keeping that dimension;
    PyTorch's checks."""
    sizes = _output_sizes(fn, input, output_size, 2)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{fn}(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    if len(sizes) != 2:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be 2")
    if min(sizes) < 0:
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{sizes[0]}, {sizes[1]}}}")
    for dim in (input.ndim - 2, input.ndim - 1):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {dim} being empty")
    return int(sizes[0]), int(sizes[1])


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, L) or (C, L) ``input`` down to ``output_size`` cells: adaptive_avg_pool2d over a height of 1."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_avg_pool1d", input=input)
    _check_1d_pool_input("adaptive_avg_pool1d", input)
    size = _single("adaptive_avg_pool1d", "output_size", output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, H, W) or (C, H, W) ``input`` down to ``output_size`` cells, whatever H and W are.

    ``output_size`` is an int or a pair; None in the pair keeps that dimension.
    ``adaptive_avg_pool2d(x, 1)`` is the global average pool of a CNN's head.
    """
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_avg_pool2d", input=input)
    oh, ow = _adaptive_sizes("adaptive_avg_pool2d", input, output_size)
    h, w = input.shape[-2:]
    if (oh, ow) == (1, 1):  # the global average: PyTorch's node is a mean's too
        return input.mean((-2, -1), keepdim=True)

    def pooled(t: Tensor) -> Tensor:
        rows = [t[..., a:b, :].mean(-2, keepdim=True) for a, b in adaptive_bins(h, oh)] or [t[..., :0, :]]
        x = cat(rows, -2) if len(rows) > 1 else rows[0]
        cols = [x[..., a:b].mean(-1, keepdim=True) for a, b in adaptive_bins(w, ow)] or [x[..., :0]]
        return cat(cols, -1) if len(cols) > 1 else cols[0]
    return AdaptiveAvgPool2d.apply(input, pooled, pooled)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """The max of each of ``output_size`` bins of (N, C, L) or (C, L) ``input``: ``adaptive_max_pool2d`` over a
    height of 1."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool1d", input=input)
    _check_1d_pool_input("adaptive_max_pool1d", input)
    size = _single("adaptive_max_pool1d", "output_size", output_size)
    out = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices)
    return tuple(t.squeeze(-2) for t in out) if return_indices else out.squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """The max of each of PyTorch's adaptive bins (as in ``adaptive_avg_pool2d``) of (N, C, H, W) or (C, H, W)
    ``input``; ``return_indices``: also where each max came from (flat in H*W). One node."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool2d", input=input)
    return AdaptiveMaxPool2d.apply(input, _adaptive_sizes("adaptive_max_pool2d", input, output_size), return_indices)


def _pad_indices(mode: str, n: int, left: int, right: int, dim: int, shape: tuple) -> np.ndarray:
    """The source index of every output position along one dimension, for the non-constant modes."""
    positions = np.arange(-left, n + right)
    if mode == "replicate":
        return np.clip(positions, 0, n - 1)
    if mode == "circular":  # (pad checked that it wraps around at most once)
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
    dims = len(pad) // 2
    sizes = [(input.shape[-1 - i], pad[2 * i], pad[2 * i + 1]) for i in range(dims)]  # (last dimension first)
    if mode == "constant" and any(n + min(left, 0) + min(right, 0) < 0 for n, left, right in sizes):
        raise RuntimeError(f"negative padding {list(pad)} crops more than input of size {list(input.shape)} has")
    if mode != "constant" and not (dims in (1, 2, 3) and input.ndim in (dims + 1, dims + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor: {mode} padding of the "
            f"last 1, 2 or 3 dimensions needs an input with one or two more (a batch and a channel dimension)"
        )
    if mode == "circular":  # (PyTorch's node is a CopySlices here: left as the composition)
        if any(left > n or right > n for n, left, right in sizes):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if any(n + left + right < 0 for n, left, right in sizes):
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        return _padded(input, pad, mode, value)
    if mode != "constant" and all(n + left + right < 1 for n, left, right in sizes):  # (PyTorch's check: all)
        raise RuntimeError(f"input of size {list(input.shape)} is too small for padding {list(pad)}: "
                           f"the padded dimensions would be {[n + left + right for n, left, right in sizes][::-1]}")
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


# -- interpolation ----------------------------------------------------------------
_UPSAMPLE_NODES = {**{(n + 2, "nearest"): UpsampleNearest[n] for n in (1, 2, 3)},
                   **{(n + 2, "nearest-exact"): UpsampleNearestExact[n] for n in (1, 2, 3)},
                   (3, "linear"): UpsampleLinear1d, (4, "bilinear"): UpsampleBilinear2d,
                   (5, "trilinear"): UpsampleTrilinear3d, (4, "bicubic"): UpsampleBicubic2d}
_ANTIALIASED_NODES = {"bilinear": UpsampleBilinear2dAa, "bicubic": UpsampleBicubic2dAa, "lanczos": UpsampleLanczos2dAa}
_TORCH_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the last dimensions of (N, C, L), (N, C, H, W) or (N, C, D, H, W) ``input`` to ``size``, or by
    ``scale_factor``.

    ``mode="nearest"`` copies, for output cell i, input cell floor(i * scale) (scale = 1 / scale_factor,
    or in / out), rounded as PyTorch rounds it, so the same cells are picked; "nearest-exact" takes
    floor((i + 0.5) * scale), the cell whose centre is nearest, which "nearest" misses by half a cell.
    ``"linear"`` (3-D), ``"bilinear"`` (4-D) and ``"trilinear"`` (5-D) mix the two nearest cells along
    each dimension, "bicubic" (4-D) four, with Keys' cubic convolution weights (a = -0.75, PyTorch's);
    ``align_corners=True`` maps the corner cells' centres onto each other instead of the corners of the
    grid. "area" is ``adaptive_avg_pool``. ``antialias=True`` (4-D bilinear, bicubic, and "lanczos", which
    needs it) resamples as Pillow does: when shrinking, every input cell under the stretched filter counts,
    instead of aliasing (``_antialiased_weights``). One node each, named as PyTorch's.
    """
    if type(input) not in _TENSORS:
        _check_tensors("interpolate", input=input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dims = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dims:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor "
                    f"in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            if not all(isinstance(o, (int, np.integer)) for o in size):
                raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(o) for o in size]}")
        out = tuple(size) if isinstance(size, (list, tuple)) else (size,) * dims
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)) and len(scale_factor) != dims:
            raise ValueError(
                f"Input and scale_factor must have the same number of spatial dimensions, but got input with "
                f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                f"provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
        scales = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) else (scale_factor,) * dims
        # PyTorch's output size: the product, truncated; the factor itself still sets the scale below
        out = tuple(int(n * s) for n, s in zip(input.shape[2:], scales))
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor:
        if size is not None:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        scales = None  # the scale becomes in / out
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if mode == "area" and input.ndim in (3, 4, 5):
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dims - 1](input, out)
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    node = _ANTIALIASED_NODES.get(mode) if antialias else _UPSAMPLE_NODES.get((input.ndim, mode))
    if node is None:
        _refuse_interpolation(input.ndim, mode)
    if min(out) <= 0 or min(input.shape[2:]) <= 0:
        names = ("D", "H", "W")[-dims:]
        shown = [", ".join(f"{d}: {n}" for d, n in zip(names, sizes)) for sizes in (input.shape[2:], out)]
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({shown[0]}) and "
                           f"output ({shown[1]})")
    scales = scales or (None,) * dims
    if antialias:  # one (out, in) matrix per dimension
        rows, cols = (Tensor._wrap(_antialiased_weights(n, o, s, align_corners, mode).astype(input._data.dtype))
                      for n, o, s in zip(input.shape[2:], out, scales))
        cols = cols.transpose(0, 1)

        def resized(t: Tensor) -> Tensor:
            return rows.matmul(t).matmul(cols)
    elif mode in ("nearest", "nearest-exact"):
        small = dims == 2 and sum(out) <= 128
        sources = [_nearest_sources(n, o, s, input._data.dtype, small, mode == "nearest-exact")
                   for n, o, s in zip(input.shape[2:], out, scales)]

        def resized(t: Tensor) -> Tensor:
            for axis, index in enumerate(sources, start=2):
                t = t[(slice(None),) * axis + (index,)]
            return t
    elif mode == "bicubic":
        taps = [_cubic_sources(n, o, s, align_corners, input._data.dtype)
                for n, o, s in zip(input.shape[2:], out, scales)]

        def resized(t: Tensor) -> Tensor:
            for axis, (cells, weights) in enumerate(taps, start=2):
                trailing = (1,) * (t.ndim - axis - 1)
                mixed = None
                for index, weight in zip(cells, weights):
                    term = t[(slice(None),) * axis + (index,)] * Tensor._wrap(weight.reshape(-1, *trailing))
                    mixed = term if mixed is None else mixed + term
                t = mixed
            return t
    else:
        dtype = input._data.dtype
        mixes = [_linear_sources(n, o, s, align_corners, dtype) for n, o, s in zip(input.shape[2:], out, scales)]

        def resized(t: Tensor) -> Tensor:
            for axis, (low, high, w_low, w_high) in enumerate(mixes, start=2):
                trailing = (1,) * (t.ndim - axis - 1)
                near, far = (Tensor._wrap(w.reshape(-1, *trailing)) for w in (w_low, w_high))
                t = t[(slice(None),) * axis + (low,)] * near + t[(slice(None),) * axis + (high,)] * far
            return t
    return node.apply(input, resized, resized)


def _refuse_interpolation(ndim: int, mode: str) -> None:
    """PyTorch's NotImplementedError for a mode and a rank that do not go together, or a mode it does not have."""
    needs = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}
    if mode in needs and ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs {needs[mode]}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the "
                              f"modes: {_TORCH_MODES} (got {mode})")


def _antialiased_weights(size: int, out: int, scale: float | None, align_corners: bool, mode: str) -> np.ndarray:
    """The (out, size) matrix of PyTorch's antialiased resampling (_compute_weights_aa, Pillow's): output cell i
    averages the input cells within the filter's support around its centre, the filter (a triangle, Keys'
    cubic with a = -0.5, or Lanczos-3) stretched by the scale when shrinking, so that every input cell counts
    instead of only the nearest few; each row normalised to sum to 1."""
    if align_corners:
        step = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        step = 1.0 / scale if scale is not None and scale > 0 else size / out
    support = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[mode] * max(step, 1.0)
    stretch = 1.0 / step if step >= 1.0 else 1.0
    weights = np.zeros((out, size))
    for i in range(out):
        centre = step * (i + 0.5)
        low = max(int(centre - support + 0.5), 0)
        high = min(int(centre + support + 0.5), size)
        w = _antialias_filter(mode, (np.arange(low, high) - centre + 0.5) * stretch)
        weights[i, low:high] = w / w.sum() if w.sum() != 0 else w
    return weights


def _antialias_filter(mode: str, x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    if mode == "bilinear":
        return np.maximum(1 - x, 0)
    if mode == "bicubic":
        a = -0.5
        return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0))
    return np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0)  # Lanczos-3 (np.sinc is sin(pi x) / (pi x))


def _nearest_sources(size: int, out: int, scale: float | None, dtype: np.dtype, small: bool,
                     exact: bool = False) -> np.ndarray:
    """The input cell of each output cell, floor(i * scale) (``exact``: floor((i + 0.5) * scale)), exactly as
    PyTorch's CPU kernels pick it.

    They differ: for a 2-D output with H + W <= 128 (``small``) PyTorch's nearest_idx takes the
    scale in float32 and copies a size kept or doubled without it; otherwise the scale is in the
    input's dtype and i * scale is rounded to float32 before the floor (floorf).
    """
    cells = np.arange(out)
    if small and out in (size, 2 * size):
        return cells if out == size else cells >> 1
    arithmetic = np.dtype(np.float32) if small else dtype
    step = (arithmetic.type(1.0 / scale) if scale is not None and scale > 0
            else arithmetic.type(size) / arithmetic.type(out))
    positions = cells.astype(arithmetic) + arithmetic.type(0.5) if exact else cells.astype(arithmetic)
    source = (positions * step).astype(np.float32)
    return np.minimum(np.floor(source).astype(np.int64), size - 1)


def _cubic_sources(size: int, out: int, scale: float | None, align_corners: bool, dtype: np.dtype) -> tuple:
    """The four input cells of each output cell (clamped to the edges) and their weights: PyTorch's
    upsample_bicubic2d, Keys' cubic convolution with a = -0.75 at the distances 1 + t, t, 1 - t, 2 - t."""
    cells = np.arange(out).astype(dtype)
    if align_corners:
        ratio = dtype.type(size - 1) / dtype.type(out - 1) if out > 1 else dtype.type(0)
        source = ratio * cells
    else:  # (no clamp at 0, unlike linear)
        ratio = dtype.type(1.0 / scale) if scale is not None and scale > 0 else dtype.type(size) / dtype.type(out)
        source = ratio * (cells + dtype.type(0.5)) - dtype.type(0.5)
    low = np.floor(source)
    t = (source - low).astype(dtype)
    a = dtype.type(-0.75)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    index = low.astype(np.int64)
    return [np.clip(index + k - 1, 0, size - 1) for k in range(4)], [w.astype(dtype) for w in weights]


def _linear_sources(size: int, out: int, scale: float | None, align_corners: bool, dtype: np.dtype) -> tuple:
    """PyTorch's two input cells of each output cell and their weights (compute_source_index_and_lambda),
    in the input's dtype as its kernel computes them."""
    cells = np.arange(out)
    if out == size:
        return cells, cells, np.ones(out, dtype), np.zeros(out, dtype)
    if align_corners:
        ratio = dtype.type(size - 1) / dtype.type(out - 1) if out > 1 else dtype.type(0)
        source = ratio * cells.astype(dtype)
    else:
        ratio = dtype.type(1.0 / scale) if scale is not None and scale > 0 else dtype.type(size) / dtype.type(out)
        source = np.maximum(ratio * (cells.astype(dtype) + dtype.type(0.5)) - dtype.type(0.5), dtype.type(0))
    low = np.minimum(np.floor(source).astype(np.int64), size - 1)
    w_high = np.clip(source - low.astype(dtype), 0, 1).astype(dtype)
    return low, low + (low < size - 1), (dtype.type(1) - w_high).astype(dtype), w_high


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


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise each sample's channels in ``num_groups`` groups (each over its channels and every position),
    then scale and shift each channel by ``weight`` and ``bias``.

    Independent of the batch, like layer_norm (one group) and instance_norm (a group per channel), so it
    suits small batches. One node, ``NativeGroupNormBackward0`` (``nn/ops/normalization.py``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("group_norm", input=input, weight=weight, bias=bias)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c, spatial = input.shape[0], input.shape[1], input.shape[2:]
    size = [n * c // num_groups, num_groups, *spatial]  # PyTorch's check, its ZeroDivisionError for 0 groups too
    if size[0] * math.prod(spatial) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    grouped = (n, num_groups, c // num_groups, *spatial)
    dims = tuple(range(2, len(grouped)))
    view = (1, num_groups, c // num_groups) + (1,) * len(spatial)
    return NativeGroupNorm.apply(input, weight, bias, dims, view, eps, None, True, grouped)


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample on its own, over its positions (a style-transfer staple).

    Computed as PyTorch does: batch_norm of the input viewed as one sample with N * C channels, the
    per-channel weight, bias and running statistics repeated N times; the running statistics then
    take the mean of their N updated copies.
    """
    if (type(input) not in _TENSORS or type(running_mean) not in _TENSORS_OR_NONE
            or type(running_var) not in _TENSORS_OR_NONE or type(weight) not in _TENSORS_OR_NONE
            or type(bias) not in _TENSORS_OR_NONE):
        _check_tensors("instance_norm", input=input, running_mean=running_mean, running_var=running_var,
                       weight=weight, bias=bias)
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(input.shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    n, c = input.shape[:2]
    mean, var, w, b = (None if t is None else t.repeat(n) for t in (running_mean, running_var, weight, bias))
    out = batch_norm(input.reshape(1, n * c, *input.shape[2:]), mean, var, w, b, use_input_stats, momentum, eps)
    with no_grad():
        for running, copies in ((running_mean, mean), (running_var, var)):
            if running is not None:
                running.copy_(copies.view(n, c).mean(0))
    return out.view(input.shape)



def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the last ``len(normalized_shape)`` dimensions.

    LayerNorm without the centring (and without a bias): cheaper, and what LLaMA-style transformers use.
    ``eps`` defaults to the machine epsilon of the input's dtype, as in PyTorch. Composed of tensor operations.
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("rms_norm", input=input, weight=weight)
    if isinstance(normalized_shape, (int, np.integer)):
        raise TypeError(f"rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int; "
                        f"write ({normalized_shape},)")
    shape = tuple(normalized_shape)
    k = len(shape)
    if input.ndim < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input.ndim}")
    if tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*"
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    dtype = input._data.dtype
    if dtype.kind != "f":
        raise NotImplementedError(f'"rms_norm" not implemented for {scalar_type_name(dtype)!r}; convert the input '
                                  "with .float()")
    if eps is None:
        eps = float(np.finfo(dtype).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    out = input * (input.square().mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y_o = input1^T weight[o] input2 + bias_o over the last dimensions; the leading ones must match.

    weight is (out, in1, in2): one matrix per output unit. Computed as one matrix product of input1
    with all the matrices, then a product with input2 summed over in2.
    """
    if (type(input1) not in _TENSORS or type(input2) not in _TENSORS or type(weight) not in _TENSORS
            or type(bias) not in _TENSORS_OR_NONE):
        _check_tensors("bilinear", input1=input1, input2=input2, weight=weight, bias=bias)
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for dim in range(input1.ndim - 1):
        if input1.shape[dim] != input2.shape[dim]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {dim}: got "
                               f"{input1.shape[dim]} and {input2.shape[dim]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out_features, in1_features, in2_features), but got "
                           f"{weight.ndim}-D")
    out_features, in1, in2 = weight.shape
    for name, size, expected in (("input1", input1.shape[-1], in1), ("input2", input2.shape[-1], in2)):
        if size != expected:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got {size} but expected "
                               f"{expected}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_features):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} but expected "
                           f"{out_features}")
    dtypes = {t._data.dtype for t in (input1, input2, weight)}
    if len(dtypes) > 1:
        raise RuntimeError(f"bilinear(): all tensors must have the same dtype, got input1: {input1.dtype}, "
                           f"input2: {input2.dtype}, weight: {weight.dtype}; convert them with .to(dtype)")
    # (..., in1) @ (in1, out * in2) -> (..., out, in2), then times input2 summed over in2
    left = (input1 @ weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    out = (left.reshape(*input1.shape[:-1], out_features, in2) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias


# -- attention ----------------------------------------------------------------------
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, *, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value over the last two dimensions; the others broadcast.

    query is (..., L, E), key (..., S, E), value (..., S, Ev); ``scale`` defaults to 1/sqrt(E), which keeps
    the scores' spread independent of E. A bool ``attn_mask`` says which keys each query may look at (True:
    it may); a float one is added to the scores. ``is_causal`` lets query i see keys 0..i only (the upper-left
    triangle when L != S). A query that may see no key gets zeros (PyTorch's safe softmax), not NaN.
    ``enable_gqa`` shares each key/value head among a group of query heads (dimension -3). Dropout of the
    weights is always applied: pass ``dropout_p=0.0`` outside training. Composed of tensor operations.
    """
    if (type(query) not in _TENSORS or type(key) not in _TENSORS or type(value) not in _TENSORS
            or type(attn_mask) not in _TENSORS_OR_NONE):
        _check_tensors("scaled_dot_product_attention", query=query, key=key, value=value, attn_mask=attn_mask)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            f"scaled_dot_product_attention: query, key and value must be at least 2-D (..., length, features), "
            f"but got {query.ndim}-D, {key.ndim}-D and {value.ndim}-D tensors"
        )
    dtype = query._data.dtype
    if key._data.dtype != dtype or value._data.dtype != dtype:
        raise RuntimeError(
            f"scaled_dot_product_attention: query, key and value must have the same dtype, but got {query.dtype}, "
            f"{key.dtype} and {value.dtype}; convert them with .to(dtype)"
        )
    if dtype.kind != "f":
        raise RuntimeError(f"scaled_dot_product_attention: expected floating-point query, key and value, but got "
                           f"{scalar_type_name(dtype)}; convert them with .float()")
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError("scaled_dot_product_attention: an explicit attn_mask should not be set when "
                               "is_causal=True; pass one or the other")
        mask_dtype = attn_mask._data.dtype
        if mask_dtype not in (np.bool_, np.float32, dtype):
            raise RuntimeError(
                f"scaled_dot_product_attention: attn_mask must be bool, float32 or query's dtype ({query.dtype}), "
                f"but got {attn_mask.dtype}"
            )
    if dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if enable_gqa:
        key, value = _grouped_heads(query, key), _grouped_heads(query, value)
    scores = query @ key.transpose(-2, -1) * (1.0 / math.sqrt(query.shape[-1]) if scale is None else scale)
    if is_causal:
        attn_mask = Tensor._wrap(np.tril(np.ones((query.shape[-2], key.shape[-2]), bool)))
    if attn_mask is not None:
        if tuple(np.broadcast_shapes(scores.shape, attn_mask.shape)) != tuple(scores.shape):
            raise RuntimeError(
                f"scaled_dot_product_attention: attn_mask of shape {list(attn_mask.shape)} must broadcast to the "
                f"scores' shape {list(scores.shape)} (..., L, S) without enlarging it"
            )
        scores = where(attn_mask, scores, -math.inf) if attn_mask._data.dtype == np.bool_ else scores + attn_mask
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return weights @ value


def _grouped_heads(query: Tensor, kv: Tensor) -> Tensor:
    """Key or value with each of its heads (dimension -3) repeated for the group of query heads that share it."""
    if query.ndim < 3 or kv.ndim < 3:
        raise IndexError("scaled_dot_product_attention: enable_gqa needs a heads dimension (-3) in query, key and "
                         "value")
    heads, kv_heads = query.shape[-3], kv.shape[-3]
    if heads % kv_heads != 0:
        raise RuntimeError(f"scaled_dot_product_attention: the number of key/value heads ({kv_heads}) must divide "
                           f"the number of query heads ({heads}) with enable_gqa=True")
    return kv if kv_heads == heads else kv.repeat_interleave(heads // kv_heads, dim=-3)


def _safe_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last dimension, with 0 (not NaN) for a row of scores that are all -inf.

    Such a row is softmaxed as zeros and then zeroed, so its gradient is 0 too, not NaN."""
    empty = np.all(scores._data == -np.inf, axis=-1, keepdims=True)
    if not empty.any():
        return softmax(scores, -1)
    empty = Tensor._wrap(empty)
    return where(empty, 0.0, softmax(where(empty, 0.0, scores), -1))


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type, other_name: str, target_type,
                    check_other: bool = True) -> Tensor | None:
    """A bool mask (True: masked out) as a float one of ``target_type``: -inf where masked, 0 elsewhere."""
    if mask is None:
        return None
    kind = mask._data.dtype.kind
    if kind not in "bf":
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", UserWarning, stacklevel=3)
    if kind == "f":
        return mask
    return mask.new_zeros(mask.shape, dtype=target_type).masked_fill_(mask, -math.inf)


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                     attn_mask: Tensor | None, num_heads: int) -> bool:
    """Whether the input is batched: (L, N, E) query (True) or unbatched (L, E) (False); the others must agree."""
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                             "tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {query.ndim}-D but found "
                             f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {query.ndim - 1}-D "
                             f"but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None = None) -> list[Tensor]:
    """q, k and v through the three (E, E) blocks of ``w`` (and of ``b``); one matrix product for
    self-attention (q is k is v), two when k is v."""
    E = q.shape[-1]
    if k is v:
        if q is k:
            return list(linear(q, w, b).chunk(3, dim=-1))
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        return [linear(q, w_q, b_q), *linear(k, w_kv, b_kv).chunk(2, dim=-1)]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return [linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)]


def _in_projection(q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, b_q: Tensor | None = None,
                   b_k: Tensor | None = None, b_v: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """q, k and v through their own weights, (Eq, Eq), (Eq, Ek), (Eq, Ev): key and value may be narrower."""
    Eq, Ek, Ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, t, shape in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                           ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)), ("key bias", b_k, (Eq,)),
                           ("value bias", b_v, (Eq,))):
        if t is not None and tuple(t.shape) != shape:
            raise AssertionError(f"expecting {name} shape of {shape}, but got {t.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
    add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
    training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """``nn.MultiheadAttention``'s computation, on (L, N, E) query and (S, N, Ek/Ev) key and value (or unbatched
    (L, E) and (S, E)). Returns the output (L, N, E) and, with ``need_weights``, the attention weights
    (N, L, S) averaged over the heads (or (N, num_heads, L, S) with ``average_attn_weights=False``).

    The steps, as PyTorch takes them: project q, k, v (one packed weight, or three with
    ``use_separate_proj_weight``); append ``bias_k``/``bias_v`` and a zero key/value as a last source position
    if asked; split E into ``num_heads`` heads; merge the masks (True in a bool mask: masked out, unlike
    scaled_dot_product_attention); attend; join the heads; project out. Without ``need_weights`` the
    attention is ``scaled_dot_product_attention`` (a query that sees no key gets 0); with them a plain softmax
    (NaN there, as in PyTorch).
    """
    tensors = (query, key, value, in_proj_weight, in_proj_bias, bias_k, bias_v, out_proj_weight, out_proj_bias,
               key_padding_mask, attn_mask, q_proj_weight, k_proj_weight, v_proj_weight, static_k, static_v)
    if any(type(t) not in _TENSORS_OR_NONE for t in tensors) or type(query) not in _TENSORS:
        _check_tensors("multi_head_attention_forward", query=query, key=key, value=value,
                       in_proj_weight=in_proj_weight, in_proj_bias=in_proj_bias, bias_k=bias_k, bias_v=bias_v,
                       out_proj_weight=out_proj_weight, out_proj_bias=out_proj_bias,
                       key_padding_mask=key_padding_mask, attn_mask=attn_mask, q_proj_weight=q_proj_weight,
                       k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight, static_k=static_k,
                       static_v=static_v)
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:  # run as a batch of one
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype, "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention's is_causal makes the mask
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)

    if attn_mask is not None:  # as (1 or N * num_heads, L, S)
        expected = (tgt_len, src_len) if attn_mask.ndim == 2 else (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(f"The shape of the {attn_mask.ndim}D attn_mask is {attn_mask.shape}, but should be "
                               f"{expected}.")
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.unsqueeze(0)
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k is set but bias_v is None" if bias_v is None else
                             "bias_v is set but bias_k is None")
    if bias_k is not None:  # one more source position, learned
        if static_k is not None or static_v is not None:
            raise AssertionError(f"bias cannot be added to static {'key' if static_k is not None else 'value'}.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))

    # the heads as batch entries: (N * num_heads, length, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:  # one more source position, all zeros
        zero = k.new_zeros((bsz * num_heads, 1, head_dim))
        k, v = cat([k, zero], dim=1), cat([v, zero], dim=1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = q * math.sqrt(1.0 / head_dim) @ k.transpose(-2, -1)
        weights = softmax(scores if attn_mask is None else attn_mask + scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        attn_output = weights @ v
    else:  # (N, num_heads, L, head_dim) for scaled_dot_product_attention
        if attn_mask is not None:
            attn_mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1
                         else attn_mask.reshape(bsz, num_heads, -1, src_len))
        attn_output = scaled_dot_product_attention(
            q.reshape(bsz, num_heads, tgt_len, head_dim), k.reshape(bsz, num_heads, src_len, head_dim),
            v.reshape(bsz, num_heads, src_len, head_dim), attn_mask, dropout_p, is_causal,
        ).reshape(bsz * num_heads, tgt_len, head_dim)
        weights = None
    attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    attn_output = linear(attn_output, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if weights is not None:
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    if not batched:
        attn_output = attn_output.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return attn_output, weights


def _heads(projected: Tensor, static: Tensor | None, name: str, batch: int, head_dim: int) -> Tensor:
    """Keys or values (S, N, E) as (N * num_heads, S, head_dim), or the ``static`` ones given in that shape."""
    if static is None:
        return projected.reshape(projected.shape[0], batch, head_dim).transpose(0, 1)
    if static.shape[0] != batch:
        raise AssertionError(f"expecting {name}.size(0) of {batch}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static


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


# -- margin, ranking and counting losses ----------------------------------------
# PyTorch's native kernels for these, written as compositions of tensor operations: autograd
# differentiates them to any order. Each kink follows PyTorch's backward: a clamp at 0 passes the
# gradient where its argument is exactly 0, the multi-class margins (``z > 0`` in PyTorch's loops) do not.
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin): target 1 asks input1 to rank above input2 by
    ``margin``, target -1 below it."""
    if type(input1) not in _TENSORS or type(input2) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("margin_ranking_loss", input1=input1, input2=input2, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss: input1, input2 and target must have the same number of "
                           f"dimensions, but got sizes: input1: {list(input1.shape)}, input2: "
                           f"{list(input2.shape)}, target: {list(target.shape)}")
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``input`` (a distance) where target is 1, max(0, margin - input) where it is -1: similar pairs
    pulled together, dissimilar ones pushed at least ``margin`` apart (both terms for any other target)."""
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("hinge_embedding_loss", input=input, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    t = target._data
    pushed = where(Tensor._wrap(t != 1), (margin - input).clamp(min=0), 0.0)
    pulled = where(Tensor._wrap(t != -1), input, 0.0)
    return _reduce(pushed + pulled, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1, row by row.

    The squared norms get 1e-12 added before the square root, as in PyTorch, so a zero row's
    cosine is 0 instead of NaN.
    """
    if type(input1) not in _TENSORS or type(input2) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("cosine_embedding_loss", input1=input1, input2=input2, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    dim = target.ndim
    if dim > 1:
        raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported: got target of shape "
                           f"{list(target.shape)}")
    if input1.ndim != dim + 1 or input2.ndim != dim + 1:
        raise RuntimeError(f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    products = (input1 * input2).sum(dim)
    squares1 = (input1 * input1).sum(dim) + 1e-12
    squares2 = (input2 * input2).sum(dim) + 1e-12
    cos = products / (squares1 * squares2).sqrt()
    t = target._data
    similar = where(Tensor._wrap(t == 1), 1 - cos, 0.0)
    dissimilar = where(Tensor._wrap(t == -1), (cos - margin).clamp(min=0), 0.0)
    return _reduce(similar + dissimilar, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)): a smooth two-class hinge for targets of 1 and -1.

    Computed as softplus, without PyTorch's overflow to inf when -target * input passes ~88 (float32).
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("soft_margin_loss", input=input, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _no_grad_for("soft_margin_loss", target=target)
    return _reduce(Softplus.apply(-input * target, 1.0, float("inf")), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)`` against 0/1 ``target`` for each class, averaged over
    the classes (the last dimension): one loss per sample, for a sample in several classes at once."""
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        # PyTorch's function is Python arithmetic: a number target or weight (or an ndarray weight) works there too
        _check_tensors("multilabel_soft_margin_loss", input=input,
                       **({} if isinstance(target, (int, float)) else {"target": target}),
                       **({} if isinstance(weight, (int, float, np.ndarray)) else {"weight": weight}))
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    losses = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        losses = losses * weight
    class_dim = input.ndim - 1
    return _reduce(losses.sum(class_dim) / input.shape[class_dim], reduction)


def _margin_rows(fn: str, input: Tensor) -> tuple[int, int]:
    """(samples, classes) of the multi-class margin losses' input: (C,), (N, C), or a single score."""
    if not (input.ndim == 2 and input.shape[1] or input.ndim == 1 and input.shape[0] or input.ndim == 0):
        raise RuntimeError(f"{fn}: expected a non-empty vector (C,) or matrix (N, C) of class scores, with "
                           f"optional 0-dim batch size, but got: {list(input.shape)}")
    _check_float(input, fn)
    if input.ndim <= 1:
        return 1, input.shape[0] if input.ndim else 1
    return input.shape[0], input.shape[1]


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """The multi-class hinge: for each sample with target class y, the sum over the other classes j of
    max(0, margin - x[y] + x[j]) ** p, times ``weight[y]``, divided by the number of classes."""
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("multi_margin_loss", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    samples, classes = _margin_rows("multi_margin_loss", input)
    if target.ndim > 1 or target.numel() != samples:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{samples}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    _check_target_dtype(target)
    if weight is not None:
        _no_grad_for("multi_margin_loss", weight=weight)
        if weight.numel() != classes:
            raise RuntimeError(f"inconsistent weight size, expected {classes} but got {list(weight.shape)}")
        if weight._data.dtype != input._data.dtype:
            raise RuntimeError(f"multi_margin_loss: weight is {weight.dtype} but input is {input.dtype}; convert "
                               "the weight with .to(input.dtype)")
    t = target._data.reshape(samples, 1)
    if ((t < 0) | (t >= classes)).any():
        raise RuntimeError(f"multi_margin_loss: target out of range: class indices must be in [0, {classes})")
    rows = input.reshape(samples, classes)
    margins = (margin - rows.gather(1, Tensor._wrap(t))) + rows
    counted = (np.arange(classes) != t) & (margins._data > 0)
    hinge = where(Tensor._wrap(counted), margins, 0.0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * Tensor._wrap(weight._data[t])
    losses = hinge.sum(1) / classes
    return _reduce(losses if target.ndim else losses.reshape(()), reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The multi-label hinge: for each sample, the sum over its target classes j and its other classes k
    of max(0, 1 - (x[j] - x[k])), divided by the number of classes.

    ``target`` has the input's shape and lists each sample's classes first, ended by -1 (or by the row's
    end): ``[3, 0, -1, 1]`` means classes 3 and 0.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("multilabel_margin_loss", input=input, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    samples, classes = _margin_rows("multilabel_margin_loss", input)
    if (target.ndim > 1 or target.numel() != classes) if input.ndim <= 1 else target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}: the target lists class indices, one row per sample, "
                           "padded with -1")
    _check_target_dtype(target)
    t = target._data.reshape(samples, classes)
    listed = np.cumprod(t != -1, axis=1).astype(bool)  # the entries before each row's first -1
    if ((t[listed] < 0) | (t[listed] >= classes)).any():
        raise RuntimeError(f"multilabel_margin_loss: target out of range: class indices must be in [0, {classes}), "
                           "followed by -1")
    positive = np.zeros((samples, classes), dtype=bool)
    positive[np.nonzero(listed)[0], t[listed]] = True
    rows = input.reshape(samples, classes)
    chosen = rows.gather(1, Tensor._wrap(np.where(listed, t, 0)))
    margins = (1 - chosen.unsqueeze(2)) + rows.unsqueeze(1)  # (sample, listed j, class k)
    counted = listed[:, :, None] & ~positive[:, None, :] & (margins._data > 0)
    losses = where(Tensor._wrap(counted), margins, 0.0).sum((1, 2)) / classes
    return _reduce(losses if input.ndim == 2 else losses.reshape(()), reduction)


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the ``pairwise_distance`` (p, eps).

    ``swap`` uses d(positive, negative) instead where it is smaller (the harder negative).
    """
    if type(anchor) not in _TENSORS or type(positive) not in _TENSORS or type(negative) not in _TENSORS:
        _check_tensors("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    near = pairwise_distance(anchor, positive, p, eps)
    far = pairwise_distance(anchor, negative, p, eps)
    if swap:
        far = far.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + near - far).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """``triplet_margin_loss`` with any distance: ``distance_function(a, b)`` gives one distance per
    sample (default ``pairwise_distance``), e.g. ``lambda a, b: 1 - F.cosine_similarity(a, b)``."""
    if type(anchor) not in _TENSORS or type(positive) not in _TENSORS or type(negative) not in _TENSORS:
        _check_tensors("triplet_margin_with_distance_loss", anchor=anchor, positive=positive, negative=negative)
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    near, far = distance(anchor, positive), distance(anchor, negative)
    if swap:
        far = far.minimum(distance(positive, negative))
    return _reduce((margin + near - far).clamp(min=0), reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of counts ``target`` under Poisson distributions of rate ``input``.

    exp(input) - target * input when ``log_input`` (the input is the log of the rate), else
    input - target * log(input + eps). ``full`` adds Stirling's approximation of log(target!) for
    targets above 1, the term that does not depend on the input.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("poisson_nll_loss", input=input, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_input:
        losses = input.exp() - target * input
    else:
        losses = input - target * (input + eps).log()
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):  # (targets of 0 and 1, masked out)
            stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        losses = losses + stirling.masked_fill(Tensor._wrap(target._data <= 1), 0)
    return _reduce(losses, reduction)


# -- distances, random activations and dropouts, normalization, pools --------------
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance between every pair of rows i < j of (N, M) ``input``: N * (N - 1) / 2 of them,
    in the order of the upper triangle of the distance matrix, row by row."""
    if type(input) not in _TENSORS:
        _check_tensors("pdist", input=input)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {input.dtype}: call .float() first")
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got p={p}")
    first, second = np.triu_indices(input.shape[0], 1)
    return (input[Tensor._wrap(first)] - input[Tensor._wrap(second)]).norm(p, 1)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: x where x > 0, else a * x, a drawn uniformly from [lower, upper] for each
    element while training (a regulariser), fixed at (lower + upper) / 2 in evaluation (``leaky_relu``)."""
    if type(input) not in _TENSORS:
        _check_tensors("rrelu", input=input)
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound, but got lower={lower}, "
                           f"upper={upper}")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    _check_float(input, "rrelu")
    d = input._data
    with np.errstate(invalid="ignore"):
        slopes = np.where(d <= 0, generator().uniform(lower, upper, d.shape), 1).astype(d.dtype)
    return input.mul_(Tensor._wrap(slopes)) if inplace else input * Tensor._wrap(slopes)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    if type(input) not in _TENSORS:
        _check_tensors("rrelu_", input=input)
    return rrelu(input, lower, upper, training, inplace=True)


# SELU's alpha * scale: a dropped unit is set to -1.758..., where SELU saturates, before the affine correction
_ALPHA_DROPOUT_ALPHA = 1.7580993408473766


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    """Dropout for SELU networks: a dropped unit is set to SELU's saturation value instead of 0, then
    everything is scaled by a and shifted by b so that zero mean and unit variance stay so.

    a = 1 / sqrt((alpha^2 p + 1)(1 - p)), b = alpha a p; ``feature`` drops whole channels (dimension 1).
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input: (N, C, ...)")
    dtype = input._data.dtype
    if p == 1:
        zero = Tensor._wrap(np.zeros((), dtype))
        return input.mul_(zero) if inplace else input * zero
    shape = input.shape[:2] + (1,) * (input.ndim - 2) if feature else input.shape
    keep = (generator().random(shape) >= p).astype(dtype)
    alpha = _ALPHA_DROPOUT_ALPHA
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    scale = Tensor._wrap((keep * a).astype(dtype))
    shift = Tensor._wrap(((keep - 1) * (alpha * a) + alpha * a * p).astype(dtype))
    return input.mul_(scale).add_(shift) if inplace else input * scale + shift


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's self-normalisation (see ``_alpha_dropout``); the identity unless ``training``."""
    if type(input) not in _TENSORS:
        _check_tensors("alpha_dropout", input=input)
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels: one draw per (sample, channel) of (N, C, ...) input."""
    if type(input) not in _TENSORS:
        _check_tensors("feature_alpha_dropout", input=input)
    return _alpha_dropout(input, p, training, inplace, feature=True)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A differentiable sample of the categorical distribution of unnormalised log-probabilities ``logits``.

    softmax((logits + g) / tau) along ``dim``, g drawn from the Gumbel(0, 1) distribution; a smaller
    ``tau`` is closer to one-hot. ``hard=True`` returns the one-hot argmax in value with the soft
    sample's gradient (the straight-through estimator). ``eps`` is unused, as in PyTorch.
    """
    if type(logits) not in _TENSORS:
        _check_tensors("gumbel_softmax", logits=logits)
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    if logits._data.dtype.kind != "f":
        raise RuntimeError(f"gumbel_softmax: logits must be floating point, but got {logits.dtype}; call .float()")
    dtype = logits._data.dtype
    gumbels = Tensor._wrap((-np.log(generator().exponential(size=logits.shape))).astype(dtype))
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    values = soft._data.reshape(soft.shape or (1,))
    axis = dim % values.ndim
    one_hot = np.zeros_like(values)
    np.put_along_axis(one_hot, np.expand_dims(values.argmax(axis), axis), 1, axis=axis)
    return Tensor._wrap(one_hot.reshape(soft.shape)) - soft.detach() + soft


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels) ** beta (AlexNet's normalization).

    The window is centred on each channel (size // 2 before, (size - 1) // 2 after) and padded with
    zeros, which count in the mean, as in PyTorch.
    """
    if type(input) not in _TENSORS:
        _check_tensors("local_response_norm", input=input)
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions): "
                         "local_response_norm normalises (N, C, ...) across channels")
    if input.numel() == 0:
        return input
    if size <= 0:
        raise RuntimeError(f"local_response_norm: size must be greater than zero, but got {size}")
    channels = input.shape[1]
    squares = pad(input * input, (0, 0) * (input.ndim - 2) + (size // 2, (size - 1) // 2))
    window = squares.narrow(1, 0, channels)
    for offset in range(1, size):
        window = window + squares.narrow(1, offset, channels)
    return input / ((window / size) * alpha + k) ** beta


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False) -> Tensor:
    """The p-norm (sum of x^p) ** (1/p) of each window of (N, C, L) or (C, L) ``input``, p = ``norm_type``:
    p = 1 is sum pooling, p = inf max pooling of |x|. An average pool of x^p, times the window size."""
    if type(input) not in _TENSORS:
        _check_tensors("lp_pool1d", input=input)
    if type(kernel_size) is not int:
        raise TypeError(f"lp_pool1d: kernel_size must be an int, but got {kernel_size!r}")
    if norm_type in (math.inf, -math.inf):
        return _lp_pool_limit(max_pool1d, input, norm_type, kernel_size, stride, ceil_mode)
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``lp_pool1d`` over (N, C, H, W) or (C, H, W) ``input``, in kernel_size windows (an int or a pair)."""
    if type(input) not in _TENSORS:
        _check_tensors("lp_pool2d", input=input)
    kernel = _ntuple("lp_pool2d", "kernel_size", kernel_size, 2, _POOL2D_LENGTH)
    if norm_type in (math.inf, -math.inf):
        return _lp_pool_limit(max_pool2d, input, norm_type, kernel_size, stride, ceil_mode)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel[0] * kernel[1]).pow(1.0 / norm_type)


def _lp_pool_limit(max_pool, input: Tensor, norm_type: float, kernel_size, stride, ceil_mode: bool) -> Tensor:
    """The p-norm's limits: the largest |x| of each window for p = inf, the smallest for p = -inf."""
    if norm_type > 0:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` returning (values, indices) whatever ``return_indices`` says (PyTorch's name for it)."""
    if type(input) not in _TENSORS:
        _check_tensors("max_pool1d_with_indices", input=input)
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` returning (values, indices) whatever ``return_indices`` says (PyTorch's name for it)."""
    if type(input) not in _TENSORS:
        _check_tensors("max_pool2d_with_indices", input=input)
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d`` returning (values, indices) whatever ``return_indices`` says."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool1d_with_indices", input=input)
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d`` returning (values, indices) whatever ``return_indices`` says."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool2d_with_indices", input=input)
    return adaptive_max_pool2d(input, output_size, return_indices=True)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated: ``interpolate``, under its old name (with PyTorch's warning)."""
    if type(input) not in _TENSORS:
        _check_tensors("upsample", input=input)
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode="nearest")`` (with PyTorch's warning)."""
    if type(input) not in _TENSORS:
        _check_tensors("upsample_nearest", input=input)
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode="bilinear", align_corners=True)`` (with PyTorch's warning)."""
    if type(input) not in _TENSORS:
        _check_tensors("upsample_bilinear", input=input)
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of the rows of ``weight`` looked up by each bag of indices: (bags, embedding_dim).

    A 2-D ``input`` (B, N) is B bags of N indices; a 1-D one is the bags one after another, bag b
    starting at ``offsets[b]``; with ``include_last_offset`` the last offset ends the last bag (PyTorch
    documents it as the input's length; short of it, its sum, mean and max disagree on where the bag ends).
    Indices equal to ``padding_idx`` are left out (of the mean's count too); an empty bag gives zeros.
    ``per_sample_weights`` (mode "sum" only) scales each looked-up row. Computed as one lookup of a
    (bags, longest bag, dim) block, masked, then reduced: ``embedding`` and a sum without the
    intermediate (N, dim) copy per bag that PyTorch's kernel avoids too.
    """
    if (type(input) not in _TENSORS or type(weight) not in _TENSORS or type(offsets) not in _TENSORS_OR_NONE
            or type(per_sample_weights) not in _TENSORS_OR_NONE):
        _check_tensors("embedding_bag", input=input, weight=weight, offsets=offsets,
                       per_sample_weights=per_sample_weights)
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2 and offsets is not None:
        raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                         f"length sequences. However, found offsets of type {type(offsets)}")
    if input.ndim == 1 and (offsets is None or offsets.ndim != 1):
        raise ValueError("offsets has to be a 1D Tensor" + (" but got None" if offsets is None else ""))
    if input.ndim not in (1, 2):
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    _check_embedding_options(scale_grad_by_freq, sparse)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'): scale the weights' rows yourself, or use mode='sum'")
    for name, t in (("input", input), ("offsets", offsets)):
        if t is not None and t.dtype not in (int64, int32):
            raise RuntimeError(f"embedding_bag: {name} must hold indices, int64 or int32, but got {t.dtype}")
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-rows} through {rows - 1}, "
                               f"but got {padding_idx}")
        padding_idx %= rows
    idx = input._data.reshape(-1)
    bad = idx[(idx < 0) | (idx >= rows)]
    if bad.size:
        raise RuntimeError(f"embedding_bag: index {bad[0]} is out of range [0, {rows}) of the weight's rows")
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    if per_sample_weights is not None and per_sample_weights._data.dtype != weight._data.dtype:
        raise RuntimeError(f"embedding_bag: per_sample_weights is {per_sample_weights.dtype} but weight is "
                           f"{weight.dtype}; they must have the same dtype")
    starts, ends = _bag_bounds(input, offsets, include_last_offset)
    lengths = ends - starts
    longest = int(lengths.max()) if lengths.size else 0
    positions = starts[:, None] + np.arange(longest)
    inside = np.arange(longest) < lengths[:, None]
    positions = np.where(inside, positions, 0)
    looked_up = np.where(inside, idx[positions] if idx.size else 0, 0)
    counted = inside if padding_idx is None else inside & (looked_up != padding_idx)
    block = weight[Tensor._wrap(looked_up)]  # (bags, longest, dim)
    if per_sample_weights is not None:
        block = block * per_sample_weights.reshape(-1)[Tensor._wrap(positions)].unsqueeze(-1)
    mask = Tensor._wrap(counted[..., None])
    if mode == "max" and longest:
        largest = where(mask, block, -math.inf).max(1).values
        return where(Tensor._wrap(counted.any(1, keepdims=True)), largest, 0.0)
    total = where(mask, block, 0.0).sum(1)
    if mode != "mean":
        return total
    counts = np.maximum(counted.sum(1, keepdims=True), 1).astype(weight._data.dtype)
    return total / Tensor._wrap(counts)


def _bag_bounds(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> tuple:
    """Where each bag of ``embedding_bag`` starts and ends in the flattened input, with PyTorch's checks."""
    n = input.numel()
    if input.ndim == 2:
        if input.shape[1] == 0:
            raise RuntimeError("embedding_bag: a 2-D input (B, N) holds B bags of N indices; N must not be 0")
        starts = np.arange(0, n, input.shape[1])
        return starts, starts + input.shape[1]
    o = offsets._data.astype(np.int64)
    if include_last_offset and not o.size:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if o.size and o[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {o[0]}")
    if o.size and o[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {o[-1]}")
    if (np.diff(o) < 0).any():
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing (each bag starts where the one before "
                           f"it ends or later), but got {o.tolist()}")
    if include_last_offset:
        return o[:-1], o[1:]
    return o, np.append(o[1:], n)


# -- volumes: the 3-D convolutions and pools -----------------------------------------
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """3-D convolution of (N, C, D, H, W) or unbatched (C, D, H, W) ``input`` with
    (out_channels, C / groups, kD, kH, kW) ``weight``, for videos and medical volumes.

    One conv2d over the depth planes each output plane sees, stacked as channels (``_planes_convolution``):
    the Numba kernel does the work, and the composition differentiates to any order.
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv3d", input=input, weight=weight, bias=bias)
    return _convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _planes_convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple, padding: tuple,
                        dilation: tuple, groups: int) -> Tensor:
    """conv3d as one conv2d: output plane z sums, over the kernel's depth k, the 2-D convolution of input plane
    z * stride + k * dilation with weight[:, :, k]; those kD planes side by side as channels (each group's
    together, so ``groups`` carries over) are one conv2d input, of a batch N * D_out."""
    (sd, *s2), (pd, *p2), (dd, *d2) = stride, padding, dilation
    batch, channels, depth, height, width = input.shape
    out_channels, group_channels, kd, kh, kw = weight.shape
    if pd:
        input = pad(input, (0, 0, 0, 0, pd, pd))
    planes = (depth + 2 * pd - dd * (kd - 1) - 1) // sd + 1
    seen = np.arange(planes)[:, None] * sd + np.arange(kd) * dd  # (D_out, kD): the input planes of each output
    x = input[:, :, seen].reshape(batch, groups, group_channels, planes, kd, height, width)
    x = x.permute(0, 3, 1, 4, 2, 5, 6).reshape(batch * planes, groups * kd * group_channels, height, width)
    w = weight.permute(0, 2, 1, 3, 4).reshape(out_channels, kd * group_channels, kh, kw)
    y = Conv2d.apply(x, w, bias, tuple(s2), tuple(p2), tuple(d2), groups)
    return y.reshape(batch, planes, out_channels, *y.shape[2:]).transpose(1, 2)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The transposed 3-D convolution of (N, C, D, H, W) or unbatched (C, D, H, W) ``input`` with
    (C, out_channels / groups, kD, kH, kW) ``weight``: conv3d's gradient with respect to its input
    (see ``conv_transpose2d``), as one conv_transpose2d over the depth planes (``_planes_transposed_convolution``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("conv_transpose3d", input=input, weight=weight, bias=bias)
    return _transposed_convolution("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding,
                                   groups, dilation)


def _planes_transposed_convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple,
                                   padding: tuple, dilation: tuple, groups: int, out_size: tuple) -> Tensor:
    """conv_transpose3d as one conv_transpose2d: input plane z, transposed-convolved with weight[:, :, k], lands on
    output plane z * stride + k * dilation - padding. The kD weights side by side as output channels give every
    (z, k) pair at once; each k's planes are then spread ``stride`` apart and added at their offset."""
    (sd, *s2), (pd, *p2), (dd, *d2) = stride, padding, dilation
    batch, channels, depth, height, width = input.shape
    _, group_out, kd, kh, kw = weight.shape
    w = weight.permute(0, 2, 1, 3, 4).reshape(channels, kd * group_out, kh, kw)
    x = input.transpose(1, 2).reshape(batch * depth, channels, height, width)
    y = ConvTranspose2d.apply(x, w, None, (tuple(s2), tuple(p2), tuple(d2), groups), tuple(out_size[1:]))
    y = y.reshape(batch, depth, groups, kd, group_out, *out_size[1:])
    full = out_size[0] + 2 * pd  # every plane before the padding is cut off
    out = None
    for k in range(kd):
        planes = y[:, :, :, k]  # (N, D, G, O / G, H', W')
        if sd > 1:  # spread stride apart: stride - 1 planes of zeros after each
            planes = pad(planes.unsqueeze(2), (0, 0) * 4 + (0, sd - 1)).flatten(1, 2)[:, :(depth - 1) * sd + 1]
        planes = pad(planes, (0, 0) * 4 + (k * dd, full - k * dd - planes.shape[1]))
        out = planes if out is None else out + planes
    out = out[:, pd:pd + out_size[0]].reshape(batch, out_size[0], groups * group_out, *out_size[1:]).transpose(1, 2)
    return out if bias is None else out + bias.reshape(-1, 1, 1, 1)


_POOL3D_LENGTH = "{fn}: {name} must be a single int, or a tuple of three ints"  # (max_pool3d's: "must either be")


def _pool3d_geometry(fn: str, input: Tensor, kernel_size, stride, padding, dilation, ceil_mode: bool) -> tuple:
    """(kernel, stride, padding, dilation, output (D, H, W)) of a 3-D pool, as triples, with PyTorch's checks
    (pool3d_shape_check; avg_pool3d's also refuses an input smaller than the kernel, padding or not)."""
    length = _POOL3D_LENGTH.replace("must be", "must either be") if fn == "max_pool3d" else _POOL3D_LENGTH
    kernel = _ntuple(fn, "kernel_size", kernel_size, 3, length)
    strides = kernel if stride in (None, [], ()) else _ntuple(fn, "stride", stride, 3, length)
    pads = _ntuple(fn, "padding", padding, 3, length)
    dilations = _ntuple(fn, "dilation", dilation, 3, length)
    named = [" ".join(f"{axis}: {v}" for axis, v in zip(names, values)) for names, values in
             ((("kT", "kH", "kW"), kernel), (("dT", "dH", "dW"), strides),
              (("dilationT", "dilationH", "dilationW"), dilations))]
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got {named[0]}")
    if min(strides) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got {named[1]}")
    if min(dilations) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {named[2]}")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{fn}: Expected 4D or 5D tensor for input, but got: {list(input.shape)}")
    if fn == "avg_pool3d" and any(n < k for n, k in zip(input.shape[-3:], kernel)):
        sizes = " ".join(f"{axis}: {n}" for axis, n in zip("THW", input.shape[-3:]))
        raise RuntimeError(f"input image ({sizes}) smaller than kernel size ({named[0]})")
    if min(pads) < 0 or any(p > k // 2 for k, p in zip(kernel, pads)):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {kernel[0]} "
                           f"kW: {kernel[2]} kH: {kernel[1]} padT: {pads[0]} padW: {pads[2]} padH: {pads[1]}")
    out = tuple(pool_out_size(n, k, s, p, ceil_mode, d)
                for n, k, s, p, d in zip(input.shape[-3:], kernel, strides, pads, dilations))
    if min(out) < 1 or 0 in input.shape[-3:]:
        sizes = "x".join(map(str, input.shape[-4:])), "x".join(map(str, (input.shape[-4],) + out))
        raise RuntimeError(f"Given input size: ({sizes[0]}). Calculated output size: ({sizes[1]}). "
                           "Output size is too small")
    return kernel, strides, pads, dilations, out


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each kernel_size window of (N, C, D, H, W) or (C, D, H, W) ``input``; ``avg_pool2d``'s
    options. A sum of strided slices, one per kernel cell, as one node (``AvgPool3DBackward0``)."""
    if type(input) not in _TENSORS:
        _check_tensors("avg_pool3d", input=input)
    kernel, strides, pads, _, out = _pool3d_geometry("avg_pool3d", input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    sizes = input.shape[-3:]
    extra = [max(0, (o - 1) * s + k - (n + 2 * p)) for o, s, k, n, p in zip(out, strides, kernel, sizes, pads)]
    widths = [amount for i in (2, 1, 0) for amount in (pads[i], pads[i] + extra[i])]

    def window_sums(t: Tensor) -> Tensor:
        total = None
        for offset in np.ndindex(*kernel):
            part = t[(Ellipsis, *(slice(i, i + s * (o - 1) + 1, s) for i, s, o in zip(offset, strides, out)))]
            total = part if total is None else total + part
        return total

    def pooled(t: Tensor) -> Tensor:
        sums = window_sums(pad(t, widths))
        if divisor_override is not None:
            return sums / divisor_override
        counted = np.zeros(tuple(n + 2 * p + e for n, p, e in zip(sizes, pads, extra)), t._data.dtype)
        counted[tuple(slice(0, n + 2 * p) if count_include_pad else slice(p, p + n)
                      for n, p in zip(sizes, pads))] = 1
        return sums / window_sums(Tensor._wrap(counted))
    return AvgPool3d.apply(input, pooled, pooled)


def _max_over_windows(input: Tensor, windows: list, return_indices: bool, starts: list | None = None):
    """The max of each window of the last three dimensions, with its flat index in D*H*W.

    ``windows`` holds, per dimension, ``window_cells``' (out, k) cells and which windows are empty: the
    cells are gathered into (..., D_out, H_out, W_out, kD*kH*kW) and reduced with max, whose gradient goes to
    the cell it picked. Cells outside a window repeat its nearest inside cell, so the first max is PyTorch's.
    An empty window (dilated, over padding alone) is -inf at PyTorch's index: that of its first tap at or
    past 0 (``starts``, per dimension), outside the input.
    """
    (cd, _), (ch, _), (cw, _) = windows
    if 0 in (len(cd), len(ch), len(cw)):  # an output size of 0: nothing to take the max of
        values = input.flatten(-3)[..., :0].reshape(*input.shape[:-3], len(cd), len(ch), len(cw))
        return (values, Tensor._wrap(np.zeros(values.shape, np.int64))) if return_indices else values
    k = cd.shape[1] * ch.shape[1] * cw.shape[1]
    d = cd[:, None, None, :, None, None]
    h = ch[None, :, None, None, :, None]
    w = cw[None, None, :, None, None, :]
    values = input[(Ellipsis, d, h, w)]
    values, picked = values.reshape(*values.shape[:-3], k).max(-1)
    empty = windows[0][1][:, None, None] | windows[1][1][None, :, None] | windows[2][1][None, None, :]
    if empty.any():  # a dilated window over padding alone: -inf, as in PyTorch
        values = where(Tensor._wrap(empty), Tensor._wrap(np.array(-np.inf, input._data.dtype)), values)
    if not return_indices:
        return values
    depth, height, width = input.shape[-3:]
    flat = (d * height + h) * width + w
    flat = flat.reshape(*flat.shape[:3], k)
    indices = np.take_along_axis(np.broadcast_to(flat, (*picked.shape, k)), picked._data[..., None], -1)[..., 0]
    if empty.any():
        sd, sh, sw = np.meshgrid(*starts, indexing="ij")
        indices = np.where(empty, (sd * height + sh) * width + sw, indices)
    return values, Tensor._wrap(indices.astype(np.int64))


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """The max of each kernel_size window of (N, C, D, H, W) or (C, D, H, W) ``input``; ``max_pool2d``'s options,
    the indices flat in D*H*W. Composed of a gather and a max (``_max_over_windows``)."""
    if type(input) not in _TENSORS:
        _check_tensors("max_pool3d", input=input)
    kernel, strides, pads, dilations, _ = _pool3d_geometry("max_pool3d", input, kernel_size, stride, padding,
                                                           dilation, ceil_mode)
    windows = [pool_windows(n, k, s, p, d, ceil_mode)
               for n, k, s, p, d in zip(input.shape[-3:], kernel, strides, pads, dilations)]
    firsts = [np.arange(len(cells)) * s - p for (cells, _), s, p in zip(windows, strides, pads)]
    starts = [first + d * (np.maximum(-first, 0) // d + (np.maximum(-first, 0) % d > 0))
              for first, d in zip(firsts, dilations)]
    return _max_over_windows(input, windows, return_indices, starts)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool3d`` returning (values, indices) whatever ``return_indices`` says (PyTorch's name for it)."""
    if type(input) not in _TENSORS:
        _check_tensors("max_pool3d_with_indices", input=input)
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def _adaptive_sizes3d(fn: str, input: Tensor, output_size) -> tuple[int, int, int]:
    """An adaptive 3-D pool's output (D, H, W): an int or a triple, None keeping that dimension."""
    sizes = _output_sizes(fn, input, output_size, 3)
    if len(sizes) != 3:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be 3")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{fn}(): Expected 4D or 5D tensor, but got {list(input.shape)}")
    if min(sizes) < 0:
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, sizes))}}}")
    for dim in range(input.ndim - 3, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {dim} being empty")
    return tuple(int(o) for o in sizes)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average (N, C, D, H, W) or (C, D, H, W) ``input`` down to ``output_size`` cells (an int or a triple, None
    keeping that dimension), in PyTorch's bins (``adaptive_bins``); one node."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_avg_pool3d", input=input)
    out = _adaptive_sizes3d("adaptive_avg_pool3d", input, output_size)
    if out == (1, 1, 1):  # the global average: PyTorch's node is a mean's too
        return input.mean((-3, -2, -1), keepdim=True)
    sizes = input.shape[-3:]

    def pooled(t: Tensor) -> Tensor:
        for dim, n, o in zip((-3, -2, -1), sizes, out):
            parts = [t.narrow(dim, a, b - a).mean(dim, keepdim=True) for a, b in adaptive_bins(n, o)]
            t = (cat(parts, dim) if len(parts) > 1 else parts[0]) if parts else t.narrow(dim, 0, 0)
        return t
    return AdaptiveAvgPool3d.apply(input, pooled, pooled)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """The max of each of PyTorch's adaptive bins of (N, C, D, H, W) or (C, D, H, W) ``input``;
    ``return_indices``: also where each came from (flat in D*H*W)."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool3d", input=input)
    out = _adaptive_sizes3d("adaptive_max_pool3d", input, output_size)
    windows = [adaptive_windows(n, o) for n, o in zip(input.shape[-3:], out)]
    return _max_over_windows(input, windows, return_indices)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d`` returning (values, indices) whatever ``return_indices`` says."""
    if type(input) not in _TENSORS:
        _check_tensors("adaptive_max_pool3d_with_indices", input=input)
    return adaptive_max_pool3d(input, output_size, return_indices=True)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """``lp_pool1d`` over (N, C, D, H, W) or (C, D, H, W) ``input``, in kernel_size windows (an int or a triple)."""
    if type(input) not in _TENSORS:
        _check_tensors("lp_pool3d", input=input)
    kernel = _ntuple("lp_pool3d", "kernel_size", kernel_size, 3, _POOL3D_LENGTH)
    if norm_type in (math.inf, -math.inf):
        return _lp_pool_limit(max_pool3d, input, norm_type, kernel_size, stride, ceil_mode)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(math.prod(kernel)).pow(1.0 / norm_type)


# -- unpooling ------------------------------------------------------------------------
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``max_pool1d``'s partial inverse: each value of (N, C, L) or (C, L) ``input`` put back at its index
    (from ``return_indices=True``), zeros everywhere else. ``output_size`` picks among the lengths a
    max_pool1d maps to L (default: the smallest)."""
    if type(input) not in _TENSORS or type(indices) not in _TENSORS:
        _check_tensors("max_unpool1d", input=input, indices=indices)
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 1)
    return _max_unpool("max_unpooling2d", input.unsqueeze(-1), indices.unsqueeze(-1), [*size, 1], 2).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``max_unpool1d`` for ``max_pool2d``: (N, C, H, W) or (C, H, W) values put back at their flat indices in the
    (H_out, W_out) output, zeros elsewhere. One node, ``MaxUnpool2DBackward0``."""
    if type(input) not in _TENSORS or type(indices) not in _TENSORS:
        _check_tensors("max_unpool2d", input=input, indices=indices)
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 2)
    return _max_unpool("max_unpooling2d", input, indices, size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """``max_unpool2d`` for ``max_pool3d``: (N, C, D, H, W) or (C, D, H, W) values at their flat indices."""
    if type(input) not in _TENSORS or type(indices) not in _TENSORS:
        _check_tensors("max_unpool3d", input=input, indices=indices)
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 3)
    return _max_unpool("max_unpooling3d", input, indices, size, 3)


def _unpool_size(input: Tensor, kernel_size, stride, padding, output_size, n: int) -> list[int]:
    """PyTorch's _unpool_output_size: (in - 1) * stride + kernel - 2 * padding, or ``output_size`` (with or without
    N and C) if it lies strictly within a stride of that."""
    fn = f"max_unpool{n}d"
    kernel = _ntuple(fn, "kernel_size", kernel_size, n, _CONV_LENGTH)
    strides = kernel if stride is None else _ntuple(fn, "stride", stride, n, _CONV_LENGTH)
    pads = _ntuple(fn, "padding", padding, n, _CONV_LENGTH)
    default = [(input.shape[i - n] - 1) * strides[i] + kernel[i] - 2 * pads[i] for i in range(n)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length "
                         f"of '{len(output_size)}'")
    for d in range(n):
        low, high = default[d] - strides[d], default[d] + strides[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return [int(o) for o in output_size]


def _max_unpool(fn: str, input: Tensor, indices: Tensor, size: list, n: int) -> Tensor:
    """The scatter, with PyTorch's checks of max_unpooling2d/3d."""
    if indices.dtype != int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {scalar_type_name(indices.dtype)}")
    if n == 2 and len(size) != 2:
        raise RuntimeError(f"There should be exactly two elements (height, width) in output_size, but got "
                           f"{len(size)} elements.")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to {fn} should be a {n + 1}d or {n + 2}d Tensor, but got a tensor with "
                           f"{input.ndim} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(indices.shape)}) "
                           f"but got indices tensor with shape: {list(input.shape)}")
    for dim in range(1, input.ndim):
        if input.shape[dim] <= 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but got "
                               f"{list(input.shape)} with dimension {dim} being empty.")
    cells = math.prod(size)
    index = indices._data.reshape(*input.shape[:-n], -1)
    bad = (index < 0) | (index >= cells)
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {index[bad][0]} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")
    lead = tuple(input.shape[:-n])
    where_to = Tensor._wrap(index)

    def unpooled(t: Tensor) -> Tensor:
        zeros = Tensor._wrap(np.zeros((*lead, cells), t._data.dtype))
        return zeros.scatter(-1, where_to, t.reshape(*lead, -1)).reshape(*lead, *size)
    return MaxUnpool[n].apply(input, unpooled, unpooled)


# -- spatial transformers ----------------------------------------------------------
_ALIGN_CORNERS_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                          "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                          "documentation of grid_sample for details.")


def affine_grid(theta: Tensor, size: list[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps: (N, H, W, 2) (or (N, D, H, W, 3)) points theta @ (x, y, 1),
    for the output pixels' own coordinates (x, y) in [-1, 1]; ``grid_sample`` then reads the input there.

    ``theta`` is (N, 2, 3) for a 4-D ``size`` (N, C, H, W), (N, 3, 4) for a 5-D one. With
    ``align_corners=False`` (the default) -1 and 1 are the outer edges of the corner pixels, with True
    their centres. A constant grid times theta's transpose: differentiable with respect to theta.
    """
    if type(theta) not in _TENSORS:
        _check_tensors("affine_grid", theta=theta)
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) in (4, 5):
        rows = len(size) - 2
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (rows, rows + 1):
            raise ValueError(f"Expected a batch of {rows}D affine matrices of shape Nx{rows}x{rows + 1} for size "
                             f"{size}. Got {list(theta.shape)}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: expected theta's batch size {theta.shape[0]} to be size[0] = {size[0]}: "
                           "one affine map per output image")
    spatial = size[2:]
    axes = [_unit_positions(n, align_corners, theta._data.dtype) for n in reversed(spatial)]  # x (W) first
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]  # each (D,) H, W
    base = np.stack([*mesh, np.ones(tuple(spatial), theta._data.dtype)], -1).reshape(-1, len(spatial) + 1)
    grid = Tensor._wrap(base).matmul(theta.transpose(1, 2))  # (N, D*H*W, dims)
    return grid.reshape(size[0], *spatial, len(spatial))


def _unit_positions(n: int, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """The n pixels' centres in [-1, 1]: the ends at the corners' centres, or (n - 1) / n of that; 0 for n = 1."""
    if n <= 1:
        return np.zeros(n, dtype)
    steps = np.linspace(-1, 1, n, dtype=dtype)
    return steps if align_corners else (steps * (n - 1) / n).astype(dtype)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """The values of (N, C, H, W) ``input`` at the points of (N, Ho, Wo, 2) ``grid``: (N, C, Ho, Wo).

    A point is (x, y) in [-1, 1] (-1 the left/top edge, or with ``align_corners`` the first pixel's
    centre), as ``affine_grid`` makes them. ``mode`` "bilinear" mixes the 4 pixels around it, "nearest"
    takes the closest, "bicubic" mixes 16 with the weights of ``interpolate``'s bicubic mode; points
    outside read 0 (``padding_mode="zeros"``), the nearest edge pixel ("border") or the image mirrored at
    its edges ("reflection"). 5-D input and grid sample volumes (trilinear for "bilinear"; no bicubic).
    Composed of gathers and products, so it is differentiable with respect to the input and the grid
    (where the weights move), to any order.
    """
    if type(input) not in _TENSORS or type(grid) not in _TENSORS:
        _check_tensors("grid_sample", input=input, grid=grid)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    _check_grid_sampler(input, grid, mode)
    batch, channels, *sizes = input.shape
    points = tuple(grid.shape[1:-1])
    # per input dimension ((D,) H, W): the grid's last entry is x, along W
    coords = [_source_coordinates(grid[..., k], n, padding_mode, align_corners)
              for k, n in zip(range(len(sizes)), reversed(sizes))][::-1]
    flat = input.reshape(batch, channels, -1)

    def read(cells: list) -> Tensor:
        """input at integer cells (each (N, *points)), 0 outside when padding with zeros: (N, C, *points)."""
        inside = np.logical_and.reduce([(i >= 0) & (i < n) for i, n in zip(cells, sizes)])
        index = np.ravel_multi_index([np.clip(i, 0, n - 1) for i, n in zip(cells, sizes)], sizes)
        index = Tensor._wrap(index.reshape(batch, 1, -1)).expand(batch, channels, -1)
        values = flat.gather(2, index).reshape(batch, channels, *points)
        if inside.all():
            return values
        return values * Tensor._wrap(inside[:, None].astype(input._data.dtype))

    if mode == "nearest":
        rounded = [c.round() for c in coords]  # half to even, as PyTorch's nearbyint
        cells = [np.nan_to_num(r._data).astype(np.int64) for r in rounded]
        # the grid's gradient is 0 as in PyTorch (not None): joined through round, whose derivative is 0
        joint = sum(where(Tensor._wrap(np.isfinite(r._data)), r - r.detach(), 0.0).unsqueeze(1) for r in rounded)
        return read(cells) + joint
    if mode == "bicubic":  # the 4 x 4 pixels around each point, each moved inside by the padding mode on its own
        coords = [_source_coordinates(grid[..., 1 - k], n, "zeros", align_corners) for k, n in enumerate(sizes)]
        lows = [np.floor(c._data) for c in coords]
        weights = [_cubic_weights(c - Tensor._wrap(low)) for c, low in zip(coords, lows)]
        taps = [[_tap(low + k - 1, n, padding_mode, align_corners) for k in range(4)] for low, n in zip(lows, sizes)]
        out = None
        for i, j in np.ndindex(4, 4):
            term = read([taps[0][i], taps[1][j]]) * (weights[0][i] * weights[1][j]).unsqueeze(1)
            out = term if out is None else out + term
        return out
    lows = [np.floor(c._data) for c in coords]
    fracs = [c - Tensor._wrap(low) for c, low in zip(coords, lows)]
    lows = [np.nan_to_num(low).astype(np.int64) for low in lows]
    out = None
    for corner in np.ndindex(*(2,) * len(sizes)):  # the 4 (or 8) pixels around each point
        weight = None
        for up, frac in zip(corner, fracs):
            w = frac if up else 1 - frac
            weight = w if weight is None else weight * w
        term = read([low + up for low, up in zip(lows, corner)]) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """Keys' cubic convolution weights (a = -0.75, PyTorch's) of the 4 pixels at distances 1 + t, t, 1 - t, 2 - t."""
    a = -0.75

    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ((x * (a + 2) - (a + 3)) * x * x) + 1

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _tap(cell: np.ndarray, size: int, padding_mode: str, align_corners: bool) -> np.ndarray:
    """A bicubic tap's pixel: moved inside by "border" or "reflection" (then truncated, as PyTorch's
    get_value_bounded), or left where it is for "zeros" (read as 0 outside)."""
    if padding_mode == "zeros":
        return np.nan_to_num(cell).astype(np.int64)
    moved = _source_coordinates(Tensor._wrap(cell), size, padding_mode, align_corners, normalized=False)._data
    return np.nan_to_num(moved).astype(np.int64)


def _check_grid_sampler(input: Tensor, grid: Tensor, mode: str) -> None:
    """PyTorch's checks of grid_sampler, in its order and words."""
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input._data.dtype != grid._data.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    if input.ndim != 4 and (input.ndim != 5 or grid.ndim != 5):
        raise RuntimeError(f"grid_sampler(): expected 5D input and grid with same number of dimensions, but got "
                           f"{sizes}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for dim in range(2, input.ndim):
        if input.shape[dim] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {dim} being empty")
    if input.ndim != grid.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"{sizes}")
    if input.ndim == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _source_coordinates(coord: Tensor, size: int, padding_mode: str, align_corners: bool,
                        normalized: bool = True) -> Tensor:
    """A grid coordinate in [-1, 1] as a pixel position in [0, size - 1] (or past it), then moved inside
    for the "border" and "reflection" padding modes, as PyTorch's grid_sampler_compute_source_index.
    ``normalized=False``: ``coord`` is a pixel position already, only moved inside."""
    if normalized:
        coord = (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    if padding_mode == "reflection":
        coord = _reflected(coord, 0, 2 * (size - 1)) if align_corners else _reflected(coord, -1, 2 * size - 1)
    if padding_mode != "zeros":
        coord = coord.clamp(0, size - 1)
    return coord


def _reflected(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """coord mirrored at low and high (given doubled, to stay integers) until it lies between them."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = (coord - low).abs()
    flips = np.floor(distance._data / span)
    extra = distance - Tensor._wrap(flips * span)  # fmod(distance, span)
    return where(Tensor._wrap(flips % 2 == 1), span - extra + low, extra + low)


# -- connectionist temporal classification ---------------------------------------
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss: -log of the probability that (T, N, C) ``log_probs`` (a log_softmax over C) spell
    each target, summed over every alignment (repeats merged, blanks dropped). For speech and handwriting,
    where the frames outnumber the labels and nobody knows which frame says which.

    ``targets`` are padded (N, S) or concatenated (sum(target_lengths),); the lengths are tensors or
    sequences of ints; an unbatched (T, C) input takes a (S,) target. "mean" divides each loss by its
    target's length, then averages; ``zero_infinity`` zeroes the losses (and gradients) of targets no
    alignment reaches. One node (``minigrad/nn/ops/ctc.py``), with PyTorch's gradient.
    """
    if type(log_probs) not in _TENSORS or type(targets) not in _TENSORS:
        _check_tensors("ctc_loss", log_probs=log_probs, targets=targets)
    _check_reduction(reduction)
    lengths = [_ctc_lengths(name, value) for name, value in (("input_lengths", input_lengths),
                                                             ("target_lengths", target_lengths))]
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be tensors or both sequences of "
                        f"ints, but got {type(input_lengths).__name__} and {type(target_lengths).__name__}")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    labels, input_lengths, target_lengths = _ctc_targets(lp, targets, *lengths, blank)
    losses = CtcLoss.apply(lp, labels, input_lengths, target_lengths, blank, zero_infinity)
    if zero_infinity:
        losses = where(Tensor._wrap(losses._data == math.inf), Tensor._wrap(np.zeros((), losses._data.dtype)), losses)
    if reduction == "mean":
        return (losses / Tensor._wrap(np.maximum(target_lengths, 1).astype(losses._data.dtype))).mean()
    if reduction == "sum":
        return losses.sum()
    return losses if batched else losses.squeeze(0)


def _ctc_lengths(name: str, value) -> np.ndarray:
    """Lengths as int64 from a tensor of integers or a sequence of ints (PyTorch's two overloads)."""
    if isinstance(value, Tensor):
        if value._data.dtype.kind not in "iu":  # (bool is not integral either)
            raise RuntimeError(f"{name} must be integral")
        return value._data.astype(np.int64).reshape(-1)
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, (int, np.integer)) for v in value):
        raise TypeError(f"ctc_loss(): argument '{name}' must be a tensor of integers or a tuple of ints, "
                        f"but got {value!r}")
    return np.array(value, np.int64).reshape(-1)


def _ctc_targets(lp: Tensor, targets: Tensor, input_lengths: np.ndarray, target_lengths: np.ndarray,
                 blank: int) -> tuple:
    """PyTorch's checks of ctc_loss_cpu, in its order and words; the targets as padded (N, S) int64."""
    checking = "(while checking arguments for ctc_loss_cpu)"
    if lp.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.ndim}-dimensional tensor for argument #1 "
                           f"'log_probs' {checking}")
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor for argument #2 "
                           f"'targets' {checking}")
    batch, classes = lp.shape[1:]
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if len(lengths) != batch:
            raise RuntimeError(f"{name} must be of size batch_size")
    labels = targets._data.astype(np.int64)
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {length} {checking}")
    longest = int(target_lengths.max(initial=0))
    if labels.ndim == 1:  # concatenated: cut into rows, padded
        total = int(target_lengths.sum())
        if len(labels) != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size {len(labels)} for "
                               f"argument #2 'targets' {checking}")
        padded = np.zeros((batch, longest), np.int64)
        starts = np.cumsum(target_lengths) - target_lengths
        for row, (start, length) in enumerate(zip(starts, target_lengths)):
            padded[row, :length] = labels[start:start + length]
        labels = padded
    else:
        if len(labels) != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got size {len(labels)} for "
                               f"argument #2 'targets' {checking}")
        if labels.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{labels.shape[1]} for argument #2 'targets' {checking}")
    for length in input_lengths:
        if length < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {length} {checking}")
        if length > lp.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {lp.shape[0]}, but got value {length} "
                               f"{checking}")
    return labels, input_lengths, target_lengths


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
