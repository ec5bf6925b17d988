"""The autograd API beyond Function: node hooks, grad(materialize_grads=), anomaly mode,
saved-tensor hooks, checkpoint, InplaceFunction and NestedIOFunction.

Each behaviour is one small program written against a module ``lib`` (minigrad
or torch); the test runs it on minigrad, checks the values it must give, and,
when torch is installed, runs the same program on torch and compares every
value, hook call sequence, exception type and warning type.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad
import minigrad.autograd

try:
    import torch as _torch_module
except ImportError:
    _torch_module = None
HAVE_TORCH = _torch_module is not None
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="the comparison with PyTorch needs torch installed")


def _torch():
    return _torch_module


def both(program):
    """Run ``program(lib)`` on minigrad and (if installed) on torch; return (minigrad result, torch result or None)."""
    mine = program(minigrad)
    theirs = program(_torch()) if HAVE_TORCH else None
    return mine, theirs


def plain(x):
    """Turn tensors (nested in tuples/lists/dicts) into Python lists, for comparing libraries."""
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return np.asarray(x.detach().numpy()).tolist()


# The programs run in float32; two libraries' exp/log may differ by a few ulps.
FLOAT32_RTOL = 16 * float(np.finfo(np.float32).eps)


def assert_matches(mine, theirs, where="result"):
    """Equal structure, equal strings/bools/None, floats equal up to float32 rounding."""
    if isinstance(mine, float) and isinstance(theirs, float):
        assert mine == pytest.approx(theirs, rel=FLOAT32_RTOL, nan_ok=True), where
    elif isinstance(mine, list) and isinstance(theirs, list):
        assert len(mine) == len(theirs), f"{where}: {mine} vs {theirs}"
        for i, (m, t) in enumerate(zip(mine, theirs)):
            assert_matches(m, t, f"{where}[{i}]")
    else:
        assert mine == theirs, f"{where}: {mine!r} (minigrad) vs {theirs!r} (torch)"


def assert_same(program):
    mine, theirs = both(program)
    if theirs is not None:
        assert_matches(plain(mine), plain(theirs))
    return plain(mine)


def outcome(fn):
    """What calling ``fn()`` does: ("ok", value) or (exception type name, message)."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return (type(e).__name__, str(e))


# -- node hooks --------------------------------------------------------------------


def hook_order_program(lib):
    """The order PyTorch's engine runs hooks in: tensor hooks, retain_grad, node pre-hooks, node, post-hooks."""
    log = []
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.retain_grad()
    b.register_hook(lambda g: log.append(("tensor hook", plain(g))) or g + 1)
    b.grad_fn.register_prehook(lambda go: log.append(("node prehook", plain(go), plain(b.grad))) or (go[0] * 100,))
    b.grad_fn.register_hook(lambda gi, go: log.append(("node posthook", plain(gi), plain(go))))
    a.register_hook(lambda g: log.append(("leaf tensor hook", plain(g))))
    accumulator = b.grad_fn.next_functions[0][0]
    accumulator.register_prehook(lambda go: log.append(("accumulator prehook", plain(go))) or (go[0] / 2,))
    accumulator.register_hook(lambda gi, go: log.append(("accumulator posthook", plain(gi), plain(go), plain(a.grad))))
    (b * 3).sum().backward()
    return log, a.grad, b.grad


def test_hook_order_matches_torch():
    log, a_grad, b_grad = assert_same(hook_order_program)
    assert [entry[0] for entry in log] == [
        "tensor hook", "node prehook", "node posthook", "leaf tensor hook", "accumulator prehook", "accumulator posthook",
    ]
    assert log[1] == ("node prehook", [[4.0, 4.0]], [4.0, 4.0]) or log[1] == ["node prehook", [[4.0, 4.0]], [4.0, 4.0]]
    assert a_grad == [400.0, 400.0] and b_grad == [4.0, 4.0]


def removed_hooks_program(lib):
    log = []
    a = lib.tensor([1.0], requires_grad=True)
    b = a * 2
    pre = b.grad_fn.register_prehook(lambda go: log.append("pre"))
    post = b.grad_fn.register_hook(lambda gi, go: log.append("post"))
    b.sum().backward(retain_graph=True)
    pre.remove()
    with post:  # a handle is also a context manager that removes the hook on exit
        b.sum().backward(retain_graph=True)
    b.sum().backward()
    return log, a.grad


