"""Special functions that used to keep their float64 value on the high-precision path (docs/engineering/
certified-floating-point.md): each float64 implementation against an 80-digit evaluation written here from the
mathematical definition (not by calling the implementation), at extreme ε (1e-9 … 50), n (1 … 1e15) and
δ (1e-12 … 0.5), and each high-precision (mpmath) implementation against the same reference.

Directions: an information bound (ErasedInfo, ErasedInfoSharp, GaussThresholdInfo, CubeMax*) and a calibration σ
(GaussSigmaAnalytic) must not be below their exact value; Ψ enters as 1 - Ψ in a lower bound; BinomTVComplement
as a factor of a lower bound. The float64 value must agree with the exact one to 1e-6 relatively (else the
certification check demotes the bound) and the mpmath value to 1e-30.
"""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from boundcalc.core import gauss_calibration as GC
from boundcalc.core import symbolic as S
from boundcalc.methods import cube_prior as CP
from boundcalc.methods import fisher as F
from boundcalc.methods import ldp_mutual_info as MI

DPS = 80


def _golden(f, lo, hi, iters=150):
    """max of a unimodal f on [lo, hi] (mpmath numbers), golden-section search (the test's own)."""
    g = (mpmath.sqrt(5) - 1) / 2
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = f(x1), f(x2)
    best = max(f(lo), f(hi), f1, f2)
    for _ in range(iters):
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


def _grid_then_golden(f, lo, hi, k=64):
    xs = [lo + (hi - lo) * i / k for i in range(k + 1)]
    vals = [f(x) for x in xs]
    i = max(range(len(xs)), key=lambda j: vals[j])
    return max(vals[i], _golden(f, xs[max(i - 1, 0)], xs[min(i + 1, k)]))


def _rel(a, b):
    with mpmath.workdps(DPS):
        return abs(mpmath.mpf(a) - b) / abs(b)


# ------------------------------------------------------------------ ErasedInfo: g(p, ε) = sup_a E φ(1 + λ(t - 1))

def _g_exact(p, eps):
    """sup over a in [e^{-ε}, 1] of E[x log x] at x = 1 + λ(t - 1), t = a e^ε w.p. w = (1-a)/(a(e^ε-1)), else a,
    λ = p/((1-p)a + p); the definition, with x log x summed directly (80 digits absorb the cancellation)."""
    with mpmath.workdps(DPS):
        p, e = mpmath.mpf(p), mpmath.mpf(eps)
        E = mpmath.exp(e)

        def G(a):
            w = (1 - a) / (a * (E - 1))
            lam = p / ((1 - p) * a + p)
            x1, x0 = 1 + lam * (a * E - 1), 1 + lam * (a - 1)
            return w * x1 * mpmath.log(x1) + (1 - w) * x0 * mpmath.log(x0)

        return _grid_then_golden(G, mpmath.exp(-e), mpmath.mpf(1))


ERASED_POINTS = [(p, e) for e in (1e-9, 2e-8, 1e-5, 1e-2, 0.3, 2.0, 8.0, 29.0) for p in (1.0, 0.37, 1e-3, 2e-7)]


@pytest.mark.parametrize("p,eps", ERASED_POINTS)
def test_erased_info_float64_and_mpmath_against_the_definition(p, eps):
    q = MI._p_grid_up(p)
    assert q >= p
    exact = _g_exact(q, eps)
    f = MI.erased_info_value(p, eps)
    assert f >= exact  # an information bound: never below the exact supremum
    assert _rel(f, exact) < 1e-6
    with mpmath.workdps(40):
        hp = S.MPMATH_IMPL["ErasedInfo"](p, eps)
    assert _rel(hp, exact) < 1e-30


