"""Support of a uniform distribution under central privacy (Barber & Duchi Prop 3; docs/problems/support.md).

Family {Unif[0, θ] : θ ∈ [θ_0, 2θ_0]} (``--theta0``, default 1), loss |θ̂ - θ| (``--loss abs``,
default) or (θ̂ - θ)² (``--loss squared``). Non-private: the sample maximum, E|max - θ| = θ/(n+1).
Private rate (paper, lower side): θ_0 min{1, 1/(nα)}, α the implied TV level (Barber & Duchi 2014, Section 2;
docs/methods/relations.md).

Lower bounds (certified):

* ``le-cam-tv``: at the top of the range (where the scale, hence the separation, is largest):
  P_0 = Unif[0, 2θ_0/(1+p)], P_1 = Unif[0, 2θ_0], p ∈ (0,1]; TV(P_0,P_1) = p/(1+p),
  TV(P_0^n,P_1^n) = 1 - (1+p)^{-n} (P_0^n has constant density ratio (1+p)^n w.r.t. P_1^n on its support,
  which has P_1^n-mass (1+p)^{-n}); separation 2θ_0 p/(1+p) = 2s (docs/problems/support.md puts the pair at the
  bottom, Unif[0,θ_0] vs Unif[0,(1+p)θ_0], separation pθ_0: half as large). Le Cam (docs/methods/le-cam.md) + central TV
  contraction (Barber & Duchi 2014, Theorem 2; docs/methods/tv-contraction.md): ``M_n >= Φ(θ_0 p/(1+p)) (1 - min{n α_TV p/(1+p), 1 - (1+p)^{-n}})/2``, Φ(s) = s or s²;
  α_TV the TV level
  implied by the privacy model (relations.tv_level: tv α, kl min{√(α/2), √(1-e^{-α})}, pure tanh(ε/2),
  approx (e^ε-1+2δ)/(e^ε+1)). Without privacy only the second term of the min is used.
* ``uniformity-two-point`` (pure, approx): the same pair; P_1 = (1-q)P_0 + q Unif(2θ_0/(1+p), 2θ_0] with
  q = p/(1+p) is a mixture with base P_0, so the uniformity-of-mass coupling (Barber & Duchi 2014,
  Lemma 2 / Theorem 3; docs/methods/uniformity-of-mass.md) with N = 2 applies:
  ``M_n >= Φ(θ_0 p/(1+p)) (1 - t_M - δ S_ε(M))/(1 + e^{Mε})``, t_M = P(Bin(n, q) > M); free p and M.

* ``threshold-bayes`` (pure, approx, tv, kl; the best in practice): uniform prior on [2θ_0(1-ω), 2θ_0] and the
  layer-cake decomposition of the loss into threshold tests, each bounded by the coupled DP test bound
  (see :func:`threshold_lower` and docs/methods/threshold-bayes.md). About 2 ln2 θ_0/(nε) for |·|.

Upper bounds (certified):

* ``max`` (no privacy): |·|: E|max - θ| = θ/(n+1) <= 2θ_0/(n+1) (exact, worst at θ = 2θ_0);
  squared: the unbiased (n+1)max/n has MSE θ²/(n(n+2)) <= 4θ_0²/(n(n+2)).
* ``exp-mech`` (ours; see :func:`exp_mech_bound`): the exponential mechanism with utility
  -#{i : X_i > t} (sensitivity 1) and a data-independent exponential base measure e^{-γt} on
  [0, ∞), shifted and projected onto [θ_0, 2θ_0]; ε-DP without the factor 2 (the utility is monotone).
  Rate θ_0/(n(1 - e^{-ε})) ≍ θ_0(1/n + 1/(nε)):
  it matches the lower bound's order (no log factor). tv/kl/approx run it at a pure level that implies
  the model: tv α: ε' = log((1+α)/(1-α)) (ε'-DP ⇒ tanh(ε'/2) = α TV-private); kl α: ε' = √(2α)
  (ε'-DP ⇒ KL <= ε' tanh(ε'/2) <= ε'²/2 = α); approx: ε' = ε (ε-DP ⇒ (ε,δ)-DP).
* ``exp-mech-top`` (|·| only; ours, see :data:`EXP_MECH_TOP_DERIVATION`): the same mechanism with a base rate of
  order ε'n/θ_0 and θ̂ = clip(T + β, θ_0, 2θ_0), analysed segment by segment (top segment: the shifted maximum;
  segment j: probability <= min{1, e^{γS_j - ε'j}}); tends to the non-private risk as ε' grows.
* ``subsample-max-tv`` (tv only; derived): the rescaled maximum of a uniformly random subsample of
  m = ⌊αn⌋ entries. Neighbours differ in one entry i, and the output depends on entry i only when i is in
  the subsample (probability m/n <= α), so TV(M(D), M(D')) <= α. With M the maximum of m i.i.d. Unif[0, θ]
  draws (M/θ ~ Beta(m, 1)): squared loss, θ̂ = (m+2)M/(m+1) minimises E(cM - θ)² = θ² - θ²(E M/θ)²/(E M²/θ²)
  = θ²/(m+1)²; absolute loss, E|cM - θ|/θ = cm/(m+1) - 1 + 2c^{-m}/(m+1) is minimised at c = 2^{1/(m+1)}
  with value 2^{1/(m+1)} - 1. Projection onto [θ_0, 2θ_0] only reduces either loss; the worst θ is 2θ_0:
  risks 4θ_0²/(m+1)² and 2θ_0(2^{1/(m+1)} - 1) (≈ 2θ_0 log 2/(αn)).
* ``constant``: θ̂ = 3θ_0/2 (no data): |·| <= θ_0/2, squared <= θ_0²/4.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from ..privacy_relations import relations
from ..core import symbolic as S
from ..core.bounds import Bound, CheckSpec, Condition, FreeParameter, Problem, TwoPointFamily, register_problem_class
from ..methods import le_cam, method_bounds, threshold_bayes, uniformity
from ..methods.subsample_size import SubsampleSize, floor_product
from ..core.params import N, ParamSpec

SOURCE = "Barber & Duchi (2014), Privacy and Statistical Risk, Prop 3"
THETA0 = ParamSpec("theta0", "float", 1.0, "lower end θ_0 of the support range: θ ∈ [θ_0, 2θ_0]",
                   low=0, low_open=True, high=1e150)
LOSS = ParamSpec("loss", "choice", "abs", "loss: abs |θ̂-θ| or squared (θ̂-θ)²", choices=("abs", "squared"),
                 structural=True)
PARAMS = (N, THETA0, LOSS)

theta0 = sp.Symbol("theta0", positive=True)
alpha_tv = sp.Symbol("alpha_TV", positive=True)
rho = sp.Symbol("rho", positive=True)  # γ/λ of the exponential mechanism
shift = sp.Symbol("s_shift", nonnegative=True)  # shift b = s/γ of the exponential mechanism


def _phi(x, loss):
    return x if loss == "abs" else x ** 2


def effective_eps(privacy: str):
    """The pure-DP level ε' at which the exponential mechanism runs so that it satisfies ``privacy``."""
    return {
        "pure": S.eps,
        "approx": S.eps,
        "tv": sp.log((1 + S.alpha) / (1 - S.alpha)),
        "kl": sp.sqrt(2 * S.alpha),
    }[privacy]


