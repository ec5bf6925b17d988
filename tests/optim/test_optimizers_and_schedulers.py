"""The optimizers and learning-rate schedulers PyTorch tutorials use beyond SGD, Adam and StepLR, against torch 2.13.

Optimizers (Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop): hypothesis draws the
hyperparameters, one to three parameter groups with their own, parameter shapes (0-d and
empty too) and gradient sequences (missing, zero, mostly-zero, dense, at several scales),
in float64 and float32; both libraries take the same steps from the same values and must
agree after each, on the parameters and on every piece of state, with a state_dict round
trip half way. Schedulers alike, on the learning rates and momenta, the deprecated
``step(epoch)`` included. Then the signatures, the exceptions for bad arguments, and a few
closed forms that run without torch.
"""
from __future__ import annotations

import inspect
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.nn as nn
import minigrad.optim
from minigrad.optim import lr_scheduler

OPTIMIZERS = ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]
SCHEDULERS = [
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
    "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
    "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR",
]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _tolerance(dtype: np.dtype) -> float:
    """2**10 units in the last place: both libraries round alike, so differences stay a few ulps."""
    return 2**10 * float(np.finfo(dtype).eps)


# -- optimizers: hyperparameters ---------------------------------------------------------------------------------

LR = st.floats(1e-4, 1.0)
EPS = st.sampled_from([1e-10, 1e-8, 1e-3, 0.1])
WEIGHT_DECAY = st.sampled_from([0, 0.0]) | st.floats(0, 0.2)
BETAS = st.tuples(st.floats(0, 0.99), st.floats(0, 0.999))
FLAG = st.booleans()
HYPERPARAMETERS = {
    "Adagrad": dict(lr=LR, lr_decay=st.floats(0, 1), weight_decay=WEIGHT_DECAY,
                    initial_accumulator_value=st.floats(0, 1), eps=EPS, maximize=FLAG),
    "Adadelta": dict(lr=st.floats(1e-2, 2), rho=st.floats(0, 1), eps=EPS, weight_decay=WEIGHT_DECAY, maximize=FLAG),
    "Adamax": dict(lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY, maximize=FLAG),
    "NAdam": dict(lr=LR, betas=BETAS, eps=EPS, weight_decay=WEIGHT_DECAY, momentum_decay=st.floats(0, 0.1),
                  decoupled_weight_decay=FLAG, maximize=FLAG),
    # beta2 near 1 so that RAdam's rho_t passes 5 within the steps taken
    "RAdam": dict(lr=LR, betas=st.tuples(st.floats(0, 0.99), st.floats(0.5, 0.999)), eps=EPS,
                  weight_decay=WEIGHT_DECAY, decoupled_weight_decay=FLAG, maximize=FLAG),
    "ASGD": dict(lr=LR, lambd=st.floats(0, 1), alpha=st.floats(0, 1), t0=st.floats(0, 6), weight_decay=WEIGHT_DECAY,
                 maximize=FLAG),
    "Rprop": dict(lr=LR, etas=st.tuples(st.floats(0.05, 0.95), st.floats(1.05, 3)),
                  step_sizes=st.tuples(st.floats(1e-6, 1e-2), st.floats(0.02, 50)), maximize=FLAG),
}
SHAPES = st.sampled_from([(), (1,), (4,), (2, 3), (2, 1, 2), (0,)])


