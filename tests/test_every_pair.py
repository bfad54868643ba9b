"""One battery over every (problem, privacy) pair, at the parameters of ``tests/cases.py``.

As scipy's distribution tests run the same checks over every distribution and statsmodels' power tests solve
back for each quantity (``test_roots``), these run the same checks over every pair:

(a) every certified lower bound is at most every certified upper bound (so the reported best lower is at
    most the reported best upper);
(b) the vectorised upper curve (:func:`boundcalc.evaluate_curve`) at the case's n is not below the certified
    lower bound of :func:`boundcalc.rate` (both bound the same minimax risk, from either side);
(c) the planning round trip: ``plan(target=rate(n).upper.value)`` answers ``n_sufficient <= n`` (the
    mechanism behind ``rate``'s upper bound reaches that target with n records) and
    ``n_necessary <= n_sufficient``.

No bound value is written here: each check compares boundcalc's own answers with each other.
"""
from __future__ import annotations

import pytest

import boundcalc as bc
from boundcalc.core.errors import InputError

from cases import CASES, PAIRS, ids  # tests/cases.py: the parameter table

# float64 evaluation of a closed form vs. a lower bound that is rounded outward: allow the last few bits
REL_TOL = 1e-9


def _rate(problem, privacy):
    return bc.rate(problem, privacy=privacy, **CASES[problem, privacy])


def test_the_table_holds_exactly_the_listed_pairs():
    listed = {(e["problem"], e["privacy"]) for e in bc.list_problems()}
    assert set(PAIRS) == listed, {"no examples on the Problem class": listed - set(PAIRS),
                                  "not listed by boundcalc": set(PAIRS) - listed}


@pytest.mark.parametrize("problem,privacy", PAIRS, ids=ids())
def test_certified_lower_at_most_certified_upper(problem, privacy):
    res = _rate(problem, privacy)
    lowers = [b for b in res.lowers if b.certified and b.usable]
    uppers = [b for b in res.uppers if b.certified and b.usable]
    if not lowers or not uppers:
        pytest.skip(f"{problem}/{privacy}: no certified {'lower' if not lowers else 'upper'} bound here")
    for lo in lowers:
        for up in uppers:
            assert lo.value <= up.value, (lo.label, lo.value, up.label, up.value)
    assert res.lower.value <= res.upper.value
    assert res.ratio is not None and res.ratio >= 1


@pytest.mark.parametrize("problem,privacy", PAIRS, ids=ids())
def test_upper_curve_not_below_certified_lower(problem, privacy):
    res = _rate(problem, privacy)
    if res.lower is None:
        pytest.skip(f"{problem}/{privacy}: no certified lower bound")
    try:
        curve = bc.evaluate_curve(problem, privacy=privacy, side="upper", **CASES[problem, privacy])
    except InputError as exc:
        if "no certified closed-form" not in str(exc):
            raise
        pytest.skip(f"{problem}/{privacy}: no certified closed-form upper bound ({exc})")
    curve = float(curve)
    assert curve >= res.lower.value * (1 - REL_TOL), (curve, res.lower.label, res.lower.value)


@pytest.mark.parametrize("problem,privacy", PAIRS, ids=ids())
def test_planning_round_trip_in_n(problem, privacy):
    params = dict(CASES[problem, privacy])
    n = params.pop("n")
    res = _rate(problem, privacy)
    if res.upper is None:
        pytest.skip(f"{problem}/{privacy}: no certified upper bound at n = {n}")
    target = res.upper.value
    plan = bc.plan(problem, privacy=privacy, target=target, **params)
    assert plan.n_sufficient is not None, plan.rows[0].reason_sufficient
    assert plan.n_sufficient <= n, (target, plan.n_sufficient, n)
    if plan.n_necessary is not None:
        assert plan.n_necessary <= plan.n_sufficient
    elif res.lower is not None:
        pytest.fail(f"no n_necessary although rate has a certified lower bound: {plan.rows[0].reason_necessary}")