def test_node_hooks_are_removable():
    log, a_grad = assert_same(removed_hooks_program)
    assert log == ["pre", "post", "post"] and a_grad == [6.0]


def test_the_accumulator_is_the_same_node_in_every_graph():
    def program(lib):
        a = lib.tensor([1.0], requires_grad=True)
        first = (a * 2).grad_fn.next_functions[0][0]
        calls = []
        first.register_prehook(lambda go: calls.append(plain(go)))
        second = (a * 3)
        second.sum().backward()
        return calls, second.grad_fn.next_functions[0][0] is first

    calls, same = assert_same(program)
    assert calls == [[[3.0]]] and same is True


@pytest.mark.parametrize("case", ["prehook count", "posthook count", "posthook not a tuple", "prehook list", "posthook invents a gradient"])
def test_node_hook_errors_match_torch(case):
    def program(lib):
        a = lib.tensor([1.0], requires_grad=True)
        b = a * 2
        node = b.grad_fn
        if case == "prehook count":
            node.register_prehook(lambda go: (go[0], go[0]))
        elif case == "posthook count":
            node.register_hook(lambda gi, go: (gi[0],))
        elif case == "posthook not a tuple":
            node.register_hook(lambda gi, go: 5)
        elif case == "prehook list":
            node.register_prehook(lambda go: [go[0]])
        else:
            node.register_hook(lambda gi, go: (gi[0], gi[0]))
        return outcome(lambda: b.sum().backward())

    kind, message = assert_same(program)
    assert kind in ("RuntimeError", "TypeError")
    assert message  # the same message text as torch, compared above


def test_node_hooks_of_an_input_of_grad_do_not_run():
    def program(lib):
        log = []
        a = lib.tensor([1.0], requires_grad=True)
        b = a * 2
        b.register_hook(lambda g: log.append("tensor"))
        b.grad_fn.register_prehook(lambda go: log.append("pre"))
        b.grad_fn.register_hook(lambda gi, go: log.append("post"))
        g, = lib.autograd.grad((b * 3).sum(), b)
        return log, g

    log, g = assert_same(program)
    assert log == ["tensor"] and g == [3.0]


# -- autograd.grad(materialize_grads=), output_nr, saved_variables --------------------


def test_materialize_grads_matches_torch():
    def program(lib):
        u = lib.tensor([1.0, 1.0], requires_grad=True)
        w = lib.tensor([1.0, 1.0], requires_grad=True)
        y = (u * 2).sum()
        results = [
            outcome(lambda: plain(lib.autograd.grad(y, (u, w), retain_graph=True))),
            outcome(lambda: plain(lib.autograd.grad(y, (u, w), retain_graph=True, allow_unused=True))),
            outcome(lambda: plain(lib.autograd.grad(y, (u, w), retain_graph=True, materialize_grads=True))),
            outcome(lambda: plain(lib.autograd.grad(y, (u, w), retain_graph=True, materialize_grads=True, allow_unused=False))),
        ]
        zeros = lib.autograd.grad(y, (u, w), create_graph=True, materialize_grads=True)[1]
        return [r[0] for r in results], results[1:3], zeros.requires_grad
    kinds, values, zeros_require_grad = assert_same(program)
    assert kinds == ["RuntimeError", "ok", "ok", "ValueError"]
    assert values == [["ok", [[2.0, 2.0], None]], ["ok", [[2.0, 2.0], [0.0, 0.0]]]]
    assert zeros_require_grad is True


def test_output_nr_matches_torch():
    def program(lib):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 3

        x = lib.tensor([1.0], requires_grad=True)
        p, q = Two.apply(x)
        return x.output_nr, p.output_nr, q.output_nr, (q * 1).output_nr

    assert assert_same(program) == [0, 0, 1, 0]


def test_saved_variables_is_the_deprecated_alias_of_saved_tensors():
    def program(lib):
        seen = []

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    x, = ctx.saved_variables
                seen.extend((w.category.__name__, str(w.message), w.filename == __file__) for w in caught)
                return g * 2 + x * 0

        x = lib.tensor([1.0], requires_grad=True)
        Double.apply(x).sum().backward()
        return seen, x.grad

    seen, grad = assert_same(program)
    assert seen == [["DeprecationWarning", "'saved_variables' is deprecated; use 'saved_tensors'", True]]
    assert grad == [2.0]


