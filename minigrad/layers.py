"""The library: every layer on the core, plugged in here and nowhere else.

``minigrad/core/`` is the autograd, closed and small. Each layer below plugs into
one of its named extension points (``minigrad/core/extension.py``), in this order:

1. the rest of the Tensor API (``_tensor.py``: dtypes, printing, conversions,
   copying; ``extend_tensor``);
2. PyTorch's views (``autograd/views.py``: ``Extensions.views``);
3. PyTorch's ready queue (``autograd/engine.py``: ``Extensions.ReadyQueue``);
4. anomaly mode (``autograd/anomaly_mode.py``: ``Extensions.anomaly``, while it is
   on) and saved-tensor hooks (``autograd/graph.py``: ``Extensions.saved_tensor_hooks``);
5. the op families (``ops/``, ``linalg``, ...): each op's method goes into the op
   table (``tensor_method``), and the PyTorch-exact arithmetic, reductions and views
   replace the core's primitive rows;
6. what is built on ops: ``nn``, ``optim``, ``data``, ``distributions``, ``func``, ...

``minigrad/__init__.py`` publishes every name defined here.
"""
import warnings as _warnings

# PyTorch is silent on inf and NaN data (log(-1), 0/0, inf - inf); NumPy warns. Silence NumPy's
# RuntimeWarnings raised inside minigrad's own modules only: a learner's NumPy code still warns.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"minigrad(\.|$)")

from minigrad.core.extension import Extensions as _Extensions
from minigrad import _tensor  # noqa: F401  (1: the Tensor API)
from minigrad.autograd import engine as _engine, views as _views

_Extensions.views = _views  # 2
_Extensions.ReadyQueue = _engine._ReadyQueue  # 3

