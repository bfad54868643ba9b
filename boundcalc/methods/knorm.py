"""The K-norm mechanism (Hardt & Talwar 2010) on a histogram's count vector, with its exact second moment
(docs/problems/density.md, section "K-norm noise").

Replacing one of n records moves the count vector c ∈ ℤ^m (Σc = n) by e_i - e_j, so the sensitivity hull is
K = conv{e_i - e_j} = {x : Σx = 0, ||x||₁ <= 2}, a polytope of dimension m - 1. The K-norm mechanism releases
c + Z, Z with density ∝ exp(-ε||z||_K) on the hyperplane Σz = 0: ε-DP because ||c - c'||_K <= 1 for neighbours
(triangle inequality of the norm). Sampling (Hardt & Talwar 2010): Z = R U, R ~ Gamma(m, 1/ε) (shape k + 1 with
k = m - 1 the dimension), U uniform in K; so E||Z||² = m(m+1) E||U||²/ε².

**E||U||² exactly.** Split K by the signs of the coordinates: almost every point has a positive coordinates (set
P) and b = m - a negative ones (set N), 1 <= a <= m - 1, with Σ_P x = Σ_N |x| = s, ||x||₁ = 2s <= 2. In the free
coordinates (drop one negative coordinate; the hyperplane's volume element is a constant multiple) the piece is
{y ∈ ℝ^a_+, z' ∈ ℝ^{b-1}_+ : Σz' <= Σy = s <= 1}, of volume ∫_0^1 s^{a-1}/(a-1)! · s^{b-1}/(b-1)! ds, so
- the piece with a given P has weight ∝ 1/((a-1)!(b-1)!), and there are C(m, a) of them: w_a = C(m,a)/((a-1)!(b-1)!);
- on a piece, s has density ∝ s^{m-2} on [0, 1] (E s² = (m-1)/(m+1)), and y/s, z/s are uniform on the simplices
  of dimensions a - 1 and b - 1, independent of s (E Σ u_i² = 2/(a+1) for u uniform on the simplex of a parts).
Hence E||U||² = (m-1)/(m+1) · Σ_a w_a (2/(a+1) + 2/(b+1)) / Σ_a w_a. Values: 2/3 (m = 2), 5/6 (m = 3), 21/25
(m = 4); (m + 1)E||U||²/8, the ratio to Laplace(2/ε) on each count, is 1/4, 5/12, 21/40 at m = 2, 3, 4 and tends
to 1 as m grows (tests/test_knorm.py checks the formula against exact rational arithmetic and Monte Carlo).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy import special

from ..core import symbolic as S

#: the largest number of bins for which the K-norm histogram is offered (its gain over Laplace noise fades as m
#: grows: (m+1)E||U||²/8 -> 1); the exact sum has m - 1 terms
MAX_BINS = 4096
#: relative error allowance of the float64 sum (log-gamma weights, at most MAX_BINS positive terms)
REL_ERR = 1e-9


def second_moment(m: float) -> float:
    """E||U||², U uniform in K = {Σx = 0, ||x||₁ <= 2} ⊂ ℝ^m, rounded up by REL_ERR (0 for m = 1; NaN beyond
    MAX_BINS or for a non-integer m)."""
    if not (m >= 1 and m == math.floor(m) and m <= MAX_BINS):
        return float("nan")
    m = int(m)
    if m == 1:
        return 0.0
    a = np.arange(1, m, dtype=float)
    b = m - a
    logw = (special.gammaln(m + 1) - special.gammaln(a + 1) - special.gammaln(b + 1)
            - special.gammaln(a) - special.gammaln(b))
    w = np.exp(logw - logw.max())
    val = (m - 1) / (m + 1) * float(np.sum(w * (2 / (a + 1) + 2 / (b + 1)))) / float(np.sum(w))
    return val * (1 + REL_ERR)


def _weights(m: int):
    """The integers c_a = C(m, a) C(m-2, a-1) = (m-2)! w_a, a = 1, ..., m-1 (w_a of the module docstring: multiplying
    every weight by (m-2)! leaves the weighted mean unchanged)."""
    c, out = m * 1, []  # a = 1: C(m, 1) C(m-2, 0) = m
    for a in range(1, m):
        out.append(c)
        # C(m, a+1) = C(m, a)(m-a)/(a+1), C(m-2, a) = C(m-2, a-1)(m-1-a)/a: exact integer steps
        c = c * (m - a) * (m - 1 - a) // ((a + 1) * a)
    return out


def second_moment_mp(m):
    """E||U||² of :func:`second_moment` at mpmath's working precision (the high-precision path of
    ``KNormSecondMoment``): the weights are the exact integers of :func:`_weights`, each rounded once to the working
    precision, in a weighted mean of positive terms (no cancellation). NaN where :func:`second_moment` is NaN."""
    import mpmath

    mf = float(m)
    if not (mf >= 1 and mf == math.floor(mf) and mf <= MAX_BINS):
        return mpmath.mpf("nan")
    m = int(mf)
    if m == 1:
        return mpmath.mpf(0)
    num = den = mpmath.mpf(0)
    for a, c in enumerate(_weights(m), start=1):
        w = mpmath.mpf(c)
        num += w * (mpmath.mpf(2) / (a + 1) + mpmath.mpf(2) / (m - a + 1))
        den += w
    return mpmath.mpf(m - 1) / (m + 1) * num / den


def noise_factor(m: float) -> float:
    """(m + 1) E||U||²: the K-norm noise adds m·E||Z||²/n² = m²(m+1)E||U||²/(nε)² to a histogram's ISE."""
    return (m + 1) * second_moment(m)


