"""LogSphereCap's numpy code evaluates each distinct point (d, τ) once and keeps the values of its last point sets
(the solver's grid reads τ from one column, the layered bounds take it at 12 fixed multiples, and the sphere-cap
bounds share their first grid); the values must be those of the straightforward evaluation of every point, bit
for bit: on the solver's own grids (strided columns, both grid layouts), at random batches with repeated points,
radii above 1, zeros of both signs and arguments that are not numbers, and where the series form replaces an
underflowing incomplete beta (large d). Also the contract of ``group_coupling.distinct_points``."""
import math

import numpy as np
import pytest

from boundcalc.core import solver
from boundcalc.methods import group_coupling as gc
from boundcalc.methods import sphere_cap as sc


def _reference_log_cap(d, t):
    """LogSphereCap as evaluated before the distinct-point evaluation (every point of the broadcast batch): the
    reference the faster code must match bit for bit."""
    from scipy import special

    d, t = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(t, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        direct = np.log(sc.cap_value(d, t))
        small = (direct < -600) & (d > 1.5) & (t <= 1.0)
        if not np.any(small):  # the (slow) hypergeometric series only where betainc underflows
            return direct
        ds, ts = d[small], t[small]
        a = np.maximum((ds - 1) / 2, 0.25)
        x = np.clip(ts, 1e-300, 1.0 - 1e-16) ** 2
        series = (a * np.log(x) + 0.5 * np.log1p(-x) - np.log(a) - special.betaln(a, 0.5)
                  + np.log(special.hyp2f1(a + 0.5, 1.0, a + 1.0, x)) + np.log(0.5))
    out = np.array(direct, dtype=float, copy=True)
    out[small] = series
    return out


def _bits(x):
    return np.asarray(x, dtype=float).view(np.int64)


def _same(got, want):
    assert np.shape(got) == np.shape(want)
    assert np.array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("d", [1.0, 2.0, 5.0, 100.0, 3000.0, 1e5])
@pytest.mark.parametrize("tau_axis", [0, 1])
def test_solver_grids_are_bit_identical(d, tau_axis):
    """The grid levels of a (p, τ) search as the solver builds them (rows of ``_product``, τ a strided column,
    first or last axis), τ scaled by sqrt(i/12) as in the layered bounds, and the zoom levels' smaller grids."""
    fp_log = type("FP", (), {"integer": False, "log": True})()
    fp_lin = type("FP", (), {"integer": False, "log": False})()
    rng = np.random.default_rng(int(d) + tau_axis)
    for npts, (lo, hi) in [(64, (1e-4, 0.999)), (32, tuple(np.sort(rng.uniform(0, 1, 2))))]:
        p_axis = solver._axis(1e-6, 1.0, fp_log, npts)
        t_axis = solver._axis(lo, hi, fp_lin, npts)
        grid = solver._product([t_axis, p_axis] if tau_axis == 0 else [p_axis, t_axis])
        tau = grid[:, tau_axis]
        for i in (1, 5, 12):
            t = tau if i == 12 else tau * math.sqrt(i / 12)
            for _ in range(2):  # the second time from the kept values
                _same(sc._log_cap_numpy(d, t), _reference_log_cap(d, t))


def test_random_batches_are_bit_identical():
    rng = np.random.default_rng(20240524)
    for _ in range(150):
        size = int(rng.integers(1, 400))
        t = rng.uniform(0.0, 1.2, size)
        if rng.random() < 0.5:
            t = t[rng.integers(0, max(1, size // 5), size)]  # repeated points, not in runs
        if rng.random() < 0.3:
            t = np.sort(t)  # runs
        if size > 3:
            t[rng.integers(0, size, 3)] = rng.choice([0.0, -0.0, np.nan, 1.0, 1e-200])
        if rng.random() < 0.4:
            d = np.floor(10 ** rng.uniform(0, 4.5, size))
            d = d[rng.integers(0, max(1, size // 3), size)]
        else:
            d = float(np.floor(10 ** rng.uniform(0, 4.5)))
        for _ in range(2):
            _same(sc._log_cap_numpy(d, t), _reference_log_cap(d, t))
        # broadcast shapes: a column of d against a row of τ
        dd = np.asarray(d, float).reshape(-1)[:7].reshape(-1, 1)
        _same(sc._log_cap_numpy(dd, t[:50]), _reference_log_cap(dd, t[:50]))


def test_dimension_one_values():
    """d = 1 (the cap is 1/2, or 1 for τ > 1) on grid-sized batches with radii above 1, nan and signed zeros."""
    t = np.repeat(np.linspace(0.0, 1.3, 64), 3)
    t[[0, 5, 70]] = [-0.0, np.nan, np.inf]
    for d in (1, 1.0, np.array(1.0), np.array([1.0]), 0.5):
        _same(sc._log_cap_numpy(d, t), _reference_log_cap(d, t))
        _same(sc._log_cap_numpy(d, t[::3]), _reference_log_cap(d, t[::3]))  # a strided view


def test_scalars_and_small_batches():
    for d, t in [(1, 0.5), (2, 0.3), (1000, 0.1), (5, 1.5), (3.0, np.array([0.2, 0.2, 0.7]))]:
        _same(sc._log_cap_numpy(d, t), _reference_log_cap(d, t))


def test_series_form_points_are_bit_identical():
    """Large d and small τ, where betainc underflows and the hypergeometric series is used, mixed with points
    where it is not, on a grid with repeated τ."""
    t = np.repeat(np.geomspace(0.01, 0.99, 40), 16)
    for d in (800.0, 5000.0, 2e5):
        got, want = sc._log_cap_numpy(d, t), _reference_log_cap(d, t)
        assert (want < -600).any() and (want > -600).any() or d > 1e5
        _same(got, want)


def _check_distinct(cols, size):
    found = gc.distinct_points(cols, size)
    bits = np.stack([_bits(np.broadcast_to(c, (size,))) for c in cols], axis=1)
    n_distinct = len(np.unique(bits, axis=0))
    if found is None:
        return n_distinct
    first, inverse = found
    assert len(inverse) == size
    assert np.array_equal(bits[first][inverse], bits)  # every point is its representative, bit for bit
    assert len(np.unique(bits[first], axis=0)) == n_distinct
    return len(first)


def test_distinct_points_contract():
    rng = np.random.default_rng(7)
    a, b = np.geomspace(1e-3, 0.5, 64), np.linspace(0.0, 1.0, 64)
    grid = solver._product([a, b])
    assert _check_distinct([grid[:, 0]], 4096) == 64  # runs
    assert _check_distinct([grid[:, 1]], 4096) == 64  # a period
    assert _check_distinct([grid[:, 0], np.full(4096, 0.3)], 4096) == 64
    assert gc.distinct_points([grid[:, 0], grid[:, 1]], 4096) is None  # all distinct
    assert _check_distinct([np.array([0.0, -0.0] * 8)], 16) == 2  # signed zeros differ
    for _ in range(200):
        size = int(rng.integers(1, 300))
        cols = []
        for _ in range(int(rng.integers(1, 4))):
            c = rng.choice(rng.normal(size=int(rng.integers(1, 20))), size)
            if rng.random() < 0.3:
                c = np.sort(c)
            if rng.random() < 0.2:
                c = np.tile(c[: max(1, size // 4)], 4)[:size]
                c = np.concatenate([c, np.zeros(size - len(c))]) if len(c) < size else c
            if rng.random() < 0.1:
                c[0] = np.nan
            cols.append(c)
        _check_distinct(cols, size)