from minigrad.dtypes import (  # noqa: A001
    bfloat16, bool_ as bool, double, dtype, float, float16, float32, float64, get_default_dtype, half, int32, int64, long,
    set_default_dtype, uint8,
)
from minigrad._tensor import Size, Tensor, check_tensor as _check_tensor, is_tensor
from minigrad.autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from minigrad.device import device, get_default_device, set_default_device
from minigrad.random import initial_seed, manual_seed, seed
from minigrad.creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones, ones_like,
    rand, rand_like, randint, randn, randn_like, randperm, tensor, zeros, zeros_like,
)
# Each op module gives Tensor its methods as it is imported (ops/registry.py): import them all.
from minigrad.ops import (  # noqa: F401
    arrange, compare, elementwise, extrema, float_parts, gamma, indexing, inplace, integer, inverse_trig, logarithms,
    matmul, matrix, movement, number_kind, products, predicates, reduction, rounding, scan, shape, softmax, sorting,
    special, stats, unary,
)
from minigrad.ops import copies, subscript, view_replay  # noqa: F401  (x[key], clone/to/copy_, CopySlices)
from minigrad import linalg  # torch.linalg; it also gives Tensor det, inverse, svd ... (ops/registry.py)
# Statistics of a sample, distances, integrals (median ... cov, cdist, trapezoid).
from minigrad.ops import distances, numerical, order_statistics, sample_statistics  # noqa: F401
from minigrad.ops.distances import cdist
from minigrad.ops.numerical import cumulative_trapezoid, trapezoid, trapz, vander
from minigrad.sampling import Generator, get_rng_state, normal, randint_like, set_rng_state  # (and Tensor.random_ ...)
from minigrad.type_info import can_cast, finfo, iinfo, promote_types, result_type
from minigrad.threads import get_num_threads, set_num_threads
from minigrad.printing import set_printoptions
# The switches and helpers at the top of reproducible scripts and learners' tests (settings.py: recorded,
# minigrad's ops are deterministic already; compile returns the model itself: minigrad has no compiler).
from minigrad.autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from minigrad.settings import (
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode, get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode, set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from minigrad.compiler import compile  # noqa: A001
from minigrad.sharing import asarray, frombuffer
from minigrad.type_info import typename
from minigrad import testing
from minigrad.ops.arrange import column_stack, concat, concatenate, dstack, hstack, meshgrid, vstack
from minigrad.ops.extrema import std_mean, var_mean
from minigrad.ops.gamma import polygamma
from minigrad.ops.products import einsum, tensordot
from minigrad.ops.registry import TOP_LEVEL as _TOP_LEVEL, WITHOUT_OUT as _WITHOUT_OUT
from minigrad.functional_ops import (
    broadcast_shapes, broadcast_tensors, cat, maximum, pow, stack, where, write_out as _write_out,
)
from minigrad import autograd, data, func, nn, optim, return_types
from minigrad import distributions  # torch.distributions: Normal, Categorical, kl_divergence ...
from minigrad.nn.functional import cosine_similarity, pairwise_distance  # (torch has them at the top too)
from minigrad import accelerator, backends, cuda, distributed, utils  # CPU only: cuda/mps/accelerator report "not available"
from minigrad.serialization import load, save
# Writes along indices, splits and shape helpers, assembled tensors, searches and counts.
from minigrad.ops import assembly, reshaping, scatter, search  # noqa: F401
from minigrad.ops.assembly import block_diag, cartesian_prod, combinations, tril_indices, triu_indices
from minigrad.ops.reshaping import atleast_1d, atleast_2d, atleast_3d
from minigrad.ops.search import bucketize, isin, searchsorted
# Fused multiply-adds (addcmul ... baddbmm), what kind of tensor this is (layout, is_cpu, half() ...), as_strided.
from minigrad.ops import fused, strided as _strided, tensor_kind  # noqa: F401
from minigrad.ops.tensor_kind import layout, strided
# Legacy names old scripts use (autograd.Variable, FloatTensor(...), isinstance(t, LongTensor)), and torch.pi ...
from minigrad.legacy import (  # noqa: F401
    BoolTensor, ByteTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, e, inf, nan, pi,
)
from minigrad import legacy as _legacy
autograd.Variable = _legacy.Variable
# Mixed precision: GradScaler and autocast, CPU-only PyTorch's behaviour (minigrad/amp.py says what changes nothing).
from minigrad import amp  # noqa: E402
from minigrad.amp import autocast, is_autocast_available, is_autocast_enabled

__version__ = "0.1.0"


# The functions whose input may be a Python number (``minigrad.sub(1, t)``), as PyTorch's: its
# arithmetic takes numbers as tensors, and remainder has a number-first overload.
_NUMBER_INPUT = frozenset({"add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder",
                           "multiply", "subtract", "divide", "xlogy", "float_power", "bitwise_and", "bitwise_or",
                           "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"})
# sum and prod without a dim are, in PyTorch, an overload of their own that takes no out=.
_OUT_NEEDS_DIM = frozenset({"sum", "prod"})
# PyTorch writes these only into a bool out=.
_BOOL_OUT = frozenset({"isposinf", "isneginf", "signbit"})


def _check_input(name: str, input) -> None:
    """PyTorch's TypeError for an input that is not a tensor (a list, a NumPy array), instead of an
    AttributeError from deep inside the op."""
    _check_tensor(name, "input", 1, input, numbers=name in _NUMBER_INPUT)


def _top_level(name: str, method):
    """``minigrad.<name>(t, ...)``: the method ``t.<name>(...)``, plus PyTorch's ``out=`` where it has one."""
    if name in _WITHOUT_OUT:
        def fn(input: Tensor, *args, **kwargs):
            if type(input) is not Tensor:
                _check_input(name, input)
            return method(input, *args, **kwargs)
    else:
        def fn(input: Tensor, *args, out: Tensor | None = None, **kwargs):
            if type(input) is not Tensor:
                _check_input(name, input)
            if out is not None and name in _OUT_NEEDS_DIM and not args and "dim" not in kwargs:
                raise TypeError(f"{name}() received an invalid combination of arguments: out= needs a dim, "
                                f"as in PyTorch, whose {name}(input) without one takes no out=")
            if name in _BOOL_OUT and isinstance(out, Tensor) and out._data.dtype.kind != "b":
                raise RuntimeError(f"{name} does not support non-boolean outputs: pass out= a tensor of "
                                   "dtype minigrad.bool")
            result = method(input, *args, **kwargs)
            return result if out is None else _write_out(name, result, out)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``minigrad.{name}(t, ...)`` is ``t.{name}(...)``."
    return fn


# minigrad.exp(t), minigrad.sum(t, dim) ... as in PyTorch: the ops' methods (declared with
# top_level=True), and four methods of the tensor itself (which take no out=).
_TENSOR_OWN = ("detach", "detach_", "is_floating_point", "numel")
_WITHOUT_OUT.update(_TENSOR_OWN)
for _name, _method in {**_TOP_LEVEL, **{n: getattr(Tensor, n) for n in _TENSOR_OWN}}.items():
    globals()[_name] = _top_level(_name, _method)
del _name, _method
