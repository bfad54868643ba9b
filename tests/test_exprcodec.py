"""The eval-free expression format behind the sympy, generated-code and solver caches (issue 15).

What must hold: every bound expression boundcalc builds reads back *identical* (same tree, same symbol
assumptions, same Float bits); what the format cannot represent is refused, never approximated; reading
never evaluates or simplifies; and a process that reads its expressions, code and solutions from a warm cache
prints exactly what a process without any cache prints.
"""
from __future__ import annotations

import dataclasses
import fractions
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

from boundcalc.app import api
from boundcalc.cache import exprcodec
from boundcalc.core import solver
from boundcalc.core import symbolic as S

from cases import PAIRS  # tests/cases.py: every (problem, privacy) pair

ROOT = pathlib.Path(__file__).resolve().parents[1]


@dataclasses.dataclass
class _ForeignRecord:  # a dataclass outside boundcalc: the format does not rebuild it
    x: int


@pytest.mark.parametrize("problem,privacy", PAIRS)
def test_every_bound_expression_round_trips_identically(problem, privacy):
    entry, values = api.resolve(problem, privacy, {})
    v = entry.with_derived(values)
    seen = 0
    for b in entry.bounds(v):
        for expr, printed in ((b.expr, True), (b.closed_form(), False)):
            if expr is None:
                continue
            try:
                data = exprcodec.encode(expr)
            except exprcodec.Unencodable:  # e.g. a function class made at run time: computed, never cached
                continue
            back = exprcodec.decode(json.loads(json.dumps(data)))
            assert exprcodec.identical(back, expr), b.name
            assert sp.srepr(back) == sp.srepr(expr)
            assert str(back) == str(expr)
            # a bound prints its expression; the closed form (optimum substituted, left unevaluated) is only
            # lambdified, and LaTeX-printing it sorts every nested sum (18 s for the staircase bound)
            assert not printed or sp.latex(back) == sp.latex(expr)
            seen += 1
    assert seen > 0


def test_identical_is_strict():
    x = sp.Symbol("x", positive=True)
    y = sp.Symbol("x")  # same name, other assumptions
    assert not exprcodec.identical(x, y)
    assert not exprcodec.identical(sp.Float(0.5), sp.Rational(1, 2))
    assert not exprcodec.identical(sp.Float("0.1", 15), sp.Float("0.1", 30))
    a = sp.Add(x, 1, evaluate=False)
    b = sp.Add(1, x, evaluate=False)
    assert not exprcodec.identical(a, b)  # argument order matters (it is the order code is printed in)
    assert exprcodec.identical(sp.Min(x, 2), sp.Min(x, 2))


def test_decode_does_not_evaluate():
    x = sp.Symbol("x", positive=True)
    raw = sp.Add(x, x, evaluate=False)  # 2x once evaluated
    back = exprcodec.decode(exprcodec.encode(raw))
    assert isinstance(back, sp.Add) and back.args == (x, x)


def test_exact_numbers():
    for value in (sp.Float("0.1", 53), sp.Float(1e-300), sp.Rational(-7, 3), sp.Integer(10) ** 40, sp.pi, sp.oo,
                  sp.nan, sp.S.true, 0.1, 10**30, float("inf"), (1, 2.5), True, False, None, "none",
                  {"b": sp.Symbol("x"), "a": (1, sp.Rational(1, 3))}):
        data = json.loads(json.dumps(exprcodec.encode(value)))
        back = exprcodec.decode(data)
        if value is sp.nan:
            assert back is sp.nan
        else:
            assert exprcodec.identical(back, value), value


@pytest.mark.parametrize("obj", [sp.Dummy("z"), sp.Wild("w"), sp.Function("f_undefined")(sp.Symbol("x")),
                                 sp.Matrix([[1]]), object(), [1, object()], {1: 2},
                                 fractions.Fraction(1, 3), _ForeignRecord(1)])
def test_what_the_format_cannot_say_is_refused(obj):
    with pytest.raises(exprcodec.Unencodable):
        exprcodec.encode(obj)


def test_decode_looks_classes_up_only_in_sympy_and_boundcalc():
    with pytest.raises(exprcodec.Unencodable):
        exprcodec.decode(["A", "os:system", [["s", "echo hi"]]])
    with pytest.raises(exprcodec.Unencodable):
        exprcodec.decode(["A", "sympy:__class__", []])
    assert not exprcodec.roundtrips(sp.Symbol("x"), ["A", "subprocess:Popen", []])


