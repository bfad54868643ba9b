"""The squared-Hellinger contraction of ε-locally private channels and the n-sample two-point affinity
built on it. Derivation: docs/methods/hellinger-contraction.md.

**Lemma (Hellinger–TV contraction).** For every ε-LDP channel K (``K(z|x) <= e^ε K(z|x')``) and all
input laws P, Q, with ``H²(P, Q) = ½ Σ_z (√P(z) - √Q(z))²``:

    H²(PK, QK) <= h_ε · TV(P, Q)²,   h_ε = (e^ε - 1)² / (4 (e^ε + 1)) = (e^ε - 1) tanh(ε/2) / 4.

Proof. Write ``P - Q = t(μ₊ - μ₋)``, ``t = TV(P, Q)``, μ± probability laws. Fix z and let
``M_z = max_x K(z|x)``; ε-LDP gives ``K(z|x) >= e^{-ε} M_z`` for every x, so ``PK(z)`` and ``QK(z)`` are
both ``>= e^{-ε} M_z`` and ``(√PK(z) + √QK(z))² >= 4 e^{-ε} M_z``. With ``a = Kμ₊(z)``, ``b = Kμ₋(z)``
(both in ``[e^{-ε} M_z, M_z]``), ``|a - b| <= (1 - e^{-ε}) M_z``. Hence

    (√PK - √QK)² = t²(a - b)² / (√PK + √QK)² <= t² (a - b)² e^ε / (4 M_z) <= t² (e^ε - 1) |a - b| / 4,

and summing over z, ``Σ_z |a - b| = 2 TV(Kμ₊, Kμ₋) <= 2 tanh(ε/2)`` (the TV contraction coefficient of
an ε-LDP channel is ``(e^ε - 1)/(e^ε + 1)``), so ``H² <= ½ · t² (e^ε - 1) · 2 tanh(ε/2) / 4``. ∎

It is ``c_ε/8`` with ``c_ε`` the χ²–TV constant of docs/methods/chi2-contraction.md, and it is sharp as
ε → 0 (binary randomized response of the indicator of a set of vanishing probability on which P - Q is
positive: ``H² = (ε²/8) t² (1 + o(1))``; tested). Going through ``2H² <= KL <= χ² <= c_ε t²`` instead
gives ``H² <= c_ε t²/2``, 4 times weaker (near zero ``H² ≈ χ²/8``).

**n samples, sequential interaction.** With ``X_i`` independent of ``Z_{1:i-1}`` and every conditional
channel ``K_i(·|x, z_{1:i-1})`` ε-LDP, the Hellinger affinity ``ρ = 1 - H²`` of the transcripts satisfies
``ρ(M_0^n, M_1^n) = Σ_{z_{<n}} Π_{i<n} √(m_{0,i} m_{1,i}) · ρ_n(z_{<n}) >= ... >= (1 - h)ⁿ`` whenever
every round's ``H²`` is at most h (peel off the last round, whose affinity is at least ``1 - h`` for
every history, and recurse). Hence ``H²(M_0^n, M_1^n) <= 1 - (1 - h)ⁿ`` with
``h = min(H²(P_0, P_1), h_ε TV(P_0, P_1)²)`` (the first by data processing).

**Two-point squared-loss affinity.** For hypotheses ``±1`` and any estimate c(Z),
``inf_c ½[E₀(c - 1)² + E₁(c + 1)²] = Σ 2 m₀m₁/(m₀ + m₁) = 1 - Δ/2`` (Δ the triangular
discrimination), and by Cauchy–Schwarz, with ρ = Σ √(m₀m₁) = Σ √(2m₀m₁/(m₀+m₁)) · √((m₀+m₁)/2),
``ρ² <= 1 - Δ/2``. So the affinity is ``>= ρ(M_0^n, M_1^n)² >= (1 - h)^{2n}``: this is
:func:`affinity_lower_expr` (it is >= 2(1 - h)ⁿ - 1, the form from ``Δ <= 4H²``, and never negative).
Against ``1 - KL`` with the χ² bound (``1 - n c_ε t²``) it is ``≈ 1 - n c_ε t²/4``: the quadratic
coefficient is 4 times smaller.
"""
from __future__ import annotations

import math

import sympy as sp

from ..core import symbolic as S

SOURCE = ("Hellinger–TV contraction of ε-LDP channels (derived; docs/methods/hellinger-contraction.md), "
          "refining Duchi, Jordan & Wainwright (JASA 2018), Theorem 1")


def hellinger_factor(eps):
    """sympy: h_ε = (e^ε - 1)²/(4(e^ε + 1)) written as expm1(ε) tanh(ε/2)/4 (stable for small and large ε)."""
    return S.expm1(eps) * sp.tanh(eps / 2) / 4


def hellinger_factor_float(eps: float) -> float:
    try:
        return math.expm1(eps) * math.tanh(eps / 2.0) / 4.0
    except OverflowError:
        return math.inf


def per_round_h2_expr(eps, tv, h2_stat=None):
    """sympy: the per-sample squared Hellinger bound min(H²_stat, h_ε TV²) (or h_ε TV² alone)."""
    hp = hellinger_factor(eps) * tv ** 2
    return hp if h2_stat is None else S.Min(h2_stat, hp)


@S.cached_expression
def affinity_lower_expr(n, eps, tv, h2_stat=None):
    """sympy: (1 - h)^{2n} with h = min(H²_stat, h_ε TV²): a lower bound on the two-point squared-loss
    affinity 1 - Δ/2 of the n-sample transcripts (sequential interaction allowed). Stable form
    exp(2n log1p(-min(h, 1))); h >= 1 gives 0."""
    h = per_round_h2_expr(eps, tv, h2_stat)
    return sp.exp(2 * n * S.log1p(-S.Min(h, 1)))


def affinity_lower(n: int, eps: float, tv: float, h2_stat: float | None = None) -> float:
    """Float version of :func:`affinity_lower_expr`."""
    h = hellinger_factor_float(eps) * tv ** 2
    if h2_stat is not None:
        h = min(h, h2_stat)
    if h >= 1:
        return 0.0
    return math.exp(2.0 * n * math.log1p(-h))
