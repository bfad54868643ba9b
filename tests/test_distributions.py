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


def _poisson_pmf_ref(k, mu):
    import mpmath

    with mpmath.workdps(50):
        k, mu = mpmath.mpf(k), mpmath.mpf(mu)
        return mpmath.exp(k * mpmath.log(mu) - mu - mpmath.loggamma(k + 1))


@pytest.mark.parametrize("k", [0, 1, 3, 10, 15, 15.5, 16, 17, 30.25, 100, 1e3, 1e4, 1e6, 1e9, 1e12, 1e15, 1e18])
def test_poisson_pmf_against_50_digits(k):
    """Loader's saddle-point form (k >= 16) and the direct form (k < 16), from 40 standard deviations below the mean
    to 40 above: within 1e-12 relative wherever the value is a normal float (measured worst 6e-13, at k = 1e4,
    40 sd)."""
    from boundcalc.core.distributions import poisson_pmf

    sd = max(k, 1.0) ** 0.5
    bad = []
    for z in (-40, -10, -3, -1, -0.1, 0, 0.5, 2, 5, 20, 40):
        mu = max(k + z * sd, 1e-3)
        ref = _poisson_pmf_ref(k, mu)
        if ref < 1e-300:
            continue
        err = float(poisson_pmf(k, mu) / ref - 1)
        if abs(err) > 1e-12:
            bad.append((k, mu, err))
    assert bad == []


def test_poisson_pmf_edges_and_planted_error():
    from boundcalc.core.distributions import poisson_pmf

    assert poisson_pmf(0, 2.5) == pytest.approx(np.exp(-2.5), rel=1e-15)
    assert poisson_pmf(0, 0.0) == 1.0 and poisson_pmf(3, 0.0) == 0.0
    assert poisson_pmf(1e6, 1e9) == 0.0                       # far below the underflow
    v = poisson_pmf(np.array([20.0, 20.0]), np.array([20.0, 21.0]))
    assert v.shape == (2,)
    # the naive exponent k log μ - μ - log Γ(k+1) loses digits at large k: the comparison above would catch it
    from scipy import special

    k, mu = 1e12, 1e12 + 3e6
    naive = float(np.exp(special.xlogy(k, mu) - mu - special.gammaln(k + 1)))
    assert abs(naive / float(_poisson_pmf_ref(k, mu)) - 1) > 1e-12