def rate_lambda(privacy: str):
    """λ = n (1 - e^{-ε'}) / (2θ_0): the decay rate (in t) of E e^{-ε' N(t)} below θ, worst θ = 2θ_0."""
    return -S.n * S.expm1(-effective_eps(privacy)) / (2 * theta0)


#: risk derivation of the shifted exponential mechanism of :func:`exp_mech_bound` (its ``Bound.derivation``)
EXP_MECH_RISK_DERIVATION = """
    (write u = t - θ, g(t) = e^{-γ(t-θ) - ε'N(t)} the unnormalised density):
    1. Normaliser: N(t) = 0 for t >= θ (all X_i <= θ), so Z = ∫g >= ∫_θ^∞ e^{-γ(t-θ)} dt = 1/γ.
    2. Hence E ℓ(θ̂) <= E[∫ℓ(t-b-θ) g / Z] <= γ ∫ ℓ(t-b-θ) E g(t) dt (projection onto [θ_0, 2θ_0] ∋ θ
       is a contraction, ℓ = |·| or (·)²).
    3. Above θ: E g = e^{-γu}. Below θ (u = θ - t > 0): N(t) ~ Bin(n, u/θ), so
       E e^{-ε'N} = (1 - (u/θ)(1 - e^{-ε'}))^n <= e^{-λu} with λ = n(1 - e^{-ε'})/(2θ_0) (θ <= 2θ_0),
       and E g <= e^{-(λ-γ)u}; extend the integral to u ∈ [0, ∞).
    4. Integrals (κ = λ - γ = (1-ρ)λ, b = s/γ):
       |·|: γ∫_0^∞|u-b|e^{-γu} = (s - 1 + 2e^{-s})/γ and γ∫_0^∞(u+b)e^{-κu} = γ/κ² + γb/κ, total
            [(s - 1 + 2e^{-s})/ρ + ρ/(1-ρ)² + s/(1-ρ)] / λ;
       (·)²: γ∫(u-b)²e^{-γu} = (2 - 2s + s²)/γ², γ∫(u+b)²e^{-κu} = γ(2/κ³ + 2b/κ² + b²/κ), total
            [(2 - 2s + s²)/ρ² + 2ρ/(1-ρ)³ + 2s/(1-ρ)² + s²/(ρ(1-ρ))] / λ².
    Checked in tests/test_support.py by exact numerical integration of steps 2-4 and by simulation.
    """.strip()


def exp_mech_bound(lam, loss: str):
    """Certified risk of the shifted exponential mechanism, as a sympy expression in λ, ρ, s.

    Mechanism (given ε'): output t ∈ [0, ∞) with density ∝ exp(-γt - ε' N(t)), N(t) = #{i : X_i > t};
    estimate θ̂ = clip(t - b, θ_0, 2θ_0), with γ = ρλ (0 < ρ < 1) and b = s/γ (s >= 0) free.

    Privacy (ε'-DP, without the usual factor 2 of the exponential mechanism, because the utility is
    monotone): replacing x_i by x_i' changes N(t) by ΔN(t) = 1{x_i' > t} - 1{x_i > t}, which has the same
    sign for every t and |ΔN| <= 1. Say ΔN >= 0: the log density ratio is -ε'ΔN(t) - log(Z'/Z) with
    -ε'ΔN ∈ [-ε', 0] and Z'/Z = E_q e^{-ε'ΔN} ∈ [e^{-ε'}, 1], so it lies in [-ε', ε']. The base measure
    e^{-γt} is data-independent. (Tested on random neighbouring samples, exact densities.)

    Risk: :data:`EXP_MECH_RISK_DERIVATION` (the bound's derivation, shown with every result).
    """
    if loss == "abs":
        return ((shift - 1 + 2 * sp.exp(-shift)) / rho + rho / (1 - rho) ** 2 + shift / (1 - rho)) / lam
    return ((2 - 2 * shift + shift ** 2) / rho ** 2 + 2 * rho / (1 - rho) ** 3 + 2 * shift / (1 - rho) ** 2
            + shift ** 2 / (rho * (1 - rho))) / lam ** 2


