"""Locally private stochastic gradient methods for linear losses (DJW FOCS 2013 §V.C, Lemma 1;
docs/problems/linear.md): certified excess-risk bounds and vectorised simulations of the actual optimisers.

Loss ℓ(θ; x) = ⟨θ, x⟩, risk R(θ) = ⟨θ, μ⟩ with μ = E X; excess risk R(θ̂) - min_Θ R = ⟨θ̂, μ⟩ + r||μ||_*
(||·||_* the dual norm of Θ's norm). Each user i sends Z_i, an unbiased ε-LDP release of its gradient
x_i (which does not depend on θ: the protocol is non-interactive); the server runs one pass over
Z_1..Z_n. Since Z_t is independent of θ_t (a function of Z_1..Z_{t-1}) and E Z_t = μ,
E⟨μ, θ̄ - θ*⟩ = (1/n) Σ_t E⟨Z_t, θ_t - θ*⟩ <= E[regret]/n for θ̄ the average iterate.

* **Projected SGD on the ℓ2 ball** of radius r (data ||x||₂ <= M, ℓ2 sampling with radius M, ||Z||₂ = B
  exactly, B = M coth(ε/2) √π Γ((d+1)/2)/Γ(d/2)): θ_1 = 0, θ_{t+1} = Π(θ_t - η Z_t). Non-expansiveness of
  Π gives ||θ_{t+1} - θ*||² <= ||θ_t - θ*||² - 2η⟨Z_t, θ_t - θ*⟩ + η²B²; summing, regret <= r²/(2η) + ηnB²/2
  (||θ_1 - θ*|| <= r); η = r/(B√n): **E excess <= r B/√n** ≍ rM √(d/(nε²)).
* **Hedge / entropic mirror descent on the ℓ1 ball** of radius r (data ||x||_∞ <= M, ℓ∞ sampling with
  radius M, ||Z||_∞ = B exactly, B = M coth(ε/2) C_d(ε)): the ℓ1 ball is the convex hull of the 2d
  vertices ±r e_j; θ_t = Σ_v w_t(v) v with w_t ∝ exp(-η Σ_{s<t} ⟨v, Z_s⟩), and the vertex losses
  ⟨±r e_j, Z⟩ lie in [-rB, rB]. Hoeffding's lemma on each step's log-partition change gives
  regret <= log(2d)/η + η n (2rB)²/8; η = √(2 log(2d)/n)/(rB): **E excess <= rB √(2 log(2d)/n)**
  ≍ rM √(d log(2d)/(nε²)) (C_d ≍ √(πd/2)).
* **PrivUnit views** (:mod:`boundcalc.mechanisms.privunit`, ‖Z‖₂ = M/m exactly): projected SGD as above
  with B = M/m, and the minimiser θ̂ = -r Z̄/‖Z̄‖ of the averaged privatised loss over the ℓ2 ball
  (:func:`ball_minimiser_factor_value`: a threshold on the component of Z̄ - μ along μ, Jensen on the
  orthogonal part, Cantelli/Bernstein tails; the sup over ‖μ‖ is certified by monotone cell envelopes).
* Without privacy, Z = x: ||Z||₂ <= M (SGD: rM/√n) and ||Z||_∞ <= M (Hedge: rM √(2 log(2d)/n)).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S
from .local_scalar import coth_half
from .sampling import L2SphereConst, LinfSamplingC, l2_sampling, linf_sampling


def l2_gradient_bound(M, eps, d):
    """B of ℓ2 sampling with radius M (sympy)."""
    return M * coth_half(eps) * L2SphereConst(d)


def linf_gradient_bound(M, eps, d):
    """B of ℓ∞ sampling with radius M (sympy)."""
    return M * coth_half(eps) * LinfSamplingC(d, eps)


def sgd_bound(r, G, n):
    """Certified E excess of one-pass projected SGD, step r/(G√n), ||Z||₂ <= G: rG/√n."""
    return r * G / sp.sqrt(n)


def hedge_bound(r, G, n, d):
    """Certified E excess of Hedge over the 2d vertices, step √(2log(2d)/n)/(rG), ||Z||_∞ <= G."""
    return r * G * sp.sqrt(2 * sp.log(2 * d) / n)


# ------------------------------------------------------- minimiser of the averaged privatised loss

#: t grid of the minimiser analysis (any t in (0, 1) gives a valid bound)
_T_GRID = np.linspace(0.005, 0.995, 199)
_MIN_CACHE: dict = {}


def _tail(a, g2, beta):
    """P(W_1 <= -a) for W_1 a mean of n independent centred terms with variance <= g2 (of the mean) and
    -X_i <= b, β = b/n: min of Cantelli g2/(g2 + a²) and Bernstein exp(-a²/(2(g2 + βa/3)))."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        cant = np.where(g2 > 0, g2 / (g2 + a ** 2), 0.0)
        bern = np.exp(-a ** 2 / (2 * (g2 + beta * a / 3))) if (g2 > 0 or beta > 0) else 0.0
    return np.minimum(cant, bern)


