"""The older, instance-style Function of MegEngine and PyTorch 0.x, kept for teaching.

    class Sigmoid(StatefulFunction):
        def forward(self, x):
            self.y = 1 / (1 + (-x).exp())
            return self.y

        def backward(self, dy):
            return dy * self.y * (1 - self.y)

    y = Sigmoid()(x)

State lives on ``self``, so the instance *is* this call's node. Calling the
same instance twice would overwrite ``self.y`` from the first call while the
first call's node still needs it, and its backward would silently use the
second call's values. So a second call raises. Modern ``Function`` fixes this
by making a fresh ``ctx`` per ``apply``.

Differences from ``Function``, as in MegEngine: inputs must all be tensors
(``TypeError`` otherwise), and outputs that did not reach the loss get
``None`` gradients instead of zeros.
"""
from __future__ import annotations

from minigrad.autograd import graph as _graph  # (_graph.Tensor: the registered tensor class)
from minigrad.autograd.function import Function, FunctionCtx


class StatefulFunction:
    """Subclass with ``forward(self, *tensors)`` and ``backward(self, *grads)``; call an instance once."""

    _used = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # One Function per subclass, so the node is named after it: SigmoidBackward.
        cls._function = type(cls.__name__, (_InstanceCall,), {})

    def forward(self, *tensors):
        raise NotImplementedError("subclasses of StatefulFunction must implement forward(self, *tensors)")

    def backward(self, *output_grads):
        raise NotImplementedError("subclasses of StatefulFunction must implement backward(self, *output_grads)")

    def __call__(self, *tensors):
        Tensor = _graph.Tensor

        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"op Function expect type Tensor as inputs, got {type(t)}")
        if self._used:
            raise RuntimeError(
                f"this {type(self).__name__} instance was already called once: its state (attributes "
                "set on self in forward) belongs to that call's node, and a second call would "
                f"overwrite it before backward runs. Create a new instance per call: "
                f"{type(self).__name__}()(x). (This is why modern Functions get a fresh ctx per apply.)"
            )
        self._used = True
        return self._function.apply(self, *tensors)


class _InstanceCall(Function):
    """Runs a StatefulFunction instance as the forward and backward of one node."""

    @staticmethod
    def forward(ctx: FunctionCtx, instance: StatefulFunction, *tensors):
        ctx.instance = instance
        ctx.set_materialize_grads(False)
        return instance.forward(*tensors)

    @staticmethod
    def backward(ctx: FunctionCtx, *output_grads):
        grads = ctx.instance.backward(*output_grads)
        if not isinstance(grads, tuple):
            grads = (grads,)
        return (None, *grads)
