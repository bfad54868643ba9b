"""Clipped sufficient statistic + Laplace noise + inversion, for a one-parameter model (ours, derived).

Docs: ``docs/methods/clipped-statistic.md``. Used by the ``point`` problem (local minimax risk over a
public neighbourhood N = [θ_lo, θ_hi]).

**Mechanism.** A public statistic T(x) (exponential, poisson, normal-mean: T = x; normal-var:
T = (x - μ0)²) and a public clipping interval [l, u] (l < u; l >= 0 where T >= 0). Release

    Y = (1/n) Σ_i ψ(X_i) + W,   ψ = clip(T, l, u),   W ~ Laplace(R/(nε)),   R = u - l,

and estimate θ̂ = the point of N where m(θ) = E_θ ψ(X) equals Y (m is strictly monotone on N: see
below), projected onto N (θ̂ = θ_lo or θ_hi when Y lies beyond m(N)). Replacing one X_i changes the
average by at most R/n, so Y is ε-DP (Laplace mechanism); θ̂ is post-processing.

**Certified risk.** Let s_N = inf_{θ∈N} |m'(θ)| > 0. If Y ∈ m(N), the mean value theorem gives
|θ̂ - θ| = |m^{-1}(Y) - m^{-1}(m(θ))| <= |Y - m(θ)|/s_N; if Y lies beyond m(θ_hi) (m increasing), then
|θ̂ - θ| = θ_hi - θ <= (m(θ_hi) - m(θ))/s_N <= |Y - m(θ)|/s_N (similarly at the other end and for a
decreasing m). Hence for every θ ∈ N

    E_θ(θ̂ - θ)² <= E_θ(Y - m(θ))²/s_N² = (Var_θ ψ/n + 2R²/(nε)²)/s_N²,

and sup_N risk <= (V_N/n + 2R²/(nε)²)/s_N² with V_N >= sup_{θ∈N} Var_θ ψ.

**The slope m'.** With ψ = l + ∫_l^u 1{T > s} ds, m(θ) = l + ∫_l^u P_θ(T > s) ds:

* exponential (rate λ, T = X): m'(λ) = -∫_l^u s e^{-λs} ds; |m'| decreases in λ (s > 0), so s_N = |m'(θ_hi)|;
  |m'| = e^{-λl}(l/λ + 1/λ²) - e^{-λu}(u/λ + 1/λ²).
* normal-mean N(θ, σ²): m'(θ) = Φ((u-θ)/σ) - Φ((l-θ)/σ), the probability of a fixed interval under a
  log-concave location family: log-concave in θ, so its minimum over N is at an end point.
* normal-var (v, T = vZ²): m'(v) = ∫_l^u f_{χ²_1}(s/v) s/v² ds = P(χ²_3 ∈ [l/v, u/v]) (y f_{χ²_1}(y) =
  f_{χ²_3}(y)); in the variable log v this is the probability of a sliding window under the law of log χ²_3,
  whose density e^{3r/2 - e^r/2}/√(2π) is log-concave, so again log-concave: minimum at an end point.
* poisson (λ, T = X): m'(λ) = Σ_j w_j p(j; λ) with w_j = |[l, u] ∩ [j, j+1)| (d/dλ P(X > j) = p(j; λ)),
  and m''(λ) = Σ_j (w_{j+1} - w_j) p(j; λ) (with w_{-1} = 0); the sequence w_{j+1} - w_j changes sign at most
  once (+ to -), and the Poisson kernel p(j; λ) is totally positive, so m'' changes sign at most once
  (variation diminishing; Karlin, Total Positivity): m' is unimodal and its minimum over N is at an end point.
* bernoulli (T = X ∈ {0, 1}): ψ = l + (u - l)X is affine, m' = u - l.

**The variance.** V_N = the smaller of R²/4 (ψ takes values in an interval of length R: Popoviciu's
inequality) and the max over a grid θ_0 < ... < θ_G of N (spacing h) of the exact Var_θ ψ plus
3R²K h/2, where K >= sup_N (1/2)E_θ|∂_θ log p_θ| (the same constant as the threshold Bayes bound's
TV slope): for bounded g, |d/dθ E_θ g| = |E_θ[(g - c) S_θ]| <= sup|g - c| E_θ|S_θ|, so with g = (ψ - l)² ∈ [0, R²]
and ψ - l ∈ [0, R], |d/dθ Var_θ ψ| <= (R²/2)(2K) + 2R·(R/2)(2K) = 3R²K, and the function deviates from
its largest grid value by at most 3R²K h/2 between grid points.

Exact clipped moments E_θ ψ, E_θ ψ² (closed forms; ``clip_moments``): exponential
E ψ = l + (e^{-λl} - e^{-λu})/λ, E ψ² = l² + 2[e^{-λl}(l/λ + 1/λ²) - e^{-λu}(u/λ + 1/λ²)]; normal
(z = (s - θ)/σ) E ψ = l + σ[G(z)]_{z_l}^{z_u}, E ψ² = l² + 2θσ[G] + 2σ²[H], G(z) = zQ(z) - φ(z),
H(z) = ((z² - 1)Q(z) - zφ(z))/2 (G' = Q, H' = zQ); normal-var with the size-biased χ² identities
E[T; T < c] = v P(χ²_3 < c/v), E[T²; T < c] = 3v² P(χ²_5 < c/v); poisson E ψ = l + Σ_j w_j P(X > j),
E ψ² = l² + Σ_j (b_j² - a_j²) P(X > j) over the pieces [a_j, b_j] = [l, u] ∩ [j, j+1).
Checked against simulation and numerical quadrature in tests/test_point_clipped.py.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..core import symbolic as S


class _LazySpecial:
    """``scipy.special``, imported on first use (0.1 s that ``rate`` does not pay when its numbers are cached)."""

    def __getattr__(self, name):
        from scipy import special as module

        return getattr(module, name)


special = _LazySpecial()

MODELS = ("poisson", "exponential", "normal-mean", "normal-var", "bernoulli")
GRID = 48  # grid points for the variance supremum over N


def reference(model, theta_c, sigma=1.0):
    """(centre, scale) of T at θ_c: the clipping interval is l = centre + α·scale, u = l + β·scale."""
    if model == "exponential":
        return 1.0 / theta_c, 1.0 / theta_c
    if model == "poisson":
        return theta_c, math.sqrt(theta_c)
    if model == "normal-mean":
        return theta_c, sigma
    if model == "normal-var":
        return theta_c, math.sqrt(2.0) * theta_c
    if model == "bernoulli":
        return 0.0, 1.0
    raise KeyError(model)


def interval(model, theta_c, alpha, beta, sigma=1.0):
    """The clipping interval (l, u) for the free parameters α, β (arrays broadcast)."""
    c, s = reference(model, float(theta_c), sigma)
    alpha, beta = np.asarray(alpha, float), np.asarray(beta, float)
    if model == "bernoulli":
        return np.zeros_like(alpha + beta), np.ones_like(alpha + beta)
    l = c + alpha * s
    if model in ("exponential", "normal-var", "poisson"):
        l = np.maximum(l, 0.0)
    return l, l + beta * s


def _pois_pieces(l, u):
    """Integer j-grid and piece ends [a_j, b_j] = [l, u] ∩ [j, j+1) (arrays [..., J])."""
    jmax = int(np.ceil(np.max(u))) + 1
    j = np.arange(jmax + 1, dtype=float)
    a = np.clip(j, l[..., None], u[..., None])
    b = np.clip(j + 1.0, l[..., None], u[..., None])
    return j, a, b


def clip_moments(model, theta, l, u, sigma=1.0):
    """Exact (E_θ ψ, E_θ ψ²) for ψ = clip(T, l, u) (arrays broadcast over θ, l, u)."""
    th, l, u = np.broadcast_arrays(np.asarray(theta, float), np.asarray(l, float), np.asarray(u, float))
    with np.errstate(all="ignore"):
        if model == "exponential":
            el, eu = np.exp(-th * l), np.exp(-th * u)
            m1 = l + (el - eu) / th
            m2 = l * l + 2 * (el * (l / th + 1 / th ** 2) - eu * (u / th + 1 / th ** 2))
            return m1, m2
        if model == "normal-mean":
            zl, zu = (l - th) / sigma, (u - th) / sigma

            def G(z):
                return z * special.ndtr(-z) - np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)

            def H(z):
                return 0.5 * ((z * z - 1) * special.ndtr(-z) - z * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi))

            g = G(zu) - G(zl)
            m1 = l + sigma * g
            m2 = l * l + 2 * th * sigma * g + 2 * sigma ** 2 * (H(zu) - H(zl))
            return m1, m2
        if model == "normal-var":
            v = th

            def P(df, c):  # P(χ²_df < c)
                return special.gammainc(df / 2.0, np.maximum(c, 0.0) / 2.0)

            pl, pu = P(1, l / v), P(1, u / v)
            e1 = v * (P(3, u / v) - P(3, l / v))
            e2 = 3 * v * v * (P(5, u / v) - P(5, l / v))
            m1 = l * pl + e1 + u * (1 - pu)
            m2 = l * l * pl + e2 + u * u * (1 - pu)
            return m1, m2
        if model == "poisson":
            j, a, b = _pois_pieces(l, u)
            sf = special.pdtrc(j, th[..., None])  # P(X > j)
            m1 = l + np.sum((b - a) * sf, axis=-1)
            m2 = l * l + np.sum((b * b - a * a) * sf, axis=-1)
            return m1, m2
        if model == "bernoulli":
            return l + (u - l) * th, l * l + (u * u - l * l) * th
    raise KeyError(model)


def slope(model, theta, l, u, sigma=1.0):
    """|m'(θ)| = |d/dθ E_θ clip(T, l, u)| (exact; arrays broadcast)."""
    th, l, u = np.broadcast_arrays(np.asarray(theta, float), np.asarray(l, float), np.asarray(u, float))
    with np.errstate(all="ignore"):
        if model == "exponential":
            return (np.exp(-th * l) * (l / th + 1 / th ** 2) - np.exp(-th * u) * (u / th + 1 / th ** 2))
        if model == "normal-mean":
            return special.ndtr((u - th) / sigma) - special.ndtr((l - th) / sigma)
        if model == "normal-var":
            return (special.gammainc(1.5, np.maximum(u / th, 0) / 2) - special.gammainc(1.5, np.maximum(l / th, 0) / 2))
        if model == "poisson":
            j, a, b = _pois_pieces(l, u)
            pmf = np.exp(-th[..., None] + j * np.log(th[..., None]) - special.gammaln(j + 1))
            return np.sum((b - a) * pmf, axis=-1)
        if model == "bernoulli":
            return u - l
    raise KeyError(model)


