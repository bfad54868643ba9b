"""Optimisation of the free parameters of a bound (maximise lower bounds, minimise upper bounds).

Method: a vectorised grid over all free parameters (log or linear, integers rounded), then
successive zooms around the best grid point (each zoom re-grids the two cells next to the best
point, so the bracket shrinks geometrically; a bounded Nelder–Mead polish on top changed no value by
more than 6e-5 relative on the mean bounds and tripled the time, so it was dropped). Any point where the bound is evaluated gives a *valid* bound (every free
parameter value is allowed by the derivation), so the optimiser can only make the reported bound
tighter, never invalid; its accuracy only affects how tight the bound is.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .bounds import Bound

GRID = {1: 400, 2: 64, 3: 22, 4: 10}
ZOOMS = 6


@dataclass
class Solution:
    value: float  # nan when the bound is unusable at these values
    free: dict  # name -> float or int


def _linspace(lo, hi, num: int) -> np.ndarray:
    """``np.linspace(lo, hi, num)`` for scalars ``lo <= hi`` and ``num >= 2``, the same operations in the same order
    (so the same bits) without numpy's argument handling, which costs more than the arithmetic on a short axis."""
    div = num - 1
    lo, hi = np.float64(lo), np.float64(hi)
    delta = hi - lo
    y = np.arange(0, num, dtype=float)
    step = delta / div
    if step == 0:
        y /= div
        y *= delta
    else:
        y *= step
    y += lo
    y[-1] = hi
    return y


def _geomspace(lo, hi, num: int) -> np.ndarray:
    """``np.geomspace(lo, hi, num)`` for scalars ``0 < lo <= hi`` and ``num >= 2``: numpy's steps (``10 **`` an even
    grid of ``log10``, the ends set exactly) in the same order, so the same bits."""
    lo, hi = np.float64(lo), np.float64(hi)
    out = np.power(10.0, _linspace(np.log10(lo), np.log10(hi), num))
    out[0] = lo
    out[-1] = hi
    return out


def _round_unique(x: np.ndarray) -> np.ndarray:
    """``np.unique(np.round(x))`` for an ``x`` that is almost always sorted: a sorted rounding keeps the first of
    each run of equal values (what ``np.unique`` returns for it); an unsorted one goes to ``np.unique``."""
    r = np.round(x)
    if r.size < 2:
        return np.unique(r)
    step = r[1:] != r[:-1]
    if not (r[1:] >= r[:-1]).all():
        return np.unique(r)
    if step.all():
        return r
    return r[np.concatenate(([True], step))]


def _axis(lo, hi, fp, npts):
    if fp.integer:
        lo_i, hi_i = math.ceil(lo), math.floor(hi)
        if hi_i < lo_i:
            return np.array([], float)
        if hi_i - lo_i + 1 <= npts:
            return np.arange(lo_i, hi_i + 1, dtype=float)
        if fp.log:
            start = max(lo_i, 1)
            pts = _round_unique(_geomspace(start, hi_i, npts))
            if lo_i < start:
                pts = np.concatenate([[float(lo_i)], pts])
            return pts
        return _round_unique(_linspace(lo_i, hi_i, npts))
    if npts < 2 or not (lo <= hi):
        return np.geomspace(lo, hi, npts) if fp.log and lo > 0 else np.linspace(lo, hi, npts)
    if fp.log and lo > 0:
        return _geomspace(lo, hi, npts)
    return _linspace(lo, hi, npts)


def _product(axes) -> np.ndarray:
    """The points of the grid ``axes[0] x axes[1] x ...`` as rows, in the order of ``itertools.product``
    (the last axis varying fastest)."""
    if len(axes) == 1:
        return np.asarray(axes[0], dtype=float).reshape(-1, 1)
    dim = len(axes)
    sizes = [len(a) for a in axes]
    out = np.empty(sizes + [dim])
    for j, a in enumerate(axes):
        shape = [1] * dim
        shape[j] = sizes[j]
        out[..., j] = np.asarray(a, dtype=float).reshape(shape)
    return out.reshape(-1, dim)


