"""exp-mech-top (boundcalc.problems.support.exp_mech_top_upper; docs/problems/support.md): the closed form against a
direct quadrature of the segment bound it relaxes, against the simulated risk of the mechanism itself, and its limit
(the non-private risk) as the privacy level weakens."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from boundcalc.core import symbolic as S
from boundcalc.problems import support as SP


def _closed(n, eps, lam, v, b, t0=1.0):
    args = [S.n, S.eps, SP.theta0, SP.lam_top, SP.v_top, SP.b_top]
    fn = S.numpy_lambdify(args, SP.exp_mech_top_expr("pure"))
    return float(fn(n, eps, t0, lam, v, b))


def _params(n, eps, lam, v, b, t0=1.0):
    m1 = -math.expm1(-lam * eps)
    gamma = v * m1 * (n + 1) / (2 * lam * t0)
    return gamma, b * t0 / n


def _segment_bound_quadrature(n, eps, lam, v, b, t0=1.0):
    """Steps 1-3 before the MGF relaxations: max_θ E|Y + β - W| + Σ_j E[min{1, e^{γS_j - εj}}(S_j + β + (θ-S_j)/(n-j+1))]
    at θ = 2θ_0, each expectation by quadrature."""
    gamma, beta = _params(n, eps, lam, v, b, t0)
    big = 2 * t0
    total = 0.0
    for j in range(1, n + 1):
        def f(x, j=j):
            s = big * x
            return min(1.0, math.exp(gamma * s - eps * j)) * (s + beta + (big - s) / (n - j + 1)) \
                * stats.beta.pdf(x, j, n + 1 - j)
        total += integrate.quad(f, 0, 1, limit=200, points=[min(1.0, eps * j / (gamma * big))])[0]

    def top(th):  # E|Y + β - W|, W = θ Beta(1, n), Y ~ Exp(γ)
        def g(w):
            c = w - beta  # E|Y - c| for Y ~ Exp(γ)
            ey = (c + 2 * math.exp(-gamma * c) / gamma - 1 / gamma) if c > 0 else (1 / gamma - c)
            return ey * n * (1 - w / th) ** (n - 1) / th
        return integrate.quad(g, 0, th, limit=200, points=[min(th, beta)])[0]

    return max(top(t0), top(big)) + total


@pytest.mark.parametrize("n,eps", [(4, 2.0), (8, 5.0), (20, 1.0), (30, 12.0)])
def test_closed_form_above_the_segment_bound(n, eps):
    rng = np.random.default_rng(n)
    for _ in range(6):
        lam, v, b = float(rng.uniform(0.1, 1.0)), float(rng.uniform(0.05, 0.95)), float(rng.uniform(0, 3))
        closed = _closed(n, eps, lam, v, b)
        quad = _segment_bound_quadrature(n, eps, lam, v, b)
        assert closed >= quad * (1 - 1e-9), (n, eps, lam, v, b, closed, quad)


def test_above_the_simulated_risk_of_the_mechanism():
    """The exact sampler of the mechanism at θ ∈ {θ_0, 1.5θ_0, 2θ_0}: the bound stays above mean + 4 SE."""
    rng = np.random.default_rng(11)
    reps = 20000
    closest = 0.0
    for n, eps, lam, v, b in [(10, 5.0, 1.0, 0.75, 0.0), (10, 2.0, 0.8, 0.5, 0.5), (50, 20.0, 0.3, 0.8, 0.9),
                              (200, 40.0, 0.22, 0.81, 0.9)]:
        gamma, beta = _params(n, eps, lam, v, b)
        bound = _closed(n, eps, lam, v, b)
        for th in (1.0, 1.5, 2.0):
            x = np.sort(rng.random((reps, n)), axis=1) * th
            t = SP.exp_mech_sample(x, eps, gamma, rng)
            err = np.abs(np.clip(t + beta, 1.0, 2.0) - th)
            hi = err.mean() + 4 * err.std() / math.sqrt(reps)
            assert hi <= bound, (n, eps, th, hi, bound)
            closest = max(closest, err.mean() / bound)
    assert closest > 0.4  # the comparison is not vacuous


def test_tends_to_the_nonprivate_risk():
    """As ε grows the bound approaches the risk of the best multiple of the maximum, 2θ_0(2^{1/(n+1)} - 1)."""
    from boundcalc.app import api

    for n in (30, 1000):
        nonpriv = 2 * math.expm1(math.log(2) / (n + 1))
        res = api.rate("support", "pure", n=n, eps=400.0, loss="abs")
        top = [u for u in res.uppers if u.name == "exp-mech-top"][0]
        assert top.certified and top.value <= 1.12 * nonpriv, (n, top.value, nonpriv)
        assert res.lower.value <= top.value
