"""``Optimizer``: what SGD and Adam share — parameter groups, zero_grad, saving state, hooks.

An optimizer holds ``param_groups``, a list of dicts: each has a ``"params"``
list and its own hyperparameters (``"lr"``, ...), so one model can train its
parts at different rates. ``state[p]`` keeps what an algorithm remembers about
parameter ``p`` between steps (a momentum buffer, Adam's averages).

``step()`` changes the parameters' NumPy arrays in place, outside autograd: an
update is not an operation to differentiate. ``SGD``, ``Adam`` and ``AdamW``
allocate no array of a parameter's size after their first step (which creates
their state): they work through each parameter in blocks (``blocks``), writing
every intermediate into two scratch blocks with NumPy's ``out=`` (made once, reused). The
other optimizers still make a temporary array or two per step. Each update bumps the parameter's version counter, exactly as an
in-place tensor operation would, so a graph that saved the old values and is
backpropagated later reports the change instead of silently using new values.

Where minigrad's optimizers differ from PyTorch's: ``state[p]["step"]`` is a
Python int (PyTorch keeps a 0-dim float tensor); ``lr`` is a number (PyTorch
also takes a 1-element tensor); and the flags for PyTorch's other
implementations (``differentiable``, ``capturable``, ``fused``) are accepted
only at their defaults, since minigrad has one: a loop over the parameters,
outside autograd, on the CPU. ``foreach`` is accepted and ignored.

Hooks run around ``step``, ``state_dict`` and ``load_state_dict``, as in
PyTorch: ``register_step_pre_hook(hook)`` calls ``hook(optimizer, args,
kwargs)`` before each step (``args`` starts with the optimizer itself) and the
hook may return new ``(args, kwargs)``; post hooks see what the step was called
with. ``register_optimizer_step_pre_hook`` / ``_post_hook`` in this module do
the same for every optimizer. Global pre hooks run before an optimizer's own,
its own post hooks before the global ones.
"""
from __future__ import annotations

import copy
import functools
import itertools
import threading
import warnings
from collections import OrderedDict, defaultdict
from typing import Any, Callable, Iterable

import numpy as np

from minigrad.autograd.grad_mode import enable_grad
from minigrad.autograd.graph import RemovableHandle
from minigrad.dtypes import get_default_dtype
from minigrad._tensor import Tensor

# Why each flag PyTorch offers for its other implementations can only keep its default here.
_ONE_IMPLEMENTATION = {
    "differentiable": "minigrad's step updates parameters outside autograd, so it has no graph to differentiate",
    "capturable": "minigrad runs on the CPU, without CUDA graphs to capture",
    "fused": "minigrad has one implementation, a loop over the parameters",
}


class _RequiredParameter:
    """The default of a hyperparameter every group must set: ``def __init__(self, params, lr=required)``."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it may return new (args, kwargs)."""
    return _add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    return _add_hook(_global_optimizer_post_hooks, hook)


