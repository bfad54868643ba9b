"""Sphere-cap packing (boundcalc/methods/sphere_cap.py): cap areas against closed forms and Monte
Carlo, the 'largest ball intersection is the cap' step by random centres, and the whole lower bound
against the exact risk of a concrete private estimator on the packing family."""
import math

import numpy as np
import pytest
import sympy as sp

from boundcalc.core import symbolic as S
from boundcalc.core.bounds import Bound
from boundcalc.methods import sphere_cap as sc


@pytest.mark.parametrize("t", [0.05, 0.3, 0.7, 0.99])
def test_cap_closed_forms(t):
    assert float(sc.cap_value(2, t)) == pytest.approx(math.asin(t) / math.pi, rel=1e-12)
    assert float(sc.cap_value(3, t)) == pytest.approx((1 - math.sqrt(1 - t * t)) / 2, rel=1e-10)
    assert float(sc.cap_value(1, t)) == 0.5


def _sphere(rng, m, d):
    x = rng.standard_normal((m, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("d", [2, 4, 10])
@pytest.mark.parametrize("t", [0.4, 0.8])
def test_cap_monte_carlo_and_maximality(d, t):
    rng = np.random.default_rng(1234 + d)
    m = 200_000
    v = _sphere(rng, m, d)
    cap = float(sc.cap_value(d, t))
    se = math.sqrt(cap * (1 - cap) / m) + 1e-6
    # the best centre: distance sqrt(1 - τ²) from 0
    c = np.zeros(d); c[0] = math.sqrt(1 - t * t)
    frac = np.mean(np.linalg.norm(v - c, axis=1) < t)
    assert abs(frac - cap) < 5 * se
    # no other centre does better (random directions and radii)
    for s in np.linspace(0.0, 1.5, 16):
        c = np.zeros(d); c[0] = s
        assert np.mean(np.linalg.norm(v - c, axis=1) < t) <= cap + 5 * se


def test_log_cap_numpy_and_mpmath_agree():
    expr = sc.LogSphereCap(S.d, sc.tau)
    b = Bound(side="lower", name="x", label="", expr=expr, source="", derivation="")
    for d, t in [(2, 0.3), (10, 0.5), (100, 0.2), (1, 0.5)]:
        a = float(b.evaluate({"d": d}, {"tau": t}))
        m = b._evaluate_mpmath({"d": d, "tau": t})
        assert a == pytest.approx(m, rel=1e-9)
        assert a == pytest.approx(math.log(float(sc.cap_value(d, t))), rel=1e-12)


def _laplace_l2_risk(n, p, eps, d, R):
    """Exact risk on P_v = (1-p)δ_0 + p δ_{Rv} of θ̂ = c (X̄ + W), W ℓ2-Laplace for sensitivity 2R/n
    (ε-DP), minimised over the shrinkage c (a valid private estimator for each c)."""
    rho = p * R
    var = (p * R * R - rho * rho) / n
    noise = d * (d + 1) * (2 * R / (n * eps)) ** 2
    c = rho ** 2 / (rho ** 2 + var + noise)
    return c * c * (var + noise) + (1 - c) ** 2 * rho ** 2


def _count_rr_risk(n, p, eps, R):
    """d = 1, exact risk on P_± = (1-p)δ_0 + p δ_{±R} of an ε-DP estimator: θ̂ = c·R·(Y/n), Y = Σ sign(X_i)
    + Laplace(2/ε) (replace-one sensitivity 2), shrunk by the best c; E(Y/n) = ±p, Var = (p/n) + 8/(nε)²."""
    rho = p * R
    var = R * R * (p - p * p) / n + R * R * 8 / (n * eps) ** 2
    c = rho ** 2 / (rho ** 2 + var)
    return c * c * var + (1 - c) ** 2 * rho ** 2


@pytest.fixture
def cap_once(monkeypatch):
    """The float helpers evaluate log cap(τ) afresh at every (p, τ); it depends on (d, τ) only, so the grids
    below compute each value once (the same function, so the same floats)."""
    kept = {}
    log_cap = sc._log_cap_numpy

    def once(d, t):
        key = (float(d), float(t))
        if key not in kept:
            kept[key] = log_cap(d, t)
        return kept[key]

    monkeypatch.setattr(sc, "_log_cap_numpy", once)


@pytest.mark.parametrize("d", [1, 2, 5, 20])
@pytest.mark.parametrize("n", [1, 5, 50])
@pytest.mark.parametrize("eps", [0.3, 2.0])
@pytest.mark.parametrize("delta", [0.0, 1e-3])
def test_whole_bound_below_exact_private_risk(d, n, eps, delta, cap_once):
    """For each mixture weight p the bound (maximised over τ) is a lower bound on the average risk over
    the family P_v of ANY (ε,δ)-DP estimator; the shrunk ℓ2-Laplace mean is ε-DP, hence (ε,δ)-DP."""
    R = 1.0
    taus = np.linspace(0.01, 0.999, 400)
    worst_ratio = math.inf
    for p in np.geomspace(1e-4, 1.0, 40):
        lower = max(sc.risk_lower_value(n, p, eps, d, t, p * R, delta) for t in taus)
        risk = _laplace_l2_risk(n, p, eps, d, R)
        if d == 1:
            risk = min(risk, _count_rr_risk(n, p, eps, R))
        assert lower <= risk * (1 + 1e-12), (p, lower, risk)
        if lower > 0:
            worst_ratio = min(worst_ratio, risk / lower)
    # and the bound is not vacuous: somewhere within a factor 60 of this simple estimator
    assert worst_ratio < 60


def test_mean_bound_matches_float_helper():
    from boundcalc.problems import mean_central as mc

    b = next(x for x in mc._coupling_lowers("approx", math.inf) if x.name == "sphere-cap")
    for (n, p, eps, d, t, delta) in [(100, 0.01, 1.0, 10, 0.5, 1e-6), (10, 0.2, 0.3, 3, 0.9, 1e-3)]:
        v = float(b.evaluate({"n": n, "eps": eps, "d": d, "r": 1.0, "delta": delta}, {"p": p, "tau": t}))
        assert v == pytest.approx(sc.risk_lower_value(n, p, eps, d, t, p, delta), rel=1e-9)


@pytest.mark.parametrize("d,t", [(1000, 0.49), (1000, 0.1), (400, 0.5), (20000, 0.9), (50, 0.3), (3000, 0.95)])
def test_log_cap_no_underflow(d, t):
    """Large d: the numpy log-cap (series form where betainc underflows) equals mpmath's 50-digit value."""
    import mpmath

    with mpmath.workdps(50):
        ref = float(mpmath.log(mpmath.betainc((d - 1) / 2, 0.5, 0, t * t, regularized=True) / 2))
    got = float(sc._log_cap_numpy(d, t))
    assert float(sc._log_cap_mpmath(d, t)) == pytest.approx(ref, rel=1e-10)
    assert math.isfinite(got) and got == pytest.approx(ref, rel=1e-8)


@pytest.mark.parametrize("d", [1, 2, 5, 20])
@pytest.mark.parametrize("n", [1, 5, 50])
@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_layered_bound_below_exact_private_risk_and_above_single_radius(d, n, eps, cap_once):
    """The layer-cake form is a lower bound on the average risk of a concrete ε-DP estimator (the shrunk
    ℓ2-Laplace mean, and for d = 1 the noisy sign count) and never below the single-radius form."""
    R = 1.0
    taus = np.linspace(0.02, 0.999, 120)
    for p in np.geomspace(1e-4, 1.0, 25):
        risk = _laplace_l2_risk(n, p, eps, d, R)
        if d == 1:
            risk = min(risk, _count_rr_risk(n, p, eps, R))
        for t in taus[::7]:
            single = sc.risk_lower_value(n, p, eps, d, t, p * R)
            layered = sc.risk_lower_layers_value(n, p, eps, d, t, p * R)
            assert single <= layered * (1 + 1e-12) + 1e-300
        best = max(sc.risk_lower_layers_value(n, p, eps, d, t, p * R) for t in taus)
        assert best <= risk * (1 + 1e-12), (p, best, risk)


def test_layered_sympy_bound_matches_float_helper():
    from boundcalc.problems import mean_central as mc

    b = next(x for x in mc._coupling_lowers("approx", math.inf) if x.name == "sphere-cap-layers")
    for (n, p, eps, d, t, delta) in [(100, 0.01, 1.0, 10, 0.5, 1e-6), (10, 0.2, 0.3, 3, 0.9, 1e-3)]:
        v = float(b.evaluate({"n": n, "eps": eps, "d": d, "r": 1.0, "delta": delta}, {"p": p, "tau": t}))
        assert v == pytest.approx(sc.risk_lower_layers_value(n, p, eps, d, t, p, delta), rel=1e-9)


def test_log_cap_mpmath_memo_is_keyed_by_precision_and_returns_the_computed_value():
    """The high-precision cap is kept per (d, τ, precision): a second call returns the value computed at that
    precision, never one computed at another."""
    import mpmath

    d, t = mpmath.mpf(50001), mpmath.mpf("0.97")
    sc._CAP_MP_MEMO.clear()
    with mpmath.workdps(40):
        v40 = sc._log_cap_mpmath(d, t)
        assert sc._log_cap_mpmath(d, t) is v40
        assert v40 == sc._log_cap_mpmath_uncached(d, t)
    with mpmath.workdps(60):
        v60 = sc._log_cap_mpmath(d, t)
        assert v60 == sc._log_cap_mpmath_uncached(d, t) and v60 is not v40
    assert abs(v60 - v40) < 1e-35 * abs(v60)
