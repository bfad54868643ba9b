"""Every private upper bound should reach the non-private risk as the privacy level weakens (issue 30, item 9).

For every registered (problem, privacy) pair with a non-private entry: the ratio (best certified upper at a very
weak level) / (best certified non-private upper, ``RateResult.nonprivate``) is at most a stated tolerance, at
n = 10, 1000 and 1e5, and it does not increase along a ladder of weakening levels at n = 1000.

The weakest levels: ε = 40 for pure, smooth, approximate and local DP (the issue's level; e^40 ≈ 2.4e17 makes every
randomized-response channel here nearly the identity), α = 0.99 for TV privacy (α < 1 is the allowed range) and
α = 1e4 for KL privacy (the largest allowed level: KL noise falls like 1/√α, see below).

Why a tolerance of 1.2, and where it is tighter. Each best upper here is the risk bound of a mechanism whose
estimator at ε -> ∞ is the non-private one (the shrunk mean, the best multiple of the maximum, k-RR on the whole
pattern, ...), plus a privacy term that vanishes as the level weakens:
- Laplace/Gaussian noise on a truncated mean: the truncation bias and the noise trade off to a term of order
  r²/(nε) (pure; k = 2: 2√8 r²/(4nε) after optimising T) or r²/(n√(2α)) (KL), i.e. a relative excess of about
  0.07 at ε = 40, 0.02 at α = 1e4 (mean: measured 1.07, 1.02 at n = 1000);
- randomized-response channels: an excess of order 2^d e^{-ε} or m e^{-ε} (sparse Bernoulli, multinomial, the local
  mean's levels): measured 1.00-1.01;
- TV subsampling of ⌊αn⌋ records: (1+√n)²/(1+√(αn))² - 1 ≈ 1 - α for large n (mean, support: 1.01).
The tolerance is max(1.2, explicit per-pair value) where a pair carries an open gap, recorded in OPEN_GAPS with its
cause; a ratio below 1 only says the non-private bound is not the best estimator at that n (reported, allowed).
"""
from __future__ import annotations

import pytest

import boundcalc as bc

from cases import PAIRS, ids  # tests/cases.py: every registered pair

WEAKEST = {"pure": 40.0, "smooth": 40.0, "approx": 40.0, "local": 40.0, "tv": 0.99, "kl": 1e4}
LADDER = {"pure": (2.0, 5.0, 10.0, 40.0), "smooth": (2.0, 5.0, 10.0, 40.0), "approx": (2.0, 5.0, 10.0, 40.0),
          "local": (2.0, 5.0, 10.0, 40.0), "tv": (0.3, 0.6, 0.9, 0.99), "kl": (1.0, 10.0, 100.0, 1e4)}
TOL = 1.2
#: pairs still above TOL at some n, each with its measured ratio and the reason (an open gap, not hidden)
OPEN_GAPS: dict = {
    # (closed) the local mean's uppers were unbiased averages of the reports, 1.73 above the Hodges–Lehmann risk
    # at n = 10, ε = 40; the shrunk average (1-σ)Z̄ reaches it (measured 1.0004)
}
#: relative slack for the monotonicity check (the solver's last digits)
MONO_SLACK = 1e-6

PRIVATE = [(p, q) for p, q in PAIRS if q != "none"]


def _ratio(problem, privacy, n, level):
    res = bc.rate(problem, privacy, n=n, eps=level)
    ups = [u for u in res.uppers if u.certified and u.value is not None]
    assert res.nonprivate is not None and ups, (problem, privacy)
    return min(u.value for u in ups) / res.nonprivate


@pytest.mark.parametrize("problem,privacy", PRIVATE, ids=ids(PRIVATE))
@pytest.mark.parametrize("n", [10, 1000, 100000])
def test_weakest_level_reaches_the_nonprivate_risk(problem, privacy, n):
    ratio = _ratio(problem, privacy, n, WEAKEST[privacy])
    tol = OPEN_GAPS.get((problem, privacy, n), TOL)
    assert ratio <= tol, (problem, privacy, n, ratio, tol)
    assert ratio > 0.5, (problem, privacy, n, ratio)  # the two numbers are about the same estimation problem


@pytest.mark.parametrize("problem,privacy", PRIVATE, ids=ids(PRIVATE))
def test_ratio_decreases_as_the_level_weakens(problem, privacy):
    ratios = [_ratio(problem, privacy, 1000, lv) for lv in LADDER[privacy]]
    assert all(b <= a * (1 + MONO_SLACK) for a, b in zip(ratios, ratios[1:])), (problem, privacy, ratios)


def test_every_private_pair_has_a_weakest_level():
    assert {q for _, q in PRIVATE} <= set(WEAKEST) and set(WEAKEST) == set(LADDER)


@pytest.mark.parametrize("problem,privacy,n,before,after", [
    ("sparse-bernoulli", "local", 1000, 1.66, 1.01), ("sparse-bernoulli", "local", 100000, 2.10, 1.01),
    ("mean", "kl", 10, 1.62, 1.06), ("mean", "pure", 10, 1.72, 1.17), ("bernoulli", "pure", 10, 1.73, 1.01),
    ("mean", "local", 100000, 2.25, 1.01)])
def test_fixed_pairs_are_now_tight(problem, privacy, n, before, after):
    """The pairs this file was written for (issue 30, item 9), each with its ratio measured before the fix
    (``before``) and a ceiling just above the one measured after (mean/pure at n = 10: the O(1/ε) noise-and-bias
    term of the Laplace mechanism, 0.16 of the risk at ε = 40)."""
    assert _ratio(problem, privacy, n, WEAKEST[privacy]) <= after < before
