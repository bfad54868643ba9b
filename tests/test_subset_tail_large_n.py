"""Boost's binomial tails at large n, as the projected subset-selection routes use them
(boundcalc.mechanisms.subset_tail): the tails' relative error grows like n times the rounding of 1 - π, so the
rounding slack of the partial moments and the log moment generating function grows with n (tail_error).

References: exact sums of binomial probabilities in mpmath at 50 digits, small means (the lower tails where the
error was found: 5.4e-8 at n = 1e9, above the fixed 1e-9 the routes used before 2026-12-05)."""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from boundcalc.mechanisms import subset_tail as T


def _pmf(n, p, j):
    return mp.binomial(n, j) * p ** j * (1 - p) ** (n - j)


def exact_cdf(n, p, k):
    with mp.workdps(50):
        p = mp.mpf(p)
        return sum((_pmf(n, p, j) for j in range(0, int(k) + 1)), mp.mpf(0))


def exact_lower_hinge(n, p, c):
    """E(c - N)₊ for N ~ Bin(n, p), summed over N < c."""
    with mp.workdps(50):
        p = mp.mpf(p)
        return sum(((c - j) * _pmf(n, p, j) for j in range(0, math.ceil(c))), mp.mpf(0))


def exact_upper_hinge(n, p, c):
    """E(N - c)₊ = E(N - c) + E(c - N)₊."""
    with mp.workdps(50):
        return n * mp.mpf(p) - c + exact_lower_hinge(n, p, c)


def exact_log_mgf_hinge(n, p, c, a, extra=400):
    """log E exp(-a (N - c)₊): the probabilities up to ⌊c⌋ + extra (the rest is below 1e-300 at these means)."""
    with mp.workdps(50):
        p = mp.mpf(p)
        k = math.floor(c)
        tot = exact_cdf(n, p, k)
        for j in range(k + 1, k + extra):
            tot += mp.exp(-a * (j - c)) * _pmf(n, p, j)
        return mp.log(tot)


def _draws(seed, ns, per_n):
    rng = np.random.default_rng(seed)
    for n in ns:
        for _ in range(per_n):
            m = float(np.exp(rng.uniform(0.0, math.log(30.0))))
            yield n, m / n, float(rng.integers(1, math.ceil(m) + 1)) + 0.5 * float(rng.integers(0, 2))


def test_tail_error_is_the_fixed_slack_below_a_few_million():
    assert T._slack(10 ** 6) == T.ROUND_SLACK
    assert T._slack(4 * 10 ** 6) == T.ROUND_SLACK
    assert T._slack(10 ** 8) > 20 * T.ROUND_SLACK


def test_boost_lower_tails_within_the_error_model():
    worst = {}
    for n, p, c in _draws(20261205, [10 ** 6, 10 ** 7, 10 ** 8, 10 ** 9], 25):
        k = math.ceil(c) - 1
        got = float(T._cdf(np.array([float(k)]), n, np.array([p]))[0])
        err = abs(float(mp.mpf(got) / exact_cdf(n, p, k) - 1))
        assert err <= T.tail_error(n), (n, p, k, err)
        worst[n] = max(worst.get(n, 0.0), err)
    # the model is needed: at n = 1e9 the error is well above the fixed slack (it is about n u / 2 there)
    assert worst[10 ** 9] > 10 * T.ROUND_SLACK


@pytest.mark.parametrize("n", [10 ** 7, 10 ** 8, 10 ** 9])
def test_partial_moment_bounds_bracket_the_exact_values(n):
    for _, p, c in _draws(n % 9973, [n], 15):
        pa, ca = np.array([p]), np.array([c])
        low = float(T.lower_first_moment_low(n, pa, ca)[0])
        assert low <= exact_lower_hinge(n, p, c), (n, p, c)
        up1, _ = T.upper_moments(n, pa, ca)
        assert float(up1[0]) >= exact_upper_hinge(n, p, c), (n, p, c)
        low_up = float(T.upper_first_moment_low(n, pa, ca)[0])
        assert low_up <= exact_upper_hinge(n, p, c), (n, p, c)


def test_the_fixed_slack_would_have_failed_at_large_n(monkeypatch):
    """The check above can fail: with the slack fixed at 1e-9 some lower bound is above its exact value."""
    monkeypatch.setattr(T, "_slack", lambda n: T.ROUND_SLACK)
    above = 0
    for n, p, c in _draws(1, [10 ** 8, 10 ** 9], 30):
        low = float(T.lower_first_moment_low(n, np.array([p]), np.array([c]))[0])
        above += low > exact_lower_hinge(n, p, c)
    assert above > 0


@pytest.mark.parametrize("n", [10 ** 6, 10 ** 8, 10 ** 9])
def test_log_mgf_hinge_is_above_the_exact_value(n):
    for _, p, c in _draws(n % 7919 + 3, [n], 8):
        for a in (0.05, 1.0, 4.0):
            got = float(T.log_mgf_hinge(n, np.array([p]), np.array([c]), a)[0])
            assert got >= exact_log_mgf_hinge(n, p, c, a), (n, p, c, a)


def test_the_fixed_log_slack_would_have_failed_at_large_n(monkeypatch):
    """With the log mgf widened by 1e-9 only, some value is below its exact value at n = 1e8, 1e9."""
    monkeypatch.setattr(T, "tail_error", lambda n: 0.0)
    monkeypatch.setattr(T, "UNIT_ROUNDOFF", 0.0)
    below = 0
    for n, p, c in _draws(5, [10 ** 8, 10 ** 9], 6):
        for a in (0.05, 1.0, 4.0):
            below += float(T.log_mgf_hinge(n, np.array([p]), np.array([c]), a)[0]) < exact_log_mgf_hinge(n, p, c, a)
    assert below > 0


def test_searches_not_run_beyond_search_max_n():
    """Beyond n = 1e12 the projected searches are not run (a tail costs up to 0.5 ms there and its allowance exceeds
    4e-4 of every moment; at n = 1e15, ε = 1e-3, d = 1000 one search took over a minute): NaN at once, as below the
    useful range."""
    import time

    from boundcalc.mechanisms import subset_tail as ST

    t = time.process_time()
    for route, loss in (("max", "l2sq"), ("threshold", "l2sq"), ("threshold", "l1")):
        v, s, _ = ST._search(route, 10**15, 1e-3, 1000, loss)
        assert math.isnan(v) and s == 0
    assert time.process_time() - t < 1.0
    assert ST.SEARCH_MAX_N == 10**12
