"""Autograd corner cases where minigrad once differed from PyTorch, each run on both libraries.

Every test is one program ``prog(lib)`` written once against the shared API,
run with ``lib = minigrad`` and ``lib = torch``. ``same(prog)`` compares what the
two runs return (values, gradients, hook call logs, node names, None) and, when
either raises, that both raise the same exception type. The issue that filed
each case is quoted in its docstring.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minigrad  # noqa: E402


# -- machinery -------------------------------------------------------------------------------------
def _plain(x):
    """A library-independent form of a program's result, for comparing."""
    if isinstance(x, (minigrad.Tensor, torch.Tensor)):
        return ("tensor", x.detach().numpy().copy())
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _assert_same(m, t, where: str = "result") -> None:
    if isinstance(t, tuple) and len(t) == 2 and t[0] == "tensor":
        assert isinstance(m, tuple) and len(m) == 2 and m[0] == "tensor", f"{where}: minigrad {m!r}, torch a tensor"
        assert m[1].shape == t[1].shape, f"{where}: shape {m[1].shape} vs torch {t[1].shape}"
        np.testing.assert_allclose(m[1], t[1], rtol=1e-6, atol=1e-7, err_msg=where)
    elif isinstance(t, (list, tuple)):
        assert type(m) is type(t) and len(m) == len(t), f"{where}: minigrad {m!r}, torch {t!r}"
        for i, (a, b) in enumerate(zip(m, t)):
            _assert_same(a, b, f"{where}[{i}]")
    elif isinstance(t, dict):
        assert m.keys() == t.keys(), f"{where}: keys {sorted(m)} vs torch {sorted(t)}"
        for k in t:
            _assert_same(m[k], t[k], f"{where}[{k!r}]")
    else:
        assert m == t, f"{where}: minigrad {m!r}, torch {t!r}"