#: the (λ-free) minimisers of the bracket in exp_mech_bound (Nelder–Mead; any ρ ∈ (0,1), s >= 0 is valid)
EXP_MECH_OPTIMUM = {"abs": {rho: sp.Float("0.368447"), shift: sp.Float("0.233574")},
                    "squared": {rho: sp.Float("0.427726"), shift: sp.Float("0.252585")}}


omega = sp.Symbol("omega", positive=True)  # prior width W / (2θ_0) of the threshold Bayes bound


#: derivation of the bound built by :func:`threshold_lower` (its ``Bound.derivation``)
THRESHOLD_LOWER_DERIVATION = """
    Prior θ ~ Uniform[A, B] with B = 2θ_0, W = ωB (0 < ω <= 1/2, so A = B - W >= θ_0). For s ∈ [A, B]
    and 0 <= u <= min(s-A, B-s): TV(Unif[0,s-u], Unif[0,s+u]) = 2u/(s+u) <= 2u/A, so the hypothesis of
    :mod:`boundcalc.methods.threshold_bayes` holds with κ = 2εn/A, and
    |·|: max risk >= (4/(Wκ²)) J₀(κW/2);  squared: >= (8/(Wκ³)) J₁(κW/2).
    The pairwise bound is the coupled DP test bound type I + II >= E 2/(1+e^{εH}) >= 2/(1+e^{εnt}),
    H ~ Bin(n, t) the number of entries the maximal coupling changes (Barber & Duchi Prop. 1 with group
    privacy). As nε -> ∞ this is about 2 ln2 θ_0/(nε) (|·|) and π²θ_0²/(3(nε)²) (squared), 5-7 times
    the two-point bounds. Tested against direct quadrature of the double integral and below the simulated
    risk of the exponential mechanism (tests/test_threshold_bayes.py).
    Both the Jensen form and the exact binomial average E[2/(1+e^{εH})] (threshold_bayes.bayes_exact_relative,
    better for ε >~ 0.5) are valid; the larger is used.
    (ε,δ)-DP: the pairwise bound loses at most d0 = 2δ/(e^ε - 1), which costs d0 W/4 (|·|) or d0 W²/12.
    α-TV privacy (tv; kl and its implied TV level α_TV): the pairwise bound is 1 - nα_TV t >= 1 - c u with
    c = 2nα_TV/A (the central TV contraction), integrated in closed form (threshold_bayes.bayes_linear).
    """.strip()


def _threshold_dp(width, big_b, loss):
    """The ε-DP pairwise bound integrated: the larger of the Jensen form and the exact binomial average."""
    kappa = 2 * S.eps * S.n / (big_b - width)
    jensen = threshold_bayes.bayes_abs(width, kappa) if loss == "abs" else threshold_bayes.bayes_sq(width, kappa)
    exact = threshold_bayes.bayes_exact_relative(width, big_b - width, S.n, S.eps, loss)
    return S.Max(jensen, exact)


def _threshold_approx(width, big_b, loss):
    """(ε,δ)-DP: the ε-DP form less the δ correction."""
    return _threshold_dp(width, big_b, loss) - threshold_bayes.delta_correction(width, 2 * S.delta / S.expm1(S.eps), loss)


def _threshold_tv(width, big_b, loss):
    """α_TV-TV privacy (tv; kl through its implied TV level): the linear pairwise bound, in closed form."""
    return threshold_bayes.bayes_linear(width, 2 * S.n * alpha_tv / (big_b - width), loss)


#: privacy model -> (the integrated pairwise bound, the privacy level in the closed-form prior width)
THRESHOLD_FORMS = {"pure": (_threshold_dp, S.eps), "approx": (_threshold_approx, S.eps),
                   "tv": (_threshold_tv, alpha_tv), "kl": (_threshold_tv, alpha_tv)}

#: the narrowest prior width ω searched: 10⁻³/(n·level) (well below the optimum ≈ 1.1/√(n·level)), at most 1/2
OMEGA_LOW_SCALE = 1e-3
#: the widest prior: ω = 1/2 keeps θ ∈ [θ_0, 2θ_0] (A = 2θ_0(1-ω) >= θ_0)
OMEGA_HIGH = 0.5


def threshold_lower(loss: str, privacy: str = "pure") -> Bound:
    """Threshold Bayes lower bound (docs/methods/threshold-bayes.md). Derivation: :data:`THRESHOLD_LOWER_DERIVATION`."""
    big_b = 2 * theta0
    width = omega * big_b
    form, level = THRESHOLD_FORMS[privacy]
    return Bound(
        side="lower", name="threshold-bayes", label="threshold Bayes bound (uniform prior, coupled DP tests)",
        expr=form(width, big_b, loss),
        source="Barber & Duchi (2014) Prop 1 (DP testing) with group privacy and the entry-wise maximal coupling; "
        "layer-cake threshold decomposition (docs/methods/threshold-bayes.md)",
        derivation=THRESHOLD_LOWER_DERIVATION,
        free=(FreeParameter(omega, lambda v: min(OMEGA_HIGH, OMEGA_LOW_SCALE / (v["n"] * v["eps"]),
                                                 OMEGA_LOW_SCALE / (v["n"] * v.get("alpha_TV", 1))),
                            lambda v: OMEGA_HIGH,
                            doc="prior width W/(2θ_0): θ ~ Unif[2θ_0(1-ω), 2θ_0]"),),
        # near-optimal closed-form choice: maximising (1-ω)(ln2 - π²/(12 nεω)) gives ω ≈ 1.09/sqrt(nε)
        optimum={omega: S.Min(sp.Rational(1, 2), sp.Rational(11, 10) / sp.sqrt(S.n * level))})


