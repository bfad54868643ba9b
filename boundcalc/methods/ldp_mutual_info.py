"""Mutual-information Bayes bound on the vertices of a hypercube under ε-LDP
(docs/methods/ldp-mutual-info.md). Valid for sequentially interactive channels.

**Lemma A (information of one private release).** For any ε-LDP channel q(z|x) and any law π of X,
``I(X; Z) <= κ_ε = y - 1 - log y``, ``y = ε/(1 - e^{-ε})``; κ_ε <= min{ε, ε²/8}.
Proof: for each output z the likelihood ratio ``r_z(x) = q(z|x)/Σ_x' π(x')q(z|x')`` lies in
``[a, a e^ε]`` (ε-LDP) and has E_π r_z = 1, and ``KL(P_{X|z} ‖ π) = E_π[r_z log r_z]``. The map
``t ↦ t log t`` is convex, so over laws on ``[a, ae^ε]`` with mean 1 the expectation is largest on the two
endpoints: ``log a + ε e^ε (1 - a)/(e^ε - 1)``, maximised at ``a = (e^ε - 1)/(ε e^ε)``, where it equals
κ_ε. Average over z. ∎ (Tested on random finite channels and priors; K-ary randomized response with a
uniform prior attains it up to the rounding of K* = a(e^ε-1)/(1-a); binary randomized response only as ε → 0.)

**Lemma B (posterior means on the cube).** For any law P on {±1}^d with mean vector μ,
``KL(P ‖ uniform) >= Σ_j ψ(μ_j) >= d ψ̃(‖μ‖²/d)``, ``ψ(t) = ((1+t) log(1+t) + (1-t) log(1-t))/2`` and
``ψ̃(s) = ψ(√s) = Σ_{k>=1} s^k/(2k(2k-1))`` (convex, increasing, ψ̃(1) = log 2). Proof: subadditivity of
entropy gives KL(P‖U) >= Σ_j KL(P_j‖U_j) = Σ_j ψ(μ_j), then Jensen for the convex ψ̃. ∎

**Lemma C (one release, erased family, no genie).** With the past fixed and π the posterior of V, the
release has law ``M_v = (1-p) q_0 + p q_v`` given V = v (q_x = q(·|x, past)). For an output z put
``t_v = q_v(z)/q̄(z)`` (q̄ = E_π q_V; E_π t = 1) and ``β = q_0(z)/q̄(z)``; then
``M_v(z)/M̄(z) = 1 + λ(t_v - 1)``, ``λ = p/((1-p)β + p)``. ε-LDP gives t ∈ [a, a e^ε] for some a and
``β >= e^{-ε} max_v t_v = a`` if the range is attained (in general a := e^{-ε} max t works), so λ <= p/((1-p)a + p).
``E_π φ(1 + λ(t-1))`` (φ(x) = x log x) is convex in the law of t and increasing in λ, so it is at most
``g(p, ε) = sup_{a ∈ [e^{-ε}, 1]} G(a)``, G the value at the two-point law on {a, ae^ε} with the largest λ.
Averaging over z (weights M̄(z)): ``I(V; Z_i | past) <= g(p, ε)``. g(1, ε) = κ_ε; for small ε, g ≈ p²ε²/8
(the right d/(nε²) rate). Computed by a grid and a bounded scalar search, enlarged by 1e-9 relatively, at p rounded up to the grid
exp(j/1000) (g is increasing in p because λ is).
Also ``I(V; Z_i | past) <= E_v χ²(M_v ‖ M̄) <= c_ε p²`` (χ²–TV contraction, TV <= p).

**Lemma C' (sharper: q_0 sums to one).** Weight outputs by q̄(z) instead: with s = (1-p)β + p t and
m = (1-p)β + p, ``I(V; Z_i | past) = Σ_z q̄(z) F(β_z, law of t_z)``, ``F = E[s log(s/m)] =
E[m φ̃((s-m)/m)]``, φ̃(x) = (1+x)log(1+x) - x. Besides Σ q̄ = 1 also ``Σ_z q̄(z) β_z = Σ_z q_0(z) = 1``.
Per z, β and all t_v lie in one [a, a e^ε] with a <= 1 <= a e^ε; F is linear in the law of t with a convex
integrand, so it is largest at the two-point law on {a, a e^ε}: call it F(β, a) and H(β) = sup over
admissible a (max(e^{-ε}, βe^{-ε}) <= a <= min(1, β)). Then I <= E H(β) for a law of β with mean 1, i.e.
``I <= g*(p, ε)`` = the concave envelope of H at 1 = sup over β1 <= 1 <= β2 of
((β2-1)H(β1) + (1-β1)H(β2))/(β2-β1) (Carathéodory). Certified evaluation in
erased_info_sharp_certified (F decreases in β; monotone bounds on a-cells; θ at cell corners). g* is
nondecreasing in p (re-erasing with probability 1 - p'/p maps configurations for p' to ones for p), so
it is cached at p rounded up. About 27% below p κ_ε at ε = 3, p = 0.4.

**Theorem (erased-vertex family).** Let V be uniform on {±1}^d and, independently for each user i,
``X_i = c V`` with probability p and ``X_i = 0`` otherwise (B_i the indicator), so θ = E[X|V] = c p V. For
any sequentially interactive ε-LDP protocol:
``I(V; Z_{1:n}) = Σ_i I(V; Z_i | Z_{1:i-1}) <= Σ_i I(V; Z_i, B_i | Z_{1:i-1}) = Σ_i p I(V; Z_i | B_i = 1, Z_{1:i-1})
<= n p κ_ε`` (B_i is independent of V and of the past; when B_i = 0, Z_i does not depend on V; when
B_i = 1, X_i = cV and Lemma A applies to the conditional channel), and also ``<= d log 2``. The Bayes risk
under the uniform prior is at least ``Σ_j E Var(θ_j | Z) = c² p² (d - E‖E[V|Z]‖²)``, and by Lemma B
and Jensen ``E‖E[V|Z]‖² <= d Ψ(I/d)``, ``Ψ = ψ̃^{-1}`` (Ψ = 1 beyond log 2). Hence

    sup_θ E‖θ̂ - θ‖² >= c² p² d (1 - Ψ(min{n p κ_ε, n g(p,ε), n g*(p,ε), n c_ε p², d log 2 (1 - (1-p)^n)}/d)),

the last term of the min being the non-private information (V is revealed exactly once some
B_i = 1). At small n it tends to the no-data risk c² p² d; for large n its best p makes it of order
d/(n κ_ε) squared, so it only matters in the saturated and transition regimes (van Trees covers the rest).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..cache.diskcache import persistent


def kappa(eps):
    """sympy κ_ε = y - 1 - log y, y = ε/(1-e^{-ε}); for ε < 10^-2 its upper bound ε²/8 (avoids cancellation)."""
    y1 = (eps + S.expm1(-eps)) / (-S.expm1(-eps))  # y - 1
    return sp.Piecewise((eps ** 2 / 8, eps < sp.Rational(1, 100)), (y1 - S.log1p(y1), True))


def kappa_float(eps: float) -> float:
    if eps < 1e-2:
        return eps * eps / 8
    y1 = (eps + math.expm1(-eps)) / (-math.expm1(-eps))
    return y1 - math.log1p(y1)


def psi(t):
    """ψ(t) = KL(Bern((1+t)/2) ‖ Bern(1/2)) (numpy), as (φ̃(t) + φ̃(-t))/2 with φ̃(x) = (1+x) log(1+x) - x
    (:func:`_phi_tilde`, its series for small |x|): the same number as ((1+t) log(1+t) + (1-t) log(1-t))/2, whose
    two terms of size t cancel to t²/2 (a relative error 1e-16/t); log 2 at t = 1."""
    t = np.abs(np.asarray(t, float))
    inside = t < 1
    ti = np.where(inside, t, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 0.5 * (_phi_tilde(ti) + _phi_tilde(-ti))
    return np.where(inside, out, np.where(t == 1, math.log(2), np.nan))


def psi_tilde_inverse_np(y):
    """Ψ(y) = (ψ^{-1}(y))² for y in [0, log 2], 1 beyond (numpy): bisection in [0, √(2y)] (ψ(t) >= t²/2, so the
    root is below √(2y)) to 2^-64 of its start, the upper end squared and rounded up by 1e-14 relatively and
    one unit in the last place: the float64 ψ (:func:`psi`, stable forms) is within a few units in the last
    place of the exact one, so the computed root is within a few units of the exact root, and Ψ is never below
    the exact value (it enters the lower bound as 1 - Ψ)."""
    y = np.asarray(y, float)
    with np.errstate(invalid="ignore"):
        hi = np.minimum(1.0, np.sqrt(2 * np.maximum(y, 0.0)) * (1 + 1e-15))
    lo = np.zeros_like(y)
    for _ in range(64):
        mid = (lo + hi) / 2
        below = psi(mid) < y
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    out = np.where(y >= math.log(2), 1.0, np.minimum(1.0, np.nextafter(hi * hi * (1 + 1e-14), np.inf)))
    return np.where(np.isnan(y), np.nan, np.where(y <= 0, 0.0, out))


def _psi_mp(t):
    """ψ(t) in mpmath at the working precision ((φ̃(t) + φ̃(-t))/2, :func:`_phi_tilde_mp`)."""
    import mpmath

    if t >= 1:
        return mpmath.log(2)
    return (_phi_tilde_mp(t) + _phi_tilde_mp(-t)) / 2


def _psi_tilde_inverse_mp(y):
    """Ψ(y) in mpmath at the working precision: bisection in [0, √(2y)] to 2^-(precision + 8) of its start."""
    import mpmath

    y = mpmath.mpf(y)
    if mpmath.isnan(y):
        return y
    if y <= 0:
        return mpmath.mpf(0)
    if y >= mpmath.log(2):
        return mpmath.mpf(1)
    lo, hi = mpmath.mpf(0), min(mpmath.mpf(1), mpmath.sqrt(2 * y))
    for _ in range(mpmath.mp.prec + 8):
        mid = (lo + hi) / 2
        if _psi_mp(mid) < y:
            lo = mid
        else:
            hi = mid
    return hi ** 2


class PsiTildeInverse(sp.Function):
    """``PsiTildeInverse(y) = Ψ(y)``: the largest s in [0, 1] with ψ(√s) <= y (1 for y >= log 2)."""

    nargs = 1

    def _latex(self, printer, exp=None):
        base = rf"\Psi\left({printer._print(self.args[0])}\right)"
        return base if exp is None else rf"{base}^{{{printer._print(exp)}}}"


S.NUMPY_IMPL["PsiTildeInverse"] = psi_tilde_inverse_np
S.MPMATH_IMPL["PsiTildeInverse"] = _psi_tilde_inverse_mp
S.HIGH_PRECISION.add("PsiTildeInverse")  # genuine bisection at the working precision


def _a_e_eps_minus_1(a, em1):
    """a e^ε - 1 for a in [e^{-ε}, 1] (float or numpy), as a (e^ε - 1) - (1 - a): both terms are of the size of ε
    and exact to a few units in the last place (1 - a is exact for a in [1/2, 1], Sterbenz), where the form
    a (em1 + 1) - 1 first rounds e^ε to a float64 and so loses the error 1e-16 against a result of size ε (at
    ε = 2e-8 the information g(1, ε) came out 1.1e-8 relatively below κ_ε, on the unsafe side)."""
    return a * em1 - (1 - a)


def _G(a, eps, p):
    """E φ(1 + λ(t-1)) for the two-point t on {a, a e^ε} with mean 1, λ = p/((1-p)a + p), φ(x) = x log x
    (numpy-vectorised in a)."""
    a = np.asarray(a, float)
    em1 = math.expm1(eps)
    w = (1 - a) / (a * em1)  # P(t = a e^ε)
    lam = p / ((1 - p) * a + p)
    x1, x0 = lam * _a_e_eps_minus_1(a, em1), lam * (a - 1)
    # E x = λ(E t - 1) = 0, so E φ(1 + x) = E φ̃(x) with φ̃(x) = (1+x) log(1+x) - x >= 0: a sum of non-negative
    # terms. (Summing (1+x) log(1+x) directly cancels the linear terms: at ε = 1e-8 float64 gave a negative
    # information, which made the erased-vertex bound equal to the no-data risk.)
    return w * _phi_tilde(x1) + (1 - w) * _phi_tilde(x0)


def _G_scalar(a: float, eps: float, p: float) -> float:
    """:func:`_G` at one float a, in Python floats: the same operations in the same order, so the same value up to
    the last unit (numpy's log1p and ``math.log1p`` can differ by one unit in the last place), without numpy's
    per-call cost (the bounded scalar search calls it about 40 times per value of g)."""
    em1 = math.expm1(eps)
    w = (1 - a) / (a * em1)
    lam = p / ((1 - p) * a + p)
    x1, x0 = lam * _a_e_eps_minus_1(a, em1), lam * (a - 1)
    return w * _phi_tilde_scalar(x1) + (1 - w) * _phi_tilde_scalar(x0)


def _p_grid_up(p: float) -> float:
    """p rounded up to the grid exp(j/1000): g is increasing in p (λ is), so g at the rounded p is still an
    upper bound, and the cache is shared by nearby p. The grid point is never below p: j is the ceiling of
    1000 log p less 1e-9 (so a p that is a grid point up to the rounding of the logarithm keeps its j), and
    then raised while the float64 exp(j/1000) is below p (the 1e-9 slack, or the rounding of log and exp,
    could otherwise give a grid point up to 1e-12 relatively below p)."""
    j = math.ceil(math.log(p) * 1000 - 1e-9)
    q = math.exp(j / 1000)
    while q < p:
        j += 1
        q = math.exp(j / 1000)
    return min(1.0, q)


def erased_info_value(p: float, eps: float) -> float:
    """g(p, ε) = sup_a G(a): bound on the information of one release about V in the erased family
    (Lemma C), evaluated at p rounded up (see _p_grid_up). +inf for ε > 30 (p κ_ε is used there)."""
    if not (0 < p <= 1) or not (eps > 0):
        return math.nan
    if eps > 30:
        return math.inf
    return _erased_info_exact(_p_grid_up(p), float(eps))


@persistent  # a certified numeric table: memoised in memory and on disk (boundcalc.cache.diskcache)
def _erased_info_exact(p: float, eps: float) -> float:
    from scipy import optimize

    lo = math.exp(-eps)
    grid = np.linspace(lo, 1.0, 257)[:-1]
    vals = _G(grid, eps, p)
    i = int(np.argmax(vals))
    a0, a1 = grid[max(i - 1, 0)], (grid[i + 1] if i + 1 < len(grid) else 1.0)
    res = optimize.minimize_scalar(lambda a: -_G_scalar(a, eps, p), bounds=(a0, a1), method="bounded",
                                   options={"xatol": 1e-13})
    best = max(float(vals.max()), -res.fun)
    return best * (1 + 1e-9) + 1e-300


def _phi_tilde_mp(x):
    """φ̃(x) = (1+x) log(1+x) - x in mpmath at the working precision: for small |x| the two terms cancel to
    x²/2, so they are computed with as many extra digits as the cancellation costs."""
    import mpmath

    if x == 0:
        return mpmath.mpf(0)
    extra = max(0, int(-mpmath.log(abs(x), 2))) * 2 + 10 if abs(x) < 1 else 10
    with mpmath.extraprec(extra):
        out = (1 + x) * mpmath.log1p(x) - x
    return +out


def _G_mp(a, eps, p):
    """:func:`_G` in mpmath at the working precision (the same formula; a e^ε - 1 as a(e^ε - 1) - (1 - a))."""
    import mpmath

    em1 = mpmath.expm1(eps)
    w = (1 - a) / (a * em1)
    lam = p / ((1 - p) * a + p)
    return w * _phi_tilde_mp(lam * (a * em1 - (1 - a))) + (1 - w) * _phi_tilde_mp(lam * (a - 1))


def golden_max_mp(f, lo, hi, rel_tol):
    """The largest value of ``f`` found by golden-section search on [lo, hi] (mpmath numbers), stopped when the
    bracket is below ``rel_tol`` times its start (the value of a smooth maximum is then exact to about
    rel_tol², which is below the working precision for rel_tol = 10^-(digits/2 + 3))."""
    import mpmath

    g = (mpmath.sqrt(5) - 1) / 2
    width0 = hi - lo
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = f(x1), f(x2)
    best = max(f(lo), f(hi), f1, f2)
    while hi - lo > rel_tol * width0:
        if f1 < f2:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = f(x2)
        else:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = f(x1)
        best = max(best, f1, f2)
    return best


@functools.lru_cache(maxsize=256)
def _erased_info_mp_cached(p: float, eps: float, prec: int):
    import mpmath

    with mpmath.workprec(prec):
        lo = math.exp(-eps)
        grid = np.linspace(lo, 1.0, 257)[:-1]  # the float64 grid locates the cell of the maximum (as in the
        i = int(np.argmax(_G(grid, eps, p)))  # float64 search); the maximum is then found in mpmath
        a0, a1 = float(grid[max(i - 1, 0)]), float(grid[i + 1] if i + 1 < len(grid) else 1.0)
        pm, em = mpmath.mpf(p), mpmath.mpf(eps)
        a0m = max(mpmath.mpf(a0), mpmath.exp(-em))
        tol = mpmath.mpf(10) ** (-(mpmath.mp.dps // 2 + 3))
        return golden_max_mp(lambda a: _G_mp(a, em, pm), a0m, mpmath.mpf(a1), tol)


def _erased_info_mp(p, eps):
    """g(p, ε) in mpmath at the working precision: the same p rounded up to the grid (:func:`_p_grid_up`), the
    same grid cell of the maximum (from the float64 grid), the maximum of :func:`_G_mp` there by golden-section
    search to the working precision (no 1e-9 margin: the search error is below the working precision)."""
    import mpmath

    p, eps = float(p), float(eps)
    if not (0 < p <= 1) or not (eps > 0):
        return mpmath.mpf("nan")
    if eps > 30:
        return mpmath.inf
    return +_erased_info_mp_cached(_p_grid_up(p), eps, mpmath.mp.prec)


class ErasedInfo(S.ScalarFunction):
    """``ErasedInfo(p, ε) = g(p, ε)``: Lemma C's bound on I(V; Z_i | past) for the erased-vertex family.

    float64: :func:`erased_info_value` (grid and bounded search, enlarged by 1e-9 relatively); high precision:
    :func:`_erased_info_mp` (the same maximum found in mpmath at the working precision)."""

    nargs = 2
    scalar_value = staticmethod(erased_info_value)


S.MPMATH_IMPL["ErasedInfo"] = _erased_info_mp
S.HIGH_PRECISION.add("ErasedInfo")


# ----------------------------------------------------------------------------- Lemma C' (sharper)

def _phi_tilde(x):
    """φ̃(x) = (1+x) log(1+x) - x >= 0 for x > -1 (numpy; the series Σ_{k>=2} (-x)^k/(k(k-1)) to k = 10
    for |x| < 10^-2, whose tail is below 10^-19 of the value)."""
    x = np.asarray(x, float)
    out = np.empty_like(x)
    small = np.abs(x) < 1e-2
    xb = x[~small]
    out[~small] = (1 + xb) * np.log1p(xb) - xb
    xs = x[small]
    out[small] = xs * xs * (0.5 + xs * (-1 / 6 + xs * (1 / 12 + xs * (-1 / 20 + xs * (1 / 30 + xs * (
        -1 / 42 + xs * (1 / 56 + xs * (-1 / 72 + xs / 90))))))))
    return out


def _phi_tilde_scalar(x: float) -> float:
    """:func:`_phi_tilde` of one float (the same branches and operations)."""
    if abs(x) < 1e-2:
        return x * x * (0.5 + x * (-1 / 6 + x * (1 / 12 + x * (-1 / 20 + x * (1 / 30 + x * (
            -1 / 42 + x * (1 / 56 + x * (-1 / 72 + x / 90))))))))
    return (1 + x) * math.log1p(x) - x


@functools.lru_cache(maxsize=64)
def _sharp_cells(eps: float, nb: int, na: int):
    """The cells of :func:`erased_info_sharp_certified` that do not depend on p (read-only arrays, kept per ε):
    β-cell ends, a-cell ends, the weights w(a) of :func:`_cell_upper` at them and θ's extreme values."""
    E = math.exp(eps)
    half = nb // 2
    edges = np.exp(np.concatenate([np.linspace(-eps, 0.0, half + 1), np.linspace(0.0, eps, half + 1)[1:]]))
    # the β cells cover [e^{-ε}, e^ε] and each cell's a-range covers the admissible a, whatever the rounding:
    # the outer ends are e^{∓ε} rounded outward, the a-range starts two units in the last place below the
    # float64 value of max(e^{-ε}, b e^{-ε}) (that value is within 1.5 units of the exact one). A cell bound holds
    # for every admissible a in [al, ah] whether or not al itself is admissible (see :func:`_cell_upper`).
    edges[0], edges[half], edges[-1] = np.nextafter(math.exp(-eps), 0.0), 1.0, np.nextafter(E, math.inf)
    blo, bhi = edges[:-1], edges[1:]
    alo = np.nextafter(np.nextafter(np.maximum(math.exp(-eps), blo / E), 0.0), 0.0)
    ahi = np.minimum(1.0, bhi)
    u = np.linspace(0.0, 1.0, na + 1)
    la, lh = np.log(alo)[:, None], np.log(ahi)[:, None]
    ag = np.exp(la + (lh - la) * u[None, :])
    ag[:, 0], ag[:, -1] = alo, ahi
    al, ah = ag[:, :-1], ag[:, 1:]
    em1 = math.expm1(eps)
    w_al = (1 - al) / (al * em1)
    w_ah = (1 - ah) / (ah * em1)
    thmax = (1 - blo[:half, None]) / (blo[None, half:] - blo[:half, None])
    thmin = (1 - bhi[:half, None]) / (bhi[None, half:] - bhi[:half, None])
    out = (blo, bhi, np.ascontiguousarray(al), np.ascontiguousarray(ah), w_al, w_ah, thmax, thmin)
    for a in out:
        a.flags.writeable = False
    return out


def _cell_upper(p, eps, blo, al, ah, w_al=None, w_ah=None):
    """Upper bound of F(β, a) over β >= blo and a ∈ [al, ah] (arrays broadcast): with m = (1-p)blo + p,
    w(a) = (1-a)/(a(e^ε-1)) (decreasing), F <= w(al) m φ̃(p(ah e^ε - 1)/m) + (1 - w(ah)) m φ̃(p(al - 1)/m).
    ``w_al``, ``w_ah``: w at al and ah when already computed."""
    em1 = math.expm1(eps)
    m = (1 - p) * blo + p
    if w_al is None:
        w_al = (1 - al) / (al * em1)
    if w_ah is None:
        w_ah = (1 - ah) / (ah * em1)
    return (w_al * m * _phi_tilde(p * _a_e_eps_minus_1(ah, em1) / m)
            + (1 - w_ah) * m * _phi_tilde(p * (al - 1) / m))


def erased_info_sharp_certified(p: float, eps: float, nb: int = 200, na: int = 100, top: int = 4,
                                sub: int = 16) -> float:
    """Certified upper bound on g*(p, ε) = sup over w-laws of β with E β = 1 of E H(β) (Lemma C'), H(β) =
    sup_a F(β, a). β ∈ [e^{-ε}, e^ε] is cut into nb log-spaced cells (split at 1); on the cell [b, b'],
    H <= U := sup over a ∈ [max(e^{-ε}, b e^{-ε}), min(1, b')] of F(b, a) (F decreases in β), itself bounded
    on na log-spaced a-cells by _cell_upper; the ``top`` largest a-cells of every β-cell are cut again
    into ``sub`` pieces. The envelope at 1: a law of β with mean 1 may be taken on two points β1 <= 1 <= β2
    (Carathéodory), with value (1-θ)H(β1) + θH(β2), θ = (1-β1)/(β2-β1) decreasing in β1 and β2; over a pair
    of cells it is at most U_j + θ (U_k - U_j) with θ at its largest (U_k > U_j) or smallest end."""
    half = nb // 2
    blo, bhi, al, ah, w_al, w_ah, thmax, thmin = _sharp_cells(eps, nb, na)
    Ua = _cell_upper(p, eps, blo[:, None], al, ah, w_al, w_ah)
    order = np.argsort(Ua, axis=1)
    rows = np.arange(nb)[:, None]
    rest = Ua[rows, order[:, :-top]].max(axis=1)  # cells not refined
    ti = order[:, -top:]
    l0, l1 = np.log(al[rows, ti]), np.log(ah[rows, ti])
    v = np.linspace(0.0, 1.0, sub + 1)
    fine = np.exp(l0[..., None] + (l1 - l0)[..., None] * v)
    fine[..., 0], fine[..., -1] = al[rows, ti], ah[rows, ti]
    Uf = _cell_upper(p, eps, blo[:, None, None], fine[..., :-1], fine[..., 1:]).max(axis=(1, 2))
    U = np.maximum(np.maximum(rest, Uf), 0.0)
    Ul, Ur = U[:half], U[half:]
    diff = Ur[None, :] - Ul[:, None]
    return float(np.max(Ul[:, None] + np.where(diff > 0, thmax, thmin) * diff))


def erased_info_sharp_value(p: float, eps: float) -> float:
    """g*(p, ε) of Lemma C', certified (erased_info_sharp_certified), enlarged by 10^-9 relatively, at p
    rounded up to the grid exp(j/1000) (g* is nondecreasing in p). +inf for ε > 30.

    Floating point: this is a float64 computation on the high-precision path too (an mpmath version of the
    40,000 cell bounds would take seconds per evaluation), so its value carries its own error bracket. The
    cells are rounded outward (:func:`_sharp_cells`: every admissible (β, a) is in some cell whatever the
    rounding), and every cell bound is a sum of products of non-negative factors computed in stable forms
    (a e^ε - 1 as a(e^ε - 1) - (1 - a), φ̃ by its series for small arguments, 1 - a exact for a >= 1/2):
    each is within a few tens of units in the last place (~1e-14 relatively) of its exact value, and the
    envelope (1-θ)U_j + θU_k, a convex combination of them, as well. The enlargement by 1e-9 exceeds that by
    five orders of magnitude. tests/test_float64_parts.py compares the float64 cell computation with an
    80-digit one written separately, from ε = 1e-9 to 30."""
    if not (0 < p <= 1) or not (eps > 0):
        return math.nan
    if eps > 30:
        return math.inf
    return _erased_info_sharp_exact(_p_grid_up(p), float(eps))


@persistent  # a certified numeric table: memoised in memory and on disk (boundcalc.cache.diskcache)
def _erased_info_sharp_exact(p: float, eps: float) -> float:
    return erased_info_sharp_certified(p, eps) * (1 + 1e-9) + 1e-300




class ErasedInfoSharp(S.ScalarFunction):
    """``ErasedInfoSharp(p, ε) = g*(p, ε)``: Lemma C''s bound on I(V; Z_i | past) (uses Σ_z q̄ β = 1). Evaluated
    in float64 on both paths, with the error bracket of :func:`erased_info_sharp_value`."""

    nargs = 2
    scalar_value = staticmethod(erased_info_sharp_value)


def erased_vertex_bound(c2, p, n, eps, d):
    """sympy: c² p² d (1 - Ψ(I/d)) with I = min{n p κ_ε, n g(p,ε), n g*(p,ε), n c_ε p², d log 2 (1-(1-p)^n)}
    (the Theorem above; ``c2`` = c²; c_ε = 2(e^ε-1)²/(e^ε+1) of the χ²–TV contraction)."""
    from .chi2_contraction import chi2_factor

    info = S.Min(n * p * kappa(eps), n * ErasedInfo(p, eps), n * ErasedInfoSharp(p, eps),
                  n * chi2_factor(eps) * p ** 2,
                  d * sp.log(2) * (-S.expm1(n * S.log1p(-p))))
    return c2 * p ** 2 * d * (1 - PsiTildeInverse(info / d))
