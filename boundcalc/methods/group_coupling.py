"""Two-point coupling under central (ε,δ)-differential privacy (group privacy + maximal coupling).

Derivation written for boundcalc; see ``docs/methods/group-coupling.md``. Group privacy is standard
(Dwork & Roth, *The Algorithmic Foundations of Differential Privacy*, 2014, Thm 2.2 / its (ε,δ) form);
the averaging over a maximal coupling follows the two-point arguments of Barber & Duchi (2014,
arXiv 1412.4451) and Karwa & Vadhan (2018, arXiv 1711.03908).

**Group privacy.** If M is (ε,δ)-DP for datasets differing in one entry, then for datasets D, D' at
Hamming distance h and every event A

    P(M(D) ∈ A) <= e^{hε} P(M(D') ∈ A) + δ_h,     δ_h = δ (e^{hε} - 1)/(e^ε - 1).

Proof: walk D = D_0, D_1, ..., D_h = D' changing one entry at a time. Induction:
P(M(D_0)∈A) <= e^ε P(M(D_1)∈A) + δ <= e^ε (e^{(h-1)ε} P(M(D_h)∈A) + δ_{h-1}) + δ, and
e^ε δ_{h-1} + δ = δ (e^{hε} - e^ε + e^ε - 1)/(e^ε - 1) = δ_h.

**(a) Testing bound.** Couple P_0^n and P_1^n entry by entry with the maximal coupling of (P_0, P_1):
each pair of entries differs with probability t = TV(P_0, P_1), independently, so the Hamming distance
is H ~ Bin(n, t). Fix a test (reject with probability g(D) given the output; g is post-processing so
it is itself an (ε,δ)-DP binary mechanism). For a coupled pair (D_0, D_1) at distance h, with
g_0 = g(D_0), g_1 = g(D_1), group privacy applied to the event "accept":
1 - g_0 <= e^{hε}(1 - g_1) + δ_h, i.e. 1 - g_1 >= e^{-hε}(1 - g_0 - δ_h). Hence

    g_0 + (1 - g_1) >= g_0 (1 - e^{-hε}) + e^{-hε} - e^{-hε} δ_h >= e^{-hε} - δ (1 - e^{-hε})/(e^ε - 1)
                     = (1 + c) e^{-hε} - c,        c = δ/(e^ε - 1).

Type I + type II = E[g_0 + 1 - g_1] over the coupling, and E e^{-εH} = (1 - t(1 - e^{-ε}))^n, so

    type I + type II >= (1 + c)(1 - t(1 - e^{-ε}))^n - c.                       (testing_bound)

A sharper pointwise form (used by :func:`testing_bound_exact`): applying group privacy in both
directions, a = g_0, b = 1 - g_1 satisfy 1 - a <= e^{hε} b + δ_h and 1 - b <= e^{hε} a + δ_h; adding,
a + b >= 2(1 - δ_h)/(1 + e^{hε}) (attained at a = b), and a + b >= 0. Average over H exactly.

**(b) Point-mass version.** If P_0 = δ_{x_0} (the sample under P_0 is the fixed x_0^n) and
P_v = (1 - p) δ_{x_0} + p Q_v, the sample under P_v differs from x_0^n in H ~ Bin(n, p) entries, so
P_v(A) = E[P(M(D_v) ∈ A)] <= E[e^{Hε}] P_0(A) + δ E[(e^{Hε} - 1)]/(e^ε - 1), with
E e^{Hε} = (1 + p(e^ε - 1))^n =: G:

    P_v(A) <= G P_0(A) + δ (G - 1)/(e^ε - 1).                                    (point_mass_bound)

Both are equalities for some mechanisms: (b) for M(D) = 1 w.p. min(1, e^{ε|D|} g + δ_{|D|}),
(a) is not tight in general (the exact optimum is larger), but the exponent ε cannot be lowered
(see tests/test_group_coupling.py, which checks both by linear programming over all (ε,δ)-DP binary
mechanisms on {0,1}^n, n <= 4).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..core.memo import BoundedMemo


def _delta_const(eps, delta):
    """c = δ/(e^ε - 1) (sympy)."""
    return delta / S.expm1(eps)


def coupling_mgf_neg(n, t, eps):
    """E e^{-εH} for H ~ Bin(n, t): (1 - t(1 - e^{-ε}))^n, written as exp(n log1p(t expm1(-ε)))."""
    return sp.exp(n * S.log1p(t * S.expm1(-eps)))


@S.cached_expression
def testing_bound(n, t, eps, delta=None):
    """Sympy lower bound on type I + type II error of any test built on an (ε,δ)-DP mechanism,
    for n i.i.d. entries from P_0 versus P_1 with TV(P_0, P_1) = t (see the module docstring):

        max{0, (1 + δ/(e^ε-1)) (1 - t(1-e^{-ε}))^n - δ/(e^ε-1)}.

    ``delta=None`` is pure DP.
    """
    m = coupling_mgf_neg(n, t, eps)
    if delta is None:
        return m
    c = _delta_const(eps, delta)
    return S.Max(0, (1 + c) * m - c)


@S.cached_expression
def testing_bound_jensen(n, t, eps, delta=None):
    """Sympy lower bound from the two-sided pointwise form by Jensen:

        max{0, 2(1 + 2c)/(1 + e^{ε n t}) - 2c},   c = δ/(e^ε - 1).

    Derivation: with x = hε, 2(1 - δ_h)/(1 + e^x) = 2((1+c) - c e^x)/(1 + e^x) = 2(1+2c)/(1+e^x) - 2c,
    convex in x >= 0 (d²/dx² 1/(1+e^x) = e^x(e^x-1)/(1+e^x)³ >= 0), and max{0, ·} keeps convexity;
    Jensen with E H = nt. Better than :func:`testing_bound` when εnt is of order 1 (2/(1+e^x) >= e^{-x}).
    """
    c = sp.Integer(0) if delta is None else _delta_const(eps, delta)
    return S.Max(0, 2 * (1 + 2 * c) / (1 + sp.exp(eps * n * t)) - 2 * c)


def growth_factor(n, p, eps):
    """G = E e^{εH} = (1 + p(e^ε - 1))^n for H ~ Bin(n, p) (sympy), as exp(n log1p(p expm1(ε)))."""
    return sp.exp(n * S.log1p(p * S.expm1(eps)))


def point_mass_bound(n, p, eps, delta=None, p0_event=None):
    """Sympy upper bound on P_v(A) given P_0(A) (``p0_event``; a symbol if None):

        P_v(A) <= G P_0(A) + δ (G - 1)/(e^ε - 1),   G = (1 + p(e^ε - 1))^n.

    Returns (bound, G, additive δ term) so callers can use the pieces (e.g. sphere-cap packings).
    """
    G = growth_factor(n, p, eps)
    a = sp.Symbol("a", nonnegative=True) if p0_event is None else p0_event
    add = sp.Integer(0) if delta is None else delta * (G - 1) / S.expm1(eps)
    return G * a + add, G, add


def point_mass_additive(n, p, eps, delta):
    """The additive term δ (G - 1)/(e^ε - 1) alone (sympy); written with expm1 for small p, ε:
    G - 1 = expm1(n log1p(p expm1(ε)))."""
    return delta * S.expm1(n * S.log1p(p * S.expm1(eps))) / S.expm1(eps)


# ------------------------------------------------------------------ numerical helpers (floats)

def testing_bound_value(n: int, t: float, eps: float, delta: float = 0.0) -> float:
    """Float value of :func:`testing_bound` (the same formula, evaluated stably)."""
    m = math.exp(n * math.log1p(t * math.expm1(-eps)))
    c = delta / math.expm1(eps)
    return max(0.0, (1 + c) * m - c)


def testing_bound_exact(n: int, t: float, eps: float, delta: float = 0.0) -> float:
    """Sharper form: E[max{0, 2(1 - δ_H)/(1 + e^{εH})}] with H ~ Bin(n, t) summed exactly
    (over the support where the binomial mass exceeds 1e-18 of the total; the dropped mass only
    lowers the value, so the result stays a valid lower bound)."""
    from scipy import stats

    n = int(n)
    lo, hi = stats.binom.ppf([1e-18, 1 - 1e-18], n, t)
    h = np.arange(max(0, int(lo) - 1), min(n, int(hi) + 1) + 1, dtype=float)
    pmf = stats.binom.pmf(h, n, t)
    with np.errstate(over="ignore"):
        eh = np.exp(np.minimum(h * eps, 700.0))
        dh = delta * np.expm1(np.minimum(h * eps, 700.0)) / math.expm1(eps)
    vals = np.maximum(0.0, 2 * (1 - dh) / (1 + eh))
    return float(np.sum(pmf * vals))


# ------------------------------------------------------------------ (c) truncated point-mass coupling
#
# f(a) = E min{1, v_H}, v_h = e^{εh} a + δ_h, δ_h = δ (e^{εh} - 1)/(e^ε - 1), H ~ Bin(n, p), is evaluated in one of
# three ways, each either exact up to a stated relative error or rounded up by an explicit margin. Any rule
# for which h count as "saturated" (min = 1) gives an upper bound on f, and so does any sum of the
# non-negative terms P(H = h)(1 - v_h) that leaves some h out of 1 - f; the choices below only affect
# tightness, never validity.

#: half-width, in standard deviations (plus the same number of counts, for the Poisson-like tails at small
#: np or small n(1-p)), of the window of H summed term by term; the binomial mass outside is below 1e-18
WINDOW_SD = 10.0
#: longest window summed term by term in float64 (mode "direct")
DIRECT_TERMS = 512
#: relative error allowed for one binomial pmf value from scipy.stats.binom.pmf (Boost's ibeta_derivative);
#: the largest relative error measured against 30-digit sums for n up to 1e12 was 7.5e-14
PMF_REL_ERR = 1e-11
#: absolute error allowed for 1 - v_h computed as 1 - exp(log a + εh) - exp(log δ_h) where it is positive, and
#: relative error allowed for v_h itself (two exponentials of arguments below 700 in absolute value, each
#: correct to a few ulp of its argument, i.e. a relative 1e-13 at worst)
GAP_ABS_ERR = 1e-13
#: relative error allowed for a binomial tail from scipy.special.betainc / betaincc; the largest measured
#: against 30-digit sums for n up to 1e12 was 2.6e-11
TAIL_REL_ERR = 1e-9
#: the series mode is used where (e^ε - 1) n p <= SERIES_MAX_RATE, with SERIES_TERMS terms
SERIES_MAX_RATE = 8.0
SERIES_TERMS = 96


def _log_expm1(x):
    """log(e^x - 1) for x >= 0 without overflow (-inf at x = 0)."""
    x = np.asarray(x, float)
    with np.errstate(all="ignore"):
        return np.where(x > 30.0, x + np.log1p(-np.exp(-np.minimum(x, 745.0))), np.log(np.expm1(np.minimum(x, 30.0))))


def _log_delta_h(h, eps, delta):
    """log δ_h = log δ + log(e^{εh} - 1) - log(e^ε - 1) (-inf where δ = 0 or h = 0), free of overflow."""
    with np.errstate(all="ignore"):
        out = np.log(delta) + _log_expm1(eps * h) - _log_expm1(eps)
    return np.where((delta > 0) & (h > 0), out, -np.inf)


def _window(n, p, j):
    """[lo, hi]: the counts h <= j within WINDOW_SD standard deviations of np (float arrays)."""
    mu = n * p
    sd = np.sqrt(np.maximum(mu * (1 - p), 0.0))
    lo = np.maximum(0.0, np.floor(mu - WINDOW_SD * sd - WINDOW_SD))
    hi = np.minimum(j, np.minimum(n, np.ceil(mu + WINDOW_SD * sd + WINDOW_SD)))
    return lo, hi


def _gap_direct(n, p, eps, loga, delta, lo, hi):
    """(gap, hit) over h in [lo, hi] (1-D arrays): gap = Σ_h P(H = h) max{0, 1 - v_h}, a lower bound on 1 - f
    (the terms left out are >= 0), and hit = Σ_h P(H = h) min{1, v_h}, to which the mass of H outside the
    window is added for an upper bound on f. Both are sums of positive terms (no cancellation), rounded
    outward by PMF_REL_ERR (covers the pmf and the summation of at most DIRECT_TERMS terms) and by
    GAP_ABS_ERR per term.

    P(H = h) and δ_h depend on a point's (n, p, ε, δ) and on h = lo + k only (lo is a function of n and p): they
    are computed once per distinct (n, p, ε, δ, lo) of the batch (:func:`_window_rows`) and read by every point
    that shares them. Terms outside a point's window [lo, hi] are dropped as before, so every sum adds the same
    numbers in the same order (the width of the batch's longest window), bit for bit."""
    out = np.zeros(n.shape)
    hit = np.zeros(n.shape)
    width = int(np.max(hi - lo)) + 1 if n.size else 0
    if width <= 0:
        return out, hit
    k = np.arange(width, dtype=float)
    pmf_u, v2_u, ok_u, inv = _window_rows(n, p, eps, delta, lo, k)
    step = max(1, 400_000 // width)  # elements per chunk: at most ~4e5 terms in memory at once
    for s in range(0, n.size, step):
        sl = slice(s, s + step)
        h = lo[sl, None] + k[None, :]
        rows = inv[sl]
        outside = (h > hi[sl, None]) | ~ok_u[rows]
        pmf = pmf_u[rows]
        v2 = v2_u[rows]
        with np.errstate(all="ignore"):  # in place, the same operations as written out in the comments
            v1 = np.multiply(eps[sl, None], h, out=h)
            v1 += loga[sl, None]
            np.minimum(v1, 1.0, out=v1)
            np.exp(v1, out=v1)  # v1 = exp(min(log a + εh, 1))
            gap = np.subtract(1.0, v1)
            gap -= v2
            gap -= GAP_ABS_ERR
            np.maximum(gap, 0.0, out=gap)
            gap *= pmf  # P(H = h) max{0, 1 - v1 - v2 - GAP_ABS_ERR}
            v1 += v2
            v1 *= 1 + GAP_ABS_ERR
            np.minimum(v1, 1.0, out=v1)
            v1 *= pmf  # P(H = h) min{1, (v1 + v2)(1 + GAP_ABS_ERR)}
        gap[outside] = 0.0
        v1[outside] = 0.0
        out[sl] = np.sum(gap, axis=1) * (1 - PMF_REL_ERR)
        hit[sl] = np.sum(v1, axis=1) * (1 + PMF_REL_ERR)
    return np.maximum(out, 0.0), hit


#: binomial pmf windows already computed, P(H = lo + k) for k = 0, 1, ..., by the bits of (n, p, lo): the solver's
#: grid levels and the bounds of one entry ask the same binomials again (oldest dropped first)
_PMF_MEMO = BoundedMemo(2048)


def _window_rows(n, p, eps, delta, lo, k):
    """The parts of :func:`_gap_direct` shared by the points with the same (n, p, ε, δ, lo): P(H = lo + k),
    e^{min(log δ_h, 1)} and whether P(H = h) is a number, one row per distinct point, and the row of each point.

    The pmf rows are also kept between calls (:data:`_PMF_MEMO`), keyed by the exact bits of (n, p, lo); a kept row
    at least as long as the window holds the values a new computation gives (an elementwise function of the same
    arguments), and a longer one is computed anew when a wider window asks for it."""
    from ..core.distributions import binom_pmf  # scipy.stats.binom.pmf's values, without importing scipy.stats

    found = distinct_points([n, p, eps, delta, lo], n.size)
    if found is None:
        first, inv = np.arange(n.size), np.arange(n.size)
    else:
        first, inv = found
    nu, pu, eu, du, lu = n[first], p[first], eps[first], delta[first], lo[first]
    h = lu[:, None] + k[None, :]
    width = k.size
    pmf = np.empty(h.shape)
    keys = np.ascontiguousarray(np.stack([nu, pu, lu], axis=1))
    todo = []
    for i in range(len(first)):
        row = _PMF_MEMO.get(keys[i].tobytes())
        if row is None or row.size < width:
            todo.append(i)
        else:
            pmf[i] = row[:width]
    if todo:
        with np.errstate(all="ignore"):
            fresh = binom_pmf(h[todo], nu[todo, None], pu[todo, None])
        pmf[todo] = fresh
        for i, row in zip(todo, fresh):
            _PMF_MEMO.keep(keys[i].tobytes(), row.copy())
    with np.errstate(all="ignore"):
        v2 = np.exp(np.minimum(_log_delta_h(h, eu[:, None], du[:, None]), 1.0))
    return pmf, v2, np.isfinite(pmf), inv


def _coupling_min_numpy(n, p, eps, loga, delta):
    """f(a) = E_H min{1, e^{εH} a + δ_H}, H ~ Bin(n, p), a = exp(loga) (numpy, vectorised), rounded up.

    With δ' = δ/(e^ε - 1), v_h = e^{εh}(a + δ') - δ', h0 the first h with v_h >= 1 and j = h0 - 1:

    * direct (the window of H below h0 has at most DIRECT_TERMS counts): 1 - f = Σ_{h <= j} P(H=h)(1 - v_h),
      a sum of positive terms, with 1 - v_h = 1 - e^{εh + log a} - δ_h and δ_h in logs;
    * series ((e^ε - 1) np <= SERIES_MAX_RATE): f = P(H > j) + a P(H <= j) + (a + δ') D with
      D = E[e^{εH} - 1; H <= j] = Σ_{k>=1} (e^ε-1)^k C(n,k) p^k P(Bin(n-k, p) <= j-k) (from
      e^{εH} = Σ_k C(H,k)(e^ε-1)^k and C(h,k)P(H=h) = C(n,k)p^k P(Bin(n-k,p) = h-k)), again positive terms;
      after K terms the ratio of consecutive terms is at most r = (e^ε-1)(n-K)p/(K+1) (the cdf factor
      decreases in k), so the rest is at most t_K r/(1-r), which is added;
    * tilted (otherwise, where e^{εH} - 1 is not small on the mass of H): f = P(H > j) + (a + δ') G P(H' <= j)
      - δ' P(H <= j), H' ~ Bin(n, p') the tilted binomial, p' = p e^ε/(1 + p(e^ε-1)), G = E e^{εH}; the
      cancellation is bounded by adding TAIL_REL_ERR times the sum of the absolute values of the terms.

    Binomial tails come from the regularised incomplete beta at the exact p (betainc for the upper tail,
    betaincc for the lower), never at a rounded 1 - p: at n = 1e9 a rounded 1 - p moves P(H <= j) by a
    relative 1e-8, which the factor δ' = 1e5 turned into a 0.2% error at ε = 1e-6, δ = 0.1.
    """
    shape = np.broadcast_shapes(*(np.shape(x) for x in (n, p, eps, loga, delta)))
    cols = [np.asarray(x, float) for x in (n, p, eps, loga, delta)]
    out = _coupling_min_unique(shape, cols)
    return out.reshape(shape) if shape else float(out[0])


#: the last few distinct argument sets of :func:`_coupling_min_numpy` and their values (one bound's expression
#: often calls CouplingMin several times on the same arguments, e.g. at d = 1 every cap has the same size)
_ROWS_MEMO = BoundedMemo(16)


def distinct_points(cols, size: int):
    """Representatives of the distinct points of equal-length 1-D float arrays ``cols`` (one array per argument, any
    strides): ``(first, inverse)`` with point ``i`` equal, bit for bit in every column, to point ``first[inverse[i]]``;
    or None when the points are (almost) all distinct, or too few to be worth the search.

    Points are compared by their bits (so 0.0 and -0.0 differ, and a nan equals a nan of the same bits). The
    solver's grids (one row per point, the last free parameter varying fastest) give a function that reads one
    free parameter either runs of equal points (a parameter other than the last) or a repeating period (the
    last): both are found in a few passes over the arrays; other layouts fall back to a sort (``np.unique``).
    ``first`` may hold a point twice (a period with a repeat inside it): the caller then computes it twice."""
    if size < 8:
        return None
    bits = []
    for c in cols:
        c = np.asarray(c, dtype=float)
        try:
            bits.append(c.view(np.int64))
        except ValueError:  # a layout that cannot be viewed: compare a copy
            bits.append(np.ascontiguousarray(c).view(np.int64))
    step = bits[0][1:] != bits[0][:-1]
    for b in bits[1:]:
        step |= b[1:] != b[:-1]
    starts = np.flatnonzero(step)
    if starts.size + 1 < size:  # runs of equal points: one representative per run, then look among those
        starts += 1
        starts = np.concatenate(([0], starts))
        lengths = np.diff(np.append(starts, size))
        inner = _distinct_unordered([b[starts] for b in bits], starts.size)
        if inner is None:
            return starts, np.repeat(np.arange(starts.size), lengths)
        return starts[inner[0]], np.repeat(inner[1], lengths)
    return _distinct_unordered(bits, size)


def _distinct_unordered(bits, size: int):
    """:func:`distinct_points` for int64 bit arrays without runs of equal points: a repeating period, else a sort."""
    if size < 8:
        return None
    for b in bits:  # a column whose bits strictly increase or decrease: all points distinct (a grid axis)
        if (b[1:] > b[:-1]).all() or (b[1:] < b[:-1]).all():
            return None
    same = bits[0] == bits[0][0]
    for b in bits[1:]:
        same &= b == b[0]
    again = np.flatnonzero(same[1:])
    if again.size:
        period = int(again[0]) + 1
        if size % period == 0 and all((b.reshape(-1, period) == b[:period]).all() for b in bits):
            return np.arange(period), np.tile(np.arange(period), size // period)
    rows = np.ascontiguousarray(np.stack(bits, axis=1))
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if len(first) == size:
        return None
    return first, inverse.ravel()


def _coupling_min_unique(shape, cols):
    """:func:`_coupling_rows` at every point of the broadcast ``cols``, computed once per distinct point
    (:func:`distinct_points`), clipped to [0, 1], as a flat array.

    Every value of :func:`_coupling_rows` at a point depends on that point's arguments and, through the
    pairwise order of the sums of :func:`_gap_direct`, on the longest window of the batch; both are the same
    for the distinct points as for all the points, so the values are the ones the full batch gives, bit for
    bit (``tests/test_coupling_distinct_points.py`` compares them, on random batches and on the solver's grids)."""
    size = math.prod(shape)
    varying = [j for j, c in enumerate(cols) if c.size != 1]
    flat = [np.broadcast_to(c, shape).ravel() if j in varying else c.reshape(-1)[:1] for j, c in enumerate(cols)]
    found = distinct_points([flat[j] for j in varying], size) if size > 1 and varying else None
    if found is None:
        rows, inverse = size, None
        args = [np.array(x, copy=True) if j in varying else np.full(size, x[0]) for j, x in enumerate(flat)]
    else:
        first, inverse = found
        rows = len(first)
        args = [x[first] if j in varying else np.full(rows, x[0]) for j, x in enumerate(flat)]
    key = b"".join(x.tobytes() for x in args)
    hit = _ROWS_MEMO.recall(key)
    if hit is None:
        hit = np.clip(_coupling_rows(*args), 0.0, 1.0)
        hit.setflags(write=False)
        _ROWS_MEMO.keep(key, hit)
    return hit.copy() if inverse is None else hit[inverse]


def _coupling_rows(n, p, eps, loga, delta):
    """The body of :func:`_coupling_min_numpy` on 1-D arrays of equal length (not clipped to [0, 1])."""
    from scipy import special

    from ..core.symbolic import _binom_sf

    with np.errstate(all="ignore"):
        em1 = np.expm1(eps)
        dp = delta / em1
        log_apd = np.where(dp > 0, np.logaddexp(loga, np.log(np.where(dp > 0, dp, 1.0))), loga)
        x = (np.log1p(dp) - log_apd) / eps
        h0 = np.clip(np.ceil(x - 1e-12), 0.0, n + 1.0)
        j = h0 - 1.0
        mu = n * p
        lo, hi = _window(n, p, j)
        direct = (hi - lo + 1.0 <= DIRECT_TERMS) | (hi < lo)
        series = ~direct & (em1 * mu <= SERIES_MAX_RATE)
        tilted = ~direct & ~series
        out = np.ones(n.shape)
        if direct.any():
            d = direct
            out[d] = _direct_rows(n[d], p[d], eps[d], loga[d], delta[d], lo[d], hi[d])
        # P(H > j) and P(H <= j), needed by the series and tilted forms only (computed only there)
        sf = np.where(j < 0, 1.0, 0.0)
        cdf = np.where(j < 0, 0.0, 1.0)
        b = ~direct & ~(j < 0) & ~(j >= n)  # (a j that is not a number counts as 0)
        if b.any():
            jb, nb, pb = np.where((j[b] >= 0) & (j[b] < n[b]), j[b], 0.0), n[b], p[b]
            sf[b] = special.betainc(jb + 1, nb - jb, pb)
            cdf[b] = special.betaincc(jb + 1, nb - jb, pb)
        a = np.exp(loga)
        if series.any():
            s = series
            ns, ps, js, es = n[s], p[s], j[s], em1[s]
            log_c = np.zeros(ns.shape)  # log C(n,k) p^k, built as a running sum
            dsum = np.zeros(ns.shape)
            last = np.zeros(ns.shape)
            for kk in range(1, SERIES_TERMS + 1):
                log_c = log_c + np.log((ns - kk + 1) * ps / kk)
                jk = js - kk
                ok = (jk >= 0) & (kk <= ns)
                tail = np.where(ok, special.betaincc(np.maximum(jk, 0.0) + 1, np.maximum(ns - js, 1.0), ps), 0.0)
                tail = np.where(ok & (jk >= ns - kk), 1.0, tail)
                last = np.where(ok, np.exp(kk * np.log(es) + log_c) * tail, 0.0)
                dsum = dsum + last
            r = es * np.maximum(ns - SERIES_TERMS, 0.0) * ps / (SERIES_TERMS + 1)
            rest = np.where(r < 1, last * r / (1 - r), np.inf)
            val = sf[s] + a[s] * cdf[s] + (a[s] + dp[s]) * (dsum + rest)
            val = np.where(dp[s] > 0, val, sf[s] + a[s] * (cdf[s] + dsum + rest))  # δ = 0: no 0·inf
            out[s] = val * (1 + TAIL_REL_ERR) + 1e-300
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
            margin = TAIL_REL_ERR * (sf[t] + up + dcdf)
            mid = np.where(bad, cdf[t], np.clip(mid + margin, 0.0, cdf[t] * (1 + TAIL_REL_ERR)))
            out[t] = (sf[t] + mid) * (1 + 1e-15)
            # where G = E e^{εH} or P(H' <= j) leaves the float range the tilted form knows only f <= P(H > j) + P(H <= j);
            # a window of moderate width is then summed directly instead (n = 1e9, p = 2.3e-6, ε = 20, log a = -1e5:
            # f = 1 in the tilted form, 0 + 4e-23 in fact)
            redo = np.flatnonzero(t)[bad & (hi[t] - lo[t] + 1.0 <= FALLBACK_DIRECT_TERMS)]
            if redo.size:
                out[redo] = _direct_rows(n[redo], p[redo], eps[redo], loga[redo], delta[redo], lo[redo], hi[redo])
    return out


#: the widest window summed directly where the tilted form overflows (:func:`_coupling_rows`)
FALLBACK_DIRECT_TERMS = 20_000


def _direct_rows(n, p, eps, loga, delta, lo, hi):
    """The direct form of :func:`_coupling_min_numpy` on 1-D arrays: min{1 - gap, hit + mass outside the window},
    each rounded outward (f <= 1 said directly where the window is empty)."""
    from scipy import special

    from ..core.symbolic import _binom_sf

    g, hit = _gap_direct(n, p, eps, loga, delta, lo, hi)
    below = np.zeros(n.shape)  # P(H < lo), computed only where lo >= 1
    b = lo >= 1
    if b.any():
        below[b] = special.betaincc(lo[b], n[b] - lo[b] + 1, p[b])
    above = np.zeros(n.shape)  # P(H > max(hi, lo - 1)), computed only where hi < n
    b = hi < n
    if b.any():
        above[b] = _binom_sf(np.maximum(hi[b], lo[b] - 1), n[b], p[b])
    out = np.minimum(np.nextafter(1.0 - g, 2.0), (hit + (below + above) * (1 + TAIL_REL_ERR)) * (1 + 1e-15))
    # An empty window (no count h <= j near np): nothing is gained, f <= 1, and below + above is the whole mass.
    # Said directly, as the value the sum gives (1 rounded up), because from n ~ 2^53 on the float counts lo - 1 and
    # lo coincide and the sum would lose the mass at H = lo (f = 0 at n = 1e18, p = 1).
    return np.where(hi < lo, np.nextafter(1.0, 2.0), out)


#: window half-width (standard deviations and counts) and longest window of the mpmath evaluation
MP_WINDOW_SD = 14
MP_DIRECT_TERMS = 3000


def _coupling_min_mpmath(n, p, eps, loga, delta):
    """f(a) in mpmath at the working precision: 1 - Σ_{h <= j} P(H = h)(1 - v_h) summed term by term over the
    window of H (pmf from log-gamma at working precision, then the ratio recursion), where that window has at
    most MP_DIRECT_TERMS counts. Wider windows (np(1-p) of order 1e4 and more, where the float evaluation is
    the series or tilted form with its stated error margin) return the float value."""
    import mpmath

    n, p, eps, loga, delta = (mpmath.mpf(x) for x in (n, p, eps, loga, delta))
    key = (mpmath.mp.prec, n._mpf_, p._mpf_, eps._mpf_, loga._mpf_, delta._mpf_)
    hit = _MP_MEMO.get(key)
    if hit is None:  # a bound's expression often repeats one call (at d = 1 every cap has the same size)
        hit = _MP_MEMO.keep(key, _coupling_min_mp(n, p, eps, loga, delta))
    return hit


#: the last values of :func:`_coupling_min_mpmath`, by arguments and working precision
_MP_MEMO = BoundedMemo(64)


def _coupling_min_mp(n, p, eps, loga, delta):
    """The body of :func:`_coupling_min_mpmath` (arguments already mpmath numbers)."""
    import mpmath

    from ..core.symbolic import mpmath_float

    a = mpmath.exp(loga)
    if p <= 0:
        return min(mpmath.mpf(1), a)
    em1 = mpmath.expm1(eps)
    if p >= 1:  # H = n surely
        return min(mpmath.mpf(1), a * mpmath.exp(eps * n) + delta * mpmath.expm1(eps * n) / em1)
    dp = delta / em1
    h0 = min(max(mpmath.ceil((mpmath.log1p(dp) - mpmath.log(a + dp)) / eps), 0), n + 1)
    j = h0 - 1
    mu = n * p
    sd = mpmath.sqrt(mu * (1 - p))
    lo = max(mpmath.mpf(0), mpmath.floor(mu - MP_WINDOW_SD * sd - MP_WINDOW_SD))
    hi = min(j, n, mpmath.ceil(mu + MP_WINDOW_SD * sd + MP_WINDOW_SD))
    if hi < lo:
        return mpmath.mpf(1)
    if hi - lo + 1 > MP_DIRECT_TERMS:
        return mpmath_float(_coupling_min_numpy(float(n), float(p), float(eps), float(loga), float(delta)))
    # the log-gammas are of size n log n and cancel to the log of one probability: carry the bits they lose
    # (about log2(n log n)), or at n = 1e15 the pmf is good to 24 of 40 digits and the 40- and 60-digit values differ
    with mpmath.extraprec(int(mpmath.log(n * mpmath.log(n + 2) + 2, 2)) + 16):
        pmf = mpmath.exp(mpmath.loggamma(n + 1) - mpmath.loggamma(lo + 1) - mpmath.loggamma(n - lo + 1)
                         + lo * mpmath.log(p) + (n - lo) * mpmath.log1p(-p))
    pmf = +pmf
    odds = p / (1 - p)
    gap = mpmath.mpf(0)
    h = lo
    # v_h = a e^{εh} + δ_h = a + (a + δ/(e^ε - 1)) (e^{εh} - 1), with m_h = e^{εh} - 1 carried by the recursion
    # m_{h+1} = m_h e^ε + (e^ε - 1): sums of positive terms, so after the ≤ MP_DIRECT_TERMS steps of the window its
    # relative error is at most about 2·MP_DIRECT_TERMS units of the working precision (1e-36 at 40 digits), the
    # accuracy of the exp and expm1 of each term that it replaces at a tenth of their cost
    em = mpmath.expm1(eps * h)
    growth = em1 + 1
    slope = a + dp
    one_minus_a = 1 - a
    while h <= hi:
        w = one_minus_a - slope * em  # 1 - v_h
        if w > 0:
            gap += pmf * w
        pmf *= (n - h) / (h + 1) * odds
        em = em * growth + em1
        h += 1
    # f >= min{1, a} (every v_h >= a); the sum of the window's pmf can round above 1 by a few units, which would
    # give a tiny negative f where a is far below the working precision
    return max(1 - gap, min(mpmath.mpf(1), a))


class CouplingMin(sp.Function):
    """``CouplingMin(n, p, ε, log a, δ) = E min{1, e^{εH} a + δ_H}``, H ~ Bin(n, p), δ_H = δ(e^{εH}-1)/(e^ε-1):
    the sharpest consequence of group privacy for P_v(A) given P_0(A) = a (see :func:`truncated_point_mass`)."""

    nargs = 5

    def _latex(self, printer, exp=None):
        nn, pp, ee, la, dd = (printer._print(x) for x in self.args)
        return (rf"\mathbb{{E}}_{{H\sim\mathrm{{Bin}}({nn},{pp})}}\min\left\{{1, e^{{{ee} H + {la}}}"
                rf" + {dd}\tfrac{{e^{{{ee} H}}-1}}{{e^{{{ee}}}-1}}\right\}}")


S.NUMPY_IMPL["CouplingMin"] = _coupling_min_numpy
S.MPMATH_IMPL["CouplingMin"] = _coupling_min_mpmath


def truncated_point_mass(n, p, eps, log_a, delta=None):
    """Sympy upper bound on P_v(A) (averaged over any family of events) given the reference probability a:

        P_v(A) <= f(a) := E_H min{1, e^{εH} a + δ (e^{εH} - 1)/(e^ε - 1)},   H ~ Bin(n, p).

    Derivation. Under P_v = (1-p) P_0 + p Q_v with P_0 = δ_{x_0} (or any base law shared by all v), draw
    the base sample B and an independent set S of entries (each with probability p) that are redrawn
    from Q_v: the sample D_v differs from B in at most |S| = H entries. Group privacy
    (module docstring) gives P(M(D_v) ∈ A | B, S) <= e^{εH} P(M(B) ∈ A) + δ_H, and a probability is at
    most 1: so P(M(D_v) ∈ A | B, S) <= min{1, e^{εH} P(M(B) ∈ A) + δ_H}. For fixed H the right side is
    concave and non-decreasing in P(M(B) ∈ A); average over B (independent of S, Jensen) and then over H:
    P_v(A) <= f(P_0(A)). f is concave and non-decreasing, so for events A_v and any averaging over v,
    avg_v P_v(A_v) <= f(avg_v P_0(A_v)). Since min{1, G a + ...} <= G a + ..., f(a) <= G a + δ(G-1)/(e^ε-1)
    (:func:`point_mass_bound`); the truncation at 1 is what turns the exponent p(e^ε - 1) of log G
    into about pε when the binomial concentrates.
    """
    dl = sp.Integer(0) if delta is None else delta
    return CouplingMin(n, p, eps, log_a, dl)


def truncated_point_mass_value(n: int, p: float, eps: float, a: float, delta: float = 0.0) -> float:
    """Float value of f(a) by direct summation over the binomial (used by tests to check the closed form)."""
    from scipy import stats

    h = np.arange(0, int(n) + 1, dtype=float)
    pmf = stats.binom.pmf(h, int(n), p)
    with np.errstate(over="ignore"):
        dh = delta * np.expm1(np.minimum(h * eps, 700.0)) / math.expm1(eps)
        vals = np.minimum(1.0, np.exp(np.minimum(h * eps, 700.0)) * a + dh)
    return float(np.sum(pmf * vals))


# ------------------------------------------------------------------ (d) coupling with a dependent count

def _threshold_coupling_numpy(n, p, eps, loga, delta, zs=np.linspace(-6.0, 10.0, 17)):
    """min over thresholds M of {P(H > M) + e^{εM} a + δ(e^{εM} - 1)/(e^ε - 1)}, clipped to [0, 1], H ~ Bin(n, p)
    (numpy, vectorised). The thresholds tried are M = max(0, round(np + z sqrt(np(1-p)))) for a grid of z and
    the point where e^{εM} a = 1; every M gives a valid bound, so the choice only affects tightness.

    The thresholds of the z grid, their tails P(H > M) and their δ_M depend on (n, p, ε, δ) only, not on a: on a
    solver's grid over (p, a) they are computed once per distinct (n, p, ε, δ) (:func:`distinct_points`) and all
    thresholds in one call of the tail function; every point still adds the same numbers in the same order, so
    the values are those of computing every threshold at every point, bit for bit. The knapsack value, used only
    where δ = 0, is computed only when some point has δ = 0."""
    from ..core.symbolic import _binom_sf

    n, p, eps, loga, delta = np.broadcast_arrays(*(np.asarray(x, float) for x in (n, p, eps, loga, delta)))
    if np.all(delta == 0):  # pure DP: the exact knapsack value where reliable, thresholds only elsewhere
        knap, ok = _knapsack_pure(n, p, eps, loga)
        if np.all(ok):
            return np.clip(knap * (1 + 1e-9) * (1 + 1e-12), 0.0, 1.0)
    shape = n.shape
    cols = [np.ravel(x) for x in (n, p, eps, delta)]
    size = cols[0].size
    varying = [c for c, x in zip(cols, (n, p, eps, delta)) if x.strides != (0,) * x.ndim or x.size == 1]
    if not varying:  # (n, p, ε, δ) the same at every point
        first, inv = np.zeros(1, dtype=np.intp), np.zeros(size, dtype=np.intp)
    else:
        found = distinct_points(varying, size) if size > 1 else None
        first, inv = (np.arange(size), None) if found is None else found
    nu, pu, eu, du = (c[first] for c in cols)
    la = np.ravel(loga)
    best = np.ones(size)
    with np.errstate(all="ignore"):
        em1 = np.expm1(eps).ravel()
        emu = em1[first]
        mu = nu * pu
        sd = np.sqrt(np.maximum(nu * pu * (1 - pu), 0.0))
        mz = np.clip(np.round(mu + zs[:, None] * sd), 0.0, nu)  # one row per z
        sf_z = _binom_sf(mz, nu, pu)
        dz = du * np.expm1(np.minimum(eu * mz, 700.0)) / emu
        if inv is not None:
            mz, sf_z, dz = mz[:, inv], sf_z[:, inv], dz[:, inv]
        e, d, nn, pp = cols[2], cols[3], cols[0], cols[1]
        val = sf_z + np.exp(np.minimum(e * mz + la, 700.0)) + dz  # one row per z
        val[~np.isfinite(val)] = 1.0
        best = np.minimum(best, val.min(axis=0))  # (a minimum is exact: the order of the rows does not matter)
        for m in (np.floor(-la / e), np.floor(-la / e) - 1):
            m = np.clip(m, 0.0, nn)
            val = _binom_sf(m, nn, pp) + np.exp(np.minimum(e * m + la, 700.0)) \
                + d * np.expm1(np.minimum(e * m, 700.0)) / em1
            best = np.minimum(best, np.where(np.isfinite(val), val, 1.0))
        # pure DP: the exact worst case over dependent counts (fractional knapsack), where it is reliable
        if np.any(delta == 0):
            knap, ok = _knapsack_pure(n, p, eps, loga)
            use = ok & (delta == 0)
            best = np.where(use.ravel(), np.minimum(best, knap.ravel() * (1 + 1e-9)), best)
    out = np.clip(best * (1 + 1e-12), 0.0, 1.0).reshape(shape)
    return out if shape else out[()]


def _knapsack_pure(n, p, eps, loga, iters=None):
    """δ = 0: max of E min{1, e^{εH} g} over 0 <= g with E g = a, g any function of the sample (vectorised).

    Greedy (fractional knapsack): a unit of g at level h buys e^{εh} of success, and level h saturates at
    g = e^{-εh}; fill the levels from h = n down. With W(j) = E[e^{-εH}; H >= j] = G₋ P(H'' >= j)
    (G₋ = E e^{-εH}, H'' ~ Bin(n, p e^{-ε}/(1 - p + p e^{-ε}))) and j* the smallest j with W(j) <= a,
    the maximum is P(H >= j*) + e^{ε(j*-1)} (a - W(j*)). j* is found by bisection in logs. Returns (value,
    reliable): unreliable where log a < -700 or a tail underflows (the caller keeps the threshold form)."""
    from ..core.symbolic import _binom_sf

    with np.errstate(all="ignore"):
        log_gm = n * np.log1p(p * np.expm1(-eps))
        q = p * np.exp(-eps) / (1 - p + p * np.exp(-eps))

        def log_w(j):  # log W(j) = log G₋ + log P(H'' >= j)
            return log_gm + np.log(_binom_sf(j - 1, n, q))

        lo = np.zeros(n.shape)  # W(0) = G₋ ... may exceed a
        hi = n + 1.0  # W(n+1) = 0 <= a
        steps = int(np.ceil(np.log2(np.max(n) + 2))) + 1 if iters is None else iters
        for _ in range(steps):
            mid = np.floor((lo + hi) / 2)
            good = log_w(mid) <= loga
            hi = np.where(good, mid, hi)
            lo = np.where(good, lo, mid)
        j = np.where(log_w(lo) <= loga, lo, hi)
        wj = np.exp(log_w(j))
        val = _binom_sf(j - 1, n, p) + np.exp(np.minimum(eps * (j - 1) + loga, 700.0)) * np.clip(
            1 - wj / np.exp(loga), 0.0, 1.0)
        tail = _binom_sf(j - 2, n, q)
        ok = (loga > -700) & np.isfinite(val) & (tail > 1e-290) | (j <= 0)
    return np.clip(val, 0.0, 1.0), ok


def _threshold_coupling_mpmath(n, p, eps, loga, delta):
    """φ(a) in mpmath at the working precision: the same candidates as :func:`_threshold_coupling_numpy` (the
    thresholds of its z grid and at e^{εM} a = 1, and for δ = 0 the fractional knapsack), each evaluated in mpmath
    (binomial tails by :func:`boundcalc.core.symbolic._mp_binom_sf`). Only the thresholds whose float64 value is
    within 1e-6 of the float64 minimum are evaluated again: the others are larger than it in exact arithmetic
    too unless their float64 value is off by more than that, and leaving out a candidate can only raise a minimum
    (the safe side of this upper bound on P_v(A)). The knapsack's level j* is confirmed in mpmath (moved until
    W(j*) <= a < W(j* - 1))."""
    import mpmath

    key = (mpmath.mp.prec,) + tuple(float(x) for x in (n, p, eps, loga, delta))
    hit = _MP_THRESHOLD_MEMO.get(key)
    if hit is None:
        hit = _MP_THRESHOLD_MEMO.keep(key, _threshold_coupling_mp(*key[1:]))
    return +hit


_MP_THRESHOLD_MEMO = BoundedMemo(64)


def _threshold_bracket_mp(m, n, p, eps, loga, delta):
    """P(H > M) + e^{εM} a + δ(e^{εM} - 1)/(e^ε - 1) in mpmath, M = m."""
    import mpmath

    from ..core.symbolic import _mp_binom_sf

    M = mpmath.mpf(m)
    e = mpmath.mpf(eps)
    out = _mp_binom_sf(M, mpmath.mpf(n), mpmath.mpf(p)) + mpmath.exp(e * M + mpmath.mpf(loga))
    if delta:
        out += mpmath.mpf(delta) * mpmath.expm1(e * M) / mpmath.expm1(e)
    return out


def _knapsack_mp(n, p, eps, loga, j_float):
    """The fractional knapsack value of :func:`_knapsack_pure` in mpmath, at the level j* confirmed exactly."""
    import mpmath

    from ..core.symbolic import _mp_binom_sf

    N, P, e, la = (mpmath.mpf(x) for x in (n, p, eps, loga))
    log_gm = N * mpmath.log1p(P * mpmath.expm1(-e))
    q = P * mpmath.exp(-e) / (1 - P + P * mpmath.exp(-e))

    def w(j):  # W(j) = E[e^{-εH}; H >= j] = G₋ P(H'' >= j)
        if j <= 0:
            return mpmath.exp(log_gm)
        if j > N:
            return mpmath.mpf(0)
        return mpmath.exp(log_gm) * _mp_binom_sf(j - 1, N, q)

    a = mpmath.exp(la)
    j = mpmath.mpf(max(0.0, j_float))
    for _ in range(64):  # the float64 level is right or one off; the loop only confirms it
        if w(j) > a:
            j += 1
        elif j > 0 and w(j - 1) <= a:
            j -= 1
        else:
            break
    else:
        return None
    val = _mp_binom_sf(j - 1, N, P) + mpmath.exp(e * (j - 1) + la) * min(max(1 - w(j) / a, 0), 1)
    return min(max(val, mpmath.mpf(0)), mpmath.mpf(1))


def _threshold_coupling_mp(n, p, eps, loga, delta):
    import mpmath

    from ..core.symbolic import _binom_sf, mpmath_float

    fval = float(_threshold_coupling_numpy(n, p, eps, loga, delta))
    cands = []
    if delta == 0:
        knap, ok = _knapsack_pure(*(np.asarray(x, float) for x in (n, p, eps, loga)))
        if bool(ok):
            # the level the float64 bisection found (the same steps as _knapsack_pure)
            j = _knapsack_level(n, p, eps, loga)
            v = _knapsack_mp(n, p, eps, loga, j)
            if v is None:
                return mpmath_float(fval)
            cands.append(v)
            if math.isclose(fval, min(1.0, float(knap) * (1 + 1e-9) * (1 + 1e-12)), rel_tol=0, abs_tol=0):
                return v  # the float64 value is the knapsack's alone (pure DP, reliable)
    mu = n * p
    sd = math.sqrt(max(n * p * (1 - p), 0.0))
    ms = {float(np.clip(np.round(mu + z * sd), 0.0, n)) for z in np.linspace(-6.0, 10.0, 17)}
    m0 = math.floor(-loga / eps) if eps > 0 else 0.0
    ms |= {float(np.clip(m0, 0.0, n)), float(np.clip(m0 - 1, 0.0, n))}
    with np.errstate(all="ignore"):
        for m in sorted(ms):
            fv = float(_binom_sf(m, n, p)) + math.exp(min(eps * m + loga, 700.0)) \
                + (delta * math.expm1(min(eps * m, 700.0)) / math.expm1(eps) if delta else 0.0)
            if math.isfinite(fv) and fv <= fval * (1 + 1e-6):
                cands.append(_threshold_bracket_mp(m, n, p, eps, loga, delta))
    if not cands:
        return mpmath.mpf(1) if fval >= 1 else mpmath_float(fval)
    return min(max(min(cands), mpmath.mpf(0)), mpmath.mpf(1))


def _knapsack_level(n, p, eps, loga):
    """j* of :func:`_knapsack_pure` for one point (its float64 bisection)."""
    from ..core.symbolic import _binom_sf

    log_gm = n * math.log1p(p * math.expm1(-eps))
    q = p * math.exp(-eps) / (1 - p + p * math.exp(-eps))
    with np.errstate(all="ignore"):
        def log_w(j):
            return log_gm + math.log(float(_binom_sf(j - 1, n, q))) if float(_binom_sf(j - 1, n, q)) > 0 else -math.inf

        lo, hi = 0.0, n + 1.0
        for _ in range(int(math.ceil(math.log2(n + 2))) + 1):
            mid = math.floor((lo + hi) / 2)
            if log_w(mid) <= loga:
                hi = mid
            else:
                lo = mid
        return lo if log_w(lo) <= loga else hi


class ThresholdCoupling(sp.Function):
    """``ThresholdCoupling(n, p, ε, log a, δ) = min_M {P(Bin(n,p) > M) + e^{εM} a + δ_M}`` (clipped at 1): the
    bound on P_v(A) given P_0(A) = a when the number H of changed entries may depend on the reference sample
    (see :func:`threshold_point_mass`)."""

    nargs = 5

    def _latex(self, printer, exp=None):
        nn, pp, ee, la, dd = (printer._print(x) for x in self.args)
        return (rf"\min_M\left\{{\Pr[\mathrm{{Bin}}({nn},{pp}) > M] + e^{{{ee} M + {la}}}"
                rf" + {dd}\tfrac{{e^{{{ee} M}}-1}}{{e^{{{ee}}}-1}}\right\}}")


S.NUMPY_IMPL["ThresholdCoupling"] = _threshold_coupling_numpy
S.MPMATH_IMPL["ThresholdCoupling"] = _threshold_coupling_mpmath
S.HIGH_PRECISION.add("ThresholdCoupling")  # its candidates evaluated in mpmath at the working precision


def threshold_point_mass(n, p, eps, log_a, delta=None):
    """Sympy upper bound on P_v(A) given the reference probability a = P(M(B) ∈ A), B the reference sample,
    when the sample D_v = T_v(B) differs from B in H(B) ~ Bin(n, p) entries (H may depend on B):

        P_v(A) <= φ(a) := min over integers M >= 0 of {P(H > M) + e^{εM} a + δ (e^{εM} - 1)/(e^ε - 1)}.

    Derivation: pointwise, P(M(D_v) ∈ A | B) <= min{1, e^{εH} g(B) + δ_H} (group privacy, g(B) = P(M(B) ∈ A)),
    and min{1, e^{εH} g + δ_H} <= 1{H > M} + e^{εM} g + δ_M (if H <= M, e^{εH} <= e^{εM}, δ_H <= δ_M). Take the
    expectation over B: no independence between H and g(B) is needed. Each bracket is affine and
    non-decreasing in a, so φ (their minimum) is concave and non-decreasing: averages over v pass inside
    (Jensen), as for :func:`truncated_point_mass`.
    """
    dl = sp.Integer(0) if delta is None else delta
    return ThresholdCoupling(n, p, eps, log_a, dl)
