"""minigrad's core: the whole of autograd, closed and small enough to read in one sitting.

The order to read it in (each file imports only files above it in this list):

1. ``grad_mode.py``: the switch that says whether operations are recorded.
2. ``extension.py``: where the layers above plug in: the op table (``tensor_method``),
   views, anomaly mode, the ready queue, saved-tensor hooks.
3. ``graph.py``: nodes, ``AccumulateGrad`` for leaves, saved tensors and their version check.
4. ``broadcast.py``: summing a gradient back to an input's shape.
5. ``function_rules.py``: PyTorch's rules for a Function's unusual calls (outputs without
   gradients, inputs changed in place or returned as they are, keyword arguments).
6. ``function.py``: ``Function`` and its ctx, and how one call becomes one node.
7. ``builtin.py``: the short way a built-in op's plain call (``x * y``) becomes the same node.
8. ``instrumented.py``: how one node runs the long way in backward (its hooks, a pass
   that computes only some gradients, anomaly mode).
9. ``engine.py``: the topological order and the backward pass.
10. ``differentiate.py``: ``backward`` and ``grad``: check, seed, run the engine.
11. ``tensor.py``: the Tensor: a NumPy array plus its autograd state.
12. ``hooks.py``: tensor hooks and ``retain_grad``.
13. ``ops.py``: the primitive ops, each derivative one row of one table.

A first reading follows 1, 3, 4, 6, 9, 10, 11 and 13: the learner's reading path
(``tests/core/test_size_and_imports.py`` keeps it under 1,000 code lines and the
whole core under 1,500). It imports nothing of minigrad outside this folder:
``import minigrad.core`` alone gives a tensor that does ``+ * @ .sum() .exp()
.backward()``; ``import minigrad`` adds the library's layers (``minigrad/layers.py``).
"""
from minigrad.core.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.differentiate import backward, grad
from minigrad.core.tensor import Size, Tensor, tensor
from minigrad.core import hooks, ops  # noqa: F401  (give Tensor its hooks and its primitive ops)

__all__ = [
    "Function", "FunctionCtx", "Size", "Tensor", "backward", "enable_grad", "grad", "is_grad_enabled",
    "no_grad", "set_grad_enabled", "tensor",
]