def test_erased_info_at_p_one_is_kappa():
    """g(1, ε) = κ_ε = y - 1 - log y, y = ε/(1 - e^{-ε}) (Lemma A's maximum); the float64 value was 1.1e-8
    relatively below it at ε = 2e-8 (a(e^ε-1+1) - 1 in float64)."""
    for eps in (1e-9, 2e-8, 1e-6, 1e-3, 1.0, 20.0):
        with mpmath.workdps(DPS):
            e = mpmath.mpf(eps)
            y = e / (-mpmath.expm1(-e))
            kappa = y - 1 - mpmath.log(y)
        f = MI.erased_info_value(1.0, eps)
        assert f >= kappa and _rel(f, kappa) < 1e-6, eps


def test_p_grid_never_rounds_down():
    for j in range(-20000, 1, 997):
        g = math.exp(j / 1000)
        for p in (g, math.nextafter(g, 0), math.nextafter(g, 2), g * (1 + 5e-13), g * (1 + 1e-12)):
            if 0 < p <= 1:
                assert MI._p_grid_up(p) >= p, p


# ------------------------------------------------------------------ ErasedInfoSharp: the certified cell bound

def _phi_tilde_exact(x):
    return (1 + x) * mpmath.log1p(x) - x


def _sharp_cells_exact(p, eps, nb, na, top, sub):
    """erased_info_sharp_certified's cell bound with exact cells (the construction of its docstring, in mpmath)."""
    with mpmath.workdps(DPS):
        p, e = mpmath.mpf(p), mpmath.mpf(eps)
        E, em1 = mpmath.exp(e), mpmath.expm1(e)
        half = nb // 2
        edges = [mpmath.exp(-e + e * i / half) for i in range(half + 1)] + \
                [mpmath.exp(e * i / half) for i in range(1, half + 1)]

        def w(a):
            return (1 - a) / (a * em1)

        def cell(blo, al, ah):
            m = (1 - p) * blo + p
            return w(al) * m * _phi_tilde_exact(p * (ah * E - 1) / m) + (1 - w(ah)) * m * _phi_tilde_exact(p * (al - 1) / m)

        U = []
        for j in range(nb):
            blo, bhi = edges[j], edges[j + 1]
            alo, ahi = max(mpmath.exp(-e), blo / E), min(mpmath.mpf(1), bhi)
            ag = [mpmath.exp(mpmath.log(alo) + (mpmath.log(ahi) - mpmath.log(alo)) * k / na) for k in range(na + 1)]
            ag[0], ag[-1] = alo, ahi
            ua = [cell(blo, ag[k], ag[k + 1]) for k in range(na)]
            order = sorted(range(na), key=lambda k: ua[k])
            best = max(ua[k] for k in order[:-top])
            for k in order[-top:]:
                l0, l1 = mpmath.log(ag[k]), mpmath.log(ag[k + 1])
                fine = [mpmath.exp(l0 + (l1 - l0) * i / sub) for i in range(sub + 1)]
                fine[0], fine[-1] = ag[k], ag[k + 1]
                best = max(best, max(cell(blo, fine[i], fine[i + 1]) for i in range(sub)))
            U.append(max(best, mpmath.mpf(0)))
        out = mpmath.mpf(-1)
        for li in range(half):
            for ri in range(half, nb):
                diff = U[ri] - U[li]
                th = ((1 - edges[li]) / (edges[ri] - edges[li]) if diff > 0
                      else (1 - edges[li + 1]) / (edges[ri + 1] - edges[li + 1]))
                out = max(out, U[li] + th * diff)
        return out


@pytest.mark.parametrize("p,eps", [(1.0, 1e-9), (0.4, 2e-8), (0.05, 1e-4), (1.0, 0.1), (0.4, 3.0), (1e-3, 12.0),
                                   (0.9, 29.0)])
def test_erased_info_sharp_cells_against_exact_cells(p, eps):
    """The float64 cell computation (outward-rounded cells, stable forms) is never below the same computation
    with exact cells in exact arithmetic, and within 1e-6 of it (the 1e-9 margin of erased_info_sharp_value
    covers the rest). Before the fix, a e^ε - 1 rounded e^ε first: 2e-7 relatively low at ε = 1e-9."""
    nb, na, top, sub = 8, 6, 2, 3
    exact = _sharp_cells_exact(p, eps, nb, na, top, sub)
    f = MI.erased_info_sharp_certified(p, eps, nb, na, top, sub)
    assert f >= exact * (1 - 1e-14), (f, exact)
    assert _rel(f, exact) < 1e-6


