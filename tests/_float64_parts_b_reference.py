"""Independent 80-digit evaluations of the special functions of part B of the float64-parts audit, written from their
mathematical definitions (not by calling boundcalc's implementations). Used by tests/test_float64_parts_b.py and by
benchmarks/float64_parts_sweep.py.

Each ``ref_*`` returns an mpmath number (computed with ``mpmath.workdps(DIGITS)``) or None when the arguments are
beyond what the reference can evaluate in reasonable time. ``SAFE`` says on which side a certified value must be:
"le" (the function enters lower bounds: its reported value must not exceed the exact one), "ge" (upper side), or
"eq" (an exact quantity).
"""
from __future__ import annotations

import math

import mpmath

DIGITS = 80


def _pmf_window(n, p, lo, hi):
    """[P(Bin(n, p) = h) for h = lo..hi] (80 digits; log-gamma start, then the ratio recurrence)."""
    n, p = mpmath.mpf(n), mpmath.mpf(p)
    lo = int(lo)
    lp = (mpmath.loggamma(n + 1) - mpmath.loggamma(lo + 1) - mpmath.loggamma(n - lo + 1)
          + (lo * mpmath.log(p) if lo else 0) + (n - lo) * mpmath.log1p(-p))
    out = [mpmath.exp(lp)]
    r = p / (1 - p)
    for h in range(lo, int(hi)):
        out.append(out[-1] * (n - h) / (h + 1) * r)
    return out


def _g_dp(h, e, d):
    """(1 - δ_h)₊ sech²(εh/2), δ_h = δ(e^{εh} - 1)/(e^ε - 1)."""
    dh = d * mpmath.expm1(e * h) / mpmath.expm1(e) if d > 0 else 0
    return max(mpmath.mpf(0), 1 - dh) * mpmath.sech(e * h / 2) ** 2


def _g_tv(h, a):
    return max(mpmath.mpf(0), 1 - a * h)


def _kl_theta(a):
    """arccos(1 - α/4), the Bhattacharyya angle of a neighbour pair (π once α >= 8: BC >= -1 says nothing)."""
    return mpmath.acos(max(mpmath.mpf(-1), 1 - a / 4))


def _g_kl(h, a):
    theta = _kl_theta(a)
    return mpmath.cos(min(mpmath.pi / 2, h * theta)) ** 2


def _expect(g, n, p, cut, max_terms=40000):
    """E g(H), H ~ Bin(n, p), summed exactly over h <= cut within 40 sd (+40) of np (the dropped mass is below
    e^-700); None when that window has more than ``max_terms`` counts."""
    n, p = float(n), float(p)
    if p <= 0:
        return g(mpmath.mpf(0))
    if p >= 1:
        return g(mpmath.mpf(n)) if n <= cut else mpmath.mpf(0)
    mu, sd = n * p, math.sqrt(n * p * (1 - p))
    lo = max(0, math.floor(mu - 40 * sd - 40))
    hi = min(n, math.ceil(mu + 40 * sd + 40), cut)
    if hi < lo:
        return mpmath.mpf(0)
    if hi - lo + 1 > max_terms:
        return None
    pm = _pmf_window(n, p, lo, hi)
    return mpmath.fsum(pm[i] * g(mpmath.mpf(lo + i)) for i in range(len(pm)))


def ref_dp_affinity(n, p, e, d):
    with mpmath.workdps(DIGITS):
        e, d = mpmath.mpf(e), mpmath.mpf(d)
        cut = math.ceil(200 / float(e)) + 2  # sech² <= 4e^{-εh} < 1e-85 beyond
        if d > 0:
            cut = min(cut, math.ceil(float(mpmath.log1p(mpmath.expm1(e) / d) / e)) + 2)
        return _expect(lambda h: _g_dp(h, e, d), n, p, cut)


def ref_tv_affinity(n, p, a):
    with mpmath.workdps(DIGITS):
        a = mpmath.mpf(a)
        return _expect(lambda h: _g_tv(h, a), n, p, math.floor(1 / float(a)) + 1)


def ref_kl_affinity(n, p, a):
    with mpmath.workdps(DIGITS):
        a = mpmath.mpf(a)
        theta = _kl_theta(a)
        return _expect(lambda h: _g_kl(h, a), n, p, math.floor(float(mpmath.pi / 2 / theta)) + 1)


def _j(power, y):
    """∫_0^y (y - x) x^p/(1 + e^x) dx by Gauss–Legendre quadrature on [0, min(y, 400)] (the rest is below
    y² e^{-400})."""
    with mpmath.workdps(DIGITS):
        y = mpmath.mpf(y)
        if y == 0:
            return mpmath.mpf(0)
        top = min(y, mpmath.mpf(400))
        pts = [mpmath.mpf(0)] + [mpmath.mpf(x) for x in (0.25, 1, 3, 8, 20, 50, 120, 250) if x < top] + [top]
        return mpmath.quad(lambda x: (y - x) * x ** power / (1 + mpmath.exp(x)), pts, method="gauss-legendre")