#: the smallest support gap p searched: min{10⁻³, 10⁻⁴/(n(1+ε))}, below every optimum (≈ 1/n or 1/(2nα_TV))
P_LOW_CAP, P_LOW_SCALE = 1e-3, 1e-4
#: the largest gap: p = 1 (the pair Unif[0, θ_0], Unif[0, 2θ_0], the whole range)
P_HIGH = 1.0


def _p_range():
    return (lambda v: min(P_LOW_CAP, P_LOW_SCALE / (v["n"] * (1.0 + v.get("eps", 1.0)))), lambda v: P_HIGH)


def _phi_s(loss):
    return _phi(theta0 * S.p / (1 + S.p), loss)  # Φ(s), s = half the separation 2θ_0 p/(1+p)


def _tv_product():
    return -S.expm1(-S.n * S.log1p(S.p))  # 1 - (1+p)^{-n}


def _p_free():
    return FreeParameter(S.p, *_p_range(), doc="relative support gap p: θ_1 = (1+p)θ_0', θ_1 = 2θ_0")


def le_cam_lower(loss: str) -> Bound:
    """Le Cam's two points without privacy (exact product TV)."""
    return Bound(side="lower", name="le-cam", label="Le Cam two points (exact product TV)",
                 expr=le_cam.two_point(_phi_s(loss), _tv_product()),
                 source=SOURCE + " (non-private part); docs/methods/le-cam.md",
                 derivation="Unif[0,2θ_0/(1+p)] vs Unif[0,2θ_0]: separation 2θ_0 p/(1+p) = 2s, TV(P_0^n,P_1^n) = "
                 "1-(1+p)^{-n}; Le Cam: Φ(s)(1 - TV)/2.", free=(_p_free(),), optimum={S.p: S.Min(1, 1 / S.n)})


#: how each central model implies TV privacy (docs/methods/relations.md), as printed with the Le Cam bound
TV_LEVEL_TEXT = {"tv": "α_TV = α", "kl": "α_TV = min{√(α/2), √(1-e^{-α})}", "pure": "α_TV = tanh(ε/2)",
                 "approx": "α_TV = (e^ε - 1 + 2δ)/(e^ε + 1)"}


def le_cam_tv_lower(loss: str, privacy: str) -> list:
    """Le Cam's two points with the central TV contraction: the shared
    :class:`boundcalc.methods.le_cam_methods.CentralLeCam` applied to this problem's pair."""
    via = TV_LEVEL_TEXT[privacy]
    family = TwoPointFamily(
        name="le-cam-tv", title=f"Le Cam + TV contraction ({via})", loss_at_s=_phi_s(loss),
        tv_one=S.p / (1 + S.p), tv_product=_tv_product(),
        source=SOURCE + "; constant derived (docs/methods/tv-contraction.md, docs/methods/relations.md)",
        derivation="Unif[0,2θ_0/(1+p)] vs Unif[0,2θ_0], p ∈ (0,1]: TV(P_0,P_1) = p/(1+p), TV(P_0^n,P_1^n) = 1-(1+p)^{-n}, "
        "separation 2θ_0 p/(1+p) = 2s. Two-point bound Φ(s)(1 - TV(M_0,M_1))/2 with the central contraction "
        "TV(M_0,M_1) <= min{n α_TV TV(P_0,P_1), TV(P_0^n,P_1^n)}; the privacy model implies α_TV-TV "
        "privacy: " + via + ".", free=(_p_free(),),
        optimum={S.p: S.Min(1, 1 / (2 * S.n * alpha_tv), S.Max(1 / S.n, 1 / (2 * S.n * alpha_tv)))})
    return method_bounds(family, privacy)


def uniformity_lower(loss: str, delta=None) -> Bound:
    """Uniformity of mass with two points (pure DP; (ε,δ)-DP with ``delta`` = S.delta)."""
    q = S.p / (1 + S.p)
    return Bound(
        side="lower", name="uniformity-two-point", label="uniformity of mass, two points (group privacy coupling)",
        expr=_phi_s(loss) * uniformity.failure_probability(S.n, q, S.M, S.eps, 0, delta),
        source="Barber & Duchi Lemma 2 / Thm 3 with N = 2; explicit form derived (docs/methods/uniformity-of-mass.md)",
        derivation="Unif[0,2θ_0] = (1-q) Unif[0,2θ_0/(1+p)] + q Unif(2θ_0/(1+p),2θ_0], q = p/(1+p): a mixture with base "
        "P_0 = Unif[0,2θ_0/(1+p)] (the other hypothesis is P_0 itself), so the uniformity-of-mass coupling (Barber & Duchi Lemma 2) gives Hamming "
        "distance Bin(n, q); the success sets {|θ̂ - θ_v| < θ_0 p/(1+p)} are disjoint; average failure >= "
        "(1 - t_M - δ S_ε(M))/(1 + e^{Mε}) (N = 2), and risk >= Φ(θ_0 p/(1+p)) × failure.",
        free=(_p_free(), FreeParameter(S.M, lambda v: 0, lambda v: v["n"], integer=True,
                                       doc="coupling group size")))