@st.composite
def optimizer_runs(draw, name: str) -> dict:
    """Hyperparameters, groups, values and the gradients of each step (None: no gradient that step)."""
    options = st.fixed_dictionaries({}, optional=HYPERPARAMETERS[name])
    groups = draw(st.lists(st.tuples(st.lists(SHAPES, min_size=1, max_size=2), options), min_size=1, max_size=3))
    dtype = draw(st.sampled_from([np.float64, np.float64, np.float32]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_steps = draw(st.integers(1, 9))
    scale = draw(st.sampled_from([1e-3, 1.0, 30.0]))
    shapes = [shape for shapes, _ in groups for shape in shapes]

    def gradient(shape):
        kind = rng.choice(["none", "zero", "sparse", "dense"], p=[0.15, 0.1, 0.3, 0.45])
        if kind == "none":
            return None
        kept = {"zero": 0.0, "sparse": 0.3, "dense": 1.0}[kind]  # the fraction of entries not zero
        return np.where(rng.random(shape) < kept, scale * rng.standard_normal(shape), 0.0).astype(dtype)

    return dict(
        defaults=draw(options),
        groups=[(len(shapes), overrides) for shapes, overrides in groups],
        values=[rng.standard_normal(shape).astype(dtype) for shape in shapes],
        grads=[[gradient(shape) for shape in shapes] for _ in range(n_steps)],
        reload_at=draw(st.none() | st.integers(0, n_steps)),
    )


def _parameters(lib, values: list) -> list:
    if lib is minigrad:
        return [nn.Parameter(minigrad.tensor(v.copy())) for v in values]
    return [lib.tensor(v.copy(), requires_grad=True) for v in values]


def _optimizer(lib, name: str, params: list, run: dict):
    groups, start = [], 0
    for count, overrides in run["groups"]:
        groups.append({"params": params[start:start + count], **overrides})
        start += count
    return getattr(lib.optim, name)(groups, **run["defaults"])


def _numpy(x) -> np.ndarray:
    return np.asarray(x.detach().numpy() if hasattr(x, "detach") else x)


def _assert_same_state(ours, theirs, params: list, tparams: list, tol: float) -> None:
    """Same keys for every parameter, values within ``tol``, tensors of the same dtype (PyTorch's step is a tensor)."""
    for p, tp in zip(params, tparams):
        state, tstate = ours.state.get(p, {}), theirs.state.get(tp, {})
        assert list(state) == list(tstate)
        for key, value in state.items():
            if key != "step":
                assert str(_numpy(value).dtype) == str(_numpy(tstate[key]).dtype), key
            np.testing.assert_allclose(_numpy(value), _numpy(tstate[key]), rtol=tol, atol=tol, err_msg=key)


@pytest.mark.parametrize("name", OPTIMIZERS)
@settings(max_examples=60)
@given(data=st.data())
def test_optimizer_steps_match_torch(torch, name, data):
    run = data.draw(optimizer_runs(name))
    tol = _tolerance(run["values"][0].dtype)
    params, tparams = _parameters(minigrad, run["values"]), _parameters(torch, run["values"])
    ours, theirs = _optimizer(minigrad, name, params, run), _optimizer(torch, name, tparams, run)
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]
    for step, grads in enumerate(run["grads"]):
        if step == run["reload_at"]:  # continue in new optimizers from the saved (and pickled) state
            saved, tsaved = pickle.loads(pickle.dumps(ours.state_dict())), theirs.state_dict()
            ours, theirs = _optimizer(minigrad, name, params, run), _optimizer(torch, name, tparams, run)
            ours.load_state_dict(saved)
            theirs.load_state_dict(tsaved)
        for p, tp, g in zip(params, tparams, grads):
            p.grad, tp.grad = (None, None) if g is None else (minigrad.tensor(g), torch.tensor(g))
        ours.step()
        theirs.step()
        for p, tp in zip(params, tparams):
            np.testing.assert_allclose(_numpy(p), _numpy(tp), rtol=tol, atol=tol)
        _assert_same_state(ours, theirs, params, tparams, tol)
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


# -- optimizers: signatures and arguments ------------------------------------------------------------------------

def _signature(cls) -> list[tuple]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(cls.__init__).parameters.values()]


@pytest.mark.parametrize("name", OPTIMIZERS + ["SGD", "Adam", "AdamW", "RMSprop"])
def test_optimizer_signature_is_torchs(torch, name):
    assert _signature(getattr(minigrad.optim, name)) == _signature(getattr(torch.optim, name))
    # (the repr lists every hyperparameter of a group, flags included)
    assert repr(getattr(minigrad.optim, name)([nn.Parameter(minigrad.zeros(1))])) == \
        repr(getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)]))


@pytest.mark.parametrize("name", SCHEDULERS)
def test_scheduler_signature_is_torchs(torch, name):
    assert _signature(getattr(lr_scheduler, name)) == _signature(getattr(torch.optim.lr_scheduler, name))


def test_names_are_torchs(torch):
    assert set(lr_scheduler.__all__) == set(torch.optim.lr_scheduler.__all__)
    assert set(minigrad.optim.__all__) <= set(torch.optim.__all__)


ANY_NUMBER = st.floats(-2, 2) | st.sampled_from([0.0, -0.0, 1.0, math.nan, math.inf, -1e-12])
PAIR = st.tuples(ANY_NUMBER, ANY_NUMBER)


