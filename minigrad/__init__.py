"""minigrad: a small autograd library with PyTorch's names, on NumPy and Numba.

    import minigrad
    x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([2., 4., 6.])

The order to read it in is in ``minigrad/autograd/__init__.py``'s docstring.
"""
import warnings as _warnings

# PyTorch is silent on inf and NaN data (log(-1), 0/0, inf - inf); NumPy warns. Silence NumPy's
# RuntimeWarnings raised inside minigrad's own modules only: a learner's NumPy code still warns.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"minigrad(\.|$)")

from minigrad.dtypes import bool_ as bool, double, dtype, float, float32, float64, int32, int64, long  # noqa: A001
from minigrad.tensor import Size, Tensor
from minigrad.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minigrad.device import device, get_default_device, set_default_device
from minigrad.creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, manual_seed, ones, ones_like,
    rand, rand_like, randint, randn, randn_like, randperm, tensor, zeros, zeros_like,
)
from minigrad.functional_ops import (
    argmax, broadcast_shapes, broadcast_tensors, cat, clamp, log_softmax, matmul, maximum, pow, softmax, stack, where, write_out as _write_out,
)
from minigrad import autograd, data, nn, optim
from minigrad import accelerator, backends, cuda, utils  # CPU only: cuda/mps/accelerator report "not available"
from minigrad.serialization import load, save

__version__ = "0.1.0"


def _tensor_function(name: str):
    def fn(input: Tensor, *args, out: Tensor | None = None, **kwargs):
        result = getattr(input, name)(*args, **kwargs)
        return result if out is None else _write_out(name, result, out)

    fn.__name__ = name
    fn.__doc__ = f"``minigrad.{name}(t, ...)`` is ``t.{name}(...)``."
    return fn


# minigrad.exp(t), minigrad.sum(t, dim) ... as in PyTorch: the same as the methods.
for _name in ("exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu", "sum", "mean", "max", "min",
              "reshape", "flatten", "transpose", "permute", "squeeze", "unsqueeze", "neg",
              "argmin", "clone", "detach",
              "sin", "cos", "tan", "sinh", "cosh", "log1p", "expm1", "sign", "mm", "mv", "bmm", "t",
              "prod", "cumsum", "norm", "std", "var", "logsumexp", "chunk", "split", "unbind", "gather",
              "scatter_add", "masked_fill", "index_select", "flip", "roll", "tril", "triu", "topk", "sort", "argsort",
              "isclose", "allclose", "equal", "add", "sub", "mul", "div", "narrow", "select", "broadcast_to",
              "all", "any", "clip", "eq", "ne", "lt", "le", "gt", "ge", "is_floating_point", "numel",
              "abs_", "clamp_", "cos_", "cosh_", "exp_", "expm1_", "log_", "log1p_", "neg_", "relu_", "sigmoid_",
              "sin_", "sinh_", "sqrt_", "tan_", "tanh_", "fill_", "zero_", "detach_",
              "floor", "ceil", "trunc", "round", "frac", "remainder", "fmod", "floor_divide", "rsqrt", "reciprocal"):
    globals()[_name] = _tensor_function(_name)
del _name