# -- anomaly mode ----------------------------------------------------------------------


def anomaly_program(lib, check_nan=True):
    x = lib.tensor(0.0, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly(check_nan=check_nan):
            y = x.sqrt() * 0  # d sqrt(x)/dx at 0 is inf, and inf * 0 is NaN
            result = outcome(lambda: y.backward())
        enabled_after = lib.is_anomaly_enabled() if hasattr(lib, "is_anomaly_enabled") else lib.autograd.is_anomaly_enabled()
    warned = [(w.category.__name__, str(w.message).split(".")[0]) for w in caught]
    return result if result[0] != "ok" else ("ok", plain(x.grad)), warned, enabled_after, caught


def test_anomaly_mode_names_the_node_and_shows_the_forward_line():
    (kind, message), warned, enabled_after, caught = anomaly_program(minigrad)
    assert (kind, message) == ("RuntimeError", "Function 'SqrtBackward0' returned nan values in its 0th output.")
    assert warned[0] == ("UserWarning", "Anomaly Detection has been enabled")
    assert warned[1] == ("UserWarning", "Error detected in SqrtBackward0")
    forward_line = "y = x.sqrt() * 0"
    assert forward_line in str(caught[1].message) and __file__ in str(caught[1].message)
    assert "minigrad/autograd" not in str(caught[1].message)  # the stack ends at the learner's line
    assert enabled_after is False
    if HAVE_TORCH:
        t_result, t_warned, t_enabled, _ = anomaly_program(_torch())
        assert (kind, message, warned, enabled_after) == (*t_result, t_warned, t_enabled)


def test_anomaly_mode_without_check_nan_lets_the_nan_through():
    result, warned, _, _ = anomaly_program(minigrad, check_nan=False)
    assert result[0] == "ok" and np.isnan(result[1])
    assert len(warned) == 1
    if HAVE_TORCH:
        t_result, t_warned, _, _ = anomaly_program(_torch(), check_nan=False)
        assert np.isnan(t_result[1]) and warned == t_warned


def test_anomaly_mode_reraises_a_backward_error_unchanged():
    def program(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                raise ValueError("boom")

        x = lib.tensor([1.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.autograd.set_detect_anomaly(True)
            try:
                y = Bad.apply(x)
                result = outcome(lambda: y.sum().backward())
            finally:
                lib.autograd.set_detect_anomaly(False)
        return result, [(w.category.__name__, str(w.message).split(".")[0]) for w in caught]

    (kind, message), warned = assert_same(program)
    assert (kind, message) == ("ValueError", "boom")
    assert warned == [["UserWarning", "Error detected in BadBackward"]]


def test_anomaly_mode_records_a_traceback_only_when_on():
    x = minigrad.tensor([1.0], requires_grad=True)
    assert "traceback_" not in (x * 2).grad_fn.metadata
    with minigrad.autograd.set_detect_anomaly(True):
        assert minigrad.autograd.is_anomaly_enabled()
        stack = (x * 2).grad_fn.metadata["traceback_"]
    assert not minigrad.autograd.is_anomaly_enabled()
    assert isinstance(stack, list) and "(x * 2)" in stack[-1]


# -- saved-tensor hooks ----------------------------------------------------------------


def pack_unpack_program(lib):
    log = []

    def pack(t):
        log.append(("pack", list(t.shape)))
        return ("box", t.detach())

    def unpack(packed):
        log.append(("unpack",))
        return packed[1]

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (a * a).exp()  # Mul saves both operands, Exp saves its result: 3 packs
    z = y * 3  # saved outside the block: no hook
    log.append(("backward",))
    z.sum().backward(retain_graph=True)
    log.append(("backward",))
    z.sum().backward()
    return log, a.grad


def test_saved_tensors_hooks_pack_once_and_unpack_at_every_use():
    log, grad = assert_same(pack_unpack_program)
    assert log == [["pack", [2]]] * 3 + [["backward"]] + [["unpack"]] * 3 + [["backward"]] + [["unpack"]] * 3
    np.testing.assert_allclose(grad, 2 * 2 * np.array([1.0, 2.0]) * np.exp([1.0, 4.0]) * 3, rtol=1e-6)


def test_saved_tensors_hooks_see_the_saved_tensors_themselves():
    def program(lib):
        seen = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t.detach(), lambda p: p):
            y = b.exp()
            z = b * b
        with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t.detach(), lambda p: p):
            with lib.no_grad():
                b.exp()  # nothing recorded, nothing saved
        return [seen[0] is y, seen[1] is b, seen[2] is b, len(seen)]

    assert assert_same(program) == [True, True, True, 3]


def test_saved_tensors_hooks_apply_to_custom_functions_and_keep_the_graph():
    def program(lib):
        kinds = []

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * x * x
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                kinds.append((x.requires_grad, y.grad_fn is not None))
                return g * 3 * x * x

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 1, lambda p: p):
            y = (Cube.apply(x) * x).sum()  # Mul saves x and Cube's output, through the hooks too
        g, = lib.autograd.grad(y, x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return kinds, g, gg

    kinds, g, gg = assert_same(program)
    assert g == [4.0, 32.0] and gg == [12.0, 48.0]  # d/dx x^4 = 4x^3, d2 = 12x^2
    assert kinds[0] == [True, True]


def test_saved_tensors_hooks_errors_match_torch():
    def program(lib):
        graph = lib.autograd.graph
        a = lib.tensor([1.0], requires_grad=True)
        results = []
        with graph.saved_tensors_hooks(lambda t: 1, lambda p: p):
            y = (a * 1).exp()
        results.append(outcome(lambda: y.sum().backward()))

        b = a * 1

        def save_with_mutating_pack():
            with graph.saved_tensors_hooks(lambda t: t.mul_(2), lambda p: p):
                b.exp()  # saves its output, which the pack hook then changes

        results.append(outcome(save_with_mutating_pack))

        def enter_hooks_while_disabled():
            with graph.disable_saved_tensors_hooks("no hooks here"):
                with graph.saved_tensors_hooks(lambda t: t, lambda p: p):
                    pass

        results.append(outcome(enter_hooks_while_disabled))

        def disable_while_hooks_active():
            with graph.saved_tensors_hooks(lambda t: t, lambda p: p):
                with graph.disable_saved_tensors_hooks("no hooks here"):
                    pass

        results.append(outcome(disable_while_hooks_active))
        with graph.saved_tensors_hooks(lambda t: t.detach(), lambda p: p):
            results.append(outcome(lambda: plain((a * 2).exp())))  # the hooks work again after both
        return results

    results = assert_same(program)
    assert [r[0] for r in results] == ["TypeError", "RuntimeError", "RuntimeError", "RuntimeError", "ok"]
    assert results[2][1] == "no hooks here"


def test_only_the_innermost_hooks_apply_and_each_saved_tensor_keeps_its_pair():
    def program(lib):
        log = []
        graph = lib.autograd.graph
        a = lib.tensor([1.0], requires_grad=True)
        with graph.saved_tensors_hooks(lambda t: log.append("outer pack") or t.detach(), lambda p: log.append("outer unpack") or p):
            with graph.saved_tensors_hooks(lambda t: log.append("inner pack") or t.detach(), lambda p: log.append("inner unpack") or p):
                y = a.exp()
            z = y.log()
        z.sum().backward()
        return log, a.grad

    log, grad = assert_same(program)
    assert log == ["inner pack", "outer pack", "outer unpack", "inner unpack"]
    assert grad == [pytest.approx(1.0)] or grad == [1.0]


def test_saved_tensors_hooks_leave_freeing_as_it_was():
    def program(lib):
        a = lib.tensor([1.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda p: p):
            y = a.exp().sum()
        y.backward()
        return outcome(lambda: y.backward())[0]

    assert assert_same(program) == "RuntimeError"


# -- checkpoint --------------------------------------------------------------------------


def mlp_program(lib, use_checkpoint, use_reentrant=False, depth=8, segment=4, width=8, batch=256):
    """A deep ReLU MLP; with ``use_checkpoint`` each run of ``segment`` layers is checkpointed.

    Returns the gradients and the bytes of distinct tensors saved for backward,
    counted by an outer pack hook (with checkpoint it sees only each segment's inputs).
    """
    from lib_checkpoint import checkpoint_of

    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((batch, width)), requires_grad=True)
    weights = [lib.tensor(rng.standard_normal((width, width)) / np.sqrt(width), requires_grad=True) for _ in range(depth)]
    saved = {}

    def count(t):
        # Keyed by address: a tensor saved by two nodes counts once. The graph keeps what
        # we return (sharing that memory) alive, so no address is reused while we count.
        saved[t.data_ptr()] = t.nbytes
        return t.detach()

    def run_segment(h, *ws):
        for w in ws:
            h = (h @ w).relu()
        return h

    with lib.autograd.graph.saved_tensors_hooks(count, lambda p: p):
        h = x
        for i in range(0, depth, segment):
            ws = weights[i:i + segment]
            h = checkpoint_of(lib)(run_segment, h, *ws, use_reentrant=use_reentrant) if use_checkpoint else run_segment(h, *ws)
        loss = (h * h).sum()
    loss.backward()
    return [x.grad] + [w.grad for w in weights], sum(saved.values())


@pytest.fixture(autouse=True)
def _checkpoint_module(monkeypatch):
    """``checkpoint_of(lib)``: minigrad.utils.checkpoint.checkpoint or torch.utils.checkpoint.checkpoint."""
    import sys
    import types

    def checkpoint_of(lib):
        if lib is minigrad:
            from minigrad.utils.checkpoint import checkpoint
        else:
            from torch.utils.checkpoint import checkpoint
        return checkpoint

    monkeypatch.setitem(sys.modules, "lib_checkpoint", types.SimpleNamespace(checkpoint_of=checkpoint_of))


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_gives_the_same_gradients_and_saves_less(use_reentrant):
    plain_grads, plain_bytes = mlp_program(minigrad, use_checkpoint=False)
    ckpt_grads, ckpt_bytes = mlp_program(minigrad, use_checkpoint=True, use_reentrant=use_reentrant)
    for g, c in zip(plain_grads, ckpt_grads):
        np.testing.assert_allclose(c.numpy(), g.numpy(), rtol=1e-12, atol=0)  # float64, the same operations
    # Without checkpoint the graph keeps x, every weight and every ReLU output (the next layer's
    # input); with it, each segment keeps only its inputs (one pack each, by the checkpoint's
    # input saver), and (h * h) keeps the last h.
    width, batch, depth, segments = 8, 256, 8, 2
    assert plain_bytes == 8 * (batch * width * (depth + 1) + width * width * depth)
    assert ckpt_bytes == 8 * (batch * width * (segments + 1) + width * width * depth)
    if HAVE_TORCH:
        t_plain, t_plain_bytes = mlp_program(_torch(), use_checkpoint=False)
        t_ckpt, t_ckpt_bytes = mlp_program(_torch(), use_checkpoint=True, use_reentrant=use_reentrant)
        for g, t in zip(ckpt_grads, t_ckpt):
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10)
        assert (plain_bytes, ckpt_bytes) == (t_plain_bytes, t_ckpt_bytes)


def test_checkpoint_recomputes_once_per_backward_like_torch():
    def program(lib):
        from lib_checkpoint import checkpoint_of

        calls = []

        def f(x):
            calls.append(len(calls))
            return x.exp().log().exp()

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        out = checkpoint_of(lib)(f, x, use_reentrant=False)
        counts = [len(calls)]
        out.sum().backward(retain_graph=True)
        counts.append(len(calls))
        g, = lib.autograd.grad(out.sum(), x)
        counts.append(len(calls))
        return counts, x.grad, g

    counts, grad, g = assert_same(program)
    assert counts == [1, 2, 3]
    np.testing.assert_allclose(grad, np.exp([1.0, 2.0]), rtol=FLOAT32_RTOL)


def test_checkpoint_replays_the_random_numbers_of_the_forward():
    import minigrad.nn.functional as F
    from minigrad.utils.checkpoint import checkpoint

    def block(h):
        return F.dropout(h * 3, p=0.5, training=True)

    def run(use_checkpoint):
        minigrad.manual_seed(5)
        x = minigrad.ones(64, requires_grad=True)
        out = checkpoint(block, x, use_reentrant=False) if use_checkpoint else block(x)
        out.sum().backward()
        return out.detach().numpy(), x.grad.numpy(), minigrad.rand(3).numpy()

    plain_out, plain_grad, plain_next = run(False)
    ckpt_out, ckpt_grad, ckpt_next = run(True)
    np.testing.assert_array_equal(ckpt_out, plain_out)
    np.testing.assert_array_equal(ckpt_grad, plain_grad)  # the recomputed mask is the forward's mask
    assert 0 < (plain_grad == 0).sum() < 64
    np.testing.assert_array_equal(ckpt_next, plain_next)  # and the recomputation left the generator as it was


def test_checkpoint_without_use_reentrant_warns_and_uses_the_reentrant_variant():
    def program(lib):
        from lib_checkpoint import checkpoint_of

        x = lib.tensor([1.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = checkpoint_of(lib)(lambda t: t * 2, x)
        out.sum().backward()
        via_grad = outcome(lambda: lib.autograd.grad(checkpoint_of(lib)(lambda t: t * 2, x, use_reentrant=True).sum(), x))
        # the category and the advice, not the wording: minigrad's message does not start with "torch."
        warned = [(w.category.__name__, "use_reentrant parameter should be passed explicitly" in str(w.message))
                  for w in caught]
        return warned, type(out.grad_fn).__name__, x.grad, via_grad[0]

    caught, node, grad, via_grad = assert_same(program)
    assert caught[0] == ["UserWarning", True]
    assert node == "CheckpointFunctionBackward" and grad == [2.0] and via_grad == "RuntimeError"


def test_checkpoint_errors_match_torch():
    def program(lib):
        from lib_checkpoint import checkpoint_of

        checkpoint = checkpoint_of(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        runs = []

        def saves_less_the_second_time(t):
            runs.append(1)
            return t.exp() if len(runs) == 1 else t + 1.0  # Add saves nothing

        out = checkpoint(saves_less_the_second_time, x, use_reentrant=False)
        fewer = outcome(lambda: out.sum().backward())
        h = x * 1
        out = checkpoint(lambda t: t.exp(), h, use_reentrant=False)
        h.mul_(2)  # the saved input changed after the forward
        changed = outcome(lambda: out.sum().backward())
        return fewer[0], fewer[1].split("\n")[1:3], changed[0]  # the counts; the first line is worded apart

    fewer_kind, fewer_lines, changed_kind = assert_same(program)
    assert fewer_kind == "CheckpointError" and changed_kind == "RuntimeError"
    assert fewer_lines == ["Number of tensors saved during forward: 1", "Number of tensors saved during recomputation: 0."]


# -- InplaceFunction and NestedIOFunction ---------------------------------------------------


def test_inplace_function_matches_torch():
    def program(lib):
        from importlib import import_module

        InplaceFunction = import_module(lib.__name__ + ".autograd.function").InplaceFunction

        class Scale(InplaceFunction):
            @staticmethod
            def forward(ctx, x, inplace=False):
                if inplace:
                    ctx.mark_dirty(x)
                    return x.mul_(2)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, None

        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 1
        out = Scale.apply(h, True)
        out.sum().backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            instance = Scale(inplace=True)
        return (out is h, h._version, a.grad, instance.inplace, [w.category.__name__ for w in caught],
                outcome(lambda: instance(a))[0])

    same_object, version, grad, inplace, warned, call = assert_same(program)
    # Version 2: mul_ bumped it, and apply bumps every tensor marked dirty (as PyTorch does).
    assert (same_object, version, grad, inplace) == (True, 2, [2.0, 2.0], True)
    assert warned == ["DeprecationWarning"] and call == "RuntimeError"


class PairProduct(minigrad.autograd.NestedIOFunction):
    """(a, b), [c] -> (a * b + c, [2a, None]): nested in, nested out, nested saves."""

    def forward_extended(self, pair, extra):
        a, b = pair
        self.save_for_backward(pair, [extra[0]])
        return a * b + extra[0], [a * 2, None]

    def backward_extended(self, grad_sum, grad_list):
        (a, b), [c] = self.saved_tensors
        assert grad_list[1] is None  # the None output has no gradient slot to fill
        return (grad_sum * b + grad_list[0] * 2, grad_sum * a), [grad_sum]


def test_nested_io_function_flattens_and_rebuilds_the_nesting():
    a, b, c = (minigrad.tensor(v, requires_grad=True) for v in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]))
    total, [double, nothing] = PairProduct()((a, b), [c])
    assert nothing is None and total.grad_fn is double.grad_fn and total.grad_fn.name() == "PairProductBackward"
    (total * total).sum().backward(retain_graph=True)
    expected = {"a": 2 * np.array([8.0, 14.0]) * [3.0, 4.0], "b": 2 * np.array([8.0, 14.0]) * [1.0, 2.0], "c": 2 * np.array([8.0, 14.0])}
    if HAVE_TORCH:  # the same function written with torch's plain ops (torch's own NestedIOFunction no longer runs)
        torch = _torch()
        ta, tb, tc = (torch.tensor(v, requires_grad=True) for v in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]))
        t_total = ta * tb + tc
        (t_total * t_total).sum().backward()
        expected = {"a": ta.grad.numpy(), "b": tb.grad.numpy(), "c": tc.grad.numpy()}
    for name, t in zip("abc", (a, b, c)):
        np.testing.assert_allclose(t.grad.numpy(), expected[name], rtol=FLOAT32_RTOL)
    for t in (a, b, c):
        t.grad = None
    double.sum().backward()  # `total` got no gradient: backward_extended sees zeros for it, as in a Function
    assert a.grad.tolist() == [2.0, 2.0] and b.grad.tolist() == [0.0, 0.0] and c.grad.tolist() == [0.0, 0.0]