def _tail_cells(lo, hi, s2, g2, beta):
    """Threshold bound per ρ cell [lo, hi] (arrays (k, 1)): hi · min_t [1 - t lo/√(t² lo² + s2)
    + P(W_1 < -(1-t) lo) + P(W_1 < -lo)] (see :func:`ball_minimiser_factor_value`)."""
    t = _T_GRID[None, :]
    out = np.empty(lo.shape)
    for a in range(0, len(lo), 2000):  # chunks of cells (memory)
        l_, h_, s_ = lo[a:a + 2000], hi[a:a + 2000], s2[a:a + 2000]
        tot = 1 - t * l_ / np.sqrt(t ** 2 * l_ ** 2 + s_) + _tail((1 - t) * l_, g2, beta) + _tail(l_, g2, beta)
        out[a:a + 2000] = h_ * tot.min(axis=1, keepdims=True)
    return out


#: the unit roundoff of float64 (2^-53): every float64 operation is exact up to a relative error of at most U
U = 2.0 ** -53


def _s2_rel_err(s, low, x, inv_n, s2):
    """A bound on the relative error of the float64 s²(x) = s·s - max(0, low - x²·inv_n) (``s2``, computed):
    each product and difference is rounded once, so the absolute error is at most 3U (s² + low + x² inv_n);
    divided by the exact s²(x) >= s2 - that (inf when that is not positive)."""
    ab = 3 * U * (s * s + low + x * x * inv_n)
    den = s2 - ab
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, ab / np.where(den > 0, den, 1.0), np.inf)


def _tail_cells_err(val, hi, e_s):
    """A bound on exact - float64 of :func:`_tail_cells` (``val``, computed at the cell ends ``hi`` with s²(hi) of
    relative error at most ``e_s``). For one t, tot = (1 - q) + T((1-t)lo) + T(lo), q = t lo/√(t² lo² + s²):
    q is five roundings and a square root from t, lo and s² (relative error <= 5U + e_s/2, so 1 - q is within
    6U + e_s/2 absolutely, q <= 1); each tail is Cantelli g2/(g2 + a²) (relative error <= 8U, value <= 1) or
    Bernstein exp(-z), z within 11U relatively, so exp(-z) within e^{-z}(U + 11U z) <= 5.1U absolutely; the two
    additions add at most 3U each (tot <= 3). So |tot~ - tot| <= E = 28U + e_s/2 at every t, the exact min over
    the t grid is at most min~ + E, and the cell value hi·min~ carries one more rounding: exact <= val(1 + 2U) + hi E.
    Used with E = 32U + e_s (a margin over this count)."""
    return 2 * U * np.abs(val) + hi * (32 * U + e_s)


def _majorant_alpha_err(rho, k, b, g, al):
    """A bound on the float64 error of :func:`majorant_alpha` (``al``) at (ρ, κ, b, g), arrays: α is the largest of
    values h_κ(x) + q(x) (or 2 + q, or q), q(x) = -b(x-ρ) - g(x-ρ)², at points x in [min(x_v, 0), max(x_v, x_c)]
    (x_v the vertex of q, x_c = 1/√(2κ)). h_κ = 1 - (3/2)(2κ)^{1/3} x^{2/3} + κx² on [0, x_c] has terms of sizes
    1, <= 3/2 and <= 1/2, each within a few roundings: within 24U; q(x) within 6U (|b||x-ρ| + g(x-ρ)²) (the
    difference x - ρ, two products, a square, a sum); the maximum of values each within its bound is within the
    largest bound, and the final 2 + q one more rounding (<= U |α| + 2U)."""
    xv = rho - b / (2 * g)
    xc = 1.0 / np.sqrt(2 * k)
    R = np.maximum(np.abs(np.minimum(xv, 0.0) - rho), np.abs(np.maximum(xv, xc) - rho))
    return 26 * U + 6 * U * (np.abs(b) * R + g * R * R) + U * np.abs(al)


