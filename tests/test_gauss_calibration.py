"""The analytic Gaussian calibration: never below the exact root, close to it, vectorised = scalar."""
import mpmath
import numpy as np
import pytest

from boundcalc.core.gauss_calibration import log_delta, sigma_analytic, sigma_analytic_scalar


def exact_sigma(eps, dl, dps=60):
    """Root of Φ(1/(2σ) - εσ) - e^ε Φ(-1/(2σ) - εσ) = δ by 60-digit bisection in log σ (independent of the
    package: no log_ndtr, no Newton)."""
    with mpmath.workdps(dps):
        e, target = mpmath.mpf(eps), mpmath.mpf(dl)

        def f(s):
            return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s) - target

        lo, hi = mpmath.mpf("1e-8"), mpmath.mpf(1)
        while f(hi) > 0:
            hi *= 2
        while f(lo) <= 0:
            lo /= 2
        for _ in range(200):
            mid = mpmath.sqrt(lo * hi)
            if f(mid) > 0:
                lo = mid
            else:
                hi = mid
        return hi


GRID = [(e, dl) for e in (1e-6, 1e-4, 2e-3, 0.05, 0.5, 1.0, 3.0, 10.0, 40.0)
        for dl in (1e-300, 1e-100, 1e-20, 1e-6, 1e-2, 0.3)]


@pytest.mark.parametrize("eps,dl", GRID)
def test_never_below_exact_and_close(eps, dl):
    s = sigma_analytic_scalar(eps, dl)
    x = exact_sigma(eps, dl)
    assert s >= x  # the mechanism is at least as private as claimed
    assert s <= x * (1 + 1e-6)  # and the rounding costs almost nothing


def test_vectorised_equals_scalar_and_random_points_safe():
    rng = np.random.default_rng(3)
    e = 10 ** rng.uniform(-3.5, 1.5, 3000)
    dl = 10 ** rng.uniform(-250, -0.5, 3000)
    vec = sigma_analytic(e, dl)
    assert np.all(np.isfinite(vec))
    for i in rng.integers(0, e.size, 12):
        assert vec[i] == sigma_analytic_scalar(e[i], dl[i]) or np.isclose(vec[i], sigma_analytic_scalar(e[i], dl[i]),
                                                                            rtol=1e-12)
        assert vec[i] >= exact_sigma(e[i], dl[i], dps=40)


def test_log_delta_matches_mpmath_and_is_concave_in_log_sigma():
    # the solver starts Newton on the right of the root, which is monotone only if log δ is concave in log σ
    for eps in (0.01, 0.3, 2.0, 20.0):
        x = np.linspace(-4, 4, 401) - np.log(eps) / 2
        ld = log_delta(np.exp(x), eps)
        live = ld > -600
        second = np.diff(ld[live], 2)
        assert np.all(second <= 1e-9)
        for xi in x[::80]:
            s = mpmath.mpf(float(np.exp(xi)))
            with mpmath.workdps(40):
                ref = mpmath.log(mpmath.ncdf(1 / (2 * s) - eps * s) - mpmath.exp(eps) * mpmath.ncdf(-1 / (2 * s) - eps * s))
            if ref > -600:
                assert abs(float(log_delta(np.exp(xi), eps)) - float(ref)) <= 1e-9 * max(1.0, abs(float(ref)))


def test_monotone_in_eps_and_delta():
    e = np.geomspace(0.01, 20, 200)
    s = sigma_analytic(e, 1e-6)
    assert np.all(np.diff(s) < 0)
    d = np.geomspace(1e-200, 0.1, 200)
    assert np.all(np.diff(sigma_analytic(1.0, d)) < 0)
