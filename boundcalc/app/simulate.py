"""Simulation checks: run the mechanism behind the certified upper bound on hard instances.

Generic machinery shared by every problem's check: risk estimates with 99% confidence intervals
(Student's t with reps - 1 degrees of freedom: :func:`risk_interval`),
log-log slope fits, and the verdict. A problem supplies a :class:`CheckSpec` (its
grid of sample sizes and a generator of its hard instances, each run through the mechanism behind
the best certified upper bound); :func:`run_check` is the one loop that runs every problem's check.
Problem modules never import this module or the API: they receive a :class:`Trial` and yield
``(name, errors, description[, predicted risk])``.

Verdict (per n): the certified lower bound must not exceed the worst empirical risk over the
instances (upper end of its confidence interval): the lower bound is a bound on the worst case
of *any* estimator, so an empirical worst case clearly below it means a wrong lower bound. Every
instance's empirical risk (lower end of its interval) must not exceed the certified upper bound,
which holds for every distribution in the family. The fitted log-log slope of the worst empirical
risk against n must be within ``slope_tolerance`` of the slope predicted by the certified upper
bound over the same grid.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..core.bounds import CheckSpec  # noqa: F401 (the shape of a problem's check; re-exported)
from ..core.params import ParamSpec
from ..render.result import finite_or_none, format_param

#: confidence level of the risk intervals (99%: several rows and instances are compared, so a 95% interval
#: would fail a correct bound too often)
LEVEL = 0.99


@lru_cache(maxsize=None)
def quantile(size: int) -> float:
    """The two-sided Student-t quantile t_{size-1}((1 + LEVEL)/2) of a mean of ``size`` errors (inf below 2).

    Student's t, not the normal quantile 2.576: with few repetitions the sample standard deviation is itself
    noisy, and the normal interval is too short (with 3 reps it covers a normal mean with probability 0.88, not
    0.99: t_2(0.995) = 9.92). For large ``size`` the two agree (t_199(0.995) = 2.601)."""
    if size < 2:
        return math.inf
    from scipy import stats

    return float(stats.t.ppf(0.5 + LEVEL / 2, size - 1))


def risk_interval(errors: np.ndarray) -> tuple[float, float, float]:
    """Mean of ``errors`` and its 99% confidence interval, mean ± t·s/sqrt(reps) with the Student-t quantile of
    :func:`quantile` (exact for normal errors, approximate otherwise; wide for a handful of repetitions)."""
    errors = np.asarray(errors, float)
    m = float(errors.mean())
    q = quantile(errors.size)
    se = float(errors.std(ddof=1) / math.sqrt(errors.size)) if errors.size > 1 else math.inf
    # a risk is an average loss, never negative: the interval is clipped at 0
    return m, max(0.0, m - q * se), m + q * se


def fit_slope(ns, values) -> float | None:
    """Least-squares slope of log(values) against log(n)."""
    x = np.log(np.asarray(ns, float))
    y = np.asarray(values, float)
    ok = np.isfinite(y) & (y > 0)
    if ok.sum() < 2:
        return None
    return float(np.polyfit(x[ok], np.log(y[ok]), 1)[0])


@dataclass
class InstanceRisk:
    name: str
    risk: float
    ci_low: float
    ci_high: float
    description: str = ""
    predicted: float | None = None  # exact risk of the mechanism on this instance, where known
    #: an instance of another mechanism than the row's, checked against its own certified upper bound
    #: ``upper`` (None: the row's mechanism, checked against the row's upper bound); ``mechanism`` names it
    upper: float | None = None
    mechanism: str = ""


@dataclass
class CheckRow:
    n: int
    lower: float | None
    upper: float | None
    instances: list
    free_parameters: dict = field(default_factory=dict)
    mechanism: str = ""
    lower_method: str = ""

    @classmethod
    def from_bounds(cls, n: int, lower, upper, instances: list) -> "CheckRow":
        """A row from the best certified lower and upper BoundValues at n (either may be None)."""
        return cls(n, lower.value if lower else None, upper.value if upper else None, instances,
                   dict(upper.free_parameters) if upper else {}, upper.label if upper else "",
                   lower.label if lower else "")

    @property
    def own(self) -> list:
        """The instances of the row's mechanism (all of them if every instance has its own upper bound)."""
        return [i for i in self.instances if i.upper is None] or list(self.instances)

    @property
    def others(self) -> list:
        """The instances of other mechanisms, each with its own certified upper bound."""
        return [i for i in self.instances if i.upper is not None]

    @property
    def worst(self) -> InstanceRisk:
        return max(self.own, key=lambda i: i.risk)

    @property
    def risk(self):
        return self.worst.risk

    @property
    def ci_low(self):
        return self.worst.ci_low

    @property
    def ci_high(self):
        return self.worst.ci_high

    def failures(self) -> list[str]:
        out = []
        w = self.worst
        if self.lower is not None and w.ci_high < self.lower:
            out.append(f"n={self.n}: worst empirical risk {w.risk:.4g} (CI up to {w.ci_high:.4g}) is below the "
                       f"certified lower bound {self.lower:.4g}")
        for inst in self.instances:
            up = self.upper if inst.upper is None else inst.upper
            if up is not None and inst.ci_low > up:
                what = f"{inst.mechanism} on {inst.name}" if inst.upper is not None else inst.name
                out.append(f"n={self.n}: empirical risk {inst.risk:.4g} on {what} (CI from "
                           f"{inst.ci_low:.4g}) exceeds the certified upper bound {up:.4g}")
        return out

    def to_dict(self) -> dict:
        return {
            "n": int(self.n),
            "risk": finite_or_none(self.risk), "ci_low": finite_or_none(self.ci_low),
            "ci_high": finite_or_none(self.ci_high), "worst_instance": self.worst.name,
            "lower": finite_or_none(self.lower), "upper": finite_or_none(self.upper),
            "mechanism": self.mechanism, "lower_method": self.lower_method,
            "free_parameters": {k: (v if isinstance(v, int) else finite_or_none(v))
                                for k, v in self.free_parameters.items()},
            "instances": [{"name": i.name, "risk": finite_or_none(i.risk), "ci_low": finite_or_none(i.ci_low),
                           "ci_high": finite_or_none(i.ci_high), "predicted": finite_or_none(i.predicted),
                           "description": i.description,
                           **({"upper": finite_or_none(i.upper), "mechanism": i.mechanism}
                              if i.upper is not None else {})} for i in self.instances],
            "ok": not self.failures(),
        }


