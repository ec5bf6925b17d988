"""``Module``: a layer, or a model made of layers, that owns its parameters.

A Module keeps three ordered dictionaries: its ``_parameters``, its
``_buffers`` (tensors that are state but are not trained) and its ``_modules``
(sub-Modules). Plain assignment fills them: ``__setattr__`` looks at the value
and files a ``Parameter`` or a ``Module`` in the right dictionary, and
``__getattr__`` finds it there again. Everything else (``parameters()``,
``state_dict()``, ``train()``, ``zero_grad()``, ``repr``) walks the tree of
sub-Modules those dictionaries form, in the order the attributes were set,
which is the order PyTorch uses too.
"""
from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Any, Callable, Iterator, TypeVar

import numpy as np

from minigrad import dtypes
from minigrad.autograd.grad_mode import no_grad
from minigrad.device import device as _device
from minigrad.device import resolve
from minigrad.autograd.graph import RemovableHandle
from minigrad.nn.hooks import call_with_hooks, global_call_hooks, run_registration_hooks
from minigrad.nn.parameter import Parameter, is_lazy
from minigrad._tensor import Tensor


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys the model expected but did not get, and the others."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks", "_forward_hooks_with_kwargs",
               "_forward_hooks_always_called", "_backward_pre_hooks", "_backward_hooks",
               "_state_dict_pre_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"  # state_dict's key for what get_extra_state returns
_NO_LOW_PRECISION = ("minigrad has no {name} dtype (NumPy has no such type). Keep the model in float32 "
                     "(model.float()), or use model.half() (float16) for half the memory.")


def _add(hooks: OrderedDict, handle: RemovableHandle, hook: Callable, prepend: bool) -> None:
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)


def _type_name(value) -> str:
    return type(value).__name__


