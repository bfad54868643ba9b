"""The grid search of :func:`boundcalc.core.solver.optimise` against the plain version it replaced, bit for bit.

``optimise`` builds its axes with a lean copy of numpy's ``linspace``/``geomspace`` steps, evaluates the grid
through :meth:`Bound.grid_function` (what does not depend on the free parameters looked up once per search) and
skips numpy's argument handling. None of that may move a grid point or a value: the reference below is the
search as it was written before (numpy's own ``geomspace``, ``linspace``, ``unique`` and ``meshgrid``, one
:meth:`Bound.evaluate` per level), and every bound of every pair of ``tests/cases.py`` must give the same
optimum (value and free parameters, compared as float bits) at the case's values and at a few other points.
"""
from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from boundcalc.app import api
from boundcalc.core import solver
from boundcalc.core.solver import GRID, ZOOMS, Solution

from cases import CASES, PAIRS, ids  # tests/cases.py: the parameter table


# ---------------------------------------------------------------------- the reference search (before the rewrite)

def _ref_axis(lo, hi, fp, npts):
    if fp.integer:
        lo_i, hi_i = math.ceil(lo), math.floor(hi)
        if hi_i < lo_i:
            return np.array([], float)
        if hi_i - lo_i + 1 <= npts:
            return np.arange(lo_i, hi_i + 1, dtype=float)
        if fp.log:
            start = max(lo_i, 1)
            pts = np.unique(np.round(np.geomspace(start, hi_i, npts)))
            if lo_i < start:
                pts = np.concatenate([[float(lo_i)], pts])
            return pts
        return np.unique(np.round(np.linspace(lo_i, hi_i, npts)))
    if fp.log and lo > 0:
        return np.geomspace(lo, hi, npts)
    return np.linspace(lo, hi, npts)


def _ref_product(axes) -> np.ndarray:
    if len(axes) == 1:
        return np.asarray(axes[0], dtype=float).reshape(-1, 1)
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([np.asarray(m, dtype=float).ravel() for m in mesh], axis=1)


def reference_optimise(bound, values: dict) -> Solution:
    sign = 1.0 if bound.side == "lower" else -1.0
    if not bound.free:
        v = float(bound.evaluate(values))
        return Solution(v if math.isfinite(v) else math.nan, {})
    ranges = []
    for fp in bound.free:
        lo, hi = float(fp.low(values)), float(fp.high(values))
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
            return Solution(math.nan, {})
        ranges.append((lo, hi))
    dim = len(bound.free)
    npts = GRID.get(dim, 8)

    def score(points: np.ndarray) -> np.ndarray:
        free = {fp.name: points[:, j] for j, fp in enumerate(bound.free)}
        vals = np.broadcast_to(bound.evaluate(values, free, fallback=False), (points.shape[0],))
        out = sign * vals
        return np.where(np.isfinite(out), out, -np.inf)

    axes = [_ref_axis(lo, hi, fp, npts) for (lo, hi), fp in zip(ranges, bound.free)]
    if any(len(a) == 0 for a in axes):
        return Solution(math.nan, {})
    best_pt, best_sc = None, -np.inf
    for _ in range(ZOOMS + 1):
        grid = _ref_product(axes)
        sc = score(grid)
        i = int(np.argmax(sc))
        if sc[i] > best_sc:
            best_sc, best_pt = sc[i], grid[i].copy()
        if best_pt is None:
            break
        new_axes = []
        for j, (a, fp) in enumerate(zip(axes, bound.free)):
            k = int(np.searchsorted(a, best_pt[j]))
            k = min(max(k, 0), len(a) - 1)
            lo = a[max(k - 1, 0)]
            hi = a[min(k + 1, len(a) - 1)]
            new_axes.append(_ref_axis(lo, hi, fp, max(npts // 2, 5)) if hi > lo else np.array([best_pt[j]]))
        axes = new_axes
    if best_pt is None or not np.isfinite(best_sc):
        return Solution(math.nan, {})
    free = {fp.name: (int(round(x)) if fp.integer else float(x)) for fp, x in zip(bound.free, best_pt)}
    return Solution(float(sign * best_sc), free)


# ---------------------------------------------------------------------- comparisons

def _bits(x) -> str:
    """A float's exact bits (every NaN the same), or an int as itself."""
    if isinstance(x, int):
        return f"int {x}"
    return "nan" if math.isnan(x) else struct.pack("<d", x).hex()


def _same(a: Solution, b: Solution) -> bool:
    return (_bits(a.value) == _bits(b.value) and list(a.free) == list(b.free)
            and all(_bits(a.free[k]) == _bits(b.free[k]) and type(a.free[k]) is type(b.free[k]) for k in a.free))


def _points(problem, privacy):
    """The case's values, a larger n with a smaller level, and a smaller n with a larger level."""
    base = dict(CASES[problem, privacy])
    level = "alpha" if "alpha" in base else ("eps" if "eps" in base else None)
    pts = [base, {**base, "n": base["n"] * 37 + 11}, {**base, "n": max(base["n"] // 3, 20)}]
    if level is not None:
        pts[1][level] = base[level] * 0.37
        pts[2][level] = base[level] * (1.9 if level == "eps" else 1.3)
    return pts


@pytest.mark.parametrize("problem,privacy", PAIRS, ids=ids())
def test_optimise_matches_the_reference_search_bit_for_bit(problem, privacy):
    compared = 0
    for given in _points(problem, privacy):
        entry, values = api.resolve(problem, privacy, given)
        v = entry.with_derived(values)
        for b in entry.bounds(v):
            if not b.free or b.holds(v):
                continue
            new, old = solver.optimise(b, v), reference_optimise(b, v)
            assert _same(new, old), (b.name, given, new, old)
            compared += 1
    if not compared:
        pytest.skip(f"{problem}/{privacy}: no bound with free parameters")


@pytest.mark.parametrize("lo,hi,num", [(5e-8, 1.0, 64), (1e-3, 1.0, 32), (3.16e-6, 0.499999999, 400),
                                       (0.7, 0.7, 5), (1e-6, 1e12, 22), (2.5, 2.5000000000000004, 11)])
def test_lean_axes_are_numpys(lo, hi, num):
    rng = np.random.default_rng(7)
    for _ in range(200):
        a, b = sorted((lo * math.exp(rng.uniform(0, math.log(hi / lo))) if hi > lo else lo,
                       lo * math.exp(rng.uniform(0, math.log(hi / lo))) if hi > lo else hi))
        for x, y in ((lo, hi), (a, b), (np.float64(a), np.float64(b))):
            assert np.array_equal(solver._geomspace(x, y, num), np.geomspace(x, y, num))
            assert np.array_equal(solver._linspace(x, y, num), np.linspace(x, y, num))
    for start, stop in ((1, 1000), (0, 1000), (3, 17), (1, 10**7), (2, 5)):
        assert np.array_equal(solver._round_unique(np.geomspace(max(start, 1), stop, num)),
                              np.unique(np.round(np.geomspace(max(start, 1), stop, num))))
        assert np.array_equal(solver._round_unique(np.linspace(start, stop, num)),
                              np.unique(np.round(np.linspace(start, stop, num))))


def test_product_is_meshgrids():
    axes = [np.array([1.0, 2.0, 5.0]), np.array([0.5, 0.25]), np.array([7.0, 8.0, 9.0, 10.0])]
    for k in (1, 2, 3):
        assert np.array_equal(solver._product(axes[:k]), _ref_product(axes[:k]))
    assert np.array_equal(solver._product([axes[0], np.array([4.0])]), _ref_product([axes[0], np.array([4.0])]))
