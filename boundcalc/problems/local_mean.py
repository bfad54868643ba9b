"""Mean estimation under ε-local differential privacy (docs/problems/mean.md).

Duchi, Jordan & Wainwright, *Local Privacy and Statistical Minimax Rates* (FOCS 2013, Prop 1) and
*Minimax Optimal Procedures for Locally Private Estimation* (JASA 2018).

Family: ``E‖X‖^k <= r^k`` with ‖·‖ the ℓ2 norm (``--ball l2``, default) or the ℓ∞ norm
(``--ball linf``); k = ∞ means X lies in the ball of radius r. In one dimension both are
``E|X|^k <= r^k``. Loss ‖θ̂ - θ‖₂², sequentially interactive ε-LDP channels.

Upper bounds (derived, certified): every user projects X onto the ball of radius T (ℓ2 projection, or
coordinate clipping for ℓ∞) and releases an unbiased ε-LDP view Z of the projected point; θ̂ = Z̄
(ℓ∞ family), ``E‖θ̂ - θ‖² <= ‖bias‖² + E‖Z‖²/n``; in one dimension and the ℓ2 family θ̂ = (1-σ)Z̄ with σ tuned,
certified by :func:`boundcalc.problems.mean_central.upper_expr` with the views' second moment. Bias: ``E(‖X‖ - T)_+ <= c_k r^k/T^{k-1}``, c_k = (k-1)^{k-1}/k^k
(:func:`boundcalc.problems.mean_central.bias_constant`); for ℓ∞ each coordinate has that bias, so
‖bias‖² <= d (c_k r^k/T^{k-1})². E‖Z‖² of each mechanism: :mod:`boundcalc.mechanisms.sampling` and
:mod:`boundcalc.mechanisms.local_scalar` (one dimension: one-bit ``T² coth²(ε/2)``, Laplace
``min{r²,T²} + 8T²/ε²``). The solver tunes T and picks the mechanism.

Lower bounds (derived, certified):
- private Le Cam (:mod:`boundcalc.methods.ldp`) on the mixtures ``(1-p)δ_0 + p δ_{±r p^{-1/k} e_1}``:
  ``r² p^{2(k-1)/k} (1 - min{√n(e^ε-1)p, 1-(1-p)^n})/2``, and on ``P(X = ±r e_1) = (1±h)/2``:
  ``r²h²(1 - min{√n(e^ε-1)h, TV(Bin(n,(1-h)/2), Bin(n,(1+h)/2))})/2``;
- van Trees with the box prior (:mod:`boundcalc.methods.van_trees`, :mod:`boundcalc.methods.fisher`):
  ℓ2 family ``P(X = ±r e_j) = (1 ± θ_j)/(2d)``, θ ∈ [-w,w]^d, mean (r/d)θ: I_X = diag(1/(d(1-θ_j²))),
  I_0 = 1/(d(1-w²)), Tr I_X <= 1/(1-w²), score values in [-1/(1-w), 1/(1-w)] (Hoeffding proxy
  1/(1-w)²), J = dπ²/w²; at w = 1/2:
  ``E‖θ̂-θ‖² >= r² / (n min{4/3, (4/(3d)) sinh²(ε/2), 8ε} + 4π²d)``.
  ℓ∞ family ``X_j = ±r`` independent, ``P(X_j = r) = (1+θ_j)/2``, mean rθ: I_X = diag(1/(1-θ_j²)),
  I_0 = 1/(1-w²), Tr <= d I_0, each score coordinate has range <= 2I_0 (proxy I_0²); at w = 1/2:
  ``>= r² d² / (n min{4d/3, (4/3) sinh²(ε/2), 32ε/9} + 4π²d)``. The solver tunes w.
- private Assouad (ℓ2, d >= 2): m active axes, gap δ (both tuned):
  ``(r²δ²/(2m)) (1 - min{sqrt(n/2)(e^ε-1)δ/m, ...})``: no prior term, so it covers moderate n.

Sharper bounds (derived, docs/problems/mean.md; tests/test_local_mean_sharp.py):
- upper ``levels-rr`` (1-D): truncation, unbiased rounding to 2m+1 grid levels, (2m+1)-ary randomized
  response (:func:`boundcalc.mechanisms.local_scalar.levels_second_moment`); ``privunit`` (d >= 2,
  :mod:`boundcalc.mechanisms.privunit`), numerically certified E‖Z‖² = T²/m².
- lower ``van-trees-binary`` (1-D): exact private Fisher information of binary data, τ²/(1-τ²u²)
  (:func:`binary_fisher_sup`); ``van-trees-mixture`` (1-D, finite k): I_Z <= C_ε (E|S|)² (:func:`c_eps`)
  on X ∈ {0, ±r p^{-1/k}}; ``van-trees-cube`` (d >= 2): hypercube family with independent signs;
  ``bayes-vertices`` (every d): mutual-information Bayes bound on erased hypercube vertices
  (:mod:`boundcalc.methods.ldp_mutual_info`), which approaches the no-data risk when nκ_ε << d.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..core.bounds import Bound, CheckSpec, FreeParameter, Problem, TwoPointFamily, register_problem_class
from ..methods import method_bounds
from ..core.errors import InputError
from ..mechanisms import local_scalar as LS
from ..mechanisms import privunit as PU
from ..mechanisms import sampling as SM
from ..methods import fisher as F
from ..methods import ldp
from ..methods import cube_prior as CP
from ..methods import ldp_mutual_info as MI
from ..methods import van_trees as VT
from . import per_user_reps
from ..core.params import D, N, R, ParamSpec
from .mean_central import K_PARAM, SHRINK_HIGH, _knum, bias_bound, shrink, truncation_optimum, upper_expr

SOURCE = ("Duchi, Jordan & Wainwright, Local Privacy and Statistical Minimax Rates (FOCS 2013, Prop 1); "
          "Minimax Optimal Procedures for Locally Private Estimation (JASA 2018)")
BALL = ParamSpec("ball", "choice", "l2", "norm of the data constraint E||X||^k <= r^k: l2 or linf",
                 choices=("l2", "linf"), structural=True)
PARAMS = (N, D, R, K_PARAM, BALL)


W_BOX = sp.Symbol("w", positive=True)  # half-width of the van Trees box prior
M_ACTIVE = sp.Symbol("m", positive=True, integer=True)  # active coordinates of the Assouad family
DELTA_GAP = sp.Symbol("delta_gap", positive=True)  # probability gap of the Assouad family

# Free-parameter ranges. Every value in a range gives a valid bound (the bounds hold for each choice); a range
# only limits the solver's search, and each is chosen to contain the optimum with room to spare.
#: truncation radius T: for k = ∞ (‖X‖ <= r) from 10⁻⁹r to r (T >= r clips nothing); for finite k from 10⁻⁶r to
#: 10¹²r, around the optimum of order r(nε²)^(1/(2k)) (truncation_optimum)
T_LOW_BOUNDED, T_LOW_MOMENT, T_HIGH_MOMENT = 1e-9, 1e-6, 1e12
#: grid levels per side of quantised randomized response: m = 1 is the closed-form choice (best at large ε);
#: more levels shrink the rounding term min{hr, h²/4} (h = T/m) but add (2m+1)-ary response noise (about
#: (4/3) m T² e^{-ε}); at weak privacy (ε = 40) the optimum is near 10⁵·6 levels (the rounding term then vanishes
#: and the bound reaches the sample mean's r²/n), so the search stops at 10⁶
M_LEVELS_HIGH = 10 ** 6
#: half-width η of the cos² prior, from 10⁻³ to 1: the closed-form choice min{1, (π²/(n tanh²(ε/2)))^(1/4)} is
#: inside unless n tanh²(ε/2) > π²·10¹² (there the smallest η searched still gives a valid bound); the mixture
#: bound's information term 1/(1-η²) needs η < 1 strictly
ETA_LOW, ETA_HIGH, ETA_HIGH_MIXTURE = 1e-3, 1.0, 1.0 - 1e-9
#: weight p of the far atoms of the van Trees mixture, from 10⁻¹⁵ to 1: room below p* ≈ π sqrt((k-1)/(nC_ε)),
#: which is small at large n and ε
P_MIX_LOW = 1e-15
#: probability p of the vertex in the erased-vertices family, and weight p of the Le Cam mixtures: any p ∈ (0, 1]
#: is valid; the Le Cam mixture's closed-form choice is of order 1/(sqrt(n)(e^ε - 1))
P_VERTEX_LOW, P_LECAM_LOW = 1e-9, 1e-12
#: probability gap h of the two-point family P(X = ±r e_1) = (1±h)/2: h ∈ (0, 1) keeps both atoms possible
H_GAP_LOW, H_GAP_HIGH = 1e-9, 1.0 - 1e-9
#: half-width w of the van Trees box prior: w < 1 keeps I_0 = 1/(1-w²) finite; w = 1/2 is the closed-form choice
W_BOX_LOW, W_BOX_HIGH = 1e-3, 1.0 - 1e-6
#: probability gap δ of the Assouad and Hellinger–Assouad families: every δ ∈ (0, 1] is valid
DELTA_GAP_LOW = 1e-12


def _t_range(k: float):
    """The truncation radius's search range (see T_LOW_BOUNDED)."""
    if math.isinf(k):
        return (lambda v: v["r"] * T_LOW_BOUNDED), (lambda v: v["r"])
    return (lambda v: v["r"] * T_LOW_MOMENT), (lambda v: v["r"] * T_HIGH_MOMENT)


