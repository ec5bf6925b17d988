"""Gradient clipping: scale (``clip_grad_norm_``) or cut (``clip_grad_value_``) the gradients in place.

Call it between ``loss.backward()`` and ``optimizer.step()``::

    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()

``clip_grad_norm_`` treats all the gradients as one long vector: if its norm is above
``max_norm``, every gradient is multiplied by ``max_norm / norm``, so the direction of the
step is kept and only its length is capped. Nothing here is recorded (PyTorch's functions
run under ``no_grad`` too). ``foreach`` is accepted for PyTorch's signature: minigrad has
one way to run them.
"""
from __future__ import annotations

import types
import warnings
from typing import Iterable

from minigrad.autograd.grad_mode import no_grad
from minigrad.functional_ops import stack
from minigrad.creation import tensor
from minigrad._tensor import Tensor

_Tensors = Tensor | Iterable[Tensor]


def _as_list(tensors: _Tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@no_grad()
def get_total_norm(tensors: _Tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of all of ``tensors`` taken as one vector (the norm of their norms)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    total = stack([t.norm(norm_type) for t in tensors]).norm(norm_type)
    if error_if_nonfinite and not total.isfinite().item():
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total


@no_grad()
def clip_grads_with_norm_(parameters: _Tensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Multiply every ``.grad`` by ``min(max_norm / (total_norm + 1e-6), 1)``: shrink, never grow."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    scale = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale)


@no_grad()
def clip_grad_norm_(parameters: _Tensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total norm is at most
    ``max_norm``; return the total norm from before (worth logging: spikes show instability)."""
    generator = isinstance(parameters, types.GeneratorType)
    parameters = _as_list(parameters)
    if generator and not parameters:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    total = get_total_norm([p.grad for p in parameters if p.grad is not None], norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters: _Tensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The old name of ``clip_grad_norm_``; it warns, as PyTorch's does."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@no_grad()
def clip_grad_value_(parameters: _Tensors, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
