"""Certified in floating point (boundcalc.core.certify): at extreme parameters, every listed certified value is on the
safe side of its own formula evaluated independently in high precision (a lower value never above it, an upper
value never below it).

The independent evaluation is sympy's own ``evalf`` at 50 digits of the expression with the parameters and the
reported free parameters substituted (a different code path from the lambdified mpmath code that boundcalc
uses), or, where the expression holds a function sympy cannot evaluate, the lambdified mpmath code at 80 digits.

The suite draws a fixed set of examples (seconds); ``BOUNDCALC_HYPOTHESIS=explore`` (with
``BOUNDCALC_FUZZ_EXAMPLES``, default 300 in explore mode) searches new ones.
"""
from __future__ import annotations

import math
import os

import mpmath
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import boundcalc as bc
from boundcalc.app import api
from boundcalc.core import certify
from boundcalc.core.bounds import _symbol_values
from boundcalc.core.errors import InputError

EXPLORE = os.environ.get("BOUNDCALC_HYPOTHESIS") == "explore"
EXAMPLES = int(os.environ.get("BOUNDCALC_FUZZ_EXAMPLES", "300" if EXPLORE else "12"))

PAIRS = [(e["problem"], e["privacy"]) for e in bc.list_problems()]

#: extreme values of the shared parameters (the problem's own range check refuses what it does not support)
NS = [1, 2, 10, 10**3, 10**6, 10**9, 10**12]
EPS = [1e-8, 1e-6, 1e-3, 0.1, 1.0, 5.0, 20.0, 50.0]
DELTAS = [1e-300, 1e-12, 1e-6, 0.01, 0.1, 0.5]
DS = [1, 2, 10, 1000, 10**5]


def _params(problem, privacy, n, eps, delta, d, extra):
    spec = {e["problem"]: e["params"] for e in bc.list_problems() if e["privacy"] == privacy}[problem]
    p = {"n": n}
    if "eps" in spec:
        p["eps"] = min(eps, 0.99) if privacy == "tv" else eps
    if "delta" in spec:
        p["delta"] = delta
    if "d" in spec:
        p["d"] = d
    if "k" in spec:
        p["k"] = extra
    return p


def independent_value(b, values):
    """The bound's expression at the reported free parameters, evaluated by sympy (50 digits) or, for a
    function sympy cannot evaluate, by the lambdified mpmath code at 80 digits."""
    entry_point = _symbol_values(values, b.free_parameters)
    subs = {}
    for sym in b.expr.free_symbols:
        v = entry_point[sym.name]
        subs[sym] = sp.Float(float(v), 60)  # exact: every float64 (and int below 2**53) is a 60-digit Float
    try:
        val = sp.N(b.expr, 50, subs=subs)  # numeric evaluation, no symbolic substitution
        if val.is_number and val.is_real and val.is_finite and not val.has(sp.Function):
            return mpmath.mpf(str(val))
    except Exception:  # noqa: BLE001 - sympy's evalf gives up in several ways (PrecisionExhausted at floor(10))
        pass
    # functions of this package: its own lambdified mpmath code, at a precision boundcalc does not use
    from boundcalc.core.bounds import Bound

    bound = Bound(side=b.side, name=b.name, label=b.label, expr=b.expr, source="", derivation="")
    return certify.high_precision_value(bound, {k: entry_point[k] for k in (s.name for s in b.expr.free_symbols)},
                                        80)


def _check_result(res, values):
    bad = []
    for b in res.lowers + res.uppers:
        if not b.certified or b.value is None:
            continue
        if b.side == "lower" and b.value <= 0:
            continue  # a lower bound <= 0 is vacuously true (listed as vacuous, never used)
        ref = independent_value(b, values)
        if ref is None:
            bad.append(f"{b.side} {b.name}: certified value {b.value!r} has no high-precision value")
            continue
        with mpmath.workdps(60):
            v = mpmath.mpf(b.value)
            if b.side == "lower" and v > ref:
                bad.append(f"lower {b.name}: {b.value!r} above its 50-digit value {mpmath.nstr(ref, 20)}")
            if b.side == "upper" and v < ref:
                bad.append(f"upper {b.name}: {b.value!r} below its 50-digit value {mpmath.nstr(ref, 20)}")
    return bad


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(pair=st.sampled_from(PAIRS), n=st.sampled_from(NS), eps=st.sampled_from(EPS),
       delta=st.sampled_from(DELTAS), d=st.sampled_from(DS), k=st.sampled_from(["2", "4", "inf"]))
def test_certified_values_are_on_the_safe_side(pair, n, eps, delta, d, k):
    problem, privacy = pair
    params = _params(problem, privacy, n, eps, delta, d, k)
    try:
        res = bc.rate(problem, privacy=privacy, **params)
    except InputError:
        return  # outside the problem's domain: refused with a message, which is fine
    entry, values = api.resolve(problem, privacy, params)
    assert _check_result(res, entry.with_derived(values)) == []


