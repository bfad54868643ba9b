"""The Bound record and the registry (problem, privacy) -> rate, bounds, simulation.

A :class:`Bound` is one certified (or order-only) lower or upper bound on the minimax risk: a sympy
expression in named parameter symbols and free-parameter symbols, the ranges of its free
parameters, its validity conditions, its source and method/mechanism, and the derivation of its
constants. Numeric evaluation is ``lambdify`` of that one expression (cached), so the expression a
user reads is the expression that is evaluated.

A problem module (``boundcalc/problems/*.py``) defines one :class:`Problem` subclass (its parameters,
rate terms, bounds per privacy model and simulation check) and registers it with
:func:`register_problem_class`; the registry keeps the per-(problem, privacy) view of it, an
:class:`Entry`, which is what the application layer uses. The registry is passive (it imports no problem module): :mod:`boundcalc.app.catalog` discovers the
problem modules and installs its loader here, and the CLI and the API reach problems through it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import sympy as sp

from . import symbolic
from .errors import InputError
from .params import ParamSpec


@dataclass(frozen=True)
class FreeParameter:
    """A parameter of a bound that the solver tunes (maximising lower, minimising upper bounds).

    ``low``/``high`` map the problem's parameter values to the search range. Integer parameters
    are searched over integers; ``log`` selects a logarithmic grid.
    """

    symbol: sp.Symbol
    low: Callable[[dict], float]
    high: Callable[[dict], float]
    integer: bool = False
    log: bool = True
    doc: str = ""

    @property
    def name(self) -> str:
        return self.symbol.name


@dataclass(frozen=True)
class Condition:
    """A validity condition of a bound; a bound whose condition fails is not used."""

    text: str
    holds: Callable[[dict], bool]


@dataclass(eq=False, kw_only=True)
class Bound:
    """One lower or upper bound on the minimax risk (fields by keyword only: four of them are strings).

    ``expr`` is in the symbols of :mod:`boundcalc.core.symbolic` (parameters) and the free parameters'
    symbols. ``optimum`` optionally maps free symbols to a symbolic optimum (a valid choice of the
    free parameters in closed form, used for fast vectorised evaluation).
    ``derivation`` is the short chain of named steps that proves the constants.
    """

    side: str  # "lower" or "upper"
    name: str  # short id, unique within an entry
    label: str  # method (lower) or mechanism (upper), human readable
    expr: sp.Expr
    source: str
    derivation: str
    certified: bool = True
    free: tuple = ()
    conditions: tuple = ()
    optimum: dict | None = None
    # simulation needs (noise constants); "why_not_certified"; "no_data": True on the certified risk of an estimator
    # that ignores the data (the problem's no-data risk, which every listed upper bound is compared with)
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        # ``expr`` and the ``optimum`` values may be given as zero-argument functions (``lambda: ...``): they are
        # called here, at once, or read from the disk cache of built expressions (symbolic.thunk_value)
        if callable(self.expr) and not isinstance(self.expr, sp.Basic):
            self.expr = symbolic.thunk_value(self.expr)
        if self.optimum:
            self.optimum = {k: (symbolic.thunk_value(v) if callable(v) and not isinstance(v, sp.Basic) else v)
                            for k, v in self.optimum.items()}

    # ------------------------------------------------------------------ evaluation
    def _args(self):
        args = self.__dict__.get("_sorted_args")
        if args is None:  # the expression never changes: its sorted symbols are computed once
            args = self.__dict__["_sorted_args"] = sorted(self.expr.free_symbols, key=lambda x: x.name)
        return list(args)

    def _lambdified(self, backend: str):
        cache = self.__dict__.setdefault("_fn_cache", {})
        if backend not in cache:
            args = self._args()
            if backend == "numpy":
                fn = symbolic.numpy_lambdify(args, self.expr)
            else:
                fn = symbolic.mpmath_lambdify(args, self.expr)
            cache[backend] = (args, fn)
        return cache[backend]

    def evaluate(self, values: dict, free: dict | None = None, fallback: bool = True) -> np.ndarray:
        """Evaluate at parameter ``values`` (floats or arrays, by name) and free-parameter values.

        Vectorised: arrays broadcast. Points where float64 gives a non-finite result are re-done in
        mpmath (50 digits); a value that stays non-finite is returned as ``nan`` (the caller drops it).
        """
        allv = _symbol_values(values, free)
        args, fn = self._lambdified("numpy")
        missing = [a.name for a in args if a.name not in allv]
        if missing:
            raise KeyError(f"bound {self.name}: no value for {missing}")
        # numpy float64 inputs: overflow gives inf (then the mpmath fallback), not Python's OverflowError
        out = _call_generated(fn, [np.asarray(allv[a.name], dtype=float) for a in args])
        bad = ~np.isfinite(out)
        if fallback and bad.any():
            out = np.array(out, dtype=float, copy=True)
            argvals = np.broadcast_arrays(*[np.asarray(allv[a.name], float) for a in args]) if args else []
            idx = np.argwhere(bad) if out.ndim else [()]
            for ix in idx:
                ix = tuple(ix)
                out[ix] = self._evaluate_mpmath({a.name: float(v[ix]) for a, v in zip(args, argvals)})
        return out

    def grid_function(self, values: dict):
        """The float64 values of the expression at the parameter ``values`` (scalars) as a function of the free
        parameters: ``f(points)``, ``points`` an array with one row per point and one column per free parameter
        (in the order of ``free``), returns an array of one value per row.

        The same computation as ``evaluate(values, {name: points[:, j]}, fallback=False)`` broadcast to one value
        per row (the same generated function on the same arguments, so the same bits), with what does not depend
        on the points (names, argument order, the other parameters' values) looked up once: the solver calls it at
        every level of its grid search.
        """
        allv = _symbol_values(values, None)
        args, fn = self._lambdified("numpy")
        columns = {fp.name: j for j, fp in enumerate(self.free)}
        fixed, slots, missing = [], [], []
        for pos, a in enumerate(args):
            if a.name in columns:
                slots.append((pos, columns[a.name]))
            elif a.name in allv:
                fixed.append((pos, allv[a.name]))
            else:
                missing.append(a.name)
        n_args = len(args)

        def at(points: np.ndarray) -> np.ndarray:
            if missing:
                raise KeyError(f"bound {self.name}: no value for {missing}")
            argv = [None] * n_args
            for pos, v in fixed:
                argv[pos] = np.asarray(v, dtype=float)
            for pos, j in slots:
                argv[pos] = points[:, j]
            out = _call_generated(fn, argv)
            shape = (points.shape[0],)
            return out if out.shape == shape else np.broadcast_to(out, shape)

        return at

    def _evaluate_mpmath(self, point: dict) -> float:
        import mpmath

        args, fn = self._lambdified("mpmath")
        with mpmath.workdps(50):
            try:
                val = fn(*[mpmath.mpf(point[a.name]) for a in args])
                val = float(mpmath.re(val))
            except Exception:  # mpmath raises several kinds (NoConvergence, ...): the point is unusable
                return math.nan
        return val if math.isfinite(val) else math.nan

    def holds(self, values: dict) -> list[str]:
        """The texts of the conditions that fail at ``values`` (empty: the bound applies)."""
        return [c.text for c in self.conditions if not c.holds(values)]

    def closed_form(self) -> sp.Expr | None:
        """The bound at its symbolic optimum (no free parameters left), if one is known."""
        if not self.free:
            return self.expr
        if self.optimum is None:
            return None
        if "_closed_expr" not in self.__dict__:  # substituted once per bound (expr and optimum are fixed)
            self.__dict__["_closed_expr"] = _substitute_unevaluated(self.expr, self.optimum)
        return self.__dict__["_closed_expr"]


def _substitute_unevaluated(expr: sp.Expr, optimum: dict) -> sp.Expr:
    """``expr`` with the free parameters replaced by their optimum expressions, left unevaluated.

    The result is only lambdified, so sympy's re-simplification of every rebuilt node is wasted work, and for
    nested ``Max``/``Min`` it is most of the cost (the staircase bound's ``subs`` took 7 s, this takes 0.02 s).
    Replacement is repeated until no free parameter is left, so an optimum written in terms of another free
    parameter is resolved as sequential ``subs`` would."""
    out = expr
    with sp.evaluate(False):
        for _ in range(len(optimum) + 1):
            new = out.xreplace(optimum)
            if new is out or not (new.free_symbols & set(optimum)):
                return new
            out = new
    return out


def _call_generated(fn, argv: list) -> np.ndarray:
    """``fn(*argv)`` (a bound's generated numpy function on float64 arrays) as a float array, floating-point
    warnings silenced; NaN of the broadcast shape where Python raises (an integer power overflowing, a division by
    an exact zero), so the caller's fallback or the solver treats those points like any other non-finite value."""
    with np.errstate(all="ignore"):
        try:
            out = np.asarray(fn(*argv), dtype=float)
        except (OverflowError, ZeroDivisionError):
            out = np.full(np.broadcast_shapes(*[x.shape for x in argv]) if argv else (), np.nan)
    if out.ndim == 0:
        out = np.asarray(float(out))
    return out


def _symbol_values(values: dict, free: dict | None) -> dict:
    out = {}
    for name, v in values.items():
        sym = symbolic.PARAM_SYMBOLS.get(name)
        out[sym.name if sym is not None else name] = v
    if free:
        out.update(free)
    return out


# ---------------------------------------------------------------------- registry

@dataclass
class CheckSpec:
    """How a problem is simulated.

    ``instances(trial)`` (``trial``: a :class:`boundcalc.app.simulate.Trial`): a generator yielding, for
    one sample size, one ``(name, errors, description)`` or ``(name, errors, description, predicted)``
    per hard instance. ``errors``: the losses of the ``trial.reps`` runs of the mechanism, or a float
    (the exact risk), or the tuple ``trial.interval(errors)``; ``predicted``: the exact risk, where
    known. A fifth element ``{"upper": value, "mechanism": label}`` marks an instance of another mechanism
    than the row's: it is checked against that certified upper bound instead of the row's, reported on a
    line of its own and left out of the row's worst case and slope. Yielding nothing skips the sample size (say why in ``trial.notes``). Random draws come
    from ``trial.rng`` only, so a seed fixes the whole check.
    ``ns``: the default sample sizes, a tuple or ``ns(values)``.
    ``tolerance``: the slope tolerance, a number or ``tolerance(values)``.
    ``prepare(values, reps, notes)``: the number of replications to use (may lower ``reps``), or None.
    ``notes``: notes printed with every result of this check.
    The row's upper bound is ``trial.upper`` (the best certified one unless the generator sets another).
    """

    instances: object
    ns: object
    tolerance: object = 0.25
    prepare: object = None
    notes: tuple = ()


#: the methods of a :class:`Problem` that an :class:`Entry` hands out (bound to the registered instance)
HOOKS = ("rate", "bounds", "validate", "derived", "lower_rate", "report", "mechanism")


class Entry:
    """One (problem, privacy) pair: the view of a :class:`Problem` at one privacy model (:meth:`Problem.entry`),
    which the application layer uses. It holds nothing of its own: each field is read from the problem.

    ``problem``: the problem's name; ``params``: its parameters at this model (the privacy model adds its own);
    ``title``, ``source``, ``notes``, ``check`` (a :class:`CheckSpec`, a lazy ``"module:name"`` path, or None):
    the problem's per-privacy data; ``rate``, ``bounds``, ``validate``, ``derived``, ``lower_rate``, ``report``,
    ``mechanism``: the problem's methods of those names (see :class:`Problem`); ``definition``: the problem itself.
    """

    __slots__ = ("definition", "privacy")

    def __init__(self, definition: "Problem", privacy: str):
        self.definition, self.privacy = definition, privacy

    def __repr__(self) -> str:
        return f"Entry({self.problem!r}, {self.privacy!r})"

    def _data(self, attr):
        return self.definition.per_privacy(getattr(self.definition, attr), self.privacy)

    @property
    def problem(self) -> str:
        return self.definition.name

    @property
    def params(self) -> tuple:
        return tuple(self._data("params") or ())

    @property
    def title(self) -> str:
        return self._data("titles") or self.definition.title

    @property
    def source(self) -> str:
        return self._data("sources") or ""

    @property
    def check(self):
        return self._data("checks")

    @property
    def notes(self) -> tuple:
        return tuple(self._data("notes") or ())

    def with_derived(self, values: dict) -> dict:
        """``values`` plus this entry's auxiliary values (e.g. the implied TV level)."""
        v = dict(values)
        v.update(self.derived(values) or {})
        return v

    def check_function(self):
        check = self.check
        if check is None or not isinstance(check, str):
            return check
        import importlib

        mod, _, fn = str(check).partition(":")
        return getattr(importlib.import_module(mod), fn)


def _hook(name):
    return property(lambda self: getattr(self.definition, name),
                    doc=f"The problem's method ``{name}`` (bound to the registered instance).")


for _name in HOOKS:
    setattr(Entry, _name, _hook(_name))
del _name


class Problem:
    """One estimation problem: one module, one subclass, one registered instance (the pattern of
    scipy.stats: a small declarative class per problem, the shared machinery here fills in the rest).

    Subclassing
    -----------
    A subclass sets, as literals in its class body (the catalog reads them from the source without importing
    the module, so that ``boundcalc rate`` imports only the module asked for): ``name``, ``aliases`` and
    ``privacies`` (the privacy models it supports); and ``title``. It defines these methods of the parameter
    values ``values`` (a dict that holds ``values["privacy"]``):

    - ``rate(values)``: list of (label, sympy term), the minimax rate being their sum (order only);
    - ``bounds(values)``: list of :class:`Bound` (built from structural parameters such as k; cache them);
    - optional, with defaults here that do nothing (as scipy's ``_argcheck`` accepts every shape):
      ``validate(values)`` (cross-parameter checks, raise :class:`InputError`), ``derived(values)`` (a dict
      of auxiliary values, e.g. an implied TV level), ``lower_rate(values)`` (the rate of the lower bound
      where it differs from ``rate``; None: the same), ``report(values, result)`` (extra notes on a result),
      ``mechanism(values, upper, bound)`` (the runnable mechanism of an upper bound: see
      :mod:`boundcalc.mechanisms.runnable`).

    Where a method differs between privacy models, define one method per model instead, named with the
    model as suffix (``bounds_pure``, ``bounds_none``, ``rate_local``, ...): the base's method calls the one
    of ``values["privacy"]`` (as scipy's ``pdf`` calls ``_pdf``), so no method branches on the privacy model.

    Per-privacy data are class attributes named after their field in the plural: ``params`` (its
    :class:`ParamSpec` s; the privacy model adds its own), ``titles`` (default: ``title``), ``sources``,
    ``checks`` (a :class:`CheckSpec` or a lazy ``"module:name"`` path), ``notes`` and ``examples`` (sensible
    keyword arguments of :func:`boundcalc.rate`, with ``n``, that run in about a second: the tests run their
    whole battery over every problem at its examples). Each may be one value for every privacy model or a dict
    keyed by privacy model (the key None: every model not listed; a model missing from the dict: nothing);
    ``examples`` is always such a dict. :meth:`entry` gives the per-privacy :class:`Entry` the application
    layer uses; :func:`register_problem_class` registers one per privacy model.

    Adding a problem (checklist)
    ----------------------------
    1. One module in ``boundcalc/problems/`` (named after the problem, ``-`` as ``_``): the subclass,
       decorated with :func:`register_problem_class`, with its literal ``name``, ``aliases``, ``privacies``,
       its ``params``, ``examples`` for every privacy model, ``sources``, and a ``checks`` simulation where a
       mechanism can be simulated. Lower-bound lemmas shared with other problems come from their
       :class:`Method` (list a family, e.g. :class:`TwoPointFamily`, and call
       :func:`boundcalc.methods.method_bounds`); each :class:`Bound` states its source and derivation, and is
       ``certified`` only when every constant is proved.
    2. One page ``docs/problems/<name>.md``: the problem, its bounds and their derivations, with references.
    Nothing else: the catalog, the docs index, ``boundcalc list`` and the tests' parameter table are derived
    from the registry, and the per-pair tests (tests/test_every_pair.py) run over the new pairs at their
    examples.

    Example: the mean θ of Bernoulli(θ) data, loss (θ̂-θ)², no privacy. The sample mean has risk
    θ(1-θ)/n <= 1/(4n); the estimator (ΣX + √n/2)/(n + √n) has constant risk 1/(4(1+√n)²) and is the
    Bayes estimator for the prior Beta(√n/2, √n/2), so that is the minimax risk (Hodges & Lehmann 1950).

    >>> import sympy as sp
    >>> from boundcalc.core.bounds import Bound, Problem
    >>> from boundcalc.core.symbolic import n
    >>> class BernoulliMean(Problem):
    ...     name, privacies = "bernoulli-mean", ("none",)
    ...     title = "Bernoulli mean, loss (θ̂-θ)²"
    ...     sources = "Hodges & Lehmann (1950)"
    ...     examples = {"none": {"n": 100}}
    ...
    ...     def rate(self, values):
    ...         return [("sampling", 1 / n)]
    ...
    ...     def bounds_none(self, values):
    ...         return [Bound(side="upper", name="sample-mean", label="sample mean", expr=1 / (4 * n),
    ...                       source="textbook", derivation="Var(X̄) = θ(1-θ)/n <= 1/(4n)"),
    ...                 Bound(side="lower", name="bayes-beta", label="Bayes risk", expr=1 / (4 * (1 + sp.sqrt(n)) ** 2),
    ...                       source="Hodges & Lehmann (1950)", derivation="Beta(√n/2, √n/2) prior: constant Bayes risk")]
    >>> entry = BernoulliMean().entry("none")  # register_problem_class registers this view
    >>> [(b.side, float(b.evaluate({"n": 100}))) for b in entry.bounds({"privacy": "none", "n": 100})]
    [('upper', 0.0025), ('lower', 0.002066115702479339)]
    >>> entry.title, entry.source, entry.validate({"n": 100}), entry.with_derived({"n": 100})
    ('Bernoulli mean, loss (θ̂-θ)²', 'Hodges & Lehmann (1950)', None, {'n': 100})
    """

    name: str = ""
    title: str = ""
    aliases: tuple = ()
    privacies: tuple = ()
    # per-privacy data: one value, or a dict keyed by privacy model (None: every other model)
    params: object = ()
    titles = None  # default: title
    sources = ""
    checks = None
    notes = ()
    examples: dict = {}  # privacy model -> keyword arguments of boundcalc.rate (with n)

    def _of_privacy(self, hook: str, values: dict):
        """The subclass's method ``<hook>_<privacy>`` for ``values["privacy"]``, or None."""
        privacy = values.get("privacy")
        return None if privacy is None else getattr(self, f"{hook}_{privacy}", None)

    def rate(self, values: dict) -> list:
        """(label, sympy term) pairs whose sum is the minimax rate (order only): ``rate_<privacy>(values)``."""
        method = self._of_privacy("rate", values)
        if method is None:
            raise NotImplementedError(f"{type(self).__name__} defines no rate(values) for {values.get('privacy')}")
        return method(values)

    def bounds(self, values: dict) -> list:
        """The :class:`Bound` s at these values: ``bounds_<privacy>(values)``."""
        method = self._of_privacy("bounds", values)
        if method is None:
            raise NotImplementedError(f"{type(self).__name__} defines no bounds(values) for {values.get('privacy')}")
        return method(values)

    def validate(self, values: dict) -> None:
        """Cross-parameter checks (raise :class:`InputError`): ``validate_<privacy>`` where defined, else none."""
        method = self._of_privacy("validate", values)
        return None if method is None else method(values)

    def derived(self, values: dict) -> dict:
        """Auxiliary values (e.g. an implied TV level): ``derived_<privacy>`` where defined, else none."""
        method = self._of_privacy("derived", values)
        return {} if method is None else method(values)

    def lower_rate(self, values: dict):
        """The rate of the lower bound where it differs from :meth:`rate` (``lower_rate_<privacy>`` where
        defined); by default None (the same)."""
        method = self._of_privacy("lower_rate", values)
        return None if method is None else method(values)

    def report(self, values: dict, result) -> list:
        """Extra notes about one result; by default none."""
        return []

    def mechanism(self, values: dict, upper, bound):
        """The runnable mechanism of the upper bound ``bound`` (a :class:`Bound`), tuned at ``upper`` (its evaluated
        value, with the optimal free parameters): ``mechanism_<privacy>(values, upper, bound)``, a
        :class:`boundcalc.mechanisms.runnable.Mechanism`. InputError where the problem has none."""
        method = self._of_privacy("mechanism", values)
        if method is None:
            raise InputError("mechanism", f"{self.name}/{values.get('privacy')}: no runnable mechanism for this "
                                          "privacy model (see docs/methods/from-a-plan-to-data.md)")
        return method(values, upper, bound)

    @staticmethod
    def per_privacy(value, privacy: str):
        """``value`` itself, or, for a dict keyed by privacy model, its entry for ``privacy`` (key None:
        every model not listed)."""
        if isinstance(value, dict):
            return value.get(privacy, value.get(None))
        return value

    def entry(self, privacy: str) -> "Entry":
        """The per-privacy view of this problem used by the application layer."""
        for hook in ("rate", "bounds"):
            if getattr(type(self), hook) is getattr(Problem, hook) and not hasattr(self, f"{hook}_{privacy}"):
                raise TypeError(f"{type(self).__name__}: the method {hook}(values) (or {hook}_{privacy}(values)) "
                                "is required")
        return Entry(self, privacy)


def register_problem_class(cls):
    """Register a :class:`Problem` subclass (usable as a class decorator): one instance, one
    :class:`Entry` per privacy model it supports."""
    problem = cls()
    info = register_problem(problem.name, problem.title, problem.aliases)
    info.definitions.append(problem)
    for privacy in problem.privacies:
        register(problem.entry(privacy))
    return cls


# ---------------------------------------------------------------------- lower-bound methods

@dataclass(frozen=True)
class TwoPointFamily:
    """A family shape: two hypotheses P_± of a problem whose estimates are ``2s`` apart in the loss.

    ``loss_at_s``: the loss Φ(s) paid by any estimate on the wrong side (sympy); ``tv_one``: TV(P_+, P_-)
    of one observation; ``tv_product``: an upper bound on TV(P_+^n, P_-^n) (exact, or by data processing),
    or None. The rest describes the bound the methods build from it: ``name``, ``title`` (as printed; a
    method may prefix it), ``source``, ``derivation`` (of the family: separation and TVs), ``free``,
    ``optimum``, ``extra``. A problem lists its families in its bounds; every registered :class:`Method`
    that applies to the shape and the privacy model turns each into :class:`Bound` s
    (:func:`boundcalc.methods.method_bounds`).
    """

    name: str
    title: str
    loss_at_s: object
    tv_one: object
    tv_product: object = None
    source: str = ""
    derivation: str = ""
    free: tuple = ()
    optimum: dict | None = None
    extra: dict | None = None


@dataclass(frozen=True)
class HypercubeFamily:
    """A family shape: hypotheses P_v, v ∈ {±1}^m, whose loss splits over the coordinates.

    For every estimate θ̂ there are numbers u_1..u_m (functions of θ̂) with
    ``loss(θ̂, θ_v) >= weight · Σ_j φ(u_j - amplitude · v_j)``, φ(x) = x² (``loss = "l2sq"``) or |x|
    (``loss = "l1"``). ``n_coords``: m; ``amplitude``: a, the half-distance of the coordinate's two values;
    ``h2_flip`` and ``tv_flip``: upper bounds on H²(P_v, P_v') = ½Σ(√p_v - √p_v')² (or None) and on
    TV(P_v, P_v') of ONE observation, over every pair v, v' that differ in one coordinate. The rest describes
    the bound, as for :class:`TwoPointFamily`. The methods for this shape: :mod:`boundcalc.methods.hellinger_assouad`.
    """

    name: str
    title: str
    n_coords: object
    amplitude: object
    weight: object
    tv_flip: object
    h2_flip: object = None
    loss: str = "l2sq"
    source: str = ""
    derivation: str = ""
    free: tuple = ()
    optimum: dict | None = None
    conditions: tuple = ()
    extra: dict | None = None


class Method:
    """A lower-bound lemma written once: ``applies_to(family, privacy)`` says for which family shape and
    privacy model it holds, ``bounds(family, privacy)`` returns its :class:`Bound` s. Registered with
    :func:`register_method` (in a module listed in :data:`boundcalc.methods.METHOD_MODULES`),
    a method is applied to every problem that lists a family of its shape
    (:func:`boundcalc.methods.method_bounds`)."""

    name: str = ""
    shape: type = object
    privacies: tuple = ()

    def applies_to(self, family, privacy: str) -> bool:
        return isinstance(family, self.shape) and privacy in self.privacies

    def bounds(self, family, privacy: str) -> list:
        raise NotImplementedError


_METHODS: list = []


def register_method(cls):
    """Register a :class:`Method` subclass (usable as a class decorator)."""
    _METHODS.append(cls())
    return cls


def registered_methods() -> list:
    """The methods registered so far (the registry imports no method module: see
    :func:`boundcalc.methods.method_bounds`)."""
    return list(_METHODS)


@dataclass
class ProblemInfo:
    name: str
    title: str
    aliases: tuple = ()
    entries: dict = field(default_factory=dict)  # privacy -> Entry
    definitions: list = field(default_factory=list)  # the Problem instances (one per module)


_PROBLEMS: dict[str, ProblemInfo] = {}
_ALIASES: dict[str, str] = {}
# discovery lives in the application layer (boundcalc.app.catalog), which installs these two hooks; the
# registry itself imports no problem module
_LOAD_FOR = None
_LOAD_ALL = None


def set_loader(load_for, load_all) -> None:
    """Install the discovery functions used by :func:`resolve_problem` and :func:`problems`."""
    global _LOAD_FOR, _LOAD_ALL
    _LOAD_FOR, _LOAD_ALL = load_for, load_all


def register_problem(name: str, title: str, aliases: tuple = ()) -> ProblemInfo:
    info = _PROBLEMS.get(name)
    if info is None:
        info = _PROBLEMS[name] = ProblemInfo(name, title, tuple(aliases))
    else:
        info.aliases = tuple(dict.fromkeys(info.aliases + tuple(aliases)))
    for a in aliases:
        _ALIASES[a] = name
    return info


def register(entry: Entry) -> Entry:
    info = _PROBLEMS.get(entry.problem)
    if info is None:
        raise ValueError(f"register_problem({entry.problem!r}) first")
    if entry.privacy in info.entries:
        raise ValueError(f"({entry.problem}, {entry.privacy}) registered twice")
    info.entries[entry.privacy] = entry
    return entry


def registered() -> dict[str, ProblemInfo]:
    """The problems registered so far (no discovery)."""
    return dict(_PROBLEMS)


def lookup_problem(name) -> ProblemInfo | None:
    """The registered problem called ``name`` or an alias of it, else None (no discovery)."""
    key = str(name).strip().lower()
    return _PROBLEMS.get(_ALIASES.get(key, key))


def problems() -> dict[str, ProblemInfo]:
    """Every problem (all of them once :mod:`boundcalc.app.catalog` is imported)."""
    if _LOAD_ALL is not None:
        _LOAD_ALL()
    return registered()


def resolve_problem(name, privacy=None) -> ProblemInfo:
    """The problem called ``name`` (or an alias), its modules imported: all of them, or, with ``privacy`` (a
    model's name), at least those registering that model's entry."""
    if _LOAD_FOR is not None and not _LOAD_FOR(name, privacy):
        _LOAD_ALL()
    info = lookup_problem(name)
    if info is None:
        raise InputError("problem", "must be one of " + ", ".join(sorted(problems())), name)
    return info


def get_entry(problem, privacy) -> Entry:
    from .privacy import get_model

    try:
        hint = get_model(privacy).name
    except InputError:  # reported below, after the problem name is checked
        hint = None
    info = resolve_problem(problem, hint)
    model = get_model(privacy)
    if model.name not in info.entries:
        info = resolve_problem(problem)  # every module of the problem: the message lists every model
    if model.name not in info.entries:
        raise InputError("privacy", f"for --problem {info.name} must be one of "
                         + ", ".join(info.entries), privacy)
    return info.entries[model.name]


def param_specs(entry: Entry) -> list[ParamSpec]:
    """All parameters of an entry: problem parameters then the privacy model's."""
    from .privacy import get_model

    return list(entry.params) + get_model(entry.privacy).params()
