"""A plan at a new target: the necessary search run ahead of n sufficient's expensive values, and the console
script's lazy numpy parts (docs/engineering/speed.md, issue 29).

- The look-ahead (``planning._look_ahead``) gives the plan, every number included, of the same plan without it;
  where n sufficient turns out to differ from the guess it was run for, the lower side's evaluations are put back
  (the same evaluations kept as without the look-ahead) and the plan is again the same.
- In the console script's process, ``numpy.f2py`` and ``numpy.testing`` are bound but not run by importing
  scipy.special, and work when used.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import boundcalc as bc
from boundcalc.app import planning

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _plan(monkeypatch, look_ahead, *args, **kw):
    with monkeypatch.context() as m:
        m.setenv("BOUNDCALC_NO_CACHE", "1")  # computed, not read back
        if not look_ahead:
            m.setattr(planning, "_prefetching", lambda ev: False)
        planning.clear_memo()
        res = bc.plan(*args, **kw)
        lower = {name: {k for k in memo if k[0] == "lower"}
                 for memo_all in planning._MEMO.values()
                 for name, memo in (("float", memo_all["float"]), ("cert", memo_all["cert"]))}
        return res.to_dict(), res.to_text(), lower


def _counting(monkeypatch, name):
    calls = []
    orig = getattr(planning, name)
    monkeypatch.setattr(planning, name, lambda *a, **k: calls.append(a) or orig(*a, **k))
    return calls


@pytest.mark.parametrize("kw", [{"d": 10, "eps": 1.0, "target": 0.01}, {"d": 30, "eps": 2.0, "target": "0.05,0.04"}])
def test_look_ahead_gives_the_plan_without_it(monkeypatch, kw):
    plain = _plan(monkeypatch, False, "multinomial", "local", **kw)
    ahead = _counting(monkeypatch, "_look_ahead")
    searches = _counting(monkeypatch, "_necessary_search")
    fast = _plan(monkeypatch, True, "multinomial", "local", **kw)
    targets = len(str(kw["target"]).split(","))
    assert len(ahead) == targets  # taken for every target...
    assert len(searches) == targets  # ... and its search was the plan's: not run again
    assert fast[:2] == plain[:2]
    assert fast[2] == plain[2]  # the same lower-side evaluations kept


def test_look_ahead_for_another_n_is_undone(monkeypatch):
    """A look-ahead run for a guess that is not n sufficient (here: a fiftieth of it, below n necessary, so that its
    necessary search answers differently) is undone and the search run on the state it found: the same plan and the
    same lower-side evaluations as without a look-ahead."""
    kw = {"d": 10, "eps": 1.0, "target": "0.01,0.013"}
    plain = _plan(monkeypatch, False, "multinomial", "local", **kw)
    orig = planning._look_ahead
    guessed = []
    monkeypatch.setattr(planning, "_look_ahead",
                        lambda ev, t, n_lo, nq, ahead: guessed.append(nq) or orig(ev, t, n_lo, nq // 50, ahead))
    undone = _counting(monkeypatch, "_undo")
    searches = _counting(monkeypatch, "_necessary_search")
    wrong = _plan(monkeypatch, True, "multinomial", "local", **kw)
    assert wrong[:2] == plain[:2]
    assert wrong[2] == plain[2]
    assert len(guessed) == 2 and len(undone) == 2 and len(searches) == 4  # each done twice: ahead, then again


def test_undo_restores_the_lower_side_only():
    class Ev:
        pass

    ev = Ev()
    ev.fcache = {("lower", 5): "a", ("upper", 5): "u"}
    ev.cache, ev.errors = {("lower", 5): "c"}, {}
    ahead = {"saved": {name: {k: v for k, v in getattr(ev, name).items() if k[0] == "lower"}
                       for name in ("fcache", "cache", "errors")}}
    ev.fcache.update({("lower", 6): "b", ("upper", 7): "v"})
    ev.fcache[("lower", 5)] = "changed"
    ev.cache[("lower", 9)] = "d"
    ev.errors[("lower", 1)] = "rejected"
    planning._undo(ev, ahead)
    assert ev.fcache == {("lower", 5): "a", ("upper", 5): "u", ("upper", 7): "v"}
    assert ev.cache == {("lower", 5): "c"} and ev.errors == {}


_LAZY = """
import atexit, sys
def report():
    import numpy
    ran = sorted(m for m in ("numpy.f2py.crackfortran", "numpy.testing._private.utils") if m in sys.modules)
    bound = [type(numpy.f2py).__name__, type(numpy.testing).__name__]
    numpy.testing.assert_equal(numpy.f2py.__name__, "numpy.f2py")  # used: run now, the real modules
    print("SCIPY", "scipy.special" in sys.modules, "RAN", ran, "BOUND", bound, "AFTER", type(numpy.testing).__name__,
          file=sys.stderr)
atexit.register(report)
from boundcalc.cli import run
run()
"""


def test_the_console_script_binds_numpy_parts_lazily(tmp_path):
    env = dict(os.environ, BOUNDCALC_NO_CACHE="1", PYTHONPATH=str(ROOT), BOUNDCALC_CACHE_DIR=str(tmp_path))
    args = ["rate", "--problem", "mean", "--privacy", "pure", "--n", "100"]
    proc = subprocess.run([sys.executable, "-c", _LAZY, *args], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "SCIPY True RAN [] BOUND ['_LazyModule', '_LazyModule'] AFTER module" in proc.stderr, proc.stderr[-2000:]
    plain = subprocess.run([sys.executable, "-c", "from boundcalc.cli import main; import sys; sys.exit(main())",
                            *args], env=env, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0 and plain.stdout == proc.stdout  # the same answer as without the lazy parts