def _a(k):
    """(k-1)/k (1 for k = ∞)."""
    return sp.Integer(1) if math.isinf(k) else (_knum(k) - 1) / _knum(k)


# ------------------------------------------------------------------------------ upper bounds

@S.cached_expression
def _mechanisms(d1: bool, ball: str) -> tuple:
    """(name, title, E‖Z‖² for data in the ball of radius T (sympy), derivation)."""
    T, e, d = S.T, S.eps, S.d
    sm = SM.second_moments(T, e, d)
    if d1:
        return (
            ("one-bit", "truncation at T + one-bit mechanism", LS.onebit_second_moment(T, e),
             "one-bit: Z = ±T coth(ε/2), P(+) = 1/2 + [x]_T/(2T coth(ε/2)): unbiased for [x]_T, Z² = T² coth²(ε/2)."),
            ("laplace", "truncation at T + Laplace(2T/ε)", S.Min(S.r ** 2, T ** 2) + LS.laplace_noise_second_moment(T, e),
             "Laplace: Var([X]_T + W) <= E[X_T²] + 8T²/ε² <= min{r², T²} + 8T²/ε² (k >= 2)."),
        )
    out = []
    if ball == "l2":
        out.append(("l2-sampling", "projection on the ℓ2 ball of radius T + ℓ2 sampling", sm["l2-sampling"],
                    "ℓ2 sampling (JASA): unbiased, ‖Z‖ = B = T coth(ε/2) √π Γ((d+1)/2)/Γ(d/2)."))
        out.append(("privunit", "projection on the ℓ2 ball of radius T + PrivUnit", PU.second_moment(T, e, d),
                    "PrivUnit (Bhowmick et al. 2018; mechanisms/privunit.py): unbiased, ‖Z‖ = T/m exactly, "
                    "m = E⟨V,u⟩ from incomplete beta functions at the best grid cap threshold."))
    else:
        out.append(("privunit", "clipping at T + PrivUnit on the ℓ2 ball of radius T√d", d * PU.second_moment(T, e, d),
                    "PrivUnit (mechanisms/privunit.py) on the ℓ2 ball of radius √d T ⊇ [-T,T]^d: unbiased, "
                    "‖Z‖² = d T²/m²."))
    out += [
        ("linf-sampling", "projection/clipping at T + ℓ∞ sampling", sm["linf-sampling"],
         "ℓ∞ sampling (JASA, even-d privacy fix in mechanisms/sampling.py): unbiased, ‖Z‖² = d B², "
         "B = T coth(ε/2) C_d(ε) (the ℓ2 ball of radius T lies in the ℓ∞ ball of radius T)."),
        ("coordinate-splitting", "projection/clipping at T + one random coordinate, one-bit at level ε",
         sm["coordinate-splitting"], "Z = d·Y·e_J, J uniform, Y the one-bit view of x_J: ‖Z‖² = d²T² coth²(ε/2)."),
        ("coordinate-composition", "projection/clipping at T + every coordinate one-bit at level ε/d",
         sm["coordinate-composition"], "basic composition of d (ε/d)-LDP one-bit views: ‖Z‖² = dT² coth²(ε/(2d))."),
        ("coordinate-subsampling", "projection/clipping at T + k random coordinates, one-bit at level ε/k",
         SM.subsampling_second_moment(T, e, d),
         "Z = (d/k) Σ_{j∈S} Y_j e_j, S a uniform k-subset, Y_j one-bit views at level ε/k (composition): "
         "‖Z‖² = d²T² coth²(ε/(2k))/k; k tuned by the solver."),
    ]
    return tuple(out)


