"""Issue 27's autograd names, each run on minigrad and on torch and compared:
``autograd.graph.register_multi_grad_hook``, ``setup_context`` receiving forward's default
arguments, and gradcheck's ``fast_mode``, ``check_batched_grad``, ``nondet_tol`` and its
check that backward is reentrant."""
from __future__ import annotations

import pytest

from tests.test_parity_regressions import same

torch = pytest.importorskip("torch")

import minigrad  # noqa: E402


def _log(calls):
    """A hook that records its argument(s): a gradient, None, or a list of them."""
    def hook(arg):
        calls.append([None if g is None else g.detach().clone() for g in arg] if isinstance(arg, (list, tuple))
                     else arg.detach().clone())
    return hook


@pytest.mark.parametrize("mode", ["all", "any"])
@pytest.mark.parametrize("scenario", ["both", "one reached", "twice", "removed", "grad of one", "non-leaf",
                                      "retain", "not requiring grad"])
def test_register_multi_grad_hook(mode, scenario):
    def prog(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = lib.tensor([5.0], requires_grad=True)
        calls = []
        if scenario == "non-leaf":
            h = a * 2
            watched = (h, b)
        elif scenario == "not requiring grad":
            watched = (a, lib.ones(2))
        else:
            watched = (a, b)
        handle = lib.autograd.graph.register_multi_grad_hook(watched, _log(calls), mode=mode)
        h = watched[0]
        if scenario == "one reached":
            (h * c).sum().backward()
        elif scenario == "removed":
            handle.remove()
            (h * b).sum().backward()
        elif scenario == "grad of one":
            out = (h * b * c).sum()
            grads = lib.autograd.grad(out, (b,))
            calls.append(("grad", grads))
        elif scenario == "retain":
            out = (h * b).sum()
            out.backward(retain_graph=True)
            out.backward()
        else:
            (h * b).sum().backward()
            if scenario == "twice":
                (h * h * b).sum().backward()
        return calls, a.grad, b.grad
    same(prog)


def test_register_multi_grad_hook_bad_mode():
    same(lambda lib: lib.autograd.graph.register_multi_grad_hook((lib.ones(1, requires_grad=True),), print,
                                                                  mode="some"))


@pytest.mark.parametrize("call", ["defaults", "positional", "keyword", "missing", "too many"])
def test_setup_context_receives_forwards_default_arguments(call):
    """PyTorch binds apply's arguments to forward's signature, defaults filled in, before forward and
    setup_context see them."""
    def prog(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, k=3.0, shift=1.0):
                return x * k + shift

            @staticmethod
            def setup_context(ctx, inputs, output):
                seen.append(tuple(v if isinstance(v, float) else "tensor" for v in inputs))
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.k, None, None

        seen = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        args, kwargs = {"defaults": ((x,), {}), "positional": ((x, 5.0), {}), "keyword": ((x,), {"shift": 4.0}),
                        "missing": ((), {}), "too many": ((x, 1.0, 2.0, 3.0), {})}[call]
        out = Scale.apply(*args, **kwargs)
        out.sum().backward()
        return out, x.grad, seen
    same(prog)


def _square(lib, drift: float = 0.0, wrong: bool = False):
    """x**2 as a custom Function; ``drift`` makes each backward call a little larger than the last (a
    backward that is not reentrant); ``wrong`` gives 3x instead of 2x."""
    calls = [0]

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            calls[0] += 1
            return grad * x * (3.0 if wrong else 2.0) * (1 + drift * calls[0])
    return Square.apply


@pytest.mark.parametrize("case", [
    dict(), dict(fast_mode=True), dict(check_batched_grad=True), dict(check_undefined_grad=False),
    dict(wrong=True), dict(wrong=True, fast_mode=True), dict(wrong=True, raise_exception=False),
    dict(wrong=True, fast_mode=True, raise_exception=False),
    dict(drift=1e-6), dict(drift=1e-6, nondet_tol=1e-3), dict(drift=1e-6, fast_mode=True),
    dict(drift=1e-6, raise_exception=False), dict(check_backward_ad=False, wrong=True),
])
def test_gradcheck_switches(case):
    """gradcheck's answer (True, False or the exception type) for a right, a wrong and a non-reentrant
    backward, in slow and fast mode, as PyTorch's."""
    case = dict(case)
    drift, wrong = case.pop("drift", 0.0), case.pop("wrong", False)

    def prog(lib):
        x = lib.tensor([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(_square(lib, drift, wrong), (x,), **case)
    same(prog)


@pytest.mark.parametrize("case", [dict(), dict(fast_mode=True), dict(drift=1e-6), dict(drift=1e-6, nondet_tol=1e-2),
                                  dict(wrong=True, raise_exception=False)])
def test_gradgradcheck_switches(case):
    case = dict(case)
    drift, wrong = case.pop("drift", 0.0), case.pop("wrong", False)

    def prog(lib):
        x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
        square = _square(lib, drift, wrong)
        return lib.autograd.gradgradcheck(lambda t: square(t) * t, (x,), **case)
    same(prog)


def test_gradcheck_fast_mode_finds_a_wrong_gradient_in_one_element():
    """Fast mode projects on random vectors; an error in one Jacobian entry still shows (both libraries)."""
    def prog(lib):
        class Off(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                g = grad * 2
                g[1] = g[1] * 1.5
                return g
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(Off.apply, (x,), fast_mode=True, raise_exception=False)
    assert same(prog) is False
