"""shrunk-laplace (boundcalc.problems.bernoulli.shrunk_laplace): the bound at its tuned factor against the simulated
risk of the runnable mechanism, and its limit, the Hodges–Lehmann risk 1/(4(1+√n)²), as ε grows."""
from __future__ import annotations

import math

import numpy as np
import pytest

import boundcalc as bc


def _bound(n, eps):
    return [u for u in bc.rate("bernoulli", "pure", n=n, eps=eps).uppers if u.name == "shrunk-laplace"][0]


@pytest.mark.parametrize("n,eps", [(10, 40.0), (10, 1.0), (100, 0.1), (1000, 2.0)])
def test_above_the_simulated_risk(n, eps):
    b = _bound(n, eps)
    mech = b.mechanism()
    assert mech.check_privacy()["passed"]
    rng = np.random.default_rng(n)
    reps = 200000
    closest = 0.0
    for theta in (0.0, 0.1, 0.3, 0.5):
        xbar = rng.binomial(n, theta, size=reps) / n
        est = mech.release_from_statistic(xbar, rng, reps)[:, 0]
        err = (est - theta) ** 2
        lo = err.mean() - 2.576 * err.std(ddof=1) / math.sqrt(reps)
        assert lo <= b.value, (n, eps, theta, err.mean(), b.value)
        closest = max(closest, err.mean() / b.value)
    print(n, eps, "closest", round(closest, 3))
    assert closest > 0.8  # θ = 1/2 or θ ∈ {0, 1} nearly attains it


def test_tends_to_hodges_lehmann():
    for n in (10, 1000):
        hl = 1 / (4 * (1 + math.sqrt(n)) ** 2)
        vals = [_bound(n, e).value for e in (1.0, 5.0, 40.0, 1000.0)]
        assert all(x >= y for x, y in zip(vals, vals[1:])), vals
        assert vals[-1] <= hl * (1 + 1e-4) and vals[-1] >= hl * (1 - 1e-12)
        laplace = [u for u in bc.rate("bernoulli", "pure", n=n, eps=1.0).uppers if u.name == "laplace"][0].value
        assert vals[0] <= laplace  # c = 1 is the unshrunk bound