def tv_slope(model, low, sigma=1.0):
    """K >= sup_{θ >= low} (1/2) E_θ|∂_θ log p_θ| (the constants of boundcalc.problems.point.tv_slope_bound)."""
    if model == "bernoulli":
        return 1.0
    if model == "poisson":
        k = math.floor(low)
        return math.exp(-low + (k * math.log(low) if k else 0.0) - math.lgamma(k + 1))
    if model == "exponential":
        return 1.0 / (math.e * low) if low > 0 else math.inf
    if model == "normal-mean":
        return 1.0 / (sigma * math.sqrt(2 * math.pi))
    if model == "normal-var":
        return math.exp(-0.5) / (math.sqrt(2 * math.pi) * low) if low > 0 else math.inf
    raise KeyError(model)


def certified_risk(model, n, eps, lo, hi, alpha, beta, sigma=1.0, grid=GRID):
    """(V_N/n + 2R²/(nε)²)/s_N²: certified sup over N = [lo, hi] of the risk (see the module docstring)."""
    l, u = interval(model, 0.5 * (lo + hi), alpha, beta, sigma)
    R = u - l
    if model == "exponential":  # |m'| decreases in λ: its minimum over N is at θ_hi (and m' has no 0/0 there)
        s_n = slope(model, hi, l, u, sigma)
    else:
        s_n = np.minimum(slope(model, lo, l, u, sigma), slope(model, hi, l, u, sigma))
    if model == "bernoulli":
        p = min(max(0.5, lo), hi)
        vmax = R * R * p * (1 - p)
    else:
        th = np.linspace(lo, hi, grid)
        m1, m2 = clip_moments(model, th, l[..., None], u[..., None], sigma)
        h = (hi - lo) / (grid - 1)
        with np.errstate(all="ignore"):
            grid_max = np.max(np.where(np.isfinite(m2 - m1 * m1), m2 - m1 * m1, np.inf), axis=-1)
            vmax = grid_max + 1.5 * R * R * tv_slope(model, lo, sigma) * h
        # ψ takes values in [l, u], so Var ψ <= R²/4 (Popoviciu) at every θ: the grid correction is not needed
        # where it is large (e.g. K = ∞ when N reaches θ = 0 for the exponential rate or the normal variance)
        vmax = np.minimum(vmax, R * R / 4)
    out = (vmax / n + 2 * R * R / (n * eps) ** 2) / (s_n * s_n)
    return np.where((R > 0) & (s_n > 0), out, np.inf)


