"""``Linear``: y = x @ weight.T + bias, the fully connected layer; ``Bilinear``: y = x1^T A x2 + b, one
matrix A per output; ``Identity``, which passes x through; ``LazyLinear``, a Linear that reads
``in_features`` from its first input."""
from __future__ import annotations

import math

from minigrad.autograd.grad_mode import no_grad
from minigrad.creation import zeros
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.module import Module
from minigrad.nn.modules.lazy import LazyModuleMixin
from minigrad.nn.parameter import Parameter, UninitializedParameter
from minigrad._tensor import Tensor


class Identity(Module):
    """Returns its input unchanged: a placeholder where a layer is optional. Any arguments are ignored."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """Maps the last dimension from ``in_features`` to ``out_features``.

    ``weight`` is (out_features, in_features) as in PyTorch, so a row of the
    weight is one output unit. Initialised like PyTorch: weight and bias both
    uniform in ±1/sqrt(in_features).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(zeros(out_features, in_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(zeros(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)  # reserve the name: self.bias is None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        if type(self) is Linear:  # (a subclass may make them properties, as parametrize's does)
            # self.weight finds a registered parameter only after a failed lookup and its exception;
            # read it where that lookup ends. A name not registered (deleted, or set to a plain tensor
            # as weight_norm's hook does) is read as an attribute.
            params = self._parameters
            weight, bias = params.get("weight", _MISSING), params.get("bias", _MISSING)
            if weight is not _MISSING and bias is not _MISSING:
                return F.linear(input, weight, bias)
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


_MISSING = object()  # (bias=False registers None)


class NonDynamicallyQuantizableLinear(Linear):
    """``MultiheadAttention.out_proj``: a Linear under the name PyTorch gives it (there, it keeps PyTorch's
    quantization tools off it), so the repr is PyTorch's. minigrad has no quantization: it is just Linear."""


class Bilinear(Module):
    """y = x1^T weight[o] x2 + bias[o] for each output o: ``weight`` is (out_features, in1_features, in2_features).

    Initialised like PyTorch: weight and bias uniform in ±1/sqrt(in1_features).
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(zeros(out_features, in1_features, in2_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(zeros(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


def reset_weight_and_bias(weight: Parameter, bias: Parameter | None) -> None:
    """PyTorch's default for Linear and Conv2d: kaiming_uniform_(a=sqrt(5)) = U(±1/sqrt(fan_in)).

    (The a=sqrt(5) looks odd; it is how PyTorch keeps its older LeCun-style init.)
    """
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(bias, -bound, bound)


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is read from its first input (``nn/modules/lazy.py``)."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)  # (no bias yet: it would be replaced at once)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # loaded from a state_dict: the weight has a shape, the attribute not yet
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]
