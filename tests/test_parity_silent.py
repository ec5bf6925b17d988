"""Issue 27's silent and error differences in the autograd core, each run on minigrad and torch and
compared (values, or the exception type): ``.data`` assignment's checks, inference tensors
(``is_inference()``, refused when saved for backward), ``detach_()`` of a saved tensor,
``tensor([x])`` of tensors that require grad, ``var_mean``'s outputs changed in place, and a custom
Function that changes a view of a temporary in place."""
from __future__ import annotations

import warnings

import pytest

from tests.test_parity_regressions import same

torch = pytest.importorskip("torch")

import minigrad  # noqa: E402


@pytest.mark.parametrize("case", [
    lambda lib: (lambda a: (setattr(a, "data", lib.tensor([1, 2])), a.dtype == lib.int64))(lib.ones(2)),
    lambda lib: setattr(lib.ones(2, requires_grad=True), "data", lib.tensor([1, 2])),
    lambda lib: setattr(lib.ones(2, requires_grad=True), "data", lib.tensor([True, False])),
    lambda lib: (lambda a: (setattr(a, "data", lib.ones(3, dtype=lib.float64)), a.dtype == lib.float64,
                            tuple(a.shape), a.requires_grad, a.is_leaf))(lib.ones(2, requires_grad=True)),
    lambda lib: (lambda a: (setattr(a, "data", lib.ones(2, requires_grad=True)), a.requires_grad,
                            a.grad_fn))(lib.ones(2)),
    lambda lib: setattr(lib.ones(2), "data", [1.0, 2.0]),
    lambda lib: setattr(lib.ones(2), "data", 3.0),
])
def test_data_assignment(case):
    same(case)


def _inference_tensor(lib):
    with lib.inference_mode():
        return lib.ones(2) * 3


@pytest.mark.parametrize("case", [
    lambda lib: (_inference_tensor(lib).is_inference(), lib.ones(2).is_inference(),
                 _inference_tensor(lib)[0].is_inference(), _inference_tensor(lib).detach().is_inference(),
                 _inference_tensor(lib).clone().is_inference()),
    lambda lib: (lambda x: (x.is_inference(), x.requires_grad))(_no_grad_tensor(lib)),
    lambda lib: (lib.ones(2, requires_grad=True) * _inference_tensor(lib)).sum(),
    lambda lib: (lib.ones(2, requires_grad=True) + _inference_tensor(lib)).sum(),
    lambda lib: (lib.ones(2, requires_grad=True) * _inference_tensor(lib).clone()).sum(),
    lambda lib: lib.nn.functional.linear(_inference_tensor(lib), lib.ones(3, 2, requires_grad=True)),
    lambda lib: _inference_tensor(lib).exp() * 2,
])
def test_inference_tensors(case):
    same(case)


def _no_grad_tensor(lib):
    with lib.no_grad():
        return lib.ones(2) * 3


@pytest.mark.parametrize("detach", ["input", "output", "none", "leaf"])
def test_detach_in_place_of_a_saved_tensor(detach):
    def prog(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        c = b * b  # saves b (an input)
        d = b.exp()  # saves its output
        if detach == "input":
            b.detach_()
        elif detach == "output":
            d.detach_()
        (c.sum() + (d.sum() if d.requires_grad else 0)).backward()
        return a.grad
    same(prog)


@pytest.mark.parametrize("case", [
    lambda lib: lib.tensor([lib.tensor(2.0, requires_grad=True), lib.tensor(3.0)]),
    lambda lib: lib.tensor([lib.tensor(2.0, requires_grad=True) * 2, 1.5]),
    lambda lib: lib.tensor([[lib.tensor(2.0, requires_grad=True)], [lib.tensor(1.0)]]),
    lambda lib: lib.tensor([lib.tensor([1.0, 2.0], requires_grad=True)]),
    lambda lib: lib.tensor(lib.tensor(2.0, requires_grad=True)),
])
def test_tensor_of_a_list_holding_tensors_that_require_grad(case):
    """PyTorch copies the values (the result requires no grad) and warns, a UserWarning (once per process,
    so only minigrad's is checked here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(lambda lib: (lambda out: (out, out.requires_grad))(case(lib)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            case(minigrad)
        except ValueError:  # (a tensor of several elements: PyTorch's ValueError, after the warning)
            pass
    assert any(issubclass(w.category, UserWarning) for w in caught)


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
@pytest.mark.parametrize("change", ["spread", "mean", "none"])
@pytest.mark.parametrize("dim", [None, 1])
def test_var_mean_outputs_changed_in_place(fn, change, dim):
    """PyTorch's var_mean saves only its input (so its outputs may change in place); std_mean saves its std."""
    def prog(lib):
        a = lib.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
        spread, mean = getattr(lib, fn)(a * 1, dim=dim)
        spread.retain_grad()
        mean.retain_grad()
        if change == "spread":
            spread.mul_(2)
        elif change == "mean":
            mean.add_(1)
        (spread * 3 + mean).sum().backward()
        if change == "mean":  # (torch 2.13 then gives spread.grad mean's gradient, 1 for 3: not copied)
            return a.grad, mean.grad
        return a.grad, spread.grad, mean.grad
    def run(lib):
        try:
            return prog(lib)
        except RuntimeError as e:
            return type(e).__name__
    m, t = run(minigrad), run(torch)  # (values within float32 rounding: std is computed another way)
    assert type(m) is type(t), (m, t)
    if isinstance(t, str):
        return
    for mine, theirs in zip(m, t):
        assert (mine is None) == (theirs is None)
        if mine is not None:
            assert torch.allclose(torch.tensor(mine.numpy()), theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
def test_var_mean_gradients_against_finite_differences(fn):
    a = minigrad.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], dtype=minigrad.float64, requires_grad=True)
    f = getattr(minigrad, fn)
    assert minigrad.autograd.gradcheck(lambda x: f(x, 1), (a,))
    assert minigrad.autograd.gradgradcheck(lambda x: f(x, 0, correction=0), (a,))


