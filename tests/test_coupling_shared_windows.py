"""CouplingMin's window sum computes each binomial pmf window and each δ_h row once per distinct (n, p, ε, δ) and
keeps pmf windows between calls; ThresholdCoupling computes the tails of its z-grid thresholds once per distinct
(n, p, ε, δ) and the knapsack value only where some δ is 0. These are speed-ups only: the values must be those
of the code before them (``tests/_group_coupling_reference.py``, kept verbatim), bit for bit, at random points
and on the solver's grids of the mean problem's bounds."""
import math
import os
import sys

import numpy as np
import pytest

from boundcalc.core import symbolic as S
from boundcalc.methods import group_coupling as gc

sys.path.insert(0, os.path.dirname(__file__))
import _group_coupling_reference as ref  # noqa: E402


def _bits(x):
    return np.asarray(x, dtype=float).view(np.int64)


def _same(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and np.array_equal(_bits(a), _bits(b))


def _window_args(n, p, eps, loga, delta):
    """The arguments :func:`gc._coupling_rows` passes to the window sum (its direct-form points)."""
    n, p, eps, loga, delta = (np.array(np.broadcast_to(np.asarray(x, float), np.broadcast_shapes(
        *(np.shape(y) for y in (n, p, eps, loga, delta))))).ravel() for x in (n, p, eps, loga, delta))
    with np.errstate(all="ignore"):
        dp = delta / np.expm1(eps)
        log_apd = np.where(dp > 0, np.logaddexp(loga, np.log(np.where(dp > 0, dp, 1.0))), loga)
        j = np.clip(np.ceil((np.log1p(dp) - log_apd) / eps - 1e-12), 0.0, n + 1.0) - 1.0
        lo, hi = gc._window(n, p, j)
    d = (hi - lo + 1.0 <= gc.DIRECT_TERMS) | (hi < lo)
    return n[d], p[d], eps[d], loga[d], delta[d], lo[d], hi[d]


def _random_points(rng, size):
    """A batch in the solver's layout: a few (n, p, ε, δ) rows, each repeated over several log a (and shuffled
    half the time), with pure and approximate points, tiny and large n and the edges p = 0 and p = 1."""
    k = int(rng.integers(1, 12))
    n = np.floor(10 ** rng.uniform(0, 6, k))
    p = 10 ** rng.uniform(-7, 0, k)
    p[rng.random(k) < 0.1] = 0.0
    p[rng.random(k) < 0.1] = 1.0
    eps = 10 ** rng.uniform(-2, 1, k)
    delta = np.where(rng.random(k) < 0.4, 0.0, 10 ** rng.uniform(-10, -1, k))
    idx = rng.integers(0, k, size)
    if rng.random() < 0.5:
        idx = np.sort(idx)
    loga = -(10 ** rng.uniform(-3, 2, size))
    if rng.random() < 0.1:
        loga[0] = np.nan
    return n[idx], p[idx], eps[idx], loga, delta[idx]


def test_window_sum_bit_identical_at_random_points():
    rng = np.random.default_rng(24)
    compared = 0
    for it in range(150):
        args = _window_args(*_random_points(rng, int(rng.integers(1, 400))))
        if it % 3 == 0:
            gc._PMF_MEMO.clear()  # fresh windows as well as kept ones
        want = ref._gap_direct(*args)
        for _ in range(2):  # computed, then read from the kept windows
            got = gc._gap_direct(*args)
            assert _same(got[0], want[0]) and _same(got[1], want[1])
        compared += args[0].size
    assert compared > 5000


def test_kept_window_shorter_than_asked_is_recomputed():
    gc._PMF_MEMO.clear()
    n, p = np.full(40, 200.0), np.full(40, 0.05)
    eps, delta = np.full(40, 0.5), np.full(40, 1e-6)
    short = _window_args(n, p, eps, np.full(40, -1.0), delta)
    wide = _window_args(n, p, eps, np.linspace(-30.0, -1.0, 40), delta)
    assert np.max(wide[6] - wide[5]) > np.max(short[6] - short[5])
    for args in (short, wide, short):
        want, got = ref._gap_direct(*args), gc._gap_direct(*args)
        assert _same(got[0], want[0]) and _same(got[1], want[1])


def test_threshold_coupling_bit_identical_at_random_points():
    rng = np.random.default_rng(2024)
    for _ in range(150):
        n, p, eps, loga, delta = _random_points(rng, int(rng.integers(1, 300)))
        if rng.random() < 0.3:
            delta = np.zeros_like(delta)  # pure DP: the knapsack path
        if rng.random() < 0.3:  # scalars broadcast against the grid, as a bound's expression passes them
            n, eps, delta = float(n[0]), float(eps[0]), float(delta[0])
        got = gc._threshold_coupling_numpy(n, p, eps, loga, delta)
        assert _same(got, ref._threshold_coupling_numpy(n, p, eps, loga, delta))


@pytest.mark.parametrize("point", [(100.0, 0.1, 1.0, -3.0, 1e-6), (1e6, 1e-3, 0.5, -2.0, 0.0),
                                   (50.0, 0.5, 0.1, math.log(0.3), 0.01), (7.0, 1.0, 2.0, -1.0, 1e-3)])
def test_threshold_coupling_scalar(point):
    got, want = gc._threshold_coupling_numpy(*point), ref._threshold_coupling_numpy(*point)
    assert type(got) is type(want) and _same(got, want)


@pytest.mark.parametrize("privacy,d,n", [("approx", 10, 4519), ("approx", 1, 777), ("pure", 10, 1237)])
def test_solver_grids_of_mean_bounds(monkeypatch, privacy, d, n):
    """Every call the solver makes while optimising the mean problem's lower bounds, compared with the reference
    on the same arguments."""
    from boundcalc.app import api
    from boundcalc.core.solver import optimise

    calls = {"gap": 0, "thr": 0}
    new_gap, new_thr = gc._gap_direct, gc._threshold_coupling_numpy

    def gap(*args):
        got, want = new_gap(*args), ref._gap_direct(*args)
        assert _same(got[0], want[0]) and _same(got[1], want[1])
        calls["gap"] += 1
        return got

    def thr(*args):
        got, want = new_thr(*args), ref._threshold_coupling_numpy(*args)
        assert _same(got, want)
        calls["thr"] += 1
        return got

    monkeypatch.setattr(gc, "_gap_direct", gap)
    monkeypatch.setitem(S.NUMPY_IMPL, "ThresholdCoupling", thr)
    gc._ROWS_MEMO.clear()
    gc._PMF_MEMO.clear()
    entry, values = api.resolve("mean", privacy, {"d": d, "n": n})
    v = entry.with_derived(values)
    for b in entry.bounds(v):
        if b.side == "lower" and b.free and not b.holds(v):
            optimise(b, v)
    assert calls["gap"] > 0 and (calls["thr"] > 0 or d == 1)  # (no dependent-count bound at d = 1)
