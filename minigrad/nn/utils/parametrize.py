"""``minigrad.nn.utils.parametrize``: a parameter computed from other tensors, as PyTorch's.

``register_parametrization(linear, "weight", Symmetric())`` moves the weight to
``linear.parametrizations.weight.original`` and makes ``linear.weight`` a property that
returns ``Symmetric()(original)`` each time it is read. The optimizer then trains
``original`` freely while the layer only ever sees a symmetric weight: a constraint kept by
construction instead of by projecting after each step.

A property lives on the class, not the instance, so the module's class is swapped for a
generated subclass (``ParametrizedLinear``) that holds it; removing the last
parametrization swaps the class back. Assigning to the property calls the
parametrizations' ``right_inverse`` in reverse order and stores the result in ``original``
(or ``original0, original1, ...`` when the first one returns several tensors).
"""
from __future__ import annotations

import copy
import copyreg
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Iterator

from minigrad.autograd.grad_mode import no_grad
from minigrad.nn.module import Module
from minigrad.nn.modules.container import ModuleDict, ModuleList
from minigrad.nn.parameter import Parameter
from minigrad._tensor import Tensor

__all__ = [
    "cached", "ParametrizationList", "register_parametrization", "is_parametrized",
    "remove_parametrizations", "type_before_parametrizations", "transfer_parametrizations_and_params",
]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Compute each parametrized tensor once inside the block (an RNN reads its recurrent
    weight at every step); the values are forgotten when the outermost block ends."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set(dest: Tensor, src: Tensor) -> None:
    """PyTorch's ``dest.set_(src)``: the same tensor object now holds ``src``'s values (and shape),
    so an optimizer that already holds ``dest`` keeps training it."""
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and the unconstrained tensor(s) they start from.

    It is ``module.parametrizations[tensor_name]``: calling it runs ``self[0](original)`` (or
    ``self[0](original0, original1, ...)``), then every later parametrization in order.
    ``register_parametrization`` builds it; it is not meant to be created by hand.
    """

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass  # no right inverse: start from the tensor as it is
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            Z = self()
            if not isinstance(Z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(Z).__name__}.")
            if Z.dtype != original_dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the tensor, "
                                 "unless `unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {original_dtype}\nparametrized dtype: {Z.dtype}")
            if Z.shape != original_shape:
                raise ValueError("Registering a parametrization may not change the shape of the tensor, "
                                 "unless `unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {original_shape}\nparametrized shape: {Z.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Store in ``original`` (or ``original0, ...``) what makes the parametrized tensor ``value``:
        each parametrization's ``right_inverse``, last registered first."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                                     f"while `original` has dtype {self.original.dtype}")
                _set(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                                 f"Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or reference-type opaques. "
                                     f"Got element {i} of type {type(tensor).__name__}.")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                                     f"while `original{i}` has dtype {original_i.dtype}")
                _set(original_i, tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _deepcopy(self: Module, memo: dict) -> Module:
    """``copy.deepcopy`` of a parametrized module: its ``__dict__`` (pickling it is refused)."""
    if id(self) in memo:
        return memo[id(self)]
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _refuse_pickle(self: Module) -> None:
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). Save "
        "module.state_dict() and load it into a module parametrized the same way.")


def _inject_new_class(module: Module) -> None:
    """Make ``module`` an instance of a new subclass of its class, where properties can be added."""
    cls = module.__class__
    namespace = {"__getstate__": _refuse_pickle}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module: Module, tensor_name: str) -> None:
    """``module.<tensor_name>`` computes the parametrization (cached inside ``cached()``);
    assigning to it calls ``right_inverse``."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(module), tensor_name)
        if _cache.get(key) is None:
            _cache[key] = parametrization()
        return _cache[key]

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_same(message: str, tensor_name: str, Y: Tensor, X: Tensor, returned: str) -> None:
    """PyTorch's dtype and shape checks when a parametrization is added to a parametrized tensor."""
    for attr in ("dtype", "shape"):
        if getattr(X, attr) != getattr(Y, attr):
            raise ValueError(message.format(attr=attr) + ", unless the `unsafe` flag is enabled.\n"
                             f"module.{tensor_name}.{attr}: {getattr(Y, attr)}\n"
                             f"{returned.format(attr=attr)}: {getattr(X, attr)}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` (see the module docstring).

    A second parametrization on the same tensor is applied to the first one's output.
    ``unsafe=True`` lets it change the tensor's shape or dtype (unchecked). Returns ``module``.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            if not isinstance(X, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(X).__name__}.")
            _check_same("Registering a parametrization may not change the {attr} of the tensor", tensor_name, Y, X,
                        f"parametrization(module.{tensor_name}).{{attr}}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    Z = parametrization.right_inverse(X)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(Z, Tensor):
                        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(Z).__name__}")
                    _check_same("The tensor returned by parametrization.right_inverse must have the same {attr} "
                                f"as module.{tensor_name}", tensor_name, Y, Z, "returned {attr}")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
                         f"with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization on ``tensor_name`` (on anything, if None)."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Make ``module.<tensor_name>`` a plain parameter (or buffer) again: its current parametrized
    value (``leave_parametrized=True``) or the unconstrained ``original`` (False; only possible
    when the parametrization starts from one tensor). The same tensor object stays registered,
    so an optimizer holding ``original`` keeps working. Returns ``module``."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                _set(original, getattr(module, tensor_name))
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                         "parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class ``module`` had before it was parametrized (``Linear`` for a ``ParametrizedLinear``)."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Give ``to_module`` the same parametrizations (the same modules) and the same original
    tensors as ``from_module``, for all parametrized tensors or only ``tensor_name``."""
    if not is_parametrized(from_module):
        return to_module
    for name in (from_module.parametrizations if tensor_name is None else [tensor_name]):
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        source = from_module.parametrizations[name]
        for param_func in source:
            register_parametrization(to_module, name, param_func)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
