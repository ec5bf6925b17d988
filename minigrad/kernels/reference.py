"""Plain-NumPy references: the specification every Numba kernel is tested against.

Each function has the signature and the input checks of the public kernel
function of the same name. They favour clarity, but they use NumPy well
(``out=`` to skip temporaries, BLAS for convolution), so that a kernel only
wins against a fair opponent. When a kernel does not win, ``minigrad.kernels``
exports the function from this file instead.

The small ``check_*`` helpers at the top are shared with the kernels: the same
bad input gets the same clear error whichever implementation runs.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
Pair = int | tuple[int, int]  # conv and pool take one int for both spatial dims, or a pair


# ---------------------------------------------------------------------------
# Input checks (shared with the Numba wrappers)
# ---------------------------------------------------------------------------

def check_float(name: str, x) -> np.ndarray:
    """``x`` as an array, refusing dtypes the kernels are not compiled for."""
    x = np.asarray(x)
    if x.dtype not in _FLOATS:
        raise TypeError(f"{name} must be a float32 or float64 array, got dtype {x.dtype}")
    return x


def check_like(name: str, a, like: np.ndarray) -> np.ndarray:
    """A second operand: same shape and dtype as the first (kernels do not broadcast or promote)."""
    a = check_float(name, a)
    if a.shape != like.shape:
        raise ValueError(f"{name} has shape {a.shape}, expected {like.shape}")
    if a.dtype != like.dtype:
        raise TypeError(f"{name} has dtype {a.dtype}, expected {like.dtype} (no implicit promotion)")
    return a


def check_out(out, like: np.ndarray) -> np.ndarray:
    """The caller's preallocated ``out``, checked, or a fresh array shaped like ``like``."""
    if out is None:
        return np.empty_like(like)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a NumPy array, got {type(out).__name__}")
    if out.shape != like.shape or out.dtype != like.dtype:
        raise ValueError(f"out has shape {out.shape} and dtype {out.dtype}, "
                         f"expected {like.shape} and {like.dtype}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    return out


def check_axis(axis: int, ndim: int) -> int:
    """A non-negative axis, with PyTorch's error for one out of range."""
    n = max(ndim, 1)  # a 0-d tensor accepts dim 0 and -1, as in PyTorch
    if not -n <= axis < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {axis})")
    return axis % n


def pair(name: str, v) -> tuple[int, int]:
    """``3`` or ``(3, 3)`` -> ``(3, 3)``: conv and pool take one int per spatial dim."""
    t = (v, v) if isinstance(v, (int, np.integer)) else tuple(v)
    if len(t) != 2 or not all(isinstance(i, (int, np.integer)) for i in t):
        raise TypeError(f"{name} must be an int or a pair of ints, got {v!r}")
    return int(t[0]), int(t[1])


def check_targets(targets, logits: np.ndarray) -> np.ndarray:
    """Class indices, one per row of ``logits``, each in ``[0, C)``."""
    targets = np.asarray(targets)
    if targets.dtype.kind not in "iu":
        raise TypeError(f"targets must be integer class indices, got dtype {targets.dtype}")
    if targets.shape != logits.shape[:1]:
        raise ValueError(f"targets has shape {targets.shape}, expected ({logits.shape[0]},) "
                         f"for logits of shape {logits.shape}")
    if targets.size:
        bad = targets[(targets < 0) | (targets >= logits.shape[1])]
        if bad.size:
            raise IndexError(f"Target {bad[0]} is out of bounds.")
    return targets.astype(np.int64, copy=False)


def check_logits(logits) -> np.ndarray:
    logits = check_float("logits", logits)
    if logits.ndim != 2:
        raise ValueError(f"cross_entropy expects logits of shape (N, C), got {logits.shape}")
    return logits


