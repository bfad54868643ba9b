"""Efficient private point estimation in a regular one-parameter model (Smith; docs/methods/subsample-and-aggregate.md).

A. Smith, *Efficient, Differentially Private Point Estimators* (arXiv 0809.4794).

Family: a built-in model ``p_θ`` of :mod:`boundcalc.core.models` (``--model``), θ in the interval
Θ = [a, b] of diameter Λ (``--lam``; the model fixes where Θ sits), Fisher information I(θ) derived
by sympy from the log-density. Loss (θ̂ - θ)².

**Which risk.** Smith's result is pointwise (for every θ, the MSE is (1 + o(1))/(n I(θ))), and no
estimator has a pointwise *lower* bound (the constant estimator θ̂ ≡ θ has zero error at θ). So the
certified bounds here are for the **local minimax risk**

    R_h(θ) = inf_θ̂ sup_{θ' ∈ N} E_θ'(θ̂ - θ')²,   N = [θ - h, θ + h] ∩ Θ = [θ_lo, θ_hi],

with the radius ``--radius h`` (default ``auto``: h = 10/√(n I(θ)), the local-asymptotic scale, so
the van Trees bound is within π²/100 ≈ 10% of 1/(nI)). Lower and upper bound the same quantity.
The exact *pointwise* MSE of Smith's estimator at θ (what the simulation measures, and what
efficiency is computed from) is reported too, as an upper bound marked ``certified: false``
because it is not a bound on R_h: it is exact for the estimator, at the point θ only.

Upper bounds (mechanism :mod:`boundcalc.mechanisms.subsample_aggregate`, free integer parameter
``blocks`` = k, chosen by the solver):

* ``smith-laplace`` (pure; approx since ε-DP implies (ε,δ)-DP): certified
  ``sup_{θ'∈N} MSE(θ') <= (mean_j B_j)² + mean_j V*_j / k + 2Λ²/(kε)²`` with V*(t) = max_{θ'∈N} V(θ', t)
  (V(θ,t) the exact block variance) and B*(t) = max(A(θ_lo, t), C(θ_hi, t)) (A = E(a-Y)_+,
  C = E(Y-b)_+, exact tail excesses), also capped by the algebraic bound V*/(4 m), m the distance
  from N to the ends of Θ. Derivation: see the mechanism's docstring (steps 1-4) plus monotonicity:
  every block estimate is stochastically increasing in θ (binomial/Poisson counts, (t-1)λ/G with
  G ~ Gamma(t,1), N(θ,σ²/t), vχ²_t/t), so A(θ') is non-increasing and C(θ') non-decreasing in θ'.
* ``smith-gauss`` (approx): the same with Gaussian noise of the exact analytic calibration
  σ = (Λ/k) σ_aG(ε, δ) (Balle & Wang 2018); noise term Λ² σ_aG² / k².
* ``smith-exact-*``: the exact pointwise MSE at θ (``(mean β_j)² + Σ Var Z_j/k² + noise``, all exact
  closed forms); certified: false (pointwise, see above).

Lower bounds (certified, for R_h):

* ``van-trees``: on the sub-interval [c - w, c + w] ⊂ N (c the centre of N, free w) with the prior
  cos²(π(θ-c)/(2w))/w (J = π²/w²): ``R_h >= 1/(n max_{[c±w]} I + π²/w²)``; the max of I over an
  interval is at an end point because I is convex for every built-in model (tested).
* ``two-point-dp`` (pure, approx): θ_1,2 = c ∓ Δ/2 in N. Any two laws with TV(P_1,P_2) <= τ are
  mixtures (1-τ)R + τ S_v, so the uniformity-of-mass coupling of docs/methods/uniformity-of-mass.md with N = 2 applies
  with p = τ: ``R_h >= (Δ/2)² (1 - t_M - δ S_ε(M)) / (1 + e^{Mε})``, t_M = P(Bin(n, τ) > M).
  τ = min{1, sqrt(min(KL(P_1‖P_2), KL(P_2‖P_1))/2)} (Pinsker; KL derived by sympy from the model).
  Free: Δ, M.

* ``threshold-bayes`` (pure): uniform prior on [c - w, c + w] ⊂ N, the layer-cake threshold decomposition and
  the coupled DP test bound with TV(P_a, P_b) <= K|b - a| (K = sup half mean absolute score, per model:
  :func:`tv_slope_bound`); see docs/methods/threshold-bayes.md.

* ``van-trees-chord``: the cos² prior anywhere in N (free position) and ∫ I dμ bounded by chords of the
  convex I (see :func:`_van_trees_chord`).

More upper bounds: ``clip-stat-laplace`` (pure, approx; the average of a clipped statistic + Laplace,
inverted through its mean: :mod:`boundcalc.mechanisms.clipped_statistic`, docs/methods/clipped-statistic.md),
``local-clip-laplace`` (the block estimates clipped to N ± 4 block s.d. instead of Θ: N is
public in the local minimax problem) and ``constant-neighbourhood`` (θ̂ ≡ midpoint of N, the trivial risk).

Non-private benchmark (``--privacy none``): the clipped full-sample unbiased MLE, whose MSE is at
most V(θ', n) (clipping to Θ ∋ θ' is a contraction), and the same van Trees lower bound; the
Cramér–Rao value 1/(n I(θ)) is the efficient benchmark.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..core.bounds import Bound, CheckSpec, Condition, FreeParameter, Problem, register_problem_class
from ..core.errors import InputError
from ..mechanisms import clipped_statistic as cstat
from ..mechanisms import subsample_aggregate as sa
from ..mechanisms.subsample_aggregate import theta_space
from ..methods import threshold_bayes, uniformity
from ..core.models import ALIASES, MODELS, get_point_model
from ..core.params import AutoFloat, N, ParamSpec

SOURCE = "Smith (2008), Efficient, Differentially Private Point Estimators, arXiv 0809.4794"

# ---------------------------------------------------------------------- parameters
MODEL = ParamSpec("model", "choice", "exponential",
                  "one-parameter model: " + ", ".join(MODELS) + " (aliases " + ", ".join(ALIASES) + ")",
                  choices=tuple(MODELS) + tuple(ALIASES), structural=True)
THETA = AutoFloat("theta", "float", "auto", "true parameter θ (auto: the model's default)",
                  low=-1e12, high=1e12)
LAM = AutoFloat("lam", "float", "auto",
                "diameter Λ of the parameter space Θ (auto: the model's default; Θ = [low, low+Λ], "
                "or centred at 0 for normal-mean)", low=0, low_open=True, high=1e12)
SIGMA = ParamSpec("sigma", "float", 1.0, "known standard deviation σ (normal-mean only)", low=0,
                  low_open=True, high=1e12, used_with=("model", ("normal-mean",)))
MU0 = ParamSpec("mu0", "float", 0.0, "known mean μ0 (normal-var only)", low=-1e12, high=1e12,
                used_with=("model", ("normal-var",)))
RADIUS = AutoFloat("radius", "float", "auto",
                   "radius h of the neighbourhood N = [θ-h, θ+h] ∩ Θ of the local minimax risk "
                   "(auto: 10/sqrt(n I(θ)))", low=0, low_open=True, high=1e12)
PARAMS = (N, MODEL, THETA, LAM, SIGMA, MU0, RADIUS)

# ---------------------------------------------------------------------- symbols
TH = sp.Symbol("theta", real=True)
A_ = sp.Symbol("a", real=True)
B_ = sp.Symbol("b", real=True)
LAMBDA = sp.Symbol("Lambda", positive=True)
LO = sp.Symbol("theta_lo", real=True)
HI = sp.Symbol("theta_hi", real=True)
CEN = sp.Symbol("theta_c", real=True)
SIG = sp.Symbol("sigma", positive=True)
MU0S = sp.Symbol("mu0", real=True)
BLOCKS = sp.Symbol("blocks", positive=True, integer=True)
W = sp.Symbol("w", positive=True)
DELTA_SEP = sp.Symbol("Delta", positive=True)


def _model_subs(m):
    sub = {m.theta: TH}
    for s, _ in m.extra:
        sub[s] = {"sigma": SIG, "mu0": MU0S}[str(s)]
    return sub


def fisher_expr(model_name: str) -> sp.Expr:
    """I(θ) in the problem's symbols (from the sympy derivation in :mod:`boundcalc.core.models`)."""
    m = get_point_model(model_name)
    return m.fisher_information().subs(_model_subs(m))


