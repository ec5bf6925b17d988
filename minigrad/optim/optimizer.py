"""``Optimizer``: what SGD and Adam share — parameter groups, zero_grad, saving state.

An optimizer holds ``param_groups``, a list of dicts: each has a ``"params"``
list and its own hyperparameters (``"lr"``, ...), so one model can train its
parts at different rates. ``state[p]`` keeps what an algorithm remembers about
parameter ``p`` between steps (a momentum buffer, Adam's averages).

``step()`` changes the parameters' NumPy arrays in place, outside autograd: an
update is not an operation to differentiate, and in place it allocates
nothing. Each update bumps the parameter's version counter, exactly as an
in-place tensor operation would, so a graph that saved the old values and is
backpropagated later reports the change instead of silently using new values.

Where minigrad's optimizers differ from PyTorch's: ``state[p]["step"]`` is a
Python int (PyTorch keeps a 0-dim float tensor); ``lr`` is a number (PyTorch
also takes a 1-element tensor); and the flags for PyTorch's other
implementations (``differentiable``, ``capturable``, ``fused``) are accepted
only at their defaults, since minigrad has one: a loop over the parameters,
outside autograd, on the CPU. ``foreach`` is accepted and ignored.
"""
from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any, Callable, Iterable

import numpy as np

from minigrad.autograd.grad_mode import enable_grad
from minigrad.dtypes import get_default_dtype
from minigrad.tensor import Tensor

# Why each flag PyTorch offers for its other implementations can only keep its default here.
_ONE_IMPLEMENTATION = {
    "differentiable": "minigrad's step updates parameters outside autograd, so it has no graph to differentiate",
    "capturable": "minigrad runs on the CPU, without CUDA graphs to capture",
    "fused": "minigrad has one implementation, a loop over the parameters",
}


class Optimizer:
    """Base class: subclasses call ``super().__init__(params, defaults)`` and define ``step``."""

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {params.dtype} tensor: pass model.parameters() or a list"
            )
        self.defaults = defaults
        self._opt_called = False  # set by step(): lets a scheduler warn when it is stepped first
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters; hyperparameters it doesn't set come from the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = {**self.defaults, **param_group, "params": params}
        for flag, reason in _ONE_IMPLEMENTATION.items():
            if group.get(flag):
                raise NotImplementedError(f"{type(self).__name__} got {flag}={group[flag]}, but {reason}: "
                                          f"leave {flag} at its default")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the last gradients (backward adds into ``.grad``; it never overwrites)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_().zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient. ``closure`` re-evaluates the loss and returns it."""
        self._opt_called = True
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p, p.grad._data, group, self.state[p])
                    p._version_counter.value += 1  # p's values changed in place
        return loss

    def _update(self, p: Tensor, grad, group: dict, state: dict) -> None:
        """Change ``p._data`` in place from ``grad`` (a NumPy array); subclasses define it."""
        raise NotImplementedError

    # -- saving and loading ---------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``.

        Parameters are replaced by their position (counting through all groups),
        so the dict can be loaded into an optimizer over a fresh copy of the model.
        """
        index = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            groups.append({**group, "params": [index[id(p)] for p in group["params"]]})
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyperparameters and per-parameter state saved by ``state_dict`` (copied).

        As in PyTorch, tensors in the state of a floating-point parameter take its
        dtype, except ``"step"``: a float32 checkpoint continues in float64 and vice versa.
        """
        state_dict = copy.deepcopy(state_dict)
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        by_index = {}
        for group, saved in zip(self.param_groups, saved_groups):
            by_index.update(zip(saved["params"], group["params"]))
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            if i in by_index:
                p = by_index[i]
                self.state[p] = {key: _cast_state(value, p, key) for key, value in s.items()}
        self.param_groups = [
            {**saved, "params": group["params"]} for group, saved in zip(self.param_groups, saved_groups)
        ]

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines) + "\n)"


def _cast_state(value: Any, p: Tensor, key: str) -> Any:
    """``value`` in ``p``'s dtype if it is a tensor of state a floating-point ``p`` keeps (not its step count)."""
    if isinstance(value, Tensor) and key != "step" and p.is_floating_point():
        return Tensor._wrap(value._data.astype(p._data.dtype, copy=False))
    return value


def _scalar_state(value: float) -> Tensor:
    """A 0-dim tensor of the default dtype, where PyTorch keeps scalar state (ASGD's ``eta``, NAdam's ``mu_product``).

    Its float32 rounding shows in the updates of float64 parameters too, so
    minigrad rounds alike to follow PyTorch's trajectories.
    """
    return Tensor._wrap(np.array(value, dtype=get_default_dtype().numpy))


def _check_non_negative(**hyperparameters: float) -> None:
    """PyTorch's ``ValueError`` for the first hyperparameter below 0 (or NaN), e.g. ``Invalid learning rate: -1``."""
    for name, value in hyperparameters.items():
        if not 0.0 <= value:
            words = {"lr": "learning rate", "eps": "epsilon value"}.get(name, f"{name} value")
            raise ValueError(f"Invalid {words}: {value}")


def _check_betas(betas: tuple[float, float]) -> None:
    """Each of Adam's two averaging factors must be in [0, 1): at 1 the average never moves."""
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
