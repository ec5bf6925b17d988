"""The recorded graph: nodes, the edges between them, and saved tensors.

Every operation on tensors that require grad creates one *node*. A node knows
where to send the gradient of each of its inputs: ``next_functions[i]`` is the
pair ``(node, output_nr)`` that produced input ``i``, or ``(None, 0)`` when that
input needs no gradient. Leaves that require grad end in an ``AccumulateGrad``
node, which adds the gradient it receives into ``leaf.grad``.

Nodes point only backwards (to their inputs' producers), never to the tensors
they produced, so when the last tensor of a graph goes out of scope the whole
graph is freed at once by reference counting, without waiting for the cycle
collector.

Two ways in from outside, as in ``torch.autograd.graph``: hooks on a node
(``register_prehook``, ``register_hook``), and ``saved_tensors_hooks``, which
decide what a node keeps of each tensor it saves.
"""
from __future__ import annotations

import contextlib
import itertools
import weakref
from collections import OrderedDict
from typing import Callable, Iterator, NoReturn

from minigrad.autograd.anomaly_mode import _AnomalyMode
from minigrad.autograd.grad_mode import _GradMode

# The tensor class that gradients and unpacked saved tensors are made of. ``minigrad/tensor.py``
# registers its ``Tensor`` here (``register_tensor_type``): autograd sits below the tensor and never
# imports it, as MiniTorch's engine knows only a Variable protocol.
Tensor: type = None  # type: ignore[assignment]


def register_tensor_type(cls: type) -> None:
    global Tensor
    Tensor = cls


_sequence_numbers = itertools.count()
# Leaf accumulators run as soon as they are ready: PyTorch gives them all the
# largest sequence number, and the engine runs the largest first.
_ACCUMULATE_GRAD_SEQUENCE_NR = (1 << 64) - 1


