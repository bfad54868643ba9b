"""ℓ2 and ℓ∞ sampling mechanisms (Duchi, Jordan & Wainwright, JASA 2018; docs/problems/mean.md),
plus two coordinate mechanisms for d-dimensional bounded vectors.

All mechanisms are ε-LDP and *unbiased*: ``E[Z | v] = v``. They are written for a datum v in a ball
of radius r (ℓ2: ||v||₂ <= r; ℓ∞: ||v||_∞ <= r) and exact constants are sympy expressions in d, ε, r.

**ℓ2 sampling.** ``Ṽ = ± r v/||v||`` with ``P(+) = 1/2 + ||v||/(2r)`` (so ``E Ṽ = v``); with probability
``π_ε = e^ε/(e^ε+1)`` draw Z uniform on the sphere of radius B in ``{⟨z,Ṽ⟩ > 0}``, else in
``{⟨z,Ṽ⟩ <= 0}``. For u uniform on the unit sphere, ``E|u_1| = Γ(d/2)/(√π Γ((d+1)/2))``, so
``E[Z|Ṽ] = B (2π_ε - 1) E|u_1| Ṽ/r``; unbiasedness forces
``B = r coth(ε/2) √π Γ((d+1)/2)/Γ(d/2)``  (coth(ε/2) = (e^ε+1)/(e^ε-1) = 1/(2π_ε - 1)).
Privacy: the density of Z given Ṽ is π_ε/A or (1-π_ε)/A (A half the sphere's area): ratio <= e^ε.
``E||Z||² = B²``.

**ℓ∞ sampling.** ``Ṽ_j ∈ {±r}`` independent with ``P(+r) = 1/2 + v_j/(2r)`` (so ``E Ṽ = v``); then Z = B w,
w ∈ {±1}^d with ``P(w | Ṽ) = g(w)/Z_ε``, ``g = e^ε`` on the strict half ``⟨w,Ṽ⟩ > 0`` and ``g = 1`` on
the closed other half ``⟨w,Ṽ⟩ <= 0``; ``Z_ε = K(e^ε + 1) + N_0`` with ``N_0 = binom(d, d/2)`` boundary
points (0 for odd d) and ``K = (2^d - N_0)/2`` points in each strict half. Equivalently: with
probability ``π' = K e^ε/Z_ε`` draw w uniform on the strict half, else uniform on the closed other half
(for odd d, π' = π_ε = e^ε/(e^ε+1): the mechanism of DJW).
Privacy: every P(w|Ṽ) is e^ε/Z_ε or 1/Z_ε with Z_ε the same for every Ṽ: ratio <= e^ε.
Unbiasedness: the boundary sums to 0 (w -> -w), the strict halves are mirror images, so
``E[w|Ṽ] = (e^ε-1)/Z_ε · Σ_{⟨w,1⟩>0} w_1 · Ṽ/r`` and ``Σ_{⟨w,1⟩>0} w_1 = binom(d-1, ⌊d/2⌋)`` (counting
w_1 = ±1 and the other d-1 signs). So ``B = r coth(ε/2) C_d(ε)`` with
d odd: ``1/C_d = binom(d-1, (d-1)/2)/2^{d-1}`` (no boundary points);
d even: ``1/C_d(ε) = binom(d-1, d/2)/(2^{d-1} - binom(d,d/2) tanh(ε/2)/2)``.

*The 'both halves' variant is not private (d even).* A variant lets the boundary ``⟨z,Ṽ⟩ = 0`` belong
to both halves (uniform on each closed half, 1/C_d = binom(d-1,d/2)/(2^{d-1} + binom(d,d/2)/2)). That
mechanism is unbiased but **not ε-LDP**: a boundary point has probability 1/|H| under one Ṽ and
(1-π_ε)/|H| under another (strictly on the far side), a ratio of e^ε + 1 (found by exact enumeration
for d = 2, tests/test_local_mechanisms.py). The version above gives the boundary the weight of the
far half, is ε-LDP, and has a smaller B. B is *divided* by the binomial expression (the published
implementation that multiplies is biased: also tested). ``E||Z||² = d B²``.

**Coordinate splitting.** Pick J uniform in [d]; release J and the one-bit value (local_scalar) of
v_J at level ε; ``Z = d·Y·e_J``. ``E Z = v``, ``||Z||² = d² r² coth²(ε/2)``.

**Coordinate subsampling** (k coordinates, 1 <= k <= d): pick a uniform k-subset S; release each v_j,
j ∈ S, by the one-bit mechanism at level ε/k (composition); ``Z = (d/k) Σ_{j∈S} Y_j e_j``. ``E Z = v``
(P(j ∈ S) = k/d), ``‖Z‖² = (d/k)² k r² coth²(ε/(2k)) = d² r² coth²(ε/(2k))/k``. k = 1 is coordinate
splitting and k = d is coordinate composition; the solver tunes k (large ε favours k ≈ ε/2).

**Coordinate composition.** Release every coordinate with the one-bit mechanism at level ε/d
(basic composition of d ε/d-LDP releases is ε-LDP). ``||Z||² = d r² coth²(ε/(2d))``.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S
from .local_scalar import coth_half, coth_half_np, onebit


# --------------------------------------------------------------------------- exact constants

def l2_gamma_ratio_np(d):
    """√π Γ((d+1)/2)/Γ(d/2) = 1/E|u_1| (u uniform on the unit sphere of ℝ^d), vectorised."""
    from scipy import special

    d = np.asarray(d, float)
    return np.sqrt(np.pi) * np.exp(special.gammaln((d + 1) / 2) - special.gammaln(d / 2))


def linf_C_np(d, eps=None):
    """C_d(ε) of the ℓ∞ sampling mechanism (vectorised; log-space binomials, any d).

    d odd: 1/C_d = binom(d-1,(d-1)/2)/2^{d-1}; d even: 1/C_d = binom(d-1,d/2)/(2^{d-1} - binom(d,d/2)
    tanh(ε/2)/2). ``eps=None`` for even d returns the ε -> 0 value (which is an upper bound: C_d(ε)
    decreases in ε)."""
    from scipy import special

    d = np.asarray(d, float)
    dd = np.floor(d)
    th = 0.0 if eps is None else np.tanh(np.asarray(eps, float) / 2)
    lb = special.gammaln

    def logbinom(a, b):
        return lb(a + 1) - lb(b + 1) - lb(a - b + 1)

    odd = np.mod(dd, 2) == 1
    log_m_odd = logbinom(dd - 1, np.floor((dd - 1) / 2)) - (dd - 1) * math.log(2)
    # even: 2^{d-1} - N0 tanh/2 = 2^{d-1} (1 - tanh · binom(d,d/2)/2^d), binom(d,d/2)/2^d <= 1/2
    log_ratio = logbinom(dd, np.floor(dd / 2)) - dd * math.log(2)
    log_den = (dd - 1) * math.log(2) + np.log1p(-th * np.exp(log_ratio))
    log_m_even = logbinom(dd - 1, np.floor(dd / 2)) - log_den
    return np.exp(-np.where(odd, log_m_odd, log_m_even))


def l2_gamma_ratio_mp(d):
    """√π Γ((d+1)/2)/Γ(d/2) at mpmath's working precision (the high-precision path of ``L2SphereConst``; the
    float64 form subtracts two log-gammas of size d log d/2, an absolute error of about d·1e-16 in the exponent).
    NaN unless d > 0."""
    import mpmath

    d = mpmath.mpf(d)
    if not (mpmath.isfinite(d) and d > 0):
        return mpmath.mpf("nan")
    return mpmath.sqrt(mpmath.pi) * mpmath.gammaprod([(d + 1) / 2], [d / 2])


def linf_C_mp(d, eps):
    """C_d(ε) of :func:`linf_C_np` at mpmath's working precision (the high-precision path of ``LinfSamplingC``):
    the binomials are mpmath's, 2^{d-1} is exact, and the even denominator 2^{d-1}(1 - tanh(ε/2) binom(d,d/2)/2^d)
    has no cancellation (binom(d,d/2)/2^d <= 1/2). d is floored as in the float64 code; NaN unless d >= 1."""
    import mpmath

    d, eps = mpmath.mpf(d), mpmath.mpf(eps)
    if not (mpmath.isfinite(d) and d >= 1 and not mpmath.isnan(eps)):
        return mpmath.mpf("nan")
    dd = mpmath.floor(d)
    half = mpmath.floor(dd / 2)
    if dd % 2 == 1:
        return mpmath.ldexp(1, int(dd) - 1) / mpmath.binomial(dd - 1, half)
    den = mpmath.ldexp(1, int(dd) - 1) - mpmath.binomial(dd, half) * mpmath.tanh(eps / 2) / 2
    return den / mpmath.binomial(dd - 1, half)


def _evalf_with(fn, args, prec):
    """sympy evalf of a function whose mpmath implementation is ``fn`` (numeric arguments only)."""
    import mpmath

    if not all(a.is_Number for a in args):
        return None
    with mpmath.workprec(prec):
        return sp.Float._new(fn(*(a._to_mpmath(prec) for a in args))._mpf_, prec)


def linf_m_exact(d: int, eps=0):
    """m_d(ε) = 1/C_d(ε) as an exact sympy expression (for the enumeration test)."""
    if d % 2 == 1:
        return sp.Rational(math.comb(d - 1, (d - 1) // 2), 2 ** (d - 1))
    return sp.Integer(math.comb(d - 1, d // 2)) / (2 ** (d - 1) - sp.Integer(math.comb(d, d // 2))
                                                   * sp.tanh(sp.sympify(eps) / 2) / 2)


def linf_m_both_halves(d: int):
    """1/C_d of the 'both halves' variant (boundary in both closed halves; unbiased, not ε-LDP for even d)."""
    if d % 2 == 1:
        return sp.Rational(math.comb(d - 1, (d - 1) // 2), 2 ** (d - 1))
    return sp.Rational(math.comb(d - 1, d // 2), 1) / (2 ** (d - 1) + sp.Rational(math.comb(d, d // 2), 2))


class L2SphereConst(sp.Function):
    """``L2SphereConst(d) = √π Γ((d+1)/2)/Γ(d/2)``: B = r coth(ε/2) · L2SphereConst(d) (ℓ2 sampling)."""

    nargs = 1

    @staticmethod
    def _imp_(d):
        if hasattr(d, "_mpf_"):  # the mpmath (high-precision) path
            return l2_gamma_ratio_mp(d)
        return _float_out(l2_gamma_ratio_np(_float_in(d)))

    def _eval_evalf(self, prec):
        return _evalf_with(l2_gamma_ratio_mp, self.args, prec)

    def _latex(self, printer, exp=None):
        a = printer._print(self.args[0])
        out = rf"\frac{{\sqrt{{\pi}}\,\Gamma(\frac{{{a}+1}}{{2}})}}{{\Gamma(\frac{{{a}}}{{2}})}}"
        return out if exp is None else rf"\left({out}\right)^{{{exp}}}"


class LinfSamplingC(sp.Function):
    """``LinfSamplingC(d, ε) = C_d(ε)``: 1/C_d = binom(d-1,(d-1)/2)/2^{d-1} (d odd) or
    binom(d-1,d/2)/(2^{d-1} - binom(d,d/2) tanh(ε/2)/2) (d even); B = r coth(ε/2) C_d(ε)."""

    nargs = 2

    @staticmethod
    def _imp_(d, eps):
        if hasattr(d, "_mpf_") or hasattr(eps, "_mpf_"):  # the mpmath (high-precision) path
            return linf_C_mp(d, eps)
        return _float_out(linf_C_np(_float_in(d), _float_in(eps)))

    def _eval_evalf(self, prec):
        return _evalf_with(linf_C_mp, self.args, prec)

    def _latex(self, printer, exp=None):
        out = rf"C_{{{printer._print(self.args[0])}}}({printer._print(self.args[1])})"
        return out if exp is None else rf"{out}^{{{exp}}}"


S.HIGH_PRECISION.update({"L2SphereConst", "LinfSamplingC"})  # their mpmath implementations: working precision


def _float_in(x):
    try:
        return np.asarray(x, float)
    except TypeError:
        return float(x)


def _float_out(y):
    y = np.asarray(y, float)
    return float(y) if y.ndim == 0 else y


def l2_B(r, eps, d):
    """Sympy B of ℓ2 sampling."""
    return r * coth_half(eps) * L2SphereConst(d)


def linf_B(r, eps, d):
    """Sympy B of ℓ∞ sampling."""
    return r * coth_half(eps) * LinfSamplingC(d, eps)


k_sub = sp.Symbol("k_sub", positive=True, integer=True)  # coordinates released by coordinate subsampling


def subsampling_second_moment(r, eps, d, k=k_sub):
    """E‖Z‖² of coordinate subsampling with k coordinates: d² r² coth²(ε/(2k))/k."""
    return d ** 2 * r ** 2 * coth_half(eps / k) ** 2 / k


def second_moments(r, eps, d):
    """E||Z||² of each d-dimensional mechanism (sympy), keyed by mechanism name."""
    return {
        "l2-sampling": l2_B(r, eps, d) ** 2,
        "linf-sampling": d * linf_B(r, eps, d) ** 2,
        "coordinate-splitting": d ** 2 * r ** 2 * coth_half(eps) ** 2,
        "coordinate-composition": d * r ** 2 * coth_half(eps / d) ** 2,
    }


# --------------------------------------------------------------------------- samplers

def _pi(eps):
    return 1.0 / (1.0 + math.exp(-eps))  # e^ε/(e^ε+1)


def l2_sampling(v, r, eps, rng: np.random.Generator):
    """ℓ2 sampling of the rows of v (shape (m, d), ||v_i||₂ <= r). Returns Z (m, d)."""
    v = np.atleast_2d(np.asarray(v, float))
    m, d = v.shape
    norms = np.linalg.norm(v, axis=1)
    # direction of v (arbitrary unit vector when v = 0; then P(+) = 1/2 and E Ṽ = 0)
    u = np.where(norms[:, None] > 0, v / np.where(norms > 0, norms, 1.0)[:, None], 0.0)
    u[norms == 0, 0] = 1.0
    sign = np.where(rng.random(m) < 0.5 + norms / (2 * r), 1.0, -1.0)
    vt = sign[:, None] * u  # Ṽ / r
    g = rng.standard_normal((m, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    side = np.einsum("ij,ij->i", g, vt)
    want_pos = rng.random(m) < _pi(eps)
    flip = (side > 0) != want_pos  # reflect to the wanted half (uniform on each half by symmetry)
    g[flip] *= -1.0
    B = r * float(coth_half_np(eps)) * float(l2_gamma_ratio_np(d))
    return B * g


def _linf_pi(d: int, eps: float) -> float:
    """π' = K e^ε/(K(e^ε+1) + N_0): probability of the strict near half."""
    if d % 2 == 1:
        return _pi(eps)
    x = math.exp(math.lgamma(d + 1) - 2 * math.lgamma(d / 2 + 1) - d * math.log(2))  # N_0/2^d
    return 1.0 / (1.0 + (1.0 + 2.0 * x / (1.0 - x)) * math.exp(-eps))


