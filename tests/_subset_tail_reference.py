"""The plain form of the projected subset-selection search (boundcalc.mechanisms.subset_tail): every cell of
every refinement round, every binomial tail and every parameter value of every search evaluated in full. Kept
so that tests/test_subset_tail.py can check that the module, which skips what cannot change the result, gives
the same floats, bit for bit. :func:`fresh_copy` loads a new copy of this module (its caches empty) and
:func:`float_bits` is the bit-for-bit form of a search's result."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

#: relative widening of every computed binomial partial moment (a difference of exactly computed tails)
ROUND_SLACK = 1e-9
#: relative widening of the closed-form standard deviation (Jensen cells)
#: absolute widening of every log moment generating function value
LOG_SLACK = 1e-9
#: from about n = 4.5e6 on, the binomial tails' own relative error (n times the rounding of 1 - π, with a margin
#: of 4) replaces ROUND_SLACK; the log mgf adds a few units of its largest terms
U = 2.0 ** -53


def _slack(n):
    return max(ROUND_SLACK, 2.0 * (n + 2) * U)
#: initial grid in x: N_UNIFORM equal cells on [0, X_SPLIT/d], then cells of ratio GEOM_RATIO up to 1
X_SPLIT, N_UNIFORM, GEOM_RATIO = 4.0, 24, 1.25
#: refinement: split every cell whose bound exceeds the best point value by more than REFINE_TOL (relative to
#: the scale of the supremum), into REFINE_SPLIT cells, at most REFINE_ROUNDS times
REFINE_TOL, REFINE_SPLIT, REFINE_ROUNDS = 0.01, 4, 12
#: the routes are only evaluated when the noise of one coordinate exceeds USEFUL_BELOW/d (the regime
#: d² ≳ nε²/100, where the projection matters); elsewhere they are reported unusable (the exact unprojected
#: risk is the better bound there, and certifying the supremum would need about sqrt(n) cells)
USEFUL_BELOW = 0.05
#: refinement stops (the bound stays certified, only looser) once this many cells are in use
MAX_CELLS = 800


def subset_constants(eps: float, d: int, s: int):
    """(p*, q*, D) of subset selection with subset size s (floats)."""
    e = math.exp(eps)
    ps = s * e / (s * e + d - s)
    qs = (s - ps) / (d - 1)
    return ps, qs, ps - qs


def initial_points(d: int):
    """Grid points 0 = x_0 < ... < x_m = 1 of the initial cells."""
    split = min(X_SPLIT / d, 0.5)
    m = max(int(math.ceil(math.log(1.0 / split) / math.log(GEOM_RATIO))), 1)
    return np.concatenate([np.linspace(0.0, split, N_UNIFORM + 1), np.geomspace(split, 1.0, m + 1)[1:]])


try:  # the boost binomial tails behind scipy.stats.binom, without its per-call argument handling (~6x faster)
    from scipy.special._ufuncs import _binom_cdf as _BCDF, _binom_sf as _BSF
except ImportError:  # pragma: no cover - another scipy layout: the public (slower) route
    _BCDF = _BSF = None


def _sf(k, n, p):
    """P(Bin(n, p) > k) for arrays k (integer valued), p; exactly scipy.stats.binom.sf (1 for k < 0, 0 for k >= n)."""
    if _BSF is None:  # pragma: no cover
        from scipy.stats import binom
        return binom.sf(k, n, p)
    k, p = np.broadcast_arrays(np.asarray(k, float), np.asarray(p, float))
    inside = (k >= 0) & (k < n)
    out = _BSF(np.where(inside, k, 0.0), float(max(n, 1)), p)
    return np.where(inside, out, np.where(k < 0, 1.0, 0.0))


def _cdf(k, n, p):
    """P(Bin(n, p) <= k); exactly scipy.stats.binom.cdf (0 for k < 0, 1 for k >= n)."""
    if _BCDF is None:  # pragma: no cover
        from scipy.stats import binom
        return binom.cdf(k, n, p)
    k, p = np.broadcast_arrays(np.asarray(k, float), np.asarray(p, float))
    inside = (k >= 0) & (k < n)
    out = _BCDF(np.where(inside, k, 0.0), float(max(n, 1)), p)
    return np.where(inside, out, np.where(k < 0, 0.0, 1.0))


def _logcdf(k, n, p):
    with np.errstate(divide="ignore"):
        return np.log(_cdf(k, n, p))


def _logsf(k, n, p):
    with np.errstate(divide="ignore"):
        return np.log(_sf(k, n, p))


def _upper_parts(n: int, pi, c):
    """E(N - c)₊ and E(N - c)₊² for N ~ Bin(n, π), each with its rounding slack: (e1, s1, e2, s2)."""
    pi, c = np.broadcast_arrays(np.asarray(pi, float), np.asarray(c, float))
    k = np.floor(c)  # N > c  iff  N > k (the terms with N = c vanish)
    p0 = _sf(k, n, pi)
    m1 = n * pi * _sf(k - 1, n - 1, pi)
    m2 = n * (n - 1) * pi ** 2 * _sf(k - 2, n - 2, pi)
    e1 = m1 - c * p0
    e2 = m2 + (1 - 2 * c) * m1 + c * c * p0
    r = _slack(n)
    return (e1, r * (m1 + np.abs(c) * p0), e2, r * (m2 + np.abs(1 - 2 * c) * m1 + c * c * p0))


def _lower_parts(n: int, pi, c):
    """E(c - N)₊ and E(c - N)₊² for N ~ Bin(n, π), each with its rounding slack: (e1, s1, e2, s2)."""
    pi, c = np.broadcast_arrays(np.asarray(pi, float), np.asarray(c, float))
    k = np.ceil(c) - 1  # N < c  iff  N <= k
    p0 = _cdf(k, n, pi)
    m1 = n * pi * _cdf(k - 1, n - 1, pi)
    m2 = n * (n - 1) * pi ** 2 * _cdf(k - 2, n - 2, pi)
    e1 = c * p0 - m1
    e2 = c * c * p0 - (2 * c - 1) * m1 + m2
    r = _slack(n)
    return (e1, r * (np.abs(c) * p0 + m1), e2, r * (c * c * p0 + np.abs(2 * c - 1) * m1 + m2))


def upper_moments(n: int, pi, c):
    """Upper bounds on (E(N - c)₊, E(N - c)₊²) for N ~ Bin(n, π) (arrays broadcast)."""
    e1, s1, e2, s2 = _upper_parts(n, pi, c)
    return np.maximum(e1 + s1, 0.0), np.maximum(e2 + s2, 0.0)


def upper_first_moment_low(n: int, pi, c):
    """A lower bound on E(N - c)₊ (N ~ Bin(n, π))."""
    e1, s1, _, _ = _upper_parts(n, pi, c)
    return np.maximum(e1 - s1, 0.0)


def lower_first_moment_low(n: int, pi, c):
    """A lower bound on E(c - N)₊ (N ~ Bin(n, π))."""
    e1, s1, _, _ = _lower_parts(n, pi, c)
    return np.maximum(e1 - s1, 0.0)


def log_mgf_hinge(n: int, pi, c, a):
    """An upper bound on log E exp(-a (N - c)₊), N ~ Bin(n, π), a >= 0."""
    pi, c = np.broadcast_arrays(np.asarray(pi, float), np.asarray(c, float))
    k = np.floor(c)
    lo = _logcdf(k, n, pi)
    em = math.exp(-a)
    base = np.log1p(-pi * (-math.expm1(-a)))  # log(1 - π + π e^{-a})
    tilt = pi * em / (1 - pi + pi * em)
    hi = a * c + n * base + _logsf(k, n, tilt)
    slack = np.maximum(LOG_SLACK, 1.01 * 2.0 * (n + 2) * U + 4 * U * (np.abs(a * c) + np.abs(n * base)))
    return np.logaddexp(lo, hi) + slack


def _min_over_points(u, v):
    """max_i (u_i - κ v_i) at an approximate minimiser κ (a value attained by a valid κ)."""
    u, v = np.ravel(u), np.ravel(v)
    k = _argmin_kappa(u, v)
    return float(np.max(u - k * v))


def certified_sup(cell_fn, d: int, kappa=None, tol: float = REFINE_TOL, scale: float = 0.0):
    """(d · sup_x [h(x) - κ(x - 1/d)], κ) certified over x ∈ [0, 1].

    ``cell_fn(xa, xb)`` returns arrays (g_a, g_b) with ``h(x) - κ(x - 1/d) <= max_e (g_e - κ(x_e - 1/d))`` for
    every x in [x_a, x_b] and every κ (e the two endpoints); at a degenerate cell x_a = x_b = x it returns
    h(x) itself. κ (unless given) minimises the maximum over the initial grid points; then cells whose bound
    exceeds the largest point value by more than ``tol`` times max(``scale``, |that value|) are split (adaptive
    refinement, at most :data:`MAX_CELLS` cells). The returned value
    is d times the maximum of the cell bounds over cells covering [0, 1]: a certified bound."""
    pts = initial_points(d)
    pa, pb = cell_fn(pts, pts)
    pv = np.maximum(pa, pb)
    if kappa is None:
        kappa = _argmin_kappa(pv, pts - 1.0 / d)
    lin = lambda x: kappa * (x - 1.0 / d)
    point_best = float(np.max(pv - lin(pts)))
    xa, xb = pts[:-1], pts[1:]
    for _ in range(REFINE_ROUNDS + 1):
        ga, gb = cell_fn(xa, xb)
        ub = np.maximum(ga - lin(xa), gb - lin(xb))
        top = float(np.max(ub))
        bad = ub > point_best + tol * max(scale, abs(point_best), 1e-300)
        room = (MAX_CELLS - xa.size) // (REFINE_SPLIT - 1)
        if not bad.any() or room <= 0:
            break
        if bad.sum() > room:  # over budget: split only the worst cells
            bad = np.zeros_like(bad)
            bad[np.argsort(ub)[-room:]] = True
        # split the bad cells; their new interior points are also point evaluations
        ba, bb = xa[bad], xb[bad]
        frac = np.arange(REFINE_SPLIT + 1) / REFINE_SPLIT
        sub = ba[:, None] + (bb - ba)[:, None] * frac[None, :]
        inner = sub[:, 1:-1].ravel()
        ia, ib = cell_fn(inner, inner)
        point_best = max(point_best, float(np.max(np.maximum(ia, ib) - lin(inner))))
        xa = np.concatenate([xa[~bad], sub[:, :-1].ravel()])
        xb = np.concatenate([xb[~bad], sub[:, 1:].ravel()])
    return d * top, kappa


def _argmin_kappa(u, v):
    """An approximate minimiser over κ of max_i (u_i - κ v_i) (convex in κ; bisection on the slope)."""
    u, v = np.ravel(u), np.ravel(v)

    def slope(k):
        return -float(v[int(np.argmax(u - k * v))])

    lo, hi = -1.0, 1.0
    for _ in range(200):
        if slope(lo) <= 0:
            break
        lo *= 4
    for _ in range(200):
        if slope(hi) >= 0:
            break
        hi *= 4
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        sl = slope(mid)
        if sl > 0:
            hi = mid
        elif sl < 0:
            lo = mid
        else:
            return mid
    return 0.5 * (lo + hi)


class _Setup:
    def __init__(self, n, eps, d, s):
        self.n, self.d, self.s = n, d, s
        self.ps, self.qs, self.D = subset_constants(eps, d, s)
        self.sigma = math.sqrt(self.qs * (1 - self.qs) / n) / self.D  # noise level of one coordinate at x = 0

    def pi(self, x):
        return self.qs + self.D * x


def max_route(st: _Setup, t: float) -> float:
    """t + d · (least concave majorant of g_t at 1/d), certified (see the module docstring).

    Cell [x_a, x_b]: ``E(N - nπ(x) - nDt)₊ <= E_{π_b}(N - nπ_a - nDt)₊`` (law stochastically larger, threshold
    smaller) and ``E(nq* - N)₊ >= E_{π_b}(nq* - N)₊`` (a nonincreasing function of N); the part
    ``-x E(nq* - N)₊/(nD)`` is then bounded by a linear function of x."""
    n, D = st.n, st.D

    def cell(xa, xb):
        pa, pb = st.pi(xa), st.pi(xb)
        A = upper_moments(n, pb, n * (pa + D * t))[0] / (n * D)
        B = lower_first_moment_low(n, pb, np.full_like(pb, n * st.qs)) / (n * D)
        return A - xa * B, A - xb * B

    return t + certified_sup(cell, st.d, scale=t / st.d)[0]


def threshold_main(st: _Setup, mu: float, loss: str) -> float:
    """d · majorant of E((y - μ)₊ - x)² (ℓ2²) or of 2E(w - μ)₊ (ℓ1), certified cell by cell.

    ℓ2²: with v = (y - μ)₊ and x >= 0, ``E(v - x)² = E(y - μ - x)₊² + E(x - v)₊²``; the first part is a
    nondecreasing function of N and nonincreasing in x (law π_b, threshold at x_a), the second
    ``E(x - v)₊² = E(x + μ - y)₊² - E(μ - y)₊² - 2x E(μ - y)₊`` (since ``(x - v)₊ = min(x, (x + μ - y)₊)``) is
    nonincreasing in N and nondecreasing in x (law π_a, x = x_b).
    ℓ1: the monotone bound ``2E_{π_b}(N - nπ_a - nDμ)₊/(nD)``, or, where smaller, Jensen's
    ``2E(w - μ)₊ <= E|w| <= sqrt(π(1-π)/n)/D``, a concave function of x, below its tangent at x_a."""
    n, D = st.n, st.D
    nD = n * D

    def cell_l2(xa, xb):
        pa, pb = st.pi(xa), st.pi(xb)
        e1, s1, e2, s2 = _upper_parts(n, pb, n * (st.qs + D * (mu + xa)))
        upper = np.maximum(e2 + s2, 0.0) / nD ** 2
        f1, r1, f2, r2 = _lower_parts(n, pa, n * (st.qs + D * (mu + xb)))
        g1, t1, g2, t2 = _lower_parts(n, pa, np.full_like(pa, n * (st.qs + D * mu)))
        lower = ((f2 + r2) - (g2 - t2)) / nD ** 2 - 2 * xb * (g1 - t1) / nD
        alpha = upper + np.maximum(lower, 0.0)
        return alpha, alpha

    def cell_l1(xa, xb):
        pa, pb = st.pi(xa), st.pi(xb)
        alpha = 2 * upper_moments(n, pb, n * (pa + D * mu))[0] / nD
        sd = np.sqrt(pa * (1 - pa) / n) / D * (1 + ROUND_SLACK)
        slope = (1 - 2 * pa) / (2 * np.sqrt(n * pa * (1 - pa)))  # d/dx sqrt(π(1-π)/n)/D at x_a
        tan_b = sd + slope * (xb - xa)
        use_tan = np.maximum(sd, tan_b) < alpha
        return np.where(use_tan, sd, alpha), np.where(use_tan, tan_b, alpha)

    return certified_sup(cell_l2 if loss == "l2sq" else cell_l1, st.d)[0]


def log_bad_event(st: _Setup, mu: float, lam: float) -> float:
    """λ + d · majorant of L_λ at 1/d: a bound on log P(τ < μ) (L_λ nonincreasing: its value at x_a)."""
    n, D = st.n, st.D

    def cell(xa, xb):
        L = log_mgf_hinge(n, st.pi(xa), np.full_like(xa, n * (st.qs + D * mu)), lam / (n * D))
        return L, L

    return lam + certified_sup(cell, st.d, tol=0.05)[0]


def bad_event(st: _Setup, mu: float, target: float = 0.0) -> float:
    """A bound on P(τ < μ), minimised over λ (the bound is convex in λ: ternary search), stopping early
    once it is below ``target``."""
    if mu <= 0:
        return 0.0
    f = lambda lam: log_bad_event(st, mu, lam)
    stop = math.log(target) if target > 0 else -math.inf
    hi = 1.0 / st.sigma
    fhi = f(hi)
    best = min(0.0, fhi)
    while best > stop and hi < 1e12:
        f2 = f(2 * hi)
        best = min(best, f2)
        if f2 >= fhi:
            break
        hi, fhi = 2 * hi, f2
    lo, hi = hi / 2, 2 * hi
    for _ in range(16):
        if best <= stop:
            break
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        f1, f2 = f(m1), f(m2)
        best = min(best, f1, f2)
        if f1 < f2:
            hi = m2
        else:
            lo = m1
    return math.exp(best)


def _golden(fun, lo, hi, iters=14):
    """Approximate minimiser of fun on [lo, hi] (any result is only a choice of a free parameter)."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, e = b - g * (b - a), a + g * (b - a)
    fc, fe = fun(c), fun(e)
    best = min((fc, c), (fe, e))
    for _ in range(iters):
        if fc < fe:
            b, e, fe = e, c, fc
            c = b - g * (b - a)
            fc = fun(c)
        else:
            a, c, fc = c, e, fe
            e = a + g * (b - a)
            fe = fun(e)
        best = min(best, (fc, c), (fe, e))
    return best


