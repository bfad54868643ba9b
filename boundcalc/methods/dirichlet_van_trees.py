"""Full-simplex van Trees with a Dirichlet prior and the multinomial trace lemma (docs/methods/ldp-trace.md).

Setting: k symbols (a sub-alphabet of the d symbols; the others get probability 0, so the family is a
sub-family of the d-simplex for every k <= d and the bound never decreases with d), p in the open
(k-1)-simplex, written in orthonormal coordinates of the tangent space {h ∈ ℝ^k : Σh = 0}.
Any estimator p̂ ∈ ℝ^d loses at least the error of its orthogonal projection onto the affine hull of
that face, so ``E‖p̂ - p‖² >= E‖θ̂ - θ‖²`` for an estimator θ̂ of the k-1 orthonormal coordinates.

**One-sample trace bound (generalised trace lemma).** For any ε-LDP channel q(z|x), any p and any
τ > 0: ``tr I_Z(p) <= sinh²(ε/2)/τ + (e^ε - 1)² · #{x : p_x < τ}``, and also ``tr I_Z(p) <= tr I_X(p)
= (1 - 1/k) Σ_x 1/p_x``. Proof: with c_z = Σ_x p_x q(z|x) and r_{zx} = q(z|x)/c_z,
``tr I_Z = Σ_z c_z Σ_x (r_{zx} - r̄_z)² <= Σ_z c_z Σ_x (r_{zx} - 1)²`` (the unweighted mean r̄_z
minimises the sum of squares). c_z is an average of the q(z|x), so r_{zx} ∈ [e^{-ε}, e^ε] and
(r_{zx} - 1)² <= (e^ε - 1)²: this bounds the symbols with p_x < τ. For the others
Σ_{p_x >= τ} (r_{zx} - 1)² <= (1/τ) Σ_x p_x (r_{zx} - 1)² = Var_p(r_z)/τ <= sinh²(ε/2)/τ (E_p r_z = 1
and Bhatia–Davis with max r <= e^ε min r, as in :mod:`.ldp_trace`). Σ_z c_z = 1. The non-private cap
is data processing. Sequential interaction: each user's conditional channel is ε-LDP, so the chain
rule multiplies the bound by n (docs/methods/van-trees.md).

**Prior.** Dirichlet(α, …, α) on the k-simplex (α > 2; here an integer >= 3), A = kα. Its density in
orthonormal coordinates is proportional to Π_x p_x^{α-1} and vanishes on the boundary; the gradient of
its log along the face is (α-1) Π(1/p) (Π the projection onto 1^⊥), so with the Dirichlet moments
E p_x^{-2} = (A-1)(A-2)/((α-1)(α-2)) and E p_x^{-1} p_y^{-1} = (A-1)(A-2)/(α-1)² (x ≠ y):
``J = (α-1)² (k-1)(M₂ - M₁₁) = (k-1)(A-1)(A-2)/(α-2)``. The prior averages: E Σ_x 1/p_x = k(A-1)/(α-1),
and each marginal p_x ~ Beta(α, A-α), so for integer α:
``E #{x : p_x < τ} = k P(Beta(α, A-α) < τ) = k P(Bin(A-1, τ) >= α)``.

**Bound.** van Trees (Gill & Levit), with E min(a, b) <= min(E a, E b):
``sup_p E‖p̂ - p‖² >= (k-1)² / (n T + J)``, ``T = min{ sinh²(ε/2)/τ + (e^ε-1)² k P(Bin(kα-1, τ) >= α),
(k-1)(kα-1)/(α-1) }``; k, α and τ = (1-η)/k are free. For large n (α → ∞, η → 0, k = d) it tends to
``(d-1)²/(n d sinh²(ε/2))``, the risk of subset selection when d/(e^ε+1) is an integer.

Tests: tests/test_dirichlet_van_trees.py (J by Monte Carlo and by sympy at small k; the trace bound
against the exact Fisher information of random and extreme ε-LDP channels; the bound below the exact
risks of k-RR, RAPPOR and subset selection).
"""
from __future__ import annotations

import sympy as sp

from ..core import symbolic as S
from .fisher import sinh2_half


def dirichlet_prior_information(k, alpha):
    """J of the symmetric Dirichlet(α) prior on the k-simplex in orthonormal tangent coordinates (sympy)."""
    A = k * alpha
    return (k - 1) * (A - 1) * (A - 2) / (alpha - 2)


def expected_small_count(k, alpha, tau):
    """E #{x : p_x < τ} under the symmetric Dirichlet(α) prior, α an integer (sympy, exact binomial tail)."""
    return k * S.BinomSF(alpha - 1, k * alpha - 1, tau)


def expected_trace_private(eps, k, alpha, tau):
    """E tr I_Z <= sinh²(ε/2)/τ + (e^ε-1)² E#{p_x < τ} (sympy)."""
    return sinh2_half(eps) / tau + S.expm1(eps) ** 2 * expected_small_count(k, alpha, tau)


def expected_trace_nonprivate(k, alpha):
    """E tr I_X = (1 - 1/k) E Σ 1/p_x = (k-1)(kα-1)/(α-1) (sympy)."""
    return (k - 1) * (k * alpha - 1) / (alpha - 1)


@S.cached_expression
def dirichlet_van_trees(n, eps, k, alpha, tau, private=True):
    """(k-1)² / (n T + J): lower bound on sup_p E‖p̂ - p‖² over the d-simplex, k <= d (sympy)."""
    T = expected_trace_nonprivate(k, alpha)
    if private:
        T = S.Min(T, expected_trace_private(eps, k, alpha, tau))
    return (k - 1) ** 2 / (n * T + dirichlet_prior_information(k, alpha))
