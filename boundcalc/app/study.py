"""Planning a study: several statistics estimated under one privacy model and one budget (docs/methods/planning-a-study.md).

A **study** is a list of statistics, each a problem with its parameters, a target risk and a name, under one
privacy model and one budget (ε; ε and δ for ``approx``; the level α for ``tv``/``kl``). :func:`plan_study`
answers the three questions :func:`boundcalc.plan` answers for one statistic:

- ``solve="n"`` (default): the number of people (records) needed so that every statistic meets its target;
- ``solve="eps"``: with ``n`` given, the smallest budget that meets every target;
- ``solve="target"``: with ``n`` and the budget given, the certified band of each statistic's risk.

**Strategies** (each a composition theorem, :mod:`boundcalc.app.composition`):

- ``split-eps``: every statistic on the same records, the budget split into shares (sequential composition:
  the shares add up to at most the budget; for (ε,δ) the mechanisms' own privacy-loss distributions are composed
  by dp-accounting where that is tighter than basic composition);
- ``split-people``: disjoint groups of people, one per statistic, each with the whole budget (parallel
  composition); the study needs the sum of the groups;
- ``mixed``: a partition of the statistics into groups of people, the budget split within each group. With up to
  :data:`MIXED_MAX` statistics every partition is considered (203 for six).

**Both sides are certified.** n sufficient: every statistic's certified upper bound at its allocation (its
records and its share of the budget) meets its target. Each n is found by a search in n on the certified upper
bound (the same evaluation as ``boundcalc rate``); the search stops within :data:`RTOL` of the smallest such n,
and the point it reports is certified. n necessary, the **study lower bound**: whatever the joint protocol, its
output restricted to statistic i is an estimator of statistic i that is private at the whole budget, so the
study needs at least ``max_i n_necessary_i`` people, each ``n_necessary_i`` the one-statistic answer of
:func:`boundcalc.plan` at the whole budget.

**How the allocation is found.** Each statistic's sufficient n is a non-increasing function ``N_i(ε_i)`` of its
share. It is known exactly at the whole budget (:func:`boundcalc.plan`) and evaluated (certified) at the shares
the optimiser asks for; between evaluated shares a log-log interpolation steers the optimiser, which then
evaluates the shares it chose, and repeats until it chooses shares already evaluated. Every number reported is
an exact certified evaluation, never the interpolation: the interpolation only decides where to look, so a poor
interpolation can cost optimality, never correctness.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import composition, planning
from ..core.errors import InputError
from ..core.privacy import DELTA, get_model
from ..render.numbers import finite_or_none
from ..render.study_result import STRATEGIES, StudyResult, StudyRow
from .study_file import STUDY_LEVEL_KEYS, load_study  # noqa: F401 (load_study: part of the study API)

SOLVE = ("n", "eps", "target")
#: the most statistics a study may have
MAX_STATISTICS = 12
#: every partition of the statistics into groups is tried up to this many statistics (Bell(6) = 203 partitions)
MIXED_MAX = 6
#: the search for a statistic's sufficient n at a share stops when it brackets the crossing this closely: the n
#: reported is certified and at most this fraction above the smallest n where the certified upper meets the target
RTOL = 2e-3
#: significant digits of a budget share (rounded down, so that the shares never add up to more than the budget)
SHARE_DIGITS = 4
#: rounds of "optimise on the interpolation, evaluate what it chose"
ROUNDS = 4
#: a group is evaluated again only where the interpolation promises a smaller group by more than this fraction
GAIN = 5e-3
#: a strategy that loses is refined only while the interpolation says it could come within this factor of the best
CONTEND = 1.25


# ---------------------------------------------------------------------- the statistics

@dataclass
class Statistic:
    """One statistic of a study: a problem with its parameters, a target risk and a name."""

    name: str
    problem: str
    target: float
    params: dict = field(default_factory=dict)  # the problem's own parameters, as given

    @property
    def label(self) -> str:
        return f"statistic {self.name!r}"


def _where(i, name=None, locate=None, key=None) -> str:
    tag = f"statistic {i + 1}" + (f" ({name!r})" if name else "")
    line = locate(i, key) if locate is not None else None
    return tag + (f", line {line}" if line else "")


def _err(i, name, locate, key, allowed, got=None):
    return InputError("study", f"{_where(i, name, locate, key)}: key {key!r} {allowed}", got)


def parse_statistics(statistics, privacy: str, locate=None) -> list[Statistic]:
    """Validate the statistics (a list of mappings or :class:`Statistic`) and return them as Statistic records.

    ``locate(index, key)`` may give the line of a key in the study file (for the error messages)."""
    from . import catalog

    if isinstance(statistics, (str, bytes)) or not hasattr(statistics, "__iter__"):
        raise InputError("study", "statistics must be a list of statistics (each with name, problem, target)",
                         statistics)
    items = list(statistics)
    if not items:
        raise InputError("study", "has no statistic: give at least one [[statistic]] with name, problem and target")
    if len(items) > MAX_STATISTICS:
        raise InputError("study", f"has {len(items)} statistics; at most {MAX_STATISTICS} are allowed")
    out, seen = [], {}
    for i, item in enumerate(items):
        if isinstance(item, Statistic):
            item = dict(item.params, name=item.name, problem=item.problem, target=item.target)
        if not isinstance(item, dict):
            raise InputError("study", f"{_where(i, None, locate)}: must be a table of keys (name, problem, target, "
                                      "and the problem's parameters)", item)
        item = dict(item)
        name = item.pop("name", None)
        if name is None:
            raise _err(i, None, locate, "name", "is missing: give each statistic a name (used in the output)")
        if not isinstance(name, str) or not name.strip() or len(name) > 80:
            raise _err(i, None, locate, "name", "must be a non-empty text of at most 80 characters", name)
        name = name.strip()
        if name in seen:
            raise _err(i, name, locate, "name", f"repeats the name of statistic {seen[name] + 1}: names must be "
                                                "distinct", name)
        seen[name] = i
        problem = item.pop("problem", None)
        if problem is None:
            raise _err(i, name, locate, "problem", "is missing (e.g. problem = \"multinomial\"; "
                                                   "see `boundcalc list`)")
        if not isinstance(problem, str):
            raise _err(i, name, locate, "problem", "must be a problem name (see `boundcalc list`)", problem)
        try:
            entry = catalog.get_entry(problem, privacy)
        except InputError as exc:
            raise _err(i, name, locate, "problem", exc.allowed, problem) from None
        if "target" not in item:
            raise _err(i, name, locate, "target", "is missing: the target risk of this statistic, a number > 0")
        target = item.pop("target")
        if isinstance(target, bool) or not isinstance(target, (int, float, str)):
            raise _err(i, name, locate, "target", "must be a finite number > 0 (the target risk)", target)
        try:
            target = float(planning.TARGET.parse(target))
        except InputError:
            raise _err(i, name, locate, "target", "must be a finite number > 0 (the target risk)", target) from None
        for key in STUDY_LEVEL_KEYS:
            if key in item:
                raise _err(i, name, locate, key, "is set once for the whole study, not per statistic", item[key])
        for key, value in item.items():
            if isinstance(value, (dict, list)) or value is None:
                raise _err(i, name, locate, key, "must be a number or a word", value)
        # the problem's own parameters: validated by the problem (an unknown key is refused here)
        try:
            from . import api

            api.resolve(entry.problem, privacy, dict(item))
        except InputError as exc:
            raise _err(i, name, locate, exc.parameter, exc.allowed, exc.got) from None
        out.append(Statistic(name, entry.problem, target, item))
    return out


# ---------------------------------------------------------------------- one statistic's sufficient n at a share

def _loglog(a, fa, b, fb, target):
    if fa is None or fb is None or fa <= 0 or fb <= 0 or fa == fb or a == b:
        return None
    try:
        x = math.exp(math.log(a) + math.log(target / fa) * math.log(b / a) / math.log(fb / fa))
    except (ValueError, OverflowError, ZeroDivisionError):
        return None
    return x if math.isfinite(x) and x > 0 else None


def search_n_upper(ev, target, guess, n_lo, n_hi, rtol=RTOL, slope=-1.0):
    """(n, None): an n at which the certified upper bound of ``ev`` is <= target, at most ``rtol`` above the
    smallest such n of the float64 search; or (None, reason) when no n <= n_hi reaches it.

    Log-log secant steps from ``guess`` (a prediction of the answer: a good guess brackets the crossing in two or
    three evaluations; ``slope``, the bound's log-log slope in n, sets the first step), safeguarded by geometric
    bisection; the answer point is then certified (high precision,
    rounded outward, as ``boundcalc rate``), moving up by ``rtol`` steps in the rare case certification moves its
    value above the target.
    """
    seen = {}

    def fv(n):
        if n not in seen:
            seen[n] = ev.fvalue("upper", n)
        return seen[n]

    def ok(n):
        v = fv(n)
        return v is not None and v <= target

    lo, hi = None, None  # lo: largest n known not to reach; hi: smallest n known to reach
    x = int(min(max(math.ceil(guess), n_lo), n_hi)) if guess and math.isfinite(guess) else n_lo
    run_side, run = None, 0
    for _ in range(80):
        side = "hi" if ok(x) else "lo"
        if side == "hi":
            hi = x if hi is None else min(hi, x)
        else:
            lo = x if lo is None else max(lo, x)
        run = run + 1 if side == run_side else 1
        run_side = side
        if hi is not None and (hi == n_lo or (lo is not None and hi <= lo * (1 + rtol) + 1)):
            break
        if hi is None and lo >= n_hi:
            v = fv(n_hi)
            return None, ("the certified upper bound at the largest n = %.3g is %s" %
                          (n_hi, "unavailable" if v is None else f"{v:.4g} > target {target:.4g}"))
        # the next point: the secant through the two known points nearest the crossing
        pts = sorted(seen)
        if lo is not None and hi is not None:
            est = _loglog(lo, fv(lo), hi, fv(hi), target)
            if run_side == "hi" and hi / (1 + rtol) > lo and (est is None or est >= hi / (1 + rtol)):
                cand = math.floor(hi / (1 + rtol))  # test whether the bracket is already narrow enough
            elif est is None or run >= 3:
                cand = math.sqrt(lo * hi)
            else:
                cand = est * (1 + rtol / 3)
            cand = int(min(max(math.floor(cand) if cand < hi else hi - 1, lo + 1), hi - 1))
        elif hi is None:  # every point so far below the target: go up
            near = [n for n in pts if fv(n) is not None]
            est = _loglog(near[-2], fv(near[-2]), near[-1], fv(near[-1]), target) if len(near) >= 2 else \
                (lo * (fv(lo) / target) ** (-1.0 / slope) if fv(lo) else None)  # one point: risk ∝ n^slope
            cand = lo * 4.0 if est is None or est <= lo else min(est * (1 + rtol / 3), lo * 1e3)
            cand = int(min(max(math.ceil(cand), lo + 1), n_hi))
        else:  # every point reaches: go down
            if hi <= n_lo:
                break
            near = [n for n in pts if fv(n) is not None]
            est = _loglog(near[0], fv(near[0]), near[1], fv(near[1]), target) if len(near) >= 2 else \
                (hi * (fv(hi) / target) ** (-1.0 / slope) if fv(hi) else None)
            cand = hi / 4.0 if est is None or est >= hi else max(est * (1 - rtol / 3), hi / 1e3)
            cand = int(max(min(math.floor(cand), hi - 1), n_lo))
        x = cand
    n = hi
    for _ in range(8):  # certify the answer point
        if ev.reaches("upper", n, target):
            return n, None
        n = int(min(n_hi, math.ceil(n * (1 + rtol)) + 1))
    n = planning._search_n(ev, "upper", target, lo if lo is not None else n_lo, n_hi)
    if ev.reaches("upper", n, target):
        return n, None
    return None, "the certified upper bound could not be certified near the float64 crossing"


# ---------------------------------------------------------------------- per statistic

class _Stat:
    """A statistic's planning state: its one-statistic plan at the whole budget, its evaluators at budget shares,
    and the certified sufficient n found at each share."""

    def __init__(self, stat: Statistic, privacy: str, level: dict, default_slope: float):
        self.stat, self.privacy, self.level = stat, privacy, dict(level)
        self.default_slope = default_slope
        self.evs: dict = {}
        self.exact: dict = {}  # (eps, delta) -> (n or None, BoundValue or reason)
        self.plan = None

    def evaluator(self, lvl: dict, var="n"):
        key = (var,) + tuple(sorted(lvl.items()))
        if key not in self.evs:
            self.evs[key] = planning._Evaluator(self.stat.problem, self.privacy, dict(self.stat.params, **lvl), var)
        return self.evs[key]

    def n_at(self, lvl: dict, guess):
        """Certified sufficient n at budget ``lvl`` (cached): (n, BoundValue) or (None, reason)."""
        key = tuple(sorted(lvl.items()))
        if key in self.exact:
            return self.exact[key]
        ev = self.evaluator(lvl)
        lo, hi = planning._n_range(ev)
        n, reason = search_n_upper(ev, self.stat.target, guess, lo, hi, slope=self.n_slope())
        out = (n, ev.best("upper", n)) if n is not None else (None, reason)
        self.exact[key] = out
        return out

    def n_slope(self) -> float:
        """The log-log slope in n of the certified upper bound near its sufficient n at the whole budget, from the
        evaluations its plan kept (-1, the usual 1/n, when they do not tell); it sets a search's first step."""
        if "_slope" in self.__dict__:
            return self.__dict__["_slope"]
        slope = -1.0
        key = tuple(sorted(self.level.items()))
        n1 = self.exact.get(key, (None,))[0]
        if n1:
            ev = self.evaluator(self.level)
            ns = sorted(n for (side, n) in list(ev.fcache) if side == "upper" and isinstance(n, int))
            vals = [(n, ev.fvalue("upper", n)) for n in ns]
            vals = [(n, f) for n, f in vals if f is not None and f > 0]
            below = [(n, f) for n, f in vals if n1 / 30 <= n <= n1 / 1.2]
            above = [(n, f) for n, f in vals if n1 * 1.2 <= n <= n1 * 30]
            a = below[-1] if below else None
            b = above[0] if above else None
            if a is None or b is None:
                cands = [p for p in vals if n1 / 30 <= p[0] <= n1 * 30]
                a, b = (cands[0], cands[-1]) if len(cands) >= 2 and cands[-1][0] > 1.2 * cands[0][0] else (None, None)
            if a and b and a[1] > 0 and b[1] > 0 and b[1] != a[1]:
                est = math.log(b[1] / a[1]) / math.log(b[0] / a[0])
                if -3.0 <= est <= -0.2:
                    slope = est
        self.__dict__["_slope"] = slope
        return slope

    def mechanism_event(self, lvl: dict, n: int):
        """The accountant's view (composition.Event) of the mechanism reaching the target at (n, lvl)."""
        ev = self.evaluator(lvl)
        bv = ev.best("upper", n)
        v = ev.entry.with_derived(dict(ev.values, n=n))
        bound = next((b for b in ev.entry.bounds(v) if b.side == "upper" and b.name == bv.name), None)
        return composition.event_of(bound, dict(ev.values, n=n))

    # the interpolation of N(share) between evaluated shares (steering only)
    def points(self, whole_level: float):
        pts = {}
        for key, (n, _) in self.exact.items():
            e = dict(key)["eps"]
            s = e / whole_level
            pts[s] = math.inf if n is None else float(n)
        return pts

    def curve(self, whole_level: float):
        return _Curve(self.points(whole_level), self.default_slope)


@dataclass
class _OnePlan:
    """A statistic's one-statistic plan at the whole budget (its rows, as :class:`boundcalc.plan` has them)."""

    rows: list


class _Curve:
    """A monotone log-log interpolation of a statistic's sufficient n against its budget share (steering only)."""

    def __init__(self, pts: dict, slope: float):
        finite = sorted((s, n) for s, n in pts.items() if math.isfinite(n))
        self.s_inf = max([s for s, n in pts.items() if not math.isfinite(n)], default=0.0)
        finite = [(s, n) for s, n in finite if s > self.s_inf]
        # enforce monotonicity (non-increasing in the share)
        mono, best = [], 0.0
        for s, n in reversed(finite):  # from the whole budget down: n never decreases as the share shrinks
            best = max(best, n)
            mono.append((s, best))
        self.pts = list(reversed(mono))
        self.slope = slope

    def n(self, s: float) -> float:
        if s <= self.s_inf or not self.pts:
            return math.inf
        pts = self.pts
        if len(pts) == 1 or s <= pts[0][0]:
            if len(pts) >= 2:
                (s0, n0), (s1, n1) = pts[0], pts[1]
                slope = min(math.log(n1 / n0) / math.log(s1 / s0), -0.25) if n1 < n0 else self.slope
            else:
                slope = self.slope
            s0, n0 = pts[0]
            return n0 * (s / s0) ** slope
        for (s0, n0), (s1, n1) in zip(pts, pts[1:]):
            if s <= s1:
                t = math.log(s / s0) / math.log(s1 / s0)
                return math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0)))
        return pts[-1][1]

    def share(self, n: float) -> float:
        """The smallest share whose interpolated n is <= n (inf when even the whole budget needs more)."""
        if self.n(1.0) > n:
            return math.inf
        lo, hi = 1e-9, 1.0
        if self.n(lo) <= n:
            return lo
        for _ in range(60):
            mid = math.sqrt(lo * hi)
            if self.n(mid) <= n:
                hi = mid
            else:
                lo = mid
            if hi / lo < 1 + 1e-6:
                break
        return hi