def certified_risk_exponential_mp(n, eps, lo, hi, alpha, beta, sigma=1.0, grid=GRID):
    """:func:`certified_risk` of the exponential model at mpmath's working precision (the certification path).

    The clipping interval (l, u) and the grid of θ are the mechanism's float64 choices (any interval and grid give a
    valid bound); everything else from the definitions in mpmath: s_N = |m'(θ_hi)| = e^{-λl}(l/λ + 1/λ²) -
    e^{-λu}(u/λ + 1/λ²) at λ = θ_hi, Var ψ = E ψ² - (E ψ)² at each grid point (closed forms of the module
    docstring), the Lipschitz correction 3R²K h/2 with K = 1/(e θ_lo) and h the largest gap of the float64 grid
    (the float64 form uses (θ_hi - θ_lo)/(grid - 1)), capped by R²/4. In float64, s_N is a difference of two
    positive terms that cancels when βλ/θ_c is small (a relative error of about 1e-16 (A + B)/(A - B) that lowers
    the bound when s_N comes out high), and E ψ² - (E ψ)² cancels too; here the 40- and 60-digit evaluations of
    the certification check what cancellation remains."""
    import mpmath

    l, u = interval("exponential", 0.5 * (float(lo) + float(hi)), float(alpha), float(beta), float(sigma))
    l, u = mpmath.mpf(float(l)), mpmath.mpf(float(u))
    R = u - l
    lo_m, hi_m = mpmath.mpf(lo), mpmath.mpf(hi)

    def slope_at(lam):
        return mpmath.exp(-lam * l) * (l / lam + 1 / lam ** 2) - mpmath.exp(-lam * u) * (u / lam + 1 / lam ** 2)

    s_n = slope_at(hi_m) if hi_m > 0 else mpmath.mpf(0)
    if not (R > 0 and s_n > 0):
        return mpmath.inf
    vmax = R * R / 4  # Popoviciu: ψ takes values in [l, u]
    if lo_m > 0:  # else K = ∞ (N reaches θ = 0): the grid correction is infinite and R²/4 is the bound
        th = [mpmath.mpf(float(t)) for t in np.linspace(float(lo), float(hi), grid)]
        gmax = None
        for lam in th:
            el, eu = mpmath.exp(-lam * l), mpmath.exp(-lam * u)
            m1 = l + (el - eu) / lam
            m2 = l * l + 2 * (el * (l / lam + 1 / lam ** 2) - eu * (u / lam + 1 / lam ** 2))
            v = m2 - m1 * m1
            gmax = v if gmax is None or v > gmax else gmax
        gap = max(b - a for a, b in zip(th[:-1], th[1:])) if grid > 1 else mpmath.mpf(0)
        vmax = min(gmax + mpmath.mpf(3) / 2 * R * R / (mpmath.e * lo_m) * gap, vmax)
    n_m, e_m = mpmath.mpf(n), mpmath.mpf(eps)
    return (vmax / n_m + 2 * R * R / (n_m * e_m) ** 2) / (s_n * s_n)


