"""CouplingMin's numpy code evaluates each distinct point once and each binomial tail only where the form in
use reads it (a speed-up of the mean problem's tilted sphere-cap bounds); the values must be those of the
straightforward evaluation of every point, bit for bit, at random batches that mix the three forms (direct
window sum, series, tilted binomial), repeated points, scalars and arguments that are not numbers."""
import math

import numpy as np
import pytest

from boundcalc.methods import group_coupling as gc


def _reference_coupling_min(n, p, eps, loga, delta):
    """CouplingMin as evaluated before the distinct-point evaluation: every point of the broadcast batch, and
    every binomial tail at every point (the reference the faster code must match bit for bit)."""
    from scipy import special

    from boundcalc.core.symbolic import _binom_sf

    shape = np.broadcast_shapes(*(np.shape(x) for x in (n, p, eps, loga, delta)))
    n, p, eps, loga, delta = (np.array(np.broadcast_to(np.asarray(x, float), shape)).ravel()
                              for x in (n, p, eps, loga, delta))
    with np.errstate(all="ignore"):
        em1 = np.expm1(eps)
        dp = delta / em1
        log_apd = np.where(dp > 0, np.logaddexp(loga, np.log(np.where(dp > 0, dp, 1.0))), loga)
        x = (np.log1p(dp) - log_apd) / eps
        h0 = np.clip(np.ceil(x - 1e-12), 0.0, n + 1.0)
        j = h0 - 1.0
        mu = n * p
        lo, hi = gc._window(n, p, j)
        direct = (hi - lo + 1.0 <= gc.DIRECT_TERMS) | (hi < lo)
        series = ~direct & (em1 * mu <= gc.SERIES_MAX_RATE)
        tilted = ~direct & ~series
        out = np.ones(n.shape)
        if direct.any():
            d = direct
            g, hit = gc._gap_direct(n[d], p[d], eps[d], loga[d], delta[d], lo[d], hi[d])
            below = np.where(lo[d] >= 1, special.betaincc(np.maximum(lo[d], 1.0), n[d] - lo[d] + 1, p[d]), 0.0)
            above = np.where(hi[d] >= n[d], 0.0, _binom_sf(np.maximum(hi[d], lo[d] - 1), n[d], p[d]))
            out[d] = np.minimum(np.nextafter(1.0 - g, 2.0), (hit + (below + above) * (1 + gc.TAIL_REL_ERR)) * (1 + 1e-15))
        inside = (j >= 0) & (j < n)
        jj = np.where(inside, j, 0.0)
        sf = np.where(j < 0, 1.0, np.where(j >= n, 0.0, special.betainc(jj + 1, n - jj, p)))  # P(H > j)
        cdf = np.where(j < 0, 0.0, np.where(j >= n, 1.0, special.betaincc(jj + 1, n - jj, p)))  # P(H <= j)
        a = np.exp(loga)
        if series.any():
            s = series
            ns, ps, js, es = n[s], p[s], j[s], em1[s]
            log_c = np.zeros(ns.shape)  # log C(n,k) p^k, built as a running sum
            dsum = np.zeros(ns.shape)
            last = np.zeros(ns.shape)
            for kk in range(1, gc.SERIES_TERMS + 1):
                log_c = log_c + np.log((ns - kk + 1) * ps / kk)
                jk = js - kk
                ok = (jk >= 0) & (kk <= ns)
                tail = np.where(ok, special.betaincc(np.maximum(jk, 0.0) + 1, np.maximum(ns - js, 1.0), ps), 0.0)
                tail = np.where(ok & (jk >= ns - kk), 1.0, tail)
                last = np.where(ok, np.exp(kk * np.log(es) + log_c) * tail, 0.0)
                dsum = dsum + last
            r = es * np.maximum(ns - gc.SERIES_TERMS, 0.0) * ps / (gc.SERIES_TERMS + 1)
            rest = np.where(r < 1, last * r / (1 - r), np.inf)
            val = sf[s] + a[s] * cdf[s] + (a[s] + dp[s]) * (dsum + rest)
            val = np.where(dp[s] > 0, val, sf[s] + a[s] * (cdf[s] + dsum + rest))  # δ = 0: no 0·inf
            out[s] = val * (1 + gc.TAIL_REL_ERR) + 1e-300
        if tilted.any():
            t = tilted
            ns, ps, js, ems = n[t], p[t], j[t], em1[t]
            log_g = ns * np.log1p(ps * ems)
            pt = ps * np.exp(eps[t]) / (1 + ps * ems)  # p', accurate where small
            qt = (1 - ps) / (1 + ps * ems)  # 1 - p', accurate where p' is near 1
            jt = np.clip(js, 0.0, np.maximum(ns - 1, 0.0))
            cdf_t = np.where(pt <= 0.5, special.betaincc(jt + 1, ns - jt, pt), special.betainc(ns - jt, jt + 1, qt))
            cdf_t = np.where(js < 0, 0.0, np.where(js >= ns, 1.0, cdf_t))  # P(H' <= j)
            up = np.exp(log_apd[t] + log_g + np.log(cdf_t))  # (a + δ') G P(H' <= j)
            dcdf = np.where(dp[t] > 0, dp[t] * cdf[t], 0.0)
            mid = up - dcdf
            bad = ~np.isfinite(mid) | (cdf_t < 1e-290)
            margin = gc.TAIL_REL_ERR * (sf[t] + up + dcdf)
            mid = np.where(bad, cdf[t], np.clip(mid + margin, 0.0, cdf[t] * (1 + gc.TAIL_REL_ERR)))
            out[t] = (sf[t] + mid) * (1 + 1e-15)
    return np.clip(out, 0.0, 1.0).reshape(shape) if shape else float(np.clip(out, 0.0, 1.0)[0])


