"""``minigrad.cuda.amp``: PyTorch's deprecated spellings of ``minigrad.amp``'s ``GradScaler`` and
``autocast`` for ``"cuda"``. As in CPU-only PyTorch, both warn that they are deprecated and, when
asked to be enabled, that there is no CUDA, and then do nothing (see ``minigrad/amp.py``)."""
from __future__ import annotations

import warnings

from minigrad import amp as _amp

__all__ = ["GradScaler", "autocast"]


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`minigrad.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`minigrad.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class autocast(_amp.autocast):
    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True) -> None:
        warnings.warn("`minigrad.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`minigrad.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
