"""Losses: ``cross_entropy``, ``nll_loss``, ``mse_loss``, ``l1_loss``, ``smooth_l1_loss``, ``huber_loss``,
``kl_div``, ``gaussian_nll_loss``, ``binary_cross_entropy`` (``_with_logits``) and ``ctc_loss``, and the
reduction helpers the other losses share. Their nodes are in ``minigrad/nn/ops/`` (``loss.py``,
``reduced_loss.py``, ``binary_cross_entropy.py``, ``ctc.py``).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad.dtypes import int64
from minigrad.functional_ops import broadcast_tensors, where
from minigrad.nn.ops.binary_cross_entropy import BinaryCrossEntropy
from minigrad.nn.ops.ctc import CtcLoss
from minigrad.nn.ops.loss import fused_cross_entropy
from minigrad.nn.ops.reduced_loss import (
    BinaryCrossEntropyWithLogits, HuberLoss, MseLoss, NllLoss, NllLoss2d, SmoothL1Loss,
)
from minigrad.ops.elementwise import DivScalar
from minigrad._tensor import Tensor, _operand
from minigrad.nn.functional._common import _TENSORS, _TENSORS_OR_NONE, _check_tensors
from minigrad.nn.functional.distances import _floor_value


_REDUCTIONS = ("mean", "sum", "none")
_INT64 = np.dtype(np.int64)

def _reduce(losses: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return losses.mean()
    return losses.sum() if reduction == "sum" else losses


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """PyTorch's deprecated ``size_average``/``reduce`` pair, turned into a ``reduction`` (with its warning)."""
    if size_average is None and reduce is None:
        _check_reduction(reduction)
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return reduction


def _warn_size_mismatch(input: Tensor, target: Tensor) -> None:
    """(N, 1) against (N,) broadcasts to (N, N), which is almost never what was meant: PyTorch warns."""
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _check_class_targets(input: Tensor, target: Tensor, fn: str, ignore_index: int = -100) -> bool:
    """(N, C) scores and N int64 class indices in [0, C), with PyTorch's errors (the fused path).

    Returns False when some target equals ``ignore_index``: those need the general path.
    In the common case this costs one pass over the targets, as the bounds check alone did.
    """
    x, t = input._data, target._data
    if x.ndim == 2 and t.ndim == 1 and t.dtype == _INT64 and len(t) == len(x) and ignore_index < 0 and len(t):
        # the common case, checked on the arrays: int64 targets seen as unsigned put a negative one past
        # every class, so one max checks both bounds
        if np.maximum.reduce(t.view(np.uint64)) < x.shape[1]:
            return True
    if input.ndim != 2:
        raise RuntimeError(
            f"{fn} expects input of shape (N, C), one row of class scores per sample, but got "
            f"shape {list(input.shape)} (minigrad supports only this 2-D form)"
        )
    _check_target_dtype(target)
    if target.ndim != 1:
        raise RuntimeError(
            f"0D or 1D target tensor expected, multi-target not supported: got target of shape "
            f"{list(target.shape)} for input of shape {list(input.shape)}"
        )
    if target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )
    t, classes = target._data, input.shape[1]
    if 0 <= ignore_index < classes and (t == ignore_index).any():
        return False
    if not t.size or 0 <= np.minimum.reduce(t) and np.maximum.reduce(t) < classes:  # (two C passes, the common case)
        return True
    bad = t[(t < 0) | (t >= classes)]
    if bad.size:
        if (bad == ignore_index).all():
            return False
        raise IndexError(f"Target {bad[bad != ignore_index][0]} is out of bounds.")
    return True


def _check_target_dtype(target: Tensor) -> None:
    if target.dtype != int64:
        raise RuntimeError(
            f"expected target dtype to be Long (minigrad.int64), but got {target.dtype}: class "
            "indices must be int64 (call .long()), class probabilities must have the input's shape"
        )