class KNormSecondMoment(S.ScalarFunction):
    """``KNormSecondMoment(m)``: E||U||² for U uniform in {x ∈ ℝ^m : Σx = 0, ||x||₁ <= 2} (rounded up)."""

    nargs = 1
    scalar_value = staticmethod(second_moment)
    latex = r"\mathbb{{E}}\|U_{{{0}}}\|^2"


S.MPMATH_IMPL["KNormSecondMoment"] = second_moment_mp  # replaces the float64 value of the scalar-function default
S.HIGH_PRECISION.add("KNormSecondMoment")


def sample_uniform_k(rng: np.random.Generator, m: int, size: int) -> np.ndarray:
    """``size`` draws, uniform in K ⊂ ℝ^m (rows), by the decomposition of the module docstring."""
    a_vals = np.arange(1, m)
    b_vals = m - a_vals
    logw = (special.gammaln(m + 1) - special.gammaln(a_vals + 1) - special.gammaln(b_vals + 1)
            - special.gammaln(a_vals) - special.gammaln(b_vals))
    w = np.exp(logw - logw.max())
    a = rng.choice(a_vals, size=size, p=w / w.sum())
    s = rng.random(size) ** (1.0 / (m - 1))  # density ∝ s^{m-2}
    rank = np.argsort(np.argsort(rng.random((size, m)), axis=1), axis=1)  # a uniformly random order of the m coordinates
    pos = rank < a[:, None]  # a uniformly random set of a positive coordinates
    e = rng.exponential(size=(size, m))  # normalised exponentials: uniform on a simplex
    sum_pos = np.where(pos, e, 0.0).sum(axis=1, keepdims=True)
    sum_neg = np.where(pos, 0.0, e).sum(axis=1, keepdims=True)
    return s[:, None] * np.where(pos, e / sum_pos, -e / sum_neg)


def sample_noise(rng: np.random.Generator, m: int, eps: float, size: int) -> np.ndarray:
    """``size`` draws of the K-norm noise Z = R U, R ~ Gamma(m, 1/ε) (rows of length m; zeros when m = 1)."""
    if m == 1:
        return np.zeros((size, 1))
    r = rng.gamma(m, 1.0 / eps, size=size)
    return r[:, None] * sample_uniform_k(rng, m, size)
