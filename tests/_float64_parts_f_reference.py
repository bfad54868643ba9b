"""Independent references for part F of the float64-parts audit (docs/engineering/certified-floating-point.md):
written from the definitions (the mechanism, the binomial law, the block laws of subsample-and-aggregate) in
mpmath or by exact enumeration, not by calling the code under test.

- :func:`subset_constants_ref`: p*, q*, D = p* - q* of subset selection (Ye & Barg 2018) at high precision.
- :func:`subset_exact_risks`: the exact risk E‖Π_Δ(y) - θ‖₂² and E‖Π_Δ(y) - θ‖₁ of projected subset selection, by
  enumerating the multinomial counts of the C(d, s) possible reports (40-digit probabilities and loss).
- :func:`subset_exact_risks_f64`: the same enumeration vectorised in float64 (log-space multinomial weights), for
  sizes where mpmath is too slow; checked against :func:`subset_exact_risks` to 1e-12 in the tests.
- :func:`binom_sf_ref`, :func:`binom_cdf_ref`, :func:`binom_pmf_ref`: binomial tails at 40 digits (mpmath's
  regularised incomplete beta where its series converges, else a direct pmf sum from the boundary outward).
- :func:`clip_hinge_ref`: A = E(a - Y)₊ and C = E(Y - b)₊ of one block estimate Y of subsample-and-aggregate for
  the five point models, at 50 digits.
"""
from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np

DPS = 40


# ------------------------------------------------------------------------------------------ subset selection

def subset_constants_ref(eps, d: int, s: int, dps: int = DPS):
    """(p*, q*, D) of subset selection with subset size s at ``dps`` digits: every s-subset containing the user's
    symbol has probability e^ε/Z, every other 1/Z (Z = C(d-1, s-1) e^ε + C(d-1, s)), so the symbol is reported
    with p* = C(d-1, s-1) e^ε/Z = s e^ε/(s e^ε + d - s) and another given symbol with
    q* = (C(d-2, s-2) e^ε + C(d-2, s-1))/Z; D = p* - q*."""
    with mpmath.workdps(dps + 10):
        e = mpmath.exp(mpmath.mpf(eps))
        Z = math.comb(d - 1, s - 1) * e + math.comb(d - 1, s)
        ps = math.comb(d - 1, s - 1) * e / Z
        qs = ((math.comb(d - 2, s - 2) if s >= 2 else 0) * e + math.comb(d - 2, s - 1)) / Z
        return +ps, +qs, ps - qs


def subsets(d: int, s: int):
    return list(itertools.combinations(range(d), s))


def report_probabilities(theta, eps, d: int, s: int, dps: int = DPS):
    """P(report = S) for every s-subset S (lexicographic order) under the symbol law θ: Σ_x θ_x w(S, x)/Z with
    w = e^ε if x ∈ S else 1."""
    with mpmath.workdps(dps + 10):
        e = mpmath.exp(mpmath.mpf(eps))
        Z = math.comb(d - 1, s - 1) * e + math.comb(d - 1, s)
        th = [mpmath.mpf(x) for x in theta]
        return [sum((e if x in S else 1) * th[x] for x in range(d)) / Z for S in subsets(d, s)]


def project_simplex_mp(y):
    """Euclidean projection onto the probability simplex (sort, the largest ρ with u_ρ - (Σ_{i<=ρ} u_i - 1)/ρ > 0)."""
    u = sorted(y, reverse=True)
    css, tau = 0, None
    for r, ui in enumerate(u, start=1):
        css += ui
        t = (css - 1) / r
        if ui - t > 0:
            tau = t
    return [max(yi - tau, 0) for yi in y]


def compositions(n: int, K: int) -> np.ndarray:
    """Every (c_1..c_K) of nonnegative integers with sum n (stars and bars), an int array (M, K)."""
    bars = np.array(list(itertools.combinations(range(n + K - 1), K - 1)), dtype=np.int64).reshape(-1, K - 1)
    ext = np.concatenate([np.full((bars.shape[0], 1), -1), bars, np.full((bars.shape[0], 1), n + K - 1)], axis=1)
    return np.diff(ext, axis=1) - 1