@dataclass
class CheckResult:
    problem: str
    privacy: str
    params: dict
    rows: list
    predicted_slope: float | None
    fitted_slope: float | None
    slope_tolerance: float
    reps: int
    seed: int
    elapsed: float = 0.0
    notes: list = field(default_factory=list)
    extra_failures: list = field(default_factory=list)

    @property
    def failures(self) -> list[str]:
        out = [f for r in self.rows for f in r.failures()] + list(self.extra_failures)
        if self.fitted_slope is None or self.predicted_slope is None:
            out.append("slope could not be fitted")
        elif abs(self.fitted_slope - self.predicted_slope) > self.slope_tolerance:
            out.append(f"fitted slope {self.fitted_slope:.3f} differs from predicted {self.predicted_slope:.3f} "
                       f"by more than {self.slope_tolerance}")
        return out

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict:
        return {
            "problem": self.problem, "privacy": self.privacy,
            "params": {k: ("inf" if v == math.inf else v) for k, v in self.params.items()},
            "reps": self.reps, "seed": self.seed,
            "rows": [r.to_dict() for r in self.rows],
            "fitted_slope": finite_or_none(self.fitted_slope),
            "predicted_slope": finite_or_none(self.predicted_slope),
            "slope_tolerance": self.slope_tolerance,
            "passed": self.passed, "failures": self.failures, "notes": list(self.notes),
            "elapsed_seconds": round(self.elapsed, 3),
        }

    def to_text(self) -> str:
        p = ", ".join(f"{k}={format_param(v)}" for k, v in self.params.items() if k != "n")
        lines = [f"check {self.problem} / {self.privacy}  ({p}); reps={self.reps}, seed={self.seed}",
                 f"{'n':>10} {'lower':>11} {'empirical':>11} {'99% CI':>25} {'upper':>11}  worst instance / mechanism"]
        for r in self.rows:
            lo = "n/a" if r.lower is None else f"{r.lower:.4g}"
            up = "n/a" if r.upper is None else f"{r.upper:.4g}"
            ci = f"[{r.ci_low:.4g}, {r.ci_high:.4g}]"
            flag = "" if not r.failures() else "  <-- FAIL"
            lines.append(f"{r.n:>10} {lo:>11} {r.risk:>11.4g} {ci:>25} {up:>11}  {r.worst.name} / {r.mechanism}{flag}")
            by_mech = {}
            for inst in r.others:  # other mechanisms: their worst instance against their own upper bound
                by_mech.setdefault(inst.mechanism, []).append(inst)
            for mech, insts in by_mech.items():
                w = max(insts, key=lambda i: i.risk)
                ci = f"[{w.ci_low:.4g}, {w.ci_high:.4g}]"
                flag = "" if w.ci_low <= w.upper and all(i.ci_low <= i.upper for i in insts) else "  <-- FAIL"
                lines.append(f"{'':>10} {'':>11} {w.risk:>11.4g} {ci:>25} {w.upper:>11.4g}  {w.name} / {mech}{flag}")
        fs = "n/a" if self.fitted_slope is None else f"{self.fitted_slope:.3f}"
        ps = "n/a" if self.predicted_slope is None else f"{self.predicted_slope:.3f}"
        lines.append(f"log-log slope: fitted {fs}, predicted {ps} (tolerance {self.slope_tolerance})")
        for note in self.notes:
            lines.append(f"note: {note}")
        for f in self.failures:
            lines.append(f"FAIL: {f}")
        lines.append(f"{'PASSED' if self.passed else 'FAILED'} in {self.elapsed:.1f} s")
        return "\n".join(lines)