def linf_sampling(v, r, eps, rng: np.random.Generator):
    """ℓ∞ sampling of the rows of v (shape (m, d), ||v_i||_∞ <= r). Returns Z (m, d).

    With probability π' w is uniform on the strict half {⟨w,s⟩ > 0} (s = sign Ṽ), otherwise uniform on
    the closed half {⟨w,s⟩ <= 0}. Both by reflection of a uniform w ∈ {±1}^d: to the strict half,
    flip w when ⟨w,s⟩ < 0 and redraw when ⟨w,s⟩ = 0; to the closed half, flip when ⟨w,s⟩ > 0, after
    which strict points have probability 2/2^d and boundary points 1/2^d, so strict points are kept
    with probability 1/2 (d even; rejected rows are redrawn).
    """
    v = np.atleast_2d(np.asarray(v, float))
    m, d = v.shape
    s = np.where(rng.random((m, d)) < 0.5 + v / (2 * r), 1.0, -1.0)  # sign of Ṽ
    want_pos = rng.random(m) < _linf_pi(d, eps)
    w = np.empty((m, d))
    todo = np.arange(m)
    while todo.size:
        ww = np.where(rng.random((todo.size, d)) < 0.5, 1.0, -1.0)
        t = np.einsum("ij,ij->i", ww, s[todo])
        wp = want_pos[todo]
        wrong = np.where(wp, t < 0, t > 0)
        ww[wrong] *= -1.0
        if d % 2 == 1:
            accept = np.ones(todo.size, bool)
        else:
            accept = np.where(wp, t != 0, (t == 0) | (rng.random(todo.size) < 0.5))
        w[todo[accept]] = ww[accept]
        todo = todo[~accept]
    B = r * float(coth_half_np(eps)) * float(linf_C_np(d, eps))
    return B * w


