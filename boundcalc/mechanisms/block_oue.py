"""Block-sampled one-hot OUE for sparse binary vectors under ε-LDP, and the exact per-coordinate evaluation of its
risk on Θ_s = {θ ∈ [0,1]^d : Σθ_j <= s} (docs/problems/sparse-bernoulli.md, "block-oue").

**Mechanism** (m blocks; m, c and the threshold τ are chosen from (n, ε, d, s) only, never from data).
The users form N = ⌊n/m⌋ groups of m (the rest report nothing). Each group draws a public uniformly random
permutation of [d] and cuts it into m consecutive blocks (sizes ⌊d/m⌋ or ⌈d/m⌉; w = ⌈d/m⌉); user l of the group
takes block l, keeps ONE of its ones in that block, chosen uniformly (none if it has none), and releases that
one-hot vector (or 0) by optimized unary encoding: the kept bit is reported 1 with probability p1 = 1/2, every other
bit of the block with probability p0 = 1/(e^ε + 1) (Wang, Blocki, Li & Jha 2017). With blocks of one coordinate
(m = d) it is binary randomized response (p1 = e^ε/(e^ε+1)). The server sets, for every coordinate j, T_j = the N
released bits about j and ``θ̂_j = clip(c (T_j/N - p0)/(p1 - p0) - τ, 0, 1)``.

**Privacy.** Given the public blocks, the release is a mixture (over which one is kept) of OUE laws on inputs in
{0} ∪ {e_a}; for any two such inputs and any output the ratio is at most ((e^ε+1)/2)/((e^ε+1)/(2e^ε)) = e^ε, and a
mixture keeps the bound: ε-LDP.

**Exact law per coordinate.** The group's user whose block holds j reports bit j as 1 with probability
p0 + (p1 - p0) θ'_j, θ'_j = P(j kept) = θ_j E[1/(1 + Y_j)], Y_j the other ones of j's block (independent of X_j).
Groups are independent, so T_j ~ Bin(N, p0 + (p1 - p0) θ'_j) exactly. By Jensen E[1/(1+Y)] >= 1/(1 + E Y), and a
coordinate i ≠ j shares j's block with probability at most (w - 1)/(d - 1), so E Y_j <= (w-1)(s - θ_j)₊/(d-1):
``θ'_j ∈ [a(θ_j) θ_j, θ_j]``, a(t) = 1/(1 + (w-1)(s-t)₊/(d-1)). Each coordinate's risk is therefore at most
R(θ_j) = max over that interval of r(θ_j, θ'_j) = E(θ̂_j - θ_j)², and the risk is their sum (no independence
between coordinates is needed). With Ř the least concave majorant of R on [0, 1] and Σθ_j <= s:
``sup_{Θ_s} E‖θ̂ - θ‖² <= d max_{x <= s/d} Ř(x)`` (Jensen).

**Certified numerics.** g(T) = clip(αT + β, 0, 1) is nondecreasing and Bin(N, π) increases stochastically in π, so on
a cell θ ∈ [t_k, t_{k+1}], θ' ∈ [t_i, t_{i+1}]: r <= E_{t_{i+1}} g² - 2 t_k E_{t_i} g + t_{k+1}². E g and E g² are
exact partial moments of the binomial through k·b(k; N, π) = Nπ b(k-1; N-1, π) and its second-order analogue:
``E g = α Nπ P(B₁ ∈ [a-1, b-1]) + β P(B₀ ∈ [a, b]) + P(B₀ > b)`` and
``E g² = α²(N(N-1)π² P(B₂ ∈ [a-2, b-2]) + Nπ P(B₁ ∈ [a-1, b-1])) + 2αβ Nπ P(B₁ ∈ [a-1, b-1]) + β² P(B₀ ∈ [a, b])
+ P(B₀ > b)``, B_i ~ Bin(N - i, π), [a, b] the T where g is not clipped. The binomial probabilities are the
regularised incomplete beta function of scipy in float64: the one float64 step, *not* proven. Its absolute error
grows with N (measured against mpmath: up to 1e-11 at N = 20,000); each probability is taken to be off by at most
5e-15 (N + 100), five times the largest error measured, and the expectations are widened by that times the weights
the probabilities enter with; the result by 1e-9 relatively. The model is checked up to N = 10^5 groups, and
larger N are not evaluated. The concave majorant is the upper hull of the cell values (each held on its whole cell).
The reported (tuned) value is then proven: the same bound is rebuilt at the same line slopes κ from
:func:`proven_moments` (the binomial moments by a float64 pmf walk with a proven error bound, at π rounded outwards)
with every later rounding bounded, and the larger of the two is reported (docs/engineering/
certified-floating-point.md, part E); the float64 one was the larger in every case measured.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..core.solver import ternary_search
from ..cache.diskcache import persistent
from .large_eps import release_level

#: the float64 error model of the binomial probabilities is checked against mpmath up to N = 10^5 groups; larger N
#: is not evaluated (the bound is then unusable at that m)
MAX_GROUPS = 10 ** 5
#: relative margin on the result; the error of one float64 binomial probability is taken as PROB_ERR (N + 100)
REL_MARGIN, PROB_ERR = 1e-9, 5e-15
#: θ'-cells maximised exactly below each θ-cell (further ones: one monotone bound)
WINDOW = 800
#: grid points of the coarse (tuning) and fine (reported) evaluations
COARSE, FINE = 200, 4000


def probabilities(eps: float, d: int, m: int) -> tuple[float, float]:
    """(p0, p1): OUE on blocks of more than one coordinate; binary randomized response when m = d; released at
    min{ε, 36} (:func:`boundcalc.mechanisms.large_eps.release_level`: above it e^ε/(e^ε + 1) rounds to 1 in
    float64, so randomized response would never flip a bit; a mechanism that is ε'-LDP for ε' <= ε is ε-LDP, and the
    risk bound is computed from the same (p0, p1))."""
    e = math.exp(release_level(eps))
    if m >= d:
        return 1.0 / (e + 1.0), e / (e + 1.0)
    return 1.0 / (e + 1.0), 0.5


def _interval_prob(N, pi, lo, hi):
    """P(Bin(N, π) ∈ [lo, hi]) (arrays; integer lo, hi), through whichever of the cdf or the survival function
    subtracts smaller numbers."""
    from scipy import special

    N = int(N)
    lo, hi = max(int(lo), 0), min(int(hi), N)
    if N < 0 or hi < lo:
        return np.zeros(np.shape(pi))
    empty = False
    Ni = N
    with np.errstate(all="ignore"):
        cdf_lo = np.where(lo <= 0, 0.0, special.bdtr(max(lo - 1, 0), Ni, pi))
        upper = cdf_lo > 0.5  # subtract survival functions there (both small), cdfs elsewhere
        p = np.empty(np.broadcast(cdf_lo, pi).shape)
        if upper.any():
            pu = np.broadcast_to(pi, p.shape)[upper]
            sf_lo = special.bdtrc(max(lo - 1, 0), Ni, pu)
            sf_hi = np.where(hi >= N, 0.0, special.bdtrc(max(hi, 0), Ni, pu))
            p[upper] = sf_lo - sf_hi
        if (~upper).any():
            pl = np.broadcast_to(pi, p.shape)[~upper]
            cdf_hi = np.where(hi >= N, 1.0, special.bdtr(max(hi, 0), Ni, pl))
            p[~upper] = cdf_hi - cdf_lo[~upper]
    return np.where(empty, 0.0, np.clip(p, 0.0, 1.0))


def clipped_moments(N: int, pi, alpha: float, beta: float):
    """(E g, E g²) for g(T) = clip(αT + β, 0, 1), T ~ Bin(N, π) (vectorised in π; α > 0)."""
    from scipy import special

    pi = np.asarray(pi, float)
    a = math.floor(-beta / alpha) + 1  # first T with αT + β > 0
    b = math.ceil((1 - beta) / alpha) - 1  # last T with αT + β < 1
    a, b = max(a, 0), min(b, N)
    P0 = _interval_prob(N, pi, a, b)
    P1 = _interval_prob(N - 1, pi, a - 1, b - 1) if N >= 1 else np.zeros_like(pi)
    P2 = _interval_prob(N - 2, pi, a - 2, b - 2) if N >= 2 else np.zeros_like(pi)
    with np.errstate(all="ignore"):
        tail = np.where(b >= N, 0.0, special.bdtrc(min(max(b, 0), N), N, pi)) if b >= 0 else np.ones_like(pi)
    m1 = N * pi * P1  # E[T; a <= T <= b]
    m2 = N * (N - 1) * pi * pi * P2 + m1  # E[T²; a <= T <= b]
    Eg = alpha * m1 + beta * P0 + tail
    Eg2 = alpha * alpha * m2 + 2 * alpha * beta * m1 + beta * beta * P0 + tail
    return np.clip(Eg, 0.0, 1.0), np.clip(Eg2, 0.0, 1.0)


def moment_margins(N: int, pi, alpha: float, beta: float):
    """Absolute margins for (E g, E g²) of :func:`clipped_moments`: each binomial probability is taken to be off by at
    most PROB_ERR (N + 100) (measured: at most a fifth of it against mpmath, tests), times the weight it enters with."""
    e = PROB_ERR * (N + 100)
    a1 = alpha * N * np.asarray(pi, float)
    return (3 * e * (a1 + abs(beta) + 1) + 1e-15,
            3 * e * (a1 * a1 + a1 + 2 * abs(beta) * a1 + beta * beta + 1) + 1e-15)


#: u = 2⁻⁵³, the unit roundoff of float64
_U = 2.0 ** -53


def _gamma(k):
    """Higham's γ_k = ku/(1 - ku) (the relative error of k roundings), slightly enlarged."""
    return k * _U / (1 - k * _U) * (1 + 1e-6)


