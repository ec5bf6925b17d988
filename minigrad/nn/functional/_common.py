"""What every family of ``minigrad.nn.functional`` shares: the types the guard at the top of each
function lets through at once, and ``_check_tensors``, PyTorch's TypeError for an argument that is not
a tensor (the slow path behind that guard).
"""
from __future__ import annotations

import inspect
import sys

from minigrad.nn.parameter import Parameter
from minigrad._tensor import Tensor, check_tensor


# What the guard at the top of each function lets through at once (a layer's weight is a
# Parameter); _check_tensors judges anything else, a Tensor subclass included.
_TENSORS = (Tensor, Parameter)
_TENSORS_OR_NONE = (Tensor, Parameter, type(None))


def _check_tensors(fn: str, **arguments) -> None:
    """PyTorch's TypeError for an argument of the function ``fn`` that is not a tensor (``check_tensor``),
    named and numbered as in its signature; None passes where the annotation allows it (``Tensor | None``).

    The slow path behind the guard at the top of each function, so it may take its time.
    """
    # ``fn`` is looked up in the package, whose namespace holds every family's functions
    parameters = inspect.signature(getattr(sys.modules["minigrad.nn.functional"], fn)).parameters.values()
    for position, parameter in enumerate(parameters, start=1):
        if parameter.name in arguments:
            value = arguments[parameter.name]
            if value is not None or "None" not in str(parameter.annotation):
                check_tensor(fn, parameter.name, position, value)
