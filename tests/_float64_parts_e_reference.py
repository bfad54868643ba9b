"""Independent high-precision references for the float64 parts audited in part E of the float64-parts audit
(docs/engineering/certified-floating-point.md): written from the formulas (direct sums, closed forms) in mpmath, not
by calling the code under test, which supplies only each scheme's own free parameters (cells, amplitudes, cut-offs)."""
from __future__ import annotations

import math

import mpmath
import numpy as np

DPS = 50


def zz_cells(A: float, H: float, cells):
    """The cells of the Ziv–Zakai lower sum (free parameters of the scheme, boundcalc/methods/ziv_zakai.py): the
    float64 right ends h₁ of the h-cells and, per h-cell, the float64 ends of the φ-cells of the half domain
    [-h₁/2, A - h₁], built with the same float64 operations as the scheme (the sum below treats them as exact
    points)."""
    nh, nphi = cells
    h1 = H * np.arange(1, nh + 1) / nh
    length = 2 * A - h1
    u = np.arange(nphi + 1) / nphi
    ends = (-h1 / 2)[:, None] + u[None, :] * (length / 2)[:, None]
    return h1, ends


def zz_lower_sum_ref(n, eps, m, A, H, cells, dps=DPS):
    """The exact lower Riemann sum of V(A) = (1/(4A)) ∫_0^{2A} dh ∫_{-A}^{A-h} dφ G(κ(φ, h)) on the scheme's float64
    cell points (:func:`zz_cells`) taken as exact: G(κ) = 1 - √(1 - (1-κ)^{2n}), κ = min{h_ε h₁²/(4m²), H²}, with
    h_ε = (e^ε - 1)²/(4(e^ε + 1)) (∞ for ε = ∞) and the squared Hellinger distance in its direct form
    H²(φ, h) = (2 - √((1+φ)(1+φ+h)) - √((1-φ)(1-φ-h)))/(2m); h-cell widths h₁ᵢ - h₁ᵢ₋₁ (h₁ capped at 2A), φ-cell
    widths the differences of the points (the last end capped at A - h₁), each half counted twice (H² is symmetric
    under φ ↦ -φ-h); when 2h_ε <= m the φ-integral is exact, (2A - h₁) G(h_ε h₁²/(4m²))."""
    h1f, endsf = zz_cells(A, H, cells)
    with mpmath.workdps(dps):
        n, A = mpmath.mpf(n), mpmath.mpf(A)
        if eps == math.inf:
            he = mpmath.inf
        else:
            e = mpmath.exp(mpmath.mpf(eps))
            he = (e - 1) ** 2 / (4 * (e + 1))

        def G(k):
            if k >= 1:
                return mpmath.mpf(0)
            return 1 - mpmath.sqrt(1 - (1 - k) ** (2 * n))

        def h2(phi, h):
            return (2 - mpmath.sqrt((1 + phi) * (1 + phi + h))
                    - mpmath.sqrt(max(mpmath.mpf(0), (1 - phi) * (1 - phi - h)))) / (2 * m)

        exact_phi = 2 * he <= m
        tot, prev = mpmath.mpf(0), mpmath.mpf(0)
        for i, h in enumerate(h1f):
            h = min(mpmath.mpf(float(h)), 2 * A)
            width, prev = h - prev, h
            if width <= 0:
                continue
            priv = he * h * h / (4 * m * m)
            if exact_phi:
                tot += width * (2 * A - h) * G(priv)
                continue
            pts = [mpmath.mpf(float(p)) for p in endsf[i]]
            pts[-1] = min(pts[-1], A - h)
            d2 = [h2(p, h) for p in pts]
            inner = mpmath.fsum(2 * max(mpmath.mpf(0), pts[k + 1] - pts[k]) * G(min(priv, max(d2[k], d2[k + 1])))
                                for k in range(len(pts) - 1))
            tot += width * inner
        return tot / (4 * A)


def zz_g_sensitivity_ref(n, kappas, dps=30):
    """max over ``kappas`` of |G'(κ)| κ = n κ (1-κ)^{2n-1}/√(1 - (1-κ)^{2n}) (the absolute change of G under a relative
    change of κ), in mpmath."""
    with mpmath.workdps(dps):
        n = mpmath.mpf(n)
        best = mpmath.mpf(0)
        for k in kappas:
            k = mpmath.mpf(k)
            B = (1 - k) ** (2 * n)
            best = max(best, n * k * (1 - k) ** (2 * n - 1) / mpmath.sqrt(1 - B))
        return best


