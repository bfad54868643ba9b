"""Sample-size and privacy-level planning: how many records (or how much privacy budget) for a target.

Like statsmodels' ``solve_power``, exactly one of n, the privacy level (ε, or α for tv/kl) and the
target risk is left open and solved for (``solve="n" | "eps" | "target"``); the others take their
given or default values. Each answer comes in two halves:

- **necessary** (from the certified *lower* bound): ``n_necessary`` is the smallest n at which the best
  certified lower bound no longer exceeds the target. At ``n_necessary - 1`` the certified lower bound
  is *above* the target, so no private estimator reaches the target with ``n_necessary - 1`` records,
  nor with fewer (the minimax risk is non-increasing in n: an estimator may ignore records, and that
  keeps its privacy guarantee). The certificate is the evaluation at ``n_necessary - 1``.
- **sufficient** (from the certified *upper* bound): ``n_sufficient`` is the smallest n at which the best
  certified upper bound reaches the target; the tuned mechanism behind it (and its free parameters)
  is reported. The certificate is the evaluation at ``n_sufficient``; the evaluation at
  ``n_sufficient - 1`` (above the target) shows it is the smallest such n for the certified bound, when that
  bound is non-increasing in n (a bound whose constant is tuned numerically at each n may fluctuate by a
  fraction of a percent from one n to the next, and then reach the target at a few smaller n as well).

The same holds for the level: the minimax risk is non-increasing in ε (an ε-private mechanism is
ε'-private for every ε' ≥ ε; likewise for the tv/kl level α); the level is continuous, so it is
bracketed to a relative width of :data:`EPS_RTOL` and both ends of the bracket are reported.

Every number comes from the same path as ``boundcalc rate``: :func:`boundcalc.api.resolve`, the
registry entry's bounds and :func:`boundcalc.api.evaluate_bound` (the solver), at each candidate n
or ε; nothing here re-implements a formula. The search is a safeguarded log-log interpolation search
(bounds are close to power laws in n and ε), with log-space bisection as the fallback, over integers
for n. Where a certified bound is unavailable at a candidate point the search is conservative: a
missing lower bound excludes nothing and a missing upper bound reaches nothing.

Unreachable targets give ``None`` with a reason (never a wrong number): a target below what the
certified upper bound reaches at the largest allowed n (``params.N``: 10^18) or level; a problem whose
lower (or upper) bounds are all order-only (constants unspecified: nothing can be certified).
"""
from __future__ import annotations

import math

from . import api
from . import catalog
from ..core.errors import InputError
from ..core.params import ParamSpec
from ..core.privacy import get_model
from ..render.plan_result import PlanResult, PlanRow  # re-exported (the Python contract)
from ..render.result import best_bound, finite_or_none, notes_for_loss
from ..render.result import format_number as _fmt

SOLVE = ("n", "eps", "target")
#: relative width of the final bracket when solving for the (continuous) privacy level
EPS_RTOL = 1e-4
#: smallest privacy level searched (the model's own lower limit is open at 0)
EPS_FLOOR = 1e-8
TARGET = ParamSpec("target", "float", None, "target risk", low=0, low_open=True, high=1e300)
MAX_STEPS = 400


# ---------------------------------------------------------------------- evaluation (one path)

