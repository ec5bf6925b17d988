"""Draws of minigrad.distributions: shapes, dtypes, supports, moments and rsample's gradients.

Draws come from minigrad's generator, never torch's, so they are checked by what they must
satisfy: the shape and dtype torch's draw has, the support, and the sample mean and variance
within 5 standard errors of the distribution's (estimated from the same draws, seeded, so a run
is deterministic). rsample's gradients are checked where the noise is explicit by gradcheck and
gradgradcheck with the generator reseeded on each call (the same noise every time), against the
closed form ``loc + eps * scale``, against torch's own implicit Gamma gradient at the same
(concentration, draw), and, for Dirichlet and Beta, by their mean against the derivative of the
mean.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad
from minigrad import distributions as D
from minigrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TD = torch.distributions
N = 20000


def t64(data):
    return minigrad.tensor(data, dtype=minigrad.float64)


def torch64(data):
    return torch.tensor(data, dtype=torch.float64)


# name: build(Lib, tensor) -> distribution (batch shape (2,) unless said)
MAKE = {
    "Normal": lambda L, t: L.Normal(t([0.5, -1.0]), t([1.0, 0.3])),
    "Laplace": lambda L, t: L.Laplace(t([0.5, -1.0]), t([1.0, 0.3])),
    "LogNormal": lambda L, t: L.LogNormal(t([0.2, -1.0]), t([0.3, 0.5])),
    "Uniform": lambda L, t: L.Uniform(t([0.0, -2.0]), t([1.0, 3.0])),
    "Exponential": lambda L, t: L.Exponential(t([0.5, 3.0])),
    "Gamma": lambda L, t: L.Gamma(t([0.3, 4.0]), t([1.0, 2.0])),
    "Beta": lambda L, t: L.Beta(t([0.5, 3.0]), t([2.0, 3.0])),
    "Dirichlet": lambda L, t: L.Dirichlet(t([[0.5, 1.0, 2.0], [3.0, 0.2, 1.0]])),
    "Bernoulli": lambda L, t: L.Bernoulli(t([0.1, 0.7])),
    "Poisson": lambda L, t: L.Poisson(t([0.5, 7.0])),
    "Binomial": lambda L, t: L.Binomial(t([3.0, 10.0]), t([0.2, 0.6])),
    "Multinomial": lambda L, t: L.Multinomial(6, t([[0.2, 0.3, 0.5], [0.6, 0.0, 0.4]])),
    "OneHotCategorical": lambda L, t: L.OneHotCategorical(t([[0.2, 0.3, 0.5], [0.6, 0.0, 0.4]])),
    "MultivariateNormal": lambda L, t: L.MultivariateNormal(t([[0.0, 1.0], [2.0, -1.0]]),
                                                            t([[2.0, 0.5], [0.5, 1.0]])),
    "Independent": lambda L, t: L.Independent(L.Normal(t([[0.5, -1.0]]), t([[1.0, 0.3]])), 1),
    "Mixture": lambda L, t: L.MixtureSameFamily(L.Categorical(t([0.3, 0.7])), L.Normal(t([-1.0, 2.0]), t([0.5, 1.0]))),
}


def _within(sample: np.ndarray, expected: np.ndarray, label: str) -> None:
    """Sample mean and variance within 5 standard errors of ``expected`` mean and variance."""
    mean, var = expected
    n = sample.shape[0]
    centred = sample - sample.mean(0)
    m4 = (centred ** 4).mean(0)
    s2 = centred.var(0)
    assert np.all(np.abs(sample.mean(0) - mean) <= 5 * np.sqrt(s2 / n) + 1e-12), label
    assert np.all(np.abs(s2 - var) <= 5 * np.sqrt(np.maximum(m4 - s2 ** 2, 0) / n) + 1e-12), label


@pytest.mark.parametrize("name", list(MAKE))
@pytest.mark.parametrize("method", ["sample", "rsample"])
def test_draws(name, method):
    mine, theirs = MAKE[name](D, t64), MAKE[name](TD, torch64)
    if method == "rsample" and not theirs.has_rsample:
        with pytest.raises(NotImplementedError):
            mine.rsample()
        return
    minigrad.manual_seed(0)
    x = getattr(mine, method)((N,))
    want = getattr(theirs, method)((3,))
    assert tuple(x.shape) == (N,) + tuple(want.shape[1:])
    assert x.dtype.name == str(want.dtype).removeprefix("torch.")
    assert x.grad_fn is None
    assert bool(mine.support.check(x).all())
    _within(x.numpy(), (mine.mean.numpy(), mine.variance.numpy()), name)
    minigrad.manual_seed(0)
    np.testing.assert_array_equal(getattr(mine, method)((N,)).numpy(), x.numpy())  # the seed decides the draw


def test_categorical_frequencies_and_zero_probability():
    probs = t64([[0.2, 0.0, 0.5, 0.3], [0.0, 0.0, 0.0, 1.0]])
    minigrad.manual_seed(1)
    x = D.Categorical(probs).sample((N,))
    assert x.dtype == minigrad.int64 and tuple(x.shape) == (N, 2)
    counts = np.stack([(x.numpy() == k).mean(0) for k in range(4)], -1)
    p = probs.numpy()
    assert np.all(np.abs(counts - p) <= 5 * np.sqrt(p * (1 - p) / N))
    assert not np.any(counts[p == 0])


@pytest.mark.parametrize("name", ["RelaxedBernoulli", "RelaxedOneHotCategorical", "Tanh"])
def test_relaxed_and_transformed_draws_in_support(name):
    make = {
        "RelaxedBernoulli": lambda L, t: L.RelaxedBernoulli(t(0.5), probs=t([0.2, 0.9])),
        "RelaxedOneHotCategorical": lambda L, t: L.RelaxedOneHotCategorical(t(0.5), logits=t([[0.0, 1.0, -1.0]])),
        "Tanh": lambda L, t: L.TransformedDistribution(L.Normal(t([0.0, 2.0]), t([1.0, 1.0])),
                                                       [L.transforms.TanhTransform()]),
    }[name]
    mine, theirs = make(D, t64), make(TD, torch64)
    x = mine.rsample((500,))
    assert tuple(x.shape) == tuple(theirs.rsample((500,)).shape)
    assert bool(mine.support.check(x).all())
    assert np.all(np.isfinite(mine.log_prob(x).detach().numpy()))


@pytest.mark.parametrize("name", ["RelaxedBernoulli", "RelaxedOneHotCategorical"])
def test_relaxed_draws_approach_the_discrete_ones(name):
    """At a low temperature a relaxed draw is nearly 0/1 (one-hot), with the discrete frequencies."""
    probs = t64([0.3, 0.7]) if name == "RelaxedBernoulli" else t64([0.2, 0.3, 0.5])
    dist = getattr(D, name)(t64(0.05), probs=probs)
    minigrad.manual_seed(2)
    x = dist.sample((N,)).numpy()
    hard = np.round(x)
    assert np.mean(np.abs(x - hard) < 0.05) > 0.9
    p = probs.numpy()
    assert np.all(np.abs(hard.mean(0) - p) <= 5 * np.sqrt(p * (1 - p) / N) + 0.02)


# -- rsample's gradients ---------------------------------------------------------------------------
RSAMPLE = {
    "Normal": (lambda loc, scale: D.Normal(loc, scale), [[0.5, -1.0], [1.0, 0.3]]),
    "Laplace": (lambda loc, scale: D.Laplace(loc, scale), [[0.5, -1.0], [1.0, 0.3]]),
    "LogNormal": (lambda loc, scale: D.LogNormal(loc, scale), [[0.2, -1.0], [0.3, 0.5]]),
    "Uniform": (lambda low, width: D.Uniform(low, low + width), [[0.0, -2.0], [1.0, 3.0]]),
    "Exponential": (lambda rate: D.Exponential(rate), [[0.5, 3.0]]),
    "MultivariateNormal_tril": (lambda loc, tril: D.MultivariateNormal(loc, scale_tril=tril.tril()),
                                [[0.0, 1.0], [[1.0, 0.0], [0.5, 2.0]]]),
    "MultivariateNormal_cov": (lambda loc, A: D.MultivariateNormal(loc, A @ A.mT
                                                                   + 0.1 * minigrad.eye(2, dtype=A.dtype)),
                               [[0.0, 1.0], [[1.0, 0.2], [0.5, 2.0]]]),
    "RelaxedBernoulli": (lambda temperature, logits: D.RelaxedBernoulli(temperature, logits=logits),
                         [0.7, [0.3, -1.0]]),
    "RelaxedOneHotCategorical": (lambda temperature, logits: D.RelaxedOneHotCategorical(temperature, logits=logits),
                                 [0.7, [0.3, -1.0, 0.5]]),
    "TanhNormal": (lambda loc, scale: D.TransformedDistribution(D.Normal(loc, scale), D.transforms.TanhTransform()),
                   [[0.5, -1.0], [1.0, 0.3]]),
    "Independent": (lambda loc, scale: D.Independent(D.Normal(loc, scale), 1), [[0.5, -1.0], [1.0, 0.3]]),
}


@pytest.mark.parametrize("name", list(RSAMPLE))
def test_rsample_gradcheck_with_the_same_noise(name):
    make, params = RSAMPLE[name]
    inputs = [minigrad.tensor(p, dtype=minigrad.float64, requires_grad=True) for p in params]

    def draw(*args):
        minigrad.manual_seed(3)  # the same noise on every call: a deterministic function of the parameters
        return make(*args).rsample((3,))

    D.Distribution.set_default_validate_args(False)  # the finite differences may leave the lower triangle
    try:
        assert gradcheck(draw, inputs)
        assert gradgradcheck(draw, inputs)
    finally:
        D.Distribution.set_default_validate_args(__debug__)


def test_normal_rsample_is_loc_plus_scale_times_noise():
    loc = minigrad.tensor([0.5, -1.0], dtype=minigrad.float64, requires_grad=True)
    scale = minigrad.tensor([1.0, 0.3], dtype=minigrad.float64, requires_grad=True)
    minigrad.manual_seed(4)
    x = D.Normal(loc, scale).rsample((5,))
    eps = (x.detach() - loc.detach()) / scale.detach()
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [5.0, 5.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gamma_rsample_gradient_is_torchs_implicit_gradient(dtype):
    rng = np.random.default_rng(5)
    alpha = np.exp(rng.uniform(-2.5, 3.5, 400))
    rate = np.exp(rng.uniform(-1, 1, 400))
    a = minigrad.tensor(alpha, dtype=getattr(minigrad, dtype), requires_grad=True)
    r = minigrad.tensor(rate, dtype=getattr(minigrad, dtype), requires_grad=True)
    minigrad.manual_seed(6)
    x = D.Gamma(a, r).rsample()
    assert x.dtype == a.dtype and x.grad_fn is not None
    x.sum().backward()
    standard = torch.tensor((x * r).detach().numpy())
    expected = torch._standard_gamma_grad(torch.tensor(a.detach().numpy()), standard) / torch.tensor(rate).to(standard)
    tol = 1e-12 if dtype == "float64" else 2e-5
    np.testing.assert_allclose(a.grad.numpy(), expected.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(r.grad.numpy(), (-x / r).detach().numpy(), rtol=tol)


def test_gamma_rsample_gradient_has_the_mean_gradient():
    """E[x] = a / rate, so the average of dx/da over many draws is 1 / rate."""
    a = minigrad.tensor(np.full((N,), 0.7), dtype=minigrad.float64, requires_grad=True)
    minigrad.manual_seed(7)
    D.Gamma(a, 2.0).rsample().sum().backward()
    g = a.grad.numpy()
    assert abs(g.mean() - 0.5) <= 5 * g.std() / np.sqrt(N)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_dirichlet_rsample_gradient_is_torchs_implicit_gradient(dtype):
    """The same draw gets PyTorch's gradient: its _Dirichlet backward at (draw, concentration, upstream)."""
    rng = np.random.default_rng(10)
    alpha = np.exp(rng.uniform(-2.5, 3.0, (300, 4)))
    a = minigrad.tensor(alpha, dtype=getattr(minigrad, dtype), requires_grad=True)
    minigrad.manual_seed(11)
    x = D.Dirichlet(a).rsample()
    assert x.grad_fn.name() == "_DirichletBackward" and x.dtype == a.dtype
    upstream = rng.normal(size=alpha.shape)
    x.backward(minigrad.tensor(upstream, dtype=a.dtype))
    expected = TD.dirichlet._Dirichlet_backward(torch.tensor(x.detach().numpy(), dtype=torch.float64),
                                                torch.tensor(alpha), torch.tensor(upstream))
    tol = 1e-10 if dtype == "float64" else 1e-4
    np.testing.assert_allclose(a.grad.numpy(), expected.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["Dirichlet", "Beta"])
