"""Runnable central mechanisms: a clipped statistic plus calibrated additive noise (numpy reference
implementations, and the OpenDP measurement of the central mean where OpenDP has the parts).

The central mean (docs/problems/mean.md; Barber & Duchi 2014, Propositions 2, 4, 6): with the tuned truncation
radius T, noise W and shrinkage factor f,

    θ̂ = f · ((1/m) Σ_{i ∈ S} π_T(X_i) + W),

π_T the projection onto the ℓ2 ball of radius T (records outside it are projected onto it: this is part of the
mechanism, and of its privacy), S all n records or, for the subsampling mechanisms under TV privacy, a uniformly
random subset of m of them. Replacing one record moves the projected mean by at most 2T/m in ℓ2 (and 2√d T/m in
ℓ1), which the noise is calibrated to.

:func:`calibration_check` re-evaluates the privacy of additive noise from the sensitivity and the noise scale alone
(independently of the expressions that built the scale): Laplace ε = Δ₁/b; ℓ2-Laplace ε = Δ₂/b; Gaussian (ε, δ) by the
exact analytic condition of Balle & Wang (2018), Theorem 8; Gaussian KL Δ₂²/(2σ²); Gaussian TV 2Φ(Δ₂/(2σ)) - 1,
times the sampling probability m/n for a random m-subset. Docs: docs/methods/from-a-plan-to-data.md.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.errors import InputError
from .noise import SAMPLERS
from .runnable import (CENTRAL_NEIGHBOURS, CentralMechanism, Guarantee, as_records, as_reps, as_rng)

#: relative slack of the privacy checks (floating-point rounding of the scale; the calibrations are exact)
REL_TOL = 1e-9

OPENDP_INSTALL = "pip install 'boundcalc[opendp]'"


def project(x: np.ndarray, T: float) -> np.ndarray:
    """Projection of the rows of x onto the ℓ2 ball of radius T (T = inf: no projection)."""
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    scale = np.minimum(1.0, T / np.maximum(norms, 1e-300))
    return x * scale


def gaussian_delta(eps: float, sigma_over_sens: float) -> float:
    """δ of the Gaussian mechanism with σ/Δ₂ = ``sigma_over_sens`` at ε (Balle & Wang 2018, Theorem 8, exact):
    δ = Φ(1/(2s) - εs) - e^ε Φ(-1/(2s) - εs), evaluated in log space (scipy.special.log_ndtr)."""
    from scipy import special

    s = float(sigma_over_sens)
    if s <= 0:
        return 1.0
    a, b = 0.5 / s, eps * s
    l1 = special.log_ndtr(a - b)
    l2 = eps + special.log_ndtr(-a - b)
    if l2 >= l1:
        return 0.0
    return float(math.exp(l1) * -math.expm1(l2 - l1))


def _rule_dp_laplace(privacy, l1, l2, scale, eps, delta, frac, sens_of, params=None):
    achieved = sens_of(l1, l2) / scale
    out = {"achieved_eps": achieved, "passed": bool(achieved <= eps * (1 + REL_TOL))}
    if privacy == "approx":
        out["note"] = "ε-DP implies (ε, δ)-DP for every δ >= 0"
    return out


def _rule_approx_gauss(privacy, l1, l2, scale, eps, delta, frac, sens_of, params=None):
    d_ach = gaussian_delta(eps, scale / l2)
    return {"method": "exact analytic Gaussian calibration (Balle & Wang 2018, Theorem 8) re-evaluated",
            "achieved_delta": d_ach, "passed": bool(d_ach <= delta * (1 + 1e-6))}


def _rule_kl_gauss(privacy, l1, l2, scale, eps, delta, frac, sens_of, params=None):
    achieved = l2 ** 2 / (2 * scale ** 2)
    return {"achieved_alpha": achieved, "passed": bool(achieved <= eps * (1 + REL_TOL))}


def _rule_tv(privacy, l1, l2, scale, eps, delta, frac, sens_of, params=None):
    from scipy import stats

    tv = 1.0 if scale == 0 else float(2 * stats.norm.cdf(l2 / (2 * scale)) - 1)
    achieved = frac * tv
    return {"achieved_alpha": achieved, "sample_fraction": frac, "passed": bool(achieved <= eps * (1 + REL_TOL))}


def _rule_dp_staircase(privacy, l1, l2, scale, eps, delta, frac, sens_of, params=None):
    """The staircase noise of level params["eps"] built for sensitivity ``scale`` (Δ): ε-DP for shifts up to Δ,
    ε⌈s/Δ⌉ for a larger shift s (:func:`boundcalc.mechanisms.staircase.achieved_eps`); any step γ ∈ (0, 1]."""
    from .staircase import achieved_eps

    params = params or {}
    gamma, eps_noise = params.get("gamma"), params.get("eps")
    if gamma is None or eps_noise is None or not (0 < gamma <= 1) or not eps_noise > 0:
        return {"passed": False, "method": "staircase noise without a valid level and step γ ∈ (0, 1]"}
    achieved = achieved_eps(eps_noise, scale, sens_of(l1, l2), REL_TOL)
    out = {"method": "staircase: ε-DP for shifts up to its Δ (exponent changes by at most one step)",
           "achieved_eps": achieved, "gamma": gamma, "passed": bool(achieved <= eps * (1 + REL_TOL))}
    if privacy == "approx":
        out["note"] = "ε-DP implies (ε, δ)-DP for every δ >= 0"
    return out


_L1 = lambda l1, l2: l1  # noqa: E731  (Laplace coordinates: ℓ1 sensitivity)
_L2 = lambda l1, l2: l2  # noqa: E731  (ℓ2-Laplace: ℓ2 sensitivity)
#: (privacy model, noise) -> (rule, which sensitivity); noise None = no noise
CALIBRATION_RULES = {
    **{(p, "laplace"): (_rule_dp_laplace, _L1) for p in ("pure", "smooth", "approx")},
    **{(p, "l2-laplace"): (_rule_dp_laplace, _L2) for p in ("pure", "smooth", "approx")},
    # one dimension (ℓ1 = ℓ2); not smooth: a small shift across a step edge already costs the full e^ε
    **{(p, "staircase"): (_rule_dp_staircase, _L2) for p in ("pure", "approx")},
    ("approx", "gaussian"): (_rule_approx_gauss, _L2),
    ("kl", "gaussian"): (_rule_kl_gauss, _L2),
    ("tv", "gaussian"): (_rule_tv, _L2),
    ("tv", None): (_rule_tv, _L2),
}


def calibration_check(privacy: str, noise: str | None, scale: float, sens_l1: float, sens_l2: float,
                      eps: float | None, delta: float | None = None, sample_fraction: float = 1.0,
                      noise_params: dict | None = None) -> dict:
    """The privacy of ``noise`` (``laplace`` per coordinate, ``l2-laplace``, ``gaussian`` or None) of ``scale`` on a
    statistic of ℓ1/ℓ2 sensitivity ``sens_l1``/``sens_l2``, re-evaluated and compared with the level ``eps``
    (``delta``); ``sample_fraction`` m/n for a random m-subset (TV only); ``noise_params`` the noise's own parameters
    (the staircase's level ``eps`` and step ``gamma``). Returns ``{"method", "passed", ...}``."""
    out = {"method": "calibration formula re-evaluated", "noise": noise, "scale": scale,
           "sensitivity_l1": sens_l1, "sensitivity_l2": sens_l2}
    if privacy == "none":
        return {**out, "method": "no privacy claimed", "passed": True}
    if sens_l2 == 0 and sens_l1 == 0:  # the output does not depend on the data
        return {**out, "achieved": 0.0, "passed": True, "method": "output independent of the data"}
    rule = CALIBRATION_RULES.get((privacy, noise))
    if rule is None:
        return {**out, "passed": False, "method": f"no calibration rule for noise {noise!r} under {privacy}"}
    fn, sens_of = rule
    return {**out, **fn(privacy, sens_l1, sens_l2, scale, eps, delta, sample_fraction, sens_of, params=noise_params)}


class ProjectedMean(CentralMechanism):
    """θ̂ = f · (mean of π_T over the records, or over a uniformly random m-subset, + W): the central mean's
    mechanisms (see the module docstring). ``noise``: ``laplace``/``l2-laplace``/``gaussian``/``staircase`` or None;
    ``scale``: the sampler's scale (Laplace b, Gaussian σ, the staircase's Δ); ``noise_params``: the noise's own
    parameters (the staircase's ``eps`` and ``gamma``); ``shrink``: the factor f; ``subsample``: m or None."""

    def __init__(self, *, d: int, T: float, noise: str | None, scale: float, shrink: float = 1.0,
                 subsample: int | None = None, noise_params: dict | None = None, **kw):
        self.d, self.T = int(d), float(T)
        self.noise, self.scale = noise, float(scale)
        self.noise_params = {k: float(v) for k, v in (noise_params or {}).items()}
        self.shrink = float(shrink)
        self.subsample = None if subsample is None else int(subsample)
        super().__init__(**kw)
        self._scalar_output = self.d == 1

    # ------------------------------------------------------------------ the data step
    def clipped_mean(self, x: np.ndarray) -> np.ndarray:
        """The mean of the projected records (rows of ``x``, shape (m, d)): shape (d,)."""
        return project(x, self.T).mean(axis=0)

    def statistic(self, records, rng=None) -> np.ndarray:
        x = as_records(records, self.d, n=self.n)
        x = x.reshape(x.shape[0], self.d)
        if self.subsample is not None and self.subsample < x.shape[0]:
            rng = as_rng(rng)
            x = x[rng.choice(x.shape[0], size=self.subsample, replace=False)]
        return self.clipped_mean(x)

    def release(self, records, rng=None):
        """The estimate from the n records (array (n,) for d = 1, else (n, d)); records with ||x|| > T are projected
        onto the ball of radius T (part of the mechanism)."""
        if not self.reference:
            return self._release_opendp(records)
        rng = as_rng(rng)
        stat = self.statistic(records, rng)
        out = self.release_from_statistic(stat.reshape(1, -1), rng, 1)[0]
        return float(out[0]) if self._scalar_output else out

    # ------------------------------------------------------------------ the rest, vectorised
    def release_from_statistic(self, statistic, rng, reps: int) -> np.ndarray:
        """f · (statistic + W) for ``statistic`` of shape (reps, d) (the clipped means of ``reps`` data sets)."""
        reps = as_reps(reps)
        stat = np.asarray(statistic, dtype=float).reshape(reps, self.d)
        sampler = SAMPLERS.get(self.noise)  # None: no noise
        if sampler is None:
            return self.shrink * stat
        return self.shrink * (stat + sampler(rng, reps, self.d, self.scale, **self.noise_params))

    # ------------------------------------------------------------------ privacy
    def sensitivities(self) -> tuple:
        """(ℓ1, ℓ2) sensitivity of the projected mean of m records under replacing one record."""
        if self.shrink == 0.0:
            return 0.0, 0.0
        m = self.subsample or self.n
        return 2 * math.sqrt(self.d) * self.T / m, 2 * self.T / m

    def check_privacy(self) -> dict:
        if not self.reference:
            return self.check_opendp()
        g = self.guarantee
        l1, l2 = self.sensitivities()
        frac = 1.0 if self.subsample is None else self.subsample / self.n
        # (TV with subsampling: the noise is calibrated on the subsample at α' = min{1, αn/m}; overall (m/n)·TV)
        return calibration_check(g.privacy, self.noise, self.scale, l1, l2, g.eps, g.delta, frac, self.noise_params)

    # ------------------------------------------------------------------ OpenDP (d = 1, pure: Laplace; approx: Gaussian)
    def to_opendp(self) -> "ProjectedMean":
        meas, d_in, d_out = self.opendp_parts()
        twin = ProjectedMean(d=self.d, T=self.T, noise=self.noise, scale=self.scale, noise_params=self.noise_params,
                             shrink=self.shrink,
                             subsample=self.subsample, problem=self.problem, privacy=self.privacy, label=self.label,
                             parameters=self.parameters, guarantee=self.guarantee,
                             certified_risk=self.certified_risk, n=self.n, reference=False, bound=self.bound,
                             notes=self.notes + (OPENDP_NOTE,), values=self.values)
        twin._opendp = (meas, d_in, d_out)
        twin.opendp_d_in, twin.opendp_d_out = d_in, d_out
        if twin.certified_risk is not None:
            twin.certified_risk *= (1 + OPENDP_INFLATE) ** 2
        twin.parameters = {**self.parameters, "scale": self.scale * (1 + OPENDP_INFLATE)}
        verdict = twin.check_opendp()
        if not verdict["passed"]:
            why = ""
            if isinstance(d_out, tuple):
                why = (" (OpenDP accounts Gaussian noise in zCDP, and its conversion to (ε, δ) is looser than the exact "
                       f"analytic calibration the planned σ uses: δ = {verdict['achieved_delta']:.3g} > "
                       f"{verdict['delta']:.3g})")
            raise InputError("reference", "OpenDP's privacy map does not confirm the planned guarantee at the tuned "
                                          f"noise scale{why}; use the reference implementation", False)
        return twin

    def opendp_measurement(self):
        """The OpenDP measurement of this mechanism (d = 1; privacy pure, or approx with Laplace or Gaussian noise;
        InputError otherwise, or without OpenDP: ``pip install 'boundcalc[opendp]'``). Its guarantee:
        ``meas.map(mech.opendp_d_in) <= ε`` (d_in = 2: one record replaced), or ``.delta(ε) <= δ`` for a zCDP
        Gaussian (``mech.opendp_d_out`` = (ε, δ)); see :func:`build_opendp_mean`."""
        return self.opendp_parts()[0]

    def opendp_parts(self) -> tuple:
        """``(meas, d_in, d_out)`` (see :meth:`opendp_measurement`)."""
        cached = getattr(self, "_opendp", None)
        if cached is not None:
            return cached
        return build_opendp_mean(self)

    def _release_opendp(self, records):
        x = as_records(records, self.d, n=self.n)
        return float(self.opendp_measurement()(x.reshape(-1).tolist())) * self.shrink

    def check_opendp(self) -> dict:
        meas, d_in, d_out = self.opendp_parts()
        if not isinstance(d_out, tuple):
            achieved = float(meas.map(d_in))
            return {"method": "OpenDP privacy map", "d_in": d_in, "achieved_eps": achieved, "eps": d_out,
                    "passed": bool(achieved <= d_out)}
        curve = meas.map(d_in)
        eps, delta = d_out
        achieved = float(curve.delta(eps))
        return {"method": "OpenDP privacy map (zCDP curve -> (ε, δ))", "d_in": d_in, "eps": eps,
                "achieved_delta": achieved, "delta": delta, "passed": bool(achieved <= delta)}


OPENDP_NOTE = ("OpenDP measurement: clamp to [-T, T], sized bounded mean (SymmetricDistance 2 = one record "
               "replaced, n fixed), then OpenDP's noise")


class NoOpenDPNoise(InputError):
    """The mechanism is one OpenDP could measure (d = 1, pure or approx) but its noise has no OpenDP sampler (the
    staircase): a result's ``mechanism(reference=False)`` then falls back to the best upper bound that has one."""


def _import_opendp():
    try:
        import opendp.prelude as dp
    except ImportError:
        raise InputError("reference", "False needs OpenDP, an optional extra: " + OPENDP_INSTALL, False) from None
    return dp


#: the relative inflation of the noise scale in the OpenDP measurement: OpenDP rounds its privacy map outward
#: (the map of the exactly calibrated scale exceeds ε by about 1e-13 relative), so the scale is raised by this
#: much; the certified risk is raised by (1 + OPENDP_INFLATE)² accordingly (the noise term scales with b²)
OPENDP_INFLATE = 1e-9


def build_opendp_mean(mech: ProjectedMean):
    """The OpenDP measurement of the central mean (d = 1): clamp each record to [-T, T] (the projection π_T in one
    dimension), OpenDP's mean of sized bounded data (n fixed), then OpenDP's Laplace noise (pure, and approx where
    the reported upper bound uses Laplace noise: ε-DP implies (ε, δ)-DP) or Gaussian noise (approx; OpenDP accounts
    it in zCDP and converts to (ε, δ)) at the tuned scale, raised by the relative ``OPENDP_INFLATE``.
    Neighbours: boundcalc's relation is "replace one record, n fixed"; OpenDP's SymmetricDistance counts added plus
    removed records, so one replacement is d_in = 2. Returns ``(meas, d_in, d_out)``: the guarantee is
    ``meas.map(d_in) <= d_out`` (ε), or ``meas.map(d_in).delta(ε) <= δ`` for ``d_out`` = (ε, δ)."""
    if mech.d == 1 and mech.subsample is None and (mech.privacy, mech.noise) not in _OPENDP_NOISE \
            and mech.noise in SAMPLERS and mech.privacy in ("pure", "approx"):
        raise NoOpenDPNoise("reference", f"OpenDP has no sampler for the {mech.noise} noise of '{mech.label}' "
                                         "(the result's mechanism(reference=False) gives the best upper bound that has one)", False)
    if mech.d != 1 or mech.subsample is not None or mech.privacy not in ("pure", "approx") \
            or mech.noise not in SAMPLERS or not math.isfinite(mech.T):
        raise InputError("reference", "an OpenDP measurement is offered for the central mean with d = 1 under "
                                      "privacy pure or approx (Laplace or Gaussian noise); here "
                                      f"{mech.privacy}, d = {mech.d}, {mech.label}", False)
    dp = _import_opendp()
    dp.enable_features("contrib")
    T, n = mech.T, mech.n
    space = (dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n), dp.symmetric_distance())
    mean = space >> dp.t.then_clamp((-T, T)) >> dp.t.then_mean()
    eps = mech.guarantee.eps
    scale = mech.scale * (1 + OPENDP_INFLATE)
    build = _OPENDP_NOISE.get((mech.privacy, mech.noise))
    if build is None:
        raise InputError("reference", f"no OpenDP measurement for noise {mech.noise!r} under {mech.privacy}", False)
    return build(dp, mean, scale, eps, mech.guarantee.delta)