def _kstar():
    """A valid closed-form choice of k for coordinate subsampling (about ε/2, clipped to [1, d])."""
    return S.Max(1, S.Min(S.d, sp.floor(S.eps / 2) + 1))


#: the shrinkage amount σ of θ̂ = (1-σ)Z̄, tuned by the solver (σ = 0: the plain average of the views)
SHRINK_PARAMETER = FreeParameter(shrink, lambda v: 0.0, lambda v: SHRINK_HIGH, log=False,
                                 doc="shrinkage amount σ: θ̂ = (1-σ)(average of the reports)")
SHRUNK_DERIVATION = (
    "θ̂ = (1-σ)Z̄ (σ tuned; σ = 0 is the plain average). Bias E θ̂ - θ = -(σθ + (1-σ)b), b = θ - E π_T X, "
    "‖b‖ <= B_k(T) = min over k' in [2, k] of c_k' r^k'/T^(k'-1) (mean_central.bias_bound_min; k = ∞: (r-T)_+), "
    "‖θ‖ <= r; Var(Z̄) = (E‖Z‖² - ‖E π_T X‖²)/n with ‖E π_T X‖ >= (‖θ‖ - B_k(T))_+ (unbiased views of the "
    "projected data, independent users); the worst ‖θ‖ in closed form (mean_central.upper_expr). "
    "With σ = 1/(1+√n) and no noise this is the Hodges–Lehmann risk r²/(1+√n)². ")


def _shrinkable(d1: bool, ball: str) -> bool:
    """The shrunk average applies where ‖θ‖ <= r bounds the mean (one dimension, the ℓ2 family); the ℓ∞ family's
    mean can have ‖θ‖₂ up to √d r and keeps the plain average."""
    return d1 or ball == "l2"


def _upper_bounds(k: float, d1: bool, ball: str) -> list[Bound]:
    out = []
    bias2 = bias_bound(k) ** 2 * (S.d if (ball == "linf" and not d1) else 1)
    lo, hi = _t_range(k)
    shrunk = _shrinkable(d1, ball)
    for name, title, second, why in _mechanisms(d1, ball):
        expr = upper_expr(k, None, S.n, second) if shrunk else bias2 + second / S.n
        dd = S.d if (ball == "linf" and not d1) else 1

        def t_opt(second=second, name=name, dd=dd):
            c = S.simplify(second / S.T ** 2) / S.n if name != "laplace" else (1 + 8 / S.eps ** 2) / S.n
            return truncation_optimum(k, c.subs(SM.k_sub, _kstar()) / dd)

        free = (FreeParameter(S.T, lo, hi, doc="truncation radius"),)
        opt = {S.T: t_opt}
        if shrunk:
            free += (SHRINK_PARAMETER,)
            opt[shrink] = 0
        if SM.k_sub in expr.free_symbols:
            free += (FreeParameter(SM.k_sub, lambda v: 1, lambda v: v["d"], integer=True, doc="coordinates released"),)
            opt[SM.k_sub] = _kstar()
        out.append(Bound(
            side="upper", name=name, label=title, expr=expr, source=SOURCE + "; docs/problems/mean.md (derived)",
            derivation=(SHRUNK_DERIVATION if shrunk else
                        "MSE = ‖bias‖² + Var(Z̄) <= ‖bias‖² + E‖Z‖²/n (unbiased views of the projected data, "
                        "independent users). Bias of the projection: E(‖X‖-T)_+ <= c_k r^k/T^{k-1} "
                        "(mean_central.bias_constant; k = ∞: (r-T)_+), per coordinate for ℓ∞. ") + why,
            free=free, optimum=opt, extra={"mechanism": name}))
    if d1:
        out.append(_levels_upper(k))
    trivial = S.r ** 2 * (S.d if (ball == "linf" and not d1) else 1)
    out.append(Bound(side="upper", name="zero", label="the estimator θ̂ = 0 (no data)", expr=trivial, source="trivial",
                     derivation="‖E X‖² <= (E‖X‖₂)² <= r² (ℓ2 family; Jensen and the moment bound) or d r² (ℓ∞ family: "
                     "‖EX‖₂² <= d ‖EX‖_∞² <= d r²).", extra={"mechanism": "zero", "no_data": True}))
    return out


M_LEVELS = sp.Symbol("m_levels", positive=True, integer=True)  # grid levels per side of quantised RR
ETA = sp.Symbol("eta", positive=True)  # half-width of the cos² prior in the sharp van Trees bounds
P_MIX = sp.Symbol("p_mix", positive=True)  # weight of the far atoms in the van Trees mixture family


def _levels_upper(k: float) -> Bound:
    """Truncation at T + unbiased rounding to 2m+1 grid levels + (2m+1)-ary randomized response."""
    T, m = S.T, M_LEVELS
    second = LS.levels_second_moment(T, S.eps, m, S.r)
    expr = upper_expr(k, None, S.n, second)
    lo, hi = _t_range(k)
    # a valid closed-form choice: m = 1, T from the T² part of the second moment
    c1 = (3 / (S.expm1(S.eps) + 3)) * sp.Rational(2, 3) / LS.levels_keep_probability(S.eps, 1) ** 2 / S.n
    return Bound(
        side="upper", name="levels-rr", label="truncation at T + rounding to 2m+1 levels + (2m+1)-ary randomized response",
        expr=expr, source=SOURCE + "; docs/problems/mean.md (derived)",
        derivation=SHRUNK_DERIVATION + "Y = unbiased rounding of [X]_T to the grid jT/m, |j| <= m: E Y² <= "
        "min{min(r²,T²) + min(hr, h²/4), T min(r,T)}, h = T/m (chord bounds of the interpolated x²; "
        "Lyapunov, k >= 2). Z = (2m+1)-RR of Y (keep with probability λ = (e^ε-1)/(e^ε+2m), else a uniform "
        "level; ε-LDP), Ẑ = v(Z)/λ unbiased: E Ẑ² = E Y²/λ + (1-λ) T²(m+1)/(3mλ²). m = 1 at large ε: "
        "E Ẑ² ≈ T E|X| + (4/3) T² e^{-ε}, far below one-bit's T² coth²(ε/2) (see mechanisms.local_scalar).",
        free=(FreeParameter(T, lo, hi, doc="truncation radius"),
              FreeParameter(m, lambda v: 1, lambda v: M_LEVELS_HIGH, integer=True, doc="grid levels per side"),
              SHRINK_PARAMETER),
        optimum={T: truncation_optimum(k, c1), m: 1, shrink: 0}, extra={"mechanism": "levels-rr"})


