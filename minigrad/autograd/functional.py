"""Derivatives of a whole function: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``, ``hvp``.

Take a function ``f`` from inputs ``x`` (n numbers in all) to outputs ``y`` (m numbers). Its
Jacobian ``J`` is the m x n matrix of every ``dy_i / dx_j``. Backward never builds ``J``: one
pass computes one product with it. Each function here is such a product, or a few of them,
made from ``minigrad.autograd.grad``:

- ``vjp(f, x, v)`` is ``v^T J`` (shaped as the inputs) for a ``v`` shaped as the outputs. That is
  what backward does: ``grad(y, x, grad_outputs=v)``.
- ``jvp(f, x, u)`` is ``J u`` (shaped as the outputs) for a ``u`` shaped as the inputs. Backward
  cannot give it directly; the *double-backward trick* can. ``g = grad(y, x, w,
  create_graph=True)`` for a dummy ``w`` is ``J^T w``, recorded in the graph: a linear function of
  ``w`` whose Jacobian is ``J^T``. So its own vjp with ``u``, ``grad(g, w, u)``, is
  ``u^T J^T = (J u)^T``. The value of ``w`` never matters.
- ``jacobian(f, x)`` is all of ``J``, one vjp per output element with a one-hot ``v``: row ``i``
  is ``grad(y.reshape(-1)[i], x)``.
- ``hessian(f, x)``, for an ``f`` with a single output element, is the Jacobian of its gradient:
  the gradient is taken with ``create_graph=True``, so that it can be differentiated again.
- ``vhp(f, x, v)`` is ``v^T H``: the vjp of that gradient. ``hvp(f, x, v)`` is ``H v``: the
  double-backward trick applied to that gradient. H is symmetric when f is twice continuously
  differentiable, so the two then agree, and ``vhp`` costs one backward pass less.

The arguments are PyTorch's. ``inputs`` and ``v`` are a Tensor or a tuple of Tensors, and the
results nest the same way: ``jacobian(f, x)[i][j]`` belongs to output ``i`` and input ``j`` when
both are tuples. ``create_graph=True`` keeps the results differentiable (for a higher
derivative); otherwise they come back detached. An input that the outputs do not depend on gets
zeros, the mathematical answer, or an error with ``strict=True``.

Where minigrad differs from PyTorch: it has no forward-mode AD, so ``strategy="forward-mode"``
(``outer_jacobian_strategy`` for ``hessian``) raises NotImplementedError even with
``vectorize=True`` (where PyTorch computes it). It has no vmap, so ``vectorize=True`` computes
the same values row by row, as ``vectorize=False`` does; PyTorch's refusal of ``vectorize=True``
with ``strict=True`` is kept. (A difference this leaves with ``create_graph=True``: a block
requires grad when its own rows do, where PyTorch's one batched pass per input marks all the
blocks of an input alike.)
"""
from __future__ import annotations

from typing import Any, Callable, NoReturn

from minigrad.autograd import graph as _graph  # (_graph.Tensor: the registered tensor class)
from minigrad.autograd.differentiate import grad
from minigrad.autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

# A Tensor, or a tuple of Tensors. (autograd imports no tensor module: it knows the class as _graph.Tensor.)
Tensors = Any


def vjp(func: Callable, inputs: Tensors, v: Tensors = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), v^T J)``: one backward pass. ``v`` is shaped as the outputs; it may be
    left out when ``func`` returns a single element."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), _OUTPUTS, "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _vector(v, outputs, is_outputs_tuple, create_graph, "vjp")
    # create_graph records even under no_grad: grad casts v to each output's dtype before its engine runs.
    with set_grad_enabled(create_graph or is_grad_enabled()):
        result = _zeros_for_none(_grad(outputs, inputs, v, create_graph), inputs, strict, create_graph, "back")
    return (_returned(outputs, create_graph, is_outputs_tuple),
            _returned(result, create_graph, is_inputs_tuple))


