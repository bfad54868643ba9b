"""The memo of ``bc.rate``: a cached result is the fresh computation, callers cannot poison it, and
different arguments are different entries."""
import math

import pytest

import boundcalc as bc
from boundcalc.app import api
from boundcalc.core import symbolic

PAIRS = [("mean", "approx", {"k": 4, "n": 3000}), ("support", "pure", {}), ("multinomial", "local", {"d": 7}),
         ("point", "pure", {"n": 500})]


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _flat(obj, path="", out=None):
    out = {} if out is None else out
    if isinstance(obj, dict):
        for k in obj:
            _flat(obj[k], f"{path}/{k}", out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _flat(v, f"{path}[{i}]", out)
    else:
        out[path] = obj
    return out


def _assert_equal(r1, r2):
    a, b = _flat(r1.to_dict()), _flat(r2.to_dict())
    assert set(a) == set(b)
    bad = [k for k in a if not _same(a[k], b[k])]
    assert not bad, bad[:5]
    assert r1.to_text() == r2.to_text()
    assert r1.rate_expr == r2.rate_expr


@pytest.mark.parametrize("problem,privacy,kw", PAIRS)
def test_cached_equals_fresh(problem, privacy, kw, monkeypatch):
    api.clear_rate_cache()
    first = bc.rate(problem, privacy, **kw)
    cached = bc.rate(problem, privacy, **kw)
    # a fresh computation: neither the kept results (memory or disk) nor the generated numeric functions
    # are reused
    monkeypatch.setenv("BOUNDCALC_NO_CACHE", "1")
    api.clear_rate_cache()
    symbolic._LAMBDIFIED.clear()
    fresh = bc.rate(problem, privacy, **kw)
    monkeypatch.delenv("BOUNDCALC_NO_CACHE")
    api.clear_rate_cache()
    _assert_equal(cached, fresh)
    _assert_equal(first, fresh)
    assert cached is not first


def test_cache_hit_is_used():
    api.clear_rate_cache()
    bc.rate("mean", "pure", n=1234)
    assert len(api._RATE_MEMO) == 1
    bc.rate("mean", "pure", n=1234)  # same normalised arguments: no new entry
    bc.rate("mean", "pure", n="1234")  # parsed to the same value
    assert len(api._RATE_MEMO) == 1


def test_mutation_does_not_leak():
    api.clear_rate_cache()
    r1 = bc.rate("mean", "approx", k=4, n=2000)
    before = _flat(r1.to_dict())
    upper_value = r1.upper.value
    # mutate every mutable part a caller can reach
    r1.params["n"] = 1
    r1.notes.append("poison")
    r1.terms.clear()
    for b in r1.lowers + r1.uppers:
        b.value = -1.0
        b.free_parameters["x"] = 99
        b.conditions.append("poison")
    r1.lowers.clear()
    r1.uppers.reverse()
    r2 = bc.rate("mean", "approx", k=4, n=2000)
    after = _flat(r2.to_dict())
    assert set(after) == set(before)
    assert all(_same(after[k], before[k]) for k in before)
    assert r2.upper.value == upper_value
    assert "poison" not in r2.notes


def test_different_args_differ():
    api.clear_rate_cache()
    a = bc.rate("mean", "pure", n=1000)
    b = bc.rate("mean", "pure", n=100000)
    c = bc.rate("mean", "pure", n=1000, eps=0.1)
    assert a.upper.value > b.upper.value  # more data, smaller risk
    assert c.upper.value > a.upper.value  # more privacy, larger risk
    assert a.lower.value != b.lower.value
    assert len(api._RATE_MEMO) == 3


def test_memo_is_bounded():
    api.clear_rate_cache()
    for i in range(api.RATE_MEMO_SIZE + 5):
        bc.rate("support", "none", n=100 + i)
    assert len(api._RATE_MEMO) == api.RATE_MEMO_SIZE
