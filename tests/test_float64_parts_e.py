"""Float64 parts of the Ziv–Zakai pair bound, the block OUE risk, the threshold tables and the clipped statistic
(part E of the float64-parts audit,
docs/engineering/certified-floating-point.md, "part E"), at extreme arguments, against independent high-precision
references (tests/_float64_parts_e_reference.py, written from the formulas: direct sums, closed forms, at 30 to 80
digits):

- ZivZakaiPairsL1: the float64 lower sum within its proven rounding bound of the exact lower sum on the same cells,
  and the certified value (widened by 1e-9) at or below it; 1 - φ - h by a compensated subtraction (the plain
  float64 form put H² 7.9e-9 below its value at the φ-domain's end when A = 1);
- BlockOUERisk: the binomial moments by a proven float64 pmf walk (an enclosure of the exact moments, checked
  against direct 40-digit sums at N up to 10⁵ and π from 1e-22 to 1 - 1e-9), the float64 bound (scipy's incomplete
  beta with a measured error model) at or above the bound recomputed from the enclosure;
- ThresholdRisk's exact tables (up to 20,000 reports): at or above the exact sup over θ of the scheme's risk (40-digit
  direct binomial sums on a grid refined by a golden-section search), with the tables widened by (64 + 32√m)u:
  without it the table was 3.3e-16 below the exact risk where its maximum sits at θ = b with p(θ) flat;
- ClipStatRisk_<model> for the normal-mean, normal-var, poisson and bernoulli models at the working precision
  (quadratures of the densities, direct pmf sums and the score identity in the reference); in float64 the slope
  (a difference of two cdfs) cancels for a narrow clipping interval, and the value was up to 8.9e-10 below it;
- in each case a planted error of 1e-15 to 3e-15 relative on the unsafe side is caught.
"""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from boundcalc.core import symbolic as S
from boundcalc.methods import ziv_zakai as ZZ
from boundcalc.methods.hellinger_contraction import hellinger_factor_float

from _float64_parts_e_reference import (clip_stat_ref, clipped_moments_ref, threshold_sup_ref, zz_cells,
                                        zz_g_sensitivity_ref, zz_lower_sum_ref)

U = 2.0 ** -53

# ------------------------------------------------------------------------------------------- ZivZakaiPairsL1

# (n, ε, m): n from 1 to 10¹⁵, ε from 1e-8 to ∞ (no privacy: κ = H²), m = 1 to 5·10⁴ (d = 10⁵); the privacy branch
# (2h_ε <= m: φ-integral exact) and the φ-cell branch, the tuned A equal to 1 there ((10, 2, 2), (10, 50, 5·10⁴): the
# φ-domain's end is φ = 1 - h)
ZZ_CASES = [(1, 1e-8, 1), (10**15, 1e-8, 1), (10**15, 1.0, 50000), (10**6, 1.0, 2), (10**15, 50.0, 50000),
            (10, 50.0, 1), (1000, 5.0, 1), (1, math.inf, 1), (10**12, math.inf, 50000), (10, 2.0, 2),
            (10, 50.0, 50000), (10**15, 20.0, 3)]
#: the φ-cell branch is checked on coarser cells than the shipped FINE ones (the same code; the reference is a direct
#: mpmath sum over every cell)
ZZ_TEST_CELLS = (240, 12)


def _zz_cells_for(n, eps, m):
    return ZZ.FINE if 2 * hellinger_factor_float(eps) <= m else ZZ_TEST_CELLS


def _zz_failures(n, eps, m, plant=0.0):
    """The Ziv–Zakai lower sum at (n, ε, m) against the exact lower sum on its cells: the float64 sum beyond its
    proven rounding bound, the certified value (``plant``: perturbed relatively) above the exact sum."""
    cells = _zz_cells_for(n, eps, m)
    A = ZZ.best_amplitude(n, eps, m)  # a free parameter (any A in (0, 1] gives a valid bound)
    H = ZZ._h_cut(n, hellinger_factor_float(eps), m, A)  # a free parameter too (any H <= 2A)
    ref = zz_lower_sum_ref(n, eps, m, A, H, cells)
    raw = ZZ.lower_sum(n, eps, m, A, cells)
    err = ZZ.rounding_error_bound(raw, n, eps, m, A, cells)
    cert = ZZ.certified_sum(n, eps, m, A, cells) * (1 + plant)
    bad = []
    with mpmath.workdps(50):
        if mpmath.mpf(raw) - ref > err:  # the proven side (below the exact sum is safe)
            bad.append(("above beyond its bound", float(mpmath.mpf(raw) / ref - 1), err / raw))
        if abs(mpmath.mpf(raw) / ref - 1) > 1e-12:
            bad.append(("float64 off", float(mpmath.mpf(raw) / ref - 1)))
        if mpmath.mpf(cert) > ref:
            bad.append(("certified above", float(mpmath.mpf(cert) / ref - 1)))
        if err > ZZ.WIDEN * raw / 2:  # the margin covers the bound (then the widened value is reported)
            bad.append(("bound not covered", err / raw))
    return bad


