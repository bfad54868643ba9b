"""ε-LDP mechanisms for one truncated scalar (docs/problems/mean.md; Duchi, Jordan & Wainwright).

Each user holds x, truncates it to ``[x]_T = max(-T, min(T, x))`` and releases one privatised value Z
with ``E[Z | x] = [x]_T`` (unbiased for the truncated value). The statistician averages the Z_i.

- **Laplace**: ``Z = [x]_T + Laplace(2T/ε)``. The range of ``[x]_T`` has length 2T, so the density
  ratio ``exp((|z - a| - |z - b|)/(2T/ε)) <= e^ε`` for a, b in [-T, T]: ε-LDP.
  ``E[Z²|x] = [x]_T² + 2 (2T/ε)² = [x]_T² + 8T²/ε²``.
- **one-bit** (Duchi et al.): ``Z = ± T c_ε`` with ``c_ε = (e^ε+1)/(e^ε-1) = coth(ε/2)`` and
  ``P(Z = +T c_ε) = 1/2 + [x]_T/(2 T c_ε)``. The two probabilities lie in
  ``[1/(e^ε+1), e^ε/(e^ε+1)]``, so their ratio over any two inputs is at most e^ε: ε-LDP.
  ``E[Z|x] = T c_ε (2P(+) - 1) = [x]_T``; ``Z² = T² c_ε²`` always.

Both second moments are checked by simulation and by exact computation in tests/test_local_mechanisms.py.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from .. import symbolic as S


def coth_half(eps):
    """coth(ε/2) = (e^ε+1)/(e^ε-1) = 1 + 2/expm1(ε), as a sympy expression (stable for small ε)."""
    return 1 + 2 / S.expm1(eps)


def coth_half_np(eps):
    eps = np.asarray(eps, float)
    return 1.0 + 2.0 / np.expm1(eps)


def onebit_second_moment(T, eps):
    """E[Z²] of the one-bit mechanism on [-T, T]: T² coth²(ε/2) (exact, every input)."""
    return T ** 2 * coth_half(eps) ** 2


def laplace_noise_second_moment(T, eps):
    """E[W²] of the Laplace(2T/ε) noise: 8T²/ε²."""
    return 8 * T ** 2 / eps ** 2


def truncate(x, T):
    return np.clip(x, -T, T)


def onebit(x, T, eps, rng: np.random.Generator):
    """Vectorised one-bit privatisation of the truncated values (any array shape)."""
    xt = truncate(np.asarray(x, float), T)
    c = coth_half_np(eps)
    p_plus = 0.5 + xt / (2.0 * T * c)
    return np.where(rng.random(xt.shape) < p_plus, T * c, -T * c)


def onebit_probabilities(x, T, eps):
    """P(Z = +T c_ε | x) (for the exact privacy/unbiasedness tests)."""
    xt = truncate(np.asarray(x, float), T)
    return 0.5 + xt / (2.0 * T * coth_half_np(eps))


def laplace(x, T, eps, rng: np.random.Generator):
    """Vectorised Laplace privatisation of the truncated values."""
    xt = truncate(np.asarray(x, float), T)
    return xt + rng.laplace(0.0, 2.0 * T / eps, size=xt.shape)


MECHANISMS = {"one-bit": onebit, "laplace": laplace}


# ------------------------------------------------------------------ quantised randomized response

def levels_keep_probability(eps, m):
    """λ = (e^ε - 1)/(e^ε + 2m) of (2m+1)-ary randomized response written as "keep with probability λ,
    else a uniform level" (sympy; expm1 form, accurate for small ε and overflow-free for large ε)."""
    return S.expm1(eps) / (S.expm1(eps) + 2 * m + 1)


def levels_second_moment(T, eps, m, r):
    """Certified bound on E[Ẑ²] of truncation at T + unbiased rounding to the grid jT/m (|j| <= m) +
    (2m+1)-ary randomized response, Ẑ = v(Z)/λ, over E|X|^k <= r^k with k >= 2 (sympy).

    Derivation. Y = the grid level: for |x| in [jh, (j+1)h] (h = T/m) round up with probability
    (|x| - jh)/h, so E[Y|x] = [x]_T and E[Y²|x] = g(|[x]_T|) with g the piecewise-linear interpolation of
    x² on the grid. Chord bounds: g(x) - x² = (x - jh)((j+1)h - x) <= min{h x, h²/4}, and g(x) <= T x
    (g is convex, g(0) = 0, g(T) = T²). So E Y² <= min{E[X_T²] + min{h E|X_T|, h²/4}, T E|X_T|}
    <= min{min{r², T²} + min{h r, h²/4}, T min{r, T}} (Lyapunov, k >= 2).
    Randomized response on the 2m+1 levels: Z = Y with probability λ, else a uniform level (this is
    (2m+1)-RR with P(Z = Y) = e^ε/(e^ε+2m)); levels are symmetric, so E[v(Z)|Y] = λ Y and Ẑ = v(Z)/λ is
    unbiased for [x]_T. E Ẑ² = (λ E Y² + (1-λ) avg_j (jh)²)/λ², avg_j (jh)² = T²(m+1)/(3m).
    ε-LDP: every output has probability in [1/(e^ε+2m), e^ε/(e^ε+2m)] whatever the input.
    """
    lam = levels_keep_probability(eps, m)
    h = T / m
    ey2 = sp.Min(sp.Min(r ** 2, T ** 2) + sp.Min(h * r, h ** 2 / 4), T * sp.Min(r, T))
    return ey2 / lam + (2 * m + 1) / (S.expm1(eps) + 2 * m + 1) * T ** 2 * (m + 1) / (3 * m) / lam ** 2


def levels_rr(x, T, eps, rng: np.random.Generator, m: int = 1):
    """Vectorised truncation + unbiased rounding to the grid jT/m + (2m+1)-RR; returns Ẑ = v(Z)/λ."""
    xt = truncate(np.asarray(x, float), T)
    h = T / m
    lo = np.floor(xt / h)
    up = rng.random(xt.shape) < (xt / h - lo)
    j = np.clip(lo + up, -m, m)
    lam = np.expm1(eps) / (np.expm1(eps) + 2 * m + 1)
    keep = rng.random(xt.shape) < lam
    j = np.where(keep, j, rng.integers(-m, m + 1, size=xt.shape))
    return j * h / lam


def levels_rr_channel(m: int, eps: float):
    """The (2m+1)-RR matrix Q[y, z] on the level indices (exact checks)."""
    K = 2 * m + 1
    Q = np.ones((K, K)) + np.eye(K) * np.expm1(eps)
    return Q / Q.sum(axis=1, keepdims=True)


MECHANISMS["levels-rr"] = levels_rr
