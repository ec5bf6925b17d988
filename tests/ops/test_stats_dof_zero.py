"""var and var_mean at zero degrees of freedom over every dim: PyTorch's var_backward, the incoming
gradient times NaN (where x is the mean) or inf (elsewhere), recorded only through that gradient."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad


@pytest.mark.parametrize("fn", ["var", "var_mean"])
@pytest.mark.parametrize("upstream, sign, recorded", [("id", 1, False), ("neg", -1, False), ("abs", 1, True)])
def test_the_gradient_is_the_incoming_gradient_times_nan_or_inf(fn, upstream, sign, recorded):
    x = minigrad.tensor([0.5, 1.5, 1.0], dtype=minigrad.float64, requires_grad=True)  # the mean is 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degrees of freedom <= 0
        v = getattr(minigrad, fn)(x, correction=3)
    v = v[0] if fn == "var_mean" else v
    y = {"id": v, "neg": -v, "abs": v.abs()}[upstream]
    g, = minigrad.autograd.grad(y, [x], create_graph=True)
    values = g.detach().numpy()
    if upstream != "abs":  # abs: sign(nan) = nan everywhere
        np.testing.assert_array_equal(values[:2], [sign * np.inf] * 2)
    assert np.isnan(values[2])
    assert g.requires_grad == recorded
