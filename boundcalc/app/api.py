"""The Python API: :func:`rate`, :func:`resolve`, :func:`evaluate_curve`, :func:`list_problems`, :func:`mechanism`.

One path from a problem to its numbers: registry entry -> validated values -> bounds -> solver.

The problem modules, the solver and numpy are imported by the functions that use them: a request whose result
is kept (:mod:`boundcalc.result_cache`) is answered without them.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import sys
from collections import OrderedDict

import sympy as sp

from . import result_cache
from ..core.errors import InputError
from ..render import plan_result as _plan_result
from ..render import result as _result
from ..render.result import BoundValue, RateResult, best_bound, finite_or_none, mark_above_no_data, notes_for_loss


def resolve(problem, privacy, given: dict) -> tuple[catalog.registry.Entry, dict]:
    """Validate user parameters for (problem, privacy); fill in defaults.

    Returns the registry entry and the values dict (parameter name -> value, plus "problem" and
    "privacy"). Raises :class:`InputError` naming the parameter on bad input.
    """
    from . import catalog
    from ..core.privacy import get_model, validate_privacy_values

    given = {k: v for k, v in given.items() if v is not None}
    if "alpha" in given:
        if "eps" in given:
            raise InputError("alpha", "is an alias of --eps: give one of them", given["alpha"])
        if get_model(privacy).level_name != "alpha":
            raise InputError("alpha", f"is the level of --privacy tv and kl; --privacy {get_model(privacy).name} "
                                      "takes --eps", given["alpha"])
        given["eps"] = given.pop("alpha")
    entry = catalog.get_entry(problem, privacy)
    model = get_model(privacy)
    values = {}
    raw = dict(given)  # as the user wrote them (for messages)
    for spec in entry.params:
        values[spec.name] = spec.parse(given.pop(spec.name) if spec.name in given else spec.default)
    priv_given = {"eps": given.pop("eps", None), "delta": given.pop("delta", None)}
    values.update(validate_privacy_values(model, priv_given))
    if given:
        name = sorted(given)[0]
        allowed = ", ".join(["--" + s.name for s in catalog.param_specs(entry)])
        raise InputError(name, f"is not a parameter of --problem {entry.problem} --privacy {model.name} "
                               f"(allowed: {allowed})", given[name])
    values["problem"] = entry.problem
    values["privacy"] = model.name
    if entry.validate is not None:
        entry.validate(values)
    # a parameter that the other choices make meaningless is not silently ignored (its default, which internal
    # callers pass along with every other value, changes nothing and passes)
    for spec in entry.params:
        if spec.used_with and spec.name in raw and values[spec.name] != spec.default:
            other, allowed = spec.used_with
            if values.get(other) not in allowed:
                raise InputError(spec.name, f"is only used with --{other} {' or '.join(allowed)} (here --{other} "
                                            f"{values.get(other)})", raw[spec.name])
    return entry, values


def evaluate_bound(bound, values, certify=True, solution=None) -> BoundValue:
    """``bound`` at ``values`` through the solver; ``certify=False`` skips the high-precision check (the float64
    optimum, for searches), ``solution``: the solver's result when already known."""
    from ..core.solver import solve

    failed = bound.holds(values)
    conds = [c.text for c in bound.conditions]
    if failed:
        return BoundValue(bound.side, bound.name, bound.label, None, bound.certified, bound.expr, bound.source,
                          bound.derivation, {}, conds, failed, reason="conditions fail")
    try:
        sol = solution if solution is not None else solve(bound, values)  # optimum, its value recomputed with the mpmath fallback enabled
    except ARITHMETIC_ERRORS as exc:  # e.g. (n ε)² underflowing to 0 at ε = 1e-300: no value, not a wrong one
        return _not_computable(bound, values, conds, exc)
    value = finite_or_none(sol.value)
    reason = None
    certified, note, verified = bound.certified, bound.extra.get("why_not_certified"), None
    if value is None:  # a certified bound always has a value: without one it is listed as not certified
        reason = "not finite at these parameters"
        certified, note = False, note or reason
    elif value <= 0:
        reason = "vacuous (zero) at these parameters"
    elif certified and certify:
        # certified in floating point: re-evaluated in high precision, reported rounded outward
        from ..core.certify import verify

        try:
            check = verify(bound, values, sol.free, value)
        except ARITHMETIC_ERRORS as exc:
            return _not_computable(bound, values, conds, exc)
        value, verified = check.value, check.info
        if not check.certified:
            certified, note = False, check.reason
    return BoundValue(bound.side, bound.name, bound.label, value, certified, bound.expr, bound.source,
                      bound.derivation, sol.free, conds, [], reason, note, verified)


