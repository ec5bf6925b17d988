"""gradcheck: compare backward's gradients with finite differences.

The numerical Jacobian perturbs one input element at a time by ±eps and
measures how every output moves: ``(f(x + eps) - f(x - eps)) / (2 eps)``.
The analytical Jacobian asks backward for one output element at a time
(a one-hot ``grad_output``). They must agree within ``atol + rtol * |numerical|``.
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
        flat = x._data.reshape(-1)  # a view: writing to it perturbs x in place
        for k in range(flat.size):
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


def gradcheck(
    fn: Callable,
    inputs,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """True if backward agrees with finite differences for every (input, output) pair."""
    Tensor = _graph.Tensor

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
    numerical = numerical_jacobian(fn, inputs, eps)
    analytical = analytical_jacobian(fn, inputs)
    for i, (num_i, ana_i) in enumerate(zip(numerical, analytical)):
        for j, (n, a) in enumerate(zip(num_i, ana_i)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n"
                )
    return True


def gradgradcheck(
    fn: Callable,
    inputs,
    grad_outputs=None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """gradcheck of the backward pass itself: checks second derivatives.

    It differentiates ``v -> d(fn)/d(inputs) · v`` (a function built with
    ``create_graph=True``) with respect to the inputs and to ``v``.
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

    return gradcheck(first_derivative, inputs + grad_outputs, eps, atol, rtol, raise_exception)
