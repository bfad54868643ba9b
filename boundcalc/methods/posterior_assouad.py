"""Posterior-mean (Bayes) form of Assouad's lemma under ε-LDP (docs/methods/posterior-assouad.md).

Setting: a hypercube family P_v, v uniform on {±1}^a, observed through any sequentially interactive
ε-LDP protocol Z = Z_{1:n} (each conditional channel ε-LDP, X_i independent of Z_{1:i-1}). For each
coordinate j let M_{±j} be the law of Z given v_j = ±1 (a mixture over the other coordinates).

**Lemma (posterior sign information).** For every j,

    E[(E[v_j | Z])²] <= min{1, 2(1 - exp(-K_j/2))} <= K_j,

where K_j is any bound on KL(M_{+j} ‖ M_{-j}), e.g.
``K_j = n · min{c_ε τ_j², KL_j}`` with τ_j = max TV(P_v, P_{v^j}), KL_j = max KL(P_v ‖ P_{v^j})
(v^j: v with coordinate j flipped, v_j = +1), c_ε = 2(e^ε-1)²/(e^ε+1) the χ²–TV contraction constant.

Proof. With m_± the densities of M_{±j} and m̄ = (m_+ + m_-)/2, E[v_j|Z] = (m_+ - m_-)/(m_+ + m_-), so
E[(E[v_j|Z])²] = ∫ (m_+ - m_-)²/(2(m_+ + m_-)) = Δ/2 (Δ the triangular discrimination). Since
(m_+ - m_-)² = (√m_+ - √m_-)²(√m_+ + √m_-)² and (√m_+ + √m_-)² <= 2(m_+ + m_-),
Δ <= 2∫(√m_+ - √m_-)² = 4(1 - BC) with BC = ∫√(m_+ m_-). The Rényi divergence of order 1/2 is at
most KL: -2 log BC <= KL(M_{+j}‖M_{-j}), so Δ/2 <= 2(1 - e^{-KL/2}). Joint convexity of KL over the
pairing v ↔ v^j gives KL(M_{+j}‖M_{-j}) <= max_v KL(M_v^n ‖ M_{v^j}^n); the chain rule of KL with the
χ²–TV contraction (:mod:`boundcalc.methods.chi2_contraction`) bounds that by n c_ε τ_j², and the chain
rule with data processing (each step is a channel applied to X_i) by n KL_j. ∎

**Uses.** (i) Squared loss with θ_v,j = c_j + h_j v_j: the Bayes risk of any estimator is at least
Σ_j E Var(θ_j | Z) = Σ_j h_j² (1 - E[(E[v_j|Z])²]) >= Σ_j h_j²(1 - k_j). Against the Hamming-loss
Assouad bound ``Σ_j (h_j²/2)(1 - TV)`` (separation (2h_j)²/4 halved by the two-point reduction) it keeps
the full h_j² and needs only KL instead of TV. (ii) Losses linear in the mean, μ_v = c·v: the Bayes
excess risk ``c·(r√a + E⟨θ̂, E[v|Z]⟩)`` over the ℓ2 ball of radius r is at least
``c r (√a - E‖E[v|Z]‖₂) >= c r (√a - sqrt(Σ_j k_j))`` (Cauchy–Schwarz, then Jensen).
Both are checked against exact Bayes risks of finite ε-LDP channels in the tests.
"""
from __future__ import annotations

import math

import sympy as sp

from ..core import symbolic as S
from .chi2_contraction import chi2_factor, chi2_factor_float


@S.cached_expression
def sign_information(kl):
    """sympy: min{1, 2(1 - e^{-K/2})}, the bound on E[(E[v_j|Z])²] from a KL bound K."""
    return S.Min(1, S.Max(0, -2 * S.expm1(-kl / 2)))


def sign_information_float(kl: float) -> float:
    return min(1.0, -2.0 * math.expm1(-kl / 2.0))


def kl_bound_expr(n, eps, tv_flip, kl_flip=None):
    """sympy: n · min{c_ε τ², KL_1} (``kl_flip`` optional: the one-sample data KL of a flip; ``eps`` None
    means no privacy, and then ``kl_flip`` is required)."""
    if eps is None:
        return n * kl_flip
    priv = n * chi2_factor(eps) * tv_flip ** 2
    return priv if kl_flip is None else S.Min(priv, n * kl_flip)


def kl_bound_float(n: int, eps, tv_flip: float, kl_flip=None) -> float:
    vals = []
    if eps is not None:
        vals.append(n * chi2_factor_float(eps) * tv_flip ** 2)
    if kl_flip is not None:
        vals.append(n * kl_flip)
    return min(vals)


def bernoulli_chi2(p, q):
    """sympy: χ²(Bern(p) ‖ Bern(q)) = (p - q)²/(q(1 - q)) >= KL(Bern(p) ‖ Bern(q)); written without the
    cancellation of the KL formula (which float64 turns negative for p - q below about 1e-9)."""
    return (p - q) ** 2 / (q * (1 - q))


def bernoulli_kl(p, q):
    """sympy: KL(Bern(p) ‖ Bern(q)) for 0 < p, q < 1."""
    return p * sp.log(p / q) + (1 - p) * sp.log((1 - p) / (1 - q))


def sign_kl(delta):
    """sympy: KL(Bern((1+δ)/2) ‖ Bern((1-δ)/2)) = δ log((1+δ)/(1-δ)) = 2δ artanh δ."""
    return 2 * delta * sp.atanh(delta)


# ----------------------------------------------------------------------------- the information budget

def mi_per_report(eps):
    """sympy: ε tanh(ε/2), the largest mutual information I(X; Z) of an ε-LDP channel (any input law).

    Derivation: I(X;Z) = E_X KL(Q(·|X) ‖ Q_P) and the ratio ρ = q(z|x)/q_P(z) lies in [e^{-ε}, e^ε] with
    E_{Q_P} ρ = 1; KL = E[ρ log ρ] is convex in the law of ρ, so it is largest at the two-point law on the
    endpoints (mass 1/(e^ε+1) at e^ε), where it equals ε(e^ε - 1)/(e^ε + 1) = ε tanh(ε/2)."""
    return eps * sp.tanh(eps / 2)


def mi_per_report_float(eps: float) -> float:
    return eps * math.tanh(eps / 2.0)


# **Budget lemma.** For independent uniform signs v_1..v_a and any sequentially interactive ε-LDP protocol,
#     Σ_j E[(E[v_j|Z])²] <= 2 Σ_j I(v_j; Z) <= 2 I(V; Z) <= 2 n ε tanh(ε/2).
# Proof: I(v_j; Z) = E φ(E[v_j|Z]) with φ(m) = ((1+m)/2)log(1+m) + ((1-m)/2)log(1-m) = Σ_k m^{2k}/(2k(2k-1))
# >= m²/2; independence of the v_j gives Σ_j I(v_j; Z) <= I(V; Z) (chain rule, I(v_j; Z | v_{<j}) =
# I(v_j; Z, v_{<j}) >= I(v_j; Z)); the chain rule over reports and the Markov chain V → X_i → Z_i given
# Z_{<i} give I(V; Z) <= Σ_i I(X_i; Z_i | Z_{<i}) <= n ε tanh(ε/2).
