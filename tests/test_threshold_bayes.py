"""Threshold Bayes lower bound (boundcalc.methods.threshold_bayes) and its uses (support, point)."""
import math

import mpmath
import numpy as np
import pytest
from scipy import optimize

import boundcalc as bc
from boundcalc.core import symbolic
from boundcalc.methods import threshold_bayes as T


@pytest.mark.parametrize("y", [1e-3, 0.3, 1.99, 2.0, 2.01, 7.5, 40.0, 800.0])
def test_j_functions_against_quadrature(y):
    ja = float(mpmath.quad(lambda x: (y - x) / (1 + mpmath.e ** x), [0, min(y, 60), y]))
    js = float(mpmath.quad(lambda x: (y - x) * x / (1 + mpmath.e ** x), [0, min(y, 60), y]))
    assert T.j_abs(y) == pytest.approx(ja, rel=1e-12)
    assert T.j_sq(y) == pytest.approx(js, rel=1e-12)


@pytest.mark.parametrize("width,kappa", [(1.0, 3.0), (0.5, 40.0), (2.0, 0.7)])
def test_closed_form_equals_double_integral(width, kappa):
    import sympy as sp

    w, k = sp.symbols("w k", positive=True)
    fa = symbolic.numpy_lambdify([w, k], T.bayes_abs(w, k))
    fs = symbolic.numpy_lambdify([w, k], T.bayes_sq(w, k))
    assert float(fa(width, kappa)) == pytest.approx(T.bayes_numeric_direct(width, kappa, "abs"), rel=1e-7)
    assert float(fs(width, kappa)) == pytest.approx(T.bayes_numeric_direct(width, kappa, "sq"), rel=1e-7)


@pytest.mark.parametrize("eps,h", [(0.1, 1), (1.0, 1), (1.0, 3), (2.5, 2), (0.3, 7)])
def test_pairwise_dp_test_bound_is_the_lp_optimum(eps, h):
    """min g0 + 1 - g1 over g0, g1 in [0,1] with the two group-privacy constraints (an LP) is 2/(1+e^{εh})."""
    e = math.exp(eps * h)
    # variables (g0, g1); minimise g0 - g1 (+1); constraints g1 <= e g0 ; (1 - g0) <= e (1 - g1)
    res = optimize.linprog([1, -1], A_ub=[[-e, 1], [-1, e]], b_ub=[0, e - 1], bounds=[(0, 1), (0, 1)])
    assert res.status == 0
    assert res.fun + 1 == pytest.approx(2 / (1 + e), rel=1e-9)


@pytest.mark.parametrize("eps,n,t", [(0.5, 20, 0.1), (1.0, 50, 0.03), (0.1, 200, 0.2)])
def test_jensen_step(eps, n, t):
    from scipy import stats

    k = np.arange(n + 1)
    exact = float(np.sum(stats.binom.pmf(k, n, t) * 2 / (1 + np.exp(eps * k))))
    assert exact >= 2 / (1 + math.exp(eps * n * t)) - 1e-15


def _exp_mech_bayes_risk(n, eps, loss, omega, theta0=1.0, reps=4000, seed=3):
    """Simulated Bayes risk, under the threshold bound's prior, of the certified exponential mechanism."""
    from boundcalc.problems import support

    res = bc.rate("support", "pure", n=n, eps=eps, loss=loss)
    up = next(u for u in res.uppers if u.name == "exp-mech")
    rng = np.random.default_rng(seed)
    thetas = 2 * theta0 * (1 - omega * rng.random(reps))
    x = np.sort(rng.random((reps, n)), axis=1) * thetas[:, None]
    lam = n * -math.expm1(-eps) / (2 * theta0)
    g = up.free_parameters["rho"] * lam
    t = support.exp_mech_sample(x, eps, g, rng)
    est = np.clip(t - up.free_parameters["s_shift"] / g, theta0, 2 * theta0)
    err = np.abs(est - thetas) if loss == "abs" else (est - thetas) ** 2
    return err.mean(), err.std() / math.sqrt(reps)