def _mp_interval_prob_normal(zl, zu):
    """Φ(z_u) - Φ(z_l) in mpmath, from the side of the smaller tails (no cancellation of two numbers near 1)."""
    import mpmath

    if zl > 0:
        return mpmath.ncdf(-zl) - mpmath.ncdf(-zu)
    return mpmath.ncdf(zu) - mpmath.ncdf(zl)


def _mp_model(model, sigma):
    """(slope(θ), moments(θ) -> (E ψ, E ψ²), K(low)) of ``model`` in mpmath at the working precision, for the
    interval (l, u) given to them (the closed forms of the module docstring)."""
    import mpmath

    sig = mpmath.mpf(sigma)
    if model == "normal-mean":
        def G(z):
            return z * mpmath.ncdf(-z) - mpmath.npdf(z)

        def H(z):
            return ((z * z - 1) * mpmath.ncdf(-z) - z * mpmath.npdf(z)) / 2

        def slope_at(th, l, u):
            return _mp_interval_prob_normal((l - th) / sig, (u - th) / sig)

        def moments(th, l, u):
            zl, zu = (l - th) / sig, (u - th) / sig
            g = G(zu) - G(zl)
            return l + sig * g, l * l + 2 * th * sig * g + 2 * sig ** 2 * (H(zu) - H(zl))

        def K(low):
            return 1 / (sig * mpmath.sqrt(2 * mpmath.pi))
    elif model == "normal-var":
        def P(df, c):  # P(χ²_df < c)
            return mpmath.gammainc(mpmath.mpf(df) / 2, 0, max(c, 0) / 2, regularized=True)

        def Pdiff(df, a, b):  # P(χ²_df ∈ [a, b]), from the side of the smaller tail
            a, b = max(a, 0), max(b, 0)
            k = mpmath.mpf(df) / 2
            if a / 2 > k:
                return mpmath.gammainc(k, a / 2, b / 2, regularized=True)
            return P(df, b) - P(df, a)

        def slope_at(th, l, u):
            return Pdiff(3, l / th, u / th)

        def moments(th, l, u):
            pl, qu = P(1, l / th), mpmath.gammainc(mpmath.mpf(1) / 2, max(u / th, 0) / 2, mpmath.inf, regularized=True)
            return (l * pl + th * Pdiff(3, l / th, u / th) + u * qu,
                    l * l * pl + 3 * th * th * Pdiff(5, l / th, u / th) + u * u * qu)

        def K(low):
            return mpmath.exp(mpmath.mpf(-1) / 2) / (mpmath.sqrt(2 * mpmath.pi) * low) if low > 0 else mpmath.inf
    elif model == "poisson":
        def pieces(l, u):
            """[a_j, b_j] = [l, u] ∩ [j, j+1) for the j where it is not empty (from ⌊l⌋)."""
            out = []
            j = int(mpmath.floor(l))
            while j <= u:
                a, b = max(mpmath.mpf(j), l), min(mpmath.mpf(j + 1), u)
                if b > a:
                    out.append((j, a, b))
                j += 1
            return out

        def pmfs(th, js):
            """p(j; λ) for consecutive j (the first from logs, then p(j+1) = p(j) λ/(j+1))."""
            out = [mpmath.exp(-th + js[0] * mpmath.log(th) - mpmath.loggamma(js[0] + 1))] if js else []
            for j in js[1:]:
                out.append(out[-1] * th / j)
            return out

        def slope_at(th, l, u):
            pc = pieces(l, u)
            return mpmath.fsum((b - a) * p for (j, a, b), p in zip(pc, pmfs(th, [j for j, _, _ in pc])))

        def moments(th, l, u):
            # P(X > j) = P(j + 1, λ) (regularised lower incomplete gamma) at the first j, then
            # P(X > j + 1) = P(X > j) - p(j + 1; λ)
            pc = pieces(l, u)
            if not pc:
                return l, l * l
            js = [j for j, _, _ in pc]
            ps = pmfs(th, js)
            sf = [mpmath.gammainc(js[0] + 1, 0, th, regularized=True)]
            for p in ps[1:]:
                sf.append(sf[-1] - p)
            return (l + mpmath.fsum((b - a) * q for (_, a, b), q in zip(pc, sf)),
                    l * l + mpmath.fsum((b * b - a * a) * q for (_, a, b), q in zip(pc, sf)))

        def K(low):
            k = int(mpmath.floor(low))
            return mpmath.exp(-low + (k * mpmath.log(low) if k else 0) - mpmath.loggamma(k + 1))
    else:
        raise KeyError(model)
    return slope_at, moments, K


