"""Tests for minigrad.optim: SGD and Adam against PyTorch's documented update rules.

The references below are written from the pseudo-code in PyTorch's docs
(torch.optim.SGD, torch.optim.Adam), in float64 NumPy, one step at a time.
If torch is installed, trajectories are also compared with torch.optim.
"""
from __future__ import annotations


import numpy as np
import pytest

import minigrad
import minigrad.nn as nn
from minigrad.optim import SGD, Adam, Optimizer

N_STEPS = 6


def grads_sequence(shape, n=N_STEPS, seed=0):
    """Fixed gradients to feed the optimizers, the same for reference and minigrad."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for _ in range(n)]


def sgd_reference(p0, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    p, buf, trajectory = p0.copy(), None, []
    for t, g in enumerate(grads):
        if weight_decay != 0:
            g = g + weight_decay * p
        if momentum != 0:
            buf = g.copy() if t == 0 else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
        trajectory.append(p.copy())
    return trajectory


def adam_reference(p0, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    p, m, v, trajectory = p0.copy(), np.zeros_like(p0), np.zeros_like(p0), []
    for t, g in enumerate(grads, start=1):
        if weight_decay != 0:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1**t)
        v_hat = v / (1 - b2**t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
        trajectory.append(p.copy())
    return trajectory


def run_minigrad(make_opt, p0, grads, dtype=minigrad.float64):
    p = nn.Parameter(minigrad.tensor(p0, dtype=dtype))
    opt = make_opt([p])
    trajectory = []
    for g in grads:
        opt.zero_grad()
        p.grad = minigrad.tensor(g, dtype=dtype)
        opt.step()
        trajectory.append(p.detach().numpy().copy())
    return trajectory


SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.8, nesterov=True),
    dict(lr=0.1, weight_decay=0.01),
    dict(lr=0.02, momentum=0.9, weight_decay=0.1, nesterov=True),
]
ADAM_CONFIGS = [
    dict(lr=1e-3),
    dict(lr=0.05, betas=(0.8, 0.99)),
    dict(lr=0.01, weight_decay=0.1, eps=1e-6),
]


def ids(configs):
    return [",".join(f"{k}={v}" for k, v in c.items()) for c in configs]


@pytest.mark.parametrize("config", SGD_CONFIGS, ids=ids(SGD_CONFIGS))
def test_sgd_matches_the_documented_rule(config):
    p0 = np.random.default_rng(1).standard_normal((3, 4))
    grads = grads_sequence((3, 4))
    ours = run_minigrad(lambda ps: SGD(ps, **config), p0, grads)
    for a, b in zip(ours, sgd_reference(p0, grads, **config)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("config", ADAM_CONFIGS, ids=ids(ADAM_CONFIGS))
def test_adam_matches_the_documented_rule(config):
    p0 = np.random.default_rng(2).standard_normal((5,))
    grads = grads_sequence((5,), seed=3)
    ours = run_minigrad(lambda ps: Adam(ps, **config), p0, grads)
    for a, b in zip(ours, adam_reference(p0, grads, **config)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_adam_first_step_moves_every_coordinate_by_lr():
    # After bias correction, step 1 is lr * g / (|g| + eps): a step of ~lr whatever the scale of g.
    p0 = np.zeros(4)
    grads = [np.array([1e-3, -5.0, 200.0, -0.5])]
    (p1,) = run_minigrad(lambda ps: Adam(ps, lr=0.1), p0, grads)
    np.testing.assert_allclose(p1, -0.1 * np.sign(grads[0]), rtol=1e-4)


def test_float32_parameters_stay_float32():
    p0 = np.random.default_rng(4).standard_normal(6).astype(np.float32)
    grads = [g.astype(np.float32) for g in grads_sequence((6,), seed=5)]
    for make, ref in [
        (lambda ps: SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01), lambda: sgd_reference(p0, grads, 0.1, 0.9, 0, 0.01)),
        (lambda ps: Adam(ps, lr=0.01, weight_decay=0.01), lambda: adam_reference(p0, grads, 0.01, weight_decay=0.01)),
    ]:
        ours = run_minigrad(make, p0, grads, dtype=minigrad.float32)
        assert all(a.dtype == np.float32 for a in ours)
        np.testing.assert_allclose(ours[-1], ref()[-1], rtol=1e-5, atol=1e-6)


# -- cross-check with torch.optim ------------------------------------------------

def torch_trajectory(torch, make_opt, p0, grads):
    p = torch.tensor(p0, requires_grad=True)
    opt = make_opt([p])
    out = []
    for g in grads:
        opt.zero_grad()
        p.grad = torch.tensor(g)
        opt.step()
        out.append(p.detach().numpy().copy())
    return out


@pytest.mark.parametrize("config", SGD_CONFIGS, ids=ids(SGD_CONFIGS))
def test_sgd_matches_torch(config):
    torch = pytest.importorskip("torch")
    p0 = np.random.default_rng(6).standard_normal((2, 3))
    grads = grads_sequence((2, 3), seed=7)
    ours = run_minigrad(lambda ps: SGD(ps, **config), p0, grads)
    theirs = torch_trajectory(torch, lambda ps: torch.optim.SGD(ps, **config), p0, grads)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("config", ADAM_CONFIGS, ids=ids(ADAM_CONFIGS))
def test_adam_matches_torch(config):
    torch = pytest.importorskip("torch")
    p0 = np.random.default_rng(8).standard_normal((2, 3))
    grads = grads_sequence((2, 3), seed=9)
    ours = run_minigrad(lambda ps: Adam(ps, **config), p0, grads)
    theirs = torch_trajectory(torch, lambda ps: torch.optim.Adam(ps, **config), p0, grads)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


def test_training_loop_matches_torch_end_to_end():
    """Same model, same data, same init: minigrad's and torch's losses agree step by step."""
    torch = pytest.importorskip("torch")
    import minigrad.nn.functional as F

    rng = np.random.default_rng(10)
    X, y = rng.standard_normal((32, 5)), rng.integers(0, 3, 32)
    theirs = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    ours = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    for i in (0, 2):  # start from torch's (float64) initial values
        ours[i].weight = nn.Parameter(minigrad.tensor(theirs[i].weight.detach().numpy().copy()))
        ours[i].bias = nn.Parameter(minigrad.tensor(theirs[i].bias.detach().numpy().copy()))
    opt = Adam(ours.parameters(), lr=0.01, weight_decay=0.01)
    topt = torch.optim.Adam(theirs.parameters(), lr=0.01, weight_decay=0.01)
    xt, yt = minigrad.tensor(X), minigrad.tensor(y)
    for _ in range(10):
        opt.zero_grad()
        loss = F.cross_entropy(ours(xt), yt)
        loss.backward()
        opt.step()
        topt.zero_grad()
        tloss = torch.nn.functional.cross_entropy(theirs(torch.tensor(X)), torch.tensor(y))
        tloss.backward()
        topt.step()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-10)


# -- behaviour ---------------------------------------------------------------------

def test_parameters_without_grad_are_skipped():
    a, b = nn.Parameter(minigrad.ones(2)), nn.Parameter(minigrad.ones(2))
    for opt in (SGD([a, b], lr=0.1, momentum=0.9), Adam([a, b], lr=0.1)):
        a.grad = minigrad.ones(2)
        b.grad = None
        version = b._version
        opt.step()
        assert b.tolist() == [1.0, 1.0] and b._version == version
        assert b not in opt.state or not opt.state[b]
        assert a.tolist() != [1.0, 1.0]


def test_step_bumps_the_version_so_stale_graphs_are_caught():
    w = nn.Parameter(minigrad.tensor([1.0, 2.0]))
    opt = SGD([w], lr=0.1)
    version = w._version
    loss = (w * w).sum()  # Mul saves w for backward
    loss.backward(retain_graph=True)
    opt.step()
    assert w._version == version + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_step_is_not_recorded_and_leaves_grad_alone():
    w = nn.Parameter(minigrad.tensor([1.0, -1.0]))
    w.grad = minigrad.tensor([0.5, 0.5])
    SGD([w], lr=1.0, weight_decay=0.1).step()
    assert w.is_leaf and w.grad_fn is None and w.requires_grad
    assert w.grad.tolist() == [0.5, 0.5]  # weight decay did not write into .grad
    np.testing.assert_allclose(w.detach().numpy(), [1.0 - (0.5 + 0.1), -1.0 - (0.5 - 0.1)], rtol=1e-6)


def test_zero_grad_set_to_none_semantics():
    w = nn.Parameter(minigrad.ones(3))
    opt = SGD([w], lr=0.1)
    (w * 2).sum().backward()
    opt.zero_grad()
    assert w.grad is None
    (w * 2).sum().backward()
    grad = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is grad and w.grad.tolist() == [0.0, 0.0, 0.0]
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0, 3.0]


def test_param_groups_have_their_own_hyperparameters():
    a, b = nn.Parameter(minigrad.zeros(1)), nn.Parameter(minigrad.zeros(1))
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1, momentum=0.5)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    assert opt.param_groups[1]["momentum"] == 0.5  # filled in from the defaults
    a.grad, b.grad = minigrad.ones(1), minigrad.ones(1)
    opt.step()
    assert a.item() == pytest.approx(-0.1) and b.item() == pytest.approx(-1.0)
    opt.param_groups[0]["lr"] = 0.0  # a scheduler changes lr this way
    a.grad = minigrad.ones(1)
    opt.step()
    assert a.item() == pytest.approx(-0.1)


def test_model_parameters_generator_is_accepted():
    model = nn.Linear(3, 2)
    opt = Adam(model.parameters())
    assert len(opt.param_groups[0]["params"]) == 2
    assert {k: opt.defaults[k] for k in ("lr", "betas", "eps", "weight_decay", "amsgrad")} == dict(
        lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False)


def test_step_with_closure_returns_the_loss():
    w = nn.Parameter(minigrad.tensor([3.0]))
    opt = SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with minigrad.no_grad():  # the closure still records: step enables grad for it
        loss = opt.step(closure)
    assert loss.item() == 9.0 and w.item() == pytest.approx(3.0 - 0.25 * 6.0)


def test_state_dict_round_trip_continues_the_same_trajectory():
    p0 = np.random.default_rng(11).standard_normal(4)
    grads = grads_sequence((4,), n=6, seed=12)
    for make in (lambda ps: SGD(ps, lr=0.1, momentum=0.9), lambda ps: Adam(ps, lr=0.05)):
        a = nn.Parameter(minigrad.tensor(p0))
        opt_a = make([a])
        for g in grads[:3]:
            a.grad = minigrad.tensor(g)
            opt_a.step()
        saved = opt_a.state_dict()
        assert saved["param_groups"][0]["params"] == [0] and set(saved["state"]) == {0}
        b = nn.Parameter(minigrad.tensor(a.detach().numpy().copy()))
        opt_b = make([b])
        opt_b.load_state_dict(saved)
        for g in grads[3:]:
            a.grad, b.grad = minigrad.tensor(g), minigrad.tensor(g)
            opt_a.step()
            opt_b.step()
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        # the loaded state is a copy: the two optimizers don't share buffers
        buffers = [(sa, opt_b.state[b][k]) for k, sa in opt_a.state[a].items() if isinstance(sa, minigrad.Tensor)]
        assert buffers and not any(np.shares_memory(sa.numpy(), sb.numpy()) for sa, sb in buffers)


def test_load_state_dict_restores_hyperparameters_and_checks_groups():
    w = nn.Parameter(minigrad.zeros(1))
    opt = SGD([w], lr=0.1)
    opt.load_state_dict({"state": {}, "param_groups": [{**opt.state_dict()["param_groups"][0], "lr": 0.5}]})
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["params"][0] is w
    with pytest.raises(ValueError, match="^loaded state dict has a different number of parameter groups$"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1], "lr": 1}]})


def test_optimizer_repr_is_pytorch_style():
    opt = SGD([nn.Parameter(minigrad.zeros(1))], lr=0.1)
    assert repr(opt) == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n    fused: None\n"
        "    lr: 0.1\n    maximize: False\n    momentum: 0\n    nesterov: False\n    weight_decay: 0\n)"
    )


# -- errors ------------------------------------------------------------------------

@pytest.mark.parametrize("make, message", [
    (lambda ps: SGD(ps, lr=-1), "Invalid learning rate: -1"),
    (lambda ps: SGD(ps, lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
    (lambda ps: SGD(ps, lr=0.1, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda ps: SGD(ps, lr=0.1, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (lambda ps: SGD(ps, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda ps: Adam(ps, lr=-0.01), "Invalid learning rate: -0.01"),
    (lambda ps: Adam(ps, eps=-1), "Invalid epsilon value: -1"),
    (lambda ps: Adam(ps, betas=(1.0, 0.999)), "Invalid beta parameter at index 0: 1.0"),
    (lambda ps: Adam(ps, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda ps: Adam(ps, weight_decay=-1), "Invalid weight_decay value: -1"),
])
def test_invalid_hyperparameters_raise_pytorchs_valueerror(make, message):
    with pytest.raises(ValueError) as info:
        make([nn.Parameter(minigrad.zeros(1))])
    assert str(info.value) == message


def test_invalid_params_arguments():
    with pytest.raises(ValueError, match="^optimizer got an empty parameter list$"):
        SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        SGD(nn.Parameter(minigrad.zeros(1)), lr=0.1)
    w = nn.Parameter(minigrad.zeros(1))
    with pytest.raises(ValueError, match="^can't optimize a non-leaf Tensor$"):
        SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="^some parameters appear in more than one parameter group$"):
        SGD([{"params": [w]}, {"params": [w]}], lr=0.1)


def test_optimizer_base_step_needs_a_subclass():
    w = nn.Parameter(minigrad.zeros(1))
    w.grad = minigrad.ones(1)
    with pytest.raises(NotImplementedError):
        Optimizer([w], {}).step()