def _run(prog, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", _plain(prog(lib))
        except Exception as e:  # noqa: BLE001 - the exception type is what we compare
            return "raised", e


def same(prog):
    """Run ``prog(minigrad)`` and ``prog(torch)``; assert they agree. Returns torch's result."""
    m_kind, m = _run(prog, minigrad)
    t_kind, t = _run(prog, torch)
    if t_kind == "raised" or m_kind == "raised":
        assert m_kind == t_kind, f"minigrad {m_kind} {m!r}, torch {t_kind} {t!r}"
        assert type(m).__name__ == type(t).__name__, f"minigrad raised {m!r}, torch raised {t!r}"
        return t
    _assert_same(m, t)
    return t


def fn(lib):
    """The autograd.Function base class of ``lib``."""
    return lib.autograd.Function


# -- 1. hooks belong to the version of the tensor they were registered on --------------------------
def test_hooks_registered_before_and_after_an_inplace_op_fire_once_each():
    """Issue 10: minigrad gave a.grad == 32 (both hooks on both nodes); PyTorch gives 8."""
    def prog(lib):
        a = lib.tensor([1.], requires_grad=True)
        b = a.clone()
        b.register_hook(lambda g: g * 2)
        b.mul_(2)
        b.register_hook(lambda g: g * 2)
        b.sum().backward()
        return a.grad
    same(prog)


def test_hook_before_inplace_sees_the_gradient_of_the_old_values():
    def prog(lib):
        log = []
        a = lib.tensor(2., requires_grad=True)
        t = a * 1
        t.register_hook(lambda g: log.append(("before", g.item())))
        t.mul_(3)
        t.register_hook(lambda g: log.append(("after", g.item())))
        (t * 5).backward()
        return log, a.grad
    same(prog)


def test_leaf_hooks_survive_an_inplace_update_under_no_grad():
    def prog(lib):
        log = []
        w = lib.tensor([1., 2.], requires_grad=True)
        w.register_hook(lambda g: log.append(g.tolist()) or g * 3)
        with lib.no_grad():
            w.mul_(2)
        (w * w).sum().backward()
        return log, w.grad
    same(prog)


# -- 2. retain_grad follows the tensor through in-place ops ----------------------------------------
def test_retain_grad_then_inplace_gives_the_gradient_of_the_current_values():
    """Issue 10: minigrad gave 2 and warned about .grad of a non-leaf; PyTorch gives 1."""
    def prog(lib):
        a = lib.tensor([1.], requires_grad=True).clone()
        a.retain_grad()
        a.mul_(2)
        a.sum().backward()
        return a.grad
    same(prog)


def test_retain_grad_then_inplace_does_not_warn():
    a = minigrad.tensor([1.], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a.sum().backward()
        assert a.grad.tolist() == [1.0]


def test_retain_grad_before_or_after_inplace_and_hooks_order():
    def prog(lib):
        log = []
        a = lib.tensor(2., requires_grad=True)
        t = a * 1
        t.register_hook(lambda g: log.append(("old", g.item())))
        t.retain_grad()
        t.mul_(3)
        t.register_hook(lambda g: log.append(("new", g.item())))
        (t * 5).backward()
        return log, t.grad, a.grad
    same(prog)


def test_retained_grad_accumulates_out_of_place():
    def prog(lib):
        x = lib.tensor([1.], requires_grad=True)
        y = x * 2
        y.retain_grad()
        z = y * 3
        z.backward(retain_graph=True)
        first = y.grad
        z.backward()
        return first, y.grad, first is y.grad
    same(prog)


def test_retained_grad_under_create_graph_is_a_recorded_clone():
    def prog(lib):
        x = lib.tensor([1.], requires_grad=True)
        y = x * 2
        y.retain_grad()
        (y * y).sum().backward(create_graph=True)
        return y.grad, y.grad.grad_fn.name()
    same(prog)


# -- 3. .grad accumulation: in place normally, out of place under create_graph ---------------------
def test_create_graph_accumulation_leaves_an_old_grad_reference_alone():
    """Issue 10: minigrad changed `old` in place; PyTorch makes a new tensor."""
    def prog(lib):
        x = lib.tensor([1.], requires_grad=True)
        y = x + 2
        g = lib.ones(1)
        y.backward(g, retain_graph=True)
        old = x.grad
        y.backward(g, create_graph=True)
        return old, x.grad, x.grad is old
    same(prog)


def test_plain_accumulation_is_in_place_and_seen_through_aliases():
    def prog(lib):
        x = lib.tensor([1., 2.], requires_grad=True)
        mine = lib.zeros(2)
        x.grad = mine
        (x * 4).sum().backward()
        first = x.grad
        (x * 3).sum().backward()
        return mine, first is x.grad, mine is x.grad
    same(prog)


def test_first_grad_is_never_the_incoming_tensor():
    def prog(lib):
        x = lib.tensor([1.], requires_grad=True)
        g = lib.ones(1)
        (x + 2).backward(g, create_graph=True)
        first_create = x.grad is g
        x.grad = None
        (x + 2).backward(g)
        return first_create, x.grad is g, x.grad
    same(prog)


def test_first_grad_under_create_graph_is_a_recorded_copy():
    def prog(lib):
        x = lib.tensor([3.], requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        first = x.grad
        (x * x).sum().backward(create_graph=True)
        return first, x.grad, first is x.grad, first.grad_fn.name(), x.grad.grad_fn.name()
    same(prog)


def test_fill_gives_zero_gradients_not_none():
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        h = a * 1
        h.fill_(1)
        h.sum().backward(retain_graph=True)
        z = a * 1
        z.zero_()
        z.sum().backward()
        return a.grad
    same(prog)


# -- 6. Function.forward may return objects that are not tensors -----------------------------------
def test_forward_returning_numbers_none_and_strings_passes_them_through():
    def prog(lib):
        log = []

        class Mixed(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return x * 2, 7, None, "s"

            @staticmethod
            def backward(ctx, g, a, b, c):
                log.append((g.tolist(), a, b, c))
                return g * 2

        x = lib.ones(1, requires_grad=True)
        out = Mixed.apply(x)
        out[0].sum().backward()
        return out[1:], log, x.grad, out[0].grad_fn.name()
    same(prog)


def test_forward_returning_a_tensor_after_a_number_keeps_its_output_number():
    def prog(lib):
        log = []

        class NumberFirst(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return 7, x * 2

            @staticmethod
            def backward(ctx, a, g):
                log.append((a, g.tolist()))
                return g * 3

        x = lib.ones(1, requires_grad=True)
        seven, y = NumberFirst.apply(x)
        y.sum().backward()
        return seven, y.output_nr, log, x.grad
    same(prog)


@pytest.mark.parametrize("value", [3, None, "text", [1, 2]])
def test_forward_returning_a_single_non_tensor(value):
    def prog(lib):
        class Plain(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return value

            @staticmethod
            def backward(ctx, g):
                return None

        return Plain.apply(lib.ones(1, requires_grad=True))
    same(prog)


def test_forward_returning_a_list_of_tensors_returns_the_list_unconnected():
    def prog(lib):
        class ListOut(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return [x * 2, x * 3]

            @staticmethod
            def backward(ctx, g):
                return g

        out = ListOut.apply(lib.ones(1, requires_grad=True))
        return out, [t.requires_grad for t in out]
    same(prog)


def test_keyword_arguments_of_apply_are_bound_to_forward_parameters():
    def prog(lib):
        log = []

        class Kw(fn(lib)):
            @staticmethod
            def forward(ctx, x, y=None, scale=1.0):
                return x * y * scale

            @staticmethod
            def backward(ctx, g):
                log.append(ctx.needs_input_grad)
                return g, g * 2

        x, y = lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)
        Kw.apply(x, y=y).sum().backward()
        return log, x.grad, y.grad
    same(prog)


def test_keyword_only_parameter_of_forward_is_rejected():
    def prog(lib):
        class KwOnly(fn(lib)):
            @staticmethod
            def forward(ctx, x, *, scale=1.0):
                return x * scale

            @staticmethod
            def backward(ctx, g):
                return g

        return KwOnly.apply(lib.ones(1, requires_grad=True), scale=3.0)
    same(prog)


# -- 8. empty inputs=, backward and vjp, missing methods --------------------------------------------
def test_backward_with_empty_inputs_raises():
    def prog(lib):
        x = lib.ones(1, requires_grad=True)
        (x * 2).sum().backward(inputs=[])
    same(prog)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        x = minigrad.ones(1, requires_grad=True)
        (x * 2).sum().backward(inputs=[])


def test_grad_with_empty_inputs_raises():
    def prog(lib):
        x = lib.ones(1, requires_grad=True)
        return lib.autograd.grad((x * 2).sum(), ())
    same(prog)


def _make(lib, forward=True, backward=True, vjp=False):
    body = {}
    if forward:
        body["forward"] = staticmethod(lambda ctx, x: x * 2)
    if backward:
        body["backward"] = staticmethod(lambda ctx, g: g * 2)
    if vjp:
        body["vjp"] = staticmethod(lambda ctx, g: g * 7)
    return type("Custom", (fn(lib),), body)


@pytest.mark.parametrize("methods", [
    dict(vjp=True), dict(backward=False, vjp=True), dict(forward=False), dict(backward=False),
], ids=["both-backward-and-vjp", "vjp-only", "no-forward", "no-backward"])
def test_which_methods_a_function_defines(methods):
    def prog(lib):
        x = lib.ones(1, requires_grad=True)
        y = _make(lib, **methods).apply(x)
        applied = y.tolist()
        y.sum().backward()
        return applied, x.grad
    same(prog)


def test_missing_methods_say_what_to_implement():
    x = minigrad.ones(1, requires_grad=True)
    with pytest.raises(NotImplementedError, match="forward"):
        _make(minigrad, forward=False).apply(x)
    with pytest.raises(NotImplementedError, match="backward or vjp"):
        _make(minigrad, backward=False).apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="both 'backward' and 'vjp'"):
        _make(minigrad, vjp=True).apply(x).sum().backward()