@S.cached_expression
def binary_fisher_sup(eps, eta):
    """sup over ε-LDP channels K and |u| <= η of I_Z(u) for X = ±1 with P(X=1) = (1+u)/2 (sympy):
    τ²/(1 - τ²η²), τ = tanh(ε/2), written (1-η²) + η² sech²(ε/2) in the denominator (stable).

    Derivation: I_Z(u) = Σ_z (q_+ - q_-)²/(2((1+u)q_+ + (1-u)q_-)), q_± = K(z|±1). Each term is q_- φ(t_z)
    with t_z = q_+/q_- ∈ [e^{-ε}, e^ε] and φ(t) = (t-1)²/(2((1+u)t + 1-u)) convex; Σ q_- = Σ q_- t = 1, so
    the sum is at most max E_w φ(t) over laws w on [e^{-ε}, e^ε] with mean 1, attained on the two endpoints
    (weights 1/(e^ε+1), e^ε/(e^ε+1)): binary randomized response. Its information is τ²/(1 - τ²u²),
    increasing in |u|. At η = 1 it is sinh²(ε/2) (finite)."""
    tau = sp.tanh(eps / 2)
    return tau ** 2 / ((1 - eta ** 2) + eta ** 2 / sp.cosh(eps / 2) ** 2)


def c_eps(eps):
    """C_ε = (e^ε-1)²/(2(e^ε+1)) = expm1(ε) tanh(ε/2)/2 (sympy): the first-absolute-moment Fisher constant."""
    return S.expm1(eps) * sp.tanh(eps / 2) / 2


def _sharp_van_trees_1d(k: float) -> list[Bound]:
    n, e, r = S.n, S.eps, S.r
    eta = ETA
    out = [Bound(
        side="lower", name="van-trees-binary", label="van Trees, X = ±r, exact binary private Fisher information",
        expr=lambda: r ** 2 / (n * binary_fisher_sup(e, eta) + sp.pi ** 2 / eta ** 2),
        source="Barnes, Chen & Özgür (van Trees under LDP); docs/problems/mean.md, docs/methods/van-trees.md (derived)",
        derivation="P(X = ±r) = (1±u)/2, u ∈ [-η, η] with the cos² prior (J = π²/η²), mean r u, |X| = r (every k). "
        "For any ε-LDP channel the information about u is at most sup_{|u|<=η} τ²/(1-τ²u²) = τ²/(1-τ²η²), "
        "τ = tanh(ε/2) (convexity: binary randomized response is the worst channel; binary_fisher_sup); "
        "chain rule over sequentially interactive users: n times it. van Trees: E(û-u)² >= 1/(nI + π²/η²), "
        "times r². As n → ∞ (η → 1 slowly) it tends to r² coth²(ε/2)/n, the one-bit risk.",
        free=(FreeParameter(eta, lambda v: ETA_LOW, lambda v: ETA_HIGH, log=False, doc="prior half-width"),),
        optimum={eta: lambda: S.Min(1, (sp.pi ** 2 / (n * sp.tanh(e / 2) ** 2)) ** sp.Rational(1, 4))},
        extra={"instance": "two-point"})]
    if not math.isinf(k):
        p = P_MIX

        def mixture_expr():
            a = _a(k)
            info = S.Min(c_eps(e) * p ** 2, p * S.Min(1, F.sinh2_half(e)) / (1 - eta ** 2))
            return r ** 2 * p ** (2 * a) / (n * info + sp.pi ** 2 / eta ** 2)

        out.append(Bound(
            side="lower", name="van-trees-mixture", label="van Trees, X ∈ {0, ±r p^(-1/k)}, first-absolute-moment Fisher bound",
            expr=mixture_expr,
            source="Barnes, Chen & Özgür (van Trees under LDP); docs/problems/mean.md, docs/methods/van-trees.md (derived)",
            derivation="P(X = ±R) = p(1±u)/2, P(X = 0) = 1-p, R = r p^{-1/k}: E|X|^k = r^k, mean R p u = r p^{(k-1)/k} u; "
            "u ∈ [-η, η], cos² prior (J = π²/η²). Score in u: ±1/(1±u) on ±R, 0 at 0, so E|S| = p and "
            "Var S = p/(1-u²). Any ε-LDP channel: I_Z <= C_ε (E|S|)² = C_ε p², C_ε = (e^ε-1)²/(2(e^ε+1)) "
            "(the two-point limit of the χ²–TV contraction), and I_Z <= min{1, sinh²(ε/2)} Var S "
            "(data processing; Barnes–Chen–Özgür's variance bound) <= p min{1, sinh²(ε/2)}/(1-η²). Chain rule: "
            "n times it. van Trees, times (r p^{(k-1)/k})². p and η are tuned; p* ≈ π sqrt((k-1)/(nC_ε)).",
            free=(FreeParameter(p, lambda v: P_MIX_LOW, lambda v: 1.0, doc="mixture weight"),
                  FreeParameter(eta, lambda v: ETA_LOW, lambda v: ETA_HIGH_MIXTURE, log=False, doc="prior half-width")),
            optimum={p: lambda: S.Min(1, sp.pi * sp.sqrt((_knum(k) - 1) / (n * c_eps(e)))),
                     eta: 1 - sp.Rational(1, 10 ** 6)},
            extra={"instance": "mixture"}))
    return out


P_ERASE = sp.Symbol("p_erase", positive=True)  # probability that a user holds the vertex (not 0)