def test_nested_io_function_rejects_what_torch_rejects():
    with pytest.raises(ValueError, match="Auto nesting doesn't know how to process an input object of type float"):
        PairProduct()((minigrad.ones(1), 2.0), [minigrad.ones(1)])
    fn = PairProduct()
    fn((minigrad.ones(1), minigrad.ones(1)), [minigrad.ones(1)])
    with pytest.raises(RuntimeError, match="already called once"):
        fn((minigrad.ones(1), minigrad.ones(1)), [minigrad.ones(1)])


@needs_torch
def test_torch_nested_io_function_instances_no_longer_run():
    """Why minigrad's NestedIOFunction documents a difference: PyTorch's instance call is broken."""
    torch = _torch()

    class Twice(torch.autograd.function.NestedIOFunction):
        def forward_extended(self, x):
            return x * 2

        def backward_extended(self, g):
            return g * 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        instance = Twice()
    with pytest.raises(AttributeError):
        instance(torch.ones(1, requires_grad=True))


# -- more edges, each against torch -------------------------------------------------------


def test_a_node_prehook_cannot_invent_a_gradient_for_an_unused_output():
    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        p, q = (x * 1).split(2)
        p.grad_fn.register_prehook(lambda go: (go[0], lib.ones(1)))
        return outcome(lambda: p.sum().backward())

    assert assert_same(program) == ["RuntimeError", "can't replace a None gradient with a non-None value"]