# ------------------------------------------------------------------ PsiTildeInverse

def _psi_tilde_inverse_exact(y):
    """s in [0, 1] with ψ(√s) = y, ψ(t) = KL(Bern((1+t)/2) ‖ Bern(1/2)) = log 2 + ((1+t)/2) log((1+t)/2) +
    ((1-t)/2) log((1-t)/2), by bisection in s (the entropy form: no series, no φ̃)."""
    with mpmath.workdps(DPS + 40):
        y = mpmath.mpf(y)

        def psi(t):
            u, v = (1 + t) / 2, (1 - t) / 2
            return mpmath.log(2) + u * mpmath.log(u) + v * mpmath.log(v)

        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        for _ in range(400):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if psi(mpmath.sqrt(mid)) < y else (lo, mid)
        return +hi


@pytest.mark.parametrize("y", [1e-30, 3e-17, 1e-9, 2e-4, 0.01, 0.2, 0.5, 0.69, 0.6931])
def test_psi_tilde_inverse_against_the_entropy(y):
    exact = _psi_tilde_inverse_exact(y)
    f = float(MI.psi_tilde_inverse_np(y))
    assert _rel(f, exact) < 1e-6
    assert f >= exact  # rounded up: Ψ enters the lower bound as 1 - Ψ
    with mpmath.workdps(40):
        hp = S.MPMATH_IMPL["PsiTildeInverse"](y)
    assert _rel(hp, exact) < 1e-30


# ------------------------------------------------------------------ GaussThresholdInfo

def _gauss_threshold_exact(eps):
    with mpmath.workdps(DPS):
        c = mpmath.exp(mpmath.mpf(eps)) - 1

        def v(t):
            return c * mpmath.exp(-t * t / 2) / mpmath.sqrt(2 * mpmath.pi) / (1 + c * mpmath.erfc(t / mpmath.sqrt(2)) / 2)

        best = _grid_then_golden(v, mpmath.mpf(-3), mpmath.sqrt(2 * mpmath.mpf(eps)) + 6, k=400)
        return best * best


@pytest.mark.parametrize("eps", [1e-9, 1e-5, 0.01, 0.5, 2.0, 10.0, 50.0])
def test_gauss_threshold_info_against_the_definition(eps):
    exact = _gauss_threshold_exact(eps)
    f = F.gauss_threshold_info_scalar(eps)
    assert f >= exact and _rel(f, exact) < 1e-6
    with mpmath.workdps(40):
        hp = S.MPMATH_IMPL["GaussThresholdInfo"](eps)
    assert _rel(hp, exact) < 1e-30


# ------------------------------------------------------------------ GaussSigmaAnalytic

def _sigma_exact(eps, dl):
    """The root of Φ(1/(2σ) - εσ) - e^ε Φ(-1/(2σ) - εσ) = δ (Balle & Wang 2018, Thm 8), by bisection in σ."""
    with mpmath.workdps(DPS):
        e, d = mpmath.mpf(eps), mpmath.mpf(dl)

        def delta_of(s):
            return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s)

        lo, hi = mpmath.mpf(10) ** -6, mpmath.mpf(1)
        while delta_of(hi) > d:
            hi *= 2
        for _ in range(400):
            mid = mpmath.sqrt(lo * hi)
            lo, hi = (mid, hi) if delta_of(mid) > d else (lo, mid)
        return +hi


@pytest.mark.parametrize("eps,dl", [(1e-9, 1e-12), (1e-4, 1e-6), (0.1, 1e-12), (0.5, 1e-5), (2.0, 0.5),
                                    (10.0, 1e-12), (50.0, 1e-6), (1.0, 0.49)])