def _opendp_laplace(dp, mean, scale, eps, delta):
    # d = 1: the per-coordinate and the ℓ2 Laplace mechanisms are the same law, scale b = 2T/(nε); ε-DP implies
    # (ε, δ)-DP, so under approx the guarantee checked is ε
    return mean >> dp.m.then_laplace(scale=scale), 2, eps


def _opendp_gaussian(dp, mean, scale, eps, delta):
    # OpenDP accounts Gaussian noise in zCDP; make_zCDP_to_approxDP gives the (ε, δ) curve, read at ε
    return dp.c.make_zCDP_to_approxDP(mean >> dp.m.then_gaussian(scale=scale)), 2, (eps, delta)


#: (privacy model, noise) -> builder of the OpenDP measurement
_OPENDP_NOISE = {("pure", "laplace"): _opendp_laplace, ("pure", "l2-laplace"): _opendp_laplace,
                 ("approx", "laplace"): _opendp_laplace, ("approx", "l2-laplace"): _opendp_laplace,
                 ("approx", "gaussian"): _opendp_gaussian}


class BernoulliMean(CentralMechanism):
    """The Bernoulli rate's estimators (docs/problems/bernoulli.md) on records in {0, 1}: ``kind`` ``sample-mean``
    (X̄), ``hodges-lehmann`` ((ΣX + √n/2)/(n + √n)), ``laplace`` (X̄ + Laplace(1/(nε)) clipped to [0, 1]: the mean
    has sensitivity 1/n under replacing one record), ``shrunk-laplace`` (1/2 + c(X̄ + Laplace - 1/2), clipped) or ``constant`` (1/2, uses no data). Records must be 0 or 1
    (anything else is refused: there is nothing to clamp a non-binary value to)."""

    def __init__(self, *, kind: str, scale: float = 0.0, shrink: float = 1.0, **kw):
        self.kind_name, self.scale, self.shrink = kind, float(scale), float(shrink)
        super().__init__(**kw)

    def statistic(self, records, rng=None) -> np.ndarray:
        x = as_records(records, 1, n=self.n)
        if not np.all((x == 0) | (x == 1)):
            raise InputError("records", "must be 0 or 1 (Bernoulli records)", "other values")
        return np.array([x.mean()])

    def release_from_statistic(self, statistic, rng, reps: int) -> np.ndarray:
        """The estimates from the sample means ``statistic`` (shape (reps,) or (reps, 1))."""
        reps = as_reps(reps)
        xbar = np.asarray(statistic, dtype=float).reshape(reps, 1)
        return getattr(self, _BERNOULLI_KINDS[self.kind_name][0])(xbar, rng, reps)

    def _sample_mean(self, xbar, rng, reps):
        return xbar

    def _hodges_lehmann(self, xbar, rng, reps):
        n, root = self.n, np.sqrt(self.n)
        return (np.round(n * xbar) + root / 2) / (n + root)  # n·X̄ is the count of ones, an integer

    def _laplace(self, xbar, rng, reps):
        return np.clip(xbar + rng.laplace(0.0, self.scale, size=(reps, 1)), 0.0, 1.0)

    def _shrunk_laplace(self, xbar, rng, reps):
        noisy = xbar + rng.laplace(0.0, self.scale, size=(reps, 1))
        return np.clip(0.5 + self.shrink * (noisy - 0.5), 0.0, 1.0)

    def _constant(self, xbar, rng, reps):
        return np.full((reps, 1), 0.5)

    def check_privacy(self) -> dict:
        g = self.guarantee
        noise, depends = _BERNOULLI_KINDS[self.kind_name][1:]
        sens = 1.0 / self.n if depends else 0.0  # the mean of n records in {0, 1}: sensitivity 1/n
        return calibration_check(g.privacy, noise, self.scale, sens, sens, g.eps)