#: what evaluating a bound at extreme parameters may raise (a quantity beyond the float range, a division
#: by a product that underflowed to 0): the bound is then reported without a value at those parameters,
#: not certified, and never chosen (a missing lower bound excludes nothing, a missing upper bound reaches nothing)
ARITHMETIC_ERRORS = (ZeroDivisionError, OverflowError)


def _not_computable(bound, values, conds, exc) -> BoundValue:
    reason = f"not computable in floating point at these parameters ({type(exc).__name__})"
    return BoundValue(bound.side, bound.name, bound.label, None, False, bound.expr, bound.source,
                      bound.derivation, {}, conds, [], reason=reason, note=reason)


def _term_values(terms, values):
    import numpy as np

    out = {}
    for label, term in terms:
        from ..core import symbolic

        f = symbolic.numpy_lambdify(sorted(term.free_symbols, key=lambda s: s.name), term)
        from ..core.bounds import _symbol_values

        sv = _symbol_values(values, None)
        args = [sv[s.name] for s in sorted(term.free_symbols, key=lambda s: s.name)]
        with np.errstate(all="ignore"):
            try:
                out[label] = float(f(*args))
            except ARITHMETIC_ERRORS:  # Python floats raise where numpy's give inf (0.0 ** -2 at ε = 1e-300)
                out[label] = float(f(*[np.float64(a) if isinstance(a, float) else a for a in args]))
    return out


def rate(problem, privacy="pure", **params) -> RateResult:
    """Minimax rate and certified lower/upper bounds for ``problem`` under ``privacy``.

    Parameters are the problem's (e.g. ``n, d, r, k`` for ``mean``) and the privacy model's
    (``eps``; ``delta`` for approx; ``alpha`` is an alias of ``eps``). Missing ones take their
    documented defaults.
    """
    request = result_cache.request_key("rate", problem, privacy, params)
    if request is not None:
        kept = result_cache.load(request)
        if kept is not None:
            return _clone(kept)
    entry, values = resolve(problem, privacy, params)
    key = _memo_key(values)
    result = _RATE_MEMO.get(key) if key is not None else None
    if result is not None:
        _RATE_MEMO.move_to_end(key)
    else:
        result = _rate(entry, values)
        if key is not None:
            _RATE_MEMO[key] = result
            while len(_RATE_MEMO) > RATE_MEMO_SIZE:
                _RATE_MEMO.popitem(last=False)
    if request is not None:
        result_cache.save(request, result)
    return _clone(result) if key is not None or request is not None else result


#: how many distinct :func:`rate` results are kept (least recently used dropped first)
RATE_MEMO_SIZE = 256
_RATE_MEMO: OrderedDict = OrderedDict()


def clear_rate_cache() -> None:
    """Forget every :func:`rate` result kept in this process (the next calls compute afresh, or read the disk
    cache of :mod:`boundcalc.result_cache`, which holds only results of this very code)."""
    _RATE_MEMO.clear()
    result_cache.clear()


def _memo_key(values: dict):
    """The memo key of validated ``values`` (problem, privacy and every parsed parameter, with its
    type so that 1 and 1.0 stay apart), or None when a value is not a plain hashable scalar."""
    items = []
    for k in sorted(values):
        val = values[k]
        if not isinstance(val, (str, int, float, bool, type(None))):
            return None
        items.append((k, type(val).__name__, val))
    return tuple(items)


