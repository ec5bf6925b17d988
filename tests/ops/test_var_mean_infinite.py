"""var_mean and std_mean with an infinity: the mean as PyTorch finds it, one value at a time."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minigrad

inf = math.inf


def welford(values):
    mean = values[0]
    for n, v in enumerate(values[1:], start=2):
        mean = mean + (v - mean) / n
    return mean


@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
@pytest.mark.parametrize("values", [[inf, 1.0], [1.0, inf], [inf, inf], [-inf, inf], [1.0, 2.0, inf], [1.0, inf, 2.0],
                                    [inf, -inf, 0.0], [inf]])
def test_the_mean_of_values_with_an_infinity(fn, values):
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore")
        spread, mean = getattr(minigrad, fn)(minigrad.tensor(values, dtype=minigrad.float64))
        expected = welford(values)
    np.testing.assert_equal(float(mean), expected)  # NaN equals NaN here
    assert math.isnan(float(spread))


def test_along_a_dim_each_row_on_its_own():
    x = minigrad.tensor([[inf, 1.0, 2.0], [1.0, 2.0, inf], [1.0, 2.0, 3.0]], dtype=minigrad.float64)
    with np.errstate(invalid="ignore"):
        _, mean = minigrad.var_mean(x, dim=1)
    np.testing.assert_equal(mean.numpy(), [np.nan, inf, 2.0])