def majorant_h(x, k):
    """h_κ(x) = sup_{y >= 0} [ψ(x, y) - κy] for x > 0, ψ(x, y) = 1 - x/√(x²+y): 1 - (3/2)(2κ)^{1/3} x^{2/3} + κx²
    below x_c = 1/√(2κ) (the concave maximiser y* = (x/(2κ))^{2/3} - x² >= 0), 0 above; decreasing in x."""
    x = np.asarray(x, float)
    xc = 1.0 / math.sqrt(2 * k)
    return np.where(x < xc, 1 - 1.5 * (2 * k) ** (1 / 3) * np.abs(x) ** (2 / 3) + k * x * x, 0.0)


def majorant_alpha(rho, k, b, g, K=500):
    """A certified α >= sup_x [H(x) - b(x-ρ) - g(x-ρ)²] (g > 0, k > 0), H(x) = sup_{y>=0} ψ(x, y) - ky: H <= 2 for
    x <= 0 (exact sup of the concave quadratic), H = h_κ on (0, x_c) (cells: h_κ at the left end, the exact
    sup of the quadratic on the cell), H = 0 beyond x_c."""
    xv = rho - b / (2 * g)  # vertex of the quadratic

    def q(x):
        return -b * (x - rho) - g * (x - rho) ** 2
    xc = 1.0 / math.sqrt(2 * k)
    a1 = 2 + q(min(xv, 0.0))
    a3 = q(max(xv, xc))
    e = _cell_ends(xc, K)
    a2 = np.max(majorant_h(e[:-1], k) + q(np.minimum(np.maximum(xv, e[:-1]), e[1:])))
    return float(max(a1, a2, a3))


#: 0, 1, ..., K as floats, by K (the tuning of :func:`majorant_table` asks for the same K some 10⁵ times)
_STEPS: dict = {}


def _cell_ends(xc: float, K: int) -> np.ndarray:
    """``np.linspace(0.0, xc, K + 1)``, bit for bit (numpy forms it as arange(K + 1)·(xc/K) + 0 with the last point
    set to xc), without its per-call argument handling."""
    steps = _STEPS.get(K)
    if steps is None:
        steps = _STEPS[K] = np.arange(K + 1, dtype=float)
    e = steps * (xc / K)
    e[-1] = xc
    return e


def _majorant_tune(lo, sig, s2, start, maxiter=60):
    """(κ, b, g) for the majorant bound on a cell starting at ``lo`` (units of s: noise level ``sig``, E y <= s2):
    E ψ <= α + gσ² + κ s2 minimised by Nelder–Mead from ``start`` = (log(κ s2), bσ, log(gσ²)) (any (κ, b, g) is
    valid: α is certified for it). Returns ((κ, b, g), the parameters in the form of ``start``). A short run warm
    started from the previous cell: longer runs can drift to parameters that suit the next cells badly."""
    from scipy import optimize

    def params(p):
        lk, bb, lg = np.clip(p, -60, 60)
        return math.exp(lk) / s2, bb / sig, math.exp(lg) / (sig * sig)

    def obj(p):
        k, b, g = params(p)
        return majorant_alpha(lo, k, b, g) + g * sig * sig + k * s2

    r = optimize.minimize(obj, start, method="Nelder-Mead",
                          options={"maxiter": maxiter, "xatol": 1e-3, "fatol": 1e-5})
    p = r.x if r.fun <= obj(start) else np.asarray(start, float)
    return params(p), p


#: majorant cells in units of s: [MAJ_LO, MAJ_HI]·s, geometric of ratio 1 + h_major
MAJ_LO, MAJ_HI = 0.05, 10.0
_MAJ_CACHE: dict = {}


