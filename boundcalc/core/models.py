"""Built-in regular one-parameter models, as sympy log-densities.

Each :class:`Model` is fixed in code: no user string ever reaches ``sympify``. A user selects a
model by name (``get_point_model("exponential")``); the parameter values are numbers validated elsewhere.

The Fisher information is *derived by sympy* from the log-density, as
``I(θ) = -E_θ[∂²/∂θ² log p_θ(X)]`` (the sum or integral over the support is done symbolically),
and cached per model. The textbook values (tested in ``tests/test_models.py``):

=============  ==========================  ==========================  ==================
model          density                     parameter θ                 I(θ)
=============  ==========================  ==========================  ==================
bernoulli      θ^x (1-θ)^(1-x), x∈{0,1}     success probability         1/(θ(1-θ))
poisson        e^{-λ} λ^x / x!, x∈ℕ          mean λ                      1/λ
exponential    λ e^{-λx}, x>0               rate λ                      1/λ²
normal-mean    N(θ, σ²), σ known            mean θ                      1/σ²
normal-var     N(μ, v), μ known             variance v = σ²             1/(2v²)
=============  ==========================  ==========================  ==================

``normal-location`` is an alias of ``normal-mean``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from . import symbolic as S
from .errors import InputError

__all__ = ["Model", "MODELS", "ALIASES", "get_point_model", "model_names"]


@dataclass(frozen=True)
class Model:
    """A regular one-parameter family ``p_θ(x)``.

    name:            canonical name (CLI ``--model``).
    theta:           the parameter symbol.
    x:               the data symbol.
    log_density:     ``log p_θ(x)`` as a sympy expression in ``theta``, ``x`` and the extra symbols.
    support:         ``"binary"`` ({0,1}), ``"count"`` ({0,1,2,...}), ``"positive"`` ((0,∞)) or
                     ``"real"`` (ℝ): where the expectation sums/integrates.
    natural_space:   the open/closed natural parameter domain ``(low, high)`` (±inf allowed).
    parameter_space: the default bounded parameter space Θ = [low, high] used by private estimators
                     (diameter Λ = high - low).
    anchor:          how a user-set diameter Λ places Θ: ``"low"`` keeps the lower end,
                     ``"center"`` keeps the centre.
    theta_default:   a default true parameter (interior of ``parameter_space``).
    extra:           extra fixed parameters as ``((symbol, default), ...)`` (e.g. σ for normal-mean).
    """

    name: str
    theta: sp.Symbol
    x: sp.Symbol
    log_density: sp.Expr
    support: str
    natural_space: tuple
    parameter_space: tuple
    theta_default: float
    anchor: str = "low"
    extra: tuple = ()
    doc: str = ""
    source: str = ""
    theta_name: str = "theta"

    # ------------------------------------------------------------------ symbolic
    @property
    def extra_defaults(self) -> dict:
        """``{name: default}`` for the extra parameters."""
        return {str(s): v for s, v in self.extra}

    def extra_symbols(self) -> dict:
        return {str(s): s for s, _ in self.extra}

    def density(self) -> sp.Expr:
        return sp.exp(self.log_density)

    def score(self) -> sp.Expr:
        """``S_θ(x) = ∂/∂θ log p_θ(x)``."""
        return S.simplify(S.diff(self.log_density, self.theta))

    def expectation(self, expr: sp.Expr) -> sp.Expr:
        """``E_θ[expr(X)]``, summed/integrated symbolically over the support."""
        x = self.x
        dens = S.simplify(self.density())
        if self.support == "binary":
            return S.simplify(sum((expr * dens).subs(x, v) for v in (0, 1)))
        if self.support not in ("count", "positive", "real"):
            raise ValueError(f"unknown support {self.support!r}")  # pragma: no cover
        # linearity: E[Σ c_j g_j(X)] = Σ c_j E[g_j(X)], with E[1] = 1 (the density is normalised:
        # checked by tests/test_models.py); each E[g_j] is one sum/integral (much faster than one
        # big integrand)
        lo = 0 if self.support in ("count", "positive") else -sp.oo
        total = sp.Integer(0)
        for term in sp.Add.make_args(sp.expand(expr)):
            coeff, g = term.as_independent(x, as_Add=False)
            if g == 1:
                total += coeff
            elif self.support == "count":
                total += coeff * sp.summation(g * dens, (x, lo, sp.oo))
            else:
                total += coeff * S.integrate(g * dens, (x, lo, sp.oo), conds="none")
        return S.simplify(total)

    def fisher_information(self) -> sp.Expr:
        """``I(θ) = -E_θ[∂²_θ log p_θ(X)]`` computed by sympy (cached per model).

        For these regular families this equals ``E_θ[S_θ(X)²]``; both are checked in the tests.
        """
        key = self.name
        if key not in _FISHER_CACHE:
            d2 = S.diff(self.log_density, self.theta, 2)
            _FISHER_CACHE[key] = S.simplify(-self.expectation(d2))
        return _FISHER_CACHE[key]

    def total_mass(self) -> sp.Expr:
        """∑/∫ p_θ over the support (1 for a normalised density; checked in the tests)."""
        x = self.x
        dens = self.density()
        if self.support == "binary":
            return S.simplify(sum(dens.subs(x, v) for v in (0, 1)))
        if self.support == "count":
            return S.simplify(sp.summation(dens, (x, 0, sp.oo)))
        lo = 0 if self.support == "positive" else -sp.oo
        return S.simplify(S.integrate(dens, (x, lo, sp.oo), conds="none"))

    def fisher_information_from_score(self) -> sp.Expr:
        """``E_θ[S_θ(X)²]`` (an independent route to the Fisher information)."""
        return S.simplify(self.expectation(self.score() ** 2))

    def fisher_function(self, **extra):
        """Numeric ``θ -> I(θ)`` (numpy-vectorised) with the extra parameters substituted."""
        vals = {**self.extra_defaults, **extra}
        expr = self.fisher_information().subs({s: vals[str(s)] for s, _ in self.extra})
        from .symbolic import numpy_lambdify  # numpy namespace without ``from numpy import *`` (start-up)

        return numpy_lambdify([self.theta], expr)

    def kl_divergence(self) -> tuple:
        """``(expr, theta1)``: ``KL(P_θ ‖ P_θ1)`` as a sympy expression (cached)."""
        key = self.name
        if key not in _KL_CACHE:
            th1 = sp.Symbol("theta_1", positive=bool(self.theta.is_positive), real=True)
            diff = self.log_density - self.log_density.subs(self.theta, th1)
            kl = S.simplify(self.expectation(sp.expand_log(diff, force=True)))
            # expanded logs: no θ^θ powers that overflow in floating point
            _KL_CACHE[key] = (sp.expand_log(kl, force=True), th1)
        return _KL_CACHE[key]

    # ------------------------------------------------------------------ numeric
    def check_theta(self, theta: float, param: str = "theta") -> float:
        lo, hi = self.natural_space
        if not (lo < theta < hi):
            raise InputError(param, f"must lie strictly inside ({lo}, {hi}) for model {self.name}",
                             theta)
        return float(theta)

    def sampler(self, rng: np.random.Generator, theta: float, size, **extra) -> np.ndarray:
        """Draw i.i.d. samples from ``p_θ`` with a seeded numpy Generator."""
        vals = {**self.extra_defaults, **extra}
        return _SAMPLERS[self.name](rng, float(theta), size, vals)


_FISHER_CACHE: dict = {}
_KL_CACHE: dict = {}

# ---------------------------------------------------------------------- the library
_x = sp.Symbol("x", real=True)
_p = sp.Symbol("theta", positive=True)          # Bernoulli probability (0<θ<1 used in sums)
_lam = sp.Symbol("lambda", positive=True)       # Poisson mean / exponential rate
_mu = sp.Symbol("mu", real=True)                # normal mean
_sigma = sp.Symbol("sigma", positive=True)      # known normal standard deviation
_v = sp.Symbol("v", positive=True)              # normal variance
_mu0 = sp.Symbol("mu0", real=True)              # known normal mean (normal-var)
_xn = sp.Symbol("x", nonnegative=True, integer=True)
_xp = sp.Symbol("x", positive=True)

MODELS: dict = {
    "bernoulli": Model(
        name="bernoulli", theta=_p, x=_xn,
        log_density=_xn * sp.log(_p) + (1 - _xn) * sp.log(1 - _p),
        support="binary", natural_space=(0.0, 1.0), parameter_space=(0.0, 1.0), theta_default=0.3,
        doc="Bernoulli(θ): X ∈ {0,1}, P(X=1) = θ.", source="textbook"),
    "poisson": Model(
        name="poisson", theta=_lam, x=_xn,
        log_density=_xn * sp.log(_lam) - _lam - sp.log(sp.factorial(_xn)),
        support="count", natural_space=(0.0, np.inf), parameter_space=(0.0, 10.0), theta_default=2.0,
        doc="Poisson(λ): X ∈ {0,1,...}, mean λ.", source="textbook"),
    "exponential": Model(
        name="exponential", theta=_lam, x=_xp,
        log_density=sp.log(_lam) - _lam * _xp,
        support="positive", natural_space=(0.0, np.inf), parameter_space=(0.0, 10.0),
        theta_default=1.0, doc="Exponential with rate λ: density λ e^{-λx}, x > 0.",
        source="textbook"),
    "normal-mean": Model(
        name="normal-mean", theta=_mu, x=_x,
        log_density=-sp.log(2 * sp.pi * _sigma**2) / 2 - (_x - _mu) ** 2 / (2 * _sigma**2),
        support="real", natural_space=(-np.inf, np.inf), parameter_space=(-5.0, 5.0),
        theta_default=1.0, anchor="center", extra=((_sigma, 1.0),),
        doc="Normal location N(θ, σ²) with σ known (extra parameter sigma, default 1).",
        source="textbook"),
    "normal-var": Model(
        name="normal-var", theta=_v, x=_x,
        log_density=-sp.log(2 * sp.pi * _v) / 2 - (_x - _mu0) ** 2 / (2 * _v),
        support="real", natural_space=(0.0, np.inf), parameter_space=(0.0, 10.0), theta_default=1.0,
        extra=((_mu0, 0.0),),
        doc="Normal scale N(μ0, v) with the mean μ0 known (extra parameter mu0, default 0); θ = v = σ².",
        source="textbook"),
}

ALIASES = {"normal-location": "normal-mean", "gaussian-mean": "normal-mean",
           "normal-variance": "normal-var", "exp": "exponential"}


def model_names() -> tuple:
    return tuple(MODELS)


def get_point_model(name) -> Model:
    """The model called ``name`` (case-insensitive; aliases allowed) or :class:`InputError`."""
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in MODELS:
        raise InputError("model", "must be one of " + ", ".join(MODELS)
                         + " (aliases: " + ", ".join(ALIASES) + ")", name)
    return MODELS[key]


# ---------------------------------------------------------------------- samplers
def _s_bern(rng, th, size, vals):
    return (rng.random(size) < th).astype(np.float64)


def _s_pois(rng, th, size, vals):
    return rng.poisson(th, size).astype(np.float64)


def _s_exp(rng, th, size, vals):
    return rng.exponential(1.0 / th, size)


def _s_nmean(rng, th, size, vals):
    return rng.normal(th, float(vals["sigma"]), size)


def _s_nvar(rng, th, size, vals):
    return rng.normal(float(vals["mu0"]), np.sqrt(th), size)


_SAMPLERS = {"bernoulli": _s_bern, "poisson": _s_pois, "exponential": _s_exp,
             "normal-mean": _s_nmean, "normal-var": _s_nvar}