def test_gauss_sigma_analytic_against_the_definition(eps, dl):
    exact = _sigma_exact(eps, dl)
    f = S.gauss_sigma_analytic_scalar(eps, dl)
    assert f >= exact and _rel(f, exact) < 1e-6  # σ rounded up: the mechanism is at least as private
    with mpmath.workdps(40):
        hp = S.MPMATH_IMPL["GaussSigmaAnalytic"](eps, dl)
    assert _rel(hp, exact) < 1e-30


# ------------------------------------------------------------------ BinomTVComplement

def _tv_complement_exact(n, q1, q2):
    """Σ_k min(P(Bin(n,q1) = k), P(Bin(n,q2) = k)) = 1 - TV, term by term."""
    with mpmath.workdps(DPS):
        a, b = mpmath.mpf(q1), mpmath.mpf(q2)
        return mpmath.fsum(mpmath.binomial(n, k) * min(a ** k * (1 - a) ** (n - k), b ** k * (1 - b) ** (n - k))
                           for k in range(n + 1))


@pytest.mark.parametrize("n,h", [(1, 0.3), (7, 1e-9), (40, 0.05), (300, 0.02), (1000, 0.5), (1500, 1e-6)])
def test_binomial_tv_complement_against_the_sum(n, h):
    q1, q2 = (1 - h) / 2, (1 + h) / 2
    exact = _tv_complement_exact(n, q1, q2)
    f = float(S._binom_tv_complement(n, q1, q2))
    assert _rel(f, exact) < 1e-12
    with mpmath.workdps(40):
        hp = S.MPMATH_IMPL["BinomTVComplement"](mpmath.mpf(n), mpmath.mpf(q1), mpmath.mpf(q2))
    assert _rel(hp, exact) < 1e-30


# ------------------------------------------------------------------ CubeMaxInvVar, CubeMaxSubGauss

def _cube_max_exact(kind, d, eta):
    """E max_j f(|u_j|) = ∫_0^η f(a) d(F(a)^d) (the density form, not the tail form of the implementation),
    F(a) = (a + (η/π) sin(πa/η))/η, dF = (1 + cos(πa/η))/η da = 2 sin²(π(η-a)/(2η))/η da, written in y = η - a."""
    with mpmath.workdps(DPS):
        e = mpmath.mpf(eta)

        def f(a, one_minus_a):
            if kind == "var":
                return 1 / (one_minus_a * (1 + a))
            return a / ((one_minus_a * (1 + a)) ** 2 * (mpmath.log1p(a) - mpmath.log(one_minus_a)) / 2)

        def integrand(y):
            a = e - y
            if a <= 0:
                return mpmath.mpf(0) if kind == "var" else mpmath.mpf(0)
            Fa = (a + e / mpmath.pi * mpmath.sin(mpmath.pi * a / e)) / e
            dF = 2 * mpmath.sin(mpmath.pi * y / (2 * e)) ** 2 / e
            return f(a, (1 - e) + y) * d * Fa ** (d - 1) * dF

        # P(max = 0) = 0 for the continuous prior; f(0) = 1 for both kinds
        return mpmath.quad(integrand, [0, e * mpmath.mpf("0.001"), e * mpmath.mpf("0.1"), e / 2, e])


@pytest.mark.parametrize("kind,d,eta", [("var", 1, 1.0), ("var", 1000, 1.0), ("var", 3, 0.25), ("ks", 1, 1.0),
                                        ("ks", 100000, 1.0), ("ks", 5, 0.01)])
def test_cube_max_against_the_density_form(kind, d, eta):
    exact = _cube_max_exact(kind, d, eta)
    f = CP.expected_max(kind, d, eta)
    assert f >= exact and _rel(f, exact) < 1e-6  # an information bound: never below (was 4.7e-5 low at d = 1e5)
    with mpmath.workdps(40):
        hp = CP.expected_max_mp(kind, d, eta)
    assert _rel(hp, exact) < 1e-30