def test_memoised_sympy_operation_returns_what_sympy_returns(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    x = sp.Symbol("x_memo_test", positive=True)
    expr = sp.Min(1, x / (1 + x), sp.sqrt(x))
    S.Min.cache_clear()
    first = S.Min(1, x / (1 + x), sp.sqrt(x))
    assert exprcodec.identical(first, expr)
    S.Min.cache_clear()  # memory gone: the next call reads what was kept (the store's copy)
    from boundcalc.cache import diskcache

    diskcache._flush()
    second = S.Min(1, x / (1 + x), sp.sqrt(x))
    assert exprcodec.identical(second, expr)
    # a Dummy argument is computed, not cached
    z = sp.Dummy("z", positive=True)
    assert S.Max(z, 2 * z) == sp.Max(z, 2 * z)


def test_solver_memo_gives_the_computed_solution(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    entry, values = api.resolve("mean", "pure", {"n": 1234, "eps": 0.7})
    v = entry.with_derived(values)
    for b in entry.bounds(v):
        if not b.holds(v):
            direct = solver.optimise(b, v)
            memo1 = solver.solve(b, v)
            memo2 = solver.solve(b, v)
            assert memo1.free == direct.free == memo2.free
            assert (memo1.value == memo2.value) or (np.isnan(memo1.value) and np.isnan(memo2.value))
    key1 = solver._solve_key(b, v)
    key2 = solver._solve_key(b, dict(v, n=1235))
    assert key1 is not None and key1[0] == key2[0] and key1[1] != key2[1]


_DUMP = r"""
import json, sys
import boundcalc as bc
from boundcalc.app import api, catalog
from boundcalc.core import bounds
from boundcalc.cache import diskcache
import sympy as sp
catalog.load_all()
out, failed = {}, []
for name, info in sorted(bounds.problems().items()):
    for priv in info.entries:
        r = api.rate(name, priv)
        if not any(b.value is not None for b in r.lowers + r.uppers):
            failed.append(f"{name}/{priv}: no bound has a value")
        for b in r.lowers + r.uppers:
            if not isinstance(b.derivation, str) or not b.derivation.strip():
                failed.append(f"{name}/{priv}: bound {b.name} has no derivation text")
        out[f"{name}/{priv}"] = [r.to_text(), r.explain(), r.to_latex(), json.dumps(r.to_dict(), sort_keys=True, default=str), sp.srepr(r.rate_expr),
                                 [sp.srepr(b.expr) for b in r.lowers + r.uppers]]
if sorted(out) != sorted(f"{i['problem']}/{i['privacy']}" for i in bc.list_problems()):
    failed.append("the pairs of bounds.problems() are not those of bc.list_problems()")
out["failed"] = failed
out["docstrings stripped"] = bc.rate.__doc__ is None
json.dump(out, sys.stdout, sort_keys=True)
"""


def test_a_warm_cache_prints_exactly_what_no_cache_prints(tmp_path):
    """Every (problem, privacy) at its defaults: the full `rate` text and every expression, computed (a) with
    no cache at all, (b) filling an empty cache, (c) reading that cache, are identical.

    Run (a) is also the check that boundcalc works under ``python -OO`` (docstrings stripped): no bound reads
    its derivation from a ``__doc__``. With the cache off every bound is built, not read back; every pair
    answers, has a bound with a value and a derivation text for every bound, and prints exactly what (b) and
    (c), run without -OO, print (so nothing printed comes from a docstring)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("BOUNDCALC_CACHE_DIR", None)
    outs = []
    for mode in ("none", "cold", "warm"):
        e = dict(env)
        flags = []
        if mode == "none":
            e["BOUNDCALC_NO_CACHE"] = "1"
            e["PYTHONDONTWRITEBYTECODE"] = "1"  # no .opt-2.pyc left in the tree
            flags = ["-OO"]
        else:
            e["BOUNDCALC_CACHE_DIR"] = str(tmp_path / "cache")
            e.pop("BOUNDCALC_NO_CACHE", None)
        res = subprocess.run([sys.executable, *flags, "-c", _DUMP], env=e, capture_output=True, text=True,
                             timeout=600, cwd=tmp_path)
        assert res.returncode == 0, (mode, res.stderr[-3000:])
        out = json.loads(res.stdout)
        assert out.pop("docstrings stripped") == (mode == "none"), mode
        failed = out.pop("failed")
        assert not failed, (mode, failed)
        outs.append(out)
    assert len(outs[0]) >= 26
    assert any(p.name.startswith("boundcalc.solver.") for p in (tmp_path / "cache" / "boundcalc").iterdir())
    assert any(p.name.startswith("boundcalc.sympy.") for p in (tmp_path / "cache" / "boundcalc").iterdir())
    assert any(p.name.startswith("boundcalc.generated-code") for p in (tmp_path / "cache" / "boundcalc").iterdir())
    assert any(p.name.startswith("boundcalc.results.") for p in (tmp_path / "cache" / "boundcalc").iterdir())  # whole results
    assert outs[1] == outs[2], "a warm cache prints other text than the cold run that filled it"
    assert outs[0] == outs[1], "python -OO with no cache prints other text than a run filling the cache"


def test_thunk_values_are_keyed_by_code_and_closure(tmp_path, monkeypatch):
    """A built expression is reused only for the same code run on the same closed-over values."""
    monkeypatch.setenv("BOUNDCALC_CACHE_DIR", str(tmp_path))
    calls = _CALLS
    calls.clear()

    def make(k, label):
        def build():
            _CALLS.append(k)  # a global: not part of the key (a closed-over list would make it unkeyable)
            return S.n ** k + sp.Symbol(label, positive=True)
        return build

    a1 = S.thunk_value(make(2, "u"))
    a2 = S.thunk_value(make(2, "u"))  # same code, same closure: not rebuilt
    b = S.thunk_value(make(3, "u"))  # another value closed over: rebuilt
    c = S.thunk_value(make(2, "v"))
    assert calls == [2, 3, 2]
    assert a1 == a2 == S.n ** 2 + sp.Symbol("u", positive=True)
    assert b == S.n ** 3 + sp.Symbol("u", positive=True) and c == S.n ** 2 + sp.Symbol("v", positive=True)
    obj = object()
    fn = lambda: (_CALLS.append("obj"), S.n)[1] if obj else None  # noqa: E731 - closes over an object()
    assert S.thunk_value(fn) == S.n and S.thunk_value(fn) == S.n
    assert calls[-2:] == ["obj", "obj"]  # nothing the format cannot say is used as a key: always built
    other = lambda: S.n ** 2 + sp.Symbol("u", positive=True)  # noqa: E731 - other code, same value
    assert symbolic_identity(other) != symbolic_identity(make(2, "u"))


_CALLS: list = []


def symbolic_identity(fn):
    return S._code_identity(fn.__code__)
