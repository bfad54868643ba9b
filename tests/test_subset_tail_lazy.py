"""The max route's lazy refinement (``subset_tail._certified_sup_lazy``) gives the floats of the plain one (issue 29).

In the last refinement round the lazy form skips the new points and every child whose chord bound
(``_max_cell_bounds``) is below the largest cell bound evaluated; the initial points' values are kept per t. Every
expected value here is computed by the plain path (``LAZY_CELLS`` off), none is written down:

- certified suprema at random (n, ε, d, s, t), edge cases included (d = 2, n = 2 and 10^9, ε from 10^-3 to 800),
  bit for bit, with fewer evaluations where the refinement reaches its cell budget;
- the bounds are above the values the cells evaluate to, on random split cells;
- whole subset-size searches of every route (the search's choices and its float) at edge points;
- a planted error (bounds 1 % too low) changes a supremum: the comparison can fail.
"""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from boundcalc.mechanisms import subset_tail as ST


def _bits(x) -> str:
    return float(x).hex()


def _sup(st, t, lazy: bool, counter=None):
    """The max route's certified supremum at t, lazy or plain, on a fresh memo (nothing carried between forms);
    ``counter[lazy]`` counts the binomial upper tails computed."""
    st.memo.clear()
    cell = ST._max_cells(st, t)
    old, sf = ST.LAZY_CELLS, ST._BSF
    ST.LAZY_CELLS = lazy
    if counter is not None:
        def counting(k, n, p):
            counter[lazy] += np.size(k)
            return sf(k, n, p)

        ST._BSF = counting
    try:
        return ST.certified_sup(cell, st.d, scale=t / st.d)
    finally:
        ST.LAZY_CELLS, ST._BSF = old, sf


EDGE = [  # (n, eps, d, s, t / sigma)
    (2, 1.0, 2, 1, 1.0), (10, 0.001, 2, 1, 3.0), (10**9, 0.3, 2, 1, 2.0), (50, 800.0, 3, 1, 1.0),
    (10**7, 0.1, 1000, 480, 1.5), (120, 5.0, 1000, 7, 2.0), (3000, 0.05, 10, 5, 6.0), (10**6, 12.0, 40, 1, 0.5),
    (22973, 0.4415, 100, 43, 4.8), (1210, 0.5214, 1000, 373, 1.5),
]


