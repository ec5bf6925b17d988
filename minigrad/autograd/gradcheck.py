"""gradcheck: compare backward's gradients with finite differences.

The numerical Jacobian perturbs one input element at a time by ±eps and
measures how every output moves: ``(f(x + eps) - f(x - eps)) / (2 eps)``.
The analytical Jacobian asks backward for one output element at a time
(a one-hot ``grad_output``), twice: a backward that gives other values the second
time is "not reentrant". They must agree within ``atol + rtol * |numerical|``.
``fast_mode`` compares one number per (input, output) pair instead, ``v^T J u``
for random vectors u and v: one perturbation per input, one backward per output.
Use float64 inputs: in float32 the rounding error of f swamps eps.
"""
from __future__ import annotations

import warnings
from typing import Callable, Sequence

import numpy as np

from minigrad.autograd import graph as _graph  # (_graph.Tensor: the registered tensor class)
from minigrad.autograd.differentiate import _as_tuple, grad as autograd_grad
from minigrad.random import generator


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the gradients disagree."""


def _outputs(fn: Callable, inputs: tuple) -> tuple:
    return _as_tuple(fn(*inputs))


def numerical_jacobian(fn: Callable, inputs: tuple, eps: float = 1e-6) -> list[list[np.ndarray]]:
    """``J[i][j]``: d(output j) / d(input i) as a (numel(input), numel(output)) array."""
    Tensor = _graph.Tensor

    outputs = _outputs(fn, inputs)
    jacobians = []
    for x in inputs:
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        columns = [np.zeros((x.numel(), o.numel())) for o in outputs]
        flat = x._data.flat  # (C order; writing through it perturbs x in place, whatever x's strides)
        for k in range(x._data.size):
            original = flat[k]
            flat[k] = original + eps
            plus = [o._data.astype(np.float64).ravel() for o in _outputs(fn, inputs)]
            flat[k] = original - eps
            minus = [o._data.astype(np.float64).ravel() for o in _outputs(fn, inputs)]
            flat[k] = original
            for j in range(len(outputs)):
                columns[j][k] = (plus[j] - minus[j]) / (2 * eps)
        jacobians.append(columns)
    return jacobians


def analytical_jacobian(fn: Callable, inputs: tuple) -> list[list[np.ndarray]]:
    """The same Jacobians, one backward pass per output element."""
    Tensor = _graph.Tensor

    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    outputs = _outputs(fn, inputs)
    jacobians = [[np.zeros((x.numel(), o.numel())) for o in outputs] for x in diff_inputs]
    for j, out in enumerate(outputs):
        if not out.requires_grad:
            continue
        for k in range(out.numel()):
            one_hot = np.zeros(out.numel(), dtype=out._data.dtype)
            one_hot[k] = 1
            grads = autograd_grad(out, diff_inputs, Tensor._wrap(one_hot.reshape(out.shape)),
                                  retain_graph=True, allow_unused=True)
            for i, (x, g) in enumerate(zip(diff_inputs, grads)):
                if g is not None:
                    if g.shape != x.shape:
                        raise GradcheckError(f"Analytical gradient has incorrect size: {g.shape} for input {x.shape}")
                    jacobians[i][j][:, k] = g._data.ravel()
    return jacobians


FAILED_NONDET_MSG = (
    "\n\nNOTE: If your op relies on non-deterministic operations, this failure might be expected: "
    "call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument.\n"
)


def _analytical_twice(fn: Callable, inputs: tuple, nondet_tol: float, check_grad_dtypes: bool, vjp) -> list:
    """Compute the analytical quantities twice, as PyTorch does, and refuse a backward that gives other
    values the second time (beyond ``nondet_tol``): it is not reentrant."""
    first, second = vjp(), vjp()
    for i, (a, b) in enumerate(zip(first, second)):
        for x, y in zip(a, b):
            if x.size and np.abs(x - y).max() > nondet_tol:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                    "times gives different values, although analytical gradient matches numerical gradient."
                    f"The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG)
    return first


def _check_grad_dtypes(fn: Callable, inputs: tuple) -> None:
    """``check_grad_dtypes``: each input's gradient has the input's dtype."""
    Tensor = _graph.Tensor
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    for out in _outputs(fn, inputs):
        if out.requires_grad:
            grads = autograd_grad(out, diff_inputs, Tensor._wrap(np.ones(out.shape, dtype=out._data.dtype)),
                                  allow_unused=True)
            for x, g in zip(diff_inputs, grads):
                if g is not None and g.dtype != x.dtype:
                    raise GradcheckError("Gradient has dtype mismatch")


def _fast_check(fn: Callable, inputs: tuple, eps: float, atol: float, rtol: float, nondet_tol: float) -> None:
    """PyTorch's fast mode: instead of whole Jacobians J, compare v^T J u for a random unit vector u per
    input and a random v per output: finite differences along u against one backward with v."""
    Tensor = _graph.Tensor
    rng = np.random.default_rng(67280421310721)  # (a generator of its own: the user's draws do not move)
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    outputs = [o for o in _outputs(fn, inputs)]
    us = []
    for x in diff_inputs:
        u = rng.random(x.numel())
        us.append(u / np.linalg.norm(u) if u.size else u)
    vs = [rng.random(o.numel()) for o in outputs]
    numerical = []  # [input][output]: v^T (J u), J u by central differences along u
    for x, u in zip(diff_inputs, us):
        flat = x._data.flat
        original = flat.copy()
        flat[:] = original + eps * u
        plus = [o._data.astype(np.float64).ravel() for o in _outputs(fn, inputs)]
        flat[:] = original - eps * u
        minus = [o._data.astype(np.float64).ravel() for o in _outputs(fn, inputs)]
        flat[:] = original
        numerical.append([float(v @ ((p - m) / (2 * eps))) for v, p, m in zip(vs, plus, minus)])

    def vjps():
        found = []
        for out, v in zip(outputs, vs):
            if not out.requires_grad:
                found.append([np.zeros(x.numel()) for x in diff_inputs])
                continue
            grads = autograd_grad(out, diff_inputs, Tensor._wrap(v.reshape(out.shape).astype(out._data.dtype)),
                                  retain_graph=True, allow_unused=True)
            found.append([np.zeros(x.numel()) if g is None else g._data.astype(np.float64).ravel()
                          for x, g in zip(diff_inputs, grads)])
        return found
    analytical = _analytical_twice(fn, inputs, nondet_tol, False, vjps)
    for i, u in enumerate(us):
        for j, v in enumerate(vs):
            a, n = float(analytical[j][i] @ u), numerical[i][j]
            tolerance = atol * float(u.sum()) * float(v.sum())
            if not abs(a - n) <= tolerance + rtol * abs(n):
                raise GradcheckError(
                    f"Jacobian mismatch for output {j:d} with respect to input {i:d},\nnumerical:{n}\nanalytical:{a}\n"
                    "\nThe above quantities relating the numerical and analytical jacobians are computed \nin fast "
                    "mode (v^T J u for random u and v). Run gradcheck with fast_mode=False to see whole Jacobians.\n")


def gradcheck(
    fn: Callable,
    inputs,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    *,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """True if backward agrees with finite differences for every (input, output) pair.

    As PyTorch's: backward runs twice and must give the same values within ``nondet_tol`` (else
    "Backward is not reentrant"); ``fast_mode`` compares ``v^T J u`` for random vectors instead of
    whole Jacobians; ``check_grad_dtypes`` compares each gradient's dtype with its input's. Where
    minigrad has nothing more to check, the switches are accepted and change nothing:
    ``check_batched_grad`` (minigrad has no batched tensors: ``func.vmap`` is a loop, so batched
    gradients are the gradients checked here), ``check_undefined_grad`` (backward always gets
    gradients, zeros for an output that has none), ``masked`` (dense tensors only). Forward-mode AD
    is not part of minigrad: ``check_forward_ad`` and ``check_batched_forward_grad`` raise
    NotImplementedError.
    """
    Tensor = _graph.Tensor

    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_forward_ad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: minigrad has no forward-mode AD (the README's known differences), so "
                                  "check_forward_ad and check_batched_forward_grad cannot be checked: leave them False")
    inputs = _as_tuple(inputs)
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    if not diff_inputs:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of the them "
            "have requires_grad=True."
        )
    for i, x in enumerate(diff_inputs):
        if x._data.dtype != np.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision floating point.",
                UserWarning,
                stacklevel=2,
            )
    try:
        if check_grad_dtypes:
            _check_grad_dtypes(fn, inputs)
        if fast_mode:
            _fast_check(fn, inputs, eps, atol, rtol, nondet_tol)
            return True
        numerical = numerical_jacobian(fn, inputs, eps)
        analytical = _analytical_twice(fn, inputs, nondet_tol, check_grad_dtypes,
                                       lambda: analytical_jacobian(fn, inputs))
        for i, (num_i, ana_i) in enumerate(zip(numerical, analytical)):
            for j, (n, a) in enumerate(zip(num_i, ana_i)):
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    raise GradcheckError(
                        f"Jacobian mismatch for output {j} with respect to input {i},\n"
                        f"numerical:{n}\nanalytical:{a}\n"
                    )
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(
    fn: Callable,
    inputs,
    grad_outputs=None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    *,
    gen_non_contig_grad_outputs: bool = False,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """gradcheck of the backward pass itself: checks second derivatives.

    It differentiates ``v -> d(fn)/d(inputs) · v`` (a function built with
    ``create_graph=True``) with respect to the inputs and to ``v``. The keyword switches are
    gradcheck's (``gen_non_contig_grad_outputs`` changes nothing: minigrad's backward reads any layout).
    """
    Tensor = _graph.Tensor

    inputs = _as_tuple(inputs)
    outputs = _outputs(fn, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(
            Tensor._wrap(generator().standard_normal(o.shape).astype(o._data.dtype)).requires_grad_()
            for o in outputs
        )
    grad_outputs = _as_tuple(grad_outputs)
    n_inputs = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivative(*args):
        xs, vs = args[:n_inputs], args[n_inputs:]
        outs = _outputs(fn, xs)
        grads = autograd_grad(outs, [xs[i] for i in diff_idx], vs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    if check_fwd_over_rev:
        raise NotImplementedError("gradgradcheck: minigrad has no forward-mode AD, so check_fwd_over_rev cannot be "
                                  "checked: leave it False")
    if not check_rev_over_rev:
        return True
    return gradcheck(first_derivative, inputs + grad_outputs, eps, atol, rtol, raise_exception, nondet_tol=nondet_tol,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)