def test_node_hooks_of_a_multi_output_node_see_none_for_an_unused_output():
    def program(lib):
        log = []
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        p, q = (x * 1).split(2)
        p.grad_fn.register_prehook(lambda go: log.append(("pre", plain(go))))
        # Only grad_inputs[0]: minigrad's Split also has slots for its non-tensor arguments
        # (split_size, dim), where torch's SplitBackward0 has one input edge.
        p.grad_fn.register_hook(lambda gi, go: log.append(("post", plain(gi[0]), plain(go))))
        p.sum().backward()
        return log, x.grad

    log, grad = assert_same(program)
    assert log[0] == ["pre", [[1.0, 1.0], None]] and grad == [1.0, 1.0, 0.0]


def test_anomaly_mode_without_a_recorded_forward_says_so():
    def program(lib):
        x = lib.tensor([-1.0], requires_grad=True)
        y = x.sqrt()  # recorded outside anomaly mode: no traceback kept
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.set_detect_anomaly(True):
                result = outcome(lambda: y.backward())
        # torch appends where in its C++ sources the warning was raised: compare the text before it.
        return result, [str(w.message).split(" (Triggered internally")[0] for w in caught]

    (kind, message), warned = assert_same(program)
    assert kind == "RuntimeError" and "SqrtBackward0" in message
    assert warned == [
        "Error detected in SqrtBackward0. No forward pass information available. Enable detect anomaly during "
        "forward pass for more information."
    ]


