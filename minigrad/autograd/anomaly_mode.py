"""Anomaly mode: find the forward line behind a NaN gradient or a failing backward.

    with minigrad.autograd.detect_anomaly():
        loss = model(x).log().sum()      # every node remembers this line
        loss.backward()                  # RuntimeError: Function 'LogBackward0' returned nan values ...

A backward error points into the engine, far from the forward code that
built the failing node. In anomaly mode every node records the traceback of
the forward call that created it (in ``node.metadata["traceback_"]``); when a
node's backward raises, or (with ``check_nan``) returns NaN, the engine warns
with that traceback and the node's name, then raises. Off, it costs one flag
check per Function call and one per backward: it is meant for debugging only.
"""
from __future__ import annotations

import os
import sys
import traceback
import warnings

import numpy as np

from minigrad.core.extension import Extensions

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _AnomalyMode:
    enabled = False
    check_nan = True
    running_node = None  # the node whose backward is running, in anomaly mode (the parent of nodes it records)


def _set(enabled: bool, check_nan: bool) -> None:
    """Switch anomaly mode; while it is on, this module is the core's ``Extensions.anomaly``."""
    _AnomalyMode.enabled, _AnomalyMode.check_nan = enabled, check_nan
    Extensions.anomaly = sys.modules[__name__] if enabled else None


def is_anomaly_enabled() -> bool:
    """True inside ``detect_anomaly()`` or after ``set_detect_anomaly(True)``."""
    return _AnomalyMode.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _AnomalyMode.check_nan


class detect_anomaly:
    """Context manager that turns anomaly detection on inside its block (it warns that it is slow)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev, self.prev_check_nan = _AnomalyMode.enabled, _AnomalyMode.check_nan
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        _set(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        _set(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Turn anomaly detection on or off, as a function call or a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev, self.prev_check_nan = _AnomalyMode.enabled, _AnomalyMode.check_nan
        _set(bool(mode), bool(check_nan))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _set(self.prev, self.prev_check_nan)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``set_detect_anomaly`` as a plain call (PyTorch's ``torch.set_anomaly_enabled``): on or off
    until the next call. Exactly True or False, as PyTorch's: 1 or numpy.bool is a TypeError."""
    for position, (name, value) in enumerate((("enabled", enabled), ("check_nan", check_nan)), start=1):
        if type(value) is not bool:
            kind = type(value)
            kind = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
            raise TypeError(f"set_anomaly_enabled(): argument '{name}' (position {position}) must be bool, not {kind}")
    _set(enabled, check_nan)


def record_forward_traceback(node) -> None:
    """Keep where ``node`` was created: the caller's stack, without minigrad's own frames at its end."""
    frames = traceback.extract_stack()
    while len(frames) > 1 and os.path.abspath(frames[-1].filename).startswith(_PACKAGE_DIR + os.sep):
        frames.pop()
    node.metadata["traceback_"] = traceback.format_list(frames)
    if _AnomalyMode.running_node is not None:  # recorded by a backward with create_graph=True
        node.metadata["parent_"] = _AnomalyMode.running_node


def warn_forward_traceback(node) -> None:
    """The warning PyTorch prints before re-raising a backward error in anomaly mode."""
    stack = node._metadata.get("traceback_") if node._metadata else None
    if stack is None:
        message = (
            f"Error detected in {node.name()}. No forward pass information available. Enable detect "
            "anomaly during forward pass for more information."
        )
    else:
        message = f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n" + "".join(stack)
    level = _first_caller_outside_minigrad()
    warnings.warn(message, UserWarning, stacklevel=level)
    parent = node._metadata.get("parent_") if node._metadata else None
    while parent is not None:  # the node was made by a backward pass: show where that pass's node came from
        stack = parent._metadata.get("traceback_") if parent._metadata else None
        where = (
            "Traceback of forward call that induced the previous calculation:\n" + "".join(stack)
            if stack else "No forward pass information available."
        )
        warnings.warn(f"\n\nPrevious calculation was induced by {parent.name()}. {where}", UserWarning, stacklevel=level)
        parent = parent._metadata.get("parent_") if parent._metadata else None


def _first_caller_outside_minigrad() -> int:
    """The ``stacklevel`` that attributes a warning to the learner's ``backward()`` line, not to the engine."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def check_nan(node, grad_inputs: tuple) -> None:
    """Raise PyTorch's error if a gradient ``node`` returned contains NaN."""
    for i, g in enumerate(grad_inputs):
        if g is not None and g._data.dtype.kind == "f" and np.isnan(g._data).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def run_node(node, run):
    """Run one node's backward (``run()``) in anomaly mode: nodes it records get it as their parent,
    NaN in what it returns raises (``check_nan``), and an error warns with its forward traceback."""
    outer, _AnomalyMode.running_node = _AnomalyMode.running_node, node
    try:
        input_grads = run()
        if _AnomalyMode.check_nan:
            check_nan(node, input_grads)
    except Exception:
        warn_forward_traceback(node)
        raise
    finally:
        _AnomalyMode.running_node = outer
    return input_grads
