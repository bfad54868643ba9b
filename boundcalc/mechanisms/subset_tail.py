"""Projected subset selection: certified risks from exact binomial tails (docs/problems/multinomial.md).

Subset selection (Ye & Barg 2018) with subset size s releases, for each user, an s-subset S_i of the d
symbols; with ``p* = s e^ε/(s e^ε + d - s)``, ``q* = (s - p*)/(d - 1)`` and ``D = p* - q*`` each symbol j
is in S_i with probability ``π_j = q* + D p_j``, independently over users, so the count
``N_j = #{i: j ∈ S_i}`` is exactly ``Binomial(n, π_j)`` (marginally). The unbiased estimate is
``y_j = (N_j/n - q*)/D``; ``Σ_j y_j = 1`` exactly (``Σ_j N_j = n s`` and ``s - d q* = D``). The estimator
is its Euclidean projection onto the simplex, ``p̂ = Π_Δ(y) = (y - τ)₊`` with ``Σ_j (y_j - τ)₊ = 1``; since
``Σ_j y_j = 1``, ``τ >= 0``. Write ``w = y - p`` (so ``Σ_j w_j = 0``, ``E w_j = 0``).

Two certified bounds on ``sup_p E‖p̂ - p‖²`` (and one on ``sup_p E‖p̂ - p‖₁``) are computed here; both
reduce the supremum over the simplex to one over a single coordinate x = p_j ∈ [0, 1].

**Separable reduction (used by both).** If ``E(error) <= c + Σ_j g(p_j)`` for a function g on [0, 1], then
for every κ, since ``Σ_j (p_j - 1/d) = 0``,
``Σ_j g(p_j) = Σ_j [g(p_j) - κ(p_j - 1/d)] <= d · sup_{x∈[0,1]} [g(x) - κ(x - 1/d)]``;
the minimum over κ is d times the least concave majorant of g at 1/d (Wang et al. 2016 and Duchi,
Jordan & Wainwright 2013 use the same projection idea with Gaussian-type tails; here the tails are the
exact binomial ones). The supremum over x is certified cell by cell: on a cell ``[x_a, x_b]`` of a grid
covering [0, 1], ``π ∈ [π_a, π_b]`` and ``Bin(n, π)`` is stochastically increasing in π, so the expectation
of a nondecreasing function of N is at most its value under π_b (at least its value under π_a), and the
parts that are explicit polynomials in x are maximised exactly at the cell's endpoints (they are convex).
No point between grid points is left unbounded.

**Max route (the exact-tail form of the projection inequality).** From the optimality conditions of
the projection, ``p̂_j - y_j = -min(y_j, τ)``, so with ``m_j = min(y_j, τ)``:
``‖p̂ - p‖² = ⟨w - m, p̂ - p⟩ = ⟨w, p̂ - p⟩ - Σ_j p_j (τ - y_j)₊`` (exact: ``⟨m, p̂⟩ = τ`` and
``⟨m, p⟩ = τ - Σ_j p_j (τ - y_j)₊``). Then ``⟨w, p̂⟩ <= max_j w_j <= t + Σ_j (w_j - t)₊`` for any t >= 0,
and ``(τ - y_j)₊ >= (-y_j)₊`` (τ >= 0). Taking expectations (``E⟨w, p⟩ = 0``):
``E‖p̂ - p‖² <= t + Σ_j g_t(p_j)``, ``g_t(x) = E(N - n π(x) - n D t)₊/(nD) - x E(n q* - N)₊/(nD)``.

**Threshold route.** For μ >= 0, on the event ``{τ >= μ}`` the projection of ``(y - μ)₊`` onto the simplex
is again p̂ (its threshold is τ - μ >= 0 and ``((y_j - μ)₊ - (τ - μ))₊ = (y_j - τ)₊``), and Π_Δ is
1-Lipschitz with ``Π_Δ(p) = p``, so ``‖p̂ - p‖ <= ‖(y - μ)₊ - p‖`` there. On the complement
``‖p̂ - p‖² <= 2`` (two points of the simplex). Hence
``E‖p̂ - p‖² <= Σ_j E((y_j - μ)₊ - p_j)² + 2 P(τ < μ)``.
For ℓ1, both p̂ and p lie in the simplex, so ``‖p̂ - p‖₁ = 2 Σ_j (p̂_j - p_j)₊ = 2 Σ_j (w_j - τ)₊``, which is
at most ``2 Σ_j (w_j - μ)₊`` on ``{τ >= μ}`` and at most 2 always:
``E‖p̂ - p‖₁ <= 2 Σ_j E(w_j - μ)₊ + 2 P(τ < μ)`` (at μ = 0 this is the exact mean absolute deviation of the
unprojected estimate, ``Σ_j E|w_j|``, and P(τ < 0) = 0).
*The event.* ``τ < μ`` iff ``F = Σ_j (y_j - μ)₊ < 1``. For λ > 0, ``P(F < 1) <= e^λ E Π_j e^{-λ(y_j - μ)₊}``.
Given the inputs X_1..X_n, user i's membership vector is a vector of independent Bernoullis conditioned on
its sum (weights e^ε on X_i, 1 elsewhere), which is strongly Rayleigh and hence negatively associated
(Borcea, Brändén & Liggett 2009); independent users and sums over users keep negative association
(Joag-Dev & Proschan 1983), so given the inputs ``E Π_j φ_j(N_j) <= Π_j E[φ_j(N_j) | X]`` for the
nonincreasing nonnegative ``φ_j(N) = e^{-λ(y_j - μ)₊}``. Each factor depends on the inputs only through the
count c_j of symbol j and is nonincreasing in it (``N_j | c_j = Bin(c_j, p*) + Bin(n - c_j, q*)``,
stochastically increasing in c_j), and multinomial counts are negatively associated (Joag-Dev & Proschan
1983), so averaging over the inputs ``E Π_j φ_j(N_j) <= Π_j E φ_j(N_j)`` with ``N_j ~ Bin(n, π_j)``:
``log P(τ < μ) <= λ + Σ_j L_λ(p_j)``, ``L_λ(x) = log E exp(-λ (N - n q* - n D μ)₊/(nD))``, N ~ Bin(n, π(x)),
and L_λ is nonincreasing in x (cells use its value at x_a). The exponential moment is exact:
``E e^{-a(N - c)₊} = P(N <= k) + e^{ac} (1 - π + π e^{-a})ⁿ P(Bin(n, π̃) > k)``, k = ⌊c⌋,
``π̃ = π e^{-a}/(1 - π + π e^{-a})`` (exponential tilting).

**Binomial partial moments** (k = ⌊c⌋): ``E[(N - c)₊] = nπ P(Bin(n-1, π) >= k) - c P(N > k)`` and
``E[(N - c)₊²] = n(n-1)π² P(Bin(n-2, π) >= k-1) + (1 - 2c) nπ P(Bin(n-1, π) >= k) + c² P(N > k)``
(``E[N 1{N >= m}] = nπ P(Bin(n-1, π) >= m-1)``, ``E[N(N-1) 1{N >= m}] = n(n-1)π² P(Bin(n-2, π) >= m-2)``); the
lower tail ``E[(c - N)₊] = c P(N <= k') - nπ P(Bin(n-1, π) <= k'-1)``, k' the largest integer below c.
Rounding: each difference is widened by :data:`ROUND_SLACK` times the sum of the magnitudes of its terms, or
from n of about 4.5·10⁶ on by the tails' own measured error, ``2 (n + 2) u`` (:func:`tail_error`: boost raises
the rounded 1 - π to a power of about n), outward for the bound.

The free parameters (s, t or μ, κ, λ) are chosen here by a coarse search; every choice gives a valid bound.
The search skips a parameter value whose cheap lower value (:func:`point_lower`, :func:`bad_event_lower`,
:func:`_max_route_exceeds`) already loses its comparison: the same choices and the same floats as evaluating
every value in full (docs/problems/multinomial.md). The max route's refinement evaluates, in its last round,
only the cells that can be the returned largest bound (:func:`_certified_sup_lazy`, from convexity bounds of
the binomial hinge moments), and its t search stops a value's last round once a cell that stays shows the value
loses its comparison: again the same floats (docs/engineering/speed.md, section 16).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..core import symbolic as S
from ..cache.diskcache import persistent

#: relative widening of every computed binomial partial moment (a difference of exactly computed tails)
ROUND_SLACK = 1e-9
#: relative widening of the closed-form standard deviation (Jensen cells)
#: absolute widening of every log moment generating function value
LOG_SLACK = 1e-9
#: initial grid in x: N_UNIFORM equal cells on [0, X_SPLIT/d], then cells of ratio GEOM_RATIO up to 1
X_SPLIT, N_UNIFORM, GEOM_RATIO = 4.0, 24, 1.25
#: refinement: split every cell whose bound exceeds the best point value by more than REFINE_TOL (relative to
#: the scale of the supremum), into REFINE_SPLIT cells, at most REFINE_ROUNDS times
REFINE_TOL, REFINE_SPLIT, REFINE_ROUNDS = 0.01, 4, 12
#: the routes are only evaluated when the noise of one coordinate exceeds USEFUL_BELOW/d (the regime
#: d² ≳ nε²/100, where the projection matters); elsewhere they are reported unusable (the exact unprojected
#: risk is the better bound there, and certifying the supremum would need about sqrt(n) cells)
USEFUL_BELOW = 0.05
#: nor beyond this n: there a binomial tail costs 30 µs to 0.5 ms (boost's incomplete beta near the mean, against
#: 0.4 µs at n = 1e6), so one search took minutes (n = 1e15, ε = 1e-3, d = 1000: over 60 s of CPU), and the tails'
#: own allowance 2(n + 2)u exceeds 4e-4 of every moment, so the routes could not be sharp there anyway
SEARCH_MAX_N = 10**12
#: above this ε, e^ε overflows a float (exp(709.78...) is the largest finite value)
EXP_OVERFLOW_EPS = 700.0
SMALL_EPS = 1e-3  # below it subset_constants takes D from its closed form (no cancellation)
QSTAR_CLOSED = 100.0  # with s = 1, where e^ε exceeds this times d - 1, q* from its closed form (1 - p* cancels)
#: refinement stops (the bound stays certified, only looser) once this many cells are in use
MAX_CELLS = 800


def subset_constants(eps: float, d: int, s: int):
    """(p*, q*, D) of subset selection with subset size s (floats): p* = s e^ε/(s e^ε + d - s), the probability that
    a user's subset holds its symbol, q* = (s - p*)/(d - 1), that it holds another given symbol, and D = p* - q*.

    Two differences cancel. At small ε, p* - q* (both near s/d) has a relative error of about u/ε (u = 2⁻⁵³), so
    below :data:`SMALL_EPS` D comes from its closed form D = (p* d - s)/(d - 1) =
    s (d - s)(e^ε - 1)/((d - 1)(s e^ε + d - s)), with ``expm1``. At large ε with s = 1, s - p* (p* near 1) has a
    relative error of about u p*/(1 - p*) (for s >= 2, s - p* >= 1 does not cancel), so where
    e^ε > :data:`QSTAR_CLOSED` (d - 1) q* comes from
    q* = 1/(e^ε + d - 1) (and above :data:`EXP_OVERFLOW_EPS`, for every s, from
    q* = s ((s - 1) + (d - s) e^{-ε})/((d - 1)(s + (d - s) e^{-ε}))). Both closed forms are accurate to a few units at every ε; elsewhere the
    differences are kept (their error there is below 1e-12), so the floats there are those of the plain formulas."""
    if eps > EXP_OVERFLOW_EPS:
        # e^ε overflows a float: the same p* and q*, divided through by e^ε
        t = math.exp(-eps)
        ps = s / (s + (d - s) * t)
        qs = s * ((s - 1) + (d - s) * t) / ((d - 1) * (s + (d - s) * t))
        return ps, qs, ps - qs
    e = math.exp(eps)
    ps = s * e / (s * e + d - s)
    if s == 1 and e > QSTAR_CLOSED * (d - 1):
        qs = 1.0 / (e + d - 1)  # (1 - p*)/(d - 1) with 1 - p* = (d - 1)/(e^ε + d - 1)
    else:
        qs = (s - ps) / (d - 1)
    if eps < SMALL_EPS:
        return ps, qs, s * (d - s) * math.expm1(eps) / ((d - 1) * (s * e + d - s))
    return ps, qs, ps - qs


@lru_cache(maxsize=256)
def initial_points(d: int):
    """Grid points 0 = x_0 < ... < x_m = 1 of the initial cells (a read-only array)."""
    split = min(X_SPLIT / d, 0.5)
    m = max(int(math.ceil(math.log(1.0 / split) / math.log(GEOM_RATIO))), 1)
    pts = np.concatenate([np.linspace(0.0, split, N_UNIFORM + 1), np.geomspace(split, 1.0, m + 1)[1:]])
    pts.flags.writeable = False
    return pts


try:  # the boost binomial tails behind scipy.stats.binom, without its per-call argument handling (~6x faster)
    from scipy.special._ufuncs import _binom_cdf as _BCDF, _binom_sf as _BSF
except ImportError:  # pragma: no cover - another scipy layout: the public (slower) route
    _BCDF = _BSF = None
try:  # boost's binomial pdf (about 7 times cheaper than a tail)
    from scipy.special._ufuncs import _binom_pmf as _BPMF
except ImportError:  # pragma: no cover
    _BPMF = None

#: derive the second and third tail a partial moment reads from the first and binomial probabilities
#: (:func:`_upper_tails`) instead of computing each. Off: the bounds it gives are certified and at least the plain
#: ones, but larger by up to 1e-9 (relative) for first moments and up to 1e-6 for the threshold route's second
#: moments (whose differences cancel about 1e5-fold), so printed values would move (docs/engineering/speed.md,
#: section 14); kept for measurement
PMF_TAILS = False
#: relative widening added to :data:`ROUND_SLACK` for derived tails: at least twice the largest difference
#: between a derived tail and scipy's own seen on arguments up to 14 standard deviations from the mean
#: (1.3e-12, at n = 174,669; up to 6e-13 within 7), so that a bound is not below its plain value
TAIL_SLACK = 3e-12


def _pair(a, b):
    """``np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))``: the same values, without the conversion
    and the views where both are already float arrays of one shape (the common case here; nothing writes to them)."""
    if (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == np.float64 and b.dtype == np.float64
            and a.shape == b.shape):
        return a, b
    return np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))


def _sf(k, n, p):
    """P(Bin(n, p) > k) for arrays k (integer valued), p; exactly scipy.stats.binom.sf (1 for k < 0, 0 for k >= n)."""
    if _BSF is None:  # pragma: no cover
        from scipy.stats import binom
        return binom.sf(k, n, p)
    k, p = _pair(k, p)
    if k.ndim and k.size and k.min() >= 0 and k.max() < n:  # every count inside: the ufunc's values as they are
        return _BSF(k, float(max(n, 1)), p)
    inside = (k >= 0) & (k < n)
    out = _BSF(np.where(inside, k, 0.0), float(max(n, 1)), p)
    return np.where(inside, out, np.where(k < 0, 1.0, 0.0))


def _cdf(k, n, p):
    """P(Bin(n, p) <= k); exactly scipy.stats.binom.cdf (0 for k < 0, 1 for k >= n)."""
    if _BCDF is None:  # pragma: no cover
        from scipy.stats import binom
        return binom.cdf(k, n, p)
    k, p = _pair(k, p)
    if k.ndim and k.size and k.min() >= 0 and k.max() < n:  # every count inside: the ufunc's values as they are
        return _BCDF(k, float(max(n, 1)), p)
    inside = (k >= 0) & (k < n)
    out = _BCDF(np.where(inside, k, 0.0), float(max(n, 1)), p)
    return np.where(inside, out, np.where(k < 0, 0.0, 1.0))


def _logcdf(k, n, p):
    with np.errstate(divide="ignore"):
        return np.log(_cdf(k, n, p))


def _logsf(k, n, p):
    with np.errstate(divide="ignore"):
        return np.log(_sf(k, n, p))


def _pmf(k, n, p):
    """P(Bin(n, p) = k) for arrays k (integer valued), p; 0 for k < 0 and k > n (boost's binomial pdf inside)."""
    k, p = np.broadcast_arrays(np.asarray(k, float), np.asarray(p, float))
    inside = (k >= 0) & (k <= n)
    out = _BPMF(np.where(inside, k, 0.0), float(max(n, 0)), p)
    return np.where(inside, out, 0.0)


def _upper_tails(n: int, pi, k, order: int):
    """(P(N > k), P(Bin(n-1, π) >= k)[, P(Bin(n-2, π) >= k-1)]) for N ~ Bin(n, π): the tails the partial moments
    read (``order`` 1: the first two, 2: all three).

    Plain (:data:`PMF_TAILS` off): one scipy tail each. Otherwise one scipy tail and, from
    ``P(Bin(m-1, π) >= j) = P(Bin(m, π) > j) + (1 - π) P(Bin(m-1, π) = j)`` (condition on the last trial), the
    others by adding a binomial probability, a sum of two nonnegative terms (about 7 times cheaper than a tail)."""
    if not PMF_TAILS:
        out = (_sf(k, n, pi), _sf(k - 1, n - 1, pi))
        return out if order == 1 else out + (_sf(k - 2, n - 2, pi),)
    w = 1.0 - pi
    t0 = _sf(k, n, pi)
    t1 = t0 + w * _pmf(k, n - 1, pi)
    if order == 1:
        return t0, t1
    return t0, t1, t1 + w * _pmf(k - 1, n - 2, pi)


def _lower_tails(n: int, pi, k, order: int):
    """(P(N <= k), P(Bin(n-1, π) <= k-1)[, P(Bin(n-2, π) <= k-2)]) for N ~ Bin(n, π) (``order`` as in
    :func:`_upper_tails`). With :data:`PMF_TAILS`, one scipy tail (the last one) and, from
    ``P(Bin(m, π) <= j) = P(Bin(m-1, π) <= j-1) + (1 - π) P(Bin(m-1, π) = j)``, the others by adding binomial
    probabilities."""
    if not PMF_TAILS:
        out = (_cdf(k, n, pi), _cdf(k - 1, n - 1, pi))
        return out if order == 1 else out + (_cdf(k - 2, n - 2, pi),)
    w = 1.0 - pi
    t2 = _cdf(k - 2, n - 2, pi)  # also for order 1: the floats of order 2 (a probability costs little)
    t1 = t2 + w * _pmf(k - 1, n - 2, pi)
    t0 = t1 + w * _pmf(k, n - 1, pi)
    return (t0, t1) if order == 1 else (t0, t1, t2)


#: unit roundoff of float64
UNIT_ROUNDOFF = 2.0 ** -53


def tail_error(n: int) -> float:
    """The relative error allowed for boost's binomial tails and probabilities at n trials: ``2 (n + 2) u``.

    Boost raises the rounded 1 - π to a power of about n, so a tail carries a relative error up to n times the
    rounding of 1 - π, ``n u / 2``; measured (``benchmarks/boost_binomial_large_n.py``, results
    ``benchmarks/results/boost_binomial_large_n_2026-12-05.txt``, against exact pmf sums and 40-digit quadrature):
    0.499 n u at n = 10⁵ .. 10⁹ in lower tails of small means (5.4e-8 at n = 10⁹), and below 1.3e-6 n u at
    n = 10¹⁰ .. 10¹⁵ over tails up to 30 standard deviations. The allowance is four times the worst case of that
    mechanism; it is a measured error model, not a proof (docs/engineering/certified-floating-point.md)."""
    return 2.0 * (n + 2) * UNIT_ROUNDOFF


def _slack(n: int) -> float:
    """The relative widening of a partial moment at n trials: :data:`ROUND_SLACK` or, from n of about 4.5·10⁶
    on, the tails' own error :func:`tail_error`, plus :data:`TAIL_SLACK` where the tails are derived
    (:data:`PMF_TAILS`)."""
    r = max(ROUND_SLACK, tail_error(n))
    return r + TAIL_SLACK if PMF_TAILS else r


def _upper_parts(n: int, pi, c):
    """E(N - c)₊ and E(N - c)₊² for N ~ Bin(n, π), each with its rounding slack: (e1, s1, e2, s2)."""
    pi, c = _pair(pi, c)
    k = np.floor(c)  # N > c  iff  N > k (the terms with N = c vanish)
    p0, q1, q2 = _upper_tails(n, pi, k, 2)
    m1 = n * pi * q1
    m2 = n * (n - 1) * pi ** 2 * q2
    e1 = m1 - c * p0
    e2 = m2 + (1 - 2 * c) * m1 + c * c * p0
    r = _slack(n)
    return (e1, r * (m1 + np.abs(c) * p0), e2,
            r * (m2 + np.abs(1 - 2 * c) * m1 + c * c * p0))


def _lower_parts(n: int, pi, c):
    """E(c - N)₊ and E(c - N)₊² for N ~ Bin(n, π), each with its rounding slack: (e1, s1, e2, s2)."""
    pi, c = _pair(pi, c)
    k = np.ceil(c) - 1  # N < c  iff  N <= k
    p0, q1, q2 = _lower_tails(n, pi, k, 2)
    m1 = n * pi * q1
    m2 = n * (n - 1) * pi ** 2 * q2
    e1 = c * p0 - m1
    e2 = c * c * p0 - (2 * c - 1) * m1 + m2
    r = _slack(n)
    return (e1, r * (np.abs(c) * p0 + m1), e2,
            r * (c * c * p0 + np.abs(2 * c - 1) * m1 + m2))


def _upper_first(n: int, pi, c):
    """(E(N - c)₊, its rounding slack) for N ~ Bin(n, π): the first moment of :func:`_upper_parts` (the same
    floats) without the tail the second moment needs."""
    pi, c = _pair(pi, c)
    k = np.floor(c)
    p0, q1 = _upper_tails(n, pi, k, 1)
    m1 = n * pi * q1
    return m1 - c * p0, _slack(n) * (m1 + np.abs(c) * p0)


def _lower_first(n: int, pi, c):
    """(E(c - N)₊, its rounding slack) for N ~ Bin(n, π): the first moment of :func:`_lower_parts` (the same
    floats) without the tail the second moment needs (with :data:`PMF_TAILS`, the same tails as well)."""
    pi, c = _pair(pi, c)
    k = np.ceil(c) - 1
    p0, q1 = _lower_tails(n, pi, k, 1)
    m1 = n * pi * q1
    return c * p0 - m1, _slack(n) * (np.abs(c) * p0 + m1)


def upper_moments(n: int, pi, c):
    """Upper bounds on (E(N - c)₊, E(N - c)₊²) for N ~ Bin(n, π) (arrays broadcast)."""
    e1, s1, e2, s2 = _upper_parts(n, pi, c)
    return np.maximum(e1 + s1, 0.0), np.maximum(e2 + s2, 0.0)


def upper_first_moment_low(n: int, pi, c):
    """A lower bound on E(N - c)₊ (N ~ Bin(n, π))."""
    e1, s1 = _upper_first(n, pi, c)
    return np.maximum(e1 - s1, 0.0)


def lower_first_moment_low(n: int, pi, c):
    """A lower bound on E(c - N)₊ (N ~ Bin(n, π))."""
    e1, s1 = _lower_first(n, pi, c)
    return np.maximum(e1 - s1, 0.0)


def log_mgf_hinge(n: int, pi, c, a, lo=None):
    """An upper bound on log E exp(-a (N - c)₊), N ~ Bin(n, π), a >= 0. ``lo`` = log P(N <= ⌊c⌋) if already
    known (it does not depend on a)."""
    pi, c = _pair(pi, c)
    k = np.floor(c)
    if lo is None:
        lo = _logcdf(k, n, pi)
    em = math.exp(-a)
    base = np.log1p(-pi * (-math.expm1(-a)))  # log(1 - π + π e^{-a})
    tilt = pi * em / (1 - pi + pi * em)
    ac, nb = a * c, n * base
    hi = ac + nb + _logsf(k, n, tilt)
    # the logs of the tails are off by their relative error; a·c + n·log(...) by a few units of its terms
    slack = np.maximum(LOG_SLACK, 1.01 * tail_error(n) + 4 * UNIT_ROUNDOFF * (np.abs(ac) + np.abs(nb)))
    return np.logaddexp(lo, hi) + slack


def _min_over_points(u, v):
    """max_i (u_i - κ v_i) at an approximate minimiser κ (a value attained by a valid κ)."""
    u, v = np.ravel(u), np.ravel(v)
    k = _argmin_kappa(u, v)
    return float(np.max(u - k * v))


def _cells_to_split(ub, point_best: float, tol: float, scale: float, ncells: int, rnd: int):
    """The refinement's choice in round ``rnd``: a mask of the cells to split (every cell whose bound exceeds the best
    point value by more than the tolerance; over the cell budget only the worst), or None where it stops."""
    bad = ub > point_best + tol * max(scale, abs(point_best), 1e-300)
    room = (MAX_CELLS - ncells) // (REFINE_SPLIT - 1)
    if not bad.any() or room <= 0 or rnd == REFINE_ROUNDS:
        return None
    if bad.sum() > room:  # over budget: split only the worst cells
        bad = np.zeros_like(bad)
        bad[np.argsort(ub)[-room:]] = True
    return bad


def _split_cells(xa, xb, bad, frac):
    """The cells of ``bad`` split at ``frac``: their ends, the split points per cell (ends included), the new
    interior points, and the children's ends."""
    ba, bb = xa[bad], xb[bad]
    sub = ba[:, None] + (bb - ba)[:, None] * frac[None, :]
    return ba, bb, sub, sub[:, 1:-1].ravel(), sub[:, :-1].ravel(), sub[:, 1:].ravel()


def certified_sup(cell_fn, d: int, kappa=None, tol: float = REFINE_TOL, scale: float = 0.0, abort: float = math.inf,
                  above=None):
    """(d · sup_x [h(x) - κ(x - 1/d)], κ) certified over x ∈ [0, 1].

    ``cell_fn(xa, xb)`` returns arrays (g_a, g_b) with ``h(x) - κ(x - 1/d) <= max_e (g_e - κ(x_e - 1/d))`` for
    every x in [x_a, x_b] and every κ (e the two endpoints); at a degenerate cell x_a = x_b = x it returns
    h(x) itself. κ (unless given) minimises the maximum over the initial grid points; then cells whose bound
    exceeds the largest point value by more than ``tol`` times max(``scale``, |that value|) are split (adaptive
    refinement, at most :data:`MAX_CELLS` cells). The returned value
    is d times the maximum of the cell bounds over cells covering [0, 1]: a certified bound.

    ``cell_fn`` must be elementwise (a cell's bound depends only on its own endpoints): each cell is evaluated
    once, when it is made, and the points and cells of a round go to ``cell_fn`` in one call.

    ``abort``: return ``(inf, κ)`` as soon as a point value shows that the returned value would exceed ``abort``
    (every point evaluated is an end of a final cell, whose bound dominates it: the value is at least d times the
    largest point value, up to :data:`LOWER_MARGIN`); otherwise the same floats as without it.

    A ``cell_fn`` that also bounds its values from its parent's (``cell_fn.evaluate`` and ``cell_fn.bound``, see
    :func:`_certified_sup_lazy`) is refined without the evaluations that cannot change the result: the same floats.
    For such a ``cell_fn``, ``above = (t, cutoff)`` lets it return ``(inf, κ)`` once the bound of a cell that stays
    to the end shows ``t + value > cutoff`` (a value that loses a comparison with ``cutoff``); otherwise, and on
    the plain path, the value."""
    if LAZY_CELLS and abort == math.inf and getattr(cell_fn, "bound", None) is not None:
        out = _certified_sup_lazy(cell_fn, d, kappa, tol, scale, above)
        if out is not None:
            return out
    pts = initial_points(d)
    xa, xb = pts[:-1], pts[1:]
    m = pts.size
    initial = getattr(cell_fn, "initial", None) if LAZY_CELLS else None
    if initial is None:
        ga, gb = cell_fn(np.concatenate([pts, xa]), np.concatenate([pts, xb]))
    else:  # the initial points' values kept from an earlier call (the same floats: evaluations are elementwise)
        ga, gb = (np.concatenate(pair) for pair in zip(initial()[:2], cell_fn(xa, xb)))
    pv = np.maximum(ga[:m], gb[:m])
    if kappa is None:
        kappa = _initial_kappa(cell_fn, pv, d) if initial is not None else _argmin_kappa(pv, pts - 1.0 / d)
    lin = lambda x: kappa * (x - 1.0 / d)
    point_best = float(np.max(pv - lin(pts)))
    if _exceeds(d * point_best, abort):
        return math.inf, kappa
    ub = np.maximum(ga[m:] - lin(xa), gb[m:] - lin(xb))
    frac = np.arange(REFINE_SPLIT + 1) / REFINE_SPLIT
    for rnd in range(REFINE_ROUNDS + 1):
        top = float(np.max(ub))
        bad = _cells_to_split(ub, point_best, tol, scale, xa.size, rnd)
        if bad is None:
            break
        # split the bad cells; their new interior points are also point evaluations
        ba, bb, sub, inner, na, nb = _split_cells(xa, xb, bad, frac)
        m = inner.size
        ga, gb = cell_fn(np.concatenate([inner, na]), np.concatenate([inner, nb]))
        point_best = max(point_best, float(np.max(np.maximum(ga[:m], gb[:m]) - lin(inner))))
        if _exceeds(d * point_best, abort):
            return math.inf, kappa
        xa = np.concatenate([xa[~bad], na])
        xb = np.concatenate([xb[~bad], nb])
        ub = np.concatenate([ub[~bad], np.maximum(ga[m:] - lin(na), gb[m:] - lin(nb))])
    return d * top, kappa


#: refine a supremum lazily where its cell function bounds its children (:func:`_certified_sup_lazy`); off: every
#: cell and point of every round is evaluated (the same floats)
LAZY_CELLS = True


def _certified_sup_lazy(cell_fn, d: int, kappa, tol: float, scale: float, above=None):
    """:func:`certified_sup` (without ``abort``) for a cell function that bounds its children: the same floats from
    fewer evaluations, or None where an evaluated value is NaN (the caller then takes the plain path).

    ``cell_fn.evaluate(xa, xb)`` returns ``(g_a, g_b, A, B)``: the two values of ``cell_fn(xa, xb)`` and two
    numbers per evaluation that bounds are made of. ``cell_fn.bound(XA, XB, A_cell, A_left, A_right, B_cell, sub)``,
    for split cells [XA, XB] (``sub``: the points each is split at, ends included; A_left and A_right the A of its
    end points), returns float upper bounds on the ``(g_a, g_b)`` that ``evaluate`` would return for each child.

    Where the round after a split is the last one (by the cell budget or the round count: the number of cells decides
    it before anything is evaluated), the plain refinement reads nothing of the split but the largest cell bound,
    which it returns: its new points only raise ``point_best``, which no later step reads. So the new points are not
    evaluated, and a child is evaluated only if its bound (``κ`` subtracts the same float from a value and from its
    upper bound, and rounding is monotone) exceeds the largest bound evaluated so far, the largest bounds first.
    Every other round is the plain one.

    ``above = (t, cutoff)``: in that last round every cell whose bound is known is one of the cells the returned
    value is the largest bound of, so once ``t + d · (the largest known)`` exceeds ``cutoff`` (in floats: rounding is
    monotone, so the returned value's ``t + d · top`` does too), ``(inf, κ)`` is returned."""
    ev, bound = cell_fn.evaluate, cell_fn.bound
    pts = initial_points(d)
    xa, xb = pts[:-1], pts[1:]
    m = pts.size
    initial = getattr(cell_fn, "initial", None)
    if initial is None:
        ga, gb, A, B = ev(np.concatenate([pts, xa]), np.concatenate([pts, xb]))
    else:  # the initial points' values kept from an earlier call (the same floats: evaluations are elementwise)
        ga, gb, A, B = (np.concatenate(pair) for pair in zip(initial(), ev(xa, xb)))
    pv = np.maximum(ga[:m], gb[:m])
    if kappa is None:
        kappa = _initial_kappa(cell_fn, pv, d)
    lin = lambda x: kappa * (x - 1.0 / d)
    point_best = float(np.max(pv - lin(pts)))
    ub = np.maximum(ga[m:] - lin(xa), gb[m:] - lin(xb))
    # per cell: its A, the A of its two end points, its B
    ac, alo, ahi, bc = A[m:], A[:m - 1], A[1:m], B[m:]
    frac = np.arange(REFINE_SPLIT + 1) / REFINE_SPLIT
    for rnd in range(REFINE_ROUNDS + 1):
        top = float(np.max(ub))
        bad = _cells_to_split(ub, point_best, tol, scale, xa.size, rnd)
        if bad is None:
            break
        ba, bb, sub, inner, na, nb = _split_cells(xa, xb, bad, frac)
        size = xa.size + (REFINE_SPLIT - 1) * ba.size
        if (MAX_CELLS - size) // (REFINE_SPLIT - 1) <= 0 or rnd + 1 == REFINE_ROUNDS:  # the next round is the last
            c_ga, c_gb = bound(ba, bb, ac[bad], alo[bad], ahi[bad], bc[bad], sub)
            c_bd = np.maximum(c_ga.ravel() - lin(na), c_gb.ravel() - lin(nb))
            top = float(np.max(ub[~bad]))
            chunk = 16
            while True:  # the children whose bound exceeds the largest bound so far, the largest bounds first
                if above is not None and above[0] + d * top > above[1]:
                    return math.inf, kappa
                need = np.flatnonzero(~(c_bd <= top))
                if not need.size:
                    break
                if need.size > chunk:
                    need = need[np.argsort(-c_bd[need], kind="stable")[:chunk]]
                    chunk *= 4
                ga, gb, _, _ = ev(na[need], nb[need])
                v = np.maximum(ga - lin(na[need]), gb - lin(nb[need]))
                if np.isnan(v).any():
                    return None
                c_bd[need] = -np.inf  # evaluated: its value is in top
                top = max(top, float(np.max(v)))
            return d * top, kappa
        m = inner.size
        ga, gb, A, B = ev(np.concatenate([inner, na]), np.concatenate([inner, nb]))
        point_best = max(point_best, float(np.max(np.maximum(ga[:m], gb[:m]) - lin(inner))))
        keep = ~bad
        ends = np.concatenate([alo[bad][:, None], A[:m].reshape(-1, REFINE_SPLIT - 1), ahi[bad][:, None]], axis=1)
        xa = np.concatenate([xa[keep], na])
        xb = np.concatenate([xb[keep], nb])
        ub = np.concatenate([ub[keep], np.maximum(ga[m:] - lin(na), gb[m:] - lin(nb))])
        ac = np.concatenate([ac[keep], A[m:]])
        bc = np.concatenate([bc[keep], B[m:]])
        alo = np.concatenate([alo[keep], ends[:, :-1].ravel()])
        ahi = np.concatenate([ahi[keep], ends[:, 1:].ravel()])
    return d * top, kappa


#: relative margin below the first-round point value (:func:`point_lower`) for float rounding in the
#: monotonicity it relies on
LOWER_MARGIN = 1e-9


def _exceeds(value: float, cutoff: float) -> bool:
    """Whether a value computed from point values, less :data:`LOWER_MARGIN`, is above ``cutoff``."""
    return cutoff < math.inf and value - LOWER_MARGIN * abs(value) > cutoff


def point_lower(cell_fn, d: int) -> float:
    """A value below :func:`certified_sup`'s (its first step only: the initial points, at the κ it would choose).

    Every initial point is an end of a final cell and a cell's bound dominates its ends' values, so the returned
    ``d · max_i (h(x_i) - κ(x_i - 1/d))`` (widened by :data:`LOWER_MARGIN`) is at most the certified value. It
    costs one evaluation per initial point; it serves to skip parameters that cannot win a search (whatever the
    searches choose, every value reported is a full certified supremum)."""
    pts = initial_points(d)
    initial = getattr(cell_fn, "initial", None)
    ga, gb = cell_fn(pts, pts) if initial is None else initial()[:2]
    pv = np.maximum(ga, gb)
    kappa = _initial_kappa(cell_fn, pv, d)
    v = d * float(np.max(pv - kappa * (pts - 1.0 / d)))
    return v - LOWER_MARGIN * abs(v)


def _initial_kappa(cell_fn, pv, d: int) -> float:
    """``_argmin_kappa(pv, x_i - 1/d)`` over the initial points x_i, the κ :func:`certified_sup` and
    :func:`point_lower` choose from the initial point values ``pv``; kept in ``cell_fn.kept`` (a dict) where the cell
    function keeps its initial values there (the same pv, hence the same float)."""
    kept = getattr(cell_fn, "kept", None)
    if kept is None:
        return _argmin_kappa(pv, initial_points(d) - 1.0 / d)
    if "kappa" not in kept:
        kept["kappa"] = _argmin_kappa(pv, initial_points(d) - 1.0 / d)
    return kept["kappa"]


def _hull_at_zero(u, v) -> float:
    """``min_κ max_i (u_i - κ v_i)`` for points with v of both signs: the least concave majorant of the points
    (v_i, u_i) at v = 0, i.e. the largest chord value there (linear-programming duality in one variable)."""
    u, v = np.ravel(u), np.ravel(v)
    neg, pos = v < 0, v > 0
    un, vn, up, vp = u[neg][:, None], v[neg][:, None], u[pos][None, :], v[pos][None, :]
    chords = (un * vp - up * vn) / (vp - vn)
    at_zero = u[v == 0]
    out = max(float(np.max(chords)) if chords.size else -math.inf, float(np.max(at_zero)) if at_zero.size else -math.inf)
    return out


#: the t-cells of :func:`_max_route_exceeds` are halved at most this many times
T_CELL_DEPTH = 4


def _lazy_argmin(lows, exact, losing=None) -> int:
    """``np.argmin([exact(i) for i in ...])`` (the first index of the minimum), calling ``exact(i)`` only where
    the lower bracket ``lows[i] < exact(i)`` leaves index i a chance. ``losing(i, b)`` (optional): ``exact(i)``, or
    inf where it shows ``exact(i) > b``; it is asked instead of ``exact(i)`` once there is a best value b so far
    (an index above it cannot be the first minimum), and ``exact`` is then only asked at the index returned."""
    order = sorted(range(len(lows)), key=lambda i: (lows[i], i))
    best = None
    for i in order:
        if best is not None:
            bv = exact(best)
            if lows[i] > bv or (lows[i] >= bv and i > best):
                continue
        v = exact(i) if best is None or losing is None else losing(i, bv)
        if math.isnan(v):  # np.argmin's answer with a NaN: its first index
            return int(np.argmin([exact(j) for j in range(len(lows))]))
        if best is None or v < exact(best) or (v == exact(best) and i < best):
            best = i
    return best


class _PointMemo:
    """The values of an elementwise function ``fn`` (array -> tuple of arrays) at points x, each point computed
    once: the same floats as ``fn(x)`` (a value does not depend on the
    other points it is computed with)."""

    def __init__(self, fn):
        self.fn, self.x, self.v = fn, np.empty(0), None

    def __call__(self, x):
        x = np.ravel(x)
        if self.x.size:  # look every point up directly (searchsorted takes unsorted queries): no sort of x
            i = np.searchsorted(self.x, x)
            np.minimum(i, self.x.size - 1, out=i)
            hit = self.x[i] == x
        else:
            hit = np.zeros(x.size, bool)
        if not hit.all():
            new = np.unique(x[~hit])  # the points not kept yet, once each and sorted
            vals = np.array([np.broadcast_to(c, new.shape) for c in self.fn(new)])
            if self.v is None:
                self.x, self.v = new, vals
            else:  # both sorted: insert in place
                at = np.searchsorted(self.x, new)
                self.x, self.v = np.insert(self.x, at, new), np.insert(self.v, at, vals, axis=1)
            i = np.searchsorted(self.x, x)
        return self.v[:, i]


def _argmin_kappa(u, v):
    """An approximate minimiser over κ of max_i (u_i - κ v_i) (convex in κ; bisection on the slope).

    With finite u and v the slope is found on Python floats: ``u_i - k*v_i`` is the same two IEEE operations as
    numpy's ``u - k * v`` (no fused multiply-add), and the first index of the largest value is ``np.argmax``'s, so
    the bisection takes the same steps and returns the same float as :func:`_argmin_kappa_numpy` at a few times
    less cost (it is called about a hundred times per certified supremum); :func:`_bisect_pairs` also leaves out
    the lines that cannot be the largest in the bracket (the same steps again)."""
    u, v = np.ravel(u), np.ravel(v)
    if u.size != v.size or not (np.isfinite(u).all() and np.isfinite(v).all()):
        return _argmin_kappa_numpy(u, v)
    return _bisect_pairs(list(zip(u.tolist(), v.tolist())))


def _slope_pairs(k, pairs):
    """Minus the v of the first largest ``u - k*v`` over ``pairs`` (in their order), on Python floats."""
    bu, bv = pairs[0]
    best, at = bu - k * bv, bv
    for a, b in pairs:
        x = a - k * b
        if x > best:
            best, at = x, b
    return -at


def _prune_pairs(pairs, lo: float, hi: float):
    """The lines of ``pairs`` (their order kept) that can be a largest ``u - k*v`` for some float k in [lo, hi].

    The float value ``fl(u - fl(k*v))`` of a line is monotone in k (rounding to nearest is monotone: ``fl(k*v)`` is
    nondecreasing in k for v > 0, nonincreasing for v < 0, and ``fl(u - w)`` is nonincreasing in w), so on
    [lo, hi] it lies between its values at the two ends. Every k in the bracket has a largest value at least
    ``lb``, the largest of the lines' smaller end values; a line whose larger end value is below ``lb`` is below
    the largest at every k of the bracket (strictly: it is never a first largest, nor tied with one), so the first
    largest over the lines kept is the first largest over all, at every k in the bracket."""
    lows, ups = [], []
    for a, b in pairs:
        x, y = a - lo * b, a - hi * b
        if x < y:
            lows.append(x)
            ups.append(y)
        else:
            lows.append(y)
            ups.append(x)
    lb = max(lows)
    return [p for p, up in zip(pairs, ups) if up >= lb]


#: the steps of :func:`_bisect_pairs` before which the lines that cannot be the largest are left out
_PRUNE_STEPS = frozenset(range(8, 60, 8))


def _bisect_pairs(pairs):
    """:func:`_bisect_kappa` on :func:`_slope_pairs`: the same steps and the same float, with less work.

    - Every eighth step, the lines that cannot be a first largest anywhere in the current bracket are left out
      (:func:`_prune_pairs`); every later midpoint lies in that bracket, so each slope is the same float. Two lines
      left (the common end: one on each side of the minimiser) are compared directly, as ``_slope_pairs`` would.
    - Once the midpoint equals an end of the bracket, every later step computes that midpoint again and keeps it
      (its slope has the sign it had when that end was set, or is 0 and the midpoint is returned), so the loop's
      result is that midpoint (``0.5 * (x + x) == x``): it is returned at once."""
    lo, hi = -1.0, 1.0
    for _ in range(200):
        if _slope_pairs(lo, pairs) <= 0:
            break
        lo *= 4
    for _ in range(200):
        if _slope_pairs(hi, pairs) >= 0:
            break
        hi *= 4
    two = None  # the two lines left by pruning, compared directly
    for step in range(60):
        if two is None and step in _PRUNE_STEPS and len(pairs) > 2:
            pairs = _prune_pairs(pairs, lo, hi)
            if len(pairs) == 2:
                two = pairs
        mid = 0.5 * (lo + hi)
        if mid == lo or mid == hi:
            return mid
        if two is not None:
            (a1, b1), (a2, b2) = two
            sl = -b2 if a2 - mid * b2 > a1 - mid * b1 else -b1  # _slope_pairs on the two lines
        else:
            sl = _slope_pairs(mid, pairs)
        if sl > 0:
            hi = mid
        elif sl < 0:
            lo = mid
        else:
            return mid
    return 0.5 * (lo + hi)


def _argmin_kappa_numpy(u, v):
    """:func:`_argmin_kappa` on numpy arrays (any values; NaN as ``np.argmax`` takes it)."""
    u, v = np.ravel(u), np.ravel(v)

    def slope(k):
        return -float(v[int(np.argmax(u - k * v))])

    return _bisect_kappa(slope)


def _bisect_kappa(slope):
    """The bisection of :func:`_argmin_kappa` on ``slope(κ)`` (minus the v of a maximiser)."""
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
        self.memo = {}  # parts of cell bounds that do not depend on the route's parameter, by point x

    def pi(self, x):
        return self.qs + self.D * x


def _max_cells(st: _Setup, t: float):
    """The cell bounds of the max route at t (see :func:`max_route`)."""
    n, D = st.n, st.D

    def lower_part(xb):
        pb = st.pi(xb)
        e1, s1 = _lower_first(n, pb, np.full_like(pb, n * st.qs))
        return (np.maximum(e1 - s1, 0.0) / (n * D),)

    memo = st.memo.get("max-lower") or st.memo.setdefault("max-lower", _PointMemo(lower_part))

    def evaluate(xa, xb):
        pa, pb = st.pi(xa), st.pi(xb)
        e1, s1 = _upper_first(n, pb, n * (pa + D * t))
        A = np.maximum(e1 + s1, 0.0) / (n * D)
        B = memo(xb)[0]
        return A - xa * B, A - xb * B, A, B

    def cell(xa, xb):
        ga, gb, _, _ = evaluate(xa, xb)
        return ga, gb

    kept = st.memo.setdefault(("max-initial", t), {})

    def initial():
        """``evaluate`` at the initial points, kept per t with the κ chosen from them (the lower value, the cutoff
        tests and the certified supremum at the same t all start from them)."""
        if "values" not in kept:
            pts = initial_points(st.d)
            kept["values"] = evaluate(pts, pts)
        return kept["values"]

    cell.evaluate = evaluate
    cell.bound = lambda *args: _max_cell_bounds(st, t, *args)
    cell.initial, cell.kept = initial, kept
    return cell


def _max_cell_bounds(st: _Setup, t: float, ba, bb, a_cell, a_left, a_right, b_cell, sub):
    """Upper bounds on the (g_a, g_b) the max route's cells evaluate to for the children of split cells
    [x_a, x_b] (the ``bound`` of :func:`_certified_sup_lazy`), from the split cell's own A and B and the A of its
    ends; arrays of shape (cells, REFINE_SPLIT).

    Write F(π, c) = E(N - c)₊, N ~ Bin(n, π), and c(x) = n(π(x) + Dt). A cell [u, v] has A = F(π(v), c(u))/(nD)
    and B = E(nq* - N)₊/(nD) under π(v) (each widened by its rounding slack); a point x has A = F(π(x), c(x))/(nD).
    F is convex in π (its derivative n E[f(N'+1) - f(N')], N' ~ Bin(n-1, π), f the hinge, grows with π), convex
    and nonincreasing in c, nondecreasing in π. For u, v in [x_a, x_b]: ``F(π(v), c(u)) <= F(π(v), c(x_a))``, at
    most the chord in π between the values at π(x_a) (the left end's A) and π(x_b) (the split cell's A); and
    ``F(π(v), c(u)) <= F(π(x_b), c(u))``, at most the chord in c between c(x_a) (the split cell's A) and c(x_b)
    (the right end's A). B decreases in π, so each child's B is at least the split cell's. The computed values
    exceed the exact ones by at most their slack (``_slack(n)`` times the sum of the terms, plus the tails' own
    error, taken as a thousandth of it) and a few units of rounding, added here; g_a = A - u B and g_b = A - v B
    are then bounded by the same float operations on the bounds (rounding is monotone)."""
    n, D = st.n, st.D
    r = 1.1 * _slack(n)
    P = st.pi(sub)  # the floats the cells compute at these points
    C = n * (P + D * t)
    pa, pb, c0, c1 = P[:, :1], P[:, -1:], C[:, :1], C[:, -1:]
    dp, dc = pb - pa, c1 - c0
    lam = np.clip(np.where(dp > 0, (P - pa) / np.where(dp > 0, dp, 1.0), 1.0), 0.0, 1.0)
    mu = np.clip(np.where(dc > 0, (C - c0) / np.where(dc > 0, dc, 1.0), 1.0), 0.0, 1.0)
    al, ac, ar = a_left[:, None], a_cell[:, None], a_right[:, None]
    by_pi = al + lam * (ac - al)  # at F(π(x), c(x_a)) for each x of sub
    by_c = ac + mu * (ar - ac)  # at F(π(x_b), c(x)) for each x of sub
    tiny = 1e-13 * (np.abs(al) + np.abs(ac) + np.abs(ar))
    c_a = np.minimum(by_pi[:, 1:], by_c[:, :-1]) + tiny + r * (P[:, 1:] + P[:, :-1] + D * t) / D
    c_b = np.maximum(b_cell[:, None] * (1 - 1e-13) - r * (st.qs + P[:, 1:]) / D, 0.0)
    return c_a - sub[:, :-1] * c_b, c_a - sub[:, 1:] * c_b


def max_route(st: _Setup, t: float, lower: bool = False, above: float = math.inf) -> float:
    """t + d · (least concave majorant of g_t at 1/d), certified (see the module docstring).

    Cell [x_a, x_b]: ``E(N - nπ(x) - nDt)₊ <= E_{π_b}(N - nπ_a - nDt)₊`` (law stochastically larger, threshold
    smaller) and ``E(nq* - N)₊ >= E_{π_b}(nq* - N)₊`` (a nonincreasing function of N); the part
    ``-x E(nq* - N)₊/(nD)`` is then bounded by a linear function of x. The second expectation does not depend
    on t: it is computed once per x_b for all t. ``lower``: a value below the certified one
    (:func:`point_lower`), for the searches. ``above``: inf may be returned where the value is shown to exceed it
    (:func:`certified_sup`'s ``above``), for a comparison that it then loses."""
    cell = _max_cells(st, t)
    if lower:
        return t + point_lower(cell, st.d)
    return t + certified_sup(cell, st.d, scale=t / st.d, above=(t, above) if above < math.inf else None)[0]


def _max_route_exceeds(st: _Setup, ta: float, tb: float, cutoff: float) -> bool:
    """True only if ``max_route(st, t) > cutoff`` for every t in [ta, tb].

    For t in a cell [t_a, t_b] of t: g_t >= g_{t_b} pointwise (E(N - c)₊ decreases in the threshold c), and every
    κ gives ``d · sup_x [g(x) - κ(x - 1/d)] >= d · min_κ max_i [g(x_i) - κ(x_i - 1/d)]`` over the initial points
    x_i, so ``max_route(st, t) >= t_a + d · hull_i(g_{t_b})``. Cells are halved (geometric midpoints, at most
    :data:`T_CELL_DEPTH` times) until each is above the cutoff; False as soon as one cannot be."""
    pts = initial_points(st.d)
    v = pts - 1.0 / st.d
    hulls = {}

    def hull(t):
        if t not in hulls:
            h = st.d * _hull_at_zero(_max_cells(st, t).initial()[0], v)
            hulls[t] = h - LOWER_MARGIN * abs(h)
        return hulls[t]

    stack = [(ta, tb, 0)]
    while stack:
        a, b, depth = stack.pop()
        if a + hull(b) > cutoff:
            continue
        if depth >= T_CELL_DEPTH:
            return False
        m = math.sqrt(a * b)
        stack += [(m, b, depth + 1), (a, m, depth + 1)]
    return True


def threshold_main(st: _Setup, mu: float, loss: str, lower: bool = False, abort: float = math.inf) -> float:
    """d · majorant of E((y - μ)₊ - x)² (ℓ2²) or of 2E(w - μ)₊ (ℓ1), certified cell by cell.

    ℓ2²: with v = (y - μ)₊ and x >= 0, ``E(v - x)² = E(y - μ - x)₊² + E(x - v)₊²``; the first part is a
    nondecreasing function of N and nonincreasing in x (law π_b, threshold at x_a), the second
    ``E(x - v)₊² = E(x + μ - y)₊² - E(μ - y)₊² - 2x E(μ - y)₊`` (since ``(x - v)₊ = min(x, (x + μ - y)₊)``) is
    nonincreasing in N and nondecreasing in x (law π_a, x = x_b); the moments of (μ - y)₊ depend on x_a only
    (computed once per point).
    ℓ1: the monotone bound ``2E_{π_b}(N - nπ_a - nDμ)₊/(nD)``, or, where smaller, Jensen's
    ``2E(w - μ)₊ <= E|w| <= sqrt(π(1-π)/n)/D``, a concave function of x, below its tangent at x_a."""
    n, D = st.n, st.D
    nD = n * D
    def at_mu(xa):
        pa = st.pi(xa)
        g1, t1, g2, t2 = _lower_parts(n, pa, np.full_like(pa, n * (st.qs + D * mu)))
        return g1 - t1, g2 - t2

    memo = st.memo.get(("threshold-lower", mu)) or st.memo.setdefault(("threshold-lower", mu), _PointMemo(at_mu))

    def cell_l2(xa, xb):
        pa, pb = st.pi(xa), st.pi(xb)
        e1, s1, e2, s2 = _upper_parts(n, pb, n * (st.qs + D * (mu + xa)))
        upper = np.maximum(e2 + s2, 0.0) / nD ** 2
        f1, r1, f2, r2 = _lower_parts(n, pa, n * (st.qs + D * (mu + xb)))
        h1, h2 = memo(xa)
        lower = ((f2 + r2) - h2) / nD ** 2 - 2 * xb * h1 / nD
        alpha = upper + np.maximum(lower, 0.0)
        return alpha, alpha

    def cell_l1(xa, xb):
        pa, pb = st.pi(xa), st.pi(xb)
        e1, s1 = _upper_first(n, pb, n * (pa + D * mu))
        alpha = 2 * np.maximum(e1 + s1, 0.0) / nD
        sd = np.sqrt(pa * (1 - pa) / n) / D * (1 + ROUND_SLACK)
        slope = (1 - 2 * pa) / (2 * np.sqrt(n * pa * (1 - pa)))  # d/dx sqrt(π(1-π)/n)/D at x_a
        tan_b = sd + slope * (xb - xa)
        use_tan = np.maximum(sd, tan_b) < alpha
        return np.where(use_tan, sd, alpha), np.where(use_tan, tan_b, alpha)

    fn = cell_l2 if loss == "l2sq" else cell_l1

    kept = st.memo.setdefault(("threshold-initial", mu, loss), {})

    def initial():  # fn at the initial points, kept per (μ, loss) with its κ: the lower value and the supremum share them
        if "values" not in kept:
            pts = initial_points(st.d)
            kept["values"] = fn(pts, pts)
        return kept["values"]

    fn.initial, fn.kept = initial, kept
    return point_lower(fn, st.d) if lower else certified_sup(fn, st.d, abort=abort)[0]


def _bad_lower_memo(st: _Setup, mu: float):
    """log P(N <= ⌊c⌋), c = n(q* + Dμ), N ~ Bin(n, π(x)), per point x (the λ-free part of L_λ)."""
    key = ("bad-lower", mu)
    if key not in st.memo:
        n, c = st.n, st.n * (st.qs + st.D * mu)

        def lower(x):
            pi = st.pi(x)
            return (_logcdf(np.floor(np.full_like(pi, c)), n, pi),)

        st.memo[key] = _PointMemo(lower)
    return st.memo[key]


def log_bad_event(st: _Setup, mu: float, lam: float) -> float:
    """λ + d · majorant of L_λ at 1/d: a bound on log P(τ < μ) (L_λ nonincreasing: its value at x_a). A cell's
    bound is the value at its left end, a point already evaluated; log P(N <= ⌊c⌋) does not depend on λ and is
    computed once per point for all λ."""
    n, D = st.n, st.D
    c = n * (st.qs + D * mu)
    a = lam / (n * D)
    lo_memo = _bad_lower_memo(st, mu)

    def value(x):
        pi = st.pi(x)
        return (log_mgf_hinge(n, pi, np.full_like(pi, c), a, lo=lo_memo(x)[0]),)

    def cell(xa, xb):
        u, inv = np.unique(xa, return_inverse=True)  # a cell's bound is its left end's value
        L = value(u)[0][inv.ravel()]
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


#: the λ range :func:`bad_event` searches: [1/(2σ), BAD_LAMBDA_MAX]
BAD_LAMBDA_MAX = 4e12


def bad_event_lower(st: _Setup, mu: float) -> float:
    """A value at most :func:`bad_event` (st, μ, any target), from the initial points only.

    Every λ the search tries lies in [1/(2σ), :data:`BAD_LAMBDA_MAX`] and the value there is at least
    ``h(λ) = λ + d · hull_i L_λ(x_i)`` (:func:`point_lower`'s argument, with the exact minimum over κ). Each
    L_λ(x) is a log moment generating function, convex in λ, and the hull is a maximum of nonnegative
    combinations of them, so h is convex: on a cell between samples it lies above the extensions of the chords
    of the neighbouring samples. Samples double from 1/(2σ) until h increases (beyond, h stays above the last
    chord's increasing extension), then are refined around the smallest. Returns ``exp(min(0, that bound))``
    (the search's value is ``exp(min(0, ...))``), widened by an absolute 1e-6 in the logarithm for rounding."""
    if mu <= 0:
        return 0.0
    n, D, d = st.n, st.D, st.d
    pts = initial_points(d)
    v = pts - 1.0 / d
    pi = st.pi(pts)
    cc = np.full_like(pi, n * (st.qs + D * mu))
    lo = _bad_lower_memo(st, mu)(pts)[0]
    hs = {}

    def h(lam):
        if lam not in hs:
            hs[lam] = lam + d * _hull_at_zero(log_mgf_hinge(n, pi, cc, lam / (n * D), lo=lo), v)
        return hs[lam]

    lam = 0.5 / st.sigma
    h(lam)
    while lam < BAD_LAMBDA_MAX:
        nxt = min(2 * lam, BAD_LAMBDA_MAX)
        if h(nxt) > h(lam):
            break
        lam = nxt
    for _ in range(3):  # refine around the smallest sample
        g = sorted(hs)
        j = min(range(len(g)), key=lambda i: hs[g[i]])
        for a, b in ((g[max(j - 1, 0)], g[j]), (g[j], g[min(j + 1, len(g) - 1)])):
            if b > a:
                h(math.sqrt(a * b))
    g = sorted(hs)
    m = len(g) - 1
    if not all(math.isfinite(v) for v in hs.values()):
        return 0.0

    def line(i, j):  # the chord through samples i and j (its extension is below h outside [g_i, g_j])
        slope = (hs[g[j]] - hs[g[i]]) / (g[j] - g[i])
        return lambda x: hs[g[i]] + slope * (x - g[i])

    out = math.inf
    for j in range(m):  # cell [g_j, g_{j+1}]
        lines = ([line(j - 1, j)] if j >= 1 else []) + ([line(j + 1, j + 2)] if j + 2 <= m else [])
        if not lines:
            return 0.0
        a, b = g[j], g[j + 1]
        xs = [a, b]
        if len(lines) == 2:  # where the two lines cross
            s1 = (lines[0](b) - lines[0](a)) / (b - a)
            s2 = (lines[1](b) - lines[1](a)) / (b - a)
            if s1 != s2:
                x = a + (lines[1](a) - lines[0](a)) / (s1 - s2)
                if a < x < b:
                    xs.append(x)
        out = min(out, min(max(L(x) for L in lines) for x in xs))
    if g[m] < BAD_LAMBDA_MAX:  # beyond the last sample: the last chord's extension
        if m < 1:
            return 0.0
        last = line(m - 1, m)
        out = min(out, last(g[m]), last(BAD_LAMBDA_MAX))
    return math.exp(min(0.0, out - 1e-6))


def _golden(fun, lo, hi, iters=14, lower=None, losing=None):
    """Approximate minimiser of fun on [lo, hi] (any result is only a choice of a free parameter).

    ``lower(x)`` (optional) is a cheap value below ``fun(x)``: a new point whose lower value exceeds the exact
    value of the point it is compared with loses that comparison and cannot be the minimum, so ``fun`` is not
    called there (the same choices and the same result as without it). ``losing(x, other)`` (optional) is
    ``fun(x)``, or inf where it shows ``fun(x) > other``: a new point is compared with ``other`` only, and a point
    above it loses whatever its value (it leaves the bracket and is not the minimum), so again the same result."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    vs = (lambda x, other: fun(x)) if losing is None else losing

    def new(x, other):  # fun(x), or inf where x certainly loses against the exact value ``other``
        return math.inf if lower is not None and lower(x) > other else vs(x, other)

    c, e = b - g * (b - a), a + g * (b - a)
    if lower is None:
        fc, fe = fun(c), fun(e)
    else:
        lc, le = lower(c), lower(e)
        if le < lc:  # the more promising point exactly first
            fe = fun(e)
            fc = math.inf if lc > fe else vs(c, fe)
        else:
            fc = fun(c)
            fe = math.inf if le > fc else vs(e, fc)
    best = min((fc, c), (fe, e))
    for _ in range(iters):
        if fc < fe:
            b, e, fe = e, c, fc
            c = b - g * (b - a)
            fc = new(c, fe)
        else:
            a, c, fc = c, e, fe
            e = a + g * (b - a)
            fe = new(e, fc)
        best = min(best, (fc, c), (fe, e))
    return best


def threshold_route(st: _Setup, loss: str, cutoff: float = math.inf):
    """(bound, μ): min over μ of main(μ) + 2 P(τ < μ). main is evaluated on a grid of μ; the event's
    probability only for μ up to the minimiser of main, from the largest down, stopping once it is
    negligible (the probability can only shrink as μ decreases).

    main is computed in full only where its lower value (:func:`point_lower`) leaves it a part in these choices;
    None when every lower value exceeds ``cutoff`` (then so does the bound). The loop's first two tests on an index
    (its lower value, and the event's lower value :func:`bad_event_lower`, against the best so far) only get
    stronger as the best decreases from main(0); where every index fails them at main(0), the loop skips them all
    whatever the argmin is, so the route is (main(0), 0) without the argmin, which would compute main at most grid
    values (the same floats: ``tests/test_subset_tail_speed.py`` keeps the plain search)."""
    grid = [st.sigma * f for f in np.linspace(0.0, 4.0, 9)]
    lows = [threshold_main(st, m, loss, lower=True) for m in grid]
    if all(v > cutoff for v in lows):  # the bound is at least min_i main(μ_i) (False with a NaN)
        return None
    mains = {}
    if cutoff < math.inf and _threshold_exceeds(st, loss, grid, lows, mains, cutoff):
        return None

    def main(i):
        if i not in mains:
            mains[i] = threshold_main(st, grid[i], loss)
        return mains[i]

    def dead(i, b):
        """Whether the loop below skips index i when its best value is b (and, b only decreasing and both tests
        monotone in b, at every later b): the loop's own two first tests."""
        if lows[i] >= b:
            return True
        # with p >= p_low: if 2 p_low > best - main(μ_i) and 2 p_low > 1e-3 best > 1e-3 main(μ_i), μ_i neither
        # improves the bound nor ends the loop, whatever main(μ_i) is (main(μ_i) >= lows[i])
        return 2 * bad_event_lower(st, grid[i]) > max(b - lows[i], 1e-3 * b)

    best = (main(0), 0.0)  # μ = 0: no event
    if math.isfinite(best[0]) and all(math.isfinite(v) for v in lows) and all(dead(i, best[0]) for i in
                                                                              range(len(grid) - 1, 0, -1)):
        # the loop would skip every index, whichever i_min the argmin gives: (main(0), 0) without the argmin
        return best
    i_min = _lazy_argmin(lows, main)
    for i in range(i_min, 0, -1):
        if dead(i, best[0]):
            continue
        if main(i) >= best[0]:
            continue
        p = bad_event(st, grid[i], target=1e-3 * mains[i])
        tot = mains[i] + 2 * p
        best = min(best, (tot, grid[i]))
        if 2 * p <= 1e-3 * mains[i]:
            break
    return best


def _threshold_exceeds(st: _Setup, loss: str, grid, lows, mains: dict, cutoff: float) -> bool:
    """True only if :func:`threshold_route` (st, loss) exceeds ``cutoff``; the main values it computes in full are
    put in ``mains`` (by grid index) for the search to reuse.

    The route's value is main(0) or main(μ_i) + 2 p_i for some grid index i >= 1, where p_i >= :func:`bad_event_lower`
    and main(μ_i) >= lows[i]; so it exceeds the cutoff if main(0) does and, for every i >= 1, lows[i] + 2 (the
    event's lower value) does or main(μ_i) does. A main value is computed with ``abort`` at the cutoff: it stops as
    soon as its point values exceed the cutoff, and is otherwise the full value (the same floats)."""
    def main_exceeds(i):
        if i not in mains:
            v = threshold_main(st, grid[i], loss, abort=cutoff)
            if v < math.inf:
                mains[i] = v
                return v > cutoff
            return True
        return mains[i] > cutoff

    for i in range(1, len(grid)):
        if lows[i] > cutoff or lows[i] + 2 * bad_event_lower(st, grid[i]) > cutoff:
            continue
        if not main_exceeds(i):
            return False
    return main_exceeds(0)


def max_route_best(st: _Setup, cutoff: float = math.inf):
    """(bound, t): the max route at t on a grid, then a golden-section search around the grid's best. Full
    certified values only where the lower value (:func:`point_lower`) leaves t a part in the choice; None
    when it shows that the bound exceeds ``cutoff``."""
    tot = lambda t: max_route(st, t)
    low = lambda t: max_route(st, t, lower=True)
    grid = [st.sigma * f for f in (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)]
    lows = [low(t) for t in grid]
    # every t tried lies in [grid[0], grid[-1]]: the bound exceeds the cutoff if max_route does on each grid cell
    if all(v > cutoff for v in lows) and all(_max_route_exceeds(st, grid[j], grid[j + 1], cutoff)
                                  for j in sorted(range(len(grid) - 1), key=lambda j: min(lows[j], lows[j + 1]))):
        return None
    vals = {}

    def val(i):
        if i not in vals:
            vals[i] = tot(grid[i])
        return vals[i]

    def losing(i, other):  # the value, or inf where shown above ``other`` (then it is not kept as the value)
        if i in vals:
            return vals[i]
        v = max_route(st, grid[i], above=other)
        if v < math.inf:
            vals[i] = v
        return v

    i = _lazy_argmin(lows, val, losing)
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    v, t = _golden(tot, lo, hi, iters=8, lower=low, losing=lambda t, other: max_route(st, t, above=other))
    return min((v, t), (vals[i], grid[i]))


def _default_s(d, eps):
    return min(max(math.ceil(d / (math.exp(min(eps, 700.0)) + 1)), 1), max(d - 1, 1))


@persistent
def best(route: str, n: int, eps: float, d: int, loss: str = "l2sq"):
    """(certified bound, s, route parameter) of ``route`` ('max' or 'threshold') at (n, ε, d): s chosen by a
    search around Ye & Barg's ⌈d/(e^ε+1)⌉ (each s gives a valid bound). Kept in memory and in the disk cache
    (boundcalc.cache.diskcache: keyed by the exact arguments and the package's fingerprint), since a planner
    asks for the same n again. Where :func:`prefetch` started the search on another thread, its result (the same
    function of the same arguments)."""
    fut = _PENDING.pop((route, n, eps, d, loss), None)
    if fut is not None:
        return fut.result()
    return _search(route, n, eps, d, loss)


#: searches started by :func:`prefetch`, by the arguments of :func:`best`
_PENDING: dict = {}
_POOL = None


def _cores() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def prefetch(route: str, loss: str, n, eps, d) -> None:
    """Start :func:`tail_value` (route, loss, n, ε, d)'s search on a worker thread, where the process may use two
    cores and the value is neither known nor already started; :func:`best` then waits for it instead of searching.

    The search's time is almost all in scipy's binomial tails, which release the interpreter lock, so a caller
    that needs both routes (``rate`` lists every bound) gets them in about the time of the slower one. The value is
    the same: the same function of the same arguments, which reads no state another thread writes (numpy's error
    state is per thread). CPU time is not saved, only waiting."""
    global _POOL
    n_i, d_i = int(math.floor(float(n) + 1e-9)), int(round(float(d)))
    eps = float(eps)
    if not (math.isfinite(eps) and eps > 0) or n_i < 2 or d_i < 2 or _cores() < 2:
        return
    args = (route, n_i, eps, d_i, loss)
    if args in _PENDING or best.known(*args):
        return
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="boundcalc-subset-tail")
    _PENDING[args] = _POOL.submit(_search, *args)


def _search(route: str, n: int, eps: float, d: int, loss: str = "l2sq"):
    """The search of :func:`best` (not kept)."""
    if n < 2 or d < 2 or n > SEARCH_MAX_N:
        return math.nan, 0, math.nan
    s0 = _default_s(d, eps)
    ps, qs, D = subset_constants(eps, d, s0)
    if math.sqrt(qs * (1 - qs) / n) / D * d < USEFUL_BELOW:  # noise of a coordinate, against 1/d
        return math.nan, 0, math.nan  # projection cannot help (and the grid would need ~sqrt(n) cells)

    def at(s, cutoff):
        st = _Setup(n, eps, d, s)
        return max_route_best(st, cutoff) if route == "max" else threshold_route(st, loss, cutoff)

    tried = {}

    def val(s, cutoff=math.inf):
        """(bound at s, s); (inf, s) where the bound is shown to exceed ``cutoff`` without computing it (then it
        cannot win: the cutoff is the best bound so far)."""
        s = min(max(int(s), 1), d - 1)
        if s not in tried:
            tried[s] = at(s, cutoff)
        return (math.inf if tried[s] is None else tried[s][0]), s

    cands = sorted({min(max(round(s0 * f), 1), d - 1) for f in (0.4, 0.7, 1.0)})
    for s in sorted(cands, key=lambda s: (s != s0, -s)):  # the default first: the best cutoff for the others
        val(s, min([val(c)[0] for c in cands if c in tried] or [math.inf]))
    cur = min(val(s) for s in cands)
    step = 1.25
    for _ in range(4):
        s = cur[1]
        lo = val(math.floor(s / step), cur[0])
        nxt = min(cur, lo, val(math.ceil(s * step), min(cur[0], lo[0])))
        if nxt[1] == s:
            if step <= 1.05:
                break
            step = 1 + (step - 1) / 2
        cur = nxt
    v, s = cur
    return v, s, tried[s][1]


#: the steps the subset-size search of :func:`best` can take (each round halves the step's excess over 1)
_S_STEPS = (1.25, 1.125, 1.0625, 1.03125)


def _reachable_sizes(d: int, eps: float) -> list[int]:
    """Every subset size :func:`best` can evaluate at (ε, d), whatever the values: its three first candidates and
    what four rounds of steps down (⌊s/step⌋) or up (⌈s·step⌉) reach from them, for every step it can use."""
    s0 = _default_s(d, eps)
    clamp = lambda s: min(max(int(s), 1), d - 1)
    seen = {clamp(round(s0 * f)) for f in (0.4, 0.7, 1.0)}
    front = set(seen)
    for _ in range(4):
        nxt = set()
        for s in front:
            for step in _S_STEPS:
                nxt.add(clamp(math.floor(s / step)))
                nxt.add(clamp(math.ceil(s * step)))
        front = nxt - seen
        seen |= nxt
    return sorted(seen)


def exceeds(route: str, loss: str, n, eps, d, cutoff: float) -> bool:
    """True only if :func:`tail_value` (route, loss, n, ε, d) > ``cutoff`` (see :func:`_exceeds_kept`)."""
    return bool(_exceeds_kept(route, loss, float(n), float(eps), float(d), float(cutoff)))


@persistent  # a pure function of numbers: kept in memory and on disk, since a planner asks again at the same points
def _exceeds_kept(route: str, loss: str, n, eps, d, cutoff: float) -> float:
    """1.0 only if :func:`tail_value` (route, loss, n, ε, d) > ``cutoff``; 0.0 says nothing.

    For the max route (ℓ2²): every subset size the search can reach (:func:`_reachable_sizes`) and every t it can
    try (its grid and the golden-section search between grid points lie in [σ/2, 6σ]) give a value above the
    cutoff (:func:`_max_route_exceeds`, from the initial points only). About 1/5 of the search's cost where the
    route is far from the cutoff; meant for a planner that only needs the best of several bounds. The threshold
    route is not tested (False)."""
    n_i, d_i = int(math.floor(float(n) + 1e-9)), int(round(float(d)))
    eps, cutoff = float(eps), float(cutoff)
    if route != "max" or loss != "l2sq" or not (math.isfinite(eps) and eps > 0) or n_i < 2 or d_i < 2:
        return 0.0
    if not cutoff < 2.0:  # tail_value is at most 2
        return 0.0
    s0 = _default_s(d_i, eps)
    if _Setup(n_i, eps, d_i, s0).sigma * d_i < USEFUL_BELOW:  # best() gives NaN: an unusable bound, not a large one
        return 0.0
    for s in _reachable_sizes(d_i, eps):
        st = _Setup(n_i, eps, d_i, s)
        lo, hi = 0.5 * st.sigma, 6.0 * st.sigma
        if lo > cutoff:
            continue
        if not _max_route_exceeds(st, lo, hi, cutoff):
            return 0.0
    return 1.0


def quick_upper(route: str, loss: str, n, eps, d) -> float:
    """A value at least :func:`tail_value` (route, loss, n, ε, d), cheaply (see :func:`_quick_upper_kept`)."""
    return _quick_upper_kept(route, loss, float(n), float(eps), float(d))


@persistent  # a pure function of numbers: kept in memory and on disk, since a planner asks again at the same points
def _quick_upper_kept(route: str, loss: str, n, eps, d) -> float:
    """A value at least :func:`tail_value` (route, loss, n, ε, d), from one certified supremum (about 1/20 to
    1/100 of the search's cost): the route at Ye & Barg's subset size s0 and one parameter value the search
    always weighs in full (μ = 0 for the threshold route, whose bound starts there; t = 2σ for the max route,
    whose grid minimum is taken over every grid value), and the search's bound is the minimum over the values it
    weighs. For a planner that only needs to know whether the bound reaches a target; NaN where the route is
    not evaluated."""
    n_i, d_i = int(math.floor(float(n) + 1e-9)), int(round(float(d)))
    eps = float(eps)
    if not (math.isfinite(eps) and eps > 0) or n_i < 2 or d_i < 2:
        return math.nan
    s0 = _default_s(d_i, eps)
    st = _Setup(n_i, eps, d_i, s0)
    if st.sigma * d_i < USEFUL_BELOW:  # as in best(): the route is not evaluated
        return math.nan
    v = max_route(st, 2.0 * st.sigma) if route == "max" else threshold_main(st, 0.0, loss)
    return min(float(v), 2.0)


def tail_value(route: str, loss: str, n, eps, d) -> float:
    """The certified bound (float); n is rounded down (the minimax risk does not increase with n)."""
    n_i, d_i = int(math.floor(float(n) + 1e-9)), int(round(float(d)))
    if not (math.isfinite(float(eps)) and float(eps) > 0) or n_i < 2 or d_i < 2:
        return math.nan
    # two points of the simplex are at most 2 apart in ℓ1 and in squared ℓ2
    return min(float(best(route, n_i, float(eps), d_i, loss)[0]), 2.0)


class SubsetProjectedMax(S.ScalarFunction):
    """``SubsetProjectedMax(n, ε, d)``: the max-route bound on the ℓ2² risk of projected subset selection."""

    nargs = 3
    scalar_value = staticmethod(lambda n, e, d: tail_value("max", "l2sq", n, e, d))
    latex = r"R_{{\max}}({0}, {1}, {2})"
    #: ``value_above(n, ε, d)``: a value at least the function's, at a small part of its cost (for planners)
    value_above = staticmethod(lambda n, e, d: quick_upper("max", "l2sq", n, e, d))
    #: ``prefetch(n, ε, d)``: start the value's search on a worker thread (for callers that will need it)
    prefetch = staticmethod(lambda n, e, d: prefetch("max", "l2sq", n, e, d))
    #: ``value_exceeds(n, ε, d, cutoff)``: True only if the value exceeds the cutoff (a cheap test, for planners)
    value_exceeds = staticmethod(lambda n, e, d, cutoff: exceeds("max", "l2sq", n, e, d, cutoff))


class SubsetProjectedThreshold(S.ScalarFunction):
    """``SubsetProjectedThreshold(n, ε, d)``: the threshold-route bound on the ℓ2² risk."""

    nargs = 3
    scalar_value = staticmethod(lambda n, e, d: tail_value("threshold", "l2sq", n, e, d))
    latex = r"R_{{\tau}}({0}, {1}, {2})"
    #: ``value_above(n, ε, d)``: a value at least the function's, at a small part of its cost (for planners)
    value_above = staticmethod(lambda n, e, d: quick_upper("threshold", "l2sq", n, e, d))
    #: ``prefetch(n, ε, d)``: start the value's search on a worker thread (for callers that will need it)
    prefetch = staticmethod(lambda n, e, d: prefetch("threshold", "l2sq", n, e, d))


class SubsetProjectedThresholdL1(S.ScalarFunction):
    """``SubsetProjectedThresholdL1(n, ε, d)``: the threshold-route bound on the ℓ1 risk."""

    nargs = 3
    scalar_value = staticmethod(lambda n, e, d: tail_value("threshold", "l1", n, e, d))
    latex = r"R^{{\ell_1}}_{{\tau}}({0}, {1}, {2})"
    #: ``value_above(n, ε, d)``: a value at least the function's, at a small part of its cost (for planners)
    value_above = staticmethod(lambda n, e, d: quick_upper("threshold", "l1", n, e, d))
    #: ``prefetch(n, ε, d)``: start the value's search on a worker thread (for callers that will need it)
    prefetch = staticmethod(lambda n, e, d: prefetch("threshold", "l1", n, e, d))