def test_eta_grid_never_rounds_down():
    for j in range(1, 4097, 37):
        g = j / 4096
        for eta in (g, math.nextafter(g, 0), math.nextafter(g, 2), g + 2e-13, g + 1e-12):
            if 0 < eta <= 1:
                assert CP._eta_up(eta) >= eta, eta


# ------------------------------------------------------------------ the bounds that use them

def _bayes_vertices_exact(n, eps, p):
    """The erased-vertex bound (d = 1, r = 1, the ℓ2 family): p(1 - Ψ(I)), I the min of its five informations,
    with g and Ψ from this file's references and g* the float64 certified value (a documented float64 part)."""
    with mpmath.workdps(DPS):
        P, e, N = mpmath.mpf(p), mpmath.mpf(eps), mpmath.mpf(n)
        y = e / (-mpmath.expm1(-e))
        kappa = e ** 2 / 8 if eps < 0.01 else y - 1 - mpmath.log(y)
        infos = [N * _g_exact(MI._p_grid_up(p), eps), N * mpmath.mpf(MI.erased_info_sharp_value(p, eps)),
                 -mpmath.log(2) * mpmath.expm1(N * mpmath.log1p(-P)), N * P * kappa,
                 2 * N * P ** 2 * mpmath.tanh(e / 2) * mpmath.expm1(e)]
        return P * (1 - _psi_tilde_inverse_exact(min(infos)))


@pytest.mark.parametrize("eps,n", [(2e-8, 1e15), (1e-9, 1e15), (0.5, 1e3)])
def test_bayes_vertices_certified_value_is_not_above_its_formula(eps, n):
    """Regression: at ε = 2e-8, n = 1e15 bayes-vertices was certified at 0.9016781227344286 while its formula
    is 0.90167812165650 (ErasedInfo 1.1e-8 low in float64, and a float64 part on the mpmath path)."""
    import boundcalc

    res = boundcalc.rate("mean", privacy="local", eps=eps, n=n)
    b = next(x for x in res.lowers if x.name == "bayes-vertices")
    assert b.certified
    exact = _bayes_vertices_exact(n, eps, b.free_parameters["p_erase"])
    assert b.value <= exact, (b.value, exact)
    assert _rel(b.value, exact) < 1e-6


def test_an_inapplicable_bound_is_never_listed_certified():
    """gauss-classical needs ε < 1: at ε = 2 it has no value and must read "not applicable", not certified."""
    import boundcalc

    d = boundcalc.rate("mean", privacy="approx", eps=2).to_dict()
    rows = {b["name"]: b for b in d["lowers"] + d["uppers"]}
    g = rows["gauss-classical"]
    assert g["value"] is None and g["certified"] is False and g["status"] == "not applicable"
    assert g["failed_conditions"]
    for b in rows.values():
        assert not (b["certified"] and b["value"] is None)
        assert b["status"] in ("certified", "not certified", "not applicable", "no value")


# ------------------------------------------------------------------ ThresholdCoupling

def _binom_pmf_exact(n, p):
    P = mpmath.mpf(p)
    return [mpmath.binomial(n, k) * P ** k * (1 - P) ** (n - k) for k in range(n + 1)]


def _knapsack_exact(n, p, eps, a):
    """max over g >= 0 with Σ_h P(H=h) g_h = a of Σ_h P(H=h) min{1, e^{εh} g_h}, H ~ Bin(n, p): fill the levels
    from h = n down (a unit of g buys e^{εh} there), each saturating at g_h = e^{-εh} (the greedy optimum)."""
    with mpmath.workdps(DPS):
        pmf, e, budget, val = _binom_pmf_exact(n, p), mpmath.mpf(eps), mpmath.mpf(a), mpmath.mpf(0)
        for h in range(n, -1, -1):
            cost = pmf[h] * mpmath.exp(-e * h)
            if cost <= budget:
                budget -= cost
                val += pmf[h]
            else:
                val += budget * mpmath.exp(e * h)
                break
        return min(val, mpmath.mpf(1))


