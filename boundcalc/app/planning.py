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

Every number comes from the same path as ``boundcalc rate``: :func:`boundcalc.app.api.resolve`, the
registry entry's bounds and :func:`boundcalc.app.api.evaluate_bound` (the solver), at each candidate n
or ε; nothing here re-implements a formula. The search in n steers by the solver's float64 optima and
certifies (high precision, rounded outward: :mod:`boundcalc.core.certify`) only the points an answer rests on,
n and n - 1; were certification to move a value across the target there, the search is run again on
certified values. It first brackets the crossing between neighbouring points of a fixed grid (4 per decade),
then interpolates log-log (bounds are close to power laws in n) over the integers, with a safeguard that
closes any bracket in logarithmically many steps. The evaluations are kept per question (problem, privacy,
fixed parameters) for the process, so a new target of the same question mostly evaluates only the few
integers around its answer; the answer itself depends on the target alone. The level search (continuous)
is a safeguarded log-log interpolation search on certified values, with log-space bisection as the
fallback. Where a certified bound is unavailable at a candidate point the search is conservative: a
missing lower bound excludes nothing and a missing upper bound reaches nothing.

Unreachable targets give ``None`` with a reason (never a wrong number): a target below what the
certified upper bound reaches at the largest allowed n (``params.N``: 10^18) or level; a problem whose
lower (or upper) bounds are all order-only (constants unspecified: nothing can be certified).
"""
from __future__ import annotations

import bisect
import copy
import math
from collections import OrderedDict

from . import result_cache
from ..core.errors import InputError
from ..core.params import ParamSpec
from ..core.privacy import get_model
from ..render import plan_result as _plan_result
from ..render.numbers import finite_or_none
from ..render.numbers import format_number as _fmt
from ..render.plan_result import PlanResult, PlanRow  # re-exported (the Python contract)

#: the modules that compute (the API, the catalog of problems, the result records), bound by :func:`_load` on the
#: first plan that is computed: a plan read whole from the result cache imports none of them, hence no sympy
api = catalog = best_bound = notes_for_loss = None


def _load() -> None:
    """Import the computing modules (sympy, the registry, the solver come with them) and bind their names here."""
    global api, catalog, best_bound, notes_for_loss
    if api is None:
        from . import api as _api
        from . import catalog as _catalog
        from ..render.result import best_bound as _best, notes_for_loss as _notes

        catalog, best_bound, notes_for_loss = _catalog, _best, _notes
        api = _api  # last: the test above sees the other names bound


def _plan_mechanism(plan_res, row, reference=True):
    """:meth:`PlanResult.mechanism` of a plan read from the result cache (then the API is not imported yet)."""
    _load()
    return api._plan_mechanism(plan_res, row, reference=reference)


if _plan_result._MECHANISM_FACTORY is None:  # the API installs its own (the same function) when imported
    _plan_result.set_mechanism_factory(_plan_mechanism)

SOLVE = ("n", "eps", "target")
#: relative width of the final bracket when solving for the (continuous) privacy level
EPS_RTOL = 1e-4
#: smallest privacy level searched (the model's own lower limit is open at 0)
EPS_FLOOR = 1e-8
TARGET = ParamSpec("target", "float", None, "target risk", low=0, low_open=True, high=1e300)
MAX_STEPS = 400


# ---------------------------------------------------------------------- evaluation (one path)

#: evaluations kept in this process per (problem, privacy, fixed parameters, variable): a plan at a new target
#: starts from the points earlier plans of the same question evaluated (least recently used dropped first)
MEMO_KEYS = 16
#: points kept per key (the key's memo is emptied when it holds more)
MEMO_POINTS = 4000
_MEMO: OrderedDict = OrderedDict()


def clear_memo() -> None:
    """Forget the evaluations kept for planning in this process, and the whole results kept in it
    (:func:`boundcalc.app.result_cache.clear`), so that the next plan is computed afresh."""
    _MEMO.clear()
    result_cache.clear()
    if _ENDS is not None:
        _ENDS.clear()


def _memo_for(entry, var, values) -> dict:
    """The memo of one planning question, shared by every target (and both sides) asked of it."""
    fixed = {k: v for k, v in values.items() if k != var}
    key = api._memo_key(fixed)
    fresh = {"float": {}, "cert": {}, "errors": {}, "once": {}}
    if key is None:
        return fresh
    key = (id(entry), var, key)
    memo = _MEMO.get(key)
    if memo is None or memo["entry"] is not entry:
        memo = _MEMO[key] = dict(fresh, entry=entry)
        while len(_MEMO) > MEMO_KEYS:
            _MEMO.popitem(last=False)
    else:
        _MEMO.move_to_end(key)
    if len(memo["float"]) + len(memo["cert"]) > MEMO_POINTS:
        memo["float"].clear()
        memo["cert"].clear()
    return memo


class _Evaluator:
    """Best certified lower/upper bound at a point, through api.resolve + api.evaluate_bound; cached.

    Two values per point: :meth:`fvalue`, the best bound's float64 optimum from the solver (what the search
    steers by), and :meth:`value`, the best *certified* value, re-evaluated in high precision and rounded
    outward (:mod:`boundcalc.core.certify`), exactly as ``boundcalc rate`` reports it. Every answer and every
    number reported rests on the certified values; the float64 values only choose where to look.
    """

    def __init__(self, problem, privacy, fixed: dict, var: str | None):
        _load()
        self.problem, self.privacy, self.fixed, self.var = problem, privacy, dict(fixed), var
        entry, values = api.resolve(problem, privacy, dict(fixed))  # validates the fixed parameters
        self.entry = entry
        self.values = values
        memo = _memo_for(entry, var, values)
        self.fcache, self.cache, self.errors, self.once = memo["float"], memo["cert"], memo["errors"], memo["once"]
        if "sides" not in self.once:
            v = entry.with_derived(values)
            self.once["certified_sides"] = {b.side for b in entry.bounds(v) if b.certified}
            self.once["sides"] = {b.side for b in entry.bounds(v)}
        self.certified_sides = self.once["certified_sides"]
        self.sides = self.once["sides"]

    def _evaluated(self, side: str, x):
        """(values, [(bound, float64 BoundValue)]) of the certified bounds of ``side`` at ``var = x``, or None
        when the problem rejects the point."""
        key = (side, x)
        if key in self.fcache:
            return self.fcache[key]
        params = dict(self.fixed)
        if self.var is not None:
            params[self.var] = x
        try:
            entry, values = api.resolve(self.problem, self.privacy, params)
        except InputError as exc:  # the problem rejects this point (e.g. too small an n)
            self.errors[key] = str(exc)
            self.fcache[key] = None
            return None
        v = entry.with_derived(values)
        bounds = [b for b in entry.bounds(v) if b.side == side and b.certified]
        out = (v, *_evaluate_skipping(bounds, v, side))
        self.fcache[key] = out
        return out

    def prefetch(self, side: str, x) -> None:
        """Start on worker threads the values at ``var = x`` that :meth:`_evaluated` will compute in full: those of the
        bounds declaring ``prefetch`` and no cheap test that could skip them (:func:`api.prefetch`). Nothing else
        changes: their evaluation then waits for the same values instead of computing them."""
        if (side, x) in self.fcache or self.var is None:
            return
        params = dict(self.fixed)
        params[self.var] = x
        try:
            entry, values = api.resolve(self.problem, self.privacy, params)
        except InputError:
            return
        v = entry.with_derived(values)
        api.prefetch([b for b in entry.bounds(v) if b.side == side and b.certified and _value_test(b) is None], v)

    def _unskip(self, side: str, x):
        """Evaluate the bounds :meth:`_evaluated` skipped at ``var = x`` (after certification moved the best value
        past the cutoff they were shown to exceed), in the entry's order."""
        v, pairs, skipped = self.fcache[(side, x)]
        done = {b.name: (b, bv) for b, bv in pairs}
        done.update({b.name: (b, api.evaluate_bound(b, v, certify=False)) for b, _ in skipped})
        order = [b.name for b in self.entry.bounds(v) if b.side == side and b.certified]
        self.fcache[(side, x)] = (v, [done[name] for name in order if name in done], [])

    def qvalue(self, side: str, x):
        """A value at least :meth:`fvalue` (side, x), cheap, or None: the best float64 value where every bound with a
        cheap value above its own (a function declaring ``value_above``: :func:`_above_test`) counts with that
        value instead. None where no bound declares one (nothing to gain) or the problem rejects the point."""
        if not self.once.setdefault(("has_quick", side), self._has_quick(side)):
            return None
        memo = self.once.setdefault(("quick", side), {})
        if x in memo:
            return memo[x]
        if (side, x) in self.fcache:  # the exact value is at hand
            memo[x] = self.fvalue(side, x)
            return memo[x]
        params = dict(self.fixed)
        params[self.var] = x
        try:
            entry, values = api.resolve(self.problem, self.privacy, params)
        except InputError:
            memo[x] = None
            return None
        v = entry.with_derived(values)
        vals = []
        for b in entry.bounds(v):
            if b.side != side or not b.certified:
                continue
            test = _above_test(b)
            if test is None:
                bv = api.evaluate_bound(b, v, certify=False)
                if bv.usable:
                    vals.append(bv.value)
                continue
            if b.holds(v):
                continue
            try:
                from ..core import bounds as B

                sv = B._symbol_values(v, None)
                q = float(test(*[float(sv[a.name]) for a in b.expr.args]))
            except (KeyError, TypeError, ValueError):
                q = math.nan
            if math.isfinite(q) and q > 0:
                vals.append(q)
        memo[x] = min(vals) if vals else None
        return memo[x]

    def _has_quick(self, side):
        v = self.entry.with_derived(self.values)
        return side == "upper" and self.var == "n" and any(
            _above_test(b) is not None for b in self.entry.bounds(v) if b.side == side and b.certified)

    def fbest(self, side: str, x=None):
        """The best usable bound of ``side`` at ``var = x`` by its float64 optimum (not yet certified), or None."""
        ev = self._evaluated(side, x)
        return None if ev is None else best_bound(side, [bv for _, bv in ev[1]])

    def fvalue(self, side, x):
        b = self.fbest(side, x)
        return None if b is None else b.value

    def best(self, side: str, x=None):
        """The best certified usable bound (BoundValue) of ``side`` at ``var = x``, or None.

        The same bound and value as certifying every bound and taking the best (:func:`best_bound`), with
        fewer high-precision evaluations: certification only lowers a lower bound's value and raises an upper
        bound's (or withdraws the bound), so bounds are certified in order of their float64 values and the rest
        are skipped once none of them can reach the best certified value (a tie is certified too: the first of
        equal bounds in the entry's order wins, as in :func:`best_bound`).
        """
        key = (side, x)
        if key in self.cache:
            return self.cache[key]
        disk = self._end_key(side, x)
        if disk is not None:
            found, best = _read_end(disk)
            if found:
                self.cache[key] = best
                return best
        ev = self._evaluated(side, x)
        best = None
        if ev is not None:
            best = self._certified_best(side, ev)
            skipped = ev[2]
            if skipped and (best is None or best.value > min(c for _, c in skipped)):
                # a skipped bound (float64 value above its cutoff) might now be the best: evaluate it and start again
                self._unskip(side, x)
                best = self._certified_best(side, self.fcache[key])
        self.cache[key] = best
        if disk is not None:
            _keep_end(disk, best)
        return best

    def _end_key(self, side, x):
        """The disk key of the certified best at an end of the searched range (:meth:`set_ends`), else None."""
        if x not in self.once.get("ends", ()) or self.once.get("question") is None:
            return None
        return repr((self.once["question"], side, type(x).__name__, x))

    def set_ends(self, *xs) -> None:
        """The ends of the range searched (the smallest and largest n, or level): every plan of the question, whatever
        its target, asks for the certified best there, so those values are kept on disk (:func:`_keep_end`)."""
        self.once.setdefault("ends", set()).update(xs)
        if "question" not in self.once:
            fixed = api._memo_key({k: v for k, v in self.values.items() if k != self.var})
            self.once["question"] = None if fixed is None else (self.var, fixed)

    def _certified_best(self, side, ev):
        best = None
        if ev is not None:
            v, pairs = ev[0], ev[1]
            sign = 1.0 if side == "lower" else -1.0
            order = sorted((i for i, (_, bv) in enumerate(pairs) if bv.usable),
                           key=lambda i: (-sign * pairs[i][1].value, i))
            top = None  # (sign * certified value, index)
            for i in order:
                b, fbv = pairs[i]
                if top is not None and sign * fbv.value < top[0]:
                    break
                from ..core.solver import Solution

                cbv = api.evaluate_bound(b, v, solution=Solution(fbv.value, dict(fbv.free_parameters)))
                if not (cbv.certified and cbv.usable):
                    continue
                cand = (sign * cbv.value, i)
                if top is None or cand[0] > top[0] or (cand[0] == top[0] and i < top[1]):
                    top, best = cand, cbv
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

    def freaches(self, side, x, target) -> bool:
        """:meth:`reaches` on the float64 values (for the search only)."""
        v = self.fvalue(side, x)
        if v is None:
            return side == "lower"
        return v <= target


