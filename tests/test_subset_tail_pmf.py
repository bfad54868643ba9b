"""The derived binomial tails of the projected subset-selection bounds (``subset_tail.PMF_TAILS``, off by default):
each derived tail is within TAIL_SLACK/2 (relative) of scipy's own tail, so every partial-moment bound is at least
its plain value (the safe side); a planted error larger than that is seen. Expected values come from scipy's tails
(the plain path), never from the derived ones."""
from __future__ import annotations

import numpy as np
import pytest

from boundcalc.mechanisms import subset_tail as ST

pytestmark = pytest.mark.skipif(ST._BPMF is None, reason="scipy without the binomial pdf ufunc")


def _points():
    rng = np.random.default_rng(12)
    for n in (2, 3, 17, 500, 23457, 174669):
        pi = rng.uniform(0.001, 0.999, 400)
        sd = np.sqrt(n * pi * (1 - pi))
        c = n * pi + sd * rng.uniform(-14, 8, pi.size)
        yield n, pi, np.clip(c, -2.0, n + 2.0)


def _tails(monkeypatch, on):
    monkeypatch.setattr(ST, "PMF_TAILS", on)
    out = []
    for n, pi, c in _points():
        out.append((ST._upper_tails(n, pi, np.floor(c), 2), ST._lower_tails(n, pi, np.ceil(c) - 1, 2)))
    return out


def test_derived_tails_within_half_the_slack(monkeypatch):
    plain, derived = _tails(monkeypatch, False), _tails(monkeypatch, True)
    for (pu, pl), (du, dl) in zip(plain, derived):
        for a, b in zip(pu + pl, du + dl):
            assert np.all(np.abs(b - a) <= 0.5 * ST.TAIL_SLACK * np.maximum(a, b) + 1e-300)


def test_derived_bounds_on_the_safe_side(monkeypatch):
    for n, pi, c in _points():
        monkeypatch.setattr(ST, "PMF_TAILS", False)
        plain = ST.upper_moments(n, pi, c), ST.upper_first_moment_low(n, pi, c), ST.lower_first_moment_low(n, pi, c)
        monkeypatch.setattr(ST, "PMF_TAILS", True)
        new = ST.upper_moments(n, pi, c), ST.upper_first_moment_low(n, pi, c), ST.lower_first_moment_low(n, pi, c)
        assert np.all(new[0][0] >= plain[0][0]) and np.all(new[0][1] >= plain[0][1])  # uppers: not below
        assert np.all(new[1] <= plain[1]) and np.all(new[2] <= plain[2])  # lowers: not above


def test_planted_tail_error_is_seen(monkeypatch):
    real = ST._pmf
    monkeypatch.setattr(ST, "_pmf", lambda k, n, p: real(k, n, p) * (1 + 1e-9))
    plain, derived = _tails(monkeypatch, False), _tails(monkeypatch, True)
    bad = 0
    for (pu, pl), (du, dl) in zip(plain, derived):
        for a, b in zip(pu + pl, du + dl):
            bad += int(np.sum(np.abs(b - a) > 0.5 * ST.TAIL_SLACK * np.maximum(a, b) + 1e-300))
    assert bad > 0
