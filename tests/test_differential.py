"""Differential testing: random programs run on minigrad and on torch must agree.

Hypothesis generates small programs over the shared API (leaves, elementwise ops
with broadcasting, reductions, views and indexing, in-place ops on tensors and
views, tensor and node hooks, retain_grad, backward with retain_graph and
create_graph, autograd.grad, custom Functions (one returning a view of a temporary it changed
in place, one with setup_context and a default argument), grad-mode decorators (no_grad,
enable_grad, inference_mode, set_grad_enabled) on functions and generators, inference tensors,
post-accumulate-grad hooks that read and scale ``.grad``, ``.data`` assignment, var_mean and
std_mean, leaves made with the legacy names), see ``tests/differential/``.
Each runs on both libraries; every value, ``.grad``, hook call, custom backward
call and exception type must agree. A failure prints the shrunk program as a
list you can paste into ``tests/test_differential_regressions.py``.

Budget: the ``ci`` hypothesis profile (``tests/conftest.py``); run thousands with
``--hypothesis-profile=long``.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import event, given, reject  # noqa: E402

import minigrad  # noqa: E402
from tests.differential import interpreter  # noqa: E402
from tests.differential.program import programs  # noqa: E402


@given(programs())
def test_minigrad_and_torch_agree_on_random_programs(program):
    torch_trace = interpreter.canonical(interpreter.run(torch, program), program)
    if torch_trace and torch_trace[-1][0] == "unspecified":
        reject()  # torch's answer depends on its loop order: no answer to compare with
    last = torch_trace[-1] if torch_trace else ("end",)
    # Reported by --hypothesis-show-statistics: how many programs ran to the end.
    event("torch raised" if last[0] == "raise" else "ran to the end")
    difference = interpreter.first_difference(
        interpreter.canonical(interpreter.run(minigrad, program), program), torch_trace, interpreter.tolerance(program)
    )
    assert difference is None, (
        f"minigrad and torch differ on this program:\n{interpreter.format_program(program)}\n{difference}"
    )


# -- the tester itself can fail ---------------------------------------------------------------------
PROGRAM = [
    ("leaf", (2, 3), True, 1, "normal"),
    ("unary", "exp", 0),
    ("hook", 1, 2.0),
    ("reduce", "sum", 1, 1, False),
    ("backward", 2, 5, None, False, None),
]


def test_the_same_program_passes():
    interpreter.check(PROGRAM)


class _SlightlyWrongExp(minigrad.autograd.Function):
    """exp with its value or its gradient off by one part in 10^7, as a planted bug."""

    wrong_value = False

    @staticmethod
    def forward(ctx, x):
        y = minigrad.tensor(np.exp(x.detach().numpy()) * (1.0000001 if _SlightlyWrongExp.wrong_value else 1.0))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y * (1.0 if _SlightlyWrongExp.wrong_value else 1.0000001)


def test_a_wrong_value_is_caught(monkeypatch):
    monkeypatch.setattr(_SlightlyWrongExp, "wrong_value", True)
    monkeypatch.setattr(minigrad.Tensor, "exp", _SlightlyWrongExp.apply)
    with pytest.raises(AssertionError, match="'val'"):
        interpreter.check(PROGRAM)


def test_a_wrong_gradient_is_caught(monkeypatch):
    monkeypatch.setattr(minigrad.Tensor, "exp", _SlightlyWrongExp.apply)
    with pytest.raises(AssertionError, match="'hook'|'grad'"):
        interpreter.check(PROGRAM)


def test_a_different_exception_type_is_caught(monkeypatch):
    def raise_type_error(*args, **kwargs):
        raise TypeError("not what torch raises")

    monkeypatch.setattr(minigrad.Tensor, "register_hook", raise_type_error)
    with pytest.raises(AssertionError, match="TypeError"):
        interpreter.check(PROGRAM)


def test_a_write_that_reads_what_it_overwrote_is_unspecified():
    # torch cannot prove the overlap of x and its column x[:, :1] (not dense), so it runs its loop anyway
    x = ("leaf", (2, 2), False, 0, "normal")
    assert interpreter.run(torch, [x, ("index", 0, (slice(None), slice(None, 1))),
                                   ("inplace", "add_", 0, 1, None, True)])[-1] == ("unspecified", 2)
    assert interpreter.run(torch, [x, ("index", 0, (0,)), ("setitem", 0, (slice(None), 1), 1, None, True)])[-1] == (
        "unspecified", 2)
    # seed 7240: x[[0, 1]] = x[:, 0] (index_put_) writes x[0, 1] before it reads it as the value's x[1, 0]
    y = ("leaf", (3, 3), False, 0, "normal")
    assert interpreter.run(torch, [y, ("multi", "unbind", 0, (1,), 3),
                                   ("setitem", 0, (("list", (0, 1)),), 1, None, True)])[-1] == ("unspecified", 2)
    z = ("leaf", (2, 3), False, 0, "normal")  # column 1 from column 0: specified
    assert interpreter.run(torch, [z, ("multi", "unbind", 0, (1,), 3),
                                   ("setitem", 0, (("list", (0, 1)), 1), 1, None, True)])[-1][0] == "grad"
    # the same memory element for element, disjoint memory, a 0-d value (read once): specified
    for program in ([x, ("inplace", "add_", 0, 0, None, True)],
                    [x, ("index", 0, (0,)), ("setitem", 0, (1,), 1, None, True)],
                    [x, ("index", 0, (0, 0)), ("setitem", 0, (slice(None),), 1, None, True)]):
        assert interpreter.run(torch, program)[-1][0] == "grad"


def test_tolerance_counts_legacy_leaves():
    """A float32 leaf made with a legacy name gets float32's tolerance, as a plain float32 leaf does (long
    run, seed 101: cosh of a float32 Variable differed from torch in the last bit)."""
    plain = interpreter.tolerance([("leaf", (2,), False, 0, "float32")])
    assert interpreter.tolerance([("legacy_leaf", (2,), False, 0, "float32", "Variable")]) == plain
    assert plain > interpreter.tolerance([("leaf", (2,), False, 0, "normal")])


def test_tolerance_grows_with_program_size():
    eps = np.finfo(np.float64).eps
    small = interpreter.tolerance([("leaf", (2,), True, 0, "normal")])
    large = interpreter.tolerance([("leaf", (3, 3, 3), True, 0, "normal")] * 5)
    assert eps < small < large < 1e-9


def test_an_internal_assertion_of_torch_is_unspecified():
    # seed 7184: in place on output 1 of a custom Function that retains its grad fails torch's
    # "out != nullptr" assertion (a bug: on output 0 the retain_grad moves to the new node)
    x = ("leaf", (), True, 0, "normal")
    for output in (1, 2):
        program = [x, ("func", "TwoOut", (0,), (False,)), ("backward", output, 0, None, False, [output]),
                   ("inplace", "mul_", output, None, 2.0, False), ("backward", output, 1, None, False, None)]
        if output == 2:
            assert interpreter.run(torch, program)[-1] == ("unspecified", 3)
        else:
            interpreter.check(program)
