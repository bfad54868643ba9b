"""Block-sampled one-hot OUE for sparse Bernoulli means (boundcalc/mechanisms/block_oue.py,
docs/problems/sparse-bernoulli.md): privacy by enumeration of the release law, the kept-one probability against
exact enumeration over permutations, the binomial partial moments against direct sums and mpmath, and the certified
risk bound against the exact risk at many θ and a seeded simulation of the whole mechanism."""
from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from scipy import special, stats

import boundcalc as bc
from boundcalc.mechanisms import block_oue as BO


@pytest.mark.parametrize("w,eps", [(1, 1.0), (2, 0.5), (3, 1.0), (4, 2.0), (5, 3.0)])
def test_release_is_eps_ldp(w, eps):
    """Every input (0/1 vector on the block) gives a mixture of OUE laws; the largest log-ratio over outputs and pairs
    of inputs is at most ε (and equals it)."""
    p0, p1 = BO.probabilities(eps, w if w == 1 else w + 1, 1 if w > 1 else 1)
    if w == 1:
        p0, p1 = 1 / (math.exp(eps) + 1), math.exp(eps) / (math.exp(eps) + 1)
    outs = list(itertools.product((0, 1), repeat=w))
    laws = []
    for x in itertools.product((0, 1), repeat=w):
        ones = [i for i in range(w) if x[i]]
        law = []
        for y in outs:
            def oue(kept):
                return np.prod([(p1 if y[i] else 1 - p1) if i == kept else (p0 if y[i] else 1 - p0) for i in range(w)])
            law.append(np.mean([oue(k) for k in ones]) if ones else oue(-1))
        laws.append(np.array(law))
    L = np.array(laws)
    worst = np.max(np.log(L.max(axis=0) / L.min(axis=0)))
    assert worst <= eps * (1 + 1e-12)
    assert worst >= eps * (1 - 1e-9)


