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

from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Any, Callable, Iterator

import numpy as np

from minigrad import dtypes
from minigrad.autograd.grad_mode import no_grad
from minigrad.device import device as _device
from minigrad.device import resolve
from minigrad.autograd.graph import RemovableHandle
from minigrad.nn.hooks import call_with_hooks
from minigrad.nn.parameter import Parameter
from minigrad.tensor import Tensor

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks", "_forward_hooks_with_kwargs",
               "_forward_hooks_always_called", "_backward_pre_hooks", "_backward_hooks")


def _add(hooks: OrderedDict, handle: RemovableHandle, hook: Callable, prepend: bool) -> None:
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)


def _type_name(value) -> str:
    return type(value).__name__


def _quoted(keys: list) -> str:
    return ", ".join(f'"{k}"' for k in keys)


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first (a child's repr goes after ``(name): ``)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


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

    def __init__(self) -> None:
        # object.__setattr__: our own __setattr__ needs these dictionaries to exist.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        for hooks in _HOOK_DICTS:  # (nn/hooks.py: what they hold and when they run)
            object.__setattr__(self, hooks, OrderedDict())
        object.__setattr__(self, "_is_full_backward_hook", None)  # True, False (register_backward_hook's) or unset

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks:
            return call_with_hooks(self, self.forward, args, kwargs)
        return self.forward(*args, **kwargs)

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
        self._buffers[name] = tensor
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
        self._modules[name] = module

    def register_module(self, name: str, module: "Module | None") -> None:
        """Another name for ``add_module``."""
        self.add_module(name, module)

    def _check_name(self, kind: str, name: str, own: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_type_name(name)}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
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
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as child module '{name}' (minigrad.nn.Module or None expected)"
                )
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_type_name(value)}' as buffer '{name}' (minigrad Tensor or None expected)"
                )
            buffers[name] = value
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

    def __setstate__(self, state: dict) -> None:
        """Unpickling: a module saved before minigrad had module hooks gets their (empty) dictionaries."""
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

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
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
    def _apply(self, convert: Callable[[np.ndarray], np.ndarray]) -> "Module":
        """Replace the values of every parameter (and its .grad) and buffer with ``convert(values)``.

        The tensor objects stay the same (as in PyTorch, which assigns ``param.data``),
        so an optimizer created before ``model.double()`` still holds the model's parameters.
        """
        for module in self.modules():
            for tensors in (module._parameters, module._buffers):
                for t in tensors.values():
                    if t is None:
                        continue
                    t._data = convert(t._data)
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

    def cuda(self, device=None) -> "Module":
        """Raises: minigrad has no CUDA device (the error says to use the CPU)."""
        resolve("cuda" if device is None else device if isinstance(device, (str, _device)) else f"cuda:{device}")
        return self

    def float(self) -> "Module":
        """Cast floating-point parameters and buffers to float32."""
        return self._cast_floats(dtypes.float32.numpy)

    def double(self) -> "Module":
        """Cast floating-point parameters and buffers to float64 (what gradcheck needs)."""
        return self._cast_floats(dtypes.float64.numpy)

    def type(self, dst_type) -> "Module":
        """Cast *every* parameter and buffer to ``dst_type``, integer ones included (PyTorch's rule)."""
        target = dtypes.to_numpy_dtype(dst_type)
        return self._apply(lambda a: a.astype(target) if a.dtype != target else a)

    # -- saving and loading ---------------------------------------------------------
    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """Every parameter and persistent buffer by its dotted name, detached (sharing memory).

        Unlike ``named_parameters``, a shared parameter appears under each of its names.
        """
        out: OrderedDict[str, Tensor] = OrderedDict()
        for name, param in self._parameters.items():
            if param is not None:
                out[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers:
                out[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, module in self._modules.items():
            if module is not None:
                out.update(module.state_dict(prefix=f"{prefix}{name}.", keep_vars=keep_vars))
        return out

    def load_state_dict(self, state_dict: dict, strict: bool = True) -> _IncompatibleKeys:
        """Copy the values of ``state_dict`` into this model's tensors, in place.

        Keys must match ``self.state_dict()``'s; with ``strict=False`` missing
        and unexpected keys are returned instead of raised. A shape mismatch is
        an error either way. Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {_type_name(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected a Tensor from checkpoint '
                    f"but received {_type_name(value)}"
                )
            elif value.shape != target.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                    f"the shape in current model is {target.shape}."
                )
        if strict:  # PyTorch's order: missing keys, unexpected keys, then size mismatches
            if unexpected:
                errors.insert(0, f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. ")
            if missing:
                errors.insert(0, f"Missing key(s) in state_dict: {_quoted(missing)}. ")
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__, "\n\t".join(errors))
            )
        with no_grad():  # copying into a leaf that requires grad is not a recorded operation
            for key, target in own.items():
                if key in state_dict:
                    target.copy_(state_dict[key])
        return _IncompatibleKeys(missing, unexpected)

    # -- printing ----------------------------------------------------------------
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
        return f"{type(self).__name__}({body})"

    def __dir__(self) -> list:
        names = list(super().__dir__())
        for store in (self._parameters, self._buffers, self._modules):
            names += list(store)
        return sorted(set(names))


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