def subset_exact_risks(n: int, eps, d: int, s: int, thetas, dps: int = 30):
    """[(E‖Π_Δ(y) - θ‖₂², E‖Π_Δ(y) - θ‖₁) for θ in thetas] for projected subset selection: each of n users reports
    an s-subset (:func:`report_probabilities`), N_j = #{users whose report contains j}, y_j = (N_j/n - q*)/D with
    the exact constants, p̂ = Π_Δ(y). Exact: a sum over the multinomial counts of the C(d, s) reports (mpmath)."""
    S = subsets(d, s)
    inc = np.array([[1 if j in T else 0 for j in range(d)] for T in S], dtype=np.int64)
    comps = compositions(n, len(S))
    with mpmath.workdps(dps):
        # unary + rounds to the working precision: mpmath's log of an mpf carrying more bits than the context
        # was wrong (log of 0.25 at 169 bits gave 2.7e-51 at 30 digits, mpmath 1.3.0)
        _, qs, D = (+v for v in subset_constants_ref(eps, d, s, dps))
        lf = [mpmath.loggamma(k + 1) for k in range(n + 1)]
        logP = []
        for th in thetas:
            P = [+p for p in report_probabilities(th, eps, d, s, dps)]
            logP.append([mpmath.log(p) if p > 0 else None for p in P])
        ths = [[mpmath.mpf(x) for x in th] for th in thetas]
        proj = {}
        acc = [[mpmath.mpf(0), mpmath.mpf(0)] for _ in thetas]
        nn = mpmath.mpf(n)
        for c in comps.tolist():
            N = tuple(int(v) for v in np.asarray(c) @ inc)
            if N not in proj:
                proj[N] = project_simplex_mp([(Nj / nn - qs) / D for Nj in N])
            ph = proj[N]
            base = lf[n] - sum(lf[k] for k in c)
            for i, lp in enumerate(logP):
                if any(ck > 0 and lp[j] is None for j, ck in enumerate(c)):
                    continue
                w = mpmath.exp(base + sum(ck * lp[j] for j, ck in enumerate(c) if ck))
                diff = [ph[j] - ths[i][j] for j in range(d)]
                acc[i][0] += w * sum(x * x for x in diff)
                acc[i][1] += w * sum(abs(x) for x in diff)
        return [(a[0], a[1]) for a in acc]


