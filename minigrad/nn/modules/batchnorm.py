"""``BatchNorm1d``, ``2d`` and ``3d``: normalise each channel over the batch, and remember the statistics.

In training a batch is normalised with its own mean and variance, and the
running statistics (buffers ``running_mean``, ``running_var``, counted by
``num_batches_tracked``) move toward them. After ``eval()`` the running
statistics are used instead, so a prediction no longer depends on the rest of
its batch. Forgetting ``model.eval()`` before testing is the classic bug.
``LazyBatchNorm1d/2d/3d`` read ``num_features`` from their first input.
"""
from __future__ import annotations

from minigrad.autograd.grad_mode import no_grad
from minigrad.creation import ones, tensor, zeros
from minigrad.dtypes import int64
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.module import Module
from minigrad.nn.modules.lazy import LazyModuleMixin
from minigrad.nn.modules.normalization import add_affine_parameters
from minigrad.nn.parameter import UninitializedBuffer, UninitializedParameter
from minigrad._tensor import Tensor


class _BatchNorm(Module):
    _accepted_ndims: tuple = ()
    _version = 2  # (version 1, before PyTorch 0.4.1, had no num_batches_tracked)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        add_affine_parameters(self, num_features, affine, bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        """A checkpoint without a version, or from version 1, may lack ``num_batches_tracked``:
        the layer keeps its own count (0 in a new layer) instead of reporting a missing key."""
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            count = self.num_batches_tracked
            state_dict[key] = count if count is not None else tensor(0, dtype=int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._accepted_ndims:
            dims = " or ".join(f"{d}D" for d in self._accepted_ndims)
            raise ValueError(f"expected {dims} input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average: the mean of all batches so far
                factor = 1.0 / float(self.num_batches_tracked.item())
        # Batch statistics while training, or when there are no running statistics to use.
        use_batch = self.training or self.running_mean is None
        tracking = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if tracking else None,
            self.running_var if tracking else None,
            self.weight, self.bias, use_batch, factor, self.eps,
        )

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Over (N, C) features or (N, C, L) sequences: statistics per channel C."""

    _accepted_ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Over (N, C, H, W) images: statistics per channel, across the batch and every pixel."""

    _accepted_ndims = (4,)


class BatchNorm3d(_BatchNorm):
    """Over (N, C, D, H, W) volumes: statistics per channel, across the batch and every voxel."""

    _accepted_ndims = (5,)


class _LazyNormBase(LazyModuleMixin, _BatchNorm):
    """What the lazy batch and instance norms share: ``num_features`` read from ``input.shape[1]``
    (also for an unbatched instance-norm input, where that is not the channel dimension: PyTorch's rule)."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)  # placeholders follow
        self.affine, self.track_running_stats = affine, track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A ``BatchNorm1d`` whose ``num_features`` is read from its first input (``nn/modules/lazy.py``)."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A ``BatchNorm2d`` whose ``num_features`` is read from its first input (``nn/modules/lazy.py``)."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A ``BatchNorm3d`` whose ``num_features`` is read from its first input (``nn/modules/lazy.py``)."""

    cls_to_become = BatchNorm3d