@S.cached_expression
def kl_expr(model_name: str, t1, t2) -> sp.Expr:
    """KL(P_t1 ‖ P_t2) in the problem's symbols."""
    m = get_point_model(model_name)
    kl, th1 = m.kl_divergence()
    sub = _model_subs(m)
    sub.pop(m.theta)
    return kl.subs(sub).subs({m.theta: t1, th1: t2}, simultaneous=True)


#: the local-clip upper bound clips block estimates to N widened by this many block standard deviations
Z_CLIP = 4

#: below this relative separation Δ/scale the two-point bound uses the Taylor bound on the KL divergence
KL_TAYLOR_SWITCH = 1e-3


@S.cached_expression
def kl_taylor_bound(model_name: str, t1, t2) -> sp.Expr:
    """A cancellation-free upper bound on KL(P_t1 ‖ P_t2) (sympy).

    With g(s) = ∂²_s KL(P_t1 ‖ P_s): KL(t1‖t1) = 0 and ∂_s KL(t1‖s) = 0 at s = t1, so Taylor's theorem with
    integral remainder gives KL(t1‖t2) = ∫_{t1}^{t2} (t2 - s) g(s) ds <= (t2 - t1)²/2 · max_{[t1,t2]} g.
    For every built-in model g is quasi-convex on the natural space (bernoulli t1/s² + (1-t1)/(1-s)² is
    convex; poisson t1/s², exponential 1/s² decrease; normal-mean 1/σ² is constant; normal-var
    t1/s³ - 1/(2s²) decreases then increases), so the max is at an end point (tested). Evaluated in float64
    it has no cancellation, unlike the exact expression (a difference of O(1) logarithms equal to O(Δ²)).
    """
    sdum = sp.Dummy("s", positive=True)
    g = S.simplify(S.diff(kl_expr(model_name, t1, sdum), sdum, 2))
    return (t2 - t1) ** 2 / 2 * S.Max(g.subs(sdum, t1), g.subs(sdum, t2))


@S.cached_expression
def stable_kl_expr(model_name: str, t1, t2) -> sp.Expr:
    """KL(P_t1 ‖ P_t2) for the two-point bound, certified in floating point: the exact expression when the
    separation is not tiny compared with the distance of the points to the ends of the natural space, else
    :func:`kl_taylor_bound` (an upper bound, within a factor 1 + O(KL_TAYLOR_SWITCH) of the exact value).

    At n >= 1e17 the solver's separation is ~1e-8 θ and the exact expression evaluated to 0 by cancellation,
    so τ = 0 and the two-point lower bound exceeded the certified upper bound.
    """
    m = get_point_model(model_name)
    lo, hi = m.natural_space
    ends = [e for e in (lo, hi) if math.isfinite(float(e))]
    if not ends:  # normal-mean: the Taylor bound Δ²/(2σ²) is exact
        return kl_taylor_bound(model_name, t1, t2)
    mid = (t1 + t2) / 2
    scale = S.Min(*[sp.Abs(mid - e) for e in ends])
    return sp.Piecewise((kl_taylor_bound(model_name, t1, t2), sp.Abs(t2 - t1) < KL_TAYLOR_SWITCH * scale),
                        (kl_expr(model_name, t1, t2), True))


# ---------------------------------------------------------------------- model-dependent pieces
def variance_max_expr(model_name: str, t) -> sp.Expr:
    """max_{θ' ∈ [θ_lo, θ_hi]} V(θ', t): the exact block variance at its worst point of N.

    bernoulli θ(1-θ)/t: maximised at the point of N closest to 1/2; poisson λ/t, exponential λ²/(t-2),
    normal-var 2v²/t: increasing in θ' > 0, so at θ_hi; normal-mean σ²/t: constant.
    """
    name = get_point_model(model_name).name
    if name == "bernoulli":
        p = S.Min(S.Max(sp.Rational(1, 2), LO), HI)
        return p * (1 - p) / t
    if name == "poisson":
        return HI / t
    if name == "exponential":
        return HI ** 2 / (t - 2)
    if name == "normal-mean":
        return SIG ** 2 / t
    if name == "normal-var":
        return 2 * HI ** 2 / t
    raise KeyError(name)  # pragma: no cover


# ---------------------------------------------------------------------- bounds
def _t_and_r():
    """(t, r): the block size ⌊n/k⌋ and the remainder n mod k (r blocks have t + 1 records, k - r have t). The
    remainder is Mod(n, k), not n - k⌊n/k⌋: in float64 that difference cancels once n exceeds about 2⁵³ (at
    n = 1e18 its error is about 128 against a remainder below k), while fmod of two floats is exact."""
    t = sp.floor(S.n / BLOCKS)
    return t, sp.Mod(S.n, BLOCKS)


def _blocks_free():
    return FreeParameter(BLOCKS, lambda v: 1, lambda v: sa.k_range(v["model"], int(v["n"]))[1],
                         integer=True, log=True, doc="block count k of subsample-and-aggregate")


