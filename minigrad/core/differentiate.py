"""``backward`` and ``grad``: check the arguments, seed the gradients, run the engine."""
from __future__ import annotations

import numpy as np

from minigrad.core import graph as _graph  # (_graph.Tensor: the registered tensor class)
from minigrad.core.engine import run_backward


def _as_tuple(x) -> tuple:
    if isinstance(x, _graph.Tensor):
        return (x,)
    return tuple(x)


def _ones(data: np.ndarray):
    """A tensor of ones of ``data``'s shape and dtype: d output / d output, the seed of ``loss.backward()``."""
    ones = np.empty(data.shape, data.dtype)
    ones.fill(1)  # (np.ones, without its Python wrapper: every loss.backward() makes one)
    return _graph.Tensor._wrap(ones)


def _seed(outputs: tuple, grad_outputs, argument: str) -> tuple[list, list]:
    """The root edges and their initial gradients (ones for a scalar output); ``argument`` names
    ``grad_outputs`` in errors (``gradient`` for backward, ``grad_outputs`` for grad)."""
    Tensor = _graph.Tensor
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    for g in grad_outputs:
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"argument '{argument}': gradients can be either Tensors or None, but got {type(g).__name__}: "
                            "pass a tensor of the output's shape (minigrad.ones_like(output) for d output / d output)")
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"grad can be implicitly created only for scalar outputs: got {len(grad_outputs)} "
            f"gradients for {len(outputs)} outputs"
        )
    edges, grads = [], []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not out._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn. "
                "Did you create it under no_grad(), detach it, or forget requires_grad=True on its inputs?"
            )
        if g is None:
            if out._data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs, but output {i} has shape "
                    f"{list(out.shape)}: call .sum() first, or pass gradient= a tensor of that shape"
                )
            g = _ones(out._data)
        elif g._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a shape of {out.shape}."
            )
        elif g._data.dtype != out._data.dtype:
            g = g.to(out.dtype)  # as PyTorch's engine: a gradient takes the dtype of what it is the gradient of
        edges.append(out._edge())
        grads.append(g)
    return edges, grads


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs=None,
) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves."""
    tensors = _as_tuple(tensors)
    edges, grads = _seed(tensors, grad_tensors, "gradient")
    retain_graph = create_graph if retain_graph is None else retain_graph
    if inputs is None:
        run_backward(edges, grads, retain_graph, create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty: pass None to accumulate into every leaf.")
    for t in inputs:
        t.retain_grad()  # as PyTorch: how a non-leaf input gets its .grad (on a leaf it does nothing)
    run_backward(edges, grads, retain_graph, create_graph, inputs=[t._edge() for t in inputs])


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
) -> tuple:
    """Return d(outputs)/d(inputs) without touching any ``.grad``.

    With ``materialize_grads=True`` an input the outputs do not depend on gets
    zeros instead of None (handy for higher-order derivatives); it implies
    ``allow_unused=True``.
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty: name the tensors to differentiate with respect to.")
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    edges, grads = _seed(outputs, grad_outputs, "grad_outputs")
    retain_graph = create_graph if retain_graph is None else retain_graph
    results = run_backward(edges, grads, retain_graph, create_graph, [t._edge() for t in inputs], accumulate=False)
    if not allow_unused and any(g is None for g in results):
        raise RuntimeError(
            "One of the differentiated Tensors appears to not have been used in the graph. "
            "Set allow_unused=True if this is the desired behavior."
        )
    if materialize_grads:
        Tensor = _graph.Tensor
        results = [Tensor._wrap(np.zeros_like(t._data)).requires_grad_(create_graph) if g is None else g
                   for g, t in zip(results, inputs)]
    return tuple(results)