@pytest.mark.parametrize("n,eps,m", ZZ_CASES)
def test_ziv_zakai_lower_sum_against_exact(n, eps, m):
    assert _zz_failures(n, eps, m) == []


def test_ziv_zakai_planted_error_caught(monkeypatch):
    # without the 1e-9 widening the float64 sum is within 2.3e-16 of the exact one here; +3e-15 puts it above
    monkeypatch.setattr(ZZ, "WIDEN", 0.0)
    monkeypatch.setattr(ZZ, "rounding_error_bound", lambda *a, **k: 0.0)
    assert _zz_failures(10, 50.0, 50000, plant=3e-15)
    assert _zz_failures(10**15, 1.0, 50000, plant=3e-15)


def test_ziv_zakai_shipped_value_below_exact_fine_sum():
    """zz_pair_l1 itself (the fine cells) at or below the exact fine lower sum, privacy branch (2400 terms)."""
    n, eps, m = 10**15, 1.0, 50000
    A = ZZ.best_amplitude(n, eps, m)
    ref = zz_lower_sum_ref(n, eps, m, A, ZZ._h_cut(n, hellinger_factor_float(eps), m, A), ZZ.FINE)
    assert mpmath.mpf(ZZ.zz_pair_l1(n, eps, m)) <= ref


def _h2_below(m, A, h1, ends, form):
    """The largest relative amount by which pair_h2 at the cell ends (``form``: the 1 - φ - h used) falls below the
    exact H² at the same points (an end beyond A - h₁ taken at A - h₁, where the cell stops)."""
    worst = 0.0
    orig = ZZ.one_minus_sum
    try:
        ZZ.one_minus_sum = form
        d2 = ZZ.pair_h2(ends, h1[:, None], m)
    finally:
        ZZ.one_minus_sum = orig
    with mpmath.workdps(40):
        for i in range(len(h1)):
            for k in (0, ends.shape[1] - 2, ends.shape[1] - 1):
                h = mpmath.mpf(float(h1[i]))
                q = min(mpmath.mpf(float(ends[i, k])), mpmath.mpf(A) - h)
                ex = (2 - mpmath.sqrt((1 + q) * (1 + q + h)) - mpmath.sqrt(max(0, (1 - q) * (1 - q - h)))) / (2 * m)
                worst = min(worst, float(mpmath.mpf(float(d2[i, k])) / ex - 1))
    return -worst


def test_ziv_zakai_h2_at_domain_end():
    """At A = 1 the last φ-end is 1 - h₁ up to rounding; the float64 1 - φ - h (1 - φ rounded for φ < ½) put H² up
    to 7.9e-9 below its value there. The compensated form keeps it within 12u (the rounding bound's budget)."""
    h1, ends = zz_cells(1.0, 2.0, ZZ.FINE)
    h1, ends = h1[::25], ends[::25]
    assert _h2_below(2, 1.0, h1, ends, ZZ.one_minus_sum) <= 12 * U
    assert _h2_below(2, 1.0, h1, ends, lambda p, h: (1 - p) - h) > 1e-9  # the old form: caught