def certified_risk_mp(model, n, eps, lo, hi, alpha, beta, sigma=1.0, grid=GRID):
    """:func:`certified_risk` at mpmath's working precision (the certification path), for every model: the
    clipping interval (l, u) and the grid of θ are the mechanism's float64 choices (any give a valid bound),
    s_N = min(|m'(θ_lo)|, |m'(θ_hi)|) (|m'(θ_hi)| for the exponential rate; m' log-concave or unimodal, module
    docstring), Var ψ = E ψ² - (E ψ)² at each grid point from the closed forms, the correction 3R²K h/2 with h the
    largest gap of the float64 grid, capped by R²/4 (docs/engineering/certified-floating-point.md, parts D and E)."""
    import mpmath

    if model == "exponential":
        return certified_risk_exponential_mp(n, eps, lo, hi, alpha, beta, sigma, grid)
    l, u = interval(model, 0.5 * (float(lo) + float(hi)), float(alpha), float(beta), float(sigma))
    l, u = mpmath.mpf(float(l)), mpmath.mpf(float(u))
    R = u - l
    lo_m, hi_m = mpmath.mpf(lo), mpmath.mpf(hi)
    n_m, e_m = mpmath.mpf(n), mpmath.mpf(eps)
    if model == "bernoulli":  # ψ = l + (u - l)X: m' = u - l, Var ψ = R² p(1-p) <= R² max over N of θ(1-θ)
        if not R > 0:
            return mpmath.inf
        p = min(max(mpmath.mpf(1) / 2, lo_m), hi_m)
        return (R * R * p * (1 - p) / n_m + 2 * R * R / (n_m * e_m) ** 2) / (R * R)
    slope_at, moments, K = _mp_model(model, sigma)
    if not R > 0:
        return mpmath.inf
    s_n = min(slope_at(lo_m, l, u), slope_at(hi_m, l, u))
    if not s_n > 0:
        return mpmath.inf
    vmax = R * R / 4  # Popoviciu
    th = [mpmath.mpf(float(t)) for t in np.linspace(float(lo), float(hi), grid)]
    k = K(lo_m)
    if mpmath.isfinite(k):
        gmax = None
        for t in th:
            m1, m2 = moments(t, l, u)
            v = m2 - m1 * m1
            gmax = v if gmax is None or v > gmax else gmax
        gap = max(b - a for a, b in zip(th[:-1], th[1:])) if grid > 1 else mpmath.mpf(0)
        vmax = min(gmax + mpmath.mpf(3) / 2 * R * R * k * gap, vmax)
    return (vmax / n_m + 2 * R * R / (n_m * e_m) ** 2) / (s_n * s_n)


