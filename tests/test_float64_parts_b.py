"""The part-B special functions of the certification's float64 parts (docs/engineering/certified-floating-point.md,
"High precision of the method functions"), at extreme arguments, against independent 80-digit evaluations of their
definitions (tests/_float64_parts_b_reference.py, written from the mathematics, not by calling the package):

- the functions now in HIGH_PRECISION: their mpmath value at 40 digits agrees with the reference to 1e-25 and their
  float64 value to 1e-6 (the certification's agreement tolerance), so the certified value (the float64 value
  rounded outward by the high-precision one) is on the safe side;
- the functions that keep a float64 computation with an error bracket (two-point Bayes affinities, the collision
  envelope, the shared-budget β): their value is on the safe side of the reference and within 1e-6 of it;
- a planted relative perturbation of 1e-5 on the unsafe side is caught.
"""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import boundcalc.mechanisms.sampling as SA
import boundcalc.methods.block_fano as BF
import boundcalc.methods.knorm as KN
import boundcalc.methods.shared_budget_assouad as SB
import boundcalc.methods.threshold_bayes as TB
import boundcalc.methods.two_point_bayes as TP
import boundcalc.problems.gaussian as GA
from boundcalc.core import symbolic as S

from _float64_parts_b_reference import (REFERENCE, SAFE, ref_collision_phi_lower, ref_dp_affinity,
                                        ref_kl_affinity, ref_shared_budget, ref_tv_affinity)


def _mp(fn, *args):
    with mpmath.workdps(40):
        return fn(*[mpmath.mpf(a) for a in args])


# (name, float64 function, mpmath function, argument tuples at extremes)
HP_CASES = [
    ("ThresholdJ0", lambda y: float(TB.j_abs(y)), lambda y: TB.j_mp(0, y),
     [(1e-12,), (1e-6,), (0.5,), (1.999,), (2.0,), (7.3,), (1e4,), (1e15,)]),
    ("ThresholdJ1", lambda y: float(TB.j_sq(y)), lambda y: TB.j_mp(1, y),
     [(1e-12,), (1e-3,), (1.5,), (2.0,), (40.0,), (1e15,)]),
    ("CoupledTestG0", lambda z, n, e: float(TB.binom_g_numeric(z, n, e, 0)), lambda z, n, e: TB.binom_g_mp(z, n, e, 0),
     [(0.3, 10, 0.1), (1.0, 7, 1e-9), (1e-3, 40, 50.0), (0.9, 25, 2.0), (1.0, 1, 1.0)]),
    ("CoupledTestG1", lambda z, n, e: float(TB.binom_g_numeric(z, n, e, 1)), lambda z, n, e: TB.binom_g_mp(z, n, e, 1),
     [(0.3, 10, 0.1), (1.0, 7, 1e-9), (1e-3, 40, 50.0), (0.9, 25, 2.0)]),
    ("GaussLoss", lambda t: float(GA.gauss_loss_np(t)), GA.gauss_loss_mp,
     [(0.0,), (1e-9,), (0.7,), (5.0,), (20.0,), (37.0,)]),
    ("L2SphereConst", lambda d: float(SA.l2_gamma_ratio_np(d)), SA.l2_gamma_ratio_mp,
     [(1,), (2,), (3,), (10,), (1000,), (12345,), (100000,)]),
    ("LinfSamplingC", lambda d, e: float(SA.linf_C_np(d, e)), SA.linf_C_mp,
     [(1, 1.0), (2, 1e-9), (4, 1.0), (11, 50.0), (1000, 0.1), (10000, 1e-9), (9999, 5.0)]),
    ("KNormSecondMoment", KN.second_moment, KN.second_moment_mp, [(2,), (3,), (4,), (17,), (300,)]),
]


def _hp_failures(name, f64, mp, cases):
    """The cases where the 40-digit value is off the reference by more than 1e-25 (CONFIRM_RTOL) or the float64 value
    by more than 1e-6 (AGREEMENT_RTOL)."""
    bad = []
    for args in cases:
        ref = REFERENCE[name](*args)
        hp = _mp(mp, *args)
        with mpmath.workdps(80):
            if not abs(hp - ref) <= abs(ref) * mpmath.mpf(10) ** -25:
                bad.append(("mpmath", args, hp, ref))
            if not abs(mpmath.mpf(f64(*args)) - ref) <= abs(ref) * 1e-6:
                bad.append(("float64", args, f64(*args), ref))
    return bad


@pytest.mark.parametrize("name,f64,mp,cases", HP_CASES, ids=[c[0] for c in HP_CASES])
def test_high_precision_functions_against_their_definitions(name, f64, mp, cases):
    assert name in S.HIGH_PRECISION
    assert _hp_failures(name, f64, mp, cases) == []


def test_larger_coupled_test_sums_agree_with_mpmaths_incomplete_beta():
    """G₀ for n up to 2000 against the same sum with mpmath's own regularised incomplete beta (80 digits)."""
    for z, n, e in [(0.02, 2000, 0.05), (0.5, 300, 1e-9), (1e-4, 1000, 3.0)]:
        kmax = int(min(n, math.ceil(40.0 / e) + 20, TB.K_MAX))
        with mpmath.workdps(80):
            zz = mpmath.mpf(z)
            ref = mpmath.fsum(2 / (1 + mpmath.exp(mpmath.mpf(e) * k))
                              * (zz * mpmath.betainc(k + 1, n - k + 1, 0, zz, regularized=True)
                                 - mpmath.mpf(k + 1) / (n + 2) * mpmath.betainc(k + 2, n - k + 1, 0, zz, regularized=True))
                              for k in range(kmax + 1)) / (n + 1)
        hp = _mp(lambda a, b, c: TB.binom_g_mp(a, b, c, 0), z, n, e)
        with mpmath.workdps(80):
            assert abs(hp - ref) <= abs(ref) * mpmath.mpf(10) ** -30