def majorant_table(sig_r: float, low_r: float, h_major: float = 0.05):
    """The majorant cells and their parameters in units of s (lengths divided by s, so that nothing depends on n):
    edges c_0 = 0.05 < c_1 < ... < c_K = 10 (ratio 1 + h_major), and per cell [c_i, c_{i+1}] the tuned (κ, b, g)
    and the certified α_i = :func:`majorant_alpha` (c_i, κ, b, g). Tuned once per (σ/s, low/s², h_major) for the
    large-n limit of the cell objective, α + gσ² + κ(1 - low/s²), by a forward and a backward pass of short
    Nelder–Mead runs warm started from the neighbouring cell; the bound evaluates the same parameters at
    every n (:func:`ball_minimiser_factor_value`), which makes it non-increasing in n. Returns (c, κ, b, g, α)."""
    key = (float(sig_r), float(low_r), float(h_major))
    if key not in _MAJ_CACHE:
        c = np.exp(np.arange(math.log(MAJ_LO), math.log(MAJ_HI), math.log1p(h_major)))
        c = np.append(c[c < MAJ_HI], MAJ_HI)
        c[0] = MAJ_LO  # exactly the left end of the majorant range (no gap with the threshold cells)
        s2 = max(1.0 - max(0.0, low_r), 1e-12)
        rows, starts, p = [], [], np.zeros(3)
        for i in range(len(c) - 1):  # forward: each cell warm started from the one below
            (k, b, g), p = _majorant_tune(float(c[i]), sig_r, s2, p)
            al = majorant_alpha(float(c[i]), k, b, g)
            rows.append((al + g * sig_r ** 2 + k * s2, k, b, g, al))
            starts.append(p)
        for i in range(len(c) - 3, -1, -1):  # backward: from the one above, kept where better
            (k, b, g), p = _majorant_tune(float(c[i]), sig_r, s2, starts[i + 1])
            al = majorant_alpha(float(c[i]), k, b, g)
            if al + g * sig_r ** 2 + k * s2 < rows[i][0]:
                rows[i], starts[i] = (al + g * sig_r ** 2 + k * s2, k, b, g, al), p
        _, k, b, g, al = (np.array(v) for v in zip(*rows))
        _MAJ_CACHE[key] = (c, k, b, g, al)
    return _MAJ_CACHE[key]