def noise_terms(privacy: str):
    """(name, title, noise variance as sympy, derivation) for each aggregation noise."""
    lap = ("laplace", "Laplace(Λ/(kε))", 2 * LAMBDA ** 2 / (BLOCKS * S.eps) ** 2,
           "Laplace scale Λ/(kε) on a sum of sensitivity Λ/k is ε-DP; variance 2Λ²/(kε)².")
    gau = ("gauss", "Gaussian, analytic calibration", LAMBDA ** 2 * S.GaussSigmaAnalytic(S.eps, S.delta) ** 2 / BLOCKS ** 2,
           "Gaussian noise σ = (Λ/k) σ_aG(ε,δ) (Balle & Wang 2018, Thm 8; sensitivity Λ/k) is (ε,δ)-DP.")
    if privacy == "pure":
        return [lap]
    if privacy == "approx":
        return [lap, gau]
    return []


ALPHA_CLIP = sp.Symbol("alpha_clip", real=True)
BETA_CLIP = sp.Symbol("beta_clip", positive=True)
#: the clipping interval l = c + αs, u = l + βs, in units of the statistic's standard deviation s at the centre of
#: N: l from 4s below its mean c to 3s above, width from 10⁻³s to 15s. Every interval gives a valid bound; clipping
#: further out only adds Laplace noise (sensitivity (u-l)/n) for a clipping bias already negligible
ALPHA_CLIP_LOW, ALPHA_CLIP_HIGH = -4.0, 3.0
BETA_CLIP_LOW, BETA_CLIP_HIGH = 1e-3, 15.0


#: derivation of the bound built by :func:`_clip_stat_bound` (its ``Bound.derivation``)
CLIP_STAT_DERIVATION = """
    Y = mean of ψ(X_i) = clip(T(X_i), l, u) plus Laplace((u-l)/(nε)) (ε-DP, sensitivity (u-l)/n);
    θ̂ = m^{-1}(Y) projected onto N, m(θ) = E_θ ψ. By the mean value theorem and the projection,
    |θ̂ - θ| <= |Y - m(θ)|/inf_N|m'|, so sup_N risk <= (sup_N Var ψ/n + 2(u-l)²/(nε)²)/inf_N|m'|²;
    inf_N |m'| is at an end point of N for every model (monotone or log-concave / unimodal slope), and
    sup_N Var ψ is bounded by its maximum over a grid plus a Lipschitz correction 3R²K h/2
    (boundcalc.mechanisms.clipped_statistic). Free: the interval l = c + αs, u = l + βs (c, s the mean and
    standard deviation of T at the centre of N).
    """.strip()


def _clip_stat_bound(model_name: str) -> Bound:
    """``clip-stat-laplace``: clipped sufficient statistic + Laplace + inversion (docs/methods/clipped-statistic.md).
    Derivation: :data:`CLIP_STAT_DERIVATION`."""
    fn = cstat.risk_function(model_name)
    expr = fn(S.n, S.eps, LO, HI, SIG, ALPHA_CLIP, BETA_CLIP)
    stat = {"exponential": "X", "poisson": "X", "normal-mean": "X", "normal-var": "(X-μ0)²"}[model_name]
    return Bound(
        side="upper", name="clip-stat-laplace",
        label=f"clipped statistic clip({stat}, l, u) averaged + Laplace, inverted through its mean (ours)",
        expr=expr, source="boundcalc (ours, derived); docs/methods/clipped-statistic.md",
        derivation=CLIP_STAT_DERIVATION,
        free=(FreeParameter(ALPHA_CLIP, lambda v: ALPHA_CLIP_LOW, lambda v: ALPHA_CLIP_HIGH, log=False,
                            doc="lower clipping end l = c + α s"),
              FreeParameter(BETA_CLIP, lambda v: BETA_CLIP_LOW, lambda v: BETA_CLIP_HIGH, doc="clipping width (u - l)/s")),
        conditions=(Condition("N has positive length",
                              lambda v: np.all(np.asarray(v["theta_hi"]) > np.asarray(v["theta_lo"]))),),
        extra={"model": model_name, "mechanism": "clip-stat-laplace"})


