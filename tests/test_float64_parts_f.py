"""Part F of the float64-parts audit (docs/engineering/certified-floating-point.md): the projected subset-selection
bounds beyond d = 2 against the exact risk of the estimator they bound, and the exact-tail branch of
ClipBiasBound_<model> against 50-digit references (tests/_float64_parts_f_reference.py, written from the
definitions). The ClipBias cases at large block sizes where the float64 value is below the exact one by more than its
1e-9 margin are recorded as strict xfails: an open point, not fixed here (they fail, and must be moved, once fixed)."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from boundcalc.mechanisms import subsample_aggregate as sa
from boundcalc.mechanisms import subset_tail as ST

from _float64_parts_f_reference import (binom_cdf_ref, binom_sf_ref, clip_hinge_ref, simplex_grid,
                                        subset_constants_ref, subset_exact_risks, subset_exact_risks_f64)

# ----------------------------------------------------------------------------- projected subset selection, d = 3, 4

SUBSET_CASES = [(3, 20, 1.0), (3, 40, 0.5), (4, 12, 1.0)]


@pytest.mark.parametrize("d,n,eps", SUBSET_CASES)
def test_projected_subset_bounds_above_exact_risk(d, n, eps):
    ths = simplex_grid(d)
    for route, loss in (("max", "l2sq"), ("threshold", "l2sq"), ("threshold", "l1")):
        v, s, _ = ST.best(route, n, eps, d, loss)
        assert math.isfinite(v)
        worst = max(r[0 if loss == "l2sq" else 1] for r in subset_exact_risks(n, eps, d, s, ths))
        assert mpmath.mpf(min(v, 2.0)) >= worst, (route, loss, v, float(worst))


@pytest.mark.parametrize("n,eps,d,s", [(15, 0.5, 3, 1), (10, 1.0, 3, 2), (8, 0.5, 4, 3)])
def test_float64_enumeration_agrees_with_40_digits(n, eps, d, s):
    ths = simplex_grid(d)
    a = subset_exact_risks(n, eps, d, s, ths)
    b = subset_exact_risks_f64(n, eps, d, s, ths)
    for (x, y), (u, w) in zip(a, b):
        assert abs(u / float(x) - 1) < 1e-12 and abs(w / float(y) - 1) < 1e-12


def test_runnable_estimator_is_the_referenced_one():
    """u.mechanism().estimate on reports = Π_Δ((N/n - q*)/D) with the exact constants (to float64 accuracy)."""
    import boundcalc as bc
    from _float64_parts_f_reference import project_simplex_mp

    res = bc.rate("multinomial", "local", n=30, d=4, eps=1.0, loss="l2sq")
    u = next(u for u in res.uppers if u.name == "subset-projected-threshold")
    m = u.mechanism()
    rng = np.random.default_rng(1)
    rep = m.privatize_all(rng.integers(0, 4, size=30), rng)
    _, qs, D = subset_constants_ref(1.0, 4, m.s)
    N = rep.sum(axis=0)
    ref = project_simplex_mp([(mpmath.mpf(int(x)) / 30 - qs) / D for x in N])
    assert np.allclose(m.estimate(rep), [float(x) for x in ref], rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------- float64 constants and binomial tails

def _constants_error(eps, d, s, got):
    ref = subset_constants_ref(eps, d, s, 50)
    return max(abs(float((mpmath.mpf(g) - r) / (abs(r) + mpmath.mpf("1e-290")))) for g, r in zip(got, ref))


EPS_SWEEP = (1e-12, 1e-9, 2e-8, 1e-7, 1e-6, 9.99e-4, 1e-3, 0.1, 1.0, 4.6, 10.0, 30.0, 100.0, 699.9, 700.1, 740.0, 800.0)


def test_subset_constants_accurate_at_every_eps():
    """The float64 p*, q*, D against 50-digit values, ε from 1e-12 to 800 (subnormal q* to an absolute 1e-290).
    D = p* - q* cancels at small ε (both near s/d, relative error about u/ε) and q* = (s - p*)/(d - 1) at large ε
    with s = 1 (p* near 1); where they would, the closed forms are used instead."""
    worst = max(_constants_error(eps, d, s, ST.subset_constants(eps, d, s))
                for eps in EPS_SWEEP for d, s in ((2, 1), (3, 1), (100, 1), (100, 27), (10**5, 26894)))
    assert worst < 1e-12, worst


def test_subset_constants_difference_forms_fail_where_replaced():
    """The plain differences are what the closed forms replace: p* - q* at ε = 1e-9 and s - p* at ε = 30 (d = 2,
    s = 1) err by more than 1e-9 relatively (so the test above can fail); the closed forms stay within 1e-15."""
    for eps in (1e-9, 30.0):
        ps, qs, D = ST.subset_constants(eps, 2, 1)
        qs_plain = (1 - ps) / (2 - 1)
        assert _constants_error(eps, 2, 1, (ps, qs_plain, ps - qs_plain)) > 1e-9
        assert _constants_error(eps, 2, 1, (ps, qs, D)) < 1e-15


def _tail_failures(cases, plant=0.0):
    bad = []
    for k, n, p in cases:
        sf = float(ST._sf(np.array([k]), n, np.array([p]))[0]) * (1 - plant)
        cdf = float(ST._cdf(np.array([k]), n, np.array([p]))[0]) * (1 - plant)
        for got, ref in ((sf, binom_sf_ref(k, n, p)), (cdf, binom_cdf_ref(k, n, p))):
            if ref > 0 and abs(mpmath.mpf(got) / ref - 1) > 2e-15:
                bad.append((k, n, p, float(mpmath.mpf(got) / ref - 1)))
    return bad


TAIL_CASES = [(5, 20, 0.3), (120, 400, 0.31), (1000, 3000, 0.33)]


def test_binomial_tails_against_40_digits():
    assert _tail_failures(TAIL_CASES) == []


def test_binomial_tails_planted_error_caught():
    assert _tail_failures(TAIL_CASES, plant=3e-15)


# ----------------------------------------------------------------------------- ClipBiasBound: exact-tail branch

V = {"exponential": lambda th, t: th * th / (t - 2), "normal-var": lambda th, t: 2 * th * th / t,
     "normal-mean": lambda th, t: 1.0 / t, "poisson": lambda th, t: th / t,
     "bernoulli": lambda th, t: th * (1 - th) / t}


def _clip_failures(model, th, t, z, plant=0.0):
    """The certified hinges (sa.hinge_upper_bounds) at a = θ - z sd, b = θ + z sd (planted relative error) below
    the 50-digit A = E(a - Y)_+, C = E(Y - b)_+."""
    sd = math.sqrt(V[model](th, t))
    a, b = th - z * sd, th + z * sd
    extra = {"sigma": 1.0} if model == "normal-mean" else None
    A, C = sa.hinge_upper_bounds(model, th, th, np.array([float(t)]), a, b, extra)
    rA, rC = clip_hinge_ref(model, th, t, a, b)
    bad = []
    for got, ref, side in ((float(A[0]), rA, "A"), (float(C[0]), rC, "C")):
        if not mpmath.mpf(got) * (1 - plant) >= ref:
            bad.append((model, th, t, z, side, float(mpmath.mpf(got) / ref - 1)))
    return bad


# the cases of the 2026-12-04 audit (benchmarks/results/2026-12-04-float64-parts-f-clipbias-*.txt) where the earlier
# computation (the first partial moment as a difference of two tails, Cephes binomial tails, a 1e-9 relative margin on
# the hinge) was below the exact value beyond its margin, and moderate ones
CLIP_CASES = [("exponential", 1.0, 10, 1.0), ("exponential", 1.0, 1000, 1.0), ("normal-var", 1.0, 1000, 4.0),
              ("normal-mean", 0.0, 10**6, 4.0), ("poisson", 2.0, 100, 4.0), ("bernoulli", 0.3, 100, 1.0),
              ("bernoulli", 0.99, 10**4, 4.0), ("bernoulli", 0.99, 10**5, 4.0), ("poisson", 9.0, 100, 30.0)]


@pytest.mark.parametrize("case", CLIP_CASES)
def test_clip_hinges_not_below_exact(case):
    assert _clip_failures(*case) == []


def test_clip_hinges_planted_error_caught():
    # without HINGE_SLACK the hinge is within about 1e-13 of the exact one; a planted relative error shows
    # the comparison can fail
    with pytest.MonkeyPatch.context() as mp_:
        mp_.setattr(sa, "HINGE_SLACK", 0.0)
        assert _clip_failures("normal-mean", 0.0, 10**6, 1.0, plant=1e-11)
        assert _clip_failures("bernoulli", 0.99, 10**4, 4.0, plant=1e-11)


# at the largest trusted sizes (HINGE_SCALE_MAX) and beyond
@pytest.mark.parametrize("case", [("bernoulli", 0.3, 10**7, 4.0), ("poisson", 9.0, 3 * 10**5 // 9, 10.0),
                                  ("exponential", 1.0, 3 * 10**5, 10.0), ("normal-var", 1.0, 6 * 10**5, 10.0)])
def test_clip_hinges_not_below_exact_at_the_largest_trusted_size(case):
    assert _clip_failures(*case) == []


@pytest.mark.parametrize("model,th,t", [("bernoulli", 0.3, 2e7), ("poisson", 9.0, 1e5), ("exponential", 1.0, 1e6),
                                        ("normal-var", 1.0, 1e6)])
def test_clip_bias_beyond_trusted_size_uses_closed_forms(model, th, t):
    """Past HINGE_SCALE_MAX the hinges are +inf, so the bias bound is min(V/(4m), √V), exactly as computed from V."""
    sd = math.sqrt(V[model](th, t))
    a, b = th - 4 * sd, th + 4 * sd
    A, C = sa.hinge_upper_bounds(model, th, th, np.array([t]), a, b)
    assert np.isinf(A[0]) and np.isinf(C[0])
    B = sa.certified_bias_bound(model, th, np.array([t]), a, b)
    var = V[model](th, t)
    assert B[0] == pytest.approx(min(var / (4 * 4 * sd), math.sqrt(var)), rel=1e-12)
    A2, _ = sa.hinge_upper_bounds(model, th, th, np.array([t / 10]), a, b)
    assert np.isfinite(A2[0])


def test_projected_subset_bounds_above_simulated_risk_at_d_10_and_100():
    """Seeded simulations of the estimator the routes bound (benchmarks/float64_parts_f_subset_simulation.py, which
    also runs d = 1000): every simulated risk (mean - 3 standard errors) below the certified bound."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
    from float64_parts_f_subset_simulation import QUICK, run

    rows = run(QUICK, lambda d: 120, lambda s: None, seed=7)
    assert len(rows) == 6
    for d, n, eps, route, loss, v, s, m, se, name in rows:
        assert m - 3 * se <= v, (d, n, eps, route, loss, v, m, se, name)
