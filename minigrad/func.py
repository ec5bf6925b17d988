"""``minigrad.func``: PyTorch's function transforms that reverse-mode autograd can give.

A transform takes a function and returns another: ``grad(f)`` is the function that computes
f's gradient. They are built on ``autograd.grad``, so they compose (``grad(grad(f))`` is a
second derivative) and work on any function of tensors, a model included: ``functional_call``
makes a model a function of its weights.

- ``functional_call(model, params, x)``: the model with other weights (the module is unchanged).
- ``grad(f)(x)``, ``grad_and_value(f)(x)``: the gradient of a function with one output element.
- ``vjp(f, x)``: f's value and a function computing vector-Jacobian products.
- ``jacrev(f)(x)``, ``hessian(f)(x)``: whole Jacobians and Hessians.
- ``vmap(f)(xs)``: f mapped over a batch dimension (per-sample gradients, ensembles).
- ``stack_module_state(models)``: the weights of several models stacked, for ``vmap``.

Where minigrad differs from PyTorch: PyTorch's ``vmap`` runs f once on batched tensors;
minigrad's runs f once per batch element and stacks the results. The values are the same for
a function of its inputs alone (no in-place change of captured tensors, no randomness unless
``randomness="different"``), it is just slower. No forward mode: ``jacfwd`` and ``jvp`` use
reverse mode (``jvp`` by the double-backward trick, as ``autograd.functional.jvp``).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from minigrad.autograd.differentiate import grad as _autograd_grad
from minigrad.autograd.grad_mode import enable_grad
from minigrad.functional_ops import stack
from minigrad.nn.utils.stateless import call_with
from minigrad._tensor import Tensor

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "stack_module_state",
           "vjp", "vmap"]


def functional_call(module, parameter_and_buffer_dicts, args: Any = None, kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the tensors of ``parameter_and_buffer_dicts`` (one dict, or
    several: names as in ``state_dict``) in place of its own parameters and buffers."""
    dicts = (parameter_and_buffer_dicts,) if isinstance(parameter_and_buffer_dicts, dict) else parameter_and_buffer_dicts
    tensors: dict = {}
    for d in dicts:
        for name, value in d.items():
            if name in tensors:
                raise ValueError(f"{name} appeared in multiple dictionaries; behavior of functional call is ambiguous")
            tensors[name] = value
    return call_with(module, tensors, args, kwargs, tie_weights=tie_weights, strict=strict)


def stack_module_state(models: Sequence) -> tuple[dict, dict]:
    """The parameters and buffers of models of one class, each stacked along a new first dim
    (new leaves: an optimizer can train them), for ``vmap`` over an ensemble."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if len({type(m) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named: list[dict]) -> dict:
        return {k: stack([n[k].detach() for n in named]).requires_grad_(named[0][k].requires_grad) for k in named[0]}

    return (stacked([dict(m.named_parameters()) for m in models]),
            stacked([dict(m.named_buffers()) for m in models]))


def _positions(argnums) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _leaves(tree) -> list:
    """The tensors of a nesting of dicts, tuples and lists (a "pytree"), in order."""
    if isinstance(tree, dict):
        return [t for v in tree.values() for t in _leaves(v)]
    if isinstance(tree, (tuple, list)):
        return [t for v in tree for t in _leaves(v)]
    return [tree] if isinstance(tree, Tensor) else []


def _rebuild(tree, leaves: Iterator):
    """``tree`` with each of its tensors replaced by the next of ``leaves``."""
    if isinstance(tree, dict):
        return {k: _rebuild(v, leaves) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuild(v, leaves) for v in tree)
    return next(leaves) if isinstance(tree, Tensor) else tree


def _reaches_other_leaves(tensors: list, fresh: set) -> bool:
    """Whether the graph of ``tensors`` reaches a leaf that requires grad other than those in ``fresh``
    (ids): then the results depend on something an outer differentiation may ask about."""
    stack_, seen = [t.grad_fn for t in tensors if t.grad_fn is not None], set()
    while stack_:
        node = stack_.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)
        if variable is not None and id(variable) not in fresh:
            return True
        stack_.extend(child for child, _ in node.next_functions)
    return False


def _grads(outputs: Sequence[Tensor], inputs: list, cotangents: Sequence | None = None) -> list:
    """d outputs / d inputs (recorded), zeros for an input nothing depends on: a function that is
    constant in its inputs (a linear function's gradient) has zero derivative, not an error."""
    cotangents = [None] * len(outputs) if cotangents is None else list(cotangents)
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return [t.new_zeros(t.shape) for t in inputs]
    return list(_autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=True,
                               create_graph=True, allow_unused=True, materialize_grads=True))


