"""Ziv–Zakai bound for ℓ1 loss on the multinomial pair family under ε-local privacy, sequential interaction
allowed (derivation: docs/methods/ziv-zakai.md).

**Family.** m <= ⌊d/2⌋ pairs of symbols, ``p_θ(2j-1) = (1+θ_j)/(2m)``, ``p_θ(2j) = (1-θ_j)/(2m)``, other symbols
0, θ ∈ [-A, A]^m with 0 < A <= 1, and the prior θ_j i.i.d. uniform on [-A, A].

**Bound.** For every ε-LDP sequentially interactive protocol and every estimator p̂,

    sup_p E‖p̂ - p‖₁ >= V(A) = (1/(4A)) ∫_0^{2A} dh ∫_{-A}^{A-h} dφ G(κ(φ, h)),
    G(κ) = 1 - √(1 - (1-κ)^{2n}),   κ(φ, h) = min{h_ε (h/(2m))², H²(φ, h)},

h_ε = (e^ε-1)²/(4(e^ε+1)) (:mod:`.hellinger_contraction`) and H²(φ, h) the squared Hellinger distance of p_θ
and p_θ' when θ_j = φ, θ'_j = φ + h and the other coordinates agree:
``H² = (1/(4m)) [(h/(√(1+φ+h) + √(1+φ)))² + (h/(√(1-φ) + √(1-φ-h)))²]`` (no cancellation).

**Proof.** (1) ``‖p̂ - p_θ‖₁ >= Σ_j |u_j - θ_j/m|``, u_j = p̂_{2j-1} - p̂_{2j} (triangle inequality on each pair).
(2) Ziv & Zakai (1969), in the form of Bell, Steinberg, Ephraim & Van Trees (1997): for t = m u_j and ϑ = θ_j,
``E|t - ϑ| = ½ ∫_0^∞ P(|t - ϑ| >= h/2) dh`` and ``P(|t - ϑ| >= h/2) >= ∫ dφ [π(φ) P_φ(t >= φ + h/2) + π(φ+h)
P_{φ+h}(t < φ + h/2)]`` (split the event by the sign of t - ϑ and substitute ϑ = φ + h in the second part), P_φ
the law of the transcript given θ_j = φ (the other coordinates drawn from the prior). For φ ∈ [-A, A-h] both
weights are 1/(2A) and the bracket is at least (1/(2A))(1 - TV(M̄_φ, M̄_{φ+h})) (it is the error of one test).
(3) Le Cam: ``1 - TV >= 1 - √(1 - BC²)``. (4) BC of the two mixtures >= the prior average of BC(M_θ, M_θ') over
θ, θ' that differ in coordinate j only (joint concavity of √(ab)) >= (1 - κ)ⁿ: one report's squared Hellinger
distance is at most h_ε TV² (Hellinger contraction; TV(p_θ, p_θ') = h/(2m)) and at most H²(φ, h) (data
processing), for every channel and history, and peeling the last report of the transcript multiplies the
affinities (docs/methods/hellinger-assouad.md, steps 1–2). Summing the m coordinates (each weighted 1/m by (1))
gives V(A).

**Certified numerics.** V(A) is replaced by a lower Riemann sum. G decreases in κ; H²(φ, h) increases in h for
fixed φ (the Bhattacharyya coefficient of two Bernoulli laws decreases as they move apart) and is convex in φ
(minus a sum of geometric means of non-negative affine functions), and symmetric under φ ↦ -φ-h. On an h-cell
[h₀, h₁] the φ-domain is cut to [-A, A-h₁] (inside every [-A, A-h]); on each φ-cell κ is charged at
``min{h_ε h₁²/(4m²), max of H²(·, h₁) at the cell's two ends}``. h-cells stop at
``H = min{2A, √(20/(n c₂))}``, c₂ = min{h_ε/(4m²), 1/(8m)} (dropping the rest only lowers the sum;
H² >= h²/(8m) makes G <= e^{-40} there). When 2h_ε <= m the privacy term is the smaller one everywhere
(H² >= h²/(8m)) and the φ-integral is exact: ``(2A - h₁) G(h_ε h₁²/(4m²))``; V then increases in A and A = 1.
Otherwise A is tuned by a golden-section search on a coarse sum (any A is valid) and the reported value is the
fine sum at that A. Every term is a non-negative product of stable float64 forms (log1p, expm1, the
cancellation-free H², 1 - φ - h by a compensated subtraction): the result is widened by 1e-9 relatively, which
covers its proven rounding error (:func:`rounding_error_bound`; docs/engineering/certified-floating-point.md,
part E); it is listed among the float64 parts of the high-precision check.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from ..core import symbolic as S
from .hellinger_contraction import hellinger_factor_float

SOURCE = ("Ziv & Zakai (1969); Bell, Steinberg, Ephraim & Van Trees (1997); Le Cam's inequality; Hellinger "
          "contraction of ε-LDP channels (sharpening Duchi, Jordan & Wainwright 2018, Thm 1); "
          "docs/methods/ziv-zakai.md (derived)")

#: cells of the h-axis and of each half φ-axis of the final lower sum, and of the coarse sums that tune A
FINE, COARSE = (2400, 48), (400, 16)
#: relative widening of the float64 sum (rounding of at most ~1e4 non-negative terms, each good to a few ulp)
WIDEN = 1e-9


def pair_h2(phi, h, m):
    """H²(p_θ, p_θ') for θ_j = φ, θ'_j = φ + h, other coordinates equal, in the cancellation-free form
    (1/(4m)) [(h/(√(1+φ+h)+√(1+φ)))² + (h/(√(1-φ)+√(1-φ-h)))²] (vectorised; h > 0, -1 <= φ, φ + h <= 1)."""
    phi, h = np.broadcast_arrays(np.asarray(phi, float), np.asarray(h, float))
    a = h / (np.sqrt(1 + phi + h) + np.sqrt(np.maximum(1 + phi, 0.0)))
    b = h / (np.sqrt(1 - phi) + np.sqrt(np.maximum(one_minus_sum(phi, h), 0.0)))
    return (a * a + b * b) / (4 * m)


def one_minus_sum(phi, h):
    """1 - φ - h for |φ| <= 1, h >= 0, never above the float64 form (1 - φ) - h nor above the exact value by more
    than 2.1u relatively (u = 2⁻⁵³; below it is the safe side: H² larger). (1 - φ) - h alone is not: 1 - φ is rounded for φ < ½, and when φ + h is
    close to 1 the subtraction then keeps that rounding error, up to 2⁻⁵⁴ absolutely (√ of it enters H² at
    the φ-domain's end when A = 1, where it was 7.9e-9 relatively below the exact H²). Here t = fl(1 - φ), its
    error e = (1 - t) - φ is exact (Dekker's fast two-sum, |φ| <= 1), and (t - h) + e is either a Sterbenz
    subtraction (exact) followed by one rounding, or two roundings of sums without cancellation."""
    t = 1 - phi
    e = (1 - t) - phi
    return np.minimum(t - h, (t - h) + e)


def le_cam_factor(kappa, n):
    """G(κ) = 1 - √(1 - (1-κ)^{2n}) = B/(1 + √(1 - B)), B = (1-κ)^{2n}, with 1 - B = -expm1(2n log1p(-κ));
    0 for κ >= 1 (vectorised)."""
    kappa = np.asarray(kappa, float)
    with np.errstate(divide="ignore"):
        lb = 2 * n * np.log1p(-np.minimum(kappa, 1.0))
    return np.where(kappa >= 1, 0.0, np.exp(lb) / (1 + np.sqrt(-np.expm1(lb))))


def _h_cut(n, he, m, A):
    c2 = min(he / (4 * m * m), 1 / (8 * m))
    return min(2 * A, math.sqrt(20 / (n * c2)))


def lower_sum(n: float, eps: float, m: int, A: float, cells=FINE) -> float:
    """The lower Riemann sum of V(A) (module docstring), unwidened."""
    he = hellinger_factor_float(eps)  # inf beyond float range: then κ = H² (never a smaller h_ε)
    nh, nphi = cells
    H = _h_cut(n, he, m, A)
    h1 = H * np.arange(1, nh + 1) / nh  # right ends of the h-cells
    dh = H / nh
    priv = he * h1 * h1 / (4 * m * m)
    length = 2 * A - h1  # the φ-domain [-A, A - h₁]
    if 2 * he <= m:  # privacy term the smaller everywhere: the φ-integral is exact
        return float(np.sum(dh * length * le_cam_factor(priv, n)) / (4 * A))
    # half φ-domain [-h₁/2, A - h₁], cells of equal width per h-cell; the other half by symmetry
    u = np.arange(nphi + 1) / nphi
    ends = (-h1 / 2)[:, None] + u[None, :] * (length / 2)[:, None]  # (nh, nphi + 1)
    d2 = pair_h2(ends, h1[:, None], m)
    kmax = np.minimum(priv[:, None], np.maximum(d2[:, :-1], d2[:, 1:]))
    g = le_cam_factor(kmax, n)  # (nh, nphi)
    return float(np.sum(dh * length[:, None] / nphi * g) / (4 * A))


@functools.lru_cache(maxsize=4096)
def best_amplitude(n: float, eps: float, m: int) -> float:
    """A (0 < A <= 1) maximising the coarse sum: 1 when 2h_ε <= m (V increases in A there), else a golden-section
    search on [0.02, 1] (V is close to unimodal in A; any A gives a valid bound)."""
    he = hellinger_factor_float(eps)  # inf beyond float range: then κ = H² (never a smaller h_ε)
    if 2 * he <= m:
        return 1.0
    f = lambda a: lower_sum(n, eps, m, a, COARSE)
    lo, hi = 0.02, 1.0
    r = (math.sqrt(5) - 1) / 2
    x1, x2 = hi - r * (hi - lo), lo + r * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(24):
        if f1 >= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - r * (hi - lo)
            f1 = f(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + r * (hi - lo)
            f2 = f(x2)
    cands = [(f(1.0), 1.0), (f1, x1), (f2, x2)]
    return max(cands)[1]


@functools.lru_cache(maxsize=4096)
def zz_pair_l1(n: float, eps: float, m: int) -> float:
    """The certified value: the fine lower sum at the tuned A, widened by :data:`WIDEN` (module docstring)."""
    return certified_sum(n, eps, m, best_amplitude(n, eps, m))


def certified_sum(n: float, eps: float, m: int, A: float, cells=FINE) -> float:
    """The lower sum at A widened by :data:`WIDEN`, which covers its proven rounding error
    (:func:`rounding_error_bound`, at most 1.4e-11 relatively at the fine cells for every n, ε, m seen); where it
    does not, twice that error is subtracted instead."""
    v = lower_sum(n, eps, m, A, cells)
    err = rounding_error_bound(v, n, eps, m, A, cells)
    if err <= WIDEN * v / 2:
        return v * (1 - WIDEN)
    return max(0.0, v - 2 * err)


#: u = 2⁻⁵³, the unit roundoff of float64
_U = 2.0 ** -53


def rounding_error_bound(v: float, n: float, eps: float, m: int, A: float, cells=FINE) -> float:
    """A proven bound on |v - L| for v = :func:`lower_sum` and L the exact lower sum of the same scheme (its cells
    are the float64 points h₁ and φ-ends, with the float64 h_ε error counted; docs/engineering/
    certified-floating-point.md, part E): a relative part (the h-cell widths (4 n_h + 1)u, the weights 5u, the
    summation of N = n_h n_φ non-negative terms (N - 1)u, the division u) and an absolute part (every G within 12u:
    κ within 12u relatively and |G'(κ)| κ <= 0.44, the float64 evaluation within 6u; weights summing to H/2;
    the φ-cell widths by Abel summation 2.5u·TV·H, TV <= 1.01), 9u·H in all."""
    nh, nphi = cells
    he = hellinger_factor_float(eps)
    H = _h_cut(n, he, m, A)
    terms = nh * (1 if 2 * he <= m else nphi)
    rel = (4 * nh + 1 + 5 + terms + 2) * _U
    return rel * abs(v) + 9 * _U * H * (1 + 1e-6)


def _zz_numpy(n, eps, m):
    n, eps, m = np.broadcast_arrays(*(np.asarray(a, float) for a in (n, eps, m)))
    out = np.full(n.shape, np.nan)
    ok = np.isfinite(n) & (n >= 1) & (eps > 0) & np.isfinite(m) & (m >= 1)
    for idx in zip(*np.nonzero(ok)) if n.ndim else ([()] if ok else []):
        out[idx] = zz_pair_l1(float(n[idx]), float(eps[idx]), int(m[idx]))
    return out if out.ndim else float(out)


def _zz_mpmath(n, eps, m):
    import mpmath

    v = _zz_numpy(float(n), float(eps), float(m))
    return mpmath.mpf(v) if math.isfinite(v) else mpmath.mpf("nan")


class ZivZakaiPairsL1(sp.Function):
    """``ZivZakaiPairsL1(n, ε, m)``: the Ziv–Zakai lower bound on sup_p E‖p̂ - p‖₁ of the pair family on 2m symbols
    under ε-LDP (module docstring)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        args = ", ".join(printer._print(a) for a in self.args)
        base = rf"\mathrm{{ZZ}}_{{\ell_1}}\left({args}\right)"
        return base if exp is None else rf"\left({base}\right)^{{{exp}}}"


S.NUMPY_IMPL["ZivZakaiPairsL1"] = _zz_numpy
S.MPMATH_IMPL["ZivZakaiPairsL1"] = _zz_mpmath
