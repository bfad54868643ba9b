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


@lru_cache(maxsize=200000)
def expected_max(kind: str, d: int, eta: float) -> float:
    """E max_j f(|u_j|) under the product cos² prior on [-η, η]^d (f: 'var' 1/(1-u²), 'ks' σ²(u))."""
    from scipy import integrate

    f, fp = (_f_var, _fp_var) if kind == "var" else (_f_ks, _fp_ks)
    eta = float(eta)
    if not (0 < eta <= 1):
        return math.nan

    def g(a):
        Fa = (a + eta / math.pi * math.sin(math.pi * a / eta)) / eta
        tail = -math.expm1(d * math.log(Fa)) if Fa > 0 else 1.0
        if a >= 1.0:
            return 0.0
        return fp(a) * tail

    pts = [eta * x for x in (0.5, 0.9, 0.99, 0.999)]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        val, err = integrate.quad(g, 0.0, eta, points=pts, limit=400, epsabs=1e-12, epsrel=1e-10)
    return (f(0.0) + val + abs(err)) * (1 + 1e-8)


def _eta_up(eta: float) -> float:
    """η rounded up to the grid j/4096 (capped at 1): |u_j| under the cos² prior on [-η, η] is η times a fixed
    law, so E max_j f(|u_j|) is increasing in η and the value at the rounded η is still an upper bound."""
    return min(1.0, math.ceil(eta * 4096 - 1e-9) / 4096) if eta > 0 else eta


def _np(kind):
    def impl(d, eta):
        d, eta = np.broadcast_arrays(np.asarray(d, float), np.asarray(eta, float))
        out = np.empty(d.shape)
        for ix in np.ndindex(d.shape):
            out[ix] = expected_max(kind, int(round(float(d[ix]))), _eta_up(float(eta[ix])))
        return out if out.ndim else float(out)
    return impl


def _mp(kind):
    def impl(d, eta):
        import mpmath

        v = expected_max(kind, int(round(float(d))), _eta_up(float(eta)))
        return mpmath.mpf(v) if math.isfinite(v) else mpmath.mpf("nan")
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
