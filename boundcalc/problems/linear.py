"""Convex risk minimisation with linear losses under local privacy (Duchi, Jordan & Wainwright, FOCS 2013
Props 2-3 and Lemma 1; docs/problems/linear.md). Problem ``linear`` (alias ``convex``).

Loss ℓ(θ; x) = ⟨θ, x⟩ over Θ, excess risk E⟨θ̂, μ⟩ - min_Θ ⟨θ, μ⟩ (μ = E X). Geometries (``--geometry``):

* ``l2``: Θ = ℓ2 ball of radius r, ||x||₂ <= M. Rate rM min{1, √(d/(nε²))} (non-private rM/√n).
* ``l1``: Θ = ℓ1 ball of radius r, ||x||_∞ <= M. Rate rM min{1, √(d log(2d)/(nε²))} (non-private
  rM √(log(2d)/n)).

Certified upper bounds (see :mod:`boundcalc.mechanisms.sgd`): one-pass projected SGD on ℓ2-sampled
gradients (rB/√n, B = M coth(ε/2) √π Γ((d+1)/2)/Γ(d/2)); Hedge (entropic mirror descent over the 2d
vertices) on ℓ∞-sampled gradients (rB √(2 log(2d)/n), B = M coth(ε/2) C_d(ε)); θ̂ = 0 (rM). For l2 and
d >= 2 also with PrivUnit views (:mod:`boundcalc.mechanisms.privunit`, ‖Z‖₂ = M/m exactly): projected SGD
(``sgd-privunit``, rM/(m√n)) and the minimiser θ̂ = -r Z̄/‖Z̄‖ of the averaged privatised loss
(``minimiser-privunit``: excess = rρ(1 - x/√(x²+y)) with ρ = ‖μ‖, x = ρ + W_1, y = ‖W_⊥‖², bounded through
a threshold x >= tρ, Jensen in y and Cantelli/Bernstein tails of W_1, or a quadratic majorant of the excess
in (x, y); sup over ρ certified numerically,
:func:`boundcalc.mechanisms.sgd.ball_minimiser_factor_value`).

Certified lower bounds (ours, from the local-privacy machinery of :mod:`boundcalc.methods.ldp`):

* ``le-cam`` (both geometries, d-free): X = ±M e_1 with P(+) = (1 ± δ)/2, μ = ±δM e_1. For any θ̂ in
  either ball (|θ̂_1| <= r), excess_± = δM(r ± θ̂_1) >= rδM 1{±θ̂_1 >= 0}, so
  max_± E excess >= rδM(1 - TV(M_+^n, M_-^n))/2 with TV(P_+, P_-) = δ and the private Le Cam TV bound
  min{√(n/2)(e^ε-1)δ, √(1 - e^{-n(e^ε-1)²δ²}), TV(Bin(n,(1-δ)/2), Bin(n,(1+δ)/2))}; free δ.
* ``assouad`` (l2, local): v ∈ {±1}^d, X = M s e_J, J uniform, P(s = +1 | J = j) = (1 + δv_j)/2, so
  μ_v = (δM/d) v and ||X||₂ = M. With D = {j : θ̂_j v_j < 0}: ⟨θ̂, v⟩ >= -√|D| ||θ̂||₂, hence
  excess = (δM/d)(⟨θ̂,v⟩ + r√d) >= (δM/d) r(√d - √|D|) >= (δMr/(2d^{3/2})) #{j : θ̂_j v_j >= 0}, a
  Hamming separation with 2s = δMr/(2d^{3/2}) for the sign map sign_j(θ̂) = -sign(θ̂_j). Flipping v_j
  changes P_v by TV δ/d; private Assouad (ldp item 5): risk >= s d (1 - TVbound(δ/d)) =
  (δMr/(4√d))(1 - TVbound(δ/d)); free δ. Order rM √(d/(nε²)) when n(e^ε-1)² >~ d².
* ``posterior-le-cam`` (both geometries, d-free) and ``posterior-assouad`` (l2): v uniform on {±1}^a,
  X = M σ e_J with J uniform on a <= d coordinates and P(σ = + | J = j) = (1 + δv_j)/2 (a = 1 is the two-point
  family). μ_v = (δM/a)v and min_Θ⟨θ, μ_v⟩ = -rδM/√a, so for any θ̂(Z) in the ball the Bayes excess is
  (δM/a)(r√a + E⟨θ̂, E[v|Z]⟩) >= (δMr/a)(√a - E‖E[v|Z]‖₂) >= (δMr/√a)(1 - √k) (Cauchy–Schwarz, Jensen),
  where E[(E[v_j|Z])²] <= k = min{1, 2(1 - e^{-K/2})}, K = n min{c_ε(δ/a)², 2δ artanh(δ)/a}
  (:mod:`boundcalc.methods.posterior_assouad`: triangular discrimination <= 4(1 - BC), BC >= e^{-KL/2},
  joint convexity of KL, chain rule with the χ²–TV contraction or data processing; a flip of v_j moves
  P_v by TV δ/a and KL (δ/a) log((1+δ)/(1-δ))). δ and a tuned: order rM √(a/(n c_ε)) with
  a = min{d, 3√(n c_ε)}. About 2√2 times ``assouad``.
* ``posterior-budget`` (l2, local): v uniform on {±1}^d, X = (M/√d)ξ with independent ξ_j, P(ξ_j = v_j) =
  (1+δ)/2; μ_v = (δM/√d)v, Bayes excess >= δMr(1 - sqrt(Σ_j E[(E[v_j|Z])²]/d)) and the sum is at most
  min{d k, 2nε tanh(ε/2)} (per-coordinate lemma with TV δ per flip, or the information budget of
  :mod:`boundcalc.methods.posterior_assouad`). Tends to rM when d >> nε tanh(ε/2).
* ``fano-kl`` (l1): the ``fano`` construction with I(Z_{1:n}; V) <= n min{c_ε δ², δ log((1+δ)/(1-δ))}
  (the second term by data processing: the largest data KL between two hypotheses, attained at v' = -v).
* ``fano`` (l1, local): v ∈ {±e_j}, X ∈ {±M}^d with P(X_i = M) = (1 + δv_i)/2; at most one v can have
  excess < δMr/2 (||θ̂||₁ <= r), private Fano with I <= n(e^ε-1)²δ² and log|V| = log(2d): order
  rM √(log(2d)/(nε²)). The rate's √(d log d) needs the variational bound, certified only for
  non-interactive channels: beyond √log(2d) the l1 lower bound is order only.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..core.bounds import Bound, CheckSpec, Condition, FreeParameter, Problem, register_problem_class
from ..mechanisms import privunit as PU
from ..mechanisms import sgd
from ..methods import ldp, le_cam
from ..methods import posterior_assouad as PA
from ..core.params import N, ParamSpec

SOURCE = "Duchi, Jordan & Wainwright (FOCS 2013), Props 2-3 and Lemma 1"
D_LIN = ParamSpec("d", "int", 1, "dimension", low=1, high=1e5)
R_THETA = ParamSpec("r", "float", 1.0, "radius r of the parameter ball Θ", low=0, low_open=True, high=1e150)
M_DATA = ParamSpec("M", "float", 1.0, "radius M of the data (||x||₂ <= M for l2, ||x||_∞ <= M for l1)",
                   low=0, low_open=True, high=1e150)
GEOM = ParamSpec("geometry", "choice", "l2", "l2: Θ ℓ2 ball, data in ℓ2 ball; l1: Θ ℓ1 ball, data in ℓ∞ ball",
                 choices=("l2", "l1"), structural=True)
PARAMS = (N, D_LIN, R_THETA, M_DATA, GEOM)

Msym = sp.Symbol("M", positive=True)
dlt = sp.Symbol("delta_LC", positive=True)  # signal strength δ of the lower-bound constructions
A_ACT = sp.Symbol("a", positive=True, integer=True)  # active coordinates of the posterior Assouad family


def _g(geometry, private):
    if not private:
        return Msym
    return (sgd.l2_gradient_bound if geometry == "l2" else sgd.linf_gradient_bound)(Msym, S.eps, S.d)


def _upper_expr(geometry, private):
    G = _g(geometry, private)
    return sgd.sgd_bound(S.r, G, S.n) if geometry == "l2" else sgd.hedge_bound(S.r, G, S.n, S.d)


#: the smallest signal strength δ searched (every δ in (0, 1] gives a valid bound; 10⁻⁹ is far below the optima)
DELTA_LOW = 1e-9
#: the posterior-mean families need δ < 1 strictly (their laws (1 ± δ)/2 must keep both outcomes possible)
DELTA_HIGH_POSTERIOR = 1.0 - 1e-12

@lru_cache(maxsize=None)
def _bounds(geometry: str, private: bool) -> tuple:
    out = []
    if geometry == "l2":
        name = "sgd-l2-sampling" if private else "sgd"
        label = ("projected SGD on ℓ2-sampled gradients" if private else "projected SGD (no privacy)")
        why = ("Projected SGD, θ_1 = 0, step η = r/(G√n), average iterate: regret <= r²/(2η) + ηnG²/2 = rG√n "
               "(non-expansive projection, ||θ_1 - θ*|| <= r, ||Z||₂ <= G); Z_t independent of θ_t with E Z_t = μ, "
               "so E excess <= regret/n = rG/√n. " + ("G = B = M coth(ε/2) √π Γ((d+1)/2)/Γ(d/2): ℓ2 sampling "
                                                   "(docs/problems/mean.md) with radius M is unbiased, ε-LDP, ||Z||₂ = B."
                                                   if private else "G = M."))
    else:
        name = "hedge-linf-sampling" if private else "hedge"
        label = ("Hedge (entropic mirror descent) on ℓ∞-sampled gradients" if private
                 else "Hedge (entropic mirror descent, no privacy)")
        why = ("Hedge over the 2d vertices ±r e_j of the ℓ1 ball, step η = √(2log(2d)/n)/(rG): vertex losses "
               "⟨±r e_j, Z⟩ ∈ [-rG, rG], Hoeffding's lemma per step gives regret <= log(2d)/η + ηn(2rG)²/8 = "
               "rG√(2n log(2d)); E excess <= regret/n. " + ("G = B = M coth(ε/2) C_d(ε): ℓ∞ sampling with radius M "
                                                          "is unbiased, ε-LDP, ||Z||_∞ = B." if private else "G = M."))
    out.append(Bound(side="upper", name=name, label=label, expr=_upper_expr(geometry, private),
                     source=SOURCE + "; constants derived (boundcalc.mechanisms.sgd)", derivation=why,
                     extra={"geometry": geometry}))
    if private and geometry == "l2":
        # PrivUnit samples a cap of the sphere S^{d-1}: defined for d >= 2 only (at d = 1 its moments are not finite)
        d_ge_2 = (Condition("d >= 2 (PrivUnit samples a cap of the sphere S^(d-1))",
                            lambda v: bool(np.all(np.asarray(v["d"]) >= 2))),)
        G_pu = sp.sqrt(PU.second_moment(Msym, S.eps, S.d))
        out.append(Bound(
            side="upper", name="sgd-privunit", label="projected SGD on PrivUnit-privatised gradients", expr=sgd.sgd_bound(S.r, G_pu, S.n),
            source=SOURCE + "; PrivUnit (Bhowmick et al. 2018); constants derived (boundcalc.mechanisms.sgd)",
            derivation="The projected-SGD analysis of sgd-l2-sampling (E excess <= rG/√n for unbiased Z_t independent of θ_t "
            "with ‖Z_t‖₂ <= G) with G = M/m: PrivUnit (mechanisms/privunit.py) with radius M is unbiased, ε-LDP "
            "(d >= 2), ‖Z‖₂ = M/m exactly, m = E⟨V,u⟩ from incomplete beta functions at the best grid cap threshold.",
            conditions=d_ge_2, extra={"geometry": geometry, "curve": False}))
        out.append(Bound(
            side="upper", name="minimiser-privunit", label="minimiser of the averaged PrivUnit-privatised loss over the ℓ2 ball",
            expr=sgd.ball_minimiser_bound(S.r, Msym, PU.second_moment(Msym, S.eps, S.d),
                                     PU.axis_second_moment(Msym, S.eps, S.d),
                                     PU.axis_second_moment(Msym, S.eps, S.d, "min"), S.n),
            source=SOURCE + "; PrivUnit (Bhowmick et al. 2018); constant derived and computed numerically (boundcalc)",
            derivation="θ̂ = -r Z̄/‖Z̄‖ = argmin_Θ ⟨θ, Z̄⟩, Z_i PrivUnit views (radius M, d >= 2) of x_i: unbiased, ‖Z‖ = M/m, "
            "(M/m)² w_min <= E⟨Z,e⟩² <= (M/m)² w_max for unit e (mechanisms/privunit.py). With μ = ρe, Z̄ = μ + W, "
            "x = ρ + W_1, y = ‖W_⊥‖²: excess = rρ(1 - x/√(x²+y)) <= rρ(1 - tρ/√(t²ρ²+y)) when x >= tρ (concave "
            "increasing in y: Jensen with E y <= s²(ρ) = (M²/m² - max{ρ², M²w_min/m²})/n), <= rρ when "
            "0 <= x < tρ, <= 2rρ when x < 0; P(W_1 < -a) <= min{Cantelli σ²/(σ²+a²), Bernstein "
            "exp(-a²/(2(σ² + ba/(3n))))}, σ² = M²w_max/(m²n), b = M/m + M. For ρ in [0.05, 10]·M/(m√n) also a "
            "quadratic majorant: ψ(x,y) = 1 - x/√(x²+y) <= α + b(x-ρ) + g(x-ρ)² + κy (α a certified sup over x of "
            "sup_y[ψ - κy] minus the quadratic), so E ψ <= α + gσ² + κs²(ρ). Sup over ρ <= M (numerical, certified "
            "by monotone cell envelopes), t and (κ, b, g) tuned per cell; the cells and (κ, b, g) are fixed in units of "
            "M/(m√n) and tuned once per (d, ε), so the bound is non-increasing in n (docs/problems/linear.md).",
            conditions=d_ge_2, extra={"geometry": geometry, "curve": False}))
    out.append(Bound(side="upper", name="zero", label="θ̂ = 0 (uses no data)", expr=S.r * Msym, source="trivial",
                     derivation="excess = r||μ||_* <= rM.", extra={"no_data": True}))
    # lower bounds
    tv_prod = ldp.binomial_tv_bound(S.n, (1 - dlt) / 2, (1 + dlt) / 2)
    sep = S.r * Msym * dlt
    d_free = FreeParameter(dlt, lambda v: DELTA_LOW, lambda v: 1.0, doc="signal strength δ")
    if private:
        lc = ldp.private_le_cam_expr(sep, S.n, S.eps, dlt, tv_prod)
        lc_why = "private Le Cam TV bound (boundcalc.methods.ldp item 3)"
    else:
        lc = le_cam.two_point(sep, tv_prod)
        lc_why = "exact binomial TV of the sign counts"
    out.append(Bound(
        side="lower", name="le-cam", label="Le Cam two points x = ±M e_1 (d-free)", expr=lc,
        source=SOURCE + "; constant derived (boundcalc)",
        derivation="X = ±M e_1 with P(+) = (1±δ)/2: excess_± = δM(r ± θ̂_1) >= rδM 1{±θ̂_1 >= 0} (|θ̂_1| <= r), so "
        "max E excess >= rδM(1 - TV(M_+^n, M_-^n))/2, TV(P_+,P_-) = δ; " + lc_why + ".",
        free=(d_free,),
        optimum={dlt: S.Min(1, 1 / (sp.sqrt(2 * S.n) * S.expm1(S.eps))) if private else S.Min(1, 1 / sp.sqrt(S.n))}))
    if private and geometry == "l2":
        s_half = dlt * Msym * S.r / (4 * S.d ** sp.Rational(3, 2))
        out.append(Bound(
            side="lower", name="assouad", label="private Assouad, X = ±M e_J (hypercube of means)",
            expr=ldp.private_assouad_expr(s_half, S.d, S.n, S.eps, dlt / S.d),
            source=SOURCE + "; constant derived (boundcalc)",
            derivation="v ∈ {±1}^d, X = M s e_J, J uniform, P(s=+|J=j) = (1+δv_j)/2, μ_v = (δM/d)v; excess >= "
            "(δMr/(2d^{3/2})) #{j : θ̂_j v_j >= 0} (⟨θ̂,v⟩ >= -√|D| r, √d - √k >= (d-k)/(2√d)); a flip of v_j "
            "moves P_v by TV δ/d; private Assouad: >= (δMr/(4√d))(1 - TVbound(δ/d)).",
            free=(d_free,), optimum={dlt: S.Min(1, S.d / (sp.sqrt(2 * S.n) * S.expm1(S.eps)))}))
    # posterior-mean Assouad (methods.posterior_assouad): a = 1 (both geometries, d-free) and, for l2,
    # a free number a <= d of active coordinates
    for A in ((sp.Integer(1), A_ACT) if geometry == "l2" else (sp.Integer(1),)):
        k_sign = _sign_information_hb(PA.sign_information(PA.kl_bound_expr(S.n, S.eps if private else None, dlt / A,
                                                                              PA.sign_kl(dlt) / A)), private, A)
        pa_free = (FreeParameter(dlt, lambda v: DELTA_LOW, lambda v: DELTA_HIGH_POSTERIOR, doc="signal strength δ"),)
        if A == A_ACT:
            pa_free += (FreeParameter(A_ACT, lambda v: 1, lambda v: v["d"], integer=True, doc="active coordinates a"),)
        out.append(Bound(
            side="lower", name="posterior-assouad" if A == A_ACT else "posterior-le-cam",
            label=("posterior-mean Assouad, X = ±M e_J, J uniform on a <= d coordinates" if A == A_ACT
             else "posterior-mean two-point bound, X = ±M e_1 (d-free)"),
            expr=S.Max(0, dlt * Msym * S.r / sp.sqrt(A) * (1 - sp.sqrt(k_sign))),
            source=SOURCE + "; constant derived (boundcalc, docs/methods/posterior-assouad.md)",
            derivation="v uniform on {±1}^a, X = M σ e_J, J uniform on a <= d coordinates, P(σ=+|J=j) = (1+δv_j)/2: μ_v = (δM/a)v, "
            "min_Θ⟨θ,μ_v⟩ = -rδM/√a (ℓ2 ball; for a = 1 the ℓ1 ball gives the same). Bayes excess = (δM/a)"
            "(r√a + E⟨θ̂, E[v|Z]⟩) >= (δMr/a)(√a - E‖E[v|Z]‖₂) >= (δMr/√a)(1 - √k) with E[(E[v_j|Z])²] <= "
            "k = min{1, 2(1 - e^{-K/2})}, K = n min{c_ε(δ/a)², 2δ artanh(δ)/a} (a flip of v_j moves P_v by TV δ/a and "
            "KL (1/a)δ log((1+δ)/(1-δ)); triangular discrimination <= 4(1 - BC), BC >= e^{-KL/2}; χ²–TV contraction "
            "or data processing). " + ("δ and a tuned." if A == A_ACT else "a = 1, δ tuned."),
            free=pa_free, optimum=_posterior_optimum(A, private)))
    if private and geometry == "l2":
        k_dense = _sign_information_hb(PA.sign_information(PA.kl_bound_expr(S.n, S.eps, dlt, PA.sign_kl(dlt))), True, 1)
        budget = 2 * S.n * PA.mi_per_report(S.eps) / S.d
        out.append(Bound(
            side="lower", name="posterior-budget", label="posterior-mean bound, dense data X = (M/√d)ξ, information budget",
            expr=S.Max(0, dlt * Msym * S.r * (1 - sp.sqrt(S.Min(k_dense, budget)))),
            source=SOURCE + "; constant derived (boundcalc, docs/methods/posterior-assouad.md)",
            derivation="v uniform on {±1}^d, X = (M/√d)ξ with independent ξ_j, P(ξ_j = v_j) = (1+δ)/2 (‖X‖₂ = M): μ_v = (δM/√d)v, "
            "‖μ_v‖ = δM. Bayes excess >= (δMr/√d)(√d - E‖E[v|Z]‖₂) >= δMr(1 - sqrt(Σ_j E[(E[v_j|Z])²]/d)), and "
            "Σ_j E[(E[v_j|Z])²] <= min{d k, 2nε tanh(ε/2)}: k = min{1, 2(1 - e^{-K/2})}, K = n min{c_ε δ², 2δ artanh δ} "
            "per coordinate (a flip changes one ξ_j: TV δ), and the information budget 2 Σ_j I(v_j; Z) <= 2 I(V; Z) "
            "<= 2n ε tanh(ε/2) (I(v_j;Z) >= E[(E[v_j|Z])²]/2; each ε-LDP report carries at most ε tanh(ε/2) nats). "
            "Approaches rM when d >> nε tanh(ε/2) (saturated regime). δ tuned.",
            free=(FreeParameter(dlt, lambda v: DELTA_LOW, lambda v: DELTA_HIGH_POSTERIOR, doc="signal strength δ"),),
            optimum={dlt: 1 - sp.Float(1e-12)}))
    if private and geometry == "l1":
        fano_mi = S.Min(S.n * PA.chi2_factor(S.eps) * dlt ** 2, S.n * PA.sign_kl(dlt))
        out.append(Bound(
            side="lower", name="fano-kl", label="private Fano over the 2d signed coordinates, MI also capped by the data KL",
            expr=dlt * Msym * S.r / 2 * S.Max(0, 1 - (fano_mi + sp.log(2)) / sp.log(2 * S.d)),
            source=SOURCE + "; constant derived (boundcalc)",
            derivation="The 'fano' construction (v ∈ {±e_j}, X ∈ {±M}^d, P(X_i = M) = (1 + δv_i)/2, loss δMr/2 on an error) "
            "with I(Z_{1:n};V) <= n min{c_ε max TV², max KL(P_v‖P_v')}: the chain rule of KL bounds each step by "
            "the χ²–TV contraction (c_ε = 2(e^ε-1)²/(e^ε+1), max TV <= δ) or, by data processing, by the data KL; "
            "max KL = KL(Bern((1+δ)/2)‖Bern((1-δ)/2)) = δ log((1+δ)/(1-δ)) (v = ±e_j; for v, v' on different "
            "coordinates it is (δ/2)log((1+δ)/(1-δ))).",
            free=(FreeParameter(dlt, lambda v: DELTA_LOW, lambda v: DELTA_HIGH_POSTERIOR, doc="signal strength δ"),)))
    if private and geometry == "l1":
        out.append(Bound(
            side="lower", name="fano", label="private Fano over the 2d signed coordinates (x ∈ {±M}^d)",
            expr=ldp.private_fano_expr(dlt * Msym * S.r / 2, S.n, S.eps, dlt, sp.log(2 * S.d)),
            source=SOURCE + "; constant derived (boundcalc)",
            derivation="v ∈ {±e_j}: X ∈ {±M}^d with independent coordinates, P(X_i = M) = (1 + δv_i)/2, μ_v = δMv, "
            "excess_v = δM(r + ⟨θ̂, v⟩); since ||θ̂||₁ <= r at most one v has excess_v < δMr/2, so the test "
            "'that v' errs only when excess_V >= δMr/2: max E excess >= (δMr/2) P(error) and Fano with the private "
            "mutual-information bound I(Z_{1:n};V) <= n(e^ε-1)² max TV(P_v,P_v')², max TV <= δ (two coordinates "
            "change by δ/2 each), log|V| = log(2d) (boundcalc.methods.ldp item 3'). Order rM√(log(2d)/(nε²)): "
            "the √d of the rate needs the variational bound (certified only for non-interactive channels).",
            free=(d_free,), optimum={dlt: S.Min(1, sp.sqrt(sp.log(2 * S.d) / (4 * S.n)) / S.expm1(S.eps))}))
    out.append(Bound(side="lower", name="order", label="order only (DJW Props 2-3, constant unspecified)", expr=_rate_expr(geometry, private),
                     source=SOURCE, derivation="DJW Props 2-3: the rate with an unspecified constant (reported with constant 1).",
                     certified=False))
    return tuple(out)


# ------------------------------------------------------------------------------ Hellinger–Bhattacharyya sign information
def _sign_information_hb(k_kl, private: bool, A):
    """min{k_KL, 1 - (1-h)^{2n}}: a second bound on E[(E[v_j|Z])²] (docs/methods/hellinger-assouad.md).

    E[(E[v_j|Z])²] = 1 - Σ 2m₊m₋/(m₊+m₋) <= 1 - BC(M_{+j}, M_{-j})² (Cauchy–Schwarz), and BC >= (1-h)ⁿ for a
    sequentially interactive ε-LDP protocol (peeling the last report, joint concavity of BC over the mixtures) with
    h = min{H², h_ε τ²} per flip: here a flip of v_j changes P(σ = ± | J = j) from (1±δ)/2 to (1∓δ)/2 on the
    coordinate's share 1/A, so τ = δ/A, H² = (1 - √(1-δ²))/A. Against the KL route (K ≈ 8 n h_ε τ²) it pays
    2 n h_ε τ²: the posterior bounds double at their optimum."""
    from ..methods import hellinger_assouad as HA

    h = HA.per_flip_h("local" if private else "none", S.eps, dlt / A, dlt ** 2 / (1 + sp.sqrt(1 - dlt ** 2)) / A)
    return S.Min(k_kl, -S.expm1(2 * S.n * S.log1p(-S.Min(h, 1))))


def _posterior_optimum(A, private):
    """A valid closed-form choice of (δ, a) for the posterior-mean bounds (used by vectorised curves): with
    K ≈ (βδ)², β = sqrt(n min{c_ε, 2a})/a, δ(1 - βδ) is largest at δ = 1/(2β); a = min{d, 3 sqrt(n c_ε)}."""
    delta_value, a_value = _posterior_optimum_values(A, private)
    return {dlt: delta_value} if a_value is None else {dlt: delta_value, A_ACT: a_value}


@S.cached_expression
def _posterior_optimum_values(A, private):
    """(δ, a or None) of :func:`_posterior_optimum` (kept on disk)."""
    c = PA.chi2_factor(S.eps) if private else None
    a = A
    if A == A_ACT:
        a = S.Max(1, S.Min(S.d, sp.floor(3 * sp.sqrt(S.n * c)))) if private else sp.Integer(1)
    beta = sp.sqrt(S.n * (S.Min(c, 2 * a) if private else 2 * a)) / a
    delta_value = S.Min(1 - sp.Float(1e-12), 1 / (2 * beta))
    if A == A_ACT:
        return delta_value.subs(A_ACT, a), a
    return delta_value, None


def _rate_expr(geometry, private):
    log_term = sp.log(2 * S.d) if geometry == "l1" else 1
    if private:
        return S.r * Msym * S.Min(1, sp.sqrt(S.d * log_term / (S.n * S.eps ** 2)))
    return S.r * Msym * S.Min(1, sp.sqrt(log_term / S.n))


# ------------------------------------------------------------------ simulation

DEFAULT_NS = (100, 316, 1000, 3162, 10000)


def _instances(geometry, d, M, delta_small, rng):
    """(name, description, μ, draw(k)) for the two instances: a weak two-point signal on e_1 at the
    scale of the certified bound, and a spread instance over all coordinates."""
    e1 = np.zeros(d)
    e1[0] = 1.0

    def two_point(k):
        s = np.where(rng.random(k) < (1 + delta_small) / 2, 1.0, -1.0)
        x = np.zeros((k, d))
        x[:, 0] = M * s
        return x

    out = [("two-point", f"x = ±M e_1, P(+) = (1+δ)/2, δ = {delta_small:.3g}", delta_small * M * e1, two_point)]
    if geometry == "l2":
        def spread(k):
            J = rng.integers(0, d, size=k)
            x = np.zeros((k, d))
            x[np.arange(k), J] = M * np.where(rng.random(k) < 0.75, 1.0, -1.0)
            return x
        out.append(("spread", "x = ±M e_J, J uniform, P(+) = 3/4", 0.5 * M / d * np.ones(d), spread))
    else:
        def cube(k):
            return M * np.where(rng.random((k, d)) < 0.75, 1.0, -1.0)
        out.append(("cube", "x ∈ {±M}^d, coordinates independent, P(+M) = 3/4", 0.5 * M * np.ones(d), cube))
    return out


def check_instances(t):
    """Run the actual optimiser (projected SGD or Hedge) on privatised gradients and measure the excess
    risk ⟨θ̄, μ⟩ + r||μ||_* exactly for each run."""
    from ..mechanisms.sampling import l2_gamma_ratio_np, linf_C_np

    values, n, reps, rng, res = t.values, t.n, t.reps, t.rng, t.result
    geom, priv = values["geometry"], values["privacy"]
    d, r, M = int(values["d"]), float(values["r"]), float(values["M"])
    eps = float(values["eps"]) if priv != "none" else None
    algs = [b for b in res.uppers if b.name != "zero" and b.value is not None and math.isfinite(b.value)]
    alg = t.upper = min(algs, key=lambda b: b.value)
    if eps is None:
        G = M
    elif geom == "l2":  # 2/(e^ε - 1) is below 1e-300 for ε >= 700 (and e^ε overflows past 709)
        G = M * (1 + (2 / math.expm1(eps) if eps < 700 else 0.0)) * float(l2_gamma_ratio_np(d))
    else:
        G = M * (1 + (2 / math.expm1(eps) if eps < 700 else 0.0)) * float(linf_C_np(d, eps))
    delta_small = min(1.0, alg.value / (r * M))
    runner = None
    if eps is not None:  # the runnable mechanism of the upper bound (the object bc.mechanism(...) returns)
        from ..mechanisms.local_runnable import linear_mechanism

        runner = linear_mechanism({**values, "n": int(n)}, alg)
    if alg.name == "minimiser-privunit":
        # the two-point instance at ‖μ‖ = 0.8 s (s² = E‖Z̄ - μ‖² bound), near the worst ‖μ‖ for isotropic
        # Gaussian noise (ρ(1 - E cos) is largest near ρ ≈ 0.79 s), and the spread instance
        delta_small = min(1.0, 0.8 * math.sqrt(PU.privunit_factor_value(d, eps) / n))
        for name, desc, mu, draw in _instances(geom, d, M, delta_small, rng):
            th = runner.simulate(draw, n, rng, reps)
            yield name, th @ mu + r * np.linalg.norm(mu), desc + " (θ̂ = -r Z̄/‖Z̄‖, PrivUnit)"
        return
    for name, desc, mu, draw in _instances(geom, d, M, delta_small, rng):
        if runner is not None:
            tbar = runner.simulate(draw, n, rng, reps)
        elif geom == "l2":
            tbar = sgd.run_projected_sgd(draw, n, reps, d, r, M, eps, r / (G * math.sqrt(n)), rng)
        else:
            tbar = sgd.run_hedge(draw, n, reps, d, r, M, eps, math.sqrt(2 * math.log(2 * d) / n) / (r * G), rng)
        excess = tbar @ mu + r * (np.linalg.norm(mu) if geom == "l2" else np.max(np.abs(mu)))
        yield name, excess, desc


CHECK = CheckSpec(check_instances, DEFAULT_NS,
                  notes=("the upper bound column is the optimiser's certified bound (θ̂ = 0 is not simulated)",))


@register_problem_class
class Linear(Problem):
    """Convex risk minimisation with linear losses, non-private and under ε-LDP."""

    name = "linear"
    aliases = ("convex", "linear-loss")
    privacies = ("none", "local")
    title = "convex risk minimisation with linear losses"
    # local, l2: the best upper bound is the PrivUnit minimiser bound, tuned numerically (once per (d, ε)) and
    # non-increasing in n, which the planning round trip of the tests checks
    examples = {"none": {"n": 500, "d": 4, "r": 1.0, "M": 1.0, "geometry": "l2"},
                "local": {"n": 500, "d": 4, "r": 1.0, "M": 1.0, "geometry": "l2", "eps": 1.0}}
    params = PARAMS
    titles = "linear losses ⟨θ, x⟩ over an ℓ2 (data ℓ2) or ℓ1 (data ℓ∞) ball, excess risk"
    sources = SOURCE
    checks = CHECK
    notes = ("Lower bounds: certified Le Cam and posterior-mean two-point bounds (d-free) and, for l2, private "
            "and posterior-mean Assouad (order √(d/(nε²)) once n c_ε >~ d²); for l1 the √(d log d) rate is "
            "order only.",
            "Which side is loose: l2, both by constants (largest near n = d, where the lower family's "
            "information grows like e^ε and the certified PrivUnit minimiser bound is 1 to 2.7 times the "
            "simulated risk of its mechanism); l1, the lower bound, which "
            "misses the √d of DJW's rate √(d log(2d)/(nε²)) (the certified upper is within about 4 of "
            "that rate at ε <= 1): the variational bound needed for it is certified only for "
            "non-interactive protocols (docs/problems/linear.md).")

    def rate_none(self, values):
        log_term = sp.log(2 * S.d) if values["geometry"] == "l1" else 1
        return [("statistical", S.r * Msym * sp.sqrt(log_term / S.n))]

    def rate_local(self, values):
        log_term = sp.log(2 * S.d) if values["geometry"] == "l1" else 1
        return self.rate_none(values) + [("privacy", S.r * Msym * sp.sqrt(S.d * log_term / (S.n * S.eps ** 2)))]

    def bounds_none(self, values):
        return list(_bounds(values["geometry"], False))

    def bounds_local(self, values):
        return list(_bounds(values["geometry"], True))

    def mechanism_local(self, values, upper, bound):
        """The runnable randomizer of a reported upper bound (docs/methods/local-randomizers.md)."""
        from ..mechanisms.local_runnable import linear_mechanism

        return linear_mechanism(values, upper, bound)
