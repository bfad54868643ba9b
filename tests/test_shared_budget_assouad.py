"""Assouad with a shared information budget (boundcalc/methods/shared_budget_assouad.py,
docs/methods/shared-budget-assouad.md).

The constant L is re-derived on cells and compared with mpmath; G's monotonicity, the closed form of h and the
binomial buckets are checked against brute force; the bound at fixed parameters against the exact Bayes risk of
concrete ε-LDP channels on its own family (every transcript enumerated), and against the certified uppers."""
from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from scipy import stats

import boundcalc as bc
from boundcalc.methods import shared_budget_assouad as SA
from boundcalc.problems.sparse_bernoulli import _shared_budget


def test_l_constant_certified_and_sharp():
    assert SA.certified_l_upper() <= float(SA.L_UPPER)
    mpmath.mp.dps = 30
    r = lambda t: (t - 1) ** 2 / ((t + 1) * (t * mpmath.log(t) - t + 1))
    best = max(r(mpmath.mpf(t)) for t in np.linspace(0.2, 0.25, 501))
    assert float(SA.L_UPPER) - 1e-5 < best <= float(SA.L_UPPER)  # within 1e-5 of the supremum


def test_g_increasing_and_accurate():
    mpmath.mp.dps = 40
    xs = np.geomspace(1e-9, 1e3, 300)
    ref = [float((1 + mpmath.mpf(x)) * ((1 + mpmath.mpf(x)) * mpmath.log1p(x) - x) / mpmath.mpf(x) ** 2) for x in xs]
    assert np.all(np.diff(ref) > 0)
    np.testing.assert_allclose(SA._G(xs), ref, rtol=1e-12)


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
def test_h_closed_form_against_grid(eps):
    E, em1 = math.exp(eps), math.expm1(eps)
    a = np.linspace(math.exp(-eps), 1.0, 200001)
    for tp in (0.02, 0.3, 0.9):
        for N in (0, 1, 3, 40, 2000):
            A = (a * E - 1) * (1 - a) / (tp * (1 - tp))  # A/τ²
            C = N * em1 ** 2 * a ** 2
            brute = np.max(np.minimum(A, C)) / em1 ** 2
            closed = float(SA.h_over_scale(N, tp, eps))
            assert brute * (1 - 1e-12) <= closed <= brute * (1 + 2e-5) + 1e-15  # the grid's max is below the sup


@pytest.mark.parametrize("k", [5, 300, 5000, 10 ** 6])
def test_buckets_dominate_the_exact_expectation(k):
    tops, probs = SA._buckets(k)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    N = np.arange(k + 1)
    pmf = stats.binom.pmf(N, k, 0.5)
    for f in (lambda x: np.sqrt(x), lambda x: np.minimum(x, k / 2.0), lambda x: x ** 2):
        exact = float((pmf * f(N)).sum())
        assert float((probs * f(tops)).sum()) >= exact * (1 - 1e-12)
        assert float((probs * f(tops)).sum()) <= exact * 1.05 + 1e-12


def _exact_bayes_risk(k, tp, tm, Q, n):
    """η² Σ_j (1 - E v̂_j²) with every transcript of n users enumerated (the same channel Q, rows: outputs)."""
    Xs = np.array(list(itertools.product((0, 1), repeat=k)))
    Vs = np.array(list(itertools.product((-1, 1), repeat=k)))
    th = np.where(Vs > 0, tp, tm)  # (V, k)
    P = np.prod(np.where(Xs[None, :, :] == 1, th[:, None, :], 1 - th[:, None, :]), axis=2)  # (V, X)
    M = P @ Q.T
    s = 0.0
    for zs in itertools.product(range(M.shape[1]), repeat=n):
        lik = np.prod(M[:, zs], axis=1)
        tot = lik.sum()
        if tot <= 0:
            continue
        vhat = (lik[:, None] * Vs).sum(axis=0) / tot
        s += lik.mean() * float(vhat @ vhat)
    return ((tp - tm) / 2) ** 2 * (k - s)


def _rr(m, eps):
    Q = np.ones((m, m))
    np.fill_diagonal(Q, math.exp(eps))
    return Q / Q.sum(axis=0)


def _bitwise_rr(k, eps):
    q = 1 / (1 + math.exp(-eps / k))
    Xs = list(itertools.product((0, 1), repeat=k))
    return np.array([[np.prod([q if z[j] == x[j] else 1 - q for j in range(k)]) for x in Xs] for z in Xs])


def test_bound_below_exact_bayes_risk_of_private_channels():
    bound = _shared_budget()
    rng = np.random.default_rng(3)
    closest = 0.0
    for k, eps, (tp, tm) in itertools.product((1, 2, 3), (0.5, 1.0, 2.0, 4.0), ((1.0, 0.0), (0.5, 0.1), (0.3, 0.25))):
        R = np.exp(rng.random((4, 2 ** k)) * eps / 2)
        chans = [_rr(2 ** k, eps), _bitwise_rr(k, eps), R / R.sum(axis=0)]
        for n in (1, 2, 3):
            if k == 3 and n == 3:
                continue
            s = k * tp
            value = float(bound.evaluate(dict(n=n, eps=eps, d=k, s=s), {"k_sb": k, "r_sb": 1.0, "q_sb": tm / tp}))
            assert math.isfinite(value)
            for Q in chans:
                exact = _exact_bayes_risk(k, tp, tm, Q, n)
                assert value <= exact * (1 + 1e-12), (k, eps, tp, tm, n)
                closest = max(closest, value / exact)
    assert closest > 0.5


@pytest.mark.parametrize("kw", [dict(n=1000, eps=3.0, d=1000, s=2.0), dict(n=10 ** 5, eps=0.5, d=100, s=5.0),
                                dict(n=10 ** 7, eps=0.1, d=10, s=1.0)])
def test_certified_and_below_the_uppers(kw):
    res = bc.rate("sparse-bernoulli", privacy="local", **kw)
    sb = next(b for b in res.lowers if b.name == "shared-budget-assouad")
    assert sb.certified and sb.value is not None and 0 < sb.value <= res.upper.value