def _outcome(make):
    try:
        make()
    except Exception as error:  # noqa: BLE001 - the outcome compared is the exception itself
        return type(error).__name__, str(error)
    return None


@pytest.mark.parametrize("name", OPTIMIZERS)
@settings(max_examples=40)
@given(data=st.data())
def test_bad_hyperparameters_raise_as_torch(torch, name, data):
    keys = [k for k in HYPERPARAMETERS[name] if k not in ("maximize", "decoupled_weight_decay")]
    arguments = data.draw(st.dictionaries(st.sampled_from(keys), ANY_NUMBER, min_size=1, max_size=3))
    arguments = {k: data.draw(PAIR) if k in ("betas", "etas", "step_sizes") else v for k, v in arguments.items()}
    ours = _outcome(lambda: getattr(minigrad.optim, name)([nn.Parameter(minigrad.zeros(2))], **arguments))
    theirs = _outcome(lambda: getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **arguments))
    assert ours == theirs


@pytest.mark.parametrize("name", OPTIMIZERS + ["SGD", "Adam", "AdamW", "RMSprop"])
def test_flags_for_other_implementations_only_at_their_defaults(name):
    cls = getattr(minigrad.optim, name)
    flags = {"differentiable": False, "capturable": False, "fused": None}
    flags = {k: v for k, v in flags.items() if k in inspect.signature(cls).parameters}
    cls([nn.Parameter(minigrad.zeros(1))], foreach=True, **flags)  # foreach is ignored
    for flag in flags:
        with pytest.raises(NotImplementedError, match=f"^{name} got {flag}=True, but .*: leave {flag} at its default$"):
            cls([nn.Parameter(minigrad.zeros(1))], **{flag: True})
        with pytest.raises(NotImplementedError):  # in a parameter group too
            cls([{"params": [nn.Parameter(minigrad.zeros(1))], flag: True}])


def test_adam_and_rmsprop_refuse_a_nan_rate_as_torch():
    for cls in (minigrad.optim.Adam, minigrad.optim.AdamW, minigrad.optim.RMSprop):
        with pytest.raises(ValueError, match="^Invalid learning rate: nan$"):
            cls([nn.Parameter(minigrad.zeros(1))], lr=math.nan)


# -- schedulers ----------------------------------------------------------------------------------------------------