def linf_sampling_law(vt_sign, eps, variant="private"):
    """Exact law of w = Z/B given sign(Ṽ) (a ±1 vector): (points, probabilities). For tests.
    ``variant="both-halves"`` is the 'boundary in both halves' law (not ε-LDP for even d)."""
    import itertools

    d = len(vt_sign)
    pts = np.array(list(itertools.product([-1.0, 1.0], repeat=d)))
    t = pts @ np.asarray(vt_sign, float)
    if variant == "both-halves":
        pos, neg = t >= 0, t <= 0
        pi = _pi(eps)
        return pts, pi * pos / pos.sum() + (1 - pi) * neg / neg.sum()
    g = np.where(t > 0, math.exp(eps), 1.0)
    return pts, g / g.sum()


def coordinate_splitting(v, r, eps, rng: np.random.Generator):
    """Z = d·Y·e_J, J uniform, Y the one-bit release of v_J at level ε (rows of v in [-r,r]^d)."""
    v = np.atleast_2d(np.asarray(v, float))
    m, d = v.shape
    J = rng.integers(0, d, size=m)
    vj = v[np.arange(m), J]
    y = onebit(vj, r, eps, rng)
    Z = np.zeros((m, d))
    Z[np.arange(m), J] = d * y
    return Z


def coordinate_composition(v, r, eps, rng: np.random.Generator):
    """Every coordinate released by the one-bit mechanism at level ε/d."""
    v = np.atleast_2d(np.asarray(v, float))
    m, d = v.shape
    return onebit(v, r, eps / d, rng)


