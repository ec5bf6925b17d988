"""Activations as Modules, so they can sit in a ``Sequential``: ReLU, Tanh, Sigmoid.

They have no parameters; each forward is one call of the tensor method.
(PyTorch's ``ReLU(inplace=True)`` does not exist here.)
"""
from __future__ import annotations

from minigrad.nn.module import Module
from minigrad.tensor import Tensor


class ReLU(Module):
    """max(x, 0)."""

    def forward(self, input: Tensor) -> Tensor:
        return input.relu()


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return input.tanh()


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return input.sigmoid()
