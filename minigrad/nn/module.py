"""``Module``: a layer, or a model made of layers, that owns its parameters.

A Module keeps three ordered dictionaries: its ``_parameters``, its
``_buffers`` (tensors that are state but are not trained) and its ``_modules``
(sub-Modules). Plain assignment fills them: ``__setattr__`` looks at the value
and files a ``Parameter`` or a ``Module`` in the right dictionary, and
``__getattr__`` finds it there again. Everything else (``parameters()``,
``state_dict()``, ``train()``, ``zero_grad()``, ``repr``) walks the tree of
sub-Modules those dictionaries form, in the order the attributes were set,
which is the order PyTorch uses too.

``Module``'s methods are in four files, by concern: here the tree (``__init__``, ``__call__``,
registering and finding parameters, buffers and sub-modules, walking them, training state,
printing); its hooks in ``nn/hooks.py`` (``_ModuleHooks``); devices and dtypes in
``nn/devices_and_dtypes.py`` (``_ModuleDevicesAndDtypes``); saving and loading in
``nn/state_dict.py`` (``_ModuleStateDict``). ``Module`` inherits them, so a subclass overrides
any of them as it would PyTorch's, and ``super()`` reaches them as before.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterator

from minigrad.nn.devices_and_dtypes import _ModuleDevicesAndDtypes, _parse_to  # noqa: F401  (_parse_to: its old home)
from minigrad.nn.hooks import _ModuleHooks, call_with_hooks, global_call_hooks, run_registration_hooks
from minigrad.nn.parameter import Parameter
from minigrad.nn.state_dict import _IncompatibleKeys, _ModuleStateDict  # noqa: F401  (_IncompatibleKeys: its old home)
from minigrad._tensor import Tensor

_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks", "_forward_hooks_with_kwargs",
               "_forward_hooks_always_called", "_backward_pre_hooks", "_backward_hooks",
               "_state_dict_pre_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")


def _type_name(value) -> str:
    return type(value).__name__


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first and the blank ones (a child's repr goes after ``(name): ``)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line if line.strip() else "" for line in rest])


class Module(_ModuleHooks, _ModuleDevicesAndDtypes, _ModuleStateDict):
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

