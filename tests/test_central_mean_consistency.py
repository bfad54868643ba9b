"""Consistency of the central mean bounds across moment classes (hypothesis):
lower and upper are monotone in k (𝒫_k shrinks as k grows), the upper never exceeds the trivial
risk r² of θ̂ = 0, lower <= upper; the non-private shrunk mean is the exact minimax risk."""
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import boundcalc as bc
from boundcalc.problems import mean_central as mc

common = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PRIVS = ["none", "pure", "smooth", "approx", "tv", "kl"]


def _kw(priv, n, eps, d, k):
    kw = dict(n=n, d=d, k=k)
    if priv in ("tv", "kl"):
        kw["eps"] = min(eps, 0.9)
    elif priv != "none":
        kw["eps"] = eps
    if priv == "approx":
        kw["delta"] = 1e-6
    return kw


@common
@given(priv=st.sampled_from(PRIVS), logn=st.floats(0, 8), logeps=st.floats(-4, 1),
       d=st.sampled_from([1, 3, 20, 100]))
def test_monotone_in_k_and_trivial(priv, logn, logeps, d):
    n, eps = int(10 ** logn), 10 ** logeps
    res = [bc.rate("mean", priv, **_kw(priv, n, eps, d, k)) for k in ("2", "3", "4", "inf")]
    for a, b in zip(res, res[1:]):  # larger k: smaller class
        assert b.upper.value <= a.upper.value * (1 + 2e-3)
        assert b.lower.value <= a.lower.value * (1 + 2e-3)
    for r in res:
        assert r.upper.value <= 1.0 + 1e-12  # r = 1: the zero estimator
        assert 0 < r.lower.value <= r.upper.value


def test_tiny_eps_upper_is_trivial():
    r = bc.rate("mean", "pure", eps=1e-12, n=1000, d=1, k=2)
    assert r.upper.value <= 1.0


@pytest.mark.parametrize("d", [1, 10])
def test_nonprivate_exact_minimax(d):
    for n in (1, 4, 100):
        r = bc.rate("mean", "none", n=n, d=d, k=2)
        assert r.upper.value == pytest.approx(1 / (1 + math.sqrt(n)) ** 2, rel=1e-12)
        assert r.lower.value == pytest.approx(r.upper.value, rel=1e-12)


def test_shrunk_mean_risk_exact_by_simulation():
    """E||cX̄ - θ||² = E||X||²/(1+√n)² for c = √n/(1+√n): seeded simulation in d = 3."""
    import numpy as np

    rng = np.random.default_rng(7)
    n, d, reps = 4, 3, 400_000
    theta = np.array([0.3, -0.2, 0.1])
    x = theta + rng.uniform(-0.5, 0.5, size=(reps, n, d))
    c = math.sqrt(n) / (1 + math.sqrt(n))
    err = np.sum((c * x.mean(axis=1) - theta) ** 2, axis=1)
    ex2 = float(np.sum(theta ** 2) + d / 12)
    assert err.mean() == pytest.approx(ex2 / (1 + math.sqrt(n)) ** 2, rel=5e-3)


@pytest.mark.parametrize("k", [2.0, 2.5, 4.0, 9.0])
def test_bias_bound_min_is_valid_and_monotone(k):
    """B_k(T) >= E(||X|| - T)_+ for two-point laws in 𝒫_k (exact), and B_k non-increasing in k."""
    import numpy as np
    import sympy as sp
    from boundcalc.core import symbolic as S

    f = sp.lambdify([S.T, S.r], mc.bias_bound_min(k))
    g = sp.lambdify([S.T, S.r], mc.bias_bound_min(k + 1.0))
    for T in np.geomspace(0.05, 5, 60):
        # worst two-point law {0, y} with mass r^k/y^k at y (E||X||^k = 1): scan y
        worst = max((y - T) / y ** k for y in np.geomspace(max(T, 1.0), 100 * max(T, 1.0), 4000))
        worst = max(worst, max(1.0 - T, 0.0))  # y = 1 with mass 1
        assert f(T, 1.0) >= worst - 1e-12
        assert g(T, 1.0) <= f(T, 1.0) + 1e-12
