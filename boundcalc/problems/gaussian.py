"""Gaussian location under ε-local differential privacy (docs/problems/gaussian.md; Barnes, Chen & Özgür Cor 1).

``X ~ N(θ, σ² I_d)``, θ ∈ [-B, B]^d (``--sigma``, ``--B``), loss ‖θ̂ - θ‖₂².

Lower bound (derived, certified): score (X-θ)/σ² has λ_max(I_X) = 1/σ² (row 1), is exactly sub-Gaussian
with proxy 1/σ² (row 2), Tr I_X = d/σ²; van Trees with the cos² prior on the whole box (J = dπ²/B²):
``sup E‖θ̂-θ‖² >= σ² d² / (n min{d, sinh²(ε/2), 2ε} + σ² d π²/B²)``. Plus the private Le Cam bound on
θ = ±h e_1: ``h²(1 - min{TVb(n, ε, 2Φ(h/σ)-1), 2Φ(√n h/σ)-1})/2``, h <= B tuned.
``van-trees-threshold`` (derived, certified; docs/methods/fisher-score-tails.md): for every unit u, σ⟨u,S⟩ is
standard normal, so ‖E[S|z]‖ <= V_ε/σ with V_ε = sup_t (e^ε-1)φ(t)/(1 + (e^ε-1)(1-Φ(t))) (the likelihood ratio
r_z ∈ [a, ae^ε] with mean 1 maximises E[G r] as a threshold function): ``σ²d²/(n min{d, V_ε²} + σ²dπ²/B²)``.

Upper bound without a log factor (derived, certified; mechanisms.local_scalar): randomized response of the
bit 1{X_j > 0}, debiased frequency clipped to [Φ(-B/σ), Φ(B/σ)], θ̂_j = σΦ^{-1}(·). Closed form
``(π/2)σ²e^{B²/σ²}coth²(ε'/2)/m`` per coordinate with m reports at level ε' (Φ^{-1} is 1/φ(B/σ)-Lipschitz on the
clip interval), or the certified exact value (binomial sums bounded on θ-cells, with shrinkage and a ladder of
report counts). In d dimensions user i reports coordinates ik..ik+k-1 (mod d) at level ε/k.
Two-stage variant (``two-stage-threshold``): a fraction α of the users localises θ by clip + one-bit (Hoeffding:
P(miss by more than σw) <= δ), the others run the threshold scheme at the projected estimate with window σw:
per coordinate ``(π/2)σ²e^{w²}coth²(ε'/2)/m2 + 4B²δ``; it does not grow with B/σ and tends to the oracle
threshold information.

Upper bound by clipping (derived, certified; a log factor above the lower bound): clip every coordinate to
[-L, L], L = B + τ, and release an unbiased ε-LDP view of the clipped vector (one-bit / Laplace in one
dimension; coordinate splitting, ℓ∞ sampling, coordinate-wise composition, Laplace composition in d
dimensions). Bias per coordinate: with ψ(t) = φ(t) - t(1-Φ(t)) = E(G - t)_+ (G standard normal),
``|E clip(X_j) - θ_j| <= max{E(X_j - L)_+, E(-L - X_j)_+} <= σ ψ(τ/σ)`` (ψ decreasing, |θ_j| <= B). So
``E‖θ̂-θ‖² <= d σ² ψ(τ/σ)² + E‖Z‖²/n`` with E‖Z‖² of the mechanism at radius L (Laplace: Var clip(X_j)
<= σ² since clipping is 1-Lipschitz). The solver picks τ ≈ σ sqrt(2 log(n ε²/d)), so the upper bound is
about ``(B/σ + sqrt(2 log(nε²/d)))²`` times the rate ``σ² d²/(nε²)``: that is the log factor.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..core.bounds import Bound, CheckSpec, FreeParameter, Problem, TwoPointFamily, register_problem_class
from ..methods import method_bounds
from ..mechanisms import local_scalar as LS
from ..mechanisms import sampling as SM
from ..methods import fisher as F
from ..methods import ldp
from ..methods import van_trees as VT
from . import per_user_reps
from ..core.params import D, N, ParamSpec

SOURCE = "Barnes, Chen & Özgür, Fisher information under local differential privacy (2020), Cor 1"
SIGMA = ParamSpec("sigma", "float", 1.0, "noise standard deviation σ", low=0, low_open=True, high=1e12)
BHALF = ParamSpec("B", "float", 1.0, "half-width B of the parameter box [-B, B]^d", low=0, low_open=True,
                  high=1e12)
PARAMS = (N, D, SIGMA, BHALF)

sigma = sp.Symbol("sigma", positive=True)
Bs = sp.Symbol("B", positive=True)
tau = sp.Symbol("tau", positive=True)

#: clip margin τ searched in [10⁻³σ, 60σ] (every τ > 0 gives a valid bound): the closed-form choice
#: σ sqrt(2 log max(e, n min(ε, 1)²/d)) is below 9.2σ for every n <= 10¹⁸, and beyond 60σ the bias σψ(τ/σ) is 0 in
#: floating point (ψ(t) <= φ(t)) while the noise keeps growing with τ
TAU_LOW_SCALE, TAU_HIGH_SCALE = 1e-3, 60.0
#: the exact split scheme searches k <= ε + 2 coordinates per user (its certified value costs a binomial sum
#: per k; the closed-form choice of the split scheme is k = ⌊ε/2⌋ + 1)
K_SPLIT_EXACT_EXTRA = 2
#: fraction α of the users in the first stage of the two-stage scheme: at most one half (the second stage does
#: the estimation), at least 10⁻⁵ (a stage with ⌊αn⌋ = 0 users gives the trivial 4dB², checked in the bound)
ALPHA_STAGE_LOW, ALPHA_STAGE_HIGH = 1e-5, 0.5
#: half-width w of the second stage's window, in units of σ: from 0.02 up to B/σ (a window wider than the box
#: is no better than the one-stage scheme), and at least up to 0.03 so that the range is never empty
W_WINDOW_LOW, W_WINDOW_HIGH_MIN = 0.02, 0.03
#: half-separation h of the two points ±h e_1, searched on a log grid from 10⁻⁹B to B: h <= B keeps both points
#: in the box, every such h gives a valid bound, and the optimum is of order min{B, σ/sqrt(n)}
H_LOW_SCALE = 1e-9


def gauss_loss_np(t):
    """ψ(t) = E(G - t)_+ = φ(t) - t(1 - Φ(t)) for t >= 0, stable (scaled erfc) for large t."""
    from scipy import special

    t = np.asarray(t, float)
    return np.exp(-t * t / 2) * (1 / math.sqrt(2 * math.pi) - t * special.erfcx(t / math.sqrt(2)) / 2)


def gauss_loss_mp(t):
    """ψ(t) = φ(t) - t(1 - Φ(t)) = e^{-t²/2}/√(2π) - t erfc(t/√2)/2 at mpmath's working precision (the
    high-precision path: ``GaussLoss`` is in :data:`boundcalc.core.symbolic.HIGH_PRECISION`).

    For t > 0 the two terms cancel: ψ(t) ~ φ(t)/t², while each term is about φ(t), so the difference loses
    2 log10(t) + 1 digits; they are computed with that many digits more (plus 10), then rounded to the working
    precision. For t <= 0 both terms are non-negative (no cancellation)."""
    import mpmath

    t = mpmath.mpf(t)
    if not mpmath.isfinite(t):
        return mpmath.mpf(0) if t > 0 else mpmath.mpf("nan")
    extra = 10 + (2 * int(mpmath.ceil(mpmath.log10(t))) if t > 1 else 0)
    with mpmath.extradps(extra):
        v = mpmath.exp(-t * t / 2) / mpmath.sqrt(2 * mpmath.pi) - t * mpmath.erfc(t / mpmath.sqrt(2)) / 2
    return +v


class GaussLoss(sp.Function):
    """``GaussLoss(t) = ψ(t) = E(G - t)_+ = φ(t) - t(1-Φ(t))`` (standard normal G); float64 through
    :func:`gauss_loss_np`, mpmath through :func:`gauss_loss_mp` (working precision)."""

    nargs = 1

    @staticmethod
    def _imp_(t):
        if hasattr(t, "_mpf_"):  # the mpmath (high-precision) path
            return gauss_loss_mp(t)
        try:
            v = gauss_loss_np(np.asarray(t, float))
        except TypeError:
            v = gauss_loss_np(float(t))
        return float(v) if np.ndim(v) == 0 else v

    def _eval_evalf(self, prec):
        import mpmath

        x = self.args[0]
        if not x.is_Number:
            return None
        with mpmath.workprec(prec):
            return sp.Float._new(gauss_loss_mp(x._to_mpmath(prec))._mpf_, prec)

    def _latex(self, printer, exp=None):
        out = rf"\psi\left({printer._print(self.args[0])}\right)"
        return out if exp is None else rf"{out}^{{{exp}}}"


S.HIGH_PRECISION.add("GaussLoss")  # gauss_loss_mp computes at mpmath's working precision


def psi_symbolic(t):
    """ψ(t) in elementary sympy functions (for the identity test)."""
    return sp.exp(-t ** 2 / 2) / sp.sqrt(2 * sp.pi) - t * sp.erfc(t / sp.sqrt(2)) / 2


# ------------------------------------------------------------------------------ bounds

def _mechanisms(d1: bool):
    L, e, d = Bs + tau, S.eps, S.d
    sm = SM.second_moments(L, e, d)
    if d1:
        return [("one-bit", "clip to [-B-τ, B+τ] + one-bit", LS.onebit_second_moment(L, e)),
                ("laplace", "clip to [-B-τ, B+τ] + Laplace(2(B+τ)/ε)", sigma ** 2 + LS.laplace_noise_second_moment(L, e))]
    return [("coordinate-splitting", "clip + one random coordinate, one-bit at level ε", sm["coordinate-splitting"]),
            ("linf-sampling", "clip + ℓ∞ sampling", sm["linf-sampling"]),
            ("coordinate-composition", "clip + every coordinate one-bit at level ε/d", sm["coordinate-composition"]),
            ("coordinate-subsampling", "clip + k random coordinates, one-bit at level ε/k",
             SM.subsampling_second_moment(L, e, d)),
            ("laplace-composition", "clip + every coordinate Laplace at level ε/d",
             d * (sigma ** 2 + LS.laplace_noise_second_moment(L, e / d)))]


def _threshold_bounds(d1: bool):
    """Threshold + randomized response (mechanisms.local_scalar), no clipping margin, no log factor."""
    n, e, d = S.n, S.eps, S.d
    how = ("Each report is randomized response of 1{X_j > 0}; p̂ = debiased frequency clipped to "
           "[Φ(-B/σ), Φ(B/σ)], θ̂_j = σΦ^{-1}(p̂). |θ̂_j - θ_j| <= σ|p̂ - p|/φ(B/σ) (Φ^{-1} is 1/φ(B/σ)-Lipschitz on "
           "the clip interval) and Var p̂ <= 1/(4m tanh²(ε'/2)): E(θ̂_j-θ_j)² <= (π/2)σ²e^{B²/σ²}coth²(ε'/2)/m, "
           "exact for every m >= 1.")
    src = SOURCE + "; docs/problems/gaussian.md (threshold scheme derived here)"
    exact = (" Exact variant: the server may use only l <= m reports (l on a ladder up to 100) and shrink θ̂ by "
             "λ ∈ [0, 1]; for each (l, λ) the sup over θ of the exact binomial-sum risk is bounded on a grid of θ-cells "
             "(w_k(p) <= w_k at the mode clipped to the cell, (g_k - θ)² <= its max at the cell ends); the best "
             "candidate (or the closed form) is used.")
    if d1:
        return [Bound(side="upper", name="threshold-rr", label="threshold at 0 + randomized response, inverse-Φ estimate",
                      expr=sigma ** 2 * LS.ThresholdRisk(n, e, Bs / sigma), source=src, derivation=how + " m = n, ε' = ε." + exact,
                      extra={"mechanism": "threshold-rr", "curve": False})]
    k = SM.k_sub
    m = sp.floor(n * k / d)

    def expr():
        return sp.Piecewise((d * LS.threshold_risk_bound(m, e / k, sigma, Bs), n * k >= d), (4 * d * Bs ** 2, True))

    return [Bound(side="upper", name="threshold-rr-split", label="threshold + randomized response, k coordinates per user at ε/k",
                  expr=expr, source=src,
                  derivation=how + " User i reports coordinates ik, ..., ik+k-1 (mod d), each at level ε' = ε/k (composition), so "
                  "every coordinate gets m >= floor(nk/d) reports; sum over the d coordinates (4dB² if some "
                  "coordinate may get none: θ̂ stays in the box).",
                  free=(FreeParameter(k, lambda v: 1, lambda v: v["d"], integer=True, doc="coordinates per user"),),
                  optimum={k: lambda: S.Max(1, S.Min(d, sp.floor(e / 2) + 1))},
                  extra={"mechanism": "threshold-rr-split"}),
            Bound(side="upper", name="threshold-rr-split-exact", label="threshold + randomized response, k coordinates per user, "
                  "exact certified risk per coordinate",
                  expr=d * sigma ** 2 * LS.ThresholdRisk(m, e / k, Bs / sigma), source=src,
                  derivation=how + " Same split (k <= ε + 2 here, to bound the cost); per coordinate the certified value of the "
                  "scheme with m = floor(nk/d) available reports." + exact,
                  free=(FreeParameter(k, lambda v: 1, lambda v: max(1, min(v["d"], math.ceil(v["eps"]) + K_SPLIT_EXACT_EXTRA)),
                                      integer=True, doc="coordinates per user"),),
                  extra={"mechanism": "threshold-rr-split-exact", "curve": False})]


alpha = sp.Symbol("alpha", positive=True)  # fraction of users in the first stage of the two-stage scheme
wwin = sp.Symbol("w", positive=True)  # half-width (in units of σ) of the second stage's window


def _two_stage_bound(d1: bool):
    """Two stages: localise, then one threshold at the estimate (derivation in the Bound's text)."""
    def expr():
        n, e, d = S.n, S.eps, S.d
        k = 1 if d1 else SM.k_sub
        ek = e / k
        n1 = sp.floor(alpha * n)
        m1 = sp.floor(n1 * k / d)
        m2 = sp.floor((n - n1) * k / d)
        L = Bs + tau
        bias = sigma * GaussLoss(tau / sigma)
        dev = S.Max(0, sigma * wwin - bias)
        delta = S.Min(1, 2 * sp.exp(-m1 * dev ** 2 / (2 * L ** 2 * LS.coth_half(ek) ** 2)))
        per = LS.threshold_risk_bound(m2, ek, sigma, sigma * wwin) + 4 * Bs ** 2 * delta
        return sp.Piecewise((d * per, sp.And(m1 >= 1, m2 >= 1)), (4 * d * Bs ** 2, True))

    free = (FreeParameter(alpha, lambda v: ALPHA_STAGE_LOW, lambda v: ALPHA_STAGE_HIGH, doc="fraction of users in stage 1"),
            FreeParameter(wwin, lambda v: W_WINDOW_LOW, lambda v: max(W_WINDOW_HIGH_MIN, v["B"] / v["sigma"]), doc="window half-width / σ"),
            FreeParameter(tau, lambda v: TAU_LOW_SCALE * v["sigma"], lambda v: TAU_HIGH_SCALE * v["sigma"], doc="stage-1 clip margin τ"))
    if not d1:
        free += (FreeParameter(SM.k_sub, lambda v: 1, lambda v: v["d"], integer=True, doc="coordinates per user"),)
    return Bound(
        side="upper", name="two-stage-threshold", label="two stages: clip + one-bit to localise, then threshold + randomized response at "
        "the estimate", expr=expr, source=SOURCE + "; docs/problems/gaussian.md (two-stage scheme derived here)",
        derivation="Users i < ⌊αn⌋ (stage 1) release clip(X_j, ±(B+τ)) by the one-bit mechanism at ε' = ε/k (k coordinates per "
        "user, as in the split scheme): each coordinate gets m1 >= ⌊⌊αn⌋k/d⌋ reports, bias <= σψ(τ/σ), reports in "
        "±(B+τ)coth(ε'/2), so (Hoeffding) P(|θ̂1_j - θ_j| > σw) <= δ = 2exp(-m1 (σw - σψ(τ/σ))²/(2(B+τ)²coth²(ε'/2))). "
        "c_j = θ̂1_j projected on [-B, B] (closer to θ_j). Stage 2 (the other users, m2 >= ⌊(n-⌊αn⌋)k/d⌋ reports): "
        "threshold + randomized response of 1{X_j > c_j}, p̂ clipped to [Φ(-w), Φ(w)], θ̂_j = c_j + σΦ^{-1}(p̂) "
        "projected on [-B, B]. Given |θ_j - c_j| <= σw the closed form of the one-stage scheme with B = σw applies; "
        "otherwise the error is at most (2B)². Per coordinate: (π/2)σ²e^{w²}coth²(ε'/2)/m2 + 4B²δ.",
        free=free, extra={"mechanism": "two-stage-threshold"})


@lru_cache(maxsize=None)
def _bounds(d1: bool, private: bool) -> tuple:
    n, e, d = S.n, S.eps, S.d
    out = []
    if private:
        for name, title, second in _mechanisms(d1):
            expr = d * sigma ** 2 * GaussLoss(tau / sigma) ** 2 + second / n
            free = (FreeParameter(tau, lambda v: TAU_LOW_SCALE * v["sigma"], lambda v: TAU_HIGH_SCALE * v["sigma"], doc="clip margin τ"),)
            opt = {tau: lambda: sigma * sp.sqrt(2 * sp.log(S.Max(sp.E, n * S.Min(e, 1) ** 2 / d)))}
            if SM.k_sub in expr.free_symbols:
                free += (FreeParameter(SM.k_sub, lambda v: 1, lambda v: v["d"], integer=True,
                                       doc="coordinates released"),)
                opt[SM.k_sub] = lambda: S.Max(1, S.Min(d, sp.floor(e / 2) + 1))
            out.append(Bound(
                side="upper", name=name, label=title, expr=expr, source=SOURCE + "; docs/problems/gaussian.md (upper bound derived here)",
                derivation="Clip each coordinate to [-L, L], L = B + τ; unbiased ε-LDP view of the clipped vector (mechanisms."
                "sampling / local_scalar). Bias per coordinate <= σψ(τ/σ), ψ(t) = φ(t) - t(1-Φ(t)) (ψ decreasing, "
                "|θ_j| <= B); MSE <= dσ²ψ(τ/σ)² + E‖Z‖²/n.",
                free=free, optimum=opt, extra={"mechanism": name}))
        out.extend(_threshold_bounds(d1))
        out.append(_two_stage_bound(d1))
        T1 = F.trace_bound(e, trace_IX=d / sigma ** 2, I0=1 / sigma ** 2, subgaussian=1 / sigma ** 2)
    else:
        out.append(Bound(side="upper", name="sample-mean", label="sample mean (no privacy)", expr=d * sigma ** 2 / n, source="textbook",
                         derivation="E‖X̄ - θ‖² = dσ²/n.", extra={"mechanism": "sample-mean"}))
        T1 = d / sigma ** 2
    out.append(Bound(side="upper", name="zero", label="the estimator θ̂ = 0 (no data)", expr=d * Bs ** 2, source="trivial",
                     derivation="‖θ‖² <= dB² on the box.", extra={"mechanism": "zero", "no_data": True}))
    out.append(Bound(
        side="lower", name="van-trees", label="van Trees, cos² prior on the box [-B, B]^d",
        expr=VT.van_trees(d, n, T1, VT.box_prior_information(Bs, d)),
        source=F.SOURCE_BCO + " Cor 1; docs/methods/van-trees.md, docs/problems/gaussian.md (derived)",
        derivation="Score (X-θ)/σ²: λ_max(I_X) = 1/σ², Tr I_X = d/σ², ⟨u,S⟩ ~ N(0, 1/σ²) is sub-Gaussian with proxy 1/σ² "
        "(tail parameters derived by sympy in methods.fisher). Tr I_Z <= min{d, sinh²(ε/2), 2ε}/σ²; van Trees with "
        "J = dπ²/B²: σ²d²/(n min{d, sinh²(ε/2), 2ε} + σ²dπ²/B²).",
        extra={"instance": "box"}))
    if private:
        out.append(Bound(
            side="lower", name="van-trees-threshold", label="van Trees, cos² prior on the box, threshold Fisher bound",
            expr=lambda: VT.van_trees(d, n, S.Min(d, F.GaussThresholdInfo(e)) / sigma ** 2, VT.box_prior_information(Bs, d)),
            source=F.SOURCE_BCO + " (Lemma 1); docs/methods/fisher-score-tails.md, docs/methods/van-trees.md, docs/problems/gaussian.md (derived)",
            derivation="Tr I_Z = E_z‖E[S r_z]‖², r_z ∈ [a, ae^ε], E r_z = 1; σ⟨u,S⟩ ~ N(0,1) for every unit u, and E[G r] "
            "over such r is largest for a threshold r (rearrangement): ‖E[S|z]‖ <= V_ε/σ, V_ε = sup_t "
            "(e^ε-1)φ(t)/(1+(e^ε-1)(1-Φ(t))). Tr I_Z <= min{d, V_ε²}/σ²; van Trees with J = dπ²/B²: "
            "σ²d²/(n min{d, V_ε²} + σ²dπ²/B²).",
            extra={"instance": "box"}))
    h = S.h
    tv1 = sp.erf(h / (sp.sqrt(2) * sigma))  # TV(N(h,σ²), N(-h,σ²)) = 2Φ(h/σ) - 1
    tvn = sp.erf(sp.sqrt(n) * h / (sp.sqrt(2) * sigma))
    out += method_bounds(TwoPointFamily(
        "le-cam", "Le Cam, θ = ±h e_1", h ** 2, tv1, tvn,
        "docs/methods/le-cam.md, docs/methods/ldp-contraction.md (derived)",
        "θ = ±h e_1 (h <= B) are 2h apart; TV(N(h,σ²),N(-h,σ²)) = 2Φ(h/σ)-1 = erf(h/(σ√2)), "
        "TV of the n-samples = erf(√n h/(σ√2)) (the mean is sufficient); private Le Cam (methods.ldp).",
        free=(FreeParameter(h, lambda v: H_LOW_SCALE * v["B"], lambda v: v["B"], doc="half-separation h"),),
        extra={"instance": "two-point"}), "local" if private else "none")
    return tuple(out)


# ------------------------------------------------------------------------------ simulation

DEFAULT_NS = (100, 316, 1000, 3162, 10000, 31623)


def _runner(t):
    """The runnable mechanism of the check's upper bound (the object bc.mechanism(...) returns; one implementation,
    :mod:`boundcalc.mechanisms.local_runnable`)."""
    from ..mechanisms.local_runnable import gaussian_mechanism

    return gaussian_mechanism({**t.values, "n": int(t.n)}, t.upper)


def _errors(t, theta, runner=None):
    """The losses ‖θ̂ - θ‖² of ``reps`` runs of the mechanism on n users with X ~ N(θ, σ²I): the threshold schemes
    draw each user's assigned coordinates only; the clipping mechanisms run user by user (privatize, estimate)."""
    from ..mechanisms.local_runnable import GaussThresholdRandomizer, ScalarRandomizer

    runner = runner or _runner(t)
    d, sg, rng = theta.size, float(t.values["sigma"]), t.rng
    if isinstance(runner, GaussThresholdRandomizer):
        dist = theta
    elif isinstance(runner, ScalarRandomizer):
        dist = lambda m: (theta + sg * rng.standard_normal((m, d)))[:, 0]  # noqa: E731
    else:
        dist = lambda m: theta + sg * rng.standard_normal((m, d))  # noqa: E731
    est = np.asarray(runner.simulate(dist, t.n, rng, t.reps), float).reshape(t.reps, -1)
    return np.sum((est - theta) ** 2, axis=1)


def _errors_two_stage(t, theta, L=None, release=None):
    """The two-stage scheme, user by user (the runnable mechanism's simulate): users i < ⌊αn⌋ release clip(X_j) by
    one-bit at ε/k, c = their mean per coordinate projected on [-B, B]; the others release randomized response of
    1{X_j > c_j} at ε/k; θ̂_j = c_j + σΦ^{-1}(clip(p̂, Φ(-w), Φ(w))) projected on [-B, B]."""
    return _errors(t, theta)


_THRESHOLD = ("threshold-rr", "threshold-rr-split", "threshold-rr-split-exact")
_TWO_STAGE = ("two-stage-threshold",)
#: the threshold bound with a closed-form per-cell risk (all reports used, no shrinkage)
_CLOSED_FORM_SPLIT = ("threshold-rr-split",)


def _same_mechanism_over_grid(t):
    """The threshold scheme at every n of the grid when it is the best at the largest n (so the fitted slope of
    the simulated risk is that of one mechanism, comparable with the slope of its bound)."""
    if t.upper is None or t.upper.name in _THRESHOLD + _TWO_STAGE:
        return t.upper  # (the two-stage bound is never forced: it is loose before its asymptotic regime)
    last = t.result_at(t.ns[-1]).upper
    if last is None or last.name not in _THRESHOLD:
        return t.upper
    same = [u for u in t.result.uppers if u.name == last.name and u.certified and math.isfinite(u.value)]
    return same[0] if same else t.upper


def check_instances(t):
    """The mechanism behind the best certified bound at the centre and at a corner of the box."""
    values, up = t.values, t.upper
    up = t.upper = _same_mechanism_over_grid(t)
    d = int(values["d"])
    B, eps = float(values["B"]), float(values["eps"])
    runner = _runner(t)
    for name, theta in (("centre", np.zeros(d)), ("corner", np.full(d, B))):
        yield name, _errors(t, theta, runner), f"θ = {name} of the box"
    if up.name in _TWO_STAGE:  # near the edge of the stage-2 window (where the closed form is attained)
        th = np.full(d, min(B, 0.5 * B + float(values["sigma"]) * float(up.free_parameters["w"])))
        yield "window-edge", _errors(t, th, runner), "θ_j = B/2 + σw"
    if up.name in _THRESHOLD and up.name not in _CLOSED_FORM_SPLIT:
        k = int(up.free_parameters.get("k_sub", 1)) if d > 1 else 1
        sg = float(values["sigma"])
        at = LS.threshold_scheme(t.n * k // d, eps / k, B / sg)[3] * sg
        if 0 < at < B:  # the θ where the certified per-coordinate risk bound is largest
            yield "worst", _errors(t, np.full(d, at), runner), f"θ_j = {at:.3g} (worst cell of the certified bound)"


CHECK = CheckSpec(check_instances, lambda v: DEFAULT_NS if int(v["d"]) == 1 else DEFAULT_NS[:4],
                  prepare=per_user_reps)


# ------------------------------------------------------------------------------ registration

@register_problem_class
class Gaussian(Problem):
    """Gaussian location in a box, non-private and under ε-LDP."""

    name = "gaussian"
    aliases = ("gaussian-location",)
    privacies = ("local", "none")
    title = "Gaussian location N(θ, σ²I_d), θ in [-B, B]^d"
    examples = {"local": {"n": 300, "d": 2, "sigma": 1.0, "B": 1.0, "eps": 2.0},
                "none": {"n": 300, "d": 3, "sigma": 2.0, "B": 1.0}}
    params = PARAMS
    titles = {"local": "Gaussian location under ε-LDP, θ ∈ [-B,B]^d, loss ||θ̂-θ||²",
              "none": "Gaussian location N(θ, σ²I_d), θ ∈ [-B,B]^d, loss ||θ̂-θ||²"}
    sources = {"local": SOURCE, "none": "textbook"}
    checks = {"local": CHECK}
    notes = {"local": ("The clipping upper bounds (at B + τ) are a log factor above the lower bound, about "
        "(B/σ + sqrt(2 log(nε²/d)))²; the threshold + randomized-response bounds have no log factor but grow "
        "like e^{B²/σ²} (one threshold at 0), so they win for B up to about 2σ; the two-stage bound (localise, then "
        "threshold at the estimate) removes both for large n.",
        "Believed loose: the lower bound in the saturated regime (n small against d: van Trees stays below "
        "dB²/π²); the upper bound for large B/σ.")}

    def rate_local(self, values):
        n, e, d = S.n, S.eps, S.d
        return [("statistical σ²d/n", sigma ** 2 * d / n),
                ("privacy σ²d²/(n min{ε², ε, d})", S.Min(d * Bs ** 2, sigma ** 2 * d ** 2 / (n * S.Min(e ** 2, e, d))))]

    def rate_none(self, values):
        return [("statistical σ²d/n", S.Min(S.d * Bs ** 2, sigma ** 2 * S.d / S.n))]

    def bounds_local(self, values):
        return list(_bounds(int(values["d"]) == 1, True))

    def mechanism_local(self, values, upper, bound):
        """The runnable randomizer of a reported upper bound (docs/methods/local-randomizers.md)."""
        from ..mechanisms.local_runnable import gaussian_mechanism

        return gaussian_mechanism(values, upper, bound)

    def bounds_none(self, values):
        return list(_bounds(int(values["d"]) == 1, False))