def proven_moments(N: int, pi, alpha: float, beta: float):
    """(lower bound on E g, upper bound on E g²), g(T) = clip(αT + β, 0, 1), T ~ Bin(N, π) at the float64 π (arrays),
    with a proven float64 error bound (docs/engineering/certified-floating-point.md, part E): the pmf relative to
    its value at k₀ = ⌊(N+1)π⌋ by the ratio recurrence b(k+1)/b(k) = (N-k)π/((k+1)(1-π)) walked J steps each way
    (each step within 6u: the ratio π/(1-π) within 3u, two roundings, the product), the sums Z = Σ w, Σ g w, Σ g² w of
    non-negative terms (γ_{2J+2}), the pmf beyond the walk bounded by a geometric series (the ratios decrease), g
    within 2.01u(αN + |β|); E g = Σ g w / Z. No special function is involved."""
    pi = np.asarray(pi, float)
    N = int(N)
    Eg_lo = np.zeros(pi.shape)
    Eg2_hi = np.ones(pi.shape)
    g_at = lambda k: np.clip(alpha * k + beta, 0.0, 1.0)
    dg = 2.01 * _U * (alpha * N + abs(beta))  # |fl(g) - g| (two roundings of αk + β; the clip is monotone)
    dg2 = 2 * dg + dg * dg + 1.01 * _U  # |fl(g²) - g²| (g <= 1)
    # degenerate laws: T = 0 at π = 0, T = N at π = 1 (g exact up to dg)
    for val, k in ((0.0, 0), (1.0, N)):
        at = pi == val
        if at.any():
            g = float(g_at(k))
            Eg_lo[at], Eg2_hi[at] = max(g - dg, 0.0), min(g * g + dg2, 1.0)
    inner = (pi > 0) & (pi < 1)
    if N < 0 or not inner.any():
        return Eg_lo, Eg2_hi
    p = pi[inner]
    sd = math.sqrt(N * float(np.max(p * (1 - p))))
    J = int(min(N + 1, math.ceil(14 * sd + 80)))
    q = p / (1 - p)
    qi = (1 - p) / p
    k0 = np.clip(np.floor((N + 1) * p), 0, N).astype(np.int64)
    Z = np.ones(p.shape)
    g0 = g_at(k0.astype(float))
    Sg, Sg2 = g0.copy(), g0 * g0
    rem = np.zeros(p.shape)
    for direction in (1, -1):
        w = np.ones(p.shape)
        k = k0.copy()
        live = np.ones(p.shape, bool)
        for _ in range(J):
            if direction == 1:
                live &= k < N
                w = np.where(live, w * ((N - k) * q) / (k + 1), 0.0)
            else:
                live &= k > 0
                w = np.where(live, w * (k * qi) / (N - k + 1), 0.0)
            k = k + direction * live
            g = g_at(k.astype(float))
            Z += w
            Sg += g * w
            Sg2 += g * g * w
        # beyond the walk: the next ratio r (decreasing further out); remainder <= w r/(1 - r), w within γ_{6J}
        with np.errstate(all="ignore"):
            if direction == 1:
                r = ((N - k) * q) / (k + 1)
                more = k < N
            else:
                r = (k * qi) / (N - k + 1)
                more = k > 0
            r = r * (1 + _gamma(6))
            tail = np.where(more, np.where(r < 1, w * (1 + _gamma(6 * J + 2)) * r / (1 - r) * (1 + _gamma(4)), np.inf),
                            0.0)
        rem += tail
    E = _gamma(6 * J)  # the relative error of every weight
    S = _gamma(2 * J + 3)  # products and sequential sums of non-negative terms
    lo_f, hi_f = 1 / ((1 + E) * (1 + S)), 1 / ((1 - E) * (1 - S))
    Z_lo, Z_hi = Z * lo_f, Z * hi_f
    with np.errstate(all="ignore"):
        eg = (Sg * lo_f - dg * Z_hi) / (Z_hi + rem) * (1 - _gamma(3))
        eg2 = (Sg2 * hi_f + dg2 * Z_hi + rem) / Z_lo * (1 + _gamma(3))
    Eg_lo[inner] = np.where(np.isfinite(eg), np.clip(eg, 0.0, 1.0), 0.0)
    Eg2_hi[inner] = np.where(np.isfinite(eg2), np.clip(eg2, 0.0, 1.0), 1.0)
    return Eg_lo, Eg2_hi