def _erased_vertices(k: float, d1: bool, ball: str) -> Bound:
    """Mutual-information Bayes bound on the erased hypercube vertices (methods.ldp_mutual_info)."""
    n, e, r, d, p = S.n, S.eps, S.r, S.d, P_ERASE
    a = _a(k)
    linf = ball == "linf" and not d1
    dd = sp.Integer(1) if d1 else d
    far = "r p^{-1/k}" if not math.isinf(k) else "r"
    def vertex_expr():
        c2 = (r ** 2 * p ** (-2 * (1 - a)) if linf else r ** 2 * p ** (-2 * (1 - a)) / dd)
        return MI.erased_vertex_bound(c2, p, n, e, dd)

    return Bound(
        side="lower", name="bayes-vertices", label="Bayes risk on erased hypercube vertices, private mutual information",
        expr=vertex_expr,
        source="docs/methods/ldp-mutual-info.md, docs/problems/mean.md (derived)",
        derivation=f"V uniform on {{±1}}^d; each user holds X = cV with probability p, else 0 (independently), "
        f"‖X‖ = {far} (c = that/√d for the ℓ2 family, c = that for ℓ∞): E‖X‖^k = r^k; mean θ = c p V. "
        "Per user, I(V; Z_i | past) <= p κ_ε with κ_ε = y-1-log y, y = ε/(1-e^{-ε}) (erasure indicator "
        "revealed; an ε-LDP release carries at most κ_ε nats about its input: two-point extremal likelihood "
        "ratios), <= g(p,ε) and g*(p,ε) (the erased input's release law: no genie; g* also uses that the release "
        "law of the input 0 sums to one, a certified two-point concave envelope), and <= the non-private "
        "d log 2 (1-(1-p)^n). Bayes risk >= c²p²(d - E‖E[V|Z]‖²) and "
        "E‖E[V|Z]‖² <= d Ψ(I/d) (subadditivity of entropy, Jensen; Ψ the inverse of s ↦ KL(Bern((1+√s)/2)‖"
        "Bern(1/2))). Sequential interaction allowed. p tuned: near the no-data risk c²p²d at small n.",
        free=(FreeParameter(p, lambda v: P_VERTEX_LOW, lambda v: 1.0, doc="probability of the vertex"),),
        extra={"instance": "vertices", "ceiling": _vertex_ceiling(float(a), d1, linf)})


def _vertex_ceiling(a: float, d1: bool, linf: bool):
    """The no-data risk c²p²d of the erased family, at least the bound (its factor 1 - Ψ is in [0, 1]): lets the
    solver skip values of p that cannot be the best (core/solver.py)."""
    def cap(v, free):
        p, dd = free["p_erase"], 1.0 if d1 else float(v["d"])
        return float(v["r"]) ** 2 * p ** (-2 * (1 - a)) / (1.0 if linf else dd) * p ** 2 * dd
    return cap


def _cube_van_trees(ball: str) -> Bound:
    """van Trees on the hypercube family X = c x, x ∈ {±1}^d independent, P(x_j = 1) = (1+u_j)/2."""
    n, e, r, d, eta = S.n, S.eps, S.r, S.d, ETA
    scale, cdesc = (r ** 2 / d, "r/√d (‖X‖₂ = r)") if ball == "l2" else (r ** 2, "r (‖X‖_∞ = r)")

    def cube_expr():
        trace = S.Min(d * binary_fisher_sup(e, eta), F.sinh2_half(e) * CP.CubeMaxInvVar(d, eta),
                       2 * MI.kappa(e) * CP.CubeMaxSubGauss(d, eta))
        return scale * d ** 2 / (n * trace + d * sp.pi ** 2 / eta ** 2)

    return Bound(
        side="lower", name="van-trees-cube", label="van Trees, hypercube family with independent signs, cos² box prior",
        expr=cube_expr,
        source=F.SOURCE_BCO + "; docs/problems/mean.md, docs/methods/van-trees.md (derived)",
        derivation=f"X = c x, c = {cdesc}, x_j = ±1 independent with P(x_j = 1) = (1+u_j)/2, u ∈ [-η,η]^d with the "
        "product cos² prior (J = dπ²/η²); mean c u. Score S_j = x_j/(1+u_j x_j): I_X = diag(1/(1-u_j²)), "
        "λ_max <= 1/(1-η²); each S_j has range 2/(1-u_j²) (Hoeffding proxy 1/(1-η²)² for ⟨v,S⟩, ‖v‖ = 1). "
        "For any ε-LDP channel, at each u: Tr I_Z <= sinh²(ε/2) max_j 1/(1-u_j²) (Barnes–Chen–Özgür variance "
        "bound, independent of d), <= 2κ_ε max_j σ²(u_j) (Donsker–Varadhan with I(X;Z) <= κ_ε and the "
        "Kearns–Saul proxy σ²(u) = u/((1-u²)² artanh u) of the score), and <= Σ_j τ²/(1-τ²u_j²) (the channel "
        "from x_j alone, the other coordinates averaged, is ε-LDP: exact binary bound binary_fisher_sup). "
        "van Trees needs only ∫ Tr I_Z dμ: the prior averages E max_j f(|u_j|) = f(0) + ∫ f'(a)(1-F(a)^d) da "
        "(methods.cube_prior, quadrature) are finite even at η = 1. Chain rule: n times it. van Trees: "
        "E‖û-u‖² >= d²/(n ∫Tr dμ + dπ²/η²), times c².",
        free=(FreeParameter(eta, lambda v: ETA_LOW, lambda v: ETA_HIGH, log=False, doc="prior half-width"),),
        optimum={eta: sp.Rational(1, 2)}, extra={"instance": "cube"})


# ------------------------------------------------------------------------------ lower bounds