#: kind -> (method, noise, whether the output depends on the data)
_BERNOULLI_KINDS = {"sample-mean": ("_sample_mean", None, True), "hodges-lehmann": ("_hodges_lehmann", None, True),
                    "laplace": ("_laplace", "laplace", True), "shrunk-laplace": ("_shrunk_laplace", "laplace", True),
                    "constant": ("_constant", None, False)}


def exp_mech_level_check(privacy: str, eps_used: float, level: float, delta: float | None = None) -> dict:
    """Whether an ε'-DP mechanism (``eps_used``) gives the privacy model's guarantee at ``level``: pure and approx
    ε' <= ε (ε-DP implies (ε, δ)-DP); tv tanh(ε'/2) <= α (the TV level of ε'-DP); kl ε' tanh(ε'/2) <= α (KL of
    ε'-DP; Barber & Duchi 2014, Section 2; docs/methods/relations.md)."""
    implied = {"pure": eps_used, "approx": eps_used, "tv": math.tanh(eps_used / 2),
               "kl": eps_used * math.tanh(eps_used / 2)}[privacy]
    return {"method": "level of the ε'-DP mechanism re-evaluated in the privacy model", "eps_used": eps_used,
            "achieved": implied, "level": level, "passed": bool(implied <= level * (1 + REL_TOL))}


