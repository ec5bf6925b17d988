"""Hot loops of minigrad: plain functions over NumPy arrays, no Tensors, no autograd.

The rules every kernel here follows:

* It has a plain-NumPy reference of the same name and signature in
  ``reference.py``; ``tests/kernels/test_kernels.py`` checks the two agree, and checks
  the references against finite differences.
* It is compiled lazily by ``@numba.njit(cache=True)``: nothing compiles when
  this package is imported, the first call compiles for the dtypes it gets,
  and the machine code is saved in ``__pycache__`` so a restarted Jupyter
  kernel loads it instead of compiling again.
* It stays only if ``python bench/bench_kernels.py`` shows it beats its
  reference at every size from 1e6 elements up, in float32 and float64 (for
  conv and pool: on every course shape). A kernel that loses is removed and
  its name is bound to the reference instead, so callers never change:
  today ``sigmoid_forward``, ``tanh_forward``, ``relu_forward``,
  ``log_softmax_backward`` and ``cross_entropy_backward`` (NumPy computes
  ``exp`` and ``tanh`` with SIMD where Numba calls libm per element, and
  ``np.maximum`` already runs at memory bandwidth).
* No ``parallel=True``: on two cores the gain is small and a parallel launch
  can stall while BLAS's threads hold the cores.

The measurements behind both rules, with the machine they were taken on, are
in ``bench/README.md``.

Every function checks its inputs in Python first (clear ``TypeError``,
``ValueError``, ``RuntimeError`` or ``IndexError``, never a Numba typing
error), accepts non-contiguous arrays, and returns the dtype it was given
(float32 or float64). A float16 array is computed in float32 and the result rounded to float16
(``_half_in_float32``, as PyTorch's CPU kernels compute half in float): nothing is compiled for it.
"""
import functools as _functools

import numpy as _np

from minigrad.kernels.conv import conv2d_backward, conv2d_forward, max_pool2d_backward, max_pool2d_forward
from minigrad.kernels.elementwise import (
    gelu_backward, gelu_forward, gelu_tanh_backward, gelu_tanh_forward, relu_backward, sigmoid_backward, tanh_backward,
)
from minigrad.kernels.embedding import embedding_backward
from minigrad.kernels.norm import layer_norm_backward, layer_norm_forward
from minigrad.kernels.reference import (  # their kernels lost and were removed (see above)
    cross_entropy_backward, log_softmax_backward, relu_forward, sigmoid_forward, tanh_forward,
)
from minigrad.kernels.softmax import cross_entropy_forward, log_softmax_forward, softmax_backward, softmax_forward
from minigrad.kernels.softmax import log_softmax_rows  # (float32 and float64 only: not in __all__, not wrapped)
from minigrad.kernels.elementwise import sgd_step_  # (in place, float32 and float64: not in __all__, not wrapped)

_HALF = _np.dtype(_np.float16)


def _half_in_float32(fn):
    """``fn``, taking float16 arrays too (the first argument says): computed in float32, rounded back."""
    def to_half(result):
        return result.astype(_np.float16) if isinstance(result, _np.ndarray) and result.dtype == _np.float32 else result

    @_functools.wraps(fn)
    def run(*args, **kwargs):
        if getattr(args[0], "dtype", None) != _HALF:
            return fn(*args, **kwargs)
        out = kwargs.pop("out", None)
        args = [a.astype(_np.float32) if getattr(a, "dtype", None) == _HALF else a for a in args]
        result = fn(*args, **kwargs)
        result = tuple(to_half(r) for r in result) if isinstance(result, tuple) else to_half(result)
        if out is None:
            return result
        out[...] = result
        return out
    return run


__all__ = [
    "sigmoid_forward", "sigmoid_backward", "tanh_forward", "tanh_backward",
    "relu_forward", "relu_backward", "gelu_forward", "gelu_backward", "gelu_tanh_forward", "gelu_tanh_backward",
    "layer_norm_forward", "layer_norm_backward", "embedding_backward",
    "softmax_forward", "softmax_backward", "log_softmax_forward", "log_softmax_backward",
    "cross_entropy_forward", "cross_entropy_backward",
    "conv2d_forward", "conv2d_backward", "max_pool2d_forward", "max_pool2d_backward",
]

for _name in __all__:
    globals()[_name] = _half_in_float32(globals()[_name])
del _name
