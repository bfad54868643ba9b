"""pattern-rr (boundcalc.mechanisms.pattern_rr; docs/problems/sparse-bernoulli.md): k-ary randomized response on the
2^d patterns. The certified bound against the simulated risk of the runnable mechanism (user by user, the privatize
code), its privacy verdict, and its limit (the sample mean's bound) as ε grows."""
from __future__ import annotations

import math

import numpy as np
import pytest

import boundcalc as bc
from boundcalc.mechanisms import pattern_rr as PR


def _pattern(n, eps, d, s):
    res = bc.rate("sparse-bernoulli", "local", n=n, eps=eps, d=d, s=s)
    return [u for u in res.uppers if u.name == "pattern-rr"][0]


def test_probabilities_match_the_definition():
    """q_change = (2^d-1)/(e^ε+2^d-1), a = p - q, c = q 2^{d-1} against exact rational arithmetic (small d, ε)."""
    from fractions import Fraction
    for d, eps in [(1, 0.7), (3, 2.0), (6, 5.0), (10, 12.0)]:
        E = Fraction(math.exp(eps))
        m = 2 ** d
        qc = PR.change_probability(eps, d)
        assert qc == pytest.approx(float((m - 1) / (E + m - 1)), rel=1e-12)
        a, c = PR.coefficients(qc, d)
        p, q = 1 / (E + m - 1) * E, 1 / (E + m - 1)
        assert a == pytest.approx(float(p - q), rel=1e-9) and c == pytest.approx(float(q * m / 2), rel=1e-9)
        assert PR.log_ratio(qc, d) == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("n,eps,d,s", [(40, 2.0, 3, 1.0), (100, 4.0, 5, 2.0), (300, 8.0, 8, 2.0), (1000, 40.0, 20, 2.0)])
def test_above_the_simulated_risk(n, eps, d, s):
    """The bound stays above the lower end of the 99% interval of the simulated risk, on the Jensen-worst instance
    θ_j = s/d (where the bound is the exact risk: the closest approach is near 1) and on a lopsided instance."""
    b = _pattern(n, eps, d, s)
    assert b.certified and b.value is not None
    mech = b.mechanism()
    assert mech.check_privacy()["passed"]
    rng = np.random.default_rng(d)
    reps = 400
    lop = np.zeros(d)
    lop[0] = min(1.0, s)
    lop[1:] = max(0.0, s - lop[0]) / (d - 1)
    closest = 0.0
    for theta in (np.full(d, s / d), lop):
        est = mech.simulate(theta, n, rng, reps)
        err = np.sum((est - theta) ** 2, axis=1)
        lo = err.mean() - 2.576 * err.std(ddof=1) / math.sqrt(reps)
        assert lo <= b.value, (n, eps, d, s, theta, err.mean(), b.value)
        closest = max(closest, err.mean() / b.value)
    print(n, eps, d, s, "closest", round(closest, 3))
    assert closest > 0.85, closest  # on the spread instance the bound is the exact risk


def test_privatize_and_estimate_round_trip():
    b = _pattern(500, 6.0, 4, 1.0)
    mech = b.mechanism()
    rng = np.random.default_rng(3)
    x = (rng.random((500, 4)) < 0.25).astype(int)
    y = mech.privatize_all(x, rng)
    assert y.shape == x.shape and set(np.unique(y)) <= {0, 1}
    est = mech.estimate(y)
    assert np.all(np.abs(est - x.mean(axis=0)) < 0.3)


def test_tends_to_the_sample_mean_bound():
    """As ε grows a -> 1 and c -> 0: the bound decreases to d h(min{1/2, s/d})/n, the non-private bound."""
    n, d, s = 1000, 20, 2.0
    nonpriv = bc.rate("sparse-bernoulli", "none", n=n, d=d, s=s).upper.value
    assert nonpriv == pytest.approx(d * (s / d) * (1 - s / d) / n, rel=1e-12)
    vals = [_pattern(n, e, d, s).value for e in (16.0, 20.0, 30.0, 40.0)]
    assert all(x >= y for x, y in zip(vals, vals[1:])), vals
    assert vals[-1] <= nonpriv * (1 + 1e-6) and vals[0] > nonpriv * 1.01