@pytest.mark.parametrize("eps", [1e-6, 1e-8])
def test_group_coupling_regime_delta_much_larger_than_eps(eps):
    """The (ε, δ) mean at δ ≫ ε, where the truncated group coupling loses float64 accuracy (issue 22's case)."""
    params = dict(n=10**9, d=2, k="inf", eps=eps, delta=0.1)
    res = bc.rate("mean", privacy="approx", **params)
    entry, values = api.resolve("mean", "approx", params)
    assert _check_result(res, entry.with_derived(values)) == []


def test_every_certified_value_says_how_it_was_verified():
    res = bc.rate("mean", privacy="approx", k="4")
    for b in res.lowers + res.uppers:
        if b.certified and b.value is not None:
            assert b.verified["method"] == "mpmath" and b.verified["digits"] >= 30
            d = b.to_dict()
            assert d["verified"]["rounded"] == ("down" if b.side == "lower" else "up")


def test_rounding_is_outward():
    with mpmath.workdps(50):
        x = mpmath.mpf(1) / 3
        lo, hi = certify.round_down(x), certify.round_up(x)
        assert mpmath.mpf(lo) <= x <= mpmath.mpf(hi)
        assert math.nextafter(lo, 1) == hi
        assert certify.round_down(mpmath.mpf(0.5)) == 0.5 == certify.round_up(mpmath.mpf(0.5))


def test_a_float_value_that_lost_its_digits_is_not_certified():
    """A lower bound whose float64 code cancels catastrophically: (1 + 1/n) - 1 at n = 1e15 is 1.11e-15 in
    float64, 11% above its true value 1e-15 (the unsafe side). It is listed as not certified, with the reason."""
    from boundcalc.core.bounds import Bound

    x = sp.Symbol("n", positive=True)
    b = Bound(side="lower", name="cancels", label="test", expr=sp.Add(sp.Add(1, 1 / x, evaluate=False), -1, evaluate=False), source="", derivation="")
    values = {"n": 1e15}
    fv = float(b.evaluate(values))
    assert fv > 1.1e-15  # the float64 value is on the unsafe side
    check = certify.verify(b, values, {}, fv)
    assert not check.certified and "disagree" in check.reason
    assert check.info["high_precision_value"].startswith("1.0e-15")
    # at a well-conditioned point the same bound is certified, rounded down
    ok = certify.verify(b, {"n": 4.0}, {}, float(b.evaluate({"n": 4.0})))
    assert ok.certified and ok.value <= 0.25


def test_binomial_tail_in_high_precision_where_mpmaths_betainc_gives_up():
    """mpmath's betainc cancels for large parameters (a = 5556, b = 272245 raises ValueError); the positive series
    used instead agrees with betainc to 1e-35 where betainc works, and keeps the Dirichlet van Trees bound
    certified at n = 1e12, d = 50 (it was listed as unverifiable)."""
    from boundcalc.core import symbolic as S

    rng = __import__("numpy").random.default_rng(1)
    for _ in range(40):
        n = float(round(10 ** rng.uniform(1, 3.5)))
        m = float(int(rng.uniform(0, n - 1)))
        p = float(rng.uniform(0.001, 0.999))
        with mpmath.workdps(40):
            a, b = mpmath.mpf(m + 1), mpmath.mpf(n - m)
            ref = mpmath.betainc(a, b, 0, p, regularized=True)
            ser = (S._positive_beta_series(a, b, mpmath.mpf(p)) if (a + b) * p < a + 1
                   else 1 - S._positive_beta_series(b, a, 1 - mpmath.mpf(p)))
            assert abs(ser - ref) <= mpmath.mpf(10) ** -35 * max(ref, mpmath.mpf(10) ** -300)
    with mpmath.workdps(40):
        v = S._mp_binom_sf(mpmath.mpf(5555), mpmath.mpf(277800), (1 - mpmath.mpf(0.04058239085714285)) / 50)
    assert abs(float(v) - 0.000992297258763974) < 1e-17
    res = bc.rate("multinomial", privacy="local", n=10**12, d=50, eps=0.05)
    vt = [b for b in res.lowers if b.name == "van-trees-dirichlet"][0]
    assert vt.certified and vt.verified["method"] == "mpmath"


def test_coupling_in_high_precision_at_mixture_weight_one():
    """At p = 1 (H = n surely) the coupling's mpmath code divided by 1 - p = 0, so the sphere-cap bounds that the
    solver tunes to p = 1 (mean, d = 100, n = 1000, ε = 0.1) were listed as unverifiable."""
    from boundcalc.methods import group_coupling as G

    with mpmath.workdps(40):
        n, eps, loga, delta = 50, mpmath.mpf("0.01"), mpmath.mpf(-3), mpmath.mpf("1e-6")
        got = G._coupling_min_mpmath(n, 1, eps, loga, delta)
        want = min(1, mpmath.exp(loga + eps * n) + delta * mpmath.expm1(eps * n) / mpmath.expm1(eps))
        assert abs(got - want) <= mpmath.mpf(10) ** -35
