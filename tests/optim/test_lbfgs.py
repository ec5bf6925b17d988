"""LBFGS against torch 2.13: whole steps (many closure calls each), the state it keeps, its refusals.

hypothesis draws a problem (a convex quadratic, the Rosenbrock function, a small
least-squares fit with a weight and a bias), a seed, and the hyperparameters, with
and without the strong-Wolfe line search. Both libraries take the same steps; after
each, the returned loss, the parameters and every entry of the state must agree
(same keys in the same order, a tensor where torch has a tensor, the same dtype).

Why a tolerance rather than bitwise equality: torch's dot products and ``add_(alpha=)``
use fused multiply-adds where NumPy rounds twice, so results differ by an ulp now and
then, and L-BFGS on Rosenbrock's valley amplifies a 1-ulp change of the start into
1e-6 after a few steps (torch against itself). So the step-by-step test loads torch's
parameters and state into minigrad before each step (a load_state_dict round trip, which
also tests loading), and only well-conditioned problems run free for several steps.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.optim
from minigrad.optim import LBFGS
from tests.optim.test_hooks_swa import _outcome


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


KINDS = ["quadratic", "rosenbrock", "least_squares"]


def _problem(lib, kind: str, seed: int, dtype: str = "float64"):
    """Parameters and a loss function of them, the same values in either library."""
    rng = np.random.default_rng(seed)

    def tensor(value, requires_grad=False):
        return lib.tensor(np.asarray(value, dtype=np.float64), dtype=getattr(lib, dtype), requires_grad=requires_grad)

    if kind == "quadratic":  # 0.5 x'Ax - b'x with A symmetric positive definite
        n = int(rng.integers(1, 6))
        m = rng.normal(size=(n, n))
        a, b = tensor(m @ m.T + 0.5 * np.eye(n)), tensor(rng.normal(size=n))
        x = tensor(rng.normal(size=n), True)
        return [x], lambda: 0.5 * (x * (a @ x)).sum() - (b * x).sum()
    if kind == "rosenbrock":
        x = tensor(rng.normal(size=2) * 0.5 + [-1.0, 1.0], True)
        return [x], lambda: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    features, targets = tensor(rng.normal(size=(6, 3))), tensor(rng.normal(size=6))
    w, b = tensor(rng.normal(size=3), True), tensor(rng.normal(), True)
    return [w, b], lambda: ((features @ w + b - targets) ** 2).mean()


def _closure(optimizer, loss_fn, calls: list):
    def closure():
        calls.append(1)
        optimizer.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss
    return closure


# Two choices would put a branch on a knife's edge, where an ulp decides between two paths: with lr=0.1 the
# line search's first bracket ends at 10 * lr = 1, where a quadratic's line minimum is once L-BFGS has learned
# the Hessian; with tolerance_grad=1e-7 the iterations reach gradients made of rounding errors. And at most 8
# iterations per step: 20 fixed steps along Rosenbrock's valley amplify rounding past 1e-9.
HYPERPARAMETERS = dict(
    lr=st.sampled_from([1, 1.0, 0.5, 0.3]),
    max_eval=st.none() | st.integers(2, 12),
    tolerance_grad=st.sampled_from([1e-5, 1e-3]),
    tolerance_change=st.sampled_from([1e-9, 1e-6]),
    history_size=st.integers(1, 5),
    line_search_fn=st.sampled_from([None, "strong_wolfe"]),
)


def _to_minigrad(value):
    """A torch state value (tensors, lists of them, numbers) in minigrad."""
    if hasattr(value, "numpy"):
        return minigrad.tensor(value.detach().numpy().copy())
    if isinstance(value, list):
        return [_to_minigrad(v) for v in value]
    return value


def _assert_close(ours, theirs, tol: float | None, where: str, scale: float | None = None) -> None:
    """A minigrad tensor like a torch tensor: dtype, shape, and values within ``tol`` of ``scale`` (theirs' largest).

    ``tol=None``: the layout only.
    """
    assert isinstance(ours, minigrad.Tensor), where
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], where
    assert ours.shape == tuple(theirs.shape), where
    if tol is None:
        return
    expected = theirs.detach().numpy()
    if scale is None:
        scale = float(np.max(np.abs(expected), initial=0.0))
    assert np.max(np.abs(ours.numpy() - expected), initial=0.0) <= tol * scale, where


def _assert_same_state(ours: dict, theirs: dict, tol: float) -> None:
    """The same keys in the same order, tensors where torch has tensors, numbers where it has numbers.

    Values are compared at their natural scale: the history's vectors against the
    largest entry of their list (a short last step is all rounding); ``ro = 1 / y·s``
    through ``y·s`` against ``|y| |s|``, since y·s cancels. ``al`` is scratch space
    for the two-loop recursion, cancelling too (``s·q`` with q nearly orthogonal to s):
    only its layout is compared; its effect is in ``d``.
    """
    assert list(ours) == list(theirs)
    for key, value in theirs.items():
        if isinstance(value, list):
            assert isinstance(ours[key], list) and len(ours[key]) == len(value), key
            assert [v is None for v in ours[key]] == [v is None for v in value], key
            present = [(a, b) for a, b in zip(ours[key], value) if b is not None]
            scale = max((float(b.abs().max()) for _, b in present), default=0.0)
            for a, b in present:
                _assert_close(a, b, tol if key in ("old_dirs", "old_stps") else None, key, scale)
        elif hasattr(value, "numpy"):
            _assert_close(ours[key], value, tol, key)
        else:
            assert type(ours[key]) is type(value), (key, ours[key], value)
            assert ours[key] == pytest.approx(value, rel=tol), key
    if theirs.get("ro"):
        scale = max(float(y.abs().max()) for y in theirs["old_dirs"]) * max(float(s.abs().max())
                                                                          for s in theirs["old_stps"])
        for a, b in zip(ours["ro"], theirs["ro"]):
            assert abs(1 / float(a) - 1 / float(b)) <= tol * scale, "ro"


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(KINDS), seed=st.integers(0, 2**16), steps=st.integers(1, 4),
       options=st.fixed_dictionaries({"max_iter": st.integers(1, 8)}, optional=HYPERPARAMETERS))
def test_each_step_matches_torch(torch, kind, seed, steps, options):
    """Each step from torch's parameters and state: the same loss, parameters, state and closure calls."""
    params, loss_fn = _problem(minigrad, kind, seed)
    tparams, tloss_fn = _problem(torch, kind, seed)
    ours, theirs = LBFGS(params, **options), torch.optim.LBFGS(tparams, **options)
    calls, tcalls = [], []
    for _ in range(steps):
        tloss = theirs.step(_closure(theirs, tloss_fn, tcalls))
        loss = ours.step(_closure(ours, loss_fn, calls))
        assert len(calls) == len(tcalls)
        assert float(loss) == pytest.approx(float(tloss), rel=1e-13)
        for p, tp in zip(params, tparams):
            _assert_close(p.detach(), tp.detach(), 1e-9, "parameter")
        _assert_same_state(ours.state_dict()["state"][0], theirs.state_dict()["state"][0], 1e-5)
        # the next step starts from torch's parameters and state, exactly
        with minigrad.no_grad():
            for p, tp in zip(params, tparams):
                p.copy_(minigrad.tensor(tp.detach().numpy()))
        saved = theirs.state_dict()
        ours.load_state_dict({"state": {0: {k: _to_minigrad(v) for k, v in saved["state"][0].items()}},
                              "param_groups": saved["param_groups"]})


@settings(max_examples=15, deadline=None)
@given(kind=st.sampled_from(["quadratic", "least_squares"]), seed=st.integers(0, 2**16),
       dtype=st.sampled_from(["float64", "float32"]), line_search_fn=st.sampled_from([None, "strong_wolfe"]),
       max_iter=st.integers(1, 6), history_size=st.integers(1, 4))
def test_well_conditioned_problems_follow_torch_for_several_steps(torch, kind, seed, dtype, line_search_fn, max_iter,
                                                                   history_size):
    """Each library on its own state, on problems that don't amplify rounding; stopping before the gradient
    is all rounding error (tolerance_grad): float64 to 1e-9 with the same state and counts, float32 to 1e-3."""
    options = dict(line_search_fn=line_search_fn, max_iter=max_iter, history_size=history_size,
                   tolerance_grad=1e-5 if dtype == "float64" else 1e-2)
    tol = 1e-9 if dtype == "float64" else 1e-3
    params, loss_fn = _problem(minigrad, kind, seed, dtype)
    tparams, tloss_fn = _problem(torch, kind, seed, dtype)
    ours, theirs = LBFGS(params, **options), torch.optim.LBFGS(tparams, **options)
    for _ in range(4):
        loss = ours.step(_closure(ours, loss_fn, []))
        tloss = theirs.step(_closure(theirs, tloss_fn, []))
        assert float(loss) == pytest.approx(float(tloss), rel=tol)
        for p, tp in zip(params, tparams):
            _assert_close(p.detach(), tp.detach(), tol, "parameter")
    if dtype == "float64":
        _assert_same_state(ours.state_dict()["state"][0], theirs.state_dict()["state"][0], 1e-5)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_one_step_solves_a_linear_system(line_search_fn):
    """Minimising 0.5 x'Ax - b'x solves Ax = b: one step of 20 iterations gets there on 5 unknowns."""
    rng = np.random.default_rng(3)
    m = rng.normal(size=(5, 5))
    a, b = m @ m.T + np.eye(5), rng.normal(size=5)
    x = minigrad.zeros(5, dtype=minigrad.float64, requires_grad=True)
    optimizer = LBFGS([x], line_search_fn=line_search_fn, tolerance_grad=1e-12, tolerance_change=1e-15)
    at, bt = minigrad.tensor(a), minigrad.tensor(b)
    optimizer.step(_closure(optimizer, lambda: 0.5 * (x * (at @ x)).sum() - (bt * x).sum(), []))
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(a, b), atol=1e-8)


