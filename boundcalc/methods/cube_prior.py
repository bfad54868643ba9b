"""Prior averages of score bounds on the hypercube family, for van Trees (docs/methods/van-trees.md,
docs/problems/mean.md).

Family: x ∈ {±1}^d independent, ``P(x_j = 1) = (1+u_j)/2``, score ``S_j = x_j/(1+u_j x_j)``. Under an
ε-LDP channel, at every u (Barnes–Chen–Özgür variance bound; the sub-Gaussian bound with the exact
Kearns–Saul proxy and the information bound ``I(X;Z) <= κ_ε`` of :mod:`.ldp_mutual_info`):

    Tr I_Z(u) <= s_ε max_j 1/(1-u_j²),      Tr I_Z(u) <= 2 κ_ε max_j σ²(u_j),   σ²(u) = u/((1-u²)² artanh u)

(σ²(u) is the optimal sub-Gaussian proxy of the centred two-valued S_j: range 2/(1-u²) times the
Kearns–Saul constant of Bernoulli((1-u)/2); σ²(0) = 1). Sub-Gaussian step: for each output z,
``λ⟨v, E[S|z]⟩ <= KL(P_{X|z}‖P_X) + λ²σ²/2`` (Donsker–Varadhan), so ``‖E[S|z]‖² <= 2σ² KL_z`` and
``Tr I_Z = E_z ‖E[S|z]‖² <= 2σ² I(X;Z) <= 2σ²κ_ε``.

van Trees needs only the prior average ``∫ Tr I_Z dμ``. For the product cos² prior on [-η, η]^d and an
increasing f, ``E max_j f(|u_j|) = f(0) + ∫_0^η f'(a) (1 - F(a)^d) da`` with
``F(a) = P(|u_j| <= a) = (a + (η/π) sin(πa/η))/η``. Near a = η, ``1 - F(a) ≈ (π²/(12η²))(η-a)³`` so the
integral is finite even at η = 1 (where f itself blows up): the prior may reach the vertices. The
integral is computed by adaptive quadrature (``scipy.integrate.quad``) and enlarged by its error estimate
plus a relative 1e-8 (tested against Monte Carlo), at η rounded up to the grid j/4096 (the average is
increasing in η: |u_j| is η times a fixed law).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from ..core import symbolic as S


def _f_var(a):
    return 1.0 / (1.0 - a * a)


def _fp_var(a):
    return 2.0 * a / (1.0 - a * a) ** 2


def sigma2_ks(a):
    """σ²(u) = u/((1-u²)² artanh u) (1 at u = 0), scalar."""
    return _f_ks(abs(float(a)))


def _f_ks(a):
    if a < 1e-4:
        return 1.0 + (5.0 / 3.0) * a * a  # series: 1 + 5a²/3 + O(a⁴)
    return a / ((1 - a * a) ** 2 * math.atanh(a))


def _fp_ks(a):
    if a < 1e-4:
        return (10.0 / 3.0) * a
    at = math.atanh(a)
    den = (1 - a * a) ** 2 * at
    dden = -4 * a * (1 - a * a) * at + (1 - a * a)
    return (den - a * dden) / den ** 2


def _one_minus_F(y: float, eta: float) -> float:
    """1 - F(η - y) = (y - (η/π) sin(πy/η))/η = (η/π)(t - sin t)/η, t = πy/η, with t - sin t by its series
    t³/6 - t⁵/120 + ... for t < 1/2 (the closed form F = (a + (η/π) sin(πa/η))/η rounds to 1 once
    1 - F < 1e-16, i.e. for η - a below about 1e-5 η, where at η = 1 the 'ks' integrand is still of order
    d/log(1/(η - a)): E max σ² at d = 1e5 came out 721.081 instead of 721.115, 4.7e-5 relatively low, on the
    unsafe side of an information bound)."""
    t = math.pi * y / eta
    if t < 0.5:
        t2 = t * t  # Horner form of Σ_{k>=1} (-1)^{k+1} t^{2k+1}/(2k+1)!, to t^15 (the rest is below 1e-19 of it)
        tms = t * t2 / 6 * (1 - t2 / 20 * (1 - t2 / 42 * (1 - t2 / 72 * (1 - t2 / 110 * (1 - t2 / 156 * (
            1 - t2 / 210))))))
        return tms / math.pi
    return (y - eta / math.pi * math.sin(t)) / eta


@lru_cache(maxsize=200000)
def expected_max(kind: str, d: int, eta: float) -> float:
    """E max_j f(|u_j|) under the product cos² prior on [-η, η]^d (f: 'var' 1/(1-u²), 'ks' σ²(u))."""
    from scipy import integrate

    f, fp = (_f_var, _fp_var) if kind == "var" else (_f_ks, _fp_ks)
    eta = float(eta)
    if not (0 < eta <= 1):
        return math.nan

    def g(a):
        if a >= 1.0:
            return 0.0
        tail = -math.expm1(d * math.log1p(-_one_minus_F(eta - a, eta))) if a > 0 else 1.0
        return fp(a) * tail

    pts = [eta * x for x in (0.5, 0.9, 0.99, 0.999)]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        val, err = integrate.quad(g, 0.0, eta, points=pts, limit=400, epsabs=1e-12, epsrel=1e-10)
    return (f(0.0) + val + abs(err)) * (1 + 1e-8)


def _eta_up(eta: float) -> float:
    """η rounded up to the grid j/4096 (capped at 1): |u_j| under the cos² prior on [-η, η] is η times a fixed
    law, so E max_j f(|u_j|) is increasing in η and the value at the rounded η is still an upper bound. (The
    slack 1e-9 keeps a grid point that η equals up to rounding; a grid point below η is raised by one step, so
    the result is never below η: η·4096 and j/4096 are exact in float64.)"""
    if not eta > 0:
        return eta
    j = math.ceil(eta * 4096 - 1e-9)
    if j / 4096 < eta:
        j += 1
    return min(1.0, j / 4096)


def _np(kind):
    def impl(d, eta):
        d, eta = np.broadcast_arrays(np.asarray(d, float), np.asarray(eta, float))
        out = np.empty(d.shape)
        for ix in np.ndindex(d.shape):
            out[ix] = expected_max(kind, int(round(float(d[ix]))), _eta_up(float(eta[ix])))
        return out if out.ndim else float(out)
    return impl


def _one_minus_F_mp(y, eta):
    """1 - F(η - y) = (y - (η/π) sin(πy/η))/η in mpmath, without the cancellation of y against the sine for
    small y (t - sin t by its series for t = πy/η < 1/2)."""
    import mpmath

    t = mpmath.pi * y / eta
    if t < 1e-4:
        term, total, k = t ** 3 / 6, mpmath.mpf(0), 0
        while abs(term) > mpmath.eps * abs(total) or k == 0:  # t - sin t = Σ_{k>=1} (-1)^{k+1} t^{2k+1}/(2k+1)!
            total += term
            k += 1
            term *= -t * t / ((2 * k + 2) * (2 * k + 3))
        return total / mpmath.pi
    if t < 0.5:  # the closed form cancels to t³/6: with as many extra bits as that costs
        with mpmath.extraprec(int(3 * -mpmath.log(t, 2)) + 10):
            return +((t - mpmath.sin(t)) / mpmath.pi)
    return (y - eta / mpmath.pi * mpmath.sin(t)) / eta


def _fp_mp(kind, a, one_minus_a):
    """f'(a) in mpmath, 1 - a given separately (exact for a near 1)."""
    import mpmath

    one_minus_a2 = one_minus_a * (1 + a)
    if kind == "var":
        return 2 * a / one_minus_a2 ** 2
    # σ² = r/(1-a²)² with r = a/artanh a, so (σ²)' = r'/(1-a²)² + 4a r/(1-a²)³ and
    # r' = (artanh a - a/(1-a²))/artanh² a; for a < 1e-3 the numerator by its series -Σ_{k>=1} 2k a^{2k+1}/(2k+1),
    # whose terms have one sign (the closed form cancels to a³ from terms of size a)
    at = (mpmath.log1p(a) - mpmath.log(one_minus_a)) / 2  # artanh a
    if a < 1e-3:
        a2, power, num, k = a * a, a ** 3, mpmath.mpf(0), 1
        while True:
            term = 2 * k * power / (2 * k + 1)
            num -= term
            if term <= mpmath.eps * abs(num):
                break
            power *= a2
            k += 1
    elif a < 0.5:  # the closed form cancels to about -2a³/3: with as many extra bits as that costs
        with mpmath.extraprec(int(2 * -mpmath.log(a, 2)) + 10):
            num = +((mpmath.log1p(a) - mpmath.log1p(-a)) / 2 - a / ((1 - a) * (1 + a)))
    else:
        num = at - a / one_minus_a2
    r = a / at
    return num / at ** 2 / one_minus_a2 ** 2 + 4 * a * r / one_minus_a2 ** 3


