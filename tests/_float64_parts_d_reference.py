"""Independent 80-digit references for the float64 parts of the threshold scheme, the ball minimiser and the other
exact-risk parts (part D of the float64-parts audit, docs/engineering/certified-floating-point.md): written from the
formulas, not by calling the code under test (which supplies only the scheme's own free parameters: the cells, the
t grid, the majorant parameters)."""
from __future__ import annotations

import mpmath

DPS = 80


def threshold_zero_ref(b: float):
    """sup_{|θ| <= b} (0 - θ)² = b², from the float b, at 80 digits."""
    with mpmath.workdps(DPS):
        return mpmath.mpf(b) ** 2


def threshold_closed_ref(m: int, eps: float, b: float):
    """(π/2) e^{b²} coth²(ε/2)/m, σ = 1 (the threshold scheme's closed-form risk bound), at 80 digits."""
    with mpmath.workdps(DPS):
        b, e = mpmath.mpf(b), mpmath.mpf(eps)
        return mpmath.pi / 2 * mpmath.exp(b * b) * (mpmath.cosh(e / 2) / mpmath.sinh(e / 2)) ** 2 / m


def _tail(a, g2, beta):
    """min{Cantelli g2/(g2 + a²), Bernstein exp(-a²/(2(g2 + βa/3)))} (0 without variance and range)."""
    cant = g2 / (g2 + a * a) if g2 > 0 else mpmath.mpf(0)
    if g2 > 0 or beta > 0:
        bern = mpmath.exp(-a * a / (2 * (g2 + beta * a / 3))) if mpmath.isfinite(beta) else mpmath.mpf(1)
    else:
        bern = mpmath.mpf(0)
    return min(cant, bern)


def threshold_cell_ref(lo, hi, s, sig, beta, low, inv_n, tgrid):
    """The threshold bound of the ball minimiser on the ρ cell [lo, hi], at 80 digits:
    hi · min_t [1 - t lo/√(t² lo² + s²(hi)) + P(W₁ < -(1-t) lo) + P(W₁ < -lo)], s²(x) = s² - max{0, low - x²/n}."""
    with mpmath.workdps(DPS):
        lo, hi, s, sig, beta, low, inv_n = (mpmath.mpf(x) for x in (lo, hi, s, sig, beta, low, inv_n))
        s2 = s * s - max(mpmath.mpf(0), low - hi * hi * inv_n)
        g2 = sig * sig
        best = None
        for t in tgrid:
            t = mpmath.mpf(t)
            v = 1 - t * lo / mpmath.sqrt(t * t * lo * lo + s2) + _tail((1 - t) * lo, g2, beta) + _tail(lo, g2, beta)
            best = v if best is None or v < best else best
        return hi * best


def majorant_alpha_ref(rho, k, b, g, edges):
    """sup_x [H(x) - b(x-ρ) - g(x-ρ)²] bounded by cells as the ball minimiser's majorant does (H <= 2 for x <= 0,
    h_κ(x) = 1 - (3/2)(2κ)^{1/3} x^{2/3} + κx² at a cell's left end on the cells ``edges`` of [0, x_c] (the scheme's
    cells), x_c = 1/√(2κ), 0 beyond), at 80 digits."""
    with mpmath.workdps(DPS):
        rho, k, b, g = (mpmath.mpf(x) for x in (rho, k, b, g))
        xv = rho - b / (2 * g)

        def q(x):
            return -b * (x - rho) - g * (x - rho) ** 2

        xc = 1 / mpmath.sqrt(2 * k)
        best = max(2 + q(min(xv, 0)), q(max(xv, xc)))
        for a, e in zip(edges[:-1], edges[1:]):
            a, e = mpmath.mpf(a), mpmath.mpf(e)
            h = 1 - mpmath.mpf(3) / 2 * (2 * k) ** (mpmath.mpf(1) / 3) * a ** (mpmath.mpf(2) / 3) + k * a * a
            best = max(best, h + q(min(max(xv, a), e)))
        return best


def clip_stat_exponential_ref(n, eps, lo, hi, l, u, thetas):
    """(V_N/n + 2R²/(nε)²)/s_N² of the clipped-statistic Laplace estimator for the exponential model (rate λ,
    T = X, ψ = clip(X, l, u), R = u - l), at 80 digits, by quadrature of the density λe^{-λx}, not the closed forms:
    s_N = |m'(θ_hi)| = ∫_l^u s e^{-λs} ds at λ = θ_hi; V_N = max over the grid ``thetas`` of Var_λ ψ plus
    (3/2) R² K h, K = 1/(e θ_lo) (∞ for θ_lo <= 0), h the largest gap of the grid, capped by R²/4."""
    with mpmath.workdps(DPS):
        n, eps, lo, hi, l, u = (mpmath.mpf(x) for x in (n, eps, lo, hi, l, u))
        R = u - l
        s_n = mpmath.quad(lambda s: s * mpmath.exp(-hi * s), [l, u])

        def var(lam):
            # E ψ^k = l^k P(X < l) + ∫_l^u x^k λ e^{-λx} dx + u^k P(X > u)
            pl, pu = -mpmath.expm1(-lam * l), mpmath.exp(-lam * u)
            mom = [l ** k * pl + mpmath.quad(lambda x: x ** k * lam * mpmath.exp(-lam * x), [l, u]) + u ** k * pu
                   for k in (1, 2)]
            return mom[1] - mom[0] ** 2

        vmax = R * R / 4
        if lo > 0:  # else K = ∞: R²/4
            th = [mpmath.mpf(t) for t in thetas]
            gmax = max(var(t) for t in th)
            gap = max(b - a for a, b in zip(th[:-1], th[1:]))
            vmax = min(gmax + mpmath.mpf(3) / 2 * R * R / (mpmath.e * lo) * gap, vmax)
        return (vmax / n + 2 * R * R / (n * eps) ** 2) / (s_n * s_n)