def threshold_route(st: _Setup, loss: str):
    """(bound, μ): min over μ of main(μ) + 2 P(τ < μ). main is evaluated on a grid of μ; the event's
    probability only for μ up to the minimiser of main, from the largest down, stopping once it is
    negligible (the probability can only shrink as μ decreases)."""
    grid = [st.sigma * f for f in np.linspace(0.0, 4.0, 9)]
    mains = [threshold_main(st, m, loss) for m in grid]
    i_min = int(np.argmin(mains))
    best = (mains[0], 0.0)  # μ = 0: no event
    for i in range(i_min, 0, -1):
        if mains[i] >= best[0]:
            continue
        p = bad_event(st, grid[i], target=1e-3 * mains[i])
        tot = mains[i] + 2 * p
        best = min(best, (tot, grid[i]))
        if 2 * p <= 1e-3 * mains[i]:
            break
    return best


def max_route_best(st: _Setup):
    tot = lambda t: max_route(st, t)
    grid = [st.sigma * f for f in (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)]
    vals = [tot(t) for t in grid]
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    v, t = _golden(tot, lo, hi, iters=8)
    return min((v, t), (vals[i], grid[i]))


def _default_s(d, eps):
    return min(max(math.ceil(d / (math.exp(min(eps, 700.0)) + 1)), 1), max(d - 1, 1))


