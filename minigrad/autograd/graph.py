"""The recorded graph, as ``torch.autograd.graph``: the core's nodes and saved tensors
(``minigrad/core/graph.py``), plus the two ways in from outside that PyTorch offers:
hooks on a node (``Node.register_prehook``, ``register_hook``) and
``saved_tensors_hooks``, which decide what a node keeps of each tensor it saves
(the core's ``Extensions.saved_tensor_hooks`` stack).
"""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from minigrad.core.extension import Extensions
from minigrad.core.grad_mode import _GradMode
from minigrad.core.graph import (  # noqa: F401
    _ACCUMULATE_GRAD_SEQUENCE_NR, AccumulateGrad, Node, SavedTensor, register_tensor_type,
)
from minigrad.core.hooks import RemovableHandle, add_hook  # noqa: F401
from minigrad.core.tensor import Tensor


def increment_version(tensor) -> None:
    """Count an in-place change autograd cannot see (a write through ``tensor.numpy()``, say), so
    that a saved copy of the old values is refused in backward. Takes a tensor or an iterable of them."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._version_counter.value += 1


class saved_tensors_hooks:
    """Inside this block, every tensor saved for backward goes through ``pack_hook`` first.

    ``pack_hook(tensor)`` runs once, when a node saves the tensor (built-in ops and
    ``ctx.save_for_backward`` alike), and what it returns is kept instead of the
    tensor; ``unpack_hook(packed)`` runs at every read in backward and must give
    back a tensor with the same values. Each saved tensor keeps the pair that was
    active when it was saved; nested blocks: only the innermost pair applies.

    This is how you move saved activations elsewhere (to disk, compressed) or
    drop them and recompute (``minigrad.utils.checkpoint``). As in PyTorch, a
    tensor saved with hooks is not checked for in-place changes when unpacked:
    if ``pack_hook`` keeps the same memory (``t.detach()``), an in-place change
    after saving gives a silently wrong gradient.
    """

    def __init__(self, pack_hook: Callable[[object], object], unpack_hook: Callable[[object], object]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if Extensions.saved_tensor_hooks_disabled is not None:
            raise RuntimeError(Extensions.saved_tensor_hooks_disabled)
        Extensions.saved_tensor_hooks.append(self)

    def __exit__(self, *exc) -> None:
        Extensions.saved_tensor_hooks.pop()

    # -- what the core's SavedTensor calls (``Extensions.saved_tensor_hooks``) -------------------
    def pack(self, saved: SavedTensor, tensor) -> None:
        """Keep what ``pack_hook`` returns, plus where the tensor's gradient goes (its ``grad_fn``, or its
        leaf accumulator), so the unpacked tensor takes part in a ``create_graph`` backward like the original."""
        saved.tensor, saved.requires_grad, saved.unpack_hook = None, tensor._requires_grad, self
        if saved.output_nr is None:
            saved.edge = (tensor.grad_fn, tensor._output_nr, tensor._grad_accumulator)
        grad_was_enabled, _GradMode.enabled = _GradMode.enabled, False  # as PyTorch: nothing the hook does is recorded
        try:
            saved.packed = self.pack_hook(tensor)
        finally:
            _GradMode.enabled = grad_was_enabled
        if tensor._version_counter.value != saved.saved_version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
                "pack hook cannot be modified by in-place operations as this can lead to unexpected "
                "side-effects. Please open an issue if you need to perform in-place operations on the "
                "input to a pack hook."
            )

    def unpack(self, saved: SavedTensor, node: Node):
        """A new tensor around what ``unpack_hook`` returned, wired into the graph as the saved one was."""
        values = self.unpack_hook(saved.packed)
        if not isinstance(values, Tensor):
            raise TypeError(
                f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type {type(values).__name__}"
            )
        out = Tensor._wrap(values._data)
        out._version_counter = values._version_counter
        if saved.requires_grad:
            out._requires_grad = True
            if saved.output_nr is not None:
                out._grad_fn, out._output_nr = node, saved.output_nr
            else:
                out._grad_fn, out._output_nr, out._grad_accumulator = saved.edge
        return out


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in CPU memory, for code written for PyTorch (which moves them off the GPU).

    minigrad's tensors always live on the CPU, so the pack hook keeps each
    tensor's values as they are (``detach()``: the same memory, no copy) and
    ``pin_memory`` and ``device_type`` change nothing.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda tensor: tensor.detach(), lambda kept: kept)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Inside this block, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``.

    For code that cannot work with hooks (it would not see its saved tensors as saved).
    """
    if Extensions.saved_tensor_hooks:
        raise RuntimeError(error_message)
    previous, Extensions.saved_tensor_hooks_disabled = Extensions.saved_tensor_hooks_disabled, error_message
    try:
        yield
    finally:
        Extensions.saved_tensor_hooks_disabled = previous