def _upper_bounds(model_name: str, privacy: str) -> list:
    m = get_point_model(model_name)
    bias_cls, exact_cls = sa.block_functions(m.name)
    t, r = _t_and_r()
    vbar = (r * variance_max_expr(m.name, t + 1) + (BLOCKS - r) * variance_max_expr(m.name, t)) / BLOCKS
    bbar = bias_cls(S.n, BLOCKS, LO, HI, A_, B_, SIG)
    exact_data = exact_cls(S.n, BLOCKS, TH, A_, B_, SIG)
    est = sa.get_block_estimator(m.name)
    out = []
    for nname, ntitle, noise, why in noise_terms(privacy):
        out.append(Bound(
            side="upper", name=f"smith-{nname}",
            label=f"subsample-and-aggregate, {est.formula}, clipped to Θ, + {ntitle} (local worst case)",
            expr=bbar ** 2 + vbar / BLOCKS + noise, source=SOURCE + "; docs/methods/subsample-and-aggregate.md (derived)",
            derivation="Blocks: r = n - k⌊n/k⌋ of ⌊n/k⌋+1 points, the rest of ⌊n/k⌋. MSE = (mean β_j)² + Σ Var Z_j/k² "
            "+ noise (exact, independent blocks). |β_j| <= B_j = max(A_j, C_j) (A = E(a-Y)_+, C = E(Y-b)_+ "
            "have opposite signs in β = A - C), B_j <= V_j/(4m) by (u-c)_+ <= u²/(4c), and "
            "Var Z_j <= E(Z_j-θ)² <= V_j (clipping onto Θ ∋ θ contracts). Over θ' in N = [θ_lo, θ_hi]: "
            "Y is stochastically increasing in θ', so A <= A(θ_lo), C <= C(θ_hi); V_j at its maximum "
            "over N (exact finite-t variance of the unbiased block estimator). " + why,
            free=(_blocks_free(),), extra={"model": m.name, "noise": nname}))
        out.append(Bound(
            side="upper", name=f"smith-exact-{nname}",
            label=f"exact pointwise MSE at θ of the same estimator ({ntitle}); not a bound on the local risk",
            expr=exact_data + noise, source=SOURCE + "; docs/methods/subsample-and-aggregate.md (derived)",
            derivation="Exact identity MSE(θ) = (mean β_j)² + Σ Var Z_j/k² + noise with the clipped block moments in "
            "closed form (regularised incomplete beta/gamma, normal cdf; see "
            "boundcalc.mechanisms.subsample_aggregate). Pointwise at θ only, so certified: false as a bound "
            "on the local minimax risk; checked against simulation.",
            certified=False, free=(_blocks_free(),), extra={"model": m.name, "noise": nname}))
    if privacy in ("pure", "approx") and m.name in cstat.MODELS and m.name != "bernoulli":
        out.append(_clip_stat_bound(m.name))
    if privacy in ("pure", "approx"):
        # the same estimator clipped to N widened by Z_CLIP block standard deviations (N is public)
        sd = sp.sqrt(variance_max_expr(m.name, t))
        a2, b2 = S.Max(A_, LO - Z_CLIP * sd), S.Min(B_, HI + Z_CLIP * sd)
        bbar2 = bias_cls(S.n, BLOCKS, LO, HI, a2, b2, SIG)
        out.append(Bound(
            side="upper", name="local-clip-laplace",
            label=f"subsample-and-aggregate, {est.formula}, clipped to N ± {Z_CLIP} block s.d., + Laplace",
            expr=bbar2 ** 2 + vbar / BLOCKS + 2 * (b2 - a2) ** 2 / (BLOCKS * S.eps) ** 2,
            source=SOURCE + "; clipping interval narrowed (ours, derived)",
            derivation="As smith-laplace, with the clipping interval [a', b'] = [max(a, θ_lo - zσ_t), min(b, θ_hi + zσ_t)], "
            f"z = {Z_CLIP}, σ_t² = max_N V(θ', t) at the smaller block size t = ⌊n/k⌋: it depends only on public "
            "quantities (N, n, k, the model), so averaging the k clipped block estimates has sensitivity "
            "(b' - a')/k and Laplace((b'-a')/(kε)) is ε-DP (hence (ε,δ)-DP), noise variance 2(b'-a')²/(kε)². "
            "The bias and variance bounds of smith-laplace hold for any clipping interval containing N "
            "(clipping onto [a', b'] ∋ θ' contracts; the tail excesses A, C are computed at a', b').",
            free=(_blocks_free(),), extra={"model": m.name, "noise": "laplace-local-clip"}))
    mid = (A_ + B_) / 2
    out.append(Bound(
        side="upper", name="constant", label="constant estimator: the midpoint of Θ (ignores the data; ε-DP for every ε)",
        expr=S.Max((LO - mid) ** 2, (HI - mid) ** 2), source=SOURCE + " (trivial bound)",
        derivation="θ̂ ≡ (a+b)/2 does not look at the data, so it satisfies every privacy definition; its squared "
        "error at θ' is (θ' - (a+b)/2)², a convex function of θ', maximised over N at an end point. "
        "It caps the other bounds when ε is tiny.", extra={"no_data": True}))
    out.append(Bound(
        side="upper", name="constant-neighbourhood", label="constant estimator: the midpoint of N (ignores the data)",
        expr=((HI - LO) / 2) ** 2, source="trivial bound for the local minimax risk over N",
        derivation="N = [θ_lo, θ_hi] is part of the question (public), so θ̂ ≡ (θ_lo + θ_hi)/2 is an estimator that "
        "satisfies every privacy definition; its squared error at θ' ∈ N is at most ((θ_hi - θ_lo)/2)². "
        "It caps every other upper bound (the trivial estimator's risk).", extra={"no_data": True}))
    if privacy == "none":
        out.append(Bound(
            side="upper", name="mle", label=f"full-sample unbiased MLE ({est.formula} with t = n), clipped to Θ",
            expr=variance_max_expr(m.name, S.n), source=SOURCE + " (non-private benchmark)",
            derivation="The full-sample estimator is unbiased with exact variance V(θ', n); clipping onto Θ ∋ θ' "
            "contracts the error, so sup_{θ'∈N} MSE <= max_{θ'∈N} V(θ', n).",
            conditions=(Condition(f"n >= {est.min_block}", lambda v: np.all(np.asarray(v["n"]) >= est.min_block)),)))
    return out


def tv_slope_bound(model_name: str, low) -> sp.Expr:
    """K(low) >= sup_{θ >= low} (1/2) E_θ|∂_θ log p_θ(X)|, so TV(P_a, P_b) <= K(low)|b - a| for a, b >= low.

    TV(P_a, P_b) = (1/2)∫|∫_a^b ∂_ξ p_ξ dξ| <= ∫_a^b (1/2) E_ξ|S_ξ| dξ. Half the mean absolute score:
    bernoulli (1/2)E|X-p|/(p(1-p)) = 1 (TV = |p - q| exactly); poisson (1/2)E|X-λ|/λ = e^{-λ}λ^{⌊λ⌋}/⌊λ⌋!
    (the Poisson mean absolute deviation), continuous and decreasing in λ (on [k, k+1) its derivative is
    e^{-λ}λ^{k-1}(k-λ)/k! <= 0); exponential (rate λ) E|X - 1/λ|/2 = 1/(eλ); normal mean E|Z|/(2σ) =
    1/(σ√(2π)); normal variance v: E|Z² - 1|/(4v) = φ(1)/v (E|Z²-1| = 4φ(1)). The last three decrease in
    θ, so the supremum over [low, ∞) is the value at low. Checked against numerical expectations and exact
    TVs in tests/test_point_threshold.py.
    """
    name = get_point_model(model_name).name
    if name == "bernoulli":
        return sp.Integer(1)
    if name == "poisson":
        k = sp.floor(low)
        return sp.exp(-low + k * sp.log(low) - sp.loggamma(k + 1))
    if name == "exponential":
        return 1 / (sp.E * low)
    if name == "normal-mean":
        return 1 / (SIG * sp.sqrt(2 * sp.pi))
    if name == "normal-var":
        return sp.exp(-sp.Rational(1, 2)) / (sp.sqrt(2 * sp.pi) * low)
    raise KeyError(name)  # pragma: no cover


#: derivation of the bound built by :func:`_threshold_lower` (its ``Bound.derivation``)
THRESHOLD_LOWER_DERIVATION = """
    TV(P_{s-u}, P_{s+u}) <= 2u K(c - w) (:func:`tv_slope_bound`), so κ = 2εnK and, for every pure ε-DP
    estimator, sup_{θ'∈N} E(θ̂-θ')² >= (8/(Wκ³)) J₁(κW/2) with W = 2w. The pairwise step is the coupled
    DP test bound type I + II >= 2/(1+e^{εnt}) with the maximal coupling of the two model points (exact TV
    replaced by its upper bound 2uK, which only lowers the bound).
    """.strip()


#: half-width w of a prior's support [c - w, c + w] ⊂ N, as fractions of N's length: from 10⁻⁹ of it (searched on
#: a log grid; the threshold bound's best w shrinks like 1/(nε)) to just below half of it (the support must fit
#: in N); every w in between gives a valid bound. WIDTH_FLOOR keeps the lower end positive when N is a single
#: point (the bounds' condition then refuses the instance)
W_LOW_FRACTION, W_HIGH_FRACTION = 1e-9, 1 - 1e-12
WIDTH_FLOOR = 1e-300
#: separation Δ of the two points c ∓ Δ/2 ∈ N, as fractions of N's length: from 10⁻¹² of it (plus WIDTH_FLOOR,
#: positive) to just below all of it (both points stay in N)
SEP_LOW_FRACTION, SEP_HIGH_FRACTION = 1e-12, 1 - 1e-9


