"""Fingerprinting (score-attack) lower bound for the d-dimensional mean under central (ε,δ)-DP.

The idea of tracing a sample's contribution through the correlation ⟨M - p, x_i - p⟩ is the fingerprinting
argument of Bun, Ullman & Vadhan (2014) and Steinke & Ullman (2015, 2017), in the form of Kamath, Li,
Singhal & Ullman (2019) and the score attack of Cai, Wang & Zhang (2021). The explicit constants below were
derived for boundcalc; the derivation is in docs/methods/fingerprinting.md and is repeated here.

Family (a sub-family of every 𝒫_k): z ∈ {0} ∪ {±1}^d with P(z ≠ 0) = q and, given z ≠ 0, independent
coordinates with E z_j = p_j; the observation is X = (r q^{-1/k}/√d) z, so ||X|| = r q^{-1/k} on {z ≠ 0} and
E||X||^k = r^k (k = ∞: q = 1, ||X|| = r). The mean is θ = (ρ/√d) p with ρ = r q^{(k-1)/k}. Prior: the p_j
i.i.d., p_j = 2u_j - 1 with u_j ~ Beta(a, a), density π(p) ∝ (1-p²)^{a-1} on [-1, 1], E p_j² = 1/(2a+1).

Any (ε,δ)-DP estimator θ̂ gives, by post-processing, the (ε,δ)-DP estimate M = clip(√d θ̂/ρ) of p (clipped to
the box [-1,1]^d, which contains p, so the clip only shrinks the error), with
||θ̂ - θ||² >= (ρ²/d) ||M - p||². Let α² = E||M - p||² (prior, data and mechanism) and, for each i,
A_i = b_i ⟨M - p, z_i - p⟩ with b_i = 1{z_i ≠ 0}.

1. Score identity. The score of z_i for p_j is b_i (z_ij - p_j)/(1 - p_j²). With g_j(p) = E[M_j | p] (a
   polynomial in p), ∂_j g_j = E[M_j Σ_i b_i (z_ij - p_j) | p]/(1 - p_j²), and E[b_i (z_ij - p_j) | p] = 0, so
   E[Σ_i A_i | p] = Σ_j (1 - p_j²) ∂_j g_j(p).
2. Integration by parts against the prior. (1-p²)π(p) ∝ (1-p²)^a vanishes at ±1 and has derivative
   -2a p π(p), so E[(1 - p_j²) ∂_j g_j(p)] = 2a E[p_j g_j(p)] = 2a E[p_j M_j]. With E p_j² = 1/(2a+1) and
   Cauchy–Schwarz, Σ_j E[p_j M_j] >= d/(2a+1) - sqrt(d/(2a+1)) α, hence
   Σ_i E A_i >= 2a d/(2a+1) - 2a sqrt(d/(2a+1)) α.
3. Privacy. Let A_i' be A_i computed with M' = M(sample with z_i replaced by an independent copy). M' is
   independent of (b_i, z_i) given p and (p, M') has the law of (p, M): E A_i' = 0 and
   E|A_i'| <= q E||M' - p|| <= q α (the coordinates of z_i are independent given p, Var = 1 - p_j²).
   Given p, the data and the copy, A_i = f(M), A_i' = f(M') for one f and neighbouring samples; on b_i = 1,
   f takes values in [-R_-, R_+] with R_+ = Σ_j (1 - z_ij p_j)², R_- = Σ_j (1 - p_j²) (the box), on b_i = 0
   both are 0. Writing E A = ∫_0^{R_+} P(A > s) ds - ∫_0^{R_-} P(A < -s) ds and using
   P(A > s) <= e^ε P(A' > s) + δ and P(A < -s) >= e^{-ε}(P(A' < -s) - δ):
   E A_i <= e^ε E A'_+ - e^{-ε} E A'_- + δ E[b_i (R_+ + e^{-ε} R_-)].
   E A' = 0 gives E A'_+ = E A'_- = E|A'|/2, so the first two terms are sinh(ε) E|A'| <= sinh(ε) q α; and
   E[R_+ | p] = E[R_- | p] = Σ_j (1 - p_j²), whose prior mean is 2a d/(2a+1). So
   E A_i <= q sinh(ε) α + q δ (1 + e^{-ε}) 2a d/(2a+1).
4. Sum over i, compare with step 2 and solve for α:
   α >= (2a d/(2a+1)) (1 - nqδ(1 + e^{-ε})) / (nq sinh ε + 2a sqrt(d/(2a+1))); rescale by ρ²/d:

   M_n >= r² q^{2(k-1)/k} d (2a/(2a+1))² [1 - nqδ(1 + e^{-ε})]₊² / (nq sinh ε + 2a sqrt(d/(2a+1)))².

a > 0 and q ∈ (0, 1] are free (q = 1 for k = ∞). With δ = 0 the same bound holds under pure ε-DP.

**Under α-KL privacy** (KL(M(D) ‖ M(D')) <= α for neighbouring samples) steps 1 and 2 are kept, step 2's
Cauchy–Schwarz is replaced by an identity and step 3 by an information bound (docs/methods/fingerprinting.md,
"KL privacy"; below, α is the privacy level and α_M² = E||M - p||² the risk that steps 0-4 call α²).
Step 0': take M = E[p | θ̂], the posterior mean of p given the estimator's output: it is α-KL private (post-
processing), lies in the box, and its Bayes risk is at most that of the clipped rescaled estimate, so a lower bound
on its risk is one on every estimator's. Step 2': for the posterior mean E[p_j M_j] = E[M_j²], so
Σ_i E A_i = 2a Σ_j E[p_j M_j] = 2a Σ_j E M_j² = 2a (d/(2a+1) - α_M²), an identity (Cauchy–Schwarz gave the weaker
2a(d/(2a+1) - sqrt(d/(2a+1)) α_M)). Step 3' (k = ∞, q = 1), given p: E A_i = E_M ⟨M - p, E[z_i - p | M]⟩. For a unit
vector v, ⟨v, z_i - p⟩ has independent centred terms of ranges 2|v_j|, so E e^{λ⟨v, z_i - p⟩} <= e^{λ²/2}
(Hoeffding's lemma), and the Donsker–Varadhan formula gives ⟨v, E[z_i - p | M = m]⟩ <= sqrt(2 K(m)),
K(m) = KL(law of z_i given M = m ‖ law of z_i); with v along the conditional mean,
E A_i <= E[‖M - p‖ sqrt(2K(M))] <= sqrt(2 E K(M)) α_M (Cauchy–Schwarz), and E K(M) = I(z_i; M | p) <= α:
I(z_i; M) <= E KL(P_{M|z_i} ‖ P_{M|z_i'}) (convexity of KL in its second argument, z_i' an independent copy) <= α
(joint convexity over the other observations, then KL privacy). So E A_i <= sqrt(2α) α_M. Step 4': summing,
2a(d/(2a+1) - α_M²) <= n sqrt(2α) α_M; the left side minus the right is decreasing in α_M >= 0, so α_M is at least
the positive root, 4ad/((2a+1)(sqrt(u² + K) + u)) with u = n sqrt(2α), K = 16a²d/(2a+1). For finite k, condition
on which observations are non-zero: given H = h of them and their positions, the estimator is an α-KL-private
function of h observations from the k = ∞ family, so its risk is at least (ρ²/d) times the k = ∞ bound with n = h
(for the posterior mean given the output and the positions, which has the smaller risk); the squared root is convex
in h ((sqrt(u² + K) - u)² has second derivative 2(t - 1)²(t + 2) >= 0 in u, t = u/sqrt(u² + K)), so by Jensen its
mean over H ~ Bin(n, q) is at least its value at h = nq:

   M_n >= r² q^{2(k-1)/k} d (4a/(2a+1))² / (sqrt(u² + K) + u)²,  u = nq sqrt(2α)   (:func:`risk_lower_kl`).

At the best q this is 1.54 times the Cauchy–Schwarz form (r² q^{2(k-1)/k} d (2a/(2a+1))² / (u + 2a sqrt(d/(2a+1)))²),
which it never falls below (sqrt(u² + K) <= u + sqrt(K)).

With no observations (n = 0) the bound is d/(2a+1) in the cube's units: the prior variance of p, which is exactly
the Bayes risk there, so the constants of steps 1-2 cannot be improved at n = 0.
"""
from __future__ import annotations