def ref_j0(y):
    return _j(0, y)


def ref_j1(y):
    return _j(1, y)


def ref_coupled_g(power, z, n, e, max_n=60):
    """G_p(z; n, ε) = ∫_0^z (z-τ) τ^p Σ_{k<=kmax} b(k; n, τ) 2/(1+e^{εk}) dτ with boundcalc's truncation
    kmax = min(n, ceil(40/ε) + 20, 4000) (the truncated sum is the quantity the package computes; the dropped
    terms are >= 0), by quadrature in τ of the binomial sum; only for n <= max_n (None beyond)."""
    if n > max_n:
        return None
    kmax = int(min(n, math.ceil(40.0 / e) + 20, 4000))
    with mpmath.workdps(DIGITS):
        z, e, nn = mpmath.mpf(z), mpmath.mpf(e), int(n)
        f = [2 / (1 + mpmath.exp(e * k)) for k in range(kmax + 1)]
        binom = [mpmath.binomial(nn, k) for k in range(kmax + 1)]

        def integrand(t):
            s = mpmath.fsum(binom[k] * t ** k * (1 - t) ** (nn - k) * f[k] for k in range(kmax + 1))
            return (z - t) * t ** power * s
        return mpmath.quad(integrand, [0, z / 2, z], method="gauss-legendre")


def ref_gauss_loss(t):
    """ψ(t) = E(G - t)₊ = ∫_t^∞ (x - t) φ(x) dx = φ(t) ∫_0^∞ s e^{-ts - s²/2} ds (x = t + s; quadrature of an
    integrand of order one, so that its absolute error is a relative one), for t >= 0."""
    with mpmath.workdps(DIGITS):
        t = mpmath.mpf(t)
        phi = mpmath.exp(-t * t / 2) / mpmath.sqrt(2 * mpmath.pi)
        w = 1 / max(t, mpmath.mpf(1))  # the integrand's scale
        return phi * mpmath.quad(lambda s: s * mpmath.exp(-t * s - s * s / 2),
                                 [0, w, 5 * w, 20 * w, 60 * w, 200 * w, mpmath.inf])


def ref_l2_sphere(d):
    """1/E|u_1| for u uniform on the unit sphere of ℝ^d, from E|u_1| = ∫_{-1}^1 |x| (1-x²)^{(d-3)/2} dx /
    ∫_{-1}^1 (1-x²)^{(d-3)/2} dx = B(1, (d-1)/2)/B(1/2, (d-1)/2) (the beta integrals), for integer d >= 2."""
    with mpmath.workdps(DIGITS):
        d = int(d)
        if d == 1:
            return mpmath.mpf(1)
        a = mpmath.mpf(d - 1) / 2
        return mpmath.beta(mpmath.mpf(1) / 2, a) / mpmath.beta(1, a)