def summarise(problem: str, privacy: str, params: dict, rows: list, reps: int, seed: int, notes=(),
              tolerance: float = 0.25, extra_failures=()) -> CheckResult:
    """The end of every check: the predicted slope is the log-log slope of the certified upper bound
    over the simulated grid, the fitted slope that of the worst empirical risk; then the verdict."""
    ns = [r.n for r in rows]
    predicted = fit_slope(ns, [r.upper for r in rows])
    fitted = fit_slope(ns, [r.risk for r in rows])
    return CheckResult(problem, privacy, dict(params), rows, predicted, fitted, tolerance, reps, seed,
                       notes=list(notes), extra_failures=list(extra_failures))


def progress_line(enabled: bool, text: str):
    if enabled:
        print(f"\r{text}\033[K", end="", file=sys.stderr, flush=True)


class Trial:
    """One sample size of a check: the problem's values at n, the rate result at n, the generator.

    ``n`` is ``ns[index]`` (``ns``: the whole grid of the check; ``seed``: the check's seed).
    ``result``: :func:`boundcalc.api.rate` at n; ``upper``/``lower``: its best certified bounds;
    ``derived``: the values at n with the entry's auxiliary values; ``bound(name)``: the entry's
    :class:`boundcalc.bounds.Bound` of that name at n; ``result_at(m)``: the rate result at another n; ``notes``/``failures``: lists the check's notes
    and extra failures are appended to; ``interval(errors)``: the risk and its confidence interval.
    """

    def __init__(self, entry, values, n, index, result, rng, reps, notes, failures, seed, ns):
        self.entry, self.values, self.n, self.index, self.ns = entry, values, n, index, ns
        self.result, self.rng, self.reps, self.notes = result, rng, reps, notes
        self.failures, self.seed = failures, seed
        self.upper, self.lower = result.upper, result.lower
        self._derived = self._bounds = None

    @property
    def derived(self) -> dict:
        if self._derived is None:
            self._derived = self.entry.with_derived({**self.values, "n": self.n})
        return self._derived

    #: the Student-t quantile of the confidence intervals, for a given number of repetitions
    quantile = staticmethod(quantile)

    @staticmethod
    def interval(errors):
        """:func:`risk_interval` of ``errors``: (mean, CI low, CI high)."""
        return risk_interval(errors)

    def result_at(self, n):
        """The rate result of this check's (problem, privacy, values) at another sample size ``n``
        (so a problem's instance generator can look along the grid without importing the API)."""
        from .api import rate

        params = {k: v for k, v in self.values.items() if k not in ("problem", "privacy")}
        return rate(self.entry.problem, self.values["privacy"], **{**params, "n": n})

    def bound(self, name):
        if self._bounds is None:
            self._bounds = {b.name: b for b in self.entry.bounds(self.derived)}
        return self._bounds[name]


