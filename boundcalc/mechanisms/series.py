"""Orthogonal-series density estimation under local privacy (DJW NeurIPS 2013 / JASA; docs/problems/density.md).

**Family** (made explicit for boundcalc): the cosine-Sobolev ellipsoid on [0,1]

    S_β(L) = { densities f = 1 + Σ_{j>=1} c_j φ_j,  φ_j(x) = √2 cos(π j x),  Σ_j (π j)^{2β} c_j² <= L² }.

For β = 1 this is exactly {f : ∫_0^1 f'² <= L²} (the sine coefficients of f' are -πj c_j, boundary terms
vanish because sin(0) = sin(πj) = 0; Parseval in the sine basis), so it contains every L-Lipschitz
density on [0,1]. For integer β it is {∫(f^{(β)})² <= L²} among f whose even 2-periodic extension is
in H^β. {φ_j} ∪ {1} is an orthonormal basis of L²[0,1], and c_j = E φ_j(X).

**Estimator**: each user i releases Z_i, an ε-LDP unbiased estimate of v(X_i) = (φ_1(X_i), ..., φ_K(X_i))
∈ [-√2, √2]^K; ĉ = (1/n) Σ Z_i, f̂ = 1 + Σ_{j<=K} ĉ_j φ_j. Parseval:

    E∫(f̂ - f)² = Σ_{j>K} c_j² + Σ_{j<=K} Var(ĉ_j)
               <= L² (π(K+1))^{-2β} + (E||Z||² - ||c_{1:K}||²)/n,

the tail because Σ_{j>K} c_j² <= (π(K+1))^{-2β} Σ_j (πj)^{2β} c_j² (sharp: a single cosine at
j = K+1 with c = L/(π(K+1))^β attains it).

* **ℓ∞ sampling** (docs/problems/mean.md with radius r = √2): ||Z||² = K B² exactly, B = √2 coth(ε/2) C_K(ε)
  (C_K ≍ √(πK/2)), so the variance term is <= 2K coth²(ε/2) C_K(ε)²/n ≍ K²/(nε²): terms
  K ≍ (nε²)^{1/(2β+2)}, rate (nε²)^{-2β/(2β+2)}.
* **Laplace** on each coefficient: Σ_j |φ_j(x) - φ_j(x')| <= 2√2 K (ℓ1 sensitivity), so Laplace(2√2K/ε)
  per coordinate is ε-LDP; variance per coordinate 2(2√2K/ε)² = 16K²/ε², and Var φ_j(X) <= E φ_j² <= 2:
  variance term <= (2K + 16K³/ε²)/n ≍ K³/(nε²): K ≍ (nε²)^{1/(2β+3)}, rate (nε²)^{-2β/(2β+3)}: slower.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .local_scalar import coth_half
from .sampling import LinfSamplingC, linf_sampling

R_BASIS = math.sqrt(2.0)  # sup |φ_j|


def tail_bias(L, beta, K):
    """sup_{S_β(L)} Σ_{j>K} c_j² = L² (π(K+1))^{-2β}."""
    return L ** 2 / (sp.pi * (K + 1)) ** (2 * beta)


def linf_variance(K, n, eps):
    """E||Z||²/n of ℓ∞ sampling on [-√2, √2]^K: 2K coth²(ε/2) C_K(ε)²/n."""
    return 2 * K * coth_half(eps) ** 2 * LinfSamplingC(K, eps) ** 2 / n


def laplace_variance(K, n, eps):
    """(2K + 16K³/ε²)/n: data variance plus Laplace(2√2K/ε) on each of K coefficients."""
    return (2 * K + 16 * K ** 3 / eps ** 2) / n


def basis(x: np.ndarray, K: int) -> np.ndarray:
    """φ_1..φ_K at x: shape x.shape + (K,)."""
    j = np.arange(1, K + 1)
    return R_BASIS * np.cos(np.pi * np.asarray(x)[..., None] * j)


def _laplace_sums(x: np.ndarray, K: int, eps: float, rng: np.random.Generator, chunk: int) -> np.ndarray:
    """Σ_i of the users' Laplace releases φ(x_i) + Laplace(2√2K/ε)^K, per row of x: (reps, K)."""
    from .histogram import laplace_sum

    reps, n = x.shape
    out = np.zeros((reps, K))
    scale = 2 * R_BASIS * K / eps
    rows_per = max(1, chunk // max(1, n * K))
    for start in range(0, reps, rows_per):
        out[start:start + rows_per] = basis(x[start:start + rows_per], K).sum(axis=1)
    return out + laplace_sum(rng, out.shape, n, scale)  # the n users' noises, summed exactly


def _linf_sums(x: np.ndarray, K: int, eps: float, rng: np.random.Generator, chunk: int) -> np.ndarray:
    """Σ_i of the users' ℓ∞-sampling releases of φ(x_i), per row of x: (reps, K)."""
    reps, n = x.shape
    out = np.zeros((reps, K))
    rows_per = max(1, chunk // max(1, n * K))
    for start in range(0, reps, rows_per):
        xs = x[start:start + rows_per]
        v = basis(xs.reshape(-1), K)
        z = linf_sampling(v, R_BASIS, eps, rng)
        out[start:start + rows_per] = z.reshape(xs.shape[0], n, K).sum(axis=1)
    return out


#: ε-LDP channel -> the sum over users of its releases of φ(x_i)
CHANNEL_SUMS = {"laplace": _laplace_sums, "linf": _linf_sums}


def estimate_coefficients(x: np.ndarray, K: int, eps: float, mechanism: str, rng: np.random.Generator,
                          chunk: int = 2_000_000) -> np.ndarray:
    """ĉ for each row of x (shape (reps, n)) under ``mechanism`` (a key of :data:`CHANNEL_SUMS`): (reps, K)."""
    return CHANNEL_SUMS[mechanism](x, K, eps, rng, chunk) / x.shape[1]
