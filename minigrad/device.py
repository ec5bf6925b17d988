"""Devices: minigrad computes on the CPU only, but accepts PyTorch's ``device=`` spelling.

PyTorch tutorials write ``device = torch.device("cuda" if torch.cuda.is_available()
else "cpu")`` and pass ``device=`` to every tensor they make. ``minigrad.cuda.is_available()``
is False, so that code picks ``"cpu"`` and runs unchanged. As in PyTorch, a ``device("cuda")``
object can be made; using it for a tensor raises ``DeviceUnavailableError``.

Which error: a CPU-only build of PyTorch (what a learner has on a laptop) raises
``AssertionError("Torch not compiled with CUDA enabled")`` for CUDA and
``NotImplementedError`` for MPS. ``DeviceUnavailableError`` is both a
``NotImplementedError`` (hence a ``RuntimeError``) and an ``AssertionError``, so
``except`` clauses written for either library catch it.
"""
from __future__ import annotations

import builtins

_KNOWN_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "ipu", "hpu", "mtia", "vulkan")


class DeviceUnavailableError(NotImplementedError, AssertionError):
    """A tensor was asked for on a device other than the CPU."""


class device:
    """Where a tensor lives, as ``torch.device``: ``device("cpu")``, ``device("cuda", 0)``, ``device("cpu:0")``.

    It compares equal to another device with the same type and index; like
    PyTorch's, it never equals a string (``t.device == "cpu"`` is False in both:
    write ``t.device.type == "cpu"``).
    """

    __slots__ = ("type", "index")

    def __init__(self, type: "str | device", index: int | None = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, int) and not isinstance(type, bool):  # PyTorch's RuntimeErrors, in its order
            if type < 0:
                raise RuntimeError(f"Device index must not be negative, got {type}")
            raise RuntimeError(
                f"Cannot access accelerator device when none is available: device {type} names an accelerator, "
                "and minigrad runs on the CPU only. Use 'cpu'."
            )
        elif not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu', got {builtins.type(type).__name__}")
        else:
            name, _, number = type.partition(":")
            if name not in _KNOWN_TYPES:
                raise RuntimeError(
                    f"Expected one of {', '.join(_KNOWN_TYPES)} device type at start of device string: {type}"
                )
            if number:
                if index is not None or not number.isdigit():
                    raise RuntimeError(f"Invalid device string: '{type}'")
                index = int(number)
            type = name
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type, self.index = type, index

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")
_default = CPU


def resolve(where: "str | device | None" = None) -> device:
    """The device a tensor is placed on: ``device("cpu")``, or an error for any other device.

    ``None`` means the default device. Creation functions, ``Tensor.to`` and
    ``Module.to`` call this, so every path that places a tensor says the same thing.
    """
    if where is None:
        return _default
    d = where if isinstance(where, device) else device(where)
    if d.type != "cpu":
        raise DeviceUnavailableError(
            f"minigrad runs on the CPU only, so it cannot place a tensor on '{d}'. Use device='cpu', or "
            "pick the device with 'cuda' if minigrad.cuda.is_available() else 'cpu' as PyTorch tutorials do."
        )
    return CPU  # PyTorch places 'cpu:1' on the one CPU device too


def set_default_device(where: "str | device | None") -> None:
    """Set the device creation functions use when no ``device=`` is given (only the CPU exists)."""
    global _default
    _default = resolve("cpu" if where is None else where)


def get_default_device() -> device:
    """The device creation functions use when no ``device=`` is given: ``device(type='cpu')``."""
    return _default