class Decay:
    """A callable object for LambdaLR: its ``__dict__`` travels in the scheduler's state_dict (a lambda's can't)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def __call__(self, epoch: int) -> float:
        return self.rate**epoch


def _halve_every_3(epoch: int) -> float:
    return 0.5 ** (epoch // 3)


def _one_over(epoch: int) -> float:
    return 1 / (1 + epoch)


# A function of the epoch, the same object in both libraries (Decay is built anew for each, as its state changes).
LAMBDAS = st.sampled_from([_halve_every_3, _one_over]) | st.floats(0.5, 1.1).map(Decay)
GAMMA = st.floats(0.1, 1.0)
RATE = st.floats(1e-3, 1.0)


def _lambdas(groups: int):
    return LAMBDAS | st.lists(LAMBDAS, min_size=groups, max_size=groups)


def _kwargs(**strategies):
    return st.fixed_dictionaries({}, optional=strategies)


def _scheduler_arguments(name: str, groups: int):
    """A strategy for the keyword arguments of scheduler ``name``, on an optimizer with ``groups`` groups."""
    per_group = lambda s: s | st.lists(s, min_size=groups, max_size=groups)  # noqa: E731
    return {
        "LambdaLR": st.fixed_dictionaries({"lr_lambda": _lambdas(groups)}),
        "MultiplicativeLR": st.fixed_dictionaries({"lr_lambda": _lambdas(groups)}),
        "StepLR": st.fixed_dictionaries({"step_size": st.integers(1, 5)}, optional={"gamma": GAMMA}),
        "MultiStepLR": st.fixed_dictionaries({"milestones": st.lists(st.integers(0, 12), max_size=4)},
                                             optional={"gamma": GAMMA}),
        "ConstantLR": _kwargs(factor=st.floats(0, 1), total_iters=st.integers(0, 8)),
        "LinearLR": _kwargs(start_factor=st.floats(0.01, 1), end_factor=st.floats(0, 1), total_iters=st.integers(0, 8)),
        "ExponentialLR": st.fixed_dictionaries({"gamma": GAMMA}),
        "CosineAnnealingLR": st.fixed_dictionaries({"T_max": st.integers(1, 8)}, optional={"eta_min": RATE}),
        "PolynomialLR": _kwargs(total_iters=st.integers(0, 8), power=st.floats(0, 3)),
        "CosineAnnealingWarmRestarts": st.fixed_dictionaries(
            {"T_0": st.integers(1, 5)}, optional={"T_mult": st.integers(1, 3), "eta_min": st.floats(0, 1e-3)}),
        "CyclicLR": st.fixed_dictionaries(
            {"base_lr": per_group(st.floats(1e-4, 0.1)), "max_lr": per_group(st.floats(0.1, 1))},
            optional={"step_size_up": st.integers(1, 5), "step_size_down": st.none() | st.integers(1, 5),
                      "mode": st.sampled_from(["triangular", "triangular2", "exp_range"]), "gamma": st.floats(0.5, 1),
                      "scale_fn": st.sampled_from([_one_over, _halve_every_3]) | st.floats(0.5, 1).map(Decay),
                      "scale_mode": st.sampled_from(["cycle", "iterations"]), "cycle_momentum": FLAG,
                      "base_momentum": per_group(st.floats(0.5, 0.85)),
                      "max_momentum": per_group(st.floats(0.85, 0.99))}),
        "OneCycleLR": st.fixed_dictionaries(
            {"max_lr": per_group(RATE), "total_steps": st.integers(2, 30)},
            optional={"pct_start": st.floats(0.05, 0.95), "anneal_strategy": st.sampled_from(["cos", "linear"]),
                      "cycle_momentum": FLAG, "base_momentum": per_group(st.floats(0.5, 0.85)),
                      "max_momentum": per_group(st.floats(0.85, 0.99)), "div_factor": st.floats(1, 50),
                      "final_div_factor": st.floats(1, 1e4), "three_phase": FLAG}),
        "ReduceLROnPlateau": _kwargs(
            mode=st.sampled_from(["min", "max"]), factor=st.floats(0, 0.9), patience=st.integers(0, 3),
            threshold=st.floats(0, 0.1), threshold_mode=st.sampled_from(["rel", "abs"]), cooldown=st.integers(0, 3),
            min_lr=per_group(st.floats(0, 1e-3)), eps=st.sampled_from([1e-8, 1e-3])),
    }[name]


CHAINABLE = ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR", "CosineAnnealingLR", "PolynomialLR",
             "LambdaLR", "MultiplicativeLR", "CosineAnnealingWarmRestarts"]


@st.composite
def scheduler_specs(draw, name: str, groups: int):
    """``(name, kwargs)``; for SequentialLR and ChainedScheduler, their schedulers' specs (and milestones)."""
    if name in ("SequentialLR", "ChainedScheduler"):
        inner = draw(st.lists(st.sampled_from(CHAINABLE), min_size=1, max_size=3))
        specs = [draw(scheduler_specs(n, groups)) for n in inner]
        if name == "ChainedScheduler":
            return name, {"schedulers": specs}
        milestones = sorted(draw(st.lists(st.integers(1, 12), min_size=len(specs) - 1, max_size=len(specs) - 1)))
        return name, {"schedulers": specs, "milestones": milestones}
    return name, draw(_scheduler_arguments(name, groups))


def _fresh(value):
    """A new Decay for each library (it has state); functions and numbers are shared."""
    if isinstance(value, Decay):
        return Decay(value.rate)
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    return value


def _scheduler(module, optimizer, spec):
    name, kwargs = spec
    kwargs = {key: _fresh(value) for key, value in kwargs.items()}
    if name in ("SequentialLR", "ChainedScheduler"):
        schedulers = [_scheduler(module, optimizer, inner) for inner in kwargs.pop("schedulers")]
        if name == "ChainedScheduler":
            return module.ChainedScheduler(schedulers, optimizer)
        return module.SequentialLR(optimizer, schedulers, **kwargs)
    return getattr(module, name)(optimizer, **kwargs)