def test_anomaly_mode_changes_the_version_error_hint_as_torch_does():
    def program(lib):
        x = lib.tensor([1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(check_nan=False):
                h = x * 1
                y = h.exp()
                y.add_(1)  # exp saved its output, which changes here
                kind, message = outcome(lambda: y.backward())
        return kind, message.split("Hint: ")[1]

    kind, hint = assert_same(program)
    assert kind == "RuntimeError" and hint.startswith("the backtrace further above shows the operation")


def test_checkpoint_passes_keyword_arguments_and_can_skip_the_rng_replay():
    from minigrad.utils.checkpoint import checkpoint

    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    out = checkpoint(lambda t, scale: (t * scale).exp(), x, scale=2.0, use_reentrant=False)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([2.0, 4.0]), rtol=FLOAT32_RTOL)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda t, scale: t * scale, x, scale=2.0, use_reentrant=True)

    def noisy(t):
        return t * minigrad.rand(2)

    minigrad.manual_seed(0)
    out = checkpoint(noisy, x, use_reentrant=False, preserve_rng_state=False)
    forward_draw = (out / x).detach().numpy()
    x.grad = None
    out.sum().backward()  # recomputed with the generator as it is now: other random numbers
    assert not np.allclose(x.grad.numpy(), forward_draw)