def _group_shares(curves: list) -> tuple[float, list]:
    """(N, shares): the smallest interpolated group size N at which the shares needed add up to at most 1."""
    base = max(c.n(1.0) for c in curves)
    if not math.isfinite(base):
        return math.inf, []

    def total(nn):
        return sum(c.share(nn) for c in curves)

    lo, hi = base, base
    while total(hi) > 1:
        lo, hi = hi, hi * 4
        if hi > 1e19:
            return math.inf, []
    if total(lo) <= 1:
        hi = lo
    for _ in range(60):
        if hi / lo < 1 + 1e-4:
            break
        mid = math.sqrt(lo * hi)
        if total(mid) <= 1:
            hi = mid
        else:
            lo = mid
    shares = [c.share(hi) for c in curves]
    s = sum(shares)
    return hi, [x / s for x in shares]


def _round_down(x: float, digits=SHARE_DIGITS) -> float:
    if x <= 0:
        return x
    e = math.floor(math.log10(x)) - digits + 1
    q = 10.0 ** e
    y = math.floor(x / q) * q
    return float(f"{y:.{digits}g}") if float(f"{y:.{digits}g}") <= x else y


def _set_partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _set_partitions(rest):
        for k in range(len(part)):
            yield part[:k] + [[first] + part[k]] + part[k + 1:]
        yield [[first]] + part


