"""Hellinger–Bhattacharyya form of Assouad's lemma, without privacy and under ε-local privacy with
sequential interaction (derivation: docs/methods/hellinger-assouad.md).

Setting (:class:`boundcalc.core.bounds.HypercubeFamily`): hypotheses P_v, v ∈ {±1}^m; every estimate θ̂ gives
numbers u_j with ``loss(θ̂, θ_v) >= w Σ_j φ(u_j - a v_j)``, φ(x) = x² or |x|. One observation: H²(P_v, P_v') <= H²₁
and TV(P_v, P_v') <= τ whenever v, v' differ in one coordinate. The statistician sees the transcript
Z = Z_{1:n} of a protocol: without privacy Z = X_{1:n}; under ε-LDP user i releases Z_i through a channel
K_i(· | x, z_{<i}) chosen from the earlier reports, ε-LDP for every history (sequential interaction).
M_v is the law of Z under P_v, BC(P, Q) = Σ √(pq) = 1 - H²(P, Q).

1. **One round.** Given the history z_{<i}, Z_i has law P_v K_i(·|·, z_{<i}) (X_i is independent of the
   history), and ``H²(P_v K, P_v' K) <= h = min{H²₁, h_ε τ²}``, h_ε = (e^ε - 1)²/(4(e^ε + 1)): data processing
   and the Hellinger–TV contraction of ε-LDP channels (:mod:`boundcalc.methods.hellinger_contraction`, a
   sharpening of Duchi, Jordan & Wainwright 2018, Thm 1). Without privacy h = H²₁.
2. **Tensorisation by peeling the last report.** ``BC(M_v, M_v') = Σ_{z<n} √(m_v(z<n) m_v'(z<n)) ·
   BC(P_v K_n, P_v' K_n) >= (1 - h) BC(M_v^{(n-1)}, M_v'^{(n-1)})``, so by induction BC(M_v, M_v') >= (1-h)ⁿ.
3. **Mixtures.** M_{±j} = the average of M_v over v with v_j = ±1; pairing v with its j-flip, the joint
   concavity of (p, q) ↦ √(pq) gives BC(M_{+j}, M_{-j}) >= (1 - h)ⁿ.
4. **ℓ2², posterior variance.** With V uniform, the Bayes risk of estimating a v_j from Z is
   ``a² (1 - E[E(v_j|Z)²]) = a² Σ_z 2 m₊m₋/(m₊ + m₋)`` (m_± the densities of M_{±j}), and by Cauchy–Schwarz
   ``BC = Σ √(2m₊m₋/(m₊+m₋)) · √((m₊+m₋)/2) <= √(Σ 2m₊m₋/(m₊+m₋))``. Summing over j:
   ``sup_v E loss >= m w a² (1 - h)^{2n}``.
5. **ℓ1, exact two-point form.** The Bayes risk of estimating a v_j under |·| is ``a(1 - TV(M_{+j}, M_{-j}))``
   (the posterior median), and Le Cam's inequality TV <= √(1 - BC²) gives
   ``1 - TV >= 1 - √(1 - B) = B/(1 + √(1 - B)) >= B/2``, B = (1-h)^{2n}:
   ``sup_v E loss >= m w a B/(1 + √(1 - B))``.

Assouad (1983) and Yu (1997, "Assouad, Fano, and Le Cam") for the hypercube scheme; Duchi, Jordan &
Wainwright (FOCS 2013 / JASA 2018) for contractions of locally private channels. Against the coordinate-wise
private Le Cam bound (the total variation of each flip through Pinsker) this keeps the full posterior variance
(no factor 1/2 from a Hamming reduction) and pays 2n h where the KL route pays n c_ε τ² = 8n h_ε τ².
"""
from __future__ import annotations

import math

import sympy as sp

from ..core import symbolic as S
from ..core.bounds import Bound, HypercubeFamily, Method, register_method
from .hellinger_contraction import hellinger_factor, hellinger_factor_float

SOURCE = ("Hellinger–Bhattacharyya Assouad (Assouad 1983; Yu 1997) with the Hellinger contraction of ε-LDP "
          "channels (Duchi, Jordan & Wainwright 2013/2018, sharpened); docs/methods/hellinger-assouad.md (derived)")

