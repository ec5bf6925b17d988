"""``LayerNorm``, ``GroupNorm`` and ``RMSNorm``: normalise each sample on its own, then scale (and shift).

``LocalResponseNorm`` (AlexNet's) divides each channel by the energy of its neighbouring channels.
"""
from __future__ import annotations

from minigrad.creation import ones, zeros
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.module import Module
from minigrad.nn.parameter import Parameter
from minigrad._tensor import Tensor


def add_affine_parameters(module: Module, shape, affine: bool, bias: bool, dtype, device) -> None:
    """A normalization's learned scale ``weight`` (ones) and shift ``bias`` (zeros) of ``shape``. One not
    learned is registered as None, so ``module.weight`` and ``module.bias`` always exist, as in PyTorch."""
    if affine:
        module.weight = Parameter(ones(shape, dtype=dtype, device=device))
    else:
        module.register_parameter("weight", None)
    if affine and bias:
        module.bias = Parameter(zeros(shape, dtype=dtype, device=device))
    else:
        module.register_parameter("bias", None)


class LayerNorm(Module):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last ``len(normalized_shape)`` dimensions.

    Unlike BatchNorm it uses each sample's own statistics, so it behaves the
    same in training and evaluation and with a batch of one. ``weight`` starts
    at ones and ``bias`` at zeros (both of ``normalized_shape``), as in PyTorch.
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        add_affine_parameters(self, shape, elementwise_affine, bias, dtype, device)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise each sample's ``num_channels`` channels in ``num_groups`` groups, then scale and shift each channel.

    Like LayerNorm it does not depend on the batch, so it works with batches of one (detection and
    segmentation models use it where the batches are too small for BatchNorm). ``weight`` starts at
    ones and ``bias`` at zeros, one per channel, as in PyTorch.
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        add_affine_parameters(self, num_channels, affine, bias, dtype, device)

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last ``len(normalized_shape)`` dimensions.

    LayerNorm without subtracting the mean and without a bias (Zhang & Sennrich, 2019): the rescaling is
    what matters, and it is cheaper. ``eps=None`` is the input dtype's machine epsilon, as in PyTorch.
    ``weight`` starts at ones.
    """

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        if elementwise_affine:  # (a scale only: no bias attribute, as in PyTorch)
            self.weight = Parameter(ones(shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """``F.local_response_norm``: each channel divided by (k + alpha * mean of the squares of ``size``
    neighbouring channels) ** beta. No parameters."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