def _bits(x):
    return np.asarray(x, dtype=float).view(np.int64)


def _random_batch(rng):
    size = int(rng.integers(1, 300))
    n = np.floor(10 ** rng.uniform(0, 9, size))
    if rng.random() < 0.3:
        n = n[:1]
    p = 10 ** rng.uniform(-9, 0, size) * rng.choice([1.0, 0.999], size)
    eps = 10 ** rng.uniform(-3, 1, size if rng.random() < 0.5 else 1)
    loga = -(10 ** rng.uniform(-3, 2.5, size))
    delta = np.where(rng.random(size) < 0.3, 0.0, 10 ** rng.uniform(-12, -1, size))
    if rng.random() < 0.5:  # repeated points, as on a solver grid whose other axis the function ignores
        idx = rng.integers(0, max(1, size // 4), size)
        p, loga = p[idx], loga[idx]
    if rng.random() < 0.1:
        loga[0] = np.nan
    return n, p, eps, loga, delta


def test_distinct_point_evaluation_is_bit_identical():
    rng = np.random.default_rng(20240524)
    forms = set()
    for _ in range(120):
        args = _random_batch(rng)
        want = _reference_coupling_min(*args)
        got = gc._coupling_min_numpy(*args)
        assert np.shape(got) == np.shape(want)
        assert np.array_equal(_bits(got), _bits(want))
        again = gc._coupling_min_numpy(*args)  # the kept values of the same batch
        assert np.array_equal(_bits(again), _bits(want))
        n, p, eps, _, _ = np.broadcast_arrays(*args)
        mu = n * p
        forms.update(["small" if w <= gc.DIRECT_TERMS else ("series" if r <= gc.SERIES_MAX_RATE else "wide")
                      for w, r in zip(20 * np.sqrt(mu) + 21, np.expm1(eps) * mu)])
    assert forms == {"small", "series", "wide"}


@pytest.mark.parametrize("point", [(100, 0.1, 1.0, -3.0, 1e-6), (1e6, 1e-3, 0.5, -2.0, 0.0),
                                   (1e9, 1e-5, 2.0, -20.0, 1e-9), (50, 0.5, 0.1, math.log(0.3), 0.01)])
def test_scalar_point(point):
    got, want = gc._coupling_min_numpy(*point), _reference_coupling_min(*point)
    assert type(got) is float and _bits(got) == _bits(want)


def test_grid_of_repeated_points_matches_full_batch():
    p = np.repeat(np.geomspace(1e-6, 0.5, 64), 64)  # a (p, tau) grid where tau does not enter
    args = (12345.0, p, 0.77, np.full(p.shape, math.log(0.5)), 1e-6)
    assert np.array_equal(_bits(gc._coupling_min_numpy(*args)), _bits(_reference_coupling_min(*args)))


@pytest.mark.parametrize("d", [1.0, 3.0, 50.0])
@pytest.mark.parametrize("p_axis", [0, 1])
def test_solver_grids_match_full_batch(d, p_axis):
    """The arguments as a sphere-cap bound passes them on the solver's grids: p and the cap's log area read from
    strided columns of the rows of ``solver._product`` (p first or last axis; at d = 1 every cap is 1/2, so the
    distinct points are p's), at a first level and a zoom level."""
    from boundcalc.core import solver
    from boundcalc.methods import sphere_cap as sc

    log_fp = type("FP", (), {"integer": False, "log": True})()
    lin_fp = type("FP", (), {"integer": False, "log": False})()
    for npts, (lo, hi) in [(64, (1e-4, 0.999)), (32, (0.31, 0.47))]:
        axes = [solver._axis(1e-7, 1.0, log_fp, npts), solver._axis(lo, hi, lin_fp, npts)]
        grid = solver._product(axes if p_axis == 0 else axes[::-1])
        p, tau = grid[:, p_axis], grid[:, 1 - p_axis]
        for n, eps, delta in [(12345.0, 0.77, 0.0), (1e6, 2.5, 1e-6), (300.0, 0.1, 1e-9)]:
            loga = sc._log_cap_numpy(d, tau * math.sqrt(5 / 12))
            args = (n, p, eps, loga, delta)
            assert np.array_equal(_bits(gc._coupling_min_numpy(*args)), _bits(_reference_coupling_min(*args)))