class _Evaluator:
    """Best certified lower/upper bound at a point, through api.resolve + api.evaluate_bound; cached."""

    def __init__(self, problem, privacy, fixed: dict, var: str | None):
        self.problem, self.privacy, self.fixed, self.var = problem, privacy, dict(fixed), var
        self.cache: dict = {}
        self.errors: dict = {}
        entry, values = api.resolve(problem, privacy, dict(fixed))  # validates the fixed parameters
        self.entry = entry
        self.values = values
        v = entry.with_derived(values)
        self.certified_sides = {b.side for b in entry.bounds(v) if b.certified}
        self.sides = {b.side for b in entry.bounds(v)}

    def best(self, side: str, x=None):
        """The best certified usable bound (BoundValue) of ``side`` at ``var = x``, or None."""
        key = (side, x)
        if key in self.cache:
            return self.cache[key]
        params = dict(self.fixed)
        if self.var is not None:
            params[self.var] = x
        try:
            entry, values = api.resolve(self.problem, self.privacy, params)
        except InputError as exc:  # the problem rejects this point (e.g. too small an n)
            self.errors[key] = str(exc)
            self.cache[key] = None
            return None
        v = entry.with_derived(values)
        best = best_bound(side, [api.evaluate_bound(b, v) for b in entry.bounds(v)
                                 if b.side == side and b.certified])
        self.cache[key] = best
        return best

    def value(self, side, x):
        b = self.best(side, x)
        return None if b is None else b.value

    def reaches(self, side, x, target) -> bool:
        """Conservative predicate: lower -> "does not exclude the target", upper -> "certainly reaches"."""
        v = self.value(side, x)
        if v is None:
            return side == "lower"
        return v <= target


# ---------------------------------------------------------------------- searches

