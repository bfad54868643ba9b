"""The faster planning paths give the answers and floats of the plain ones (issue 29, item 5).

- ``plan`` with the cheap values of the projected subset-selection bounds (``value_above``: the search finds their
  crossing first) and their cheap test (``value_exceeds``: a bound shown above the best of the others is skipped)
  gives the same plan, every number included, as with both switched off.
- ``subset_tail.exceeds`` is True only where the searched bound exceeds the cutoff, and every subset size the search
  evaluates is among ``_reachable_sizes``.
- Lemma C's g and Lemma C''s g* (boundcalc.methods.ldp_mutual_info) give the floats of the code they replace, kept
  here as the reference.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import boundcalc as bc
from boundcalc.app import planning
from boundcalc.mechanisms import subset_tail as ST
from boundcalc.methods import ldp_mutual_info as MI


def _plain_plan(monkeypatch, *args, **kw):
    with monkeypatch.context() as m:
        m.setattr(planning, "_value_test", lambda b: None)
        m.setattr(planning, "_above_test", lambda b: None)
        planning.clear_memo()
        return bc.plan(*args, **kw).to_dict()


@pytest.mark.parametrize("kw", [{"d": 30, "target": "0.05,0.04", "eps": 2.0}])
def test_plan_same_with_and_without_the_fast_paths(monkeypatch, kw):
    calls = {"above": 0, "exceeds": 0}
    above, exceeds = ST.quick_upper, ST.exceeds
    monkeypatch.setattr(ST, "quick_upper", lambda *a: calls.__setitem__("above", calls["above"] + 1) or above(*a))
    monkeypatch.setattr(ST, "exceeds", lambda *a: calls.__setitem__("exceeds", calls["exceeds"] + 1) or exceeds(*a))
    planning.clear_memo()
    fast = bc.plan("multinomial", "local", **kw).to_dict()
    assert calls["above"] > 0 and calls["exceeds"] > 0  # the fast paths were taken
    assert fast == _plain_plan(monkeypatch, "multinomial", "local", **kw)


def test_unskip_when_certification_moves_the_best(monkeypatch):
    """A skipped bound is evaluated after all where the certified best is not below its cutoff: here every
    certification fails, so no bound is left and the skipped ones must have been evaluated."""
    from boundcalc.app import api

    planning.clear_memo()
    ev = planning._Evaluator("multinomial", "local", {"d": 20, "eps": 1.0}, "n")
    v, pairs, skipped = ev._evaluated("upper", 3000)
    assert skipped, "the max route is skipped at this point"
    orig = api.evaluate_bound

    def failing(b, values, certify=True, solution=None):
        bv = orig(b, values, certify=certify, solution=solution)
        if certify:
            bv.certified = False
        return bv

    monkeypatch.setattr(api, "evaluate_bound", failing)
    assert ev.best("upper", 3000) is None
    v, full, left = ev.fcache[("upper", 3000)]
    assert left == [] and {b.name for b, _ in skipped} <= {b.name for b, _ in full}
    assert len(full) == len(pairs) + len(skipped)
    planning.clear_memo()


@pytest.mark.parametrize("n,eps,d", [(3000, 1.0, 30), (800, 0.5, 20), (20000, 2.0, 60)])
def test_exceeds_only_when_the_bound_exceeds(monkeypatch, n, eps, d):
    tried = []
    at = ST._Setup

    class Spy(at):
        def __init__(self, n_, eps_, d_, s):
            tried.append(s)
            super().__init__(n_, eps_, d_, s)

    monkeypatch.setattr(ST, "_Setup", Spy)
    value = ST.best.__wrapped__("max", n, eps, d)[0]
    assert set(tried) <= set(ST._reachable_sizes(d, eps))
    monkeypatch.setattr(ST, "_Setup", at)
    shown = [ST.exceeds("max", "l2sq", n, eps, d, value * f) for f in (0.2, 0.5, 0.9, 0.999, 1.0, 1.5)]
    assert shown[0]  # far below: shown
    assert not shown[4] and not shown[5]  # never at or above the value
    assert not ST.exceeds("threshold", "l2sq", n, eps, d, 0.0)  # the threshold route is not tested


# ------------------------------------------------------------------ Lemma C and C' against the code they replace

def _g_reference(p, eps):
    from scipy import optimize

    lo = math.exp(-eps)
    grid = np.linspace(lo, 1.0, 257)[:-1]
    vals = MI._G(grid, eps, p)
    i = int(np.argmax(vals))
    a0, a1 = grid[max(i - 1, 0)], (grid[i + 1] if i + 1 < len(grid) else 1.0)
    res = optimize.minimize_scalar(lambda a: -float(MI._G(a, eps, p)), bounds=(a0, a1), method="bounded",
                                   options={"xatol": 1e-13})
    best = max(float(vals.max()), -res.fun)
    return best * (1 + 1e-9) + 1e-300


def _sharp_reference(p, eps, nb=200, na=100, top=4, sub=16):
    E = math.exp(eps)
    half = nb // 2
    edges = np.exp(np.concatenate([np.linspace(-eps, 0.0, half + 1), np.linspace(0.0, eps, half + 1)[1:]]))
    edges[0], edges[half], edges[-1] = np.nextafter(math.exp(-eps), 0.0), 1.0, np.nextafter(E, math.inf)
    blo, bhi = edges[:-1], edges[1:]
    alo = np.nextafter(np.nextafter(np.maximum(math.exp(-eps), blo / E), 0.0), 0.0)
    ahi = np.minimum(1.0, bhi)
    u = np.linspace(0.0, 1.0, na + 1)
    la, lh = np.log(alo)[:, None], np.log(ahi)[:, None]
    ag = np.exp(la + (lh - la) * u[None, :])
    ag[:, 0], ag[:, -1] = alo, ahi
    al, ah = ag[:, :-1], ag[:, 1:]
    Ua = MI._cell_upper(p, eps, blo[:, None], al, ah)
    order = np.argsort(Ua, axis=1)
    rows = np.arange(nb)[:, None]
    rest = Ua[rows, order[:, :-top]].max(axis=1)
    ti = order[:, -top:]
    l0, l1 = np.log(al[rows, ti]), np.log(ah[rows, ti])
    v = np.linspace(0.0, 1.0, sub + 1)
    fine = np.exp(l0[..., None] + (l1 - l0)[..., None] * v)
    fine[..., 0], fine[..., -1] = al[rows, ti], ah[rows, ti]
    Uf = MI._cell_upper(p, eps, blo[:, None, None], fine[..., :-1], fine[..., 1:]).max(axis=(1, 2))
    U = np.maximum(np.maximum(rest, Uf), 0.0)
    Ul, Ur = U[:half], U[half:]
    diff = Ur[None, :] - Ul[:, None]
    thmax = (1 - blo[:half, None]) / (blo[None, half:] - blo[:half, None])
    thmin = (1 - bhi[:half, None]) / (bhi[None, half:] - bhi[:half, None])
    return float(np.max(Ul[:, None] + np.where(diff > 0, thmax, thmin) * diff))


def test_erased_information_same_floats_as_before():
    rng = np.random.default_rng(29)
    for i in range(40):
        eps = float(10 ** rng.uniform(-3, 1.47))
        p = 1.0 if i % 10 == 0 else float(math.exp(rng.uniform(-21, 0)))
        # numpy's log1p and math.log1p differ by one unit in the last place at some arguments (e.g. at
        # -0.029018929271759697, reached by the search at p = 0.000435, ε = 7.07 once a e^ε - 1 was computed in
        # its stable form), so the scalar search may end one step apart: the same value to 1e-14
        assert MI._erased_info_exact.__wrapped__(p, eps) == pytest.approx(_g_reference(p, eps), rel=1e-14), (p, eps)
        assert MI.erased_info_sharp_certified(p, eps).hex() == _sharp_reference(p, eps).hex(), (p, eps)
    for x in rng.uniform(-0.999, 20, 300).tolist() + rng.uniform(-0.02, 0.02, 300).tolist() + [0.0, 1e-300]:
        # numpy 2.4's log1p and math.log1p differ by one unit in the last place at some x (e.g. 4.650517230840851),
        # and (1+x) log1p(x) - x amplifies it by up to 1/x near |x| = 1e-2 (x = 0.014046124360843477: 1.8e-14)
        assert MI._phi_tilde_scalar(x) == pytest.approx(float(MI._phi_tilde(np.array([x]))[0]), rel=1e-13, abs=1e-300), x


@pytest.mark.parametrize("kw", [{"n": 20000, "eps": 0.7}, {"n": 50, "eps": 2.5, "k": 4}, {"n": 3000, "eps": 0.3, "d": 5}])
def test_ceiling_keeps_the_optimum(kw):
    """The solver's search with the erased-vertex bound's ceiling (points that cannot be the best are skipped) finds
    the optimum, value and free parameter of the search without it, bit for bit."""
    from boundcalc.app import api
    from boundcalc.core import solver

    entry, values = api.resolve("mean", "local", dict(kw))
    v = entry.with_derived(values)
    b = next(b for b in entry.bounds(v) if b.name == "bayes-vertices")
    assert "ceiling" in b.extra
    with_cap = solver.optimise(b, v)
    cap = b.extra.pop("ceiling")
    try:
        plain = solver.optimise(b, v)
    finally:
        b.extra["ceiling"] = cap
    assert with_cap.value.hex() == plain.value.hex() and with_cap.free == plain.free
