"""All parameters as one flat vector, and a flat vector back into the parameters."""
from __future__ import annotations

from typing import Iterable

from minigrad.functional_ops import cat
from minigrad.ops.broadcast import type_name
from minigrad._tensor import Tensor


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-d tensor of every parameter's values, in order (recorded: it can be differentiated)."""
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Give each parameter its slice of ``vec``, in order. As in PyTorch the parameters then share
    ``vec``'s memory (``param.data = ...``): writing to ``vec`` later changes them."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type_name(vec)}")
    start = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[start:start + n].view_as(param).data
        start += n