def _threshold_lower(model_name: str) -> Bound:
    """Threshold Bayes bound (docs/methods/threshold-bayes.md) on the sub-interval [c - w, c + w] ⊂ N.
    Derivation: :data:`THRESHOLD_LOWER_DERIVATION`."""
    width = 2 * W
    kappa = 2 * S.eps * S.n * tv_slope_bound(model_name, CEN - W)
    return Bound(
        side="lower", name="threshold-bayes", label="threshold Bayes bound (uniform prior on a sub-interval, coupled DP tests)",
        expr=threshold_bayes.bayes_sq(width, kappa),
        source="Barber & Duchi (2014) Prop 1 (DP testing) with group privacy and the maximal coupling; layer-cake "
        "threshold decomposition (docs/methods/threshold-bayes.md)",
        derivation=THRESHOLD_LOWER_DERIVATION,
        free=(FreeParameter(W, lambda v: W_LOW_FRACTION * max(float(np.max(v["theta_hi"] - v["theta_lo"])), WIDTH_FLOOR),
                            lambda v: 0.5 * float(np.min(v["theta_hi"] - v["theta_lo"])) * W_HIGH_FRACTION,
                            doc="half-width of the prior's support"),),
        conditions=(Condition("N has positive length",
                              lambda v: np.all(np.asarray(v["theta_hi"]) > np.asarray(v["theta_lo"]))),))


POS = sp.Symbol("f_pos", nonnegative=True)
#: E|θ - c|/w under the cos² prior on [c - w, c + w]
KAPPA_COS2 = sp.Rational(1, 2) - 2 / sp.pi ** 2


#: derivation of the bound built by :func:`_van_trees_chord` (its ``Bound.derivation``)
VAN_TREES_CHORD_DERIVATION = """
    Prior μ = cos²(π(θ'-c)/(2w))/w on [c - w, c + w] ⊂ N, c = θ_lo + w + f(θ_hi - θ_lo - 2w), f ∈ [0, 1]
    (J = π²/w²). I is convex for every built-in model, so on each half I(c ± x) <= I(c) + (x/w)(I(c ± w) - I(c))
    (chord), and with E_μ|θ' - c| = w(1/2 - 2/π²) =: κ w (∫_0^w x cos²(πx/(2w)) dx = w²/4 - w²/π²) and the
    symmetry of μ: ∫ I dμ <= I(c) + κ((I(c - w) + I(c + w))/2 - I(c)). Van Trees (Gill & Levit 1995):
    sup_{θ'∈N} E(θ̂ - θ')² >= 1/(n ∫ I dμ + J). Never below ``van-trees`` at f = 1/2 (the chord value
    is at most the larger end value).
    """.strip()


def _van_trees_chord(model_name: str) -> Bound:
    """``van-trees-chord``: van Trees with the cos² prior placed anywhere in N and ∫ I dμ bounded by chords.
    Derivation: :data:`VAN_TREES_CHORD_DERIVATION`."""
    def chord_expr():
        info = fisher_expr(get_point_model(model_name).name)
        cen = LO + W + POS * (HI - LO - 2 * W)
        i_c, i_m, i_p = info.subs(TH, cen), info.subs(TH, cen - W), info.subs(TH, cen + W)
        avg = i_c + KAPPA_COS2 * ((i_m + i_p) / 2 - i_c)
        return 1 / (S.n * avg + sp.pi ** 2 / W ** 2)

    return Bound(
        side="lower", name="van-trees-chord", label="van Trees, cos² prior anywhere in N, chord bound on the mean information",
        expr=chord_expr, source="Gill & Levit (1995) van Trees inequality; docs/methods/van-trees.md",
        derivation=VAN_TREES_CHORD_DERIVATION,
        free=(FreeParameter(W, lambda v: W_LOW_FRACTION * max(float(np.max(v["theta_hi"] - v["theta_lo"])), WIDTH_FLOOR),
                            lambda v: 0.5 * float(np.min(v["theta_hi"] - v["theta_lo"])) * W_HIGH_FRACTION,
                            doc="half-width of the prior's support"),
              FreeParameter(POS, lambda v: 0.0, lambda v: 1.0, log=False,
                            doc="position of the prior in N (0: at θ_lo, 1: at θ_hi)")),
        conditions=(Condition("N has positive length",
                              lambda v: np.all(np.asarray(v["theta_hi"]) > np.asarray(v["theta_lo"]))),))


def _lower_bounds(model_name: str, privacy: str) -> list:
    m = get_point_model(model_name)
    name = m.name  # the thunks below close over the name (a model object is not part of a cache key)

    def van_trees_expr():
        info = fisher_expr(name)
        imax = S.Max(info.subs(TH, CEN - W), info.subs(TH, CEN + W))
        return 1 / (S.n * imax + sp.pi ** 2 / W ** 2)

    vt = Bound(
        side="lower", name="van-trees", label="van Trees, cos² prior on a sub-interval of N",
        expr=van_trees_expr, source="Gill & Levit (1995) van Trees inequality; docs/methods/van-trees.md",
        derivation="For the prior cos²(π(θ'-c)/(2w))/w on [c-w, c+w] ⊂ N (J = π²/w²): sup_{θ'} E(θ̂-θ')² >= "
        "1/(n ∫ I dμ + J) >= 1/(n max_{[c±w]} I + π²/w²); I is convex, so its max is at an end point. "
        "I(θ) derived by sympy from the log-density.",
        free=(FreeParameter(W, lambda v: W_LOW_FRACTION * max(float(np.max(v["theta_hi"] - v["theta_lo"])), WIDTH_FLOOR),
                            lambda v: 0.5 * float(np.min(v["theta_hi"] - v["theta_lo"])) * W_HIGH_FRACTION,
                            doc="half-width of the prior's support"),),
        conditions=(Condition("N has positive length", lambda v: np.all(np.asarray(v["theta_hi"]) > np.asarray(v["theta_lo"]))),))
    out = [vt, _van_trees_chord(m.name)]
    if privacy == "pure":
        out.append(_threshold_lower(m.name))
    if privacy in ("pure", "approx"):
        def expr():
            t1, t2 = CEN - DELTA_SEP / 2, CEN + DELTA_SEP / 2
            kl = S.Min(stable_kl_expr(name, t1, t2), stable_kl_expr(name, t2, t1))
            tau = S.Min(1, sp.sqrt(kl / 2))
            delta = S.delta if privacy == "approx" else None
            return (DELTA_SEP / 2) ** 2 * uniformity.failure_probability(S.n, tau, S.M, S.eps, 0, delta)

        out.append(Bound(
            side="lower", name="two-point-dp", label="two points + DP coupling (uniformity of mass, N = 2)", expr=expr,
            source="Barber & Duchi Lemma 2 / Thm 3 (docs/methods/uniformity-of-mass.md), applied to two members of the model",
            derivation="θ_1,2 = c ∓ Δ/2 ∈ N. With τ >= TV(P_1,P_2), P_v = (1-τ)R + τ S_v, so the coupled samples differ "
            "in Bin(n,τ) entries and Barber & Duchi Thm 3 with N = 2 gives average failure probability >= "
            "(1 - t_M - δ S_ε(M))/(1 + e^{Mε}); the loss is >= (Δ/2)² on failure. τ = min{1, sqrt(KL/2)} "
            "(Pinsker, KL derived by sympy).",
            free=(FreeParameter(DELTA_SEP, lambda v: SEP_LOW_FRACTION * float(np.max(v["theta_hi"] - v["theta_lo"])) + WIDTH_FLOOR,
                                lambda v: float(np.min(v["theta_hi"] - v["theta_lo"])) * SEP_HIGH_FRACTION,
                                doc="separation of the two points"),
                  FreeParameter(S.M, lambda v: 0, lambda v: float(np.max(v["n"])), integer=True,
                                doc="coupling group size")),
            conditions=(Condition("N has positive length", lambda v: np.all(np.asarray(v["theta_hi"]) > np.asarray(v["theta_lo"]))),)))
    return out