@st.composite
def scheduler_runs(draw, name: str) -> dict:
    lrs = draw(st.lists(RATE, min_size=1, max_size=3))
    spec = draw(scheduler_specs(name, len(lrs)))
    n_steps = draw(st.integers(1, 25))
    if name == "ReduceLROnPlateau":
        metric = st.sampled_from([1.0, 0.5, 0.99999]) | st.floats(0, 2)
        calls = draw(st.lists(st.tuples(st.just("metric"), metric), min_size=n_steps, max_size=n_steps))
    elif name in ("SequentialLR", "ChainedScheduler"):
        calls = [("step", None)] * n_steps
    else:  # now and then the deprecated step(epoch), fractional for the warm restarts
        epoch = st.floats(0, 20) if name == "CosineAnnealingWarmRestarts" else st.integers(0, 20)
        call = st.tuples(st.just("step"), st.none()) | st.tuples(st.just("epoch"), epoch)
        calls = draw(st.lists(call, min_size=n_steps, max_size=n_steps))
    return dict(lrs=lrs, spec=spec, calls=calls, adam=draw(FLAG), reload_at=draw(st.none() | st.integers(0, n_steps)))


def _scheduled_optimizer(lib, run: dict):
    groups = [{"params": [_parameters(lib, [np.zeros(1)])[0]], "lr": lr} for lr in run["lrs"]]
    return lib.optim.Adam(groups) if run["adam"] else lib.optim.SGD(groups, momentum=0.9)


def _group_values(optimizer) -> list[dict]:
    return [{k: v for k, v in group.items() if k != "params"} for group in optimizer.param_groups]


def _same_group_values(ours: list[dict], theirs: list[dict]) -> None:
    """Every key minigrad's groups have (torch's SGD has two more), equal to the last bit."""
    for group, tgroup in zip(ours, theirs):
        assert group == {key: tgroup[key] for key in group}


def _same_state(ours: dict, theirs: dict) -> None:
    """Every entry of minigrad's scheduler state_dict is in torch's (which also has a flag for get_lr's warning)."""
    for key, value in ours.items():
        assert key in theirs, key
        if key == "_schedulers":
            for inner, tinner in zip(value, theirs[key]):
                _same_state(inner, tinner)
        elif key != "lr_lambdas" or any(v is not None for v in value):
            assert value == theirs[key], key


def _run_step(scheduler, call):
    kind, value = call
    if kind == "metric":
        scheduler.step(value)
    elif kind == "epoch":
        scheduler.step(value)
    else:
        scheduler.step()


@pytest.mark.parametrize("name", SCHEDULERS)
@settings(max_examples=60)
@given(data=st.data())
def test_scheduler_matches_torch(torch, name, data):
    run = data.draw(scheduler_runs(name))
    libs = {minigrad: lr_scheduler, torch: torch.optim.lr_scheduler}
    state = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # step(epoch) is deprecated, in both
        outcomes = {}
        for lib, module in libs.items():
            optimizer = _scheduled_optimizer(lib, run)
            outcome = _outcome(lambda: state.__setitem__(lib, _scheduler(module, optimizer, run["spec"])))
            outcomes[lib] = outcome
            state[(lib, "optimizer")] = optimizer
        assert outcomes[minigrad] == outcomes[torch]
        if outcomes[minigrad] is not None:
            return
        ours, theirs = state[minigrad], state[torch]
        _same_group_values(_group_values(state[(minigrad, "optimizer")]), _group_values(state[(torch, "optimizer")]))
        for i, call in enumerate(run["calls"]):
            if i == run["reload_at"]:  # new optimizers and schedulers, loaded from the saved (and pickled) states
                for lib, module in libs.items():
                    scheduler, optimizer = state[lib], state[(lib, "optimizer")]
                    saved = (optimizer.state_dict(), scheduler.state_dict())
                    if lib is minigrad:
                        saved = pickle.loads(pickle.dumps(saved))
                    optimizer = state[(lib, "optimizer")] = _scheduled_optimizer(lib, run)
                    scheduler = state[lib] = _scheduler(module, optimizer, run["spec"])
                    optimizer.load_state_dict(saved[0])
                    scheduler.load_state_dict(saved[1])
                ours, theirs = state[minigrad], state[torch]
            for lib in libs:
                state[(lib, "optimizer")].step()
            outcome = _outcome(lambda: _run_step(ours, call))
            assert outcome == _outcome(lambda: _run_step(theirs, call))
            if outcome is not None:
                return
            _same_group_values(_group_values(state[(minigrad, "optimizer")]),
                               _group_values(state[(torch, "optimizer")]))
            assert ours.get_last_lr() == theirs.get_last_lr()
        _same_state(ours.state_dict(), theirs.state_dict())


ANY_ARGUMENT = st.sampled_from([-1, 0, 1, 2, 0.5, 1.5, -0.5, 2.0, math.nan, None, "cos", "min", "bad", [0.1],
                                [0.1, 0.2]])