#: the sample maximum's exact risk per loss: (label, risk at the worst θ = 2θ_0, why)
MAX_RISK = {
    "abs": ("sample maximum (no privacy)", lambda: 2 * theta0 / (S.n + 1),
            "E|max - θ| = θ/(n+1) (max/θ ~ Beta(n,1)), worst θ = 2θ_0."),
    "squared": ("unbiased rescaled maximum (no privacy)", lambda: 4 * theta0 ** 2 / (S.n * (S.n + 2)),
                "θ̂ = (n+1)max/n is unbiased with variance θ²/(n(n+2)) (E max² = nθ²/(n+2)), worst θ = 2θ_0."),
}


def max_upper(loss: str) -> Bound:
    label, expr, why = MAX_RISK[loss]
    return Bound(side="upper", name="max", label=label, expr=expr(), source="Lehmann & Casella; exact", derivation=why)


#: the pure level ε' at which the exponential mechanism runs, as printed, per privacy model
EXP_MECH_LEVEL_TEXT = {"pure": "ε' = ε", "approx": "ε' = ε (ε-DP ⇒ (ε,δ)-DP)",
                       "tv": "ε' = log((1+α)/(1-α)): ε'-DP ⇒ tanh(ε'/2) = α TV privacy",
                       "kl": "ε' = √(2α): ε'-DP ⇒ KL <= ε' tanh(ε'/2) <= ε'²/2 = α"}
#: the range of ρ = γ/λ: any ρ ∈ (0, 1) is valid; the bracket blows up like 1/ρ and 1/(1-ρ)² at the ends
RHO_LOW, RHO_HIGH = 1e-3, 1 - 1e-6
#: the range of the shift s = bγ: s >= 0 is valid; the bracket grows like s beyond its minimiser (≈ 0.25)
SHIFT_LOW, SHIFT_HIGH = 0.0, 6.0


def exp_mech_upper(loss: str, privacy: str) -> Bound:
    eps_txt = EXP_MECH_LEVEL_TEXT[privacy]
    return Bound(
        side="upper", name="exp-mech", label=f"exponential mechanism, utility -#{{X_i > t}}, base e^(-γt) ({eps_txt})",
        expr=exp_mech_bound(rate_lambda(privacy), loss), source="boundcalc (ours; derived, docs/problems/support.md)",
        derivation=EXP_MECH_RISK_DERIVATION + " Privacy level: " + eps_txt + ".",
        free=(FreeParameter(rho, lambda v: RHO_LOW, lambda v: RHO_HIGH, doc="γ/λ of the base measure"),
              FreeParameter(shift, lambda v: SHIFT_LOW, lambda v: SHIFT_HIGH, log=False, doc="shift b = s/γ")),
        optimum=EXP_MECH_OPTIMUM[loss], extra={"mechanism": "exp-mech"})


lam_top = sp.Symbol("lambda_top", positive=True)  # exponent λ in min{1, e^x} <= e^{λx} (exp-mech-top)
v_top = sp.Symbol("v_top", positive=True)  # base rate as a fraction of its largest allowed value (exp-mech-top)
b_top = sp.Symbol("b_top", nonnegative=True)  # added shift β = b θ_0/n (exp-mech-top)

#: free-parameter ranges of exp-mech-top: λ ∈ (0, 1], v ∈ (0, 1), b >= 0 are all valid
LAM_TOP_LOW, LAM_TOP_HIGH = 1e-3, 1.0
V_TOP_LOW, V_TOP_HIGH = 1e-4, 1 - 1e-6
B_TOP_LOW, B_TOP_HIGH = 0.0, 4.0

#: derivation of :func:`exp_mech_top_upper` (its ``Bound.derivation``)
EXP_MECH_TOP_DERIVATION = """
    The same exponential mechanism (density ∝ e^{-γt - ε'N(t)} on [0, ∞), ε'-DP) with a large base rate γ and the
    estimate θ̂ = clip(T + β, θ_0, 2θ_0), β >= 0, analysed segment by segment (X_(1) <= ... <= X_(n) the order
    statistics, W = θ - X_(n), S_j = X_(n) - X_(n-j)):
    1. Top segment [X_(n), ∞) (N = 0): given it, T = X_(n) + Y with Y ~ Exp(γ), error |Y + β - W|.
    2. Segment j (N = j, j = 1..n): its probability is at most e^{-ε'j}e^{-γX_(n-j)}/(e^{-γX_(n)}) =
       e^{γS_j - ε'j} (its mass against the top segment's), and at most 1; on it |T + β - θ| <= W + S_j + β.
    3. Spacings are exchangeable: S_j ~ θ Beta(j, n+1-j), E[W | S_j] = (θ - S_j)/(n-j+1).
       min{1, e^x} <= e^{λx} (0 < λ <= 1), the Beta MGF 1F1(a; c; t) <= (1 - t/c)^{-a} (t < c) and
       E[B e^{tB}] = a/(a+b) E e^{tB'}, B' ~ Beta(a+1, b), give with u = λγθ < n+1, A = 1/(1 - u/(n+1)),
       q = e^{-λε'}A < 1 and 1/(n-j+1) <= (1+j)/(n+1):
       Σ_j E[min{1, e^{γS_j-ε'j}}(W + S_j + β)] <= βq/(1-q) + θ/(n+1) [q/(1-q) + q(1+A)/(1-q)²],
       increasing in θ: evaluated at θ = 2θ_0.
    4. E|Y + β - W| = 1/γ + β - θ/(n+1) + 2E(W - β - Y)_+, W ~ θ Beta(1, n), and
       E(W - β - Y)_+ = E θ(1 - (β+Y)/θ)_+^{n+1}/(n+1) <= θ(1 - β/θ)_+^{n+1}/(n+1) · γ(θ-β)/(γ(θ-β) + n + 1)
       (1 - x <= e^{-x}); E|Y + β - W| is convex in θ, so its largest value on [θ_0, 2θ_0] is at an end.
    Parametrisation: u = (n+1) v (1 - e^{-λε'}) (v ∈ (0, 1) makes q < 1), γ = u/(2λθ_0), β = bθ_0/n.
    As ε' grows the sum of step 3 vanishes like e^{-λε'} and the bound tends to E|Y + β - W|, the risk of the
    shifted maximum: the non-private order θ_0/n.
    """.strip()


