"""``minigrad.nn.utils``: what a training loop needs beside the layers.

- ``clip_grad.py``: ``clip_grad_norm_`` and ``clip_grad_value_``, which keep one bad batch
  from throwing the weights far away (an RNN's exploding gradients).
- ``convert_parameters.py``: all parameters as one flat vector and back (for methods that
  see a model as a point in R^n: line searches, second-order methods, plotting a loss surface).
- ``rnn.py``: padding a batch of sequences of different lengths to one tensor.
- ``stateless.py``: call a module with other tensors in place of its parameters.
- ``parametrize.py``, ``parametrizations.py``: a weight computed from free tensors (weight_norm,
  spectral_norm, orthogonal); ``weight_norm.py``, ``spectral_norm.py``: the older hook-based forms.
- ``fusion.py``: an eval-mode BatchNorm folded into the layer before it; ``init.py``: ``skip_init``.
"""
from minigrad.nn.utils import parametrizations, parametrize, rnn, stateless
from minigrad.nn.utils.clip_grad import (
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from minigrad.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from minigrad.nn.utils.fusion import (
    fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights,
)
from minigrad.nn.utils.init import skip_init
from minigrad.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from minigrad.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
    "parameters_to_vector", "rnn", "stateless", "vector_to_parameters",
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "parametrizations",
    "parametrize", "remove_spectral_norm", "remove_weight_norm", "skip_init", "spectral_norm", "weight_norm",
]
