"""Simulation check of central mean estimation (docs/problems/mean.md, hard instances).

The mechanism is the one behind the best certified upper bound at each n, run at the solver's
truncation radius T: θ̂ = (1/n) Σ π_T(X_i) + W. Instances:

- the hard mixture of the best lower bound: (1-p)δ_0 + p δ_{r p^{-1/k} e_1} at the solver's p
  (mass p far out, where truncation bias bites), and its mirror image;
- mass 1/2 at ±r e_1 (the worst case of the Hodges–Lehmann sub-family);
- the point mass at r e_1 (the largest ||θ|| in the class: the worst case of θ̂ = 0 and of truncation);
- a benign law: Gaussian scaled to E||X||^k = r^k (uniform on the sphere of radius r when k = ∞).

Discrete instances are simulated exactly and fast: the counts of each atom are multinomial, and
the projected mean is counts · π_T(atoms) / n, so any n costs O(reps) work.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..core.bounds import Bound, CheckSpec
from ..mechanisms.central import project  # noqa: F401  (the projection π_T, shared with the mechanism)

DEFAULT_NS = (100, 316, 1000, 3162, 10000, 31623)
BENIGN_BUDGET = 3e7  # n * reps * d draws at most for the continuous benign law


def _discrete_errors(atoms, probs, T, n, rng, reps):
    probs = np.asarray(probs, float)
    probs = probs / probs.sum()
    counts = rng.multinomial(n, probs, size=reps)  # (reps, m)
    est = counts @ project(atoms, T) / n
    return est, probs @ atoms


def _benign(values, mech, n, rng, reps):
    """The clipped means of ``reps`` samples of size n of the benign law, by the mechanism's own data step
    (``mech.clipped_mean``: the projection onto the ball of radius T and the mean)."""
    d, r, k = int(values["d"]), float(values["r"]), float(values["k"])
    est = np.empty((reps, d))
    if math.isinf(k):
        for i in range(reps):
            g = rng.standard_normal((n, d))
            x = r * g / np.linalg.norm(g, axis=1, keepdims=True)
            est[i] = mech.clipped_mean(x)
        return est, np.zeros(d)
    log_mom = (k / 2) * math.log(2) + special.gammaln((d + k) / 2) - special.gammaln(d / 2)
    sigma = r / math.exp(log_mom / k)  # E||σG||^k = r^k
    for i in range(reps):
        x = sigma * rng.standard_normal((n, d))
        est[i] = mech.clipped_mean(x)
    return est, np.zeros(d)


def check_instances(t):
    """The mechanism behind the best certified bound at the solver's T on the hard instances above: the runnable
    mechanism object of the upper bound (:func:`mean_mechanism`, what ``res.upper.mechanism()`` returns), run on
    the clipped means through its ``release_from_statistic``."""
    values, n, reps, rng, res = t.values, t.n, t.reps, t.rng, t.result
    d, r, k = int(values["d"]), float(values["r"]), float(values["k"])
    notes = t.notes
    e1 = np.zeros(d)
    e1[0] = 1.0
    up, lo = res.upper, res.lower
    v = t.derived
    bound = t.bound(up.name)
    mech = mean_mechanism(v, up, bound)
    T = mech.T

    # subsampling mechanisms (TV privacy) run on a uniformly random m-subset, itself an i.i.d. sample of
    # size m: simulate them on m draws
    if mech.subsample is not None:
        n = mech.subsample
        if t.index == 0:
            notes.append(f"the mechanism uses a random subsample of size m = {n} of the n entries")

    def record(name, est, theta, desc, atoms=None, probs=None):
        if atoms is not None and mech.noise is None:
            # noise-free estimator on a two-atom law: exact risk by summing over the binomial count
            # (an exact minimax estimator sits exactly on the lower bound, where a simulated CI would
            # fall below it about half of the time)
            from scipy import stats

            j = np.arange(n + 1)
            pa = project(atoms, T)
            ests = mech.release_from_statistic(((n - j)[:, None] * pa[0] + j[:, None] * pa[1]) / n, rng, n + 1)
            m = float(stats.binom.pmf(j, n, probs[1]) @ np.sum((ests - theta) ** 2, axis=1))
            return name, (m, m * (1 - 1e-9), m * (1 + 1e-9)), desc + " (exact risk)", m  # rounding only
        err = np.sum((mech.release_from_statistic(est, rng, reps) - theta) ** 2, axis=1)
        return name, err, desc

    # the hard mixture at the lower bound's (or the TV bound's) mixture weight
    p = None
    if lo is not None and "p" in lo.free_parameters:
        p = float(lo.free_parameters["p"])
    else:
        tvb = next((b for b in res.lowers if b.name == "tv-mixture" and b.value), None)
        p = float(tvb.free_parameters["p"]) if tvb is not None else 1.0 / n
    far = r * p ** (-1.0 / k) if not math.isinf(k) else r
    for sgn, tag in ((1, "+"), (-1, "-")):
        atoms = np.stack([np.zeros(d), sgn * far * e1])
        est, theta = _discrete_errors(atoms, [1 - p, p], T, n, rng, reps)
        yield record(f"mixture{tag}(p={p:.3g})", est, theta, f"(1-p)δ_0 + p δ_(±r p^(-1/k) e1), p={p:.4g}")
    atoms = np.stack([-r * e1, r * e1])
    est, theta = _discrete_errors(atoms, [0.5, 0.5], T, n, rng, reps)
    yield record("two-point ±r", est, theta, "mass 1/2 at -r e1 and at r e1 (Hodges–Lehmann family)",
                 atoms=atoms, probs=[0.5, 0.5])
    # the point mass at the largest ‖θ‖ of the class (E||X||^k = r^k): the worst case of θ̂ = 0 (risk r², the
    # no-data risk) and of truncation at T < r (bias r - T); two equal atoms so the exact-risk path applies
    atoms = np.stack([r * e1, r * e1])
    est, theta = _discrete_errors(atoms, [0.5, 0.5], T, n, rng, reps)
    yield record("point-mass r e1", est, theta, "X ≡ r e1 (largest ||θ||: worst case of θ̂ = 0 and of truncation)",
                 atoms=atoms, probs=[0.5, 0.5])
    if n * reps * d <= BENIGN_BUDGET:
        est, theta = _benign(values, mech, n, rng, reps)
        yield record("benign", est, theta, "Gaussian scaled to E||X||^k = r^k (sphere of radius r if k = inf)")
    elif t.index == 0 or not any("benign" in x for x in notes):
        notes.append(f"benign continuous instance skipped for n*reps*d > {BENIGN_BUDGET:.0e}")


CHECK = CheckSpec(check_instances, DEFAULT_NS)


# ---------------------------------------------------------------------- the runnable mechanism

def _expr_value(expr, values, free) -> float:
    return float(Bound(side="upper", name="x", label="", expr=expr, source="", derivation="").evaluate(values, free))


#: the upper bounds whose mechanism :func:`mean_mechanism` builds (the projected mean with each noise, the subsampling
#: mechanisms, the non-private estimators, θ̂ = 0); another bound raises InputError rather than getting a wrong one
MECHANISM_BOUNDS = frozenset({"zero", "laplace", "l2-laplace", "staircase", "gauss-classical", "gauss-analytic", "gauss-kl",
                              "gauss-tv", "subsample-gauss-tv", "subsample-shrunk-tv", "sample-mean", "shrunk-mean"})


def mean_mechanism(values, upper, bound):
    """The mechanism of the upper bound ``bound`` of the central mean at ``values``, tuned at ``upper`` (its
    free parameters): a :class:`boundcalc.mechanisms.central.ProjectedMean` (the same object the check runs)."""
    from ..mechanisms.central import ProjectedMean
    from ..mechanisms.runnable import CENTRAL_NEIGHBOURS, Guarantee

    if bound.name not in MECHANISM_BOUNDS:
        from ..mechanisms.runnable import no_mechanism

        raise no_mechanism("mean", values["privacy"], bound.label)
    free = dict(upper.free_parameters)
    privacy = values["privacy"]
    n, d = int(values["n"]), int(values["d"])
    T = float(free.get("T", math.inf))
    subsample = None
    if "subsample" in bound.extra:
        subsample = max(1, int(round(_expr_value(bound.extra["subsample"], values, free))))
    if "sigma_shrink" in free:
        f = 1.0 - float(free["sigma_shrink"])
    elif "shrink_factor" in bound.extra:
        f = _expr_value(bound.extra["shrink_factor"], values, free)
    else:
        f = 1.0
    noise = bound.extra.get("noise")
    scale = _expr_value(bound.extra["scale"], values, {**free, "T": T}) if noise else 0.0
    # the noise's own parameters (the staircase's step γ and level ε), evaluated at the tuned point
    noise_params = {key: _expr_value(e, values, free) for key, e in bound.extra.get("noise_params", {}).items()}
    level = None if privacy == "none" else float(values["eps"])
    guarantee = Guarantee(privacy, level, float(values["delta"]) if privacy == "approx" else None,
                          CENTRAL_NEIGHBOURS, "alpha" if privacy in ("tv", "kl") else "eps")
    params = {}
    if math.isfinite(T):
        params["T"] = T
    if noise:
        params["noise"] = noise
        params["scale"] = scale
        params.update({f"noise_{key}": val for key, val in noise_params.items()})
    params["shrink_factor"] = f
    if subsample is not None:
        params["subsample"] = subsample
    notes = []
    if math.isfinite(T):
        notes.append(f"records with ||x|| > T = {T:.6g} are projected onto the ball of radius T (clamped to [-T, T] "
                     "when d = 1); this is part of the mechanism and of its privacy")
    if subsample is not None:
        notes.append(f"uses a uniformly random subset of m = {subsample} of the n records")
    if privacy == "smooth":
        notes.append("smooth privacy: ε-private for the metric min{||x - x'||, 2T}/(2T) on records, hence ε-DP")
    return ProjectedMean(d=d, T=T, noise=noise, scale=scale, noise_params=noise_params, shrink=f, subsample=subsample,
                         problem=values.get("problem", "mean"), privacy=privacy, label=bound.label,
                         parameters=params, guarantee=guarantee, certified_risk=upper.value, n=n,
                         bound=bound.name, notes=tuple(notes), values=values)