class Node:
    """One step of the backward pass.

    Its state is declared here once; everything starts empty, so recording a
    node costs only what it uses (hooks and metadata are made on first use).
    """

    __slots__ = (
        "next_functions",  # per input: (producer node, output_nr), or (None, 0) if it needs no gradient
        "_num_outputs",  # how many gradient slots the engine gives it
        "_sequence_nr",  # creation order: among ready nodes, the engine runs the newest first
        # None, or (output_nr, OrderedDict of tensor hooks) pairs: each tensor's dict, attached by its
        # first register_hook (Tensor.register_hook says why a tensor's hooks can span several nodes).
        "_pre_hooks",
        "_retains_grad",  # None, or output_nr -> weakref to the tensor
        # None, or (node pre-hooks, node post-hooks), made by the first register_prehook/register_hook:
        # the engine checks only this one attribute on nodes without hooks.
        "_node_hooks",
        "_metadata",  # None, or the dict behind ``metadata``
        "__weakref__",
    )
    # A custom Function's node, which PyTorch treats apart from its built-in ops' nodes: it runs
    # even when no gradient reached it, has an edge for every tensor input and a gradient slot for
    # every output, and its post-hooks see every gradient its backward returned.
    _custom = False
    # A built-in op whose PyTorch backward computes every input's gradient once one is needed (cat,
    # stack): its post-hooks see them all, those of inputs that need none or that a pass given
    # inputs does not visit too.
    _all_gradients = False

    def __init__(self) -> None:
        self.next_functions = ()
        self._num_outputs = 1
        self._sequence_nr = next(_sequence_numbers)
        self._pre_hooks = self._retains_grad = self._node_hooks = self._metadata = None

    def name(self) -> str:
        """The node's name; PyTorch's C++ nodes include their namespace (``torch::autograd::CopySlices``)."""
        return type(self).__dict__.get("_node_name") or type(self).__name__

    def register_prehook(self, fn: Callable) -> "RemovableHandle":
        """Call ``fn(grad_outputs)`` before this node runs; a returned tuple replaces ``grad_outputs``.

        It runs after the hooks of the tensors this node produced and after
        ``retain_grad`` has filled their ``.grad``, as in PyTorch's engine.
        """
        return add_hook(self._hook_dicts()[0], fn)

    def register_hook(self, fn: Callable) -> "RemovableHandle":
        """Call ``fn(grad_inputs, grad_outputs)`` after this node runs; a returned tuple replaces ``grad_inputs``."""
        return add_hook(self._hook_dicts()[1], fn)

    def _hook_dicts(self) -> tuple[OrderedDict, OrderedDict]:
        if self._node_hooks is None:
            self._node_hooks = (OrderedDict(), OrderedDict())
        return self._node_hooks

    @property
    def metadata(self) -> dict:
        """A dict for anything you want to attach to this node; anomaly mode keeps ``"traceback_"`` here."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def num_outputs(self) -> int:
        """How many tensors this node produced (a minigrad addition: PyTorch keeps it in C++)."""
        return self._num_outputs

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def _call_pre_hooks(self, grads: list) -> list:
        """Run the hooks of the tensors this node produced, on their full gradients
        (None for an output no gradient reached: PyTorch calls the hooks then too)."""
        if self._pre_hooks is None and self._retains_grad is None:
            return grads
        for output_nr, hooks in self._pre_hooks or ():
            for hook in hooks.values():
                replacement = hook(grads[output_nr])
                if replacement is not None:
                    grads[output_nr] = replacement
        for output_nr, tensor_ref in (self._retains_grad or {}).items():
            tensor = tensor_ref()
            if tensor is not None and grads[output_nr] is not None:
                tensor._accumulate_retained(grads[output_nr])
        return grads

    def __call__(self, *grad_outputs):
        """Run this node's backward: gradients of its outputs in, of its inputs out.

        As in PyTorch, ``y.grad_fn(g)`` is how you run one step of backward by hand.
        """
        return self._run_backward(list(grad_outputs))

    def _run_backward(self, grad_outputs: list) -> tuple:
        raise NotImplementedError

    def release_variables(self) -> None:
        """Free what was saved for backward (PyTorch's engine calls this after each node
        unless ``retain_graph``; it is not public in PyTorch's Python API)."""

    def _unpack_saved(self) -> None:
        """Read what was saved, for its checks only (freed, changed in place): a node that no
        gradient reaches computes nothing, but PyTorch's still unpacks its saved tensors."""


class AccumulateGrad(Node):
    """The node at the end of a leaf tensor: adds incoming gradients into ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        super().__init__()
        self._sequence_nr = _ACCUMULATE_GRAD_SEQUENCE_NR
        self.variable = variable
        # A leaf's tensor hooks live on the leaf; while it has some, this is not None, so the engine
        # calls _call_pre_hooks (Tensor.register_hook sets it on a leaf's live accumulator).
        self._pre_hooks = None if variable._hooks is None else ()

    def _call_pre_hooks(self, grads: list) -> list:
        hooks = self.variable._hooks
        if not hooks:
            return grads
        self._pre_hooks = ((0, hooks),)
        return super()._call_pre_hooks(grads)

    def _run_backward(self, grad_outputs: list) -> tuple:
        self.accumulate(grad_outputs[0])
        hooks = self.variable._post_accumulate_grad_hooks
        if hooks:
            for hook in tuple(hooks.values()):
                if hook(self.variable) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        return ()

    def accumulate(self, grad) -> None:
        variable = self.variable
        current = variable._grad  # not .grad: the shapes already match, and no warning applies
        if _GradMode.enabled:
            # create_graph (the engine sets grad mode to it): PyTorch's rule is a
            # recorded copy first, then out-of-place sums, so a .grad someone still
            # holds keeps its value.
            variable._grad = grad._copy_grad() if current is None else current + grad
        elif current is None:
            # Keep a copy: the same gradient may be held by a hook or sent to
            # another leaf too (AddBackward passes one gradient to both inputs),
            # and a plain .grad is later accumulated in place.
            variable._grad = type(grad)._wrap(grad._data.copy())
        else:
            current._data += grad._data  # in place, as PyTorch: every alias of .grad sees the sum
            current._version_counter.value += 1


class RemovableHandle:
    """Returned by ``register_hook``; ``handle.remove()`` unregisters the hook."""

    _next_id = itertools.count()

    def __init__(self, hooks: OrderedDict, *, extra_dict: dict | list | None = None) -> None:
        """``extra_dict``: more dicts that may hold this hook's id (a Module's record of which hooks
        take keyword arguments, say); ``remove`` forgets it there too."""
        self._hooks_ref = weakref.ref(hooks)
        extra = [] if extra_dict is None else extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self._extra_refs = [weakref.ref(d) for d in extra]
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        for ref in (self._hooks_ref, *self._extra_refs):
            hooks = ref()
            if hooks is not None:
                hooks.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def add_hook(hooks: OrderedDict, fn: Callable) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


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
        if _SavedTensorsHooks.disabled_message is not None:
            raise RuntimeError(_SavedTensorsHooks.disabled_message)
        _SavedTensorsHooks.stack.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc) -> None:
        _SavedTensorsHooks.stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in CPU memory, for code written for PyTorch (which moves them off the GPU).

    minigrad's tensors always live on the CPU, so the pack hook keeps each
    tensor's values as they are (``detach()``: the same memory, no copy) and
    ``pin_memory`` and ``device_type`` change nothing.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda tensor: tensor.detach(), lambda kept: kept)


class _SavedTensorsHooks:
    """The (pack, unpack) pairs in force, innermost last. PyTorch keeps one stack per
    thread; minigrad records graphs on one thread, so one stack serves."""

    stack: list[tuple[Callable, Callable]] = []
    disabled_message: str | None = None


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Inside this block, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``.

    For code that cannot work with hooks (it would not see its saved tensors as saved).
    """
    if _SavedTensorsHooks.stack:
        raise RuntimeError(error_message)
    previous, _SavedTensorsHooks.disabled_message = _SavedTensorsHooks.disabled_message, error_message
    try:
        yield
    finally:
        _SavedTensorsHooks.disabled_message = previous