def _project_rows(v: np.ndarray) -> np.ndarray:
    u = -np.sort(-v, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    r = np.arange(1, v.shape[1] + 1)
    ok = u - css / r > 0
    rho = v.shape[1] - 1 - np.argmax(ok[:, ::-1], axis=1)
    tau = css[np.arange(v.shape[0]), rho] / (rho + 1)
    return np.maximum(v - tau[:, None], 0.0)


def subset_exact_risks_f64(n: int, eps, d: int, s: int, thetas):
    """:func:`subset_exact_risks` in float64 (the constants and report probabilities from 40-digit values, the
    multinomial weights in log space, the projection and loss vectorised): a sum of nonnegative terms, accurate to
    about 1e-12 relatively (the tests compare it with the 40-digit sum)."""
    from scipy.special import gammaln

    S = subsets(d, s)
    inc = np.array([[1.0 if j in T else 0.0 for j in range(d)] for T in S])
    comps = compositions(n, len(S))
    _, qs, D = (float(v) for v in subset_constants_ref(eps, d, s))
    N = comps @ inc
    keys, inv = np.unique(N, axis=0, return_inverse=True)
    ph = _project_rows((keys / n - qs) / D)[inv.ravel()]
    base = gammaln(n + 1.0) - gammaln(comps + 1.0).sum(axis=1)
    out = []
    for th in thetas:
        P = np.array([float(p) for p in report_probabilities(th, eps, d, s)])
        with np.errstate(divide="ignore"):
            lp = np.log(P)
        terms = np.where(comps > 0, comps * lp[None, :], 0.0).sum(axis=1)
        w = np.exp(base + terms)
        diff = ph - np.asarray(th, float)[None, :]
        out.append((float(np.sum(w * (diff ** 2).sum(axis=1))), float(np.sum(w * np.abs(diff).sum(axis=1)))))
    return out


def simplex_grid(d: int, extra_random: int = 0, seed: int = 0):
    """θ points: the uniform law, the vertices, the edge midpoints, the centres of the faces of every size, the
    points (1-γ)u + γe_1 (γ = 0.25, 0.5, 0.75) and ``extra_random`` Dirichlet(1) draws."""
    pts = set()
    for k in range(1, d + 1):
        for T in itertools.combinations(range(d), k):
            pts.add(tuple(1.0 / k if j in T else 0.0 for j in range(d)))
    for g in (0.25, 0.5, 0.75):
        pts.add(tuple((1 - g) / d + (g if j == 0 else 0.0) for j in range(d)))
    out = sorted(pts)
    rng = np.random.default_rng(seed)
    out += [tuple(x) for x in rng.dirichlet(np.ones(d), size=extra_random)]
    return out


# ------------------------------------------------------------------------------------------ binomial tails

def binom_pmf_ref(k, n, p, dps: int = DPS):
    with mpmath.workdps(dps + 10):
        k, n, p = int(k), int(n), mpmath.mpf(p)
        if k < 0 or k > n:
            return mpmath.mpf(0)
        return mpmath.binomial(n, k) * p ** k * (1 - p) ** (n - k)


def _pmf_sum(k0, n, p, step, dps):
    """Σ_{j = k0, k0 + step, ...} P(Bin(n, p) = j) (step ±1), from the pmf at k0 by the ratio recurrence, until
    the terms fall below 10^-(dps+10) of the sum."""
    with mpmath.workdps(dps + 15):
        n, p = int(n), mpmath.mpf(p)
        j = int(k0)
        lt = (mpmath.loggamma(n + 1) - mpmath.loggamma(j + 1) - mpmath.loggamma(n - j + 1) + j * mpmath.log(p)
              + (n - j) * mpmath.log1p(-p))
        term = mpmath.exp(lt)
        tot = mpmath.mpf(0)
        r = p / (1 - p)
        tiny = mpmath.mpf(10) ** -(dps + 10)
        while 0 <= j <= n:
            tot += term
            if term < tiny * tot and ((step > 0 and j > n * p) or (step < 0 and j < n * p)):
                break
            term = term * ((n - j) / mpmath.mpf(j + 1) * r if step > 0 else j / mpmath.mpf(n - j + 1) / r)
            j += step
        return tot


def binom_sf_ref(k, n, p, dps: int = DPS):
    """P(Bin(n, p) > k) at ``dps`` digits."""
    k, n = int(k), int(n)
    if k < 0:
        return mpmath.mpf(1)
    if k >= n:
        return mpmath.mpf(0)
    if n <= 3000:
        with mpmath.workdps(dps + 10):
            return mpmath.betainc(k + 1, n - k, 0, mpmath.mpf(p), regularized=True)
    if k + 1 >= n * p:  # the upper side, summed upward
        return _pmf_sum(k + 1, n, p, 1, dps)
    with mpmath.workdps(dps + 30):
        return 1 - _pmf_sum(k, n, p, -1, dps + 20)


def binom_cdf_ref(k, n, p, dps: int = DPS):
    """P(Bin(n, p) <= k) at ``dps`` digits."""
    k, n = int(k), int(n)
    if k < 0:
        return mpmath.mpf(0)
    if k >= n:
        return mpmath.mpf(1)
    if n <= 3000:
        with mpmath.workdps(dps + 10):
            return mpmath.betainc(k + 1, n - k, mpmath.mpf(p), 1, regularized=True)
    if k <= n * p:
        return _pmf_sum(k, n, p, -1, dps)
    with mpmath.workdps(dps + 30):
        return 1 - _pmf_sum(k + 1, n, p, 1, dps + 20)


# ------------------------------------------------------------------------------------------ clipping bias

def _upper_gamma(s, x):
    return mpmath.gammainc(s, x, mpmath.inf, regularized=True)


def _lower_gamma(s, x, dps):
    """P(Gamma(s, 1) < x) to ``dps`` digits: mpmath's lower series where it converges, else 1 - the upper one at
    enough extra digits."""
    if s < 1e4 or x < s - 5 * mpmath.sqrt(s):
        try:
            return mpmath.gammainc(s, 0, x, regularized=True)
        except mpmath.libmp.NoConvergence:
            pass
    with mpmath.workdps(20):
        q = 1 - _upper_gamma(s, x)
    extra = 400 if q <= 0 else max(0, int(-mpmath.log10(q))) + 10
    with mpmath.workdps(dps + extra):
        v = 1 - _upper_gamma(s, x)
    return +v


def _count_hinge(model, th, t, c, lower, dps):
    """E(c - S/t)₊ (``lower``) or E(S/t - c)₊ for S ~ Bin(t, θ) (bernoulli) or Poisson(tθ): a direct pmf sum from
    the boundary outward, until the terms fall below 10^-(dps+10) of the sum."""
    t = mpmath.mpf(t)
    if model == "bernoulli":
        def logpmf(k):
            return (mpmath.loggamma(t + 1) - mpmath.loggamma(k + 1) - mpmath.loggamma(t - k + 1) + k * mpmath.log(th)
                    + (t - k) * mpmath.log1p(-th))

        def up(k):  # pmf(k+1)/pmf(k)
            return (t - k) / (k + 1) * th / (1 - th)
        kmax = t
    else:
        mu = t * th

        def logpmf(k):
            return -mu + k * mpmath.log(mu) - mpmath.loggamma(k + 1)

        def up(k):
            return mu / (k + 1)
        kmax = mpmath.inf
    tiny = mpmath.mpf(10) ** -(dps + 10)
    tot = mpmath.mpf(0)
    if lower:
        k = mpmath.ceil(c * t) - 1
        if k < 0:
            return tot
        k = min(k, kmax)
        p = mpmath.exp(logpmf(k))
        while k >= 0:
            term = (c - k / t) * p
            tot += term
            if term < tiny * tot or k == 0:
                break
            p, k = p / up(k - 1), k - 1
        return tot
    k = mpmath.floor(c * t) + 1
    if k > kmax:
        return tot
    p = mpmath.exp(logpmf(k))
    while k <= kmax:
        term = (k / t - c) * p
        tot += term
        if term < tiny * tot:
            break
        p, k = p * up(k), k + 1
    return tot


def clip_hinge_ref(model: str, th, t, a, b, sigma=1.0, dps: int = 50):
    """(A, C) = (E(a - Y)₊, E(Y - b)₊) of one block estimate Y of t points at ``dps`` digits:
    exponential Y = (t-1)/S, S ~ Gamma(t, rate θ): A = a P(S > x) - θ P(S' > x), x = (t-1)/a, S' ~ Gamma(t-1, θ)
    (E[1/S; S > x] = θ/(t-1) P(S' > x)); normal-var Y = θW/t, W ~ χ²_t (E[W; W < c] = t P(χ²_{t+2} < c));
    normal-mean Y ~ N(θ, σ²/t): A = s ψ((θ-a)/s), ψ(z) = φ(z) - z(1 - Φ(z)); bernoulli and poisson Y = S/t: direct
    pmf sums. a <= 0 gives A = 0 for the positive models (Y > 0)."""
    with mpmath.workdps(dps):
        th, a, b, t = mpmath.mpf(th), mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(t)
        if model == "exponential":
            A = mpmath.mpf(0) if a <= 0 else (a * _upper_gamma(t, th * (t - 1) / a)
                                              - th * _upper_gamma(t - 1, th * (t - 1) / a))
            x = th * (t - 1) / b
            C = th * _lower_gamma(t - 1, x, dps) - b * _lower_gamma(t, x, dps)
        elif model == "normal-var":
            A = mpmath.mpf(0) if a <= 0 else (a * _lower_gamma(t / 2, a * t / (2 * th), dps)
                                              - th * _lower_gamma(t / 2 + 1, a * t / (2 * th), dps))
            x = b * t / (2 * th)
            C = th * _upper_gamma(t / 2 + 1, x) - b * _upper_gamma(t / 2, x)
        elif model == "normal-mean":
            s = mpmath.mpf(sigma) / mpmath.sqrt(t)

            def psi(z):
                return mpmath.npdf(z) - z * mpmath.ncdf(-z)
            A, C = s * psi((th - a) / s), s * psi((b - th) / s)
        else:
            A = _count_hinge(model, th, t, a, True, dps) if a > 0 else mpmath.mpf(0)
            C = _count_hinge(model, th, t, b, False, dps)
        return +A, +C