def _lower_bounds(k: float, d1: bool, ball: str) -> list[Bound]:
    a = _a(k)
    p, h, n, e, r, d = S.p, S.h, S.n, S.eps, S.r, S.d
    mixture = TwoPointFamily(
        "le-cam-mixture", "Le Cam, mixtures (1-p)δ_0 + p δ_(±r p^(-1/k))",
        r ** 2 * p ** (2 * a), p, -S.expm1(n * S.log1p(-p)),
        "DJW Prop 1 (rate); constant derived (docs/methods/ldp-contraction.md, docs/problems/mean.md)",
        "P_± = (1-p)δ_0 + p δ_{±r p^{-1/k} e_1} satisfy E‖X‖^k = r^k; means ±r p^{(k-1)/k} are 2s-separated with "
        "s = r p^{(k-1)/k}; TV(P_+,P_-) = p and TV(P_+^n,P_-^n) = 1-(1-p)^n. Private Le Cam: "
        "TV(M_+^n,M_-^n) <= min{√n(e^ε-1)p, 1-(1-p)^n} (Corollary 1 + Pinsker).",
        free=(FreeParameter(p, lambda v: P_LECAM_LOW, lambda v: 1.0, doc="mixture weight"),),
        # maximiser of p^β (1 - c p), β = 2(k-1)/k, c = sqrt(n/2)(e^ε-1): p = β/((1+β)c) (a valid choice)
        optimum={p: S.Min(1, 2 * a / ((1 + 2 * a) * sp.sqrt(n / 2) * S.expm1(e)))},
        extra={"instance": "mixture"})
    two_point = TwoPointFamily(
        "le-cam-two-point", "Le Cam, P(X = ±r e_1) = (1±h)/2",
        r ** 2 * h ** 2, h, ldp.binomial_tv_bound(n, (1 - h) / 2, (1 + h) / 2),
        "docs/methods/ldp-contraction.md (derived)",
        "Means ±r h e_1 (s = rh); TV(P_+,P_-) = h; the number of +r draws is sufficient, so TV(P_+^n,P_-^n) is "
        "the exact binomial TV; private Le Cam as above. Valid for every k (|X| = r).",
        free=(FreeParameter(h, lambda v: H_GAP_LOW, lambda v: H_GAP_HIGH, doc="probability gap"),),
        extra={"instance": "two-point"})
    out = method_bounds(mixture, "local") + method_bounds(two_point, "local")
    if d1:
        out += _sharp_van_trees_1d(k)
    w = W_BOX
    wfree = FreeParameter(w, lambda v: W_BOX_LOW, lambda v: W_BOX_HIGH, log=False, doc="half-width of the box prior")
    if ball == "linf" and not d1:
        def cube_family_expr():
            I0 = 1 / (1 - w ** 2)
            T1 = F.trace_bound(e, trace_IX=d * I0, I0=I0, subgaussian=I0 ** 2)
            return r ** 2 * VT.van_trees(d, n, T1, VT.box_prior_information(w, d))

        out.append(Bound(
            side="lower", name="van-trees", label="van Trees, cube family X_j = ±r independent, box prior",
            expr=cube_family_expr,
            source=F.SOURCE_BCO + "; docs/methods/van-trees.md (derived)",
            derivation="X_j = ±r independent with P(X_j = r) = (1+θ_j)/2, θ ∈ [-w,w]^d (w < 1 free), ‖X‖_∞ = r, mean rθ. "
            "I_X = diag(1/(1-θ_j²)) <= 1/(1-w²) = I_0, Tr I_X <= d I_0; each score coordinate is centred with "
            "range 2/(1-θ_j²) <= 2 I_0, independent coordinates: sub-Gaussian proxy I_0² (Hoeffding) for ⟨u,S⟩. "
            "Tr I_Z <= min{d I_0, I_0 sinh²(ε/2), 2 I_0² ε} (methods.fisher); van Trees with the cos² box prior, "
            "J = dπ²/w²: E‖θ̂-θ‖² >= d²/(nT + dπ²/w²); multiply by r². (w is free; w = 1/2 is the closed-form choice used for fast curves.)",
            free=(wfree,), optimum={w: sp.Rational(1, 2)}, extra={"instance": "cube"}))
    else:
        def axes_family_expr():
            I0 = 1 / (1 - w ** 2)
            T1 = F.trace_bound(e, trace_IX=I0, I0=I0 / d, subgaussian=1 / (1 - w) ** 2)
            return r ** 2 / d ** 2 * VT.van_trees(d, n, T1, VT.box_prior_information(w, d))

        out.append(Bound(
            side="lower", name="van-trees", label="van Trees, family on ±r e_j, box prior",
            expr=axes_family_expr,
            source=F.SOURCE_BCO + "; docs/methods/van-trees.md (derived)",
            derivation="P(X = ±r e_j) = (1±θ_j)/(2d), θ ∈ [-w,w]^d (w < 1 free), ‖X‖ = r (both norms), mean (r/d)θ. "
            "I_X = diag(1/(d(1-θ_j²))): I_0 = 1/(d(1-w²)), Tr I_X <= 1/(1-w²); ⟨u,S⟩ takes the values "
            "u_j/(1+θ_j), -u_j/(1-θ_j), all in [-1/(1-w), 1/(1-w)] (Hoeffding proxy 1/(1-w)²). "
            "Tr I_Z <= min{1/(1-w²), sinh²(ε/2)/(d(1-w²)), 2ε/(1-w)²}; van Trees with J = dπ²/w² "
            "gives E‖θ̂-θ‖² >= d²/(nT + dπ²/w²), times (r/d)². (w is free; w = 1/2 is the closed-form choice used for fast curves.)",
            free=(wfree,), optimum={w: sp.Rational(1, 2)}, extra={"instance": "axes"}))
    if not d1:
        out.append(_cube_van_trees(ball))
    out.append(_erased_vertices(k, d1, ball))
    if ball == "l2" and not d1:
        m, dl = M_ACTIVE, DELTA_GAP
        out.append(Bound(
            side="lower", name="assouad", label="private Assouad (coordinate-wise private Le Cam), m active axes",
            expr=lambda: ldp.private_assouad_expr(r ** 2 * dl ** 2 / m ** 2, m, n, e, dl / m,
                                             ldp.hellinger_tv_product(n, dl ** 2 / (1 + sp.sqrt(1 - dl ** 2)) / m)),
            source=ldp.SOURCE_DJW + "; docs/methods/le-cam.md, docs/methods/ldp-contraction.md (derived)",
            derivation="P_v(X = ±r e_j) = (1 ± δ v_j)/(2m) for j <= m, v ∈ {±1}^m: ‖X‖ = r, mean (rδ/m) v. Per coordinate, the "
            "two-point bound for the squared loss itself, averaged over each j-flip pair: (1/2)[E_{M+j}(θ̂_j-μ₊)² + "
            "E_{M-j}(θ̂_j-μ₋)²] >= ((μ₊-μ₋)²/4)(1 - TV(M_{+j}, M_{-j})) = s(1 - TV), s = (rδ/m)². Flipping v_j changes P_v by TV δ/m; by convexity of TV over the "
            "mixtures M_{±j} and the private Le Cam bound (methods.ldp), TV(M_{+j}, M_{-j}) <= "
            "min{sqrt(n/2)(e^ε-1)δ/m, sqrt(1-exp(-n(e^ε-1)²δ²/m²)), sqrt(1 - BC^{2n})} (BC = 1 - (1-sqrt(1-δ²))/m, "
            "Le Cam's inequality). Assouad: M_n >= s m (1 - that).",
            free=(FreeParameter(dl, lambda v: DELTA_GAP_LOW, lambda v: 1.0, doc="probability gap δ"),
                  FreeParameter(m, lambda v: 1, lambda v: v["d"], integer=True, doc="active coordinates")),
            extra={"instance": "axes"}))
    return out


