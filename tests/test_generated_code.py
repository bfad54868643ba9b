"""Generated numeric code (issue 15): sharing repeated subexpressions and reading code back from the cache must
give the very function sympy's lambdify prints, bit for bit."""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import sympy as sp

from boundcalc.app import api
from boundcalc.core import symbolic as S

from cases import PAIRS  # tests/cases.py: every (problem, privacy) pair


def _plain_lambdify(args, expr):
    """lambdify exactly as boundcalc calls it, without the rewrite."""
    from sympy.printing.numpy import NumPyPrinter

    printer = NumPyPrinter({"fully_qualified_modules": True, "inline": True, "allow_unknown_functions": True,
                            "user_functions": {k: k for k in S.NUMPY_IMPL}})
    return sp.lambdify(args, expr, modules=[S.NUMPY_IMPL, {"numpy": np, "functools": functools, "math": math}],
                       printer=printer)


def _sample(args, size, rng):
    """Random values over wide ranges, by symbol (integers where the bound's symbol is an integer)."""
    out = []
    for a in args:
        x = np.exp(rng.uniform(-6, 12, size))
        if a.name in ("epsilon", "alpha", "delta", "p", "p_mix", "p_erase", "alpha_TV", "sigma_shrink", "eta"):
            x = np.exp(rng.uniform(-12, 0, size)) if a.name != "epsilon" else np.exp(rng.uniform(-5, 3.5, size))
        if a.is_integer or a.name in ("n", "d", "m", "k", "s"):
            x = np.round(x) + 1
        out.append(x)
    return out


#: special functions whose numeric value costs a tuning per distinct argument
SLOW_FUNCTIONS = {"BallMinimiserFactor"}


@pytest.mark.parametrize("problem,privacy", PAIRS)
def test_shared_subexpressions_give_identical_bits(problem, privacy):
    """Every bound and closed form of every entry: the rewritten code and lambdify's own agree bit for bit
    (NaN where NaN) at 400 random points, including overflow and invalid regions."""
    entry, values = api.resolve(problem, privacy, {})
    v = entry.with_derived(values)
    rng = np.random.default_rng(abs(hash((problem, privacy))) % 2**32)
    rewritten = 0
    for b in entry.bounds(v):
        for expr in (b.expr, b.closed_form()):
            if expr is None:
                continue
            args = sorted(expr.free_symbols, key=lambda x: x.name)
            plain = _plain_lambdify(args, expr)
            shared = S._with_shared_subexpressions(plain)
            if shared is plain:
                continue
            rewritten += 1
            # a function that tunes a table per distinct argument (BallMinimiserFactor: ~0.5 s a point) gets a
            # few points, the rest 400
            slow = any(type(f).__name__ in SLOW_FUNCTIONS for f in expr.atoms(sp.Function))
            xs = _sample(args, 6 if slow else 400, rng)
            with np.errstate(all="ignore"):
                try:
                    want = np.asarray(plain(*xs), float)
                except Exception as exc:  # noqa: BLE001 - then the rewrite must fail alike
                    with pytest.raises(type(exc)):
                        shared(*xs)
                    continue
                got = np.asarray(shared(*xs), float)
            want, got = np.broadcast_arrays(want, got)
            same = (want.view(np.int64) == got.view(np.int64)) | (np.isnan(want) & np.isnan(got))
            assert same.all(), (b.name, want[~same][:3], got[~same][:3])


def test_the_density_histogram_closed_form_is_rewritten_and_shorter():
    """The case that motivated the rewrite: its tuned bin count is printed 47 times."""
    entry, values = api.resolve("density", "local", {})
    v = entry.with_derived(values)
    (b,) = [b for b in entry.bounds(v) if b.name == "hist-subset"]
    cf = b.closed_form()
    args = sorted(cf.free_symbols, key=lambda x: x.name)
    plain = _plain_lambdify(args, cf)
    shared = S._with_shared_subexpressions(plain)
    assert shared is not plain
    import dis

    ops = lambda f: sum(1 for i in dis.get_instructions(f) if i.opname in ("BINARY_OP", "CALL", "PRECALL"))  # noqa: E731
    assert ops(shared) < ops(plain) / 3


def test_conditional_code_is_left_as_printed():
    src = "def _lambdifygenerated(x):\n    return (numpy.exp(x) + 1) if x > 0 else (numpy.exp(x) + 1) * 2" + " " * 400 + "\n"
    import linecache

    ns = {"numpy": np}
    exec(compile(src, "<cond-test>", "exec"), ns)
    linecache.cache["<cond-test>"] = (len(src), None, src.splitlines(True), "<cond-test>")
    fn = ns["_lambdifygenerated"]
    assert S._with_shared_subexpressions(fn) is fn


def test_generated_code_from_the_cache_is_the_same_function():
    n, e = S.n, S.eps
    expr = sp.Min(1, S.expm1(e) ** 2 / n) + S.BinomSF(3, n, e / (1 + e))
    fresh = S._fresh_numpy_lambdify((e, n), expr)
    source = S._reusable_source(fresh)
    assert source is not None
    again = S._compile_generated(source)
    rng = np.random.default_rng(1)
    ee, nn = rng.uniform(0.01, 5, 500), np.round(rng.uniform(5, 1e4, 500))
    assert np.array_equal(fresh(ee, nn), again(ee, nn), equal_nan=True)


def test_generated_code_with_a_foreign_global_is_not_kept():
    from sympy.utilities.lambdify import implemented_function

    f = implemented_function("f_private_impl", lambda t: t + 1)
    fn = sp.lambdify([S.n], f(S.n) + 1)
    assert S._reusable_source(fn) is None
