"""``InstanceNorm1d``, ``2d`` and ``3d``: normalise each channel of each sample over its positions.

Unlike BatchNorm the statistics are each sample's own, so by default (``affine=False``,
``track_running_stats=False``) the layer has no parameters and no buffers and behaves the same in
training and evaluation. With ``track_running_stats=True`` it keeps running statistics as
BatchNorm does, and uses them after ``eval()``. ``LazyInstanceNorm1d/2d/3d`` read ``num_features``
from their first input.
"""
from __future__ import annotations

import warnings

from minigrad.nn import functional as F
from minigrad.nn.modules.batchnorm import _BatchNorm, _LazyNormBase
from minigrad._tensor import Tensor


class _InstanceNorm(_BatchNorm):
    """The parameters and buffers are BatchNorm's (PyTorch's ``_NormBase``); only the defaults and forward differ.

    ``num_batches_tracked`` is kept but not counted, and ``momentum=None`` means 0, as in PyTorch.
    """

    _batch_dims: int  # the rank of an input with a batch dimension

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        """A checkpoint without a version holding running statistics for a layer that keeps none
        (PyTorch before 0.4 kept them by default) is refused with a message that says so."""
        if local_metadata.get("version", None) is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if keys:
                name = type(self).__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {} for {} with track_running_stats=False. If state_dict is "
                    "a checkpoint saved before 0.4.0, this may be expected because {} does not track running stats "
                    "by default since 0.4.0. Please remove these keys from state_dict. If the running stats are "
                    "actually needed, instead set track_running_stats=True in {} to enable them. See the "
                    "documentation of {} for details.".format(" and ".join(f'"{k}"' for k in keys), *[name] * 4))
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in (self._batch_dims - 1, self._batch_dims):
            raise ValueError(f"expected {self._batch_dims - 1}D or {self._batch_dims}D input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        channel_dim = input.ndim - self._batch_dims + 1
        if input.shape[channel_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={channel_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[channel_dim]}.")
            warnings.warn(f"input's size at dim={channel_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.ndim < self._batch_dims:  # one sample: a batch of one
            return self._normalize(input.unsqueeze(0)).squeeze(0)
        return self._normalize(input)

    def _normalize(self, input: Tensor) -> Tensor:
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)


class InstanceNorm1d(_InstanceNorm):
    """Over (N, C, L) sequences, or one (C, L) sequence."""

    _batch_dims = 3


class InstanceNorm2d(_InstanceNorm):
    """Over (N, C, H, W) images, or one (C, H, W) image."""

    _batch_dims = 4


class InstanceNorm3d(_InstanceNorm):
    """Over (N, C, D, H, W) volumes, or one (C, D, H, W) volume."""

    _batch_dims = 5


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """An ``InstanceNorm1d`` whose ``num_features`` is read from ``input.shape[1]`` (``nn/modules/lazy.py``).
    Its defaults are the lazy base's, as in PyTorch: ``affine=True, track_running_stats=True``."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    """An ``InstanceNorm2d`` whose ``num_features`` is read from ``input.shape[1]`` (``nn/modules/lazy.py``)."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    """An ``InstanceNorm3d`` whose ``num_features`` is read from ``input.shape[1]`` (``nn/modules/lazy.py``)."""

    cls_to_become = InstanceNorm3d