def test_dirichlet_and_beta_rsample_gradients_have_the_mean_gradient(name):
    """d E[x_i] / d α_j = δ_ij / α₀ - α_i / α₀², estimated by per-draw gradients (one leaf row per draw)."""
    alpha = np.array([0.6, 2.0, 1.3]) if name == "Dirichlet" else np.array([0.6, 2.0])
    k = len(alpha)
    leaf = minigrad.tensor(np.tile(alpha, (N, 1)), dtype=minigrad.float64, requires_grad=True)
    minigrad.manual_seed(8)
    if name == "Dirichlet":
        x0 = D.Dirichlet(leaf).rsample()[:, 0]
    else:
        x0 = D.Beta(leaf[:, 0], leaf[:, 1]).rsample()
    x0.sum().backward()
    g = leaf.grad.numpy()
    total = alpha.sum()
    expected = np.eye(k)[0] / total - alpha[0] / total ** 2
    assert np.all(np.abs(g.mean(0) - expected) <= 5 * g.std(0) / np.sqrt(N))
    assert np.all(np.abs(x0.detach().numpy().mean() - alpha[0] / total) <= 5 * x0.detach().numpy().std() / np.sqrt(N))


def test_straight_through_gradient_is_the_probabilities():
    logits = minigrad.tensor([0.2, -0.5, 1.0], dtype=minigrad.float64, requires_grad=True)
    weights = minigrad.tensor([1.0, 2.0, -3.0], dtype=minigrad.float64)
    x = D.OneHotCategoricalStraightThrough(logits=logits).rsample()
    assert sorted(x.detach().numpy().tolist()) == [0.0, 0.0, 1.0]
    (x * weights).sum().backward()
    expected = logits.detach().clone().requires_grad_()
    (expected.softmax(-1) * weights).sum().backward()
    np.testing.assert_allclose(logits.grad.numpy(), expected.grad.numpy(), rtol=1e-12)