def test_checkpoint_sequential_matches_torch_and_the_plain_run():
    def program(lib, checkpointed):
        if lib is minigrad:
            from minigrad.utils.checkpoint import checkpoint_sequential
        else:
            from torch.utils.checkpoint import checkpoint_sequential
        rng = np.random.default_rng(1)
        x = lib.tensor(rng.standard_normal((4, 3)), requires_grad=True)
        weights = [lib.tensor(rng.standard_normal((3, 3)), requires_grad=True) for _ in range(5)]
        functions = [lambda h, w=w: (h @ w).tanh() for w in weights]
        out = checkpoint_sequential(functions, 2, x, use_reentrant=False) if checkpointed else functions[4](
            functions[3](functions[2](functions[1](functions[0](x)))))
        out.sum().backward()
        return [x.grad] + [w.grad for w in weights]

    plain_grads = program(minigrad, False)
    ckpt_grads = program(minigrad, True)
    for p, c in zip(plain_grads, ckpt_grads):
        np.testing.assert_allclose(c.numpy(), p.numpy(), rtol=1e-12)
    if HAVE_TORCH:
        for c, t in zip(ckpt_grads, program(_torch(), True)):
            np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-10)

    from minigrad.utils.checkpoint import checkpoint_sequential

    model = minigrad.nn.Sequential(minigrad.nn.Linear(3, 3), minigrad.nn.Tanh(), minigrad.nn.Linear(3, 1))
    x = minigrad.randn(2, 3)
    np.testing.assert_allclose(checkpoint_sequential(model, 2, x, use_reentrant=False).detach().numpy(),
                               model(x).detach().numpy(), rtol=FLOAT32_RTOL)


