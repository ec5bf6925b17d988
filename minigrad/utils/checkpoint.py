"""``checkpoint``: keep fewer activations, recompute them in backward.

    from minigrad.utils.checkpoint import checkpoint

    h = checkpoint(block, x, use_reentrant=False)   # block's activations are not kept

Backward needs the tensors each node saved (``save_for_backward``); for a
deep network they are most of its memory. ``checkpoint`` runs ``block`` so
that it saves nothing but its inputs, and when backward first asks for one
of the block's saved tensors it runs ``block`` again on those inputs and
hands out what that second run saved. Memory for the block's activations
drops from all of them to the inputs; the price is one more forward of the
block per backward.

``use_reentrant=False`` (the variant PyTorch recommends) is built on
``saved_tensors_hooks``: in forward, the pack hook keeps an empty *holder*
per saved tensor; on the first unpack in a backward pass, the block is
recomputed under a second pack hook that fills every holder; each holder
gives its tensor once and lets it go. ``use_reentrant=True`` (PyTorch's
older default) wraps the block in one Function that runs it without
recording and, in its backward, reruns it with recording and calls
``backward`` inside the backward pass (so it cannot serve ``autograd.grad``).

With ``preserve_rng_state=True`` (the default) the recomputation draws the
same random numbers as the forward (dropout masks match), and the
generator's state afterwards is as if it had not run.

Only what the block's nodes save with ``ctx.save_for_backward`` is dropped
and recomputed; a value a node keeps as a plain ``ctx`` attribute (an index
array, say) stays in memory, as it would without checkpoint.
"""
from __future__ import annotations

import itertools
import warnings
import weakref
from typing import Any, Callable

import numpy as np

from minigrad import random
from minigrad.autograd import engine
from minigrad.autograd.differentiate import backward as _backward
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import enable_grad, no_grad
from minigrad.autograd.graph import saved_tensors_hooks
from minigrad._tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]


class CheckpointError(RuntimeError):
    """The recomputation did not save what the forward saved (so its gradients would be wrong)."""


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None, preserve_rng_state: bool = True, **kwargs) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its activations; recompute them in backward.

    Pass ``use_reentrant=False``. Leaving it out warns, as in PyTorch, and
    uses the reentrant variant, PyTorch's default.
    """
    if use_reentrant is None:
        warnings.warn(
            "checkpoint: the use_reentrant parameter should be passed explicitly: use_reentrant=False is "
            "recommended; use_reentrant=True keeps the current default (the reentrant variant).",
            stacklevel=2,
        )
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    frame = _Frame(function, args, kwargs, preserve_rng_state)
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments: int, input: Tensor, use_reentrant: bool | None = None, **kwargs) -> Tensor:
    """Run ``functions`` (a list or an ``nn.Sequential``) one after another, in ``segments`` chunks;
    every chunk but the last is checkpointed, so only the chunks' inputs are kept."""
    if use_reentrant is None:
        warnings.warn(
            "checkpoint_sequential: the use_reentrant parameter should be passed explicitly: use_reentrant=False "
            "is recommended; use_reentrant=True keeps the current default (the reentrant variant).",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)

    def run(chunk: list) -> Callable:
        def forward(h):
            for fn in chunk:
                h = fn(h)
            return h

        return forward

    size = len(functions) // segments
    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run(functions[start:end]), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(functions[end:])(input)