def _random_cases(k, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(k):
        d = rng.choice([2, 3, 5, 10, 30, 100, 300, 1000])
        out.append((int(10 ** rng.uniform(0.4, 7.5)), 10 ** rng.uniform(-1.5, 1.0), d, rng.randint(1, d - 1),
                    rng.choice([0.5, 1.0, 2.0, 4.0, rng.uniform(0.5, 6.0)])))
    return out


def test_lazy_supremum_same_floats_as_plain():
    counter = {True: 0, False: 0}
    fewer = 0
    for n, eps, d, s, f in EDGE + _random_cases(60, 29):
        st = ST._Setup(max(n, 2), eps, d, s)
        t = st.sigma * f
        before = dict(counter)
        plain = _sup(st, t, False, counter)
        lazy = _sup(st, t, True, counter)
        assert _bits(lazy[0]) == _bits(plain[0]) and _bits(lazy[1]) == _bits(plain[1]), (n, eps, d, s, f, plain, lazy)
        fewer += counter[True] - before[True] < counter[False] - before[False]
    assert fewer >= 10  # the lazy last round ran (the budget is reached at many of these points)
    assert counter[True] < 0.8 * counter[False]


def _bounds_hold(bound_fn) -> int:
    """How many children of random split cells ``bound_fn`` bounds, asserting each bound is at least the value."""
    rng = np.random.default_rng(7)
    checked = 0
    for n, eps, d, s, f in EDGE + _random_cases(25, 30):
        st = ST._Setup(max(n, 2), eps, d, s)
        t = st.sigma * f
        cell = ST._max_cells(st, t)
        xs = np.sort(rng.uniform(0, 1, 40))
        ba, bb = xs[:-1], xs[1:]
        if rng.random() < 0.3:  # narrow cells, as deep refinement rounds make them
            bb = ba + (bb - ba) * 4.0 ** -rng.integers(1, 10)
        _, _, a_cell, b_cell = cell.evaluate(ba, bb)
        _, _, a_left, _ = cell.evaluate(ba, ba)
        _, _, a_right, _ = cell.evaluate(bb, bb)
        frac = np.arange(ST.REFINE_SPLIT + 1) / ST.REFINE_SPLIT
        sub = ba[:, None] + (bb - ba)[:, None] * frac[None, :]
        up_a, up_b = bound_fn(st, t, ba, bb, a_cell, a_left, a_right, b_cell, sub)
        ga, gb, _, _ = cell.evaluate(sub[:, :-1].ravel(), sub[:, 1:].ravel())
        assert np.all(up_a.ravel() >= ga) and np.all(up_b.ravel() >= gb), (n, eps, d, s, f)
        checked += ga.size
    return checked


def _low(st, t, *args):  # a planted error: bounds 10 % too low
    a, b = ST._max_cell_bounds(st, t, *args)
    return a - 0.1 * np.abs(a), b - 0.1 * np.abs(b)


def test_max_cell_bounds_above_the_evaluated_values():
    assert _bounds_hold(ST._max_cell_bounds) > 1000
    with pytest.raises(AssertionError):
        _bounds_hold(_low)


@pytest.mark.parametrize("n,eps,d", [(40, 0.7, 2), (10**5, 0.1, 10), (300, 4.0, 100), (5000, 0.02, 30)])
def test_searches_same_as_plain(n, eps, d):
    """Whole subset-size searches of every route (the threshold route shares its initial points too)."""
    old = ST.LAZY_CELLS
    for route, loss in (("max", "l2sq"), ("threshold", "l2sq"), ("threshold", "l1")):
        try:
            ST.LAZY_CELLS = False
            plain = ST._search(route, n, eps, d, loss)
            ST.LAZY_CELLS = True
            lazy = ST._search(route, n, eps, d, loss)
        finally:
            ST.LAZY_CELLS = old
        assert tuple(map(_bits, lazy)) == tuple(map(_bits, plain)), (route, loss)


def test_planted_low_bound_is_caught(monkeypatch):
    """With bounds 10 % too low the lazy round skips a child that is the top: the comparison above can fail."""
    monkeypatch.setattr(ST, "_max_cell_bounds", lambda st, t, *args, real=ST._max_cell_bounds: tuple(
        v - 0.1 * np.abs(v) for v in real(st, t, *args)))
    moved = 0
    for n, eps, d, s, f in EDGE:
        st = ST._Setup(n, eps, d, s)
        t = st.sigma * f
        moved += _bits(_sup(st, t, True)[0]) != _bits(_sup(st, t, False)[0])
    assert moved >= 1


def test_golden_with_losing_points_cut_short_is_the_plain_golden():
    """``_golden``'s ``losing`` (inf for a point above the value it is compared with) makes the same choices."""
    rng = np.random.default_rng(31)
    cut = 0
    for _ in range(300):
        coef = rng.normal(size=4)
        fun = lambda x, c=coef: float(np.round(c[0] * (x - 0.4) ** 2 + 1e-3 * np.sin(40 * c[1] * x), 4))  # ties
        calls = []

        def losing(x, other, fun=fun):
            v = fun(x)
            calls.append(v > other)
            return math.inf if v > other else v

        low = (lambda x, fun=fun: fun(x) - abs(rng.normal()) * 1e-3) if rng.random() < 0.5 else None
        state = rng.bit_generator.state
        plain = ST._golden(fun, 0.0, 1.0, iters=8, lower=low)
        rng.bit_generator.state = state
        fast = ST._golden(fun, 0.0, 1.0, iters=8, lower=low, losing=losing)
        assert plain == fast
        cut += sum(calls)
    assert cut > 100


def test_lazy_argmin_with_losing_is_numpys_argmin():
    rng = np.random.default_rng(32)
    cut = 0
    for _ in range(500):
        m = int(rng.integers(1, 9))
        vals = rng.integers(0, 5, size=m).astype(float)  # many ties
        lows = vals - rng.uniform(0.0, 3.0, size=m)
        shown = []

        def losing(j, b):
            shown.append(vals[j] > b)
            return math.inf if vals[j] > b else vals[j]

        assert ST._lazy_argmin(list(lows), lambda j: vals[j], losing) == int(np.argmin(vals))
        cut += sum(shown)
    assert cut > 50
