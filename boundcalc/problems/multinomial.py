"""Discrete distribution (multinomial) estimation under ε-local differential privacy (docs/problems/multinomial.md).

Duchi, Jordan & Wainwright (NeurIPS 2013, *Local Privacy and Minimax Bounds: Sharp Rates for
Probability Estimation*); Barnes, Chen & Özgür (Cor 2); Ye & Barg (subset selection); Kairouz,
Bonawitz & Ramage (k-RR). X takes one of d symbols, θ in the simplex; loss ‖θ̂ - θ‖₂² (``--loss l2sq``)
or ‖θ̂ - θ‖₁ (``--loss l1``). Rate: ``d/(n min{ε², e^ε, d})`` for ℓ2² (all ε), ``min{1, d/sqrt(n min{ε², e^ε, d})}``
for ℓ1.

Upper bounds (derived, certified; :mod:`boundcalc.mechanisms.discrete`): exact worst-case risks of the
unbiased linear estimators of randomized response, Laplace, k-RR and subset selection (subset size
tuned by the solver), the best chosen per (n, ε, d); the trivial uniform estimator. For ℓ1:
``E‖Δ‖₁ <= sqrt(d E‖Δ‖₂²)`` (Cauchy–Schwarz and Jensen), and the uniform estimator's 2(1 - 1/d); and the exact
mean absolute deviations of unprojected subset selection (``subset-l1-mad``, about sqrt(2/π) of Cauchy–Schwarz).

Lower bounds (derived, certified):
- van Trees (:mod:`boundcalc.methods.van_trees`) on the paired family ``p(2j-1) = (1+θ_j)/d``,
  ``p(2j) = (1-θ_j)/d`` (m = ⌊d/2⌋ pairs, p(d) = 1/d for odd d), θ ∈ [-w,w]^m:
  I_X = diag((2/d)/(1-θ_j²)) (sympy-checked in tests), I_0 = (2/d)/(1-w²), Tr I_X <= m I_0, score values
  in [-1/(1-w), 1/(1-w)] (Hoeffding proxy 1/(1-w)²), J = mπ²/w², and ``‖p̂-p‖² >= (2/d²)‖θ̂-θ‖²``
  (θ̂_j = (d/2)(p̂_{2j-1} - p̂_{2j}) and (a-b)² <= 2a² + 2b²):
  ``sup E‖p̂-p‖² >= (2/d²) m² / (n min{m I_0, I_0 sinh²(ε/2), 2ε/(1-w)²} + mπ²/w²)``
  (at w = 1/2 and even d this is ``(1/2)/(n min{4/3, (8/(3d)) sinh²(ε/2)} + 2π²d)``).
- van Trees on the whole simplex of k <= d symbols with a Dirichlet(α) prior
  (:mod:`boundcalc.methods.dirichlet_van_trees`; docs/methods/ldp-trace.md): the trace lemma extended to
  priors reaching the boundary, ``tr I_Z(p) <= sinh²(ε/2)/τ + (e^ε-1)² #{x: p_x < τ}``, averaged under
  the prior (Beta marginals), J = (k-1)(kα-1)(kα-2)/(α-2):
  ``sup E‖p̂-p‖² >= (k-1)²/(n T + J)``; asymptotically equal to subset selection's risk.
- private Assouad (coordinate-wise private Le Cam, :mod:`boundcalc.methods.ldp`) on
  ``p(2j-1) = (1+δv_j)/(2m')``, ``p(2j) = (1-δv_j)/(2m')`` for j <= m' (other symbols 0): flipping v_j
  moves TV by δ/m'; a wrong sign costs ``(δ/m')²/2`` in ℓ2² and ``δ/m'`` in ℓ1. Gives
  ``(δ²/(4m'))(1 - TVb(δ/m'))`` (ℓ2²) and ``(δ/2)(1 - TVb(δ/m'))`` (ℓ1), δ and m' tuned.
- Hellinger–Bhattacharyya Assouad on the same pair family (:mod:`boundcalc.methods.hellinger_assouad`,
  docs/methods/hellinger-assouad.md; sequential interaction allowed): per flip TV = δ/m, H² = (1 - √(1-δ²))/m,
  h = min{H², h_ε TV²}, h_ε = (e^ε-1)²/(4(e^ε+1)), B = (1-h)^{2n}: ``(δ²/(2m)) B`` (ℓ2², m and δ tuned) and
  ``δ B/(1 + √(1-B))`` (ℓ1, m = ⌊d/2⌋: h decreases in m). About 1/(4√e √(n h_ε)) in the middle regime.
- ℓ1 only (local, and without privacy with h_ε = ∞): the Ziv–Zakai bound on the same pair family with θ_j i.i.d. uniform on [-A, A]
  (:mod:`boundcalc.methods.ziv_zakai`, docs/methods/ziv-zakai.md; sequential interaction allowed): the ℓ1 error
  of each pair as an integral of two-point test errors between θ_j = φ and φ + h, each bounded through the
  transcript affinity (1-κ)ⁿ: about 0.63 m/√(2n h_ε) in the middle regime, 2.3 times the Hellinger–Assouad value.
- The sub-alphabet searches stop at a d-free size k* beyond which every sub-family bound is below a value the
  Hellinger–Assouad bound reaches (:func:`sub_alphabet_cap`), so the reported lower bound is constant in d there.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..core.bounds import Bound, CheckSpec, Condition, FreeParameter, Problem, register_problem_class
from ..core.errors import InputError
from ..mechanisms import discrete as DM
from ..mechanisms import subset_tail as ST
from ..methods import fisher as F
from ..methods import ldp
from ..methods import van_trees as VT
from ..methods import dirichlet_van_trees as DVT
from ..core.params import N, ParamSpec

SOURCE = ("Duchi, Jordan & Wainwright (NeurIPS 2013); Barnes, Chen & Özgür (2020), Cor 2; Ye & Barg (2018); "
          "Kairouz, Bonawitz & Ramage (2016)")
D_ALPHABET = ParamSpec("d", "int", 10, "alphabet size (number of symbols, integer >= 2)", low=2, high=1e6)
LOSS = ParamSpec("loss", "choice", "l2sq", "loss: l2sq (squared ℓ2) or l1", choices=("l2sq", "l1"),
                 structural=True)
PARAMS = (N, D_ALPHABET, LOSS)

W_BOX = sp.Symbol("w", positive=True)
M_ACTIVE = sp.Symbol("m", positive=True, integer=True)  # m' <= ⌊d/2⌋: pairs active in the Assouad family (free)
DELTA_GAP = sp.Symbol("delta_gap", positive=True)
D_HALF = sp.Symbol("m_pairs", positive=True, integer=True)  # ⌊d/2⌋ (a derived value)
SUB_PAIRS = sp.Symbol("q", positive=True, integer=True)  # pairs of active symbols of the sub-alphabet family
K_ACTIVE = sp.Symbol("k_act", positive=True, integer=True)  # active symbols of the Dirichlet family
ALPHA_DIR = sp.Symbol("alpha_dir", positive=True, integer=True)  # Dirichlet concentration
ETA_DIR = sp.Symbol("eta_dir", positive=True)  # threshold τ = (1-η)/k of the trace bound
GAMMA_MIX = sp.Symbol("gamma_mix", positive=True)  # weight of the point mass in the saturated-regime family

# Free-parameter ranges: every value in a range gives a valid bound; a range only limits the solver's search.
#: half-width w of the van Trees box prior: w < 1 keeps I_0 = (2/d)/(1-w²) finite; w = 1/2 is the closed-form choice
W_BOX_LOW, W_BOX_HIGH = 1e-3, 1.0 - 1e-6
#: Dirichlet(α) prior: α >= 3 (an integer) keeps J = (k-1)(kα-1)(kα-2)/(α-2) finite; up to 10¹⁰ (a prior
#: concentrated near the uniform law), searched on a log grid
ALPHA_DIR_LOW, ALPHA_DIR_HIGH = 3, 1e10
#: η of the threshold τ = (1-η)/k of the trace bound: any η ∈ (0, 1) is valid (τ in (0, 1/k))
ETA_DIR_LOW, ETA_DIR_HIGH = 1e-3, 0.999
#: weight γ of the point mass: any γ ∈ (0, 1) is valid; the bound is γ²(1 - E‖π‖²), so tiny γ never helps
GAMMA_MIX_LOW, GAMMA_MIX_HIGH = 1e-6, 1.0 - 1e-9
#: probability gap δ of the Assouad and Hellinger–Assouad pair families: every δ ∈ (0, 1] is valid
DELTA_GAP_LOW = 1e-12


@S.cached_expression
def point_mass_bayes(loss: str, n=S.n, eps=S.eps, d=S.d, g=GAMMA_MIX):
    """sympy: the saturated-regime Bayes bound (docs/problems/multinomial.md, "point-mass-bayes").

    Family θ_j = (1-γ)u + γ e_j (u uniform), j uniform on the d symbols. For any estimator and any
    (sequentially interactive) ε-LDP protocol, with π(Z) the posterior of j:
    ℓ2²: E‖p̂ - θ_J‖² >= E Σ_j π_j ‖θ_j - θ̄‖² = γ² (1 - E‖π‖²) (θ̄ the posterior mean);
    ℓ1: per coordinate the posterior loss is at least the weighted-median value γ min(π_i, 1-π_i) >=
    γ π_i(1-π_i), so E‖p̂ - θ_J‖₁ >= γ (1 - E‖π‖²).
    E‖π‖² = (1/d²) Σ_j (1 + χ²(M_j‖M̄)) (M_j the law of Z_{1:n} under θ_j, M̄ their average), χ² is convex in
    its second argument, so χ²(M_j‖M̄) <= (1/d) Σ_k χ²(M_j‖M_k), and 1 + χ² tensorises along the sequential
    protocol (each conditional channel is ε-LDP and X_i is independent of Z_{1:i-1}):
    1 + χ²(M_j‖M_k) <= (1 + c)^n, c = 2(e^ε-1)²/(e^ε+1) · TV(θ_j,θ_k)² (the χ²–TV contraction,
    TV = γ), also <= the non-private χ²(θ_j‖θ_k) = γ²(d/(1-γ) + 1/((1-γ)/d + γ)) (data processing).
    Hence E‖π‖² <= 1/d + ((d-1)/d²)((1+c)^n - 1) and the bound
    ``γ^a (1 - 1/d) max{0, 1 - ((1+c)^n - 1)/d}``, a = 2 (ℓ2²) or 1 (ℓ1).
    """
    from ..methods.chi2_contraction import chi2_factor

    c = S.Min(chi2_factor(eps) * g ** 2, g ** 2 * (d / (1 - g) + 1 / ((1 - g) / d + g)))
    growth = S.expm1(n * S.log1p(c))
    power = 2 if loss == "l2sq" else 1
    return g ** power * (1 - 1 / d) * S.Max(0, 1 - growth / d)


# ------------------------------------------------------------------------------ bounds

def _upper_bounds(loss: str, private: bool) -> list[Bound]:
    n, e, d = S.n, S.eps, S.d
    out = []
    if private:
        for mech in DM.MECHANISMS:
            def expr(mech=mech):
                risk = DM.worst_risk(mech, n, e, d, DM.ssub)
                return risk if loss == "l2sq" else sp.sqrt(d * risk)

            free = ()
            opt = None
            if DM.mechanism(mech).subset_size:
                free = (FreeParameter(DM.ssub, lambda v: 1, lambda v: max(1, v["d"] - 1), integer=True,
                                      doc="subset size"),)
                opt = {DM.ssub: lambda: S.Max(1, S.Min(d - 1, sp.ceiling(d / (sp.exp(e) + 1))))}
            out.append(Bound(
                side="upper", name=mech, label=DM.TITLES[mech], expr=expr, source=SOURCE + "; docs/problems/multinomial.md (derived)",
                derivation="Unbiased linear estimator; exact risk = constant - ‖θ‖²/n (mechanisms.discrete, sympy identity and "
                "finite-channel computation in tests), maximal at the uniform θ. Projection onto the simplex can "
                "only reduce the ℓ2 error." + ("" if loss == "l2sq" else
                                               " ℓ1: E‖Δ‖₁ <= sqrt(d E‖Δ‖₂²) (Cauchy–Schwarz, Jensen)."),
                free=free, optimum=opt, extra={"mechanism": mech}))
    else:
        risk = (1 - 1 / d) / n
        out.append(Bound(side="upper", name="empirical", label="empirical frequencies (no privacy)",
                         expr=risk if loss == "l2sq" else sp.sqrt(d * risk), source="textbook",
                         derivation="E‖θ̂-θ‖² = (1 - ‖θ‖²)/n <= (1 - 1/d)/n; ℓ1 by Cauchy–Schwarz.",
                         extra={"mechanism": "empirical"}))
    if private:
        out.extend(_projected_subset_bounds(loss))
        if loss == "l1":
            out.append(_subset_l1_mad())
    triv = (1 - 1 / d) if loss == "l2sq" else 2 * (1 - 1 / d)
    out.append(Bound(side="upper", name="uniform", label="the uniform estimator (no data)", expr=triv, source="trivial",
                     derivation="‖u - θ‖₂² = ‖θ‖² - 1/d <= 1 - 1/d; ‖u - θ‖₁ <= 2(1 - 1/d) (maximal at a point mass).",
                     extra={"mechanism": "uniform", "no_data": True}))
    return out


#: subset-l1-mad is evaluated for n up to this (its cost grows like sqrt(n))
MAD_MAX_N = 1e6


def _subset_l1_mad() -> Bound:
    """ℓ1 risk of unprojected subset selection from exact mean absolute deviations (mechanisms.discrete)."""
    n, e, d = S.n, S.eps, S.d
    return Bound(
        side="upper", name="subset-l1-mad", label="subset selection, unprojected, exact mean absolute deviations (ℓ1)",
        expr=lambda: DM.SubsetL1MAD(n, e, d),
        source="Ye & Barg (2018); " + SOURCE + "; docs/problems/multinomial.md (derived)",
        derivation="Subset selection with subset size s (the minimiser of its exact ℓ2² risk constant): N_j ~ Bin(n, π_j) "
        "exactly, π_j = q* + D p_j, y_j = (N_j/n - q*)/D. E‖y - p‖₁ = Σ_j G(p_j) exactly, G(x) = E|N - nπ(x)|/(nD); "
        "Σ_j (p_j - 1/d) = 0 gives sup over the simplex <= d sup_x [G(x) - κ(x - 1/d)] for every κ. On x-cells: "
        "G <= [E_{π_b}(N - nπ_a)₊ + E_{π_a}(nπ_b - N)₊]/(nD) (stochastic monotonicity; exact binomial partial "
        "moments from tails, widened for rounding), or the mean-value bound around the midpoint with G' = ∂_π F/n + "
        "∂_c F bounded by binomial tails at the cell's ends; cells refined adaptively. About sqrt(2/π) = 0.80 of the "
        "Cauchy–Schwarz bound sqrt(d E‖y - p‖₂²).",
        conditions=(Condition("d >= 2", lambda v: np.all(np.asarray(v["d"]) >= 2)),
                    Condition(f"n <= {MAD_MAX_N:.0e} (the cells it needs narrow like 1/sqrt(n); beyond, the Cauchy–Schwarz "
                              "bound, 1.25 times larger, is used)", lambda v: np.all(np.asarray(v["n"]) <= MAD_MAX_N))),
        extra={"mechanism": "subset-l1-mad", "curve": False})


def _projected_subset_bounds(loss: str) -> list[Bound]:
    """Subset selection followed by the Euclidean projection onto the simplex, certified from exact binomial
    tails (:mod:`boundcalc.mechanisms.subset_tail`; docs/problems/multinomial.md). The subset size and the
    route's parameters (t or μ, κ, λ) are chosen inside the computation; every choice gives a valid bound."""
    n, e, d = S.n, S.eps, S.d
    src = "Ye & Barg (2018); Wang et al. (2016); " + SOURCE + "; docs/problems/multinomial.md (derived)"
    common = ("Subset selection (subset size s): N_j ~ Bin(n, π_j) exactly, π_j = q* + D p_j, y_j = (N_j/n - q*)/D "
              "sums to 1; p̂ = Π_Δ(y) = (y - τ)₊ with τ >= 0. The supremum over the simplex of a separable bound "
              "Σ_j g(p_j) is at most d · min_κ sup_x [g(x) - κ(x - 1/d)] (Σ_j (p_j - 1/d) = 0), certified over cells "
              "of x ∈ [0,1] by stochastic monotonicity of Bin(n, π) in π; binomial partial moments in closed form "
              "from exact tails, widened outward for rounding. ")
    out = []
    if loss == "l2sq":
        out.append(Bound(
            side="upper", name="subset-projected", label="subset selection projected onto the simplex (exact binomial tails)",
            expr=lambda: ST.SubsetProjectedMax(n, e, d), source=src,
            derivation=common + "Exact identity ‖p̂ - p‖² = ⟨w, p̂ - p⟩ - Σ_j p_j (τ - y_j)₊ (w = y - p, from p̂_j - y_j = "
            "-min(y_j, τ)); ⟨w, p̂⟩ <= max_j w_j <= t + Σ_j (w_j - t)₊ and (τ - y_j)₊ >= (-y_j)₊, so "
            "E‖p̂ - p‖² <= t + Σ_j g_t(p_j), g_t(x) = E(N/n - π(x) - Dt)₊/D - x E(q* - N/n)₊/D.",
            conditions=(Condition("d >= 2", lambda v: np.all(np.asarray(v["d"]) >= 2)),),
            extra={"mechanism": "subset-projected", "curve": False}))  # certified per point (cells): not for curves
    out.append(Bound(
        side="upper", name="subset-projected-threshold",
        label="subset selection projected onto the simplex (threshold route, exact binomial tails)",
        expr=(lambda: ST.SubsetProjectedThreshold(n, e, d)) if loss == "l2sq" else
        (lambda: ST.SubsetProjectedThresholdL1(n, e, d)), source=src,
        derivation=common + "For μ >= 0, on {τ >= μ} the projection of (y - μ)₊ is p̂ and Π_Δ is 1-Lipschitz: "
        "‖p̂ - p‖ <= ‖(y - μ)₊ - p‖; ℓ1: ‖p̂ - p‖₁ = 2Σ_j (w_j - τ)₊ <= 2Σ_j (w_j - μ)₊ there. Elsewhere the loss is "
        "at most 2. P(τ < μ) = P(Σ_j (y_j - μ)₊ < 1) <= e^λ Π_j E e^{-λ(y_j - μ)₊} by negative association "
        "(conditional Bernoulli reports, strongly Rayleigh: Borcea, Brändén & Liggett 2009; multinomial input "
        "counts: Joag-Dev & Proschan 1983), with exact binomial moment generating functions.",
        conditions=(Condition("d >= 2", lambda v: np.all(np.asarray(v["d"]) >= 2)),),
        extra={"mechanism": "subset-projected-threshold", "curve": False}))
    return out