def test_signature_repr_and_state_dict_layout_are_torchs(torch):
    def signature(cls):
        return [(p.name, p.default, p.kind) for p in inspect.signature(cls).parameters.values()]

    assert signature(LBFGS) == signature(torch.optim.LBFGS)
    params, loss_fn = _problem(minigrad, "least_squares", 0)
    tparams, tloss_fn = _problem(torch, "least_squares", 0)
    ours, theirs = LBFGS(params, max_iter=3), torch.optim.LBFGS(tparams, max_iter=3)
    assert repr(ours) == repr(theirs)
    assert ours.state_dict() == theirs.state_dict()  # no state yet
    ours.step(_closure(ours, loss_fn, []))
    theirs.step(_closure(theirs, tloss_fn, []))
    saved, tsaved = ours.state_dict(), theirs.state_dict()
    assert saved["param_groups"] == tsaved["param_groups"]
    assert list(saved["state"]) == list(tsaved["state"]) == [0]  # all of it under the first parameter
    assert list(saved["state"][0]) == list(tsaved["state"][0])


def test_refusals_are_torchs(torch):
    def groups(lib):
        return [{"params": [lib.zeros(1, requires_grad=True)]}, {"params": [lib.zeros(1, requires_grad=True)]}]

    for make in (lambda lib: lib.optim.LBFGS(groups(lib)),
                 lambda lib: lib.optim.LBFGS([lib.zeros(1, requires_grad=True)], lr=-1.0),
                 lambda lib: lib.optim.LBFGS([lib.zeros(1, requires_grad=True)], lr=float("nan")),
                 lambda lib: lib.optim.LBFGS([]),
                 lambda lib: lib.optim.LBFGS([lib.zeros(1, requires_grad=True)]).step()):
        assert _outcome(lambda: make(minigrad)) == _outcome(lambda: make(torch)) is not None

    def step_after(lib, change):
        params, loss_fn = _problem(lib, "rosenbrock", 0)
        optimizer = lib.optim.LBFGS(params)
        change(lib, optimizer)
        optimizer.step(_closure(optimizer, loss_fn, []))

    def bad_line_search(lib, optimizer):
        optimizer.param_groups[0]["line_search_fn"] = "armijo"

    def second_group(lib, optimizer):
        optimizer.add_param_group({"params": [lib.zeros(1, requires_grad=True)]})

    for change in (bad_line_search, second_group):
        ours, theirs = _outcome(lambda: step_after(minigrad, change)), _outcome(lambda: step_after(torch, change))
        assert ours == theirs is not None


def test_a_step_runs_the_step_hooks_once_however_many_closure_calls(torch):
    for lib in (minigrad, torch):
        params, loss_fn = _problem(lib, "rosenbrock", 1)
        optimizer = lib.optim.LBFGS(params, max_iter=5, line_search_fn="strong_wolfe")
        seen, calls = [], []
        optimizer.register_step_pre_hook(lambda opt, args, kwargs: seen.append(("pre", len(args), dict(kwargs))))
        optimizer.register_step_post_hook(lambda opt, args, kwargs: seen.append(("post", len(args), dict(kwargs))))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            optimizer.step(closure=_closure(optimizer, loss_fn, calls))
        assert len(calls) > 2
        assert [(kind, n, list(kw)) for kind, n, kw in seen] == [("pre", 1, ["closure"]), ("post", 1, ["closure"])]


def test_step_returns_the_first_loss_and_stops_at_once_at_a_minimum():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    optimizer = LBFGS([x])
    calls = []
    loss = optimizer.step(_closure(optimizer, lambda: ((x - minigrad.tensor([1.0, 2.0])) ** 2).sum(), calls))
    assert float(loss) == 0.0 and len(calls) == 1
    assert optimizer.state[x] == {"func_evals": 1, "n_iter": 0}