def estimate(model, y, lo, hi, l, u, sigma=1.0, iters=60):
    """θ̂ = m^{-1}(y) on N = [lo, hi], projected (bisection on the monotone m; vectorised over y)."""
    y = np.asarray(y, float)
    mlo = clip_moments(model, lo, l, u, sigma)[0]
    mhi = clip_moments(model, hi, l, u, sigma)[0]
    incr = mhi > mlo
    a = np.full(y.shape, float(lo))
    b = np.full(y.shape, float(hi))
    for _ in range(iters):
        mid = 0.5 * (a + b)
        mm = clip_moments(model, mid, l, u, sigma)[0]
        go_right = (mm < y) if incr else (mm > y)
        a = np.where(go_right, mid, a)
        b = np.where(go_right, b, mid)
    return 0.5 * (a + b)


#: raw draws generated at once by :func:`simulate` (the repetitions are processed in blocks of rows)
CHUNK = 2_000_000


def _clipped_means_raw(model, rng, theta, n, reps, l, u, sigma, mu0):
    """Average of clip(T(X_i), l, u) over n raw draws of the model's sampler, ``reps`` times (float64)."""
    from ..core.models import get_point_model

    m = get_point_model(model)
    extra = {"sigma": sigma} if model == "normal-mean" else ({"mu0": mu0} if model == "normal-var" else {})
    rows = max(1, CHUNK // n)
    avg = np.empty(reps)
    for s in range(0, reps, rows):
        k = min(rows, reps - s)
        x = m.sampler(rng, theta, (k, n), **extra)
        t = (x - mu0) ** 2 if model == "normal-var" else x
        avg[s:s + k] = np.clip(t, l, u, out=t).mean(axis=1)
    return avg


def _clipped_means_fast(model, rng, theta, n, reps, l, u, sigma):
    """The same averages, drawn faster with the same law.

    Discrete models through their counts: for poisson, clip(X, l, u) depends on X only through the
    category X = j (j < J = ⌈u⌉) or X >= J, so the sum over the sample is Σ_j N_j clip(j, l, u) with
    (N_0, ..., N_J) ~ Multinomial(n; p(0), ..., p(J-1), P(X >= J)); bernoulli: ψ = l + (u - l)X and
    ΣX ~ Bin(n, θ). Continuous models by scaling a standard draw (float32, averaged in float64):
    normal-mean clip(θ + σZ, l, u) = θ + σ clip(Z, (l-θ)/σ, (u-θ)/σ); exponential (rate λ, X = E/λ)
    clip(X, l, u) = clip(E, λl, λu)/λ; normal-var (T = vZ²) clip(T, l, u) = v clip(Z², l/v, u/v).
    Checked against the raw simulation in tests/test_point_clipped.py.
    """
    if model == "bernoulli":
        return l + (u - l) * rng.binomial(n, theta, reps) / n
    if model == "poisson":
        jmax = int(math.ceil(u))
        j = np.arange(jmax)
        p = np.exp(-theta + j * math.log(theta) - special.gammaln(j + 1))
        p = np.append(p, max(0.0, 1.0 - p.sum()))
        counts = rng.multinomial(n, p / p.sum(), size=reps)
        vals = np.clip(np.arange(jmax + 1, dtype=float), l, u)
        return counts @ vals / n
    if model == "normal-mean":
        lo_, hi_, scale, shift = (l - theta) / sigma, (u - theta) / sigma, sigma, theta
        draw = rng.standard_normal
    elif model == "exponential":
        lo_, hi_, scale, shift = theta * l, theta * u, 1.0 / theta, 0.0
        draw = rng.standard_exponential
    elif model == "normal-var":
        lo_, hi_, scale, shift = l / theta, u / theta, theta, 0.0
        draw = rng.standard_normal
    else:
        raise KeyError(model)
    rows = max(1, CHUNK // n)
    avg = np.empty(reps)
    for s in range(0, reps, rows):
        k = min(rows, reps - s)
        z = draw((k, n), dtype=np.float32)
        if model == "normal-var":
            np.square(z, out=z)
        np.clip(z, np.float32(lo_), np.float32(hi_), out=z)
        # the float32 rounding of the clipping ends is undone below: the ends are applied exactly
        avg[s:s + k] = z.mean(axis=1, dtype=np.float64)
    return np.clip(shift + scale * avg, l, u)


def simulate(model, n, eps, theta, lo, hi, alpha, beta, reps=2000, seed=0, sigma=1.0, mu0=0.0, method="fast",
             release=None):
    """Run the mechanism ``reps`` times on data from p_θ; returns the estimates.

    Vectorised over repetitions × sample: the clipped statistic ψ = clip(T, l, u) with the interval
    (l, u) of :func:`interval` (the one the certified bound is evaluated at) is averaged over the n
    points of each repetition, Laplace((u - l)/(nε)) is added and the release is inverted by
    :func:`estimate` (bisection on m, projected onto N). ``method="raw"``: the n raw points are drawn
    from the model's sampler (in blocks of at most ``CHUNK`` points); ``"fast"``: the same law through
    counts or scaled float32 standard draws (:func:`_clipped_means_fast`). ``release(averages, rng, reps)``: the
    rest of the mechanism after the data step (a runnable mechanism's ``release_from_statistic``).
    """
    rng = np.random.default_rng(seed)
    l, u = interval(model, 0.5 * (lo + hi), alpha, beta, sigma)
    l, u = float(l), float(u)
    n, reps = int(n), int(reps)
    if method == "raw":
        avg = _clipped_means_raw(model, rng, theta, n, reps, l, u, sigma, mu0)
    else:
        avg = _clipped_means_fast(model, rng, theta, n, reps, l, u, sigma)
    if release is not None:
        return release(avg, rng, reps)
    y = avg + rng.laplace(0.0, (u - l) / (n * eps), reps)
    return estimate(model, y, lo, hi, l, u, sigma)


# ---------------------------------------------------------------------- the point problem's sympy function
def _ident(name):
    return name.replace("-", "_")


def _clip_stat_impl(model_name):
    def impl(n, eps, lo, hi, sigma, alpha, beta):
        n, eps, lo, hi, sigma = (np.asarray(x, float) for x in (n, eps, lo, hi, sigma))
        alpha, beta = np.asarray(alpha, float), np.asarray(beta, float)
        if n.size == eps.size == lo.size == hi.size == sigma.size == 1:
            return certified_risk(model_name, float(n.reshape(-1)[0]), float(eps.reshape(-1)[0]),
                                        float(lo.reshape(-1)[0]), float(hi.reshape(-1)[0]), alpha, beta,
                                        float(sigma.reshape(-1)[0]))
        arrs = np.broadcast_arrays(n, eps, lo, hi, sigma, alpha, beta)
        out = np.empty(arrs[0].shape)
        for ix in np.ndindex(out.shape):
            nn, ee, ll, hh, ss, aa, bb = (float(a[ix]) for a in arrs)
            out[ix] = float(certified_risk(model_name, nn, ee, ll, hh, aa, bb, ss))
        return out

    def mp(*args):
        if any(hasattr(a, "_mpf_") for a in args):
            import mpmath

            # at the working precision (ClipStatRisk_<model> in HIGH_PRECISION)
            n, eps, lo, hi, sigma, alpha, beta = args
            return certified_risk_mp(model_name, n, eps, lo, hi, alpha, beta, sigma)
        return impl(*args)
    return mp


@lru_cache(maxsize=None)
def risk_function(model_name: str):
    """The sympy Function ``ClipStatRisk_<model>(n, ε, θ_lo, θ_hi, σ, α, β)`` whose value is
    :func:`certified_risk` (the point problem's ``clip-stat-laplace`` upper bound)."""
    import sympy as sp

    ident = _ident(model_name)

    def latex(self, printer, exp=None):
        tex = rf"R^{{\mathrm{{{model_name}}}}}_{{\mathrm{{clip}}}}(\alpha, \beta)"
        return tex if exp is None else rf"{{{tex}}}^{{{exp}}}"

    return _named(type(f"ClipStatRisk_{ident}", (sp.Function,),
                       {"nargs": 7, "_imp_": staticmethod(_clip_stat_impl(model_name)), "_latex": latex,
                        "__doc__": "certified sup over N of the risk of the clipped-statistic Laplace estimator"}))


for _m in MODELS:  # certified_risk_mp on the mpmath path
    S.HIGH_PRECISION.add(f"ClipStatRisk_{_ident(_m)}")


def _named(cls):
    """Make a per-model Function class an attribute of this module under its own name, so that the cache
    format (:mod:`boundcalc.cache.exprcodec`) can name it (see the module's ``__getattr__``)."""
    globals()[cls.__name__] = cls
    return cls


def __getattr__(name: str):
    """``ClipStatRisk_<model>`` by its name, built on first use: the cache format names a class by module and
    name, and a process that reads a kept expression has not built the class yet."""
    prefix, _, ident = name.partition("_")
    models = [m for m in MODELS if _ident(m) == ident]
    if prefix == "ClipStatRisk" and len(models) == 1:
        risk_function(models[0])
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