def exp_mech_top_expr(privacy: str):
    """The risk bound of :data:`EXP_MECH_TOP_DERIVATION` (|·| loss), sympy in λ_top, v_top, b_top."""
    e = effective_eps(privacy)
    le = lam_top * e
    m1 = -S.expm1(-le)  # 1 - e^{-λε'}
    onew = 1 - v_top * m1  # 1 - u/(n+1)
    a_mgf = 1 / onew
    q1 = 1 / ((1 - v_top) * S.expm1(le))  # q/(1-q)
    q2 = q1 * onew / ((1 - v_top) * m1)  # q/(1-q)²
    gamma = v_top * m1 * (S.n + 1) / (2 * lam_top * theta0)
    beta = b_top * theta0 / S.n
    big = 2 * theta0
    segments = beta * q1 + big / (S.n + 1) * (q1 + (1 + a_mgf) * q2)

    def top(th):
        gap = S.Max(0, th - beta)
        tail = sp.exp((S.n + 1) * S.log1p(-S.Min(1, beta / th))) * gamma * gap / (gamma * gap + S.n + 1)
        return 1 / gamma + beta - th / (S.n + 1) + 2 * th / (S.n + 1) * tail

    return S.Max(top(theta0), top(big)) + segments


def exp_mech_top_upper(privacy: str) -> Bound:
    eps_txt = EXP_MECH_LEVEL_TEXT[privacy]
    return Bound(
        side="upper", name="exp-mech-top",
        label=f"exponential mechanism with a large base rate, segment analysis ({eps_txt})",
        expr=exp_mech_top_expr(privacy), source="boundcalc (ours; derived, docs/problems/support.md)",
        derivation=EXP_MECH_TOP_DERIVATION + " Privacy level: " + eps_txt + ".",
        free=(FreeParameter(lam_top, lambda v: LAM_TOP_LOW, lambda v: LAM_TOP_HIGH, doc="exponent λ of the segment bound"),
              FreeParameter(v_top, lambda v: V_TOP_LOW, lambda v: V_TOP_HIGH, log=False,
                            doc="base rate as a fraction of its largest allowed value"),
              FreeParameter(b_top, lambda v: B_TOP_LOW, lambda v: B_TOP_HIGH, log=False, doc="shift β = b θ_0/n")),
        extra={"mechanism": "exp-mech-top"})


def constant_upper(loss: str) -> Bound:
    return Bound(side="upper", name="constant", label="constant estimate 3θ_0/2 (uses no data)",
                 expr=_phi(theta0 / 2, loss), source="trivial", derivation="|3θ_0/2 - θ| <= θ_0/2 for θ ∈ [θ_0, 2θ_0].",
                 extra={"no_data": True})


def subsample_scale(m, loss: str):
    """The factor c of θ̂ = c · max of the subsample (m entries): 2^{1/(m+1)} (absolute loss, the minimiser of
    E|cM - θ|) or (m+2)/(m+1) (squared loss, the minimiser of E(cM - θ)²). Works on sympy or numbers."""
    return 2 ** (1 / (m + 1)) if loss == "abs" else (m + 2) / (m + 1)


def best_multiple_risk(m, loss: str):
    """The worst-case risk (θ = 2θ_0) of the best multiple c·M of the maximum M of m i.i.d. Unif[0, θ] draws
    (c = subsample_scale(m, loss); M/θ ~ Beta(m, 1)): 2θ_0(2^{1/(m+1)} - 1) (absolute) or 4θ_0²/(m+1)² (squared)."""
    return 2 * theta0 * S.expm1(sp.log(2) / (m + 1)) if loss == "abs" else 4 * theta0 ** 2 / (m + 1) ** 2


def scaled_max_upper(loss: str) -> Bound:
    """No privacy: the best multiple of the sample maximum (the m = n case of subsample-max-tv)."""
    return Bound(
        side="upper", name="scaled-max", label="best multiple of the sample maximum (no privacy)",
        expr=best_multiple_risk(S.n, loss), source="Lehmann & Casella; derived in docs/problems/support.md",
        derivation="M/θ ~ Beta(n, 1): " + ("E|cM - θ|/θ = cn/(n+1) - 1 + 2c^{-n}/(n+1), minimised at c = 2^{1/(n+1)} "
                                          "with value 2^{1/(n+1)} - 1" if loss == "abs" else
                                          "E(cM - θ)² = θ² - 2cθ E M + c² E M², minimised at c = (n+2)/(n+1) with "
                                          "value θ²/(n+1)²")
        + "; projection onto [θ_0, 2θ_0] only helps; worst θ = 2θ_0.",
        extra={"mechanism": "scaled-max"})