def test_sample_has_no_history_and_sample_n_is_deprecated():
    loc = minigrad.tensor([0.0, 1.0], requires_grad=True)
    dist = D.Normal(loc, 1.0)
    assert dist.sample().grad_fn is None and dist.rsample().grad_fn is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tuple(dist.sample_n(4).shape) == (4, 2)
    assert any(issubclass(w.category, FutureWarning) for w in caught)
    assert dist.sample().dtype == minigrad.float32 and D.Normal(0.0, 1.0).sample().dtype == minigrad.float32


def torch32(data):
    return torch.tensor(data, dtype=torch.float32)


@pytest.mark.parametrize("name", list(MAKE))
def test_float32_dtypes_as_torch(name):
    """float32 parameters give float32 draws, densities, entropies and moments, as PyTorch's
    (and integer-valued draws keep the parameters' float dtype, Categorical's int64)."""
    mine, theirs = MAKE[name](D, lambda data: minigrad.tensor(data, dtype=minigrad.float32)), MAKE[name](TD, torch32)
    x, want = mine.sample((2,)), theirs.sample((2,))
    assert x.dtype.name == str(want.dtype).removeprefix("torch.")
    assert mine.log_prob(x).dtype.name == str(theirs.log_prob(want).dtype).removeprefix("torch.")
    for what in ("mean", "variance"):
        assert getattr(mine, what).dtype.name == str(getattr(theirs, what).dtype).removeprefix("torch.")
    try:
        expected = str(theirs.entropy().dtype).removeprefix("torch.")
    except NotImplementedError:
        return
    assert mine.entropy().dtype.name == expected


