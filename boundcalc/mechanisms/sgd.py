"""Locally private stochastic gradient methods for linear losses (DJW FOCS 2013 §V.C, Lemma 1;
docs/problems/linear.md): certified excess-risk bounds and vectorised simulations of the actual optimisers.

Loss ℓ(θ; x) = ⟨θ, x⟩, risk R(θ) = ⟨θ, μ⟩ with μ = E X; excess risk R(θ̂) - min_Θ R = ⟨θ̂, μ⟩ + r||μ||_*
(||·||_* the dual norm of Θ's norm). Each user i sends Z_i, an unbiased ε-LDP release of its gradient
x_i (which does not depend on θ: the protocol is non-interactive); the server runs one pass over
Z_1..Z_n. Since Z_t is independent of θ_t (a function of Z_1..Z_{t-1}) and E Z_t = μ,
E⟨μ, θ̄ - θ*⟩ = (1/n) Σ_t E⟨Z_t, θ_t - θ*⟩ <= E[regret]/n for θ̄ the average iterate.

* **Projected SGD on the ℓ2 ball** of radius r (data ||x||₂ <= M, ℓ2 sampling with radius M, ||Z||₂ = B
  exactly, B = M coth(ε/2) √π Γ((d+1)/2)/Γ(d/2)): θ_1 = 0, θ_{t+1} = Π(θ_t - η Z_t). Non-expansiveness of
  Π gives ||θ_{t+1} - θ*||² <= ||θ_t - θ*||² - 2η⟨Z_t, θ_t - θ*⟩ + η²B²; summing, regret <= r²/(2η) + ηnB²/2
  (||θ_1 - θ*|| <= r); η = r/(B√n): **E excess <= r B/√n** ≍ rM √(d/(nε²)).
* **Hedge / entropic mirror descent on the ℓ1 ball** of radius r (data ||x||_∞ <= M, ℓ∞ sampling with
  radius M, ||Z||_∞ = B exactly, B = M coth(ε/2) C_d(ε)): the ℓ1 ball is the convex hull of the 2d
  vertices ±r e_j; θ_t = Σ_v w_t(v) v with w_t ∝ exp(-η Σ_{s<t} ⟨v, Z_s⟩), and the vertex losses
  ⟨±r e_j, Z⟩ lie in [-rB, rB]. Hoeffding's lemma on each step's log-partition change gives
  regret <= log(2d)/η + η n (2rB)²/8; η = √(2 log(2d)/n)/(rB): **E excess <= rB √(2 log(2d)/n)**
  ≍ rM √(d log(2d)/(nε²)) (C_d ≍ √(πd/2)).
* Without privacy, Z = x: ||Z||₂ <= M (SGD: rM/√n) and ||Z||_∞ <= M (Hedge: rM √(2 log(2d)/n)).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .local_scalar import coth_half
from .sampling import L2SphereConst, LinfSamplingC, l2_sampling, linf_sampling


def l2_gradient_bound(M, eps, d):
    """B of ℓ2 sampling with radius M (sympy)."""
    return M * coth_half(eps) * L2SphereConst(d)


def linf_gradient_bound(M, eps, d):
    """B of ℓ∞ sampling with radius M (sympy)."""
    return M * coth_half(eps) * LinfSamplingC(d, eps)


def sgd_bound(r, G, n):
    """Certified E excess of one-pass projected SGD, step r/(G√n), ||Z||₂ <= G: rG/√n."""
    return r * G / sp.sqrt(n)


def hedge_bound(r, G, n, d):
    """Certified E excess of Hedge over the 2d vertices, step √(2log(2d)/n)/(rG), ||Z||_∞ <= G."""
    return r * G * sp.sqrt(2 * sp.log(2 * d) / n)


# --------------------------------------------------------------------------- simulations

def privatise(x: np.ndarray, M: float, eps: float | None, geometry: str, rng) -> np.ndarray:
    """Rows of x released by ℓ2 (geometry l2) or ℓ∞ (geometry l1) sampling; eps None: no privacy."""
    if eps is None:
        return x
    return l2_sampling(x, M, eps, rng) if geometry == "l2" else linf_sampling(x, M, eps, rng)


def run_projected_sgd(draw, n: int, reps: int, d: int, r: float, M: float, eps, eta: float, rng,
                      chunk_rows: int = 400_000) -> np.ndarray:
    """One pass of projected SGD (ℓ2 ball, θ_1 = 0) on n privatised gradients, for ``reps`` independent
    runs at once. ``draw(k)`` returns k data rows (k, d). Returns the average iterates θ̄ (reps, d)."""
    theta = np.zeros((reps, d))
    acc = np.zeros((reps, d))
    steps_per = max(1, chunk_rows // reps)
    t = 0
    while t < n:
        k = min(steps_per, n - t)
        z = privatise(draw(k * reps), M, eps, "l2", rng).reshape(k, reps, d)
        for s in range(k):
            acc += theta
            theta -= eta * z[s]
            nrm = np.sqrt(np.einsum("ij,ij->i", theta, theta))
            theta *= np.minimum(1.0, r / np.maximum(nrm, 1e-300))[:, None]
        t += k
    return acc / n


def run_hedge(draw, n: int, reps: int, d: int, r: float, M: float, eps, eta: float, rng,
              chunk_rows: int = 400_000) -> np.ndarray:
    """One pass of Hedge over the vertices ±r e_j of the ℓ1 ball on n privatised gradients (ℓ∞ sampling).

    With S_{t-1} = Σ_{s<t} Z_s: θ_t = -r Σ_j sinh(ηr S_j) e_j / Σ_k cosh(ηr S_k) (computed in log space).
    Returns the average iterates θ̄ (reps, d)."""
    S = np.zeros((reps, d))
    acc = np.zeros((reps, d))
    steps_per = max(1, chunk_rows // (reps * max(d, 1)) + 1)
    t = 0
    while t < n:
        k = min(steps_per, n - t)
        z = privatise(draw(k * reps), M, eps, "l1", rng).reshape(k, reps, d)
        cs = np.cumsum(z, axis=0)
        prev = np.concatenate([S[None], S[None] + cs[:-1]], axis=0)  # S_{t-1} for the k steps
        a = eta * r * prev
        top = np.max(np.abs(a), axis=2, keepdims=True)
        num = np.exp(-a - top) - np.exp(a - top)  # 2 sinh(-a) e^{-top}
        den = np.sum(np.exp(a - top) + np.exp(-a - top), axis=2, keepdims=True)
        acc += r * np.sum(num / den, axis=0)
        S = S + cs[-1]
        t += k
    return acc / n
