"""The primitive ops: each derivative is one row of one table.

A row is ``name: (forward on NumPy arrays, derivative)``. The derivative takes
the incoming gradient ``g``, the op's tensor inputs, its output ``out``, its
other arguments and ``need`` (``ctx.needs_input_grad``), and returns one
gradient per tensor input, written with tensor ops so that ``create_graph``
can differentiate it again. A gradient of a broadcast input may keep the
broadcast shape: ``Function`` sums it back (``core/broadcast.py``). Everything
else is composed of these (``a - b`` is ``a + (-b)``) or registered by the
layers above, which replace these rows with PyTorch-exact versions (dtype
promotion, number operands without edges, fused kernels) through the same
``tensor_method``: ``minigrad/layers.py`` lists them.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from minigrad.core.extension import tensor_method
from minigrad.core.function import Function
from minigrad.core.tensor import Tensor


def _sum(a, dim, keepdim):
    return np.sum(a, axis=dim, keepdims=keepdim)


def _unsum(g, a, dim, keepdim):
    """The gradient of a sum: ``g`` spread back over the summed dims."""
    if not keepdim and dim is not None:
        g = g.reshape(tuple(1 if i in dim else n for i, n in enumerate(a.shape)))
    return g.expand(tuple(a.shape))


def _index_add(g, shape, key):
    out = np.zeros(shape, g.dtype)
    np.add.at(out, key, g)
    return out


def _mask(a):
    return Tensor._wrap((a._data > 0).astype(a._data.dtype))


PRIMITIVES: dict[str, tuple[Callable, Callable]] = {
    "add": (np.add, lambda g, a, b, out, need: (g, g)),
    "mul": (np.multiply, lambda g, a, b, out, need: (g * b, g * a)),
    "div": (np.divide, lambda g, a, b, out, need: (g / b, -g * out / b)),
    "neg": (np.negative, lambda g, a, out, need: (-g,)),
    "pow": (np.power, lambda g, a, b, out, need: (
        g * b * a ** (b - 1.0), g * out * a.log() if need[1] else None)),
    "exp": (np.exp, lambda g, a, out, need: (g * out,)),
    "log": (np.log, lambda g, a, out, need: (g / a,)),
    "tanh": (np.tanh, lambda g, a, out, need: (g * (1.0 - out * out),)),
    "relu": (lambda a: np.maximum(a, 0), lambda g, a, out, need: (g * _mask(a),)),
    "sum": (_sum, lambda g, a, out, dim, keepdim, need: (_unsum(g, a, dim, keepdim),)),
    "mean": (lambda a, dim, keepdim: np.mean(a, axis=dim, keepdims=keepdim),
             lambda g, a, out, dim, keepdim, need: (_unsum(g, a, dim, keepdim) * (out.numel() / a.numel()),)),
    "matmul": (np.matmul, lambda g, a, b, out, need: (g @ b.transpose(-1, -2), a.transpose(-1, -2) @ g)),
    "reshape": (np.reshape, lambda g, a, out, shape, need: (g.reshape(tuple(a.shape)),)),
    "expand": (np.broadcast_to, lambda g, a, out, shape, need: (g,)),  # (Function sums g back to a's shape)
    "transpose": (np.swapaxes, lambda g, a, out, d0, d1, need: (g.transpose(d0, d1),)),
    "index": (lambda a, key: a[key], lambda g, a, out, key, need: (Primitive.call("index_add", g, tuple(a.shape), key),)),
    "index_add": (_index_add, lambda g, a, out, shape, key, need: (g[key],)),
    "to": (lambda a, dtype: a.astype(dtype), lambda g, a, out, dtype, need: (g.to(a._data.dtype),)),
}


class Primitive(Function):
    """The Function of every row: forward saves its tensor inputs and output; backward is the row."""

    compute: Callable
    derivative: Callable

    @staticmethod
    def forward(ctx, *args):
        cls = ctx._forward_cls
        tensors = [a for a in args if isinstance(a, Tensor)]
        with np.errstate(all="ignore"):  # as PyTorch: log(0) is -inf, without a warning
            out = Tensor._wrap(np.asarray(cls.compute(*[a._data if isinstance(a, Tensor) else a for a in args])))
        ctx.save_for_backward(*tensors, out)
        ctx.params = args[len(tensors):]
        return out

    @staticmethod
    def backward(ctx, g):
        *inputs, out = ctx.saved_tensors
        grads = ctx._forward_cls.derivative(g, *inputs, out, *ctx.params, ctx.needs_input_grad)
        return tuple(grads) + (None,) * len(ctx.params)

    @staticmethod
    def call(name: str, *args):
        return _FUNCTIONS[name].apply(*args)


_FUNCTIONS = {
    name: type(name.capitalize(), (Primitive,), {
        "node_name": name.capitalize() + "Backward0", "compute": staticmethod(compute), "derivative": staticmethod(row),
    }) for name, (compute, row) in PRIMITIVES.items()
}


def _tensor(x, like: Tensor) -> Tensor:
    """A Python number as a 0-d tensor of ``like``'s dtype (it needs no gradient)."""
    return x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x, like._data.dtype))


