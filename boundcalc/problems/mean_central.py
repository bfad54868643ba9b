"""Mean estimation with a k-th moment bound under central privacy.

Barber & Duchi, *Privacy and Statistical Risk: Formalisms and Minimax Bounds* (arXiv 1412.4451),
Propositions 2, 4, 6 and Table 1; docs/problems/mean.md.

Family 𝒫_k = {P on ℝ^d : E||X||₂^k <= r^k}, k in [2, ∞] (k = ∞: ||X|| <= r a.s.); loss ||θ̂ - θ||₂².

Upper bounds: the projection estimator θ̂ = (1/n) Σ π_T(X_i) + W (π_T projects onto the ℓ2 ball of
radius T; ℓ2 sensitivity 2T/n) with each noise of docs/problems/mean.md, T tuned by the solver.
Lower bounds: Hodges–Lehmann and Le Cam (non-private), the TV-privacy mixture (Barber & Duchi 2014,
Theorem 2; docs/methods/tv-contraction.md; transferred to pure/smooth/approx/kl through
:func:`boundcalc.privacy_relations.relations.tv_level`), and uniformity of mass (Barber & Duchi 2014, Lemma 2 / Theorem 3;
docs/methods/uniformity-of-mass.md) over several packings of the unit ball; under (ε,δ)-DP also the fingerprinting bound
(:mod:`boundcalc.methods.fingerprinting`), which grows like d.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache

import numpy as np
import sympy as sp

from ..privacy_relations import relations
from ..core import symbolic as S
from ..core.bounds import Bound, Condition, FreeParameter, Problem, TwoPointFamily, register_problem_class
from ..methods import fingerprinting, group_coupling, ldp, le_cam, method_bounds, sphere_cap, two_point_bayes, uniformity
from ..methods.subsample_size import SubsampleLevel, SubsampleSize
from ..core.params import D, N, R, ParamSpec

SOURCE = "Barber & Duchi (2014), Privacy and Statistical Risk, Table 1"
K_PARAM = ParamSpec("k", "float", 2.0, "moment order k in [2, inf]: E||X||^k <= r^k (inf: ||X|| <= r)",
                    low=2, high=1000, allow_inf=True, structural=True, max_digits=10)
PARAMS = (N, D, R, K_PARAM)

alpha_tv = sp.Symbol("alpha_TV", positive=True)  # TV level implied by the privacy model (docs/methods/relations.md)


def _knum(k: float):
    """k as an exact sympy number (2.5 -> 5/2), or None for k = ∞."""
    if math.isinf(k):
        return None
    return sp.Rational(repr(float(k))) if not float(k).is_integer() else sp.Integer(int(k))


def bias_constant(k: float):
    """c_k = (k-1)^{k-1} / k^k, so that sup E(||X|| - T)_+ <= c_k r^k / T^{k-1} over 𝒫_k.

    Derivation (ours; sharper than the constant 1 of Markov's E(Y - T)_+ <= E Y^k/T^{k-1}):
    g(y) = (y - T)/y^k is maximised over y > 0 at y* = kT/(k-1), so (y - T)_+ <= y^k g(y*) for all
    y >= 0; take expectations: E(Y - T)_+ <= E Y^k (y* - T)/y*^k = r^k (k-1)^{k-1}/(k^k T^{k-1}).
    Equality for the two-point law with mass r^k/y*^k at y* (tested). The projection bias is
    ||E[X - π_T X]|| <= E(||X|| - T)_+.
    """
    kk = _knum(k)
    if kk > 60:  # the exact rational has thousands of digits: use its float value (relative error 1e-15)
        return sp.Float(math.exp((k - 1) * math.log(k - 1) - k * math.log(k)), 17)
    return (kk - 1) ** (kk - 1) / kk ** kk


@S.cached_expression
def bias_bound_min(k: float):
    """Bias bound over 𝒫_k using every moment order k' in [2, k] (sympy, in T and r); non-increasing in k.

    Derivation (ours): for k' <= k, Lyapunov gives E||X||^{k'} <= r^{k'}, so by :func:`bias_constant`
    the bias is at most g(k') = c_{k'} r^{k'}/T^{k'-1} for every k' in [2, k]. log g is convex in k'
    (d²/dk'² log c_{k'} = 1/(k'-1) - 1/k' > 0, the rest is linear) with stationary point
    (k'-1)/k' = T/r, i.e. k* = r/(r-T) (T < r), where g(k*) = r/k* = r - T. Minimising over [2, k]:
        T <= r/2:            r²/(4T)              (k' = 2)
        r/2 <= T <= r(1-1/k): r - T                (k' = k*)
        T >= r(1-1/k):        c_k r^k / T^{k-1}    (k' = k)
    (continuous at both joints). k = ∞: the bias is at most (r - T)_+ (||X|| <= r). Because the
    minimum is over a larger interval for larger k, the bound is pointwise non-increasing in k,
    which makes the upper bound monotone in k (a larger k is a smaller class).
    """
    if math.isinf(k):
        return S.Max(S.r - S.T, 0)
    kk = _knum(k)
    own = bias_constant(k) * S.r ** kk / S.T ** (kk - 1)
    if kk == 2:
        return S.Min(own, S.r)
    return S.Min(sp.Piecewise((S.r ** 2 / (4 * S.T), S.T <= S.r / 2),
                               (S.r - S.T, S.T <= S.r * (1 - 1 / kk)),
                               (own, True)), S.r)


def bias_bound(k: float):
    """Upper bound on ||bias of π_T|| over 𝒫_k (sympy, in T and r)."""
    if math.isinf(k):
        # ||X|| <= r: (||X|| - T)_+ <= (r - T)_+
        return S.Max(S.r - S.T, 0)
    kk = _knum(k)
    return S.Min(bias_constant(k) * S.r ** kk / S.T ** (kk - 1), S.r)


# ------------------------------------------------------------------ noise of each mechanism
# Each returns (c, noise kind, scale): E||W||² = c T², and the sampler's scale as a function of T.

def _sens():
    return 2 * S.T / S.n  # ℓ2 sensitivity of the projected mean (replace-one)


@S.cached_expression
def _noise_expressions() -> dict:
    """(c, scale) of each mechanism: E||W||² = c T², and the sampler's scale as a function of T (kept on disk)."""
    return {
        "laplace": (8 * S.d ** 2 / (S.n * S.eps) ** 2, 2 * sp.sqrt(S.d) * S.T / (S.n * S.eps)),
        "l2-laplace": (4 * S.d * (S.d + 1) / (S.n * S.eps) ** 2, _sens() / S.eps),
        "gauss-classical": (8 * S.d * sp.log(sp.Rational(5, 4) / S.delta) / (S.n * S.eps) ** 2,
                            _sens() * sp.sqrt(2 * sp.log(sp.Rational(5, 4) / S.delta)) / S.eps),
        "gauss-analytic": (4 * S.d * S.GaussSigmaAnalytic(S.eps, S.delta) ** 2 / S.n ** 2,
                           _sens() * S.GaussSigmaAnalytic(S.eps, S.delta)),
        "gauss-kl": (2 * S.d / (S.n ** 2 * S.alpha), _sens() / sp.sqrt(2 * S.alpha)),
        "gauss-tv": (S.d / (S.n ** 2 * 2 * sp.erfinv(S.alpha) ** 2), _sens() / (2 * sp.sqrt(2) * sp.erfinv(S.alpha))),
    }


def _mechanism_table() -> dict:
    """name -> (privacies, title, c, sampler, scale, conditions, derivation); E||W||² = c T²."""
    x = _noise_expressions()
    return {
        "laplace": (("pure", "smooth"), "projected mean + i.i.d. Laplace coordinates",
                    x["laplace"][0], "laplace", x["laplace"][1], (),
                    "ℓ1 sensitivity 2√d T/n, Laplace scale b = 2√d T/(nε) per coordinate, E||W||² = 2db²."),
        "l2-laplace": (("pure", "smooth", "approx"), "projected mean + ℓ2-Laplace noise",
                       x["l2-laplace"][0], "l2-laplace", x["l2-laplace"][1], (),
                       "density ∝ exp(-ε||w||/Δ₂), Δ₂ = 2T/n: ε-DP by the triangle inequality; "
                       "||W|| ~ Gamma(d, Δ₂/ε) so E||W||² = d(d+1)Δ₂²/ε². ε-DP implies (ε,δ)-DP."),
        "gauss-classical": (("approx",), "projected mean + Gaussian noise (classical calibration)",
                            x["gauss-classical"][0], "gaussian", x["gauss-classical"][1],
                            (Condition("epsilon < 1 (classical Gaussian calibration, Dwork & Roth Thm A.1)",
                                       lambda v: v["eps"] < 1),),
                            "σ = Δ₂ sqrt(2 log(1.25/δ))/ε, E||W||² = dσ²."),
        "gauss-analytic": (("approx",), "projected mean + Gaussian noise (exact analytic calibration)",
                           x["gauss-analytic"][0], "gaussian", x["gauss-analytic"][1],
                           (), "σ = Δ₂ σ_aG(ε,δ), σ_aG the smallest σ with Φ(1/(2σ)-εσ) - e^ε Φ(-1/(2σ)-εσ) <= δ "
                               "(Balle & Wang 2018, Thm 8), valid for all ε; E||W||² = dσ²."),
        "gauss-kl": (("kl",), "projected mean + Gaussian noise (KL calibration)",
                     x["gauss-kl"][0], "gaussian", x["gauss-kl"][1], (),
                     "KL(N(μ,σ²I) || N(μ',σ²I)) = ||μ-μ'||²/(2σ²) <= Δ₂²/(2σ²) = α for σ² = Δ₂²/(2α)."),
        "gauss-tv": (("tv",), "projected mean + Gaussian noise (exact TV calibration)",
                     x["gauss-tv"][0], "gaussian", x["gauss-tv"][1], (),
                     "TV(N(μ,σ²I), N(μ',σ²I)) = 2Φ(||μ-μ'||/(2σ)) - 1 <= α for σ = Δ₂/(2Φ^{-1}((1+α)/2)), "
                     "Φ^{-1}((1+α)/2) = √2 erfinv(α)."),
    }


class _LazyTable(Mapping):
    """A read-only table built on first use (its sympy expressions cost every ``rate`` 10 ms at import)."""

    def __init__(self, build):
        self._build, self._table = build, None

    def _get(self) -> dict:
        if self._table is None:
            self._table = self._build()
        return self._table

    def __getitem__(self, key):
        return self._get()[key]

    def __iter__(self):
        return iter(self._get())

    def __len__(self):
        return len(self._get())


#: name -> (privacies, title, c, sampler, scale, conditions, derivation)
MECHANISMS = _LazyTable(_mechanism_table)


@S.cached_expression
def truncation_optimum(k: float, c):
    """Symbolic minimiser of  b_k(T)² + c T²  (the variance term min{r²,T²}/n ignored).

    Finite k: b_k = c_k r^k / T^{k-1}; d/dT [c_k² r^{2k} T^{-2(k-1)} + cT²] = 0 gives
    T* = r ((k-1) c_k² / c)^{1/(2k)}.   k = ∞: (r - T)² + (c + 1/n) T² is minimised at
    T* = r / (1 + c + 1/n) (here the variance term is kept: it is exact).
    Any T is valid in the bound, so T* is a certified choice; the solver refines it numerically.
    """
    if math.isinf(k):
        return S.r / (1 + c + 1 / S.n)
    kk = _knum(k)
    return S.r * ((kk - 1) * bias_constant(k) ** 2 / c) ** (1 / (2 * kk))


shrink = sp.Symbol("sigma_shrink", positive=True)  # shrinkage amount: θ̂ = (1 - σ)(projected mean + W)
#: the largest σ searched: every σ ∈ [0, 1] is valid; σ = 1 (the zero estimator, reported as ``zero``) is left out
#: so that the grid's last column is not a tie at r² for every T: near σ = 1 the bound is r² - 2(1-σ)r(r - B) + O((1-σ)²),
#: and at small n the only gain over r² lies within 1 - σ < 0.01, which the search then reaches from that column
SHRINK_HIGH = 1.0 - 1e-9


@S.cached_expression
def upper_expr(k: float, c, n=S.n, second=None):
    """Risk bound of the shrunk projection estimator θ̂ = (1-σ)(mean of π_T(X_i) + W) on n points: the minimum of

        (i)  ((1-σ) B + σ r)² + (1-σ)² (V/n + c T²)                          and
        (ii) max over t ∈ [0, (r - B)₊] of  (σt + B)² + (1-σ)² ((V - t²)/n + c T²),

    B = B_k(T) (bias_bound_min), V = min{r², T²}; the maximum of the quadratic (ii) is in closed form
    (:func:`_max_quadratic`).

    Derivation: E θ̂ - θ = -(σθ + (1-σ) b) with b = θ - E π_T X, ||b|| <= B and ||θ|| <= (E||X||^k)^{1/k} <= r;
    the variance is (1-σ)² (Var(π_T X)/n + E||W||²), Var(π_T X) = E||π_T X||² - ||E π_T X||² and
    E||π_T X||² <= min{T², E||X||²} <= V. (i) drops ||E π_T X||². (ii) keeps it: with t' = ||θ||,
    ||E π_T X|| >= (t' - B)₊, so the risk is at most g(t') = (σt' + (1-σ)B)² + (1-σ)²((V - (t'-B)₊²)/n + cT²);
    g increases on [0, B], and on [B, r] the substitution t = t' - B gives (ii). The subtracted ||E π_T X||²/n
    is what makes σ = 1/(1+√n) (the Hodges–Lehmann shrinkage) reach r²/(1+√n)² as B, c -> 0, the non-private
    minimax risk, where (i) stays at r²/(n+1). σ = 0 is the unshrunk estimator, σ = 1 the zero estimator
    (risk <= r²), so this is never worse than either.

    Joint bias and variance (finite k, n >= 2; derived here). The two forms above take the worst bias B and the
    worst second moment V at once, but one law cannot have both: with a = E(||X|| - T)_+ (so ||b|| <= a <= B) and
    Y = ||X||, the pointwise inequality min{y², T²} + (2T + 2a)(y - T)_+ <= y² + a² (for y > T the difference is
    -(y - T - a)²) gives, in expectation, E||π_T X||² <= V(a) = min{T², r² - 2Ta - a²}. So the risk is at most
    (i) and (ii) with B replaced by a and V by V(a), for some a ∈ [0, B]. Both forms are non-decreasing in a where
    V(a) = min{r², T²} (a <= a_T = min{B, (r - T)_+}), and on [a_T, B] (where V(a) = r² - 2Ta - a²) both are convex
    in a: the t'-wise expressions have a² coefficient (1-σ)²(1 - (1 + 1{a < t'})/n) >= 0 for n >= 2 and are C¹ at
    a = t', and a maximum over t' of convex functions is convex. Hence the risk is at most
        min{ max(i at a_T, i at B), max(ii at a_T, ii at B) },   V(a_T) = min{r², T²},  V(B) = min{T², r² - 2TB - B²},
    never above the forms at (B, V) (each form increases in a and in V). k = ∞ (V(a) = T² on [0, B]) and n < 2 keep
    the forms at (B, V).

    ``second``: for an average of n independent unbiased views Z_i of π_T X_i (the local model), a bound M on
    E||Z||²; then Var(Z̄) = (E||Z||² - ||E π_T X||²)/n <= (M - ||E π_T X||²)/n, and V/n + c T² is replaced by M/n
    (``c`` is then unused) with the same two cases (not the joint form).
    """
    B = bias_bound_min(k)
    if second is not None:
        return S.Min(*_shrunk_forms(B, second / n, n))
    V = S.Min(S.r ** 2, S.T ** 2)
    if math.isinf(k):  # ||X|| <= r: the joint bound below gives V(a) = T² = V on all of [0, B]
        return S.Min(*_shrunk_forms(B, V / n + c * S.T ** 2, n))
    # the bias a = E(||X|| - T)_+ and the second moment of π_T X limit each other: the end points of [a_T, B].
    # n >= 2 makes both forms convex in a (derivation above); for n < 2 the two end points are both (B, V), the
    # forms at the worst bias and second moment at once. evaluate=False: sympy's own Min/Max simplification of
    # these large arguments (a search for comparable pairs) costs seconds per bound and cannot drop an argument
    # here (each can be the smallest or largest).
    joint_ok = n >= 2
    a_low = sp.Piecewise((S.Min(B, S.Max(0, S.r - S.T), evaluate=False), joint_ok), (B, True))
    v_high = sp.Piecewise((S.Min(S.T ** 2, S.r ** 2 - 2 * S.T * B - B ** 2, evaluate=False), joint_ok), (V, True))
    first_j, ii_j = _shrunk_forms(a_low, V / n + c * S.T ** 2, n)  # V(a_T) = min{r², T²}
    first_b, ii_b = _shrunk_forms(B, v_high / n + c * S.T ** 2, n)
    return S.Min(S.Max(first_j, first_b, evaluate=False), S.Max(ii_j, ii_b, evaluate=False), evaluate=False)


def _shrunk_forms(a, total, n):
    """The two forms (i), (ii) of :func:`upper_expr` for a bias bound ``a`` and a variance term ``total``
    (V/n + c T², or M/n)."""
    first = ((1 - shrink) * a + shrink * S.r) ** 2 + (1 - shrink) ** 2 * total
    lead = shrink ** 2 - (1 - shrink) ** 2 / n  # the t² coefficient of (ii)
    ii = _max_quadratic(lead, 2 * shrink * a, a ** 2 + (1 - shrink) ** 2 * total, S.Max(0, S.r - a))
    return first, ii


def _max_quadratic(a2, a1, a0, top):
    """max over t ∈ [0, top] of a2 t² + a1 t + a0 with a1 >= 0, top >= 0: at t = top when a2 >= 0 (convex, and
    q(top) >= q(0) as a1 >= 0), else at the vertex -a1/(2a2) >= 0 clipped to top."""
    q = lambda t: a2 * t ** 2 + a1 * t + a0  # noqa: E731
    return sp.Piecewise((q(top), a2 >= 0), (q(S.Min(top, -a1 / (2 * a2))), True))


def _t_range(k):
    if math.isinf(k):
        return (lambda v: v["r"] * 1e-9, lambda v: v["r"])
    return (lambda v: v["r"] * 1e-6, lambda v: v["r"] * 1e12)


SMOOTH_METRIC = ("Smooth privacy: this mechanism is ε-private for the metric ρ_T(x, x') = "
                 "min{||x - x'||₂, 2T}/(2T) on data points (distance scaled by the tuning radius T; T is the "
                 "optimised truncation radius reported with the bound): the projected mean moves by at most "
                 "Σ_i min{||x_i - x'_i||, 2T}/n, and the noise density ratio is at most exp(ε Σ_i ρ_T(x_i, x'_i)). "
                 "ρ_T <= 1 = the Hamming metric, so it is also ε-DP.")


def _trivial_upper():
    return Bound(side="upper", name="zero", label="trivial estimator θ̂ = 0", expr=S.r ** 2, source=SOURCE,
                 derivation="risk ||θ||² <= (E||X||^k)^{2/k} <= r² (Jensen), whatever the privacy model (θ̂ = 0 uses no data).",
                 extra={"shrink_factor": sp.Integer(0), "no_data": True})


m_sub = sp.Symbol("m_sub", positive=True)  # subsample size of the TV subsampling mechanism


def _subsample_tv_upper(k: float) -> Bound:
    """α-TV privacy: run the TV-calibrated Gaussian mechanism on a uniformly random subsample of size m.

    Privacy (amplification by subsampling, TV form): for neighbours D, D' differing in entry i, use the same
    random m-subset S for both; if i ∉ S the two outputs have the same law, else the subsamples are
    neighbours. By convexity of TV, TV(M(D), M(D')) <= P(i ∈ S) α' = (m/n) α' with α' = min{1, αn/m} the TV
    level used on the subsample, so the mechanism is α-TV private. For m <= αn, α' = 1: the subsample is
    released without noise (σ = 0). Risk: a uniformly random m-subset of an i.i.d. sample is an i.i.d.
    sample of size m, so the shrunk projected-mean risk bound holds with n replaced by m and the Gaussian
    noise σ = Δ₂/(2Φ^{-1}((1+α')/2)), Δ₂ = 2T/m, E||W||² = dσ² = d T²/(2 m² erfinv(α')²).
    """
    a_sub = SubsampleLevel(S.alpha, S.n, m_sub)  # min{1, αn/m}, the comparison made exactly
    c = S.d / (2 * m_sub ** 2 * sp.erfinv(a_sub) ** 2)
    expr = upper_expr(k, c, m_sub)
    lo, hi = _t_range(k)
    return Bound(
        side="upper", name="subsample-gauss-tv", label="random subsample of size m + projected mean + Gaussian noise (TV)", expr=expr,
        source="derived: docs/methods/central-mean.md (subsampling, Balle, Barthe & Gaboardi 2018 for the coupling idea)",
        derivation="Uniformly random m-subset S of the sample (m a free parameter); TV(M(D), M(D')) <= P(i ∈ S) α' = (m/n) α' "
        "<= α with α' = min{1, αn/m} (same S for both neighbours, convexity of TV). On the subsample, which is "
        "an i.i.d. sample of size m: (1-σ)(projected mean + W), W Gaussian with exact TV calibration at level α' "
        "(σ_W = Δ₂/(2Φ^{-1}((1+α')/2)), Δ₂ = 2T/m; α' = 1: no noise). MSE: the shrunk projected-mean bound "
        "(upper_expr) with n replaced by m and c T² = d σ_W².",
        free=(FreeParameter(S.T, lo, hi, doc="truncation radius"),
              FreeParameter(shrink, lambda v: 0.0, lambda v: SHRINK_HIGH, log=False,
                            doc="shrinkage amount σ: θ̂ = (1-σ)(projected mean + noise)"),
              FreeParameter(m_sub, lambda v: 1, lambda v: v["n"], integer=True, doc="subsample size m")),
        extra={"noise": "gaussian", "scale": S.T / (sp.sqrt(2) * m_sub * sp.erfinv(a_sub)),
               "subsample": m_sub})


def _subsample_shrunk_tv_upper() -> Bound:
    """α-TV privacy: release nothing but the shrunk mean of a random subsample of size m0 = max{1, ⌊αn⌋}.

    Privacy: TV(M(D), M(D')) <= P(i ∈ S) = m0/n <= α when αn >= 1 (same subset for both neighbours; if the
    changed entry is not in S the outputs have the same law). For αn < 1 this bound is not used (m0 = 1
    would give TV level 1/n > α). Risk: the subsample is i.i.d. of size m0 and the shrunk mean
    √m0/(1+√m0) X̄ has risk E||X||²/(1+√m0)² <= r²/(1+√m0)² in any dimension and for every k.
    """
    m0 = SubsampleSize(S.alpha, S.n)  # exact ⌊αn⌋ (m0/n <= α)
    return Bound(
        side="upper", name="subsample-shrunk-tv", label="shrunk mean of a random subsample of size ⌊αn⌋ (TV)",
        expr=S.r ** 2 / (1 + sp.sqrt(m0)) ** 2,
        source="derived: docs/methods/central-mean.md (subsampling); Hodges & Lehmann (1950) for the shrunk mean",
        derivation="m0 = ⌊αn⌋ entries chosen uniformly at random: for neighbours differing in entry i, TV(M(D), M(D')) <= "
        "P(i ∈ S) = m0/n <= α. The shrunk mean cX̄ (c = √m0/(1+√m0)) of an i.i.d. sample of size m0 has risk "
        "E||X||²/(1+√m0)² <= r²/(1+√m0)².",
        conditions=(Condition("alpha * n >= 1 (the subsample holds at least one entry)",
                              lambda v: v["alpha"] * v["n"] >= 1),),
        extra={"shrink_factor": sp.sqrt(m0) / (1 + sp.sqrt(m0)), "subsample": m0})


def _projected_mean_upper(privacy, k, name, title, c, sampler, scale, conds, why, extra=None, source=None) -> Bound:
    """The upper bound of the shrunk projected mean with noise of second moment c T² (:func:`upper_expr`), free T and
    σ; ``extra`` adds to the bound's record (the noise's own parameters), ``source`` to its sources."""
    lo, hi = _t_range(k)
    return Bound(
        side="upper", name=name, label=title, expr=upper_expr(k, c),
        source=SOURCE + "; docs/methods/central-mean.md (derived)" + (f"; {source}" if source else ""),
        derivation="MSE of (1-σ)(projected mean + W) = ||bias||² + (1-σ)²(Var/n + E||W||²) with "
        "||bias|| <= (1-σ)B_k(T) + σr, B_k(T) = min over k' in [2,k] of c_{k'} r^{k'}/T^{k'-1} "
        "(bias_bound_min; k = ∞: (r-T)_+), Var(π_T X) <= min{r², T²} - ||E π_T X||² and ||E π_T X|| >= (||θ|| - B_k(T))_+ "
        "(the worst ||θ|| in closed form; upper_expr), and "
        + why + (" " + SMOOTH_METRIC if privacy == "smooth" else ""),
        free=(FreeParameter(S.T, lo, hi, doc="truncation radius"),
              FreeParameter(shrink, lambda v: 0.0, lambda v: SHRINK_HIGH, log=False,
                            doc="shrinkage amount σ: θ̂ = (1-σ)(projected mean + noise)")),
        conditions=conds, optimum={S.T: truncation_optimum(k, c), shrink: 0},
        extra={"noise": sampler, "scale": scale, "c": c, **(extra or {})})


#: the privacy models the staircase noise serves: ε-DP for shifts up to Δ (docs/methods/staircase.md), hence (ε,δ)-DP;
#: not smooth privacy, whose metric asks for a density ratio e^{ε|t|/Δ} at small shifts t (the staircase's is e^ε
#: across a step edge)
STAIRCASE_PRIVACIES = ("pure", "approx")
#: the largest level the staircase noise is built at: beyond it e^{-ε} is below the float64 range; an ε'-DP mechanism
#: with ε' <= ε is ε-DP, so for larger ε the noise is built at this level (its E W² is about 10⁻²⁰³ Δ² there)
STAIRCASE_EPS_CAP = 700


def _staircase_upper(privacy, k) -> Bound:
    """The shrunk projected mean in one dimension with the staircase noise of Geng & Viswanath (2016) at sensitivity
    Δ = 2T/n (:mod:`boundcalc.mechanisms.staircase`): E W² = Δ² m(γ, ε), so c = 4 m(γ, ε)/n². Every step γ ∈ (0, 1]
    gives an ε-DP mechanism and :func:`upper_expr` is non-decreasing in c, so the exact minimiser γ*(ε) of m is the
    best γ at every T and σ: it is used in closed form (no search)."""
    from ..mechanisms import staircase as ST

    level = S.Min(S.eps, STAIRCASE_EPS_CAP)
    g_opt = ST.optimal_gamma_expr(level)
    c = 4 * ST.second_moment_expr(g_opt, level) / S.n ** 2
    why = ("W the staircase noise of Geng & Viswanath (2016) for sensitivity Δ = 2T/n (d = 1) with step γ: density "
           "a e^{-εj} on |w| ∈ [jΔ, (j+γ)Δ) and a e^{-ε(j+1)} on [(j+γ)Δ, (j+1)Δ); its exponent changes by at most 1 "
           "under a shift <= Δ, so it is ε-DP for every γ ∈ (0, 1] (hence (ε,δ)-DP), and E W² = Δ²[b(1+b)/(1-b)² + "
           "(b(γ² + b(1-γ²))/(1-b) + (γ³ + b(1-γ³))/3)/(γ + (1-γ)b)], b = e^{-ε}, smallest at "
           "γ* = ((b(1+b)/2)^{1/3} - b)/(1-b), the step used (docs/methods/staircase.md). For ε > "
           f"{STAIRCASE_EPS_CAP} the noise is built at level {STAIRCASE_EPS_CAP} (ε'-DP with ε' <= ε is ε-DP).")
    conds = (Condition("d = 1 (the staircase noise is for one real query)", lambda v: v["d"] == 1),)
    return _projected_mean_upper(privacy, k, "staircase", "projected mean + staircase noise (d = 1)", c, "staircase",
                                 _sens(), conds, why, extra={"noise_params": {"gamma": g_opt, "eps": level}},
                                 source="Geng & Viswanath (2016), the staircase noise; docs/methods/staircase.md")


def _upper_bounds(privacy: str, k: float) -> list[Bound]:
    if privacy == "none":
        return [Bound(side="upper", name="sample-mean", label="sample mean (no privacy)", expr=S.r ** 2 / S.n, source=SOURCE,
                      derivation="Var(X̄) = Var(X)/n <= E||X||²/n <= (E||X||^k)^{2/k}/n <= r²/n (Jensen)."),
                Bound(side="upper", name="shrunk-mean", label="shrunk sample mean (exact minimax)",
                      expr=S.r ** 2 / (1 + sp.sqrt(S.n)) ** 2, source="Hodges & Lehmann (1950); derivation in the text",
                      derivation="θ̂ = cX̄, c = √n/(1+√n), in any dimension d: E||θ̂ - θ||² = c² (E||X||² - ||θ||²)/n + "
                      "(1-c)² ||θ||² and c²/n = (1-c)² = 1/(1+√n)², so the risk is E||X||²/(1+√n)² <= r²/(1+√n)². "
                      "This equals the Hodges–Lehmann lower bound: it is the exact minimax risk for every d and k.",
                      extra={"shrink_factor": sp.sqrt(S.n) / (1 + sp.sqrt(S.n))}),
                _trivial_upper()]
    out = [_trivial_upper()]
    for name, (privs, title, c, sampler, scale, conds, why) in MECHANISMS.items():
        if privacy not in privs:
            continue
        out.append(_projected_mean_upper(privacy, k, name, title, c, sampler, scale, conds, why))
    if privacy == "tv":
        out.append(_subsample_tv_upper(k))
        out.append(_subsample_shrunk_tv_upper())
    return out


# ------------------------------------------------------------------ lower bounds

#: the mixture weight p searched: from min{10⁻³, 10⁻⁴/(n(1+ε))} (well below the optima, of order 1/n or
#: 1/(nα_TV)) to p = 1 (every observation moved); every p in (0, 1] gives a valid bound
P_LOW_CAP, P_LOW_SCALE, P_HIGH = 1e-3, 1e-4, 1.0
#: the relative success radius τ of the sphere-cap bounds: any τ ∈ (0, 1] is valid; the bounds scale like τ²,
#: so the search stops at 10⁻³
TAU_LOW, TAU_HIGH = 1e-3, 1.0
#: the half-gap h of the non-private pair q = 1/2 ± h: from 10⁻⁴/√n (far below the optimum, of order 1/√n) to
#: just below 1/2 (q stays in (0, 1))
H_LOW_SCALE, H_HIGH = 1e-4, 0.5 - 1e-9
#: packing distance s of the Fano packings: from 10⁻³ up to the diameter 2 of the unit ball (line packing) or
#: just below 1 (volume packing, where log(1/s) must stay positive)
S_LOW, S_HIGH_LINE, S_HIGH_VOLUME = 1e-3, 2.0, 1.0 - 1e-9
#: Beta(a, a) prior of the fingerprinting bound: a from 10⁻⁴ (mass near the cube's corners) to 10⁸ (nearly a
#: point mass at the centre), searched on a log grid; every a > 0 gives a valid bound
A_BETA_LOW, A_BETA_HIGH = 1e-4, 1e8
#: cut level c of the moved cap: every c ∈ [0, 1) is valid; the search stops at 0.99
CUT_LOW, CUT_HIGH = 0.0, 0.99


def _p_range():
    return (lambda v: min(P_LOW_CAP, P_LOW_SCALE / (v["n"] * (1.0 + v.get("eps", 1.0)))), lambda v: P_HIGH)


def _exponent(k):
    return sp.Integer(1) if math.isinf(k) else (_knum(k) - 1) / _knum(k)


def _nonprivate_lowers(k):
    hl = Bound(
        side="lower", name="hodges-lehmann", label="exact minimax risk of the two-point family on {±r u}",
        expr=S.r ** 2 / (1 + sp.sqrt(S.n)) ** 2, source="Hodges & Lehmann (1950); sub-family of 𝒫_k",
        derivation="The laws P_q = (1-q)δ_{-ru} + q δ_{ru} (||u|| = 1) lie in 𝒫_k (E||X||^k = r^k) and have mean "
        "r(2q-1)u. The count of +ru draws is Bin(n, q), so estimating the mean is estimating 2q-1 scaled by "
        "r: the binomial proportion's exact minimax squared-error risk 1/(4(1+√n)²) (Hodges–Lehmann: "
        "(X + √n/2)/(n + √n) has that constant risk and is Bayes for the Beta(√n/2, √n/2) prior, tested "
        "exactly) times (2r)² gives r²/(1+√n)². Minimax over 𝒫_k is at least that.")
    lc = Bound(
        side="lower", name="le-cam", label="Le Cam two points, exact binomial TV",
        expr=lambda: le_cam.two_point((2 * S.r * S.h) ** 2, ldp.binomial_tv_bound(S.n, sp.Rational(1, 2) - S.h,
                                                                             sp.Rational(1, 2) + S.h)),
        source=SOURCE + " (non-private part); docs/methods/le-cam.md",
        derivation="P_q = (1-q)δ_{-ru} + q δ_{ru} with q = 1/2 ± h: means r(2q-1)u are 2s-separated with s = 2rh; the "
        "count of +ru draws is sufficient, so TV(P^n, P'^n) = TV(Bin(n, 1/2-h), Bin(n, 1/2+h)), computed "
        "exactly.",
        free=(FreeParameter(S.h, lambda v: H_LOW_SCALE / math.sqrt(v["n"]), lambda v: H_HIGH,
                            doc="half-gap of q"),))
    return [hl, lc]


#: how each central model implies TV privacy (docs/methods/relations.md), as printed with the Le Cam bound
TV_LEVEL_TEXT = {"tv": "α_TV = α", "kl": "α_TV = sqrt(α/2) (Pinsker)", "pure": "α_TV = tanh(ε/2)",
                 "smooth": "smooth ⇒ pure DP, α_TV = tanh(ε/2)", "approx": "α_TV = (e^ε - 1 + 2δ)/(e^ε + 1)"}


def _mixture_tv_product():
    return -S.expm1(S.n * S.log1p(-S.p))  # 1 - (1-p)^n


def _tv_lower(privacy, k):
    """Le Cam's two points with the central TV contraction (the shared
    :class:`boundcalc.methods.le_cam_methods.CentralLeCam`) on the pair δ_0, (1-p)δ_0 + p δ_{r p^{-1/k} u}."""
    a = _exponent(k)
    via = TV_LEVEL_TEXT[privacy]
    family = TwoPointFamily(
        name="tv-mixture", title=f"Le Cam + TV contraction ({via})", loss_at_s=(S.r * S.p ** a / 2) ** 2,
        tv_one=S.p, tv_product=_mixture_tv_product(),
        source="Barber & Duchi Prop 2 (TV privacy), constant derived (docs/methods/tv-contraction.md, docs/methods/relations.md)",
        derivation="P_0 = δ_0, P_1 = (1-p)δ_0 + p δ_{r p^{-1/k} u} ∈ 𝒫_k; TV(P_0,P_1) = p, TV(P_0^n,P_1^n) = 1-(1-p)^n; "
        "means differ by r p^{(k-1)/k} = 2s. Two-point bound with TV(M_0,M_1) <= min{n α_TV p, 1-(1-p)^n} "
        "(central TV contraction). The privacy model implies α_TV-TV privacy: " + via + ".",
        free=(FreeParameter(S.p, *_p_range(), doc="mixture weight"),))
    return method_bounds(family, privacy)


def _tv_lower_symmetric(privacy, k):
    """The same contraction for the symmetric pair P_± (separation 2ρ instead of ρ: 4× the above)."""
    a = _exponent(k)
    family = TwoPointFamily(
        name="tv-mixture-sym", title="Le Cam ± mixtures + TV contraction", loss_at_s=(S.r * S.p ** a) ** 2,
        tv_one=S.p, tv_product=_mixture_tv_product(),  # 1 - (1-p)^n >= TV(P_+^n, P_-^n)
        source="Barber & Duchi Prop 2 (TV privacy) with a symmetric pair; docs/methods/central-mean.md",
        derivation="P_± = (1-p)δ_0 + p δ_{±r p^{-1/k} u} ∈ 𝒫_k: means ±ρu, ρ = r p^{(k-1)/k} (separation 2ρ, so s = ρ); "
        "TV(P_+, P_-) = p; the entry-wise maximal coupling differs in Bin(n, p) entries, so "
        "TV(P_+^n, P_-^n) <= 1-(1-p)^n, and by the central TV contraction TV(M_+, M_-) <= min{n α_TV p, 1-(1-p)^n}. "
        "Risk >= ρ²(1 - TV(M_+, M_-))/2.",
        free=(FreeParameter(S.p, *_p_range(), doc="mixture weight"),))
    return method_bounds(family, privacy)


def _two_point_bayes_lower(privacy, k):
    """The symmetric pair P_± with the posterior-variance (Bayes) form and the privacy affinity of coupled samples
    (:class:`boundcalc.methods.two_point_bayes.TwoPointBayes`; docs/methods/two-point-bayes.md)."""
    a = _exponent(k)
    family = two_point_bayes.CoupledPairFamily(
        name="two-point-bayes", title="two-point Bayes risk ±, privacy affinity of coupled samples",
        rho_sq=(S.r * S.p ** a) ** 2, t=S.p,
        source="derived from Barber & Duchi (2014) two-point mixtures, group privacy (Dwork & Roth 2014) and the "
        "privacy region of Kairouz, Oh & Viswanath (2015, Thm 2.1)",
        derivation="P_± = (1-p)δ_0 + p δ_{±r p^{-1/k} u} ∈ 𝒫_k (E||X||^k = r^k; k = ∞: ±ru), means ±ρu with "
        "ρ = r p^{(k-1)/k}; the entry-wise maximal coupling makes the two samples differ in H ~ Bin(n, p) entries.",
        free=(FreeParameter(S.p, *_p_range(), doc="mixture weight"),))
    return method_bounds(family, privacy)


def _packings(d: int):
    """(name, log(N-1) as sympy, min distance, free s parameter or None, applicability)."""
    out = [("line", sp.log(sp.floor(2 / S.s)), S.s,
            FreeParameter(S.s, lambda v: S_LOW, lambda v: S_HIGH_LINE, doc="packing distance"),
            "points -1, -1+s, ..., on a diameter: N = floor(2/s)+1 at distance s")]
    if d >= 2:
        out.append(("coords", sp.log(2 * S.d - 1), sp.sqrt(2), None, "{±e_j}: N = 2d at distance √2"))
        # log(N - 1) = log((1/s)^d - 1) = L + log(1 - e^{-L}), L = d log(1/s): the same number without (1/s)^d,
        # which overflows a float from L ~ 709 (d = 1e5, s = 0.993; it put the float value 1.4e-3 above its exact)
        big_l = S.d * sp.log(1 / S.s)
        out.append(("volume", big_l + S.log1p(-sp.exp(-big_l)), S.s,
                    FreeParameter(S.s, lambda v: S_LOW, lambda v: S_HIGH_VOLUME, doc="packing distance"),
                    "maximal s-packing: N >= (1/s)^d (its s-balls cover the unit ball)"))
    if d >= 8:
        out.append(("varshamov-gilbert", S.d * sp.log(2) / 8, 1 / sp.sqrt(2), None,
                    "{±1/√d}^d codewords at Hamming distance >= d/8: N - 1 >= 2^{d/8} at distance 1/√2"))
    return out


def _uniformity_lowers(privacy, k, d):
    a = _exponent(k)
    delta = S.delta if privacy == "approx" else None
    out = []
    for pname, log_nm1, dist, s_param, what in _packings(d):
        def expr(log_nm1=log_nm1, dist=dist):
            rho = S.r * S.p ** a * dist
            return (rho / 2) ** 2 * uniformity.failure_probability(S.n, S.p, S.M, S.eps, log_nm1, delta)

        free = [FreeParameter(S.p, *_p_range(), doc="mixture weight"),
                FreeParameter(S.M, lambda v: 0, lambda v: v["n"], integer=True, doc="coupling group size")]
        if s_param is not None:
            free.append(s_param)
        out.append(Bound(
            side="lower", name=f"uniformity-{pname}", label=f"uniformity of mass, packing: {pname}", expr=expr,
            source="Barber & Duchi Lemma 2 / Thm 3 / Prop 4; explicit form derived (docs/methods/uniformity-of-mass.md)",
            derivation="Mixtures (1-p)δ_0 + p δ_{r p^{-1/k} v} ∈ 𝒫_k with means r p^{(k-1)/k} v, v in a packing of the unit "
            f"ball ({what}); separation ρ* = r p^{{(k-1)/k}}·dist; risk >= (ρ*/2)² × the failure probability of "
            "the uniformity-of-mass coupling (Barber & Duchi Thm 3; docs/methods/uniformity-of-mass.md)." + (" Smooth DP implies pure DP." if privacy == "smooth" else ""),
            free=tuple(free)))
    return out


def _coupling_lowers(privacy, k):
    """Two-point mixture (L5 testing bound) and the continuous sphere-cap packing (point-mass L5)."""
    a = _exponent(k)
    delta = S.delta if privacy == "approx" else None
    rho = S.r * S.p ** a
    smooth = " Smooth DP implies pure DP." if privacy == "smooth" else ""
    two = Bound(
        side="lower", name="two-point-coupling", label="two-point mixture ±, group-privacy coupling",
        expr=lambda: rho ** 2 / 2 * S.Max(group_coupling.testing_bound(S.n, S.p, S.eps, delta),
                              group_coupling.testing_bound_jensen(S.n, S.p, S.eps, delta)),
        source="Barber & Duchi (2014) two-point mixtures; coupling bound derived in docs/methods/group-coupling.md",
        derivation="P_± = (1-p)δ_0 + p δ_{±r p^{-1/k} u} ∈ 𝒫_k, means ±ρu with ρ = r p^{(k-1)/k}, TV(P_+, P_-) = p. "
        "The test 'nearer mean' errs only if ||θ̂ - θ_true|| >= ρ, so max risk >= (ρ²/2)(type I + type II), "
        "and by group privacy over the maximal coupling (H ~ Bin(n, p) differing entries) type I + type II >= "
        "max{(1 + c)(1 - p(1-e^{-ε}))^n - c, 2(1+2c)/(1 + e^{εnp}) - 2c}, c = δ/(e^ε-1)." + smooth,
        free=(FreeParameter(S.p, *_p_range(), doc="mixture weight"),))
    cap = Bound(
        side="lower", name="sphere-cap", label="continuous packing of the sphere (cap areas), point-mass coupling",
        expr=lambda: (rho * sphere_cap.tau) ** 2 * sphere_cap.failure_probability(S.n, S.p, S.eps, S.d, sphere_cap.tau,
                                                                             delta),
        source="derived: docs/methods/sphere-cap-packing.md (group privacy, Dwork & Roth 2014)",
        derivation="P_v = (1-p)δ_0 + p δ_{r p^{-1/k} v} ∈ 𝒫_k, v uniform on the unit sphere, mean ρv, ρ = r p^{(k-1)/k}. "
        "Group privacy against the fixed sample 0^n: P_v(A) <= G P_0(A) + δ(G-1)/(e^ε-1), G = (1+p(e^ε-1))^n. "
        "By Fubini the average over v of P_0(||θ̂ - ρv|| < ρτ) is at most the largest normalised area of "
        "{v: ||v - c|| < τ}, the cap cap(τ) = I_{τ²}((d-1)/2, 1/2)/2. Risk >= (ρτ)²(1 - G cap(τ) - δ(G-1)/(e^ε-1))."
        + smooth,
        free=(FreeParameter(S.p, *_p_range(), doc="mixture weight"),
              FreeParameter(sphere_cap.tau, lambda v: TAU_LOW, lambda v: TAU_HIGH, doc="relative success radius τ")))
    layers = Bound(
        side="lower", name="sphere-cap-layers", label="continuous packing of the sphere, layer-cake sum over radii",
        expr=lambda: (rho * sphere_cap.tau) ** 2 * sphere_cap.layered_failure(S.n, S.p, S.eps, S.d, sphere_cap.tau, delta),
        source="derived: docs/methods/sphere-cap-packing.md (group privacy, Dwork & Roth 2014)",
        derivation="The sphere-cap family and coupling; instead of one success radius ρτ, E||θ̂ - θ_V||² = "
        "ρ² ∫ P(||θ̂ - θ_V|| >= ρ√u) du >= (ρτ)² (1/K) Σ_{i<=K} (1 - G cap(τ√(i/K)) - δ(G-1)/(e^ε-1))_+ "
        f"(K = {sphere_cap.LAYERS}; each probability is bounded as in sphere-cap at radius τ√(i/K))." + smooth,
        free=(FreeParameter(S.p, *_p_range(), doc="mixture weight"),
              FreeParameter(sphere_cap.tau, lambda v: TAU_LOW, lambda v: TAU_HIGH, doc="outer relative radius τ")))
    layers_min = Bound(
        side="lower", name="sphere-cap-tilted", label="continuous packing of the sphere, layer-cake, truncated coupling",
        expr=lambda: (rho * sphere_cap.tau) ** 2 * sphere_cap.layered_failure_min(S.n, S.p, S.eps, S.d, sphere_cap.tau,
                                                                             delta),
        source="derived: docs/methods/sphere-cap-packing.md and docs/methods/group-coupling.md (truncated coupling)",
        derivation="The sphere-cap family and layer-cake sum, with the group-privacy coupling kept inside a probability: "
        "P_v(A) <= f(P_0(A)), f(a) = E min{1, e^{εH} a + δ(e^{εH}-1)/(e^ε-1)}, H ~ Bin(n, p); f is concave and "
        "non-decreasing, so the average over v of P_v(A_v) is at most f(cap(τ)) (Jensen). Risk >= "
        f"(ρτ)² (1/K) Σ_{{i<=K}} (1 - f(cap(τ√(i/K)))) (K = {sphere_cap.LAYERS}). Never below sphere-cap-layers "
        "(f(a) <= G a + δ(G-1)/(e^ε-1)); the cost exponent is about εnp instead of np(e^ε - 1)." + smooth,
        free=(FreeParameter(S.p, *_p_range(), doc="mixture weight"),
              FreeParameter(sphere_cap.tau, lambda v: TAU_LOW, lambda v: TAU_HIGH, doc="outer relative radius τ")))
    return [two, cap, layers, layers_min]


def _fingerprint_parameters(k):
    """(q, free parameters) of the fingerprinting bounds: the Beta(a, a) prior parameter, and for finite k the weight
    q of the non-zero observations (q = 1 for k = ∞)."""
    finite = not math.isinf(k)
    free = [FreeParameter(fingerprinting.a_beta, lambda v: A_BETA_LOW, lambda v: A_BETA_HIGH,
                          doc="Beta(a, a) prior parameter of the coordinate means")]
    if finite:
        free.append(FreeParameter(S.p, *_p_range(), doc="weight q of the non-zero observations"))
    return (S.p if finite else sp.Integer(1)), free


def _fingerprint_lower(k):
    """(ε,δ)-DP fingerprinting bound on the product prior over the cube (boundcalc.methods.fingerprinting)."""
    q, free = _fingerprint_parameters(k)
    return Bound(
        side="lower", name="fingerprinting", label="fingerprinting (score attack), Beta(a, a) product prior on the cube",
        expr=lambda: fingerprinting.risk_lower(S.n, S.d, S.r, S.eps, S.delta, fingerprinting.a_beta, q, _exponent(k)),
        source="derived: docs/methods/fingerprinting.md (Bun, Ullman & Vadhan 2014; Steinke & Ullman 2015, 2017; "
        "Kamath, Li, Singhal & Ullman 2019; Cai, Wang & Zhang 2021)",
        derivation="Observations X = (r q^{-1/k}/√d) z, z = 0 with probability 1-q, else z ∈ {±1}^d with independent "
        "coordinates of means p_j (||X|| = r q^{-1/k}, E||X||^k = r^k; k = ∞: q = 1), p_j i.i.d. Beta(a, a) on "
        "[-1, 1] (E p_j² = 1/(2a+1)); M = clipped rescaled estimate of p, α² = E||M - p||², "
        "A_i = 1{z_i≠0}<M - p, z_i - p>. (1) Score identity: E Σ_i A_i = Σ_j E[(1-p_j²) ∂_j E(M_j|p)]. "
        "(2) Integration by parts ((1-p²)π(p) has derivative -2a p π(p)) and Cauchy–Schwarz: "
        "Σ_i E A_i = 2a Σ_j E p_j M_j >= 2a d/(2a+1) - 2a sqrt(d/(2a+1)) α. (3) (ε,δ)-DP on the tails of A_i "
        "against A_i' (z_i replaced by an independent copy; E A_i' = 0, E|A_i'| <= qα), integrated over the "
        "range [-Σ(1-p_j²), Σ(1-z_ij p_j)²] (prior mean 2ad/(2a+1) each): E A_i <= q sinh(ε) α + "
        "qδ(1+e^{-ε}) 2ad/(2a+1). (4) Sum over i, solve for α, rescale by r² q^{2(k-1)/k}/d: "
        "risk >= r² q^{2(k-1)/k} d (2a/(2a+1))² [1 - nqδ(1+e^{-ε})]₊² / (nq sinh ε + 2a sqrt(d/(2a+1)))².",
        free=tuple(free))


def _fingerprint_kl_lower(k):
    """α-KL fingerprinting bound on the product prior over the cube (boundcalc.methods.fingerprinting)."""
    q, free = _fingerprint_parameters(k)
    return Bound(
        side="lower", name="fingerprinting-kl", label="fingerprinting (score attack) under KL privacy, Beta(a, a) "
        "product prior on the cube",
        expr=lambda: fingerprinting.risk_lower_kl(S.n, S.d, S.r, S.alpha, fingerprinting.a_beta, q, _exponent(k)),
        source="derived: docs/methods/fingerprinting.md, section \"KL privacy\" (the score attack of Cai, Wang & "
        "Zhang 2021 with the Donsker–Varadhan formula in place of the (ε,δ) tail step)",
        derivation="The family, prior and steps (1)-(2) of the (ε,δ) fingerprinting bound (k = ∞: z ∈ {±1}^d, "
        "X = (r/√d) z, p_j i.i.d. Beta(a, a) on [-1, 1]), with M = E[p | θ̂] the posterior mean (private by "
        "post-processing, in the box, of Bayes risk α_M² = E||M - p||² at most the estimator's in the cube's units): "
        "E[p_j M_j] = E M_j², so step (2) is the identity Σ_i E A_i = 2a Σ_j E M_j² = 2a(d/(2a+1) - α_M²). "
        "(3') Given p, E A_i = E_M <M - p, E[z_i - p | M]>; "
        "<v, z_i - p> is 1-sub-Gaussian for a unit v (Hoeffding's lemma), so by the Donsker–Varadhan formula "
        "<v, E[z_i - p | M = m]> <= sqrt(2 K(m)), K(m) the KL divergence of z_i's law given M = m from its law, and "
        "E A_i <= sqrt(2 I(z_i; M)) α_M (Cauchy–Schwarz) with I(z_i; M) <= α by convexity of KL and KL privacy. "
        "(4) 2a(d/(2a+1) - α_M²) <= n sqrt(2α) α_M, so α_M is at least the positive root 4ad/((2a+1)(sqrt(u² + K) "
        "+ u)), u = n sqrt(2α), K = 16a²d/(2a+1). Finite k: z = 0 with probability 1-q, X = (r q^{-1/k}/√d) z; "
        "given which H observations are non-zero the k = ∞ bound holds with n = H, its square is convex in H "
        "(Jensen at H = nq), and the rescaling is r² q^{2(k-1)/k}/d: risk >= r² q^{2(k-1)/k} d (4a/(2a+1))² / "
        "(sqrt(u² + K) + u)², u = nq sqrt(2α).",
        free=tuple(free))


def _base_cap_lower(privacy):
    """Sphere-cap packing whose reference is the uniform law on the sphere of radius r (d >= 2, k = ∞ family)."""
    delta = S.delta if privacy == "approx" else None
    c = sphere_cap.c_cut
    beta = sphere_cap.moved_cap_mass(S.d, c)
    rho = S.r * (beta + sphere_cap.moved_cap_first_moment(S.d, c))
    smooth = " Smooth DP implies pure DP." if privacy == "smooth" else ""
    return Bound(
        side="lower", name="sphere-cap-moved", label="sphere-cap packing, reference uniform on the sphere, far cap moved to r v",
        expr=(rho * sphere_cap.tau) ** 2 * sphere_cap.layered_failure_threshold(S.n, beta, S.eps, S.d, sphere_cap.tau,
                                                                           delta),
        source="derived: docs/methods/sphere-cap-packing.md (moved-cap family, threshold coupling)",
        derivation="Reference B = uniform law on the sphere of radius r. P_v = law of T_v(X), X ~ B, where T_v moves every "
        "point of the cap C_v = {x: <x, -v> >= c r} to r v (||T_v(X)|| = r, so P_v is in every 𝒫_k). The cap has "
        "mass β = P(<U, e> >= c) and the mean is θ_v = r (β + E[<U,e>; <U,e> >= c]) v = ρ v: each moved point "
        "travels from the far side, which gains up to the diameter 2r per changed entry. Sample D_v = T_v(B-sample) "
        "differs from the reference sample in H ~ Bin(n, β) entries (H depends on the sample), so P_v(A) <= "
        "φ(P_ref(A)), φ(a) = min_M {P(H > M) + e^{εM} a + δ(e^{εM}-1)/(e^ε-1)}, concave; V uniform on the sphere "
        "and Fubini give E_V P_ref(||θ̂ - ρV|| < ρτ') <= cap(τ'). Risk >= (ρτ)² (1/K) Σ_i (1 - φ(cap(τ√(i/K))))_+"
        " (K = 6)." + smooth,
        free=(FreeParameter(c, lambda v: CUT_LOW, lambda v: CUT_HIGH, log=False, doc="cut level c of the moved cap"),
              FreeParameter(sphere_cap.tau, lambda v: TAU_LOW, lambda v: TAU_HIGH, doc="outer relative radius τ")))


def _cap_hl_lower(privacy):
    """Orthogonal sum of the Hodges–Lehmann part (along e_1) and the tilted sphere-cap part (in e_1^⊥), d >= 2.

    Built from the k = ∞ family (||X|| <= r a.s.), which lies in every 𝒫_k: the same value for every k.
    """
    delta = S.delta if privacy == "approx" else None
    rho = S.r * S.p
    n_base = S.n * (1 - S.p)
    hl = (1 - S.p) ** 2 * S.r ** 2 / (1 + sp.sqrt(n_base)) ** 2
    cap = (rho * sphere_cap.tau) ** 2 * sphere_cap.layered_failure_min(S.n, S.p, S.eps, S.d - 1, sphere_cap.tau,
                                                                        delta)
    smooth = " Smooth DP implies pure DP." if privacy == "smooth" else ""
    return Bound(
        side="lower", name="cap-plus-hl", label="Hodges–Lehmann along e_1 plus sphere-cap packing in e_1^⊥ (sum of the two)",
        expr=hl + cap,
        source="derived: docs/methods/sphere-cap-packing.md (orthogonal sum); Hodges & Lehmann (1950)",
        derivation="Family: with probability 1-p a base draw ±r e_1 (P(+) = q), with probability p the point r v, v a unit "
        "vector orthogonal to e_1 (||X|| = r, so the law is in every 𝒫_k). Mean ((1-p) r (2q-1), p r v): the loss "
        "splits into the e_1 error L_1 and the error L_2 in e_1^⊥. Put q ~ Beta(a, a), a = sqrt(n(1-p))/2, and v "
        "uniform on the unit sphere of e_1^⊥; max risk >= E L_1 + E L_2. (1) Even knowing v and which entries are "
        "base draws (N ~ Bin(n, 1-p) of them), the Bayes risk of L_1 is (2(1-p)r)² a/(2(2a+1)(2a+N)), convex in N, "
        "so by Jensen at least (1-p)² r²/(1 + sqrt(n(1-p)))². (2) For each q, the base sample is a reference whose "
        "output law does not depend on v and the sample differs from it in H ~ Bin(n, p) entries, so the tilted "
        "sphere-cap bound holds on the (d-1)-dimensional sphere: E L_2 >= (prτ)² (1/K) Σ_i (1 - f(cap_{d-1}(τ√(i/K)))),"
        " f(a) = E min{1, e^{εH} a + δ(e^{εH}-1)/(e^ε-1)}." + smooth,
        free=(FreeParameter(S.p, *_p_range(), doc="mixture weight"),
              FreeParameter(sphere_cap.tau, lambda v: TAU_LOW, lambda v: TAU_HIGH, doc="outer relative radius τ")))


@lru_cache(maxsize=None)
def _bounds(privacy: str, k: float, d_struct: int) -> tuple:
    out = list(_upper_bounds(privacy, k))
    if d_struct == 1 and privacy in STAIRCASE_PRIVACIES:
        out.append(_staircase_upper(privacy, k))
    out += _nonprivate_lowers(k)
    if privacy != "none":
        out += _tv_lower(privacy, k)
        out += _tv_lower_symmetric(privacy, k)
        out += _two_point_bayes_lower(privacy, k)
    if privacy in ("pure", "smooth", "approx"):
        out += _uniformity_lowers(privacy, k, d_struct)
        out += _coupling_lowers(privacy, k)
        if d_struct >= 2:
            out.append(_cap_hl_lower(privacy))
            out.append(_base_cap_lower(privacy))
    if privacy == "approx":  # valid with δ = 0 under pure/smooth DP too, but there the sphere-cap bounds dominate
        out.append(_fingerprint_lower(k))
    if privacy == "kl":
        out.append(_fingerprint_kl_lower(k))
    return tuple(out)


# ------------------------------------------------------------------ rates (Table 1)

def _runnable_mechanism(problem, values, upper, bound):
    """The runnable mechanism of an upper bound (docs/methods/from-a-plan-to-data.md): the object the check runs."""
    from ._mean_check import mean_mechanism

    return mean_mechanism(values, upper, bound)


# ------------------------------------------------------------------ registration

_SHRINK_NOTE = ("Upper bounds: the estimator is (1-σ)(projected mean + noise); σ = sigma_shrink is tuned "
                "(σ = 0: no shrinkage).",)
_NOT_TIGHT_IN_D = ("The approx and tv rows of Table 1 are not tight in d: the lower-bound rate has "
                   "min{d, log(1/δ)} (approx) or no d (tv).",)
_APPROX_GAP = ("(ε,δ): the certified fingerprinting lower bound grows like d (r² d/(n sinh ε)² for k = ∞); "
               "the Gaussian upper bound has an extra log(1/δ) factor.",)


def _table1_exponent(values):
    """The exponent of Table 1's privacy terms: 2 for k = ∞, 2(k-1)/k for finite k."""
    k = float(values["k"])
    return sp.Integer(2) if math.isinf(k) else 2 * (_knum(k) - 1) / _knum(k)


@register_problem_class
class CentralMean(Problem):
    """Mean estimation with a k-th moment bound under the central privacy models (ε-LDP:
    :class:`boundcalc.problems.local_mean.LocalMean`)."""

    name = "mean"
    aliases = ("mean-estimation",)
    privacies = ("none", "pure", "smooth", "approx", "tv", "kl")
    title = "mean estimation with a k-th moment bound"
    examples = {"none": {"n": 300, "d": 3, "r": 1.0, "k": 4.0},
                "pure": {"n": 500, "d": 2, "r": 1.0, "k": 2.0, "eps": 0.5},
                "smooth": {"n": 500, "d": 1, "r": 1.0, "k": 3.0, "eps": 1.0},
                "approx": {"n": 300, "d": 2, "r": 1.0, "k": 2.0, "eps": 1.0, "delta": 1e-5},
                "tv": {"n": 500, "d": 1, "r": 1.0, "k": 2.0, "alpha": 0.2},
                "kl": {"n": 500, "d": 2, "r": 1.0, "k": 2.0, "alpha": 0.5}}
    params = PARAMS
    titles = "mean estimation, E||X||^k <= r^k, loss ||θ̂-θ||²"
    sources = SOURCE
    checks = "boundcalc.problems._mean_check:CHECK"
    mechanism = _runnable_mechanism
    notes = {"none": (), "approx": _NOT_TIGHT_IN_D + _APPROX_GAP + _SHRINK_NOTE, "tv": _NOT_TIGHT_IN_D + _SHRINK_NOTE,
             "smooth": (SMOOTH_METRIC,) + _SHRINK_NOTE, None: _SHRINK_NOTE}

    # Table 1 of Barber & Duchi, one method per privacy model: (label, term) pairs whose sum is the upper rate
    # (order only); the lower-bound rate differs for approx and tv (the gap in d)

    def rate_none(self, values):
        return [("statistical r²/n", S.r ** 2 / S.n)]

    def _rate_with(self, values, privacy_term):
        return self.rate_none(values) + [("privacy", privacy_term)]

    def rate_pure(self, values):
        return self._rate_with(values, S.r ** 2 * (S.d / (S.n * S.eps)) ** _table1_exponent(values))

    rate_smooth = rate_pure

    def rate_approx(self, values):
        return self._rate_with(values, S.r ** 2 * (S.d * sp.log(1 / S.delta) / (S.n * S.eps) ** 2)
                               ** (_table1_exponent(values) / 2))

    def rate_kl(self, values):
        return self._rate_with(values, S.r ** 2 * (S.d / (S.n ** 2 * S.alpha)) ** (_table1_exponent(values) / 2))

    def rate_tv(self, values):
        return self._rate_with(values, S.r ** 2 * (sp.sqrt(S.d) / (S.n * S.alpha)) ** _table1_exponent(values))

    def bounds(self, values):
        # the packings available depend on d (d >= 2, d >= 8): d is structural for the lower bounds
        d_struct = 8 if values["d"] >= 8 else (2 if values["d"] >= 2 else 1)
        return list(_bounds(values["privacy"], float(values["k"]), d_struct))

    def derived(self, values):
        return relations.privacy_levels(values)

    def lower_rate_none(self, values):
        return S.r ** 2 / S.n

    def _lower_rate_with(self, values, inner):
        return S.r ** 2 / S.n + S.r ** 2 * S.Min(1, inner ** _table1_exponent(values))

    def lower_rate_pure(self, values):
        return self._lower_rate_with(values, S.d / (S.n * S.eps))

    lower_rate_smooth = lower_rate_pure

    def lower_rate_approx(self, values):
        return self._lower_rate_with(values, S.Min(S.d, sp.log(1 / S.delta)) / (S.n * S.eps))

    def lower_rate_tv(self, values):
        return self._lower_rate_with(values, 1 / (S.n * S.alpha))

    def lower_rate_kl(self, values):
        return self._lower_rate_with(values, 1 / (S.n * sp.sqrt(S.alpha / 2)))
