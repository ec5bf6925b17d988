"""``where``, and what every elementwise op shares (``ops/elementwise.py`` and its neighbours).

``Where`` is ``where(condition, a, b)`` (``minigrad.where``, ``functional_ops.py``), and through
``_zero_where`` the mask of every backward that zeroes part of a gradient: PyTorch's
``where(mask, 0, grad)``, so that an inf or NaN gradient at a masked-off element gives 0, not NaN.
Beside it the operands' helpers: ``_array`` and ``_shape`` of a tensor or a Python number, and
``_float``, the input of a floating-point function (integer and bool tensors become the default float).
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import broadcast_error, sum_to
from minigrad._tensor import Tensor


def _array(x):
    return x._data if isinstance(x, Tensor) else x


def _shape(x) -> tuple:
    return x._data.shape if isinstance(x, Tensor) else ()


def _float(a: Tensor) -> np.ndarray:
    """The input of a floating-point function: integer and bool tensors become the default float."""
    x = a._data
    return x if x.dtype.kind == "f" else x.astype(dtypes.default_float.numpy)


class Where(Function):
    node_name = "WhereBackward0"
    _operands = (1, 2)  # the condition has no edge

    @staticmethod
    def forward(ctx, condition, a, b):
        cond = np.asarray(_array(condition), dtype=bool)
        # Saved as PyTorch saves it: a second backward raises, and a condition tensor changed
        # in place before backward is a version-counter error instead of a wrong gradient.
        is_bool_tensor = isinstance(condition, Tensor) and condition._data is cond
        ctx.save_for_backward(condition if is_bool_tensor else Tensor._wrap(cond))
        ctx.shapes = _shape(a), _shape(b)
        x, y = _array(a), _array(b)
        try:
            out = np.where(cond, x, y)
        except ValueError:
            raise broadcast_error(cond.shape, np.broadcast_shapes(np.shape(x), np.shape(y))) from None
        return Tensor._wrap(out.astype(dtypes.result_type(x, y), copy=False))

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad[1:]
        cond = ctx.saved_tensors[0]._data
        return (None,
                sum_to(Where.apply(cond, grad, 0.0), ctx.shapes[0]) if need_a else None,
                sum_to(Where.apply(cond, 0.0, grad), ctx.shapes[1]) if need_b else None)


def _zero_where(mask: np.ndarray, grad: Tensor) -> Tensor:
    """``grad`` with 0 where ``mask`` is True: PyTorch's ``where(mask, 0, grad)``, so an
    inf or NaN gradient at a masked-off element gives 0 (``grad * ~mask`` would give NaN).

    One expression for both kinds of backward: ``Where`` computes with NumPy and is
    recorded only when grad mode is on (``create_graph=True``).
    """
    return Where.apply(mask, 0.0, grad)

