"""What stage 05's probes share: float64 leaves, a Function's ``apply`` that names what it returned,
the version check and in-place changes of the inputs, vector-Jacobian products."""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad.autograd import grad as autograd_grad
from minigrad.course.checks import Finding, clip, expect_tensor

F64 = minigrad.float64


G = " (g: the gradient backward receives, grad_output)"
AB = " (a, b: fixed random weights)"


def _leaf(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64, requires_grad=True)


def _const(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64)


def _apply(ns: dict, name: str, outputs: int = 1):
    """``ns[name].apply``; a stub for a name not yet defined is called as it is (and raises).

    A call that returns something else than one tensor (``outputs=1``) or a pair of tensors raises
    ``checks.Finding`` saying what it returned, so that a tuple is never shown as if it were values.
    """
    fn = ns[name]
    apply = getattr(fn, "apply", fn)

    def call(*args):
        result = apply(*args)
        what = f"{name}.apply(...)"
        if outputs == 1:
            return expect_tensor(result, what)
        if not isinstance(result, tuple) or len(result) != outputs:
            kind = type(result).__name__ + (f" of {len(result)}" if isinstance(result, (tuple, list)) else "")
            raise Finding(f"{what} returned a {kind}, where a tuple of {outputs} tensors was expected")
        return tuple(expect_tensor(r, f"{what}[{i}]") for i, r in enumerate(result))

    return call


def _snapshot(*tensors) -> list:
    """The values of the caller's tensors, to tell afterwards whether a Function changed them in place."""
    return [t.detach().numpy().copy() for t in tensors]


def _changed(before: list, *tensors) -> list:
    """Which of ``tensors`` (by position) no longer hold the values ``_snapshot`` recorded."""
    return [i for i, (b, t) in enumerate(zip(before, tensors))
            if b.shape != tuple(t.shape) or not np.array_equal(b, t.detach().numpy(), equal_nan=True)]


def _version_check(run, inputs, change) -> dict:
    """Run a Function, change ``change`` (one of its inputs) in place before backward, and report
    whether backward noticed, as it does for a tensor kept by ``ctx.save_for_backward``.

    ``run() -> (out, ctx)``. Also records what the node kept: how many saved tensors, and the names
    of ctx attributes that hold one of the inputs."""
    out = run()
    node = out.grad_fn
    attributes = sorted(k for k, v in vars(node).items() if not k.startswith("_")
                        and any(v is t for t in inputs))
    saved = len(node.saved_tensors) if node is not None else 0
    with minigrad.no_grad():
        change.add_(1.0)
    try:
        _vjp(out, list(inputs), _const(np.ones(tuple(out.shape))))
    except RuntimeError as e:
        noticed = "modified by an inplace operation" in str(e)
        return {"noticed": noticed, "saved": saved, "attributes": attributes,
                "error": None if noticed else clip(f"{type(e).__name__}: {e}", 300)}
    return {"noticed": False, "saved": saved, "attributes": attributes, "error": None}


def _version_problem(name: str, what: str, mine: dict, ref: dict) -> str | None:
    if not ref["noticed"] or mine["noticed"]:
        return None
    kept = (f" you kept it as ctx.{mine['attributes'][0]}" if mine["attributes"] else
            " your Function did not save it with ctx.save_for_backward")
    return (f"{name}'s backward did not notice that {what} was changed in place between forward and backward:"
            f"{kept}. Tensors that backward needs go through ctx.save_for_backward(...) and come back from "
            "ctx.saved_tensors, so that minigrad (like PyTorch) can check that they are unchanged; attributes "
            "of ctx are for values that are not tensors")


def _changed_problem(name: str, changed: list, labels=("x",)) -> str | None:
    if not changed:
        return None
    which = " and ".join(labels[i] for i in changed)
    return (f"{name} changed its caller's {which} in place (its values differ after the call): a Function "
            "must not modify its inputs, which the caller keeps using. Compute a new tensor instead "
            "(out-of-place operations: x * (x > 0), x.exp(), not x.clamp_(...), x.exp_() or x[...] = ...)")


def _vjp(outputs, inputs, grads) -> list:
    """The gradients of ``sum(outputs * grads)`` for each input (None if none reached it)."""
    return list(autograd_grad(outputs, inputs, grads, allow_unused=True))


def _attempt(fn) -> dict:
    """``{"ok": fn()}``, or ``{"error": message}`` for the errors a malformed Function raises."""
    try:
        return {"ok": fn()}
    except NotImplementedError:
        raise
    except (RuntimeError, TypeError) as e:
        return {"error": clip(f"{type(e).__name__}: {e}", 400)}


def _array(value) -> np.ndarray:
    return np.asarray(value, dtype=np.float64)