import math

import sympy as sp

from ..core import symbolic as S

a_beta = sp.Symbol("a_beta", positive=True)  # Beta(a, a) prior parameter of the coordinate means


def risk_lower(n, d, r, eps, delta, a=a_beta, q=sp.Integer(1), exponent=sp.Integer(1)):
    """Sympy form of the bound (step 4 of the module docstring).

    ``exponent`` is (k-1)/k (1 for k = ∞), ``q`` the weight of the non-zero observations (1 for k = ∞),
    ``delta`` None for pure ε-DP.
    """
    c = 2 * a / (2 * a + 1)
    if delta is None:
        bracket = c
    else:
        bracket = S.Max(0, c * (1 - n * q * delta * (1 + sp.exp(-eps))))
    return _score_attack(n, d, r, sp.sinh(eps), bracket, a, q, exponent)


def risk_lower_kl(n, d, r, alpha, a=a_beta, q=sp.Integer(1), exponent=sp.Integer(1)):
    """Sympy form of the bound under α-KL privacy (module docstring, "Under α-KL privacy"): step 2 as the identity
    Σ_i E A_i = 2a(d/(2a+1) - α_M²) of the posterior mean, step 3' E A_i <= sqrt(2α) α_M, and α_M the positive root
    of 2a α_M² + nq sqrt(2α) α_M - 2ad/(2a+1) = 0, written 4ad/((2a+1)(sqrt(u² + K) + u)) (no cancellation),
    u = nq sqrt(2α), K = 16a²d/(2a+1); squared and rescaled by r² q^{2(k-1)/k}/d."""
    u = n * q * sp.sqrt(2 * alpha)
    big_k = 16 * a ** 2 * d / (2 * a + 1)
    return r ** 2 * q ** (2 * exponent) * d * (4 * a / (2 * a + 1)) ** 2 / (sp.sqrt(u ** 2 + big_k) + u) ** 2