def subsample_max_tv(loss: str) -> Bound:
    """α-TV private rescaled maximum of a random subsample of ⌊αn⌋ entries (derivation in the module docstring
    and docs/problems/support.md)."""
    m0 = SubsampleSize(S.alpha, S.n)  # exact ⌊αn⌋ (m0/n <= α)
    expr = best_multiple_risk(m0, loss)
    return Bound(
        side="upper", name="subsample-max-tv", label="rescaled maximum of a random subsample of size ⌊αn⌋ (TV)", expr=expr,
        source="derived: docs/problems/support.md (subsampling), docs/methods/central-mean.md (TV level of subsampling)",
        derivation="m = ⌊αn⌋ entries chosen uniformly at random: neighbours differ in one entry, which is in the subsample "
        "with probability m/n <= α, so TV(M(D), M(D')) <= α. M/θ ~ Beta(m, 1): the best multiple of M has "
        + ("E|2^{1/(m+1)}M - θ| = θ(2^{1/(m+1)} - 1)" if loss == "abs" else "E((m+2)M/(m+1) - θ)² = θ²/(m+1)²")
        + "; projection onto [θ_0, 2θ_0] only helps; worst θ = 2θ_0.",
        conditions=(Condition("alpha * n >= 1 (the subsample holds at least one entry)",
                              lambda v: v["alpha"] * v["n"] >= 1),),
        extra={"mechanism": "subsample-max-tv", "subsample": m0})


#: the privacy level in the rate's privacy term (none: no such term)
RATE_LEVEL = {"pure": S.eps, "approx": S.eps, "tv": S.alpha, "kl": sp.sqrt(S.alpha)}


# ------------------------------------------------------------------ simulation

DEFAULT_NS = (100, 316, 1000, 3162, 10000)


from ..mechanisms.central import exp_mech_sample  # noqa: E402,F401  (the sampler, shared with the runnable mechanism)


def _eps_effective_value(values):
    priv, e = values["privacy"], float(values["eps"])
    return {"pure": e, "approx": e, "tv": math.log((1 + e) / (1 - e)) if priv == "tv" else None,
            "kl": math.sqrt(2 * e)}[priv]


def _mech_max(values, fp, n, t0, loss):
    f = 1.0 if loss == "abs" else (n + 1) / n
    return dict(kind="max", factor=f, parameters={"factor": f})


def _mech_exp(values, fp, n, t0, loss):
    e = _eps_effective_value(values)
    g = float(fp["rho"]) * (n * -math.expm1(-e) / (2 * t0))
    offset = -(float(fp["s_shift"]) / g)
    return dict(kind="exp-mech", eps_used=e, gamma=g, offset=offset,
                parameters={"eps_used": e, "gamma": g, "offset": offset})


def _mech_exp_top(values, fp, n, t0, loss):
    """The exponential mechanism at the base rate of ``exp-mech-top``, θ̂ = clip(T + β, θ_0, 2θ_0), β = b θ_0/n."""
    e = _eps_effective_value(values)
    lam, v, b = (float(fp[k]) for k in ("lambda_top", "v_top", "b_top"))
    g = v * -math.expm1(-lam * e) * (n + 1) / (2 * lam * t0)
    offset = b * t0 / n
    return dict(kind="exp-mech", eps_used=e, gamma=g, offset=offset,
                parameters={"eps_used": e, "gamma": g, "offset": offset})


def _mech_subsample(values, fp, n, t0, loss):
    m = int(floor_product(float(values["eps"]), float(n)))  # the exact ⌊αn⌋ (the float product can round up)
    f = subsample_scale(m, loss)
    return dict(kind="subsample-max", subsample=m, factor=f, parameters={"subsample": m, "factor": f})


def _mech_scaled_max(values, fp, n, t0, loss):
    f = subsample_scale(n, loss)
    return dict(kind="subsample-max", subsample=n, factor=f, parameters={"subsample": n, "factor": f})


def _mech_constant(values, fp, n, t0, loss):
    return dict(kind="constant", parameters={"value": 1.5 * t0})


#: upper bound -> the arguments of its :class:`boundcalc.mechanisms.central.SupportEstimator`
SUPPORT_MECHANISMS = {"max": _mech_max, "exp-mech": _mech_exp, "exp-mech-top": _mech_exp_top,
                      "subsample-max-tv": _mech_subsample, "constant": _mech_constant, "scaled-max": _mech_scaled_max}


def support_mechanism(values, upper, bound):
    """The runnable mechanism of the upper bound ``bound`` at ``values`` (docs/methods/from-a-plan-to-data.md):
    the same object the check runs."""
    from ..mechanisms.central import SupportEstimator
    from ..mechanisms.runnable import CENTRAL_NEIGHBOURS, Guarantee, no_mechanism

    t0, loss, n, privacy = float(values["theta0"]), values["loss"], int(values["n"]), values["privacy"]
    build = SUPPORT_MECHANISMS.get(bound.name)
    if build is None:
        raise no_mechanism("support", privacy, bound.label)
    level = None if privacy == "none" else float(values["eps"])
    g = Guarantee(privacy, level, float(values["delta"]) if privacy == "approx" else None, CENTRAL_NEIGHBOURS,
                  "alpha" if privacy in ("tv", "kl") else "eps")
    return SupportEstimator(theta0=t0, loss=loss, problem="support", privacy=privacy, label=bound.label, guarantee=g,
                            certified_risk=upper.value, n=n, bound=bound.name, values=values,
                            notes=("negative records are set to 0 (the family lives on [0, 2θ_0])",),
                            **build(values, dict(upper.free_parameters), n, t0, loss))