# ------------------------------------------------------------------------------ Hellinger–Bhattacharyya Assouad

DELTA_HB = sp.Symbol("delta_hb", positive=True)  # probability gap of the Hellinger–Assouad families


def _hb_bounds(d1: bool, ball: str) -> list[Bound]:
    """The cube X = c x (independent signs, P(x_j = 1) = (1 + δv_j)/2) through methods.hellinger_assouad
    (docs/methods/hellinger-assouad.md). Best in the saturated regime only (n = 1e3, ε = 0.1, d <= 2: 1.2-1.3x);
    the axes family P_v(X = ±r e_j) = (1 ± δv_j)/(2m) through the same method was never the best one on the
    benchmark grid, so it is not listed."""
    from ..core.bounds import HypercubeFamily

    r, d, dl = S.r, S.d, DELTA_HB
    dd = sp.Integer(1) if d1 else d
    c = r / sp.sqrt(d) if (ball == "l2" and not d1) else r
    dfree = FreeParameter(dl, lambda v: DELTA_GAP_LOW, lambda v: 1.0, doc="probability gap δ")
    src = "Assouad (1983), Yu (1997); docs/methods/hellinger-assouad.md, docs/problems/mean.md (derived)"
    fams = [HypercubeFamily(
        "hellinger-assouad-cube", "Hellinger–Bhattacharyya Assouad, cube of independent signs", n_coords=dd,
        amplitude=c * dl, weight=sp.Integer(1), tv_flip=dl, h2_flip=dl ** 2 / (1 + sp.sqrt(1 - dl ** 2)), source=src,
        derivation=("X = c x, x_j = ±1 independent with P(x_j = 1) = (1 + δv_j)/2, c = r/√d (ℓ2 ball) or r (ℓ∞, d = 1): "
                    "‖X‖ = r, so E‖X‖^k = r^k for every k; mean cδv, ‖θ̂-θ‖² = Σ_j (θ̂_j - cδv_j)². A flip of v_j changes "
                    "one sign's law: TV = δ, H² = 1 - √(1-δ²). M >= d c²δ² (1-h)^{2n}."),
        free=(dfree,), extra={"instance": "cube"})]
    from ..methods import method_bounds

    return [b for f in fams for b in method_bounds(f, "local")]


@lru_cache(maxsize=None)
def _bounds(k: float, d1: bool, ball: str) -> tuple:
    return tuple(_upper_bounds(k, d1, ball) + _lower_bounds(k, d1, ball) + _hb_bounds(d1, ball))


# ------------------------------------------------------------------------------ rates

# ------------------------------------------------------------------------------ simulation

DEFAULT_NS_1D = (100, 316, 1000, 3162, 10000, 31623)
DEFAULT_NS_DD = (100, 316, 1000, 3162)


#: the 1-D fast paths live with the randomizers (one implementation: the check and bc.mechanism run the same code)
from ..mechanisms.local_runnable import SIM_1D, mean_mechanism, _laplace_1d, _levels_1d, _onebit_1d  # noqa: E402,F401


def _sim_1d(mech, atoms, probs, T, n, eps, reps, rng, **kw):
    """Exact fast simulation for discrete data in one dimension: θ̂ for ``reps`` repetitions (the randomizer's
    :meth:`~boundcalc.mechanisms.local_runnable.ScalarRandomizer.simulate`)."""
    from ..mechanisms.local_runnable import ScalarRandomizer

    runner = ScalarRandomizer(mech, T, eps, m=int(kw.get("m", 1)), shrink=float(kw.get("shrink", 1.0)),
                              problem="mean", label=mech, name=mech, n=n,
                              certified_risk=None, parameters={})
    return runner.simulate((atoms, probs), n, rng, reps)


def _sim_dd(mech, X_sampler, T, ball, n, eps, reps, rng, d, **kw):
    """Per-user simulation in d dimensions (the randomizer's
    :meth:`~boundcalc.mechanisms.local_runnable.VectorRandomizer.simulate`: privatize and estimate per repetition)."""
    from ..mechanisms.local_runnable import VectorRandomizer

    runner = VectorRandomizer(mech, T, ball, d, eps, k=int(kw.get("k", 1)), shrink=float(kw.get("shrink", 1.0)),
                              problem="mean", label=mech, name=mech,
                              n=n, certified_risk=None, parameters={})
    return runner.simulate(X_sampler, n, rng, reps)


def _point_mass_norm2(r, d, ball):
    """‖θ‖² of the point mass X ≡ r·u used as a hard instance: u = e_1 (ℓ2 ball, or d = 1) or the all-ones vector
    (ℓ∞ ball: ‖X‖_∞ = r); in the class since E‖X‖^k = r^k. It is where θ̂ = 0 has its largest risk (r², or d r²
    for the ℓ∞ ball: the no-data risk of the problem)."""
    return r * r * (d if (ball == "linf" and d > 1) else 1)


#: mechanisms whose risk on the point-mass instance is known exactly (no simulation): θ̂ = 0 has risk ‖θ‖²,
#: largest at the point mass of :func:`_point_mass_norm2`, so that is the instance it is checked on
EXACT = {"zero": lambda r, d, ball: ("point-mass(‖θ‖ max)", float(_point_mass_norm2(r, d, ball)),
                                     "X ≡ r e_1 (ℓ∞ ball: r·(1,…,1)); the zero estimator: exact risk ‖θ‖²")}