def check_conv(x, weight, bias, stride, padding):
    """Validate a conv2d call like PyTorch does; return (x, weight, bias, stride, padding, out_hw)."""
    x, weight = check_float("input", x), check_float("weight", weight)
    if x.ndim != 4:
        raise RuntimeError(f"Expected 4D (batched) input to conv2d, but got input of size: {list(x.shape)}")
    if weight.ndim != 4:
        raise RuntimeError(f"weight must be 4D (out_channels, in_channels, kH, kW), got {list(weight.shape)}")
    if weight.shape[1] != x.shape[1]:
        raise RuntimeError(f"Given groups=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {weight.shape[1]} channels, but got "
                           f"{x.shape[1]} channels instead")
    if weight.dtype != x.dtype:
        raise TypeError(f"Input type ({x.dtype}) and weight type ({weight.dtype}) should be the same")
    if bias is not None:
        bias = check_float("bias", bias)
        if bias.shape != weight.shape[:1]:
            raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                               f"1-dimensional with {weight.shape[0]} elements, but got bias of "
                               f"size {list(bias.shape)} instead")
        if bias.dtype != x.dtype:
            raise TypeError(f"Input type ({x.dtype}) and bias type ({bias.dtype}) should be the same")
    stride, padding = pair("stride", stride), pair("padding", padding)
    if min(stride) <= 0:
        raise RuntimeError(f"non-positive stride is not supported, got {stride}")
    if min(padding) < 0:
        raise RuntimeError(f"negative padding is not supported, got {padding}")
    hp, wp = x.shape[2] + 2 * padding[0], x.shape[3] + 2 * padding[1]
    kh, kw = weight.shape[2:]
    if kh > hp or kw > wp:
        raise RuntimeError(f"Calculated padded input size per channel: ({hp} x {wp}). Kernel size: "
                           f"({kh} x {kw}). Kernel size can't be greater than actual input size")
    out_hw = ((hp - kh) // stride[0] + 1, (wp - kw) // stride[1] + 1)
    return x, weight, bias, stride, padding, out_hw


def check_conv_grad(grad_y, x: np.ndarray, weight: np.ndarray, out_hw) -> np.ndarray:
    grad_y = check_float("grad_y", grad_y)
    expected = (x.shape[0], weight.shape[0], *out_hw)
    if grad_y.shape != expected or grad_y.dtype != x.dtype:
        raise ValueError(f"grad_y has shape {grad_y.shape} and dtype {grad_y.dtype}, "
                         f"expected {expected} and {x.dtype}")
    return grad_y


def check_pool(x, kernel_size, stride, padding):
    """Validate a max_pool2d call; return (x, kernel, stride, padding, out_hw). stride=None means kernel."""
    x = check_float("input", x)
    if x.ndim != 4:
        raise RuntimeError(f"Expected 4D (batched) input to max_pool2d, but got input of size: {list(x.shape)}")
    kernel = pair("kernel_size", kernel_size)
    stride = kernel if stride is None else pair("stride", stride)
    padding = pair("padding", padding)
    if min(kernel) <= 0 or min(stride) <= 0:
        raise RuntimeError(f"kernel_size and stride must be positive, got {kernel} and {stride}")
    if not all(0 <= p <= k // 2 for p, k in zip(padding, kernel)):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={padding}, kernel_size={kernel} and dilation=1")
    out_hw = tuple((n + 2 * p - k) // s + 1 for n, p, k, s in zip(x.shape[2:], padding, kernel, stride))
    if min(out_hw) < 1:
        raise RuntimeError(f"Given input size: ({x.shape[1]}x{x.shape[2]}x{x.shape[3]}). Calculated "
                           f"output size: ({x.shape[1]}x{out_hw[0]}x{out_hw[1]}). Output size is too small")
    return x, kernel, stride, padding, out_hw


def check_pool_grad(grad_y, indices, input_shape):
    """Validate a max_pool2d backward call; return (grad_y, indices as int64, input_shape)."""
    grad_y = check_float("grad_y", grad_y)
    indices = np.asarray(indices)
    input_shape = tuple(int(s) for s in input_shape)
    if grad_y.ndim != 4 or len(input_shape) != 4 or grad_y.shape[:2] != input_shape[:2]:
        raise ValueError(f"grad_y of shape {grad_y.shape} does not match input_shape {input_shape}")
    if indices.shape != grad_y.shape or indices.dtype.kind not in "iu":
        raise ValueError(f"indices must be integers of shape {grad_y.shape}, got {indices.dtype} {indices.shape}")
    plane = input_shape[2] * input_shape[3]
    if indices.size and (indices.min() < 0 or indices.max() >= plane):
        raise IndexError(f"max_pool2d indices must lie in [0, {plane}) for input_shape {input_shape}")
    return grad_y, indices.astype(np.int64, copy=False), input_shape


# ---------------------------------------------------------------------------
# Elementwise activations: forward(x) and backward(saved, grad)
# ---------------------------------------------------------------------------

def sigmoid_forward(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """1 / (1 + exp(-x)), in three in-place passes after the first."""
    x = check_float("x", x)
    out = check_out(out, x)
    with np.errstate(over="ignore"):  # exp(-x) = inf for very negative x gives the right 0
        np.exp(-x, out=out)
    out += 1
    return np.reciprocal(out, out=out)


def sigmoid_backward(y: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad * y * (1 - y), from the saved output y = sigmoid(x): no exp needed."""
    y = check_float("y", y)
    grad = check_like("grad", grad, y)
    t = 1 - y  # one temporary, so that out may alias y or grad
    t *= y
    return np.multiply(grad, t, out=check_out(out, y))


def tanh_forward(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    x = check_float("x", x)
    return np.tanh(x, out=check_out(out, x))


def tanh_backward(y: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad * (1 - y*y), from the saved output y = tanh(x)."""
    y = check_float("y", y)
    grad = check_like("grad", grad, y)
    return np.multiply(grad, 1 - y * y, out=check_out(out, y))


def relu_forward(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    x = check_float("x", x)
    return np.maximum(x, 0, out=check_out(out, x))  # NaN stays NaN, as in torch.relu


def relu_backward(x: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """0 where x <= 0, else grad: torch's ``threshold_backward``. Not grad * (x > 0), which
    turns an inf grad at a dead unit into NaN; and a NaN x passes its gradient (NaN <= 0 is false)."""
    x = check_float("x", x)
    grad = check_like("grad", grad, x)
    out = check_out(out, x)
    np.copyto(out, np.where(x <= 0, 0, grad))
    return out


_erf_object = np.frompyfunc(math.erf, 1, 1)


def sgd_step_(p: np.ndarray, g: np.ndarray, lr: float) -> np.ndarray:
    """p -= lr * g, in place: the product (lr a Python number, cast to p's dtype), then the subtraction."""
    p = check_float("p", p)
    g = check_like("g", g, p)
    np.subtract(p, np.multiply(g, lr), out=p)
    return p


def _erf(x: np.ndarray) -> np.ndarray:
    """NumPy has no erf ufunc: call math.erf per element. Exact, but ~50x slower than a ufunc."""
    return np.asarray(_erf_object(x)).astype(x.dtype)


def gelu_forward(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """x * Phi(x), with the exact erf like torch's default ``approximate='none'``."""
    x = check_float("x", x)
    cdf = _erf(x * math.sqrt(0.5))
    cdf += 1
    cdf *= 0.5
    return np.multiply(x, cdf, out=check_out(out, x))


def gelu_backward(x: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad * (Phi(x) + x * phi(x)), from the saved input x."""
    x = check_float("x", x)
    grad = check_like("grad", grad, x)
    cdf = 0.5 * (1 + _erf(x * math.sqrt(0.5)))
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return np.multiply(grad, cdf + x * pdf, out=check_out(out, x))


_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


def gelu_tanh_forward(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """0.5 x (1 + tanh(k (x + 0.044715 x^3))), k = sqrt(2/pi): torch's ``approximate='tanh'``."""
    x = check_float("x", x)
    t = np.tanh(_GELU_K * (x + _GELU_C * x * x * x))
    return np.multiply(0.5 * x, 1 + t, out=check_out(out, x))


def gelu_tanh_backward(x: np.ndarray, grad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """grad * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 * 0.044715 x^2)), t the forward's tanh, from x."""
    x = check_float("x", x)
    grad = check_like("grad", grad, x)
    t = np.tanh(_GELU_K * (x + _GELU_C * x * x * x))
    factor = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _GELU_K * (1 + 3 * _GELU_C * x * x)
    return np.multiply(grad, factor, out=check_out(out, x))


# ---------------------------------------------------------------------------
# LayerNorm over the last axis (rows of a 2-D array), statistics in float64
# ---------------------------------------------------------------------------

def check_layer_norm(x, weight, other, other_name: str) -> tuple:
    """x as (rows, C) floats; weight and ``other`` (bias or grad) None or matching, as the kernels take them."""
    x = check_float("x", x)
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D (rows, normalized features), got shape {x.shape}")
    if weight is not None:
        weight = check_float("weight", weight)
        if weight.shape != (x.shape[1],) or weight.dtype != x.dtype:
            raise ValueError(f"weight must be a {x.dtype} array of shape ({x.shape[1]},), got {weight.dtype} "
                             f"{weight.shape}")
    if other is not None:
        other = check_float(other_name, other)
        want = (x.shape[1],) if other_name == "bias" else x.shape
        if other.shape != want or other.dtype != x.dtype:
            raise ValueError(f"{other_name} must be a {x.dtype} array of shape {want}, got {other.dtype} "
                             f"{other.shape}")
    return x, weight, other


def layer_norm_forward(x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None,
                       eps: float) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * weight + bias over each row (biased variance), in float64, cast back."""
    x, weight, bias = check_layer_norm(x, weight, bias, "bias")
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    centered = x64 - mean
    out = centered / np.sqrt((centered * centered).mean(axis=1, keepdims=True) + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.astype(x.dtype)


def layer_norm_backward(x: np.ndarray, weight: np.ndarray | None, grad: np.ndarray, eps: float,
                        output_mask=(True, True, True)) -> tuple:
    """(d x, d weight, d bias) of ``layer_norm_forward``, from the saved x; None where ``output_mask`` is False.

    d x = (g - mean(g) - x_hat * mean(g * x_hat)) * rstd with g = grad * weight, over each row;
    d weight = sum over rows of grad * x_hat; d bias = sum over rows of grad. All in float64, cast back.
    """
    x, weight, grad = check_layer_norm(x, weight, grad, "grad")
    x64, g64 = x.astype(np.float64), grad.astype(np.float64)
    centered = x64 - x64.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt((centered * centered).mean(axis=1, keepdims=True) + eps)
    x_hat = centered * rstd
    g = g64 if weight is None else g64 * weight
    grad_x = grad_weight = grad_bias = None
    if output_mask[0]:
        grad_x = ((g - g.mean(axis=1, keepdims=True) - x_hat * (g * x_hat).mean(axis=1, keepdims=True))
                  * rstd).astype(x.dtype)
    if output_mask[1]:
        grad_weight = (g64 * x_hat).sum(axis=0).astype(x.dtype)
    if output_mask[2]:
        grad_bias = g64.sum(axis=0).astype(x.dtype)
    return grad_x, grad_weight, grad_bias


# ---------------------------------------------------------------------------
# Embedding: the lookup's gradient
# ---------------------------------------------------------------------------

def check_embedding_backward(indices, grad, num_weights: int) -> tuple:
    """Flat integer indices in [0, num_weights) and a (len(indices), D) float grad."""
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu" or indices.ndim != 1:
        raise TypeError(f"indices must be a 1-D integer array, got {indices.dtype} of shape {indices.shape}")
    grad = check_float("grad", grad)
    if grad.ndim != 2 or grad.shape[0] != indices.shape[0]:
        raise ValueError(f"grad must be ({indices.shape[0]}, D), one row per index, got shape {grad.shape}")
    if indices.size and (indices.min() < 0 or indices.max() >= num_weights):
        raise IndexError(f"an index is out of range for {num_weights} rows")
    return indices, grad


def embedding_backward(indices: np.ndarray, grad: np.ndarray, num_weights: int) -> np.ndarray:
    """(num_weights, D) zeros plus, for each i, grad[i] added to row indices[i] (np.add.at, in index order)."""
    indices, grad = check_embedding_backward(indices, grad, num_weights)
    out = np.zeros((num_weights, grad.shape[1]), grad.dtype)
    np.add.at(out, indices, grad)
    return out


# ---------------------------------------------------------------------------
# Softmax family, along one axis
# ---------------------------------------------------------------------------

def _reduce_axis(x: np.ndarray, axis: int):
    return check_axis(axis, x.ndim) if x.ndim else None


def softmax_forward(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x - max) / sum: subtracting the max keeps exp from overflowing."""
    x = check_float("x", x)
    axis = _reduce_axis(x, axis)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return e


def log_softmax_forward(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """(x - max) - log(sum(exp(x - max))): never takes the log of a rounded-to-0 probability."""
    x = check_float("x", x)
    axis = _reduce_axis(x, axis)
    shifted = x - x.max(axis=axis, keepdims=True)
    shifted -= np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return shifted


def softmax_backward(y: np.ndarray, grad: np.ndarray, axis: int = -1) -> np.ndarray:
    """y * (grad - sum(grad * y)): the Jacobian-vector product without building the Jacobian."""
    y = check_float("y", y)
    grad = check_like("grad", grad, y)
    axis = _reduce_axis(y, axis)
    return y * (grad - (grad * y).sum(axis=axis, keepdims=True))


def log_softmax_backward(y: np.ndarray, grad: np.ndarray, axis: int = -1) -> np.ndarray:
    """grad - softmax * sum(grad), with softmax = exp(y) from the saved output y."""
    y = check_float("y", y)
    grad = check_like("grad", grad, y)
    axis = _reduce_axis(y, axis)
    return grad - np.exp(y) * grad.sum(axis=axis, keepdims=True)


def cross_entropy_forward(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean of -log_softmax(logits)[i, targets[i]]; log_probs are returned for the backward."""
    logits = check_logits(logits)
    targets = check_targets(targets, logits)
    log_probs = log_softmax_forward(logits, axis=1)
    picked = log_probs[np.arange(len(targets)), targets]
    loss = -picked.sum(dtype=np.float64) / len(targets) if len(targets) else math.nan
    return float(loss), log_probs


def cross_entropy_backward(log_probs: np.ndarray, targets: np.ndarray, grad_scalar: float) -> np.ndarray:
    """(softmax - onehot(targets)) * grad / N: the famously simple gradient of the fused op."""
    log_probs = check_logits(log_probs)
    targets = check_targets(targets, log_probs)
    grad = np.exp(log_probs)
    grad[np.arange(len(targets)), targets] -= 1
    grad *= float(grad_scalar) / max(len(targets), 1)
    return grad


# ---------------------------------------------------------------------------
# Convolution and max pooling, NCHW
# ---------------------------------------------------------------------------

def _windows(x: np.ndarray, kernel, stride, padding, fill=0.0) -> np.ndarray:
    """im2col as a view: (N, C, OH, OW, KH, KW) windows of the padded input, no copy yet."""
    (ph, pw), (sh, sw) = padding, stride
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=fill)
    return sliding_window_view(xp, kernel, axis=(2, 3))[:, :, ::sh, ::sw]


def conv2d_forward(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None,
                   stride: Pair = (1, 1), padding: Pair = (0, 0)) -> np.ndarray:
    """y[n,o] = bias[o] + sum over (c, kh, kw) of weight[o,c] * window of x[n,c]: one BLAS call."""
    x, weight, bias, stride, padding, _ = check_conv(x, weight, bias, stride, padding)
    win = _windows(x, weight.shape[2:], stride, padding)
    y = np.tensordot(win, weight, axes=([1, 4, 5], [1, 2, 3]))  # (N, OH, OW, O); copies win
    if bias is not None:
        y += bias
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2))


def conv2d_backward(x: np.ndarray, weight: np.ndarray, grad_y: np.ndarray, stride: Pair = (1, 1),
                    padding: Pair = (0, 0), output_mask: tuple[bool, bool, bool] = (True, True, True),
                    ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """(grad_x, grad_weight, grad_bias), each None where ``output_mask`` says it is not needed.

    grad_x scatters each window's gradient back (col2im).
    """
    x, weight, _, stride, padding, out_hw = check_conv(x, weight, None, stride, padding)
    grad_y = check_conv_grad(grad_y, x, weight, out_hw)
    need_x, need_weight, need_bias = output_mask
    (kh_size, kw_size), (sh, sw), (ph, pw), (oh, ow) = weight.shape[2:], stride, padding, out_hw
    grad_bias = grad_y.sum(axis=(0, 2, 3)) if need_bias else None
    grad_weight = None
    if need_weight:
        win = _windows(x, (kh_size, kw_size), stride, padding)
        grad_weight = np.tensordot(grad_y, win, axes=([0, 2, 3], [0, 2, 3]))  # (O, C, KH, KW)
    if not need_x:
        return None, grad_weight, grad_bias
    grad_win = np.tensordot(grad_y, weight, axes=([1], [0]))  # (N, OH, OW, C, KH, KW)
    grad_xp = np.zeros((x.shape[0], x.shape[1], x.shape[2] + 2 * ph, x.shape[3] + 2 * pw), x.dtype)
    for kh in range(kh_size):  # each kernel offset touches a strided slice of the padded input
        for kw in range(kw_size):
            grad_xp[:, :, kh:kh + sh * oh:sh, kw:kw + sw * ow:sw] += grad_win[..., kh, kw].transpose(0, 3, 1, 2)
    grad_x = grad_xp[:, :, ph:ph + x.shape[2], pw:pw + x.shape[3]]
    return np.ascontiguousarray(grad_x), grad_weight, grad_bias


def max_pool2d_forward(x: np.ndarray, kernel_size: Pair, stride: Pair | None = None,
                       padding: Pair = (0, 0)) -> tuple[np.ndarray, np.ndarray]:
    """(y, indices): indices[n,c,i,j] is the flat position in the H*W plane of the max, as in torch."""
    x, kernel, stride, padding, (oh, ow) = check_pool(x, kernel_size, stride, padding)
    n, c, h, w = x.shape
    win = _windows(x, kernel, stride, padding, fill=-np.inf).reshape(n, c, oh, ow, -1)
    position = _windows(np.arange(h * w).reshape(1, 1, h, w), kernel, stride, padding, fill=-1)
    position = position.reshape(oh, ow, -1)  # flat index of each window cell, -1 for padding
    best = win.argmax(axis=-1)  # the first max, like torch
    y = np.take_along_axis(win, best[..., None], axis=-1)[..., 0]
    indices = np.take_along_axis(np.broadcast_to(position, win.shape), best[..., None], axis=-1)[..., 0]
    # A window of only -inf would pick a padding cell (-1); torch reports its first real cell.
    first_real = np.where(position >= 0, position, h * w).min(axis=-1)
    indices = np.where(indices < 0, first_real, indices)
    return np.ascontiguousarray(y), indices.astype(np.int64)


def max_pool2d_backward(grad_y: np.ndarray, indices: np.ndarray, input_shape: tuple[int, ...]) -> np.ndarray:
    """Scatter-add grad_y to the max positions; add.at sums where windows overlap."""
    grad_y, indices, input_shape = check_pool_grad(grad_y, indices, input_shape)
    n, c, h, w = input_shape
    grad_x = np.zeros((n * c, h * w), grad_y.dtype)
    rows = np.arange(n * c)[:, None]
    np.add.at(grad_x, (rows, indices.reshape(n * c, -1)), grad_y.reshape(n * c, -1))
    return grad_x.reshape(input_shape)