def _same_axis(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two axes hold the same points (ends compared first: they almost always differ)."""
    return len(a) == len(b) and a[0] == b[0] and a[-1] == b[-1] and np.array_equal(a, b)


def optimise(bound: Bound, values: dict) -> Solution:
    """Best value of ``bound`` over its free parameters at the (scalar) parameter ``values``.

    The search: a grid of ``GRID[dim]`` points per axis over each free parameter's range (log-spaced where the
    parameter is, integers rounded), then ``ZOOMS`` times a grid of half as many points per axis between the
    neighbours of the best point so far. The best grid point is kept (ties: the first in grid order). A zoom that
    gives back the axes it started from ends the search: the levels left would repeat the same evaluation.
    """
    sign = 1.0 if bound.side == "lower" else -1.0  # maximise sign * value
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
    axes = [_axis(lo, hi, fp, npts) for (lo, hi), fp in zip(ranges, bound.free)]
    if any(len(a) == 0 for a in axes):
        return Solution(math.nan, {})
    grid_values = bound.grid_function(values)  # the expression at these values, as a function of the free ones
    cap_fn = bound.extra.get("ceiling")
    zoom_npts = max(npts // 2, 5)
    best_pt, best_sc = None, -np.inf
    with np.errstate(all="ignore"):
        for _ in range(ZOOMS + 1):
            grid = _product(axes)
            vals = grid_values(grid) if cap_fn is None else _capped(grid_values, cap_fn, bound, values, grid, sign,
                                                                    best_sc)
            out = vals if sign > 0 else -vals
            sc = np.where(np.isfinite(out), out, -np.inf)
            i = int(sc.argmax())
            if sc[i] > best_sc:
                best_sc, best_pt = sc[i], grid[i].copy()
            if best_pt is None:
                break
            # zoom: new axes spanning the neighbours of the best point on each axis
            new_axes = []
            for j, (a, fp) in enumerate(zip(axes, bound.free)):
                k = int(a.searchsorted(best_pt[j]))
                last = len(a) - 1
                k = min(max(k, 0), last)
                lo = a[max(k - 1, 0)]
                hi = a[min(k + 1, last)]
                new_axes.append(_axis(lo, hi, fp, zoom_npts) if hi > lo else np.array([best_pt[j]]))
            if all(_same_axis(a, b) for a, b in zip(axes, new_axes)):
                # a fixed point (e.g. every integer of a short range already on the grid): the remaining levels
                # would evaluate this same grid again, find the same best point and zoom to these same axes
                break
            axes = new_axes
    if best_pt is None or not np.isfinite(best_sc):
        return Solution(math.nan, {})

    free = {fp.name: (int(round(x)) if fp.integer else float(x)) for fp, x in zip(bound.free, best_pt)}
    return Solution(float(sign * best_sc), free)


#: relative margin on a bound's ceiling (its float evaluation and the bound's may round differently)
CAP_MARGIN = 1e-9
#: at the first level of a search with a ceiling, every CAP_STRIDE-th grid point is evaluated first
CAP_STRIDE = 16


def _capped(grid_values, cap_fn, bound, values, grid, sign, best_sc):
    """``grid_values(grid)`` where it can matter to the search, NaN elsewhere: where the bound's ceiling
    (``bound.extra["ceiling"](values, {free name: column})``, a value at least a lower bound's, at most an upper
    bound's, at every point) is below a value already found (the best of the previous levels; at the first level the
    best of every ``CAP_STRIDE``-th point, evaluated first). Such a point's value is below that one, so it is neither
    the level's best point nor the first of equal best ones: the search keeps the same points and values."""
    cap = sign * np.asarray(cap_fn(values, {fp.name: grid[:, j] for j, fp in enumerate(bound.free)}), dtype=float)
    cap = np.broadcast_to(cap + CAP_MARGIN * np.abs(cap), (len(grid),))
    vals = np.full(len(grid), np.nan)
    ref = best_sc
    done = np.zeros(len(grid), dtype=bool)
    if not ref > -np.inf:
        done[::CAP_STRIDE] = True
        vals[done] = grid_values(grid[done])
        first = sign * vals[done]
        first = first[np.isfinite(first)]
        ref = float(first.max()) if first.size else -np.inf
    need = ~done & ~(cap < ref)
    if need.any():
        vals[need] = grid_values(grid[need])
    return vals


def solve(bound: Bound, values: dict) -> Solution:
    """:func:`optimise`, then the value at the optimum recomputed with the mpmath fallback (the value reported
    for a bound with free parameters); memoised on disk.

    The memo key is the bound's identity (sha256 of its side and expression, in the exact form of
    :mod:`boundcalc.cache.exprcodec`), the values of the expression's parameters and the search range of each free
    parameter, all as exact float bits; its file carries the package fingerprint (:mod:`boundcalc.cache.diskcache`).
    The result depends on nothing else, so a memoised solution is the one this function computes.
    """
    key = _solve_key(bound, values)
    store = None
    if key is not None:
        store = _store(key[0])
        hit = _decode_hit(store.get(key[1]))
        if hit is not None:
            return hit
    sol = optimise(bound, values)
    if math.isfinite(sol.value) and sol.free:
        sol = Solution(float(bound.evaluate(values, sol.free)), sol.free)
    if store is not None:
        store.put(key[1], [float(sol.value).hex(), {k: (f"i{v}" if isinstance(v, int) else float(v).hex())
                                                    for k, v in sol.free.items()}])
    return sol


