"""The pruned search over the cells of the Gaussian threshold scheme's certified table
(mechanisms.local_scalar._CellSearch, docs/problems/gaussian.md) against the full table it replaces: the same value,
λ and θ* bit for bit, and every group bound above the exact sums of its cells."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from boundcalc.core.distributions import binom_pmf, norm_cdf
from boundcalc.mechanisms import local_scalar as LS

# ----------------------------------------------------------------------------- reference: the table before the search
# A copy of threshold_worst_risk as it was before the pruned search (every cell's sum computed), kept here so that the
# module's own fallback (_threshold_table_full) is not the only witness.

_CELLS, _BLOCK_REF = 1000, 25


def _ref_grid(m, eps, b):
    q = 1.0 / (1.0 + math.exp(-eps))
    th = np.linspace(0.0, b, _CELLS + 1)
    p = (1 - q) + (2 * q - 1) * norm_cdf(th)
    W = 7.0 * math.sqrt(m) + 1.0
    tail = 4 * b * b * 2 * math.exp(-2 * W * W / m)
    lams = tuple(np.linspace(0.0, 1.0, 21)) if m <= 100 else tuple(np.linspace(0.0, 1.0, 21))[-5:]
    return th, p, W, tail, lams


def _ref_sums(m, eps, b, th, p, W, lams, c0, c1):
    k = np.arange(max(0, math.floor(m * p[c0] - W)), min(m, math.ceil(m * p[c1] + W)) + 1)
    pa, pb = p[c0:c1, None], p[c0 + 1:c1 + 1, None]
    wmax = binom_pmf(k[None, :], m, np.clip(k[None, :] / m, pa, pb))
    g1 = LS.threshold_estimate(k, m, eps, 1.0, b)
    ta, tb = th[c0:c1, None], th[c0 + 1:c1 + 1, None]
    for lam in lams:
        g = lam * g1[None, :]
        e2 = np.maximum((g - ta) ** 2, (g - tb) ** 2)
        yield np.sum(wmax * e2, axis=1)


def _ref_all_sums(m, eps, b):
    """Every cell's sum, (λ, cell), as the table computes them (block by block)."""
    th, p, W, tail, lams = _ref_grid(m, eps, b)
    out = np.zeros((len(lams), _CELLS))
    for c0 in range(0, _CELLS, _BLOCK_REF):
        for i, sums in enumerate(_ref_sums(m, eps, b, th, p, W, lams, c0, min(c0 + _BLOCK_REF, _CELLS))):
            out[i, c0:c0 + len(sums)] = sums
    return out, lams


def _sq_up(b):
    """b² rounded up to a float (the θ̂ = 0 candidate; b * b rounds to nearest)."""
    from fractions import Fraction

    y = b * b
    return math.nextafter(y, math.inf) if Fraction(y) < Fraction(b) ** 2 else y


def _ref_table(m, eps, b):
    m, eps, b = int(m), float(eps), float(b)
    if m <= 0:
        return _sq_up(b), 0.0, b
    closed = LS.threshold_closed_form(m, eps, b)
    if m > 20000:
        return closed, 1.0, b
    th, p, W, tail, lams = _ref_grid(m, eps, b)
    worst, where = np.zeros(len(lams)), np.zeros(len(lams))
    for c0 in range(0, _CELLS, _BLOCK_REF):
        c1 = min(c0 + _BLOCK_REF, _CELLS)
        for i, sums in enumerate(_ref_sums(m, eps, b, th, p, W, lams, c0, c1)):
            if not np.all(np.isfinite(sums)):
                worst[i] = math.inf
                continue
            j = int(np.argmax(sums))
            if sums[j] > worst[i]:
                worst[i], where[i] = float(sums[j]), 0.5 * (th[c0 + j] + th[c0 + j + 1])
    worst = (worst + tail) * (1 + (64.0 + 32.0 * math.sqrt(m)) * 2.0 ** -53)  # the table's widening (its roundings)
    best, lam_best = (closed, 1.0) if closed < _sq_up(b) else (_sq_up(b), 0.0)
    theta_best = b
    for val, lam, at in zip(worst, lams, where):
        if val < best:
            best, lam_best, theta_best = float(val), float(lam), float(at)
    return best, lam_best, theta_best


def _bits(t):
    return tuple(float(x).hex() for x in t)


# ----------------------------------------------------------------------------- points

# profiles with hundreds of cells within 1 % of the maximum (found by scanning b at a few (m, ε))
FLAT = [(20000, 3.0, 0.1), (20000, 1.0, 0.1), (20000, 0.3, 0.3), (3000, 3.0, 0.3), (3000, 0.3, 0.6), (300, 3.0, 0.3)]
EDGES = [(1, 1.0, 1.0), (2, 0.05, 0.5), (7, 12.0, 2.0), (20000, 0.7311, 1.0), (20000, 2.0, 1.0), (19999, 0.01, 5.0),
         (100, 1.0, 1e-3), (101, 1.0, 1.0)]