def _add_hook(hooks: OrderedDict, hook: Callable, prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _hooked(step: Callable) -> Callable:
    """``step`` wrapped in the step hooks (and the record a scheduler checks that the optimizer stepped).

    Every class's own ``step`` is wrapped, so a ``super().step()`` inside one
    runs inside the outer call's hooks, not in hooks of its own.
    """
    @functools.wraps(step)
    def step_with_hooks(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        if self._stepping:
            return step(*args, **kwargs)
        for pre_hook in (itertools.chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values())
                         if _global_optimizer_pre_hooks or self._optimizer_step_pre_hooks else ()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {result}.")
                args, kwargs = result
        self._opt_called = True
        self._stepping = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._stepping = False
        for post_hook in (itertools.chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values())
                          if _global_optimizer_post_hooks or self._optimizer_step_post_hooks else ()):
            post_hook(self, args, kwargs)
        return out

    return step_with_hooks


BLOCK = 65536  # elements: the size of a step's scratch arrays, whatever a parameter's size
_scratch = threading.local()  # per thread: dtype -> scratch arrays of BLOCK elements, made once


def _scratch_arrays(dtype: np.dtype, count: int) -> list[np.ndarray]:
    """``count`` scratch arrays of ``BLOCK`` elements of ``dtype``, the same ones at every step (fresh
    ones would cost page faults at every step as well as the allocation)."""
    cache = getattr(_scratch, "arrays", None)
    if cache is None:
        cache = _scratch.arrays = {}
    arrays = cache.setdefault(dtype, [])
    while len(arrays) < count:
        arrays.append(np.empty(BLOCK, dtype))
    return arrays[:count]


def blocks(arrays: list[np.ndarray], writes: list[bool], scratch: int):
    """Walk same-shaped ``arrays`` together in blocks of at most ``BLOCK`` elements: yield for each
    block the arrays' parts (1-D, or the arrays themselves when they are one block), then
    ``scratch`` scratch arrays of the block's shape and the first array's dtype, whose values are
    garbage (a step writes them before reading them).

    A part of an array marked in ``writes`` is written back into it (it is a view, or a buffer of
    ``np.nditer``'s that the iterator copies back), so an elementwise update done with ``out=``
    into the parts is an update of the whole, in place, with scratch memory of one block: for an
    elementwise computation the result is the same, bit for bit, as on the whole arrays.
    """
    first = arrays[0]
    if first.size <= BLOCK:  # (the usual case: one block, a list rather than a generator)
        return [(*arrays, *scratch_views(first, scratch))]
    return _blocks(arrays, writes, scratch)


def scratch_views(like: np.ndarray, scratch: int) -> tuple:
    """``scratch`` scratch arrays of like's shape and dtype, for ``like`` of at most ``BLOCK`` elements:
    views of the thread's scratch blocks, made once per shape. Their values are garbage."""
    key = (like.dtype, like.shape, scratch)
    cache = getattr(_scratch, "views", None)
    if cache is None:
        cache = _scratch.views = {}
    views = cache.get(key)
    if views is None:  # the scratch arrays' first elements in this shape, made once per shape
        views = cache[key] = tuple(s[:like.size].reshape(like.shape) for s in _scratch_arrays(like.dtype, scratch))
    return views


def _blocks(arrays: list[np.ndarray], writes: list[bool], scratch: int):
    """``blocks`` of arrays larger than one block."""
    first = arrays[0]
    spare = _scratch_arrays(first.dtype, scratch)
    if all(a.flags.c_contiguous for a in arrays):  # (the usual case: slicing is cheaper than nditer)
        flat = [a.reshape(-1) for a in arrays]
        for start in range(0, first.size, BLOCK):
            stop = min(start + BLOCK, first.size)
            yield (*(a[start:stop] for a in flat), *(s[:stop - start] for s in spare))
        return
    iterator = np.nditer(arrays, flags=["external_loop", "buffered", "zerosize_ok"], buffersize=BLOCK,
                         op_flags=[["readwrite"] if w else ["readonly"] for w in writes])
    with iterator:
        for parts in iterator:
            n = len(parts[0])
            yield (*parts, *(s[:n] for s in spare))

class Optimizer:
    """Base class: subclasses call ``super().__init__(params, defaults)`` and define ``step``."""

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {params.dtype} tensor: pass model.parameters() or a list"
            )
        self.defaults = defaults
        self._init_hooks()
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _hooked(cls.__dict__["step"])

    def _init_hooks(self) -> None:
        """Empty hook tables (also after unpickling: hooks are functions, which a pickle doesn't keep)."""
        self._opt_called = False  # set by step(): lets a scheduler warn when it is stepped first
        self._stepping = False
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._init_hooks()
        self.__dict__.update(state)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (a dict, completed in place); hyperparameters it lacks come from the defaults.

        Unfreezing layers while fine-tuning is the classic use. ``params`` may
        be ``(name, tensor)`` pairs (``model.named_parameters()``): the names go
        to the group's ``"param_names"``, saved in the state_dict.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of tensors in "
                "sets will change between runs. Please use a list instead."
            )
        params = [params] if isinstance(params, Tensor) else list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = params
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        for flag, reason in _ONE_IMPLEMENTATION.items():
            if param_group.get(flag):
                raise NotImplementedError(f"{type(self).__name__} got {flag}={param_group[flag]}, but {reason}: "
                                          f"leave {flag} at its default")
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

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

    @_hooked
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient. ``closure`` re-evaluates the loss and returns it."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        state, update = self.state, self._update
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is not None:
                    update(p, grad._data, group, state[p])
                    p._version_counter.value += 1  # p's values changed in place
        return loss

    def _update(self, p: Tensor, grad, group: dict, state: dict) -> None:
        """Change ``p._data`` in place from ``grad`` (a NumPy array); subclasses define it."""
        raise NotImplementedError

    # -- hooks ------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step``; it may return new ``(args, kwargs)``."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` before ``state_dict`` builds the dict (first of all if ``prepend``)."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` on the built dict; a dict it returns is returned instead."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` on a shallow copy of the dict to load; a dict it returns is loaded.

        This is where a checkpoint from a different model layout is adapted
        (by its groups' ``"param_names"``, say).
        """
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(optimizer)`` after ``load_state_dict`` has loaded."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- saving and loading ---------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``.

        Parameters are replaced by their position (counting through all groups),
        so the dict can be loaded into an optimizer over a fresh copy of the model.
        The state is not copied: save it (or deepcopy it) before stepping on.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            start = len(index)
            index.update({id(p): i for i, p in enumerate(group["params"], start) if id(p) not in index})
            groups.append({**{k: v for k, v in group.items() if k != "params"},
                           "params": [index[id(p)] for p in group["params"]]})
        state = {(index[id(p)] if isinstance(p, Tensor) else p): s for p, s in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyperparameters and per-parameter state saved by ``state_dict`` (copied).

        As in PyTorch, tensors in the state of a floating-point parameter take its
        dtype, except ``"step"``: a float32 checkpoint continues in float64 and vice versa.
        """
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
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
            else:
                self.state[i] = s
        groups = []
        for group, saved in zip(self.param_groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            groups.append(saved)
        self.param_groups = groups
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines) + "\n)"


def _cast_state(value: Any, p: Tensor, key: Any = None) -> Any:
    """``value`` with its tensors in ``p``'s dtype if ``p`` is floating-point, except the step count ``"step"``.

    Lists, tuples and dicts of state (LBFGS keeps its history in lists) are cast element by element.
    """
    if isinstance(value, Tensor):
        if key != "step" and p.is_floating_point():
            return Tensor._wrap(value._data.astype(p._data.dtype, copy=False))
        return value
    if isinstance(value, dict):
        return {k: _cast_state(v, p, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(v, p) for v in value)
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