def _lower_bounds(loss: str, private: bool) -> list[Bound]:
    n, e, d, w, m = S.n, S.eps, S.d, W_BOX, D_HALF
    out = []
    if loss == "l2sq":
        def paired_expr():
            I0 = (2 / d) / (1 - w ** 2)
            T1 = (F.trace_bound(e, trace_IX=m * I0, I0=I0, subgaussian=1 / (1 - w) ** 2) if private else m * I0)
            return 2 / d ** 2 * VT.van_trees(m, n, T1, VT.box_prior_information(w, m))

        out.append(Bound(
            side="lower", name="van-trees", label="van Trees, paired family, box prior",
            expr=paired_expr,
            source=F.SOURCE_BCO + " (Cor 2); docs/problems/multinomial.md (derived)",
            derivation="Paired family p(2j-1) = (1+θ_j)/d, p(2j) = (1-θ_j)/d, m = ⌊d/2⌋ pairs, θ ∈ [-w,w]^m. "
            "I_X = diag((2/d)/(1-θ_j²)) <= I_0 = (2/d)/(1-w²), Tr I_X <= m I_0, ⟨u,S⟩ ∈ [-1/(1-w), 1/(1-w)] "
            "(Hoeffding proxy 1/(1-w)²). Tr I_Z <= min{m I_0, I_0 sinh²(ε/2), 2ε/(1-w)²} (methods.fisher). "
            "van Trees with the cos² box prior (J = mπ²/w²) and ‖p̂-p‖² >= (2/d²)‖θ̂-θ‖² (θ̂_j = (d/2)(p̂_{2j-1}-p̂_{2j})).",
            free=(FreeParameter(w, lambda v: W_BOX_LOW, lambda v: W_BOX_HIGH, log=False, doc="box half-width"),),
            optimum={w: sp.Rational(1, 2)}, extra={"instance": "paired"}))
        # the same family on a sub-alphabet of 2q <= d symbols (the others get mass 0): a sub-family of
        # the d-simplex for every q, so the bound never decreases with d; optimising q gives the
        # middle regime (d ≳ sqrt(nε²)) where the full alphabet's prior term dominates
        q = SUB_PAIRS

        def sub_expr():
            I0q = (1 / q) / (1 - w ** 2)
            T1q = (F.trace_bound(e, trace_IX=q * I0q, I0=I0q, subgaussian=1 / (1 - w) ** 2) if private else q * I0q)
            return 2 / (2 * q) ** 2 * VT.van_trees(q, n, T1q, VT.box_prior_information(w, q))

        out.append(Bound(
            side="lower", name="van-trees-sub", label="van Trees, paired family on 2q of the d symbols, box prior",
            expr=sub_expr,
            source=F.SOURCE_BCO + " (Cor 2); docs/problems/multinomial.md (derived)",
            derivation="The paired family on the first 2q <= d symbols: p(2j-1) = (1+θ_j)/(2q), p(2j) = (1-θ_j)/(2q), "
            "j <= q, other symbols 0, θ ∈ [-w,w]^q. It is a sub-family of the d-simplex (the symbols outside "
            "have probability 0, so the channel's rows for them never matter). I_X = diag((1/q)/(1-θ_j²)) <= "
            "I_0 = (1/q)/(1-w²); the one-sample private trace bound and the cos² box prior (J = qπ²/w²) as in "
            "van-trees; ‖p̂-p‖² >= (2/(2q)²)‖θ̂-θ‖² with θ̂_j = q(p̂_{2j-1}-p̂_{2j}). q is a free parameter "
            "(q = ⌊d/2⌋ is the van-trees bound for even d).",
            free=(FreeParameter(w, lambda v: W_BOX_LOW, lambda v: W_BOX_HIGH, log=False, doc="box half-width"),
                  FreeParameter(q, lambda v: 1, lambda v: max(1, math.floor(sub_alphabet_cap(v, 1 / math.pi ** 2) / 2)),
                                integer=True, doc="pairs of active symbols q")),
            extra={"instance": "paired-sub"}))
    if loss == "l2sq":
        k, a, et = K_ACTIVE, ALPHA_DIR, ETA_DIR
        out.append(Bound(
            side="lower", name="van-trees-dirichlet", label="van Trees on the full simplex of k symbols, Dirichlet prior",
            expr=lambda: DVT.dirichlet_van_trees(n, e, k, a, (1 - et) / k, private=private),
            source=F.SOURCE_BCO + "; Gill & Levit (1995); docs/methods/ldp-trace.md, docs/problems/multinomial.md (derived)",
            derivation="Family: every p on the face of the first k <= d symbols (a sub-family for every d), orthonormal "
            "tangent coordinates; projecting p̂ onto the face's affine hull only lowers the loss. Prior "
            "Dirichlet(α) (α >= 3 an integer): J = (k-1)(kα-1)(kα-2)/(α-2). One sample, any ε-LDP channel: "
            "tr I_Z(p) <= sinh²(ε/2)/τ + (e^ε-1)²·#{x: p_x < τ} (trace lemma: tr I_Z = Σ_z c_z Σ_x (r_zx - r̄_z)², "
            "Bhatia–Davis on the symbols with p_x >= τ, r_zx ∈ [e^-ε, e^ε] on the others) and <= tr I_X = "
            "(1-1/k)Σ1/p_x; under the prior E#{p_x < τ} = k P(Bin(kα-1, τ) >= α) (Beta marginals) and "
            "E Σ 1/p_x = k(kα-1)/(α-1). van Trees: (k-1)²/(n E tr + J). τ = (1-η)/k.",
            free=(FreeParameter(k, lambda v: 2, lambda v: max(2, math.floor(sub_alphabet_cap(v, 1 / 8))), integer=True,
                                doc="active symbols k"),
                  FreeParameter(a, lambda v: ALPHA_DIR_LOW, lambda v: ALPHA_DIR_HIGH, integer=True, doc="Dirichlet concentration α"),
                  FreeParameter(et, lambda v: ETA_DIR_LOW, lambda v: ETA_DIR_HIGH, log=False, doc="threshold τ = (1-η)/k")),
            extra={"instance": "dirichlet"}))
    if private:
        out.append(Bound(
            side="lower", name="point-mass-bayes", label="Bayes risk of d mixtures with point masses (saturated regime)",
            expr=point_mass_bayes(loss), source=ldp.SOURCE_DJW + "; docs/problems/multinomial.md (derived)",
            derivation="θ_j = (1-γ)u + γe_j, j uniform. Posterior π(Z) of j: the Bayes ℓ2² risk is γ²(1 - E‖π‖²) "
            "(ℓ1: >= γ(1 - E‖π‖²), weighted medians per coordinate). E‖π‖² = (1/d²)Σ_j(1 + χ²(M_j‖M̄)) <= "
            "1/d + ((d-1)/d²)((1+c)^n - 1): convexity of χ² in its second argument, tensorisation of 1 + χ² "
            "along a sequential protocol, and the χ²–TV contraction c = 2(e^ε-1)²γ²/(e^ε+1) (or the "
            "non-private χ², data processing). Tends to the no-data risk (1-1/d) as nε² -> 0.",
            free=(FreeParameter(GAMMA_MIX, lambda v: GAMMA_MIX_LOW, lambda v: GAMMA_MIX_HIGH, log=False,
                                doc="weight γ of the point mass"),),
            extra={"instance": "point-mass-bayes"}))
        mp, dl = M_ACTIVE, DELTA_GAP
        # per pair j the loss is at least a function of u_j = p̂_{2j-1} - p̂_{2j}, which estimates
        # μ_{v_j} = δ v_j/m': (Δ_{2j-1}² + Δ_{2j}²) >= (u_j - μ_{v_j})²/2 and |Δ_{2j-1}| + |Δ_{2j}| >= |u_j - μ_{v_j}|.
        # The two-point bound for the loss itself (not a 0/1 sign loss), averaged over the j-flip pairs:
        # (1/2)[E_{M+j}(u-μ₊)² + E_{M-j}(u-μ₋)²] >= ((μ₊-μ₋)²/4)(1 - TV) and the same with |·| and (μ₊-μ₋)/2
        def expr():
            # 1 - BC of one flip: the two changed masses (1±δ)/(2m') swap: BC = 1 - (1 - sqrt(1-δ²))/m'
            prod = ldp.hellinger_tv_product(n, dl ** 2 / (1 + sp.sqrt(1 - dl ** 2)) / mp)
            if loss == "l2sq":
                return ldp.private_assouad_expr(dl ** 2 / (2 * mp ** 2), mp, n, e, dl / mp, prod)
            return ldp.private_assouad_expr(dl / mp, mp, n, e, dl / mp, prod)

        out.append(Bound(
            side="lower", name="assouad", label="private Assouad (coordinate-wise private Le Cam), m' active pairs",
            expr=expr, source=ldp.SOURCE_DJW + "; docs/methods/le-cam.md, docs/methods/ldp-contraction.md (derived)",
            derivation="p_v(2j-1) = (1+δv_j)/(2m'), p_v(2j) = (1-δv_j)/(2m') for j <= m' (other symbols 0), v ∈ {±1}^{m'}. "
            "With u_j = p̂_{2j-1} - p̂_{2j} and μ_v = δv_j/m': Δ²_{2j-1} + Δ²_{2j} >= (u_j - μ_v)²/2 and "
            "|Δ_{2j-1}| + |Δ_{2j}| >= |u_j - μ_v|; averaging over each j-flip pair, the two-point bound for the loss "
            "itself gives ((δ/m')²/2)(1 - TV_j) per pair (ℓ2²) and (δ/m')(1 - TV_j) (ℓ1). "
            "Flipping v_j changes p_v by TV δ/m'; convexity of TV over the mixtures M_{±j} and the private Le Cam "
            "bound (methods.ldp) bound TV(M_{+j}, M_{-j}); also TV <= sqrt(1 - BC^{2n}) (data processing, Le Cam's "
            "inequality, BC = 1 - (1 - sqrt(1-δ²))/m'). Summing over the m' pairs: M_n >= s m' (1 - TV bound).",
            free=(FreeParameter(dl, lambda v: DELTA_GAP_LOW, lambda v: 1.0, doc="probability gap δ"),
                  FreeParameter(mp, lambda v: 1, lambda v: max(1, v["d"] // 2 if loss == "l1" else
                                                                math.floor(sub_alphabet_cap(v, 1.0) / 2)),
                                integer=True, doc="active pairs m'")),
            extra={"instance": "assouad"}))
    if loss == "l1":
        out.append(_zz_bound(private))
    return out