class SupportEstimator(CentralMechanism):
    """The support problem's estimators (docs/problems/support.md) on records in [0, ∞) (negative records are set
    to 0 before anything else: the family lives on [0, 2θ_0], and a per-record map keeps the privacy):

    - ``max``: the sample maximum (|·| loss) or (n+1)/n times it (squared loss), no privacy;
    - ``exp-mech``: the exponential mechanism with utility -#{i : X_i > t} (sensitivity 1, monotone, so ε'-DP
      without a factor 2) and the data-independent base measure e^{-γt} on [0, ∞), shifted by ``offset`` and
      projected onto [θ_0, 2θ_0]; sampled exactly (piecewise exponential density);
    - ``subsample-max``: c times the maximum of a uniformly random subset of m = ⌊αn⌋ records, projected onto
      [θ_0, 2θ_0] (TV: the changed record is in the subset with probability m/n <= α);
    - ``constant``: 3θ_0/2.

    The statistic is the sorted sample (the order statistics), shape (n,); ``release_from_statistic`` takes
    ``reps`` sorted samples (reps, n)."""

    def __init__(self, *, kind: str, theta0: float, loss: str, eps_used: float | None = None,
                 gamma: float | None = None, offset: float = 0.0, subsample: int | None = None,
                 factor: float = 1.0, **kw):
        self.kind_name, self.theta0, self.loss = kind, float(theta0), loss
        self.eps_used, self.gamma, self.offset = eps_used, gamma, offset
        self.subsample, self.factor = subsample, float(factor)
        super().__init__(**kw)

    def statistic(self, records, rng=None) -> np.ndarray:
        x = as_records(records, 1, n=self.n)
        return np.sort(np.maximum(x, 0.0))

    def release(self, records, rng=None):
        rng = as_rng(rng)
        return float(self.release_from_statistic(self.statistic(records)[None, :], rng, 1)[0])

    def release_from_statistic(self, statistic, rng, reps: int) -> np.ndarray:
        """The estimates (shape (reps,)) from ``reps`` sorted samples ``statistic`` (reps, n)."""
        reps = as_reps(reps)
        x = np.asarray(statistic, dtype=float).reshape(reps, -1)
        return getattr(self, _SUPPORT_KINDS[self.kind_name][0])(x, rng, reps)

    def _max(self, x, rng, reps):
        n = x.shape[1]
        return x[:, -1] if self.loss == "abs" else x[:, -1] * (n + 1) / n

    def _exp_mech(self, x, rng, reps):
        t0 = self.theta0
        tt = exp_mech_sample(x, self.eps_used, self.gamma, rng)
        return np.clip(tt + self.offset, t0, 2 * t0)

    def _subsample_max(self, x, rng, reps):
        t0, n, m = self.theta0, x.shape[1], self.subsample
        keys = rng.random((reps, n))
        top = np.argpartition(keys, m - 1, axis=1)[:, :m].max(axis=1)  # largest chosen index = rank of the max
        return np.clip(self.factor * x[np.arange(reps), top], t0, 2 * t0)

    def _constant(self, x, rng, reps):
        return np.full(reps, 1.5 * self.theta0)

    def check_privacy(self) -> dict:
        g = self.guarantee
        return getattr(self, _SUPPORT_KINDS[self.kind_name][1])(g)

    def _privacy_none(self, g):
        if g.privacy == "none":
            return calibration_check("none", None, 0.0, 0.0, 0.0, None)
        return {"method": "no privacy", "passed": False, "why": f"{self.kind_name} is not private"}

    def _privacy_exp_mech(self, g):
        return exp_mech_level_check(g.privacy, self.eps_used, g.eps, g.delta)

    def _privacy_subsample(self, g):
        frac = self.subsample / self.n
        ok = g.privacy in ("tv", "none") and frac <= (g.eps if g.eps is not None else 1.0) * (1 + REL_TOL)
        return {"method": "sampling probability m/n re-evaluated (the output depends on a record only when it is in "
                          "the subset; TV <= m/n)", "achieved_alpha": frac, "passed": bool(ok)}

    def _privacy_constant(self, g):
        return calibration_check(g.privacy, None, 0.0, 0.0, 0.0, g.eps)


