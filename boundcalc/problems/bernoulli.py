"""The mean of {0,1} records (a Bernoulli rate), no privacy or central ε-DP (docs/problems/bernoulli.md).

Data X_1..X_n i.i.d. Bernoulli(θ), θ ∈ [0, 1], loss (θ̂ - θ)². Rate 1/(4n) + 2/(nε)² (the certified upper bound
below; the lower bounds have the same order 1/n + 1/(nε)² for ε <= 1).

Lower bounds (certified):

* ``hodges-lehmann``: the exact minimax risk without privacy, 1/(4(1+√n)²): the estimator
  (ΣX_i + √n/2)/(n + √n) has that constant risk and is Bayes for the prior Beta(√n/2, √n/2) (Hodges & Lehmann
  1950). A private estimator is an estimator, so this bounds the private minimax risk too.
* ``le-cam`` (none) and ``le-cam-tv`` (pure): the pair P_± = Bernoulli(1/2 ± h), h ∈ (0, 1/2]: means 2h apart
  (s = h, Φ(s) = h²), TV(P_+, P_-) = 2h, and the entry-wise maximal coupling differs in each entry with
  probability 2h, so TV(P_+^n, P_-^n) <= 1 - (1 - 2h)^n. Le Cam's two points (docs/methods/le-cam.md) give
  ``h²(1 - TV(M_+, M_-))/2``; without privacy TV(M_+, M_-) = TV(P_+^n, P_-^n); under ε-DP the central TV
  contraction (Barber & Duchi 2014, Theorem 2; docs/methods/tv-contraction.md) gives
  TV(M_+, M_-) <= min{2nα_TV h, 1 - (1-2h)^n} with α_TV = tanh(ε/2) (docs/methods/relations.md). Both come
  from the shared Le Cam methods (:mod:`boundcalc.methods.le_cam_methods`) applied to one
  :class:`~boundcalc.core.bounds.TwoPointFamily`. Maximising h²(1 - 2nα_TV h)/2 gives h = 1/(3nα_TV) and the
  value 1/(54 (nα_TV)²).

Upper bounds (certified):

* ``laplace`` (pure): θ̂ = clip(X̄ + Z, 0, 1), Z ~ Laplace(b), b = 1/(nε).
  Privacy: replacing one record changes X̄ = ΣX_i/n by at most 1/n (the records are in {0, 1}), so the
  Laplace mechanism with scale (1/n)/ε is ε-DP (Dwork, McSherry, Nissim & Smith 2006); clipping is
  post-processing. Risk: X̄ is unbiased with variance θ(1-θ)/n and Z is independent of it with mean 0 and
  variance 2b², so E(X̄ + Z - θ)² = θ(1-θ)/n + 2/(nε)² exactly. Clipping to [0, 1] ∋ θ is the projection onto
  a convex set that contains θ, so |clip(y) - θ| <= |y - θ| and the clipped estimate's risk is at most that.
  θ(1-θ) <= 1/4 (equality at θ = 1/2), so the maximal risk is at most 1/(4n) + 2/(nε)².
* ``sample-mean`` (none): risk θ(1-θ)/n <= 1/(4n). ``hodges-lehmann-estimator`` (none): risk 1/(4(1+√n)²) for
  every θ.
* ``constant``: θ̂ = 1/2 (uses no data): risk (1/2 - θ)² <= 1/4.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..core.bounds import Bound, CheckSpec, FreeParameter, Problem, TwoPointFamily, register_problem_class
from ..core.params import N
from ..methods import method_bounds
from ..privacy_relations import relations

SOURCE = "Le Cam two points with the central TV contraction; Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006)"
HODGES_LEHMANN = "Hodges & Lehmann (1950), exact minimax risk of a binomial proportion"

#: the TV level implied by ε-DP (a derived value: relations.privacy_levels)
alpha_tv = sp.Symbol("alpha_TV", positive=True)
#: the half-gap h of the two-point pair Bernoulli(1/2 ± h)
half_gap = sp.Symbol("h_gap", positive=True)

#: the smallest half-gap searched: 10⁻⁶/n, far below the optimum (≈ 1/(n+2) without privacy, 1/(3nα_TV) with)
H_LOW_SCALE = 1e-6
#: the largest half-gap: h = 1/2, the pair Bernoulli(0), Bernoulli(1)
H_HIGH = 0.5

#: the two-point bound per privacy model: (name, printed title, closed-form choice of h or None)
LE_CAM = {"none": ("le-cam", "Le Cam two points, coupling TV", lambda: None),
          "pure": ("le-cam-tv", "Le Cam + TV contraction (α_TV = tanh(ε/2))",
                   # maximises h²(1 - 2nα_TV h)/2; every h in (0, 1/2] gives a valid bound
                   lambda: {half_gap: S.Min(sp.Rational(1, 2), 1 / (3 * S.n * alpha_tv))})}


def two_point_family(privacy: str) -> TwoPointFamily:
    """The pair Bernoulli(1/2 ± h): what the shared Le Cam methods need of it."""
    name, title, optimum = LE_CAM[privacy]
    return TwoPointFamily(
        name=name, title=title,
        loss_at_s=half_gap ** 2, tv_one=2 * half_gap,
        tv_product=-S.expm1(S.n * S.log1p(-2 * half_gap)),  # 1 - (1-2h)^n
        source="Le Cam (1973), Barber & Duchi (2014) Theorem 2 (central TV contraction); docs/methods/le-cam.md, "
               "docs/methods/tv-contraction.md, docs/problems/bernoulli.md",
        derivation="P_± = Bernoulli(1/2 ± h): means 2h apart, so s = h and Φ(s) = h²; TV(P_+, P_-) = 2h; the "
                   "entry-wise maximal coupling differs in each entry with probability 2h, so "
                   "TV(P_+^n, P_-^n) <= 1 - (1-2h)^n. Le Cam: risk >= h²(1 - TV(M_+, M_-))/2, with "
                   "TV(M_+, M_-) <= TV(P_+^n, P_-^n) and, under ε-DP (α_TV = tanh(ε/2) TV privacy), "
                   "TV(M_+, M_-) <= min{2nα_TV h, 1 - (1-2h)^n}.",
        free=(FreeParameter(half_gap, lambda v: H_LOW_SCALE / v["n"], lambda v: H_HIGH,
                            doc="half-gap h of the pair Bernoulli(1/2 ± h)"),),
        optimum=optimum())


def hodges_lehmann(side: str) -> Bound:
    """The exact minimax risk 1/(4(1+√n)²) without privacy: a lower bound under every model, and the risk of the
    Hodges–Lehmann estimator (an upper bound without privacy)."""
    return Bound(side=side, name="hodges-lehmann" if side == "lower" else "hodges-lehmann-estimator",
                 label="exact minimax risk (Hodges–Lehmann)" if side == "lower"
                 else "Hodges–Lehmann estimator (ΣX + √n/2)/(n + √n) (no privacy)",
                 expr=1 / (4 * (1 + sp.sqrt(S.n)) ** 2), source=HODGES_LEHMANN,
                 derivation="(ΣX_i + √n/2)/(n + √n) has risk 1/(4(1+√n)²) at every θ and is the Bayes estimator "
                            "for the prior Beta(√n/2, √n/2), so 1/(4(1+√n)²) is the minimax risk without privacy; "
                            "a private estimator is an estimator, so it bounds the private minimax risk from below.")


def sample_mean() -> Bound:
    return Bound(side="upper", name="sample-mean", label="sample mean (no privacy)", expr=1 / (4 * S.n),
                 source="textbook", derivation="E(X̄ - θ)² = θ(1-θ)/n <= 1/(4n), equality at θ = 1/2.")


def laplace() -> Bound:
    return Bound(side="upper", name="laplace", label="Laplace mechanism on the mean, scale 1/(nε), clipped to [0, 1]",
                 expr=1 / (4 * S.n) + 2 / (S.n * S.eps) ** 2,
                 source="Dwork, McSherry, Nissim & Smith (2006); risk derived (docs/problems/bernoulli.md)",
                 derivation="X̄ has sensitivity 1/n (records in {0, 1}), so X̄ + Laplace(1/(nε)) is ε-DP and clipping "
                            "is post-processing. E(X̄ + Z - θ)² = θ(1-θ)/n + 2/(nε)² (X̄ unbiased, Z independent, "
                            "Var Z = 2/(nε)²); clipping to [0, 1] ∋ θ does not increase |θ̂ - θ|; θ(1-θ) <= 1/4.",
                 extra={"mechanism": "laplace"})


C_SHRINK = sp.Symbol("c_shrink", positive=True)  # θ̂ = clip(1/2 + c(X̄ + Z - 1/2), 0, 1)


def shrunk_laplace() -> Bound:
    """The Laplace mechanism's output shrunk toward 1/2 by a tuned factor c (c = 1: ``laplace``): at ε -> ∞ and
    c = √n/(1+√n) it is the Hodges–Lehmann estimator, whose risk 1/(4(1+√n)²) is the non-private minimax risk."""
    c, n = C_SHRINK, S.n
    return Bound(side="upper", name="shrunk-laplace",
                 label="Laplace mechanism on the mean, shrunk toward 1/2 by a factor c, clipped to [0, 1]",
                 expr=S.Max(c ** 2 / (4 * n), (1 - c) ** 2 / 4) + 2 * c ** 2 / (n * S.eps) ** 2,
                 source="Dwork, McSherry, Nissim & Smith (2006); shrinkage as in Hodges & Lehmann (1950); risk derived "
                        "(docs/problems/bernoulli.md)",
                 derivation="X̄ + Z, Z ~ Laplace(1/(nε)), is ε-DP (sensitivity 1/n); θ̂ = clip(1/2 + c(X̄ + Z - 1/2), 0, 1) "
                            "is post-processing. θ̂ - θ before clipping is c(X̄ - θ) + cZ - (1-c)(θ - 1/2), so with "
                            "u = (θ - 1/2)² ∈ [0, 1/4] and θ(1-θ) = 1/4 - u: E(θ̂ - θ)² <= c²/(4n) + u((1-c)² - c²/n) + "
                            "2c²/(nε)², largest at u = 0 or u = 1/4: max{c²/(4n), (1-c)²/4} + 2c²/(nε)². Clipping to "
                            "[0, 1] ∋ θ does not increase |θ̂ - θ|. c = 1 is the unshrunk Laplace bound.",
                 free=(FreeParameter(c, lambda v: 0.0, lambda v: 1.0, log=False, doc="shrinkage factor c"),),
                 optimum={c: sp.sqrt(n) / (1 + sp.sqrt(n))}, extra={"mechanism": "shrunk-laplace"})


def constant() -> Bound:
    return Bound(side="upper", name="constant", label="constant estimate 1/2 (uses no data)", expr=sp.Rational(1, 4),
                 source="trivial", derivation="(1/2 - θ)² <= 1/4 for θ ∈ [0, 1].", extra={"no_data": True})


@lru_cache(maxsize=None)
def _bounds_none() -> tuple:
    return (hodges_lehmann("lower"), *method_bounds(two_point_family("none"), "none"),
            hodges_lehmann("upper"), sample_mean(), constant())


@lru_cache(maxsize=None)
def _bounds_pure() -> tuple:
    return (hodges_lehmann("lower"), *method_bounds(two_point_family("pure"), "pure"), laplace(), shrunk_laplace(), constant())


# ------------------------------------------------------------------ simulation

_KINDS = {"sample-mean": "sample-mean", "hodges-lehmann-estimator": "hodges-lehmann", "laplace": "laplace",
          "shrunk-laplace": "shrunk-laplace", "constant": "constant"}


def bernoulli_mechanism(values, upper, bound):
    """The runnable mechanism of the upper bound ``bound`` (docs/methods/from-a-plan-to-data.md): the same object
    the check runs."""
    from ..mechanisms.central import BernoulliMean
    from ..mechanisms.runnable import CENTRAL_NEIGHBOURS, Guarantee, no_mechanism

    kind = _KINDS.get(bound.name)
    if kind is None:
        raise no_mechanism("bernoulli", values["privacy"], bound.label)
    n = int(values["n"])
    eps = float(values["eps"]) if values["privacy"] == "pure" else None
    noisy = kind in ("laplace", "shrunk-laplace")
    scale = 1.0 / (n * eps) if noisy else 0.0
    params = {"scale": scale} if noisy else {}
    shrink = float(dict(upper.free_parameters).get("c_shrink", 1.0))
    if kind == "shrunk-laplace":
        params["shrink_factor"] = shrink
    return BernoulliMean(kind=kind, scale=scale, shrink=shrink, problem="bernoulli", privacy=values["privacy"], label=bound.label,
                         parameters=params, guarantee=Guarantee(values["privacy"], eps, None, CENTRAL_NEIGHBOURS),
                         certified_risk=upper.value, n=n, bound=bound.name,
                         notes=("records must be 0 or 1",), values=values)


def check_instances(t):
    """The mechanism of the best certified upper bound at θ = 1/2 (where its bound is attained) and θ = 0.1."""
    name = t.upper.name if t.upper.name in _KINDS else "constant"
    mech = bernoulli_mechanism(t.derived, t.upper, t.bound(name))
    for theta in (0.5, 0.1):
        x = (t.rng.random((t.reps, t.n)) < theta).astype(float)
        est = mech.release_from_statistic(x.mean(axis=1), t.rng, t.reps)[:, 0]
        yield f"theta={theta:g}", (est - theta) ** 2, f"Bernoulli({theta:g})"


CHECK = CheckSpec(check_instances, (100, 316, 1000, 3162, 10000))


@register_problem_class
class Bernoulli(Problem):
    """The mean of {0,1} records, without privacy and under central ε-DP."""

    name = "bernoulli"
    aliases = ("bernoulli-mean", "bernoulli-rate")
    privacies = ("none", "pure")
    title = "Bernoulli rate: the mean θ of {0,1} records, loss (θ̂-θ)²"
    params = (N,)
    sources = SOURCE
    checks = CHECK
    examples = {"none": {"n": 300}, "pure": {"n": 400, "eps": 0.5}}

    def rate_none(self, values):
        return [("sampling 1/(4n)", 1 / (4 * S.n))]

    def rate_pure(self, values):
        return self.rate_none(values) + [("privacy 2/(nε)²", 2 / (S.n * S.eps) ** 2)]

    def bounds_none(self, values):
        return list(_bounds_none())

    def bounds_pure(self, values):
        return list(_bounds_pure())

    def derived(self, values):
        return relations.privacy_levels(values)

    def mechanism(self, values, upper, bound):
        return bernoulli_mechanism(values, upper, bound)