@pytest.mark.parametrize("then", ["backward", "in place on the output", "grad_fn", "base in place"])
def test_custom_function_changing_a_view_of_its_temporary(then):
    """A view of a tensor made inside forward, changed there in place and returned: PyTorch runs (the
    output's history is built after forward), and refuses a later in-place change of the output."""
    def prog(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                tmp = x.clone()
                view = tmp[:1]
                view.mul_(2)
                ctx.tmp = tmp
                return view

            @staticmethod
            def backward(ctx, g):
                out = lib.zeros(2)
                out[:1] = g * 2
                return out
        a = lib.ones(2, requires_grad=True)
        y = F.apply(a)
        if then == "in place on the output":
            y.mul_(3)
        elif then == "grad_fn":
            return type(y.grad_fn).__name__, y.is_leaf, y.requires_grad
        elif then == "base in place":
            with lib.no_grad():
                y._base.add_(1)
            return type(y.grad_fn).__name__
        (y * 1).sum().backward()
        return a.grad
    same(prog)


# -- found by the differential tester's new steps (tests/differential/) ------------------------------------
@pytest.mark.parametrize("generator", [False, True])
def test_set_grad_enabled_as_a_decorator(generator):
    """PyTorch's set_grad_enabled(False) switches at once, and as a decorator puts the mode back and runs
    each call in its mode; minigrad's was not callable (TypeError)."""
    def prog(lib):
        before = lib.is_grad_enabled()
        decorate = lib.set_grad_enabled(False)
        during = lib.is_grad_enabled()
        if generator:
            @decorate
            def body(x):
                yield lib.is_grad_enabled(), (x * 2).requires_grad
            inside = next(body(lib.ones(1, requires_grad=True)))
        else:
            @decorate
            def body(x):
                return lib.is_grad_enabled(), (x * 2).requires_grad
            inside = body(lib.ones(1, requires_grad=True))
        return before, during, inside, lib.is_grad_enabled()
    same(prog)


@pytest.mark.parametrize("write", [lambda t: t.abs_(), lambda t: t.__setitem__(0, 1.0), lambda t: t.zero_(),
                                   lambda t: t[:1].add_(1), lambda t: t.__setitem__((slice(None, None, -1),), 2.0),
                                   lambda t: t.__setitem__(([0],), 1.0)])
@pytest.mark.parametrize("inside", [False, True])
def test_in_place_on_an_inference_tensor(write, inside):
    """Refused outside inference_mode, as PyTorch. (Not compared: torch 2.13 lets t.detach().mul_(2) change
    an inference tensor outside the mode; minigrad refuses that too: detach() shares the tensor's counter.)"""
    def prog(lib):
        t = _inference_tensor(lib)
        if inside:
            with lib.inference_mode():
                write(t)
        else:
            write(t)
        return t
    same(prog)


def test_var_mean_of_one_element_when_only_the_mean_gets_a_gradient():
    """var of one element is nan (dof 0): PyTorch skips its part of the gradient when it got none."""
    def prog(lib):
        a = lib.tensor(0.5, requires_grad=True)
        var, mean = lib.var_mean(a)
        (mean * 3).backward()
        return var, a.grad
    same(prog)
