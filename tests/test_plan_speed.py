"""Planning's fast search: float64 search, certification of the answer's points only, kept evaluations.

Each test compares the fast path with an independent computation: the certified best bound of every bound
(``api.evaluate_bound`` on all of them, then ``best_bound``), an exhaustive scan of a synthetic function, or the
same plan in a fresh process state.
"""
import math

import pytest

import boundcalc as bc
from boundcalc.app import api, planning
from boundcalc.render.result import best_bound


def _all_certified_best(problem, privacy, side, **params):
    """The best certified bound the plain way: every bound certified, then the best (as ``rate`` does)."""
    entry, values = api.resolve(problem, privacy, params)
    v = entry.with_derived(values)
    return best_bound(side, [api.evaluate_bound(b, v) for b in entry.bounds(v) if b.side == side and b.certified])


@pytest.mark.parametrize("problem,privacy,fixed,ns", [
    ("mean", "approx", {"d": 3, "k": 4}, (7, 10 ** 6)),
    ("mean", "pure", {}, (1, 50, 4000)),
    ("point", "pure", {"model": "bernoulli"}, (20, 900)),
    ("gaussian", "local", {"d": 10}, (5000, 110737)),
])
def test_lazy_certification_picks_the_same_bound_and_value(problem, privacy, fixed, ns):
    """Certifying in order of the float64 values and stopping early gives the bound, value and free parameters
    of certifying every bound."""
    planning.clear_memo()
    ev = planning._Evaluator(problem, privacy, fixed, "n")
    for n in ns:
        for side in ("lower", "upper"):
            fast, full = ev.best(side, n), _all_certified_best(problem, privacy, side, n=n, **fixed)
            assert (fast is None) == (full is None)
            if full is not None:
                assert (fast.name, fast.value, fast.free_parameters) == (full.name, full.value, full.free_parameters)
                assert fast.verified == full.verified
                # the float64 optimum steers the search: on the safe side of the certified value only by rounding
                f = ev.fvalue(side, n)
                assert (f >= fast.value) if side == "lower" else (f <= fast.value)
                assert f == pytest.approx(fast.value, rel=1e-6)


def _brute(values, target):
    """Smallest n with values[n] <= target (values indexed from 0)."""
    return next(n for n, v in enumerate(values) if v <= target)


@pytest.mark.parametrize("shape", ["power", "steps", "kinked", "huge"])
def test_integer_search_finds_the_crossing(shape):
    """The search returns the smallest n with f(n) <= target for non-increasing f (checked against a scan), in a
    number of evaluations logarithmic in the bracket."""
    if shape == "huge":  # near 10^18, where neighbouring integers differ in the 16th digit
        base = 10 ** 17
        f = lambda n: 1.0 / n  # noqa: E731
        for t in (1 / (3 * base + 12345), 1 / (7 * base + 1)):
            calls = []
            n = planning._search_int(lambda m: calls.append(m) or f(m), lambda m: f(m) <= t, t, 1, 10 ** 18)
            assert f(n) <= t < f(n - 1)
            assert len(calls) < 60
        return
    size = 200000
    if shape == "power":
        f = lambda n: 3.0 * n ** -0.8  # noqa: E731
    elif shape == "steps":  # piecewise constant (runs of 7), like a bound with an integer inside
        f = lambda n: 1.0 / (7 * (n // 7) + 7)  # noqa: E731
    else:  # two power laws meeting at n = 5000
        f = lambda n: 1.0 / n if n < 5000 else 5000 ** 0.5 / 5000 / n ** 0.5  # noqa: E731
    table = [math.inf] + [f(n) for n in range(1, size + 1)]
    for t in (f(3) * 0.999, f(777), f(4999), f(5001) * 1.0001, f(123457), f(size - 1)):
        calls = []
        n = planning._search_int(lambda m: calls.append(m) or f(m), lambda m: f(m) <= t, t, 1, size)
        assert n == _brute(table, t)
        assert len(calls) <= 40, (shape, t, len(calls))


def test_answer_rests_on_certified_values(monkeypatch):
    """If the float64 values steer the search to a wrong n (here: upper bounds 0.5% too optimistic, lower
    bounds 0.5% too pessimistic), the certified check at n and n - 1 catches it and the certified search gives
    the same answer as planning with honest values; the answer is confirmed by ``rate``."""
    kw = {"k": 4, "eps": 0.5}
    planning.clear_memo()
    honest = bc.plan("mean", "pure", target=3e-3, **kw)
    true_fvalue = planning._Evaluator.fvalue

    def lying(self, side, x):
        v = true_fvalue(self, side, x)
        return None if v is None else v * (0.995 if side == "upper" else 1.005)

    monkeypatch.setattr(planning._Evaluator, "fvalue", lying)
    planning.clear_memo()
    res = bc.plan("mean", "pure", target=3e-3, **kw)
    assert (res.n_necessary, res.n_sufficient) == (honest.n_necessary, honest.n_sufficient)
    assert res.to_dict() == honest.to_dict()
    monkeypatch.undo()
    n_nec, n_suf = res.n_necessary, res.n_sufficient
    assert bc.rate("mean", "pure", n=n_suf, **kw).upper.value <= 3e-3 < bc.rate("mean", "pure", n=n_suf - 1,
                                                                                 **kw).upper.value
    assert bc.rate("mean", "pure", n=n_nec, **kw).lower.value <= 3e-3 < bc.rate("mean", "pure", n=n_nec - 1,
                                                                                **kw).lower.value


def test_answers_do_not_depend_on_earlier_plans():
    """A target's answer is the same planned alone in a fresh state, after other targets, or in a list."""
    kw = {"d": 3, "eps": 1.0}
    targets = [0.02, 0.013]
    alone = []
    for t in targets:
        planning.clear_memo()
        alone.append(bc.plan("gaussian", "local", target=t, **kw).to_dict())
    planning.clear_memo()
    after = [bc.plan("gaussian", "local", target=t, **kw).to_dict() for t in reversed(targets)][::-1]
    assert after == alone
    listed = bc.plan("gaussian", "local", target=targets, **kw)
    assert listed.n_sufficient == [a["n_sufficient"] for a in alone]
    assert listed.n_necessary == [a["n_necessary"] for a in alone]


def test_new_target_reuses_the_question_evaluations():
    """A second target of the same question evaluates few new points (the grid brackets are kept)."""
    planning.clear_memo()
    bc.plan("mean", "pure", target=0.01)
    ev = planning._Evaluator("mean", "pure", {}, "n")
    before = len(ev.fcache)
    bc.plan("mean", "pure", target=0.0113)
    assert len(ev.fcache) - before <= 8