# ---------------------------------------------------------------------- the planner

class _Planner:
    def __init__(self, stats, model, level, delta, strategy):
        self.model, self.stats, self.level, self.delta = model, stats, level, delta
        self.strategy = strategy
        slope = -2.0 if not model.central else -1.0
        self.ss = [_Stat(s, model.name, self._lvl(level, delta), slope) for s in stats]
        self.groups: dict = {}  # frozenset of indices -> exact allocation record

    def _lvl(self, eps, delta):
        out = {} if self.model.level is None else {"eps": eps}
        if self.model.uses_delta:
            out["delta"] = delta
        return out

    def whole_plans(self):
        for i, st in enumerate(self.ss):
            try:  # the one-statistic plan at the whole budget (both sides), as boundcalc.plan computes it
                ev = st.evaluator(self._lvl(self.level, self.delta))
                planning._refuse_targets_reached_everywhere(ev, [st.stat.target], "n")
                row = planning._plan_n(ev, [st.stat.target])[0]
            except InputError as exc:
                raise InputError("study", f"{_where(i, st.stat.name)}: {exc}", None) from None
            if row.necessary and row.sufficient and row.sufficient / row.necessary > planning.RELIABLE_RATIO:
                row.reliability = {"ratio": row.sufficient / row.necessary, "reliable": False}
            st.plan = _OnePlan([row])
            if row.sufficient is None:
                why = row.reason_sufficient or "no certified upper bound reaches it"
                if row.reason_necessary and row.reason_necessary.startswith("unreachable"):
                    why = row.reason_necessary
                raise InputError("study", f"{_where(i, st.stat.name)}: target {st.stat.target:g} is not reached at any "
                                          f"n under the whole budget: {why}")
            key = tuple(sorted(self._lvl(self.level, self.delta).items()))
            ev = st.evaluator(self._lvl(self.level, self.delta))
            st.exact[key] = (int(row.sufficient), ev.best("upper", int(row.sufficient)))

    # ---- a group of statistics sharing records and splitting the budget
    def eval_group(self, idx: tuple, shares: list):
        """Evaluate (certified) a group at the given budget shares; keep it if better than what the group had."""
        k = len(idx)
        delta_i = self.delta / k if self.model.uses_delta else None
        if k == 1:
            lv = [self.level]
        else:
            lv = [_round_down(s * self.level) for s in shares]
            while math.fsum(lv) > self.level:  # never above the budget (rounding)
                lv = [_round_down(x * (1 - 1e-9)) for x in lv]
        if self.model.level_name == "alpha" and self.model.level.high is not None:
            lv = [min(x, self.level) for x in lv]
        rec = self._evaluate_levels(idx, lv, delta_i)
        if rec is None:
            return None
        if self.model.uses_delta and k >= 2:
            better = self._accountant(idx, rec)
            if better is not None and better["n"] < rec["n"]:
                rec = better
        key = frozenset(idx)
        if key not in self.groups or rec["n"] < self.groups[key]["n"]:
            self.groups[key] = rec
        return rec

    def _evaluate_levels(self, idx, lv, delta_i, guesses=None):
        ns, bvs = [], []
        for j, i in enumerate(idx):
            st = self.ss[i]
            lvl = self._lvl(lv[j], delta_i if len(idx) > 1 else self.delta)
            guess = guesses[j] if guesses else st.curve(self.level).n(lv[j] / self.level if self.level else 1.0)
            n, bv = st.n_at(lvl, guess)
            if n is None:
                return {"idx": idx, "n": math.inf, "levels": lv, "delta": delta_i, "ns": None, "reason": bv}
            ns.append(n)
            bvs.append(bv)
        rec = {"idx": idx, "n": max(ns), "levels": lv, "delta": delta_i if len(idx) > 1 else self.delta,
               "ns": ns, "bounds": bvs, "accounting": "basic" if len(idx) > 1 else "whole"}
        if self.model.uses_delta:
            rec["events"] = [self.ss[i].mechanism_event(self._lvl(lv[j], rec["delta"]), ns[j])
                             for j, i in enumerate(idx)]
            rec["composed_eps"] = math.fsum(lv) if len(idx) > 1 else lv[0]
        return rec

    def _accountant(self, idx, rec):
        """(ε,δ): scale the group's shares up as far as the PLD accountant allows for the mechanisms that reach the
        targets; re-evaluate there and keep the result only if the accountant certifies the new mechanisms."""
        if not math.isfinite(rec["n"]):
            return None
        events = rec["events"]

        def composed(c):
            return composition.composed_epsilon(
                [composition.Event(e.kind, _round_down(c * x), e.delta) for e, x in zip(events, rec["levels"])],
                self.delta)

        lo, hi = 1.0, float(len(idx))
        if composed(lo) > self.level:
            return None
        if composed(hi) <= self.level:
            lo = hi
        else:
            for _ in range(14):
                mid = math.sqrt(lo * hi)
                if composed(mid) <= self.level:
                    lo = mid
                else:
                    hi = mid
        if lo < 1.001:
            return None
        lv = [_round_down(lo * x) for x in rec["levels"]]
        st_curves = [self.ss[i].curve(self.level) for i in idx]
        guesses = [c.n(x / self.level) for c, x in zip(st_curves, lv)]
        new = self._evaluate_levels(idx, lv, rec["delta"], guesses)
        if new is None or not math.isfinite(new["n"]):
            return None
        eps = composition.composed_epsilon(new["events"], self.delta)
        if eps > self.level:
            return None
        new["accounting"] = "pld"
        new["composed_eps"] = eps
        return new

    def optimise(self):
        """Choose the allocation: split people (exact from the plans), then groups of statistics sharing the budget,
        each evaluated (certified) at the shares the interpolation chooses, refined while it promises a gain.

        Splitting the budget is evaluated and refined once (its certified total is reported in the comparison),
        then refined further only while the interpolation says it could come within :data:`CONTEND` of the best
        total found."""
        m = len(self.ss)
        idx_all = tuple(range(m))
        for i in idx_all:  # split people: singletons at the whole budget (exact from the plans)
            n, bv = self.ss[i].exact[tuple(sorted(self._lvl(self.level, self.delta).items()))]
            self.groups[frozenset([i])] = {"idx": (i,), "n": n, "levels": [self.level], "delta": self.delta,
                                           "ns": [n], "bounds": [bv], "accounting": "whole"}
        if m == 1 or self.model.level is None or self.strategy == "split-people":
            return
        want_mixed = self.strategy in (None, "mixed") and m <= MIXED_MAX
        want_seq = self.strategy in (None, "split-eps")
        for rnd in range(ROUNDS):
            curves = [st.curve(self.level) for st in self.ss]
            memo = {}

            def model(g):
                key = tuple(sorted(g))
                if key not in memo:
                    memo[key] = _group_shares([curves[i] for i in key])
                return memo[key]

            best_exact = min(self.best_partition(k)[0] for k in STRATEGIES)
            cands = []
            if want_seq:
                n_model = model(idx_all)[0]
                have = self.groups.get(frozenset(idx_all))
                if have is None or (n_model < have["n"] * (1 - GAIN) and (
                        rnd <= 1 or self.strategy == "split-eps" or n_model <= CONTEND * best_exact)):
                    cands.append(idx_all)
            if want_mixed:
                best, best_part = math.inf, None
                for part in _set_partitions(list(idx_all)):
                    tot = 0.0
                    for g in part:
                        have = self.groups.get(frozenset(g))
                        tot += min(model(g)[0], have["n"] if have else math.inf)
                    if tot < best:
                        best, best_part = tot, part
                if best_part is not None and best < best_exact * (1 - GAIN):
                    for g in best_part:
                        g = tuple(sorted(g))
                        have = self.groups.get(frozenset(g))
                        if len(g) > 1 and (have is None or model(g)[0] < have["n"] * (1 - GAIN)):
                            cands.append(g)
            new = False
            for g in dict.fromkeys(cands):
                n_model, shares = model(g)
                if not math.isfinite(n_model):
                    continue
                before = sum(len(self.ss[i].exact) for i in g)
                self.eval_group(g, shares)
                new = new or sum(len(self.ss[i].exact) for i in g) > before
            if not new:
                break

    def best_partition(self, kind):
        m = len(self.ss)
        idx_all = tuple(range(m))
        if kind == "split-people":
            parts = [[(i,) for i in idx_all]]
        elif kind == "split-eps":
            parts = [[idx_all]]
        else:
            parts = [[tuple(sorted(g)) for g in p] for p in _set_partitions(list(idx_all))] if m <= MIXED_MAX else []
        best, best_part = math.inf, None
        for p in parts:
            recs = [self.groups.get(frozenset(g)) for g in p]
            if any(r is None for r in recs):
                continue
            tot = sum(r["n"] for r in recs)
            if tot < best:
                best, best_part = tot, [r for r in recs]
        return best, best_part