def _zz_bound(private: bool) -> Bound:
    """The Ziv–Zakai ℓ1 bound on the pair family with a uniform prior (:mod:`boundcalc.methods.ziv_zakai`); without
    privacy h_ε = ∞, so κ = H² (data processing only)."""
    from ..methods import ziv_zakai as ZZ

    return Bound(
        side="lower", name="ziv-zakai", label="Ziv–Zakai, pair family on 2m symbols, uniform prior (ℓ1)",
        expr=ZZ.ZivZakaiPairsL1(S.n, S.eps if private else sp.oo, D_HALF), source=ZZ.SOURCE,
        derivation="p_θ(2j-1) = (1+θ_j)/(2m), p_θ(2j) = (1-θ_j)/(2m), m = ⌊d/2⌋, θ_j i.i.d. uniform on [-A, A]. "
        "‖p̂-p‖₁ >= Σ_j |u_j - θ_j/m| (u_j = p̂_{2j-1} - p̂_{2j}); per pair the Ziv–Zakai identity E|t-ϑ| = "
        "½∫P(|t-ϑ| >= h/2)dh and the two-point test between θ_j = φ and φ+h (weights 1/(2A)) give "
        "(1/(4A))∫_0^{2A}dh∫_{-A}^{A-h}dφ (1 - TV); Le Cam 1 - TV >= 1 - √(1 - BC²); BC of the mixtures over the "
        "other pairs >= (1-κ)ⁿ, κ = min{h_ε (h/(2m))², H²(φ, h)} per report (Hellinger contraction, data "
        "processing, peeling a sequentially interactive transcript). Certified lower Riemann sum (monotone in h, "
        "convex in φ), A tuned inside.",
        extra={"instance": "ziv-zakai"})