_MP_STORE = None


@lru_cache(maxsize=512)
def _expected_max_mp_cached(kind: str, d: int, eta: float, prec: int):
    """The mpmath value, memoised in memory and on disk as a decimal string of 20 digits more than the working
    precision (read back at the same precision: the same number up to its last bit; 0.2 s per quadrature)."""
    import mpmath

    from ..cache.diskcache import JsonStore

    global _MP_STORE
    if _MP_STORE is None:
        _MP_STORE = JsonStore("boundcalc.methods.cube_prior.expected_max_mp")
    key = repr((kind, d, eta, prec))
    stored = _MP_STORE.get(key)
    with mpmath.workprec(prec):
        if isinstance(stored, str):
            try:
                return mpmath.mpf(stored)
            except (ValueError, TypeError):
                pass
        value = _expected_max_quad_mp(kind, d, eta)
        _MP_STORE.put(key, mpmath.nstr(value, mpmath.mp.dps + 20, strip_zeros=False))
        return value


def _expected_max_quad_mp(kind: str, d: int, eta: float):
    """E max_j f(|u_j|) by tanh-sinh quadrature at the working precision (see :func:`expected_max_mp`)."""
    import mpmath

    e = mpmath.mpf(eta)
    one_minus_eta = 1 - e

    def g(y):  # the integrand at a = η - y
        if y <= 0:
            return mpmath.mpf(0)
        a = e - y
        tail = -mpmath.expm1(d * mpmath.log1p(-_one_minus_F_mp(y, e)))
        return _fp_mp(kind, a, one_minus_eta + y) * tail

    pts = [mpmath.mpf(0), e * mpmath.mpf("0.01"), e / 2, e]
    return 1 + mpmath.quad(g, pts)