def test_reinforce_score_function_gradient():
    """REINFORCE: the mean of f(a) ∇log p(a) over draws a ~ Categorical(logits) estimates ∇ Σ_k p_k f(k)."""
    logits = minigrad.tensor([0.3, -0.2, 1.0, 0.0], dtype=minigrad.float64, requires_grad=True)
    reward = minigrad.tensor([1.0, -2.0, 0.5, 3.0], dtype=minigrad.float64)
    policy = D.Categorical(logits=logits)
    minigrad.manual_seed(9)
    actions = policy.sample((N,))
    surrogate = (reward[actions] * policy.log_prob(actions)).mean()
    (estimate,) = minigrad.autograd.grad(surrogate, [logits])
    (exact,) = minigrad.autograd.grad((logits.softmax(-1) * reward).sum(), [logits])
    # the standard error of each component, from the per-draw score terms f(a) (1[a = k] - p_k)
    p = logits.softmax(-1).detach().numpy()
    a, f = actions.numpy(), reward.numpy()[actions.numpy()]
    terms = f[:, None] * (np.eye(4)[a] - p)
    assert np.all(np.abs(estimate.numpy() - exact.numpy()) <= 5 * terms.std(0) / np.sqrt(N))
    np.testing.assert_allclose(terms.mean(0), estimate.numpy(), rtol=1e-9)