class _Holder:
    """Stands in for one saved tensor; filled by each backward pass's recomputation."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self) -> None:
        self.handles: dict[int, Tensor | None] = {}  # backward pass id -> its recomputed tensor (None once used)


_unpack_outside_backward_ids = itertools.count(-2, -1)


class _Frame:
    """One non-reentrant checkpoint call: its inputs, and a holder per tensor its forward saved."""

    def __init__(self, function: Callable, args: tuple, kwargs: dict, preserve_rng_state: bool) -> None:
        self.function, self.kwargs = function, kwargs
        self.rng_state = random.generator().bit_generator.state if preserve_rng_state else None
        self.holders: list[weakref.ref] = []
        self.metadata: list[tuple] = []  # (shape, dtype) of each tensor the forward saved
        self.recomputed_passes: set[int] = set()
        # The inputs are saved like any saved tensor: version-checked when read, and
        # seen once by the pack hooks active around the checkpoint call.
        self.non_tensor_args = [None if isinstance(a, Tensor) else a for a in args]
        self.input_saver = _SaveInputs.apply(Tensor._wrap(np.empty(0, np.float32)).requires_grad_(), *args)

    def pack(self, tensor: Tensor) -> _Holder:
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        self.metadata.append((tuple(tensor.shape), tensor.dtype))
        return holder

    def unpack(self, holder: _Holder) -> Tensor:
        pass_id = engine.current_graph_task_id()
        if pass_id == -1:  # read outside backward (ctx.saved_tensors by hand): a pass of its own
            pass_id = next(_unpack_outside_backward_ids)
        if pass_id not in self.recomputed_passes:
            self.recompute(pass_id)
            self.recomputed_passes.add(pass_id)
        tensor = holder.handles.get(pass_id)
        if tensor is None:
            raise CheckpointError(
                "checkpoint: Unpack is being triggered for a tensor that was already unpacked once. "
                "If you are calling ctx.saved_tensors in backward, make sure to do so only once."
            )
        holder.handles[pass_id] = None  # hand it out once, then let it go
        return tensor

    def recompute(self, pass_id: int) -> None:
        """Run the function again on the saved inputs; what it saves fills this pass's holders."""
        saved = iter(self.input_saver.grad_fn.saved_tensors)
        args = [next(saved) if a is None else a for a in self.non_tensor_args]
        count = 0

        def pack_recomputed(tensor: Tensor) -> None:
            nonlocal count
            if count < len(self.holders):
                holder = self.holders[count]()
                if holder is not None:
                    if (tuple(tensor.shape), tensor.dtype) != self.metadata[count]:
                        raise CheckpointError(
                            "checkpoint: Recomputed values for the following tensors have different "
                            f"metadata than during the forward pass.\ntensor at position {count}:\n"
                            f"saved metadata: {self.metadata[count]}\nrecomputed metadata: "
                            f"{(tuple(tensor.shape), tensor.dtype)}\nThe checkpointed function must compute the "
                            "same shapes and dtypes when it runs again: make it depend only on its inputs.\n"
                        )
                    holder.handles[pass_id] = tensor.detach()
            count += 1

        with _rng_state(self.rng_state), saved_tensors_hooks(pack_recomputed, lambda packed: packed), enable_grad():
            self.function(*args, **self.kwargs)
        if count != len(self.holders):
            raise CheckpointError(
                "checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {len(self.holders)}\n"
                f"Number of tensors saved during recomputation: {count}.\nThe checkpointed function must take "
                "the same path when it runs again: make its control flow depend only on its inputs.\n"
            )


class _SaveInputs(Function):
    """A node that only keeps the checkpoint's tensor inputs (the dummy first input makes sure it is recorded)."""

    @staticmethod
    def forward(ctx, dummy: Tensor, *args):
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return Tensor._wrap(np.empty(0, np.float32))

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("checkpoint's input-saving node is never differentiated")


class _rng_state:
    """Run a block from the generator state ``state`` (if given), then put the generator back as it was."""

    def __init__(self, state: dict | None) -> None:
        self.state = state

    def __enter__(self) -> None:
        if self.state is not None:
            self.outer = random.generator().bit_generator.state
            random.generator().bit_generator.state = self.state

    def __exit__(self, *exc) -> None:
        if self.state is not None:
            random.generator().bit_generator.state = self.outer


class CheckpointFunction(Function):
    """The reentrant variant: one node for the whole block, which reruns it and calls backward inside backward."""

    @staticmethod
    def forward(ctx, run_function: Callable, preserve_rng_state: bool, *args):
        if not any(a.requires_grad for a in args if isinstance(a, Tensor)):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        ctx.run_function = run_function
        ctx.rng_state = random.generator().bit_generator.state if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        task = engine._running[0]
        if task is not None and not task.accumulates:
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set "
                "use_reentrant=False, or call .backward() without passing the `inputs` argument."
            )
        saved = iter(ctx.saved_tensors)
        inputs = [next(saved) if a is None else a for a in ctx.inputs]
        detached = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in inputs]
        with _rng_state(ctx.rng_state), enable_grad():
            outputs = ctx.run_function(*detached)
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *[a.grad if isinstance(a, Tensor) else None for a in detached])
