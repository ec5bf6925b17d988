"""``minigrad.nn.utils``: what a training loop needs beside the layers.

- ``clip_grad.py``: ``clip_grad_norm_`` and ``clip_grad_value_``, which keep one bad batch
  from throwing the weights far away (an RNN's exploding gradients).
- ``convert_parameters.py``: all parameters as one flat vector and back (for methods that
  see a model as a point in R^n: line searches, second-order methods, plotting a loss surface).
- ``rnn.py``: padding a batch of sequences of different lengths to one tensor.
- ``stateless.py``: call a module with other tensors in place of its parameters.
"""
from minigrad.nn.utils import rnn, stateless
from minigrad.nn.utils.clip_grad import (
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from minigrad.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
    "parameters_to_vector", "rnn", "stateless", "vector_to_parameters",
]