def expected_max_mp(kind: str, d: int, eta: float):
    """E max_j f(|u_j|) in mpmath at the working precision: the same integral as :func:`expected_max`, written in
    y = η - a (1 - a = (1 - η) + y, 1 - F(a) without cancellation), by mpmath's tanh-sinh quadrature on the same
    breakpoints, not enlarged (the float64 value is enlarged by its error estimate and 1e-8)."""
    import mpmath

    if not (0 < eta <= 1):
        return mpmath.mpf("nan")
    return +_expected_max_mp_cached(kind, int(d), float(eta), mpmath.mp.prec)


def _mp(kind):
    def impl(d, eta):
        return expected_max_mp(kind, int(round(float(d))), _eta_up(float(eta)))
    return impl


class CubeMaxInvVar(sp.Function):
    """``CubeMaxInvVar(d, η) = E max_j 1/(1-u_j²)`` under the product cos² prior on [-η, η]^d."""

    nargs = 2


class CubeMaxSubGauss(sp.Function):
    """``CubeMaxSubGauss(d, η) = E max_j σ²(u_j)`` (Kearns–Saul proxy of the score) under the same prior."""

    nargs = 2


S.NUMPY_IMPL["CubeMaxInvVar"] = _np("var")
S.MPMATH_IMPL["CubeMaxInvVar"] = _mp("var")
S.NUMPY_IMPL["CubeMaxSubGauss"] = _np("ks")
S.MPMATH_IMPL["CubeMaxSubGauss"] = _mp("ks")
S.HIGH_PRECISION.update({"CubeMaxInvVar", "CubeMaxSubGauss"})  # mpmath quadrature at the working precision