#: kind -> (release method, privacy check method)
_SUPPORT_KINDS = {"max": ("_max", "_privacy_none"), "exp-mech": ("_exp_mech", "_privacy_exp_mech"),
                  "subsample-max": ("_subsample_max", "_privacy_subsample"),
                  "constant": ("_constant", "_privacy_constant")}


def exp_mech_sample(x_sorted: np.ndarray, eps: float, gamma: float, rng: np.random.Generator) -> np.ndarray:
    """One draw per row of the exponential mechanism (density ∝ exp(-γt - ε N(t)) on [0, ∞), N(t) = #{X_i > t}).

    Exact: the density is piecewise exponential on [0, X_(1)), [X_(j), X_(j+1)), [X_(n), ∞) with
    N = n, n - j, 0; pick the piece by the Gumbel-max trick on its log-mass, then an exponential
    truncated to the piece (inverse CDF).
    """
    reps, n = x_sorted.shape
    a = np.concatenate([np.zeros((reps, 1)), x_sorted], axis=1)  # left ends, (reps, n+1)
    b = np.concatenate([x_sorted, np.full((reps, 1), np.inf)], axis=1)
    cnt = n - np.arange(n + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        width = b - a
        logmass = -eps * cnt - gamma * a + np.where(np.isinf(width), 0.0, np.log(-np.expm1(-gamma * width)))
    j = np.argmax(logmass + rng.gumbel(size=logmass.shape), axis=1)
    rows = np.arange(reps)
    aj, wj = a[rows, j], width[rows, j]
    u = rng.random(reps)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t_fin = aj - np.log1p(-u * -np.expm1(-gamma * np.where(np.isinf(wj), 1.0, wj))) / gamma
    t_inf = aj + rng.exponential(1.0 / gamma, size=reps)
    return np.where(np.isinf(wj), t_inf, t_fin)


class CentralHistogram(CentralMechanism):
    """The central density estimators (docs/problems/density.md; Barber & Duchi 2014, Prop 5): the histogram with
    ``bins`` equal bins per axis on [0, 1]^d, Laplace(2/ε) added to every bin count (``eps``; None: no noise), and
    optionally shrunk toward f ≡ 1: f̂ = 1 + λ(g - 1) (``shrink`` λ; 1: no shrinkage). Replacing one record changes
    two counts by 1 (ℓ1 sensitivity 2), so Laplace(2/ε) per count is ε-DP; shrinkage is post-processing.
    Records outside [0, 1]^d are clamped onto it (each coordinate to [0, 1]) before binning.

    ``noise="knorm"``: the count vector gets the K-norm noise of Hardt & Talwar (2010) instead, density
    ∝ exp(-ε||z||_K) on the hyperplane Σz = 0 with K = conv{e_i - e_j} (:mod:`boundcalc.methods.knorm`); a
    replacement moves the counts by some e_i - e_j, of K-norm 1, so this is ε-DP too.

    The statistic is the vector of bin counts (length bins^d, bins in C order of the (bins,)*d grid);
    ``release_from_statistic`` returns the density heights f̂_j on the bins, shape (reps, bins^d), and ``release``
    the heights as an array of shape (bins,)*d."""

    def __init__(self, *, d: int, bins: int, eps: float | None, shrink: float = 1.0, noise: str = "laplace", **kw):
        if noise not in HISTOGRAM_NOISE:
            raise ValueError(f"noise must be one of {sorted(HISTOGRAM_NOISE)}")
        self.d, self.bins, self.eps, self.shrink, self.noise = int(d), int(bins), eps, float(shrink), noise
        super().__init__(**kw)

    @property
    def h_vol(self) -> float:
        return (1.0 / self.bins) ** self.d

    def statistic(self, records, rng=None) -> np.ndarray:
        x = as_records(records, self.d, n=self.n).reshape(-1, self.d)
        idx = np.minimum((np.clip(x, 0.0, 1.0) * self.bins).astype(np.int64), self.bins - 1)
        flat = np.ravel_multi_index(tuple(idx.T), (self.bins,) * self.d)
        return np.bincount(flat, minlength=self.bins ** self.d).astype(float)

    def release(self, records, rng=None):
        rng = as_rng(rng)
        c = self.statistic(records)
        return self.release_from_statistic(c[None, :], rng, 1)[0].reshape((self.bins,) * self.d)

    def release_from_statistic(self, statistic, rng, reps: int) -> np.ndarray:
        """The heights f̂ (reps, bins^d) from the bin counts ``statistic`` (reps, bins^d)."""
        reps = as_reps(reps)
        c = np.asarray(statistic, dtype=float).reshape(reps, -1)
        if self.eps is not None:
            c = c + HISTOGRAM_NOISE[self.noise](rng, self.eps, c.shape)
        n, hv = self.n, self.h_vol
        if self.shrink != 1.0:  # f̂ = 1 + λ(g - 1) on every bin, as equivalent counts n h^d f̂_j
            c = n * hv * (1 + self.shrink * (c / (n * hv) - 1))
        return c / (n * hv)

    def check_privacy(self) -> dict:
        g = self.guarantee
        if self.bins == 1 and self.eps is None:  # one bin: its count is n whatever the data
            return calibration_check(g.privacy, None, 0.0, 0.0, 0.0, g.eps)
        if self.eps is None:
            return calibration_check(g.privacy, None, 0.0, 2.0, math.sqrt(2.0), g.eps)
        return HISTOGRAM_PRIVACY[self.noise](self.bins ** self.d, self.eps, g.privacy, g.eps)


def _laplace_counts(rng, eps, shape):
    """Laplace(2/ε) on every count (ℓ1 sensitivity 2 under a replacement)."""
    return rng.laplace(0.0, 2.0 / eps, size=shape)


def _knorm_counts(rng, eps, shape):
    """The K-norm noise (Hardt & Talwar 2010) on each row of counts."""
    from ..methods.knorm import sample_noise

    return sample_noise(rng, int(shape[1]), eps, int(shape[0]))


def _laplace_check(m: int, eps_noise: float, privacy: str, eps_claimed: float | None) -> dict:
    """Laplace(2/ε) per count: ℓ1 sensitivity 2 (a replacement moves two counts by 1)."""
    return calibration_check(privacy, "laplace", 2.0 / eps_noise, 2.0, math.sqrt(2.0), eps_claimed)


#: the noise a :class:`CentralHistogram` adds to its count vector, by name
HISTOGRAM_NOISE = {"laplace": _laplace_counts, "knorm": _knorm_counts}


def _knorm_check(m: int, eps_noise: float, privacy: str, eps_claimed: float | None) -> dict:
    """The K-norm mechanism's privacy re-evaluated: on the hyperplane Σz = 0 the norm of K = conv{e_i - e_j} is
    ||z||_K = ||z||₁/2 (K is the ℓ1 ball of radius 2 cut by the hyperplane), a replacement moves the counts by
    e_i - e_j, so the privacy loss is at most ε_noise · max ||e_i - e_j||₁/2 = ε_noise."""
    diff = np.zeros(max(m, 2))
    diff[0], diff[1] = 1.0, -1.0  # every e_i - e_j has the same ℓ1 norm
    achieved = eps_noise * float(np.abs(diff).sum()) / 2.0
    out = {"method": "K-norm sensitivity re-evaluated (||e_i - e_j||_K = 1)", "noise": "knorm",
           "sensitivity_K": float(np.abs(diff).sum()) / 2.0, "achieved": achieved}
    if privacy != "pure" or eps_claimed is None:
        return {**out, "passed": False, "method": f"no K-norm rule under {privacy}"}
    return {**out, "passed": achieved <= eps_claimed * (1 + 1e-9)}


#: the privacy re-check of each histogram noise
HISTOGRAM_PRIVACY = {"laplace": _laplace_check, "knorm": _knorm_check}


class SubsampleAggregate(CentralMechanism):
    """Smith's subsample-and-aggregate estimator (docs/methods/subsample-and-aggregate.md) for a one-parameter
    model: the n records split in order into k blocks (r = n - k⌊n/k⌋ blocks of ⌊n/k⌋+1 records first, then blocks
    of ⌊n/k⌋), the model's block estimator on each, each clipped to [lo, hi], averaged, plus noise calibrated to
    the sensitivity (hi - lo)/k: Laplace((hi - lo)/(kε)) (``noise="laplace"``), Gaussian σ = ((hi - lo)/k) σ_aG(ε, δ)
    with the exact analytic calibration (``"gauss"``), or none (privacy none, k = 1: the clipped full-sample
    estimator). Records are used as given: every block estimate is clipped to [lo, hi], which is what the privacy
    rests on. The statistic is the average of the clipped block estimates."""

    def __init__(self, *, model: str, blocks: int, lo: float, hi: float, noise: str | None, eps: float | None,
                 delta: float | None = None, extra: dict | None = None, **kw):
        self.model, self.blocks, self.lo, self.hi = model, int(blocks), float(lo), float(hi)
        self.noise, self.eps, self.delta, self.extra = noise, eps, delta, dict(extra or {})
        super().__init__(**kw)

    def statistic(self, records, rng=None) -> np.ndarray:
        from .subsample_aggregate import get_block_estimator

        x = as_records(records, 1, n=self.n)
        est = get_block_estimator(self.model)
        n, k = x.shape[0], self.blocks
        t = n // k
        r = n - k * t
        total = 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            if r:
                total += np.clip(est.from_data(x[: r * (t + 1)].reshape(r, t + 1), self.extra), self.lo, self.hi).sum()
            total += np.clip(est.from_data(x[r * (t + 1):].reshape(k - r, t), self.extra), self.lo, self.hi).sum()
        return np.array([total / k])

    def release_from_statistic(self, statistic, rng, reps: int) -> np.ndarray:
        """The estimates (reps,) from the averages of the clipped block estimates ``statistic`` (reps,)."""
        from .subsample_aggregate import noise_sampler

        reps = as_reps(reps)
        avg = np.asarray(statistic, dtype=float).reshape(reps)
        if self.noise is None:
            return avg
        return avg + noise_sampler(rng, reps, self.blocks, self.eps, self.hi - self.lo, self.noise, self.delta)

    def release(self, records, rng=None):
        rng = as_rng(rng)
        return float(self.release_from_statistic(self.statistic(records), rng, 1)[0])

    def noise_scale(self) -> float:
        from .subsample_aggregate import _gauss_sigma

        lam, k = self.hi - self.lo, self.blocks
        scales = {"laplace": lambda: lam / (k * self.eps), "gauss": lambda: lam / k * _gauss_sigma(self.eps, self.delta)}
        return scales[self.noise]() if self.noise in scales else 0.0

    def check_privacy(self) -> dict:
        g = self.guarantee
        sens = (self.hi - self.lo) / self.blocks  # one record moves one clipped block estimate by at most hi - lo
        noise = {"laplace": "laplace", "gauss": "gaussian"}.get(self.noise)
        return calibration_check(g.privacy, noise, self.noise_scale(), sens, sens, g.eps, g.delta)


class ClippedStatistic(CentralMechanism):
    """The clipped-statistic mechanism of the point problem (docs/methods/clipped-statistic.md): Y = the mean of
    ψ(X_i) = clip(T(X_i), l, u) (T(x) = x, or (x - μ0)² for normal-var) plus Laplace((u - l)/(nε)), inverted through
    m(θ) = E_θ ψ and projected onto N = [θ_lo, θ_hi]. Any real record is allowed: ψ is clipped to [l, u], which is
    what the privacy (sensitivity (u - l)/n) rests on. The statistic is the mean of ψ."""

    def __init__(self, *, model: str, l: float, u: float, theta_lo: float, theta_hi: float, eps: float,
                 sigma: float = 1.0, mu0: float = 0.0, **kw):
        self.model, self.l, self.u = model, float(l), float(u)
        self.theta_lo, self.theta_hi, self.eps = float(theta_lo), float(theta_hi), float(eps)
        self.sigma, self.mu0 = float(sigma), float(mu0)
        super().__init__(**kw)

    def statistic(self, records, rng=None) -> np.ndarray:
        x = as_records(records, 1, n=self.n)
        t = (x - self.mu0) ** 2 if self.model == "normal-var" else x
        return np.array([np.clip(t, self.l, self.u).mean()])

    def release_from_statistic(self, statistic, rng, reps: int) -> np.ndarray:
        from .clipped_statistic import estimate

        reps = as_reps(reps)
        avg = np.asarray(statistic, dtype=float).reshape(reps)
        y = avg + rng.laplace(0.0, (self.u - self.l) / (self.n * self.eps), reps)
        return estimate(self.model, y, self.theta_lo, self.theta_hi, self.l, self.u, self.sigma)

    def release(self, records, rng=None):
        rng = as_rng(rng)
        return float(self.release_from_statistic(self.statistic(records), rng, 1)[0])

    def check_privacy(self) -> dict:
        g = self.guarantee
        sens = (self.u - self.l) / self.n
        return calibration_check(g.privacy, "laplace", (self.u - self.l) / (self.n * self.eps), sens, sens, g.eps,
                                 g.delta)


class ConstantEstimate(CentralMechanism):
    """An estimator that ignores the data: θ̂ = ``value`` (private under every definition)."""

    def __init__(self, *, value: float, **kw):
        self.value = float(value)
        super().__init__(**kw)

    def statistic(self, records, rng=None) -> np.ndarray:
        as_records(records, 1, n=self.n)
        return np.array([0.0])

    def release_from_statistic(self, statistic, rng, reps: int) -> np.ndarray:
        return np.full(as_reps(reps), self.value)

    def release(self, records, rng=None):
        self.statistic(records)
        return self.value

    def check_privacy(self) -> dict:
        g = self.guarantee
        return calibration_check(g.privacy, None, 0.0, 0.0, 0.0, g.eps)