#: the certified best values at the ends of the searched range, kept on disk by question, side and point
#: (:meth:`_Evaluator.set_ends`): a plan at a new target reads them instead of certifying them again
_ENDS = None


def _ends_store():
    global _ENDS
    if _ENDS is None:
        from ..cache.diskcache import JsonStore

        _ENDS = JsonStore("boundcalc.plan_ends", sharded=True)
    return _ENDS


def _read_end(key):
    """(True, the certified best BoundValue or None) kept for ``key``, or (False, None) if none reads back."""
    text = _ends_store().get(key)
    if type(text) is not str:
        return False, None
    import json

    from ..cache import exprcodec
    from ..render.result import BoundValue

    try:
        value = exprcodec.decode(json.loads(text))
    except Exception:  # noqa: BLE001 - an entry that does not read back is computed again
        return False, None
    if value is not None and type(value) is not BoundValue:
        return False, None
    return True, value


def _keep_end(key, value) -> None:
    """Keep a certified best value (a BoundValue, or None: no certified bound there) if it reads back identical."""
    import json

    from ..cache import exprcodec

    try:
        data = exprcodec.encode(value, keep=True)
    except exprcodec.Unencodable:
        return
    if exprcodec.roundtrips(value, data):
        try:
            text = json.dumps(data, separators=(",", ":"))
        except (TypeError, ValueError):
            return
        _ends_store().put(key, text)