@pytest.mark.parametrize("n,eps,loss", [(50, 1.0, "abs"), (200, 0.3, "abs"), (100, 1.0, "squared"),
                                        (300, 0.2, "squared")])
def test_support_lower_below_simulated_bayes_risk(n, eps, loss):
    """The bound is on the Bayes risk under its own prior: it must stay below that of a concrete ε-DP estimator."""
    res = bc.rate("support", "pure", n=n, eps=eps, loss=loss)
    lo = next(b for b in res.lowers if b.name == "threshold-bayes")
    m, se = _exp_mech_bayes_risk(n, eps, loss, lo.free_parameters["omega"])
    assert lo.value <= m + 4 * se
    assert res.lower.value <= res.upper.value


@pytest.mark.parametrize("width,c", [(1.0, 0.5), (1.0, 3.0), (0.2, 40.0), (3.0, 1.0)])
@pytest.mark.parametrize("loss", ["abs", "sq"])
def test_linear_pairwise_closed_form(width, c, loss):
    import sympy as sp
    from scipy import integrate

    w, cc = sp.symbols("w c", positive=True)
    f = symbolic.numpy_lambdify([w, cc], T.bayes_linear(w, cc, "abs" if loss == "abs" else "squared"))

    def inner(m):
        g = (lambda u: max(0.0, 1 - c * u)) if loss == "abs" else (lambda u: 2 * u * max(0.0, 1 - c * u))
        return integrate.quad(g, 0, m, points=[1 / c] if 1 / c < m else None, limit=200)[0]

    direct = integrate.quad(lambda s: inner(min(s, width - s)), 0, width, points=[width / 2], limit=200)[0] / width
    assert float(f(width, c)) == pytest.approx(direct, rel=1e-7)
    corr = T.delta_correction(width, 1.0, "abs" if loss == "abs" else "squared")
    direct_corr = integrate.quad(lambda s: (min(s, width - s) if loss == "abs" else min(s, width - s) ** 2),
                                 0, width, points=[width / 2])[0] / width
    assert float(corr) == pytest.approx(direct_corr, rel=1e-9)


@pytest.mark.parametrize("eps,h,delta", [(0.5, 1, 1e-3), (1.0, 3, 1e-2), (0.1, 10, 0.05)])
def test_approx_pairwise_lp(eps, h, delta):
    """min g0 + 1 - g1 under g1 <= e g0 + δ_h, 1 - g0 <= e(1 - g1) + δ_h is 2(1-δ_h)/(1+e) >= 2/(1+e) - 2δ/(e^ε-1)."""
    e = math.exp(eps * h)
    dh = delta * math.expm1(eps * h) / math.expm1(eps)
    res = optimize.linprog([1, -1], A_ub=[[-e, 1], [-1, e]], b_ub=[dh, e - 1 + dh], bounds=[(0, 1), (0, 1)])
    val = res.fun + 1
    assert val == pytest.approx(max(0.0, 2 * (1 - dh) / (1 + e)), abs=1e-9)
    assert val >= 2 / (1 + e) - 2 * delta / math.expm1(eps) - 1e-12


@pytest.mark.parametrize("n,eps,z", [(30, 1.0, 0.2), (200, 0.3, 0.05), (1000, 1.0, 0.01), (5, 2.0, 1.0)])
def test_exact_binomial_average_against_quadrature(n, eps, z):
    from scipy import integrate, stats

    k = np.arange(n + 1)

    def beta(t):
        return float(np.sum(stats.binom.pmf(k, n, t) * 2 / (1 + np.exp(eps * k))))

    d0 = integrate.quad(lambda t: (z - t) * beta(t), 0, z, limit=200)[0]
    d1 = integrate.quad(lambda t: (z - t) * t * beta(t), 0, z, limit=200)[0]
    assert T.binom_g_numeric(z, n, eps, 0) == pytest.approx(d0, rel=1e-8)
    assert T.binom_g_numeric(z, n, eps, 1) == pytest.approx(d1, rel=1e-8)
    # the exact average is never below the Jensen form
    y = eps * n * z
    assert T.binom_g_numeric(z, n, eps, 0) >= 2 / (eps * n) ** 2 * T.j_abs(y) * (1 - 1e-12)