def check_instances(t):
    """The mechanism behind the best certified local bound on the hard instances of the lower bounds."""
    values, n, reps, rng, up = t.values, t.n, t.reps, t.rng, t.upper
    d = int(values["d"])
    r, k, eps = float(values["r"]), float(values["k"]), float(values["eps"])
    ball = "l2" if d == 1 else values["ball"]
    mech = up.name

    def record(name, est, theta, desc):
        err = np.sum(np.atleast_2d((est - theta).T).T ** 2, axis=-1) if np.ndim(est) > 1 else (est - theta) ** 2
        return name, err, desc

    lowers = {b.name: b for b in t.result.lowers}
    p = lowers["le-cam-mixture"].free_parameters.get("p") or 1.0 / n
    h = lowers["le-cam-two-point"].free_parameters.get("h") or 0.5
    far = r * p ** (-1.0 / k) if not math.isinf(k) else r
    # the runnable mechanism of the reported upper bound (the object bc.mechanism(...) returns): one implementation
    runner = mean_mechanism({**values, "n": int(n)}, up)
    if mech in EXACT:
        yield EXACT[mech](r, d, ball)
    elif d == 1:
        for sgn in (1, -1):
            atoms = np.array([0.0, sgn * far])
            est = runner.simulate((atoms, np.array([1 - p, p])), n, rng, reps)
            yield record(f"mixture{'+' if sgn > 0 else '-'}(p={p:.3g})", est, sgn * far * p,
                         "(1-p)δ_0 + p δ_(±r p^(-1/k))")
        atoms = np.array([-r, r])
        est = runner.simulate((atoms, np.array([(1 - h) / 2, (1 + h) / 2])), n, rng, reps)
        yield record(f"two-point(h={h:.3g})", est, r * h, "P(X = ±r) = (1±h)/2")
        est = runner.simulate((np.array([r]), np.array([1.0])), n, rng, reps)
        yield record("point-mass(θ=r)", est, r, "X ≡ r (largest |θ|: the worst case of θ̂ = 0 and of truncation)")
    else:
        def axes_sampler(m):
            j = rng.integers(0, d, m)
            sg = np.where(rng.random(m) < 0.5, 1.0, -1.0)
            x = np.zeros((m, d))
            x[np.arange(m), j] = sg * r
            return x

        est = runner.simulate(axes_sampler, n, rng, reps)
        yield record("axes(θ=0)", est, np.zeros(d), "uniform on {±r e_j} (van Trees family, centre)")
        vb = lowers.get("bayes-vertices")
        pe = float(vb.free_parameters.get("p_erase") or 0.0) if vb is not None else 0.0
        if 0.0 < pe <= 1.0:  # the erased-vertex family of bayes-vertices (by symmetry, one vertex suffices)
            c = (r * pe ** (-1.0 / k) if not math.isinf(k) else r) / (1.0 if ball == "linf" else math.sqrt(d))
            est = runner.simulate(lambda m: np.where(rng.random((m, 1)) < pe, c, 0.0) * np.ones((1, d)), n, rng, reps)
            yield record(f"vertex(p={pe:.3g})", est, np.full(d, c * pe),
                         "X = c·(1,…,1) with probability p, else 0 (erased-vertex family of bayes-vertices)")
        if ball == "linf":
            est = runner.simulate(lambda m: np.where(rng.random((m, d)) < 0.75, r, -r), n, rng, reps)
            yield record("cube(θ=1/2)", est, np.full(d, r / 2), "X_j = ±r, P(+r) = 3/4 (van Trees family, corner)")
        else:
            u = np.ones(d) / math.sqrt(d)
            est = runner.simulate(lambda m: np.where(rng.random((m, 1)) < 0.75, r, -r) * u[None, :], n, rng, reps)
            yield record("diagonal(h=1/2)", est, r * u / 2, "X = ±r u, P(+) = 3/4, u the unit diagonal")
        top = np.full(d, r) if ball == "linf" else r * np.eye(d)[0]
        est = runner.simulate(lambda m: np.broadcast_to(top, (m, d)).copy(), n, rng, reps)
        yield record("point-mass(‖θ‖ max)", est, top, "X ≡ r e_1 (ℓ∞ ball: r·(1,…,1)): the largest ‖θ‖ in the class")


CHECK = CheckSpec(check_instances, lambda v: DEFAULT_NS_1D if int(v["d"]) == 1 else DEFAULT_NS_DD,
                  prepare=per_user_reps)


# ------------------------------------------------------------------------------ registration

@register_problem_class
class LocalMean(Problem):
    """Mean estimation under ε-LDP (the central models of the same problem are
    :class:`boundcalc.problems.mean_central.CentralMean`: other mathematics, another module)."""

    name = "mean"
    aliases = ("mean-estimation",)
    privacies = ("local",)
    title = "mean estimation with a k-th moment bound"
    examples = {"local": {"n": 500, "d": 2, "r": 1.0, "k": 2.0, "ball": "linf", "eps": 1.0}}
    params = PARAMS
    titles = "mean estimation under ε-LDP, E||X||^k <= r^k (ℓ2 or ℓ∞ norm), loss ||θ̂-θ||²"
    sources = SOURCE
    checks = CHECK
    notes = ("Sequentially interactive ε-LDP channels. d >= 2 with finite k: the lower bounds do not capture the "
             "(d/(nε²))^{(k-1)/k} rate of the upper bounds (gap reported, not hidden).",
             "ℓ∞ sampling for even d uses the corrected (ε-LDP) law of boundcalc.mechanisms.sampling.")

    def mechanism_local(self, values, upper, bound):
        """The runnable randomizer of a reported upper bound (docs/methods/local-randomizers.md)."""
        return mean_mechanism(values, upper, bound)

    def rate(self, values):
        k = float(values["k"])
        a = _a(k)
        n, e, r, d = S.n, S.eps, S.r, S.d
        eff = n * S.Min(e ** 2, 1)  # effective sample size n min{ε², 1} (n(e^ε-1)² capped at n)
        if int(values["d"]) == 1:
            priv = r ** 2 * S.Min(1, eff ** (-a))
        elif values["ball"] == "l2":
            priv = r ** 2 * S.Min(1, (d / eff) ** a)
        else:
            priv = r ** 2 * d * S.Min(1, (d / eff) ** a)
        return [("statistical r²/n", r ** 2 / n), ("privacy", priv)]

    def bounds(self, values):
        d1 = int(values["d"]) == 1
        return list(_bounds(float(values["k"]), d1, "l2" if d1 else values["ball"]))

    def lower_rate(self, values):
        k = float(values["k"])
        a = _a(k)
        n, e, r, d = S.n, S.eps, S.r, S.d
        eff = n * S.Min(e ** 2, 1)
        if int(values["d"]) == 1:
            return None
        if values["ball"] == "l2":
            return r ** 2 / n + r ** 2 * S.Min(1, S.Max(d / eff, eff ** (-a)))
        return r ** 2 / n + r ** 2 * S.Min(d, S.Max(d ** 2 / eff, eff ** (-a)))
