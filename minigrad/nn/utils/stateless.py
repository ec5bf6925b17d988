"""Run a module with other tensors in place of its parameters and buffers (``functional_call``).

It treats a model as a function of its weights, ``f(weights, x)``: the basis of
meta-learning (take a gradient step, evaluate at the new weights, differentiate through
both) and of comparing a model at several weights without copying it.
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Iterator, Mapping

from minigrad._tensor import Tensor


@contextlib.contextmanager
def _swapped(module, tensors: dict) -> Iterator[None]:
    """Inside the block, ``module``'s member at each dotted name is the given tensor."""
    saved = []
    try:
        for name, value in tensors.items():
            owner_path, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_path)
            store = owner._parameters if attr in owner._parameters else owner._buffers if attr in owner._buffers else None
            if store is None:
                saved.append((owner, attr, None, owner.__dict__.get(attr, _MISSING)))
                object.__setattr__(owner, attr, value)
            else:
                saved.append((owner, attr, store, store[attr]))
                store[attr] = value  # (not setattr: a plain tensor where a Parameter was)
        yield
    finally:
        for owner, attr, store, old in reversed(saved):
            if store is not None:
                store[attr] = old
            elif old is _MISSING:
                owner.__dict__.pop(attr, None)
            else:
                object.__setattr__(owner, attr, old)


_MISSING = object()


def functional_call(module, parameters_and_buffers: Mapping[str, Tensor], args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True, strict: bool = False) -> Any:
    """PyTorch 1.x's place for ``minigrad.func.functional_call`` (one dict only); it warns, as PyTorch's does."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return call_with(module, dict(parameters_and_buffers), args, kwargs, tie_weights=tie_weights, strict=strict)


def call_with(module, tensors: dict, args: Any = None, kwargs: dict | None = None, *, tie_weights: bool = True,
              strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with ``tensors`` (dotted names, as in ``state_dict``) in place of the
    module's own parameters and buffers; the module is unchanged afterwards.

    ``strict``: every parameter and buffer must be given, and nothing else. ``tie_weights``: a
    tensor given for one name of a shared parameter is used for its other names too.
    """
    members = dict(module.named_parameters(remove_duplicate=False))
    members.update(module.named_buffers(remove_duplicate=False))
    if strict:
        missing = [n for n in members if n not in tensors]
        unexpected = [n for n in tensors if n not in members]
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(map(repr, unexpected)) + ".")
            if missing:
                parts.append("Missing key(s): " + ", ".join(map(repr, missing)) + ".")
            raise RuntimeError("Error(s) in reparametrizing for " + type(module).__name__ + ":\n\t" + "\n\t".join(parts))
    if tie_weights:
        tensors = _tied(members, tensors)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _swapped(module, tensors):
        return module(*args, **(kwargs or {}))


def _tied(members: dict, tensors: dict) -> dict:
    """``tensors`` with the tensor given for one name of a shared member given for all its names;
    two different tensors for one shared member is an error."""
    names_of = {}
    for name, member in members.items():
        names_of.setdefault(id(member), []).append(name)
    tensors = dict(tensors)
    for names in names_of.values():
        given = [n for n in names if n in tensors]
        if len(names) < 2 or not given:
            continue
        if len({id(tensors[n]) for n in given}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
        for n in names:
            tensors[n] = tensors[given[0]]
    return tensors
