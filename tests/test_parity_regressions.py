"""Autograd corner cases where minigrad once differed from PyTorch, each run on both libraries.

Every test is one program ``prog(lib)`` written once against the shared API,
run with ``lib = minigrad`` and ``lib = torch``. ``same(prog)`` compares what the
two runs return (values, gradients, hook call logs, node names, None) and, when
either raises, that both raise the same exception type. The issue that filed
each case is quoted in its docstring.
"""
from __future__ import annotations

import itertools
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


# -- 4. every basic index is a view, with PyTorch's node names --------------------------------------
def test_integer_index_of_a_1d_tensor_is_a_view():
    """Issue 10: a[0] of a 1-D tensor was a NumPy scalar copy; a[0].mul_(5) left a unchanged."""
    def prog(lib):
        a = lib.tensor([1., 2., 3.])
        e = a[0]
        e.mul_(5)
        return a, e.dim(), e._base is a, a._version == e._version
    same(prog)


def test_integer_index_view_inplace_in_a_graph():
    """Issue 10: w.grad was [1, 1, 1] with no error; PyTorch gives [5, 1, 1]."""
    def prog(lib):
        w = lib.tensor([1., 2., 3.], requires_grad=True)
        h = w * 1
        h[0].mul_(5)
        h.sum().backward()
        return h, w.grad
    same(prog)


KEYS = ["h[0]", "h[:, 1]", "h[0, 1]", "h[0, 1:]", "h[1:, 0]", "h[..., None]", "h[None]", "h[:]", "h[...]",
        "h[0, ..., 1]", "h[0, None]", "h[None, 0]", "h[[0]]", "h[0, [0]]", "h[:, [0]]", "h[h > 0]", "h[-1]",
        "h[1:2, :, 0:1]", "h[::2]", "h[0][1]", "h[:, :]", "h[0:2]", "h[:, 0:3]", "h[True]", "h[5:]",
        "h[lib.tensor(1)]", "h[lib.tensor([1, 0])]"]


@pytest.mark.parametrize("expr", KEYS)
def test_index_node_names_views_and_gradients(expr):
    def prog(lib):
        x = lib.arange(24.).reshape(2, 3, 4).requires_grad_()
        h = x * 1
        v = eval(expr)
        chain, node = [], v.grad_fn
        while node is not None and node.name() != "MulBackward0":
            chain.append(node.name())
            node = node.next_functions[0][0]
        (v * lib.arange(float(v.numel())).reshape(v.shape)).sum().backward()
        return v, chain, v._base is h, x.grad
    same(prog)


@pytest.mark.parametrize("expr", ["h[2, 0, 0]", "h[0, 0, 0, 0]", "h[::-1]"])
def test_bad_index_raises_the_same_type(expr):
    def prog(lib):
        h = lib.zeros(2, 3, 4)
        return eval(expr)
    same(prog)


def test_select_method_is_a_view():
    def prog(lib):
        h = lib.zeros(2, 3)
        v = h.select(1, -1)
        v.add_(1)
        return h, v.grad_fn
    same(prog)


# -- 5. a second backward through freed index nodes ----------------------------------------------------
SECOND_PASS = {
    "select": lambda h: h[0], "slice": lambda h: h[0:1], "list index": lambda h: h[[0, 1]],
    "mask index": lambda h: h[h > 0], "int pair": lambda h: h[0, 1], "unsqueeze": lambda h: h[None],
    "setitem int": "h[0] = 2.0", "setitem list": "h[[0]] = 2.0", "setitem from itself": "h[0] = h[1] * 1",
    "setitem mask": "h[h > 2] = 0.0", "fill_": "h.fill_(1.0)", "zero_": "h.zero_()", "copy_": "h.copy_(a * 2)",
    "view inplace": "h[:, 1].mul_(2)", "reshape": lambda h: h.reshape(-1), "transpose": lambda h: h.t(),
    "expand": lambda h: h[None].expand(3, 2, 2), "clone": lambda h: h.clone(),
}


@pytest.mark.parametrize("name", SECOND_PASS)
def test_second_backward_without_retain_graph(name):
    """Issue 10: indexing saved nothing, so a second backward succeeded where PyTorch raises.

    ``a + 0`` saves nothing (in both libraries), so only the node under test decides.
    """
    make = SECOND_PASS[name]

    def prog(lib):
        a = lib.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        h = a + 0
        if isinstance(make, str):
            exec(make)
            y = h.sum()
        else:
            y = make(h).sum()
        y.backward()
        first = a.grad.clone()
        y.backward()
        return first, a.grad
    same(prog)


# -- 9. in-place operations on views: the base's history is rewritten (CopySlices) ----------------
def test_inplace_on_a_column_view():
    """Issue 10: `h = x * 1; h[:, 1].mul_(2); h.sum().backward()` raised in minigrad."""
    def prog(lib):
        x = lib.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        h = x * 1
        v = h[:, 1]
        v.mul_(2)
        names = h.grad_fn.name(), h._version, v._version
        (h * lib.tensor([[1., 2.], [3., 4.]])).sum().backward()
        return h, names, x.grad
    same(prog)


def test_setitem_on_a_graph_tensor():
    """Issue 10 (section 2, last item's example): PyTorch gives x.grad == [[1, 2], [1, 2]]."""
    def prog(lib):
        x = lib.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        h = x * 1
        h[:, 1] = h[:, 1] * 2
        h.sum().backward()
        return h, h.grad_fn.name(), x.grad
    same(prog)


def test_inplace_on_a_view_of_a_view_and_the_views_after_it():
    def prog(lib):
        x = lib.ones(4, requires_grad=True)
        h = x * 1
        v = h[1:]
        vv = v[1:]
        vv.mul_(3)
        out = (h * lib.arange(4.)).sum() + (v * 10).sum() + (vv * 100).sum()
        out.backward()
        return h, v, vv, x.grad
    same(prog)


def test_view_used_after_its_base_changed_in_place():
    def prog(lib):
        x = lib.ones(4, requires_grad=True)
        h = x * 1
        v = h[1:]
        vv = v[1:]
        h.mul_(2)
        vv.sum().backward()
        return vv, x.grad
    same(prog)


def test_view_of_a_base_that_got_its_history_from_another_view():
    def prog(lib):
        w = lib.ones(2, requires_grad=True)
        b = lib.zeros(3)
        v, v2 = b[:2], b[1:]
        v.add_(w * 3)
        flags = b.requires_grad, v2.requires_grad, v2.is_leaf
        (v2 * lib.tensor([10., 100.])).sum().backward()
        return flags, b, w.grad
    same(prog)


def test_inplace_on_a_transposed_view():
    def prog(lib):
        x = lib.ones(2, 3, requires_grad=True)
        h = x * 1
        t = h.t()
        t[0].mul_(lib.tensor([1., 2.]))
        (h * lib.arange(6.).reshape(2, 3)).sum().backward()
        return h, x.grad
    same(prog)


def test_inplace_on_a_reshaped_view_with_gradient_from_a_transpose():
    def prog(lib):
        x = lib.arange(6.).requires_grad_()
        h = x * 1
        v = h.view(2, 3)
        v[1].mul_(lib.tensor([1., 2., 3.]))
        (h.view(3, 2).t() * lib.arange(6.).reshape(2, 3)).sum().backward()
        return h, x.grad
    same(prog)