@lru_cache(maxsize=None)
def _bounds(model_name: str, privacy: str) -> tuple:
    return tuple(_upper_bounds(model_name, privacy) + _lower_bounds(model_name, privacy))


# ---------------------------------------------------------------------- values
# ---------------------------------------------------------------------- rate (order)
# ---------------------------------------------------------------------- simulation check
DEFAULT_NS = (1000, 2154, 4642, 10000, 21544, 46416)
RAW_BUDGET = 4e6  # n * reps raw draws at most per instance; beyond it the block sufficient statistics
Z_PREDICT = 4.0  # |empirical - exact| must be within this many standard errors


def _extra_for(values):
    m = get_point_model(values["model"])
    return {"sigma": float(values["sigma"])} if m.name == "normal-mean" else {}


def _point_extra(values) -> dict:
    m = get_point_model(values["model"])
    return {**m.extra_defaults, **({"sigma": float(values["sigma"])} if m.name == "normal-mean" else {}),
            **({"mu0": float(values["mu0"])} if m.name == "normal-var" else {})}


def _local_clip_interval(model_name: str, values, blocks: int) -> tuple:
    """[a', b'] = [max(a, θ_lo - zσ_t), min(b, θ_hi + zσ_t)] of ``local-clip-laplace`` at ``blocks`` (the bound's own
    expressions, evaluated)."""
    t, _ = _t_and_r()
    sd = sp.sqrt(variance_max_expr(model_name, t))
    ends = (S.Max(A_, LO - Z_CLIP * sd), S.Min(B_, HI + Z_CLIP * sd))
    return tuple(float(Bound(side="upper", name="x", label="", expr=e, source="", derivation="").evaluate(
        values, {"blocks": blocks})) for e in ends)


def point_mechanism(values, upper, bound):
    """The runnable mechanism of the upper bound ``bound`` (docs/methods/from-a-plan-to-data.md): Smith's
    subsample-and-aggregate (Θ or the narrowed local clipping interval), the clipped statistic, the constant
    estimators or the clipped full-sample estimator (privacy none); the same objects the check runs."""
    from ..mechanisms.runnable import CENTRAL_NEIGHBOURS, Guarantee, no_mechanism

    m = get_point_model(values["model"])
    priv, n = values["privacy"], int(values["n"])
    eps = float(values["eps"]) if priv != "none" else None
    delta = float(values["delta"]) if priv == "approx" else None
    g = Guarantee(priv, eps, delta, CENTRAL_NEIGHBOURS)
    a, b = float(values["a"]), float(values["b"])
    lo, hi = float(values["theta_lo"]), float(values["theta_hi"])
    kw = dict(problem="point", privacy=priv, label=bound.label, guarantee=g, certified_risk=upper.value, n=n,
              bound=bound.name, values=values)
    if not bound.certified:
        raise no_mechanism("point", priv, bound.label, "a pointwise risk, not a mechanism's bound")
    fp = dict(upper.free_parameters)
    ctx = dict(m=m, n=n, eps=eps, delta=delta, a=a, b=b, lo=lo, hi=hi, fp=fp, values=values, kw=kw)
    build = _POINT_BUILDERS.get(bound.name) or (_build_smith if bound.extra.get("noise") in _SMITH_NOISE else None)
    if build is not None:
        return build(bound, ctx)
    raise no_mechanism("point", priv, bound.label, "a pointwise risk, not a mechanism's bound")


def _build_smith(bound, c):
    from ..mechanisms.central import SubsampleAggregate

    k = int(c["fp"]["blocks"])
    noise, narrowed = _SMITH_NOISE[bound.extra["noise"]]
    clip = _local_clip_interval(c["m"].name, c["values"], k) if narrowed else (c["a"], c["b"])
    mech = SubsampleAggregate(model=c["m"].name, blocks=k, lo=clip[0], hi=clip[1], noise=noise, eps=c["eps"],
                              delta=c["delta"], extra=_point_extra(c["values"]),
                              parameters={"blocks": k, "clip_low": clip[0], "clip_high": clip[1]},
                              notes=("block estimates are clipped to [clip_low, clip_high]; records are used as given",
                                     f"blocks are taken in the order of the records ({c['m'].name} model)"),
                              **c["kw"])
    mech.parameters["noise_scale"] = mech.noise_scale()
    return mech


def _build_clip_stat(bound, c):
    from ..mechanisms.central import ClippedStatistic

    v, m, n, eps = c["values"], c["m"], c["n"], c["eps"]
    alpha, beta = float(c["fp"]["alpha_clip"]), float(c["fp"]["beta_clip"])
    l, u = (float(x) for x in cstat.interval(m.name, 0.5 * (c["lo"] + c["hi"]), alpha, beta, float(v["sigma"])))
    return ClippedStatistic(model=m.name, l=l, u=u, theta_lo=c["lo"], theta_hi=c["hi"], eps=eps,
                            sigma=float(v["sigma"]), mu0=float(v["mu0"]),
                            parameters={"l": l, "u": u, "laplace_scale": (u - l) / (n * eps)},
                            notes=("the statistic is clipped to [l, u]; the estimate is projected onto N",), **c["kw"])


