"""Block-vertex Fano bound with a collision envelope (boundcalc/methods/block_fano.py, docs/methods/block-fano.md).

The envelope h_b is checked against ‖q‖² of random laws on b points (it must lie above every one of them) and against
the curve it majorises (it must stay close); the bound against the exact Bayes risk of concrete ε-LDP channels on its
own family (enumeration of every transcript), against the certified uppers, and for monotonicity in n."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import boundcalc as bc
from boundcalc.methods import block_fano as BF
from boundcalc.problems.sparse_bernoulli import _block_fano


def _kl_and_collision(q):
    q = np.asarray(q, float)
    pos = q > 0
    return math.log(q.size) + float(np.sum(q[pos] * np.log(q[pos]))), float(q @ q)


@pytest.mark.parametrize("b", [2, 3, 5, 12, 60])
def test_envelope_above_every_law(b):
    rng = np.random.default_rng(b)
    for conc in (0.03, 0.3, 1.0, 10.0, 300.0):
        for q in rng.dirichlet(np.full(b, conc), size=300):
            K, Q = _kl_and_collision(q)
            assert Q <= float(BF.collision_phi(b, K)), (b, q)
    # two-valued laws (the maximisers' shape before the reduction to one spike): k copies of u, the rest w
    for k in range(1, b):
        for u in np.linspace(1.0 / b, 1.0 / k, 25):
            q = np.concatenate([np.full(k, u), np.full(b - k, (1 - k * u) / (b - k))])
            K, Q = _kl_and_collision(q)
            assert Q <= float(BF.collision_phi(b, K)) + 0.0


@pytest.mark.parametrize("b", [2, 4, 50, 10 ** 5])
def test_envelope_is_close_to_the_spike_curve(b):
    """h_b is the concave majorant of the spike-plus-uniform curve: at the end points it equals the curve (1/b at
    J = 0, 1 at J = log b), and it is never below the curve."""
    assert abs(float(BF.collision_phi(b, 0.0)) - 1.0 / b) < 1e-9
    assert float(BF.collision_phi(b, math.log(b))) == pytest.approx(1.0, abs=1e-9)
    u = np.linspace(1.0 / b, 1.0, 500)
    K, Q = BF._kl_uniform(b, u), BF._collision(b, u)
    assert np.all(BF.collision_phi(b, K) >= Q)
    if b == 2:  # the curve is concave for two points: the envelope follows it
        assert np.max(BF.collision_phi(b, K) - Q) < 2e-3


def _family(m, b, mu):
    X = list(itertools.product(range(b + 1), repeat=m))
    Vs = list(itertools.product(range(1, b + 1), repeat=m))
    P = np.array([[np.prod([(1 - mu) if x[l] == 0 else (mu if x[l] == v[l] else 0.0) for l in range(m)])
                   for x in X] for v in Vs])
    return Vs, P


def _exact_bayes_risk(m, b, mu, Q, n):
    """Posterior variance μ² Σ_l (1 - E‖p_l‖²), every transcript of n users enumerated (the same channel Q for all)."""
    Vs, P = _family(m, b, mu)
    M = P @ Q.T
    coll = 0.0
    for zs in itertools.product(range(M.shape[1]), repeat=n):
        lik = np.prod(M[:, zs], axis=1)
        if lik.sum() <= 0:
            continue
        post = lik / lik.sum()
        for l in range(m):
            pl = np.zeros(b)
            for i, v in enumerate(Vs):
                pl[v[l] - 1] += post[i]
            coll += lik.mean() * (pl @ pl)
    return mu ** 2 * (m - coll)


def _rr(k, eps):
    Q = np.ones((k, k))
    np.fill_diagonal(Q, math.exp(eps))
    return Q / Q.sum(axis=0)


def test_bound_below_exact_bayes_risk_of_private_channels():
    """The bound at fixed (m, μ) is a lower bound on the Bayes risk of *every* ε-LDP protocol on its family: here
    randomized response on the whole data alphabet and random ε-LDP channels (ratios at most e^ε)."""
    bound = _block_fano()
    rng = np.random.default_rng(0)
    closest = 0.0
    for (m, b), mu, eps in itertools.product([(1, 3), (2, 2)], [1.0, 0.5], [0.5, 2.0, 4.0]):
        nx = (b + 1) ** m
        R = np.exp(rng.random((5, nx)) * eps / 2)
        chans = [_rr(nx, eps), R / R.sum(axis=0)]
        for n in (1, 2):
            value = float(bound.evaluate(dict(n=n, eps=eps, d=m * b, s=m * mu), {"m_bf": m, "t_bf": 1.0}))
            assert value >= 0
            for Q in chans:
                exact = _exact_bayes_risk(m, b, mu, Q, n)
                assert value <= exact, (m, b, mu, eps, n)
                closest = max(closest, value / exact)
    assert closest > 0.7  # not vacuous: randomized response at n = 1 comes close


@pytest.mark.parametrize("d,s,eps", [(200, 5.0, 1.0), (30, 2.0, 2.0), (1000, 1.0, 0.5)])
def test_below_certified_uppers_and_monotone_in_n(d, s, eps):
    prev = math.inf
    for n in (1, 10, 100, 1000):
        res = bc.rate("sparse-bernoulli", privacy="local", n=n, d=d, s=s, eps=eps)
        bf = next(b for b in res.lowers if b.name == "block-fano")
        assert bf.certified and bf.value is not None
        assert bf.value <= res.upper.value
        assert bf.value <= prev * (1 + 1e-9)
        prev = bf.value


def test_planning_row_moves():
    """d = 200, s = 5, ε = 1, target 0.5: no ε-LDP protocol reaches it with 205 users (the bound at n = 205 is above
    0.5), while the posterior-mean and Hellinger hypercubes alone only excluded n <= 2."""
    res = bc.rate("sparse-bernoulli", privacy="local", n=205, d=200, s=5.0, eps=1.0)
    assert res.lower.name == "block-fano" and res.lower.value > 0.5
