"""A Module's devices and dtypes: ``to``, ``cpu``/``cuda``/..., ``float``/``double``/``half``/``type``,
``to_empty``, and ``_apply``, which they all go through (the tensors stay the same objects, their
values are replaced). minigrad has only the CPU: a device is checked, and another one raises.

``Module`` gets these methods from ``_ModuleDevicesAndDtypes`` (``minigrad/nn/module.py`` says how
its methods are laid out).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from minigrad import dtypes
from minigrad.device import device as _device
from minigrad.device import resolve
from minigrad._tensor import Tensor

_NO_LOW_PRECISION = ("minigrad has no {name} dtype (NumPy has no such type). Keep the model in float32 "
                     "(model.float()), or use model.half() (float16) for half the memory.")


class _ModuleDevicesAndDtypes:
    """``Module``'s moves and casts (mixed into ``Module``: use them on a Module). They return the
    module, annotated ``"Module"``: this file cannot import ``nn/module.py``, which imports it."""

    def _apply(self, convert: Callable[[np.ndarray], np.ndarray], recurse: bool = True) -> "Module":
        """Replace the values of every parameter (and its .grad) and buffer with ``convert(values)``
        (this module's own ones only, unless ``recurse``).

        The tensor objects stay the same (as in PyTorch, which assigns ``param.data``),
        so an optimizer created before ``model.double()`` still holds the model's parameters.
        """
        for module in self.modules() if recurse else (self,):
            for tensors in (module._parameters, module._buffers):
                for t in tensors.values():
                    if t is None:
                        continue
                    t.data = Tensor._wrap(convert(t.data._data))  # (through .data: a lazy placeholder has one too)
                    if t._grad is not None:
                        t._grad._data = convert(t._grad._data)
        return self

    def _cast_floats(self, target: np.dtype) -> "Module":
        return self._apply(lambda a: a.astype(target) if a.dtype.kind == "f" and a.dtype != target else a)

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``.

        minigrad has only the CPU, so the device part is checked (another device
        raises) and changes nothing. A dtype, which must be a floating-point
        one, converts floating-point parameters and buffers only (an int64
        counter such as BatchNorm's ``num_batches_tracked`` stays int64). Returns self.
        """
        where, dtype = _parse_to(*args, **kwargs)
        resolve(where)
        if dtype is None:
            return self
        target = dtypes.to_numpy_dtype(dtype)
        if target.kind != "f":
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype="
                f"{dtypes.from_numpy_dtype(target)}"
            )
        return self._cast_floats(target)

    def cpu(self) -> "Module":
        """The parameters already live on the CPU: returns self."""
        return self

    def cuda(self, device: int | _device | None = None) -> "Module":
        """Raises: minigrad has no CUDA device (the error says to use the CPU)."""
        return self._to_accelerator("cuda", device)

    def xpu(self, device: int | _device | None = None) -> "Module":
        """Raises, as ``cuda()``: minigrad runs on the CPU only."""
        return self._to_accelerator("xpu", device)

    def ipu(self, device: int | _device | None = None) -> "Module":
        """Raises, as ``cuda()``: minigrad runs on the CPU only."""
        return self._to_accelerator("ipu", device)

    def mtia(self, device: int | _device | None = None) -> "Module":
        """Raises, as ``cuda()``: minigrad runs on the CPU only."""
        return self._to_accelerator("mtia", device)

    def _to_accelerator(self, kind: str, device: int | _device | str | None) -> "Module":
        resolve(kind if device is None else device if isinstance(device, (str, _device)) else f"{kind}:{device}")
        return self

    def to_empty(self, *, device: str | _device | None, recurse: bool = True) -> "Module":
        """Give every parameter and buffer new, uninitialized memory of the same shape and dtype
        (how a model built without values is given some before ``load_state_dict`` or an init)."""
        resolve(device)
        return self._apply(np.empty_like, recurse=recurse)

    def share_memory(self) -> "Module":
        """Returns self: PyTorch moves the tensors to shared memory for worker processes;
        minigrad runs in one process, so there is nothing to share."""
        return self

    def float(self) -> "Module":
        """Cast floating-point parameters and buffers to float32."""
        return self._cast_floats(dtypes.float32.numpy)

    def double(self) -> "Module":
        """Cast floating-point parameters and buffers to float64 (what gradcheck needs)."""
        return self._cast_floats(dtypes.float64.numpy)

    def half(self) -> "Module":
        """Cast floating-point parameters and buffers to float16."""
        return self._cast_floats(dtypes.float16.numpy)

    def bfloat16(self) -> "Module":
        """Raises TypeError: minigrad has no bfloat16 (NumPy has no such type)."""
        raise TypeError(_NO_LOW_PRECISION.format(name="bfloat16"))

    def type(self, dst_type) -> "Module":
        """Cast *every* parameter and buffer to ``dst_type``, integer ones included (PyTorch's rule)."""
        target = dtypes.to_numpy_dtype(dst_type)
        return self._apply(lambda a: a.astype(target) if a.dtype != target else a)


def _parse_to(*args: Any, device=None, dtype=None, non_blocking: bool = False, **kwargs: Any) -> tuple:
    """``(device, dtype)`` from any of the forms ``Tensor.to`` and ``Module.to`` accept."""
    if kwargs:
        raise TypeError(f"to() got unexpected keyword argument(s) {', '.join(kwargs)}")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        dtype = other.dtype if dtype is None else dtype
    elif rest and isinstance(rest[0], (str, _device)) or (rest and rest[0] is None):
        device = rest.pop(0)
    if rest and not isinstance(rest[0], bool):
        dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        rest.pop(0)  # non_blocking: nothing to overlap on the CPU
    if rest:
        raise TypeError(f"to() received an invalid combination of arguments: {args!r}")
    return device, dtype

