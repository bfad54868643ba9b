"""ℓ1 risk of unprojected subset selection from exact mean absolute deviations (boundcalc/mechanisms/discrete.py,
``subset-l1-mad``; docs/problems/multinomial.md): the certified supremum against exact risks at many distributions
(every coordinate's mean absolute deviation summed from the binomial law), and against the Cauchy–Schwarz bound."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import boundcalc as bc
from boundcalc.mechanisms import discrete as DM
from boundcalc.mechanisms import subset_tail as ST


def _exact_l1(n, eps, d, s, p):
    ps, qs, D = ST.subset_constants(eps, d, s)
    N = np.arange(n + 1)
    return sum(stats.binom.pmf(N, n, qs + D * pj) @ np.abs(N - n * (qs + D * pj)) for pj in p) / (n * D)


@pytest.mark.parametrize("n,eps,d", [(40, 1.0, 5), (300, 2.0, 20), (2000, 0.5, 8), (5000, 3.0, 3)])
def test_bound_above_exact_risks_and_tight_at_uniform(n, eps, d):
    value, s = DM.subset_l1_mad(n, eps, d)
    rng = np.random.default_rng(n)
    worst = 0.0
    for p in [np.full(d, 1.0 / d), np.eye(d)[0]] + list(rng.dirichlet(np.full(d, 0.3), size=20)) + \
            list(rng.dirichlet(np.full(d, 5.0), size=20)):
        exact = _exact_l1(n, eps, d, s, p)
        assert exact <= value
        worst = max(worst, exact / value)
    assert worst > 0.97  # the supremum is close to an attained risk (at or near the uniform distribution)


@pytest.mark.parametrize("n,eps,d", [(16871, 2.0, 20), (10 ** 5, 1.0, 50)])
def test_about_sqrt_two_over_pi_of_cauchy_schwarz(n, eps, d):
    value, s = DM.subset_l1_mad(n, eps, d)
    E = math.exp(eps)
    cs = math.sqrt(d * (d - 1) ** 2 * (s * E + d - s) ** 2 / (n * d * s * (d - s) * (E - 1) ** 2))
    assert math.sqrt(2 / math.pi) * 0.99 < value / cs < math.sqrt(2 / math.pi) * 1.02


def test_planning_row_and_certified_in_rate():
    res = bc.rate("multinomial", privacy="local", n=16871, d=20, eps=2.0, loss="l1")
    b = next(x for x in res.uppers if x.name == "subset-l1-mad")
    assert b.certified and b.value <= 0.1 and b.value >= res.lower.value
