"""Float64 parts of the threshold scheme, the PrivUnit ball minimiser, the clipped statistic, subset selection and
PrivUnit at large ε (part D of the float64-parts audit, docs/engineering/certified-floating-point.md, "Threshold
scheme, ball minimiser, clipped statistic, PrivUnit at large ε"), at extreme arguments, against independent
high-precision references (tests/_float64_parts_d_reference.py, written from the formulas: closed forms,
quadratures, incomplete gamma functions and direct binomial sums at 40 to 80 digits):

- ThresholdRisk: the θ̂ = 0 candidate b² is rounded up in float64 and exact at the working precision on the mpmath
  path, as is the closed form (π/2) e^{b²} coth²(ε/2)/m;
- BallMinimiserFactor: the value before its rounding to 10 digits is at least the exact value of every cell that can
  carry the maximum (and within 1e-12 of the largest);
- PrivUnit: finite, on the safe side, at large ε and d (E W² in logs where the cap probability underflows);
- ClipStatRisk_exponential at the working precision; ClipBiasBound_exponential's mpmath path at or above its exact
  value; SubsetL1MAD and the projected subset-selection bounds above exact risks, by margins far above rounding;
- in each case a planted error of 1e-15 to 3e-15 relative on the unsafe side is caught.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import boundcalc.mechanisms.clipped_statistic as CS
import boundcalc.mechanisms.local_scalar as LS
import boundcalc.mechanisms.privunit as PU
import boundcalc.mechanisms.sgd as SG
import boundcalc.mechanisms.sparse_binary  # noqa: F401 - registers PrivUnitInnerMoment
from boundcalc.core import symbolic as S

from _float64_parts_c_reference import privunit_ref
from _float64_parts_d_reference import (clip_stat_exponential_ref, majorant_alpha_ref, threshold_cell_ref,
                                        threshold_closed_ref, threshold_zero_ref)

# ------------------------------------------------------------------------------------------- ThresholdRisk

# (m, ε, b): θ̂ = 0 wins (tiny ε, large b, m = 0), with b = 0.7 and 1.1 (floats whose b*b is below b²); the closed
# form wins (m above the exact-table range)
TR_CASES = [(0, 1.0, 0.7), (1, 1e-9, 0.7), (5, 1e-9, 1.1), (10, 1e-6, 1 / 3), (3, 1e-8, 0.1), (1, 1e-3, 1e6),
            (10**6, 1.0, 1.0), (10**6, 1e-3, 0.1), (10**9, 50.0, 2 / 3), (10**15, 1e-9, 3.0), (10**12, 5.0, 3.0),
            (30000, 1e-6, 1.1)]


def _threshold_failures(m, eps, b, plant=0.0):
    """The ThresholdRisk values at (m, ε, b) off their reference: the certified value (the larger of the float64
    value and the 40-digit one rounded up) below it, the float64 b² below it, the float64 value beyond 1e-6 of it,
    the 40-digit value beyond 1e-30 (``plant`` perturbs both relatively)."""
    v, lam, used, _ = LS.threshold_scheme(m, eps, b)
    v *= 1 + plant
    with mpmath.workdps(40):
        hp = LS.ThresholdRisk._imp_(mpmath.mpf(m), mpmath.mpf(eps), mpmath.mpf(b)) * (1 + mpmath.mpf(plant))
    if lam == 0.0 and used == 0 or v == float(threshold_zero_ref(b)) or v == math.nextafter(float(threshold_zero_ref(b)), 1e308):
        ref, kind = threshold_zero_ref(b), "zero"
    elif lam == 1.0 and used == m:
        ref, kind = threshold_closed_ref(m, eps, b), "closed"
    else:
        return [("table", v)]  # not a case of this test
    bad = []
    with mpmath.workdps(80):
        # the certified value: the float64 value or the 40-digit one rounded up, the larger (boundcalc.core.certify)
        cert = max(v, float(hp) if mpmath.mpf(float(hp)) >= hp else math.nextafter(float(hp), math.inf))
        if mpmath.mpf(cert) < ref:
            bad.append((kind, "certified below", float(mpmath.mpf(cert) / ref - 1)))
        if kind == "zero" and mpmath.mpf(v) < ref:  # b² is rounded up in float64 already
            bad.append((kind, "float64 below", float(mpmath.mpf(v) / ref - 1)))
        if abs(mpmath.mpf(v) / ref - 1) > 1e-6:
            bad.append((kind, "float64 off", float(mpmath.mpf(v) / ref - 1)))
        if abs(hp / ref - 1) > mpmath.mpf(10) ** -30:
            bad.append((kind, "mp off", float(hp / ref - 1)))
    return bad


@pytest.mark.parametrize("m,eps,b", TR_CASES)
def test_threshold_risk_candidates(m, eps, b):
    assert _threshold_failures(m, eps, b) == []


def test_threshold_zero_candidate_rounds_up():
    # an independent check of the rounding: b*b is below the exact square of these floats
    for b in (0.7, 1.1):
        assert Fraction(b * b) < Fraction(b) ** 2
        assert Fraction(LS.square_up(b)) >= Fraction(b) ** 2
        assert LS.square_up(b) == math.nextafter(b * b, math.inf)
    assert LS.square_up(0.5) == 0.25 and LS.square_up(3.0) == 9.0  # exact squares stay


def test_threshold_planted_error_caught():
    assert _threshold_failures(1, 1e-9, 0.7, plant=-1e-15)
    assert _threshold_failures(10**6, 1.0, 1.0, plant=-1e-15)


def test_threshold_risk_certified_closed_form_not_below_formula():
    """The gaussian threshold-rr upper bound at n = 10⁶ (the closed form wins) is certified at or above its formula
    σ² (π/2) e^{B²/σ²} coth²(ε/2)/n (its float64 value was 3e-16 below it)."""
    import boundcalc as bc

    r = bc.rate("gaussian", privacy="local", n=10**6, eps=1.0)
    ups = [b for b in r.uppers if b.name == "threshold-rr" and b.certified]
    assert ups
    # the problem's B/σ as the bound's parameters hold it
    b = ups[0]
    B, sigma = float(r.params["B"]), float(r.params["sigma"])
    ref = mpmath.mpf(sigma) ** 2 * threshold_closed_ref(10**6, 1.0, B / sigma)
    with mpmath.workdps(80):
        assert mpmath.mpf(b.value) >= ref


# ------------------------------------------------------------------------------------------- BallMinimiserFactor

def _bm_args(d, eps, n):
    sm = PU.privunit_factor_value(d, eps)
    wmax, wmin = PU.axis_moment_value(d, eps, "max") * sm, PU.axis_moment_value(d, eps, "min") * sm
    return (math.sqrt(sm / n), math.sqrt(wmax / n), (math.sqrt(sm) + 1) / n, wmin / n, 1 / n,
            math.sqrt(wmax / sm), wmin / sm)


BM_CASES = [(2, 50.0, 10), (2, 50.0, 10**15), (1000, 1e-3, 10**15), (100000, 50.0, 10**15), (3, 5.0, 10**6)]


def _bm_pre_round(args, plant=0.0, margins=True, monkeypatch=None):
    """The ball minimiser's value before its rounding to 10 digits (``plant``: perturbed relatively there;
    ``margins`` False: the error bounds left out)."""
    monkeypatch.setattr(SG, "_round_up", lambda x, digits=10: x * (1 + plant))
    monkeypatch.setattr(SG, "_MIN_CACHE", {})
    if not margins:
        monkeypatch.setattr(SG, "_tail_cells_err", lambda v, h, e: 0 * v)
        monkeypatch.setattr(SG, "_majorant_alpha_err", lambda *a: 0 * a[0])
    s, sig, beta, low, inv_n, sig_r, low_r = args
    return SG.ball_minimiser_factor_value(s, sig, beta, low, inv_n, sig_r=sig_r, low_r=low_r)


def _bm_exact_top(args, top=6, h=0.002, h_major=0.05):
    """The exact values (80 digits, tests/_float64_parts_d_reference.py) of the cells of the ball minimiser's
    scheme that can carry its maximum: the ``top`` threshold cells of largest float64 value outside the majorant
    range and the 2 majorant cells of largest float64 value (each with its threshold bound and the fine cells
    meeting it). The cells, t grid and majorant parameters are the scheme's free parameters (any give a valid
    bound), taken from the module; the float64 values only choose which cells to evaluate."""
    s, sig, beta, low, inv_n, sig_r, low_r = args
    r0 = min(1e-4 * min(s, sig) if min(s, sig) > 0 else 1e-12, 1e-4)
    edges = np.exp(np.arange(math.log(r0), h, math.log1p(h)))
    edges = np.append(edges[edges < 1.0], 1.0)
    lo, hi = edges[:-1], edges[1:]
    s2 = s * s - np.maximum(0.0, low - hi ** 2 * inv_n)
    val = SG._tail_cells(lo[:, None], hi[:, None], s2[:, None], sig * sig, beta)[:, 0]
    tg = [float(t) for t in SG._T_GRID]
    a_, b_ = SG.MAJ_LO * s, min(1.0, SG.MAJ_HI * s)
    use_major = sig > 0 and s > 0 and a_ < b_
    inside = (lo >= a_) & (hi <= b_) if use_major else np.zeros(lo.size, bool)
    out = [mpmath.mpf(2) * mpmath.mpf(float(edges[0]))]
    cand = np.where(~inside)[0]
    for j in cand[np.argsort(-val[cand])][:top]:
        out.append(threshold_cell_ref(lo[j], hi[j], s, sig, beta, low, inv_n, tg))
    if use_major:
        c, kk, bb, gg, al = SG.majorant_table(sig_r, low_r, h_major)
        keep = np.where(c[:-1] * s < b_)[0]
        ml = c[:-1][keep] * s
        mh = np.minimum(c[1:][keep] * s, b_)
        s2h = s * s - np.maximum(0.0, low - mh ** 2 * inv_n)
        mv = mh * np.minimum(2.0, al[keep] + gg[keep] * sig * sig / (s * s) + kk[keep] * s2h / (s * s))
        for i in np.argsort(-mv)[:2]:
            ci = keep[i]
            xc = 1.0 / math.sqrt(2 * kk[ci])
            with mpmath.workdps(80):
                alpha = majorant_alpha_ref(c[ci], kk[ci], bb[ci], gg[ci], np.linspace(0.0, xc, 501))
                S2 = mpmath.mpf(s) ** 2 - max(mpmath.mpf(0), mpmath.mpf(low) - mpmath.mpf(mh[i]) ** 2 * mpmath.mpf(inv_n))
                mve = mpmath.mpf(mh[i]) * min(mpmath.mpf(2), alpha + mpmath.mpf(gg[ci]) * mpmath.mpf(sig) ** 2 /
                                              mpmath.mpf(s) ** 2 + mpmath.mpf(kk[ci]) * S2 / mpmath.mpf(s) ** 2)
            tce = threshold_cell_ref(ml[i], mh[i], s, sig, beta, low, inv_n, tg)
            # the fine cells meeting it: the two of largest float64 value (a maximum over fewer cells is smaller, so
            # the check stays valid; the largest float64 cell is the largest exact one up to rounding)
            meet = np.where((lo < mh[i]) & (hi > ml[i]))[0]
            meet = meet[np.argsort(-val[meet])][:2]
            fine = max(threshold_cell_ref(lo[j], hi[j], s, sig, beta, low, inv_n, tg) for j in meet) \
                if meet.size else mpmath.inf
            out.append(min(mve, tce, fine))
    with mpmath.workdps(80):
        return min(mpmath.mpf(2), max(out))


def _bm_failures(d, eps, n, monkeypatch, plant=0.0, margins=True):
    args = _bm_args(d, eps, n)
    exact = _bm_exact_top(args)
    v = _bm_pre_round(args, plant=plant, margins=margins, monkeypatch=monkeypatch)
    bad = []
    with mpmath.workdps(80):
        if mpmath.mpf(v) < exact:
            bad.append(("below", float(mpmath.mpf(v) / exact - 1)))
        if mpmath.mpf(v) > exact * (1 + mpmath.mpf(1e-12)):
            bad.append(("loose", float(mpmath.mpf(v) / exact - 1)))
    return bad


@pytest.mark.parametrize("d,eps,n", BM_CASES)
def test_ball_minimiser_not_below_its_cells(d, eps, n, monkeypatch):
    assert _bm_failures(d, eps, n, monkeypatch) == []


def test_ball_minimiser_planted_error_caught(monkeypatch):
    # without the error bounds the float64 value is about 1e-15 above the exact largest cell (a few units in the
    # last place); a relative -3e-15 on it puts it below, and the check says so
    assert _bm_failures(2, 50.0, 10**15, monkeypatch, plant=-3e-15, margins=False)
    monkeypatch.undo()
    assert not _bm_failures(2, 50.0, 10**15, monkeypatch, plant=-3e-15)  # the error bounds (1e-14) absorb it


def test_ball_minimiser_mpmath_rounds_arguments_safe_side():
    args = _bm_args(2, 50.0, 1000)
    with mpmath.workdps(40):
        # an argument a little above its float64 value: the mpmath path rounds s, σ, β, 1/n up and low down
        mp_args = [mpmath.mpf(a) * (1 + mpmath.mpf(10) ** -30) for a in args]
        v = S.MPMATH_IMPL["BallMinimiserFactor"](*mp_args)
    assert v >= SG._bmf_scalar(*args)


# ------------------------------------------------------------------------------------------- PrivUnit at large ε

# where the float64 cap probability C underflows to 0: d = 10⁵ at ε >= 750, d = 1000 at ε = 800 (γ stays below 1)
PU_LARGE = [(2, 50.0), (2, 1e4), (3, 800.0), (1000, 800.0), (100000, 800.0)]


@functools.lru_cache(maxsize=None)
def _privunit_ref(d, eps, g):
    return privunit_ref(d, eps, g)


def _privunit_large_failures(d, eps, plant=0.0):
    _, g, p, C = PU.privunit_parameters(d, eps)
    bad = [] if 0 <= g < 1 and 0 < p <= 1 else [("gamma", g, p, C)]
    m, ew2 = _privunit_ref(d, eps, g)
    f64 = {"factor": PU.privunit_factor_value(d, eps), "inner": PU.sq_inner_moment(d, eps) * (1 + plant)}
    with mpmath.workdps(40):
        mp = {"factor": S.MPMATH_IMPL["PrivUnitFactor"](mpmath.mpf(d), mpmath.mpf(eps)),
              "inner": S.MPMATH_IMPL["PrivUnitInnerMoment"](mpmath.mpf(d), mpmath.mpf(eps)) * (1 + mpmath.mpf(plant))}
    with mpmath.workdps(80):
        refs = {"factor": 1 / m ** 2, "inner": ew2}
        for k, ref in refs.items():
            if not mpmath.isfinite(ref):  # a reference that failed must not pass the comparisons below
                bad.append((k, "reference", ref))
                continue
            if not math.isfinite(f64[k]) or abs(mpmath.mpf(f64[k]) / ref - 1) > 1e-6:
                bad.append((k, "float64", f64[k]))
            if not mpmath.isfinite(mp[k]) or abs(mp[k] / ref - 1) > mpmath.mpf(10) ** -25:
                bad.append((k, "mp", float(mp[k] / ref - 1)))
    return bad


@pytest.mark.parametrize("d,eps", PU_LARGE)
def test_privunit_large_eps_finite(d, eps):
    assert _privunit_large_failures(d, eps) == []


def test_privunit_large_eps_planted_error_caught():
    assert _privunit_large_failures(100000, 800.0, plant=-1e-15)


# ------------------------------------------------------------------------------------------- ClipStatRisk_exponential

# (n, ε, θ_lo, θ_hi, α, β): extreme n and ε, a narrow clipping width β (s_N cancels in float64), wide and narrow N,
# N reaching θ = 0 (only Popoviciu's R²/4)
CS_CASES = [(1000, 1e-3, 1.0, 2.0, -1.0, 3.0), (10**12, 50.0, 1.0, 2.0, -1.0, 3.0), (10, 1e-8, 0.5, 0.6, 0.0, 1.0),
            (10**15, 1.0, 1e-3, 1e3, -0.9, 0.01), (1000, 5.0, 2.0, 2.001, 0.5, 0.001), (10, 1.0, 0.0, 2.0, -0.5, 0.07)]


def _clip_stat_failures(n, eps, lo, hi, alpha, beta, plant=0.0):

    l, u = CS.interval("exponential", 0.5 * (lo + hi), alpha, beta)
    ref = clip_stat_exponential_ref(n, eps, lo, hi, float(l), float(u), np.linspace(lo, hi, CS.GRID))
    f64 = float(CS.certified_risk("exponential", n, eps, lo, hi, alpha, beta))
    fn = CS.risk_function("exponential")._imp_
    with mpmath.workdps(40):
        hp = fn(*(mpmath.mpf(x) for x in (n, eps, lo, hi, 1.0, alpha, beta))) * (1 + mpmath.mpf(plant))
    bad = []
    with mpmath.workdps(80):
        cert = max(f64, float(hp) if mpmath.mpf(float(hp)) >= hp else math.nextafter(float(hp), math.inf))
        if mpmath.mpf(cert) < ref:
            bad.append(("certified below", float(mpmath.mpf(cert) / ref - 1)))
        if abs(mpmath.mpf(f64) / ref - 1) > 1e-6:
            bad.append(("float64 off", float(mpmath.mpf(f64) / ref - 1)))
        if abs(hp / ref - 1) > mpmath.mpf(10) ** -25:
            bad.append(("mp off", float(hp / ref - 1)))
    return bad


@pytest.mark.parametrize("case", CS_CASES)
def test_clip_stat_exponential_working_precision(case):
    assert "ClipStatRisk_exponential" in S.HIGH_PRECISION
    assert _clip_stat_failures(*case) == []


def test_clip_stat_exponential_planted_error_caught():
    assert _clip_stat_failures(*CS_CASES[0], plant=-1e-15)


# ------------------------------------------------------------------------------------------- SubsetL1MAD

# (n, ε, d) where the bound is below its cap 2
SL1_CASES = [(2000, 50.0, 1000), (500, 1.0, 2), (1000, 5.0, 10), (2000, 0.5, 3)]


def _subset_l1_failures(n, eps, d, plant=0.0):
    """SubsetL1MAD (a certified sup over the simplex) below the exact risk at the uniform θ or at a vertex
    (``plant``: the bound scaled so that it sits that far, relatively, from the larger of the two)."""
    import boundcalc.mechanisms.discrete as DM
    import boundcalc.mechanisms.subset_tail as ST
    from _float64_parts_d_reference import subset_l1_risk_ref

    v, s = DM.subset_l1_mad(n, eps, d)
    _, qf, Df = ST.subset_constants(eps, d, s)
    refs = [subset_l1_risk_ref(n, eps, d, s, qf, Df, [1.0 / d] * d),
            subset_l1_risk_ref(n, eps, d, s, qf, Df, [1.0] + [0.0] * (d - 1))]
    with mpmath.workdps(50):
        top = max(refs)
        if plant:
            v = float(top * (1 + mpmath.mpf(plant)))
        with mpmath.workdps(40):
            hp = S.MPMATH_IMPL["SubsetL1MAD"](mpmath.mpf(n), mpmath.mpf(eps), mpmath.mpf(d)) if not plant else v
        return [(name, float(mpmath.mpf(x) / top - 1)) for name, x in (("float64", v), ("mp", hp))
                if mpmath.mpf(x) < top]


@pytest.mark.parametrize("case", SL1_CASES)
def test_subset_l1_mad_above_exact_risks(case):
    assert _subset_l1_failures(*case) == []


def test_subset_l1_mad_planted_error_caught():
    assert _subset_l1_failures(*SL1_CASES[1], plant=-1e-15)


# ------------------------------------------------------------------------------------------- ClipBiasBound

# (n, blocks, θ_lo, θ_hi, a, b): clipping far and close, t from 3 to 10⁴, a bias below the float range
CB_CASES = [(1000, 10, 1.0, 2.0, 0.5, 4.0), (1000, 10, 1.0, 2.0, 0.9, 2.1), (30, 10, 1.0, 1.5, 0.1, 10.0),
            (10**6, 100, 0.999, 1.001, 0.99, 1.01), (10**5, 7, 1.0, 3.0, 1e-3, 1e3)]


def _clip_bias_failures(n, k, lo, hi, a, b, plant=0.0):
    import boundcalc.mechanisms.subsample_aggregate as SA
    from _float64_parts_d_reference import clip_bias_exponential_ref

    ref = clip_bias_exponential_ref(n, k, lo, hi, a, b)
    cls = SA.block_functions("exponential")[0]
    f64 = float(np.asarray(cls._imp_(n, k, lo, hi, a, b, 1.0)).reshape(-1)[0])
    with mpmath.workdps(40):
        hp = cls._imp_(*(mpmath.mpf(x) for x in (n, k, lo, hi, a, b, 1.0))) * (1 + mpmath.mpf(plant))
    bad = []
    with mpmath.workdps(50):
        if hp < ref:
            bad.append(("mp below", float(hp / ref - 1)))
        if ref > mpmath.mpf(10) ** -290 and abs(mpmath.mpf(f64) / ref - 1) > 1e-6:  # (below: the 1e-300 floor)
            bad.append(("float64 off", float(mpmath.mpf(f64) / ref - 1)))
    return bad


@pytest.mark.parametrize("case", CB_CASES)
def test_clip_bias_exponential_mp_path_not_below(case):
    assert _clip_bias_failures(*case) == []


def test_clip_bias_planted_error_caught(monkeypatch):
    """The exact-tail branch wins in every case (A <= V/(4m) and A <= √V hold exactly); computed as T1 - T2 (one
    probability each, no difference of two tails) it is within about 1e-13 of the exact value here, so without its
    margin (HINGE_SLACK) a planted relative -1e-11 makes the check fail."""
    import boundcalc.mechanisms.subsample_aggregate as SA

    monkeypatch.setattr(SA, "HINGE_SLACK", 0.0)
    assert _clip_bias_failures(*CB_CASES[3], plant=-1e-11)


# ------------------------------------------------------------------------------------------- SubsetProjected* at d = 2

SP_CASES = [(300, 0.5), (1000, 0.1)]
SP_ROUTES = [("max", "l2sq", "SubsetProjectedMax"), ("threshold", "l2sq", "SubsetProjectedThreshold"),
             ("threshold", "l1", "SubsetProjectedThresholdL1")]


@functools.lru_cache(maxsize=None)
def _sp_ref(n, eps, loss):
    import boundcalc.mechanisms.subset_tail as ST
    from _float64_parts_d_reference import subset_projected_d2_ref

    _, q, D = ST.subset_constants(eps, 2, 1)
    return subset_projected_d2_ref(n, eps, q, D, loss, np.linspace(0.0, 1.0, 11))


def _subset_projected_failures(n, eps, plant=0.0):
    """The three projected subset-selection bounds at d = 2 (float64 and mpmath paths) below the largest exact risk
    over a grid of θ (``plant``: the bound set that far, relatively, from that risk)."""
    import boundcalc.mechanisms.subset_tail  # noqa: F401 - registers the functions

    bad = []
    for route, loss, name in SP_ROUTES:
        ref = _sp_ref(n, eps, loss)
        f64 = float(S.NUMPY_IMPL[name](n, eps, 2)) if not plant else float(ref * (1 + mpmath.mpf(plant)))
        with mpmath.workdps(40):
            hp = S.MPMATH_IMPL[name](mpmath.mpf(n), mpmath.mpf(eps), mpmath.mpf(2)) if not plant else f64
        for label, v in (("float64", f64), ("mp", hp)):
            if not mpmath.mpf(v) >= ref:
                bad.append((name, label, float(mpmath.mpf(v) / ref - 1)))
    return bad


@pytest.mark.parametrize("n,eps", SP_CASES)
def test_subset_projected_d2_above_exact_risk(n, eps):
    assert _subset_projected_failures(n, eps) == []


def test_subset_projected_planted_error_caught():
    assert _subset_projected_failures(*SP_CASES[0], plant=-1e-15)
