"""Global switches that PyTorch scripts set at the top for reproducibility and speed.

    minigrad.use_deterministic_algorithms(True)
    minigrad.set_float32_matmul_precision("high")

minigrad accepts and refuses the same values as PyTorch and remembers them, so such scripts
run and read back what they set; the switches change nothing else. minigrad's ops already
give the same result on every run (NumPy on the CPU: no atomic adds racing on a GPU), so there
is no nondeterministic op to refuse or warn about; and its float32 matrix products are always
float32 (no TensorFloat32, which only NVIDIA GPUs have).
"""
from __future__ import annotations

import warnings

from minigrad.ops.broadcast import type_name

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision"]


class _Settings:
    deterministic = False
    warn_only = False
    matmul_precision = "highest"


def _bool(function: str, argument: str, value, position: int | None = 1) -> bool:
    """PyTorch's check of a bool argument: exactly True or False (not 1, not numpy.bool)."""
    if type(value) is not bool:
        where = f" (position {position})" if position else ""
        raise TypeError(f"{function}(): argument '{argument}'{where} must be bool, not {type_name(value)}")
    return value


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (and, with ``warn_only``, warnings instead of errors for
    ops that have none). Every minigrad op is deterministic already: this records the request."""
    _Settings.deterministic = _bool("use_deterministic_algorithms", "mode", mode)
    _Settings.warn_only = _bool("use_deterministic_algorithms", "warn_only", warn_only, None)


def are_deterministic_algorithms_enabled() -> bool:
    return _Settings.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _Settings.warn_only


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """``use_deterministic_algorithms`` by level: "default" or 0 (off), "warn" or 1, "error" or 2."""
    if not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        levels = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in levels:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = levels[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    _Settings.deterministic, _Settings.warn_only = debug_mode > 0, debug_mode == 1


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn) or 2 (error), as ``set_deterministic_debug_mode`` takes it."""
    return 0 if not _Settings.deterministic else 1 if _Settings.warn_only else 2


def set_float32_matmul_precision(precision: str) -> None:
    """"highest", "high" or "medium": how much PyTorch may round float32 matrix products on a GPU.
    minigrad always computes them in float32 ("highest"); it records the value. Another string
    warns and changes nothing, as in PyTorch."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type_name(precision)}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning, stacklevel=2)
        return
    _Settings.matmul_precision = precision


def get_float32_matmul_precision() -> str:
    return _Settings.matmul_precision
