"""The K-norm noise of the central density histogram (boundcalc.methods.knorm; docs/problems/density.md): its second
moment against exact rational arithmetic and an independent rejection sampler, the sampler's law, and the new
uppers against the entry's lower bound and the Laplace histogram."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from boundcalc.methods import knorm as KN


def _rational(m):
    w = {a: Fraction(math.comb(m, a), math.factorial(a - 1) * math.factorial(m - a - 1)) for a in range(1, m)}
    tot = sum(w.values())
    inner = sum(w[a] * (Fraction(2, a + 1) + Fraction(2, m - a + 1)) for a in w) / tot
    return Fraction(m - 1, m + 1) * inner


def test_second_moment_matches_rational_arithmetic():
    assert _rational(2) == Fraction(2, 3) and _rational(3) == Fraction(5, 6) and _rational(4) == Fraction(21, 25)
    for m in range(2, 40):
        exact = float(_rational(m))
        got = KN.second_moment(m)
        assert exact <= got <= exact * (1 + 2e-9)
    assert KN.second_moment(1) == 0.0 and math.isnan(KN.second_moment(KN.MAX_BINS + 1))


@pytest.mark.parametrize("m", [2, 3, 4, 6])
def test_second_moment_by_rejection_sampling(m):
    """Uniform points of K by rejection from the cube of the m-1 free coordinates (x_m = -Σ x_i): an independent law."""
    rng = np.random.default_rng(m)
    x = rng.uniform(-1, 1, size=(400000, m - 1))
    full = np.concatenate([x, -x.sum(axis=1, keepdims=True)], axis=1)
    keep = np.abs(full).sum(axis=1) <= 2
    sq = (full[keep] ** 2).sum(axis=1)
    se = sq.std() / math.sqrt(sq.size)
    assert abs(sq.mean() - KN.second_moment(m)) <= 4.5 * se
    # and the package's sampler draws the same law (in ℓ1 and sum constraints, and in its second moment)
    u = KN.sample_uniform_k(rng, m, 40000)
    assert np.all(np.abs(u.sum(axis=1)) < 1e-12) and np.all(np.abs(u).sum(axis=1) <= 2 + 1e-12)
    sq2 = (u ** 2).sum(axis=1)
    assert abs(sq2.mean() - KN.second_moment(m)) <= 4.5 * sq2.std() / math.sqrt(sq2.size)
    assert abs(np.abs(u).sum(axis=1).mean() - np.abs(full[keep]).sum(axis=1).mean()) < 0.02


def test_noise_second_moment():
    rng = np.random.default_rng(1)
    m, eps = 5, 0.7
    z = KN.sample_noise(rng, m, eps, 60000)
    sq = (z ** 2).sum(axis=1)
    expect = m * (m + 1) * KN.second_moment(m) / eps ** 2
    assert abs(sq.mean() - expect) <= 4.5 * sq.std() / math.sqrt(sq.size)


def test_density_knorm_uppers():
    from boundcalc.app import api

    res = api.rate("density", "pure", n=1000, eps=0.1)
    ups = {u.name: u for u in res.uppers}
    assert ups["shrunk-histogram-knorm"].certified
    assert ups["shrunk-histogram-knorm"].value < ups["shrunk-histogram"].value  # a real gain at small m
    assert res.lower.value <= res.upper.value