class SavedTensor:
    """What ``save_for_backward`` keeps of one tensor: its values and their version.

    An *output* of the node is not kept as the Tensor object itself: that tensor
    points to the node through ``grad_fn``, and the node pointing back would make
    a reference cycle that only the garbage collector could free. So we keep the
    array and rebuild a tensor with ``grad_fn=node`` when backward unpacks it.

    Under ``saved_tensors_hooks`` only what ``pack_hook`` returned is kept, plus
    where the tensor's gradient goes (its ``grad_fn``, or its leaf accumulator),
    so the unpacked tensor takes part in a ``create_graph`` backward like the original.
    """

    __slots__ = (
        "tensor", "data", "version_counter", "saved_version", "output_nr", "requires_grad",
        "unpack_hook", "packed", "edge",
    )

    def __init__(self, tensor, output_nr: int | None) -> None:
        self.output_nr = output_nr
        self.version_counter = tensor._version_counter
        self.saved_version = tensor._version_counter.value
        self.unpack_hook = None
        if _SavedTensorsHooks.stack:
            self._pack(tensor, *_SavedTensorsHooks.stack[-1])
        elif output_nr is None:
            self.tensor = tensor
        else:
            self.tensor = None
            self.data = tensor._data
            self.requires_grad = tensor.requires_grad

    def _pack(self, tensor, pack_hook: Callable, unpack_hook: Callable) -> None:
        self.tensor, self.requires_grad, self.unpack_hook = None, tensor._requires_grad, unpack_hook
        if self.output_nr is None:
            self.edge = (tensor.grad_fn, tensor._output_nr, tensor._grad_accumulator)
        grad_was_enabled, _GradMode.enabled = _GradMode.enabled, False  # as PyTorch: nothing the hook does is recorded
        try:
            self.packed = pack_hook(tensor)
        finally:
            _GradMode.enabled = grad_was_enabled
        if tensor._version_counter.value != self.saved_version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
                "pack hook cannot be modified by in-place operations as this can lead to unexpected "
                "side-effects. Please open an issue if you need to perform in-place operations on the "
                "input to a pack hook."
            )

    def unpack(self, node: Node):
        if self.unpack_hook is not None:
            return self._unpack_with_hook(node)
        if self.version_counter.value != self.saved_version:
            self._raise_modified(node)
        if self.tensor is not None:
            return self.tensor
        out = Tensor._wrap(self.data)
        out._version_counter = self.version_counter
        if self.requires_grad:
            out._requires_grad = True
            out._grad_fn, out._output_nr = node, self.output_nr
        return out

    def _unpack_with_hook(self, node: Node):
        """A new tensor around what ``unpack_hook`` returned, wired into the graph as the saved one was."""
        values = self.unpack_hook(self.packed)
        if not isinstance(values, Tensor):
            raise TypeError(
                f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type {type(values).__name__}"
            )
        out = Tensor._wrap(values._data)
        out._version_counter = values._version_counter
        if self.requires_grad:
            out._requires_grad = True
            if self.output_nr is not None:
                out._grad_fn, out._output_nr = node, self.output_nr
            else:
                out._grad_fn, out._output_nr, out._grad_accumulator = self.edge
        return out

    def _raise_modified(self, node: Node) -> NoReturn:
        if self.tensor is not None:
            t = self.tensor
            producer = f", which is output {t._output_nr} of {t.grad_fn.name()}," if t.grad_fn else ""
            shape, dtype = list(t.shape), t.dtype
        else:
            producer = f", which is output {self.output_nr} of {node.name()},"
            shape, dtype = list(self.data.shape), Tensor._wrap(self.data).dtype
        if _AnomalyMode.enabled:
            hint = (
                "Hint: the backtrace further above shows the operation that failed to compute its "
                "gradient. The variable in question was changed in there or anywhere later. Good luck!"
            )
        else:
            hint = (
                "Hint: find the in-place operation (a method ending in '_', or an assignment into the "
                "tensor) that changed it after it was saved, and use its out-of-place form or .clone() "
                "the tensor first; minigrad.autograd.set_detect_anomaly(True, check_nan=False) shows "
                "the forward line of the node that failed."
            )
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{dtype} {shape}]{producer} is at version "
            f"{self.version_counter.value}; expected version {self.saved_version} instead. "
            f"It was saved by {node.name()}. {hint}"
        )