def test_anomaly_mode_follows_a_node_made_by_backward_to_its_parent():
    """A NaN in a second-order backward: the failing node was recorded by the first backward
    (create_graph=True), so the warning also shows the forward line of the node that made it."""

    def program(lib):
        x = lib.tensor([0.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                y = x.sqrt() * 1
                g, = lib.autograd.grad(y.sum(), x, create_graph=True)  # 1 / (2 sqrt(x)) = inf
                result = outcome(lambda: (g * 0).sum().backward())  # 0 * inf in the second backward
        told = [str(w.message).split(" (Triggered internally")[0] for w in caught if issubclass(w.category, UserWarning)
                and ("Error detected" in str(w.message) or "Previous calculation" in str(w.message))]
        return result, [m.splitlines()[:3] if m.startswith("\n") else m.splitlines()[:1] for m in told], told

    mine, theirs = both(program)
    if theirs is not None:  # the stacks differ (torch's includes its own Python frames): compare the rest
        assert_matches(plain(mine[:2]), plain(theirs[:2]))
    (kind, message), heads, told = mine
    assert kind == "RuntimeError" and "returned nan values" in message
    assert heads[1][2].startswith("Previous calculation was induced by SqrtBackward0.")
    assert "y = x.sqrt() * 1" in told[1]


def test_save_on_cpu_runs_as_in_torch():
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.save_on_cpu(pin_memory=False):
            y = (a * a).exp().sum()
        y.backward()
        return a.grad

    np.testing.assert_allclose(assert_same(program), 2 * np.array([1.0, 2.0]) * np.exp([1.0, 4.0]), rtol=FLOAT32_RTOL)