@pytest.mark.parametrize("name", [n for n in SCHEDULERS if n not in ("SequentialLR", "ChainedScheduler")])
@settings(max_examples=40)
@given(data=st.data())
def test_bad_scheduler_arguments_raise_as_torch(torch, name, data):
    """Each argument replaced by anything from a list of plausible mistakes: the same error, or none."""
    arguments = data.draw(_scheduler_arguments(name, 1))
    keys = [k for k in inspect.signature(getattr(lr_scheduler, name)).parameters if k not in ("optimizer", "scale_fn")]
    arguments.update(data.draw(st.dictionaries(st.sampled_from(keys), ANY_ARGUMENT, min_size=1, max_size=2)))
    ours = _outcome(lambda: _scheduler(lr_scheduler, minigrad.optim.SGD([nn.Parameter(minigrad.zeros(1))],
                                                                       momentum=0.9), (name, arguments)))
    theirs = _outcome(lambda: _scheduler(torch.optim.lr_scheduler, torch.optim.SGD([torch.zeros(1, requires_grad=True)],
                                                                                  momentum=0.9), (name, arguments)))
    assert ours == theirs


def test_combining_schedulers_checks_them_as_torch(torch):
    outcomes = {}
    for lib, module in ((minigrad, lr_scheduler), (torch, torch.optim.lr_scheduler)):
        a, b = (_scheduled_optimizer(lib, dict(lrs=[0.1], adam=False)) for _ in range(2))
        plateau = module.ReduceLROnPlateau(a)
        cases = [
            lambda: module.SequentialLR(a, [], []),
            lambda: module.SequentialLR(a, [module.StepLR(a, 2)], [3]),
            lambda: module.SequentialLR(a, [module.StepLR(a, 2), plateau], [3]),
            lambda: module.SequentialLR(a, [module.StepLR(a, 2), object()], [3]),
            lambda: module.ChainedScheduler([]),
            lambda: module.ChainedScheduler([module.StepLR(a, 2), plateau]),
        ]
        outcomes[lib] = [_outcome(case) for case in cases]
        # the message goes on with the optimizer's repr, which names torch's extra flags
        kind, message = _outcome(lambda: module.ChainedScheduler([module.StepLR(b, 2)], a))
        outcomes[lib].append((kind, message.split(" has ")[0]))
    assert outcomes[minigrad] == outcomes[torch]


# -- closed forms, without torch -------------------------------------------------------------------------------------

def _trajectory(optimizer_class, grads, p0=(0.0,), **kwargs):
    p = nn.Parameter(minigrad.tensor(list(p0), dtype=minigrad.float64))
    optimizer = optimizer_class([p], **kwargs)
    out = []
    for g in grads:
        p.grad = minigrad.tensor(g, dtype=minigrad.float64)
        optimizer.step()
        out.append(p.detach().numpy().copy())
    return np.array(out), optimizer, p


def test_adagrad_divides_by_the_root_of_the_summed_squares():
    grads = [[3.0], [-4.0], [12.0]]
    ps, _, _ = _trajectory(minigrad.optim.Adagrad, grads, lr=0.5, initial_accumulator_value=0.0, eps=0.0)
    # s = 9, 25, 169: steps 0.5 * 3/3, 0.5 * -4/5, 0.5 * 12/13
    np.testing.assert_allclose(ps[:, 0], np.cumsum([-0.5, 0.4, -0.5 * 12 / 13]), rtol=1e-15)


def test_adagrad_has_state_for_every_parameter_from_the_start():
    a, b = nn.Parameter(minigrad.zeros(2)), nn.Parameter(minigrad.zeros(3))
    optimizer = minigrad.optim.Adagrad([a, b], initial_accumulator_value=0.25)
    saved = optimizer.state_dict()["state"]
    assert sorted(saved) == [0, 1] and saved[1]["step"] == 0 and saved[1]["sum"].tolist() == [0.25] * 3


def test_adadelta_first_step_is_sqrt_eps_over_rms():
    rho, eps, g = 0.9, 1e-2, 2.0
    ps, _, _ = _trajectory(minigrad.optim.Adadelta, [[g]], rho=rho, eps=eps)
    np.testing.assert_allclose(ps[0], -math.sqrt(eps) / math.sqrt((1 - rho) * g * g + eps) * g, rtol=1e-15)