def _differentiable(args: tuple, positions: tuple) -> tuple[list, set]:
    """``args`` with the tensors at ``positions`` made inputs to differentiate with respect to, and the ids
    of the new leaves among them. A tensor that already requires grad (an outer ``grad``'s input)
    becomes a view of itself, so the result stays connected to the outer computation."""
    args, fresh = list(args), set()

    def differentiable(t: Tensor) -> Tensor:
        if t.requires_grad:
            return t.view_as(t)
        t = t.detach().requires_grad_()
        fresh.add(id(t))
        return t

    for i in positions:
        args[i] = _rebuild(args[i], iter([differentiable(t) for t in _leaves(args[i])]))
    return args, fresh


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` of ``func``: the gradient with respect to argument
    ``argnums`` (a tuple of them for a tuple; a dict of tensors, such as a model's parameters, gives
    a dict); with ``has_aux``, ``func`` returns ``(output, aux)`` and the value is that pair.

    The gradient is recorded (``create_graph``) so that ``grad(grad(f))`` works; it comes back
    detached when it depends on nothing an outer differentiation could ask about.
    """

    def wrapper(*args, **kwargs):
        positions = _positions(argnums)
        with enable_grad():
            args, fresh = _differentiable(args, positions)
            result = func(*args, **kwargs)
            output, aux = result if has_aux else (result, None)
            if not isinstance(output, Tensor) or output.numel() != 1:
                got = f"a Tensor with {output.numel()} elements" if isinstance(output, Tensor) else type(output).__name__
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got {got}")
            inputs = [t for i in positions for t in _leaves(args[i])]
            grads = _grads([output], inputs)
        if not _reaches_other_leaves([*grads, output, *_leaves(aux)], fresh):
            grads, output = [g.detach() for g in grads], output.detach()
            aux = _rebuild(aux, iter([t.detach() for t in _leaves(aux)]))
        grads = iter(grads)
        rebuilt = tuple(_rebuild(args[i], grads) for i in positions)
        gradient = rebuilt[0] if isinstance(argnums, int) else rebuilt
        return gradient, ((output, aux) if has_aux else output)

    return wrapper


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The gradient of ``func`` (one output element) as a function: ``grad(f)(x)`` is df/dx."""
    with_value = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        gradient, value = with_value(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(v)`` gives ``v^T J`` for each primal, as a tuple."""
    with enable_grad():
        primals, fresh = _differentiable(primals, tuple(range(len(primals))))
        result = func(*primals)
    output, aux = result if has_aux else (result, None)
    outputs = output if isinstance(output, tuple) else (output,)
    outer = _reaches_other_leaves(list(outputs), fresh)

    def vjp_fn(*cotangents):
        with enable_grad():
            grads = _grads(outputs, list(primals), cotangents)
        return tuple(grads) if outer or _reaches_other_leaves(list(cotangents), set()) else \
            tuple(g.detach() for g in grads)

    if not outer:
        output = tuple(o.detach() for o in outputs) if isinstance(output, tuple) else output.detach()
    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


def jvp(func: Callable, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)``, by the double-backward trick (``autograd/functional.py``
    explains it): minigrad has no forward mode."""
    with enable_grad():
        primals, fresh = _differentiable(tuple(primals), tuple(range(len(primals))))
        result = func(*primals)
        output, aux = result if has_aux else (result, None)
        outputs = output if isinstance(output, tuple) else (output,)
        dummies = [o.detach().new_zeros(o.shape).requires_grad_() for o in outputs]
        fresh.update(id(d) for d in dummies)
        transposed = _grads(outputs, list(primals), dummies)  # J^T w: linear in the dummy w
        products = _grads(transposed, dummies, tangents)  # its vjp with the tangents: J u
    if not _reaches_other_leaves([*outputs, *products, *_leaves(aux)], fresh):
        outputs, products = [o.detach() for o in outputs], [p.detach() for p in products]
        aux = _rebuild(aux, iter([t.detach() for t in _leaves(aux)]))
    single = not isinstance(output, tuple)
    value, product = (outputs[0], products[0]) if single else (tuple(outputs), tuple(products))
    return (value, product, aux) if has_aux else (value, product)


def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False) -> Callable:
    """The Jacobian of ``func`` as a function: ``jacrev(f)(x)`` has shape ``f(x).shape + x.shape``."""

    def wrapper(*args):
        positions = _positions(argnums)
        with enable_grad():
            args, fresh = _differentiable(args, positions)
            result = func(*args)
            output, aux = result if has_aux else (result, None)
            flat = output.reshape(-1)
            rows = [_grads([flat[k]], [args[i] for i in positions]) for k in range(flat.numel())]
        if not _reaches_other_leaves([g for row in rows for g in row] + _leaves(aux), fresh):
            rows = [[g.detach() for g in row] for row in rows]
            aux = _rebuild(aux, iter([t.detach() for t in _leaves(aux)]))
        blocks = []
        for j, i in enumerate(positions):
            block = stack([row[j] for row in rows]) if rows else args[i].new_zeros((0, *args[i].shape))
            blocks.append(block.reshape(*output.shape, *args[i].shape))
        jacobian = blocks[0] if isinstance(argnums, int) else tuple(blocks)
        return (jacobian, aux) if has_aux else jacobian

    return wrapper


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The same Jacobian as ``jacrev`` (minigrad has no forward mode, so it is computed in reverse)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """The Hessian of ``func`` (one output element) as a function: the Jacobian of its gradient."""
    return jacrev(jacrev(func, argnums), argnums)


def vmap(func: Callable, in_dims: int | None | tuple = 0, out_dims: int | tuple = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its arguments (None: not mapped), the results
    stacked along ``out_dims``. minigrad calls ``func`` once per element (see the module docstring)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    def wrapper(*args):
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure "
                             f"of `inputs`. in_dims has structure {len(dims)} but inputs has structure {len(args)}.")
        sizes = set().union(*[_mapped_sizes(a, d) for a, d in zip(args, dims) if d is not None])
        if not sizes:
            raise ValueError("vmap(f, in_dims=..., ...)(<inputs>): at least one input must be mapped over "
                             "(got in_dims with no dimension to map over)")
        if len(sizes) > 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sorted(sizes)} for the mapped dimension")
        results = [func(*[_select(a, d, k) for a, d in zip(args, dims)]) for k in range(sizes.pop())]
        if isinstance(results[0], tuple) and isinstance(out_dims, tuple):
            return tuple(_stacked([r[j] for r in results], out_dims[j]) for j in range(len(results[0])))
        return _stacked(results, out_dims)

    return wrapper


def _mapped_sizes(arg, dim) -> set:
    """The sizes of dimension ``dim`` of the tensors in ``arg`` (a tensor, or dicts, tuples and lists of them)."""
    if isinstance(arg, dict):
        return set().union(*[_mapped_sizes(v, dim) for v in arg.values()])
    if isinstance(arg, (tuple, list)):
        return set().union(*[_mapped_sizes(v, dim) for v in arg])
    if not isinstance(arg, Tensor):
        raise ValueError(f"vmap(f, in_dims={dim}, ...)(<inputs>): Got in_dim={dim} for an input but the input is "
                         f"of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use None as the "
                         "respective in_dim")
    return {arg.shape[dim]}


def _select(arg, dim, k: int):
    """Element ``k`` of ``arg`` along ``dim`` (tensors inside dicts, tuples and lists too)."""
    if dim is None:
        return arg
    if isinstance(arg, dict):
        return {key: _select(v, dim, k) for key, v in arg.items()}
    if isinstance(arg, (tuple, list)):
        return type(arg)(_select(v, dim, k) for v in arg)
    return arg.select(dim, k)


def _stacked(results: list, dim: int):
    """The per-element results of ``vmap`` stacked along ``dim``, nesting of dicts and tuples kept."""
    first = results[0]
    if isinstance(first, dict):
        return {k: _stacked([r[k] for r in results], dim) for k in first}
    if isinstance(first, (tuple, list)):
        return type(first)(_stacked([r[j] for r in results], dim) for j in range(len(first)))
    if not isinstance(first, Tensor):
        raise ValueError(f"vmap(f, ...): f must only return Tensors, got type {type(first)}")
    return stack(results, dim=dim)
