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
"""
from __future__ import annotations

import itertools
from sys import getrefcount
from typing import NoReturn

from minigrad.core.extension import Extensions
from minigrad.core.grad_mode import _GradMode

# The tensor class that gradients and unpacked saved tensors are made of: ``core/tensor.py``
# registers its ``Tensor`` here, so the graph never imports the tensor (MiniTorch's one-way layers).
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

    def _run_without_gradient(self) -> None:
        """What the engine calls for a node that no gradient reached: it computes nothing, but
        PyTorch's still unpacks its saved tensors, for their checks only (freed, changed in place)."""


class AccumulateGrad(Node):
    """The node at the end of a leaf tensor: adds incoming gradients into ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:  # (Node.__init__'s fields, written here: one is made per leaf per graph)
        self.next_functions, self._num_outputs, self._sequence_nr = (), 1, _ACCUMULATE_GRAD_SEQUENCE_NR
        self._retains_grad = self._node_hooks = self._metadata = None
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
        if self.variable._post_accumulate_grad_hooks:
            self._run_post_accumulate_hooks()
        return ()

    def _run_post_accumulate_hooks(self) -> None:
        """The leaf's post-accumulate hooks: PyTorch calls them even when no gradient reached it
        (a custom Function's backward returned None for it), with ``.grad`` as it is."""
        hooks = self.variable._post_accumulate_grad_hooks
        if hooks:
            for hook in tuple(hooks.values()):
                if hook(self.variable) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")

    _run_without_gradient = _run_post_accumulate_hooks  # (the engine calls it when no gradient reached this leaf)

    def accumulate(self, grad) -> None:
        variable = self.variable
        current = variable._grad  # not .grad: the shapes already match, and no warning applies
        if _GradMode.enabled:
            # create_graph (the engine sets grad mode to it): PyTorch's rule is a
            # recorded copy first, then out-of-place sums, so a .grad someone still
            # holds keeps its value.
            variable._grad = grad._copy_grad() if current is None else current + grad
        elif current is None:
            # As PyTorch, take the gradient itself if nothing else can see it: only the engine's
            # buffer holds it (3 references: the buffer, this argument, getrefcount's), and only it
            # holds its array (it, ``data``, getrefcount's), which owns its row-major memory. Else
            # keep a copy: the same gradient may be held by a hook or sent to another leaf too
            # (AddBackward passes one gradient to both inputs), and a plain .grad is later
            # accumulated in place.
            data = grad._data
            if (getrefcount(grad) == 3 and type(grad) is Tensor and getrefcount(data) == 3 and data.base is None
                    and data.flags.c_contiguous and data.flags.writeable and grad._counter is None
                    and grad._hooks is None and not grad._requires_grad):
                variable._grad = grad
            else:
                variable._grad = type(grad)._wrap(data.copy())
        else:
            try:
                current._data += grad._data  # in place, as PyTorch: every alias of .grad sees the sum
            except ValueError:  # (NumPy's broadcasting error: PyTorch raises RuntimeError)
                raise RuntimeError(f"a gradient of shape {list(grad._data.shape)} cannot be added into .grad of "
                                   f"shape {list(current._data.shape)} (its .data was given another shape): set "
                                   ".grad = None first") from None
            current._version_counter.value += 1


class SavedTensor:
    """What ``save_for_backward`` keeps of one tensor: its values and their version.

    An *output* of the node is not kept as the Tensor object itself: that tensor
    points to the node through ``grad_fn``, and the node pointing back would make
    a reference cycle that only the garbage collector could free. So we keep the
    array and rebuild a tensor with ``grad_fn=node`` when backward unpacks it.

    Under ``saved_tensors_hooks`` (``minigrad.autograd.graph``, through
    ``Extensions.saved_tensor_hooks``) that block decides what is kept.
    """

    __slots__ = (
        "tensor", "data", "version_counter", "saved_version", "output_nr", "requires_grad",
        "unpack_hook", "packed", "edge",
    )

    def __init__(self, tensor, output_nr: int | None) -> None:
        self.output_nr = output_nr
        self.version_counter = counter = tensor._version_counter
        self.saved_version = counter.value
        self.unpack_hook = None
        if Extensions.saved_tensor_hooks:  # the innermost saved_tensors_hooks block keeps what it packs
            Extensions.saved_tensor_hooks[-1].pack(self, tensor)
        elif output_nr is None:
            self.tensor = tensor
        else:
            self.tensor = None
            self.data = tensor._data
            self.requires_grad = tensor.requires_grad

    def unpack(self, node: Node):
        if self.unpack_hook is not None:
            return self.unpack_hook.unpack(self, node)
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

    def _raise_modified(self, node: Node) -> NoReturn:
        if self.tensor is not None:
            t = self.tensor
            producer = f", which is output {t._output_nr} of {t.grad_fn.name()}," if t.grad_fn else ""
            shape, dtype = list(t.shape), t.dtype
        else:
            producer = f", which is output {self.output_nr} of {node.name()},"
            shape, dtype = list(self.data.shape), Tensor._wrap(self.data).dtype
        if Extensions.anomaly is not None:
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