def _grid(s: float, d: int, points: int) -> np.ndarray:
    x = s / d
    g = np.concatenate([np.linspace(0.0, 1.0, points // 2), np.geomspace(min(1e-6, x / 100), 1.0, points // 4),
                        x * np.linspace(0.0, 3.0, points // 4), [0.0, 1.0, x]])
    return np.unique(np.clip(g, 0.0, 1.0))


def risk_upper(n: int, eps: float, d: int, s: float, m: int, c: float, tau: float, points: int = FINE,
               prove: bool = False) -> float:
    """Certified upper bound on sup_{Θ_s} E‖θ̂ - θ‖² of the mechanism with (m, c, τ) (module docstring). ``prove``:
    also the same bound from :func:`proven_moments` at π rounded outwards, with every later rounding bounded, and the
    larger of the two returned (the float64 one is then proven: at or above a proven upper bound)."""
    N = n // m
    if N < 1 or m < 1 or m > d or N > MAX_GROUPS:
        return math.inf
    p0, p1 = probabilities(eps, d, m)
    w = -(-d // m)
    alpha = c / (N * (p1 - p0))
    beta = -c * p0 / (p1 - p0) - tau
    t = _grid(s, d, points)
    pis = p0 + (p1 - p0) * t
    Eg, Eg2 = clipped_moments(N, pis, alpha, beta)
    e1, e2 = moment_margins(N, pis, alpha, beta)
    Eg = np.maximum(Eg - e1, 0.0)
    Eg2 = Eg2 + e2
    value, kappas = _bound_from_moments(t, Eg, Eg2, s, d, w)
    if not prove:
        return value
    # π(t) = p0 + (p1 - p0) t is within γ₃ of the float64 pis: E g at a π below it, E g² at a π above it (both
    # increase in π)
    pl = pis * (1 - 5 * _U)
    ph = np.minimum(pis * (1 + 5 * _U), 1.0)
    Eg_p = proven_moments(N, pl, alpha, beta)[0]
    Eg2_p = proven_moments(N, ph, alpha, beta)[1]
    proof, _ = _bound_from_moments(t, Eg_p, Eg2_p, s, d, w, kappas=kappas)
    return max(value, proof)


def _bound_from_moments(t, Eg, Eg2, s, d, w, kappas=None):
    """(d · the best line's value (1 + REL_MARGIN), the two κ compared) from lower bounds Eg on E g and upper bounds
    Eg2 on E g² at the grid points ``t`` (module docstring). With ``kappas`` given (the proven evaluation): at those
    κ, with every rounding after the moments bounded (2u on each cell value U and on R_k + t_{k+1}², 3u on each line
    value) and REL_MARGIN left out."""
    proven = kappas is not None
    tk, tk1 = t[:-1], t[1:]
    a = 1.0 / (1.0 + (w - 1) * np.maximum(s - tk, 0.0) / max(d - 1, 1))
    lo_idx = np.searchsorted(t, a * tk, side="right") - 1  # first θ'-cell meeting [a(t_k) t_k, t_{k+1}]
    lo_idx = np.clip(lo_idx, 0, t.size - 2)
    # U(k, i) = Eg2[i+1] - 2 t_k Eg[i] + t_{k+1}², maximised over the θ'-cells i ∈ [lo_k, k] (all pairs, gathered)
    nk = t.size - 1
    kk = np.arange(nk)
    lo_idx = np.minimum(lo_idx, kk)
    near = np.maximum(lo_idx, kk - WINDOW)  # exact over [near, k]; below it (wide windows) one monotone chunk
    lengths = kk - near + 1
    rows = np.repeat(kk, lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    i = near[rows] + (np.arange(rows.size) - starts[rows])
    U = Eg2[i + 1] - 2 * tk[rows] * Eg[i]
    if proven:
        U = U + 2.01 * _U * (Eg2[i + 1] + 2 * tk[rows] * Eg[i])
    Rk = np.maximum.reduceat(U, starts)
    far = near > lo_idx  # i ∈ [lo, near - 1]: Eg2 <= Eg2[near], Eg >= Eg[lo] (both increase in θ')
    uf = Eg2[near] - 2 * tk * Eg[lo_idx]
    if proven:
        uf = uf + 2.01 * _U * (Eg2[near] + 2 * tk * Eg[lo_idx])
    Rk = np.where(far, np.maximum(Rk, uf), Rk)
    Rk = Rk + tk1 ** 2 + (2.01 * _U * (np.abs(Rk) + tk1 ** 2) if proven else 0.0)
    Rk = np.maximum(Rk, 0.0)
    # Σ_j R(θ_j) <= Σ_j (A + κθ_j) <= d (A + κ s/d) for any line A + κx (κ >= 0) above the step function (R_k on
    # [t_k, t_{k+1}]); the best such line: min over κ >= 0 of max_k [R_k - κ (x_k - s/d)], x_k the cell end that is
    # worse for the line (a convex function of κ: ternary search; every κ gives a valid bound)
    x0 = s / d
    xl = tk  # for κ >= 0 the line term -κ(x - x0) is largest at the left end t_k

    def phi(k):
        if proven:
            line = k * (xl - x0)
            return float(np.max(Rk - line + 3.01 * _U * (Rk + np.abs(line))))
        return float(np.max(Rk - k * (xl - x0)))

    if proven:
        best = min(phi(k) for k in kappas)
        return float(d) * best * (1 + 3 * _U), kappas
    lo, _ = ternary_search(phi, 0.0, max(1.0, float(Rk.max()) / max(x0, 1e-12)) * 4, 90)
    best = min(phi(lo), phi(0.0))
    return d * best * (1 + REL_MARGIN), (lo, 0.0)


def _upper_hull(x, y):
    """Vertices of the upper convex hull of the points (x, y) (monotone chain; ties in x keep the largest y)."""
    order = np.lexsort((-y, x))
    hull = []
    for xi, yi in zip(x[order].tolist(), y[order].tolist()):
        if hull and xi == hull[-1][0]:
            continue
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (yi - y1) - (y2 - y1) * (xi - x1) >= 0:
                hull.pop()
            else:
                break
        hull.append((xi, yi))
    return np.array([h[0] for h in hull]), np.array([h[1] for h in hull])


def _m_candidates(d: int) -> list[int]:
    ms = sorted({int(round(x)) for x in np.geomspace(1, d, 14)} | {1, d})
    return [m for m in ms if 1 <= m <= d]


@persistent  # the tuned mechanism and its certified risk bound (a pure function of the numbers; kept on disk)
def tuned(n: int, eps: float, d: int, s: float) -> tuple:
    """(risk bound, m, c, τ): m chosen on a coarse grid of cells at c = 1.2, τ = σ (σ the noise level of the unbiased
    estimate at 0), then (c, τ) for the best m, then the best one re-evaluated on the fine grid; the smallest
    certified value (any choice is a valid mechanism, fixed before seeing data)."""
    n, d = int(n), int(d)

    def sigma(m):
        p0, p1 = probabilities(eps, d, m)
        return math.sqrt(p0 * (1 - p0) / (n // m)) / (p1 - p0)

    ms = [m for m in _m_candidates(d) if n // m >= 1]
    if not ms:
        return (math.inf, 0, 1.0, 0.0)
    first = sorted((risk_upper(n, eps, d, s, m, 1.2, sigma(m), points=COARSE), m) for m in ms)
    cands = []
    for _, m in first[:1]:
        for c in (1.0, 1.2, 1.45):
            for k in (0.0, 0.75, 1.5, 2.5):
                cands.append((risk_upper(n, eps, d, s, m, c, k * sigma(m), points=COARSE), m, c, k * sigma(m)))
    cands.sort()
    best = (math.inf, 0, 1.0, 0.0)
    for _, m, c, tau in cands[:1]:
        v = risk_upper(n, eps, d, s, m, c, tau, prove=True)
        if v < best[0]:
            best = (v, m, c, tau)
    return best


def block_oue_value(n: float, eps: float, d: float, s: float) -> float:
    if not (n >= 1 and d >= 2 and s > 0 and eps > 0) or not all(map(math.isfinite, (n, eps, d, s))):
        return math.nan
    v = tuned(int(n), float(eps), int(d), float(s))[0]
    return v if math.isfinite(v) else math.nan


class BlockOUERisk(S.ScalarFunction):
    """``BlockOUERisk(n, ε, d, s)``: the certified worst-case risk of the tuned block-sampled one-hot OUE mechanism
    (module docstring)."""

    nargs = 4
    scalar_value = staticmethod(block_oue_value)
    latex = r"R_{{\mathrm{{OUE}}}}({0}, {1}, {2}, {3})"


# ------------------------------------------------------------------------------ sampler (for `check`)

def layout(d: int, m: int) -> np.ndarray:
    """The block of each position of a permutation of [d] cut into m consecutive blocks (the first d mod m of size
    ⌈d/m⌉, the others ⌊d/m⌋)."""
    sizes = np.full(m, d // m)
    sizes[: d % m] += 1
    return np.repeat(np.arange(m), sizes)


def release(xp, perm, block_of, m: int, p0: float, p1: float, rng: np.random.Generator) -> np.ndarray:
    """The released bits of G groups (bool (G, d), in coordinate order): ``xp[g, q]`` is the data bit at permuted
    position q of group g (it belongs to the group's user ``block_of[q]``), ``perm[g]`` the group's public
    permutation. Each user keeps the one of its block with the smallest of independent uniform keys (a uniformly
    random one of its ones; none if none) and releases its block's one-hot vector by OUE (p1 for the kept bit, p0
    for the others). Every user's bits depend on its own block's data only."""
    G, d = xp.shape
    rows = np.arange(G)[:, None]
    keys = np.where(xp, rng.random((G, d)), np.inf)
    # per block: position of the smallest key (ties impossible almost surely)
    best = np.full((G, m), np.inf)
    np.minimum.at(best, (np.broadcast_to(rows, (G, d)), np.broadcast_to(block_of, (G, d))), keys)
    kept_p = np.isfinite(keys) & (keys == best[:, block_of])
    kept = np.zeros((G, d), bool)
    kept[np.broadcast_to(rows, (G, d))[kept_p], perm[kept_p]] = True
    return np.where(kept, rng.random((G, d)) < p1, rng.random((G, d)) < p0)


def debias(T, N: int, p0: float, p1: float, c: float, tau: float) -> np.ndarray:
    """The server's estimate from the counts T_j of released ones among the N bits about each coordinate:
    ``clip(c (T_j/N - p0)/(p1 - p0) - τ, 0, 1)``."""
    return np.clip(c * (np.asarray(T) / N - p0) / (p1 - p0) - tau, 0.0, 1.0)


def estimates(theta, n: int, eps: float, m: int, c: float, tau: float, reps: int, rng: np.random.Generator):
    """``reps`` draws of θ̂ (shape (reps, d)), every group simulated (vectorised over the N groups): x ~ Bern(θ) for
    the group's users, a random permutation cut into m blocks (:func:`layout`), then :func:`release` (the code the
    runnable mechanism's ``privatize_all`` runs) and :func:`debias`. Each user's data is drawn independently, but
    only its block matters, so one row x per group suffices."""
    theta = np.asarray(theta, float)
    d = theta.size
    N = n // m
    p0, p1 = probabilities(eps, d, m)
    block_of = layout(d, m)
    out = np.empty((reps, d))
    for r in range(reps):
        perm = np.argsort(rng.random((N, d)), axis=1)
        xp = (rng.random((N, d)) < theta[perm])  # data at the permuted positions
        bits = release(xp, perm, block_of, m, p0, p1, rng)
        out[r] = debias(bits.sum(axis=0), N, p0, p1, c, tau)
    return out