# ---------------------------------------------------------------------- the entry point

def _level_value(model, eps, alpha):
    if model.level is None:
        for key, val in (("eps", eps), ("alpha", alpha)):
            if val is not None:
                raise InputError(key, f"not used by --privacy {model.name} (it has no privacy budget)", val)
        return None
    if eps is not None and alpha is not None:
        raise InputError("alpha", "is an alias of eps: give one of them", alpha)
    val = eps if eps is not None else alpha
    return float(model.level.parse(model.level.default if val is None else val))


def plan_study(statistics, privacy="local", eps=None, delta=None, n=None, solve=None, strategy=None,
               alpha=None, locate=None) -> StudyResult:
    """Plan a study: several statistics under one privacy model and one budget.

    Parameters
    ----------
    statistics : list of dict
        One mapping per statistic: ``name`` (distinct), ``problem``, ``target`` (its target risk) and the
        problem's parameters (``d``, ``k``, ``loss`` ...), e.g. ``dict(name="answers", problem="multinomial",
        d=5, target=0.01)``.
    privacy : str
        The privacy model of the whole study: ``local``, ``pure``, ``smooth``, ``approx``, ``kl``, ``tv`` (each with
        a composition theorem) or ``none``.
    eps, delta, alpha : float
        The whole budget (ε; δ for ``approx``; ``alpha`` is an alias of ``eps`` for ``tv``/``kl``). Defaults as
        in :func:`boundcalc.plan`. Left out with ``solve="eps"``.
    n : int
        The number of people; given with ``solve="eps"`` and ``solve="target"``.
    solve : ``"n"`` (default), ``"eps"`` or ``"target"``
        What to solve for (see the module docstring).
    strategy : None (every strategy, the best reported), ``"split-eps"``, ``"split-people"`` or ``"mixed"``.

    Returns
    -------
    StudyResult
        ``.n_necessary`` (the study lower bound), ``.n_sufficient`` (the best allocation), ``.strategy``,
        ``.strategies`` (each strategy's total), ``.rows`` (one per statistic: its people, its share of the budget,
        its certified band), ``.to_dict()``, ``.to_text()``, ``.render(fmt)``.

    Examples
    --------
    >>> import boundcalc as bc
    >>> study = bc.plan_study([dict(name="yes/no", problem="multinomial", d=2, target=0.002),
    ...                        dict(name="score", problem="mean", k=4, target=0.01)], privacy="local", eps=2.0)
    >>> study.n_sufficient >= study.n_necessary
    True
    """
    model = get_model(privacy)
    composition.rule(model.name)
    solve = "n" if solve is None else str(solve).strip().lower()
    if solve in ("alpha", "level"):
        solve = "eps"
    if solve not in SOLVE:
        raise InputError("solve", "must be one of n, eps, target (the quantity left open)", solve)
    if strategy is not None:
        strategy = str(strategy).strip().lower()
        if strategy not in STRATEGIES:
            raise InputError("strategy", "must be one of " + ", ".join(STRATEGIES), strategy)
    stats = parse_statistics(statistics, model.name, locate=locate)
    if strategy == "mixed" and len(stats) > MIXED_MAX:
        raise InputError("strategy", f"mixed partitions are tried up to {MIXED_MAX} statistics (this study has "
                                     f"{len(stats)}): give split-eps or split-people, or leave it out", strategy)
    if solve == "n":
        if n is not None:
            raise InputError("n", "leave it out when solving for n (solve n); give the targets instead", n)
        level = _level_value(model, eps, alpha)
        dlt = float(DELTA.parse(DELTA.default if delta is None else delta)) if model.uses_delta else None
        if delta is not None and not model.uses_delta:
            raise InputError("delta", f"is only used with privacy approx, not with {model.name}", delta)
        return _solve_n(stats, model, level, dlt, strategy)
    from ..core.params import ParamSpec

    if n is None:
        raise InputError("n", f"is required with solve {solve}: the number of people in the study")
    n_val = int(ParamSpec("n", "int", None, "", low=1, high=1e18).parse(n))
    if delta is not None and not model.uses_delta:
        raise InputError("delta", f"is only used with privacy approx, not with {model.name}", delta)
    dlt = float(DELTA.parse(DELTA.default if delta is None else delta)) if model.uses_delta else None
    if solve == "eps":
        if model.level is None:
            raise InputError("solve", f"privacy {model.name} has no budget to solve for", solve)
        for key, val in (("eps", eps), ("alpha", alpha)):
            if val is not None:
                raise InputError(key, "leave it out when solving for the budget (solve eps)", val)
        return _solve_eps(stats, model, n_val, dlt, strategy)
    level = _level_value(model, eps, alpha)
    return _solve_target(stats, model, n_val, level, dlt, strategy)