def _build_mle(bound, c):
    from ..mechanisms.central import SubsampleAggregate

    return SubsampleAggregate(model=c["m"].name, blocks=1, lo=c["a"], hi=c["b"], noise=None, eps=None,
                              extra=_point_extra(c["values"]), parameters={"blocks": 1}, **c["kw"])


def _build_constant(where):
    def build(bound, c):
        from ..mechanisms.central import ConstantEstimate

        value = 0.5 * (c["a"] + c["b"]) if where == "theta" else 0.5 * (c["lo"] + c["hi"])
        return ConstantEstimate(value=value, parameters={"value": value}, **c["kw"])
    return build


#: the aggregation noise of a smith bound -> (the sampler's noise name, clipped to the narrowed interval?)
_SMITH_NOISE = {"laplace": ("laplace", False), "gauss": ("gauss", False), "laplace-local-clip": ("laplace", True)}
#: bound name -> builder of its runnable mechanism (the smith bounds: by their noise, _SMITH_NOISE)
_POINT_BUILDERS = {"clip-stat-laplace": _build_clip_stat, "mle": _build_mle,
                   "constant": _build_constant("theta"), "constant-neighbourhood": _build_constant("neighbourhood")}


def check_instances(t):
    """Run Smith's estimator at the solver's block count on θ and on the two ends of N.

    Per n: the certified upper/lower bounds of :func:`boundcalc.rate` (the local minimax risk over
    N), the estimator with the block count of the best certified upper bound, simulated on the
    instances θ_lo, θ, θ_hi (raw data, every block MLE computed from its points, vectorised over
    blocks and repetitions; block sufficient statistics when n·reps is large). Each instance also
    carries its exact pointwise MSE (``predicted``); an empirical MSE more than ``Z_PREDICT``
    standard errors away from it is a failure. The notes list the efficiency (1/(nI(θ)))/MSE at θ,
    predicted and empirical, and which term limits it.
    """
    values, n, i, reps, res, notes = t.values, t.n, t.index, t.reps, t.result, t.notes
    m = get_point_model(values["model"])
    extra = _extra_for(values)
    eps = float(values["eps"])
    seeds = np.random.SeedSequence(t.seed).spawn(len(t.ns) * 6)  # one stream per (n, instance, mechanism)
    th = float(values["theta"])
    info = sa.fisher(m.name, th, extra)
    up = res.upper
    # the mechanism simulated: the best certified subsample-and-aggregate bound (the constant
    # estimator may be the best upper bound at tiny ε; it has nothing to simulate)
    smith = [u for u in res.uppers if u.certified and u.usable and u.name.startswith("smith-")
             and not u.name.startswith("smith-exact")]
    if not smith:
        raise InputError("eps", f"the check simulates Smith's estimator, which has no certified finite bound at "
                                f"n = {n} here (only the constant estimator, nothing to simulate): use a larger "
                                "--eps or --ns", values["eps"])
    sim_bound = t.upper = min(smith, key=lambda u: u.value)
    v = t.derived
    a, b = v["a"], v["b"]
    k = int(sim_bound.free_parameters["blocks"])
    noise_kind = t.bound(sim_bound.name).extra["noise"]
    mech = point_mechanism(v, sim_bound, t.bound(sim_bound.name))  # the runnable mechanism: its noise step is run
    for j, (tag, tt) in enumerate((("theta_lo", v["theta_lo"]), ("theta", th), ("theta_hi", v["theta_hi"]))):
        tt = float(tt)
        if not (m.natural_space[0] < tt < m.natural_space[1]):
            continue
        method = "raw" if n * reps <= RAW_BUDGET else "sufficient"
        est = sa.simulate(m.name, n, k, eps, tt, a, b, reps=reps, seed=seeds[3 * i + j], method=method,
                          extra=extra, noise=noise_kind, delta=v.get("delta"), release=mech.release_from_statistic)
        err = (est - tt) ** 2
        mse, c_lo, c_hi = t.interval(err)
        terms = sa.mse_terms(m.name, n, np.array([k]), eps, tt, a, b, extra, noise=noise_kind,
                             delta=v.get("delta"))
        pred = float(terms["mse"][0])
        se = (c_hi - mse) / t.quantile(err.size)
        if abs(mse - pred) > Z_PREDICT * se:
            t.failures.append(f"n={n}, {tag}={tt:.6g}: empirical MSE {mse:.4g} is more than {Z_PREDICT} "
                              f"standard errors ({se:.3g}) from the exact MSE {pred:.4g}")
        yield (f"{tag}={tt:.4g}", (mse, c_lo, c_hi), f"{m.name} at θ' = {tt:.6g}, {method} simulation", pred)
        if tag == "theta":
            eff_pred = 1.0 / (n * info) / pred
            eff_emp = 1.0 / (n * info) / mse
            notes.append(f"n={n}: blocks={k} (t={n // k}), exact MSE {pred:.4g}, empirical {mse:.4g} "
                         f"± {se:.2g}; efficiency predicted {eff_pred:.3f}, empirical {eff_emp:.3f}; "
                         f"limited by {sa.limiting_term(terms, n, info)}")
    if up is not None and up.name != sim_bound.name:
        notes.append(f"n={n}: the best certified upper bound is {up.name} ({up.value:.4g}); the simulated "
                     f"mechanism is checked against its own certified bound {sim_bound.value:.4g}")
    yield from clip_stat_instances(t, seeds[3 * len(t.ns) + 3 * i: 3 * len(t.ns) + 3 * i + 3])


