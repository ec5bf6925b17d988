"""The stage registry: one module per worksheet, ``sNN_name.py`` or a package ``sNN_name/``, each
defining ``STAGE``."""
from __future__ import annotations

import importlib
import pkgutil

from minigrad.course.checks import Stage


def _modules() -> dict[str, str]:
    """Stage name -> module name, found by listing this package (no import needed)."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("s") and info.name[1:3].isdigit():
            found[info.name[4:]] = info.name
    return found


def get_stage(key: str) -> Stage:
    """Look a stage up by name ('topological_backward'), number ('04') or both ('04_topological_backward')."""
    modules = _modules()
    for name, module in modules.items():
        if key in (name, module[1:3], module[1:]):
            return importlib.import_module(f"{__name__}.{module}").STAGE
    raise KeyError(f"no stage {key!r}; the stages are: {', '.join(module[1:] for module in sorted(modules.values()))}")
