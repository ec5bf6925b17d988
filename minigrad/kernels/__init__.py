"""Hot loops of minigrad: plain functions over NumPy arrays, no Tensors, no autograd.

The rules every kernel here follows:

* It has a plain-NumPy reference of the same name and signature in
  ``reference.py``; ``tests/test_kernels.py`` checks the two agree, and checks
  the references against finite differences.
* It is compiled lazily by ``@numba.njit(cache=True)``: nothing compiles when
  this package is imported, the first call compiles for the dtypes it gets,
  and the machine code is saved in ``__pycache__`` so a restarted Jupyter
  kernel loads it instead of compiling again.
* It stays only if ``python bench/bench_kernels.py`` shows it beats its
  reference at every size from 1e6 elements up, in float32 and float64 (for
  conv and pool: on every course shape). The Numba kernels of the names below
  were measured with that command and lost, so they were removed from the
  library and from the bench, and each name is bound to its reference instead
  (2-core AMD EPYC, numpy 2.4 with AVX-512, numba 0.68):

  - ``sigmoid_forward``, ``tanh_forward``, ``cross_entropy_backward``: their
    time goes into exp or tanh, which NumPy computes with SIMD while Numba
    calls the scalar libm function per element; fusing passes does not make
    up for it (0.02x-0.6x).
  - ``log_softmax_backward``: faster on most sizes (median 1.2-1.3x) but
    not on all: 0.96x at its worst. (``log_softmax_forward`` lost too while
    it called exp per element; split between Numba and NumPy's SIMD exp, as
    ``softmax.py`` explains, it wins and is back.)
  - ``relu_forward``: ``np.maximum`` already runs at memory bandwidth; the
    kernel loses in float64 at 1e6 and 1e7 (0.66x-0.8x).
  - ``sum_to_shape``: ``ndarray.sum`` is already one vectorised pass; a Numba
    candidate lost on the row-sum case, so no kernel was added (and the bench
    no longer times the candidate).

* No ``parallel=True``: on 2 cores it gained at most 1.8x alone, lost on
  others, and a parallel launch sometimes stalled for ~8 ms when BLAS or
  another process's threads held the cores. The bench's "threads" section
  still times the parallel twin of ``gelu_forward`` (the 1.8x); the stall was
  measured on the twin of the ``relu_forward`` kernel, removed with it.

Every function checks its inputs in Python first (clear ``TypeError``,
``ValueError``, ``RuntimeError`` or ``IndexError``, never a Numba typing
error), accepts non-contiguous arrays, and returns the dtype it was given
(float32 or float64).
"""
from minigrad.kernels.conv import conv2d_backward, conv2d_forward, max_pool2d_backward, max_pool2d_forward
from minigrad.kernels.elementwise import gelu_backward, gelu_forward, relu_backward, sigmoid_backward, tanh_backward
from minigrad.kernels.reduce import sum_to_shape
from minigrad.kernels.reference import (  # their kernels lost and were removed (see above)
    cross_entropy_backward, log_softmax_backward, relu_forward, sigmoid_forward, tanh_forward,
)
from minigrad.kernels.softmax import cross_entropy_forward, log_softmax_forward, softmax_backward, softmax_forward

__all__ = [
    "sigmoid_forward", "sigmoid_backward", "tanh_forward", "tanh_backward",
    "relu_forward", "relu_backward", "gelu_forward", "gelu_backward",
    "softmax_forward", "softmax_backward", "log_softmax_forward", "log_softmax_backward",
    "cross_entropy_forward", "cross_entropy_backward",
    "conv2d_forward", "conv2d_backward", "max_pool2d_forward", "max_pool2d_backward",
    "sum_to_shape",
]
