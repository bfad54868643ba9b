"""Adversarial checks of the posterior-mean Assouad / information-budget lemmas (boundcalc/methods/posterior_assouad.py)
and of the multinomial point-mass Bayes bound. Each check can fail: it compares a certified inequality with an
independently computed exact quantity (optimised ε-LDP channels, exact Bayes risks of concrete schemes)."""
import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from boundcalc.core import symbolic as S
from boundcalc.methods import posterior_assouad as PA
from boundcalc.problems import multinomial as MN

from finite_channels import ldp_channel  # tests/finite_channels.py


def test_information_budget_adversarial():
    """Σ_j E[(E[v_j|Z])²] <= 2 ε tanh(ε/2) for one report of X = v ∈ {±1}^a (v uniform), the channel
    optimised (Nelder–Mead) to maximise the ratio."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for a, m, eps in [(1, 2, 3.0), (2, 4, 0.5), (2, 4, 8.0), (3, 3, 3.0)]:
        V = np.array(list(itertools.product([-1, 1], repeat=a)), float)

        def neg(x):
            q, e = ldp_channel(x.reshape(len(V), m), eps)
            mbar = q.mean(0)
            post = (V.T @ q) / len(V) / mbar  # (a, m)
            return -float(np.sum(mbar * post ** 2)) / (2 * PA.mi_per_report_float(e))

        for _ in range(3):
            r = minimize(neg, rng.normal(size=len(V) * m) * 3, method="Nelder-Mead", options={"maxiter": 3000})
            worst = max(worst, -r.fun)
    assert worst <= 1 + 1e-9
    assert worst > 0.1  # the optimiser found informative channels


def _rappor(d, eps):
    f = 1 / (math.exp(eps / 2) + 1)
    Z = list(itertools.product([0, 1], repeat=d))
    return np.array([[np.prod([(1 - f) if z[k] == (k == x) else f for k in range(d)]) for z in Z] for x in range(d)])


def _subset(d, eps, s):
    Z = list(itertools.combinations(range(d), s))
    q = np.array([[math.exp(eps) if x in z else 1.0 for z in Z] for x in range(d)])
    return q / q.sum(1, keepdims=True)


def _bayes_risk(q, d, n, g, loss):
    T = (1 - g) / d * np.ones((d, d)) + g * np.eye(d)
    M = []
    for th in T:
        m1 = th @ q
        mm = m1
        for _ in range(n - 1):
            mm = np.outer(mm, m1).ravel()
        M.append(mm)
    w = np.array(M) / d
    pz = w.sum(0)
    post = w / pz
    if loss == "l2sq":
        return float(g ** 2 * np.sum(pz * (1 - np.sum(post ** 2, 0))))
    return float(np.sum(pz * np.sum(g * np.minimum(post, 1 - post), 0)))


@pytest.mark.parametrize("loss", ["l2sq", "l1"])
def test_point_mass_bayes_below_bayes_risk_rappor_and_subsets(loss):
    f = S.numpy_lambdify([S.n, S.eps, S.d, MN.GAMMA_MIX], MN.point_mass_bayes(loss))
    worst = 0.0
    for d in (2, 3, 4):
        for eps in (0.01, 0.5, 3.0, 8.0):
            chans = [_rappor(d, eps)] + [_subset(d, eps, s) for s in range(1, d)]
            for n in (1, 2, 3):
                for g in (0.1, 0.5, 0.9, 0.999):
                    lo = float(f(n, eps, d, g))
                    for q in chans:
                        if q.shape[1] ** n > 1e5:
                            continue
                        worst = max(worst, lo / _bayes_risk(q, d, n, g, loss))
    assert worst <= 1 + 1e-9


def test_sparse_bernoulli_sign_information_random_channels():
    """Per coordinate of the sparse-Bernoulli posterior-Assouad family (θ_j = m(1 ± δ)/2), n i.i.d. reports
    through a random ε-LDP channel: exact E[(E[v_j|Z])²] = Δ/2 <= k with the package's K (χ²–TV
    contraction or the Bernoulli χ²)."""
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(1500):
        m = float(rng.choice([0.5, 0.1, 0.01]))
        dl = float(rng.choice([0.1, 0.5, 0.9, 0.999999]))
        eps = float(rng.choice([0.01, 0.5, 3, 8, 15, 30]))
        n = int(rng.integers(1, 5))
        q, e = ldp_channel(rng.normal(size=(2, int(rng.integers(2, 4)))) * rng.choice([1, 10, 100]), eps)
        pp, pm = m * (1 + dl) / 2, m * (1 - dl) / 2
        a, b = np.array([1 - pp, pp]) @ q, np.array([1 - pm, pm]) @ q
        A, B = a, b
        for _ in range(n - 1):
            A, B = np.outer(A, a).ravel(), np.outer(B, b).ravel()
        em2 = float(np.sum((A - B) ** 2 / (2 * (A + B))))
        k = PA.sign_information_float(PA.kl_bound_float(n, e, m * dl, (pp - pm) ** 2 / (pm * (1 - pm))))
        if k > 1e-15:
            worst = max(worst, em2 / k)
    assert 0.1 < worst <= 1 + 1e-9
