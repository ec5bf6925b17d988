"""Losses as Modules: ``criterion = CrossEntropyLoss(); loss = criterion(output, target)``."""
from __future__ import annotations

from minigrad.nn import functional as F
from minigrad.nn.module import Module
from minigrad.tensor import Tensor


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        F._check_reduction(reduction)
        self.reduction = reduction


class CrossEntropyLoss(_Loss):
    """``F.cross_entropy``: raw scores (N, C) against class indices (N,) or probabilities (N, C)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """``F.mse_loss``: the mean of the squared differences."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)
