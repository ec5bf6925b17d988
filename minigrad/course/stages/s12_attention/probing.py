"""What stage 12's probes share: float64 leaves, gradients by autograd, finite differences and
PyTorch, and what a node keeps for backward (its bytes, and whether an in-place change escapes the
version check)."""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad.autograd import grad as autograd_grad
from minigrad.course.checks import close

F64 = minigrad.float64
GELU_C = math.sqrt(2 / math.pi)
EPS = 1e-5


def _leaf(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64, requires_grad=True)


def _const(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64)


def _apply(ns: dict, name: str):
    fn = ns[name]
    return getattr(fn, "apply", fn)


def _grads(outputs, inputs, g) -> list:
    return list(autograd_grad(outputs, inputs, g, allow_unused=True))


def _numeric(f, arrays: list, eps: float = 1e-6) -> list:
    """Central differences of the scalar ``f(*arrays)`` with respect to each array."""
    result = []
    for k, a in enumerate(arrays):
        grad = np.zeros_like(a)
        for i in range(a.size):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[k].flat[i] += eps
            minus[k].flat[i] -= eps
            grad.flat[i] = (f(*plus) - f(*minus)) / (2 * eps)
        result.append(grad)
    return result


def _torch_grads(build, arrays: list, g: np.ndarray | None):
    """PyTorch's output and gradients for ``build(torch, *tensors)``, or None without torch."""
    try:
        import torch
    except (ImportError, OSError):  # not installed, or installed without its libraries: no torch column
        return None
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    y = build(torch, *tensors)
    weight = torch.ones((), dtype=torch.float64) if g is None else torch.tensor(g, dtype=torch.float64)
    (y * weight).sum().backward()
    return {"y": y.detach().numpy(), "grads": [t.grad.numpy() for t in tensors]}


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _kept_arrays(node) -> list:
    """Every array a node keeps for backward: its saved tensors, and arrays or tensors stored as
    attributes of ctx (in tuples and lists too), each underlying buffer once."""
    found = []
    try:
        found += [t for t in node.saved_tensors if t is not None]
    except RuntimeError:
        pass
    stack = list(getattr(node, "__dict__", {}).values())
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, (np.ndarray, minigrad.Tensor)):
            found.append(value)
    arrays, seen = [], set()
    for value in found:
        array = value.detach().numpy() if isinstance(value, minigrad.Tensor) else value
        root = _root(array)
        if id(root) not in seen:
            seen.add(id(root))
            arrays.append(root)
    return arrays


def _kept_bytes(node) -> int:
    return int(sum(a.nbytes for a in _kept_arrays(node)))


def _inplace_probe(apply, make_inputs, changed: int, g) -> dict:
    """Change input ``changed`` in place after forward, then run backward: did it raise, and
    else which gradients came out? The gradients of the unchanged computation are ``reference``."""
    leaves = make_inputs()
    y = apply(*leaves)
    reference = _grads(y, [t for t in leaves if isinstance(t, minigrad.Tensor) and t.requires_grad], g)
    leaves = make_inputs()
    used = list(leaves)
    used[changed] = leaves[changed] * 1.0  # not a leaf: a leaf that requires grad cannot change in place
    y = apply(*used)
    with minigrad.no_grad():
        used[changed].add_(0.75)
    try:
        grads = _grads(y, [t for t in leaves if isinstance(t, minigrad.Tensor) and t.requires_grad], g)
    except RuntimeError as e:
        return {"raised": True, "message": str(e)[:200]}
    return {"raised": False, "grads": grads, "reference": reference}


def _inplace_problem(name: str, what: str, mine: dict) -> str | None:
    if mine["raised"]:
        return None
    if all(got is not None and close(got, want) for got, want in zip(mine["grads"], mine["reference"])):
        return None
    return (f"after y = {name}.apply(...), {what} was changed in place (add_(0.75)) before backward, and backward "
            "returned the gradient of the changed values without a word: something it reads shares memory with "
            f"{what} but escaped the version check. Keep what backward reads with ctx.save_for_backward (minigrad "
            "then raises when a saved tensor was changed), or keep a new array computed in forward (not a view of "
            f"{what}'s array)")


def _budget_problem(name: str, kept: int, budget: int, allowed: str, why: str) -> str | None:
    if kept <= budget:
        return None
    return (f"{name}'s node keeps {kept} bytes for backward (saved tensors and arrays on ctx, each counted once); "
            f"the budget is {budget} bytes: {allowed}. {why}")


def _node_names(root, mine: dict) -> list:
    """The name of every node below ``root``; nodes of the classes in ``mine`` are named by it."""
    seen, stack, names = set(), [root], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(mine.get(type(node), node.name()))
        stack.extend(child for child, _ in node.next_functions)
    return names