def test_create_graph_through_an_inplace_view_update():
    def prog(lib):
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        h = x * x
        h[1:].mul_(x[1:])
        g, = lib.autograd.grad(h.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return h, g, gg
    same(prog)


@pytest.mark.parametrize("case", ["leaf view", "no_grad view", "custom Function output", "returned input",
                                  "expanded view", "leaf setitem", "leaf setitem list"])
def test_refused_inplace_operations_on_views(case):
    def prog(lib):
        leaf = lib.ones(4, requires_grad=True)

        class Ident(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        class ViewOut(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return x[1:]

            @staticmethod
            def backward(ctx, g):
                return lib.cat([lib.zeros(1), g])

        h = leaf * 1
        if case == "leaf view":
            leaf[0].mul_(2)
        elif case == "no_grad view":
            with lib.no_grad():
                v = h[0]
            v.mul_(2)
        elif case == "custom Function output":
            ViewOut.apply(h).mul_(2)
        elif case == "returned input":
            Ident.apply(h).mul_(2)
        elif case == "expanded view":
            h.expand(3, 4).mul_(2)
        elif case == "leaf setitem":
            leaf[0] = 3.0
        elif case == "leaf setitem list":
            leaf[[0]] = 3.0
        return h
    same(prog)


def test_no_grad_view_of_a_base_without_history_then_a_recorded_inplace_raises():
    def prog(lib):
        w = lib.ones(2, requires_grad=True)
        b = lib.zeros(3)
        with lib.no_grad():
            v = b[:2]
        v.add_(w)
    same(prog)


def test_inplace_on_a_view_under_no_grad_is_not_recorded():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        h = x * 2
        with lib.no_grad():
            h[0].mul_(5)
        name = h.grad_fn.name()
        h.sum().backward()
        return h, name, x.grad
    same(prog)


def test_hooks_and_retain_grad_on_a_base_rewritten_through_a_view():
    def prog(lib):
        log = []
        x = lib.ones(3, requires_grad=True)
        h = x * 1
        h.register_hook(lambda g: log.append(("old", g.tolist())))
        h.retain_grad()
        h[1:].mul_(lib.tensor([2., 3.]))
        h.register_hook(lambda g: log.append(("new", g.tolist())))
        (h * lib.tensor([1., 10., 100.])).sum().backward()
        return log, h.grad, x.grad
    same(prog)


def test_backward_inputs_with_a_non_leaf_retains_its_grad():
    """Found by the differential tester (F-1): torch calls retain_grad on non-leaf inputs."""
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        b = a * 2
        c = a.clone()
        (b * 3).sum().backward(inputs=[b, c])
        return b.grad, c.grad, b.retains_grad, c.retains_grad, a.grad
    same(prog)


def test_inplace_on_an_empty_expanded_tensor():
    """Found by the differential tester (F-4): nothing is written, so nothing to refuse."""
    def prog(lib):
        x = lib.ones(1)
        e = x.expand(0)
        e.fill_(3.0)
        return x, e
    same(prog)


def test_setitem_with_a_value_of_the_wrong_shape():
    """Found by the differential tester (F-5): NumPy's ValueError escaped; torch raises RuntimeError."""
    def prog(lib):
        x = lib.zeros(2)
        x[[0, 1]] = lib.ones(3)
    same(prog)
    def prog2(lib):
        x = lib.zeros(2)
        x[:] = lib.ones(3)
    same(prog2)


# -- 7. mark_dirty, validated as PyTorch validates it --------------------------------------------
def _dirty_functions(lib):
    class Double(fn(lib)):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class DoubleTwoOutputs(fn(lib)):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x, x * 3

        @staticmethod
        def backward(ctx, g, g2):
            return g * 2 + g2 * 3

    class DirtyNotInput(fn(lib)):
        @staticmethod
        def forward(ctx, x):
            y = lib.ones(1)
            ctx.mark_dirty(y)
            return x * 2, y

        @staticmethod
        def backward(ctx, g, g2):
            return g * 2

    class MulInto(fn(lib)):
        @staticmethod
        def forward(ctx, x, y):
            x.mul_(y)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x, y)
            return x

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x / y

    return Double, DoubleTwoOutputs, DirtyNotInput, MulInto


@pytest.mark.parametrize("case", [
    "leaf", "leaf under no_grad", "view of leaf", "view of leaf under no_grad", "view with two outputs",
    "view with two outputs, nothing recorded", "non-view with two outputs", "not an input", "view of a graph tensor",
    "view of a base without history", "saved dirty input",
])
def test_mark_dirty_validation_and_results(case):
    def prog(lib):
        Double, DoubleTwoOutputs, DirtyNotInput, MulInto = _dirty_functions(lib)
        leaf = lib.ones(3, requires_grad=True)
        if case == "leaf":
            return Double.apply(leaf)
        if case == "leaf under no_grad":
            with lib.no_grad():
                Double.apply(leaf)
            return leaf, leaf._version
        if case == "view of leaf":
            return Double.apply(leaf[:2])
        if case == "view of leaf under no_grad":
            with lib.no_grad():
                Double.apply(leaf[:2])
            return leaf
        if case == "view with two outputs":
            return DoubleTwoOutputs.apply((leaf * 1)[:2])
        if case == "view with two outputs, nothing recorded":
            b = lib.ones(3)
            return DoubleTwoOutputs.apply(b[:2]), b
        if case == "non-view with two outputs":
            h = leaf * 1
            out, tripled = DoubleTwoOutputs.apply(h)
            (out.sum() + tripled.sum()).backward()
            return out is h, h.grad_fn.name(), leaf.grad
        if case == "not an input":
            out = DirtyNotInput.apply(leaf)
            return out, [o.grad_fn.name() for o in out]
        if case == "view of a graph tensor":
            b = leaf * 1
            v = b[:2]
            out = Double.apply(v)
            names = out is v, b.grad_fn.name(), b._version
            (b * lib.tensor([1., 2., 3.])).sum().backward()
            return names, b, leaf.grad
        if case == "view of a base without history":
            w = lib.tensor([2., 3.], requires_grad=True)
            b = lib.ones(3)
            v = b[1:]
            out = MulInto.apply(v, w)
            flags = out is v, b.requires_grad, b.grad_fn.name()
            (b * lib.tensor([1., 10., 100.])).sum().backward()
            return flags, b, w.grad
        if case == "saved dirty input":
            w = lib.tensor([2., 3.], requires_grad=True)
            h = leaf[:2] * 3
            MulInto.apply(h, w)
            h.sum().backward()
            return h, leaf.grad, w.grad
    same(prog)


def test_mark_dirty_of_a_tensor_that_is_not_an_input_warns():
    _, _, DirtyNotInput, _ = _dirty_functions(minigrad)
    with pytest.warns(UserWarning, match="not an input"):
        DirtyNotInput.apply(minigrad.ones(1, requires_grad=True))


def test_mark_dirty_keeps_old_hooks_and_moves_retain_grad():
    def prog(lib):
        Double = _dirty_functions(lib)[0]
        log = []
        a = lib.ones(2, requires_grad=True)
        h = a * 1
        h.retain_grad()
        h.register_hook(lambda g: log.append(("old", g.tolist())))
        out = Double.apply(h)
        h.register_hook(lambda g: log.append(("new", g.tolist())))
        (h * 3).sum().backward()
        return out is h, log, h.grad, a.grad
    same(prog)


# -- a custom Function's backward runs even when no gradient reached it --------------------------
def test_custom_function_that_receives_no_gradient_still_runs():
    def prog(lib):
        log = []

        class Loud(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                log.append(g.tolist())
                return g * 2

        class Quiet(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                log.append(g)
                return None if g is None else g * 2

        class Stop(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return None

        x, y, z = (lib.ones(2, requires_grad=True) for _ in range(3))
        Stop.apply(Loud.apply(x)).sum().backward()
        Stop.apply(Quiet.apply(y)).sum().backward()
        Stop.apply(z.exp()).sum().backward()
        return log, x.grad, y.grad, z.grad
    same(prog)


def test_a_view_used_directly_after_its_base_got_a_history():
    def prog(lib):
        w = lib.tensor([2., 3., 4.], requires_grad=True)
        b = lib.ones(3)
        v = b[1:]
        b.mul_(w)
        (v * lib.tensor([10., 100.])).sum().backward()
        return v, w.grad
    same(prog)


@pytest.mark.parametrize("base_history", [False, True])
def test_no_grad_view_whose_base_changes_in_grad_mode_raises(base_history):
    def prog(lib):
        w = lib.ones(3, requires_grad=True)
        b = w * 1 if base_history else lib.ones(3)
        with lib.no_grad():
            v = b[:2]
        b.mul_(w)
        return v * 2
    same(prog)


def test_view_history_after_inplace_is_one_as_strided_node():
    def prog(lib):
        x = lib.ones(2, 3, requires_grad=True)
        h = x * 1
        v = h.t()[1:]
        v.mul_(lib.tensor([[2., 3.], [4., 5.]]))
        names = v.grad_fn.name(), v.grad_fn.next_functions[0][0].name()
        g, = lib.autograd.grad((v * v).sum() + h.sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        return names, g, gg
    same(prog)


@pytest.mark.parametrize("base_requires_grad", [False, True])
def test_detach_in_place_refuses_views(base_requires_grad):
    def prog(lib):
        w = lib.ones(3, requires_grad=True)
        h = w * 1 if base_requires_grad else lib.ones(3)
        h[:2].detach_()
    same(prog)


def test_detach_in_place_of_a_non_view():
    def prog(lib):
        w = lib.ones(3, requires_grad=True)
        h = w * 1
        h.detach_()
        return h.requires_grad, h.grad_fn, h.is_leaf
    same(prog)


def test_stale_no_grad_view_used_under_no_grad_is_fine():
    def prog(lib):
        w = lib.ones(3, requires_grad=True)
        h = w * 1
        with lib.no_grad():
            v = h[:2]
        h.mul_(2)
        with lib.no_grad():
            return v * 2
    same(prog)


def test_backward_with_inputs_accumulates_in_place_like_plain_backward():
    """Found by the differential tester (F-13)."""
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        (x * 2).sum().backward()
        old = x.grad
        (x * 3).sum().backward(inputs=[x])
        return old, old is x.grad
    same(prog)


def test_inplace_on_an_expand_that_repeats_nothing():
    """Found by the differential tester (F-4b): all strides are real, so writing is allowed."""
    def prog(lib):
        x = lib.tensor([[1., 5., 3.]])
        e = x.expand(1, 3)
        e.clamp_(2, 4)
        f = x.expand(1, 1, 3)
        f.add_(1)
        return x
    same(prog)


@pytest.mark.parametrize("read", ["is_leaf", "grad_fn in an op"])
def test_custom_function_view_output_after_its_base_changed(read):
    """Found by the differential tester (F-10): PyTorch refuses to rebuild it."""
    def prog(lib):
        class Ident(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        w = lib.ones(2, requires_grad=True)
        h = w * 1
        out = Ident.apply(h)
        h.mul_(2)
        return out.is_leaf if read == "is_leaf" else out * 2
    same(prog)


@pytest.mark.parametrize("write", [
    "x[[0]] = x[1:2]", "x[[0, 1, 2, 3]] = x", "x[0:3] = x[1:]", "x[:] = x", "x.copy_(x)", "x[:3].copy_(x[1:])",
    "x.copy_(x.detach())", "x[:2].copy_(x[2:])", "x[:3].mul_(x[1:])", "x[[0]] = x[3:]", "x.add_(x)",
])
def test_overlapping_in_place_writes(write):
    """Found by the differential tester (F-12): PyTorch refuses partial overlaps (any overlap for index_put_)."""
    def prog(lib):
        x = lib.arange(4.)
        exec(write)
        return x
    same(prog)


def test_iterating_gives_unbind_views():
    def prog(lib):
        x = lib.ones(2, 2, requires_grad=True)
        rows = list(x * 1)
        names = [r.grad_fn.name() for r in rows]
        b = lib.zeros(2, 2)
        for r in b:
            r.add_(1)
        rows[0].mul_(2)
        return names, b
    same(prog)


def test_tensor_hooks_see_none_where_no_gradient_arrives():
    """Found by the differential tester (F-14): PyTorch visits every node of the graph, and calls the
    hooks of outputs that got no gradient with None."""
    def prog(lib):
        log = []

        class Stop(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return None

        x = lib.ones(2, requires_grad=True)
        x.register_hook(lambda g: log.append(("leaf", g)))
        h = x * 1
        h.register_hook(lambda g: log.append(("h", g)))
        Stop.apply(h).sum().backward()
        a, b = (x * 1).unbind(0)
        b.register_hook(lambda g: log.append(("unused unbind output", g)))
        (a * 3).backward()
        return log, x.grad
    same(prog)


@pytest.mark.parametrize("seed_dtype", ["float64", "int64", "float32"])
def test_grad_outputs_take_the_outputs_dtype(seed_dtype):
    """Found by the differential tester: a float64 seed for a float32 output gave a float64 gradient."""
    def prog(lib):
        x = lib.tensor(1.5, requires_grad=True)
        seed = lib.tensor(2, dtype=getattr(lib, seed_dtype))
        g1, = lib.autograd.grad(x, [x], seed)
        g2, = lib.autograd.grad(x * 2, [x], seed)
        return g1, g2, str(g1.dtype).split(".")[-1], str(g2.dtype).split(".")[-1]
    same(prog)


@pytest.mark.parametrize("write", [
    "v = x[0][None]; v[None] = x[0]", "x[:2].copy_(x[0])", "m[:, 1].copy_(m[:, 0])", "m.t().copy_(m)",
    "m[0].copy_(m.t()[0])", "m[:, :1] = m[:, 1:2]", "y = x[:1]; y[None] = y", "y = x[:1]; y[None] = y[0]",
])
def test_overlap_check_only_for_dense_operands(write):
    """Found by the differential tester: PyTorch skips its overlap check when an operand is not dense."""
    def prog(lib):
        x = lib.arange(4.)
        m = lib.arange(4.).reshape(2, 2)
        exec(write)
        return x, m
    same(prog)


# -- 10. a view's hooks, retain_grad and node hooks across in-place changes ------------------------
# PyTorch's rule (VariableHooks::grad_fn, update_tensor_hooks_on_new_gradfn): a tensor keeps one dict of
# hooks, attached to the grad_fn it has when the first hook is registered. When a view's history is taken
# again (its base or another view of it was modified in place, with or without grad mode), it gets a new
# AsStridedBackward0 node, lazily: at the next look at its history. The old hooks stay with the old node,
# which backward no longer reaches; retain_grad moves to the new node. Each program was checked on torch.
def _logging_hook(log, name, factor=None):
    """A hook that logs its gradient and, with ``factor``, scales it (so a wrongly fired hook shows in .grad)."""
    def hook(g):
        log.append((name, g.tolist()))
        return None if factor is None else g * factor
    return hook


@pytest.mark.parametrize("grad_mode", [True, False])
def test_hook_on_a_view_stays_with_its_old_node_after_in_place_on_the_base(grad_mode):
    """The second hook is registered before anything looks at the view's history again: it joins the old
    dict too (PyTorch's laziness), so neither fires."""
    def prog(lib):
        log = []
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        v = h[:2]
        v.register_hook(_logging_hook(log, "A", 2.))
        with lib.set_grad_enabled(grad_mode):
            h.mul_(2)
        v.register_hook(_logging_hook(log, "B", 3.))
        (v * lib.tensor([1., 10.])).sum().backward()
        return log, x.grad, v.grad_fn.name()
    same(prog)


@pytest.mark.parametrize("look", ["is_leaf", "an op"])
def test_hook_registered_after_the_view_was_looked_at_goes_to_the_new_node(look):
    def prog(lib):
        log = []
        x = lib.tensor([1., 2.], requires_grad=True)
        h = x * 1
        v = h[:1]
        v.register_hook(_logging_hook(log, "A", 2.))
        h.mul_(2)
        y = v * 5 if look == "an op" else (v.is_leaf, v * 5)[1]
        v.register_hook(_logging_hook(log, "B", 3.))
        y.sum().backward()
        return log, x.grad
    same(prog)


def test_hook_on_the_base_still_fires_with_the_base_in_place_gradient():
    def prog(lib):
        log = []
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        v = h[:2]
        v.register_hook(_logging_hook(log, "view"))
        h.mul_(2)
        (h * lib.tensor([1., 10., 100.])).sum().backward()
        return log, x.grad
    same(prog)


@pytest.mark.parametrize("root", ["base", "view"])
def test_hooks_before_an_in_place_op_on_the_view_itself_never_fire(root):
    """minigrad's old in-place path went through the view's old node, so hook A doubled the gradient."""
    def prog(lib):
        log = []
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        v = h[1:]
        v.register_hook(_logging_hook(log, "A", 2.))
        v.mul_(3)
        v.register_hook(_logging_hook(log, "B", 5.))
        out = h * lib.tensor([1., 10., 100.]) if root == "base" else v * lib.tensor([10., 100.])
        out.sum().backward()
        return log, x.grad, v.grad_fn.name(), h.grad_fn.name()
    same(prog)


def test_hook_on_a_view_after_in_place_on_the_view_under_no_grad():
    def prog(lib):
        log = []
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        v = (x * 1)[1:]
        v.register_hook(_logging_hook(log, "A", 2.))
        with lib.no_grad():
            v.mul_(3)
        v.register_hook(_logging_hook(log, "B", 5.))
        (v * lib.tensor([10., 100.])).sum().backward()
        return log, x.grad
    same(prog)


@pytest.mark.parametrize("changed", ["outer view", "inner view"])
def test_hooks_and_retain_grad_on_a_view_of_a_view(changed):
    def prog(lib):
        log = []
        x = lib.tensor([1., 2., 3., 4.], requires_grad=True)
        h = x * 1
        v = h[1:]
        w = v[1:]
        w.register_hook(_logging_hook(log, "W"))
        v.register_hook(_logging_hook(log, "V"))
        w.retain_grad()
        v.retain_grad()
        (v if changed == "outer view" else w).mul_(2)
        v.register_hook(_logging_hook(log, "V2"))
        w.register_hook(_logging_hook(log, "W2"))
        (v * lib.tensor([1., 10., 100.])).sum().backward(retain_graph=True)
        (w * lib.tensor([1000., 10000.])).sum().backward()
        return log, x.grad, w.grad, v.grad, w.grad_fn.name(), v.grad_fn.name()
    same(prog)


def test_removing_hooks_after_the_view_was_regenerated():
    """A handle removes its hook from whichever dict holds it, old node or new."""
    def prog(lib):
        log = []
        x = lib.tensor([1., 2.], requires_grad=True)
        h = x * 1
        v = h[:1]
        a = v.register_hook(_logging_hook(log, "A"))
        h.mul_(2)
        v.grad_fn  # noqa: B018 - looking at the history takes the view again
        b = v.register_hook(_logging_hook(log, "B"))
        v.register_hook(_logging_hook(log, "C"))
        a.remove()
        b.remove()
        v.sum().backward()
        return log, x.grad
    same(prog)


def test_hook_on_a_view_of_a_leaf_after_the_leaf_changed_under_no_grad():
    def prog(lib):
        log = []
        x = lib.tensor([1., 2.], requires_grad=True)
        v = x[:1]
        v.register_hook(_logging_hook(log, "A", 2.))
        with lib.no_grad():
            x.mul_(2)
        v.register_hook(_logging_hook(log, "B", 3.))
        v.sum().backward()
        return log, x.grad, v.grad_fn.name()
    same(prog)


def test_hook_on_a_view_taken_under_no_grad_of_a_leaf():
    def prog(lib):
        log = []
        x = lib.tensor([1., 2.], requires_grad=True)
        with lib.no_grad():
            v = x[:1]
        v.register_hook(_logging_hook(log, "A", 2.))
        (v * 3).sum().backward()
        return log, x.grad, v.grad, v.is_leaf, v.requires_grad
    same(prog)


@pytest.mark.parametrize("change", ["base, grad mode", "base, no_grad", "leaf, no_grad", "view itself",
                                    "sibling view"])
def test_retain_grad_of_a_view_follows_it_to_its_new_node(change):
    """F-23 and variants: the view's .grad is the gradient of its current values."""
    def prog(lib):
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        h = x * 1
        v = (x if change == "leaf, no_grad" else h)[:2]
        v.retain_grad()
        if change == "base, grad mode":
            h.mul_(2)
        elif change == "view itself":
            v.mul_(2)
        elif change == "sibling view":
            h[1:].mul_(10)
        else:
            with lib.no_grad():
                (x if change == "leaf, no_grad" else h).mul_(2)
        (v * lib.tensor([3., 30.])).sum().backward()
        return v.grad, v.retains_grad, x.grad, v.grad_fn.name()
    same(prog)


def test_retained_grad_of_a_view_is_kept_across_its_regeneration():
    def prog(lib):
        x = lib.tensor([1., 2.], requires_grad=True)
        h = x * 1
        v = h[:1]
        v.retain_grad()
        (v * 3).sum().backward(retain_graph=True)
        first = v.grad.clone()
        h.mul_(2)
        kept = (v.grad.clone(), v.retains_grad)
        (v * 5).sum().backward()
        return first, kept, v.grad, x.grad
    same(prog)


def test_retain_grad_of_a_view_changed_in_place_then_backward_of_its_base():
    """The view's new node is not in the base's backward graph: its .grad stays None."""
    def prog(lib):
        x = lib.tensor([1., 2.], requires_grad=True)
        h = x * 1
        v = h[:1]
        v.retain_grad()
        v.mul_(2)
        (h * 5).sum().backward()
        return v.grad, v.retains_grad, x.grad
    same(prog)


def test_node_hooks_on_a_view_s_old_grad_fn_do_not_fire():
    """F-27's variant with grad mode on; a node hook registered on the old node never fires."""
    def prog(lib):
        log = []
        x = lib.tensor([1., 2.], requires_grad=True)
        h = x * 1
        v = h[:1]
        v.grad_fn.register_prehook(lambda grad_outputs: log.append("pre"))
        v.grad_fn.register_hook(lambda grad_inputs, grad_outputs: log.append("post"))
        h.mul_(2)
        v.sum().backward()
        return log, x.grad
    same(prog)


@pytest.mark.parametrize("dirty", ["non-leaf", "view"])
def test_mark_dirty_drops_the_retained_grad_and_keeps_old_hooks(dirty):
    """F-26: a custom Function's mark_dirty resets a retained .grad (a built-in in-place op keeps it)."""
    def prog(lib):
        Double = _dirty_functions(lib)[0]
        log = []
        a = lib.tensor([1., 2.], requires_grad=True)
        h = a * 1
        t = h if dirty == "non-leaf" else h[:1]
        t.retain_grad()
        t.register_hook(_logging_hook(log, "old", 7.))
        t.sum().backward(retain_graph=True)
        before = t.grad.clone()
        Double.apply(t)
        after = (t.grad, t.retains_grad, t.grad_fn.name())
        t.register_hook(_logging_hook(log, "new", 5.))
        (t * 3).sum().backward()
        return before, after, t.grad, a.grad, log
    same(prog)


def test_a_built_in_in_place_op_keeps_the_retained_grad():
    def prog(lib):
        a = lib.tensor([1.], requires_grad=True)
        y = a.sum()
        y.retain_grad()
        y.backward(retain_graph=True)
        y.mul_(2)
        return y.grad, y.retains_grad
    same(prog)


@pytest.mark.parametrize("change", ["detach_ then requires_grad_", "a leaf gets a history"])
def test_which_hooks_a_tensor_keeps_when_it_becomes_a_leaf_or_gets_a_history(change):
    """PyTorch's quirks, matched: detach_() keeps the tensor's hook dict (so the old hook fires on the new
    leaf); an in-place op that gives a tensor its first history starts a new dict."""
    def prog(lib):
        log = []
        w = lib.tensor([1.], requires_grad=True)
        t = w * 1 if change == "detach_ then requires_grad_" else lib.tensor([1.], requires_grad=True)
        t.register_hook(_logging_hook(log, "A"))
        if change == "detach_ then requires_grad_":
            t.detach_()
            t.requires_grad_()
        else:
            t.requires_grad_(False)
            t.add_(w)
        t.register_hook(_logging_hook(log, "B"))
        (t * 2).sum().backward()
        return log, w.grad, t.grad if t.is_leaf else None
    same(prog)


# -- 11. refusals and permissions of in-place writes on views -----------------------------------
# PyTorch's rules, each probed on torch: a view's history is stale once the version counter it shares
# with its base moved (any in-place write on the base, the view or a sibling, recorded or not); reading
# .is_leaf / .grad_fn or using it then takes it again from the base, or refuses a view that cannot be
# (a custom Function's output, a view op with several outputs, a view made under no_grad).
# .requires_grad never refuses: a view requires grad when its base does.
_UNREPLAYABLE = {
    "custom Function": lambda lib, h: [_IdentityFunction(lib).apply(h)],
    "unbind": lambda lib, h: list(h.unbind(0)),
    "split": lambda lib, h: list(h.split(1)),
    "chunk into one": lambda lib, h: list(h.chunk(1)),
    "split of an empty slice": lambda lib, h: list(h[:0].split(1)),
    "a view made under no_grad": lambda lib, h: [_under_no_grad(lib, lambda: h[0])],
}
_CHANGES = {
    "base, grad mode": lambda lib, h, views: h.mul_(2),
    "base, no_grad": lambda lib, h, views: _under_no_grad(lib, lambda: h.mul_(2)),
    "first view, no_grad": lambda lib, h, views: _under_no_grad(lib, lambda: views[0].mul_(2)),
    "through detach()": lambda lib, h, views: h.detach().mul_(2),
}


def _IdentityFunction(lib):
    class Ident(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g
    return Ident


def _under_no_grad(lib, fn):
    with lib.no_grad():
        return fn()


def _first_sentence_or_ok(fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e).split(". ")[0]
    return "ok"


@pytest.mark.parametrize("change", sorted(_CHANGES))
@pytest.mark.parametrize("make", sorted(_UNREPLAYABLE))
def test_unreplayable_view_is_refused_once_its_memory_changed(make, change):
    """F-10, F-16: PyTorch refuses these views at the next look at their history, with its message."""
    def prog(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        h = x * 1
        views = _UNREPLAYABLE[make](lib, h)
        fresh = [v.is_leaf for v in views]  # before the change: no refusal
        _CHANGES[change](lib, h, views)
        return fresh, [v.requires_grad for v in views], [_first_sentence_or_ok(lambda: v.is_leaf) for v in views], \
            [_first_sentence_or_ok(lambda: v * 2) for v in views]
    same(prog)


@pytest.mark.parametrize("change", sorted(_CHANGES))
def test_an_ordinary_view_is_taken_again_after_any_change(change):
    """The same changes on a plain slice: its history is rebuilt from the base (AsStridedBackward0)."""
    def prog(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        h = x * 1
        v = h[1]
        _CHANGES[change](lib, h, [v])
        (v * lib.tensor([5.0, 7.0])).sum().backward()
        return v.grad_fn.name(), x.grad
    same(prog)


def test_a_view_taken_under_no_grad_requires_grad_with_no_edge():
    """PyTorch: a view of a tensor that requires grad requires grad too, even one taken under no_grad;
    an op on it records a node whose edge to it leads nowhere."""
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            v = x[0]
        y = v * 2
        y.backward()
        return v.requires_grad, v.is_leaf, y.requires_grad, x.grad
    same(prog)


# F-17, F-4c, F-4d: overlap. A write may not read memory it partly overwrites, nor write into memory that
# repeats (an expand()), except: a setitem value is first viewed without its leading 1s and expanded to
# the target (x[None] = x is then the same memory, allowed); a 0-d value (and fill_'s) is read first; an
# expand() may be filled with a number, and written through advanced setitem with a warning, when the
# write is not recorded; one element of an expand() is an ordinary tensor.
@pytest.mark.parametrize("write", [
    "x[None] = x", "m[None] = m", "x[None][:] = x", "m[0:1] = m[0]", "m[:] = m[0]", "x[None].copy_(x)",
    "x[None].add_(x)", "m.copy_(m[0])", "m[None] = m[None, None]", "x.fill_(x[0])", "x.fill_(x[:1])",
    "x[:1].copy_(x[0])", "x[:1] = x[0]", "x.add_(x[0])", "m[:, None] = m.view(2, 1, 2)", "x[1:] = x[None, :1]",
    "m[None, 0:1] = m[0:1]", "y = x[:1].view(1, 1); y[::2, :] = y", "y = x[:1]; y[None] = y",
    "y = x[0].reshape(1, 1); y[0] = x[0].expand(1)", "m[0:1].copy_(m[0].expand(1, 2))",
])
def test_setitem_views_its_value_as_pytorch_does(write):
    def prog(lib):
        x = lib.arange(4.0)
        m = lib.arange(4.0).reshape(2, 2)
        with lib.no_grad():
            exec(write)
        return x, m
    same(prog)


@pytest.mark.parametrize("grad_mode", [False, True])
@pytest.mark.parametrize("write", [
    "e.zero_()", "e.fill_(2.0)", "e.fill_(v)", "e.mul_(2.0)", "e.clamp_(0.0, 0.5)", "e.copy_(lib.ones(3))",
    "e[1] = 2.0", "e[1] = v", "e[1:] = 2.0", "e[:] = 2.0", "e[[1]] = 2.0", "e[[1]] = v", "e[e > 0] = 2.0",
    "e[1].mul_(v)", "e2[0] = 5.0", "e2[:, 0] = 5.0", "e2[:, 0].mul_(5.0)", "e2[0, 1].mul_(v)",
    "e2[:, 1:2] = lib.tensor([[5.0], [6.0]])",
])
def test_writing_into_an_expand(write, grad_mode):
    def prog(lib):
        a = lib.tensor([1.0], requires_grad=True)
        h = a * 1
        e = h.expand(3)
        e2 = (lib.tensor([[1.0], [2.0]], requires_grad=True) * 1).expand(2, 3)
        v = lib.tensor(2.0, requires_grad=True)
        with lib.set_grad_enabled(grad_mode):
            exec(write)
        (h * 3).sum().backward()
        return e, e2, a.grad, v.grad
    same(prog)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("write", [
    "x[[0]] = value", "x[[0]] = value.reshape(1)", "x[lib.tensor([0])] = value", "x[mask] = value",
    "x[mask] = value.reshape(1)", "x[mask] = value.expand(2)", "x[0] = value", "x[lib.tensor(0)] = value",
    "x[True] = value", "x[[0]] = lib.tensor(1)", "x[[0]] = 1.5",
])
def test_advanced_setitem_wants_the_value_in_the_target_dtype(write, dtype):
    """F-18: index_put_ refuses another dtype; basic setitem and the bool-mask fast path cast it."""
    def prog(lib):
        x = lib.zeros(3, dtype=getattr(lib, dtype))
        value = lib.tensor(2.5, dtype=lib.float64 if dtype == "float32" else lib.float32)
        mask = lib.tensor([True, False, True])
        exec(write)
        return x, str(x.dtype).split(".")[-1]
    same(prog)


def test_fill_with_a_tensor_is_differentiable_in_the_value():
    def prog(lib):
        v = lib.tensor(3.0, requires_grad=True)
        h = lib.zeros(2, requires_grad=True) * 1
        h.fill_(v)
        g = h.grad_fn.name()
        h[0] = 2.0
        (h * lib.tensor([5.0, 7.0])).sum().backward()
        z = lib.ones(2, requires_grad=True) * 1
        return g, v.grad, z.zero_().grad_fn.name(), z.fill_(1.0).grad_fn.name()
    same(prog)


@pytest.mark.parametrize("returns", ["its input", "a slice of its input"])
@pytest.mark.parametrize("change", ["gets history", "is modified in place", "view itself gets history"])
def test_custom_function_output_when_nothing_was_recorded(returns, change):
    """F-30: with no input requiring grad, a custom Function's view output counts as made in no_grad
    mode by a custom Function: refused once its base (or itself) gets a history, not otherwise."""
    def prog(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x if returns == "its input" else x[:1]

            @staticmethod
            def backward(ctx, g):
                return g
        y = lib.zeros(2)
        v = F.apply(y)
        w = lib.ones(v.shape, requires_grad=True)
        outcome = _first_sentence_or_ok(lambda: y.add_(w.sum()) if change == "gets history"
                                        else y.add_(1.0) if change == "is modified in place" else v.add_(w))
        return v is y, outcome, _first_sentence_or_ok(lambda: v.is_leaf), y
    same(prog)


@pytest.mark.parametrize("write", [
    "x[:, [0]] = x", "x.add_(x)", "x.copy_(x)", "x[...] = x", "y = lib.zeros(0); y[[]] = y", "y = lib.zeros(0); y[y > 0] = y",
    "y = lib.zeros(1, 0); y[[0], :] = y", "y = lib.zeros(1, 0); y[[0]] = y", "y = lib.zeros(1, 2); y[[0]] = y",
])
def test_writing_an_empty_tensor_into_itself(write):
    """F-31: the same tensor is a full overlap whatever its size (refused only by index_put_)."""
    def prog(lib):
        x = lib.zeros(0, 1)
        exec(write)
        return x
    same(prog)


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("grad_mode", [False, True])
@pytest.mark.parametrize("of", ["a leaf that requires grad", "its slice", "its slice taken under no_grad", "a plain tensor"])
def test_numpy_of_a_tensor_that_requires_grad(of, grad_mode, force):
    """PyTorch refuses numpy() of a tensor that requires grad (a view does when its base does) in grad
    mode only, unless ``force=True``; the array shares the tensor's memory either way."""
    def prog(lib):
        w = lib.ones(2, requires_grad=of != "a plain tensor")
        with lib.no_grad():
            t = {"its slice taken under no_grad": lambda: w[:1]}.get(of, lambda: w)()
        if of == "its slice":
            t = w[:1]
        with lib.set_grad_enabled(grad_mode):
            array = t.numpy(force=True) if force else t.numpy()
        with lib.no_grad():
            w.add_(1)
        return list(array)
    same(prog)


@pytest.mark.parametrize("write", ["h[:] = 2.0", "h[...] = lib.tensor(3.0)", "h[0:5] = lib.ones(2)",
                                   "h[:] = lib.ones(1)", "h[0] = 2.0", "h[:1] = 2.0", "h[None] = lib.ones(2)"])
def test_setitem_of_the_whole_tensor_writes_the_tensor_itself(write):
    """PyTorch's setitem skips whole-dimension slices; with nothing left it is ``h.copy_(v)`` or
    ``h.fill_(v)`` on h itself (no CopySlices), so a second backward runs (nothing was saved)."""
    def prog(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        h = x.abs()
        exec(write, {"lib": lib, "h": h})
        h.sum().backward(retain_graph=True)
        first = x.grad.clone()
        try:
            h.sum().backward()
            again = x.grad
        except RuntimeError:
            again = "RuntimeError"
        return h.grad_fn.name(), first, again
    same(prog)


@pytest.mark.parametrize("view", ["e = h.expand(3, 2)", "e = h.expand(3, 2)[1:, :1]", "e = h.expand(3, 2).t()",
                                  "e = h.t().expand(2, 4)", "e = h[0].expand(2, 2)[:, 1]"])
@pytest.mark.parametrize("change", ["h.mul_(2)", "with lib.no_grad(): h.mul_(2)"])
def test_an_expand_view_regenerated_after_an_in_place_change_adds_up_its_gradient(view, change):
    """An expand() view of a tensor changed in place gets AsStridedBackward0; the gradients of the
    view's elements that are one element of the base add up (minigrad once kept only one of them)."""
    def prog(lib):
        x = lib.tensor([[1.0, 2.0]], requires_grad=True)
        scope = {"lib": lib, "h": x.clone()}
        exec(view + "\n" + change, scope)
        e = scope["e"]
        weights = lib.arange(1, e.numel() + 1, dtype=lib.float32).reshape(tuple(e.shape))
        (e * weights).sum().backward()
        return e.grad_fn.name(), x.grad
    same(prog)


@pytest.mark.parametrize("p", [2, 3, 1.5, 0.5, 1])
@pytest.mark.parametrize("values", [[0.0, 0.0], [1.0, -2.0], [0.0, 3.0]])
@pytest.mark.parametrize("upstream", [1.0, float("inf"), float("-inf"), float("nan")])
def test_norm_gradient_with_a_non_finite_upstream_gradient(p, values, upstream):
    """Term for term PyTorch's norm_backward: at a zero norm an infinite upstream gradient gives NaN."""
    def prog(lib):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        x.norm(p).backward(lib.tensor(upstream, dtype=lib.float64))
        return x.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        same(prog)


@pytest.mark.parametrize("which", ["pre", "post", "both"])
def test_node_hooks_of_nodes_no_gradient_reaches_are_called_with_none(which):
    """A custom backward returns None: the nodes behind it compute nothing, but PyTorch still calls
    their node hooks, with None for every gradient."""
    def prog(lib):
        class NoneGrad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return None

        log = []
        x = lib.ones(1, requires_grad=True)
        y = x.abs()
        w = y * 3
        for node in (y.grad_fn, w.grad_fn):
            if which in ("pre", "both"):
                node.register_prehook(lambda out, node=node: log.append(("pre", node.name(), out)))
            if which in ("post", "both"):
                node.register_hook(lambda inp, out, node=node: log.append(("post", node.name(), inp, out)))
        NoneGrad.apply(w).sum().backward()
        return log, x.grad
    same(prog)


@pytest.mark.parametrize("write", ["h[0] = 2.0", "h[:1] = 2.0", "h[None] = lib.ones(2)", "h[:1].mul_(w[:1])",
                                   "h.view(2, 1)[0].add_(w[0])", "h[1:].fill_(3.0)", "h[:1].exp_()",
                                   "h[:1].copy_(w[1:] * 2)", "h[1:].mul_(h[:1])"])
def test_copy_slices_edges_are_the_base_and_the_in_place_op_s_other_inputs(write):
    """PyTorch's CopySlices owns the in-place op's node: its edges are the base's old history and
    the op's other inputs (never the op's node), and its post-hooks see one gradient per edge."""
    def prog(lib):
        x = lib.ones(2, requires_grad=True)
        w = lib.tensor([2.0, 3.0], requires_grad=True)
        h = x.abs()
        exec(write, {"lib": lib, "h": h, "w": w})
        log = []
        h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: log.append(grad_inputs))
        (h * lib.tensor([1.0, 2.0])).sum().backward()
        edges = [None if node is None else node.name() for node, _ in h.grad_fn.next_functions]
        return h.grad_fn.name(), edges, log, x.grad, w.grad
    same(prog)


@pytest.mark.parametrize("write", ["r[:-1, [0, 1]] = x", "r[:, [0, 1]] = x", "m[1:, [0]] = m[0, :1]",
                                   "m[:1, [0, 1]] = m[1]", "m[[0], 1:] = m[0, :1]", "m[[0, 1]] = m[2]",
                                   "m[[0, 1]] = m[1]", "m[m > 2] = m[0, 0]", "m[m > 2] = m[0]",
                                   "m[True, [0]] = m[1]", "m[..., [0]] = m[:, 1:]", "m[:2, [1]] = m[1:, :1]"])
def test_advanced_setitem_checks_overlap_with_the_part_its_basic_entries_select(write):
    """PyTorch's setitem applies the key's basic entries first and index_put_s into that view, so the
    value may overlap the rest of the tensor (or nothing, for an empty part); a lone mask with a
    one-element value is masked_fill_, which reads the value first."""
    def prog(lib):
        x = lib.tensor([1.0, 2.0])
        scope = {"x": x, "r": x.reshape(1, 2), "m": lib.arange(6.0).reshape(3, 2)}
        exec(write, scope)
        return x, scope["m"]
    same(prog)


@pytest.mark.parametrize("join", ["cat", "stack"])
@pytest.mark.parametrize("inputs", ["expanded", "transposed"])
def test_cat_and_stack_give_contiguous_memory(join, inputs):
    """torch.cat and torch.stack write new contiguous memory whatever their inputs' layout, so the
    result can be .view()ed (NumPy may follow its inputs' layout)."""
    def prog(lib):
        a = lib.ones(1, 1, 2).expand(1, 2, 2) if inputs == "expanded" else lib.tensor([[1.0, 2.0], [3.0, 4.0]]).t()
        return getattr(lib, join)([a, a], 1).view(-1)
    same(prog)


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("write", ["e[...] = h", "e.copy_(h.expand(2, 2))", "e.copy_(e)", "e[:] = h", "e.copy_(h)",
                                   "h.copy_(h)", "e[0] = h"])
def test_copy_of_a_tensor_onto_its_own_memory(write, grad):
    """copy_ from exactly self's memory changes nothing and PyTorch returns before its overlap checks
    (so into an expand() of the same memory it is allowed); any other write into an expand() is refused."""
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=grad)
        h = x * 1 if grad else x
        e = h.expand(2, 2)
        exec(write, {"h": h, "e": e})
        return h, h._version, None if e.grad_fn is None else e.grad_fn.name()
    same(prog)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_result_is_contiguous_so_flatten_is_a_view(op, dim):
    """A write through ``flatten()`` of a softmax reaches the softmax (it was silently lost along dim 0)."""
    def prog(lib):
        s = getattr(lib.tensor([[1.0, 2.0], [3.0, 5.0]]), op)(dim)
        s.flatten().exp_()
        return s
    same(prog)


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_elu_is_one_node_and_twice_differentiable(alpha):
    """F.elu is PyTorch's EluBackward0 (one edge: a post-hook gets (g,)), its create_graph gradient
    EluBackwardBackward0; values and first and second derivatives at 0, -inf, NaN and far out."""
    def prog(lib):
        x = lib.tensor([-1.0, 0.0, 2.0, float("nan"), float("-inf"), -30.0, 100.0], requires_grad=True)
        y = lib.nn.functional.elu(x, alpha)
        log = []
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: log.append(len(grad_inputs)))
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return y, g, gg, y.grad_fn.name(), g.grad_fn.name(), log
    same(prog)


@pytest.mark.parametrize("expression", [
    "x * [2.0]", "x ** [2.0]", "[1.0] + x", "x < [1.0, 2.0, 3.0]", "x @ [1.0, 2.0, 3.0]", "x.mul([2.0])",
    "x.add((1.0, 2.0, 3.0))", "lib.add(x, [1.0])", "x.mul_([2.0])", "x.sub([1.0])", "x.div([1.0])", "x.pow([2.0])",
    "x.maximum([1.0])", "x.copy_([1.0, 2.0, 3.0])", "x.matmul([1.0, 2.0, 3.0])", "x.add(np.ones(3))",
    "x * np.ones(3)", "x.add(2)", "x.mul(np.float64(2))", "x.add_(1)", "x.pow(2)",
])
def test_a_list_is_not_an_operand(expression):
    """PyTorch refuses lists and tuples as operands (TypeError), and arrays in the method forms:
    code that ran on minigrad must run on torch, so minigrad refuses them too."""
    def prog(lib):
        x = lib.tensor([0.5, 1.5, 2.0])
        return eval(expression, {"lib": lib, "x": x, "np": np})
    same(prog)


@pytest.mark.parametrize("rows", [0, 1, 2])
@pytest.mark.parametrize("key", ["[:]", "[0:5]", "[:-1]", "[0:]", "[:2]", "[:1]", "[-5:]", "[0:0]", "[-1:]", "[:0]",
                                 "[:, :]", "[:, 0:]", "[-3:, :]", "[..., :-1]", "[:, -2:]"])
def test_which_slices_pytorch_skips(key, rows):
    """A slice is skipped (no SliceBackward0; setitem writes the tensor itself) when, as written, it
    starts at 0, steps by 1 and stops at or past the end: x[:-1] of an empty x is still a slice."""
    def prog(lib):
        h = lib.zeros(rows, 2, requires_grad=True) * 1
        read = eval("h" + key, {"h": h}).grad_fn.name()
        exec("h" + key + " = 1.0", {"h": h})
        return read, h.grad_fn.name()
    same(prog)


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("shape, dim, correction", [((), None, 1), ((1,), None, 1), ((3,), None, 1), ((2,), None, 2),
                                                    ((2,), None, 3), ((1,), 0, 1), ((0,), None, 1)])
def test_variance_gradient_with_no_degrees_of_freedom(op, shape, dim, correction):
    """PyTorch's var_backward over all elements with dof <= 0 is where(x == mean, nan, inf), a constant:
    under create_graph the gradient does not require grad (the long run's finding, seed 5010)."""
    def prog(lib):
        values = [1.0, 2.0, 4.0][:shape[0]] if shape else 1.0
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            v = getattr(x, op)(correction=correction) if dim is None else getattr(x, op)(dim, correction=correction)
        g, = lib.autograd.grad(v, x, create_graph=True)
        return g, g.requires_grad
    same(prog)


@pytest.mark.parametrize("input, exponent", [("2", "x"), ("2.5", "n"), ("x", "2"), ("x", "x"), ("n", "x"),
                                             ("2", "3")])
def test_top_level_pow_takes_a_number_on_either_side(input, exponent):
    """``torch.pow(2, x)`` is ``2 ** x`` (PowBackward2); two numbers are a TypeError."""
    def prog(lib):
        x = lib.tensor([0.5, 1.5, 2.0], requires_grad=True)
        n = lib.tensor([1, 2, 3])
        args = {"x": x, "n": n, "2": 2, "2.5": 2.5, "3": 3}
        y = lib.pow(args[input], args[exponent])
        if not y.requires_grad:
            return y, str(y.dtype).split(".")[-1]
        y.sum().backward()
        return y, x.grad, y.grad_fn.name(), str(y.dtype).split(".")[-1]
    same(prog)


# -- 12. what an in-place op saved of its own output is the tensor it wrote ---------------------------
@pytest.mark.parametrize("op", ["exp_", "sigmoid_", "tanh_", "sqrt_", "relu_"])
@pytest.mark.parametrize("then", ["abs_ under no_grad", "mul_ recorded", "nothing"])
@pytest.mark.parametrize("on", ["a tensor", "a view"])
def test_changing_the_result_of_an_inplace_op_before_backward(op, then, on):
    """F-36: exp_ (and the others that save their output) saved a separate result tensor, so a
    later in-place change of the tensor went unnoticed and backward used the old values; PyTorch
    refuses the backward (the saved output is at a newer version)."""
    def prog(lib):
        x = lib.tensor([0.5, 1.5, 2.0], dtype=lib.float64, requires_grad=True)
        h = x * 1
        t = h if on == "a tensor" else h[1:]
        getattr(t, op)()
        if then == "abs_ under no_grad":
            with lib.no_grad():
                t.abs_()
        elif then == "mul_ recorded":
            t.mul_(2)
        h.sum().backward()
        return x.grad
    same(prog)


# -- 13. what a custom Function gives back when its output gets no gradient --------------------------
def _custom_function(lib, name: str):
    """``identity`` returns its input as-is; ``double_`` doubles it in place (mark_dirty), and
    ``double_ non-differentiable`` also marks it non-differentiable."""
    if name == "identity":
        class Identity(fn(lib)):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        return Identity

    class DoubleInPlace(fn(lib)):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            if name == "double_ non-differentiable":
                ctx.mark_non_differentiable(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return DoubleInPlace


@pytest.mark.parametrize("function", ["identity", "double_", "double_ non-differentiable"])
@pytest.mark.parametrize("input", ["leaf requiring grad", "leaf", "non-leaf", "view of a non-leaf"])
@pytest.mark.parametrize("mode", ["no_grad", "grad"])
def test_a_custom_function_output_without_gradient_is_a_new_tensor_where_pytorch_makes_one(function, input, mode):
    """Issue 10: under no_grad, a custom Function returning its input as-is gave back the input
    itself; PyTorch returns a new tensor sharing its memory (a view if the input requires no
    grad, else a detached alias), so the input keeps its requires_grad and history. The same
    rule covers an input changed in place (mark_dirty) and also marked non-differentiable,
    with grad mode on too, where minigrad returned the input with a gradient (or refused a leaf)."""
    def prog(lib):
        leaf = lib.tensor([1., 2., 3.], requires_grad=input != "leaf")
        x = {"leaf requiring grad": leaf, "leaf": leaf, "non-leaf": leaf * 1, "view of a non-leaf": (leaf * 1)[:2]}[input]
        with (lib.no_grad() if mode == "no_grad" else lib.enable_grad()):
            y = _custom_function(lib, function).apply(x)
        facts = [y is x, y.requires_grad, y.is_leaf, y._base is x, y._base is None, x.requires_grad, x._version]
        with lib.no_grad():
            y.add_(10)  # shares x's memory and version counter
        facts += [x.detach().clone(), x._version == y._version]
        if x.requires_grad:  # x keeps its own history
            x.sum().backward()
            facts.append(leaf.grad)
        return facts
    same(prog)


def test_forward_ops_are_silent_on_inf_and_nan_where_numpy_would_warn():
    """PyTorch says nothing for log(-1), 0/0 or inf - inf; minigrad's ops printed NumPy's RuntimeWarnings.
    Run in a fresh interpreter with every warning shown (``-W always``): a learner's own NumPy call
    still warns (the control), minigrad's ops do not."""
    import subprocess
    import sys

    program = (
        "import numpy as np, minigrad\n"
        "x = minigrad.tensor([-1.0, 0.0, float('inf'), float('nan')], requires_grad=True)\n"
        "y = x.log() + x.sqrt() + x / 0 + x * float('inf') + x.sigmoid() + x.exp() - x + x.pow(0.5) + x.log1p()\n"
        "y.sum().backward()\n"
        "np.log(np.array([-1.0]))  # the learner's own NumPy: warns\n"
    )
    done = subprocess.run([sys.executable, "-W", "always", "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == 1 and warned[0].startswith("<string>:5"), done.stderr


def test_backward_is_silent_where_numpy_would_warn():
    """Issue 10: an infinite gradient times a zero gives NaN, as in PyTorch, which says nothing;
    minigrad's backward printed NumPy's "invalid value encountered in multiply" RuntimeWarning."""
    def prog(lib):
        x = lib.tensor([0., 1., 2.], requires_grad=True)
        w = lib.tensor([0., 1e30, 1e-30], requires_grad=True)
        y = x * w
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y.backward(lib.tensor([float("inf"), 1e30, float("nan")]))
        return x.grad, w.grad
    same(prog)


# -- 14. regression losses: broadcast first, one node, PyTorch's weighted mean -------------------------
@pytest.mark.parametrize("loss, options", [("mse_loss", {}), ("l1_loss", {}), ("huber_loss", {"delta": 0.3}),
                                           ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.0}),
                                           ("mse_loss", {"weight": True}), ("l1_loss", {"weight": True}),
                                           ("huber_loss", {"weight": True})])
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((3, 1), (3,)), ((), (2,))])
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float64")])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(loss, options, shapes, dtypes, reduction):
    """torch broadcasts input and target first, so mse/huber/smooth L1 stay one node for mixed shapes and
    dtypes (minigrad fell back to a composition that saved no input); a weighted mean of mse/l1 divides
    by the sum of the weights, where minigrad took the plain mean: a silently wrong loss."""
    values = np.random.default_rng(len(shapes[0]) + len(reduction)).normal(size=(3, 4))

    def prog(lib):
        x = lib.tensor(values[0, :3].reshape(shapes[0]) if shapes[0] else values[0, 0],
                       dtype=getattr(lib, dtypes[0]), requires_grad=True)
        y = lib.tensor(values[1, :2 if shapes[1] == (2,) else 3], dtype=getattr(lib, dtypes[1]), requires_grad=True)
        kwargs = dict(options)
        if "weight" in kwargs:
            kwargs["weight"] = lib.tensor(np.abs(values[2, :x.numel()]).reshape(shapes[0]) + 0.5,
                                          dtype=getattr(lib, dtypes[0]))
        out = getattr(lib.nn.functional, loss)(x, y, reduction=reduction, **kwargs)
        out.sum().backward()
        return out, str(out.dtype).split(".")[-1], out.grad_fn.name(), x.grad, y.grad
    same(prog)


def test_a_loss_input_changed_in_place_before_backward():
    """The long run's seed 6011: mse_loss of a float32 input and a float64 target saves the input, so
    changing it in place before backward is a version-counter error in PyTorch."""
    def prog(lib):
        x = lib.tensor(0.5, requires_grad=True)
        y = lib.tensor(0.25, dtype=lib.float64, requires_grad=True)
        h = x * 1
        loss = lib.nn.functional.mse_loss(h, y)
        h.abs_()
        loss.backward()
        return x.grad
    same(prog)


# -- 15. which gradients autograd.grad hands back as the upstream gradient's own memory ----------------
_PASS_THROUGH = {
    "expand to ()": (lambda x: x.expand(()), ()), "view as ()": (lambda x: x.view(()), ()),
    "reshape": (lambda x: x.reshape(1), ()), "clone": (lambda x: x.clone(), (2, 3)),
    "add 0": (lambda x: x + 0, (2, 3)), "sum": (lambda x: x.sum(), ()), "expand": (lambda x: x.expand(2, 3), (2, 3)),
    "expand a dim": (lambda x: x.expand(2, 3), (1, 3)), "t": (lambda x: x.t(), (2, 3)),
    "x[:]": (lambda x: x[:], (2, 3)), "x[0]": (lambda x: x[0], (1, 3)), "narrow all": (lambda x: x.narrow(1, 0, 3), (2, 3)),
    "squeeze": (lambda x: x.squeeze(), (1, 3)), "x + x": (lambda x: x + x, (2, 3)), "type_as": (lambda x: x.type_as(x), (2, 3)),
    # 0-d inputs (the long run's seed 7022: x.max(0) of a 0-d x handed back grad itself)
    "max(0) of 0-d": (lambda x: x.max(0).values, ()), "min(0) of 0-d": (lambda x: x.min(0).values, ()),
    "squeeze(0) of 0-d": (lambda x: x.squeeze(0), ()), "squeeze() of (3,)": (lambda x: x.squeeze(), (3,)),
    "sum(0) of 0-d": (lambda x: x.sum(0), ()), "prod(0) of 0-d": (lambda x: x.prod(0), ()),
    "cumsum(0) of 0-d": (lambda x: x.cumsum(0), ()), "flip(0) of 0-d": (lambda x: x.flip(0), ()),
    "sort(0) of 0-d": (lambda x: x.sort(0).values, ()), "clone of 0-d": (lambda x: x.clone(), ()),
    "x[()]": (lambda x: x[()], ()), "x[None][0]": (lambda x: x[None][0], ()), "select": (lambda x: x.select(0, 0), (1,)),
}


@pytest.mark.parametrize("op", sorted(_PASS_THROUGH))
def test_which_gradients_share_the_upstream_gradient_s_memory(op):
    """The long run's seed 6001: expand() of a 0-d tensor gave the upstream gradient itself as the input's
    gradient (PyTorch's sum_to sums to a 0-d shape, a new tensor), so changing one returned gradient in
    place changed another; narrow() is always a SliceBackward0, even over a whole dimension."""
    f, shape = _PASS_THROUGH[op]

    def prog(lib):
        x = lib.ones(*shape, requires_grad=True) if shape else lib.tensor(1.0, requires_grad=True)
        y = f(x)
        g = lib.ones(y.shape)
        gx, = lib.autograd.grad(y, [x], g)
        shares = np.shares_memory(gx.numpy(), g.numpy()) if gx.numel() else None
        return y.grad_fn.name(), gx is g, shares
    same(prog)


@pytest.mark.parametrize("args", [(1, 1, 2), (1, -2, 2), (0, 0, 1), (1, 3, 0), (1, 4, 1), (1, -4, 1), (1, 0, 4),
                                  (2, 0, 1), (1, 1, -1)])
def test_narrow(args):
    def prog(lib):
        x = lib.arange(6.).reshape(2, 3).requires_grad_()
        y = lib.narrow(x, *args)
        y.sum().backward()
        return y, y.grad_fn.name(), x.grad
    same(prog)


@pytest.mark.parametrize("apply_mode", ["grad", "no_grad"])
@pytest.mark.parametrize("write_mode", ["grad", "no_grad"])
@pytest.mark.parametrize("view", ["reshape", "x[0:1]", "x[0]"])
def test_a_view_changed_by_a_custom_function_stays_the_view_it_was(apply_mode, write_mode, view):
    """The long run's seed 6006: a view that requires no grad, changed in place by a custom Function
    (mark_dirty) and returned, kept being treated as made inside the Function; when its base then got
    a history, reading the view raised where PyTorch re-takes it from the base (AsStridedBackward0)."""
    def prog(lib):
        class DirtyMul(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        base = lib.tensor([1.0, 2.0])
        v = {"reshape": lambda: base.reshape((2,)), "x[0:1]": lambda: base[0:1], "x[0]": lambda: base[0]}[view]()
        with lib.no_grad() if apply_mode == "no_grad" else lib.enable_grad():
            out = DirtyMul.apply(v)
        w = lib.tensor(3.0, requires_grad=True)
        with lib.no_grad() if write_mode == "no_grad" else lib.enable_grad():
            base[1] = w
        result = [out is v, v.requires_grad, v.is_leaf, None if v.grad_fn is None else v.grad_fn.name(), v, base]
        if v.requires_grad:
            (v * 5).sum().backward()
            result.append(w.grad)
        return result
    same(prog)


@pytest.mark.parametrize("retained_before", [True, False])
@pytest.mark.parametrize("view", ["chunk", "split", "unbind", "x[0:1]"])
def test_retain_grad_again_on_a_view_whose_base_changed(retained_before, view):
    """The long run's seed 6010: retain_grad() on a view that already retains its gradient returns at
    once in PyTorch, even when the view's history can no longer be read (a multi-output view whose
    base changed in place under no_grad); minigrad read the history first and raised."""
    def prog(lib):
        x = lib.tensor([0.5], requires_grad=True)
        v = {"chunk": lambda: x.chunk(1, 0)[0], "split": lambda: x.split(1)[0], "unbind": lambda: x.unbind(0)[0],
             "x[0:1]": lambda: x[0:1]}[view]()
        if retained_before:
            v.retain_grad()
        with lib.no_grad():
            x.abs_()
        steps = [lambda: v.retain_grad(), lambda: (v * 2).sum().backward()]
        return [_outcome(step) for step in steps] + [x.grad, v.grad, v.retains_grad]
    same(prog)


def _outcome(step) -> str:
    """What a step did: "ok", or the name of the exception it raised (to compare a program step by step)."""
    try:
        step()
        return "ok"
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return type(e).__name__


@pytest.mark.parametrize("loss", ["mse_loss", "huber_loss", "smooth_l1_loss", "l1_loss"])
@pytest.mark.parametrize("upstream", [1.0, -1.0])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_the_sign_of_a_zero_loss_gradient(loss, upstream, reduction):
    """The long run's seed 6007: PyTorch computes the target's gradient from target - input (not as minus
    the input's), so loss(x, x) gives x a gradient of -0.0 under a negative upstream gradient, where
    minigrad gave +0.0; 1 / gradient (inf or -inf) shows the sign."""
    def prog(lib):
        f = getattr(lib.nn.functional, loss)
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        out = f(x, x, reduction=reduction)
        g, = lib.autograd.grad(out, [x], lib.full(out.shape, upstream))
        y, t = lib.tensor([2.0, 3.0], requires_grad=True), lib.tensor([2.0, 1.0], requires_grad=True)
        out = f(y, t, reduction=reduction)
        gy, gt = lib.autograd.grad(out, [y, t], lib.full(out.shape, upstream))
        return 1 / g, 1 / gy, 1 / gt
    same(prog)


_REVERSED = slice(None, None, -1)


@pytest.mark.parametrize("key", [(0, _REVERSED), (_REVERSED, 0), (_REVERSED,), (None, _REVERSED), (Ellipsis, _REVERSED),
                                 ([0], _REVERSED), (0, 0, _REVERSED), (0, slice(None, None, 0))],
                         ids=lambda key: repr(key).replace(" ", ""))
@pytest.mark.parametrize("stale", [False, True])
def test_a_negative_step_is_refused_when_pytorch_reaches_it(key, stale):
    """The long run's seed 5015: PyTorch applies a key entry by entry, so x[0, ::-1] of a chunk() view
    whose base changed under no_grad raises the stale view's RuntimeError (from the select) before the
    slice's ValueError, and too many indices is an IndexError first; minigrad checked every step first."""
    def prog(lib):
        x = lib.ones(2, 2, requires_grad=True)
        v = x.chunk(1, 0)[0]
        if stale:
            with lib.no_grad():
                x[0] = 2.0

        def write():
            with lib.no_grad():
                v[key] = 1.0
        return _outcome(lambda: v[key]), _outcome(write)
    same(prog)


@pytest.mark.parametrize("call", ["sort()", "sort(0)", "sort(0, True)", "sort(stable=True)", "sort(0, stable=True)",
                                  "sort(dim=0, stable=True)", "sort(stable=True, descending=True)", "sort(stable=None)",
                                  "sort(0, descending=True, stable=True)", "argsort()", "argsort(0, True)",
                                  "argsort(stable=True)", "argsort(0, stable=True)"])
@pytest.mark.parametrize("form", ["method", "function"])
def test_sort_s_two_overloads(call, form):
    """PyTorch's sort/argsort have two overloads: with ``stable`` given, dim and descending are keyword-only
    and the node is SortBackward1 (minigrad accepted sort(0, stable=True) and had no argsort)."""
    def prog(lib):
        x = lib.tensor([3., 1., 2., 1.], requires_grad=True)
        name, args = call.split("(", 1)
        target = "x." if form == "method" else "lib."
        source = f"{target}{name}({'' if form == 'method' else 'x' + (', ' if args != ')' else '')}{args}"
        out = eval(source, {"x": x, "lib": lib})  # noqa: S307 - the call under test, as text for its id
        if name == "argsort":
            return out
        out.values.sum().backward()
        return out.values, out.indices, out.values.grad_fn.name(), x.grad
    same(prog)


# -- 16. classification losses: probability targets of any shape, ignored targets get exactly 0 ---------
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 2), (0, 3)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_with_class_probabilities(shape, reduction, weighted, smoothing):
    """Found by tests/nn/test_functional_differential.py: probability targets were refused unless (N, C);
    torch takes (C,), (N, C) and (N, C, d1, ...), and names the mean's division DivBackward1."""
    def prog(lib):
        x = (lib.arange(float(np.prod(shape))).reshape(shape) * 0.3).requires_grad_()
        target = (lib.arange(float(np.prod(shape))).reshape(shape) % 3 + 1).softmax(0 if len(shape) == 1 else 1)
        weight = lib.tensor([1.0, 2.0, 3.0]) if weighted else None
        out = lib.nn.functional.cross_entropy(x, target, weight=weight, reduction=reduction,
                                              label_smoothing=smoothing)
        out.sum().backward()
        return out, out.grad_fn.name(), x.grad
    same(prog)


@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy", "cross_entropy smoothed"])
@pytest.mark.parametrize("targets", [[1], [1, 1], [1, 0], [0, 2]])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("upstream", [1.0, float("nan")])
def test_an_ignored_target_gets_a_gradient_of_exactly_zero(loss, targets, reduction, upstream):
    """Found by tests/nn/test_functional_differential.py: with every target ignored, "mean" divides by a
    total weight of 0 and minigrad's ignored rows got 0 * inf = NaN where torch leaves them 0."""
    def prog(lib):
        x = lib.tensor([[0.5, -1.0, 2.0], [0.0, 1.0, -0.5]][:len(targets)], requires_grad=True)
        target = lib.tensor(targets)
        F = lib.nn.functional
        if loss == "nll_loss":
            out = F.nll_loss(x.log_softmax(1), target, ignore_index=1, reduction=reduction)
        else:
            out = F.cross_entropy(x, target, ignore_index=1, reduction=reduction,
                                  label_smoothing=0.3 if loss.endswith("smoothed") else 0.0)
        out.backward(lib.full(out.shape, upstream))
        return out, x.grad
    same(prog)


# -- 17. rounding and remainders ----------------------------------------------------------------------
_ROUNDING = {
    "floor": lambda lib, x, y: x.floor(), "ceil": lambda lib, x, y: x.ceil(), "trunc": lambda lib, x, y: x.trunc(),
    "round": lambda lib, x, y: x.round(), "round(decimals=1)": lambda lib, x, y: lib.round(x, decimals=1),
    "frac": lambda lib, x, y: x.frac(), "x % 3": lambda lib, x, y: x % 3, "x % -3": lambda lib, x, y: x % -3,
    "x % y": lambda lib, x, y: x % y, "fmod(x, y)": lambda lib, x, y: lib.fmod(x, y),
    "x.fmod(2)": lambda lib, x, y: x.fmod(2), "7 % y": lambda lib, x, y: 7 % y, "x // y": lambda lib, x, y: x // y,
    "x // 2": lambda lib, x, y: x // 2, "7 // y": lambda lib, x, y: 7 // y, "x % 0": lambda lib, x, y: x % 0,
    "remainder(x, y)": lambda lib, x, y: lib.remainder(x, y),
}


@pytest.mark.parametrize("op", sorted(_ROUNDING))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_rounding_and_remainders(op, dtype):
    """floor/ceil/round/trunc/frac, %, fmod and // were missing (found by the functional differential
    test, whose cross_entropy check wrote ``i % 3``); values, node names, gradients and the errors of
    the ones PyTorch cannot differentiate, compared with torch."""
    def prog(lib):
        floats = dtype != "int64"
        x = lib.tensor([-3.5, -2.0, 0.0, 2.5, 3.5, 5.5, 7.25] if floats else [-3, -2, 0, 2, 3, 5, 7],
                       dtype=getattr(lib, dtype), requires_grad=floats)
        y = lib.tensor([2.0, -3.0, 1.5, 2.0, -2.0, 3.0, 0.5] if floats else [2, -3, 1, 2, -2, 3, 1],
                       dtype=getattr(lib, dtype), requires_grad=floats)
        steps = {}
        out = _ROUNDING[op](lib, x, y)
        steps["name"] = None if out.grad_fn is None else out.grad_fn.name()
        if floats:
            steps["backward"] = _outcome(lambda: out.sum().backward())
        return out, steps, x.grad, y.grad
    same(prog)


def test_a_remainder_gradient_is_differentiable_again():
    def prog(lib):
        a = lib.tensor([5.5, -3.5], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([2.0, 1.5], dtype=lib.float64, requires_grad=True)
        ga, gb = lib.autograd.grad((a % b * b).sum(), [a, b], create_graph=True)
        (ga.sum() + gb.sum()).backward()
        return ga, gb, a.grad, b.grad
    same(prog)


@pytest.mark.parametrize("op", ["fill_", "zero_", "mul_", "fill_ with a tensor", "copy_"])
@pytest.mark.parametrize("then", ["backward of the base", "backward of the view", "nothing"])
def test_writing_a_number_into_an_expand_of_a_graph_tensor(op, then):
    """The long run's seed 7010: fill_/zero_ of h.expand(2), h in a graph, is recorded in PyTorch (every
    alias gets the number); a backward through it raises when CopySlices copies the view's gradient into
    its overlapping region. Other writes into an expand are refused at once."""
    def prog(lib):
        x = lib.tensor([0.5], requires_grad=True)
        h = x * 1
        v = h.expand(2)
        write = {"fill_": lambda: v.fill_(2.0), "zero_": lambda: v.zero_(), "mul_": lambda: v.mul_(2),
                 "fill_ with a tensor": lambda: v.fill_(lib.tensor(3.0, requires_grad=True)),
                 "copy_": lambda: v.copy_(lib.tensor([1.0, 2.0]))}[op]
        steps = [_outcome(write), h, None if v.grad_fn is None else v.grad_fn.name()]
        if then != "nothing":
            steps.append(_outcome(lambda: (h if then.endswith("base") else v).sum().backward()))
        return steps + [x.grad]
    same(prog)


# -- 18. creating tensors: what each creation function accepts and refuses ------------------------------
_CREATIONS = {
    "arange(0, 5, 0)": lambda lib: lib.arange(0, 5, 0), "arange(0, 5, -1)": lambda lib: lib.arange(0, 5, -1),
    "arange(5, 0, -2)": lambda lib: lib.arange(5, 0, -2), "arange(3, 3)": lambda lib: lib.arange(3, 3),
    "zeros(-1)": lambda lib: lib.zeros(-1), "ones(2, -3)": lambda lib: lib.ones(2, -3),
    "as_tensor(list)": lambda lib: lib.as_tensor([1, 2]), "as_tensor(list, float32)": lambda lib: lib.as_tensor([1, 2], dtype=lib.float32),
    "tensor(nan, int64)": lambda lib: lib.tensor(float("nan"), dtype=lib.int64),
    "tensor([1.5, inf], int64)": lambda lib: lib.tensor([1.5, float("inf")], dtype=lib.int64),
    "tensor([1.7, -1.7], int64)": lambda lib: lib.tensor([1.7, -1.7], dtype=lib.int64),
    "where(c, 1, 0)": lambda lib: lib.where(lib.tensor([True, False]), 1, 0),
    "where(c, 1., 0)": lambda lib: lib.where(lib.tensor([True, False]), 1.0, 0),
    "where(c, True, False)": lambda lib: lib.where(lib.tensor([True, False]), True, False),
    "softmax of ints": lambda lib: lib.tensor([0, 1]).softmax(0),
    "log_softmax of ints": lambda lib: lib.tensor([0, 1]).log_softmax(0),
    "softmax of ints, dtype=": lambda lib: lib.tensor([0, 1]).softmax(0, dtype=lib.float64),
    "softmax(x, 0, float64)": lambda lib: lib.softmax(lib.tensor([0, 1]), 0, dtype=lib.float64),
}


@pytest.mark.parametrize("call", sorted(_CREATIONS))
def test_creation_functions(call):
    """Found by a sweep of creation functions against torch: arange's zero or wrong-signed step, negative
    sizes and inf/NaN converted to an integer dtype are RuntimeErrors in torch (minigrad raised other
    types or gave garbage); as_tensor was missing; where() of two numbers failed; softmax of integers is
    PyTorch's NotImplementedError."""
    def prog(lib):
        out = _CREATIONS[call](lib)
        return out, str(out.dtype).split(".")[-1]
    same(prog)


def test_as_tensor_shares_what_it_can():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        array = np.array([1.0, 2.0])
        y = lib.as_tensor(array)
        array[0] = 5.0  # shared memory: y sees it
        z = lib.as_tensor(x, dtype=lib.float64)
        return lib.as_tensor(x) is x, y, z.grad_fn is not None, str(z.dtype).split(".")[-1]
    same(prog)


# -- 19. advanced setitem: the basic entries select a view first, as PyTorch's applySlicing ------------
_ADVANCED_KEYS = {
    "[1:, [0,1]]": (slice(1, None), [0, 1]), "[:, [0,1]]": (slice(None), [0, 1]), "[[0,1]]": ([0, 1],),
    "[0, [0,1]]": (0, [0, 1]), "[[0,1], 0]": ([0, 1], 0), "[0, None, [0,1]]": (0, None, [0, 1]),
    "[None, [0,1]]": (None, [0, 1]), "[..., [0,1]]": (Ellipsis, [0, 1]), "[[0,1], :, 0]": ([0, 1], slice(None), 0),
    "[1, :, [0,1]]": (1, slice(None), [0, 1]), "[mask]": "mask", "[0, mask]": "mask0",
    "[:, 1:, [1,0]]": (slice(None), slice(1, None), [1, 0]), "[[0,1], 1:, [1,0]]": ([0, 1], slice(1, None), [1, 0]),
}


@pytest.mark.parametrize("key", sorted(_ADVANCED_KEYS))
def test_advanced_setitem_writes_into_the_view_its_basic_entries_select(key):
    """The long run's seed 7013: x[0, None, [0, 1]] = v raised in minigrad, which let NumPy read the
    integer as an index array (moving the dimensions); PyTorch selects x[0, None] first and writes
    [:, [0, 1]] into it, so the base's grad_fn is CopySlices whenever that view is not x itself."""
    def prog(lib):
        x = lib.arange(24.).reshape(2, 3, 4).requires_grad_()
        h = x * 1
        spec = _ADVANCED_KEYS[key]
        k = {"mask": (h > 10,), "mask0": (0, h[0] > 3)}[spec] if isinstance(spec, str) else \
            tuple(lib.tensor(e) if isinstance(e, list) else e for e in spec)
        shape = tuple(h[k].shape)
        h[k] = -lib.arange(float(np.prod(shape))).reshape(shape)
        (h * lib.arange(24.).reshape(2, 3, 4)).sum().backward()
        return shape, h.grad_fn.name(), h, x.grad
    same(prog)


# -- 20. the memory layout of new tensors: what view() and flatten() can do with them ------------------
_LAYOUT_INPUTS = {
    "contiguous": lambda lib: lib.arange(24.).reshape(2, 3, 4),
    "permuted": lambda lib: lib.arange(24.).reshape(2, 3, 4).permute(2, 0, 1),
    "transposed": lambda lib: lib.arange(24.).reshape(2, 3, 4).transpose(0, 2),
    "strided slice": lambda lib: lib.arange(24.).reshape(2, 3, 4)[:, :, ::2],
    "expand": lambda lib: lib.arange(4.).expand(3, 4),
}
_LAYOUT_OPS = {
    "exp": lambda lib, x: x.exp(), "x + x": lambda lib, x: x + x, "x * 2": lambda lib, x: x * 2,
    "sum(0)": lambda lib, x: x.sum(0), "sum(1)": lambda lib, x: x.sum(1), "sum(-1, keepdim)": lambda lib, x: x.sum(-1, keepdim=True),
    "mean(1)": lambda lib, x: x.mean(1), "max(1)": lambda lib, x: x.max(1).values, "argmax(1)": lambda lib, x: x.argmax(1),
    "prod(1)": lambda lib, x: x.prod(1), "var(1)": lambda lib, x: x.var(1), "std(0)": lambda lib, x: x.std(0),
    "norm(dim=1)": lambda lib, x: x.norm(dim=1), "logsumexp(1)": lambda lib, x: x.logsumexp(1),
    "cumsum(1)": lambda lib, x: x.cumsum(1), "softmax(1)": lambda lib, x: x.softmax(1), "log_softmax(0)": lambda lib, x: x.log_softmax(0),
    "index_select(1)": lambda lib, x: x.index_select(1, lib.tensor([0, 1])), "gather": lambda lib, x: x.gather(1, lib.zeros(x.shape, dtype=lib.int64)),
    "flip(0)": lambda lib, x: x.flip(0), "roll(1, 1)": lambda lib, x: x.roll(1, 1), "repeat": lambda lib, x: x.repeat(1, 2, 1),
    "clone": lambda lib, x: x.clone(), "contiguous": lambda lib, x: x.contiguous(), "double()": lambda lib, x: x.double(),
    "where": lambda lib, x: lib.where(x > 2, x, 0.), "tril": lambda lib, x: x.tril(), "masked_fill": lambda lib, x: x.masked_fill(x > 3, 0.),
    "matmul": lambda lib, x: x @ lib.ones(x.shape[-1], 2), "cat(1)": lambda lib, x: lib.cat([x, x], 1), "all(1)": lambda lib, x: (x > 0).all(1),
    "floor": lambda lib, x: x.floor(), "x % 3": lambda lib, x: x % 3,
    "x + row-major": lambda lib, x: x + lib.ones(x.shape), "row-major + x": lambda lib, x: lib.ones(x.shape) + x,
    "sort(1)": lambda lib, x: x.sort(1).values, "sort(1) indices": lambda lib, x: x.sort(1).indices,
    "gelu": lambda lib, x: lib.nn.functional.gelu(x), "silu": lambda lib, x: lib.nn.functional.silu(x),
    "x[[0, 1]]": lambda lib, x: x[[0, 1]],
}


@pytest.mark.parametrize("op", sorted(_LAYOUT_OPS))
@pytest.mark.parametrize("layout", sorted(_LAYOUT_INPUTS))
def test_new_tensors_are_laid_out_as_pytorch_lays_them_out(op, layout):
    """The long run's seed 7012: x.index_select(1, i).view(4) raised in minigrad (NumPy's result of the
    index was not row-major; torch's is); reductions, cumsum, roll, tril, masked_fill gave transposed
    results of transposed inputs where torch's are row-major, and clone/flip/to() did not keep a
    permuted input's layout as torch's do. The layout decides whether view() works and whether
    flatten() is a view, so an in-place change of the flattened tensor reaches the original or not."""
    def prog(lib):
        out = _LAYOUT_OPS[op](lib, _LAYOUT_INPUTS[layout](lib))
        strides = tuple(step for step, n in zip(out.stride(), out.shape) if n > 1)
        flat = out.flatten()
        return (tuple(out.shape), strides, out.is_contiguous(), _outcome(lambda: out.view(-1)),
                flat.data_ptr() == out.data_ptr() if out.numel() > 1 else None)
    same(prog)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4), (2, 3, 4, 5), (2, 3, 4, 5, 2)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
def test_classification_loss_node_names_by_input_rank(shape, reduction, loss):
    """Found by tests/nn/test_functional_differential.py: an input with spatial dimensions is PyTorch's
    nll_loss2d (NllLoss2DBackward0; a 'none' loss of a 3-d or 5-d input is a view of it)."""
    def prog(lib):
        x = lib.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
        t = lib.tensor(np.random.default_rng(1).integers(0, 3, (shape[0],) + shape[2:] if len(shape) > 1 else ()))
        F = lib.nn.functional
        out = F.nll_loss(x.log_softmax(0 if len(shape) == 1 else 1), t, reduction=reduction) if loss == "nll_loss" \
            else F.cross_entropy(x, t, reduction=reduction)
        out.sum().backward()
        return out, out.grad_fn.name(), x.grad
    same(prog)


@pytest.mark.parametrize("write", ["copy_", "x[...] = v", "x[0] = v0", "x[[0]] = v", "x[mask] = 5", "x[:1] = v"])
@pytest.mark.parametrize("upstream", [1.0, -1.0, float("inf")])
def test_overwritten_elements_get_a_gradient_of_exactly_zero(write, upstream):
    """The long run's seed 7030: copy_'s gradient for what it overwrote is PyTorch's zeros_like(grad), a
    constant (minigrad's grad * 0 was -0.0 for a negative gradient and required grad under create_graph);
    index_put and CopySlices put exact zeros where the write landed (grad * mask gave NaN for inf)."""
    def prog(lib):
        x = lib.tensor([0.5, 2.0], requires_grad=True)
        h = (x * 1).clamp(-0.5, 1.0)
        v = lib.tensor([3.0, 4.0], requires_grad=True)
        {"copy_": lambda: h.copy_(v), "x[...] = v": lambda: h.__setitem__(Ellipsis, v),
         "x[0] = v0": lambda: h.__setitem__(0, v[0]), "x[[0]] = v": lambda: h.__setitem__(lib.tensor([0]), v[:1]),
         "x[mask] = 5": lambda: h.__setitem__(lib.tensor([True, False]), 5.0),
         "x[:1] = v": lambda: h.__setitem__(slice(None, 1), v[:1])}[write]()
        gx, gv = lib.autograd.grad(h * 2, [x, v], lib.full((2,), upstream), create_graph=True, allow_unused=True)
        return 1 / gx, gx.requires_grad, gv, h.grad_fn.name()
    same(prog)


_MATMUL_SHAPES = [((4,), (4,)), ((4,), (4, 2)), ((3, 4), (4,)), ((3, 4), (4, 2)), ((3, 5, 4), (4, 2)), ((3, 5, 4), (4,)),
                  ((4,), (3, 4, 2)), ((3, 5, 4), (3, 4, 2)), ((2, 3, 5, 4), (3, 4, 2)), ((1, 5, 4), (3, 4, 2)),
                  ((3, 5, 4), (1, 4, 2)), ((5, 4), (3, 4, 2)), ((5, 4), (1, 4, 2)), ((2, 1, 5, 4), (1, 3, 4, 2))]


@pytest.mark.parametrize("shapes", _MATMUL_SHAPES, ids=lambda s: f"{s[0]}@{s[1]}")
def test_matmul_node_names_for_every_rank(shapes):
    """minigrad's matmul of other ranks was MatmulBackward0, a name PyTorch does not have: its matmul
    shows the last step it takes (a fold's UnsafeViewBackward0, a vector's SqueezeBackward4...)."""
    def prog(lib):
        a = lib.tensor(np.arange(float(np.prod(shapes[0]))).reshape(shapes[0]) / 10, requires_grad=True)
        b = lib.tensor(np.arange(float(np.prod(shapes[1]))).reshape(shapes[1]) / 7, requires_grad=True)
        y = a @ b
        y.sum().backward()
        return y, y.grad_fn.name(), a.grad, b.grad
    same(prog)


@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 5, 4), (2, 3, 5, 4), (0, 4), (3, 0, 4)])
@pytest.mark.parametrize("bias", [False, True])
def test_linear_of_every_input_rank(shape, bias):
    """F.linear of a 1-d or N-d input: PyTorch's addmm of the rows viewed back (ViewBackward0), or its
    matmul without a bias; minigrad showed MatmulBackward0/AddBackward0."""
    def prog(lib):
        w = lib.tensor(np.arange(8.).reshape(2, 4) / 7, requires_grad=True)
        b = lib.tensor([0.5, -1.0], requires_grad=True) if bias else None
        x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape) / 10, requires_grad=True)
        y = lib.nn.functional.linear(x, w, b)
        y.sum().backward()
        return y, y.grad_fn.name(), x.grad, w.grad
    same(prog)


# -- 21. activations in place -------------------------------------------------------------------------
_INPLACE_ACTIVATIONS = {
    "F.relu(inplace)": lambda lib, x: lib.nn.functional.relu(x, inplace=True),
    "F.relu_": lambda lib, x: lib.nn.functional.relu_(x),
    "F.elu(inplace)": lambda lib, x: lib.nn.functional.elu(x, 0.7, inplace=True),
    "F.elu_": lambda lib, x: lib.nn.functional.elu_(x),
    "F.leaky_relu(inplace)": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.1, inplace=True),
    "F.leaky_relu_": lambda lib, x: lib.nn.functional.leaky_relu_(x, 0.1),
    "leaky_relu_ with a negative slope": lambda lib, x: lib.nn.functional.leaky_relu(x, -0.1, inplace=True),
    "F.silu(inplace)": lambda lib, x: lib.nn.functional.silu(x, inplace=True),
    "nn.ELU(inplace)": lambda lib, x: lib.nn.ELU(inplace=True)(x),
    "nn.LeakyReLU(inplace)": lambda lib, x: lib.nn.LeakyReLU(0.2, inplace=True)(x),
    "nn.SiLU(inplace)": lambda lib, x: lib.nn.SiLU(inplace=True)(x),
    "F.dropout(inplace), evaluation": lambda lib, x: lib.nn.functional.dropout(x, 0.5, training=False, inplace=True),
    "F.dropout(p=1, inplace)": lambda lib, x: lib.nn.functional.dropout(x, 1.0, inplace=True),
}


@pytest.mark.parametrize("op", sorted(_INPLACE_ACTIVATIONS))
@pytest.mark.parametrize("case", ["graph tensor", "leaf", "view", "changed again", "second derivative", "integers"])
def test_activations_in_place(op, case):
    """Only ReLU had an inplace form; PyTorch's elu_/leaky_relu_ nodes (EluBackward1, LeakyReluBackward1)
    keep the result, so changing it again before backward is a version error, and a negative slope
    cannot be undone; silu and gelu refuse integer tensors."""
    def prog(lib):
        x = lib.tensor([-1.5, 0.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = lib.tensor([-1, 0, 2]) if case == "integers" else x * 1
        target = {"leaf": x, "view": h[1:]}.get(case, h)
        out = _INPLACE_ACTIVATIONS[op](lib, target)
        result = [out is target, None if out.grad_fn is None else out.grad_fn.name(), h]
        if case == "changed again":
            result.append(_outcome(lambda: h.mul_(2)))
        if case == "second derivative":
            first, = lib.autograd.grad((h * h).sum(), x, create_graph=True)
            result.append(lib.autograd.grad(first.sum(), x)[0])
        elif case != "integers":
            result.append(_outcome(lambda: (h * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()))
            result.append(x.grad)
        return result
    same(prog)


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0), (0, 2)])
@pytest.mark.parametrize("call", ["argmax()", "argmin()", "argmax(0)", "argmin(-1, keepdim=True)", "argmax(1)",
                                  "max()", "min()", "max(0)", "min(-1)"])
def test_extrema_of_empty_and_0d_tensors(shape, call):
    """argmax()/argmin() of no elements raised NumPy's ValueError, PyTorch an IndexError; argmax(0) of a
    0-d tensor raised ValueError, PyTorch gives index 0; min's errors said "max()"."""
    def prog(lib):
        x = lib.arange(float(np.prod(shape))).reshape(shape)
        try:
            out = eval(f"x.{call}")  # noqa: S307 - a fixed call from the parametrization
        except (IndexError, RuntimeError) as e:
            return str(e).split(":")[0]
        return [out, out.dtype == lib.int64] if isinstance(out, (minigrad.Tensor, torch.Tensor)) else list(out)
    same(prog)


_INDEX_KEYS = {"[[0]]": lambda x, m: x[[0]], "[:, [0]]": lambda x, m: x[:, [0]], "[[0, 0]]": lambda x, m: x[[0, 0]],
               "[..., [0]]": lambda x, m: x[..., [0]], "[[0], :1]": lambda x, m: x[[0], :1],
               "[:1, [0]]": lambda x, m: x[:1, [0]], "[2-d]": lambda x, m: x[x.new_tensor([[0], [0]]).long()],
               "[[0], :, [0]]": lambda x, m: x[[0], :, [0]], "[None, [0]]": lambda x, m: x[None, [0]], "[mask]": lambda x, m: x[m]}


@pytest.mark.parametrize("key", list(_INDEX_KEYS))
@pytest.mark.parametrize("shape", [(2, 3), (3, 1), (2, 2, 1), (1, 2, 3), (2, 1, 2)])
def test_advanced_index_results_have_pytorch_s_strides(shape, key):
    """Seed 7231 of the differential long run: v[None] = v on v = x[:, [0]] raised in minigrad. PyTorch's
    TensorIterator lays out an index result by its operands' strides, size-1 dimensions included, and
    its overlap check compares those; NumPy's result had other strides, also where PyTorch's is row-major."""
    def prog(lib):
        results = []
        for perm in itertools.permutations(range(len(shape))):
            x = lib.arange(float(np.prod(shape))).reshape(shape).permute(*perm)
            try:
                v = _INDEX_KEYS[key](x, x.remainder(2) == 0)
            except IndexError:
                results.append("IndexError")
                continue
            results.append((tuple(v.shape), tuple(v.stride()), _outcome(lambda: v.__setitem__(None, v))))
        return results
    same(prog)


@pytest.mark.parametrize("create_graph", [False, True])
def test_gradient_of_a_broadcast_0d_input_is_a_new_tensor(create_graph):
    """Found beside seed 7238 of the differential long run: the gradient of a 0-d input broadcast in
    forward is PyTorch's sum_to, sum() (SumBackward0), not a view of a sum, so it may be changed in
    place with grad recorded; minigrad's was a reshape of it made in backward, which refuses that."""
    def prog(lib):
        x = lib.tensor(1.5, requires_grad=True)
        g, = lib.autograd.grad(x * lib.ones(3, 2), [x], lib.ones(3, 2, requires_grad=True), create_graph=create_graph)
        node = None if g.grad_fn is None else g.grad_fn.name()
        return [node, g._base is None, _outcome(lambda: g.add_(x)), g]
    same(prog)