def _value_test(b):
    """The cheap test ``value_exceeds(*args, cutoff)`` of a bound that is one call of a function declaring one
    (True only if the bound's value exceeds the cutoff), or None."""
    test = getattr(type(b.expr), "value_exceeds", None)
    if test is None or b.free or not all(getattr(a, "is_Symbol", False) for a in b.expr.args):
        return None
    return test


def _above_test(b):
    """``value_above(*args)`` of a bound that is one call of a function declaring it (a value at least the bound's,
    cheaply; NaN where the bound is unusable), or None."""
    test = getattr(type(b.expr), "value_above", None)
    if test is None or b.free or not all(getattr(a, "is_Symbol", False) for a in b.expr.args):
        return None
    return test


def _evaluate_skipping(bounds, v, side):
    """([(bound, float64 BoundValue)], [(bound, cutoff)]): the bounds of ``side`` at ``v`` by the solver (float64),
    in the entry's order, except upper bounds with a cheap test (:func:`_value_test`) that shows them above the
    best value of the others (they cannot be the best; the cutoff is kept with them). Those are tested last,
    against the best value so far; a bound whose value the solver already keeps is evaluated (a look-up)."""
    from ..core import bounds as B
    from ..core import solver

    tests = {id(b): _value_test(b) for b in bounds} if side == "upper" else {}
    done, skipped = {}, []
    for b in bounds:
        if tests.get(id(b)) is None:
            done[id(b)] = api.evaluate_bound(b, v, certify=False)
    for b in bounds:
        test = tests.get(id(b))
        if test is None:
            continue
        vals = [bv.value for bv in done.values() if bv.usable and bv.value is not None]
        cutoff = min(vals) if vals else None
        if cutoff is not None and not solver.memoised(b, v) and b.holds(v) == []:
            try:
                sv = B._symbol_values(v, None)
                shown = bool(test(*[float(sv[a.name]) for a in b.expr.args], float(cutoff)))
            except (KeyError, TypeError, ValueError):
                shown = False
            if shown:
                skipped.append((b, cutoff))
                continue
        done[id(b)] = api.evaluate_bound(b, v, certify=False)
    return [(b, done[id(b)]) for b in bounds if id(b) in done], skipped


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


