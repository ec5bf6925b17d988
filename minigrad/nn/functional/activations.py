"""Non-linear activations: ``relu`` ... ``softmax``, ``log_softmax``, ``gumbel_softmax``, ``rrelu``, and the
Tensor methods ``hardshrink`` and ``prelu``. The nodes of the few with a Function of their own (ELU,
GELU, leaky ReLU, SiLU, softplus) are in ``minigrad/nn/ops/activation.py``; the rest are compositions
of tensor operations.
"""
from __future__ import annotations

import warnings

import numpy as np

from minigrad.random import generator
from minigrad.dtypes import bool_, scalar_type_name
from minigrad.functional_ops import where
from minigrad.nn.ops.activation import (
    Elu, EluInplace, Gelu, GeluTanh, LeakyRelu, LeakyReluInplace, Silu, Softplus, _check_float,
)
from minigrad.ops.broadcast import number
from minigrad.ops.registry import tensor_method
from minigrad.ops.softmax import LogSoftmax, Softmax
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _check_tensors


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