def _random_points(n, seed):
    rng = np.random.default_rng(seed)
    pts = []
    for _ in range(n):
        m = int(round(math.exp(rng.uniform(0.0, math.log(20000)))))
        pts.append((m, float(math.exp(rng.uniform(math.log(0.02), math.log(8.0)))),
                    float(math.exp(rng.uniform(math.log(0.02), math.log(4.0))))))
    return pts


POINTS = FLAT + EDGES + _random_points(30, 24)


@pytest.mark.parametrize("m, eps, b", POINTS)
def test_search_equals_the_full_table_bit_for_bit(m, eps, b):
    ref = _ref_table(m, eps, b)
    assert _bits(LS.threshold_worst_risk.__wrapped__(m, eps, b)) == _bits(ref)  # the function (no disk cache)
    search = LS._CellSearch(m, eps, b)  # and the search itself, not its fallback
    assert _bits(search.table(LS.threshold_closed_form(m, eps, b))) == _bits(ref)
    assert len(search.exact) <= 12  # few exact cells, flat profiles included


@pytest.mark.parametrize("m", [20001, 54321, 10 ** 6])
def test_beyond_the_exact_range_the_closed_form_as_before(m):
    for eps, b in [(0.5, 1.0), (2.0, 0.3)]:
        assert _bits(LS.threshold_worst_risk.__wrapped__(m, eps, b)) == _bits(_ref_table(m, eps, b))
        assert LS.threshold_scheme(m, eps, b)[2] in (m, 20000)


def test_fallback_to_the_full_table_when_the_search_gives_up(monkeypatch):
    m, eps, b = 3000, 3.0, 0.3
    ref = _ref_table(m, eps, b)
    monkeypatch.setattr(LS, "_SEARCH_MAX_EXACT", 1)
    with pytest.raises(LS._SearchGaveUp):
        LS._CellSearch(m, eps, b).table(LS.threshold_closed_form(m, eps, b))
    assert _bits(LS.threshold_worst_risk.__wrapped__(m, eps, b)) == _bits(ref)


@pytest.mark.parametrize("m, eps, b", [(20000, 0.7311, 1.0), (20000, 3.0, 0.1), (3000, 0.3, 0.6), (431, 2.3, 0.5),
                                       (57, 1.1, 2.0), (3, 0.4, 1.0)])
def test_group_bounds_above_the_exact_sums_of_their_cells(m, eps, b):
    """Every group bound the search may skip with is >= the largest exact sum of its cells (random groups of 1 to 40
    cells, across blocks, random λ); without its margin it is still >= within the float budget, and a single cell's
    bound is its sum up to that budget and the far-count term."""
    sums, lams = _ref_all_sums(m, eps, b)
    search = LS._CellSearch(m, eps, b)
    rng = np.random.default_rng(m)
    for _ in range(6):
        i = int(rng.integers(len(lams)))
        h = int(rng.choice([1, 2, 3, 5, 10, 25, 40]))
        c1 = rng.integers(0, _CELLS, 40)
        c2 = np.minimum(c1 + h, _CELLS)
        u = search.bounds(c1, c2, lams[i])
        smax = np.array([sums[i, a:e].max() for a, e in zip(c1, c2)])
        assert np.all(u >= smax)
        raw = u / (1.0 + LS._SEARCH_MARGIN)
        assert np.all(raw >= smax * (1 - 3e-8))
        if h == 1:
            assert np.all(np.abs(raw - search.far - smax) <= 3e-8 * smax + search.far)


def test_search_bound_at_the_maximum_is_tight():
    """Near the maximum the single-cell bounds separate cells (otherwise the search would evaluate many exactly)."""
    m, eps, b = 20000, 0.7311, 1.0
    sums, lams = _ref_all_sums(m, eps, b)
    search = LS._CellSearch(m, eps, b)
    c = np.arange(_CELLS)
    u = search.bounds(c, c + 1, lams[-1])
    assert int(np.sum(u >= sums[-1].max())) <= 2


@pytest.mark.parametrize("k, p", [(10000, 0.5), (9321, 0.48123), (12500, 0.6307), (19990, 0.99931), (3, 2e-4)])
def test_scipy_binomial_pmf_accuracy_used_in_the_error_budget(k, p):
    """The docstring's error budget takes SciPy's binomial pmf (Boost) to a relative 10⁻¹³ or so at m = 20000."""
    m = 20000
    mpmath.mp.dps = 40
    exact = mpmath.binomial(m, k) * mpmath.mpf(p) ** k * (1 - mpmath.mpf(p)) ** (m - k)
    assert abs(binom_pmf(k, m, p) / float(exact) - 1) < 1e-11