def _as_rows(input: Tensor, target: Tensor) -> tuple[Tensor, np.ndarray]:
    """(C,), (N, C) or (N, C, d1, ...) scores as (M, C) rows, and the targets as M indices.

    The class dimension is 1 (0 for a single sample), as in PyTorch.
    """
    _check_target_dtype(target)
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError(
                f"For an unbatched input of shape {list(input.shape)} the target must be a 0-D class index, "
                f"but got target of shape {list(target.shape)}"
            )
        return input.unsqueeze(0), target._data.reshape(1)
    if input.ndim < 1 or target.ndim != input.ndim - 1:
        raise RuntimeError(
            f"0D or 1D target tensor expected, multi-target not supported: got target of shape "
            f"{list(target.shape)} for input of shape {list(input.shape)}"
        )
    if target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )
    if target.shape[1:] != input.shape[2:]:
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})")
    classes = input.shape[1]
    if input.ndim > 2:  # move the class dimension last, then one row per position
        input = input.permute(0, *range(2, input.ndim), 1).reshape(-1, classes)
    return input, target._data.reshape(-1)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """The loss of classifying with scores ``input`` (N, C, raw logits) when ``target`` is right.

    ``target`` is either class indices (int64 in [0, C), shape (N,)) or, as in
    PyTorch, class probabilities (a float tensor of the input's shape). Equal
    to ``nll_loss(log_softmax(input, 1), target, ...)``; the common case
    (2-D scores, class indices, no weight, smoothing or ignored targets) is one fused node.
    ``label_smoothing`` mixes in the uniform distribution over the C classes, as in PyTorch.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("cross_entropy", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if target.is_floating_point():
        return _cross_entropy_with_probabilities(input, target, weight, reduction, label_smoothing)
    if not label_smoothing and weight is None and input.ndim == 2 and _check_class_targets(
            input, target, "cross_entropy", ignore_index):
        return fused_cross_entropy(input, target, reduction)
    if input.ndim < 1:
        raise RuntimeError(f"cross_entropy expects class scores of shape (C,), (N, C) or (N, C, d1, ...), "
                           f"but got shape {list(input.shape)}")
    class_dim = 0 if input.ndim == 1 else 1
    log_probs = input.log_softmax(class_dim)
    nll = nll_loss(log_probs, target, weight, None, ignore_index, None, reduction)
    if not label_smoothing:
        return nll
    return (1 - label_smoothing) * nll + _smoothing_term(log_probs, target, weight, ignore_index, reduction,
                                                         class_dim) * (label_smoothing / input.shape[class_dim])


def _cross_entropy_with_probabilities(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                                      label_smoothing: float) -> Tensor:
    """-sum over classes of target * log_softmax(input), in PyTorch's order of operations (its node names).

    Any input shape cross_entropy takes, (C,), (N, C) or (N, C, d1, ...); "mean" divides by the number
    of samples (input.numel() / C), not by the weights.
    """
    class_dim = 0 if input.ndim == 1 else 1
    if input.ndim == 0:
        raise IndexError("cross_entropy: the input has no class dimension; pass scores of shape (C,) or (N, C)")
    if target.shape != input.shape:
        batch_differs = input.ndim > 1 and target.ndim > 0 and target.shape[0] != input.shape[0]
        raise (ValueError if batch_differs else RuntimeError)(
            f"cross_entropy: a float target holds class probabilities and must have the input's shape, but got "
            f"target of shape {list(target.shape)} for input of shape {list(input.shape)}; pass class indices "
            f"as an int64 tensor instead"
        )
    classes = input.shape[class_dim]
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    products = input.log_softmax(class_dim) * target
    if weight is not None:
        products = products * weight.reshape([classes] + [1] * (input.ndim - class_dim - 1))
    if reduction == "none":
        return -products.sum(class_dim)
    if reduction == "sum" or input.numel() == 0:
        total = products.sum()
        return -(total if reduction == "sum" else total.fill_(float("nan")))  # an empty mean is NaN
    return DivScalar.apply(-products.sum(), _operand(input.numel() // classes))


def _smoothing_term(log_probs: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str,
                    class_dim: int) -> Tensor:
    """PyTorch's label-smoothing part for class-index targets: -sum over classes of (weighted) log-probabilities.

    Ignored targets add 0; "mean" divides by the weights of the counted targets, as ``nll_loss`` does.
    """
    if weight is not None:
        shape = [1] * log_probs.ndim
        shape[class_dim] = weight.shape[0]
        log_probs = log_probs * weight.reshape(shape)
    counted = target._data != ignore_index
    # masked_fill, not a product with the mask: an ignored target's gradient is 0 even where the mean
    # divides by a total weight of 0 (0 * inf would be NaN)
    smooth = (-log_probs.sum(class_dim)).masked_fill(Tensor._wrap(~counted), 0.0)
    if reduction == "none":
        return smooth
    if reduction == "sum":
        return smooth.sum()
    kept = target._data[counted]
    total = float(weight._data[kept].sum()) if weight is not None else float(counted.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return smooth.sum() / Tensor._wrap(np.asarray(total, dtype=log_probs._data.dtype))


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood: ``-weight[t] * input[i, t]`` for each sample i with target class t.

    ``input`` holds log-probabilities, (N, C) or (N, C, d1, ...) or (C,).
    Targets equal to ``ignore_index`` add nothing. ``"mean"`` divides by the
    summed weights of the targets that count (not by N), as PyTorch does.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("nll_loss", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    rows, t = _as_rows(input, target)
    classes = rows.shape[1]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {classes} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}"
        )
    counts = t != ignore_index
    bad = t[counts & ((t < 0) | (t >= classes))]
    if bad.size:
        raise IndexError(f"Target {bad[0]} is out of bounds.")
    safe = np.where(counts, t, 0)
    dtype = rows._data.dtype
    w = counts.astype(dtype) if weight is None else weight._data[safe].astype(dtype) * counts
    if input.ndim <= 2:
        return NllLoss.apply(rows, safe, w, counts, reduction, tuple(target.shape))
    # PyTorch's spatial form (its nll_loss2d): a 4-D input directly, others viewed as 4-D and back
    if reduction != "none" or input.ndim == 4:
        return NllLoss2d.apply(rows, safe, w, counts, reduction, tuple(target.shape))
    return NllLoss2d.apply(rows, safe, w, counts, reduction, (t.size,)).reshape(target.shape)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error, ``((input - target) ** 2).mean()``: one ``MseLossBackward0`` node.

    Shapes that differ are broadcast, with PyTorch's warning: (N, 1) against
    (N,) broadcasts to (N, N), which is almost never what was meant.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("mse_loss", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    expanded_input, expanded_target = broadcast_tensors(input, target)
    if weight is None:
        return MseLoss.apply(expanded_input, expanded_target, reduction)
    diff = expanded_input - expanded_target
    return _weighted(diff * diff, weight, input, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error, ``(input - target).abs().mean()`` (the derivative at 0 is 0)."""
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("l1_loss", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    expanded_input, expanded_target = broadcast_tensors(input, target)
    losses = (expanded_input - expanded_target).abs()
    return _reduce(losses, reduction) if weight is None else _weighted(losses, weight, input, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Squared below ``beta``, absolute above: 0.5 d^2 / beta if |d| < beta, else |d| - 0.5 beta.

    Quadratic near 0 (smooth), linear far out (robust to outliers); beta = 0 is the L1 loss.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("smooth_l1_loss", input=input, target=target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    expanded_input, expanded_target = broadcast_tensors(input, target)
    if beta == 0:
        return _reduce((expanded_input - expanded_target).abs(), reduction)
    return SmoothL1Loss.apply(expanded_input, expanded_target, reduction, beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``delta * smooth_l1_loss(..., beta=delta)``: 0.5 d^2 if |d| < delta, else delta * (|d| - 0.5 delta).

    With ``weight``, the mean is the plain mean of the weighted losses, as in
    PyTorch (``mse_loss`` and ``l1_loss`` divide by the sum of the weights instead).
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("huber_loss", input=input, target=target, weight=weight)
    _check_reduction(reduction)
    _warn_size_mismatch(input, target)
    expanded_input, expanded_target = broadcast_tensors(input, target)
    if weight is None:
        return HuberLoss.apply(expanded_input, expanded_target, reduction, delta)
    _check_weight(weight, input)
    return _reduce(HuberLoss.apply(expanded_input, expanded_target, "none", delta) * weight, reduction)



def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence of ``target`` from the distribution whose log-probabilities are ``input``.

    Pointwise target * (log(target) - input), 0 where target is 0 (or, with ``log_target``, both
    given as logs: exp(target) * (target - input)). ``reduction="batchmean"`` (sum / batch size) is
    the divergence's definition; "mean" divides by every element too, and PyTorch warns about it.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS:
        _check_tensors("kl_div", input=input, target=target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        if reduction != "batchmean":
            _check_reduction(reduction)
    if input._data.dtype.kind != "f" or target._data.dtype.kind != "f":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        losses = target.exp() * (target - input)
    else:
        nonzero = where(Tensor._wrap(target._data == 0), 1.0, target)  # xlogy: 0 * log 0 is 0 (and its gradient 0)
        losses = target * nonzero.log() - target * input
    if reduction == "batchmean":
        total = losses.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduce(losses, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of ``target`` under normal distributions of mean ``input`` and variance ``var``.

    0.5 * (log(var) + (input - target)^2 / var), plus 0.5 * log(2 pi) if ``full``. ``var`` has the
    input's shape, or one dimension of size 1 (one variance shared along it), or lacks the last
    dimension; a float is one variance for all. It is raised to ``eps`` in value only, as PyTorch
    does it (in place under no_grad), so its gradient passes unclamped.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or (
            type(var) not in _TENSORS and not isinstance(var, float)):
        # PyTorch's function is Python arithmetic: a target that is a number or an ndarray works there too
        _check_tensors("gaussian_nll_loss", input=input,
                       **({} if isinstance(target, (int, float, np.ndarray)) else {"target": target}),
                       **({} if isinstance(var, float) else {"var": var}))
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = Tensor._wrap(np.full(input.shape, var, dtype=input._data.dtype))
    elif (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")  # (the heteroscedastic case passes: one dimension of 1)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = _floor_value(var, eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)

def _check_weight(weight: Tensor, input: Tensor) -> None:
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def _weighted(losses: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    """PyTorch's weighted mse/l1 losses: a weighted mean divides by the sum of the weights."""
    _check_weight(weight, input)
    weighted = losses * weight
    if reduction == "mean":
        return weighted.sum() / weight.sum()
    return _reduce(weighted, reduction)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)) for probabilities ``input`` in [0, 1] and targets ``t``.

    Each log is clamped at -100 (as in PyTorch), so a probability of exactly 0
    or 1 gives a finite loss and gradient; see ``nn/ops/binary_cross_entropy.py``.
    """
    if type(input) not in _TENSORS or type(target) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("binary_cross_entropy", input=input, target=target, weight=weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is "
            "deprecated. Please ensure they have the same size."
        )
    x = input._data
    if x.size and not ((x >= 0) & (x <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    _no_grad_for("binary_cross_entropy", weight=weight)
    if weight is not None:
        weight = weight.expand(input.shape)
    return BinaryCrossEntropy.apply(input, target.to(input.dtype), weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """``binary_cross_entropy(sigmoid(input), target)`` computed from the logits, without overflow.

    PyTorch's arrangement (see ``nn/ops/reduced_loss.py``); ``pos_weight``
    (one per class, the last dimension) weighs the positive targets.
    """
    if (type(input) not in _TENSORS or type(target) not in _TENSORS
            or type(weight) not in _TENSORS_OR_NONE or type(pos_weight) not in _TENSORS_OR_NONE):
        _check_tensors("binary_cross_entropy_with_logits", input=input, target=target, weight=weight,
                       pos_weight=pos_weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _no_grad_for("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def _no_grad_for(fn: str, **tensors: Tensor | None) -> None:
    """Loss weights are constants in PyTorch: a weight that requires grad is refused, with its error."""
    for name, t in tensors.items():
        if t is not None and t.requires_grad:
            raise RuntimeError(
                f"The function '{fn}' is not differentiable with respect to argument '{name}'. "
                "This input cannot have requires_grad True."
            )


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss: -log of the probability that (T, N, C) ``log_probs`` (a log_softmax over C) spell
    each target, summed over every alignment (repeats merged, blanks dropped). For speech and handwriting,
    where the frames outnumber the labels and nobody knows which frame says which.

    ``targets`` are padded (N, S) or concatenated (sum(target_lengths),); the lengths are tensors or
    sequences of ints; an unbatched (T, C) input takes a (S,) target. "mean" divides each loss by its
    target's length, then averages; ``zero_infinity`` zeroes the losses (and gradients) of targets no
    alignment reaches. One node (``minigrad/nn/ops/ctc.py``), with PyTorch's gradient.
    """
    if type(log_probs) not in _TENSORS or type(targets) not in _TENSORS:
        _check_tensors("ctc_loss", log_probs=log_probs, targets=targets)
    _check_reduction(reduction)
    lengths = [_ctc_lengths(name, value) for name, value in (("input_lengths", input_lengths),
                                                             ("target_lengths", target_lengths))]
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be tensors or both sequences of "
                        f"ints, but got {type(input_lengths).__name__} and {type(target_lengths).__name__}")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    labels, input_lengths, target_lengths = _ctc_targets(lp, targets, *lengths, blank)
    losses = CtcLoss.apply(lp, labels, input_lengths, target_lengths, blank, zero_infinity)
    if zero_infinity:
        losses = where(Tensor._wrap(losses._data == math.inf), Tensor._wrap(np.zeros((), losses._data.dtype)), losses)
    if reduction == "mean":
        return (losses / Tensor._wrap(np.maximum(target_lengths, 1).astype(losses._data.dtype))).mean()
    if reduction == "sum":
        return losses.sum()
    return losses if batched else losses.squeeze(0)


def _ctc_lengths(name: str, value) -> np.ndarray:
    """Lengths as int64 from a tensor of integers or a sequence of ints (PyTorch's two overloads)."""
    if isinstance(value, Tensor):
        if value._data.dtype.kind not in "iu":  # (bool is not integral either)
            raise RuntimeError(f"{name} must be integral")
        return value._data.astype(np.int64).reshape(-1)
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, (int, np.integer)) for v in value):
        raise TypeError(f"ctc_loss(): argument '{name}' must be a tensor of integers or a tuple of ints, "
                        f"but got {value!r}")
    return np.array(value, np.int64).reshape(-1)


def _ctc_targets(lp: Tensor, targets: Tensor, input_lengths: np.ndarray, target_lengths: np.ndarray,
                 blank: int) -> tuple:
    """PyTorch's checks of ctc_loss_cpu, in its order and words; the targets as padded (N, S) int64."""
    checking = "(while checking arguments for ctc_loss_cpu)"
    if lp.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.ndim}-dimensional tensor for argument #1 "
                           f"'log_probs' {checking}")
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor for argument #2 "
                           f"'targets' {checking}")
    batch, classes = lp.shape[1:]
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if len(lengths) != batch:
            raise RuntimeError(f"{name} must be of size batch_size")
    labels = targets._data.astype(np.int64)
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {length} {checking}")
    longest = int(target_lengths.max(initial=0))
    if labels.ndim == 1:  # concatenated: cut into rows, padded
        total = int(target_lengths.sum())
        if len(labels) != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size {len(labels)} for "
                               f"argument #2 'targets' {checking}")
        padded = np.zeros((batch, longest), np.int64)
        starts = np.cumsum(target_lengths) - target_lengths
        for row, (start, length) in enumerate(zip(starts, target_lengths)):
            padded[row, :length] = labels[start:start + length]
        labels = padded
    else:
        if len(labels) != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got size {len(labels)} for "
                               f"argument #2 'targets' {checking}")
        if labels.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{labels.shape[1]} for argument #2 'targets' {checking}")
    for length in input_lengths:
        if length < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {length} {checking}")
        if length > lp.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {lp.shape[0]}, but got value {length} "
                               f"{checking}")
    return labels, input_lengths, target_lengths