def clip_stat_instances(t, seeds):
    """Run the ``clip-stat-laplace`` mechanism at the optimum of its certified bound on θ_lo, θ, θ_hi.

    The clipping interval (l, u) is the one at the solver's (α, β) of the certified bound
    (:func:`boundcalc.mechanisms.clipped_statistic.interval`); the raw data of every repetition are
    clipped, averaged, noised with Laplace((u - l)/(nε)) and inverted through m(θ) = E_θ clip(T, l, u)
    with the projection onto N (:func:`boundcalc.mechanisms.clipped_statistic.simulate`, the functions
    the certified analysis uses). Each instance is checked against that certified bound (not the row's).
    """
    values, n, res = t.values, t.n, t.result
    m = get_point_model(values["model"])
    clip = [u for u in res.uppers if u.name == "clip-stat-laplace" and u.certified and u.usable]
    if not clip:
        if m.name == "bernoulli" and t.index == 0:
            t.notes.append("clip-stat-laplace is not registered for bernoulli (ψ = X is affine: its release "
                           "is the subsample-and-aggregate one with blocks of one point, up to the projection onto N)")
        return
    cb = clip[0]
    v = t.derived
    lo, hi, th = float(v["theta_lo"]), float(v["theta_hi"]), float(values["theta"])
    alpha, beta = float(cb.free_parameters["alpha_clip"]), float(cb.free_parameters["beta_clip"])
    sigma, mu0 = float(values["sigma"]), float(values["mu0"])
    l, u = cstat.interval(m.name, 0.5 * (lo + hi), alpha, beta, sigma)
    mech = point_mechanism(v, cb, t.bound(cb.name))  # the runnable mechanism: noise and inversion run through it
    worst = None
    for j, (tag, tt) in enumerate((("theta_lo", lo), ("theta", th), ("theta_hi", hi))):
        if not (m.natural_space[0] < tt < m.natural_space[1]):
            continue
        est = cstat.simulate(m.name, n, float(values["eps"]), tt, lo, hi, alpha, beta, reps=t.reps, seed=seeds[j],
                             sigma=sigma, mu0=mu0, release=mech.release_from_statistic)
        ci = t.interval((est - tt) ** 2)
        worst = max(worst or ci, ci)
        yield (f"{tag}={tt:.4g}", ci, f"{m.name} at θ' = {tt:.6g}, clip-stat-laplace, raw simulation", None,
               {"upper": float(cb.value), "mechanism": "clip-stat-laplace"})
    if worst is not None:
        t.notes.append(f"n={n}: clip-stat-laplace at l={float(l):.4g}, u={float(u):.4g} (α={alpha:.3g}, "
                       f"β={beta:.3g}): worst simulated risk {worst[0]:.4g} (99% CI [{worst[1]:.4g}, "
                       f"{worst[2]:.4g}]), certified {float(cb.value):.4g}")


CHECK = CheckSpec(check_instances, DEFAULT_NS)


# ---------------------------------------------------------------------- registration
@register_problem_class
class Point(Problem):
    """Point estimation in a regular one-parameter model (subsample and aggregate)."""

    name = "point"
    title = "efficient point estimation in a one-parameter model (subsample and aggregate)"
    aliases = ("point-estimation", "smith")
    privacies = ("none", "pure", "approx")
    examples = {"none": {"n": 400, "model": "poisson"},
                "pure": {"n": 400, "model": "bernoulli", "eps": 1.0},
                "approx": {"n": 400, "model": "normal-mean", "eps": 1.0, "delta": 1e-6}}
    params = PARAMS
    titles = ("point estimation in a regular one-parameter model, loss (θ̂-θ)², local minimax over "
              "N = [θ-h, θ+h] ∩ Θ")
    sources = SOURCE
    checks = {"none": None, None: CHECK}
    notes = ("Bounds are for the local minimax risk over N = [θ-h, θ+h] ∩ Θ (--radius h, default "
            "10/sqrt(nI)); the smith-exact-* rows are the exact pointwise MSE at θ (certified: false "
            "only because they are pointwise). The block count is the free parameter 'blocks'.",)

    def rate_none(self, values):
        """Order of the pointwise MSE of the efficient estimator: 1/(nI)."""
        info = fisher_expr(get_point_model(values["model"]).name)
        return [("efficient 1/(n I(θ))", 1 / (S.n * info))]

    def _rate_private(self, values):
        """Order of the pointwise MSE of the optimised estimator: 1/(nI) + the privacy excess.

        Block estimators exact at t = 1 (V(t) = 1/(tI): bernoulli, poisson, normal-mean, normal-var):
        k ≈ n and the privacy term is Λ²/(nε)² (up to the log factor the clipping bias costs).
        exponential (V(t) = λ²/(t-2) = (1/(tI))(1 + 2/(t-2))): minimising 2kλ²/n² + 2Λ²/(kε)² over k
        gives k ≍ (Λ n/(λ ε))^{2/3} and the excess 3·2^{1/3} λ^{4/3}Λ^{2/3}/(n^{4/3}ε^{2/3}),
        i.e. (Λ²/(n⁴ ε² I²))^{1/3} up to the constant.
        """
        m = get_point_model(values["model"])
        info = fisher_expr(m.name)
        stat = ("efficient 1/(n I(θ))", 1 / (S.n * info))
        eps2 = S.eps ** 2  # approx: the Laplace aggregation (ε-DP ⇒ (ε,δ)-DP) gives the same order
        if m.name == "exponential":
            priv = (LAMBDA ** 2 / (S.n ** 4 * eps2 * info ** 2)) ** sp.Rational(1, 3)
        else:
            priv = LAMBDA ** 2 / (S.n ** 2 * eps2)
        return [stat, ("privacy", priv)]

    rate_pure = rate_approx = _rate_private

    def bounds(self, values):
        return list(_bounds(get_point_model(values["model"]).name, values["privacy"]))

    def validate(self, values):
        """Fill in the ``auto`` parameters and check θ ∈ Θ ⊂ natural space (mutates ``values``)."""
        m = get_point_model(values["model"])
        values["model"] = m.name
        a, b = theta_space(m.name, values["lam"])
        nlo, nhi = m.natural_space
        if values["lam"] == "auto":
            values["lam"] = b - a
        if a < nlo or b > nhi:
            raise InputError("lam", f"Θ = [{a:g}, {b:g}] must lie in the natural parameter space "
                                    f"[{nlo:g}, {nhi:g}] of model {m.name}", values["lam"])
        if values["theta"] == "auto":
            values["theta"] = m.theta_default if a <= m.theta_default <= b else 0.5 * (a + b)
        th = float(values["theta"])
        if not (a <= th <= b) or not (nlo < th < nhi):
            raise InputError("theta", f"must lie in Θ = [{a:g}, {b:g}] and strictly inside the natural "
                                      f"space ({nlo:g}, {nhi:g}) of model {m.name}", values["theta"])
        est = sa.get_block_estimator(m.name)
        if np.any(np.asarray(values["n"]) < est.min_block):
            raise InputError("n", f"must be >= {est.min_block} for model {m.name} (block estimator {est.formula})",
                             values["n"])

    def derived(self, values):
        m = get_point_model(values["model"])
        a, b = theta_space(m.name, values["lam"])
        th = float(values["theta"])
        n = np.asarray(values["n"], dtype=float)
        if values["radius"] == "auto":
            info = sa.fisher(m.name, th, {"sigma": values["sigma"]} if m.name == "normal-mean" else None)
            h = 10.0 / np.sqrt(n * info)
        else:
            h = np.asarray(float(values["radius"]))
        lo = np.maximum(a, th - h)
        hi = np.minimum(b, th + h)
        out = {"a": a, "b": b, "Lambda": b - a, "theta_lo": lo, "theta_hi": hi, "theta_c": 0.5 * (lo + hi),
               "h_radius": h}
        for key in ("theta_lo", "theta_hi", "theta_c", "h_radius"):
            if np.ndim(out[key]) == 0:
                out[key] = float(out[key])
        return out

    def mechanism(self, values, upper, bound):
        return point_mechanism(values, upper, bound)