_SOLVE_STORES: dict = {}


def _store(ident):
    from ..cache.diskcache import JsonStore

    store = _SOLVE_STORES.get(ident)
    if store is None:
        store = _SOLVE_STORES[ident] = JsonStore(f"boundcalc.solver.{ident}")
    return store


def _decode_hit(hit):
    if hit is None:
        return None
    try:
        return Solution(float.fromhex(hit[0]), {k: (int(v[1:]) if v.startswith("i") else float.fromhex(v))
                                                for k, v in hit[1].items()})
    except Exception:  # noqa: BLE001 - an entry that does not decode is recomputed
        return None


def memoised(bound: Bound, values: dict) -> bool:
    """Whether :func:`solve` (bound, values) is kept (it then costs a look-up, not a search)."""
    key = _solve_key(bound, values)
    return key is not None and _decode_hit(_store(key[0]).get(key[1])) is not None


def _solve_key(bound: Bound, values: dict):
    """(bound identity, point) for :func:`solve`'s memo, or None when a part is not an exact scalar."""
    ident = bound.__dict__.get("_identity", False)
    if ident is False:
        import hashlib

        from . import symbolic

        text = symbolic.expression_key(bound._args(), bound.expr)
        ident = None if text is None else hashlib.sha256(f"{bound.side}|{text}".encode()).hexdigest()[:24]
        bound.__dict__["_identity"] = ident
    if ident is None:
        return None
    from .bounds import _symbol_values

    sv = _symbol_values(values, None)
    free_names = {fp.name for fp in bound.free}
    parts = []
    try:
        for a in bound._args():
            if a.name not in free_names:
                parts.append(float(sv[a.name]).hex())
        for fp in bound.free:
            parts.append(f"{fp.name}:{float(fp.low(values)).hex()}:{float(fp.high(values)).hex()}:"
                         f"{int(fp.integer)}{int(fp.log)}")
    except (KeyError, TypeError, ValueError):
        return None
    return ident, "|".join(parts)


def minimise_integer(fn, kmin: int, kmax: int, exhaustive_limit: float = 20000, grid: int = 600):
    """The integer minimiser: of ``fn`` (vectorised over an int array of k) on [kmin, kmax].

    Exhaustive when the range has at most ``exhaustive_limit`` integers; otherwise a logarithmic grid
    of ``grid`` points, then an exhaustive search between the grid neighbours of the best point
    (widened to at least ±64). Returns ``(k, value)``.
    """
    kmin, kmax = int(kmin), int(kmax)
    if kmax - kmin + 1 <= exhaustive_limit:
        ks = np.arange(kmin, kmax + 1, dtype=np.int64)
    else:
        ks = np.unique(np.round(np.geomspace(kmin, kmax, grid)).astype(np.int64))
    vals = np.asarray(fn(ks), float)
    vals = np.where(np.isfinite(vals), vals, np.inf)
    i = int(np.argmin(vals))
    if len(ks) == kmax - kmin + 1:
        return int(ks[i]), float(vals[i])
    lo = int(ks[max(i - 2, 0)])
    hi = int(ks[min(i + 2, len(ks) - 1)])
    lo, hi = max(kmin, min(lo, int(ks[i]) - 64)), min(kmax, max(hi, int(ks[i]) + 64))
    ks2 = np.arange(lo, hi + 1, dtype=np.int64)
    v2 = np.asarray(fn(ks2), float)
    v2 = np.where(np.isfinite(v2), v2, np.inf)
    j = int(np.argmin(v2))
    return int(ks2[j]), float(v2[j])


def brute_force_integer(fn, low: int, high: int) -> tuple[int, float]:
    """Exhaustive integer minimisation of a vectorised ``fn`` over [low, high] (for tests/checks)."""
    return minimise_integer(fn, low, high, exhaustive_limit=math.inf)


def ternary_search(f, lo: float, hi: float, iterations: int) -> tuple[float, float]:
    """The bracket [lo, hi] of a minimiser of a convex function ``f`` after ``iterations`` ternary steps (each keeps
    two thirds of the bracket). Used for the best supporting line of a point set, min over κ of
    max_i [g_i - κ(x_i - x_0)], which is convex in κ; any κ gives a valid bound, so the search only sharpens it."""
    for _ in range(iterations):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if f(m1) <= f(m2):
            hi = m2
        else:
            lo = m1
    return lo, hi