#: the search in n first narrows its bracket to neighbouring points of a fixed grid (this many per decade:
#: round(10^(j/4))), then interpolates between integers; the grid does not depend on the target, so the plans of
#: one question at different targets share (and keep) the grid's evaluations, and the answer depends on the
#: target alone, not on what was asked before
ANCHORS_PER_DECADE = 4


def _anchors(lo: int, hi: int) -> list[int]:
    """The grid points strictly between lo and hi, increasing."""
    out = []
    j = max(0, int(math.floor(math.log10(max(lo, 1)) * ANCHORS_PER_DECADE)) - 1)
    while True:
        a = int(round(10 ** (j / ANCHORS_PER_DECADE)))
        if a >= hi:
            return out
        if a > lo and (not out or a > out[-1]):
            out.append(a)
        j += 1


def _width(lo: int, hi: int) -> float:
    return math.log1p((hi - lo) / lo) if lo > 0 else math.inf


def _loglog(a: int, b: int, fa, fb, target):
    """The n where the line through (log a, log fa) and (log b, log fb) meets log target (a < b), or None.

    Bounds are close to power laws in n; the differences of logarithms are formed as log1p and log of ratios,
    so that neighbouring integers near 10^18 keep their digits.
    """
    if fa is None or fb is None or fa <= 0 or fb <= 0 or fa == fb or target <= 0:
        return None
    try:
        step = math.log(target / fa) * math.log1p((b - a) / a) / math.log(fb / fa)
        x = a + a * math.expm1(step)
    except (ZeroDivisionError, OverflowError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _search_int(value, reaches, target, lo, hi, known=None):
    """Smallest integer n in (lo, hi] with reaches(n), given not reaches(lo) and reaches(hi).

    ``value(n)`` steers the search (``None`` where unavailable). The crossing is estimated by log-log
    interpolation through the two latest points (else the bracket's ends; else the middle of the bracket).
    While grid points (:func:`_anchors`) lie inside the bracket the candidate is the grid point nearest the
    estimate; then it is the smallest integer at or above the estimate, so that an accurate estimate brackets
    the answer between n - 1 and n at once. Where the same end of the bracket moves several times in a row
    (the estimates err on one side, as at the steps of a bound that is piecewise constant in n), the candidate
    is pushed past the estimate by 1, 2, 4, ... (at most to the bracket's middle), so every bracket is
    closed in a number of steps logarithmic in its width.

    ``known(n)``: whether n's value is already at hand (kept from earlier plans of the same question). The grid
    points at hand first narrow the bracket, for free. That changes only how the bracket of neighbouring grid
    points is found, not which one it is (where the bound is monotone across the grid, as bounds are at a
    spacing of a factor 1.78 in n), and the integer search inside it starts afresh from its two ends: the answer
    depends on the target alone.
    """
    seen: dict = {}

    def val(n):  # values are asked for lazily: the given ends are not evaluated unless an estimate needs them
        if n not in seen:
            seen[n] = value(n)
        return seen[n]

    grid = _anchors(lo, hi)
    if known is not None:
        at_hand = [a for a in grid if known(a)]
        for a in at_hand:
            if reaches(a):
                hi = a
                break
        for a in reversed(at_hand):
            if a < hi and not reaches(a):
                lo = a
                break
    pts = [lo, hi]
    moved, run, steps = None, 0, 0
    while hi - lo > 1 and steps < MAX_STEPS:
        steps += 1
        if moved is None and bisect.bisect_right(grid, lo) >= bisect.bisect_left(grid, hi):
            pts = [lo, hi]  # the integer search starts from the bracket's ends
            moved = "grid"
        a, b = sorted(pts[-2:])
        x = _loglog(a, b, val(a), val(b), target)
        if x is None or not lo < x < hi + 1:
            x = _loglog(lo, hi, val(lo), val(hi), target)
        if x is not None and not lo < x < hi + 1:
            x = None
        i, j = bisect.bisect_right(grid, lo), bisect.bisect_left(grid, hi)
        if i < j:  # grid points inside the bracket: the nearest to the estimate (in log), or the middle one
            if x is None:
                cand = grid[(i + j) // 2]
            else:
                k = min(max(bisect.bisect_left(grid, x, i, j), i), j - 1)
                if k > i and math.log(x / grid[k - 1]) < math.log(grid[k] / x):
                    k -= 1
                cand = grid[k]
        else:
            mid = (lo + hi) // 2
            cand = mid if x is None else (int(math.ceil(x)) if x < hi else hi)
            if run >= 2 and moved == "lo":
                cand = max(cand, min(lo + 2 ** (run - 2), mid))
            elif run >= 2 and moved == "hi":
                cand = min(cand, max(hi - 2 ** (run - 2), mid))
            cand = min(max(cand, lo + 1), hi - 1)
        val(cand)
        side = "hi" if reaches(cand) else "lo"
        if side == "hi":
            hi = cand
        else:
            lo = cand
        if i >= j:  # the integer search (in the grid search, ``moved`` stays None)
            run = run + 1 if side == moved else 1
            moved = side
        pts.append(cand)
    return hi


def _search_n(ev: "_Evaluator", side, target, lo, hi):
    """:func:`_search_int` for ``side`` at ``target`` in (lo, hi], on the float64 values, then certified.

    The answer n must satisfy the certified predicate at n and (above lo) its negation at n - 1: both points are
    certified (:meth:`_Evaluator.reaches`). Where certification moves a value across the target (a float64 value
    within rounding of it, or a bound whose high-precision check fails), the search is run again on certified
    values throughout, so that a reported answer never rests on an uncertified value.
    """
    n = _search_quick(ev, side, target, lo, hi)
    if n is None:
        n = _search_int(lambda m: ev.fvalue(side, m), lambda m: ev.freaches(side, m, target), target, lo, hi,
                        known=lambda m: (side, m) in ev.fcache)
    if ev.reaches(side, n, target) and (n - 1 <= lo or not ev.reaches(side, n - 1, target)):
        return n
    return _search_int(lambda m: ev.value(side, m), lambda m: ev.reaches(side, m, target), target, lo, hi,
                       known=lambda m: (side, m) in ev.cache)


def _search_quick(ev: "_Evaluator", side, target, lo, hi):
    """The answer of the float64 search found from cheap values above the bound's (:meth:`_Evaluator.qvalue`), or
    None (then the search runs on the bound's own values).

    The crossing n_q of the cheap values is found by :func:`_search_int`; the best bound is at most its cheap value,
    so it reaches the target at n_q too. If it does not at n_q - 1, n_q is a crossing of the bound itself: where the
    bound is monotone in n, the one crossing, which the search on its own values finds too. Two evaluations of the
    bound instead of one per step, where the cheap value is the bound's (the projected subset-selection bounds at
    their default subset size). Where the bound is below its cheap value at n_q - 1, a short bracket below n_q is
    searched on the bound's values; None (the search on the bound's values from the start) if none is found."""
    if side != "upper" or ev.qvalue(side, hi) is None:
        return None

    def qreaches(m):
        q = ev.qvalue(side, m)
        return q is not None and q <= target

    if not qreaches(hi):
        return None
    memo = ev.once.get(("quick", side), {})
    nq = _search_int(lambda m: ev.qvalue(side, m), qreaches, target, lo, hi, known=lambda m: m in memo)
    if nq - 1 > lo:  # the bound reaches the target at n_q (below its cheap value), so n_q - 1 is evaluated next
        ev.prefetch(side, nq - 1)
    if nq - 1 <= lo or not ev.freaches(side, nq, target):
        return None
    if not ev.freaches(side, nq - 1, target):
        return nq
    # the bound is below its cheap value here (another subset size or parameter won): its crossing is a little below
    # n_q; a point below it that does not reach is found in steps of 0.1 %, 0.2 %, ... of n_q, then the search on the
    # bound's own values runs in that short bracket (where the bound is monotone, the same crossing)
    step, top = max(1, nq // 1000), nq - 1
    while True:
        m = max(nq - 1 - step, lo)
        if m <= lo:
            return None
        if not ev.freaches(side, m, target):
            break
        top, step = m, 2 * step
    return _search_int(lambda k: ev.fvalue(side, k), lambda k: ev.freaches(side, k, target), target, m, top)


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


# the results (PlanRow, PlanResult) and their rendering: boundcalc.render.plan_result


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
    for i, t in enumerate(out):  # one row per target: the same target twice (0.01,1e-2) is a slip
        if t in out[:i]:
            raise InputError("target", f"names the target {t:g} twice: give each target once", target)
    return out


def _refuse_targets_reached_everywhere(ev, targets, var) -> None:
    """Refuse a target that a certified upper bound depending neither on n nor on the privacy level
    already meets, i.e. the risk of an estimator that uses no data (θ̂ = 0 for the mean, risk r²):
    every n and every level reach it, so there is nothing to plan."""
    if "ceiling" not in ev.once:
        ev.once["ceiling"] = _no_data_ceiling(ev)
    ceiling = ev.once["ceiling"]
    if ceiling is None:
        return
    if ceiling.value <= 0:  # e.g. density at L = 0: the class is the single density f ≡ 1, known without data
        zero = [f"--{k} 0" for k, x in ev.values.items() if isinstance(x, (int, float)) and not isinstance(x, bool)
                and x == 0]
        raise InputError("target", f"every target is met without data here: {ceiling.label} has certified risk 0 "
                                   "at these parameters" + (f" ({', '.join(zero)})" if zero else "")
                         + "; there is nothing to plan", targets[0])
    for t in targets:
        if t >= ceiling.value:
            raise InputError("target", f"must be below {ceiling.value:.4g}, the certified risk of "
                                       f"{ceiling.label}: a larger target needs no data", t)


def _no_data_ceiling(ev):
    """The smallest certified upper bound that depends neither on n nor on the privacy level (or None)."""
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
    return ceiling


def plan(problem, privacy="pure", target=None, solve=None, **params) -> PlanResult:
    """Solve for the one open quantity among n, the privacy level and the target risk.

    ``solve``: ``"n"`` (default; give ``target``, not ``n``), ``"eps"`` (give ``target``, not ``eps``/
    ``alpha``) or ``"target"`` (give neither ``target`` nor anything else: the reachable risk at the
    given n and level). ``target`` may be a number, a list, or a comma-separated string: the answers
    are then lists, one per target (in the order given). Other parameters are the problem's.

    Returns a :class:`PlanResult` (``.n_necessary``, ``.n_sufficient``, ``.to_dict()``, ``.to_text()``).

    A plan is a pure function of the request and of the code, like a ``rate`` result: it is kept whole by
    :mod:`boundcalc.app.result_cache` (keyed by the request as given, in files named by the code's fingerprint),
    so the same question asked again is read, not planned (docs/engineering/speed.md).
    """
    request = result_cache.request_key("plan", problem, privacy,
                                       dict(params, **{"(target)": target, "(solve)": solve}))
    if request is not None:
        kept = result_cache.load(request, PlanResult)
        if kept is not None:
            return copy.deepcopy(kept)
    result = _plan(problem, privacy, target, solve, params)
    if request is not None:
        result_cache.save(request, result)
        return copy.deepcopy(result)
    return result


def _plan(problem, privacy, target, solve, params) -> PlanResult:
    """:func:`plan`, computed."""
    _load()
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
    if "n_range" not in ev.once:
        ev.once["n_range"] = _find_n_range(ev)
    return ev.once["n_range"]


def _find_n_range(ev):
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
    ev.set_ends(n_lo, n_hi)
    out = [None] * len(targets)
    for i in range(len(targets)):  # each target on its own: its answer does not depend on the others
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
                n_suf = _search_n(ev, "upper", t, n_lo, n_hi)
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
            # the lower bound at hi (at most the upper bound there, so at most t) is evaluated only where the
            # answer needs it: the search ends at hi, or n_lo already reaches the target. Without a sufficient n,
            # a lower bound above t at the largest n answers at once (the minimax risk is non-increasing in n: no
            # n <= n_hi reaches t), with no search below it: a target below every n's reach (1e-300) is answered
            # from the bound at n_hi alone
            if row.sufficient is None and not ev.reaches("lower", hi, t):
                n_nec = hi
            else:
                n_nec = n_lo if ev.reaches("lower", n_lo, t) else _search_n(ev, "lower", t, n_lo, hi)
            if n_nec in (n_lo, hi) and not ev.reaches("lower", hi, t):
                v = ev.value("lower", hi)
                row.reason_necessary = (f"unreachable: the certified lower bound exceeds the target for every "
                                        f"n <= {n_hi:.3g} (at n = {n_hi:.3g} it is {_fmt(v)}); no private "
                                        f"estimator reaches it")
                row.evidence_necessary = _bound_info(ev.best("lower", hi), "n", hi)
            elif n_nec == n_lo:
                row.necessary = n_lo
                row.evidence_necessary = _bound_info(ev.best("lower", n_lo), "n", n_lo)
                row.notes.append(f"the certified lower bound does not exceed the target even at n = {n_lo}: "
                                 "it sets no minimum sample size")
            else:
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
    ev.set_ends(e_lo, e_hi)
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