def run_check(entry, values, spec: CheckSpec, ns=None, reps: int = 200, seed: int = 0,
              progress: bool = False) -> CheckResult:
    """The one simulation loop: for each n, the best bounds at n, the hard instances through the
    mechanism, a row with their risk intervals; then :func:`summarise`."""
    from .api import rate

    problem, privacy = entry.problem, values["privacy"]
    ns = list(ns or (spec.ns(values) if callable(spec.ns) else spec.ns))
    notes = list(spec.notes)
    if spec.prepare is not None:
        reps = spec.prepare(values, reps, notes)
    rng = np.random.default_rng(seed)
    params = {k: v for k, v in values.items() if k not in ("problem", "privacy")}
    rows, failures = [], []
    for i, n in enumerate(ns):
        progress_line(progress, f"check {problem}/{privacy}: n={n} ({i + 1}/{len(ns)})")
        res = rate(problem, privacy, **{**params, "n": n})
        trial = Trial(entry, values, n, i, res, rng, reps, notes, failures, seed, ns)
        instances = []
        for name, errors, desc, *more in spec.instances(trial):
            if isinstance(errors, float):  # an exact risk, no simulation needed
                m = a = b = errors
            elif isinstance(errors, tuple):  # (risk, CI low, CI high) already computed
                m, a, b = errors
            else:
                m, a, b = risk_interval(errors)
            predicted = more[0] if more else None
            own = more[1] if len(more) > 1 else {}  # another mechanism: {"upper": its bound, "mechanism": name}
            instances.append(InstanceRisk(name, m, a, b, desc, predicted, own.get("upper"), own.get("mechanism", "")))
        if instances:
            rows.append(CheckRow.from_bounds(n, trial.lower, trial.upper, instances))
    tol = spec.tolerance(values) if callable(spec.tolerance) else spec.tolerance
    return summarise(problem, privacy, params, rows, reps, seed, notes=notes, tolerance=tol,
                     extra_failures=failures)


#: the sample sizes of a check: the rates are asymptotic and the slope is fitted on log n, so a check
#: below n = 10 tests nothing; above 1e9 a simulation takes too long
NS_SPEC = ParamSpec("ns", "int", None, "sample sizes of the check", low=2, high=1e9)  # n = 1 has no spread to check
REPS_SPEC = ParamSpec("reps", "int", 200, "repetitions per sample size", low=2, high=1e7)
#: any non-negative integer numpy's SeedSequence takes (it has no upper limit)
SEED_SPEC = ParamSpec("seed", "int", 0, "random seed", low=0)


def parse_ns(ns) -> list[int]:
    """The check's sample sizes from a comma-separated string or a sequence: at least two distinct
    integers in [10, 1e9], no empty entry (``100,,200``, ``100,200,``), sorted. Raises InputError."""
    from ..core.errors import InputError

    if isinstance(ns, str):
        parts = [x.strip() for x in ns.split(",")]
        if not any(parts):
            raise InputError("ns", "must be comma-separated sample sizes such as 100,1000 (got an empty string)")
        if not all(parts):
            raise InputError("ns", "has an empty entry: give comma-separated sample sizes such as 100,1000", ns)
    elif isinstance(ns, (bytes, bytearray)) or not hasattr(ns, "__iter__"):
        raise InputError("ns", "must be a list of at least two sample sizes, e.g. [100, 1000]", ns)
    else:
        parts = list(ns)
    out = sorted({NS_SPEC.parse(x) for x in parts})
    if len(out) < 2:
        raise InputError("ns", "needs at least two distinct sample sizes", ns)
    return out


def check(problem, privacy="pure", reps: int = 200, seed: int = 0, ns=None, progress: bool = False,
          **params) -> CheckResult:
    """Run the simulation check of ``problem`` under ``privacy`` (see the module docstring).

    ``ns``: the sample sizes (at least two, each in [10, 1e9]; default the problem's grid); there is no
    ``n``. ``reps``: repetitions per sample size (an integer >= 2); ``seed``: the random seed.
    """
    from .api import resolve
    from ..core.errors import InputError

    if params.get("n") is not None:
        raise InputError("n", "is not used by check: give the sample sizes with --ns (ns=[...])", params["n"])
    params.pop("n", None)
    reps = REPS_SPEC.parse(reps)
    seed = SEED_SPEC.parse(seed)
    if ns is not None:
        ns = parse_ns(ns)
    entry, values = resolve(problem, privacy, params)
    fn = entry.check_function()
    if fn is None:
        raise InputError("problem", f"has no simulation check under --privacy {values['privacy']}", problem)
    t0 = time.perf_counter()
    if isinstance(fn, CheckSpec):
        res = run_check(entry, values, fn, ns=ns, reps=int(reps), seed=int(seed), progress=progress)
    else:  # a check function of the older shape
        res = fn(values, ns=ns, reps=int(reps), seed=int(seed), progress=progress)
    res.elapsed = time.perf_counter() - t0
    progress_line(progress, "")
    if progress:
        print("\r", end="", file=sys.stderr)
    return res
