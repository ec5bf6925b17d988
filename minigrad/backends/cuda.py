"""``minigrad.backends.cuda``: CUDA's switches, kept so that scripts that set them run on the CPU.

    minigrad.backends.cuda.matmul.allow_tf32 = True    # (nanoGPT's train.py, and most GPU scripts)

minigrad has no CUDA backend (``is_built()`` is False): the switches change nothing, but keep what
is set and refuse what PyTorch refuses, with its exceptions. ``matmul.allow_tf32`` is, as in
PyTorch, another view of ``set_float32_matmul_precision``: True is "high", False "highest".
"""
from __future__ import annotations

from minigrad import settings
from minigrad.ops.broadcast import type_name

__all__ = ["is_built", "matmul", "flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled",
           "cudnn_sdp_enabled", "enable_flash_sdp", "enable_mem_efficient_sdp", "enable_math_sdp",
           "enable_cudnn_sdp"]


def is_built() -> bool:
    """False: minigrad computes on the CPU only."""
    return False


class cuBLASModule:
    """``matmul``: cuBLAS's precision switches (PyTorch's names and defaults)."""

    _REDUCTIONS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self) -> None:
        object.__setattr__(self, "_values", {"allow_fp16_reduced_precision_reduction": True,
                                             "allow_bf16_reduced_precision_reduction": True,
                                             "allow_fp16_accumulation": False})

    def __getattr__(self, name: str):
        if name == "allow_tf32":
            return settings.get_float32_matmul_precision() != "highest"
        if name == "fp32_precision":
            return "none" if settings.get_float32_matmul_precision() == "highest" else "tf32"
        if name in self._values:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value) -> None:
        if name == "allow_tf32":
            if type(value) is not bool:
                raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {type_name(value)}")
            settings.set_float32_matmul_precision("high" if value else "highest")
        elif name == "fp32_precision":
            if value not in ("none", "ieee", "tf32"):
                raise RuntimeError(f"Unknown precision: {value}")
            settings.set_float32_matmul_precision("high" if value == "tf32" else "highest")
        elif name in self._REDUCTIONS:
            first = value[0] if isinstance(value, (tuple, list)) and value else value
            if isinstance(value, (tuple, list)) and not all(type(v) is bool for v in value):
                bad = next(v for v in value if type(v) is not bool)
                raise TypeError(f"{name} expects a bool for allow_reduced_precision, but got {type(bad)}")
            if type(first) is not bool:
                raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)}")
            self._values[name] = first
        elif name == "allow_fp16_accumulation":
            if type(value) is not bool:
                raise RuntimeError(f"set_allow_fp16_accumulation_cublas expects a bool, but got {type_name(value)}")
            self._values[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()

# Scaled dot-product attention's CUDA kernels: switches that are kept, as PyTorch's (all on by default).
_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_switches(kind: str):
    def enabled() -> bool:
        return _SDP[kind]

    def enable(enabled: bool) -> None:
        _SDP[kind] = bool(enabled)

    enabled.__name__, enable.__name__ = f"{kind}_sdp_enabled", f"enable_{kind}_sdp"
    enabled.__doc__ = f"Whether the {kind} attention kernel is allowed (a switch kept, with no CUDA to use it)."
    enable.__doc__ = f"Allow or forbid the {kind} attention kernel (kept; minigrad has one CPU attention)."
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _sdp_switches("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_switches("mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_switches("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_switches("cudnn")