def _clone(obj):
    """A copy of a result that shares only immutable parts (sympy expressions, strings, numbers):
    a caller mutating what it was given cannot change the memoised original."""
    if isinstance(obj, (str, int, float, bool, complex, type(None), sp.Basic)):
        return obj
    if isinstance(obj, list):
        return [_clone(x) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_clone(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _clone(x) for k, x in obj.items()}
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(obj, numpy.ndarray):
        return obj.copy()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        new = copy.copy(obj)
        for k, x in vars(obj).items():
            object.__setattr__(new, k, _clone(x))
        return new
    return copy.deepcopy(obj)


def _rate(entry, values) -> RateResult:
    from . import catalog

    v = entry.with_derived(values)
    bounds = entry.bounds(v)
    prefetch(bounds, v)
    evaluated = [evaluate_bound(b, v) for b in bounds]
    lowers = [b for b in evaluated if b.side == "lower"]
    uppers = [b for b in evaluated if b.side == "upper"]
    mark_above_no_data(uppers, {b.name for b in bounds if b.extra.get("no_data")})

    terms = entry.rate(v)
    rate_expr = sp.Add(*[t for _, t in terms])
    rate_lower = entry.lower_rate(v) if entry.lower_rate is not None else None
    term_vals = _term_values(terms, v)
    regime = _regime(term_vals)

    nonprivate = None
    info = catalog.resolve_problem(entry.problem, "none")
    if "none" in info.entries:
        if values["privacy"] == "none":
            best = best_bound("upper", uppers)
        else:
            ne = info.entries["none"]
            nv = {k: val for k, val in values.items() if k not in ("eps", "delta")}
            nv["privacy"] = "none"
            nv = ne.with_derived(nv)
            best = best_bound("upper", [evaluate_bound(b, nv) for b in ne.bounds(nv)
                                        if b.side == "upper" and b.certified])
        nonprivate = best.value if best is not None else None

    shown = {k: values[k] for k in values if k not in ("problem", "privacy")}
    for b in uppers:  # what BoundValue.mechanism() needs to rebuild the mechanism (not part of to_dict)
        b.context = {"problem": entry.problem, "privacy": values["privacy"], "params": dict(shown)}
    result = RateResult(entry.problem, values["privacy"], shown, rate_expr, rate_lower, lowers, uppers,
                        nonprivate, regime, term_vals, notes_for_loss(entry.notes, values), rate_terms=list(terms))
    if entry.report is not None:
        result.notes.extend(entry.report(v, result))
    return result


def prefetch(bounds, v) -> None:
    """Start, on worker threads, the values of the bounds that are one call of a function declaring ``prefetch``
    (e.g. the projected subset-selection bounds: boundcalc.mechanisms.subset_tail), where they hold at ``v``: their
    evaluation then waits for those values instead of computing them, and two of them take about the time of
    one. Every value is the one the evaluation computes itself."""
    from ..core.bounds import _symbol_values

    sv = None
    for b in bounds:
        start = getattr(type(b.expr), "prefetch", None)
        if start is None or b.free or not all(getattr(a, "is_Symbol", False) for a in b.expr.args):
            continue
        if b.holds(v):
            continue
        sv = _symbol_values(v, None) if sv is None else sv
        try:
            args = [float(sv[a.name]) for a in b.expr.args]
        except (KeyError, TypeError, ValueError):
            continue
        start(*args)


def _regime(term_vals: dict) -> str:
    finite = {k: v for k, v in term_vals.items() if v is not None and math.isfinite(v)}
    if not finite:
        return "unknown"
    top = max(finite, key=finite.get)
    if len(finite) == 1:
        return f"{top} (the only term)"
    rest = sorted(((v, k) for k, v in finite.items() if k != top), reverse=True)
    ratio = finite[top] / rest[0][0] if rest[0][0] > 0 else math.inf
    if not math.isfinite(ratio):  # the next term is 0 (or below the float range) at these parameters
        return f"{top} term dominates (the {rest[0][1]} term is 0 in floating point here)"
    return f"{top} term dominates ({ratio:.3g}x the {rest[0][1]} term)"


def evaluate_curve(problem, privacy="pure", side="upper", **params) -> np.ndarray:
    """Vectorised certified bound over arrays of parameters (e.g. ``n=np.logspace(2, 8, 10**6)``).

    Uses each bound's closed form at its symbolic optimum (a valid, slightly less tight choice of the
    free parameters than the solver's), lambdified once and cached; bounds without a closed form are
    skipped, and the best (min for upper, max for lower) certified closed form is returned pointwise.
    Bounds whose certified value needs an exact numeric sum per point (``extra["curve"] is False``, e.g. the
    Gaussian threshold scheme's exact binomial sums) are skipped too, so a curve can be looser than ``rate``
    at the same point, never wrong. A bound that is undefined at a point (NaN there, e.g. a d >= 2 mechanism
    at d = 1) does not count at that point.
    """
    import numpy as np

    from . import catalog

    # strings (choice parameters such as loss="squared", and "inf" where allowed) pass through unchanged;
    # every other value must be a number or an array of numbers (not "1000", not b"1000", not 10**400)
    fixed = {k: v for k, v in params.items() if isinstance(v, str)}
    numeric = {"eps", "alpha", "delta"} | {s.name for s in catalog.param_specs(catalog.get_entry(problem, privacy))
                                           if s.kind != "choice"}
    specs0 = {s.name: s for s in catalog.param_specs(catalog.get_entry(problem, privacy))}
    for k, v in fixed.items():
        spec = specs0.get(k)
        inf_word = v.strip().lower() in ("inf", "+inf", "infinity", "∞") and spec is not None and spec.allow_inf
        if k in numeric and not inf_word and v.strip().lower() != "auto":
            raise InputError(k, "must be a number or an array of numbers (not a string)", v)
    arrays = {}
    for k, v in params.items():
        if v is None or k in fixed:
            continue
        if isinstance(v, (bool, bytes, bytearray)) or (isinstance(v, np.ndarray) and v.dtype.kind not in "iuf"):
            raise InputError(k, "must be a number or an array of numbers", v)
        try:
            arrays[k] = np.asarray(v, dtype=float)
        except (OverflowError, TypeError, ValueError):
            shown = f"{str(v)[:12]}… ({len(str(v))} digits)" if isinstance(v, int) else v
            raise InputError(k, "must be finite numbers", shown) from None
    shaped = {k: a.shape for k, a in arrays.items() if a.ndim}
    try:
        np.broadcast_shapes(*shaped.values())
    except ValueError:
        raise InputError(", --".join(sorted(shaped)), "must be arrays whose shapes broadcast together (numpy's rule), got "
                         + ", ".join(f"{k} {s}" for k, s in sorted(shaped.items()))) from None
    for k, arr in arrays.items():
        spec = specs0.get(k)
        if spec is not None and spec.structural and arr.size > 1:
            raise InputError(k, "fixes the form of the bounds: give one value (not an array); call evaluate_curve "
                                "once per value", "array")
    # validate with a representative scalar (integers rounded: a curve may take real n), then check
    # every element of each array against the parameter's range
    scalars = dict(fixed)
    for k, arr in arrays.items():
        if arr.size == 0 or not np.all(np.isfinite(arr)):
            raise InputError(k, "must be finite numbers", "array with non-finite values")
        scalars[k] = float(arr.flat[0])
    entry, probe = resolve(problem, privacy, {k: (round(v) if k in ("n", "d") else v) for k, v in scalars.items()})
    specs = {s.name: s for s in catalog.param_specs(entry)}
    values = dict(probe)
    for k, arr in arrays.items():
        spec = specs.get(k)
        if spec is not None and spec.kind != "choice" and arr.size > 1:
            lo, hi = float(np.min(arr)), float(np.max(arr))
            for x in (lo, hi):
                spec.parse(round(x) if spec.kind == "int" else x)
            values[k] = arr
    try:
        best = _curve(entry, values, side)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        varying = [k for k, a in arrays.items() if a.size > 1 and k != "n"]
        if not varying:
            raise
        for k in varying:  # which array the problem's formulas cannot take (tried alone)
            one = dict(probe)
            one[k] = values[k]
            try:
                _curve(entry, one, side)
            except (TypeError, ValueError) as exc1:
                if isinstance(exc1, InputError):
                    raise
                raise InputError(k, f"cannot vary along a curve of {entry.problem}/{values['privacy']} (its bounds "
                                    "take one value of it): give one value, and call evaluate_curve once per value",
                                 "array") from None
        raise InputError(", --".join(varying), "cannot vary together along a curve of this problem: give one value "
                                               "of each but one", "arrays") from None
    if best is not None and not np.all(np.isfinite(best) | np.isposinf(best)):
        raise InputError("params", f"no certified closed-form {side} bound is defined at some of these points")
    if best is None:
        raise InputError("side", f"no certified closed-form {side} bound for {problem}/{privacy}")
    return best


def _curve(entry, values, side):
    """The pointwise best certified closed-form ``side`` bound at ``values`` (arrays allowed), or None."""
    import numpy as np

    v = entry.with_derived(values)
    best = None
    for b in entry.bounds(v):
        if b.side != side or not b.certified or b.extra.get("curve") is False or b.closed_form() is None:
            continue
        ok = all(np.all(c.holds(v)) for c in b.conditions)
        if not ok:
            continue
        cf = b.__dict__.get("_closed")
        if cf is None:
            from ..core.bounds import Bound

            cf = b.__dict__["_closed"] = Bound(side=b.side, name=b.name, label=b.label, expr=b.closed_form(), source=b.source, derivation=b.derivation)
        val = cf.evaluate(v)
        val = np.asarray(val, dtype=float)
        best = val if best is None else (np.fmin(best, val) if side == "upper" else np.fmax(best, val))
    return best


def list_problems() -> list[dict]:
    from . import catalog

    out = []
    for name, info in sorted(catalog.problems().items()):
        for priv, e in info.entries.items():
            b = e.bounds
            out.append({"problem": name, "aliases": list(info.aliases), "privacy": priv, "title": e.title or info.title,
                        "params": {s.name: (s.default if s.default != math.inf else "inf")
                                   for s in catalog.param_specs(e)},
                        "source": e.source, "check": e.check is not None})
    return out


# ---------------------------------------------------------------------- runnable mechanisms

def mechanism(problem, privacy="pure", reference=True, **params):
    """The runnable mechanism of the reported (best certified) upper bound of ``rate(problem, privacy, **params)``,
    tuned at its free parameters: a :class:`boundcalc.mechanisms.runnable.CentralMechanism` (``release(records)``)
    or :class:`~boundcalc.mechanisms.runnable.LocalMechanism` (``privatize``/``estimate``). ``reference=False``: an
    OpenDP measurement where one is offered (``pip install 'boundcalc[opendp]'``).
    Docs: docs/methods/from-a-plan-to-data.md."""
    if not isinstance(reference, bool):
        raise InputError("reference", "must be True (numpy reference implementation) or False (OpenDP)", reference)
    return rate(problem, privacy, **params).mechanism(reference=reference)


def _build_mechanism(bound_value, reference=True):
    """The mechanism behind an evaluated upper bound of a :func:`rate` result (installed as
    :meth:`BoundValue.mechanism`): the problem's ``mechanism_<privacy>`` hook at the result's parameters."""
    if not isinstance(reference, bool):
        raise InputError("reference", "must be True (numpy reference implementation) or False (OpenDP)", reference)
    ctx = bound_value.context
    entry, values = resolve(ctx["problem"], ctx["privacy"], dict(ctx["params"]))
    v = entry.with_derived(values)
    bound = next((b for b in entry.bounds(v) if b.side == "upper" and b.name == bound_value.name), None)
    if bound is None:
        raise InputError("mechanism", f"{entry.problem}/{values['privacy']}: no upper bound named {bound_value.name!r}")
    mech = entry.mechanism(v, bound_value, bound)
    mech = _at_released_level(mech, bound_value)
    if not reference:
        mech = mech.to_opendp()
    return mech


def _at_released_level(mech, bound_value):
    """A local randomizer released below its claimed ε (:func:`boundcalc.mechanisms.large_eps.release_level`: in
    float64 randomized response cannot run above about 36.7) is the mechanism of the lower level ε', whose risk is
    at least that at ε. It is rebuilt from ``rate`` at ε' (the same bound, tuned and certified there by the same
    code), so that what runs is exactly the ε' mechanism and ``certified_risk`` is the certified upper bound at ε';
    the guarantee stays the claimed ε (an ε'-LDP mechanism is ε-LDP). Repeated while the mechanism tuned at ε' is
    itself released lower (a composition whose number of releases is tuned with ε): the levels decrease, never
    below 36."""
    import dataclasses

    ctx = bound_value.context
    claimed, level = mech.guarantee.eps, getattr(mech, "eps", None)
    if ctx["privacy"] != "local" or level is None or claimed is None or not level < claimed:
        return mech
    while True:
        params = {**dict(ctx["params"]), "eps": level}
        up = next((b for b in rate(ctx["problem"], "local", **params).uppers if b.name == bound_value.name), None)
        if up is None or not (up.usable and up.certified):
            raise InputError("mechanism", f"{ctx['problem']}/local: the upper bound '{bound_value.label}' is released "
                                          f"at ε' = {level:.6g} (float64), where it has no certified value")
        entry, values = resolve(ctx["problem"], "local", params)
        v = entry.with_derived(values)
        bound = next(b for b in entry.bounds(v) if b.side == "upper" and b.name == up.name)
        rebuilt = entry.mechanism(v, up, bound)
        if not rebuilt.eps < level:
            break
        level = rebuilt.eps
    rebuilt.guarantee = dataclasses.replace(rebuilt.guarantee, eps=claimed)
    rebuilt.notes = (f"released at ε' = {level:.6g} < ε = {claimed:.6g}: in float64 randomized response above about "
                     "36.7 would never flip (docs/methods/local-randomizers.md, \"Very large ε\"); an ε'-LDP mechanism "
                     f"is ε-LDP. certified_risk is the upper bound at ε' ({up.value:.6g}; at ε: {bound_value.value:.6g})",
                     ) + rebuilt.notes
    return rebuilt


def _plan_mechanism(plan, row, reference=True):
    """The mechanism of a plan's answer (installed as :meth:`PlanResult.mechanism`): the sufficient side's
    mechanism, tuned at the planned n (or level)."""
    params = dict(plan.params)
    if plan.solve in ("n", "eps"):
        if row.sufficient is None or (isinstance(row.sufficient, float) and not math.isfinite(row.sufficient)):
            raise InputError("mechanism", f"no sufficient {plan.solve} was found for this target, so no tuned mechanism")
        params[plan.solve] = row.sufficient
    res = rate(plan.problem, plan.privacy, **params)
    name = (row.evidence_sufficient or {}).get("bound")
    up = next((b for b in res.uppers if b.name == name and b.usable and b.certified), None) or res.upper
    if up is None:
        raise InputError("mechanism", f"{plan.problem}/{plan.privacy}: no certified upper bound at the planned values")
    return _result.mechanism_of(up, res.uppers, reference)


_result.set_mechanism_factory(_build_mechanism)
_plan_result.set_mechanism_factory(_plan_mechanism)