def ball_minimiser_factor_value(s: float, sig: float, beta: float = math.inf, low: float = 0.0,
                                inv_n: float = 0.0, h: float = 0.002, h_major: float = 0.05,
                                sig_r: float | None = None, low_r: float | None = None) -> float:
    """Certified sup over ‖μ‖ = ρ in (0, 1] of the E excess (in units of rM) of θ̂ = -r Z̄/‖Z̄‖ (ℓ2 ball of
    radius r, data radius M = 1), for Z̄ the mean of n independent unbiased views Z_i with
    E‖Z̄ - μ‖² <= s², Var⟨Z̄, e⟩ <= sig² for every unit e, |⟨Z_i, e⟩ - ⟨μ, e⟩| <= b = nβ (β = ∞: no
    Bernstein term) and E⟨Z_i, e⟩² >= n·low for every unit e, so that with inv_n = 1/n,
    E W_1² = (E⟨Z_i, e⟩² - ρ²)/n >= low - ρ² inv_n and E‖W_⊥‖² <= s²(ρ) = s² - max{0, low - ρ² inv_n}
    (docs/problems/linear.md). excess/r = ρ ψ(x, y), ψ(x, y) = 1 - x/√(x²+y), x = ρ + W_1, y = ‖W_⊥‖²
    (ψ decreasing in x).

    Threshold bound: per ρ, for every t in (0, 1): excess/r <= ρ(1 - tρ/√(t²ρ² + s²(ρ))) + ρ P(W_1 < -(1-t)ρ)
    + ρ P(W_1 < -ρ) (:func:`_tail`). Each term is ρ times a function decreasing in ρ (the first also
    increasing in s²(ρ), which increases with ρ), so on a cell [ρ_i, ρ_{i+1}] it is at most ρ_{i+1} times
    that function at ρ_i (with s²(ρ_{i+1})); geometric cells of ratio 1 + h from ρ_0 = 10⁻⁴ min{s, sig} up
    to 1, t from a fixed grid per cell; first cell [0, ρ_0]: excess <= 2ρ_0.

    Majorant bound (cells [c_i s, c_{i+1} s] of ratio 1 + h_major on [0.05, 10]·s, cut at ρ = 1):
    ψ(x, y) <= α + b(x-ρ) + g(x-ρ)² + κy for all x and y >= 0 (:func:`majorant_alpha`), so
    E ψ <= α + g sig² + κ s²(ρ) (E W_1 = 0). ψ(cx, c²y) = ψ(x, y), so in units of s the parameters
    (κs², bs, gs²) and α depend only on the cell: they come from :func:`majorant_table` (tuned once per
    σ/s = ``sig_r`` and low/s² = ``low_r``, which do not depend on n for the mean of n views; by default
    computed from sig, low and s). On each majorant cell the bound is the least of the majorant, the
    threshold bound on that cell, and the largest threshold bound of the fine cells meeting it.

    Non-increasing in n (for views of fixed per-view moments, s and sig ∝ n^-1/2, β and low ∝ 1/n): in units
    of s the cells, t grid and majorant parameters are fixed, s²(ρ)/s² = 1 - max{0, low/s² - (ρ/s)²/n} and the
    Bernstein tails decrease with n, and the cell values are s times these. The result (the largest cell
    value) is capped by 2 (excess <= 2rρ) and rounded up to 10 significant digits, which absorbs the
    floating-point noise (a few units in the last place) where the bound is constant in n (the top cell cut at
    ρ = 1 when it is the largest).

    Floating point: each cell value enters the maximum with a proven bound on its float64 error added
    (:func:`_tail_cells_err`, :func:`_majorant_alpha_err`, :func:`_s2_rel_err`: a count of the roundings of each
    formula, Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Section 2.2), so the largest exact cell
    value is at most the result before its rounding up to 10 digits (the margin is about 1e-14 relatively where
    the bound is not capped)."""
    key = (float(s), float(sig), float(beta), float(low), float(inv_n), float(h), float(h_major), sig_r, low_r)
    if key in _MIN_CACHE:
        return _MIN_CACHE[key]
    if any(math.isnan(v) or v < 0 for v in (s, sig, beta, low, inv_n)) or not (math.isfinite(s) and math.isfinite(sig)):
        return math.nan
    r0 = 1e-4 * min(s, sig) if min(s, sig) > 0 else 1e-12
    r0 = min(r0, 1e-4)
    g2 = sig * sig

    def s2_at(x):
        return s * s - np.maximum(0.0, low - x ** 2 * inv_n)
    edges = np.exp(np.arange(math.log(r0), h, math.log1p(h)))
    edges = np.append(edges[edges < 1.0], 1.0)
    lo, hi = edges[:-1, None], edges[1:, None]
    s2hi = s2_at(hi)
    val = _tail_cells(lo, hi, s2hi, g2, beta)[:, 0]
    # each cell's value plus a bound on its float64 error (:func:`_tail_cells_err`): the largest exact cell value is
    # at most the largest of these (the printed value is rounded up from it, below)
    val_up = val + _tail_cells_err(val, hi[:, 0], _s2_rel_err(s, low, hi[:, 0], inv_n, s2hi[:, 0]))
    a_, b_ = MAJ_LO * s, min(1.0, MAJ_HI * s)
    if sig > 0 and s > 0 and a_ < b_:
        inside = (lo[:, 0] >= a_) & (hi[:, 0] <= b_)
        out = float(val_up[~inside].max()) if (~inside).any() else 0.0
        c, kk, bb, gg, al = majorant_table(sig / s if sig_r is None else sig_r,
                                           low / (s * s) if low_r is None else low_r, h_major)
        keep = c[:-1] * s < b_
        ml = c[:-1][keep] * s
        mh = np.minimum(c[1:][keep] * s, b_)
        al_err = _majorant_alpha_err(c[:-1][keep], kk[keep], bb[keep], gg[keep], al[keep])
        kk, gg, al = kk[keep], gg[keep], al[keep]  # κs², gs², α (units of s)
        s2h = s2_at(mh)
        e_s = _s2_rel_err(s, low, mh, inv_n, s2h)
        terms = al + gg * g2 / (s * s) + kk * s2h / (s * s)
        mv = mh * np.minimum(2.0, terms)
        # α's own error, 8 roundings of the sum of the three non-negative terms (g2 = sig·sig and s·s included),
        # κ s²(ρ)'s relative error, and the product by mh
        mv_up = mv + mh * (al_err + 8 * U * np.abs(terms) + np.abs(kk * s2h / (s * s)) * e_s) + 2 * U * np.abs(mv)
        tc = _tail_cells(ml[:, None], mh[:, None], s2h[:, None], g2, beta)[:, 0]
        tc_up = tc + _tail_cells_err(tc, mh, e_s)
        # the fine threshold cells meeting each majorant cell: indices lo < mh and hi > ml
        i0 = np.searchsorted(edges[1:], ml, side="right")
        i1 = np.searchsorted(edges[:-1], mh, side="left")
        fine_up = np.array([val_up[a:b].max() if b > a else np.inf for a, b in zip(i0, i1)])
        out = max(out, float(np.max(np.minimum(np.minimum(mv_up, tc_up), fine_up))))
    else:
        out = float(val_up.max())
    # [0, edges[0]]: excess <= 2ρ <= 2 edges[0] (edges[0] = exp(log r0) may be a unit above r0)
    out = _round_up(float(min(2.0, max(2.0 * r0, 2.0 * float(edges[0]), out))))
    _MIN_CACHE[key] = out
    return out


