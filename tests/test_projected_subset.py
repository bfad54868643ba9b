"""Subset selection projected onto the simplex: the projection inequality, the Bernstein maximal
inequality, and the certified risk bound against seeded simulations of the real estimator."""
import math

import numpy as np
import pytest
import sympy as sp

from boundcalc.core import symbolic as S
from boundcalc.mechanisms import discrete as DM


def test_projection_is_the_euclidean_projection():
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    for _ in range(20):
        y = rng.normal(size=6) * rng.uniform(0.1, 3)
        p = DM.project_simplex(y)[0]
        assert p.min() >= 0 and abs(p.sum() - 1) < 1e-12
        res = minimize(lambda x: np.sum((x - y) ** 2), np.full(6, 1 / 6), method="SLSQP",
                       bounds=[(0, 1)] * 6, constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}],
                       options={"ftol": 1e-14, "maxiter": 500})
        assert np.sum((p - y) ** 2) <= res.fun + 1e-9


def test_projection_inequality():
    """‖Π(θ+w) - θ‖² <= max_j w_j - ⟨w, θ⟩ for every θ in the simplex and every w."""
    rng = np.random.default_rng(1)
    for _ in range(2000):
        d = int(rng.integers(2, 12))
        theta = rng.dirichlet(np.full(d, rng.uniform(0.05, 3)))
        w = rng.normal(size=d) * rng.uniform(0.01, 5)
        p = DM.project_simplex(theta + w)[0]
        assert np.sum((p - theta) ** 2) <= w.max() - w @ theta + 1e-12


def test_bernstein_maximal_inequality_by_simulation():
    """E max_j of d averages of n centred variables with X <= b, Var <= σ²: the bound holds."""
    rng = np.random.default_rng(2)
    for d, n, p in [(5, 20, 0.1), (50, 100, 0.02), (200, 30, 0.3)]:
        # X = (B - p)/p·..., Bernoulli(p) scaled: X = B - p <= 1 - p, Var = p(1-p)
        B = rng.random((4000, d, n)) < p
        m = (B.mean(axis=2) - p).max(axis=1)
        se = m.std() / math.sqrt(m.size)
        bound = math.sqrt(2 * p * (1 - p) / n * math.log(d)) + (1 - p) * math.log(d) / (3 * n)
        assert m.mean() - 3 * se <= bound


@pytest.mark.parametrize("d,n,eps", [(8, 50, 1.0), (20, 200, 0.5), (30, 30, 3.0), (2, 10, 8.0)])
def test_bound_above_simulated_risk_of_the_projected_estimator(d, n, eps):
    fn = S.numpy_lambdify([S.n, S.eps, S.d, DM.ssub], DM.projected_subset_risk())
    rng = np.random.default_rng(3)
    for s in sorted({1, max(1, d // 3), max(1, d - 1)}):
        bound = float(fn(n, eps, d, s))
        for theta in (np.full(d, 1 / d), np.eye(d)[0], rng.dirichlet(np.ones(d))):
            est = DM.estimate("subset", theta, n, eps, 300, rng, s=s)
            err = np.sum((DM.project_simplex(est) - theta) ** 2, axis=1)
            # the simulated risk (99.7% lower end) is below the bound (unbiasedness: exact, test below)
            se = err.std() / math.sqrt(err.size)
            assert err.mean() - 3 * se <= bound


def test_subset_gap_matches_the_channel():
    e, d, s = 1.3, 7, 3
    Q, A = DM.channel("subset", d, e, s)
    ps, qs, D = (float(x) for x in DM.subset_gap(e, d, s))
    theta = np.eye(d)[2]
    _, mean = DM.exact_risk_linear(Q, A, theta, 1)
    assert np.allclose(mean, theta)  # a_j = (1{j∈S} - q*)/D is unbiased
    incl = Q[2] @ (DM.channel("subset", d, e, s)[1] * D + qs)  # P(j ∈ S | X = 2) per j
    assert math.isclose(incl[2], ps, rel_tol=1e-12) and math.isclose(incl[0], qs, rel_tol=1e-12)
