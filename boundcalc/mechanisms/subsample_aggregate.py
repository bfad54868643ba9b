"""Subsample-and-aggregate with an unbiased block MLE, clipping and Laplace noise (Smith 2008).

Estimator (Smith, *Efficient, differentially private point estimators*, Algorithm 1):

1. split the n points into k blocks; here ``r = n - k t`` blocks of ``t + 1`` points and ``k - r``
   blocks of ``t = ⌊n/k⌋`` points (every point is used);
2. on each block compute the (bias-corrected) MLE ``Y_j``; for the built-in models it is exactly
   unbiased (table below);
3. clip each to Θ = [a, b] (diameter Λ = b - a): ``Z_j = min(max(Y_j, a), b)``;
4. release ``θ̂ = (1/k) Σ_j Z_j + W``, ``W ~ Laplace(Λ/(kε))``.

Privacy: replacing one point changes one ``Z_j`` by at most Λ, so the average by at most Λ/k; the
Laplace mechanism with scale Λ/(kε) is ε-DP (pure).

Block estimators (all exactly unbiased; V(t) is the exact finite-t variance):

=============  =========================================  ==================  ==========
model          block estimate Y from a block of t points  V(t) = Var Y        t allowed
=============  =========================================  ==================  ==========
bernoulli      S/t, S = Σx ~ Bin(t, θ)                    θ(1-θ)/t            t ≥ 1
poisson        S/t, S ~ Poisson(tλ)                       λ/t                 t ≥ 1
exponential    (t-1)/S, S = Σx ~ Gamma(t, rate λ)         λ²/(t-2)            t ≥ 3
normal-mean    x̄ ~ N(θ, σ²/t)                             σ²/t                t ≥ 1
normal-var     (1/t)Σ(x-μ0)² ~ v χ²_t / t                 2v²/t               t ≥ 1
=============  =========================================  ==================  ==========

(exponential: the MLE t/S has bias λ/(t-1); Smith's bias correction λ̂(1 - 1/t) gives (t-1)/S,
which is exactly unbiased: E[1/S] = λ/(t-1), E[1/S²] = λ²/((t-1)(t-2)).  normal-var: the mean μ0
is known, so the MLE (1/t)Σ(x-μ0)² is unbiased and efficient; with an unknown mean the unbiased
sample variance would have variance 2v²/(t-1).)

**Exact MSE** (an identity, the blocks being independent):
``MSE(k) = (mean_j β_j)² + Σ_j Var(Z_j)/k² + 2Λ²/(kε)²`` with ``β_j = E Z_j - θ``.
The clipped moments are exact closed forms in the law of the block sufficient statistic. With the
tails ``L = {Y < a}``, ``U = {Y > b}`` and ``EY = θ``:

* ``A = E(a - Y)_+ = (a-θ)P(L) - E[(Y-θ); L]``,  ``C = E(Y - b)_+ = E[(Y-θ); U] - (b-θ)P(U)``;
* ``β = E(Z - Y) = A - C``;
* ``E(Z-θ)² = V - (E[(Y-θ)²; L] - (a-θ)²P(L)) - (E[(Y-θ)²; U] - (b-θ)²P(U))``;
* ``Var Z = E(Z-θ)² - β²``.

The partial moments are: binomial/Poisson factorial-moment identities
(``E[S; S≥m] = μ P(S'≥m-1)``, ``E[S(S-1); S≥m] = μ₂ P(S''≥m-2)`` with S', S'' the size-biased laws
Bin(t-1,θ), Bin(t-2,θ) or the same Poisson), the Gamma identities
``E[S^{-1}; S<c] = λ/(t-1) G_{t-1}(c)``, ``E[S^{-2}; S<c] = λ²/((t-1)(t-2)) G_{t-2}(c)``, the
truncated-normal moments ``∫_z^∞ uφ = φ(z)``, ``∫_z^∞ u²φ = zφ(z) + Q(z)``, and the chi-square
identities ``E[W; W>c] = t P(χ²_{t+2}>c)``, ``E[W²; W>c] = t(t+2) P(χ²_{t+4}>c)``.
These are evaluated in double precision with scipy's regularised incomplete beta/gamma and normal
functions: "exact" here means exact up to floating-point rounding, and it is what the simulation
is compared with (``mse_exact``).

**Certified upper bound** (``mse_certified``), a proven inequality that does not need the clipped
moments:

1. ``|β_j| = |A_j - C_j| ≤ max(A_j, C_j) =: B_j`` (A, C ≥ 0 have opposite signs in β);
2. ``(u - c)_+ ≤ u²/(4c)`` for c > 0 (the difference is (u-2c)²/(4c)), so with u = Y-θ:
   ``C ≤ V/(4(b-θ))`` and ``A ≤ V/(4(θ-a))``; hence ``B_j ≤ V_j/(4 m)``, m = min(θ-a, b-θ) > 0;
   the exact A, C are also used when smaller (``B_j = min(max(A,C), V/(4m))``, and always
   ``B_j ≤ √V_j``: ``|β| ≤ √E(Z-θ)² ≤ √V``);
3. clipping onto an interval containing θ is a contraction: ``|Z-θ| ≤ |Y-θ|``, so
   ``Var Z_j ≤ E(Z_j-θ)² ≤ V_j``;
4. so ``MSE(k) ≤ (mean_j B_j)² + mean_j V_j / k + 2Λ²/(kε)²``.
``mse_certified`` uses the exact V(t) of the table, which is exact rational arithmetic in t and θ.

The optimal block count (an integer) is found by :func:`optimal_blocks`: exhaustive search when
the range of k is small, else a logarithmic grid refined exhaustively around its best point;
``tests/test_point.py`` compares it with an independent brute force.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from ..core.models import MODELS, get_point_model
from ..core.solver import minimise_integer as optimal_blocks  # the one integer optimiser (kept name)

__all__ = ["BlockEstimator", "BLOCK_ESTIMATORS", "block_sizes", "clipped_block_moments",
           "mse_exact", "mse_certified", "mse_terms", "optimal_blocks", "simulate",
           "block_estimates_from_data", "efficiency"]


# ---------------------------------------------------------------------- per-model block laws
@dataclass(frozen=True)
class BlockEstimator:
    model: str
    formula: str
    min_block: int
    variance: Callable  # (theta, t, extra) -> V(t)
    tails: Callable  # (theta, t, a, b, extra) -> (PL, E[(Y-θ);L], E[(Y-θ)²;L], PU, E[(Y-θ);U], E[(Y-θ)²;U])
    sample: Callable  # (rng, theta, t, size, extra) -> block estimates from the sufficient statistic
    from_data: Callable  # (x[..., t], extra) -> block estimates from raw data (last axis)
    hinges: Callable = None  # (theta, t, a, b, extra) -> (T1_A, T2_A, T1_C, T2_C): A = T1_A - T2_A, C = T1_C - T2_C


def _num(x):
    """A parameter as the tail functions take it: a Python float (one point), else a float array (many points,
    elementwise; every operation below is elementwise, so each element gets the bits of its one-point value)."""
    return float(x) if np.ndim(x) == 0 else np.asarray(x, float)


def _pow2(x):
    """``x ** 2`` with Python's float power (C ``pow``) for every element: a one-point call squares a Python
    float that way, and ``pow(x, 2)`` differs from ``x * x`` (numpy's array square) in the last bit for about
    one argument in a thousand, so the many-point path squares element by element the same way."""
    if np.ndim(x) == 0:
        return x ** 2
    x = np.asarray(x, float)
    return np.fromiter((v ** 2 for v in x.ravel().tolist()), float, x.size).reshape(x.shape)


def _if_positive(a, fn, like):
    """``fn(a)`` where a > 0, else zeros (``like``'s shape): a Python ``if`` for one point, ``np.where`` for many."""
    if np.ndim(a) == 0:
        return fn(a) if a > 0 else tuple(np.zeros_like(like) for _ in range(3))
    pos = a > 0
    vals = fn(np.where(pos, a, 1.0))
    return tuple(np.where(pos, v, 0.0) for v in vals)


def _centre(P, M1, M2, th):
    """Raw partial moments (P, E[Y;T], E[Y²;T]) -> centred (P, E[(Y-θ);T], E[(Y-θ)²;T])."""
    return P, M1 - th * P, M2 - 2.0 * th * M1 + th * th * P


def _count_tails(th, t, a, b, mu, mu2, sf, cdf, sf1, cdf1, sf2, cdf2):
    """Tails of Y = S/t for a count S with E S = mu, E S(S-1) = mu2 and the size-biased laws."""
    with np.errstate(invalid="ignore", over="ignore"):
        mu_up = np.floor(b * t) + 1.0      # U = {S >= mu_up}
        ml = np.ceil(a * t) - 1.0          # L = {S <= ml}
    PU = sf(mu_up - 1)
    E1U = mu * sf1(mu_up - 2)
    E2U = mu2 * sf2(mu_up - 3) + E1U      # E S² = E S(S-1) + E S
    PL = np.where(ml < 0, 0.0, cdf(ml))
    E1L = np.where(ml < 1, 0.0, mu * cdf1(ml - 1))
    E2L = np.where(ml < 2, 0.0, mu2 * cdf2(ml - 2)) + E1L
    lower = _centre(PL, E1L / t, E2L / t**2, th)
    upper = _centre(PU, E1U / t, E2U / t**2, th)
    return (*lower, *upper)


def _bern_tails(th, t, a, b, extra):
    from scipy import special

    t = np.asarray(t, float)

    def sf_n(nn):
        # P(Bin(nn, th) > m); nn >= 0
        def f(m):
            m = np.asarray(m, float)
            out = special.bdtrc(np.clip(m, 0, None), np.asarray(nn).astype(np.int64), th)
            out = np.where(m < 0, 1.0, np.where(m >= nn, 0.0, out))
            return out
        return f

    def cdf_n(nn):
        def f(m):
            m = np.asarray(m, float)
            out = special.bdtr(np.clip(m, 0, None), np.asarray(nn).astype(np.int64), th)
            return np.where(m < 0, 0.0, np.where(m >= nn, 1.0, out))
        return f

    t1 = np.maximum(t - 1.0, 0.0)
    t2 = np.maximum(t - 2.0, 0.0)
    return _count_tails(th, t, a, b, t * th, t * (t - 1.0) * th * th,
                        sf_n(t), cdf_n(t), sf_n(t1), cdf_n(t1), sf_n(t2), cdf_n(t2))


def _pois_tails(th, t, a, b, extra):
    from scipy import special

    t = np.asarray(t, float)
    mu = t * th

    def sf(m):
        m = np.asarray(m, float)
        return np.where(m < 0, 1.0, special.pdtrc(np.clip(m, 0, None), mu))

    def cdf(m):
        m = np.asarray(m, float)
        return np.where(m < 0, 0.0, special.pdtr(np.clip(m, 0, None), mu))

    return _count_tails(th, t, a, b, mu, mu * mu, sf, cdf, sf, cdf, sf, cdf)


def _exp_tails(th, t, a, b, extra):
    from scipy import special

    t = np.asarray(t, float)
    lam = th
    # Y = (t-1)/S, S ~ Gamma(t, rate lam).  U = {Y > b} = {S < (t-1)/b};  L = {Y < a} = {S > (t-1)/a}.
    cu = lam * (t - 1.0) / b                        # rate * threshold, argument of the regularised gamma

    def G(s, x):  # P(Gamma(s, 1) < x)
        return special.gammainc(s, x)

    def Gc(s, x):
        return special.gammaincc(s, x)

    PU = G(t, cu)
    E1U = lam * G(t - 1.0, cu)
    E2U = lam * lam * (t - 1.0) / (t - 2.0) * G(t - 2.0, cu)

    def lower(a):
        cl = lam * (t - 1.0) / a
        return Gc(t, cl), lam * Gc(t - 1.0, cl), lam * lam * (t - 1.0) / (t - 2.0) * Gc(t - 2.0, cl)

    PL, E1L, E2L = _if_positive(a, lower, t)
    return (*_centre(PL, E1L, E2L, th), *_centre(PU, E1U, E2U, th))


def _nmean_standardised(th, t, a, b, extra):
    """(s, z_l, z_u, φ(z_l), φ(z_u), Φ(z_l), 1 - Φ(z_u)) for the block mean ~ N(θ, σ²/t), s = σ/√t."""
    from scipy import special

    t = np.asarray(t, float)
    s = _num(extra["sigma"]) / np.sqrt(t)
    zu = (b - th) / s
    zl = (a - th) / s
    phi_u = np.exp(-0.5 * zu * zu) / math.sqrt(2 * math.pi)
    phi_l = np.exp(-0.5 * zl * zl) / math.sqrt(2 * math.pi)
    return s, zl, zu, phi_l, phi_u, special.ndtr(zl), special.ndtr(-zu)


def _nmean_tails(th, t, a, b, extra):
    s, zl, zu, phi_l, phi_u, PL, QU = _nmean_standardised(th, t, a, b, extra)
    upper = (QU, s * phi_u, s * s * (zu * phi_u + QU))
    lower = (PL, -s * phi_l, s * s * (PL - zl * phi_l))
    return (*lower, *upper)


def _nvar_tails(th, t, a, b, extra):
    from scipy import special

    t = np.asarray(t, float)
    v = th
    # Y = v W / t, W ~ chi2_t.  P(chi2_m > c) = gammaincc(m/2, c/2).
    cu = b * t / v

    def sf(m, c):
        return special.gammaincc(m / 2.0, c / 2.0)

    def cdf(m, c):
        return special.gammainc(m / 2.0, c / 2.0)

    sc = v / t
    PU = sf(t, cu)
    E1U = sc * t * sf(t + 2.0, cu)
    E2U = sc * sc * t * (t + 2.0) * sf(t + 4.0, cu)

    def lower(a):
        cl = a * t / v
        return cdf(t, cl), sc * t * cdf(t + 2.0, cl), sc * sc * t * (t + 2.0) * cdf(t + 4.0, cl)

    PL, E1L, E2L = _if_positive(a, lower, t)
    return (*_centre(PL, E1L, E2L, th), *_centre(PU, E1U, E2U, th))


# ---------------------------------------------------------------------- clipping hinges without cancellation
# A = E(a - Y)_+ and C = E(Y - b)_+ as T1 - T2 with two nonnegative terms: T2 = (θ - a)P(L) (resp. (b - θ)P(U)) and
# T1 = -E[(Y - θ); L] (resp. E[(Y - θ); U]), the centred first partial moment, which is one probability (no
# difference of two tails): for S ~ Bin(t, θ), E[(S - tθ); S >= m] = m(1 - θ)P(S = m) (the two sides agree at
# m = 0 and their differences in m are both (m - tθ)P(S = m), as P(S = m+1)/P(S = m) = (t-m)θ/((m+1)(1-θ)));
# for S ~ Poisson(μ), E[(S - μ); S >= m] = m P(S = m); for the Gamma laws Q(s+1, x) - Q(s, x) = x^s e^{-x}/Γ(s+1)
# (regularised upper incomplete gamma), which gives E[(t-1)/S - λ; S > c] = -λ x^{t-1}e^{-x}/Γ(t), x = λc, for
# S ~ Gamma(t, rate λ), and E[(W - t); W > c] = t (c/2)^{t/2} e^{-c/2}/Γ(t/2 + 1) for W ~ χ²_t. Each function
# returns (T1_A, T2_A, T1_C, T2_C); the rounding of A = T1 - T2 is then at most a small multiple of T1 + T2.

#: outward rounding of the clipping hinges: A = T1 - T2 is widened by HINGE_SLACK (T1 + T2), which covers a
#: relative error of HINGE_SLACK/2 in each of T1, T2 (the special functions and the roundings of the products;
#: measured below 3e-12 up to HINGE_SCALE_MAX, tests/test_float64_parts_f.py)
HINGE_SLACK = 1e-9
#: absolute floor of that widening (times 1 + |θ|): a hinge term that underflows is below it
BIAS_ABS_SLACK = 1e-300
#: the largest size parameter (:func:`_hinge_scale`) at which the hinges' special functions are trusted, per model
#: (measured against 50-digit values, docs/engineering/certified-floating-point.md, part F): scipy's binomial tails
#: (Boost) keep T1 - T2 within 3e-12 of T1 + T2 to n = 1e7 (3e-11 at 1e8); its Poisson and gamma tails (Cephes) to a
#: shape of 3e5, and are off by 1e-6 to 1e-3 relatively in the far tails from about 1e6 (P(Poisson(9e6) > 9.03e6)
#: is 1e-3 low). Beyond, the exact-tail branch of the bias bound is not used.
HINGE_SCALE_MAX = {"bernoulli": 1e7, "poisson": 3e5, "exponential": 3e5, "normal-var": 3e5, "normal-mean": math.inf}


def _count_thresholds(t, a, b):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.ceil(a * t) - 1.0, np.floor(b * t) + 1.0   # L = {S <= ml}, U = {S >= mu_up}


def _bern_hinges(th, t, a, b, extra):
    from scipy.special._ufuncs import _binom_cdf as _BOOST_CDF, _binom_sf as _BOOST_SF

    from ..core.distributions import binom_pmf

    t = np.asarray(t, float)
    ml, mu_up = _count_thresholds(t, a, b)
    with np.errstate(all="ignore"):
        PL = np.where(ml < 0, 0.0, np.where(ml >= t, 1.0, _BOOST_CDF(np.clip(ml, 0, None), t, th)))
        PU = np.where(mu_up <= 0, 1.0, np.where(mu_up > t, 0.0, _BOOST_SF(np.clip(mu_up - 1, 0, None), t, th)))
        kl = np.clip(ml + 1, 0, t)
        ku = np.clip(mu_up, 0, t)
        TA1 = np.where((ml >= 0) & (ml + 1 <= t), kl * (1 - th) * binom_pmf(kl, t, th) / t, 0.0)
        TC1 = np.where(mu_up <= t, ku * (1 - th) * binom_pmf(ku, t, th) / t, 0.0)
    return TA1, (th - a) * PL, TC1, (b - th) * PU


def _pois_hinges(th, t, a, b, extra):
    from scipy import special

    from ..core.distributions import poisson_pmf

    t = np.asarray(t, float)
    mu = t * th
    ml, mu_up = _count_thresholds(t, a, b)
    with np.errstate(all="ignore"):
        PL = np.where(ml < 0, 0.0, special.pdtr(np.clip(ml, 0, None), mu))
        PU = np.where(mu_up <= 0, 1.0, special.pdtrc(np.clip(mu_up - 1, 0, None), mu))
        kl = np.clip(ml + 1, 0, None)
        ku = np.clip(mu_up, 0, None)
        TA1 = np.where(ml >= 0, kl * poisson_pmf(kl, mu) / t, 0.0)
        TC1 = ku * poisson_pmf(ku, mu) / t
    return TA1, (th - a) * PL, TC1, (b - th) * PU


def _exp_hinges(th, t, a, b, extra):
    from scipy import special

    from ..core.distributions import poisson_pmf

    t = np.asarray(t, float)
    lam = th
    xu = lam * (t - 1.0) / b                    # U = {S < (t-1)/b}
    PU = special.gammainc(t, xu)
    TC1 = lam * poisson_pmf(t - 1.0, xu)

    def lower(a):                               # L = {S > (t-1)/a}
        xl = lam * (t - 1.0) / a
        return lam * poisson_pmf(t - 1.0, xl), special.gammaincc(t, xl), np.zeros_like(t)

    TA1, PL, _ = _if_positive(a, lower, t)
    return TA1, (th - a) * PL, TC1, (b - th) * PU


def _nmean_hinges(th, t, a, b, extra):
    s, _, _, phi_l, phi_u, PL, QU = _nmean_standardised(th, t, a, b, extra)
    return s * phi_l, (th - a) * PL, s * phi_u, (b - th) * QU


def _nvar_hinges(th, t, a, b, extra):
    from scipy import special

    from ..core.distributions import poisson_pmf

    t = np.asarray(t, float)
    v = th
    hu = b * t / (2.0 * v)                      # U = {W > b t/v}, W ~ χ²_t; P(χ²_t > c) = Q(t/2, c/2)
    PU = special.gammaincc(t / 2.0, hu)
    TC1 = v * poisson_pmf(t / 2.0, hu)

    def lower(a):
        hl = a * t / (2.0 * v)
        return v * poisson_pmf(t / 2.0, hl), special.gammainc(t / 2.0, hl), np.zeros_like(t)

    TA1, PL, _ = _if_positive(a, lower, t)
    return TA1, (th - a) * PL, TC1, (b - th) * PU


def _exp_from_data(x, extra):
    t = x.shape[-1]
    return (t - 1.0) / x.sum(axis=-1)


BLOCK_ESTIMATORS = {
    "bernoulli": BlockEstimator(
        "bernoulli", "block mean S/t (the MLE; unbiased)", 1,
        lambda th, t, e: th * (1.0 - th) / np.asarray(t, float), _bern_tails,
        lambda rng, th, t, size, e: rng.binomial(t, th, size) / t,
        lambda x, e: x.mean(axis=-1), _bern_hinges),
    "poisson": BlockEstimator(
        "poisson", "block mean S/t (the MLE; unbiased)", 1,
        lambda th, t, e: th / np.asarray(t, float), _pois_tails,
        lambda rng, th, t, size, e: rng.poisson(th * t, size) / t,
        lambda x, e: x.mean(axis=-1), _pois_hinges),
    "exponential": BlockEstimator(
        "exponential", "bias-corrected MLE (t-1)/Σx (unbiased, = MLE·(1-1/t))", 3,
        lambda th, t, e: th * th / (np.asarray(t, float) - 2.0), _exp_tails,
        lambda rng, th, t, size, e: (t - 1.0) / rng.gamma(t, 1.0 / th, size),
        _exp_from_data, _exp_hinges),
    "normal-mean": BlockEstimator(
        "normal-mean", "block mean (the MLE; unbiased)", 1,
        lambda th, t, e: _pow2(_num(e["sigma"])) / np.asarray(t, float), _nmean_tails,
        lambda rng, th, t, size, e: rng.normal(th, float(e["sigma"]) / math.sqrt(t), size),
        lambda x, e: x.mean(axis=-1), _nmean_hinges),
    "normal-var": BlockEstimator(
        "normal-var", "block MLE (1/t)Σ(x-μ0)² (μ0 known; unbiased)", 1,
        lambda th, t, e: 2.0 * th * th / np.asarray(t, float), _nvar_tails,
        lambda rng, th, t, size, e: th * rng.chisquare(t, size) / t,
        lambda x, e: ((x - float(e["mu0"])) ** 2).mean(axis=-1), _nvar_hinges),
}


def get_block_estimator(name) -> BlockEstimator:
    return BLOCK_ESTIMATORS[get_point_model(name).name]


# ---------------------------------------------------------------------- MSE pieces
def block_sizes(n, k):
    """``(t, r)``: r blocks of t+1 points and k-r blocks of t points (``t = n // k``)."""
    n = np.asarray(n)
    k = np.asarray(k)
    t = n // k
    return t, n - k * t


def clipped_block_moments(model, theta, t, a, b, extra=None):
    """Exact ``(β, E(Z-θ)², V, A, C)`` of one clipped block estimate of t points (arrays over t).

    β = E Z - θ (clipping bias), E(Z-θ)² the clipped MSE, V the unclipped variance,
    A = E(a-Y)_+, C = E(Y-b)_+. θ, a, b (and a ``sigma`` in ``extra``) are numbers, or arrays of t's shape
    (one point per element: the values are those of the one-point calls, bit for bit).
    """
    est = get_block_estimator(model)
    extra = {**get_point_model(model).extra_defaults, **(extra or {})}
    t = np.asarray(t, float)
    theta, a, b = _num(theta), _num(a), _num(b)
    with np.errstate(all="ignore"):
        PL, E1L, E2L, PU, E1U, E2U = est.tails(theta, t, a, b, extra)
        V = est.variance(theta, t, extra) * np.ones_like(t)
        TA1, TA2, TC1, TC2 = est.hinges(theta, t, a, b, extra)
        A = np.maximum(TA1 - TA2, 0.0)
        C = np.maximum(TC1 - TC2, 0.0)
        beta = A - C
        mse1 = V - np.maximum(E2L - _pow2(a - theta) * PL, 0.0) - np.maximum(E2U - _pow2(b - theta) * PU, 0.0)
        mse1 = np.clip(mse1, beta * beta, V)
    return beta, mse1, V, A, C


def _validate(model, n, k, theta, a, b):
    est = get_block_estimator(model)
    k = np.asarray(k)
    if np.any(np.asarray(n) // k < est.min_block):
        raise ValueError(f"{model}: blocks need at least {est.min_block} points (k <= n/{est.min_block})")
    if not (a <= theta <= b):
        raise ValueError("theta must lie in the parameter space [a, b]")
    return est


def _gauss_sigma(eps, delta):
    from ..core.symbolic import gauss_sigma_analytic_scalar

    return gauss_sigma_analytic_scalar(float(eps), float(delta))


#: aggregation noise -> (its variance at block count(s) kf, a draw of it), for sensitivity Λ/k
NOISES = {
    "laplace": (lambda kf, eps, lam, delta: 2.0 * lam * lam / (kf * eps) ** 2,
                lambda rng, size, k, eps, lam, delta: rng.laplace(0.0, lam / (k * eps), size)),
    "gauss": (lambda kf, eps, lam, delta: (lam / kf) ** 2 * _gauss_sigma(eps, delta) ** 2,
              lambda rng, size, k, eps, lam, delta: rng.normal(0.0, lam / k * _gauss_sigma(eps, delta), size)),
}


def _noise(noise):
    if noise not in NOISES:
        raise ValueError("noise must be one of " + ", ".join(map(repr, NOISES)))
    return NOISES[noise]


def noise_variance(k, eps, lam, noise="laplace", delta=None):
    """Variance of the aggregation noise for sensitivity Λ/k.

    ``laplace``: scale Λ/(kε), variance 2Λ²/(kε)² (ε-DP). ``gauss``: σ = (Λ/k) σ_aG(ε, δ), the exact
    analytic calibration of Balle & Wang (2018) ((ε,δ)-DP), variance Λ² σ_aG² / k².
    """
    return _noise(noise)[0](np.asarray(k, float), eps, lam, delta)


def noise_sampler(rng, size, k, eps, lam, noise="laplace", delta=None):
    """``size`` draws of the aggregation noise (see :func:`noise_variance`)."""
    return _noise(noise)[1](rng, size, k, eps, lam, delta)


def mse_terms(model, n, k, eps, theta, a, b, extra=None, noise="laplace", delta=None):
    """Exact decomposition of the private estimator's MSE at block count(s) k (arrays over k).

    Returns a dict of arrays: ``bias2`` (mean β)², ``block_var`` Σ Var Z_j / k², ``noise``
    (2Λ²/(kε)² for Laplace), ``mse`` their sum, and ``efficient`` 1/(n I(θ)) broadcast.
    """
    _validate(model, n, k, theta, a, b)
    k = np.asarray(k, dtype=np.int64)
    t, r = block_sizes(n, k)
    b0, m0, _, _, _ = clipped_block_moments(model, theta, t, a, b, extra)
    b1, m1, _, _, _ = clipped_block_moments(model, theta, t + 1, a, b, extra)
    kf = k.astype(float)
    rf = r.astype(float)
    beta = (rf * b1 + (kf - rf) * b0) / kf
    var = (rf * (m1 - b1 * b1) + (kf - rf) * (m0 - b0 * b0)) / kf**2
    nv = noise_variance(kf, eps, b - a, noise, delta)
    eff = 1.0 / (n * fisher(model, theta, extra))
    return {"bias2": beta * beta, "block_var": var, "noise": nv,
            "mse": beta * beta + var + nv, "efficient": eff * np.ones_like(kf)}


def mse_exact(model, n, k, eps, theta, a, b, extra=None, noise="laplace", delta=None):
    """The exact MSE of the estimator (see the module docstring); vectorised over k."""
    return mse_terms(model, n, k, eps, theta, a, b, extra, noise, delta)["mse"]


def hinge_upper_bounds(model, theta_lo, theta_hi, t, a, b, extra=None):
    """Upper bounds on A = E(a - Y)_+ at θ_lo and C = E(Y - b)_+ at θ_hi (arrays over t), widened for the rounding
    of the special functions; +inf where the block is beyond :data:`HINGE_SCALE_MAX` (there the tails are not
    trusted and only the closed-form branches of the bias bound are used).

    Each hinge is T1 - T2 with nonnegative terms (see the hinge functions above); a computed T_i has relative
    error at most the special function's plus a few roundings, so ``T1 - T2 + HINGE_SLACK (T1 + T2)`` bounds the
    hinge from above wherever those relative errors are below HINGE_SLACK (measured in
    tests/test_float64_parts_f.py against 50-digit values of the definitions: below 3e-12 of T1 + T2 up to the scales
    of HINGE_SCALE_MAX), and ``BIAS_ABS_SLACK (1 + |θ|)`` covers terms that underflow."""
    est = get_block_estimator(model)
    ex = {**get_point_model(model).extra_defaults, **(extra or {})}
    t = np.asarray(t, float)
    with np.errstate(all="ignore"):
        TA1, TA2, _, _ = est.hinges(theta_lo, t, a, b, ex)
        _, _, TC1, TC2 = est.hinges(theta_hi, t, a, b, ex)
        A = np.maximum(TA1 - TA2, 0.0) + HINGE_SLACK * (TA1 + TA2) + BIAS_ABS_SLACK * (1 + np.abs(theta_lo))
        C = np.maximum(TC1 - TC2, 0.0) + HINGE_SLACK * (TC1 + TC2) + BIAS_ABS_SLACK * (1 + np.abs(theta_hi))
        trusted = _hinge_scale(model, theta_lo, theta_hi, t) <= HINGE_SCALE_MAX[est.model]
        return np.where(trusted, A, np.inf), np.where(trusted, C, np.inf)


def _hinge_scale(model, theta_lo, theta_hi, t):
    """The size parameter the tails' accuracy depends on: the binomial n = t, the Poisson mean tθ, the gamma shape
    t (exponential) or t/2 (normal-var); 0 for the normal mean (closed forms in Φ and φ)."""
    name = get_block_estimator(model).model
    if name == "poisson":
        return t * np.maximum(np.abs(theta_lo), np.abs(theta_hi))
    if name == "normal-mean":
        return np.zeros_like(t)
    return t if name != "normal-var" else t / 2.0


def certified_bias_bound(model, theta, t, a, b, extra=None):
    """``B(t) ≥ |β(t)|``: min(max(A, C), V/(4m), √V) (steps 1-2 of the module docstring), A and C from
    :func:`hinge_upper_bounds`."""
    est = get_block_estimator(model)
    ex = {**get_point_model(model).extra_defaults, **(extra or {})}
    V = est.variance(theta, np.asarray(t, float), ex) * np.ones_like(np.asarray(t, float))
    A, C = hinge_upper_bounds(model, theta, theta, t, a, b, extra)
    m = min(theta - a, b - theta)
    markov = V / (4.0 * m) if m > 0 else np.full_like(V, np.inf)
    return np.minimum(np.minimum(np.maximum(A, C), markov), np.sqrt(V))


def mse_certified(model, n, k, eps, theta, a, b, extra=None, noise="laplace", delta=None):
    """Certified upper bound ``(mean B_j)² + mean V_j / k + 2Λ²/(kε)²`` (vectorised over k)."""
    _validate(model, n, k, theta, a, b)
    est = get_block_estimator(model)
    ex = {**get_point_model(model).extra_defaults, **(extra or {})}
    k = np.asarray(k, dtype=np.int64)
    t, r = block_sizes(n, k)
    kf, rf = k.astype(float), r.astype(float)
    B0 = certified_bias_bound(model, theta, t, a, b, extra)
    B1 = certified_bias_bound(model, theta, t + 1, a, b, extra)
    V0 = est.variance(theta, t, ex)
    V1 = est.variance(theta, t + 1, ex)
    B = (rf * B1 + (kf - rf) * B0) / kf
    V = (rf * V1 + (kf - rf) * V0) / kf
    return B * B + V / kf + noise_variance(kf, eps, b - a, noise, delta)


_FISHER_FN: dict = {}


def fisher(model, theta, extra=None):
    """I(θ) from the sympy derivation in :mod:`boundcalc.core.models` (lambdified once per model)."""
    m = get_point_model(model)
    key = (m.name, tuple(sorted((extra or {}).items())))
    if key not in _FISHER_FN:
        _FISHER_FN[key] = m.fisher_function(**(extra or {}))
    try:
        return float(_FISHER_FN[key](float(theta)))
    except (OverflowError, ZeroDivisionError):  # e.g. 1/θ² of the exponential model at θ = 1e-320
        from ..core.errors import InputError

        raise InputError("theta", f"gives model {m.name} a Fisher information beyond the float range: a θ this "
                                  "close to the edge of the natural parameter space is not supported", theta) from None


def efficiency(model, n, k, eps, theta, a, b, extra=None):
    """``(1/(n I(θ))) / MSE`` for the exact MSE."""
    return 1.0 / (n * fisher(model, theta, extra)) / mse_exact(model, n, k, eps, theta, a, b, extra)


def k_range(model, n):
    """Allowed block counts: 1 ≤ k ≤ n // min_block."""
    est = get_block_estimator(model)
    return 1, max(1, int(n) // est.min_block)


# ---------------------------------------------------------------------- simulation
def block_estimates_from_data(model, x, extra=None):
    """Block MLEs from raw data ``x[..., t]`` (the last axis is one block)."""
    ex = {**get_point_model(model).extra_defaults, **(extra or {})}
    return get_block_estimator(model).from_data(np.asarray(x, float), ex)


def simulate(model, n, k, eps, theta, a, b, reps=1000, seed=0, method="raw", extra=None,
             max_elements=4_000_000, noise="laplace", delta=None, release=None):
    """Run the private estimator ``reps`` times; returns the array of estimates.

    ``method="raw"`` draws the n data points with the model's sampler and computes each block MLE
    from them (vectorised across blocks and repetitions, in chunks of at most ``max_elements``
    numbers); ``"sufficient"`` draws each block's sufficient statistic directly (same law, faster
    for large n). Seeded: the same seed gives the same numbers. ``release(averages, rng, reps)``: the rest of the
    mechanism after the data step (a runnable mechanism's ``release_from_statistic``); default the average plus
    ``noise_sampler``.
    """
    _validate(model, n, k, theta, a, b)
    m = get_point_model(model)
    est = get_block_estimator(model)
    ex = {**m.extra_defaults, **(extra or {})}
    rng = np.random.default_rng(seed)
    n, k = int(n), int(k)
    t = n // k
    r = n - k * t
    lam = b - a
    out = np.empty(reps)
    per = n if method == "raw" else k
    chunk = max(1, min(reps, max_elements // max(per, 1)))
    for start in range(0, reps, chunk):
        c = min(chunk, reps - start)
        total = np.zeros(c)
        if method == "raw":
            x = m.sampler(rng, theta, (c, n), **ex)
            if r:
                big = x[:, : r * (t + 1)].reshape(c, r, t + 1)
                total += np.clip(est.from_data(big, ex), a, b).sum(axis=1)
            small = x[:, r * (t + 1):].reshape(c, k - r, t)
            total += np.clip(est.from_data(small, ex), a, b).sum(axis=1)
        elif method == "sufficient":
            if r:
                total += np.clip(est.sample(rng, theta, t + 1, (c, r), ex), a, b).sum(axis=1)
            total += np.clip(est.sample(rng, theta, t, (c, k - r), ex), a, b).sum(axis=1)
        else:
            raise ValueError("method must be 'raw' or 'sufficient'")
        out[start:start + c] = (release(total / k, rng, c) if release is not None
                                else total / k + noise_sampler(rng, c, k, eps, lam, noise, delta))
    return out


def mse_with_ci(estimates, theta, z=1.959963984540054):
    """Empirical MSE, its standard error and a normal-approximation CI."""
    sq = (np.asarray(estimates) - theta) ** 2
    mse = float(sq.mean())
    se = float(sq.std(ddof=1) / math.sqrt(sq.size))
    return mse, se, (max(mse - z * se, 0.0), mse + z * se)


# ---------------------------------------------------------------------- the point problem's sympy functions
# Per-model sympy Function classes whose numeric values are the exact clipped block moments above; the point
# problem (boundcalc.problems.point) builds its upper bounds from them.
def theta_space(model_name: str, lam=None):
    """Θ = (a, b) for the model with diameter ``lam`` (None: the model's default)."""
    m = get_point_model(model_name)
    lo, hi = m.parameter_space
    if lam is None or lam == "auto":
        return float(lo), float(hi)
    lam = float(lam)
    if m.anchor == "center":
        c = 0.5 * (lo + hi)
        return c - lam / 2, c + lam / 2
    return float(lo), float(lo) + lam


def _ident(name):
    return name.replace("-", "_")


def _as_scalar(x):
    x = np.asarray(x, dtype=float)
    return float(x.reshape(-1)[0]) if x.size == 1 else None


def _vectorise(fn, n, blocks, *rest):
    """Call ``fn(n_arr, blocks_arr, *rest)``: the other arguments as Python floats when each is one number,
    else all broadcast to arrays of one shape (``fn`` is elementwise: every element gets the bits of the
    one-point call ``fn(np.array([n]), np.array([k]), *floats)``; tests/test_point_vectorised.py checks this)."""
    n = np.asarray(n, dtype=float)
    blocks = np.asarray(blocks, dtype=float)
    scal = [_as_scalar(r) for r in rest]
    if all(s is not None for s in scal):
        nb, kb = np.broadcast_arrays(n, blocks)
        return fn(nb.astype(np.int64), kb.astype(np.int64), *scal)
    arrs = np.broadcast_arrays(n, blocks, *[np.asarray(r, float) for r in rest])
    return fn(arrs[0].astype(np.int64), arrs[1].astype(np.int64), *[np.array(a, float) for a in arrs[2:]])




def _local_bias_impl(model_name):
    """mean_j B*_j: certified bound on |mean clipping bias| over N (the point problem's upper bounds,
    :mod:`boundcalc.problems.point`; steps 1-4 above plus monotonicity in θ)."""
    est_v = get_block_estimator(model_name).variance

    def one(n, k, lo, hi, a, b, sigma):
        extra = {"sigma": sigma} if model_name == "normal-mean" else {}
        ex = {**get_point_model(model_name).extra_defaults, **extra}
        t, r = block_sizes(n, k)

        def bstar(tt):
            A_lo, C_hi = hinge_upper_bounds(model_name, lo, hi, tt, a, b, extra)
            vmax = np.maximum(est_v(lo, tt, ex), est_v(hi, tt, ex))
            if model_name == "bernoulli":
                p = min(max(0.5, lo), hi) if np.ndim(lo) == 0 else np.minimum(np.maximum(0.5, lo), hi)
                vmax = p * (1 - p) / np.asarray(tt, float)
            exact = np.maximum(A_lo, C_hi)
            if np.ndim(lo) == 0:
                m = min(lo - a, b - hi)
                markov = vmax / (4 * m) if m > 0 else np.full_like(vmax, np.inf)
            else:
                m = np.minimum(lo - a, b - hi)
                markov = np.where(m > 0, vmax / (4 * m), np.inf)
            return np.minimum(np.minimum(exact, markov), np.sqrt(vmax))

        with np.errstate(all="ignore"):
            B0 = bstar(t)
            B1 = bstar(t + 1)
            kf, rf = k.astype(float), r.astype(float)
            return (rf * B1 + (kf - rf) * B0) / kf

    def impl(n, blocks, lo, hi, a, b, sigma):
        return _vectorise(one, n, blocks, lo, hi, a, b, sigma)

    return impl


def _exact_data_impl(model_name):
    """(mean β)² + Σ Var Z_j / k²: the exact data part of the pointwise MSE at θ."""

    def one(n, k, th, a, b, sigma):
        extra = {"sigma": sigma} if model_name == "normal-mean" else {}
        t, r = block_sizes(n, k)
        with np.errstate(all="ignore"):
            b0, m0, _, _, _ = clipped_block_moments(model_name, th, t, a, b, extra)
            b1, m1, _, _, _ = clipped_block_moments(model_name, th, t + 1, a, b, extra)
            kf, rf = k.astype(float), r.astype(float)
            beta = (rf * b1 + (kf - rf) * b0) / kf
            var = (rf * (m1 - b1 * b1) + (kf - rf) * (m0 - b0 * b0)) / kf ** 2
        return beta * beta + var

    def impl(n, blocks, th, a, b, sigma):
        return _vectorise(one, n, blocks, th, a, b, sigma)

    return impl


#: relative widening of ClipBiasBound on the mpmath path: its Markov branch V/(4m) and its √V branch are closed
#: forms of at most 6 roundings, and the average over the two block sizes adds 4 (16 units of 2^-53 cover both)
BIAS_MP_WIDEN = 2.0 ** -49


def _bias_mp(fn):
    """ClipBiasBound's implementation on both paths. On the mpmath path: the float64 bound at the arguments rounded
    to float64 on the safe side (θ_lo and b down, θ_hi, a and σ up: a wider N, a narrower clipping interval and a
    larger σ each give a larger bound, B* being a minimum of three functions that are non-decreasing in each of
    these), or at the nearest floats if that is larger, widened by :data:`BIAS_MP_WIDEN`; its exact-tail branch
    carries its own margin (HINGE_SLACK)."""
    flt = _to_float(fn)

    def wrapped(*args):
        if not any(hasattr(x, "_mpf_") for x in args):
            return flt(*args)
        import mpmath

        from ..core.certify import round_down, round_up

        n, k, lo, hi, a, b, sigma = (mpmath.mpf(x) for x in args)
        safe = float(np.asarray(flt(float(n), float(k), round_down(lo), round_up(hi), round_up(a), round_down(b),
                                    round_up(sigma))).reshape(-1)[0])
        # and at the nearest floats: the exact-tail branch is a difference that cancels, so its float64 value moves
        # by more than the argument's last unit (within its HINGE_SLACK); the larger of the two is kept
        near = float(np.asarray(flt(*[float(x) for x in (n, k, lo, hi, a, b, sigma)])).reshape(-1)[0])
        v = max(safe, near) if math.isfinite(safe) and math.isfinite(near) else safe
        return mpmath.mpf(v) * (1 + mpmath.mpf(BIAS_MP_WIDEN)) if math.isfinite(v) else mpmath.mpf(v)
    return wrapped


def _to_float(fn):
    def wrapped(*args):
        out = fn(*[np.asarray(x, dtype=float) if not hasattr(x, "_mpf_") else float(x) for x in args])
        return out
    return wrapped


@lru_cache(maxsize=None)
def block_functions(model_name: str):
    """sympy Function classes with numeric implementations for this model (lambdify uses ``_imp_``): the
    certified bound on the mean clipping bias over N, ``ClipBiasBound_<model>(n, blocks, θ_lo, θ_hi, a, b, σ)``,
    and the exact data part of the pointwise MSE, ``ExactBlockMSE_<model>(n, blocks, θ, a, b, σ)``."""
    import sympy as sp

    ident = _ident(model_name)

    def latex_bias(self, printer, exp=None):
        args = ", ".join(printer._print(x) for x in self.args[:2])
        tex = rf"\bar B^{{\mathrm{{{model_name}}}}}_{{\mathrm{{clip}}}}({args})"
        return tex if exp is None else rf"{{{tex}}}^{{{exp}}}"

    def latex_exact(self, printer, exp=None):
        args = ", ".join(printer._print(x) for x in self.args[:3])
        tex = rf"\mathrm{{MSE}}^{{\mathrm{{{model_name}}}}}_{{\mathrm{{data}}}}({args})"
        return tex if exp is None else rf"{{{tex}}}^{{{exp}}}"

    bias_cls = type(f"ClipBiasBound_{ident}", (sp.Function,),
                    {"nargs": 7, "_imp_": staticmethod(_bias_mp(_local_bias_impl(model_name))),
                     "_latex": latex_bias,
                     "__doc__": "certified bound on |mean clipping bias| of the block estimates over N"})
    exact_cls = type(f"ExactBlockMSE_{ident}", (sp.Function,),
                     {"nargs": 6, "_imp_": staticmethod(_to_float(_exact_data_impl(model_name))),
                      "_latex": latex_exact,
                      "__doc__": "exact (mean clipping bias)² + Σ Var(clipped block)/k² at θ"})
    return _named(bias_cls), _named(exact_cls)


def _named(cls):
    """Make a per-model Function class an attribute of this module under its own name, so that the cache
    format (:mod:`boundcalc.cache.exprcodec`) can name it (see the module's ``__getattr__`` for a process that has
    not built it yet)."""
    globals()[cls.__name__] = cls
    return cls


def __getattr__(name: str):
    """A per-model Function class by its name (``ClipBiasBound_<model>``, ``ExactBlockMSE_<model>``), built on
    first use: the cache format names a class by module and name, and a process that reads a kept expression
    has not built the classes yet."""
    prefix, _, ident = name.partition("_")
    models = [m for m in MODELS if _ident(m) == ident]
    if prefix in ("ClipBiasBound", "ExactBlockMSE") and len(models) == 1:
        block_functions(models[0])
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------- efficiency report
def limiting_term(terms: dict, n, info) -> str:
    """Which excess over 1/(nI) is largest: noise, clipping bias², or block variance."""
    eff = 1.0 / (n * info)
    parts = {"noise": float(terms["noise"][0]), "clipping bias": float(terms["bias2"][0]),
             "block variance": float(terms["block_var"][0]) - eff}
    top = max(parts, key=parts.get)
    return f"{top} ({parts[top]:.3g} over the efficient {eff:.3g})"


def efficiency_table(model, ns=(10**3, 10**4, 10**5, 10**6), eps=1.0, theta=None, lam=None, sigma=1.0,
                     eps_exponent=None, noise="laplace", delta=None) -> list:
    """Pointwise efficiency of Smith's estimator with the block count minimising the exact MSE at θ.

    One dict per n: blocks, block size t, exact MSE and its terms, the efficiency (1/(nI(θ)))/MSE and
    the term that limits it. ``eps_exponent=γ`` uses ε_n = eps · n^{-γ} (privacy tightening with n):
    efficiency still tends to 1 when n ε_n² → ∞ (γ < 1/2) and is lost at γ = 1/2.
    The block count is found by :func:`boundcalc.mechanisms.subsample_aggregate.optimal_blocks`
    (tests compare it with an exhaustive search).
    """
    m = get_point_model(model)
    a, b = theta_space(m.name, lam)
    th = m.theta_default if theta is None else float(theta)
    extra = {"sigma": float(sigma)} if m.name == "normal-mean" else {}
    info = fisher(m.name, th, extra)
    rows = []
    for n in ns:
        n = int(n)
        e = eps * n ** (-eps_exponent) if eps_exponent else eps
        lo, hi = k_range(m.name, n)
        k, val = optimal_blocks(lambda ks: mse_exact(m.name, n, ks, e, th, a, b, extra, noise, delta), lo, hi)
        terms = mse_terms(m.name, n, np.array([k]), e, th, a, b, extra, noise, delta)
        rows.append({"model": m.name, "n": n, "eps": e, "blocks": k, "t": n // k, "mse": val,
                     "efficient": 1.0 / (n * info), "efficiency": 1.0 / (n * info) / val,
                     "bias2": float(terms["bias2"][0]), "block_var": float(terms["block_var"][0]),
                     "noise": float(terms["noise"][0]), "limiting": limiting_term(terms, n, info)})
    return rows