def jvp(func: Callable, inputs: Tensors, v: Tensors = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), J v)`` by the double-backward trick (two backward passes). ``v`` is
    shaped as the inputs; it may be left out when the input is a single element."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _vector(v, inputs, is_inputs_tuple, create_graph, "jvp")
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), _OUTPUTS, "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # w^T J is linear in w, so any finite w will do: zeros.
        w = tuple(out.new_zeros(out.shape, requires_grad=True) for out in outputs)
        w_t_jacobian = _grad(outputs, inputs, w, create_graph=True)
        _check_requires_grad(w_t_jacobian, "grad_inputs", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        result = _grad(w_t_jacobian, w, v, create_graph)
        result = _zeros_for_none(result, outputs, strict, create_graph, "back_trick")
    return (_returned(outputs, create_graph, is_outputs_tuple),
            _returned(result, create_graph, is_outputs_tuple))


def jacobian(func: Callable, inputs: Tensors, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Tensors:
    """The Jacobian, row by row: one backward pass per output element.

    ``J[i][j]`` has the shape of output ``i`` followed by that of input ``j`` (a single Tensor
    when neither is a tuple, a tuple when one is). ``vectorize=True`` gives the same result.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has more '
            'outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        _refuse_forward_mode(inputs, create_graph, strict)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), _OUTPUTS, "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError(
                "minigrad.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                "together. Please either set `strict=False` or `vectorize=False`.")
        jacobian = tuple(_jacobian_of_output(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
    return _returned(jacobian, create_graph, is_outputs_tuple, is_inputs_tuple)


def hessian(func: Callable, inputs: Tensors, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Tensors:
    """The Hessian of a function with one output element: the Jacobian of its gradient.

    ``H[i][j]`` has the shape of input ``i`` followed by that of input ``j`` (a single Tensor
    for a single input).
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        return _single_element(func(*inp), strict, "hessian").squeeze()

    def gradient(*inp):
        gradients = jacobian(scalar_func, inp, create_graph=True)  # a tuple, as inp is one
        _check_requires_grad(gradients, "jacobian", strict)
        return gradients

    hessian = jacobian(gradient, inputs, create_graph, strict, vectorize, outer_jacobian_strategy)
    return _unpacked(hessian, is_inputs_tuple, is_inputs_tuple)


def vhp(func: Callable, inputs: Tensors, v: Tensors = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), v^T H)`` for a function with one output element: the vjp of its
    gradient. ``v`` is shaped as the inputs."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _vector(v, inputs, is_inputs_tuple, create_graph, "vhp")
        output = _single_element(func(*inputs), strict, "vhp")
        gradient = _grad((output,), inputs, None, create_graph=True)
        _check_requires_grad(gradient, "jacobian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        result = _zeros_for_none(_grad(gradient, inputs, v, create_graph), inputs, strict, create_graph, "double_back")
    return _returned((output,), create_graph, False), _returned(result, create_graph, is_inputs_tuple)


def hvp(func: Callable, inputs: Tensors, v: Tensors = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(*inputs), H v)`` for a function with one output element: the double-backward
    trick on its gradient. ``v`` is shaped as the inputs. ``vhp`` is cheaper when H is symmetric."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _vector(v, inputs, is_inputs_tuple, create_graph, "hvp")
        output = _single_element(func(*inputs), strict, "hvp")
        gradient = _grad((output,), inputs, None, create_graph=True)
        _check_requires_grad(gradient, "jacobian", strict)
        w = tuple(inp.new_zeros(inp.shape, requires_grad=True) for inp in inputs)
        w_t_hessian = _grad(gradient, inputs, w, create_graph=True)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        result = _grad(w_t_hessian, w, v, create_graph)
        result = _zeros_for_none(result, inputs, strict, create_graph, "double_back_trick")
    return _returned((output,), create_graph, False), _returned(result, create_graph, is_inputs_tuple)


# ---- The steps the six share ----

_OUTPUTS = "outputs of the user-provided function"


def _as_tuple(value, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """(was it a tuple, the tensors as a tuple): refuses anything else, as PyTorch does (a list too)."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, t in enumerate(values):
        if not isinstance(t, _graph.Tensor):
            which = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                            f"but {which} has type {type(t)}.")
    return is_tuple, values


def _fresh(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for the arguments, so that ``grad`` tells them apart from the same tensors
    captured by ``func`` (pytorch#32576). They stay attached to the caller's graph only when a
    differentiable result is asked for; otherwise they are detached leaves."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in tensors)


def _vector(v, like: tuple, is_like_tuple: bool, create_graph: bool, fn_name: str) -> tuple | None:
    """``v`` as a tuple shaped as ``like`` (the outputs for vjp, the inputs for the others). None
    stands for a single 1, so only a single-element ``like`` may leave it out."""
    if v is None:
        if len(like) != 1 or like[0].nelement() != 1:
            what = ("user-provided function returns a single Tensor" if fn_name == "vjp"
                    else "input to the user-provided function is a single Tensor")
            raise RuntimeError(f"The vector v can only be None if the {what} with a single element.")
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _fresh(v, create_graph, need_graph=False)
    if len(v) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}."
                           if is_like_tuple else "The given v should contain a single Tensor.")
    for i, (v_i, like_i) in enumerate(zip(v, like)):
        if v_i.size() != like_i.size():
            entry = f"Entry {i} in " if is_like_tuple else ""
            raise RuntimeError(f"{entry}v has invalid size: should be {like_i.size()} but got {v_i.size()}.")
    return v


def _single_element(output, strict: bool, fn_name: str):
    """The one tensor ``func`` of hessian, vhp and hvp must return, holding a single element."""
    is_tuple, outputs = _as_tuple(output, _OUTPUTS, fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if output.nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return output


def _grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None, create_graph: bool,
          retain_graph: bool | None = None) -> tuple:
    """``autograd.grad`` that skips the outputs without history (None, or not requiring grad)
    instead of refusing them, and gives None for an input that no output reaches."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    kept = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    outputs, grad_outputs = zip(*kept)
    return grad(outputs, inputs, grad_outputs, retain_graph=retain_graph, create_graph=create_graph,
                allow_unused=True)


def _jacobian_of_output(i: int, out, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """One block per input: output ``i`` against each input, filled one row (output element) at a time."""
    blocks = [inp.new_zeros((out.nelement(), *inp.shape)) for inp in inputs]
    flat = out.reshape(-1)
    for row in range(out.nelement()):
        row_grads = _grad((flat[row],), inputs, None, create_graph, retain_graph=True)
        for j, g in enumerate(row_grads):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. "
                                       "This is not allowed in strict mode.")
                continue  # the row stays zeros
            if strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {j}. "
                                   "This is not allowed in strict mode when create_graph=True.")
            blocks[j][row] = g
    return tuple(block.view(*out.shape, *inp.shape) for block, inp in zip(blocks, inputs))


def _returned(result: tuple, create_graph: bool, is_tuple: bool, is_inner_tuple: bool = True):
    """``_unpacked``, and detached unless ``create_graph`` asked for history."""
    if not create_graph:
        result = tuple(tuple(t.detach() for t in r) if isinstance(r, tuple) else r.detach() for r in result)
    return _unpacked(result, is_tuple, is_inner_tuple)


def _unpacked(result: tuple, is_tuple: bool, is_inner_tuple: bool = True):
    """Undo ``_as_tuple``: a lone tensor back where the caller gave one (``is_inner_tuple``: at
    the second level of a Jacobian, the inputs')."""
    if not is_inner_tuple:
        result = tuple(r[0] for r in result)
    return result if is_tuple else result[0]


def _refuse_forward_mode(inputs, create_graph: bool, strict: bool) -> NoReturn:
    """minigrad has no forward-mode AD. PyTorch's own refusals come first, in its order, so that
    a call PyTorch refuses fails with the same exception type."""
    if not create_graph:
        if strict:
            raise RuntimeError(
                'minigrad.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not supported '
                'together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
        _as_tuple(inputs, "inputs", "jacobian")
    raise NotImplementedError(
        'minigrad has no forward-mode AD, so jacobian(strategy="forward-mode") and '
        'hessian(outer_jacobian_strategy="forward-mode") are not supported: use "reverse-mode" (the default), '
        "which gives the same result with backward passes.")


_NOT_REQUIRING_GRAD = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be "
               "computed in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect "
                "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                "would be violated by a linear function for example).",
}


def _check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    """With ``strict``, refuse a tensor (an output, or a first derivative) that does not depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_NOT_REQUIRING_GRAD[kind].format(i=i))


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in "
            "strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _zeros_for_none(grads: tuple, like: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros (shaped as ``like``) for a None gradient, the mathematical answer; with ``strict``, an
    error instead, and also for a result that cannot carry the graph ``create_graph`` asked for."""
    result = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = like[i].new_zeros(like[i].shape)
        elif strict and create_graph and not g.requires_grad:
            which = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(f"The {which} of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode when create_graph=True.")
        result.append(g)
    return tuple(result)
