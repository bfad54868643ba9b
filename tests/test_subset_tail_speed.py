"""The faster paths of the projected subset-selection bounds give the floats of the plain ones (issue 29, item 5).

- ``_argmin_kappa`` (the slope bisection on Python floats) returns the float of its numpy form, on the (u, v) arrays
  that real certified searches pass it and on random and tied ones.
- ``prefetch`` (``rate`` starts the two searches on worker threads): the whole result of ``bc.rate`` is the same with
  and without it, at points where both routes are evaluated, and the threads were used.
- ``best`` waits for a prefetched search and returns the value the plain search gives.
Every expected value is computed here by the plain path, none is written down.
"""
from __future__ import annotations

import numpy as np
import pytest

import boundcalc as bc
from boundcalc.app import api
from boundcalc.mechanisms import subset_tail as ST


def _same_float(a, b) -> bool:
    return np.float64(a).tobytes() == np.float64(b).tobytes()


def test_argmin_kappa_same_float_as_numpy(monkeypatch):
    seen = []
    fast = ST._argmin_kappa

    def spy(u, v):
        seen.append((np.array(u, float).ravel().copy(), np.array(v, float).ravel().copy()))
        return fast(u, v)

    monkeypatch.setattr(ST, "_argmin_kappa", spy)
    for route in ("max", "threshold"):
        ST._search(route, 3000, 0.7, 20)
    monkeypatch.setattr(ST, "_argmin_kappa", fast)
    assert len(seen) > 20
    rng = np.random.default_rng(29)
    for _ in range(300):
        m = int(rng.integers(1, 60))
        u = rng.normal(size=m) * 10.0 ** rng.uniform(-12, 3)
        v = rng.uniform(-1, 1, size=m)
        if rng.random() < 0.3:  # ties: repeated values and slopes
            u[: m // 2] = u[0]
            v[: m // 3] = v[0]
        seen.append((u, v))
    seen.append((np.array([1.0, np.nan, 2.0]), np.array([-0.5, 0.0, 0.5])))  # NaN: the numpy form decides
    for u, v in seen:
        assert _same_float(ST._argmin_kappa(u, v), ST._argmin_kappa_numpy(u, v))


def test_pruned_bisection_same_float_as_numpy(monkeypatch):
    """The bisection that leaves out lines which cannot be the largest in its bracket, and stops at a fixed point,
    returns the float of the plain numpy bisection: nearly concurrent lines (the flat region of a supremum), exact
    ties, v = 0 lines (a zero slope), one and two lines, tiny and huge minimisers; and it did leave lines out."""
    sizes = []
    orig = ST._prune_pairs

    def spy(pairs, lo, hi):
        out = orig(pairs, lo, hi)
        sizes.append((len(pairs), len(out)))
        return out

    monkeypatch.setattr(ST, "_prune_pairs", spy)
    rng = np.random.default_rng(4)
    cases = []
    for _ in range(400):
        m = int(rng.integers(1, 70))
        v = np.sort(rng.uniform(-0.2, 1.0, size=m))
        kind = rng.integers(0, 5)
        k0 = 10.0 ** rng.uniform(-9, 2) * rng.choice([-1.0, 1.0])
        if kind == 0:  # nearly concurrent: u - k0 v equal to within a relative 1e-4 .. 1e-15
            u = 0.01 + k0 * v - np.abs(rng.normal(size=m)) * 10.0 ** rng.uniform(-17, -6)
        elif kind == 1:  # exactly concurrent in floats where they can be
            u = np.full(m, 0.3) + k0 * v
        elif kind == 2:  # a concave function sampled (a supremum's points)
            u = np.sqrt(np.abs(v) + 0.01) - k0 * v
        elif kind == 3:  # ties and repeated slopes
            u = rng.normal(size=m)
            u[: m // 2] = u[0]
            v[: m // 3] = v[0]
        else:
            u = rng.normal(size=m) * 10.0 ** rng.uniform(-12, 3)
        if rng.random() < 0.3:  # a v = 0 line (x = 1/d exactly)
            v[int(rng.integers(0, m))] = 0.0
        cases.append((u, v))
    cases += [(np.array([1.0]), np.array([0.5])), (np.array([1.0, 2.0]), np.array([-0.5, 0.5])),
              (np.array([0.0, 0.0]), np.array([0.0, 0.0])), (np.array([1e-300, 2e-300]), np.array([-1e-3, 1e-3])),
              (np.array([3.0, 1.0, 3.0]), np.array([-1e-9, 0.0, 1e-9]))]
    for u, v in cases:
        assert _same_float(ST._argmin_kappa(u, v), ST._argmin_kappa_numpy(u, v)), (u, v)
    assert sum(a - b for a, b in sizes) > 1000  # lines were left out


@pytest.mark.parametrize("route,loss", [("max", "l2sq"), ("threshold", "l2sq"), ("threshold", "l1")])
def test_prefetched_best_is_the_plain_search(monkeypatch, route, loss):
    monkeypatch.setattr(ST, "_cores", lambda: 2)
    n, eps, d = 2417, 0.83, 24
    plain = ST._search(route, n, eps, d, loss)
    args = (route, n, eps, d, loss)
    if ST.best.known(*args):
        pytest.skip("kept from an earlier run: nothing to prefetch")
    ST.prefetch(route, loss, n, eps, d)
    assert args in ST._PENDING  # the search was started on a worker thread
    got = ST.best(*args)
    assert args not in ST._PENDING
    assert all(_same_float(a, b) for a, b in zip(got, plain))


def test_rate_same_with_and_without_prefetch(monkeypatch):
    started = []
    orig = ST.prefetch

    def counting(*a):
        before = len(ST._PENDING)
        orig(*a)
        started.append(len(ST._PENDING) > before)

    monkeypatch.setattr(ST, "prefetch", counting)
    points = [dict(n=3011, eps=0.61, d=30), dict(n=477, eps=1.37, d=12)]
    for on in (True, False):
        monkeypatch.setattr(ST, "_cores", (lambda: 2) if on else (lambda: 1))
        out = []
        for kw in points:
            api.clear_rate_cache()
            ST.best.cache_clear()
            out.append(bc.rate("multinomial", "local", **kw).to_dict())
        if on:
            with_threads = out
            assert any(started), "the searches were started on worker threads"
        else:
            without = out
    assert with_threads == without
    names = {u["name"] for r in without for u in r["uppers"] if u.get("value") is not None}
    assert {"subset-projected", "subset-projected-threshold"} <= names  # both routes evaluated at these points


def test_plan_same_with_and_without_prefetch(monkeypatch):
    """``plan`` starts the projected bound's value at n_q - 1 while it evaluates n_q: the same plan, every number."""
    from boundcalc.app import planning

    started = []
    orig = ST.prefetch
    monkeypatch.setattr(ST, "prefetch", lambda *a: started.append(a) or orig(*a))
    out = {}
    for on in (True, False):
        monkeypatch.setattr(ST, "_cores", (lambda: 2) if on else (lambda: 1))
        planning.clear_memo()
        api.clear_rate_cache()
        ST.best.cache_clear()
        out[on] = bc.plan("multinomial", "local", d=30, eps=2.0, target="0.05,0.04").to_dict()
    planning.clear_memo()
    assert any(a[0] == "threshold" for a in started)
    assert out[True] == out[False]


# ------------------------------------------------------------------ the threshold route without its argmin
# threshold_route returns (main(0), 0) at once when every grid index i >= 1 fails the loop's own two first tests at
# best = main(0) (then it fails them at every later, smaller best, and the loop skips it whatever i_min is). The
# plain search (tests/_subset_tail_reference.py, every main computed, the argmin always taken) must give the same
# floats at points where this happens for most subset sizes and where it does not.

from _subset_tail_reference import float_bits as _bits, fresh_copy as _reference  # noqa: E402


def _count_shortcuts(monkeypatch):
    """Count the threshold routes that return without the argmin (the argmin is never called for them)."""
    calls = {"route": 0, "argmin": 0}
    route, argmin = ST.threshold_route, ST._lazy_argmin

    def counted_route(*a, **k):
        calls["route"] += 1
        return route(*a, **k)

    def counted_argmin(*a, **k):
        calls["argmin"] += 1
        return argmin(*a, **k)

    monkeypatch.setattr(ST, "threshold_route", counted_route)
    monkeypatch.setattr(ST, "_lazy_argmin", counted_argmin)
    return calls


@pytest.mark.parametrize("n,eps,d,loss", [(20000, 2.5, 60, "l2sq"), (2000, 2.0, 40, "l2sq"), (5000, 1.5, 30, "l1"),
                                          (200, 1.5, 60, "l1"), (3000, 1.0, 30, "l2sq")])
def test_threshold_route_without_argmin_is_the_plain_search(monkeypatch, n, eps, d, loss):
    want = _reference().best("threshold", n, eps, d, loss)
    calls = _count_shortcuts(monkeypatch)
    got = ST._search("threshold", n, eps, d, loss)
    assert _bits(got) == _bits(want), (got, want)
    if (n, eps, d) in ((20000, 2.5, 60), (2000, 2.0, 40)):
        # the maximum route's argmin calls count too; the shortcut took most threshold routes
        assert calls["route"] >= 3 and calls["argmin"] < calls["route"], calls


def test_threshold_shortcut_comparison_can_fail(monkeypatch):
    """A planted one-ulp change of main(0) (the value the shortcut returns) is seen by the comparison above."""
    n, eps, d = 2000, 2.0, 40
    want = _reference().best("threshold", n, eps, d, "l2sq")
    real = ST.threshold_main

    def planted(st, mu, loss, lower=False, abort=float("inf")):
        v = real(st, mu, loss, lower=lower, abort=abort)
        return float(np.nextafter(v, 1.0)) if (mu == 0 and not lower) else v

    monkeypatch.setattr(ST, "threshold_main", planted)
    assert _bits(ST._search("threshold", n, eps, d, "l2sq")) != _bits(want)