def _round_up(x: float, digits: int = 10) -> float:
    """x rounded up to ``digits`` significant digits (at least x; a non-decreasing function of x)."""
    if not (math.isfinite(x) and x > 0):
        return x
    q = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    y = math.ceil(x / q) * q
    return y if y >= x else math.nextafter(y, math.inf)


def _bmf_scalar(s, sig, beta, low, inv_n, sig_r, low_r):
    return ball_minimiser_factor_value(s, sig, beta, low, inv_n, sig_r=sig_r, low_r=low_r)


def _bmf_numpy(*args):
    args = np.broadcast_arrays(*[np.asarray(a, float) for a in args])
    out = np.empty(args[0].shape)
    for ix in np.ndindex(out.shape):
        out[ix] = _bmf_scalar(*[float(a[ix]) for a in args])
    return out if out.ndim else float(out)


def _bmf_mpmath(*args):
    """The mpmath path: the float64 value at the arguments rounded to float64 on the safe side (s, σ, β and 1/n up,
    low down: each enlarges the class of views the bound covers, so the value at the rounded arguments bounds the
    one at the exact arguments); σ/s and low/s², which only select the majorant parameters, to nearest."""
    import mpmath

    from ..core.certify import round_down, round_up

    s, sig, beta, low, inv_n, sig_r, low_r = args
    v = _bmf_scalar(round_up(mpmath.mpf(s)), round_up(mpmath.mpf(sig)), round_up(mpmath.mpf(beta)),
                    max(0.0, round_down(mpmath.mpf(low))), round_up(mpmath.mpf(inv_n)), float(sig_r), float(low_r))
    return mpmath.mpf(v) if math.isfinite(v) else mpmath.mpf("nan")


class BallMinimiserFactor(sp.Function):
    """``BallMinimiserFactor(s, σ, β, low, 1/n, σ/s, low/s²)``: certified E excess / (rM) of θ̂ = -r Z̄/||Z̄|| over
    the ℓ2 ball, lengths in units of M (:func:`ball_minimiser_factor_value`; the last two arguments, which do not
    depend on n, select the majorant parameters of :func:`majorant_table`)."""

    nargs = 7

    def _latex(self, printer, exp=None):
        a = ", ".join(printer._print(x) for x in self.args[:5])
        base = rf"\Phi_{{\min}}({a})"
        return base if exp is None else rf"\left({base}\right)^{{{printer._print(exp)}}}"


S.NUMPY_IMPL["BallMinimiserFactor"] = _bmf_numpy
S.MPMATH_IMPL["BallMinimiserFactor"] = _bmf_mpmath


def ball_minimiser_bound(r, M, second_moment, axis_max, axis_min, n):
    """Certified E excess of θ̂ = -r Z̄/||Z̄|| for n views with ||Z||² = second_moment (a constant norm, so
    |⟨Z, e⟩ - ⟨μ, e⟩| <= √second_moment + M) and axis_min <= E⟨Z, e⟩² <= axis_max for unit e (sympy):
    rM Φ(√(second_moment/n)/M, √(axis_max/n)/M, (√second_moment + M)/(nM), axis_min/(nM²), 1/n), with the
    n-free ratios σ/s = √(axis_max/second_moment) and low/s² = axis_min/second_moment passed as well (so that
    the majorant parameters are the same at every n, :func:`majorant_table`)."""
    return r * M * BallMinimiserFactor(sp.sqrt(second_moment / n) / M, sp.sqrt(axis_max / n) / M,
                                       (sp.sqrt(second_moment) + M) / (n * M), axis_min / (n * M ** 2), 1 / n,
                                       sp.sqrt(axis_max / second_moment), axis_min / second_moment)