def coordinate_subsampling(v, r, eps, rng: np.random.Generator, k: int = 1):
    """Z = (d/k) Σ_{j∈S} Y_j e_j, S a uniform k-subset, Y_j one-bit views of v_j at level ε/k."""
    v = np.atleast_2d(np.asarray(v, float))
    m, d = v.shape
    k = int(k)
    from .discrete import smallest_members

    inS = smallest_members(rng.random((m, d)), k)  # the k smallest of d i.i.d. keys: a uniform k-subset
    y = onebit(v, r, eps / k, rng)
    return np.where(inS, (d / k) * y, 0.0)


def truncate_ones(X: np.ndarray, K: int, rng: np.random.Generator) -> np.ndarray:
    """Keep at most K ones in each row of a 0/1 matrix (the dropped ones chosen uniformly at random)."""
    X = np.asarray(X, bool).copy()
    over = np.flatnonzero(X.sum(axis=1) > K)
    if over.size:
        sub = X[over]
        from .discrete import smallest_members

        keys = np.where(sub, rng.random(sub.shape), np.inf)
        X[over] = sub & smallest_members(keys, K)  # the K ones with the smallest keys
    return X


def sparse_vector_rr_counts(X: np.ndarray, K: int, eps: float, rng: np.random.Generator) -> np.ndarray:
    """Truncated-support randomized response on 0/1 vectors (rows of X): keep at most K ones, then flip each
    bit independently, keeping it with probability q = e^{ε'}/(1+e^{ε'}), ε' = ε/(2K). Two truncated vectors
    differ in at most 2K bits, so the likelihood ratio is at most e^{2Kε'} = e^ε. Returns the column sums
    of the released bits (the sufficient statistic of the unbiased estimator (T/n - (1-q))/(2q-1))."""
    Xt = truncate_ones(X, K, rng)
    c = Xt.sum(axis=0)
    m = Xt.shape[0]
    q = 1.0 / (1.0 + math.exp(-eps / (2 * K)))
    return rng.binomial(c, q) + rng.binomial(m - c, 1 - q)