@pytest.mark.parametrize("cls", [minigrad.optim.Adamax, minigrad.optim.RAdam])
def test_first_step_moves_by_about_lr(cls):
    # Adamax: lr * g / (|g| + eps); RAdam, before its variance is tractable: lr * m / (1 - beta1) = lr * g
    grads = [[1e-3, -5.0, 200.0]]
    ps, _, _ = _trajectory(cls, grads, p0=(0.0, 0.0, 0.0), lr=0.1)
    expected = -0.1 * np.sign(grads[0]) if cls is minigrad.optim.Adamax else -0.1 * np.array(grads[0])
    np.testing.assert_allclose(ps[0], expected, rtol=1e-4)


def test_nadam_mu_product_is_kept_in_the_default_dtype():
    _, optimizer, p = _trajectory(minigrad.optim.NAdam, [[1.0], [1.0]])
    mu = [0.9 * (1 - 0.5 * 0.96 ** (t * 4e-3)) for t in (1, 2)]
    assert optimizer.state[p]["mu_product"].dtype == minigrad.float32
    assert optimizer.state[p]["mu_product"].item() == float(np.float32(np.float32(mu[0]) * np.float32(mu[1])))


def test_asgd_averages_the_iterates_from_t0():
    grads = [[1.0], [-2.0], [0.5], [3.0]]
    ps, optimizer, p = _trajectory(minigrad.optim.ASGD, grads, lr=0.25, lambd=0.0, t0=0.0)
    np.testing.assert_allclose(ps[:, 0], np.cumsum([-0.25, 0.5, -0.125, -0.75]), rtol=1e-15)  # plain SGD: lambd = 0
    # mu = 1 / max(1, t - t0) is set after step t, for the next: the average starts at step t0 + 2 (mu: float32)
    assert optimizer.state[p]["ax"].item() == pytest.approx(ps[1:, 0].mean(), rel=1e-7)


def test_rprop_grows_the_step_while_the_sign_holds_and_waits_after_a_flip():
    grads = [[1.0], [1.0], [1.0], [-1.0], [-1.0], [-1.0]]
    ps, _, _ = _trajectory(minigrad.optim.Rprop, grads, lr=0.1, etas=(0.5, 2.0), step_sizes=(1e-6, 0.3))
    # steps -0.1, -0.2, -0.3 (clamped), then the flip: the step halves to 0.15 and the move is skipped, then +0.15, +0.3
    np.testing.assert_allclose(ps[:, 0], np.cumsum([-0.1, -0.2, -0.3, 0.0, 0.15, 0.3]), rtol=1e-15)


def test_load_state_dict_casts_state_to_the_parameters_dtype():
    _, optimizer, _ = _trajectory(minigrad.optim.Adamax, [[1.0]])
    p32 = nn.Parameter(minigrad.zeros(1, dtype=minigrad.float32))
    other = minigrad.optim.Adamax([p32])
    other.load_state_dict(optimizer.state_dict())
    assert other.state[p32]["exp_avg"].dtype == minigrad.float32 and other.state[p32]["step"] == 1


def _lrs(make, steps, lr=1.0):
    optimizer = minigrad.optim.SGD([nn.Parameter(minigrad.zeros(1))], lr=lr, momentum=0.9)
    scheduler = make(optimizer)
    out = [optimizer.param_groups[0]["lr"]]
    for _ in range(steps):
        optimizer.step()
        scheduler.step()
        out.append(optimizer.param_groups[0]["lr"])
    return np.array(out)


def test_schedules_follow_their_closed_forms():
    t = np.arange(13)
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.MultiStepLR(o, [2, 5, 5]), 12),
                               0.1 ** ((t >= 2) + 2 * (t >= 5)), rtol=1e-14)
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.ExponentialLR(o, 0.9), 12), 0.9**t, rtol=1e-14)
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.LinearLR(o, 0.25, 1.0, total_iters=4), 12),
                               0.25 + 0.75 * np.minimum(t, 4) / 4, rtol=1e-14)
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.ConstantLR(o, 0.5, total_iters=3), 12),
                               np.where(t < 3, 0.5, 1.0), rtol=1e-14)
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.PolynomialLR(o, total_iters=8, power=2.0), 12),
                               (1 - np.minimum(t, 8) / 8) ** 2, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)), 12), 1 / (1 + t))
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.MultiplicativeLR(o, lambda e: 0.5), 12), 0.5**t)
    # warm restarts: runs of 2, 4, 8 epochs, each from the base rate
    t_cur = np.array([0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6])
    t_i = np.array([2, 2, 4, 4, 4, 4, 8, 8, 8, 8, 8, 8, 8])
    np.testing.assert_allclose(_lrs(lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2), 12),
                               (1 + np.cos(np.pi * t_cur / t_i)) / 2, rtol=1e-14, atol=1e-15)


