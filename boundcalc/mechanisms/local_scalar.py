"""ε-LDP mechanisms for one truncated scalar (docs/problems/mean.md; Duchi, Jordan & Wainwright).

Each user holds x, truncates it to ``[x]_T = max(-T, min(T, x))`` and releases one privatised value Z
with ``E[Z | x] = [x]_T`` (unbiased for the truncated value). The statistician averages the Z_i.

- **Laplace**: ``Z = [x]_T + Laplace(2T/ε)``. The range of ``[x]_T`` has length 2T, so the density
  ratio ``exp((|z - a| - |z - b|)/(2T/ε)) <= e^ε`` for a, b in [-T, T]: ε-LDP.
  ``E[Z²|x] = [x]_T² + 2 (2T/ε)² = [x]_T² + 8T²/ε²``.
- **one-bit** (Duchi et al.): ``Z = ± T c_ε`` with ``c_ε = (e^ε+1)/(e^ε-1) = coth(ε/2)`` and
  ``P(Z = +T c_ε) = 1/2 + [x]_T/(2 T c_ε)``. The two probabilities lie in
  ``[1/(e^ε+1), e^ε/(e^ε+1)]``, so their ratio over any two inputs is at most e^ε: ε-LDP.
  ``E[Z|x] = T c_ε (2P(+) - 1) = [x]_T``; ``Z² = T² c_ε²`` always.

Both second moments are checked by simulation and by exact computation in tests/test_local_mechanisms.py.

- **threshold + randomized response** (Gaussian location, docs/problems/gaussian.md): the user releases the
  bit ``Y = 1{x > 0}`` through randomized response, ``Z = Y`` with probability ``q = e^ε/(e^ε+1)``, else
  ``1 - Y`` (ε-LDP: the two output probabilities are q and 1-q, ratio e^ε). If X ~ N(θ, σ²) then
  ``P(Y = 1) = p = Φ(θ/σ)`` and ``P(Z = 1) = (1-q) + (2q-1)p``, 2q - 1 = tanh(ε/2). From m reports with
  mean Z̄: ``p̂ = (Z̄ - (1-q))/(2q-1)`` (unbiased, ``Var p̂ = P(Z=1)P(Z=0)/(m tanh²(ε/2)) <= 1/(4m tanh²(ε/2))``),
  clipped to ``[Φ(-B/σ), Φ(B/σ)]`` (which contains p when |θ| <= B, so clipping only moves p̂ towards p),
  and ``θ̂ = σ Φ^{-1}(p̂_clipped) ∈ [-B, B]``. Φ^{-1} has derivative 1/φ(Φ^{-1}(u)) <= 1/φ(B/σ) on the clip
  interval, so ``|θ̂ - θ| <= σ|p̂ - p|/φ(B/σ)`` and, exactly for every m >= 1 (no asymptotics, no tail term),
  ``E(θ̂ - θ)² <= σ² /(4 m tanh²(ε/2) φ(B/σ)²) = (π/2) σ² e^{B²/σ²} coth²(ε/2)/m``.
  Its exact risk is a sum over the binomial law of the count (:func:`threshold_exact_risk`, tested).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..cache.diskcache import persistent


def coth_half(eps):
    """coth(ε/2) = (e^ε+1)/(e^ε-1) = 1 + 2/expm1(ε), as a sympy expression (stable for small ε)."""
    return 1 + 2 / S.expm1(eps)


def coth_half_np(eps):
    eps = np.asarray(eps, float)
    return 1.0 + 2.0 / np.expm1(eps)


def onebit_second_moment(T, eps):
    """E[Z²] of the one-bit mechanism on [-T, T]: T² coth²(ε/2) (exact, every input)."""
    return T ** 2 * coth_half(eps) ** 2


def laplace_noise_second_moment(T, eps):
    """E[W²] of the Laplace(2T/ε) noise: 8T²/ε²."""
    return 8 * T ** 2 / eps ** 2


def truncate(x, T):
    return np.clip(x, -T, T)


def onebit(x, T, eps, rng: np.random.Generator):
    """Vectorised one-bit privatisation of the truncated values (any array shape)."""
    xt = truncate(np.asarray(x, float), T)
    c = coth_half_np(eps)
    # 1/2 + x/(2Tc) = 1/(e^ε+1) + (x+T)/(2Tc): a sum of non-negative terms, accurate where P(+) is small
    t = np.exp(-np.asarray(eps, float))
    p_plus = t / (1.0 + t) + (xt + T) / (2.0 * T * c)
    return np.where(rng.random(xt.shape) < p_plus, T * c, -T * c)


def onebit_probabilities(x, T, eps):
    """P(Z = +T c_ε | x) (for the exact privacy/unbiasedness tests)."""
    xt = truncate(np.asarray(x, float), T)
    return 0.5 + xt / (2.0 * T * coth_half_np(eps))


def laplace(x, T, eps, rng: np.random.Generator):
    """Vectorised Laplace privatisation of the truncated values."""
    xt = truncate(np.asarray(x, float), T)
    return xt + rng.laplace(0.0, 2.0 * T / eps, size=xt.shape)


def threshold_rr_bits(x, eps, rng: np.random.Generator, c=0.0):
    """Randomized response (keep with probability e^ε/(e^ε+1)) of the bits 1{x > c} (any array shape)."""
    y = np.asarray(x, float) > c
    keep = rng.random(y.shape) < 1.0 / (1.0 + np.exp(-eps))
    return np.where(keep, y, ~y).astype(np.int64)


def threshold_estimate(ones, m, eps, sigma, B):
    """θ̂ = σ Φ^{-1}(clip(p̂, Φ(-B/σ), Φ(B/σ))), p̂ = (ones/m - (1-q))/(2q-1) (arrays broadcast; m >= 1)."""
    from scipy import special

    q = 1.0 / (1.0 + np.exp(-eps))
    p_hat = (np.asarray(ones, float) / np.asarray(m, float) - (1 - q)) / (2 * q - 1)
    # Φ^{-1} is increasing, so Φ^{-1}(clip(p̂, Φ(-b), Φ(b))) = clip(Φ^{-1}(clip(p̂, 0, 1)), -b, b): this form never
    # rounds Φ(b) to 1 (b >= 8.3 in double precision), which made the estimate ±inf.
    b = np.asarray(B, float) / np.asarray(sigma, float)
    return sigma * np.clip(special.ndtri(np.clip(p_hat, 0.0, 1.0)), -b, b)


def threshold_exact_risk(m: int, eps: float, sigma: float, B: float, theta: float) -> float:
    """E(θ̂ - θ)² of the threshold scheme with m users at θ, summed over the binomial law of the count."""
    from scipy import special

    from ..core.distributions import binom_pmf

    q = 1.0 / (1.0 + math.exp(-eps))
    p1 = (1 - q) + (2 * q - 1) * float(special.ndtr(theta / sigma))
    k = np.arange(m + 1)
    w = binom_pmf(k, m, p1)
    return float(np.sum(w * (threshold_estimate(k, m, eps, sigma, B) - theta) ** 2))


def threshold_risk_bound(m, eps, sigma, B):
    """Certified E(θ̂-θ)² <= (π/2) σ² e^{B²/σ²} coth²(ε/2)/m of the threshold scheme (sympy or numbers)."""
    return sp.pi / 2 * sigma ** 2 * sp.exp(B ** 2 / sigma ** 2) * coth_half(eps) ** 2 / m


MECHANISMS = {"one-bit": onebit, "laplace": laplace}


# ----------------------------------------------------------------------------- threshold scheme: certified worst risk

THRESHOLD_EXACT_MAX_M = 20000  # exact certified values only up to this many reports (cost); the closed form above
THRESHOLD_CELLS = 1000
THRESHOLD_SHRINK = tuple(np.linspace(0.0, 1.0, 21))


def table_slack(m: int) -> float:
    """The relative widening of a table value of :func:`threshold_worst_risk`: (64 + 32√m)u, u = 2⁻⁵³ (5.1e-13 at
    m = 20000). It covers the float64 error of the cell sums, whose binomial pmf values (SciPy's) were within
    (8 + 2.6√m)u of 30-digit values (measured up to m = 20000, not proven; docs/engineering/
    certified-floating-point.md, part E), about ten times over, and their sums of non-negative terms. Where the
    table's maximum is at θ = b with p(θ) flat (b large, ε small) a cell sum has no slack over the exact risk, and
    without it the table value was up to 3.3e-16 below it (relatively; m = 10, ε = 0.001, b = 10)."""
    return (64.0 + 32.0 * math.sqrt(m)) * 2.0 ** -53


def square_up(b: float) -> float:
    """b² rounded up: the smallest float64 not below the exact square of the float ``b`` (``b * b`` is rounded to
    nearest and can be half a unit in the last place low; the risk b² of θ̂ = 0 is an upper bound's candidate)."""
    from fractions import Fraction

    y = b * b
    if math.isfinite(y) and Fraction(y) < Fraction(b) ** 2:
        y = math.nextafter(y, math.inf)
    return y


def threshold_closed_form(m, eps, b):
    """(π/2) e^{b²} coth²(ε/2)/m, σ = 1, b = B/σ (numbers), computed in logs: ``inf`` (never an OverflowError)
    where it exceeds the float range, which happens for b > 26.6; the scheme then keeps θ̂ = 0 (risk <= b²)."""
    log_val = math.log(math.pi / 2) + b * b + 2 * math.log(float(coth_half_np(eps))) - math.log(m)
    return math.exp(log_val) if log_val < 709.0 else math.inf


@persistent  # a certified numeric table: memoised in memory and on disk (boundcalc.cache.diskcache)
def threshold_worst_risk(m: int, eps: float, b: float):
    """Certified ``sup_{|θ| <= b} E(θ̂_λ - θ)²`` of the threshold scheme with exactly m reports and σ = 1 (scale by
    σ² for σ != 1, b = B/σ), for the shrunk estimate ``θ̂_λ = λ Φ^{-1}(clip(p̂))``. Returns (value, λ, θ*).

    m = 0: θ̂ = 0 and the value is b². m > THRESHOLD_EXACT_MAX_M: the closed form (λ = 1). Otherwise, for each λ on a
    grid, an upper bound of the sup over θ of the exact risk ``R(θ) = Σ_k w_k(p(θ)) (g_k - θ)²`` (w_k the binomial
    pmf of the count, p(θ) = (1-q) + (2q-1)Φ(θ) increasing): on a cell [θ_a, θ_b] of a grid of [0, b] (R is even:
    p(-θ) = 1 - p(θ) and g_{m-k} = -g_k), ``w_k(p) <= w_k(clip(k/m, p_a, p_b))`` (w_k is unimodal in p with mode
    k/m) and ``(g_k - θ)² <= max{(g_k-θ_a)², (g_k-θ_b)²}``, so ``sup_cell R <= Σ_k max w_k · max (g_k-θ)²``.
    Also returned: θ* >= 0, the centre of the cell where that bound is largest (the hard instance of the check;
    b when the closed form or θ̂ = 0 is used).
    The sum runs over a window ``m p_a - W <= k <= m p_b + W`` (W = 7√m + 1) per block of cells; the counts outside
    have probability at most ``2 exp(-2W²/m)`` (Hoeffding) and loss at most (2b)², which is added.
    The value is the min over λ (the server knows m, ε, b, so it can use the best λ), and over the closed form; each
    λ's value is widened by :func:`table_slack` (the float64 error of the cell sums).

    The maximum over the cells is found by :class:`_CellSearch` (a pruned search that evaluates exactly only the
    cells that can hold it, and gives the same value, λ and θ* as :func:`_threshold_table_full`, which computes
    every cell); the full table is the fallback where the search does not apply or does not pay.
    """
    m, eps, b = int(m), float(eps), float(b)
    if m <= 0 or not math.isfinite(b):  # b = B/σ beyond the float range (σ = 5e-324): only θ̂ = 0's risk b²
        return square_up(b), 0.0, b
    closed = threshold_closed_form(m, eps, b)
    if m > THRESHOLD_EXACT_MAX_M:
        return closed, 1.0, b
    if 0.0 < b <= _SEARCH_MAX_B:
        try:
            return _CellSearch(m, eps, b).table(closed)
        except _SearchGaveUp:
            pass
    return _threshold_table_full(m, eps, b, closed)


def _threshold_table_full(m, eps, b, closed):
    """:func:`threshold_worst_risk` (1 <= m <= THRESHOLD_EXACT_MAX_M) with every cell's sum computed."""
    th, p, W, tail, lams = _table_grid(m, eps, b)
    worst, where = np.zeros(len(lams)), np.zeros(len(lams))
    for c0 in range(0, THRESHOLD_CELLS, _BLOCK):
        c1 = min(c0 + _BLOCK, THRESHOLD_CELLS)
        for i, sums in enumerate(_table_sums(m, eps, b, th, p, W, lams, c0, c1, c0, c1)):
            if not np.all(np.isfinite(sums)):  # never certify from NaN/inf cell sums
                worst[i] = math.inf
                continue
            j = int(np.argmax(sums))
            if sums[j] > worst[i]:
                worst[i], where[i] = float(sums[j]), 0.5 * (th[c0 + j] + th[c0 + j + 1])
    worst = (worst + tail) * (1 + table_slack(m))
    b2 = square_up(b)  # λ = 0: θ̂ = 0, risk θ² <= b² exactly (rounded up)
    best, lam_best = (closed, 1.0) if closed < b2 else (b2, 0.0)
    theta_best = b
    for val, lam, at in zip(worst, lams, where):
        if val < best:
            best, lam_best, theta_best = float(val), float(lam), float(at)
    return best, lam_best, theta_best


_BLOCK = 25  # cells whose sums share one window of counts


def _table_grid(m, eps, b):
    """The θ-grid, p(θ) on it, the window half-width W, the tail term and the λ grid of
    :func:`threshold_worst_risk` (m >= 1)."""
    from ..core.distributions import norm_cdf

    q = 1.0 / (1.0 + math.exp(-eps))
    th = np.linspace(0.0, b, THRESHOLD_CELLS + 1)
    p = (1 - q) + (2 * q - 1) * norm_cdf(th)
    W = 7.0 * math.sqrt(m) + 1.0
    tail = 4 * b * b * 2 * math.exp(-2 * W * W / m)
    lams = THRESHOLD_SHRINK if m <= 100 else THRESHOLD_SHRINK[-5:]
    return th, p, W, tail, lams


def _table_sums(m, eps, b, th, p, W, lams, c0, c1, s0, s1):
    """For each λ, the bounds ``Σ_k max w_k · max (g_k-θ)²`` of the cells s0..s1-1 of the block c0..c1-1 (the
    window of counts is the block's: each cell's sum is the same number whichever cells are computed with it)."""
    from ..core.distributions import binom_pmf

    k = np.arange(max(0, math.floor(m * p[c0] - W)), min(m, math.ceil(m * p[c1] + W)) + 1)
    pa, pb = p[s0:s1, None], p[s0 + 1:s1 + 1, None]
    wmax = binom_pmf(k[None, :], m, np.clip(k[None, :] / m, pa, pb))  # (cells, window)
    g1 = threshold_estimate(k, m, eps, 1.0, b)
    ta, tb = th[s0:s1, None], th[s0 + 1:s1 + 1, None]
    for lam in lams:
        g = lam * g1[None, :]
        e2 = np.maximum((g - ta) ** 2, (g - tb) ** 2)
        yield np.sum(wmax * e2, axis=1)


def threshold_value_below(m: int, eps: float, b: float, cells) -> float:
    """A number <= ``threshold_worst_risk(m, eps, b)[0]``, from the sums of the given cells only.

    The table's value is ``min(v0, min_λ (max_c S_c(λ) + tail))`` with v0 the closed form or b²; every
    ``S_c(λ)`` is computed here by the same operations on the same numbers as in the table (the window of
    counts of the cell's block), and max_c S_c(λ) >= S_c(λ) for the cells given, so the value returned, with
    the same v0 and tail, is at most the table's (a non-finite sum makes its λ count as +∞, as in the table)."""
    m, eps, b = int(m), float(eps), float(b)
    if m <= 0 or m > THRESHOLD_EXACT_MAX_M:
        return threshold_worst_risk(m, eps, b)[0]
    closed = threshold_closed_form(m, eps, b)
    th, p, W, tail, lams = _table_grid(m, eps, b)
    low = np.zeros(len(lams))
    for c in sorted({min(max(int(c), 0), THRESHOLD_CELLS - 1) for c in cells}):
        c0 = c - c % _BLOCK
        for i, sums in enumerate(_table_sums(m, eps, b, th, p, W, lams, c0, min(c0 + _BLOCK, THRESHOLD_CELLS),
                                             c, c + 1)):
            low[i] = max(low[i], float(sums[0])) if np.all(np.isfinite(sums)) else math.inf
    low = (low + tail) * (1 + table_slack(m))
    return min(closed if closed < square_up(b) else square_up(b), float(np.min(low)))


# ----------------------------------------------------------------------------- the table's maximum by a pruned search

_SEARCH_MAX_B = 1e6        # beyond this (4b² near overflow in the sums) the full table is used
_SEARCH_LEVELS = (10, 5, 1)  # group sizes (cells) of the search, coarse to fine
_SEARCH_MAX_EXACT = 64     # more exactly evaluated cells than this: the profile is flat, finish with the full table
_SEARCH_REACH = 3.5        # group bounds sum over |k - m p| <= 3.5 √m; the rest weighs <= 2 exp(-2·3.5²) (Hoeffding)
_SEARCH_MARGIN = 1e-6      # relative margin of a group bound over the floating-point sums it bounds
_SEARCH_CHUNK = 32768      # group bounds computed in chunks of about this many terms


class _SearchGaveUp(Exception):
    """The pruned search stops (too many cells to evaluate exactly); the caller computes the full table."""


class _CellSearch:
    """The maximum over the cells of the table of :func:`threshold_worst_risk`, for each λ, with only the cells
    that can hold it evaluated exactly (a branch and bound over groups of consecutive cells).

    **The cells and their sums.** Cell c is ``[θ_c, θ_{c+1}]`` of the grid ``θ_j = j b/N`` (N = THRESHOLD_CELLS),
    ``p_j = p(θ_j)`` increasing, and its sum (:func:`_table_sums`) is
    ``S_c(λ) = Σ_{k ∈ K_c} w_{c,k} e_{c,k}``, ``w_{c,k} = pmf(k; m, clip(k/m, p_c, p_{c+1}))``,
    ``e_{c,k} = max{(λg_k - θ_c)², (λg_k - θ_{c+1})²}``, over the window K_c of the cell's block. The table's value
    for λ is ``max_c S_c(λ) + tail``, and θ* the centre of the first cell attaining the maximum.

    **Group bound.** For a group G of consecutive cells c_1 <= c < c_2 (θ from θ_A = θ_{c_1} to θ_B = θ_{c_2},
    p from p_A to p_B) and every cell c in G:

    1. ``w_{c,k} <= Ŵ_k := max_{p ∈ [p_A, p_B]} pmf(k; m, p)``, which is the mode value ``pmf(k; m, k/m)`` when
       ``k/m ∈ [p_A, p_B]`` and ``max{pmf(k; m, p_A), pmf(k; m, p_B)}`` otherwise: pmf(k; m, ·) increases on
       [0, k/m] and decreases on [k/m, 1], and the cell's interval [p_c, p_{c+1}] lies in [p_A, p_B]. (The float
       test ``k/m <= p`` of a grid value p implies the exact ``k/m <= p``: rounding is monotone and p is a float.)
    2. ``e_{c,k} <= Ê_k := max{(λg_k - θ_A)², (λg_k - θ_B)²} = (|λg_k - θ_M| + (θ_B - θ_A)/2)²`` (θ_M the midpoint):
       θ ↦ (λg_k - θ)² is convex, so its maximum over [θ_c, θ_{c+1}] ⊂ [θ_A, θ_B] is at most its maximum at θ_A, θ_B.
    3. Counts far from the group: with ``t = 3.5√m``, every k of K_c with ``k < m p_A - t`` has ``k/m < p_c``, so
       ``w_{c,k} = pmf(k; m, p_c)`` and these k weigh at most ``P(Bin(m, p_c) <= m p_c - t) <= exp(-2t²/m)`` (Hoeffding,
       1963, Theorem 1); likewise above ``m p_B + t``; there ``e_{c,k} <= (2b)²`` (|λg_k| <= b, 0 <= θ <= b).

    Hence ``S_c(λ) <= U_G(λ) := Σ_{m p_A - t <= k <= m p_B + t} Ŵ_k Ê_k + 8b² exp(-2·3.5²)`` for every c in G: the sum
    of nonnegative terms over K_c is at most the sum over the union of the range and the far counts.

    **Floating point.** The search compares ``Ũ_G (1 + 10⁻⁶)`` with the largest exactly computed sum M̃ (the table's
    own floating-point numbers). Ũ_G is computed with ``ln pmf(k; m, p) = ln C(m, k) + k ln(p/(1-p)) + m ln(1-p)``,
    ``ln C(m, k) = lnΓ(m+1) - lnΓ(k+1) - lnΓ(m-k+1)``: a handful of operations on numbers of size at most
    ``s = m (ln(m+1) + 2 + |ln p_0| + |ln(1-p_N)|)``, so the logarithm is off by at most ``64 u s`` (u = 2⁻⁵³; the
    search is used only where this is below 10⁻⁸, which holds for every m <= 20000 unless b or ε is extreme) and the
    pmf by a relative 1.1·10⁻⁸; the squares and the pairwise sum of nonnegative terms add a relative 10⁻¹², so
    ``Ũ_G >= U_G (1 - 2·10⁻⁸)``. The table's sums S̃_c use SciPy's binomial pmf (Boost's ``ibeta_derivative``, a
    relative error of order 10⁻¹³, compared with mpmath in tests/test_gauss_threshold_search.py) and the same sums,
    so ``S̃_c <= S_c (1 + 10⁻⁸)``. A group with ``Ũ_G (1 + 10⁻⁶) < M̃`` therefore has, for each of its cells,
    ``S̃_c <= (1 + 10⁻⁸) U_G <= (1 + 10⁻⁸)/(1 - 2·10⁻⁸) Ũ_G < Ũ_G (1 + 10⁻⁶) < M̃``: no cell of it attains the
    maximum, nor ties with it, and it is skipped. A NaN or infinite bound never skips (and with b <= 10⁶ a finite
    bound leaves no room for an overflowing sum). Every cell that is not skipped is evaluated exactly
    (:func:`_table_sums` for that cell alone, with the window of its block: the same operations on the same numbers
    as in the full table), M̃ only grows, so at the end the maximum and the first cell attaining it are those of the
    full table, bit for bit.

    **The value and λ.** The λ are taken in the table's order; λ is chosen when its value is below the best so far.
    A λ whose exactly computed cell already has ``(S̃_c + tail)(1 + slack) >= best`` has
    ``(max_c S̃_c + tail)(1 + slack) >= best`` (:func:`table_slack`; rounding
    is monotone) and is not chosen, without its maximum; a non-finite cell sum makes its value +∞ (never chosen), as
    in the table. The other λ get their exact maximum as above.

    **Search.** Groups of 10 cells (a bound costs one row of about 7√m + 10 m (p_B - p_A) terms from logarithms and
    exponentials, several times cheaper than a row of the table, which calls the binomial pmf 14√m times); the group
    with the largest bound is looked into first (its single cells bounded, the best one evaluated exactly) to have a
    good maximum early; the groups left split into groups of 5 and then into single cells, whose bound equals their
    sum up to the margin; those are evaluated exactly from the largest bound down, until the next bound is below the
    maximum found. About 400 rows and 2 or 3 exact cells at m = 20000 (the table: 1000 rows of 2000 pmf values).
    Where the profile of the sums is flat, more cells survive the groups, but the single-cell bounds still separate
    them; should more than _SEARCH_MAX_EXACT cells need their exact sum, the full table is computed instead.
    """

    def __init__(self, m: int, eps: float, b: float):
        from scipy import special

        self.m, self.eps, self.b = m, eps, b
        self.th, self.p, self.W, self.tail, self.lams = _table_grid(m, eps, b)
        if not (np.all(np.isfinite(self.p)) and self.p[0] > 0.0 and self.p[-1] < 1.0):
            raise _SearchGaveUp  # p at 0 or 1: the logarithms below do not apply
        size = m * (math.log(m + 1.0) + 2.0 - math.log(self.p[0]) - math.log1p(-self.p[-1]))
        if 64 * 2.0 ** -53 * size > 1e-8:
            raise _SearchGaveUp  # the logarithms of the pmf could be off by more than 10⁻⁸
        self.t = _SEARCH_REACH * math.sqrt(m)
        self.k0 = max(0, math.floor(m * self.p[0] - self.t) - 1)
        k = np.arange(self.k0, min(m, math.ceil(m * self.p[-1] + self.t) + 1) + 1, dtype=float)
        self.r = r = k / m
        self.logc = special.gammaln(m + 1.0) - special.gammaln(k + 1.0) - special.gammaln(m - k + 1.0)
        self.ent = special.xlogy(k, r) + special.xlog1py(m - k, -r)  # ln pmf(k; m, k/m) - ln C(m, k)
        self.g1 = threshold_estimate(k, m, eps, 1.0, b)
        self.slope = np.log(self.p) - np.log1p(-self.p)  # ln pmf(k; m, p_j) - ln C(m, k) = k slope_j + m ln(1-p_j)
        self.level = m * np.log1p(-self.p)
        self.far = 8.0 * b * b * math.exp(-2.0 * _SEARCH_REACH ** 2)
        self.exact = {}  # cell -> its sums for every λ (the table's numbers)

    def bounds(self, c1, c2, lam):
        """``Ũ_G (1 + margin)`` for the groups of cells c1[i] <= c < c2[i] at λ (integer arrays)."""
        out = np.empty(len(c1))
        width = 2.0 * self.t + 4.0 + self.m * float(np.max(self.p[c2] - self.p[c1]))
        rows = max(8, int(_SEARCH_CHUNK / width))  # chunks whose temporaries stay in the processor's cache
        for s in range(0, len(c1), rows):
            out[s:s + rows] = self._bounds(c1[s:s + rows], c2[s:s + rows], lam)
        return out

    def _bounds(self, c1, c2, lam):
        from numpy.lib.stride_tricks import sliding_window_view as windows

        m, p, th, k0, n = self.m, self.p, self.th, self.k0, len(self.logc)
        # counts m p_A - t .. m p_B + t (and a few more: every row has the same length L, a superset is still a bound)
        lo = np.clip(np.floor(m * p[c1] - self.t).astype(int) - 1 - k0, 0, n - 1)
        hi = np.clip(np.ceil(m * p[c2] + self.t).astype(int) + 1 - k0, 0, n - 1)
        L = int(np.max(hi - lo)) + 1
        lo = np.minimum(lo, n - L)
        cols = np.arange(L, dtype=float)[None, :]
        base = (lo + k0).astype(float)
        # ln max(pmf(k; p_A), pmf(k; p_B)) - ln C(m, k), k = base + col: the larger of two lines in k
        sa, sb = self.slope[c1], self.slope[c2]
        lw = np.multiply(cols, sa[:, None])
        lw += (base * sa + self.level[c1])[:, None]
        tmp = np.multiply(cols, sb[:, None])
        tmp += (base * sb + self.level[c2])[:, None]
        np.maximum(lw, tmp, out=lw)
        # counts with k/m in [p_A, p_B] (the table's float test of clip): the mode value
        ia = np.clip(np.searchsorted(self.r, p[c1], "left") - lo, 0, L)
        ib = np.clip(np.searchsorted(self.r, p[c2], "right") - 1 - lo, -1, L - 1)
        cnt = np.maximum(ib - ia + 1, 0)
        if cnt.sum():
            row = np.repeat(np.arange(len(c1)), cnt)
            col = np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt) + np.repeat(ia, cnt)
            lw[row, col] = self.ent[lo[row] + col]
        lw += windows(self.logc, L)[lo]
        w = np.exp(lw, out=lw)
        # (|λg_k - θ_M| + (θ_B - θ_A)/2)²
        np.subtract(windows(self.g1, L)[lo] if lam == 1.0 else windows(lam * self.g1, L)[lo],
                    (0.5 * (th[c1] + th[c2]))[:, None], out=tmp)
        e = np.abs(tmp, out=tmp)
        e += (0.5 * (th[c2] - th[c1]))[:, None]
        np.square(e, out=e)
        return (np.einsum("ij,ij->i", w, e) + self.far) * (1.0 + _SEARCH_MARGIN)

    def exact_cell(self, c):
        """The table's sums of cell c for every λ (computed alone, with the window of its block)."""
        if c not in self.exact:
            if len(self.exact) >= _SEARCH_MAX_EXACT:
                raise _SearchGaveUp
            c0 = c - c % _BLOCK
            self.exact[c] = np.array([s[0] for s in _table_sums(
                self.m, self.eps, self.b, self.th, self.p, self.W, self.lams, c0,
                min(c0 + _BLOCK, THRESHOLD_CELLS), c, c + 1)])
        return self.exact[c]

    def maximum(self, i, best):
        """(max_c S̃_c(λ_i), first cell attaining it), or None when λ_i cannot be chosen against ``best`` (some
        exact cell has (S̃_c + tail)(1 + slack) >= best, or a non-finite sum)."""
        lam, tail = self.lams[i], self.tail
        top = [-math.inf]

        def take(c):
            s = self.exact_cell(c)[i]
            if not np.isfinite(s) or (s + tail) * (1 + table_slack(self.m)) >= best:
                return False
            top[0] = max(top[0], s)
            return True

        for c in list(self.exact):
            if not take(c):
                return None
        n = THRESHOLD_CELLS
        size = _SEARCH_LEVELS[0]
        c1 = np.arange(0, n, size)
        c2 = np.minimum(c1 + size, n)
        for nxt in _SEARCH_LEVELS[1:] + (0,):
            u = self.bounds(c1, c2, lam)
            if nxt:  # a good maximum early: the cells of the group with the largest bound, the best one exactly
                j = int(np.argmax(np.where(np.isnan(u), np.inf, u)))
                cells = np.arange(c1[j], c2[j])
                us = self.bounds(cells, cells + 1, lam)
                jj = int(np.argmax(np.where(np.isnan(us), np.inf, us)))
                if not us[jj] < top[0] and not take(int(cells[jj])):
                    return None
            live = ~(u < top[0])
            if nxt == 0:
                order = np.argsort(-np.where(np.isnan(u), np.inf, u), kind="stable")
                for j in order:
                    if u[j] < top[0]:
                        break
                    if not take(int(c1[j])):
                        return None
                break
            starts = [np.arange(a, e, nxt) for a, e in zip(c1[live], c2[live])]
            if not starts:
                break
            c1 = np.concatenate(starts)
            c2 = np.minimum(c1 + nxt, np.repeat(c2[live], [len(s) for s in starts]))
        best_s = top[0]
        first = min(c for c, v in self.exact.items() if v[i] == best_s)
        return best_s, first

    def table(self, closed):
        """:func:`threshold_worst_risk` (same value, λ and θ*) from :meth:`maximum` of each λ."""
        b, th = self.b, self.th
        best, lam_best = (closed, 1.0) if closed < square_up(b) else (square_up(b), 0.0)
        theta_best = b
        self.exact_cell(THRESHOLD_CELLS - 1)  # the sums of λ < 1 grow towards θ = b: a first lower bound for each λ
        for i, lam in enumerate(self.lams):
            found = self.maximum(i, best)
            if found is None:
                continue
            s, c = found
            val = (s + self.tail) * (1 + table_slack(self.m))
            if val < best:
                at = 0.5 * (th[c] + th[c + 1]) if s > 0 else 0.0
                best, lam_best, theta_best = float(val), float(lam), float(at)
        return best, lam_best, theta_best


def _ladder():
    out, x = list(range(1, 11)), 10.0
    while x < THRESHOLD_EXACT_MAX_M:
        x = min(x * 1.2, THRESHOLD_EXACT_MAX_M)
        out.append(int(round(x)))
    return tuple(sorted(set(out)))


THRESHOLD_LADDER = _ladder()


def threshold_scheme(m: int, eps: float, b: float):
    """The scheme's choice with m available reports per coordinate (σ = 1, b = B/σ): (certified value, λ, m_used, θ*).

    Candidates: all m reports with λ = 1 and the closed form; or only the first l reports, l among the three largest
    points of THRESHOLD_LADDER (ratio 1.2) with l <= m, with the certified value of :func:`threshold_worst_risk`
    (its best λ). The smallest value wins (the first one in this order on a tie); it is at most b² (m = 0 or
    λ = 0: θ̂ = 0).

    The table of the largest l is computed first; a smaller l whose value is bounded below
    (:func:`threshold_value_below`, at the last cell and at the worst cell of the first table) by more than the
    first table's value cannot be the smallest, and its table is not computed: the choice is the same as with
    every table computed."""
    m, eps, b = int(m), float(eps), float(b)
    best = (square_up(b), 0.0, 0, b)
    if m <= 0 or not math.isfinite(b):  # b = B/σ beyond the float range: only θ̂ = 0's risk b² (infinite)
        return best
    cands = [(threshold_closed_form(m, eps, b), 1.0, m, b)]
    i = int(np.searchsorted(THRESHOLD_LADDER, m, side="right"))
    ladder = THRESHOLD_LADDER[max(0, i - 3):i]
    tables = {}
    if ladder:
        tables[ladder[-1]] = threshold_worst_risk(ladder[-1], eps, b)
        first, at = tables[ladder[-1]][0], tables[ladder[-1]][2]
        probe = (THRESHOLD_CELLS - 1, int(at / b * THRESHOLD_CELLS) if b > 0 else 0)
        for l in ladder[:-1]:
            if not threshold_value_below(l, eps, b, probe) > first:
                tables[l] = threshold_worst_risk(l, eps, b)
    for l in ladder:
        if l in tables:
            v, lam, at = tables[l]
            cands.append((v, lam, l, at))
    for c in cands:
        if c[0] < best[0]:
            best = c
    return best


def threshold_worst_risk_np(m, eps, b):
    m, eps, b = np.broadcast_arrays(np.asarray(m, float), np.asarray(eps, float), np.asarray(b, float))
    out = np.array([threshold_scheme(int(np.floor(mm + 1e-9)), float(ee), float(bb))[0]
                    for mm, ee, bb in zip(m.ravel(), eps.ravel(), b.ravel())])
    return out.reshape(m.shape)


def threshold_risk_mp(m, eps, b):
    """:func:`threshold_scheme`'s value on the certification (mpmath) path, at the working precision where the
    chosen candidate has a closed form. The scheme is chosen at the float64 arguments (m, ε and b rounded to
    nearest, the mechanism the float64 path reports); then

    - if the choice is θ̂ = 0 (its risk sup_{|θ| <= b} θ² = b²): b² from the mpmath b, exact at the working
      precision (the float64 b * b can be half a unit in the last place low, and b itself was rounded);
    - if it is the closed form (π/2) e^{b²} coth²(ε/2)/m: evaluated in mpmath from the mpmath ε and b (in float64 its
      relative error is about (b² + 3) units in the last place, in either direction);
    - otherwise (a certified table of :func:`threshold_worst_risk`): the float64 value, whose cells bound the
      binomial sums from above (``w_k`` at the cell's mode, the loss at the worse cell end), a float64 part.
    """
    import mpmath

    mf, ef, bf = float(m), float(eps), float(b)
    mi = int(math.floor(mf + 1e-9))
    v, lam, used, _ = threshold_scheme(mi, ef, bf)
    if not math.isfinite(v):
        return mpmath.mpf(v)
    bm = mpmath.mpf(b)
    if lam == 0.0 and v == square_up(bf):  # θ̂ = 0
        return bm * bm
    if lam == 1.0 and used >= 1 and v == threshold_closed_form(used, ef, bf):
        em = mpmath.mpf(eps)
        return mpmath.pi / 2 * mpmath.exp(bm * bm) * mpmath.coth(em / 2) ** 2 / used
    return mpmath.mpf(v)


class ThresholdRisk(sp.Function):
    """``ThresholdRisk(m, ε, b)``: certified worst risk (σ = 1, θ ∈ [-b, b]) of the threshold + randomized response
    scheme with m available reports at level ε (see :func:`threshold_scheme`; on the mpmath path
    :func:`threshold_risk_mp`)."""

    nargs = 3

    @staticmethod
    def _imp_(m, e, b):
        import mpmath

        if any(isinstance(x, mpmath.mpf) for x in (m, e, b)):
            return threshold_risk_mp(m, e, b)
        v = threshold_worst_risk_np(m, e, b)
        return float(v) if np.ndim(v) == 0 else v

    def _eval_evalf(self, prec):
        return sp.Float(float(threshold_worst_risk_np(*(float(a) for a in self.args))), prec)

    def _latex(self, printer, exp=None):
        out = r"R^{\mathrm{thr}}\left(" + ", ".join(printer._print(a) for a in self.args) + r"\right)"
        return out if exp is None else rf"{out}^{{{exp}}}"
# ------------------------------------------------------------------ quantised randomized response

def levels_keep_probability(eps, m):
    """λ = (e^ε - 1)/(e^ε + 2m) of (2m+1)-ary randomized response written as "keep with probability λ,
    else a uniform level" (sympy; expm1 form, accurate for small ε and overflow-free for large ε)."""
    return S.expm1(eps) / (S.expm1(eps) + 2 * m + 1)


def levels_second_moment(T, eps, m, r):
    """Certified bound on E[Ẑ²] of truncation at T + unbiased rounding to the grid jT/m (|j| <= m) +
    (2m+1)-ary randomized response, Ẑ = v(Z)/λ, over E|X|^k <= r^k with k >= 2 (sympy).

    Derivation. Y = the grid level: for |x| in [jh, (j+1)h] (h = T/m) round up with probability
    (|x| - jh)/h, so E[Y|x] = [x]_T and E[Y²|x] = g(|[x]_T|) with g the piecewise-linear interpolation of
    x² on the grid. Chord bounds: g(x) - x² = (x - jh)((j+1)h - x) <= min{h x, h²/4}, and g(x) <= T x
    (g is convex, g(0) = 0, g(T) = T²). So E Y² <= min{E[X_T²] + min{h E|X_T|, h²/4}, T E|X_T|}
    <= min{min{r², T²} + min{h r, h²/4}, T min{r, T}} (Lyapunov, k >= 2).
    Randomized response on the 2m+1 levels: Z = Y with probability λ, else a uniform level (this is
    (2m+1)-RR with P(Z = Y) = e^ε/(e^ε+2m)); levels are symmetric, so E[v(Z)|Y] = λ Y and Ẑ = v(Z)/λ is
    unbiased for [x]_T. E Ẑ² = (λ E Y² + (1-λ) avg_j (jh)²)/λ², avg_j (jh)² = T²(m+1)/(3m).
    ε-LDP: every output has probability in [1/(e^ε+2m), e^ε/(e^ε+2m)] whatever the input.
    """
    lam = levels_keep_probability(eps, m)
    h = T / m
    ey2 = S.Min(S.Min(r ** 2, T ** 2) + S.Min(h * r, h ** 2 / 4), T * S.Min(r, T))
    return ey2 / lam + (2 * m + 1) / (S.expm1(eps) + 2 * m + 1) * T ** 2 * (m + 1) / (3 * m) / lam ** 2


def levels_rr(x, T, eps, rng: np.random.Generator, m: int = 1):
    """Vectorised truncation + unbiased rounding to the grid jT/m + (2m+1)-RR; returns Ẑ = v(Z)/λ."""
    xt = truncate(np.asarray(x, float), T)
    h = T / m
    lo = np.floor(xt / h)
    up = rng.random(xt.shape) < (xt / h - lo)
    j = np.clip(lo + up, -m, m)
    lam = np.expm1(eps) / (np.expm1(eps) + 2 * m + 1)
    keep = rng.random(xt.shape) < lam
    j = np.where(keep, j, rng.integers(-m, m + 1, size=xt.shape))
    return j * h / lam


def levels_rr_channel(m: int, eps: float):
    """The (2m+1)-RR matrix Q[y, z] on the level indices (exact checks)."""
    K = 2 * m + 1
    Q = np.ones((K, K)) + np.eye(K) * np.expm1(eps)
    return Q / Q.sum(axis=1, keepdims=True)


MECHANISMS["levels-rr"] = levels_rr