# ------------------------------------------------------------------------------ Hellinger–Bhattacharyya Assouad (lower side)
# The pair family on 2m <= d symbols through the hypercube method of methods.hellinger_assouad, and the d-free
# caps on the sub-alphabet searches that keep the reported lower bound non-decreasing in d.

M_HB = sp.Symbol("m_hb", positive=True, integer=True)  # active pairs of the Hellinger–Assouad family
DELTA_HB = sp.Symbol("delta_hb", positive=True)  # probability gap δ of the Hellinger–Assouad family


def _hb_pair_value(m: float, delta: float, n: float, eps: float, private: bool) -> float:
    """Float: the ℓ2² Hellinger–Assouad bound (δ²/(2m))(1-h)^{2n} of the pair family at (m, δ)."""
    from ..methods import hellinger_assouad as HA

    h2 = delta ** 2 / (1 + math.sqrt(1 - delta ** 2)) / m
    h = HA.per_flip_h_float("local" if private else "none", eps, delta / m, h2)
    return HA.bound_float("l2sq", 1, 0.5 / m, delta, n, h) if h < 1 else 0.0


def guaranteed_lower(values: dict) -> float:
    """A value the ℓ2² Hellinger–Assouad bound reaches at (n, ε, d): its value at two explicit points,
    (m, δ) = (min{⌈√(h_ε(4n+1))⌉, ⌊d/2⌋}, 1) (the private optimum when the cap ⌊d/2⌋ does not bind) and
    (1, 1/√(n+1)) (the non-private one)."""
    from ..methods.hellinger_contraction import hellinger_factor_float

    n, d = float(values["n"]), int(values["d"])
    private = values.get("privacy", "local") == "local"
    eps = float(values.get("eps") or 0.0)
    cands = [(1.0, 1.0 / math.sqrt(n + 1.0))]
    if private:
        hf = hellinger_factor_float(min(eps, 700.0))
        m0 = math.ceil(math.sqrt(hf * (4 * n + 1))) if math.isfinite(hf) else 1
        cands.append((float(max(1, min(m0, d // 2))), 1.0))
    return max(_hb_pair_value(m, dl, n, eps, private) for m, dl in cands)


#: a sub-alphabet of k symbols gives at most c/k to every sub-family bound (c = 1 for Hellinger–Assouad and
#: the private Assouad bound, k = 2m; 1/8 for Dirichlet van Trees, since (kα-1)(kα-2)/(α-2) >= 8k(k-1); 1/π²
#: for the box-prior van Trees bound on 2q symbols): sub-alphabets are searched only while c/k can exceed
#: guaranteed_lower / CAP_MARGIN. The search range is [.., min{d, k*}], k* = the size where k = CAP_MARGIN·c/V(k)
#: (V(k) = guaranteed_lower at d = k, non-decreasing in k): a range that never shrinks when d grows and stops
#: depending on d beyond k*, where every bound it leaves out is below the reported lower bound.
CAP_MARGIN = 2.0


@lru_cache(maxsize=4096)
def _cap_crossing(n: float, eps: float, private: bool, c: float) -> float:
    """k* = the least integer k >= 2 with k >= CAP_MARGIN · c / V(k) (bisection: k - CAP_MARGIN c/V(k) increases)."""
    def over(k):
        v = guaranteed_lower({"n": n, "eps": eps, "d": k, "privacy": "local" if private else "none"})
        return v > 0 and k >= CAP_MARGIN * c / v

    lo, hi = 2, 2
    while not over(hi):
        if hi > 1e15:
            return math.inf
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if over(mid) else (mid, hi)
    return float(hi)


def sub_alphabet_cap(values: dict, c: float) -> float:
    """The largest sub-alphabet size searched: min{d, k*} (see :data:`CAP_MARGIN`)."""
    private = values.get("privacy", "local") == "local"
    eps = float(values.get("eps") or 0.0) if private else 0.0
    return min(float(values["d"]), _cap_crossing(float(values["n"]), eps, private, float(c)))


def _hb_family(loss: str):
    """The pair family p(2j-1) = (1+δv_j)/(2m), p(2j) = (1-δv_j)/(2m), j <= m <= ⌊d/2⌋, other symbols 0."""
    from ..core.bounds import HypercubeFamily

    dl = DELTA_HB
    m = M_HB if loss == "l2sq" else D_HALF
    common = (
        "p_v(2j-1) = (1+δv_j)/(2m), p_v(2j) = (1-δv_j)/(2m) for j <= m <= ⌊d/2⌋, other symbols 0 (a family for every "
        "d >= 2m). A flip of v_j swaps the masses (1±δ)/(2m): TV = δ/m, H² = (1 - √(1-δ²))/m. With u_j = p̂_{2j-1} - "
        "p̂_{2j} and μ_j = δv_j/m: ")
    if loss == "l2sq":
        free = (FreeParameter(dl, lambda v: DELTA_GAP_LOW, lambda v: 1.0, doc="probability gap δ"),
                FreeParameter(m, lambda v: 1, lambda v: max(1, math.floor(sub_alphabet_cap(v, 1.0) / 2)),
                              integer=True, doc="active pairs m"))
        deriv = common + "‖p̂-p‖² >= Σ_j (u_j - μ_j)²/2 ((x-y)² <= 2x² + 2y²): weight 1/2, amplitude δ/m, so M >= (δ²/(2m))(1-h)^{2n}."
    else:
        free = (FreeParameter(dl, lambda v: DELTA_GAP_LOW, lambda v: 1.0, doc="probability gap δ"),)
        deriv = (common + "‖p̂-p‖₁ >= Σ_j |u_j - μ_j|: weight 1, amplitude δ/m, so M >= δ B/(1 + √(1-B)). h decreases "
                 "in m, so m = ⌊d/2⌋ is best.")
    return HypercubeFamily(
        "hellinger-assouad", "Hellinger–Bhattacharyya Assouad, pair family on 2m symbols", n_coords=m,
        amplitude=dl / m, weight=sp.Rational(1, 2) if loss == "l2sq" else sp.Integer(1), tv_flip=dl / m,
        h2_flip=dl ** 2 / (1 + sp.sqrt(1 - dl ** 2)) / m, loss=loss,
        source="Assouad (1983), Yu (1997); Duchi, Jordan & Wainwright (2013/2018) contraction, sharpened; "
               "docs/methods/hellinger-assouad.md, docs/problems/multinomial.md (derived)",
        derivation=deriv, free=free, extra={"instance": "hellinger-assouad"})


def _hb_bounds(loss: str, private: bool) -> list[Bound]:
    from ..methods import method_bounds

    return method_bounds(_hb_family(loss), "local" if private else "none")


@lru_cache(maxsize=None)
def _bounds(loss: str, private: bool) -> tuple:
    return tuple(_upper_bounds(loss, private) + _lower_bounds(loss, private) + _hb_bounds(loss, private))


def _eff(private: bool):
    return S.n * S.Min(S.eps ** 2, sp.exp(S.eps), S.d) if private else S.n * S.d


def _rate(values: dict, private: bool) -> list:
    l2 = S.Min(1, S.d / _eff(private))
    if values["loss"] == "l2sq":
        if private:
            # the middle regime d ≳ sqrt(nε²): 1/sqrt(n min{ε², e^ε}) (Duchi, Jordan & Wainwright 2013; the
            # sub-alphabet van Trees and the projected subset-selection bounds attain it up to log d), never
            # below the non-private 1/n
            middle = S.Max(1 / S.n, 1 / sp.sqrt(S.n * S.Min(S.eps ** 2, sp.exp(S.eps))))
            return [("ℓ2² rate min{1, 1/sqrt(n min{ε², e^ε}), d/(n min{ε², e^ε, d})}", S.Min(l2, middle))]
        return [("ℓ2² rate 1/n", l2)]
    return [("ℓ1 rate" if private else "ℓ1 rate sqrt(d/n)", S.Min(1, sp.sqrt(S.d * l2)))]


# ------------------------------------------------------------------------------ simulation

DEFAULT_NS = (100, 316, 1000, 3162, 10000)


def _prepare(values, reps, notes):
    if int(values["d"]) > 200:
        raise InputError("d", "must be <= 200 for the simulation check (per-user simulation)", int(values["d"]))
    return reps


def check_instances(t):
    """The mechanism behind the best certified bound on the uniform, a skewed and a point-mass distribution (the
    vertex e_1 of the simplex: where the uniform estimator has its largest risk, the no-data risk)."""
    values, n, reps, rng, up = t.values, t.n, t.reps, t.rng, t.upper
    d, eps, loss = int(values["d"]), float(values["eps"]), values["loss"]
    uniform = np.full(d, 1.0 / d)
    corner = np.zeros(d)
    corner[0] = 0.7
    corner[1:] = 0.3 / (d - 1)
    vertex = np.zeros(d)
    vertex[0] = 1.0
    mech, free = up.name, up.free_parameters
    # the runnable mechanism of the reported upper bound (the object bc.mechanism(...) returns): one implementation
    runner = mechanism_local(values={**values, "n": int(n)}, upper=up)
    for name, theta in (("uniform", uniform), ("skewed", corner), ("vertex", vertex)):
        est = runner.simulate(theta, n, rng, reps)
        if runner.no_data:  # θ̂ = the uniform distribution, uses no data: its risk is exact (a CI of float rounding only)
            diff = est[0] - theta
            m = float(diff @ diff) if loss == "l2sq" else float(np.sum(np.abs(diff)))
            yield name, (m, m * (1 - 1e-9), m * (1 + 1e-9)), f"θ = {name} (exact risk)", m
            continue
        diff = est - theta
        err = np.sum(diff ** 2, axis=1) if loss == "l2sq" else np.sum(np.abs(diff), axis=1)
        pred = None
        if loss == "l2sq" and mech in DM.MECHANISMS:
            sv = int(free.get("s_sub", 1))
            pred = float(DM.risk_constant(mech, n, eps, d, sv)) - float(theta @ theta) / n
        yield name, err, f"θ = {name}", pred


def mechanism_local(values: dict, upper, bound=None):
    """The runnable randomizer of a reported upper bound (:mod:`boundcalc.mechanisms.local_runnable`;
    docs/methods/local-randomizers.md)."""
    from ..mechanisms.local_runnable import multinomial_mechanism

    return multinomial_mechanism(values, upper, bound)


CHECK = CheckSpec(check_instances, DEFAULT_NS, prepare=_prepare)


# ------------------------------------------------------------------------------ registration

@register_problem_class
class Multinomial(Problem):
    """Discrete distribution estimation, non-private and under ε-LDP."""

    name = "multinomial"
    aliases = ("discrete",)
    privacies = ("local", "none")
    title = "discrete distribution estimation"
    examples = {"local": {"n": 1000, "d": 5, "loss": "l1", "eps": 2.0},
                "none": {"n": 300, "d": 5, "loss": "l2sq"}}
    params = PARAMS
    titles = {"local": "discrete distribution on d symbols under ε-LDP, loss ||θ̂-θ||₂² or ||θ̂-θ||₁",
              "none": "discrete distribution on d symbols, loss ||θ̂-θ||₂² or ||θ̂-θ||₁"}
    sources = {"local": SOURCE, "none": "textbook"}
    checks = {"local": CHECK}
    notes = {"local": (
        "Valid for all ε (not only ε <= 1): the van Trees bound uses sinh²(ε/2), which is exponential in ε.",
        "ℓ1 loss: the certified lower bound is the best of the Assouad-type bounds and the Ziv–Zakai bound "
        "(docs/methods/ziv-zakai.md); van Trees applies to ℓ2² only.")}

    def rate_local(self, values):
        return _rate(values, True)

    def mechanism_local(self, values, upper, bound):
        return mechanism_local(values, upper, bound)

    def rate_none(self, values):
        return _rate(values, False)

    def bounds_local(self, values):
        return list(_bounds(values["loss"], True))

    def bounds_none(self, values):
        return list(_bounds(values["loss"], False))

    def derived(self, values):
        d = np.asarray(values["d"], float)
        out = np.floor(d / 2)
        return {"m_pairs": out if out.ndim else float(out)}

    def lower_rate_local(self, values):
        if values["loss"] == "l2sq":
            return None
        # certified ℓ1 lower bound rate (Assouad): min{1, d/sqrt(n min{ε², e^ε, d})} up to constants
        return S.Min(1, S.d / sp.sqrt(_eff(True)))