def _quoted(keys: list) -> str:
    return ", ".join(f'"{k}"' for k in keys)


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first and the blank ones (a child's repr goes after ``(name): ``)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line if line.strip() else "" for line in rest])


class Module:
    """Base class of all layers and models: subclass it and define ``forward``.

    ::

        class MLP(Module):
            def __init__(self):
                super().__init__()          # before assigning any Parameter or Module
                self.hidden = Linear(64, 128)
                self.out = Linear(128, 10)

            def forward(self, x):
                return self.out(self.hidden(x).relu())

    Call the model (``model(x)``), not ``model.forward(x)``: that is the
    PyTorch idiom, and the call also runs the module's hooks (``minigrad/nn/hooks.py``).
    """

    training: bool
    dump_patches: bool = False  # (PyTorch's, unused there too: kept so that code setting it runs)
    _version: int = 1
    """Saved for each module in ``state_dict()._metadata``. A layer whose saved state changes
    bumps it, and its ``_load_from_state_dict`` converts a checkpoint saved with an older
    version (BatchNorm is at 2: its version 1 had no ``num_batches_tracked``)."""
    call_super_init: bool = False
    """True: ``Module.__init__`` passes its arguments on to the next class of the MRO (for a
    subclass that also inherits from a class whose ``__init__`` takes arguments)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        # object.__setattr__: our own __setattr__ needs these dictionaries to exist.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        for hooks in _HOOK_DICTS:  # (nn/hooks.py: what they hold and when they run)
            object.__setattr__(self, hooks, OrderedDict())
        object.__setattr__(self, "_is_full_backward_hook", None)  # True, False (register_backward_hook's) or unset
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks
                or global_call_hooks):  # (the hooks of every module: nn/hooks.py)
            return call_with_hooks(self, self.forward, args, kwargs)
        return self.forward(*args, **kwargs)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Takes ``torch.compile``'s arguments and changes nothing: minigrad has no compiler, so
        forward runs as written. (PyTorch's ``Module.compile`` compiles the module in place and
        returns None too: write ``model.compile()``, not ``model = model.compile()``.)"""

    # -- hooks ---------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward; a returned value replaces ``args``
        (a non-tuple becomes a 1-tuple). ``with_kwargs``: ``hook(module, args, kwargs)``, which
        may return a new ``(args, kwargs)``."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        _add(self._forward_pre_hooks, handle, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward; a returned value replaces the
        output. ``with_kwargs``: ``hook(module, args, kwargs, output)``. ``always_call``: run it
        even when forward raises (with output None), as a ``finally`` would."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[
            self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        _add(self._forward_hooks, handle, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the outputs are known; a
        returned tuple replaces them (for this module's backward and everything before it)."""
        handle = RemovableHandle(self._backward_pre_hooks)
        _add(self._backward_pre_hooks, handle, hook, prepend)
        return handle

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the module's
        positional inputs are known; a returned tuple replaces ``grad_input``."""
        self._check_backward_hook_kind(True)
        handle = RemovableHandle(self._backward_hooks)
        _add(self._backward_hooks, handle, hook, prepend)
        return handle

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """PyTorch's older backward hook, kept for old code: ``hook(module, grad_input, grad_output)``
        with the gradients of the node that made the first output, not of the whole module (they
        agree only for a module made of one op). Use ``register_full_backward_hook``. (PyTorch also
        warns in some of the cases where the two disagree; minigrad does not.)"""
        self._check_backward_hook_kind(False)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _check_backward_hook_kind(self, full: bool) -> None:
        if self._is_full_backward_hook is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = full

    # -- registration ------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add ``param`` under ``name``; ``None`` reserves the name (as for ``bias=False``)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                "(minigrad.nn.Parameter or None required)"
            )
        if param is not None:
            param = run_registration_hooks("parameter", self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not trained (it is saved in ``state_dict`` if persistent)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' (minigrad Tensor or None required)"
            )
        self._buffers[name] = run_registration_hooks("buffer", self, name, tensor)
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Register ``module`` under ``name`` (what ``self.name = module`` does, for computed names)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        if "_modules" not in self.__dict__:
            raise AttributeError("cannot assign module before Module.__init__() call")
        self._check_name("module", name, self._modules)
        self._modules[name] = run_registration_hooks("module", self, name, module)

    def register_module(self, name: str, module: "Module | None") -> None:
        """Another name for ``add_module``."""
        self.add_module(name, module)

    def _check_name(self, kind: str, name: str, own: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_type_name(name)}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."' + (f", got: {name}" if kind == "module" else ""))
        if hasattr(self, name) and name not in own:
            raise KeyError(f"attribute '{name}' already exists")

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, "_buffers", "_modules")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                    "(minigrad.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, "_parameters", "_buffers")
            modules[name] = run_registration_hooks("module", self, name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as child module '{name}' (minigrad.nn.Module or None expected)"
                )
            modules[name] = run_registration_hooks("module", self, name, None)
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as buffer '{name}' (minigrad Tensor or None expected)"
                )
            self.register_buffer(name, value, name not in self._non_persistent_buffers)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, *stores: str) -> None:
        """Remove ``name`` from the other places it could be, before registering it in one."""
        self.__dict__.pop(name, None)
        for store in stores:
            self.__dict__[store].pop(name, None)
        self._non_persistent_buffers.discard(name)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: registered names live in the dictionaries.
        # (Read them through __dict__: during unpickling they may not exist yet.)
        for store in ("_parameters", "_buffers", "_modules"):
            d = self.__dict__.get(store)
            if d is not None and name in d:
                return d[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __getstate__(self) -> dict:
        """What pickling and ``copy.deepcopy`` save: a copy of the attributes (hooks included)."""
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        """Unpickling: a module saved before minigrad had some kind of hook gets its (empty) dictionary."""
        self.__dict__.update(state)
        for hooks in _HOOK_DICTS:
            self.__dict__.setdefault(hooks, OrderedDict())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    def __delattr__(self, name: str) -> None:
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, {}):
                del self.__dict__[store][name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    # -- walking the tree ----------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """This module and every descendant, depth first (each once, even if shared, unless not ``remove_duplicate``)."""
        memo = set() if memo is None else memo
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator["Module"]:
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """The direct sub-modules only."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, module in self.named_children():
            yield module

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``("0.weight", p)`` pairs; a parameter shared by two layers is listed once (unless not ``remove_duplicate``)."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def _named_members(self, store: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or value in seen:
                    continue
                if remove_duplicate:
                    seen.add(value)
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    # -- finding a member by its dotted name ----------------------------------------
    def get_submodule(self, target: str) -> "Module":
        """The sub-module at a dotted path, such as ``"encoder.0"`` (``""`` is this module)."""
        module = self
        for item in target.split(".") if target else ():
            if not hasattr(module, item):
                raise AttributeError(f"{type(module).__name__} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Replace (or, unless ``strict``, add) the sub-module at a dotted path."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path, such as ``"0.weight"``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path, such as ``"0.running_mean"``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(module, name)

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call ``fn`` on every sub-module, then on this one (e.g. to re-initialise weights)."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- training state --------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Set ``training`` here and in every sub-module (Dropout reads it)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        """``train(False)``: Dropout becomes the identity."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Freeze (False) or unfreeze (True) every parameter."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of the last backward (they accumulate otherwise).

        ``set_to_none=True`` (the default, as in PyTorch) drops them; False
        fills the existing gradient tensors with zeros.
        """
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                param.grad.detach_().zero_()

    # -- devices and dtypes -----------------------------------------------------------
    def _apply(self, convert: Callable[[np.ndarray], np.ndarray], recurse: bool = True) -> "Module":
        """Replace the values of every parameter (and its .grad) and buffer with ``convert(values)``
        (this module's own ones only, unless ``recurse``).

        The tensor objects stay the same (as in PyTorch, which assigns ``param.data``),
        so an optimizer created before ``model.double()`` still holds the model's parameters.
        """
        for module in self.modules() if recurse else (self,):
            for tensors in (module._parameters, module._buffers):
                for t in tensors.values():
                    if t is None:
                        continue
                    t.data = Tensor._wrap(convert(t.data._data))  # (through .data: a lazy placeholder has one too)
                    if t._grad is not None:
                        t._grad._data = convert(t._grad._data)
        return self

    def _cast_floats(self, target: np.dtype) -> "Module":
        return self._apply(lambda a: a.astype(target) if a.dtype.kind == "f" and a.dtype != target else a)

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``.

        minigrad has only the CPU, so the device part is checked (another device
        raises) and changes nothing. A dtype, which must be a floating-point
        one, converts floating-point parameters and buffers only (an int64
        counter such as BatchNorm's ``num_batches_tracked`` stays int64). Returns self.
        """
        where, dtype = _parse_to(*args, **kwargs)
        resolve(where)
        if dtype is None:
            return self
        target = dtypes.to_numpy_dtype(dtype)
        if target.kind != "f":
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype="
                f"{dtypes.from_numpy_dtype(target)}"
            )
        return self._cast_floats(target)

    def cpu(self) -> "Module":
        """The parameters already live on the CPU: returns self."""
        return self

    def cuda(self, device: int | _device | None = None) -> "Module":
        """Raises: minigrad has no CUDA device (the error says to use the CPU)."""
        return self._to_accelerator("cuda", device)

    def xpu(self, device: int | _device | None = None) -> "Module":
        """Raises, as ``cuda()``: minigrad runs on the CPU only."""
        return self._to_accelerator("xpu", device)

    def ipu(self, device: int | _device | None = None) -> "Module":
        """Raises, as ``cuda()``: minigrad runs on the CPU only."""
        return self._to_accelerator("ipu", device)

    def mtia(self, device: int | _device | None = None) -> "Module":
        """Raises, as ``cuda()``: minigrad runs on the CPU only."""
        return self._to_accelerator("mtia", device)

    def _to_accelerator(self, kind: str, device: int | _device | str | None) -> "Module":
        resolve(kind if device is None else device if isinstance(device, (str, _device)) else f"{kind}:{device}")
        return self

    def to_empty(self, *, device: str | _device | None, recurse: bool = True) -> "Module":
        """Give every parameter and buffer new, uninitialized memory of the same shape and dtype
        (how a model built without values is given some before ``load_state_dict`` or an init)."""
        resolve(device)
        return self._apply(np.empty_like, recurse=recurse)

    def share_memory(self) -> "Module":
        """Returns self: PyTorch moves the tensors to shared memory for worker processes;
        minigrad runs in one process, so there is nothing to share."""
        return self

    def float(self) -> "Module":
        """Cast floating-point parameters and buffers to float32."""
        return self._cast_floats(dtypes.float32.numpy)

    def double(self) -> "Module":
        """Cast floating-point parameters and buffers to float64 (what gradcheck needs)."""
        return self._cast_floats(dtypes.float64.numpy)

    def half(self) -> "Module":
        """Cast floating-point parameters and buffers to float16."""
        return self._cast_floats(dtypes.float16.numpy)

    def bfloat16(self) -> "Module":
        """Raises TypeError: minigrad has no bfloat16 (NumPy has no such type)."""
        raise TypeError(_NO_LOW_PRECISION.format(name="bfloat16"))

    def type(self, dst_type) -> "Module":
        """Cast *every* parameter and buffer to ``dst_type``, integer ones included (PyTorch's rule)."""
        target = dtypes.to_numpy_dtype(dst_type)
        return self._apply(lambda a: a.astype(target) if a.dtype != target else a)

    # -- saving and loading ---------------------------------------------------------
    T_destination = TypeVar("T_destination", bound=dict)

    def state_dict(self, *args: Any, destination: T_destination | None = None, prefix: str = "",
                   keep_vars: bool = False) -> T_destination:
        """Every parameter and persistent buffer by its dotted name, detached (sharing memory).

        Unlike ``named_parameters``, a shared parameter appears under each of its names. A layer
        that defines ``get_extra_state`` adds what it returns under ``<prefix>_extra_state``. The
        result (an OrderedDict, or ``destination`` filled in) carries ``_metadata``: each
        module's ``_version``, which ``load_state_dict`` hands back to ``_load_from_state_dict``.
        The state_dict hooks run around each module's part: pre-hooks ``hook(module, prefix,
        keep_vars)`` before it, post-hooks ``hook(module, state_dict, prefix, local_metadata)`` after.
        """
        if args:  # PyTorch's older positional form (destination, prefix, keep_vars)
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                          " for details.", FutureWarning, stacklevel=2)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=f"{prefix}{name}.", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:  # (the private hook's old rule: a returned dict replaces it)
                destination = result
        return destination

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """This module's own entries of ``state_dict`` (not its sub-modules'): a layer that saves
        something else overrides it (a lazy module keeps its placeholders)."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """Define it (with ``set_extra_state``) to save more than tensors in ``state_dict``: what it
        returns is stored under ``<prefix>_extra_state``, and should pickle."""
        raise RuntimeError("Module.get_extra_state() is only called when a subclass defines it: define "
                           "get_extra_state and set_extra_state together in your module.")

    def set_extra_state(self, state: Any) -> None:
        """Receives what ``get_extra_state`` saved, when ``load_state_dict`` loads it."""
        raise RuntimeError("Module.set_extra_state() is only called when a subclass defines it: define "
                           "get_extra_state and set_extra_state together in your module.")

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before this module's part of ``state_dict``."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after this module's part of
        ``state_dict``; it edits ``state_dict`` in place and must return None."""
        hook._from_public_api = True  # (what tells it from the private form's hooks, as in PyTorch)
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """PyTorch's older post-hook: a dict it returns replaces the result (at the root module only)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was "
                               "previously registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its part; it may rewrite the keys
        under ``prefix`` (how a layer keeps reading checkpoints saved in an older layout)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False) -> RemovableHandle:
        """The same hook without the module argument (unless ``with_module``): PyTorch's older form."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self) if with_module else hook
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after this module and its sub-modules are
        loaded; editing ``incompatible_keys.missing_keys`` / ``unexpected_keys`` in place changes
        what a strict load complains about. It must return None."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy the values of ``state_dict`` into this model's tensors, in place.

        Keys must match ``self.state_dict()``'s; with ``strict=False`` missing and unexpected
        keys are returned instead of raised. A shape mismatch is an error either way; as in
        PyTorch, the entries that fit are loaded before the error is raised. ``assign=True``
        puts the checkpoint's tensors themselves into the model instead of copying their values
        (each parameter keeps its ``requires_grad``): build the optimizer after it. Each module
        loads its own part (``_load_from_state_dict``), sub-modules after their parent.
        Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # the modules' steps may rewrite keys: never in the caller's dict
        self._load_tree(state_dict, "", metadata, assign, missing, unexpected, errors)
        if strict:  # PyTorch's order: missing keys, unexpected keys, then the other errors
            if unexpected:
                errors.insert(0, f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. ")
            if missing:
                errors.insert(0, f"Missing key(s) in state_dict: {_quoted(missing)}. ")
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__, "\n\t".join(errors))
            )
        return _IncompatibleKeys(missing, unexpected)

    def _load_tree(self, state_dict: dict, prefix: str, metadata: dict | None, assign: bool,
                   missing: list, unexpected: list, errors: list) -> None:
        """``load_state_dict``'s walk: this module's part, each sub-module's (with the keys under
        its prefix), then this module's post-hooks."""
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = True
        self._load_from_state_dict(state_dict, prefix, local_metadata, True, missing, unexpected, errors)
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = f"{prefix}{name}."
                child_state = {k: v for k, v in state_dict.items() if k.startswith(child_prefix)}
                child._load_tree(child_state, child_prefix, metadata, assign, missing, unexpected, errors)
        incompatible = _IncompatibleKeys(missing, unexpected)
        for hook in self._load_state_dict_post_hooks.values():
            if hook(self, incompatible) is not None:
                raise AssertionError(
                    "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return new "
                    "values, if incompatible_keys need to be modified, it should be done inplace."
                )

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        """Load this module's own entries (keys ``prefix + name``) and record what does not fit.

        A layer overrides it to read older checkpoints (``local_metadata["version"]`` is the
        ``_version`` they were saved with) and calls ``super()._load_from_state_dict(...)``.
        ``state_dict`` is a copy: the override may add or remove keys. The load pre-hooks run first.
        """
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {name: t for name, t in itertools.chain(
            self._parameters.items(),
            ((n, b) for n, b in self._buffers.items() if n not in self._non_persistent_buffers)) if t is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected a Tensor from checkpoint '
                                  f"but received {type(value)}")
                continue
            lazy = is_lazy(param)  # (a lazy module's pre-hook has given it the saved shape, if there was one)
            if not lazy and param.ndim == 0 and value.shape == (1,):  # (PyTorch 0.3's checkpoints kept (1,))
                value = value[0]
            if not lazy and value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():  # copying into a leaf that requires grad is not a recorded operation
                    if assign:
                        if isinstance(param, Parameter):
                            if isinstance(value, Parameter):
                                value.requires_grad_(param.requires_grad)
                            else:
                                value = Parameter(value, requires_grad=param.requires_grad)
                        setattr(self, name, value)
                    elif not lazy:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, "
                                  f"an exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    first, *rest = key[len(prefix):].split(".", 1)
                    if first not in (self._modules if rest else local_state):  # (a dotted name: a sub-module's)
                        unexpected_keys.append(key)

    # -- printing ----------------------------------------------------------------
    def _get_name(self) -> str:
        """The name ``repr`` starts with: the class's."""
        return type(self).__name__

    def extra_repr(self) -> str:
        """The arguments shown between the parentheses; layers override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(module), 2) for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    def __dir__(self) -> list:
        """Attributes, plus the names of parameters, buffers and sub-modules that are identifiers
        (Sequential's ``"0"`` is reached with ``model[0]``, not ``model.0``)."""
        names = list(super().__dir__())
        for store in (self._parameters, self._buffers, self._modules):
            names += list(store)
        return sorted({name for name in names if not name[0].isdigit()})


def _parse_to(*args: Any, device=None, dtype=None, non_blocking: bool = False, **kwargs: Any) -> tuple:
    """``(device, dtype)`` from any of the forms ``Tensor.to`` and ``Module.to`` accept."""
    if kwargs:
        raise TypeError(f"to() got unexpected keyword argument(s) {', '.join(kwargs)}")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        dtype = other.dtype if dtype is None else dtype
    elif rest and isinstance(rest[0], (str, _device)) or (rest and rest[0] is None):
        device = rest.pop(0)
    if rest and not isinstance(rest[0], bool):
        dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        rest.pop(0)  # non_blocking: nothing to overlap on the CPU
    if rest:
        raise TypeError(f"to() received an invalid combination of arguments: {args!r}")
    return device, dtype