def test_kept_probability_at_least_a_theta():
    """θ'_j = θ_j E[1/(1 + Y_j)] by enumerating every permutation (d = 5) and every data vector, against a(θ_j) θ_j."""
    rng = np.random.default_rng(1)
    d = 5
    perms = list(itertools.permutations(range(d)))
    xs = np.array(list(itertools.product((0, 1), repeat=d)))
    for m in (1, 2, 3):
        sizes = [d // m + (1 if l < d % m else 0) for l in range(m)]
        starts = np.concatenate([[0], np.cumsum(sizes)])
        w = max(sizes)
        for _ in range(4):
            theta = rng.random(d) * rng.choice([0.3, 1.0])
            s = theta.sum()
            px = np.prod(np.where(xs == 1, theta, 1 - theta), axis=1)
            kept = np.zeros(d)
            for perm in perms:
                for x, pr in zip(xs, px):
                    for l in range(m):
                        blk = [perm[i] for i in range(starts[l], starts[l + 1])]
                        ones = [j for j in blk if x[j]]
                        for j in ones:
                            kept[j] += pr / len(ones)
            kept /= len(perms)
            a = 1 / (1 + (w - 1) * np.maximum(s - theta, 0) / (d - 1))
            assert np.all(kept >= a * theta - 1e-12) and np.all(kept <= theta + 1e-12)


@pytest.mark.parametrize("N", [1, 2, 7, 60, 3000])
def test_clipped_moments_against_direct_sums(N):
    T = np.arange(N + 1)
    for pi in (0.0, 1e-4, 0.2, 0.5, 0.93, 1.0):
        pmf = stats.binom.pmf(T, N, pi)
        for alpha, beta in ((1.0 / N, 0.0), (3.0 / N, -0.7), (0.4 / N, 0.2), (5.0 / N, -4.2), (0.05, -0.01)):
            g = np.clip(alpha * T + beta, 0, 1)
            Eg, Eg2 = BO.clipped_moments(N, np.array([pi]), alpha, beta)
            assert Eg[0] == pytest.approx(pmf @ g, abs=1e-12)
            assert Eg2[0] == pytest.approx(pmf @ g ** 2, abs=1e-12)


def _mp_sf(k, N, pi):
    """P(Bin(N, π) > k) in mpmath: the pmf summed over the smaller side, within ±40 standard deviations."""
    p = mpmath.mpf(pi)
    sd = math.sqrt(N * pi * (1 - pi)) + 1
    lo, hi = max(0, int(N * pi - 40 * sd)), min(N, int(N * pi + 40 * sd) + 1)
    pmf = lambda j: mpmath.binomial(N, j) * p ** j * (1 - p) ** (N - j)
    if k >= N * pi:
        return mpmath.fsum(pmf(j) for j in range(k + 1, hi + 1))
    return 1 - mpmath.fsum(pmf(j) for j in range(lo, k + 1))


def test_incomplete_beta_accuracy_covers_the_margin():
    """The float64 step: scipy's binomial cdf and survival function against mpmath (40 digits); the absolute error must
    stay within a fifth of the error model PROB_ERR (N + 100) that the margins assume."""
    mpmath.mp.dps = 40
    worst = 0.0
    rng = np.random.default_rng(2)
    for N, draws in ((5, 12), (80, 12), (2000, 12), (20000, 12), (BO.MAX_GROUPS, 3)):
        for _ in range(draws):
            pi = float(rng.choice([rng.random(), rng.random() * 1e-3, 1 - rng.random() * 1e-3]))
            k = int(np.clip(N * pi + rng.normal() * math.sqrt(N * pi * (1 - pi) + 1) * 3, 0, N - 1))
            ref = _mp_sf(k, N, pi)
            err = max(abs(float(special.bdtrc(k, N, pi)) - float(ref)), abs(float(special.bdtr(k, N, pi)) - float(1 - ref)))
            worst = max(worst, err / (BO.PROB_ERR * (N + 100)))
    assert worst < 0.2  # the error model has a factor 5 to spare


def _exact_risk(theta, n, eps, m, c, tau):
    """Σ_j E(θ̂_j - θ_j)² with θ'_j by enumeration over permutations and data (small d)."""
    d = theta.size
    perms = list(itertools.permutations(range(d)))
    xs = np.array(list(itertools.product((0, 1), repeat=d)))
    px = np.prod(np.where(xs == 1, theta, 1 - theta), axis=1)
    sizes = [d // m + (1 if l < d % m else 0) for l in range(m)]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    kept = np.zeros(d)
    for perm in perms:
        for x, pr in zip(xs, px):
            for l in range(m):
                ones = [perm[i] for i in range(starts[l], starts[l + 1]) if x[perm[i]]]
                for j in ones:
                    kept[j] += pr / len(ones)
    kept /= len(perms)
    N = n // m
    p0, p1 = BO.probabilities(eps, d, m)
    T = np.arange(N + 1)
    g = np.clip(c * (T / N - p0) / (p1 - p0) - tau, 0, 1)
    return sum(stats.binom.pmf(T, N, p0 + (p1 - p0) * kept[j]) @ (g - theta[j]) ** 2 for j in range(d))


def test_bound_above_exact_risks():
    rng = np.random.default_rng(4)
    d, closest = 4, 0.0
    for n, eps, s, m, c, tau in ((40, 1.0, 1.5, 2, 1.0, 0.0), (90, 2.0, 2.0, 1, 1.2, 0.05), (30, 0.5, 1.0, 4, 1.0, 0.1),
                                 (200, 1.0, 3.0, 2, 1.45, 0.02)):
        bound = BO.risk_upper(n, eps, d, s, m, c, tau)
        for _ in range(15):
            theta = rng.dirichlet(np.ones(d) * rng.choice([0.2, 1.0, 5.0])) * s * rng.choice([0.3, 1.0])
            theta = np.minimum(theta, 1.0)
            exact = _exact_risk(theta, n, eps, m, c, tau)
            assert exact <= bound
            closest = max(closest, exact / bound)
        # the vertices: ⌊s⌋ ones (the hard instance when s is large)
        theta = np.zeros(d)
        theta[:int(s)] = 1.0
        exact = _exact_risk(theta, n, eps, m, c, tau)
        assert exact <= bound
        closest = max(closest, exact / bound)
    assert closest > 0.3


def test_simulation_of_the_whole_mechanism_below_the_bound():
    rng = np.random.default_rng(5)
    n, eps, d, s = 300, 1.0, 12, 2.0
    v, m, c, tau = BO.tuned(n, eps, d, s)
    for theta in (np.r_[np.ones(2), np.zeros(d - 2)], np.full(d, s / d), np.r_[np.full(4, 0.5), np.zeros(d - 4)]):
        est = BO.estimates(theta, n, eps, m, c, tau, 150, rng)
        err = ((est - theta) ** 2).sum(axis=1)
        assert err.mean() - 3 * err.std() / math.sqrt(err.size) <= v  # the bound is not rejected at 3 standard errors


def test_in_rate_certified_and_planning_row():
    res = bc.rate("sparse-bernoulli", privacy="local", n=9000, d=200, s=5.0, eps=1.0)
    bo = next(b for b in res.uppers if b.name == "block-oue")
    assert bo.certified and bo.value < 0.5 and bo.value >= res.lower.value