def _alloc_rows(pl: _Planner, recs) -> list:
    rows = [None] * len(pl.ss)
    for g, rec in enumerate(recs, 1):
        for j, i in enumerate(rec["idx"]):
            st = pl.ss[i]
            lvl = pl._lvl(rec["levels"][j], rec["delta"])
            n_i, bv = rec["ns"][j], rec["bounds"][j]
            row = _row(pl, st, lvl, n_i, bv)
            row.group, row.group_n = g, rec["n"]
            if pl.model.uses_delta and rec.get("events"):
                row.accountant = rec["events"][j].kind
            rows[i] = row
    return rows


def _row(pl, st, lvl, n_i, bv):
    whole = pl._lvl(pl.level, pl.delta)
    plan_row = st.plan.rows[0] if st.plan is not None else None
    row = StudyRow(st.stat.name, st.stat.problem, dict(st.evaluator(whole).values), st.stat.target)
    row.params = {k: v for k, v in row.params.items() if k not in ("problem", "privacy", "n", "eps", "delta")}
    row.n = n_i
    row.eps = lvl.get("eps")
    row.delta = lvl.get("delta")
    row.share = (row.eps / pl.level) if (row.eps is not None and pl.level) else None
    if bv is not None and not isinstance(bv, str):
        row.upper = {"value": finite_or_none(bv.value), "mechanism": bv.label, "bound": bv.name,
                     "free_parameters": {k: (v if isinstance(v, int) else finite_or_none(v))
                                         for k, v in bv.free_parameters.items()}, "source": bv.source}
    lo = st.evaluator(whole).best("lower", n_i) if n_i is not None else None
    if lo is not None:
        row.lower = {"value": finite_or_none(lo.value), "method": lo.label, "bound": lo.name, "source": lo.source,
                     "at": "the whole budget (any joint protocol restricted to this statistic)"}
    if plan_row is not None:
        row.n_necessary = plan_row.necessary
        row.n_sufficient_alone = plan_row.sufficient
        row.reliability = plan_row.reliability
        row.notes += [x for x in plan_row.notes if not x.startswith("unreliable")]
    return row