def _interp(lo, hi, flo, fhi, target, log_x=True):
    """Secant guess for f(x) = target between lo and hi (None when not usable).

    Log-log (bounds are close to power laws) on wide brackets, linear on narrow ones (where the
    logarithms of nearby large numbers lose their digits).
    """
    if flo is None or fhi is None or flo <= 0 or fhi <= 0 or flo == fhi:
        return None
    try:
        if log_x and hi / lo > 1.5:
            xl, xh = math.log(lo), math.log(hi)
            yl, yh, yt = math.log(flo), math.log(fhi), math.log(target)
            x = math.exp(xl + (yt - yl) * (xh - xl) / (yh - yl))
        else:
            x = lo + (target - flo) * (hi - lo) / (fhi - flo)
    except (ZeroDivisionError, OverflowError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _search_int(ev: _Evaluator, side, target, lo, hi):
    """Smallest integer n in (lo, hi] with reaches(n), given not reaches(lo) and reaches(hi)."""
    use_interp = True
    steps = 0
    while hi - lo > 1 and steps < MAX_STEPS:
        steps += 1
        width = math.log(hi) - math.log(lo)
        cand = None
        if use_interp:
            g = _interp(lo, hi, ev.value(side, lo), ev.value(side, hi), target)
            if g is not None:
                cand = int(round(g))
        if cand is None:
            cand = int(round(math.sqrt(lo) * math.sqrt(hi))) if hi > 4 * lo else (lo + hi) // 2
        cand = min(max(cand, lo + 1), hi - 1)
        if ev.reaches(side, cand, target):
            hi = cand
        else:
            lo = cand
        new_width = math.log(hi) - math.log(lo)
        # safeguard: interpolation must at least halve the log-width, else bisect next time
        use_interp = new_width <= 0.5 * width or not use_interp
    return hi


def _search_float(ev: _Evaluator, side, target, lo, hi):
    """Bracket [a, b] (b/a - 1 <= EPS_RTOL) with not reaches(a), reaches(b)."""
    use_interp = True
    steps = 0
    while hi / lo - 1 > EPS_RTOL and steps < MAX_STEPS:
        steps += 1
        width = math.log(hi / lo)
        cand = None
        if use_interp:
            cand = _interp(lo, hi, ev.value(side, lo), ev.value(side, hi), target)
        if cand is None or not (lo < cand < hi):
            cand = math.sqrt(lo) * math.sqrt(hi)
        # keep the candidate away from the ends so the bracket always shrinks
        span = math.log(hi / lo)
        lc = min(max(math.log(cand / lo), 0.01 * span), 0.99 * span)
        cand = lo * math.exp(lc)
        if ev.reaches(side, cand, target):
            hi = cand
        else:
            lo = cand
        use_interp = math.log(hi / lo) <= 0.5 * width or not use_interp
    return lo, hi


# the results (PlanRow, PlanResult) and their rendering: boundcalc.plan_result


# ---------------------------------------------------------------------- the entry point

def parse_targets(target) -> list[float]:
    """Targets from a float, a comma-separated string, or a sequence; each must be finite and > 0."""
    if target is None:
        raise InputError("target", "is required: the target risk, e.g. --target 0.01 (comma-separated for "
                                   "several), or leave it open with --solve target")
    if isinstance(target, str):
        parts = [x.strip() for x in target.split(",")]
        if not any(parts):
            raise InputError("target", "must be a number > 0 (or comma-separated numbers)", target)
        if not all(parts):
            raise InputError("target", "has an empty entry: give comma-separated numbers such as 0.01,0.001",
                             target)
    else:
        try:
            import numpy as np

            parts = list(np.asarray(target, dtype=object).ravel()) if not isinstance(target, (int, float)) \
                else [target]
        except Exception:  # an unparseable object: report it as bad input
            raise InputError("target", "must be a number > 0 or a list of numbers", target) from None
        if not parts:
            raise InputError("target", "must be a number > 0 or a non-empty list of numbers", target)
    allowed = "must be a finite number > 0 (the target risk)"
    out = []
    for t in parts:
        try:
            out.append(float(TARGET.parse(t)))
        except InputError:
            raise InputError("target", allowed, t) from None
    return out


def _refuse_targets_reached_everywhere(ev, targets, var) -> None:
    """Refuse a target that a certified upper bound depending neither on n nor on the privacy level
    already meets, i.e. the risk of an estimator that uses no data (θ̂ = 0 for the mean, risk r²):
    every n and every level reach it, so there is nothing to plan."""
    v = ev.entry.with_derived(ev.values)
    ceiling = None
    for b in ev.entry.bounds(v):
        syms = getattr(b.expr, "free_symbols", None)
        if b.side != "upper" or not b.certified or syms is None:
            continue
        if any(x.name in ("n", "epsilon", "delta") or x.name.startswith("alpha") for x in syms):
            continue
        val = api.evaluate_bound(b, v)
        if val.value is not None and (ceiling is None or val.value < ceiling.value):
            ceiling = val
    if ceiling is None:
        return
    for t in targets:
        if t >= ceiling.value:
            raise InputError("target", f"must be below {ceiling.value:.4g}, the certified risk of "
                                       f"{ceiling.label}: a larger target needs no data", t)


def plan(problem, privacy="pure", target=None, solve=None, **params) -> PlanResult:
    """Solve for the one open quantity among n, the privacy level and the target risk.

    ``solve``: ``"n"`` (default; give ``target``, not ``n``), ``"eps"`` (give ``target``, not ``eps``/
    ``alpha``) or ``"target"`` (give neither ``target`` nor anything else: the reachable risk at the
    given n and level). ``target`` may be a number, a list, or a comma-separated string: the answers
    are then lists, one per target (in the order given). Other parameters are the problem's.

    Returns a :class:`PlanResult` (``.n_necessary``, ``.n_sufficient``, ``.to_dict()``, ``.to_text()``).
    """
    params = {k: v for k, v in params.items() if v is not None}
    solve = "n" if solve is None else str(solve).strip().lower()
    if solve in ("alpha", "level"):
        solve = "eps"
    if solve not in SOLVE:
        raise InputError("solve", "must be one of n, eps, target (the quantity left open)", solve)
    entry = catalog.get_entry(problem, privacy)
    model = get_model(privacy)
    if solve == "n":
        if "n" in params:
            raise InputError("n", "leave it out when solving for n (--solve n); give --target instead",
                             params["n"])
        if not any(s.name == "n" for s in entry.params):
            raise InputError("solve", f"problem {entry.problem} has no sample size n to solve for", solve)
    if solve == "eps":
        for key in ("eps", "alpha"):
            if key in params:
                raise InputError(key, "leave it out when solving for the privacy level (--solve eps)", params[key])
        if model.level is None:
            raise InputError("solve", f"--privacy {model.name} has no privacy level to solve for "
                                      "(use --solve n or --solve target)", solve)
    if solve == "target":
        if target is not None:
            raise InputError("target", "leave it out when solving for the target (--solve target)", target)
        targets = [None]
    else:
        targets = parse_targets(target)

    var = None if solve == "target" else solve
    ev = _Evaluator(entry.problem, model.name, params, var)
    if var is not None:
        _refuse_targets_reached_everywhere(ev, targets, var)
    shown = {k: v for k, v in ev.values.items() if k not in ("problem", "privacy") and k != var}
    level_name = None if model.level is None else model.level_name
    notes = []
    if solve == "n":
        rows = _plan_n(ev, targets)
    elif solve == "eps":
        rows = _plan_eps(ev, targets, model)
    else:
        rows = [_plan_target(ev)]
    if solve == "n":
        for row in rows:
            _reliability(ev, row)
    if entry.notes:
        notes += notes_for_loss(entry.notes, ev.values)
    return PlanResult(entry.problem, model.name, solve, shown, level_name, rows, notes)


#: n_sufficient / n_necessary above this: the answer says it is unreliable (issue 14)
RELIABLE_RATIO = 3.0


def _rate_value(ev, n):
    """The minimax rate expression (constant 1) at sample size n, or None."""
    try:
        entry, values = api.resolve(ev.problem, ev.privacy, dict(ev.fixed, n=n))
        v = entry.with_derived(values)
        val = float(sum(api._term_values(entry.rate(v), v).values()))
    except Exception:  # the rate is advisory: never let it break a plan
        return None
    return val if math.isfinite(val) and val > 0 else None


def _slope(f, a, b):
    fa, fb = f(a), f(b)
    if not fa or not fb or a == b:
        return None
    return math.log(fb / fa) / math.log(b / a)


def _reliability(ev, row):
    """How far apart the two answers are, and which side is believed loose.

    Heuristic (the rate's constant is unknown, so only exponents are compared): over [n_nec, n_suf] the
    log-log slope of the best certified lower and upper bounds is compared with the slope of the minimax
    rate expression; the bound whose slope differs more is believed loose (it does not follow the
    rate there). When both follow the rate, the gap is in the constants and n at which the rate
    expression (constant 1) meets the target says which answer is farther off, a weaker indication.
    """
    nec, suf = row.necessary, row.sufficient
    if not isinstance(nec, (int, float)) or not isinstance(suf, (int, float)) or nec <= 0 or suf <= 0:
        return
    ratio = suf / nec
    info = {"ratio": finite_or_none(ratio), "threshold": RELIABLE_RATIO, "reliable": ratio <= RELIABLE_RATIO,
            "loose_side": None, "basis": None}
    if ratio > RELIABLE_RATIO:
        lo_n, hi_n = int(nec), int(max(suf, nec + 1))
        s_rate = _slope(lambda n: _rate_value(ev, n), lo_n, hi_n)
        s_low = _slope(lambda n: ev.value("lower", n), lo_n, hi_n)
        s_up = _slope(lambda n: ev.value("upper", n), lo_n, hi_n)
        info["slopes"] = {"rate": s_rate, "lower": s_low, "upper": s_up}
        if None not in (s_rate, s_low, s_up):
            d_low, d_up = abs(s_low - s_rate), abs(s_up - s_rate)
            if max(d_low, d_up) > 0.1:
                info["loose_side"] = "lower" if d_low > d_up else "upper"
                info["basis"] = "slope in n differs from the minimax rate's"
        if info["loose_side"] is None and row.target is not None:
            n_rate = _n_of_rate(ev, row.target, lo_n, hi_n)
            info["n_rate"] = n_rate
            if n_rate is not None:
                d_low = abs(math.log(n_rate / nec))
                d_up = abs(math.log(suf / n_rate))
                info["loose_side"] = "lower" if d_low > d_up else "upper"
                info["basis"] = "both follow the rate; compared with the n where the rate (constant 1) meets the target"
        side = info["loose_side"]
        row.notes.append(
            f"unreliable: n sufficient / n necessary = {ratio:.3g} > {RELIABLE_RATIO:g}; "
            + (f"the certified {side} bound is believed loose ({info['basis']})" if side else
               "which side is loose is unknown") + "; the true minimax n lies between the two answers")
    row.reliability = info


def _n_of_rate(ev, target, lo, hi):
    """Smallest n in [lo/100, hi*100] where the rate expression (constant 1) is <= target, by bisection."""
    a, b = max(1, lo // 100), hi * 100
    fa, fb = _rate_value(ev, a), _rate_value(ev, b)
    if fa is None or fb is None or fb > target:
        return None
    if fa <= target:
        return a
    for _ in range(60):
        if b - a <= 1:
            break
        m = int(math.sqrt(a * b))
        m = min(max(m, a + 1), b - 1)
        fm = _rate_value(ev, m)
        if fm is None:
            return None
        a, b = (a, m) if fm <= target else (m, b)
    return b


# ---------------------------------------------------------------------- per mode

def _order_only_reason(ev, side):
    if side in ev.certified_sides:
        return None
    if side in ev.sides:
        return (f"the {side} bounds of {ev.problem}/{ev.privacy} are order only (constants unspecified): "
                f"nothing can be certified")
    return f"{ev.problem}/{ev.privacy} has no {side} bound"


def _bound_info(b, at_key, at, value_key="value"):
    if b is None:
        return {at_key: at, value_key: None}
    key = "method" if b.side == "lower" else "mechanism"
    return {at_key: at, value_key: finite_or_none(b.value), key: b.label, "bound": b.name,
            "free_parameters": {k: (v if isinstance(v, int) else finite_or_none(v))
                                for k, v in b.free_parameters.items()},
            "source": b.source}


def _n_range(ev):
    """[smallest n the problem accepts, largest n]: a problem may reject small n through validation
    (e.g. subsample-and-aggregate needs blocks of 3 points), and a rejected n is no evidence either way."""
    spec = next(s for s in ev.entry.params if s.name == "n")
    lo = max(1, int(math.ceil(spec.low if spec.low is not None else 1)))
    hi = int(spec.high if spec.high is not None else 10 ** 18)

    def valid(n):
        params = dict(ev.fixed)
        params[ev.var or "n"] = n
        try:
            api.resolve(ev.problem, ev.privacy, params)
            return True
        except InputError:
            return False

    if valid(lo):
        return lo, hi
    good = lo
    while not valid(good):
        if good >= hi:
            return hi, hi
        good = min(2 * good, hi)
    bad = good // 2 if good > lo else lo
    while good - bad > 1:  # smallest valid n in (bad, good]
        mid = (bad + good) // 2
        if valid(mid):
            good = mid
        else:
            bad = mid
    return good, hi


def _plan_n(ev: _Evaluator, targets):
    n_lo, n_hi = _n_range(ev)
    order = sorted(range(len(targets)), key=lambda i: -targets[i])  # large targets first: they bracket the rest
    out = [None] * len(targets)
    prev_suf = prev_nec = None  # answers of the previous (larger) target: lower ends of the brackets
    for i in order:
        t = targets[i]
        row = PlanRow("n", t, None, None)
        # ---- sufficient: the certified upper bound reaches t
        reason = _order_only_reason(ev, "upper")
        if reason:
            row.reason_sufficient = reason
        elif not ev.reaches("upper", n_hi, t):
            v = ev.value("upper", n_hi)
            row.reason_sufficient = (f"unreachable: the certified upper bound at the largest n = {n_hi:.3g} is "
                                     + (f"{_fmt(v)} > target" if v is not None else "unavailable"))
        else:
            if ev.reaches("upper", n_lo, t):
                n_suf = n_lo
            else:
                lo = n_lo if prev_suf is None or prev_suf - 1 < n_lo else prev_suf - 1
                if ev.reaches("upper", lo, t):  # cannot happen for monotone bounds; restart cleanly
                    lo = n_lo
                n_suf = _search_int(ev, "upper", t, lo, n_hi)
            prev_suf = n_suf
            row.sufficient = n_suf
            b = ev.best("upper", n_suf)
            row.evidence_sufficient = _bound_info(b, "n", n_suf)
            if n_suf > n_lo:
                row.evidence_sufficient["value_at_n_minus_1"] = finite_or_none(ev.value("upper", n_suf - 1))
            row.evidence_sufficient["certificate"] = (
                f"certified upper bound {b.value:.6g} <= target at n = {n_suf}"
                + (f" (and {ev.value('upper', n_suf - 1):.6g} > target at n - 1)" if n_suf > n_lo else ""))
        # ---- necessary: the certified lower bound stops excluding t
        reason = _order_only_reason(ev, "lower")
        if reason:
            row.reason_necessary = reason
        else:
            hi = row.sufficient if row.sufficient is not None else n_hi
            if not ev.reaches("lower", hi, t):
                v = ev.value("lower", hi)
                row.reason_necessary = (f"unreachable: the certified lower bound exceeds the target for every "
                                        f"n <= {n_hi:.3g} (at n = {n_hi:.3g} it is {_fmt(v)}); no private "
                                        f"estimator reaches it")
                row.evidence_necessary = _bound_info(ev.best("lower", hi), "n", hi)
            elif ev.reaches("lower", n_lo, t):
                row.necessary = n_lo
                row.evidence_necessary = _bound_info(ev.best("lower", n_lo), "n", n_lo)
                row.notes.append(f"the certified lower bound does not exceed the target even at n = {n_lo}: "
                                 "it sets no minimum sample size")
            else:
                lo = n_lo if prev_nec is None or prev_nec - 1 < n_lo or prev_nec - 1 >= hi else prev_nec - 1
                if ev.reaches("lower", lo, t):
                    lo = n_lo
                n_nec = _search_int(ev, "lower", t, lo, hi)
                prev_nec = n_nec
                row.necessary = n_nec
                cert = ev.best("lower", n_nec - 1)
                row.evidence_necessary = _bound_info(cert, "n_minus_1", n_nec - 1, "value_at_n_minus_1")
                row.evidence_necessary["n"] = n_nec
                row.evidence_necessary["value"] = finite_or_none(ev.value("lower", n_nec))
                row.evidence_necessary["certificate"] = (
                    f"certified lower bound {cert.value:.6g} > target at n = {n_nec - 1}: no private "
                    f"estimator reaches the target with fewer than {n_nec} records "
                    f"(at n = {n_nec} it is {ev.value('lower', n_nec):.6g})")
        if row.necessary is not None and row.sufficient is not None and row.necessary > row.sufficient:
            row.notes.append("n_necessary > n_sufficient: the bounds are not monotone here (report this)")
        out[i] = row
    return out


def _level_range(model):
    spec = model.level
    lo = spec.low if spec.low is not None else 0.0
    lo = max(lo, EPS_FLOOR) if spec.low_open or lo <= 0 else lo
    hi = spec.high if spec.high is not None else 1e4
    if spec.high_open:
        hi = hi * (1 - 1e-9)
    return float(lo), float(hi)


def _plan_eps(ev: _Evaluator, targets, model):
    e_lo, e_hi = _level_range(model)
    sym = "ε" if model.level_name == "eps" else "α"
    out = []
    for t in targets:
        row = PlanRow("eps", t, None, None)
        # ---- sufficient
        reason = _order_only_reason(ev, "upper")
        if reason:
            row.reason_sufficient = reason
        elif not ev.reaches("upper", e_hi, t):
            v = ev.value("upper", e_hi)
            row.reason_sufficient = (f"unreachable at n = {ev.values.get('n')}: even at {sym} = {e_hi:.6g} the "
                                     f"certified upper bound is " + (f"{_fmt(v)} > target" if v is not None
                                                                     else "unavailable"))
            floor = _nonprivate_floor(ev)
            if floor is not None and floor > t:
                row.reason_sufficient += f" (the target is below the non-private lower bound {_fmt(floor)})"
        elif ev.reaches("upper", e_lo, t):
            row.sufficient = e_lo
            row.evidence_sufficient = _bound_info(ev.best("upper", e_lo), "eps", e_lo)
            row.notes.append(f"the target is reached at the smallest level searched ({sym} = {e_lo:g})")
        else:
            a, b = _search_float(ev, "upper", t, e_lo, e_hi)
            row.sufficient = b
            bv = ev.best("upper", b)
            row.evidence_sufficient = _bound_info(bv, "eps", b)
            row.evidence_sufficient["eps_below"] = a
            row.evidence_sufficient["value_below"] = finite_or_none(ev.value("upper", a))
            row.evidence_sufficient["certificate"] = (
                f"certified upper bound {bv.value:.6g} <= target at {sym} = {b:.6g} "
                f"(and {ev.value('upper', a):.6g} > target at {sym} = {a:.6g})")
        # ---- necessary
        reason = _order_only_reason(ev, "lower")
        if reason:
            row.reason_necessary = reason
        else:
            hi = row.sufficient if row.sufficient is not None else e_hi
            if not ev.reaches("lower", hi, t):
                v = ev.value("lower", hi)
                row.reason_necessary = (f"unreachable at n = {ev.values.get('n')}: the certified lower bound "
                                        f"exceeds the target at every level up to {sym} = {hi:.6g} "
                                        f"(there it is {_fmt(v)})")
                floor = _nonprivate_floor(ev)
                if floor is not None and floor > t:
                    row.reason_necessary += f"; the target is below the non-private lower bound {_fmt(floor)}"
            elif ev.reaches("lower", e_lo, t):
                row.necessary = e_lo
                row.evidence_necessary = _bound_info(ev.best("lower", e_lo), "eps", e_lo)
                row.notes.append(f"the certified lower bound does not exceed the target even at {sym} = {e_lo:g}: "
                                 "it sets no minimum privacy level")
            else:
                a, b = _search_float(ev, "lower", t, e_lo, hi)
                row.necessary = b
                cert = ev.best("lower", a)
                row.evidence_necessary = _bound_info(cert, "eps_below", a, "value_below")
                row.evidence_necessary["eps"] = b
                row.evidence_necessary["value"] = finite_or_none(ev.value("lower", b))
                row.evidence_necessary["certificate"] = (
                    f"certified lower bound {cert.value:.6g} > target at {sym} = {a:.6g}: no mechanism "
                    f"that is private at that level (or any smaller one) reaches the target")
        out.append(row)
    return out


def _nonprivate_floor(ev):
    """The certified non-private lower bound at the fixed parameters (None if unavailable)."""
    try:
        info = catalog.resolve_problem(ev.problem)
        if "none" not in info.entries:
            return None
        fixed = {k: v for k, v in ev.fixed.items() if k not in ("eps", "alpha", "delta")}
        ev0 = _Evaluator(ev.problem, "none", fixed, None)
        return ev0.value("lower", None)
    except InputError:
        return None


def _plan_target(ev: _Evaluator):
    row = PlanRow("target", None, None, None)
    lo, up = ev.best("lower", None), ev.best("upper", None)
    if lo is None:
        row.reason_necessary = _order_only_reason(ev, "lower") or "no certified lower bound at these parameters"
    else:
        row.necessary = lo.value
        row.evidence_necessary = _bound_info(lo, "n", ev.values.get("n"))
        row.evidence_necessary["certificate"] = f"no private estimator has worst-case risk below {_fmt(lo.value)}"
    if up is None:
        row.reason_sufficient = _order_only_reason(ev, "upper") or "no certified upper bound at these parameters"
    else:
        row.sufficient = up.value
        row.evidence_sufficient = _bound_info(up, "n", ev.values.get("n"))
        row.evidence_sufficient["certificate"] = f"the tuned mechanism has worst-case risk at most {_fmt(up.value)}"
    return row