def _dims(dim, ndim: int):
    if dim is None:
        return None
    return tuple(sorted(d % max(ndim, 1) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))))


def _shape(args: tuple) -> tuple:
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def _binary(name: str, reflected: bool = False) -> Callable:
    def method(self, other):
        other = _tensor(other, self)
        return Primitive.call(name, other, self) if reflected else Primitive.call(name, self, other)
    return method


def _matmul(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim == 1 and b.ndim == 1:
        return (a * b).sum()
    if a.ndim == 1:
        return Primitive.call("matmul", a.reshape((1, -1)), b).reshape(b.shape[:-2] + b.shape[-1:])
    if b.ndim == 1:
        return Primitive.call("matmul", a, b.reshape((-1, 1))).reshape(a.shape[:-1])
    return Primitive.call("matmul", a, b)


for _name, _method in {
    "__add__": _binary("add"), "__radd__": _binary("add", True), "add": _binary("add"),
    "__mul__": _binary("mul"), "__rmul__": _binary("mul", True), "mul": _binary("mul"),
    "__truediv__": _binary("div"), "__rtruediv__": _binary("div", True), "div": _binary("div"),
    "__pow__": _binary("pow"), "__rpow__": _binary("pow", True), "pow": _binary("pow"),
    "__sub__": lambda self, other: self + -_tensor(other, self), "__rsub__": lambda self, other: -self + other,
    "__neg__": lambda self: Primitive.call("neg", self), "neg": lambda self: Primitive.call("neg", self),
    "exp": lambda self: Primitive.call("exp", self), "log": lambda self: Primitive.call("log", self),
    "tanh": lambda self: Primitive.call("tanh", self), "relu": lambda self: Primitive.call("relu", self),
    "sum": lambda self, dim=None, keepdim=False: Primitive.call("sum", self, _dims(dim, self.ndim), keepdim),
    "mean": lambda self, dim=None, keepdim=False: Primitive.call("mean", self, _dims(dim, self.ndim), keepdim),
    "__matmul__": _matmul, "matmul": _matmul, "__rmatmul__": lambda self, other: _matmul(other, self),
    "reshape": lambda self, *shape: Primitive.call("reshape", self, _shape(shape)),
    "expand": lambda self, *shape: Primitive.call("expand", self, _shape(shape)),
    "transpose": lambda self, d0, d1: Primitive.call("transpose", self, d0, d1),
    "__getitem__": lambda self, key: Primitive.call("index", self, key._data if isinstance(key, Tensor) else key),
    "to": lambda self, dtype: self if self._data.dtype == dtype else Primitive.call("to", self, np.dtype(dtype)),
}.items():
    tensor_method(_name)(_method)