def sparse_vector_rr_counts_from_theta(theta, n: int, K: int, eps: float, rng: np.random.Generator) -> np.ndarray:
    """Same released column sums as :func:`sparse_vector_rr_counts` for n users with independent
    X_ij ~ Bern(θ_j), simulated exactly in O(n Σθ) work: the ones of column j are a uniformly random
    Bin(n, θ_j)-subset of the users; users with more than K ones keep a uniformly random K of them."""
    theta = np.asarray(theta, float)
    d = theta.size
    counts = rng.binomial(n, theta)
    rows = np.concatenate([rng.choice(n, int(c), replace=False) for c in counts]) if counts.sum() else \
        np.zeros(0, np.int64)
    cols = np.repeat(np.arange(d), counts)
    per_user = np.bincount(rows, minlength=n)
    over = per_user[rows] > K
    keep = np.ones(rows.size, bool)
    if over.any():
        idx = np.flatnonzero(over)
        order = idx[np.lexsort((rng.random(idx.size), rows[idx]))]  # by user, random order within a user
        r_sorted = rows[order]
        start = np.searchsorted(r_sorted, r_sorted, side="left")
        rank = np.arange(order.size) - start
        keep[order[rank >= K]] = False
    c = np.bincount(cols[keep], minlength=d)
    q = 1.0 / (1.0 + math.exp(-eps / (2 * K)))
    return rng.binomial(c, q) + rng.binomial(n - c, 1 - q)


SAMPLERS = {"l2-sampling": l2_sampling, "linf-sampling": linf_sampling,
            "coordinate-splitting": coordinate_splitting, "coordinate-composition": coordinate_composition,
            "coordinate-subsampling": coordinate_subsampling}