def _score_attack(n, d, r, per_record, bracket, a, q, exponent):
    """Step 4: r² q^{2e} d bracket² / (n q c_i + 2a sqrt(d/(2a+1)))², c_i the per-record coefficient of step 3
    (E A_i <= q c_i α + ...: sinh ε under (ε,δ)-DP, sqrt(2α) under α-KL privacy)."""
    denom = n * q * per_record + 2 * a * sp.sqrt(d / (2 * a + 1))
    return r ** 2 * q ** (2 * exponent) * d * bracket ** 2 / denom ** 2


def risk_lower_value(n: float, d: float, eps: float, delta: float, a: float, q: float = 1.0,
                     k: float = math.inf, r: float = 1.0) -> float:
    """Float evaluation of :func:`risk_lower` (tests and the documentation's numbers)."""
    expo = 1.0 if math.isinf(k) else (k - 1) / k
    c = 2 * a / (2 * a + 1)
    bracket = max(0.0, c * (1 - n * q * delta * (1 + math.exp(-eps))))
    denom = n * q * math.sinh(eps) + 2 * a * math.sqrt(d / (2 * a + 1))
    return r * r * q ** (2 * expo) * d * bracket ** 2 / denom ** 2


def alpha_lower_value(n: float, d: float, eps: float, delta: float, a: float, q: float = 1.0) -> float:
    """Step 4 before rescaling: the lower bound on α = sqrt(E||M - p||²) in the cube's units (tests)."""
    return _alpha_lower(n, d, math.sinh(eps), max(0.0, 1 - n * q * delta * (1 + math.exp(-eps))), a, q)


def alpha_lower_value_kl(n: float, d: float, alpha: float, a: float, q: float = 1.0) -> float:
    """The α-KL form of :func:`alpha_lower_value` (cube units; for q < 1, the bound of the k = ∞ family at
    h = nq non-zero observations, which the mean over H ~ Bin(n, q) of the squared bound exceeds): the positive
    root of 2a α_M² + nq sqrt(2α) α_M - 2ad/(2a+1) = 0."""
    u = n * q * math.sqrt(2 * alpha)
    big_k = 16 * a * a * d / (2 * a + 1)
    return 4 * a * d / ((2 * a + 1) * (math.sqrt(u * u + big_k) + u))


def alpha_lower_value_kl_cs(n: float, d: float, alpha: float, a: float, q: float = 1.0) -> float:
    """The earlier α-KL form, step 2 by Cauchy–Schwarz (Σ_j E p_j(M_j - p_j) >= -sqrt(d/(2a+1)) α_M) instead of the
    posterior-mean identity: never above :func:`alpha_lower_value_kl` (tests)."""
    return _alpha_lower(n, d, math.sqrt(2 * alpha), 1.0, a, q)


def _alpha_lower(n, d, per_record, factor, a, q):
    c = 2 * a / (2 * a + 1)
    return c * d * factor / (n * q * per_record + 2 * a * math.sqrt(d / (2 * a + 1)))