@lru_cache(maxsize=4096)
def best(route: str, n: int, eps: float, d: int, loss: str = "l2sq"):
    """(certified bound, s, route parameter) of ``route`` ('max' or 'threshold') at (n, ε, d): s chosen by a
    search around Ye & Barg's ⌈d/(e^ε+1)⌉ (each s gives a valid bound)."""
    if n < 2 or d < 2:
        return math.nan, 0, math.nan
    s0 = _default_s(d, eps)
    ps, qs, D = subset_constants(eps, d, s0)
    if math.sqrt(qs * (1 - qs) / n) / D * d < USEFUL_BELOW:  # noise of a coordinate, against 1/d
        return math.nan, 0, math.nan  # projection cannot help (and the grid would need ~sqrt(n) cells)

    def at(s):
        st = _Setup(n, eps, d, s)
        return max_route_best(st) if route == "max" else threshold_route(st, loss)

    tried = {}

    def val(s):
        s = min(max(int(s), 1), d - 1)
        if s not in tried:
            tried[s] = at(s)
        return tried[s][0], s

    cands = sorted({min(max(round(s0 * f), 1), d - 1) for f in (0.4, 0.7, 1.0)})
    cur = min(val(s) for s in cands)
    step = 1.25
    for _ in range(4):
        s = cur[1]
        nxt = min(cur, val(math.floor(s / step)), val(math.ceil(s * step)))
        if nxt[1] == s:
            if step <= 1.05:
                break
            step = 1 + (step - 1) / 2
        cur = nxt
    v, s = cur
    return v, s, tried[s][1]


def tail_value(route: str, loss: str, n, eps, d) -> float:
    """The certified bound (float); n is rounded down (the minimax risk does not increase with n)."""
    n_i, d_i = int(math.floor(float(n) + 1e-9)), int(round(float(d)))
    if not (math.isfinite(float(eps)) and float(eps) > 0) or n_i < 2 or d_i < 2:
        return math.nan
    # two points of the simplex are at most 2 apart in ℓ1 and in squared ℓ2
    return min(float(best(route, n_i, float(eps), d_i, loss)[0]), 2.0)


def fresh_copy():
    """A new copy of this module, its caches empty (nothing carried over from another test)."""
    import importlib.util
    import pathlib

    spec = importlib.util.spec_from_file_location("_subset_tail_reference_copy", pathlib.Path(__file__))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def float_bits(result):
    """A search's result with every float as its exact hex form (for bit-for-bit comparisons)."""
    return tuple(float(x).hex() if isinstance(x, float) else x for x in result)