def test_cyclic_lr_is_smiths_triangle_and_cycles_momentum_against_it():
    k = np.arange(13)
    cycle = np.floor(1 + k / 6)
    x = np.abs(k / 3 - 2 * cycle + 1)
    lrs = _lrs(lambda o: lr_scheduler.CyclicLR(o, base_lr=0.1, max_lr=1.0, step_size_up=3), 12, lr=0.5)
    np.testing.assert_allclose(lrs, 0.1 + 0.9 * np.maximum(0, 1 - x), rtol=1e-14)
    optimizer = minigrad.optim.SGD([nn.Parameter(minigrad.zeros(1))], lr=0.5, momentum=0.9)
    scheduler = lr_scheduler.CyclicLR(optimizer, 0.1, 1.0, step_size_up=3, base_momentum=0.8, max_momentum=0.9)
    for _ in range(3):
        optimizer.step()
        scheduler.step()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(1.0) and optimizer.param_groups[0]["momentum"] == 0.8


def test_one_cycle_lr_peaks_then_anneals_to_its_floor_and_stops():
    optimizer = minigrad.optim.Adam([nn.Parameter(minigrad.zeros(1))])
    scheduler = lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=11, pct_start=0.5)  # peak at step 4.5
    lrs = [optimizer.param_groups[0]["lr"]]
    for _ in range(10):
        optimizer.step()
        scheduler.step()
        lrs.append(optimizer.param_groups[0]["lr"])
    assert lrs[0] == pytest.approx(1 / 25) and lrs[-1] == pytest.approx(1 / 25 / 1e4)
    # the peak is the first step of the anneal, 0.5 of its 5.5 steps in; the floor is 1/25/1e4
    assert max(lrs) == lrs[5] == pytest.approx(4e-6 + (1 - 4e-6) * (1 + math.cos(math.pi * 0.5 / 5.5)) / 2)
    assert optimizer.param_groups[0]["betas"][0] == pytest.approx(0.95)  # back to max_momentum at the end
    scheduler.step()  # step 11 = total_steps is still allowed, as in PyTorch
    with pytest.raises(ValueError, match="^Tried to step 12 times. The specified number of total steps is 11$"):
        scheduler.step()


def test_reduce_lr_on_plateau_waits_patience_epochs_then_cools_down():
    optimizer = minigrad.optim.SGD([nn.Parameter(minigrad.zeros(1))], lr=1.0)
    scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2, cooldown=1)
    lrs = []
    for metric in [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5]:
        scheduler.step(minigrad.tensor(metric))
        lrs.append(scheduler.get_last_lr()[0])
    # bad epochs 1, 2, 3 > patience: halve; one epoch of cooldown; then 1, 2, 3 again
    assert lrs == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]


def test_sequential_lr_warms_up_then_hands_over():
    def make(o):
        warmup = lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=3)
        return lr_scheduler.SequentialLR(o, [warmup, lr_scheduler.ExponentialLR(o, 0.5)], milestones=[3])
    np.testing.assert_allclose(_lrs(make, 6), [0.25, 0.5, 0.75, 1.0, 0.5, 0.25, 0.125], rtol=1e-14)


def test_lambda_state_keeps_callable_objects_only():
    optimizer = minigrad.optim.SGD([{"params": [nn.Parameter(minigrad.zeros(1))]},
                                    {"params": [nn.Parameter(minigrad.zeros(1))]}], lr=1.0)
    scheduler = lr_scheduler.LambdaLR(optimizer, [Decay(0.5), _one_over])
    saved = scheduler.state_dict()
    assert saved["lr_lambdas"] == [{"rate": 0.5}, None] and "optimizer" not in saved
    other = lr_scheduler.LambdaLR(optimizer, [Decay(0.9), _one_over])
    other.load_state_dict(saved)
    assert other.lr_lambdas[0].rate == 0.5 and saved["lr_lambdas"] == [{"rate": 0.5}, None]