def run_ball_minimiser(draw, n: int, reps: int, d: int, r: float, M: float, eps: float, rng,
                       chunk_rows: int = 2_000_000) -> np.ndarray:
    """θ̂ = -r Z̄/||Z̄|| with Z_i the PrivUnit views (radius M) of n data rows, for ``reps`` runs.
    Returns θ̂ (reps, d)."""
    from .privunit import privunit

    zsum = np.zeros((reps, d))
    per = max(1, chunk_rows // max(d, 1))
    for i in range(reps):
        t = 0
        while t < n:
            k = min(per, n - t)
            zsum[i] += privunit(draw(k), M, eps, rng).sum(axis=0)
            t += k
    nrm = np.linalg.norm(zsum, axis=1, keepdims=True)
    out = -r * zsum / np.where(nrm > 0, nrm, 1.0)
    out[nrm[:, 0] == 0] = 0.0
    return out


# --------------------------------------------------------------------------- simulations

def privatise(x: np.ndarray, M: float, eps: float | None, geometry: str, rng) -> np.ndarray:
    """Rows of x released by ℓ2 (geometry l2) or ℓ∞ (geometry l1) sampling, or PrivUnit (geometry
    ``privunit``, radius M); eps None: no privacy."""
    if eps is None:
        return x
    if geometry == "privunit":
        from .privunit import privunit

        return privunit(x, M, eps, rng)
    return l2_sampling(x, M, eps, rng) if geometry == "l2" else linf_sampling(x, M, eps, rng)


def run_projected_sgd(draw, n: int, reps: int, d: int, r: float, M: float, eps, eta: float, rng,
                      chunk_rows: int = 400_000, mechanism: str = "l2") -> np.ndarray:
    """One pass of projected SGD (ℓ2 ball, θ_1 = 0) on n privatised gradients (``mechanism``: "l2" for ℓ2
    sampling, "privunit" for PrivUnit), for ``reps`` independent runs at once. ``draw(k)`` returns k data
    rows (k, d). Returns the average iterates θ̄ (reps, d)."""
    theta = np.zeros((reps, d))
    acc = np.zeros((reps, d))
    steps_per = max(1, chunk_rows // reps)
    t = 0
    while t < n:
        k = min(steps_per, n - t)
        z = privatise(draw(k * reps), M, eps, mechanism, rng).reshape(k, reps, d)
        for s in range(k):
            acc += theta
            theta -= eta * z[s]
            nrm = np.sqrt(np.einsum("ij,ij->i", theta, theta))
            theta *= np.minimum(1.0, r / np.maximum(nrm, 1e-300))[:, None]
        t += k
    return acc / n


def run_hedge(draw, n: int, reps: int, d: int, r: float, M: float, eps, eta: float, rng,
              chunk_rows: int = 400_000) -> np.ndarray:
    """One pass of Hedge over the vertices ±r e_j of the ℓ1 ball on n privatised gradients (ℓ∞ sampling).

    With S_{t-1} = Σ_{s<t} Z_s: θ_t = -r Σ_j sinh(ηr S_j) e_j / Σ_k cosh(ηr S_k) (computed in log space).
    Returns the average iterates θ̄ (reps, d)."""
    S = np.zeros((reps, d))
    acc = np.zeros((reps, d))
    steps_per = max(1, chunk_rows // (reps * max(d, 1)) + 1)
    t = 0
    while t < n:
        k = min(steps_per, n - t)
        z = privatise(draw(k * reps), M, eps, "l1", rng).reshape(k, reps, d)
        cs = np.cumsum(z, axis=0)
        prev = np.concatenate([S[None], S[None] + cs[:-1]], axis=0)  # S_{t-1} for the k steps
        a = eta * r * prev
        top = np.max(np.abs(a), axis=2, keepdims=True)
        num = np.exp(-a - top) - np.exp(a - top)  # 2 sinh(-a) e^{-top}
        den = np.sum(np.exp(a - top) + np.exp(-a - top), axis=2, keepdims=True)
        acc += r * np.sum(num / den, axis=0)
        S = S + cs[-1]
        t += k
    return acc / n
