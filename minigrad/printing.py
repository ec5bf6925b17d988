"""How tensors print: PyTorch's ``set_printoptions`` and its layout (``torch/_tensor_str.py``).

``Tensor.__repr__`` asks ``array_text`` for the values and ``with_suffixes`` for the rest
(``dtype=``, ``grad_fn=``), so a printout matches PyTorch's line for line:

* one column width for all values, from the nonzero finite ones: whole numbers print as ``1.``,
  others with ``precision`` decimals, in scientific notation when the values span more than 1000x
  or pass 1e8 or go below 1e-4 (``sci_mode`` True or False decides instead);
* as many values on a line as fit in ``linewidth``;
* past ``threshold`` values, only ``edgeitems`` at each end of each dimension, ``...`` between.

It needs only NumPy, so ``minigrad/_tensor.py`` imports it without importing anything above itself.
"""
from __future__ import annotations

import math

import numpy as np

# PyTorch's profiles: what set_printoptions(profile=...) resets every option to
PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}
OPTIONS = {**PROFILES["default"], "sci_mode": None}


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print: digits after the point, the element count above which the middle is
    summarised as ``...`` (``edgeitems`` kept at each end), the line width, scientific notation
    (None: when the values need it). ``profile`` ('default', 'short', 'full') first resets the
    others; an unknown one changes nothing, as in PyTorch."""
    if profile in PROFILES:
        OPTIONS.update(PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            OPTIONS[name] = value
    OPTIONS["sci_mode"] = sci_mode


class _Formatter:
    """PyTorch's ``_Formatter``: the style and the column width of a tensor's values."""

    def __init__(self, shown: np.ndarray) -> None:
        self.floating = shown.dtype.kind == "f"
        self.whole, self.sci, self.width = True, False, 1
        if not self.floating:
            self.width = max([1] + [len(str(v)) for v in shown.ravel().tolist()])
            return
        values = shown[np.isfinite(shown) & (shown != 0)].astype(np.float64)
        if values.size == 0:
            return
        size = np.abs(values)
        self.whole = bool(np.all(values == np.ceil(values)))
        automatic = bool(size.max() / size.min() > 1000 or size.max() > 1e8 or size.min() < 1e-4)
        self.sci = automatic if OPTIONS["sci_mode"] is None else OPTIONS["sci_mode"]
        self.width = max(len(self.text(v)) for v in values.tolist())

    def text(self, value) -> str:
        if not self.floating:
            return str(value)
        if self.sci:
            return f"{value:.{OPTIONS['precision']}e}"
        if self.whole:
            return f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        return f"{value:.{OPTIONS['precision']}f}"

    def format(self, value) -> str:
        return self.text(value).rjust(self.width)


def _summarized(data: np.ndarray) -> np.ndarray:
    """The values a summarised printout shows (``edgeitems`` at each end of each dimension)."""
    edge = OPTIONS["edgeitems"]
    if data.ndim == 0:
        return data
    if data.ndim > 1 and not edge:
        return data[(slice(0, 0),) * data.ndim]
    if data.shape[0] > 2 * edge:
        data = np.concatenate([data[:edge], data[data.shape[0] - edge:]])
    if data.ndim == 1:
        return data
    return np.stack([_summarized(row) for row in data]) if len(data) else data


def _text(data: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    edge = OPTIONS["edgeitems"]
    if data.ndim == 0:
        return formatter.format(data.item())
    cut = summarize and data.shape[0] > 2 * edge
    if data.ndim == 1:
        if summarize and not edge:
            items = ["..."]
        elif cut:
            items = ([formatter.format(v) for v in data[:edge].tolist()] + [" ..."]
                     + [formatter.format(v) for v in data[len(data) - edge:].tolist()])
        else:
            items = [formatter.format(v) for v in data.tolist()]
        per_line = max(1, math.floor((OPTIONS["linewidth"] - indent) / (formatter.width + 2)))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(data.shape[0])
    if cut:
        parts = ([_text(data[i], indent + 1, summarize, formatter) for i in range(edge)] + ["..."]
                 + [_text(data[i], indent + 1, summarize, formatter) for i in rows[len(rows) - edge:]])
    else:
        parts = [_text(data[i], indent + 1, summarize, formatter) for i in rows]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def array_text(data: np.ndarray, indent: int) -> str:
    """The values of ``data`` as PyTorch prints them, the first line ``indent`` characters in."""
    if data.size == 0:
        return "[]"
    summarize = data.size > OPTIONS["threshold"]
    formatter = _Formatter(_summarized(data) if summarize else data)
    return _text(data, indent, summarize, formatter)


def with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """``text, suffix, ...)``, a suffix on a line of its own where PyTorch's would pass the line width."""
    line = len(text) - text.rfind("\n") + 1  # (PyTorch's count: 2 more than the last line)
    for suffix in suffixes:
        width = len(suffix.replace("minigrad.", "torch."))  # (so the lines break where PyTorch's do)
        if line + width + 2 > OPTIONS["linewidth"]:
            text, line = text + ",\n" + " " * indent + suffix, indent + width
        else:
            text, line = text + ", " + suffix, line + width + 2
    return text + ")"