def test_ziv_zakai_one_minus_sum_exact_cases():
    rng = np.random.default_rng(7)
    hs = np.concatenate([rng.uniform(0.5, 2.0, 300), rng.uniform(0.0, 0.5, 100), [0.5, 1.0, 1.5, 1e-9]])
    for h in hs:
        base = 1.0 - h
        for phi in {math.nextafter(base, -2.0), base, math.nextafter(base, 2.0), base - 1e-12, rng.uniform(-1, 1)}:
            if not -1.0 <= phi <= 1.0:
                continue
            ex = 1 - Fraction(phi) - Fraction(h)
            v = Fraction(float(ZZ.one_minus_sum(np.float64(phi), np.float64(h))))
            assert v <= Fraction((1.0 - phi) - h)  # never above the old form: the bound never rises
            if ex > 0:  # never above the exact value by more than 2.1u (below: H² larger, the safe side)
                assert v - ex <= Fraction(2.1 * U) * ex, (phi, h)
            t = 1.0 - phi  # the compensated term alone is within 2.1u either way
            c = Fraction((t - h) + ((1.0 - t) - phi))
            if ex > 0 and c > 0:
                assert abs(c - ex) <= Fraction(2.1 * U) * ex, (phi, h)


def test_ziv_zakai_g_sensitivity():
    """|G'(κ)| κ <= 0.44 (used by the rounding bound: a relative change of κ moves G by at most 0.44 times it)."""
    ks = np.logspace(-20, 0, 400)[:-1]
    for n in (1, 1.5, 2, 10, 1e4, 1e15):
        ks_n = np.unique(np.concatenate([ks, np.logspace(-3, 1, 100) / n]))
        ks_n = ks_n[ks_n < 1]
        assert zz_g_sensitivity_ref(n, ks_n) <= 0.44


# ------------------------------------------------------------------------------------------- BlockOUERisk

import boundcalc.mechanisms.block_oue as BO  # noqa: E402

# (N, π, α, β): N from 1 to 10⁵ (MAX_GROUPS), π at the mechanism's extremes (p0 = 1/(e^50 + 1) ≈ 1.9e-22, RR's
# p1 near 1, ½), the unclipped window [a, b] inside, at and beyond the binomial's bulk
BO_CASES = [(1, 0.3, 1.0, 0.0), (7, 1e-22, 3.0 / 7, -0.7), (60, 0.93, 5.0 / 60, -4.2), (3000, 0.2, 2.5e-3, -0.9),
            (14285, 1.9287e-22, 1.2 / (14285 * 0.5), -2e-12), (50000, 1 - 1e-9, 2.0 / 50000, -0.99),
            (10**5, 0.5, 3e-5, -1.2), (10**5, 0.01, 2.4e-3, -2.37)]


def _bo_failures(N, pi, alpha, beta, plant=0.0):
    """The proven enclosure at (N, π) against the direct sums: E g below its lower end or E g² above its upper end
    (``plant``: both ends moved that far, relatively, towards the unsafe side), or the enclosure wider than 1e-10."""
    lo, hi = BO.proven_moments(N, np.array([pi]), alpha, beta)
    lo, hi = float(lo[0]) * (1 + plant), float(hi[0]) * (1 - plant)
    e1, e2 = clipped_moments_ref(N, pi, alpha, beta)
    bad = []
    tol = mpmath.mpf(10) ** -30  # the 40-digit sums' own rounding (E g² = 1 - 1e-40 can come out as 1 + 1e-40)
    with mpmath.workdps(40):
        if mpmath.mpf(lo) > e1 + tol:
            bad.append(("E g below the lower end", float(mpmath.mpf(lo) - e1)))
        if mpmath.mpf(hi) < e2 - tol:
            bad.append(("E g² above the upper end", float(e2 - mpmath.mpf(hi))))
        if e1 - mpmath.mpf(lo) > 1e-10 or mpmath.mpf(hi) - e2 > 1e-10:
            bad.append(("wide", float(e1 - mpmath.mpf(lo)), float(mpmath.mpf(hi) - e2)))
    return bad


@pytest.mark.parametrize("case", BO_CASES)
def test_block_oue_proven_moments_enclose_exact(case):
    assert _bo_failures(*case) == []


def test_block_oue_planted_error_caught(monkeypatch):
    # without the error bounds (γ's, dg) the walk's values are within a few ulp of the exact moments; moved 3e-15
    # relatively to the unsafe side they are outside
    monkeypatch.setattr(BO, "_gamma", lambda k: 0.0)
    monkeypatch.setattr(BO, "_U", 0.0)
    assert _bo_failures(3000, 0.2, 2.5e-3, -0.9, plant=3e-15)
    assert _bo_failures(60, 0.93, 5.0 / 60, -4.2, plant=3e-15)


