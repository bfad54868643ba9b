"""The truncated group-privacy coupling f(a) = E min{1, e^{εH} a + δ_H} (boundcalc/methods/group_coupling.py,
docs/methods/group-coupling.md) against an independent 40-digit evaluation at extreme (ε, δ, n).

1 - f is a failure probability in the central-mean sphere-cap lower bounds, so the float value must never be
below the exact one (that would inflate a certified lower bound) and should stay within a small relative
margin of it. The reference sums P(H = h) min{1, v_h} term by term with each pmf from log-gamma in 40
digits, over a window of 40 standard deviations (the mass outside is below 1e-300 and is added as 1)."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from boundcalc.methods import group_coupling as gc


def f_exact(n, p, eps, a, delta):
    """E min{1, e^{εH} a + δ(e^{εH} - 1)/(e^ε - 1)}, H ~ Bin(n, p), in 40 digits (mpf)."""
    with mpmath.workdps(40):
        n, p, eps, a, delta = (mpmath.mpf(x) for x in (n, p, eps, a, delta))
        mu = n * p
        sd = mpmath.sqrt(mu * (1 - p))
        lo = int(max(0, mpmath.floor(mu - 40 * sd - 60)))
        hi = int(min(n, mpmath.ceil(mu + 40 * sd + 60)))
        tot = mpmath.mpf(0)
        mass = mpmath.mpf(0)
        em1 = mpmath.expm1(eps)
        for h in range(lo, hi + 1):
            pmf = mpmath.exp(mpmath.loggamma(n + 1) - mpmath.loggamma(h + 1) - mpmath.loggamma(n - h + 1)
                             + h * mpmath.log(p) + (n - h) * mpmath.log1p(-p))
            v = a * mpmath.exp(eps * h) + delta * mpmath.expm1(eps * h) / em1
            tot += pmf * min(1, v)
            mass += pmf
        return min(mpmath.mpf(1), tot + max(0, 1 - mass))


def _grid(count, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = float(rng.choice([20.0, 1e6, 1e9, 1e12]))
        mu = float(rng.choice([0.3, 6.0, 60.0, 900.0]))
        p = min(mu / n, 0.9)
        eps = float(rng.choice([1e-8, 1e-6, 1e-3, 0.3, 3.0, 40.0]))
        delta = float(rng.choice([0.0, 1e-10, 1e-3, 0.1, 0.5]))
        a = float(rng.choice([1e-30, 1e-3, 0.2, 0.6, 0.97]))
        out.append((n, p, eps, a, delta))
    return out


CASES = [(1e9, 5.884179536766138e-09, 1e-6, 0.24905736322927716, 0.1),  # the sphere-cap-tilted point of the report
         (1e9, 5.884179536766138e-09, 1e-8, 0.24905736322927716, 0.1),
         (1e12, 6e-12, 1e-8, 0.5, 0.5), (1e12, 9e-10, 1e-8, 0.3, 1e-3), (1e6, 6e-5, 1e-6, 0.6, 0.1),
         # windows of H wider than DIRECT_TERMS: the series form ((e^ε-1)np small) and the tilted form
         (1e9, 9e-7, 1e-3, 0.2, 0.0), (1e12, 9e-10, 1e-6, 0.2, 1e-4), (1e12, 9e-10, 1e-8, 0.2, 1e-5),
         (1e9, 5e-6, 0.01, 1e-30, 1e-3), (1e6, 5e-3, 0.01, 1e-30, 0.0), (1e12, 5e-9, 0.003, 1e-10, 1e-6),
         (1e12, 2e-8, 0.002, 1e-20, 1e-7),
         ] + _grid(40, 3)


@pytest.mark.parametrize("n,p,eps,a,delta", CASES)
def test_coupling_min_never_below_and_close_to_40_digits(n, p, eps, a, delta):
    exact = f_exact(n, p, eps, a, delta)
    got = float(gc._coupling_min_numpy(n, p, eps, math.log(a), delta))
    assert got >= exact, "float f below its 40-digit value: the lower bound 1 - f would be inflated"
    # tight: the failure probability 1 - f loses at most a relative 1e-6 (plus 1e-12 absolute)
    assert got - exact <= 1e-6 * (1 - exact) + 1e-12


@pytest.mark.parametrize("n,p,eps,a,delta", CASES[:5] + _grid(10, 4))
def test_coupling_min_mpmath_computes_in_mpmath_precision(n, p, eps, a, delta):
    """The mpmath implementation (used by high-precision re-evaluation) agrees with the reference to 1e-25
    where its window is summed term by term (it is not the float value converted)."""
    with mpmath.workdps(40):
        got = gc._coupling_min_mpmath(n, p, eps, mpmath.log(a), delta)
        exact = f_exact(n, p, eps, a, delta)
        assert abs(got - exact) <= mpmath.mpf(10) ** -25


def test_sphere_cap_tilted_at_reported_point_not_above_its_formula():
    """`rate --problem mean --privacy approx --n 1e9 --d 2 --k inf --eps 1e-6 --delta 0.1` listed sphere-cap-tilted
    = 6.787888e-18 at p = 5.884e-9, τ = 0.99703, 0.74% above the same formula evaluated in 40 digits
    (6.737716e-18). The bound's failure sum (1/K) Σ_i max{0, 1 - f(cap(τ√(i/K)))} is evaluated in float, as the
    bound does, and compared with the sum of the 40-digit references (d = 2: cap(t) = arcsin(t)/π)."""
    import sympy as sp

    from boundcalc.core import symbolic as S
    from boundcalc.methods import sphere_cap as sc

    n, p, eps, delta, tau = 1e9, 5.884179536766138e-09, 1e-6, 0.1, 0.9970342386897523
    expr = sc.layered_failure_min(S.n, S.p, S.eps, S.d, sc.tau, S.delta)
    args = sorted(expr.free_symbols, key=lambda x: x.name)
    vals = {"n": n, "p": p, "epsilon": eps, "delta": delta, "d": 2.0, "tau": tau}
    got = float(S.numpy_lambdify(args, expr)(*[vals[a.name] for a in args]))
    with mpmath.workdps(40):
        fails = []
        for i in range(1, sc.LAYERS + 1):
            cap = mpmath.asin(mpmath.mpf(tau) * mpmath.sqrt(mpmath.mpf(i) / sc.LAYERS)) / mpmath.pi
            fails.append(max(0, 1 - f_exact(n, p, eps, cap, delta)))
        exact = sum(fails) / sc.LAYERS
    assert got <= exact  # never above: a lower bound
    assert got >= exact * (1 - 1e-9)


def test_mpmath_coupling_min_keeps_its_digits_at_large_n():
    """The window's first pmf comes from log-gammas of size n log n that cancel; without the bits they lose, at
    n = 1e15 the 40-digit value was good to 24 digits only and disagreed with the 60-digit one beyond 1e-25 (the
    certification then refused sphere-cap-tilted at n = 1e15, ε = 5, d = 1e5). Now they agree to 1e-36."""
    import mpmath

    import boundcalc.methods.sphere_cap  # noqa: F401  (registers LogSphereCap)
    from boundcalc.core import symbolic as S

    cm, lsc = S.MPMATH_IMPL["CouplingMin"], S.MPMATH_IMPL["LogSphereCap"]
    for n, p, eps, d, tau in ((1e15, 6.008728980957292e-13, 5.0, 1e5, 0.9677188045887076),
                              (1e12, 3e-10, 1.0, 1e3, 0.9), (1e18, 5e-16, 2.0, 10.0, 0.7)):
        vals = []
        for dps in (40, 60):
            with mpmath.workdps(dps):
                la = lsc(mpmath.mpf(d), mpmath.mpf(tau))
                vals.append(cm(mpmath.mpf(n), mpmath.mpf(p), mpmath.mpf(eps), la, mpmath.mpf(0)))
        with mpmath.workdps(60):
            assert abs(vals[0] - vals[1]) <= mpmath.mpf("1e-36") * abs(vals[1]), (n, vals)