DERIVATION = (
    "Per round, whatever the history, H²(P_v K, P_v' K) <= h = min{H²₁, h_ε τ²} for a one-coordinate flip "
    "(data processing; Hellinger–TV contraction of ε-LDP channels, h_ε = (e^ε-1)²/(4(e^ε+1)); h = H²₁ without "
    "privacy); peeling the last report of a sequentially interactive protocol gives BC(M_v, M_v') >= (1-h)ⁿ, and "
    "joint concavity of √(pq) the same for the mixtures M_{±j}. ℓ2²: Bayes risk of a v_j = a² Σ 2m₊m₋/(m₊+m₋) "
    ">= a² BC² (Cauchy–Schwarz), so M >= m w a² (1-h)^{2n}. ℓ1: Bayes risk a(1 - TV) and TV <= √(1 - BC²) "
    "(Le Cam), so M >= m w a B/(1 + √(1-B)), B = (1-h)^{2n}.")


def per_flip_h(privacy: str, eps, tv_flip, h2_flip):
    """sympy: the per-round H² bound h (``None`` when no bound is available: no privacy and no H²₁)."""
    if privacy == "none":
        return h2_flip
    hp = hellinger_factor(eps) * tv_flip ** 2
    return hp if h2_flip is None else S.Min(h2_flip, hp)


@S.cached_expression
def squared_affinity(n, h):
    """sympy: B = (1 - h)^{2n} in the stable form exp(2n log1p(-min(h, 1))) (0 when h >= 1)."""
    return sp.exp(2 * n * S.log1p(-S.Min(h, 1)))


@S.cached_expression
def l1_factor(n, h):
    """sympy: 1 - √(1 - B) = B/(1 + √(1 - B)), B = (1-h)^{2n}, with 1 - B = -expm1(2n log1p(-h)) (no cancellation)."""
    log_b = 2 * n * S.log1p(-S.Min(h, 1))
    return sp.exp(log_b) / (1 + sp.sqrt(-S.expm1(log_b)))


@S.cached_expression
def hellinger_assouad_expr(loss, n_coords, weight, amplitude, n, h):
    """sympy: m w a² (1-h)^{2n} (ℓ2²) or m w a B/(1 + √(1-B)) (ℓ1)."""
    if loss == "l2sq":
        return n_coords * weight * amplitude ** 2 * squared_affinity(n, h)
    if loss == "l1":
        return n_coords * weight * amplitude * l1_factor(n, h)
    raise ValueError(f"loss must be l2sq or l1, not {loss!r}")


# ----------------------------------------------------------------------------- float forms (tests, checks)

def per_flip_h_float(privacy: str, eps, tv_flip: float, h2_flip) -> float:
    if privacy == "none":
        return float(h2_flip)
    hp = hellinger_factor_float(eps) * tv_flip ** 2
    return hp if h2_flip is None else min(float(h2_flip), hp)


def transcript_bc_lower(n: int, h: float) -> float:
    """(1 - h)ⁿ: the lower bound on BC(M_{+j}, M_{-j}) of steps 1–3."""
    return 0.0 if h >= 1 else math.exp(n * math.log1p(-h))


def bound_float(loss: str, n_coords: int, weight: float, amplitude: float, n: int, h: float) -> float:
    """Float version of :func:`hellinger_assouad_expr`."""
    b = transcript_bc_lower(n, h) ** 2
    if loss == "l2sq":
        return n_coords * weight * amplitude ** 2 * b
    return n_coords * weight * amplitude * b / (1.0 + math.sqrt(max(0.0, 1.0 - b)))


# ----------------------------------------------------------------------------- the Method

@register_method
class HellingerAssouad(Method):
    """Assouad's lemma in the Hellinger–Bhattacharyya form (module docstring), for hypercube families, without
    privacy (data processing) and under sequentially interactive ε-LDP."""

    name, shape, privacies = "hellinger-assouad", HypercubeFamily, ("none", "local")

    def bounds(self, family: HypercubeFamily, privacy: str) -> list:
        h = per_flip_h(privacy, S.eps, family.tv_flip, family.h2_flip)
        if h is None:
            return []
        expr = hellinger_assouad_expr(family.loss, family.n_coords, family.weight, family.amplitude, S.n, h)
        deriv = (family.derivation + " " if family.derivation else "") + DERIVATION
        return [Bound(side="lower", name=family.name, label=family.title, expr=expr, source=family.source or SOURCE, derivation=deriv, free=family.free,
                      conditions=family.conditions, optimum=family.optimum,
                      extra=dict(family.extra or {}, method=self.name))]
