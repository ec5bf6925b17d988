"""``minigrad.amp``: automatic mixed precision, as far as it goes on minigrad's CPU.

    scaler = minigrad.amp.GradScaler(enabled=False)    # (or minigrad.cuda.amp.GradScaler)
    with minigrad.autocast(device_type="cpu", dtype=minigrad.bfloat16):
        loss = model(x)
    scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()

Mixed precision runs matmuls and convolutions in float16 or bfloat16 on a GPU for speed, with a
``GradScaler`` that scales the loss so that small float16 gradients do not underflow.

- ``autocast`` (``minigrad.autocast``, ``minigrad.amp.autocast``, ``minigrad.cuda.amp.autocast``)
  is a context manager and decorator that changes no dtype: **a documented difference**, where
  PyTorch's CPU autocast computes matmuls in bfloat16, minigrad computes in the tensors' own
  dtypes (float32). It records whether it is enabled (``is_autocast_enabled``), checks its
  arguments as PyTorch does, and for ``"cuda"`` warns and disables itself, as CPU-only PyTorch.
- ``GradScaler`` for ``"cuda"`` (the default, and ``minigrad.cuda.amp.GradScaler``) is, as in
  CPU-only PyTorch, disabled with a warning when asked to be enabled: ``scale`` returns the loss,
  ``step`` calls ``optimizer.step()``, ``update`` does nothing. ``GradScaler("cpu")`` scales as
  PyTorch's does (multiply the loss, unscale the gradients, skip steps with inf or NaN gradients,
  grow and back off the scale), which gives PyTorch's numbers in float32 too.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from minigrad.autograd.grad_mode import no_grad
from minigrad.device import device as _device
from minigrad._tensor import Tensor

__all__ = ["GradScaler", "autocast", "is_autocast_available", "is_autocast_enabled"]

_ENABLED = {}  # device type -> whether autocast is on there (recorded: minigrad casts nothing)


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast works for this device type: the CPU only."""
    return device_type == "cpu"


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an ``autocast`` block is on for the device type (``"cuda"`` without one, as PyTorch)."""
    return _ENABLED.get("cuda" if device_type is None else device_type, False)


class autocast:
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a block (or a decorated
    function) that PyTorch runs in lower precision; minigrad records it and computes as outside it."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        _device(device_type)  # (PyTorch's RuntimeError for a string that names no device)
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        if device_type == "cuda" and enabled:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
            self._enabled = False
        elif device_type == "cpu" and enabled and dtype is not None and getattr(dtype, "name", None) not in (
                "float16", "bfloat16"):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of minigrad.bfloat16, minigrad.float16 currently.",
                          UserWarning, stacklevel=2)
            self._enabled = False

    def __enter__(self) -> "autocast":
        self._previous = _ENABLED.get(self.device, False)
        _ENABLED[self.device] = self._enabled
        return self

    def __exit__(self, *exc) -> bool:
        _ENABLED[self.device] = self._previous
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)
        return run


_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``: loss scaling for float16 training (see the module's docstring:
    disabled, with PyTorch's warning, for ``"cuda"``; PyTorch's scaling for ``"cpu"``)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            warnings.warn("minigrad.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._scale = None  # (set by the first scale(), as PyTorch's lazily made scale tensor)
            self._init_scale = init_scale
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = 0
            self._per_optimizer = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs):
        """``outputs`` (a tensor, or lists and tuples of them) times the scale (unchanged when disabled)."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = np.float32(self._init_scale)
            self._growth_tracker = self._init_growth_tracker
        if isinstance(outputs, Tensor):
            return outputs * Tensor._wrap(np.array(self._scale, dtype=np.float32))
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale in place (once per ``update()``), noting inf/NaN."""
        if not self._enabled:
            return
        if self._scale is None:
            raise AssertionError("Attempted unscale_ but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = np.float32(1.0 / np.float64(self._scale))
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.dtype.name == "float16":
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grad = p.grad._data
                    found = found or not np.isfinite(grad).all()
                    p.grad.mul_(float(inv_scale))
        state["found_inf"] = found
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless the gradients hold inf or NaN (unscaling them first if needed)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        if self._scale is None:
            raise AssertionError("Attempted step but _scale is None.  This may indicate your script did not use "
                                 "scaler.scale(loss or outputs) earlier in the iteration.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Back off the scale after a step with inf/NaN gradients; grow it after ``growth_interval`` clean ones."""
        if not self._enabled or self._scale is None:
            return
        if new_scale is not None:
            self._scale = np.float32(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale = np.float32(self._scale * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    grown = np.float32(self._scale * np.float32(self._growth_factor))
                    if math.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def get_scale(self) -> float:
        """The scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return float(self._init_scale if self._scale is None else self._scale)

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def state_dict(self) -> dict:
        """The scale and its schedule (``{}`` when disabled), for a checkpoint."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = np.float32(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._scale is not None:
            self._growth_tracker = state_dict["_growth_tracker"]
