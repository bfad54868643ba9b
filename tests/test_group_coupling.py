"""Brute-force checks of the two-point group-privacy coupling (boundcalc/methods/group_coupling.py).

Exact optimum by linear programming over ALL (ε,δ)-DP binary mechanisms on {0,1}^n (n <= 4): a test
built on any (ε,δ)-DP mechanism is itself an (ε,δ)-DP map to {reject, accept}, and conversely, so the
LP value is the exact smallest type I + type II error (resp. the largest P_v(A) - G P_0(A)).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import linprog

from boundcalc.core import symbolic as S
from boundcalc.methods import group_coupling as gc


def _datasets(n):
    return np.array(list(itertools.product([0, 1], repeat=n)), dtype=int)


def _dp_constraints(n, eps, delta):
    """A_ub g <= b_ub for: g(D) <= e^ε g(D') + δ and 1-g(D) <= e^ε(1-g(D')) + δ, all neighbours."""
    Ds = _datasets(n)
    index = {tuple(x): i for i, x in enumerate(Ds)}
    rows, b = [], []
    e = math.exp(eps)
    for i, x in enumerate(Ds):
        for j in range(n):
            y = x.copy()
            y[j] = 1 - y[j]
            k = index[tuple(y)]
            r = np.zeros(len(Ds)); r[i] = 1; r[k] = -e
            rows.append(r); b.append(delta)
            r = np.zeros(len(Ds)); r[i] = -1; r[k] = e
            rows.append(r); b.append(delta + e - 1)
    return Ds, np.array(rows), np.array(b)


def _product_pmf(Ds, q):
    ones = Ds.sum(axis=1)
    return q ** ones * (1 - q) ** (Ds.shape[1] - ones)


def lp_min_error(n, eps, delta, q0, q1):
    """Exact min over (ε,δ)-DP tests of type I + type II for Bern(q0)^n vs Bern(q1)^n."""
    Ds, A, b = _dp_constraints(n, eps, delta)
    c = _product_pmf(Ds, q0) - _product_pmf(Ds, q1)
    res = linprog(c, A_ub=A, b_ub=b, bounds=[(0, 1)] * len(Ds), method="highs")
    assert res.status == 0
    return 1 + res.fun


def lp_max_point_excess(n, eps, delta, p, G):
    """Exact max over (ε,δ)-DP binary mechanisms of P_v(A) - G P_0(A), P_0 = δ_0, P_v = Bern(p)."""
    Ds, A, b = _dp_constraints(n, eps, delta)
    c = -_product_pmf(Ds, p)
    c[0] += G  # dataset 0^n is row 0
    res = linprog(c, A_ub=A, b_ub=b, bounds=[(0, 1)] * len(Ds), method="highs")
    assert res.status == 0
    return -res.fun


CASES = [(n, eps, delta, q0, q1)
         for n in (1, 2, 3, 4)
         for eps in (0.1, 0.5, 1.0, 2.0)
         for delta in (0.0, 0.01, 0.1)
         for (q0, q1) in ((0.0, 1.0), (0.2, 0.5), (0.5, 0.6), (0.1, 0.9), (0.0, 0.3))]


def _sym_value(n, t, eps, delta):
    expr = gc.testing_bound(S.n, S.alpha, S.eps, S.delta if delta > 0 else None)
    subs = {S.n: n, S.alpha: t, S.eps: eps}
    if delta > 0:
        subs[S.delta] = delta
    return float(expr.subs(subs).evalf())


def test_testing_bound_below_exact_optimum():
    lps = {}
    for (n, eps, delta, q0, q1) in CASES:
        t = abs(q1 - q0)
        lp = lp_min_error(n, eps, delta, q0, q1)
        lps[(n, eps, delta, q0, q1)] = lp
        closed = gc.testing_bound_value(n, t, eps, delta)
        assert abs(closed - _sym_value(n, t, eps, delta)) < 1e-12  # sympy builder == float helper
        assert lp >= closed - 1e-9, (n, eps, delta, q0, q1, lp, closed)
        jensen = gc.testing_bound_jensen(S.n, S.alpha, S.eps, S.delta if delta > 0 else None)
        jensen = float(jensen.subs({S.n: n, S.alpha: t, S.eps: eps, S.delta: delta}))
        assert lp >= jensen - 1e-9, (n, eps, delta, q0, q1, lp, jensen)
        exact = gc.testing_bound_exact(n, t, eps, delta)
        assert exact >= jensen - 1e-12
        assert exact >= closed - 1e-12
        assert lp >= exact - 1e-9, (n, eps, delta, q0, q1, lp, exact)
    # teeth: the exact-average form is attained for point masses at n = 1 (randomized response)
    for eps in (0.1, 1.0, 2.0):
        for delta in (0.0, 0.1):
            assert lps[(1, eps, delta, 0.0, 1.0)] == pytest.approx(gc.testing_bound_exact(1, 1.0, eps, delta), abs=1e-9)


def test_testing_bound_has_teeth():
    """Stronger versions of the closed form are false on some exact instance: the exponent rate
    ε cannot be replaced by 0.7ε (at n = 1 the exact optimum is 1 - t tanh(ε/2)), and the δ term
    cannot be halved. (The sharper exact-average form is attained exactly: see the test above.)"""
    def variant(n, t, eps, delta, eps_scale=1.0, c_scale=1.0):
        m = (1 - t * (1 - math.exp(-eps_scale * eps))) ** n
        c = c_scale * delta / math.expm1(eps)
        return (1 + c) * m - c

    viol_eps = viol_c = False
    for (n, eps, delta, q0, q1) in CASES:
        lp = lp_min_error(n, eps, delta, q0, q1)
        t = abs(q1 - q0)
        viol_eps |= lp < variant(n, t, eps, delta, eps_scale=0.7) - 1e-9
        if delta > 0:
            viol_c |= lp < variant(n, t, eps, delta, c_scale=0.5) - 1e-9
    assert viol_eps and viol_c


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("eps", [0.1, 0.7, 1.5])
@pytest.mark.parametrize("delta", [0.0, 0.01, 0.05])
@pytest.mark.parametrize("p", [0.1, 0.4, 0.9])
def test_point_mass_bound_exact(n, eps, delta, p):
    bound_expr, G_expr, add_expr = gc.point_mass_bound(S.n, S.p, S.eps, S.delta if delta else None)
    subs = {S.n: n, S.p: p, S.eps: eps, S.delta: delta}
    G = float(G_expr.subs(subs))
    assert G == pytest.approx((1 + p * math.expm1(eps)) ** n, rel=1e-12)
    add = float(sp.sympify(add_expr).subs(subs))
    if delta:
        assert add == pytest.approx(float(gc.point_mass_additive(S.n, S.p, S.eps, S.delta).subs(subs)), rel=1e-12)
    best = lp_max_point_excess(n, eps, delta, p, G)
    assert best <= add + 1e-9
    # teeth: equality when δ_n <= 1 (mechanism P(A|D) = δ_{|D|}); a 1% smaller G admits P_v(A) > G' P_0(A) + add
    dh = [delta * math.expm1(h * eps) / math.expm1(eps) for h in range(n + 1)]
    delta_n = dh[-1]
    # P(A|D) = δ_{|D|} is (ε,δ)-DP iff also 1 - δ_h <= e^ε (1 - δ_{h+1}) + δ (the "accept" side)
    slack = min([1 - delta_n] + [math.exp(eps) * (1 - dh[h + 1]) + delta - 1 + dh[h] for h in range(n)])
    if slack >= 0:
        assert best == pytest.approx(add, abs=1e-9)
    if slack > 1e-3:  # room for P(A|D) = e^{ε|D|} g + δ_{|D|} with a small g > 0
        assert lp_max_point_excess(n, eps, delta, p, 0.99 * G) > add + 1e-9


@pytest.mark.parametrize("n,p,eps,loga,delta", [
    (5, 0.3, 30.0, -0.1, 0.0), (5, 0.3, 30.0, -1e-6, 0.0), (10, 0.001, 30.0, -2.0, 1e-3),
    (10, 0.3, 50.0, -2.0, 0.0), (5, 0.999999, 100.0, -10.0, 1e-9), (400, 0.05, 20.0, -50.0, 0.0),
])
def test_coupling_min_not_below_exact_sum_at_large_eps(n, p, eps, loga, delta):
    """CouplingMin's closed form (tilted binomial) must never fall below E min{1, e^{εH}a + δ_H} summed
    term by term in 50-digit arithmetic: 1 - f is a failure probability in the lower bounds, so an f that is
    too small inflates them. For p e^ε >> 1 the tilted success probability p' rounds to 1 in float64 and
    P(Bin(n, p') <= j) must be computed from 1 - p' = (1-p)/(1 + p(e^ε-1)) directly (before that fix,
    n = 5, p = 0.3, ε = 30, a = e^{-0.1}: 0.98375 against the exact 0.98401)."""
    import mpmath as mp

    with mp.workdps(50):
        pp, ee, a = mp.mpf(p), mp.mpf(eps), mp.e ** mp.mpf(loga)
        dp = mp.mpf(delta) / mp.expm1(ee)
        exact = float(sum(mp.binomial(n, h) * pp ** h * (1 - pp) ** (n - h)
                          * min(1, mp.e ** (ee * h) * (a + dp) - dp) for h in range(n + 1)))
    got = float(gc._coupling_min_numpy(n, p, eps, loga, delta))
    assert got >= exact - 1e-15 * max(exact, 1e-300) - 1e-300
    assert got <= exact + 1e-6  # and not a trivial value (where a tilted tail underflows, the cap used is >= f)


@pytest.mark.parametrize("n", [1e16, 1e18])
def test_coupling_min_with_an_empty_window_at_huge_n(n):
    """p = 1: H = n surely and e^{εn} a > 1, so f(a) = 1. From n ~ 2^53 the float counts lo - 1 and lo coincide;
    the float path once returned 0 there (an upper bound below the truth, which made the sphere-cap lowers of
    `rate --problem mean --privacy pure --n 1e18 --d 2 --r 1e-6` disagree with their 40-digit values)."""
    from boundcalc.methods.group_coupling import _coupling_min_numpy

    for loga in (math.log(0.3), math.log(1e-9)):
        assert float(_coupling_min_numpy(np.array(n), np.array(1.0), np.array(1.0), np.array(loga), np.array(0.0))) >= 1.0


def test_no_demoted_bound_at_n_1e18():
    import boundcalc as bc

    res = bc.rate("mean", "pure", n=1e18, d=2, r=1e-6)
    demoted = [b.name for b in res.lowers + res.uppers if not b.certified and "disagree" in (b.note or "")]
    assert demoted == [], demoted


def test_coupling_min_tilted_overflow_falls_back_to_the_direct_sum():
    """n = 1e9, p = 2.25e-6, ε = 20 and a tiny cap (log a = -1e5): G = E e^{εH} overflows, so the tilted form knew
    only f <= 1, while f is below 1e-22 in fact (the mpmath sum over the window). The window (about 1,400 counts) is
    now summed directly: the float value is within 1e-21 of the 40-digit one and never below it."""
    import mpmath

    from boundcalc.methods.group_coupling import _coupling_min_mp, _coupling_min_numpy

    n, p, eps = 1e9, 2.2548523520179924e-06, 20.0
    for loga in (-135215.31207345796, -54744.052111457706, -45628.012431806856):
        f = float(_coupling_min_numpy(np.array(n), np.array(p), np.array(eps), np.array(loga), np.array(0.0)))
        with mpmath.workdps(40):
            ref = _coupling_min_mp(mpmath.mpf(n), mpmath.mpf(p), mpmath.mpf(eps), mpmath.mpf(loga), mpmath.mpf(0))
        assert f >= float(ref) and f - float(ref) < 1e-21 + 1e-9 * float(ref), (loga, f, ref)
        assert float(ref) >= 0.0