def _strategy_summary(pl: _Planner):
    out = {}
    for kind in STRATEGIES:
        if kind == "mixed" and len(pl.ss) > MIXED_MAX:
            continue
        tot, recs = pl.best_partition(kind)
        if recs is None or not math.isfinite(tot):
            out[kind] = {"n": None, "groups": None}
            continue
        out[kind] = {"n": int(tot), "groups": [[pl.ss[i].stat.name for i in r["idx"]] for r in recs],
                     "group_sizes": [int(r["n"]) for r in recs], "_recs": recs}
    return out


def _solve_n(stats, model, level, delta, strategy) -> StudyResult:
    pl = _Planner(stats, model, level, delta, strategy)
    pl.whole_plans()
    if model.level is None:  # no budget: every statistic on the same records
        rec = {"idx": tuple(range(len(pl.ss))), "n": max(st.exact[()][0] for st in pl.ss), "levels": [None] * len(pl.ss),
               "delta": None, "ns": [st.exact[()][0] for st in pl.ss], "bounds": [st.exact[()][1] for st in pl.ss]}
        summary = {"same-records": {"n": int(rec["n"]), "groups": [[st.stat.name for st in pl.ss]],
                                    "group_sizes": [int(rec["n"])], "_recs": [rec]}}
        winner = "same-records"
    else:
        pl.optimise()
        summary = _strategy_summary(pl)
        allowed = [k for k in summary if summary[k]["n"] is not None and (strategy is None or k == strategy)]
        if not allowed:
            raise InputError("study", "no allocation of the budget reaches every target (see each statistic's "
                                      "plan at the whole budget)")
        winner = min(allowed, key=lambda k: (summary[k]["n"], STRATEGIES.index(k)))
        if winner == "mixed":  # a mixed partition that is one of the pure strategies is named as that strategy
            for k in ("split-people", "split-eps"):
                if k in summary and summary[k]["n"] == summary["mixed"]["n"]:
                    winner = k
                    break
    recs = summary[winner]["_recs"]
    rows = _alloc_rows(pl, recs)
    if model.level is not None and len(pl.ss) > MIXED_MAX and strategy in (None, "mixed"):
        notes = [f"mixed partitions are tried up to {MIXED_MAX} statistics; this study has {len(pl.ss)}"]
    else:
        notes = []
    res = StudyResult(model.name, None if model.level is None else model.level_name, level, delta, "n", None, rows)
    res.notes += notes
    res.strategy = winner
    res.strategies = {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")} for k, v in summary.items()}
    res.n_sufficient = int(summary[winner]["n"])
    groups = []
    for g, rec in enumerate(recs, 1):
        info = {"group": g, "n": int(rec["n"]), "statistics": [pl.ss[i].stat.name for i in rec["idx"]]}
        if model.level is not None:
            info["budget"] = math.fsum(x for x in rec["levels"])
            if model.uses_delta:
                info["delta"] = rec["delta"] * len(rec["idx"]) if len(rec["idx"]) > 1 else rec["delta"]
                info["accounting"] = {"basic": "basic composition (Σε, Σδ)",
                                      "pld": "PLD accountant (dp-accounting)",
                                      "whole": "one mechanism at the whole budget"}[rec.get("accounting", "basic")]
                info["composed_eps"] = rec.get("composed_eps")
        groups.append(info)
    res.groups = groups
    _necessary(res, pl)
    res.composition = {"rule": composition.rule(model.name).sequential, "parallel": composition.rule(model.name).parallel,
                       "source": composition.rule(model.name).source}
    _reliability(res)
    return res


def _necessary(res, pl):
    best, who = None, None
    for st in pl.ss:
        v = st.plan.rows[0].necessary if st.plan is not None else None
        if v is not None and (best is None or v > best):
            best, who = v, st
    res.n_necessary = None if best is None else int(best)
    if who is not None:
        ev = who.plan.rows[0].evidence_necessary
        res.evidence_necessary = {
            "statistic": who.stat.name, "n_necessary": int(best),
            "certificate": (f"study lower bound: any joint protocol, restricted to {who.stat.name!r}, is an estimator"
                            + ("" if pl.model.level is None else " private at the whole budget") + "; "
                            + (ev.get("certificate") or
                                                                 f"its certified n necessary is {int(best)}"))}
    else:
        res.evidence_necessary = {"reason": "no statistic has a certified lower bound"}


def _reliability(res):
    nec, suf = res.n_necessary, res.n_sufficient
    if not nec or not suf:
        return
    ratio = suf / nec
    res.reliability = {"ratio": ratio, "threshold": planning.RELIABLE_RATIO, "reliable": ratio <= planning.RELIABLE_RATIO}
    if ratio > planning.RELIABLE_RATIO:
        loose = [r.name for r in res.rows if r.reliability and not r.reliability.get("reliable", True)]
        res.notes.append(f"unreliable: n sufficient / n necessary = {ratio:.3g} > {planning.RELIABLE_RATIO:g}; the "
                         "true minimum lies between the two answers" +
                         (f" (the one-statistic plans of {', '.join(loose)} are themselves more than a factor "
                          f"{planning.RELIABLE_RATIO:g} apart)" if loose else
                          " (the study lower bound only counts the hardest statistic; sharing the budget costs more)"))


# ---------------------------------------------------------------------- solve="eps" and solve="target"

def _solve_eps(stats, model, n, delta, strategy) -> StudyResult:
    """The smallest budget meeting every target with n people: splitting the budget (each statistic's smallest
    sufficient level at n, added up) or splitting the people (the smallest level at which the groups' sufficient
    sizes add up to at most n, by bisection in the level)."""
    if strategy == "mixed":
        raise InputError("strategy", "with solve eps, give split-eps or split-people (or leave it out)", strategy)
    m = len(stats)
    dl_seq = None if delta is None else delta / m
    spec = model.level
    ss = [_Stat(st, model.name, {}, -2.0 if not model.central else -1.0) for st in stats]
    necs, sufs, plans = [], [], []
    for i, st in enumerate(ss):
        kw = dict(st.stat.params, n=n)
        if model.uses_delta:
            kw["delta"] = delta
        try:  # the necessary side at the whole δ; the sufficient side at the δ share of splitting the budget
            whole = planning.plan(st.stat.problem, model.name, target=st.stat.target, solve="eps", **kw)
            share = whole if m == 1 or not model.uses_delta else planning.plan(
                st.stat.problem, model.name, target=st.stat.target, solve="eps", **dict(kw, delta=dl_seq))
        except InputError as exc:
            raise InputError("study", f"{_where(i, st.stat.name)}: {exc}", None) from None
        necs.append(whole.rows[0].necessary)
        sufs.append((share.rows[0].sufficient, share.rows[0].reason_sufficient, whole.rows[0].sufficient))
        plans.append(whole)
    strategies = {}
    # split the budget: every statistic on the n records at its own smallest level
    seq = None
    if strategy in (None, "split-eps") and all(x[0] is not None for x in sufs):
        seq = math.fsum(x[0] for x in sufs)
        if spec.high is not None and (seq > spec.high or (spec.high_open and seq >= spec.high)):
            seq = None
    strategies["split-eps"] = {"eps": seq, "groups": [[st.stat.name for st in ss]], "group_sizes": [n]}
    # split the people: bisection on the level
    par = None
    if strategy in (None, "split-people") and m > 1 and all(x[2] is not None for x in sufs):
        par = _people_level(ss, model, n, delta, max(x[2] for x in sufs), spec)
    if m > 1:
        strategies["split-people"] = {"eps": None if par is None else par[0],
                                      "groups": [[st.stat.name] for st in ss],
                                      "group_sizes": None if par is None else par[1]}
    choices = {k: v["eps"] for k, v in strategies.items() if v["eps"] is not None}
    if not choices:
        why = next((f"{st.stat.name!r}: {x[1]}" for st, x in zip(ss, sufs) if x[0] is None), None)
        raise InputError("study", "no budget reaches every target with n = %d people" % n + (f" ({why})" if why else ""))
    winner = min(choices, key=lambda k: (choices[k], STRATEGIES.index(k)))
    res = StudyResult(model.name, model.level_name, None, delta, "eps", n, [])
    res.strategy, res.strategies = winner, strategies
    res.eps_sufficient = choices[winner]
    res.eps = res.eps_sufficient
    known = [x for x in necs if x is not None]
    res.eps_necessary = max(known) if known else None
    if known:
        who = ss[necs.index(res.eps_necessary)].stat.name
        res.evidence_necessary = {"statistic": who, "eps_necessary": res.eps_necessary, "certificate": (
            f"study lower bound: any joint protocol, restricted to {who!r}, is an estimator private at the whole "
            f"budget with the n people; below {res.eps_necessary:.6g} its certified lower bound exceeds the target")}
    for i, st in enumerate(ss):
        if winner == "split-eps":
            lvl = {"eps": sufs[i][0]}
            if model.uses_delta:
                lvl["delta"] = dl_seq if m > 1 else delta
            n_i = n
        else:
            lvl = {"eps": par[0]}
            if model.uses_delta:
                lvl["delta"] = delta
            n_i = par[1][i]
        ev = st.evaluator(lvl)
        bv = ev.best("upper", n_i)
        pl = _Planner.__new__(_Planner)
        pl.model, pl.level, pl.delta = model, res.eps, delta
        row = _row(pl, st, lvl, n_i, bv)
        row.group = 1 if winner == "split-eps" else i + 1
        row.group_n = n if winner == "split-eps" else n_i
        row.eps_necessary = necs[i]
        row.eps_sufficient = sufs[i][2]
        row.reliability = None
        res.rows.append(row)
    rule = composition.rule(model.name)
    res.composition = {"rule": rule.sequential, "parallel": rule.parallel, "source": rule.source}
    return res


def _people_level(ss, model, n, delta, lo, spec):
    """(level, group sizes): the smallest level (to a relative 1e-2) at which the statistics' sufficient sizes at
    that level, one group each, add up to at most n; None when no level up to the model's largest does."""
    cap = (spec.high * (1 - 1e-9) if spec.high_open else spec.high) if spec.high is not None else 1e4

    def sizes(level):
        lvl = {"eps": level}
        if model.uses_delta:
            lvl["delta"] = delta
        out = []
        for st in ss:
            guess = st.curve(1.0).n(level) if st.exact else None
            k, _ = st.n_at(lvl, guess)
            if k is None:
                return None
            out.append(k)
        return out

    def fits(level):
        sz = sizes(level)
        return sz is not None and sum(sz) <= n

    hi = min(lo * 1.5, cap)
    while not fits(hi):
        if hi >= cap:
            return None
        lo, hi = hi, min(hi * 2, cap)
    while hi / lo > 1.01:
        mid = math.sqrt(lo * hi)
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi, sizes(hi)


def _solve_target(stats, model, n, level, delta, strategy) -> StudyResult:
    """The certified band of each statistic's risk with n people and the budget: every statistic on the n
    records with an equal share of the budget (``split-eps``, the default), or equal groups of people each with
    the whole budget (``split-people``)."""
    if strategy == "mixed":
        raise InputError("strategy", "with solve target, give split-eps or split-people (or leave it out)", strategy)
    m = len(stats)
    kind = strategy or ("split-eps" if model.level is not None else "same-records")
    if model.level is None:
        kind = "same-records"
    pl = _Planner(stats, model, level, delta, kind)
    res = StudyResult(model.name, None if model.level is None else model.level_name, level, delta, "target", n, [])
    res.strategy = kind
    for i, st in enumerate(pl.ss):
        if kind == "split-people":
            n_i, lvl = max(1, n // m), pl._lvl(level, delta)
        elif kind == "split-eps" and m > 1:
            n_i = n
            lvl = pl._lvl(_round_down(level / m), None if delta is None else delta / m)
        else:
            n_i, lvl = n, pl._lvl(level, delta)
        try:
            ev = st.evaluator(lvl)
            ev_n = planning._Evaluator(st.stat.problem, model.name, dict(st.stat.params, **lvl, n=n_i), None)
        except InputError as exc:
            raise InputError("study", f"{_where(i, st.stat.name)}: {exc}", None) from None
        bv = ev_n.best("upper", None)
        row = _row(pl, st, lvl, n_i, bv)
        row.group = 1 if kind != "split-people" else i + 1
        row.group_n = n_i
        if bv is None:
            row.notes.append("no certified upper bound at this allocation")
        res.rows.append(row)
        _ = ev
    rule = composition.rule(model.name)
    res.composition = {"rule": rule.sequential, "parallel": rule.parallel, "source": rule.source}
    return res
