"""PyTorch's views, as a layer on the core (the core's ``Extensions.views``).

A view (``x[0]``, ``x.t()``, ``x.view(...)``) shares its base's memory, so an
in-place change of either changes both, and autograd must follow: PyTorch gives
the view a new history, taken again from the base (``CopySlices`` on the base,
the view op replayed on top). This layer keeps, per view, how it was taken
(``_ViewMeta``) and brings its history up to date when the core asks
(``sync``), and says which in-place changes of views PyTorch refuses. The core
calls it only for tensors that have ``_base`` or ``_view_meta``, which only the
view ops of ``minigrad/ops/`` set: code without views never pays for it.
The replay itself (``Tensor._regenerate_view``, ``_copy_slices``, ``_rebase_view``)
is in ``minigrad/ops/inplace.py``, beside the in-place ops.
"""
from __future__ import annotations

from minigrad.core.tensor import Tensor, extend_tensor


class _ViewMeta:
    """What a view keeps about how it was taken from its base (``Tensor._base``).

    ``steps`` are the view operations from the base to the view, as
    ``(Function, args)`` pairs: replaying them on the base gives the view again,
    with the base's current history (``Tensor._regenerate_view``). None for a
    view that cannot be replayed: an output of a custom Function or of an op
    that returns several views (``custom`` then holds PyTorch's message why, with
    ``{change}`` for what happened). ``version`` is the shared version counter's
    value when the view's history was built: once the counter moved on, the
    history is stale (``sync``). ``no_grad``: made in no_grad mode.
    """

    __slots__ = ("steps", "version", "no_grad", "custom")

    def __init__(self, steps: tuple | None, version: int) -> None:
        self.steps, self.version, self.no_grad, self.custom = steps, version, False, None

    def reason(self, indirect: bool) -> str:
        """PyTorch's refusal of a view that cannot be replayed: modified in place itself, or
        (``indirect``) used after its base or another view of its base was."""
        change = "its base or another view of its base has been modified inplace" if indirect else "is being modified inplace"
        return (self.custom or (
            "This view was made by an operation that returns several views (like split or unbind) or by "
            "a custom Function, and {change}; such a view cannot be taken again from its base. You can fix "
            "this by cloning it (.clone()) first."
        )).format(change=change)


def sync(view: Tensor) -> None:
    """PyTorch's rule for a view's history: it is stale once the memory it shares changed
    version since the history was built (an in-place op on the view, its base or another view
    of it, recorded or not); then it is taken again from the base, or refused for a view that
    cannot be. A view with no history, of a base that requires no grad, has nothing to update."""
    if view._view_meta.version != view._version_counter.value and (
        view._grad_fn is not None or view._base._requires_grad
    ):
        view._regenerate_view()  # (in ops/inplace.py: it takes the view again with an op)


def check_inplace(view: Tensor) -> None:
    """PyTorch's refusals for a recorded in-place operation on a view."""
    meta, base = view._view_meta, view._base
    if meta.steps is None:
        raise RuntimeError(meta.reason(indirect=False))
    if base._requires_grad and base._grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Tensor that requires grad is being used in an in-place operation. "
            "Update the leaf inside `with minigrad.no_grad():`, or clone it first."
        )
    if meta.no_grad:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
            "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
            "your code by moving both the view and the inplace either both inside the no_grad block "
            "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
            "to be tracked)."
        )


def alias(t: Tensor) -> Tensor:
    """A new tensor object viewing the same memory, for outputs that must be distinct.

    It is a view that cannot be replayed: a custom Function's output (see ``_ViewMeta.steps``).
    """
    out = t.detach()
    out._base = t if t._base is None else t._base
    out._view_meta = _ViewMeta(None, out._version_counter.value)
    return out


def connect_output(node, i: int, out: Tensor) -> None:
    """Output ``i`` of ``node``'s call is a view: unless the call's own op made it (a replayable
    view op), it cannot be taken again from its base, and says why when asked to."""
    meta = out._view_meta
    if meta.steps is None or meta.steps[-1][0] is not node._forward_cls:
        meta.steps, meta.custom = None, _unreplayable_view_message(i, node._forward_cls.__name__, node._custom)


def rebase(node, view: Tensor, inputs: tuple, nr: int) -> None:
    """A view that ``node``'s call changed in place: its base gets the new history (CopySlices)."""
    values = Tensor._wrap(view._data)
    values._requires_grad, values._grad_fn, values._output_nr = True, node, nr
    tensors = [a for a in inputs if isinstance(a, Tensor)]
    at = next(k for k, a in enumerate(tensors) if a is view)
    view._rebase_view(view._copy_slices(values, at, tensors[:at] + tensors[at + 1:]))


def unrecorded_output(view: Tensor, grad_enabled: bool) -> None:
    """A view among the outputs of a custom Function call that recorded nothing is refused in-place
    changes that would need a history: it counts as made in no_grad mode, and with grad mode on,
    as made by a custom Function."""
    meta = view._view_meta
    meta.no_grad = True
    if grad_enabled:
        meta.steps, meta.custom = None, (
            "A view was created in no_grad mode and {change} with grad mode enabled. This view was "
            "created inside a custom Function (or because an input was returned as-is) and the autograd "
            "logic to handle view+inplace would override the custom backward associated with the custom "
            "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
            "cloning the output of the custom Function."
        )


def _unreplayable_view_message(i: int, name: str, custom: bool) -> str:
    """Why an in-place op on this output (a view of an input), or on its base, cannot be recorded:
    PyTorch's texts, with ``{change}`` for which of the two happened (``_ViewMeta.reason``)."""
    if not custom:  # a built-in view op that returns several views (even when it returns just one)
        return (
            f"Output {i} of {name} is a view and {{change}}. This view is the output of a function that "
            "returns multiple views. Such functions do not allow the output views to be modified inplace. "
            "You should replace the inplace operation by an out-of-place one."
        )
    # A view made inside a custom forward: replaying the view op would skip this node's backward.
    return (
        f"Output {i} of {name} is a view and {{change}}. This view was created inside a custom Function "
        "(or because an input was returned as-is) and the autograd logic to handle view+inplace would "
        "override the custom backward associated with the custom Function, leading to incorrect "
        "gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function."
    )



@extend_tensor
class _ViewMethods:
    """The same, as the Tensor methods the library's view and in-place ops call."""

    def _sync_view(self) -> None:
        sync(self)

    def _check_inplace_on_view(self) -> None:
        check_inplace(self)

    def _alias(self) -> Tensor:
        return alias(self)