BRACKET_CASES = [
    ("DPAffinity", lambda *a: TP.affinity_lower(TP.KIND_DP, *a), ref_dp_affinity,
     [(1, 0.5, 1e-9, 0.0), (100, 0.01, 1.0, 0.0), (10**6, 1e-4, 0.01, 1e-6), (10, 0.5, 50.0, 0.5),
      (10**15, 1e-13, 1e-9, 1e-12), (10**12, 1e-9, 5.0, 0.1)]),
    ("TVAffinity", lambda n, p, a: TP.affinity_lower(TP.KIND_TV, n, p, a, 0.0), ref_tv_affinity,
     [(1000, 0.001, 0.01), (10**15, 1e-14, 0.5), (50, 0.5, 0.99), (10**9, 1e-8, 1e-3)]),
    ("KLAffinity", lambda n, p, a: TP.affinity_lower(TP.KIND_KL, n, p, a, 0.0), ref_kl_affinity,
     [(1000, 0.001, 0.01), (10**15, 1e-14, 1.0), (50, 0.5, 20.0), (10**9, 1e-8, 1e-4)]),
    ("SharedBudgetInfo", lambda *a: float(SB.shared_budget_beta(*a)), ref_shared_budget,
     [(10, 0.3, 0.1, 1.0), (300, 0.01, 1e-4, 0.1), (1, 0.5, 0.25, 50.0), (2000, 1e-3, 0.0005, 1e-6)]),
]


def _bracket_failures(name, f64, ref_fn, cases):
    """The cases where a bracketed value is on the unsafe side of the reference or more than 1e-6 (plus the affinity's
    cut G_FLOOR = 1e-30, absolutely) from it."""
    bad = []
    for args in cases:
        ref = ref_fn(*args)
        assert ref is not None, args
        v = mpmath.mpf(f64(*args))
        with mpmath.workdps(80):
            unsafe = v > ref if SAFE[name] == "le" else v < ref
            if unsafe or abs(v - ref) > abs(ref) * 1e-6 + 1e-29:
                bad.append((args, v, ref))
    return bad


@pytest.mark.parametrize("name,f64,ref_fn,cases", BRACKET_CASES, ids=[c[0] for c in BRACKET_CASES])
def test_bracketed_functions_are_on_the_safe_side(name, f64, ref_fn, cases):
    assert name not in S.HIGH_PRECISION
    assert _bracket_failures(name, f64, ref_fn, cases) == []


@pytest.mark.parametrize("name,f64,ref_fn,cases", BRACKET_CASES, ids=[c[0] for c in BRACKET_CASES])
def test_planted_unsafe_bracket_is_caught(name, f64, ref_fn, cases):
    """A bracketed value moved by a relative 1e-5 to the unsafe side fails the check."""
    sign = 1 if SAFE[name] == "le" else -1
    assert _bracket_failures(name, lambda *a: f64(*a) * (1 + sign * 1e-5), ref_fn, cases[1:2])


def test_affinity_with_spread_thresholds_is_below_the_expectation():
    """A window of more than MAX_THRESHOLDS counts: the Abel sum over 512 spread thresholds gives every count the g
    of the next threshold above it, a lower bound looser than the float64 margins (measured 7.9e-5 and 1.2e-3 relative below it here)."""
    for args in [(3000, 0.3, 1e-3, 0.0), (20000, 0.5, 1e-3, 0.0)]:
        ref = ref_dp_affinity(*args)
        v = mpmath.mpf(TP.affinity_lower(TP.KIND_DP, *args))
        assert ref * (1 - 5e-3) <= v <= ref, (args, v, ref)


def test_collision_envelope_is_above_the_curves_hull():
    """Φ_b(J) >= the upper hull of curve points (a lower bound on h_b). It is up to 1e-3 above it (measured 1.0e-3 at
    b = 2, 3): the table's u-cells (width 5e-4 on the uniform part) give each cell the K of its end nearest 1/b and
    the Q of its far end, a looseness of the bracket, not a float64 error."""
    for b, J in [(2, 1e-9), (4, 0.1), (1000, 2.0), (10**4, 0.5), (3, 1.0)]:
        ref = ref_collision_phi_lower(b, J)
        v = float(BF.collision_phi(b, J))
        assert mpmath.mpf(v) >= ref, (b, J)
        assert v <= ref * (1 + 1.5e-3) + 1e-12, (b, J, v, ref)


@pytest.mark.parametrize("name,f64,mp,cases", [HP_CASES[0], HP_CASES[4], HP_CASES[5]],
                         ids=["J0", "GaussLoss", "L2SphereConst"])
@pytest.mark.parametrize("path", ["float64", "mpmath"])
def test_planted_unsafe_perturbation_is_caught(name, f64, mp, cases, path):
    """Either implementation moved by a relative 1e-5 to the unsafe side fails the check."""
    sign = 1 if SAFE[name] == "le" else -1
    if path == "float64":
        planted_f64, planted_mp = (lambda *a: f64(*a) * (1 + sign * 1e-5)), mp
    else:
        planted_f64, planted_mp = f64, (lambda *a: mp(*a) * (1 + sign * mpmath.mpf(1e-5)))
    bad = _hp_failures(name, planted_f64, planted_mp, cases[-2:])
    assert bad and all(b[0] == path for b in bad)


def test_subsample_size_is_exact():
    from boundcalc.methods import subsample_size as SS

    for a, n in [(0.1, 1e15), (1 / 3, 3.0), (1e-9, 1e9), (0.999999, 10**12)]:
        assert mpmath.mpf(SS.floor_product(a, n)) == REFERENCE["SubsampleSize"](a, n)
