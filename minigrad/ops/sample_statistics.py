"""What a sample looks like: aminmax, cov, corrcoef and histogram.

cov and corrcoef are PyTorch's own compositions (a centred product ``x xᵀ`` divided by the
degrees of freedom, then scaled by the standard deviations), so their gradients need nothing
new. histogram counts; it has no gradient.
"""
from __future__ import annotations

import warnings

import numpy as np

from minigrad import return_types
from minigrad.ops.broadcast import flag, integer, type_name
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor


@tensor_method(top_level=True)
def aminmax(self: Tensor, *, dim: int | None = None, keepdim: bool = False) -> return_types.aminmax:
    """``(min, max)`` over ``dim`` (every element without one): ``amin`` and ``amax`` at once."""
    if self.numel() == 0 and (dim is None or self.shape[dim] == 0):
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity: pass a dim whose size is not 0")
    dims = () if dim is None else dim
    keepdim = flag(keepdim, "keepdim")
    if dim is None and keepdim:  # PyTorch keeps every dim as a 1
        return return_types.aminmax(self.amin(tuple(range(self.ndim)), True), self.amax(tuple(range(self.ndim)), True))
    return return_types.aminmax(self.amin(dims, keepdim), self.amax(dims, keepdim))


@tensor_method(top_level=True, out=False)
def cov(self: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``self`` (observations in its columns),
    with integer frequency weights ``fweights`` and observation weights ``aweights``."""
    if self.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                         f"{self.ndim} dimensions")
    correction = integer(correction, "correction")
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is not None and not isinstance(weights, Tensor):
            raise TypeError(f"cov(): argument '{name}' must be Tensor, not {type_name(weights)}")
    x = self.reshape(1, -1) if self.ndim < 2 else self
    observations = x.shape[1]
    w = None
    if fweights is not None:
        if fweights._data.dtype.kind not in "iu":
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with {fweights.dtype} "
                               "dtype")
        if fweights.ndim > 1 or fweights.numel() != observations:
            raise RuntimeError(f"cov(): expected fweights to be a 1-D tensor of {observations} values (one per "
                               f"observation), got shape {list(fweights.shape)}")
        if (fweights._data < 0).any():
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights._data.dtype.kind != "f":
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{aweights.dtype} dtype")
        if aweights.ndim > 1 or aweights.numel() != observations:
            raise RuntimeError(f"cov(): expected aweights to be a 1-D tensor of {observations} values (one per "
                               f"observation), got shape {list(aweights.shape)}")
        if (aweights._data < 0).any():
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    if x._data.dtype.kind in "biu":
        x = x.float()
    w_sum = x.new_tensor(observations) if w is None else w.sum()
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if float(norm_factor) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0: correction should be strictly less than the number of "
                      "observations (or the sum of the weights)", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0
    centred = x - avg.unsqueeze(1)
    c = centred @ (centred if w is None else centred * w).t()
    return (c / norm_factor).squeeze()


@tensor_method(top_level=True, out=False)
def corrcoef(self: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the rows of ``self``: cov scaled by the standard deviations,
    clipped to [-1, 1]."""
    c = cov(self)
    if c.ndim == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.reshape(-1, 1)
    c = c / stddev.reshape(1, -1)
    return c.clip(-1, 1)


@tensor_method(top_level=True, out=False)
def histogram(self: Tensor, bins, *, range: tuple | None = None, weight: Tensor | None = None,  # noqa: A002
              density: bool = False) -> return_types.histogram:
    """Counts of ``self``'s values in ``bins`` equal bins over ``range`` (min to max by default), or
    in the bins between the edges of a 1-D tensor ``bins``; ``(hist, bin_edges)``."""
    density = flag(density, "density")
    if range is not None and (not isinstance(range, (tuple, list))
                              or not all(isinstance(r, (int, float)) and not isinstance(r, bool) for r in range)):
        raise TypeError(f"histogram(): argument 'range' must be tuple of floats, not {type_name(range)}")
    if range is not None and len(range) != 2:
        raise RuntimeError(f"histogram(): range should have 2 elements (min, max), but got {len(range)}")
    if not isinstance(bins, Tensor) or bins.ndim == 0 and bins._data.dtype.kind in "iu":  # (a 0-d int is a count)
        bins = integer(bins, "bins")
    if self._data.dtype.kind != "f":
        raise NotImplementedError(f"histogram is not implemented for {self.dtype}: convert the tensor with .float()")
    if isinstance(bins, Tensor):
        if range is not None:
            raise TypeError("histogram(): range= goes with a number of bins; bin edges given as a tensor already "
                            "fix the range")
        if bins._data.dtype != self._data.dtype:
            raise RuntimeError(f"histogram(): input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {self.dtype} and bins with dtype {bins.dtype}")
        if bins.ndim != 1 or bins.numel() < 1:
            raise RuntimeError(f"histogram(): bins tensor should have one dimension and at least 1 element, got "
                               f"shape {list(bins.shape)}")
        edges = bins._data
    else:
        if int(bins) <= 0:
            raise RuntimeError(f"histogram(): bins must be > 0, but got {bins} for dimension 0")
        data = self._data
        low, high = (float(data.min()), float(data.max())) if range is None and data.size else \
            (0.0, 0.0) if range is None else (float(range[0]), float(range[1]))
        if low > high:
            raise RuntimeError(f"histogram(): max must be larger than min, got range {range}")
        if low == high:
            low, high = low - 0.5, high + 0.5
        edges = np.linspace(low, high, int(bins) + 1).astype(self._data.dtype)
    hist, _ = np.histogram(self._data.ravel(), bins=edges.astype(np.float64),
                           weights=None if weight is None else weight._data.ravel(), density=density)
    return return_types.histogram(Tensor._wrap(hist.astype(self._data.dtype)), Tensor._wrap(edges.copy()))