def clipped_moments_ref(N: int, pi: float, alpha: float, beta: float, dps: int = 40):
    """(E g, E g²), g(T) = clip(αT + β, 0, 1), T ~ Bin(N, π) at the float π, by the direct sum of the pmf
    C(N, k) π^k (1-π)^{N-k} over k within 40 standard deviations (+ 60) of Nπ (the rest is below e^{-700} of
    the total), in mpmath."""
    with mpmath.workdps(dps):
        p = mpmath.mpf(pi)
        a, b = mpmath.mpf(alpha), mpmath.mpf(beta)
        if p == 0 or p == 1:
            k = 0 if p == 0 else N
            g = min(max(a * k + b, 0), 1)
            return g, g * g
        sd = math.sqrt(N * float(pi) * (1 - float(pi)))
        lo, hi = max(0, int(N * float(pi) - 40 * sd - 60)), min(N, int(N * float(pi) + 40 * sd + 60))
        lp, lq = mpmath.log(p), mpmath.log1p(-p)
        e1 = e2 = mpmath.mpf(0)
        lb = mpmath.loggamma(N + 1)
        for k in range(lo, hi + 1):
            w = mpmath.exp(lb - mpmath.loggamma(k + 1) - mpmath.loggamma(N - k + 1) + k * lp + (N - k) * lq)
            g = min(max(a * k + b, 0), 1)
            e1 += g * w
            e2 += g * g * w
        return e1, e2


def threshold_risk_ref(m: int, q: float, lam: float, g, theta, dps: int = 40):
    """R(θ) = E(λ g_T - θ)², T ~ Bin(m, p(θ)), p(θ) = (1-q) + (2q-1) Φ(θ) (the threshold scheme with randomized
    response of keep probability q, σ = 1), for the estimator's values g_k (k = 0..m, the mechanism's own float64
    outputs), by the direct sum of the pmf (from its mode by the ratio recurrence, within 40 standard deviations + 60;
    the rest is below e^{-700}), in mpmath."""
    with mpmath.workdps(dps):
        q = mpmath.mpf(q)
        th = mpmath.mpf(theta)
        p = (1 - q) + (2 * q - 1) * mpmath.ncdf(th)
        k0 = int(mpmath.floor((m + 1) * p))
        k0 = min(max(k0, 0), m)
        sd = math.sqrt(m * float(p) * (1 - float(p)))
        reach = int(40 * sd + 60)
        w0 = mpmath.exp(mpmath.loggamma(m + 1) - mpmath.loggamma(k0 + 1) - mpmath.loggamma(m - k0 + 1)
                        + k0 * mpmath.log(p) + (m - k0) * mpmath.log1p(-p))
        r = p / (1 - p)
        lam = mpmath.mpf(lam)
        loss = lambda k: (lam * mpmath.mpf(float(g[k])) - th) ** 2
        tot = w0 * loss(k0)
        w = w0
        for k in range(k0, min(m, k0 + reach)):
            w = w * (m - k) / (k + 1) * r
            tot += w * loss(k + 1)
        w = w0
        for k in range(k0, max(0, k0 - reach), -1):
            w = w * k / (m - k + 1) / r
            tot += w * loss(k - 1)
        return tot


def threshold_sup_ref(m: int, q: float, lam: float, g, b: float, points: int = 41, refine: int = 24):
    """max of :func:`threshold_risk_ref` over θ in [0, b] (R is even in θ): a grid, then a golden-section search
    around its best point (a lower estimate of the sup: the bound must be at or above it)."""
    with mpmath.workdps(40):
        grid = [mpmath.mpf(b) * i / (points - 1) for i in range(points)]
        vals = [threshold_risk_ref(m, q, lam, g, t) for t in grid]
        j = max(range(points), key=lambda i: vals[i])
        best = vals[j]
        lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, points - 1)]
        r = (mpmath.sqrt(5) - 1) / 2
        x1, x2 = hi - r * (hi - lo), lo + r * (hi - lo)
        f1, f2 = threshold_risk_ref(m, q, lam, g, x1), threshold_risk_ref(m, q, lam, g, x2)
        for _ in range(refine):
            if f1 >= f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - r * (hi - lo)
                f1 = threshold_risk_ref(m, q, lam, g, x1)
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + r * (hi - lo)
                f2 = threshold_risk_ref(m, q, lam, g, x2)
        return max(best, f1, f2)


