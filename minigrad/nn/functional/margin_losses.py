"""Margin, ranking and counting losses: ``margin_ranking_loss``, ``hinge_embedding_loss``,
``cosine_embedding_loss``, the soft-margin and multi-margin losses, the triplet losses and
``poisson_nll_loss``.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from minigrad.functional_ops import where
from minigrad.nn.ops.activation import Softplus, _check_float
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _TENSORS_OR_NONE, _check_tensors
from minigrad.nn.functional.activations import logsigmoid
from minigrad.nn.functional.distances import pairwise_distance
from minigrad.nn.functional.losses import (
    _REDUCTIONS, _check_reduction, _check_target_dtype, _legacy_reduction, _no_grad_for, _reduce,
)


# PyTorch's native kernels for these, written as compositions of tensor operations: autograd
# differentiates them to any order. Each kink follows PyTorch's backward: a clamp at 0 passes the
# gradient where its argument is exactly 0, the multi-class margins (``z > 0`` in PyTorch's loops) do not.
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin): target 1 asks input1 to rank above input2 by
    ``margin``, target -1 below it."""
    if type(input1) not in _TENSORS or type(input2) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("margin_ranking_loss", input1=input1, input2=input2, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss: input1, input2 and target must have the same number of "
                           f"dimensions, but got sizes: input1: {list(input1.shape)}, input2: "
                           f"{list(input2.shape)}, target: {list(target.shape)}")
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``input`` (a distance) where target is 1, max(0, margin - input) where it is -1: similar pairs
    pulled together, dissimilar ones pushed at least ``margin`` apart (both terms for any other target)."""
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("hinge_embedding_loss", input=input, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    t = target._data
    pushed = where(Tensor._wrap(t != 1), (margin - input).clamp(min=0), 0.0)
    pulled = where(Tensor._wrap(t != -1), input, 0.0)
    return _reduce(pushed + pulled, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1, row by row.

    The squared norms get 1e-12 added before the square root, as in PyTorch, so a zero row's
    cosine is 0 instead of NaN.
    """
    if type(input1) not in _TENSORS or type(input2) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("cosine_embedding_loss", input1=input1, input2=input2, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    dim = target.ndim
    if dim > 1:
        raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported: got target of shape "
                           f"{list(target.shape)}")
    if input1.ndim != dim + 1 or input2.ndim != dim + 1:
        raise RuntimeError(f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    products = (input1 * input2).sum(dim)
    squares1 = (input1 * input1).sum(dim) + 1e-12
    squares2 = (input2 * input2).sum(dim) + 1e-12
    cos = products / (squares1 * squares2).sqrt()
    t = target._data
    similar = where(Tensor._wrap(t == 1), 1 - cos, 0.0)
    dissimilar = where(Tensor._wrap(t == -1), (cos - margin).clamp(min=0), 0.0)
    return _reduce(similar + dissimilar, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input)): a smooth two-class hinge for targets of 1 and -1.

    Computed as softplus, without PyTorch's overflow to inf when -target * input passes ~88 (float32).
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("soft_margin_loss", input=input, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _no_grad_for("soft_margin_loss", target=target)
    return _reduce(Softplus.apply(-input * target, 1.0, float("inf")), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of ``sigmoid(input)`` against 0/1 ``target`` for each class, averaged over
    the classes (the last dimension): one loss per sample, for a sample in several classes at once."""
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        # PyTorch's function is Python arithmetic: a number target or weight (or an ndarray weight) works there too
        _check_tensors("multilabel_soft_margin_loss", input=input,
                       **({} if isinstance(target, (int, float)) else {"target": target}),
                       **({} if isinstance(weight, (int, float, np.ndarray)) else {"weight": weight}))
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    losses = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        losses = losses * weight
    class_dim = input.ndim - 1
    return _reduce(losses.sum(class_dim) / input.shape[class_dim], reduction)


def _margin_rows(fn: str, input: Tensor) -> tuple[int, int]:
    """(samples, classes) of the multi-class margin losses' input: (C,), (N, C), or a single score."""
    if not (input.ndim == 2 and input.shape[1] or input.ndim == 1 and input.shape[0] or input.ndim == 0):
        raise RuntimeError(f"{fn}: expected a non-empty vector (C,) or matrix (N, C) of class scores, with "
                           f"optional 0-dim batch size, but got: {list(input.shape)}")
    _check_float(input, fn)
    if input.ndim <= 1:
        return 1, input.shape[0] if input.ndim else 1
    return input.shape[0], input.shape[1]


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """The multi-class hinge: for each sample with target class y, the sum over the other classes j of
    max(0, margin - x[y] + x[j]) ** p, times ``weight[y]``, divided by the number of classes."""
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("multi_margin_loss", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    samples, classes = _margin_rows("multi_margin_loss", input)
    if target.ndim > 1 or target.numel() != samples:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{samples}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    _check_target_dtype(target)
    if weight is not None:
        _no_grad_for("multi_margin_loss", weight=weight)
        if weight.numel() != classes:
            raise RuntimeError(f"inconsistent weight size, expected {classes} but got {list(weight.shape)}")
        if weight._data.dtype != input._data.dtype:
            raise RuntimeError(f"multi_margin_loss: weight is {weight.dtype} but input is {input.dtype}; convert "
                               "the weight with .to(input.dtype)")
    t = target._data.reshape(samples, 1)
    if ((t < 0) | (t >= classes)).any():
        raise RuntimeError(f"multi_margin_loss: target out of range: class indices must be in [0, {classes})")
    rows = input.reshape(samples, classes)
    margins = (margin - rows.gather(1, Tensor._wrap(t))) + rows
    counted = (np.arange(classes) != t) & (margins._data > 0)
    hinge = where(Tensor._wrap(counted), margins, 0.0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * Tensor._wrap(weight._data[t])
    losses = hinge.sum(1) / classes
    return _reduce(losses if target.ndim else losses.reshape(()), reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The multi-label hinge: for each sample, the sum over its target classes j and its other classes k
    of max(0, 1 - (x[j] - x[k])), divided by the number of classes.

    ``target`` has the input's shape and lists each sample's classes first, ended by -1 (or by the row's
    end): ``[3, 0, -1, 1]`` means classes 3 and 0.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("multilabel_margin_loss", input=input, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    samples, classes = _margin_rows("multilabel_margin_loss", input)
    if (target.ndim > 1 or target.numel() != classes) if input.ndim <= 1 else target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}: the target lists class indices, one row per sample, "
                           "padded with -1")
    _check_target_dtype(target)
    t = target._data.reshape(samples, classes)
    listed = np.cumprod(t != -1, axis=1).astype(bool)  # the entries before each row's first -1
    if ((t[listed] < 0) | (t[listed] >= classes)).any():
        raise RuntimeError(f"multilabel_margin_loss: target out of range: class indices must be in [0, {classes}), "
                           "followed by -1")
    positive = np.zeros((samples, classes), dtype=bool)
    positive[np.nonzero(listed)[0], t[listed]] = True
    rows = input.reshape(samples, classes)
    chosen = rows.gather(1, Tensor._wrap(np.where(listed, t, 0)))
    margins = (1 - chosen.unsqueeze(2)) + rows.unsqueeze(1)  # (sample, listed j, class k)
    counted = listed[:, :, None] & ~positive[:, None, :] & (margins._data > 0)
    losses = where(Tensor._wrap(counted), margins, 0.0).sum((1, 2)) / classes
    return _reduce(losses if input.ndim == 2 else losses.reshape(()), reduction)


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the ``pairwise_distance`` (p, eps).

    ``swap`` uses d(positive, negative) instead where it is smaller (the harder negative).
    """
    if type(anchor) not in _TENSORS or type(positive) not in _TENSORS or type(negative) not in _TENSORS:
        _check_tensors("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    near = pairwise_distance(anchor, positive, p, eps)
    far = pairwise_distance(anchor, negative, p, eps)
    if swap:
        far = far.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + near - far).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """``triplet_margin_loss`` with any distance: ``distance_function(a, b)`` gives one distance per
    sample (default ``pairwise_distance``), e.g. ``lambda a, b: 1 - F.cosine_similarity(a, b)``."""
    if type(anchor) not in _TENSORS or type(positive) not in _TENSORS or type(negative) not in _TENSORS:
        _check_tensors("triplet_margin_with_distance_loss", anchor=anchor, positive=positive, negative=negative)
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    near, far = distance(anchor, positive), distance(anchor, negative)
    if swap:
        far = far.minimum(distance(positive, negative))
    return _reduce((margin + near - far).clamp(min=0), reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of counts ``target`` under Poisson distributions of rate ``input``.

    exp(input) - target * input when ``log_input`` (the input is the log of the rate), else
    input - target * log(input + eps). ``full`` adds Stirling's approximation of log(target!) for
    targets above 1, the term that does not depend on the input.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("poisson_nll_loss", input=input, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_input:
        losses = input.exp() - target * input
    else:
        losses = input - target * (input + eps).log()
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):  # (targets of 0 and 1, masked out)
            stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        losses = losses + stirling.masked_fill(Tensor._wrap(target._data <= 1), 0)
    return _reduce(losses, reduction)