def ref_linf_c(d, e):
    """C_d(ε) from exact integer binomials (Python ints) and a 80-digit tanh."""
    with mpmath.workdps(DIGITS):
        d = int(math.floor(d))
        if d % 2 == 1:
            return mpmath.mpf(2 ** (d - 1)) / math.comb(d - 1, (d - 1) // 2)
        den = 2 ** (d - 1) - mpmath.mpf(math.comb(d, d // 2)) * mpmath.tanh(mpmath.mpf(e) / 2) / 2
        return den / math.comb(d - 1, d // 2)


def ref_knorm(m):
    """E||U||² by exact rational arithmetic (fractions) over the weights C(m,a)/((a-1)!(b-1)!)."""
    from fractions import Fraction

    m = int(m)
    if m == 1:
        return mpmath.mpf(0)
    num = den = Fraction(0)
    for a in range(1, m):
        b = m - a
        w = Fraction(math.comb(m, a), math.factorial(a - 1) * math.factorial(b - 1))
        num += w * (Fraction(2, a + 1) + Fraction(2, b + 1))
        den += w
    v = Fraction(m - 1, m + 1) * num / den
    with mpmath.workdps(DIGITS):
        return mpmath.mpf(v.numerator) / v.denominator


def ref_shared_budget(k, tp, tm, e):
    """β = E_N min{G(1 + τ(e^ε-1)) h(N), N KL(Bern θ₊ ‖ Bern θ₋)}, N ~ Bin(k, ½), summed over every N, with h(N) =
    sup_{a ∈ [e^{-ε}, 1]} min{A(a), N C(a)} maximised numerically (A concave, N C increasing: the sup is at the peak
    of A or at the crossing, found by bisection), G(t) = t f(t)/(t-1)², f(t) = t log t - t + 1."""
    k = int(k)
    if k > 3000:
        return None
    with mpmath.workdps(DIGITS):
        tp, tm, e = mpmath.mpf(tp), mpmath.mpf(tm), mpmath.mpf(e)
        tau, E = tp - tm, mpmath.exp(e)
        alpha2 = tau ** 2 / (tp * (1 - tp))
        A = lambda a: alpha2 * (a * E - 1) * (1 - a)  # noqa: E731
        C = lambda a: tau ** 2 * (E - 1) ** 2 * a ** 2  # noqa: E731
        t = 1 + tau * mpmath.expm1(e)
        G = t * (t * mpmath.log(t) - t + 1) / (t - 1) ** 2
        kl = tp * mpmath.log(tp / tm) + (1 - tp) * mpmath.log((1 - tp) / (1 - tm)) if tm > 0 else mpmath.inf
        astar = (E + 1) / (2 * E)
        tot = mpmath.mpf(0)
        for N in range(k + 1):
            if N == 0:
                continue
            if N * C(astar) >= A(astar):
                h = A(astar)
            else:  # crossing of A and N C on [a*, 1]
                lo, hi = astar, mpmath.mpf(1)
                for _ in range(300):
                    mid = (lo + hi) / 2
                    if N * C(mid) < A(mid):
                        lo = mid
                    else:
                        hi = mid
                h = N * C(lo)
            tot += mpmath.binomial(k, N) / mpmath.mpf(2) ** k * min(G * h, N * kl)
        return tot


def ref_collision_phi_lower(b, J, grid=3000):
    """A lower bound on h_b(J) (so a certified upper value must be at least it): h_b is the least concave
    nondecreasing majorant of the curve (K(u), Q(u)), so it lies above the upper concave hull of any finite set of
    curve points. The curve at about ``grid`` points u in [1/b, 1] and [0, 1/b) (80 digits), the upper hull of
    the points sorted by K (monotone chain) up to its highest point, interpolated at J (flat beyond)."""
    b = int(b)
    with mpmath.workdps(30):  # a lower bound: 30 digits are plenty for a comparison at 1e-6
        J = mpmath.mpf(J)
        lb, lb1 = mpmath.log(b), mpmath.log(b - 1)

        def K(u):
            t1 = u * (mpmath.log(u) + lb)
            v = 1 - u
            t2 = v * (mpmath.log(v) + lb - lb1) if v > 0 else 0
            return t1 + t2

        c = mpmath.mpf(1) / b
        us = set([c + (1 - c) * (mpmath.mpf(i) / grid) ** 3 for i in range(grid + 1)]
                 + [1 - mpmath.mpf(10) ** (-x / 10) for x in range(5, 150)]
                 + [mpmath.mpf(i) / grid for i in range(grid + 1)]  # uniform, the spike below 1/b too
                 + [c * (mpmath.mpf(i) / (grid // 3)) for i in range(grid // 3)])
        pts = sorted((K(u), u * u + (1 - u) ** 2 / (b - 1)) for u in us)
        hull = []
        for k, q in pts:
            while len(hull) >= 2 and ((hull[-1][0] - hull[-2][0]) * (q - hull[-2][1])
                                      - (hull[-1][1] - hull[-2][1]) * (k - hull[-2][0])) >= 0:
                hull.pop()
            hull.append((k, q))
        top = max(range(len(hull)), key=lambda i: hull[i][1])  # nondecreasing: flat after the highest vertex
        hull = hull[: top + 1]
        if J >= hull[-1][0]:
            return hull[-1][1]
        for (k1, q1), (k2, q2) in zip(hull, hull[1:]):
            if k1 <= J <= k2:
                return q1 + (q2 - q1) * (J - k1) / (k2 - k1)
        return hull[0][1]


def ref_subsample_size(a, n):
    """⌊a n⌋ from exact rationals of the float64 arguments."""
    from fractions import Fraction

    return mpmath.mpf(math.floor(Fraction(a) * Fraction(n)))


SAFE = {"DPAffinity": "le", "TVAffinity": "le", "KLAffinity": "le", "ThresholdJ0": "le", "ThresholdJ1": "le",
        "CoupledTestG0": "le", "CoupledTestG1": "le", "CollisionPhi": "ge", "SharedBudgetInfo": "ge",
        "KNormSecondMoment": "ge", "GaussLoss": "ge", "L2SphereConst": "ge", "LinfSamplingC": "ge",
        "SubsampleSize": "eq"}

REFERENCE = {
    "DPAffinity": ref_dp_affinity,
    "TVAffinity": ref_tv_affinity,
    "KLAffinity": ref_kl_affinity,
    "ThresholdJ0": ref_j0,
    "ThresholdJ1": ref_j1,
    "CoupledTestG0": lambda z, n, e: ref_coupled_g(0, z, n, e),
    "CoupledTestG1": lambda z, n, e: ref_coupled_g(1, z, n, e),
    "CollisionPhi": ref_collision_phi_lower,
    "SharedBudgetInfo": ref_shared_budget,
    "KNormSecondMoment": ref_knorm,
    "GaussLoss": ref_gauss_loss,
    "L2SphereConst": ref_l2_sphere,
    "LinfSamplingC": ref_linf_c,
    "SubsampleSize": ref_subsample_size,
}