def clip_stat_ref(model, n, eps, lo, hi, l, u, thetas, sigma=1.0, dps=40):
    """(V_N/n + 2R²/(nε)²)/s_N² of the clipped-statistic Laplace estimator (ψ = clip(T, l, u), R = u - l) for the
    normal-mean, normal-var, poisson and bernoulli models, from the definitions in mpmath, not the closed forms:
    E ψ and E ψ² by quadrature of the density (normal-mean: N(θ, σ²); normal-var: T = vZ², density
    f(t) = e^{-t/(2v)}/√(2π v t)) or by the direct sum of the pmf (poisson, within 40√λ + 60 of λ); the slope m'(θ)
    by quadrature of ∂_θ of the density (normal-mean: ∫_l^u φ((x-θ)/σ)/σ dx; normal-var: ∫_l^u f_{χ²_1}(s/v) s/v² ds)
    or by the score identity m'(λ) = Σ_k p(k; λ)(k/λ - 1) clip(k, l, u) (poisson); s_N = min(|m'(θ_lo)|,
    |m'(θ_hi)|); V_N = min(max over the grid ``thetas`` of Var ψ + (3/2) R² K h, R²/4), h the largest gap of the grid,
    K = 1/(σ√(2π)) (normal-mean), e^{-1/2}/(√(2π) θ_lo) (normal-var), p(⌊θ_lo⌋; θ_lo) (poisson); bernoulli:
    m' = R, Var ψ = R² p(1-p) at p = clip(½, θ_lo, θ_hi)."""
    with mpmath.workdps(dps):
        n, eps, lo, hi, l, u, sig = (mpmath.mpf(x) for x in (n, eps, lo, hi, l, u, sigma))
        R = u - l
        noise = 2 * R * R / (n * eps) ** 2
        if model == "bernoulli":
            p = min(max(mpmath.mpf(1) / 2, lo), hi)
            return (R * R * p * (1 - p) / n + noise) / (R * R)
        if model == "normal-mean":
            def dens(x, th):
                return mpmath.npdf(x, th, sig)

            def mom(th):
                pts = [th - 60 * sig, l, u, th + 60 * sig] if l > th - 60 * sig else [l, u]
                below = mpmath.quad(lambda x: dens(x, th), [min(th - 60 * sig, l), l]) if l > th - 60 * sig else 0
                above = mpmath.quad(lambda x: dens(x, th), [u, max(th + 60 * sig, u)]) if u < th + 60 * sig else 0
                mid1 = mpmath.quad(lambda x: x * dens(x, th), [l, u])
                mid2 = mpmath.quad(lambda x: x * x * dens(x, th), [l, u])
                return l * below + mid1 + u * above, l * l * below + mid2 + u * u * above

            def slope(th):
                return mpmath.quad(lambda x: dens(x, th), [l, u])

            K = 1 / (sig * mpmath.sqrt(2 * mpmath.pi))
        elif model == "normal-var":
            def dens(t, v):
                return mpmath.exp(-t / (2 * v)) / mpmath.sqrt(2 * mpmath.pi * v * t)

            def mom(v):
                below = mpmath.quad(lambda t: dens(t, v), [0, l]) if l > 0 else 0
                above = 1 - below - mpmath.quad(lambda t: dens(t, v), [l, u]) if l > 0 else \
                    1 - mpmath.quad(lambda t: dens(t, v), [0, u])
                mid1 = mpmath.quad(lambda t: t * dens(t, v), [l, u])
                mid2 = mpmath.quad(lambda t: t * t * dens(t, v), [l, u])
                return l * below + mid1 + u * above, l * l * below + mid2 + u * u * above

            def slope(v):
                chi1 = lambda y: mpmath.exp(-y / 2) / mpmath.sqrt(2 * mpmath.pi * y)
                return mpmath.quad(lambda s: chi1(s / v) * s / v ** 2, [l, u])

            K = mpmath.exp(mpmath.mpf(-1) / 2) / (mpmath.sqrt(2 * mpmath.pi) * lo) if lo > 0 else mpmath.inf
        elif model == "poisson":
            def terms(lam):
                top = int(lam + 40 * mpmath.sqrt(lam) + 60)
                w = mpmath.exp(-lam)
                for k in range(top + 1):
                    if k:
                        w = w * lam / k
                    yield k, w

            def mom(lam):
                m1 = m2 = mpmath.mpf(0)
                for k, w in terms(lam):
                    c = min(max(mpmath.mpf(k), l), u)
                    m1 += w * c
                    m2 += w * c * c
                return m1, m2

            def slope(lam):
                return abs(mpmath.fsum(w * (k / lam - 1) * min(max(mpmath.mpf(k), l), u) for k, w in terms(lam)))

            k0 = int(mpmath.floor(lo))
            K = mpmath.exp(-lo) * lo ** k0 / mpmath.factorial(k0)
        else:
            raise KeyError(model)
        s_n = min(abs(slope(lo)), abs(slope(hi)))
        vmax = R * R / 4
        if mpmath.isfinite(K):
            th = [mpmath.mpf(float(t)) for t in thetas]
            gmax = max(m2 - m1 * m1 for m1, m2 in (mom(t) for t in th))
            gap = max(b - a for a, b in zip(th[:-1], th[1:]))
            vmax = min(gmax + mpmath.mpf(3) / 2 * R * R * K * gap, vmax)
        return (vmax / n + noise) / (s_n * s_n)