def subset_l1_risk_ref(n, eps, d, s, q_f, D_f, theta):
    """E‖y - θ‖₁ of unprojected subset selection (Ye & Barg 2018) at θ, at 50 digits by direct binomial sums (n up to a
    few thousand): the released subset of size s contains j with probability π_j = q + Dθ_j, p = s e^ε/(s e^ε + d - s)
    (j the user's value), q = (s - p)/(d - 1), D = p - q (exact, from ε); the estimator y_j = (N_j/n - q_f)/D_f uses
    the mechanism's float64 constants q_f, D_f, so E|y_j - θ_j| = E|N_j - n(q_f + D_f θ_j)|/(n D_f),
    N_j ~ Bin(n, π_j)."""
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(eps))
        p = s * e / (s * e + d - s)
        q = (s - p) / (d - 1)
        D = p - q
        qf, Df = mpmath.mpf(q_f), mpmath.mpf(D_f)
        tot = mpmath.mpf(0)
        for th in sorted(set(theta)):
            mult = sum(1 for x in theta if x == th)
            pi = q + D * mpmath.mpf(th)
            x = n * (qf + Df * mpmath.mpf(th))
            mad = mpmath.fsum(abs(k - x) * mpmath.binomial(n, k) * pi ** k * (1 - pi) ** (n - k) for k in range(n + 1))
            tot += mult * mad / (n * Df)
        return tot


def clip_bias_exponential_ref(n, k, lo, hi, a, b):
    """The mean over the blocks of B* = min(max(A(θ_lo), C(θ_hi)), V/(4m), √V) (the bound on |clipping bias|; the
    package widens max(A, C) by 1e-9 for the rounding of its float64 tails) for the
    exponential block estimator Y = (t-1)/S, S ~ Gamma(t, rate λ) (r = n - k⌊n/k⌋ blocks of t + 1 points, the others
    of t = ⌊n/k⌋), at 50 digits with mpmath's regularised incomplete gamma: A = E(a - Y)₊ = a Q(t, λc) - λ Q(t-1, λc),
    c = (t-1)/a; C = E(Y - b)₊ = λ P(t-1, λc') - b P(t, λc'), c' = (t-1)/b; V = θ_hi²/(t-2); m = min(θ_lo - a, b - θ_hi)."""
    with mpmath.workdps(50):
        lo, hi, a, b = (mpmath.mpf(x) for x in (lo, hi, a, b))

        def P(s, x):
            return mpmath.gammainc(s, 0, x, regularized=True)

        def Q(s, x):
            return mpmath.gammainc(s, x, mpmath.inf, regularized=True)

        def bstar(t):
            t = mpmath.mpf(t)
            c, c2 = (t - 1) / a, (t - 1) / b
            A = a * Q(t, lo * c) - lo * Q(t - 1, lo * c)
            C = hi * P(t - 1, hi * c2) - b * P(t, hi * c2)
            V = hi * hi / (t - 2)
            m = min(lo - a, b - hi)
            return min(max(A, C), V / (4 * m), mpmath.sqrt(V))

        t, r = n // k, n - k * (n // k)
        return (r * bstar(t + 1) + (k - r) * bstar(t)) / k


def subset_projected_d2_ref(n, eps, q_f, D_f, loss, thetas):
    """The largest, over θ₁ in ``thetas``, exact risk of projected subset selection at d = 2 (subset size 1, i.e.
    binary randomized response: p = e^ε/(e^ε + 1), q = 1 - p, D = p - q, from ε at 40 digits): N₁ ~ Bin(n, q + Dθ₁),
    y₁ = (N₁/n - q_f)/D_f with the mechanism's float64 constants, y₁ + y₂ = 1 up to their rounding, and the projection
    onto the simplex {θ₁ + θ₂ = 1, θ >= 0} of a point with y₁ + y₂ = s puts θ̂₁ = clip((y₁ - y₂ + 1)/2, 0, 1), so
    the risk is 2 E(θ̂₁ - θ₁)² (ℓ2²) or 2 E|θ̂₁ - θ₁| (ℓ1). Direct binomial sums."""
    with mpmath.workdps(40):
        e = mpmath.exp(mpmath.mpf(eps))
        p = e / (e + 1)
        q = 1 - p
        D = p - q
        qf, Df = mpmath.mpf(q_f), mpmath.mpf(D_f)
        worst = mpmath.mpf(0)
        for th in thetas:
            th = mpmath.mpf(th)
            pi = q + D * th
            tot = mpmath.mpf(0)
            w = (1 - pi) ** n  # P(N = 0), then the pmf recurrence
            for k in range(n + 1):
                y1 = (mpmath.mpf(k) / n - qf) / Df
                y2 = (mpmath.mpf(n - k) / n - qf) / Df
                t1 = min(max((y1 - y2 + 1) / 2, mpmath.mpf(0)), mpmath.mpf(1))
                err = t1 - th
                tot += w * (2 * err * err if loss == "l2sq" else 2 * abs(err))
                if k < n:
                    w = w * (n - k) / (k + 1) * pi / (1 - pi)
            worst = max(worst, tot)
        return worst
