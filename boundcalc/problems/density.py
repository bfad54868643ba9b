"""Density estimation: Lipschitz densities on [0,1]^d under central ε-DP (Barber & Duchi Prop 5 and the
Wasserman–Zhou histogram; docs/problems/density.md), and smooth densities on [0,1] under ε-local privacy
(Duchi, Jordan & Wainwright NeurIPS 2013 / JASA; docs/problems/density.md). Loss ∫(f̂ - f)².

Central (``--privacy none|pure``, parameters n, d, L): the family is the coordinate-wise L-Lipschitz
densities on [0,1]^d (|f(x + te_j) - f(x)| <= L|t|; contains the L-Lipschitz densities in every ℓ_p
norm). Certified upper bound: the histogram with b bins per axis (h = 1/b, m = b^d), Laplace(2/ε) on
each count (see :mod:`boundcalc.mechanisms.histogram` for the derivation of every term):

    E∫(f̂-f)² <= d L² h²/12 + (m - 1)/n + 8 m²/(nε)²,

b chosen by the integer solver; ``histogram-knorm`` / ``shrunk-histogram-knorm``: the count vector privatised by the
K-norm mechanism (Hardt & Talwar 2010) instead, noise term m²(m+1)E||U||²/(nε)² (:mod:`boundcalc.methods.knorm`);
``shrunk-histogram``: the same histogram shrunk toward f ≡ 1,
f̂ = 1 + λ(g - 1), bounded by A + BV/(B+V) with A = dL²h²/12, B = dL²(1-h²)/12, V the variance and noise
terms (λ = B/(B+V); see :mod:`boundcalc.mechanisms.histogram`): never above the uniform estimator and better
at small n. The bias constant 1/12 is sharp (attained by linear and sawtooth densities; the pointwise
bound |f - f̄_B| <= L√d h gives d L² h², 12 times larger) and the variance term's exact worst case is
(m - 1)/n (m/n is the simpler bound). Lower bounds: certified for d = 1 (``assouad-bumps``,
``two-point-linear``: see :func:`assouad_lower`); for d > 1 order only (the packing constants c_d of
Barber & Duchi Prop 5 are not explicit): n^{-2/(2+d)} + (nε)^{-2/(1+d)}.

Local (``--privacy local``, parameters n, beta, L, family, mechanism): the family is the cosine-Sobolev
ellipsoid S_β(L) = {1 + Σ c_j √2 cos(πjx) : Σ (πj)^{2β} c_j² <= L²} (``--family sobolev``); for β = 1
it is {∫f'² <= L²}, which contains the L-Lipschitz densities; ``--family lipschitz`` (β = 1 only) is
the L-Lipschitz densities themselves (histogram bias constant 1/12 instead of 1/π²). ``auto`` (default)
is lipschitz when β = 1, else sobolev. Certified upper bounds (``--mechanism`` restricts to one):

* ``hist-laplace``: each user adds Laplace(2/ε) to its one-hot bin vector:
  bias + (m-1)/n + 8m²/(nε²), bias = L²/(12m²) (lipschitz) or L²/(π^{2β} m²) (sobolev, β >= 1);
* ``hist-rr``: randomized response on each bit of the one-hot vector: bias + (m-1)/n + m² e^{ε/2}/(n(e^{ε/2}-1)²);
* ``hist-subset``: subset selection (Ye–Barg) on the m bins, the histogram shrunk toward f ≡ 1:
  A + BV/(B+V), A = bias, B = α - A (α the uniform bound below), V = (m-1)²(s + (m-s)e^{-ε})²/(n s (m-s)(1-e^{-ε})²);
* ``series-linf``: K cosine coefficients privatised by ℓ∞ sampling: L²(π(K+1))^{-2β} + 2K coth²(ε/2) C_K(ε)²/n,
  rate (nε²)^{-2β/(2β+2)};
* ``series-laplace``: Laplace on the K coefficients: L²(π(K+1))^{-2β} + (2K + 16K³/ε²)/n,
  rate (nε²)^{-2β/(2β+3)} — slower, shown for comparison (see :mod:`boundcalc.mechanisms.series`);
* ``uniform``: f̂ ≡ 1 (no data): L²/12 (lipschitz) or L²/π^{2β} (sobolev).
m and K are integers chosen by the solver. Lower bounds: certified for β = 1 (``assouad-bumps`` with the
Hellinger and χ² contractions of ε-LDP channels, ``two-point-linear``: see :func:`assouad_lower`); otherwise order only,
n^{-2β/(2β+1)} + (nε²)^{-2β/(2β+2)}.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..methods import knorm as KN
from ..core.bounds import Bound, CheckSpec, Condition, FreeParameter, Problem, register_problem_class
from ..core.errors import InputError
from ..mechanisms import histogram as H
from ..mechanisms import series as SER
from ..mechanisms.local_scalar import coth_half
from ..core.params import N, ParamSpec

SOURCE_C = "Barber & Duchi (2014) Prop 5; Wasserman & Zhou (2010) Thm 4.4 (histogram)"
SOURCE_L = "Duchi, Jordan & Wainwright (NeurIPS 2013; JASA 2018), density estimation"

D_DENS = ParamSpec("d", "int", 1, "dimension of the cube [0,1]^d", low=1, high=10)
LIP = ParamSpec("L", "float", 1.0, "smoothness radius: Lipschitz constant (central; local --family lipschitz) "
                "or Sobolev radius (local --family sobolev)", low=0, high=1e6)
BETA = ParamSpec("beta", "float", 1.0, "smoothness β of the local family (cosine-Sobolev ellipsoid)",
                 low=0, low_open=True, high=50)
FAMILY = ParamSpec("family", "choice", "auto", "local family: lipschitz (β = 1), sobolev, or auto "
                   "(lipschitz if β = 1 else sobolev)", choices=("auto", "lipschitz", "sobolev"), structural=True)
MECHANISMS_LOCAL = ("hist-laplace", "hist-rr", "hist-subset", "series-linf", "series-laplace", "uniform")
MECH = ParamSpec("mechanism", "choice", "all", "restrict the local upper bounds to one mechanism",
                 choices=("all",) + MECHANISMS_LOCAL, structural=True)
PARAMS_CENTRAL = (N, D_DENS, LIP)
PARAMS_LOCAL = (N, BETA, LIP, FAMILY, MECH)

L = sp.Symbol("L", nonnegative=True)
beta = sp.Symbol("beta", positive=True)
b = sp.Symbol("b", positive=True)  # bins per axis (central)
m = sp.Symbol("m", positive=True)  # bins (local)
K = sp.Symbol("K", positive=True)  # series terms (local)


# ------------------------------------------------------------------ certified lower bounds (d = 1)

mb = sp.Symbol("m_b", positive=True)  # number of bumps of the Assouad family (h = 1/m_b)
ub = sp.Symbol("u_b", nonnegative=True)  # slope of the bumps as a fraction of its largest allowed value
slope = sp.Symbol("s_lin", nonnegative=True)  # slope of the two-point linear pair


def triangle_wave(y):
    """ψ on [0,1]: slope ±1, ψ(0) = ψ(1/2) = ψ(1) = 0, ψ ∈ [-1/4, 1/4], ∫ψ = 0 (sympy Piecewise)."""
    return sp.Piecewise((y, y <= sp.Rational(1, 4)), (sp.Rational(1, 2) - y, y <= sp.Rational(3, 4)),
                        (y - 1, True))


def bump_pieces(slope=None):
    """(Σ_j ||φ_j||², TV per flip, Hellinger bound, h) of the triangle-wave bump family with m_b bumps of slope
    s (``slope``; L when not given).

    f_v = 1 + Σ_{j<m} v_j φ_j, φ_j(x) = s h ψ((x - jh)/h), h = 1/m, v ∈ {±1}^m. Constants (sympy-checked
    in tests/test_density_lower.py): ∫_0^1 ψ² = 1/48, ∫_0^1 |ψ| = 1/8, |ψ| <= 1/4, ψ = 0 at the bump ends,
    so f_v is continuous with slopes ±s (s-Lipschitz, hence L-Lipschitz for s <= L, and ∫f_v'² = s²) and
    f_v >= 1 - sh/4 >= 0 when sh <= 4 (s <= 4m). ||φ_j||² = s²h³/48, so Σ_j ||φ_j||² = s²h²/48. The pair
    f_v, f_v' differing in bump j has TV = ∫|φ_j| = s h²/8 and squared Hellinger H² = ½∫(√(1+φ_j) - √(1-φ_j))²
    = ∫(1 - √(1-φ_j²)) <= ∫φ_j²/(2 - φ_j²) <= (s²h³/48)/(2 - s²h²/16) (1 - √(1-x) = x/(1+√(1-x)) <= x/(2-x)).
    """
    s = L if slope is None else slope
    h = 1 / mb
    sep = s ** 2 * h ** 2 / 48
    tv = s * h ** 2 / 8
    hel = (s ** 2 * h ** 3 / 48) / (2 - s ** 2 * h ** 2 / 16)
    return sep, tv, hel, h


def bump_slope():
    """The bumps' slope s = u_b · min(L, 4 m_b), u_b ∈ [0, 1] free: every s in [0, min(L, 4m)] keeps the family
    inside the class (s <= L) and its densities non-negative (s <= 4m). Letting the solver choose s, rather
    than fixing s = L and m >= L/4, makes the bound non-decreasing in L: the bump families allowed at L are
    all allowed at any larger L (a class of L-Lipschitz densities contains the L'-Lipschitz ones, L' <= L)."""
    return ub * S.Min(L, 4 * mb)


#: derivation of the ``two-point-linear`` bound (:func:`two_point_linear_lower`, :func:`linear_pieces`)
TWO_POINT_LINEAR_DERIVATION = """
    Two-point bound with f_± = 1 ± s(x - 1/2), s <= min(L, 2) free: ||φ||² · F with F as in
    :func:`assouad_lower` (one coordinate, t = s/4, H² from :func:`linear_pieces`).
    (||φ||², TV, Hellinger bound) of the pair f_± = 1 ± φ, φ = s(x - 1/2), 0 < s <= min(L, 2) (free).

    f_± are s-Lipschitz (s <= L), positive (|φ| <= s/2 <= 1), ∫φ = 0; ||φ||² = s²/12, TV = ∫|φ| = s/4,
    H² = ∫(1 - √(1-φ²)) <= ∫φ²/(2 - φ²) <= (s²/12)/(2 - s²/4). For small n this pair keeps the lower bound
    close to the no-data risk L²/12 (attained by f̂ ≡ 1), where the bump family gives at most L²/48.
    """.strip()


def linear_pieces():
    """(||φ||², TV, Hellinger bound) of the pair f_± = 1 ± φ, φ = s(x - 1/2), 0 < s <= min(L, 2) (free).
    Derivation: :data:`TWO_POINT_LINEAR_DERIVATION`."""
    sl = slope
    return sl ** 2 / 12, sl / 4, (sl ** 2 / 12) / (2 - sl ** 2 / 4)


@S.cached_expression
def _assouad_stat_factor(hel):
    """(1 - H²)^{2n} = ρ(Pⁿ, Qⁿ)² <= 1 - Δ/2 (product Hellinger affinity ρ; Cauchy–Schwarz, see
    :mod:`boundcalc.methods.hellinger_contraction`); in stable form."""
    return sp.exp(2 * S.n * S.log1p(-hel))


#: integer search ranges are capped here (int64-safe grids); any value in range gives a valid bound, and
#: every optimum is far below it (n <= 1e18 and the optima grow like n^(1/2) at most)
RANGE_CAP = 10 ** 15
#: real-valued range ends are capped here before math.floor/int (an infinite or overflowing value would raise);
#: RANGE_CAP then applies, so the cap never binds on a range that matters
FLOAT_CAP = 1e300
#: the bump-count range evaluates e^ε with ε capped here (e^ε overflows above ε ≈ 709.8); at that ε the local
#: scale a is astronomically large and the range reaches RANGE_CAP, and the central scale εn stays far above the
#: statistical scale (nL²)^(1/3) that governs once ε is that large
M_BUMP_EPS_CAP = 700.0
#: L is floored here in the bump-count range only, so that the scales sqrt(aL), (nL²)^(1/3) stay positive; the
#: range is then at least [1, 6], and every m >= 1 gives a valid bound
M_BUMP_L_FLOOR = 1e-12
#: the pair 1 ± s(x - 1/2) is a density (non-negative on [0, 1]) exactly when s <= 2, and L-Lipschitz when s <= L
SLOPE_LINEAR_HIGH = 2.0
#: fractions u ∈ [0, 1] of the largest valid slope of the bumps (bump_slope): every u gives a valid bound
U_BUMP_LOW, U_BUMP_HIGH = 0.0, 1.0
#: subset selection on m bins keeps s ∈ [1, m-1] of them, so it needs m >= 2; the upper end is at least 3 so
#: that the integer search always has a choice above the smallest valid m
M_SUBSET_LOW, M_SUBSET_HIGH_MIN = 2, 3


def _cap(k: int) -> int:
    return int(min(k, RANGE_CAP))


def _m_bump_range(local: bool):
    def lo(v):
        return 1  # any m: the slope s <= 4m keeps the densities non-negative (bump_slope)

    def hi(v):
        n, e, Lv = float(v["n"]), min(float(v.get("eps") or 1.0), M_BUMP_EPS_CAP), max(float(v["L"]), M_BUMP_L_FLOOR)
        a = math.expm1(e) * math.sqrt(n / (math.exp(e) + 1)) if local else e * n
        return _cap(max(lo(v) + 1, math.ceil(4 * min(max(math.sqrt(a * Lv), (n * Lv ** 2) ** (1 / 3), 1.0), FLOAT_CAP)) + 2))
    return lo, hi


#: c_sech >= max_{u>0} tanh²(u)/u = 0.582582908... (attained at u = 1.08866, the root of sinh 2u = 4u), so
#: 1/cosh²(u) = 1 - tanh²(u) >= 1 - c_sech u for every u >= 0 (tests/test_density.py)
SECH2_SLOPE = sp.Rational(5826, 10000)


@S.cached_expression
def _privacy_factor(kind, tv, hel):
    stat = _assouad_stat_factor(hel)
    if kind == "none":
        return stat
    if kind == "pure":
        # E[1/cosh²(εK/2)], K ~ Bin(n, t): >= 2/(1 + e^{εnt}) (convexity, Jensen) and
        # >= 1 - (ε²/4) E K² (1/cosh² = 1 - tanh², tanh u <= u), E K² = nt(1-t) + n²t²
        # and >= 1 - c_sech (ε/2) E K = 1 - c_sech εnt/2 (tanh²(u) <= c_sech u for u >= 0, affine in K)
        second = 1 - S.eps ** 2 * (S.n * tv * (1 - tv) + (S.n * tv) ** 2) / 4
        affine = 1 - SECH2_SLOPE * S.eps * S.n * tv / 2
        return S.Max(stat, 2 / (1 + sp.exp(S.eps * S.n * tv)), second, affine)
    from ..methods.chi2_contraction import kl_bound_expr
    from ..methods.hellinger_contraction import affinity_lower_expr

    kl = kl_bound_expr(S.n, S.eps, tv)  # = 2a²t², a = (e^ε-1)sqrt(n/(e^ε+1)): Pinsker gives TV <= a t
    # per-sample H² <= min(H²_stat, h_ε t²), tensorised over sequential rounds: (1 - h)^(2n)
    return S.Max(affinity_lower_expr(S.n, S.eps, tv, hel), 1 - sp.sqrt(kl / 2))


def two_point_linear_lower(kind: str) -> Bound:
    """Two-point bound with f_± = 1 ± s(x - 1/2), s <= min(L, 2) free (docs/methods/density-assouad.md).
    Derivation: :data:`TWO_POINT_LINEAR_DERIVATION`."""
    sep, tv, hel = linear_pieces()
    return Bound(
        side="lower", name="two-point-linear", label="two points 1 ± s(x - 1/2) (saturated regime)",
        expr=sep * S.Max(0, _privacy_factor(kind, tv, hel)),
        source="Le Cam two points, squared-loss form (docs/methods/density-assouad.md)",
        derivation=TWO_POINT_LINEAR_DERIVATION,
        free=(FreeParameter(slope, lambda v: 0.0, lambda v: min(float(v["L"]), SLOPE_LINEAR_HIGH), log=False,
                            doc="slope s of the pair 1 ± s(x - 1/2)"),))


#: derivation of the bound built by :func:`assouad_lower` (its ``Bound.derivation``)
ASSOUAD_DERIVATION = """
    Reduction (squared loss, projection): with ĉ_j = <f̂ - 1, φ_j>/||φ_j||² (bumps have disjoint supports),
    ∫(f̂ - f_v)² >= Σ_j ||φ_j||² (ĉ_j - v_j)². Averaging v uniformly and fixing v_{-j}, the pair (v_{-j}, ±1)
    contributes inf_c ½[E₊(c - 1)² + E₋(c + 1)²] = ∫ 2 p₊p₋/(p₊ + p₋) = 1 - Δ/2 (Δ the triangular
    discrimination of the two laws of what the statistician sees). So sup_v risk >= (s²h²/48) · F with F a
    lower bound on 1 - Δ/2 valid for every pair (s the bumps' slope, see :func:`bump_pieces`):
    * statistical (any privacy): 1 - Δ/2 >= ρ² with ρ = 1 - H² the Hellinger affinity (Cauchy–Schwarz:
      ρ = ∫√(2pq/(p+q))·√((p+q)/2) <= √(1 - Δ/2)), ρ(Pⁿ, Qⁿ) = (1 - H²)ⁿ, so F >= (1 - H²)^{2n}
      (>= 2(1 - H²)ⁿ - 1, the form from Δ <= 4H²);
    * central ε-DP: couple the samples entry by entry (maximal coupling, Bin(n, t) changed entries,
      t = sh²/8); for two fixed samples at distance k the outputs' density ratio is within e^{±εk}, so
      2pq/(p+q) >= (p+q)·2e^{εk}/(1+e^{εk})², integrating to 1/cosh²(εk/2) >= 2/(1 + e^{εk}) (convex in k),
      and Jensen gives F >= 2/(1 + e^{εnt}); also 1/cosh²(u) = 1 - tanh²(u) >= 1 - u², so
      F >= 1 - (ε²/4) E K² = 1 - (ε²/4)(nt(1-t) + n²t²), K ~ Bin(n, t); and tanh²(u) <= c u with
      c = max_u tanh²(u)/u = 0.58258... (at u = 1.0887, sinh 2u = 4u; 0.5826 is used), so
      F >= 1 - c ε E K/2 = 1 - 0.5826 εnt/2 (this affine branch gives the best bound when εnt ≈ 1.7);
    * ε-LDP (sequential interaction allowed): 1 - Δ/2 >= ρ²(transcripts) and >= 1 - TV. The Hellinger
      contraction of an ε-LDP channel, H²(PK, QK) <= h_ε TV(P,Q)², h_ε = (e^ε-1)²/(4(e^ε+1))
      (:mod:`boundcalc.methods.hellinger_contraction`), and data processing bound every round's H² by
      h = min(H²_stat, h_ε t²) whatever the history; the affinity of the transcripts is then >= (1 - h)ⁿ,
      so F >= (1 - h)^{2n} (≈ 1 - 2n h_ε t², against 1 - 2a²t² = 1 - 8n h_ε t² through KL). With the χ²
      contraction, χ²(PK‖QK) <= 2(e^ε-1)²/(e^ε+1) TV(P,Q)², the chain rule and Pinsker, TV <= a t,
      a = (e^ε - 1) sqrt(n/(e^ε + 1)); so F >= max((1 - h)^{2n}, 1 - at).
    Mixtures over v_{-j} are handled by joint convexity (every pair has the same t and H²). The free
    parameters are the integer number of bumps m >= 1 and the slope s = u·min(L, 4m), u ∈ [0, 1]
    (:func:`bump_slope`; s <= L keeps the family in the class, s <= 4m keeps it non-negative), so the bound
    does not decrease when L grows. d = 1 only: a product construction for d > 1 is not derived here.
    """.strip()


def assouad_lower(kind: str) -> Bound:
    """Certified Assouad lower bound for L-Lipschitz densities on [0,1] (docs/methods/density-assouad.md).
    Derivation: :data:`ASSOUAD_DERIVATION`."""
    sep, tv, hel, _ = bump_pieces(bump_slope())
    factor = _privacy_factor(kind, tv, hel)
    label = {"none": "Assouad, triangle-wave bumps (Hellinger)",
             "pure": "Assouad, triangle-wave bumps, coupled DP test per flip",
             "local": "Assouad, triangle-wave bumps, Hellinger contraction under ε-LDP"}[kind]
    lo, hi = _m_bump_range(kind == "local")
    return Bound(
        side="lower", name="assouad-bumps", label=label, expr=sep * S.Max(0, factor),
        source="Assouad's lemma (Yu 1997) with triangle-wave bumps; " + (
            "Barber & Duchi (2014) Prop 1 with group privacy (central)" if kind == "pure" else
            "Hellinger and χ² contractions of ε-LDP channels (docs/methods/hellinger-contraction.md), Duchi, Jordan & "
            "Wainwright (2018) Thm 1 sharpened (local)"
            if kind == "local" else "Hellinger product bound") + " (docs/methods/density-assouad.md)",
        derivation=ASSOUAD_DERIVATION,
        free=(FreeParameter(mb, lo, hi, integer=True, doc="number of bumps m (h = 1/m)"),
              FreeParameter(ub, lambda v: U_BUMP_LOW, lambda v: U_BUMP_HIGH, log=False,
                            doc="slope of the bumps s = u·min(L, 4m), as the fraction u of its largest value")))


# ------------------------------------------------------------------ central

def central_expr(private: bool):
    h = 1 / b
    mm = b ** S.d
    expr = H.bias_lipschitz(L, S.d, h) + H.variance_term(mm, S.n)
    if private:
        expr = expr + H.central_laplace_term(mm, S.n, S.eps)
    return expr


def central_variance(private: bool):
    mm = b ** S.d
    V = H.variance_term(mm, S.n)
    return V + H.central_laplace_term(mm, S.n, S.eps) if private else V


def central_shrunk_expr(private: bool):
    """A + BV/(B+V): the (private) histogram shrunk toward f ≡ 1 (see :func:`H.shrunk_risk`), α = dL²/12."""
    return H.shrunk_risk(H.bias_lipschitz(L, S.d, 1), sp.Integer(1) / b, central_variance(private))


def b_max(v: dict) -> float:
    """Any b with (b^d - 1)/n above the b = 1 risk is worse than b = 1: the optimum is <= this."""
    e = v.get("eps")
    r1 = v["d"] * v["L"] ** 2 / 12 + (8 / (v["n"] * e) ** 2 if e is not None and v["privacy"] != "none" else 0.0)
    return _cap(math.floor(min((1 + v["n"] * r1) ** (1 / v["d"]), FLOAT_CAP)) + 1)


@S.cached_expression
def _round_pos(x):
    """A valid integer choice >= 1 near x (closed-form free-parameter choice for vectorised curves)."""
    return S.Max(1, sp.floor(x + sp.Rational(1, 2)))


@lru_cache(maxsize=None)
def _central_bounds(private: bool) -> tuple:
    up = Bound(
        side="upper", name="histogram-laplace" if private else "histogram",
        label="histogram, Laplace(2/ε) on each bin count" if private else "histogram (no privacy)",
        expr=central_expr(private), source=SOURCE_C + "; constants derived (boundcalc.mechanisms.histogram)",
        derivation="E∫(f̂-f)² = ∫(f-f̄)² + m(1-Σp_j²)/n" + (" + 8m²/(nε)²" if private else "")
        + " (orthogonal terms). Bias: Efron–Stein on each bin, each coordinate contributing "
          "½L²E(U_j-U_j')² = L²h²/12, so <= dL²h²/12 (sharp: linear/sawtooth densities). Variance: "
          "Σp_j² >= 1/m." + (" Noise: replace-one changes two counts by 1 (ℓ1 sensitivity 2), Laplace(2/ε) "
                            "per count is ε-DP with variance 8/ε², divided by (n h^d)² and integrated "
                            "over m bins of volume h^d: 8m²/(nε)²." if private else "")
        + " The constant 1/12 is sharp (the pointwise bound |f-f̄| <= L√d h gives dL²h², 12 times larger).",
        free=(FreeParameter(b, lambda v: 1, b_max, integer=True, doc="bins per axis"),),
        optimum={b: _round_pos(S.Min((L ** 2 * S.n / 6) ** (1 / (S.d + 2)),
                                      (L ** 2 * (S.n * S.eps) ** 2 / 96) ** (1 / (2 * S.d + 2)))
                                      if private else (L ** 2 * S.n / 6) ** (1 / (S.d + 2)))},
        extra={"kind": "central-histogram"})
    uni = Bound(side="upper", name="uniform", label="f̂ ≡ 1 (uses no data)", expr=H.bias_lipschitz(L, S.d, 1), source="trivial",
                derivation="∫(f - 1)² is the bias of the one-bin histogram: <= dL²/12 (sharp constant, see the histogram "
                "bias); no noise is needed because the single count is n.", extra={"no_data": True})
    lo = Bound(
        side="lower", name="order", label="packing + uniformity of mass (order only: c_d unspecified)",
        expr=S.n ** (-2 / (2 + S.d)) + ((S.n * S.eps) ** (-2 / (1 + S.d)) if private else 0),
        source=SOURCE_C, derivation="Barber & Duchi Prop 5: c_d (n^{-2/(2+d)} + (nε)^{-2/(1+d)}) with an unspecified constant c_d; "
                  "reported as a rate with constant 1.", certified=False)
    cert = (assouad_lower("pure" if private else "none"), two_point_linear_lower("pure" if private else "none"))
    cond = Condition("d = 1 (the bump family is derived for d = 1 only)", lambda v: int(v["d"]) == 1)
    cert = tuple(Bound(side=c.side, name=c.name, label=c.label, expr=c.expr, source=c.source, derivation=c.derivation, free=c.free, conditions=(cond,))
                 for c in cert)
    shr = Bound(
        side="upper", name="shrunk-histogram",
        label="histogram shrunk toward f ≡ 1" + (", Laplace(2/ε) on each bin count" if private else " (no privacy)"),
        expr=central_shrunk_expr(private), source=SOURCE_C + "; shrinkage derived (boundcalc.mechanisms.histogram)",
        derivation="f̂ = 1 + λ(g - 1), g the histogram above: E∫(f̂-f)² = ∫(f-f̄)² + (1-λ)²∫(f̄-1)² + λ²E∫(g-f̄)² "
        "(orthogonal terms). ∫(f-f̄)² <= A = dL²h²/12 and ∫(f-f̄)² + ∫(f̄-1)² = ∫(f-1)² <= dL²/12, so the bias "
        "part is <= A + (1-λ)²B, B = dL²(1-h²)/12; with V = (m-1)/n" + (" + 8m²/(nε)²" if private else "")
        + " and λ = B/(B+V): A + BV/(B+V). Never above the uniform estimator's dL²/12 nor the unshrunk bound; "
          "the linear density attains both bias terms.",
        free=(FreeParameter(b, lambda v: 1, b_max, integer=True, doc="bins per axis"),),
        optimum=up.optimum, extra={"kind": "central-histogram-shrunk"})
    return (up, uni, lo) + cert + (shr,) + (_knorm_bounds(up) if private else ())


def knorm_term(mm):
    """m²(m+1)E||U||²/(nε)²: the K-norm noise on the m counts (:mod:`boundcalc.methods.knorm`), integrated."""
    return mm ** 2 * (mm + 1) * KN.KNormSecondMoment(mm) / (S.n * S.eps) ** 2


def b_max_knorm(v: dict) -> float:
    """b_max, and at most MAX_BINS bins in all (where the K-norm constant is computed)."""
    return min(b_max(v), math.floor(KN.MAX_BINS ** (1.0 / int(v["d"])) + 1e-9))


_KNORM_WHY = ("Noise: the K-norm mechanism of Hardt & Talwar (2010) on the count vector: neighbours move it by e_i - e_j, "
              "whose hull is K = {Σx = 0, ||x||₁ <= 2}; Z = RU with R ~ Gamma(m, 1/ε) and U uniform in K is ε-DP and "
              "E||Z||² = m(m+1)E||U||²/ε², E||U||² computed exactly by splitting K by the signs of the coordinates "
              "(2/3 at m = 2, 5/6 at m = 3, 21/25 at m = 4); divided by (n h^d)² and integrated over m bins of volume "
              "h^d: m²(m+1)E||U||²/(nε)² (Laplace(2/ε) on each count gives 8m²/(nε)²).")


def _knorm_bounds(up: Bound) -> tuple:
    """The histogram and the shrunk histogram with K-norm noise instead of Laplace noise on the counts."""
    mm = b ** S.d
    free = (FreeParameter(b, lambda v: 1, b_max_knorm, integer=True, doc="bins per axis"),)
    plain = Bound(
        side="upper", name="histogram-knorm", label="histogram, K-norm noise on the count vector (Hardt–Talwar)",
        expr=H.bias_lipschitz(L, S.d, 1 / b) + H.variance_term(mm, S.n) + knorm_term(mm),
        source=SOURCE_C + "; K-norm mechanism: Hardt & Talwar (2010); constant derived (docs/problems/density.md)",
        derivation="E∫(f̂-f)² = ∫(f-f̄)² + m(1-Σp_j²)/n + noise (orthogonal terms); bias <= dL²h²/12 and variance "
        "<= (m-1)/n as for histogram-laplace. " + _KNORM_WHY,
        free=free, extra={"kind": "central-histogram-knorm"})
    shr = Bound(
        side="upper", name="shrunk-histogram-knorm",
        label="histogram shrunk toward f ≡ 1, K-norm noise on the count vector (Hardt–Talwar)",
        expr=H.shrunk_risk(H.bias_lipschitz(L, S.d, 1), sp.Integer(1) / b, H.variance_term(mm, S.n) + knorm_term(mm)),
        source=SOURCE_C + "; K-norm mechanism: Hardt & Talwar (2010); constant derived (docs/problems/density.md)",
        derivation="f̂ = 1 + λ(g - 1), g the K-norm histogram: A + BV/(B+V) as for shrunk-histogram, with V = (m-1)/n "
        "+ m²(m+1)E||U||²/(nε)². " + _KNORM_WHY,
        free=free, extra={"kind": "central-histogram-knorm-shrunk"})
    return (plain, shr)


def _central_rate(private: bool):
    out = [("statistical n^(-2/(2+d))", S.n ** (-2 / (2 + S.d)))]
    if private:
        out.append(("privacy (nε)^(-2/(1+d))", (S.n * S.eps) ** (-2 / (1 + S.d))))
    return out


# ------------------------------------------------------------------ local

def family_of(values) -> str:
    fam = values.get("family", "auto")
    if fam == "auto":
        return "lipschitz" if float(values["beta"]) == 1.0 else "sobolev"
    return fam


def _hist_bias(fam):
    return H.bias_lipschitz(L, 1, 1 / m) if fam == "lipschitz" else H.bias_sobolev(L, beta, 1 / m)


def _uniform_bias(fam):
    return L ** 2 / 12 if fam == "lipschitz" else L ** 2 / sp.pi ** (2 * beta)


def _uniform_bias_value(v, fam):
    return v["L"] ** 2 / 12 if fam == "lipschitz" else v["L"] ** 2 / math.pi ** (2 * v["beta"])


def _m_max(fam, private):
    def f(v):
        extra = 8 / v["eps"] ** 2 if private else 0.0
        return _cap(math.floor(min(1 + v["n"] * _uniform_bias_value(v, fam) + min(extra, FLOAT_CAP), FLOAT_CAP)) + 1)
    return f


def _k_max(fam):
    def f(v):
        return _cap(math.floor(min(v["n"] * _uniform_bias_value(v, fam) / 2, FLOAT_CAP)) + 1)
    return f


BETA_GE_1 = Condition("beta >= 1 (histogram bias via S_β(L) ⊂ S_1(L/π^(β-1)))", lambda v: float(v["beta"]) >= 1)


@S.cached_expression
def _local_expressions(fam: str, private: bool) -> dict:
    """The expressions of :func:`_local_bounds` by mechanism name, and ``name:opt`` the closed-form choice of its
    free parameter (a pure function of the family and the privacy; kept on disk)."""
    beta_s = sp.Integer(1) if fam == "lipschitz" else beta
    cb = sp.Rational(1, 12) if fam == "lipschitz" else sp.pi ** (-2 * beta)
    m_stat = (2 * cb * L ** 2 * S.n) ** sp.Rational(1, 3)
    k_stat = (beta_s * L ** 2 * S.n / (2 * sp.pi ** (2 * beta_s))) ** (1 / (2 * beta_s + 1))

    def m_opt(a):
        return _round_pos(S.Min(m_stat, (cb * L ** 2 * S.n / a) ** sp.Rational(1, 4)))

    def k_opt(expr_k):
        return _round_pos(S.Min(k_stat, expr_k))

    out = {}
    if private:
        out["hist-laplace"] = _hist_bias(fam) + H.variance_term(m, S.n) + H.local_laplace_term(m, S.n, S.eps)
        out["hist-laplace:opt"] = m_opt(8 / S.eps ** 2)
        out["hist-rr"] = _hist_bias(fam) + H.variance_term(m, S.n) + H.local_rr_term(m, S.n, S.eps)
        out["hist-rr:opt"] = m_opt(H.rr_variance_factor(S.eps))
        out["hist-subset"] = H.shrunk_risk(_uniform_bias(fam), 1 / m, H.subset_noise_term(m, S.n, S.eps))
        out["hist-subset:opt"] = S.Max(2, _round_pos(S.Min(m_stat, (cb * L ** 2 * S.n / (
            4 * sp.exp(-S.eps) / S.expm1(-S.eps) ** 2)) ** sp.Rational(1, 4))))
        out["series-linf"] = SER.tail_bias(L, beta_s, K) + SER.linf_variance(K, S.n, S.eps)
        out["series-linf:opt"] = k_opt((beta_s * L ** 2 * S.n / (sp.pi ** (2 * beta_s + 1) * coth_half(S.eps) ** 2))
                                       ** (1 / (2 * beta_s + 2)))
        out["series-laplace"] = SER.tail_bias(L, beta_s, K) + SER.laplace_variance(K, S.n, S.eps)
        out["series-laplace:opt"] = k_opt((beta_s * L ** 2 * S.eps ** 2 * S.n / (24 * sp.pi ** (2 * beta_s)))
                                          ** (1 / (2 * beta_s + 3)))
    else:
        out["hist-laplace"] = _hist_bias(fam) + H.variance_term(m, S.n)
        out["hist-laplace:opt"] = _round_pos(m_stat)
        out["series-linf"] = SER.tail_bias(L, beta_s, K) + 2 * K / S.n
        out["series-linf:opt"] = _round_pos(k_stat)
    out["uniform"] = _uniform_bias(fam)
    return out


@lru_cache(maxsize=None)
def _local_bounds(fam: str, private: bool, mech: str) -> tuple:
    out = []
    hist_bias_txt = ("L²h²/12 per bin-average (Lipschitz: Var g(U) = ½E(g(U)-g(U'))² <= L²h²/12)"
                     if fam == "lipschitz" else
                     "L²h²/π^{2β} (Poincaré–Wirtinger (h/π)²∫f'² per bin, ∫f'² <= L²/π^{2β-2} on S_β(L))")
    series_bias_txt = ("Σ_{j>K} c_j² <= L²(π(K+1))^{-2β} (Parseval; the ellipsoid)"
                       + (" — L-Lipschitz densities lie in S_1(L) (∫f'² <= L²)" if fam == "lipschitz" else ""))
    conds = () if fam == "lipschitz" else (BETA_GE_1,)
    hist_free = (FreeParameter(m, lambda v: 1, _m_max(fam, private), integer=True, doc="number of bins"),)
    k_free = (FreeParameter(K, lambda v: 1, _k_max(fam), integer=True, doc="number of cosine terms"),)
    src = SOURCE_L + "; constants derived (boundcalc.mechanisms.histogram / series)"
    X = _local_expressions(fam, private)
    optima = {
        "hist-laplace": {m: X["hist-laplace:opt"]},
        "hist-rr": {m: X["hist-rr:opt"]} if private else None,
        "series-linf": {K: X["series-linf:opt"]},
        "series-laplace": {K: X["series-laplace:opt"]} if private else None,
        "hist-subset": {m: X["hist-subset:opt"]} if private else None,
        "uniform": None,
    }
    cands = []
    if private:
        cands += [
            ("hist-laplace", "histogram, each user adds Laplace(2/ε) to its one-hot vector",
             X["hist-laplace"],
             f"bias {hist_bias_txt}; sampling variance m(1-Σp²)/n <= (m-1)/n; noise: one-hot vectors differ by 2 "
             "in ℓ1, Laplace(2/ε) per coordinate is ε-LDP, n users' noise has variance 8n/ε² per bin: 8m²/(nε²).",
             hist_free, conds),
            ("hist-rr", "histogram, randomized response on each bit of the one-hot vector",
             X["hist-rr"],
             f"bias {hist_bias_txt}; sampling variance <= (m-1)/n; each bit flipped w.p. q = 1/(1+e^(ε/2)) "
             "(two bits differ: ratio ((1-q)/q)² = e^ε), debiased (Y-q)/(1-2q) has noise variance "
             "q(1-q)/(1-2q)² = e^(ε/2)/(e^(ε/2)-1)² per bin and user: m² e^(ε/2)/(n(e^(ε/2)-1)²).",
             hist_free, conds),
            ("hist-subset", "histogram, subset selection on the bins, shrunk toward f ≡ 1",
             X["hist-subset"],
             f"f̂ = 1 + λ(g - 1), g = m p̂ on the bins, p̂ the subset-selection estimate of the bin probabilities "
             f"(Ye–Barg; s = ⌊m/(e^ε+1)⌋ or ⌈m/(e^ε+1)⌉ in [1, m-1]). Orthogonal terms: ∫(f-f̄)² + (1-λ)²∫(f̄-1)² "
             f"+ λ² m E‖p̂-p‖²; bias {hist_bias_txt} = A, ∫(f-1)² <= α (the one-bin bias), so the first two are "
             "<= A + (1-λ)²B, B = α - A; m E‖p̂-p‖² <= V = (m-1)²(s + (m-s)e^(-ε))²/(n s (m-s)(1-e^(-ε))²) "
             "(subset selection's p-free second moment minus ‖p‖² >= 1/m); λ = B/(B+V) gives A + BV/(B+V).",
             (FreeParameter(m, lambda v: M_SUBSET_LOW, lambda v: max(M_SUBSET_HIGH_MIN, _m_max(fam, True)(v)), integer=True,
                            doc="number of bins"),), conds),
            ("series-linf", "cosine series, coefficients privatised by ℓ∞ sampling",
             X["series-linf"],
             f"bias {series_bias_txt}; variance (E||Z||² - ||c||²)/n <= K B²/n, B = √2 coth(ε/2) C_K(ε) "
             "(ℓ∞ sampling of v = (√2 cos(πjX))_j ∈ [-√2,√2]^K, unbiased and ε-LDP; docs/problems/mean.md).",
             k_free, ()),
            ("series-laplace", "cosine series, Laplace noise on the coefficients (slower rate)",
             X["series-laplace"],
             f"bias {series_bias_txt}; ℓ1 sensitivity of v is <= 2√2K, Laplace(2√2K/ε) per coefficient "
             "(variance 16K²/ε²) plus Var φ_j(X) <= 2: (2K + 16K³/ε²)/n. Rate (nε²)^(-2β/(2β+3)).",
             k_free, ()),
        ]
    else:
        cands += [
            ("hist-laplace", "histogram (no privacy)", X["hist-laplace"],
             f"bias {hist_bias_txt}; sampling variance <= (m-1)/n.", hist_free, conds),
            ("series-linf", "cosine series (no privacy)", X["series-linf"],
             f"bias {series_bias_txt}; Var φ_j(X) <= 2.", k_free, ()),
        ]
    cands.append(("uniform", "f̂ ≡ 1 (uses no data)", X["uniform"],
                  "∫(f-1)² = Σ c_j² <= L²/π^{2β} (sobolev) or the b = 1 histogram bias L²/12 (lipschitz).", (), ()))
    for name, label, expr, why, free, cnd in cands:
        if mech not in ("all", name) and private:
            continue
        out.append(Bound(side="upper", name=name, label=label, expr=expr, source=src, derivation=why, free=free, conditions=cnd,
                         optimum=optima[name], extra={"kind": name, "family": fam, "no_data": name == "uniform"}))
    lb = assouad_lower("local" if private else "none")
    beta1 = () if fam == "lipschitz" else (Condition("beta = 1 (the bumps are L-Lipschitz: in S_1(L), not S_β)",
                                                     lambda v: float(v["beta"]) == 1.0),)
    out.append(Bound(side=lb.side, name=lb.name, label=lb.label, expr=lb.expr, source=lb.source, derivation=lb.derivation, free=lb.free, conditions=beta1))
    lb = two_point_linear_lower("local" if private else "none")
    out.append(Bound(side=lb.side, name=lb.name, label=lb.label, expr=lb.expr, source=lb.source, derivation=lb.derivation, free=lb.free, conditions=beta1))
    out.append(Bound(
        side="lower", name="order", label="local Fano / Assouad (order only)",
        expr=S.n ** (-2 * beta / (2 * beta + 1)) + ((S.n * S.eps ** 2) ** (-2 * beta / (2 * beta + 2)) if private else 0),
        source=SOURCE_L, derivation="DJW: c_β (n ε²)^{-2β/(2β+2)} with an unspecified constant; reported as a rate with constant 1.",
        certified=False))
    return tuple(out)


def _local_rate(private: bool):
    out = [("statistical n^(-2β/(2β+1))", S.n ** (-2 * beta / (2 * beta + 1)))]
    if private:
        out.append(("privacy (nε²)^(-2β/(2β+2))", (S.n * S.eps ** 2) ** (-2 * beta / (2 * beta + 2))))
    return out


# ------------------------------------------------------------------ simulation

DEFAULT_NS_CENTRAL = (100, 316, 1000, 3162, 10000, 31623)
DEFAULT_NS_LOCAL = (1000, 3162, 10000, 31623, 100000)
MAX_BINS = 200_000


def _additive_instance(g_bins, int_g2, d, h):
    """Bin probabilities and ∫f² of f = 1 + Σ_j g(x_j) (∫g = 0) from the 1-D bin integrals of g."""
    bdim = len(g_bins)
    p = np.full((bdim,) * d, h ** d)
    for j in range(d):
        shape = [1] * d
        shape[j] = bdim
        p = p + h ** (d - 1) * np.asarray(g_bins).reshape(shape)
    return p.reshape(-1), 1.0 + d * int_g2


def cos_instance(amp, freq, bins):
    """g(x) = amp √2 cos(π freq x): 1-D bin integrals on `bins` equal bins, and ∫g² = amp²."""
    e = np.arange(bins + 1) / bins
    gi = amp * math.sqrt(2) * np.diff(np.sin(math.pi * freq * e)) / (math.pi * freq)
    return gi, amp ** 2


def sawtooth_instance(slope, bins):
    """g = slope (dist(x, 2hℤ) - h/2), h = 1/bins: linear with slope ±slope on every bin, bin integrals 0,
    ∫g² = slope² h²/12: the extremal density of the bias bound."""
    h = 1.0 / bins
    return np.zeros(bins), slope ** 2 * h ** 2 / 12


def linear_instance(slope, bins):
    """g = slope (x - 1/2): 1-D bin integrals on `bins` equal bins and ∫g² = slope²/12 (attains both bias
    terms of the shrunk histogram: ∫(f - f̄)² = slope² h²/12 and ∫(f - 1)² = slope²/12)."""
    h = 1.0 / bins
    centres = (np.arange(bins) + 0.5) * h
    return slope * h * (centres - 0.5), slope ** 2 / 12


def shrink_factor(alpha: float, h: float, V: float) -> float:
    """λ = B/(B+V), B = α(1 - h²): the shrinkage weight behind :func:`H.shrunk_risk` (float)."""
    B = alpha * (1 - h * h)
    return B / (B + V) if B + V > 0 else 0.0


#: bound name -> (Laplace noise on the counts?, shrunk toward f ≡ 1?) of the central histograms (default: noisy,
#: not shrunk; without privacy there is no noise whatever the bound)
CENTRAL_HISTOGRAMS = {"uniform": (False, False), "shrunk-histogram": (True, True), "shrunk-histogram-knorm": (True, True)}


#: the central upper bounds whose mechanism :func:`density_central_mechanism` builds (Laplace noise on the counts)
#: bound name -> the noise its mechanism adds to the count vector (default: Laplace(2/ε) on each count)
CENTRAL_HISTOGRAM_NOISE = {"histogram-knorm": "knorm", "shrunk-histogram-knorm": "knorm"}

#: noise -> (ε² E||noise||² on the m counts, its description): Laplace(2/ε) on each count (8m/ε²), or the K-norm
#: noise (m(m+1)E||U||²/ε², :mod:`boundcalc.methods.knorm`)
COUNT_NOISE = {"laplace": (lambda mm: 8 * mm, "Laplace(2/eps) per count"),
               "knorm": (lambda mm: mm * KN.noise_factor(mm), "K-norm (Hardt-Talwar) on the count vector, level eps")}

CENTRAL_MECHANISM_BOUNDS = frozenset({"histogram", "histogram-laplace", "uniform", "shrunk-histogram",
                                      "histogram-knorm", "shrunk-histogram-knorm"})


def density_central_mechanism(values, upper, bound):
    """The runnable mechanism of a central upper bound (docs/methods/from-a-plan-to-data.md): the histogram at the
    solver's bin count, Laplace(2/ε) per count when private, shrunk toward f ≡ 1 for ``shrunk-histogram``; the same
    object the check runs."""
    from ..mechanisms.central import CentralHistogram
    from ..mechanisms.runnable import CENTRAL_NEIGHBOURS, Guarantee

    n, d, Lv, priv = int(values["n"]), int(values["d"]), float(values["L"]), values["privacy"]
    if bound.name not in CENTRAL_MECHANISM_BOUNDS:
        from ..mechanisms.runnable import no_mechanism

        raise no_mechanism("density", priv, bound.label)
    bins = int(upper.free_parameters.get("b", 1))
    h = 1.0 / bins
    mm = bins ** d
    noisy, shrunk = CENTRAL_HISTOGRAMS.get(bound.name, (True, False))
    eps = float(values["eps"]) if priv != "none" and noisy else None
    noise = CENTRAL_HISTOGRAM_NOISE.get(bound.name, "laplace")
    noise2 = 0.0 if not eps else COUNT_NOISE[noise][0](mm) / eps ** 2  # E||noise||² of the counts
    lam = 1.0
    if shrunk:
        V = (mm - 1) / n + mm * noise2 / n ** 2
        lam = shrink_factor(d * Lv ** 2 / 12, h, V)
    params = {"bins": bins}
    if eps is not None:
        params["noise"] = COUNT_NOISE[noise][1]
    if shrunk:
        params["shrink"] = lam
    g = Guarantee(priv, float(values["eps"]) if priv != "none" else None, None, CENTRAL_NEIGHBOURS)
    return CentralHistogram(d=d, bins=bins, eps=eps, shrink=lam, noise=noise, problem="density", privacy=priv,
                            label=bound.label,
                            parameters=params, guarantee=g, certified_risk=upper.value, n=n, bound=bound.name,
                            values=values,
                            notes=("records outside [0, 1]^d are clamped onto it before binning",
                                   f"the output is the density's height on each of the {bins}^{d} bins"))


def check_central_instances(t):
    """ISE of the (private) histogram — shrunk toward f ≡ 1 when the best bound is ``shrunk-histogram`` —
    at the solver's b on a smooth density (additive cosine), on the extremal sawtooth of the bin width
    (linear with slope ±L on every bin: attains the bias bound) and on a linear density (attains both bias
    terms of the shrunk bound): the runnable mechanism object on multinomial bin counts."""
    values, n, reps, rng, res = t.values, t.n, t.reps, t.rng, t.result
    d, Lv = int(values["d"]), float(values["L"])
    bins = int(res.upper.free_parameters.get("b", 1))
    if bins ** d > MAX_BINS:
        t.notes.append(f"n={n}: {bins}^{d} bins exceed the simulation budget; row skipped")
        return
    h = 1.0 / bins
    mm = bins ** d
    mech = density_central_mechanism(t.derived, res.upper, t.bound(res.upper.name))
    eps, lam = mech.eps, mech.shrink
    noise2 = 0.0 if not eps else COUNT_NOISE[mech.noise][0](mm) / eps ** 2  # E||noise||² of the counts
    amp = min(Lv / math.pi, 0.9 / d) / math.sqrt(2)
    slope = min(Lv, 1.0 / (d * h))
    lin = min(Lv, 1.8 / d)
    for name, (gb, ig2), desc in (
            ("smooth", cos_instance(amp, 1, bins), f"1 + Σ_j {amp * math.sqrt(2):.3g} cos(π x_j)"),
            ("sawtooth", sawtooth_instance(slope, bins),
             f"1 + {slope:.3g} Σ_j (dist(x_j, 2hℤ) - h/2), h = 1/{bins}: the extremal bias"),
            ("linear", linear_instance(lin, bins), f"1 + {lin:.3g} Σ_j (x_j - 1/2)")):
        p, if2 = _additive_instance(gb, ig2, d, h)
        p = np.clip(p, 0, None)
        p = p / p.sum()
        fh = mech.release_from_statistic(rng.multinomial(n, p, size=reps).astype(float), rng, reps)
        err = h ** d * np.sum(fh ** 2, axis=1) - 2 * fh @ np.asarray(p, float) + if2  # ∫(f̂ - f)², exact given f̂
        var_p = float(np.sum(p * (1 - p)) / n + noise2 / n ** 2)
        exact = H.exact_risk_shrunk(p, if2, n, lam, var_p)
        yield name, err, desc + (f" (λ = {lam:.3g})" if lam != 1.0 else ""), exact


CHECK_CENTRAL = CheckSpec(check_central_instances, DEFAULT_NS_CENTRAL)


def sample_cos_density(rng, amp, freq, size):
    """Exact draws from f = 1 + amp √2 cos(π freq x) on [0,1] by rejection (f <= 1 + √2 amp)."""
    fmax = 1 + math.sqrt(2) * abs(amp)
    total = int(np.prod(size))
    out = np.empty(0)
    while out.size < total:
        k = int((total - out.size) * fmax * 1.1) + 16
        x = rng.random(k)
        keep = rng.random(k) * fmax < 1 + amp * math.sqrt(2) * np.cos(math.pi * freq * x)
        out = np.concatenate([out, x[keep]])
    return out[:total].reshape(size)


def _rr_count_variance(eps):
    q = H.rr_flip_probability(eps)
    return q * (1 - q) / (1 - 2 * q) ** 2


def _normalised(gb, ig2, h):
    """The bin probabilities and ∫f² of an additive instance."""
    p, if2 = _additive_instance(gb, ig2, 1, h)
    p = np.clip(p, 0, None)
    return p / p.sum(), if2


def _counts_channel(noise_variance):
    """Histogram from privatised bin indicators (Laplace or randomized response on each bin), simulated
    from the channel's counts; ``noise_variance(ε)``: one user's privatised indicator variance (the exact
    risk's noise term / n)."""
    def run(t, runner, insts, bins, h, fam):
        n, eps = t.n, float(t.values["eps"])
        for name, (gb, ig2), desc in insts:
            p, if2 = _normalised(gb, ig2, h)
            heights = runner.simulate(p, n, t.rng, t.reps)  # the runnable mechanism's exact-law fast path
            yield name, H.ise(heights * (n * h), p, if2, n, h), desc, H.exact_risk(p, if2, n, n * noise_variance(eps), h)
    return run


def _flat_channel(t, runner, insts, bins, h, fam):
    """f̂ ≡ 1 (no data): the ISE is ∫f² - 1 exactly."""
    for name, (gb, ig2), desc in insts:
        p, if2 = _normalised(gb, ig2, h)
        yield name, np.full(t.reps, if2 - 1.0), desc, H.exact_risk(p, if2, t.n, 0.0, h)


def _subset_channel(t, runner, insts, bins, h, fam):
    """f̂ = 1 + λ(m p̂ - 1), p̂ from n users' subsets (subset selection on the bins, simulated user by
    user), on the given instances plus a linear density (both bias terms) for the Lipschitz family."""
    values, n, eps = t.values, t.n, float(t.values["eps"])
    if fam == "lipschitz":
        lin = min(float(values["L"]), 1.8)
        insts = insts + [("linear", linear_instance(lin, bins), f"1 + {lin:.3g}(x - 1/2): both bias terms")]
    s_sub, lam = runner.inner.s, runner.lam
    c_s = H.subset_second_moment(bins, eps, s_sub)
    for name, (gb, ig2), desc in insts:
        p, if2 = _normalised(gb, ig2, h)
        heights = runner.simulate(p, n, t.rng, t.reps)  # f̂ = 1 + λ(m p̂ - 1), the runnable mechanism
        err = H.ise(n * h * heights, p, if2, n, h)
        exact = H.exact_risk_shrunk(p, if2, n, lam, (c_s - float(np.sum(p ** 2))) / n)
        yield name, err, desc + f" (s = {s_sub}, λ = {lam:.3g})", exact


#: histogram channel -> how its estimates are simulated
HISTOGRAM_CHANNELS = {"laplace": _counts_channel(lambda eps: 8 / eps ** 2), "rr": _counts_channel(_rr_count_variance),
                      None: _flat_channel, "subset": _subset_channel}
#: bound name -> (estimator shape, privatising channel) of each local mechanism simulated
LOCAL_MECHANISMS = {"hist-laplace": ("histogram", "laplace"), "hist-rr": ("histogram", "rr"),
                    "uniform": ("histogram", None), "series-linf": ("series", "linf"),
                    "series-laplace": ("series", "laplace"), "hist-subset": ("histogram", "subset")}


def check_local_instances(t):
    """ISE of the mechanism behind the best certified local bound (or ``--mechanism``) at the solver's
    m or K, on a smooth density (one low cosine) and on the extremal density of that bound's bias term
    (the cosine at the first dropped frequency K+1 for the series; the half-period-per-bin cosine, or the
    sawtooth for the Lipschitz family, for the histogram)."""
    values, n, reps, rng, up, notes = t.values, t.n, t.reps, t.rng, t.upper, t.notes
    Lv, bv, eps = float(values["L"]), float(values["beta"]), float(values["eps"])
    fam = family_of(values)
    budget = 5e6
    shape, channel = LOCAL_MECHANISMS[up.name]
    # the runnable mechanism of the reported upper bound (the object bc.mechanism(...) returns): one implementation
    runner = mechanism_local({**values, "n": int(n)}, up)
    smooth_amp = min(Lv / (math.sqrt(2) * math.pi ** bv), 0.5)
    if shape == "histogram":
        bins = int(up.free_parameters.get("m", 1))
        h = 1.0 / bins
        if fam == "lipschitz":
            hard = ("sawtooth", sawtooth_instance(min(Lv, 1 / h), bins), "sawtooth of the bin width (extremal)")
        else:
            a = min(Lv / (math.pi * bins) ** bv, 1 / math.sqrt(2))
            hard = ("cos-bin", cos_instance(a, bins, bins), f"1 + {a * math.sqrt(2):.3g} cos(π m x): half a period per bin")
        insts = [("smooth", cos_instance(smooth_amp, 1, bins), f"1 + {smooth_amp * math.sqrt(2):.3g} cos(π x)"), hard]
        yield from HISTOGRAM_CHANNELS[channel](t, runner, insts, bins, h, fam)
    else:
        Kt = int(up.free_parameters["K"])
        beta_s = 1.0 if fam == "lipschitz" else bv
        a_hard = Lv / (math.pi * (Kt + 1)) ** beta_s / (math.sqrt(2) if fam == "lipschitz" else 1.0)
        a_hard = min(a_hard, 1 / math.sqrt(2))
        r_eff = max(1, min(reps, int(budget // (n * Kt))))
        if r_eff < reps and not notes:
            notes.append(f"series rows use at most {budget:.0e} privatised coordinates: reps reduced where n*K is large")
        for name, amp, freq, desc in (("smooth", smooth_amp, 1, f"1 + {smooth_amp * math.sqrt(2):.3g} cos(π x)"),
                                      ("cos-K+1", a_hard, Kt + 1,
                                       f"1 + {a_hard * math.sqrt(2):.3g} cos(π (K+1) x): attains the tail bound")):
            chat = runner.simulate(lambda size: sample_cos_density(rng, amp, freq, size), n, rng, r_eff)
            c_true = np.zeros(Kt)
            if freq <= Kt:
                c_true[freq - 1] = amp
            tail = amp ** 2 if freq > Kt else 0.0
            err = np.sum((chat - c_true) ** 2, axis=1) + tail
            yield name, err, desc + f" (reps={r_eff})"


def mechanism_local(values: dict, upper, bound=None):
    """The runnable randomizer of a reported local upper bound (:mod:`boundcalc.mechanisms.local_runnable`;
    docs/methods/local-randomizers.md); the subset-selection histogram's shrinkage λ = B/(B+V) of the bound."""
    from ..mechanisms.local_runnable import density_local_mechanism

    alpha = _uniform_bias_value(values, family_of(values))
    return density_local_mechanism(values, upper, bound, shrink=lambda m, V: shrink_factor(alpha, 1.0 / m, V))


CHECK_LOCAL = CheckSpec(check_local_instances, DEFAULT_NS_LOCAL)


@register_problem_class
class Density(Problem):
    """Density estimation: Lipschitz densities on [0,1]^d under central privacy, Sobolev densities on [0,1]
    under ε-LDP."""

    name = "density"
    aliases = ("density-estimation",)
    privacies = ("none", "pure", "local")
    title = "density estimation, loss integrated squared error"
    # d = 1 in the central examples: the certified lower bounds are for d = 1
    examples = {"none": {"n": 400, "d": 1, "L": 2.0},
                "pure": {"n": 400, "d": 1, "L": 1.0, "eps": 0.5},
                "local": {"n": 400, "beta": 1.0, "L": 1.0, "eps": 1.0}}
    params = {"local": PARAMS_LOCAL, None: PARAMS_CENTRAL}
    titles = {"local": "smooth densities on [0,1] (cosine-Sobolev S_β(L); L-Lipschitz for β = 1), ε-LDP, "
                       "loss ∫(f̂-f)²",
              None: "coordinate-wise L-Lipschitz densities on [0,1]^d, central privacy, loss ∫(f̂-f)²"}
    sources = {"local": SOURCE_L, None: SOURCE_C}
    checks = {"local": CHECK_LOCAL, None: CHECK_CENTRAL}
    notes = {None: (
        "Certified lower bound for d = 1 (Assouad with triangle-wave bumps, docs/methods/density-assouad.md); "
        "for d > 1 the lower bound is order only (Barber & Duchi Prop 5's packing constant c_d is not explicit).",
        "Histogram bias constant derived: dL²h²/12 (sharp; the pointwise Lipschitz bound gives dL²h²); variance (m-1)/n."),
             "local": (
        "Certified lower bound for β = 1 (Assouad with triangle-wave bumps and the Hellinger contraction of ε-LDP "
        "channels, docs/methods/density-assouad.md); for β != 1 the lower bound is order only.",
        "Laplace noise on the series coefficients has rate (nε²)^(-2β/(2β+3)), slower than ℓ∞ sampling's "
        "(nε²)^(-2β/(2β+2)): compare the series-laplace and series-linf upper bounds.")}

    def rate_local(self, values):
        return _local_rate(True)

    def mechanism_local(self, values, upper, bound):
        """The runnable randomizer of a reported local upper bound (docs/methods/local-randomizers.md)."""
        return mechanism_local(values, upper, bound)

    def rate_none(self, values):
        # the non-private comparison of a local query (api.rate asks the 'none' entry with the local values)
        return _local_rate(False) if "beta" in values else _central_rate(False)

    def rate_pure(self, values):
        return _central_rate(True)

    def bounds_local(self, values):
        return list(_local_bounds(family_of(values), True, values.get("mechanism", "all")))

    def bounds_none(self, values):
        if "beta" in values:  # the non-private comparison of a local query (api.rate asks the 'none' entry)
            return list(_local_bounds(family_of(values), False, "all"))
        return list(_central_bounds(False))

    def bounds_pure(self, values):
        return list(_central_bounds(True))

    # the runnable mechanisms of the central bounds (docs/methods/from-a-plan-to-data.md)
    def mechanism_pure(self, values, upper, bound):
        return density_central_mechanism(values, upper, bound)

    mechanism_none = mechanism_pure

    def validate_local(self, values):
        fam = values.get("family", "auto")
        if fam == "lipschitz" and float(values["beta"]) != 1.0:
            raise InputError("family", "lipschitz needs --beta 1 (use --family sobolev for other β)", fam)