def check_instances(t):
    """Simulate the mechanism behind the best certified upper bound on θ = 2θ_0 (where the bound's
    λ is attained) and θ = θ_0 (the instances of :data:`CHECK`): the runnable mechanism object, on sorted samples."""
    t0, loss = float(t.values["theta0"]), t.values["loss"]
    name = t.upper.name if t.upper.name in SUPPORT_MECHANISMS else "constant"
    mech = support_mechanism(t.derived, t.upper, t.bound(name))
    for theta in (2 * t0, t0):
        x = np.sort(t.rng.random((t.reps, t.n)), axis=1) * theta
        est = mech.release_from_statistic(x, t.rng, t.reps)
        err = np.abs(est - theta) if loss == "abs" else (est - theta) ** 2
        yield f"theta={theta:g}", err, f"Unif[0, {theta:g}]"


CHECK = CheckSpec(check_instances, DEFAULT_NS, tolerance=lambda v: 0.25 if v["loss"] == "abs" else 0.4)


# ------------------------------------------------------------------ registration

@register_problem_class
class Support(Problem):
    """The support of a uniform distribution, under every central privacy model."""

    name = "support"
    aliases = ("uniform-support",)
    privacies = ("none", "pure", "approx", "tv", "kl")
    title = "support of a uniform distribution Unif[0, θ], θ ∈ [θ_0, 2θ_0]"
    examples = {"none": {"n": 300, "theta0": 1.0, "loss": "squared"},
                "pure": {"n": 300, "theta0": 1.0, "loss": "abs", "eps": 1.0},
                "approx": {"n": 300, "theta0": 2.0, "loss": "abs", "eps": 1.0, "delta": 1e-6},
                "tv": {"n": 300, "theta0": 1.0, "loss": "abs", "alpha": 0.2},
                "kl": {"n": 300, "theta0": 1.0, "loss": "squared", "alpha": 1.0}}
    params = PARAMS
    titles = "support of Unif[0,θ], θ ∈ [θ_0, 2θ_0], loss |θ̂-θ| or (θ̂-θ)²"
    sources = SOURCE
    checks = CHECK
    notes = {"none": (), None: (
        "The upper bound is ours (exponential mechanism on the count above t with an exponential base "
        "measure, derived in boundcalc.problems.support.exp_mech_bound); it matches the lower bound's "
        "order θ_0(1/n + 1/(nα)).",)}

    # ---- rate: the statistical term, plus a privacy term under every private model
    def rate_none(self, values):
        return [("statistical θ_0/n", _phi(theta0 / S.n, values["loss"]))]

    def _rate_private(self, values):
        level = RATE_LEVEL[values["privacy"]]
        return self.rate_none(values) + [("privacy", _phi(theta0 / (S.n * level), values["loss"]))]

    rate_pure = rate_approx = rate_tv = rate_kl = _rate_private

    # ---- bounds: one method per privacy model (built once per loss)
    def bounds_none(self, values):
        return _built(_bounds_none, values["loss"])

    def bounds_pure(self, values):
        return _built(_bounds_pure, values["loss"])

    def bounds_approx(self, values):
        return _built(_bounds_approx, values["loss"])

    def bounds_tv(self, values):
        return _built(_bounds_tv, values["loss"])

    def bounds_kl(self, values):
        return _built(_bounds_kl, values["loss"])

    def derived(self, values):
        return relations.privacy_levels(values)

    def mechanism(self, values, upper, bound):
        return support_mechanism(values, upper, bound)


def _top_upper(loss: str, privacy: str) -> list:
    """exp-mech-top (derived for the absolute loss only)."""
    return [exp_mech_top_upper(privacy)] if loss == "abs" else []


@lru_cache(maxsize=None)
def _cached(build, loss: str) -> tuple:
    return tuple(build(loss))


def _built(build, loss: str) -> list:
    """The bounds ``build(loss)`` gives, built once per (model, loss)."""
    return list(_cached(build, loss))


def _bounds_none(loss):
    return [le_cam_lower(loss), max_upper(loss), scaled_max_upper(loss), constant_upper(loss)]


def _bounds_pure(loss):
    return [*le_cam_tv_lower(loss, "pure"), uniformity_lower(loss), threshold_lower(loss, "pure"),
            exp_mech_upper(loss, "pure"), *_top_upper(loss, "pure"), constant_upper(loss)]


def _bounds_approx(loss):
    return [*le_cam_tv_lower(loss, "approx"), uniformity_lower(loss, S.delta), threshold_lower(loss, "approx"),
            exp_mech_upper(loss, "approx"), *_top_upper(loss, "approx"), constant_upper(loss)]


def _bounds_tv(loss):
    return [*le_cam_tv_lower(loss, "tv"), threshold_lower(loss, "tv"), exp_mech_upper(loss, "tv"), *_top_upper(loss, "tv"),
            subsample_max_tv(loss), constant_upper(loss)]


def _bounds_kl(loss):
    return [*le_cam_tv_lower(loss, "kl"), threshold_lower(loss, "kl"), exp_mech_upper(loss, "kl"), *_top_upper(loss, "kl"),
            constant_upper(loss)]