def _binom_g_every_term(z, n, eps, power):
    """binom_g_numeric without its shortcut: every incomplete beta computed (the reference for the test below)."""
    from scipy.special import betainc

    from boundcalc.methods.threshold_bayes import K_MAX

    kmax = int(min(n, math.ceil(40.0 / eps) + 20, K_MAX))
    k = np.arange(kmax + 1, dtype=float)
    f = 2.0 / (1.0 + np.exp(np.minimum(eps * k, 700.0)))
    with np.errstate(all="ignore"):
        if power == 0:
            term = z * betainc(k + 1, n - k + 1, z) - (k + 1) / (n + 2) * betainc(k + 2, n - k + 1, z)
            val = np.sum(f * np.maximum(term, 0.0)) / (n + 1)
        else:
            term = z * betainc(k + 2, n - k + 1, z) - (k + 2) / (n + 3) * betainc(k + 3, n - k + 1, z)
            val = np.sum(f * (k + 1) * np.maximum(term, 0.0)) / ((n + 1) * (n + 2))
    return val if math.isfinite(val) else 0.0


def test_binom_g_shortcut_gives_the_same_floats():
    """Where every tail rounds to 1 the sum is formed without the incomplete betas: bit for bit the value of
    computing each, at 600 random points (n from 10 to 1e9, ε from 1e-6 to 5, z on both sides of kmax/n), and the
    shortcut is taken at some of them."""
    from boundcalc.methods.threshold_bayes import binom_g_numeric

    rng = np.random.default_rng(7)
    taken = 0
    for _ in range(300):
        n = float(np.floor(10 ** rng.uniform(1, 9)))
        eps = float(10 ** rng.uniform(-6, 0.7))
        kmax = min(n, math.ceil(40 / eps) + 20, 4000)
        z = float(min(1.0, kmax / n * 10 ** rng.uniform(-1, 1.5)))
        for power in (0, 1):
            got = float(binom_g_numeric(z, n, eps, power))
            assert got == _binom_g_every_term(z, n, eps, power), (z, n, eps, power)
            from scipy.special import betainc
            taken += betainc(kmax + 2 + power, n - kmax + 1, z) == 1.0
    assert 50 < taken < 550


def test_binom_g_mp_shortcut_within_working_precision(monkeypatch):
    """Where Chernoff shows every binomial tail to be 1 to the working precision, the high-precision sum is formed
    from ones: within 1e-45 (relative) of the sum of the exact tails at 50 digits, at points where it is taken; and it
    is not taken where the lower tail matters (z just above kmax/n)."""
    import mpmath

    from boundcalc.methods import threshold_bayes as TB

    cases = [(0.2095, 10**6, 4.03e-5, 1), (0.8240571, 10**6, 4.45e-6, 0), (0.1, 10**5, 0.01, 1), (0.3, 20000, 1.0, 0)]
    with mpmath.workdps(50):
        for z, n, eps, power in cases:
            kmax = int(min(n, math.ceil(40.0 / eps) + 20, TB.K_MAX))
            assert TB._lower_tail_negligible(n + 1 + power, z, kmax + 2 + power, mpmath.mp.prec + 34)
            fast = TB.binom_g_mp(mpmath.mpf(z), mpmath.mpf(n), mpmath.mpf(eps), power)
            monkeypatch.setattr(TB, "_lower_tail_negligible", lambda *a: False)
            slow = TB.binom_g_mp(mpmath.mpf(z), mpmath.mpf(n), mpmath.mpf(eps), power)
            monkeypatch.undo()
            assert abs(fast / slow - 1) < mpmath.mpf("1e-45"), (z, n, eps, power, fast, slow)
        # just above the mode: not negligible
        assert not TB._lower_tail_negligible(10**6 + 1, 4100 / 10**6, 4002, 200)
