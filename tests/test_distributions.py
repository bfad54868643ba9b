"""boundcalc.core.distributions gives bit for bit what scipy.stats gives (it only avoids importing scipy.stats)."""
import numpy as np
import pytest
from scipy import stats

from boundcalc.core.distributions import binom_pmf, norm_cdf


@pytest.mark.parametrize("seed", range(5))
def test_binom_pmf_equals_scipy_stats_bitwise(seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(0, 2000, 400).astype(float)
    k = np.floor(rng.random(400) * (n + 3)) - 1  # includes k = -1 and k > n (off the support)
    p = np.concatenate([rng.random(390), [0.0, 1.0, 1e-300, 1 - 1e-16, 0.5, 1e-12, 0.999999, 0.3, 0.7, 0.1]])
    got, want = binom_pmf(k, n, p), stats.binom.pmf(k, n, p)
    assert np.array_equal(got, want, equal_nan=True)


def test_binom_pmf_broadcasting_and_invalid_arguments():
    k = np.arange(11)[None, :]
    p = np.linspace(0.05, 0.95, 7)[:, None]
    assert np.array_equal(binom_pmf(k, 10, p), stats.binom.pmf(k, 10, p))
    assert np.array_equal(binom_pmf([1, 2], [3.5, -1], 0.2), stats.binom.pmf([1, 2], [3.5, -1], 0.2), equal_nan=True)
    assert np.array_equal(binom_pmf(1, 3, [1.5, -0.1]), stats.binom.pmf(1, 3, [1.5, -0.1]), equal_nan=True)
    assert binom_pmf(2, 4, 0.5) == stats.binom.pmf(2, 4, 0.5)


def test_norm_cdf_equals_scipy_stats_bitwise():
    x = np.concatenate([np.linspace(-40, 40, 4001), [np.inf, -np.inf, 0.0]])
    assert np.array_equal(norm_cdf(x), stats.norm.cdf(x))