# (n, ε, d, s): OUE blocks and randomized response (m = d), ε from 0.1 to 50, N up to 5·10⁴ groups
BO_RISK_CASES = [(1000, 50.0, 10, 1.0), (10**5, 40.0, 2, 1.0), (10**5, 0.1, 10, 1.0)]


@pytest.mark.parametrize("n,eps,d,s", BO_RISK_CASES)
def test_block_oue_float64_bound_at_or_above_proven(n, eps, d, s):
    """The shipped value (tuned, prove=True) is the float64 bound, at or above the bound built from the proven
    enclosure (the proof did not have to raise it: scipy's error model holds there), by 6e-9 to 1.5e-4."""
    v, m, c, tau = BO.tuned(n, eps, d, s)
    f = BO.risk_upper(n, eps, d, s, m, c, tau)
    N = n // m
    p0, p1 = BO.probabilities(eps, d, m)
    alpha, beta = c / (N * (p1 - p0)), -c * p0 / (p1 - p0) - tau
    t = BO._grid(s, d, BO.FINE)
    pis = p0 + (p1 - p0) * t
    Eg, Eg2 = BO.clipped_moments(N, pis, alpha, beta)
    e1, e2 = BO.moment_margins(N, pis, alpha, beta)
    _, ks = BO._bound_from_moments(t, np.maximum(Eg - e1, 0.0), Eg2 + e2, s, d, -(-d // m))
    El = BO.proven_moments(N, pis * (1 - 5 * U), alpha, beta)[0]
    Eh = BO.proven_moments(N, np.minimum(pis * (1 + 5 * U), 1.0), alpha, beta)[1]
    proof, _ = BO._bound_from_moments(t, El, Eh, s, d, -(-d // m), kappas=ks)
    assert v == f >= proof
    assert f <= proof * (1 + 2e-4)


# ------------------------------------------------------------------------------------------- ThresholdRisk tables

import boundcalc.mechanisms.local_scalar as LS  # noqa: E402

# (m, ε, b) where a table wins: m from 1 to 185 reports used, ε from 0.03 to 50, b from 0.3 to 10; at b = 10 and
# ε = 0.03 the maximum sits at θ = b where p(θ) is flat (Φ'(10) = 7.7e-23): the cell sum has no slack there
TT_CASES = [(1, 5.0, 1.0), (5, 0.1, 3.0), (30, 50.0, 3.0), (200, 5.0, 1.0), (10, 0.03, 10.0), (3, 0.03, 10.0)]


def _table_failures(m, eps, b, value=None):
    """The scheme's table value at (m, ε, b) (or ``value``, computed by the same scheme) below the exact sup over θ of
    the risk of the chosen (m_used, λ), or the choice not a table (then the case does not test the tables)."""
    v, lam, used, _ = LS.threshold_scheme(m, eps, b)
    if (lam == 0.0 and v == LS.square_up(b)) or (lam == 1.0 and used == m and v == LS.threshold_closed_form(m, eps, b)):
        return [("not a table", v, lam)]
    q = 1.0 / (1.0 + math.exp(-eps))  # the mechanism's keep probability (its float64 parameter)
    g = LS.threshold_estimate(np.arange(used + 1), used, eps, 1.0, b)  # the estimator's own outputs
    ref = threshold_sup_ref(used, q, lam, g, b)
    v = v if value is None else value(used, eps, b)
    with mpmath.workdps(40):
        return [] if mpmath.mpf(v) >= ref else [("below the exact risk", float(mpmath.mpf(v) / ref - 1))]


@pytest.mark.parametrize("case", TT_CASES)
def test_threshold_table_at_or_above_exact_risk(case):
    assert _table_failures(*case) == []


def test_threshold_table_planted_error_caught(monkeypatch):
    """Without the widening the table at (10, 0.03, 10) is 2.2e-16 below the exact risk (its maximum at θ = b has no
    slack); a planted -3e-15 makes sure."""
    monkeypatch.setattr(LS, "table_slack", lambda m: 0.0)

    def unwidened(m, eps, b, plant=-3e-15):
        closed = LS.threshold_closed_form(m, eps, b)
        return LS._threshold_table_full(m, eps, b, closed)[0] * (1 + plant)

    assert _table_failures(10, 0.03, 10.0, value=unwidened)
    assert _table_failures(10, 0.03, 10.0, value=lambda m, e, b: unwidened(m, e, b, 0.0))


def test_threshold_table_search_matches_full_table():
    """The pruned search and the full table give the same widened value, λ and θ*."""
    for m, eps, b in ((185, 5.0, 1.0), (30, 50.0, 3.0), (10, 0.03, 10.0)):
        closed = LS.threshold_closed_form(m, eps, b)
        assert LS._CellSearch(m, eps, b).table(closed) == LS._threshold_table_full(m, eps, b, closed)


# ------------------------------------------------------------------------------------------- ClipStatRisk, other models

import boundcalc.mechanisms.clipped_statistic as CS  # noqa: E402

# (model, n, ε, θ_lo, θ_hi, α, β): extreme n and ε, narrow clipping (the slope cancels in float64), wide N; the
# reference's grid has 8 points here (the same code with grid = 8; the shipped 48 points: the doc's numbers)
CS_OTHER = [("normal-mean", 10**12, 50.0, 0.0, 0.1, -0.5, 1e-3), ("normal-mean", 10**15, 1e-8, -10.0, 10.0, -2.0, 4.0),
            ("normal-var", 10**12, 5.0, 1.0, 1.001, 0.3, 1e-3), ("normal-var", 10, 1e-3, 0.1, 10.0, -1.0, 5.0),
            ("poisson", 10**12, 50.0, 100.0, 101.0, 0.0, 0.01), ("poisson", 1000, 5.0, 300.0, 300.5, 1.0, 2.0),
            ("poisson", 10, 1e-3, 0.5, 30.0, -1.0, 4.0), ("bernoulli", 10**15, 1e-8, 0.6, 0.9, 0.0, 1.0)]
CS_GRID = 8


def _clip_other_failures(model, n, eps, lo, hi, alpha, beta, plant=0.0):
    l, u = CS.interval(model, 0.5 * (lo + hi), alpha, beta)
    ref = clip_stat_ref(model, n, eps, lo, hi, float(l), float(u), np.linspace(lo, hi, CS_GRID), dps=60)
    f64 = float(CS.certified_risk(model, n, eps, lo, hi, alpha, beta, grid=CS_GRID))
    with mpmath.workdps(40):
        hp = CS.certified_risk_mp(model, *(mpmath.mpf(x) for x in (n, eps, lo, hi, alpha, beta)),
                                  grid=CS_GRID) * (1 + mpmath.mpf(plant))
    bad = []
    with mpmath.workdps(60):
        # the certified value: the float64 value or the 40-digit one rounded up, the larger (boundcalc.core.certify)
        cert = max(f64, float(hp) if mpmath.mpf(float(hp)) >= hp else math.nextafter(float(hp), math.inf))
        if mpmath.mpf(cert) < ref:
            bad.append(("certified below", float(mpmath.mpf(cert) / ref - 1)))
        if math.isfinite(f64) and abs(mpmath.mpf(f64) / ref - 1) > 1e-6:
            bad.append(("float64 off", float(mpmath.mpf(f64) / ref - 1)))
        if abs(hp / ref - 1) > mpmath.mpf(10) ** -25:
            bad.append(("mp off", float(hp / ref - 1)))
    return bad


@pytest.mark.parametrize("case", CS_OTHER)
def test_clip_stat_other_models_working_precision(case):
    assert f"ClipStatRisk_{case[0].replace('-', '_')}" in S.HIGH_PRECISION
    assert _clip_other_failures(*case) == []


def test_clip_stat_other_models_planted_error_caught():
    # the float64 value is 8.9e-10 below at this case (normal-var, narrow clipping), so -1e-15 on the 40-digit value
    # leaves the certified one below
    assert _clip_other_failures(*CS_OTHER[2], plant=-1e-15)
    assert _clip_other_failures(*CS_OTHER[4], plant=-1e-15)


def test_clip_stat_mp_dispatch():
    """The sympy function's mpmath implementation is certified_risk_mp for every model."""
    for model in ("normal-mean", "poisson"):
        fn = CS.risk_function(model)._imp_
        with mpmath.workdps(40):
            a = fn(*(mpmath.mpf(x) for x in (1000, 1.0, 1.0, 2.0, 1.0, -1.0, 3.0)))
            b = CS.certified_risk_mp(model, *(mpmath.mpf(x) for x in (1000, 1.0, 1.0, 2.0, -1.0, 3.0)))
        assert a == b