def _threshold_min_exact(n, p, eps, a, dl):
    """min over every M in 0..n of P(H > M) + e^{εM} a + δ(e^{εM} - 1)/(e^ε - 1), clipped at 1."""
    with mpmath.workdps(DPS):
        pmf, e = _binom_pmf_exact(n, p), mpmath.mpf(eps)
        best = mpmath.mpf(1)
        for M in range(n + 1):
            best = min(best, mpmath.fsum(pmf[M + 1:]) + mpmath.exp(e * M) * a + dl * mpmath.expm1(e * M) / mpmath.expm1(e))
        return best


@pytest.mark.parametrize("n,p,eps,a", [(60, 0.01, 1.0, 1e-3), (200, 0.02, 0.3, 1e-5), (30, 0.3, 0.05, 0.2),
                                       (120, 1e-4, 5.0, 1e-12)])
def test_threshold_coupling_pure_is_the_knapsack(n, p, eps, a):
    from boundcalc.methods import group_coupling as GCp

    with mpmath.workdps(DPS):
        a_exact = mpmath.exp(mpmath.mpf(math.log(a)))  # the function's argument is the float64 log a
    exact = _knapsack_exact(n, p, eps, a_exact)
    f = float(GCp._threshold_coupling_numpy(n, p, eps, math.log(a), 0.0))
    assert f >= exact and _rel(f, exact) < 1e-6  # an upper bound on P_v(A)
    with mpmath.workdps(40):
        hp = GCp._threshold_coupling_mpmath(n, p, eps, math.log(a), 0.0)
    assert _rel(hp, exact) < 1e-30


@pytest.mark.parametrize("n,p,eps,a,dl", [(60, 0.01, 1.0, 1e-3, 1e-6), (200, 0.05, 0.3, 1e-4, 1e-12),
                                          (40, 0.2, 2.0, 1e-6, 0.01)])
def test_threshold_coupling_approx_not_below_the_best_threshold(n, p, eps, a, dl):
    from boundcalc.methods import group_coupling as GCp

    with mpmath.workdps(DPS):
        exact = _threshold_min_exact(n, p, eps, mpmath.exp(mpmath.mpf(math.log(a))), mpmath.mpf(dl))
    f = float(GCp._threshold_coupling_numpy(n, p, eps, math.log(a), dl))
    with mpmath.workdps(40):
        hp = GCp._threshold_coupling_mpmath(n, p, eps, math.log(a), dl)
    assert f >= exact and hp >= exact * (1 - mpmath.mpf(10) ** -35)
    assert _rel(f, hp) < 1e-6


# ------------------------------------------------------------------ CouplingMin (float64 part with stated margins)

@pytest.mark.parametrize("n,p,eps,a,dl", [(50, 0.02, 1.0, 1e-3, 0.0), (400, 0.01, 0.2, 1e-6, 1e-9), (30, 0.5, 3.0, 1e-9, 0.0),
                                          (2000, 1e-3, 1e-3, 0.3, 1e-12), (100, 0.9, 0.01, 0.5, 0.4)])
def test_coupling_min_against_the_sum(n, p, eps, a, dl):
    """E min{1, e^{εH} a + δ(e^{εH} - 1)/(e^ε - 1)}, H ~ Bin(n, p), summed term by term at 80 digits: the float64
    value (kept on the mpmath path beyond 3000 counts, with the margins of group_coupling) is not below it."""
    from boundcalc.methods import group_coupling as GCp

    with mpmath.workdps(DPS):
        A = mpmath.exp(mpmath.mpf(math.log(a)))
        e, D = mpmath.mpf(eps), mpmath.mpf(dl)
        exact = mpmath.fsum(w * min(mpmath.mpf(1), mpmath.exp(e * h) * A + D * mpmath.expm1(e * h) / mpmath.expm1(e))
                            for h, w in enumerate(_binom_pmf_exact(n, p)))
    f = float(GCp._coupling_min_numpy(float(n), p, eps, math.log(a), dl))
    assert f >= exact and _rel(f, exact) < 1e-6
