"""Continuous packing on the unit sphere for d-dimensional mean estimation under central privacy.

Derivation written for boundcalc (docs/methods/sphere-cap-packing.md); the point-mass coupling is
:func:`boundcalc.methods.group_coupling.point_mass_bound`.

Family: ``P_v = (1-p) δ_0 + p δ_{x_v}``, ``x_v = R v`` (v on the unit sphere S^{d-1}), mean ``θ_v = ρ v``
with ``ρ = p R``. Under P_0 = δ_0 the sample is the fixed 0^n.

1. Point-mass coupling (group privacy): P_v(θ̂ ∈ A) <= G P_0(θ̂ ∈ A) + δ(G-1)/(e^ε-1),
   G = (1 + p(e^ε-1))^n.
2. Take A_v = {‖θ̂ - ρv‖ < ρτ}, V uniform on the sphere. By Fubini (under P_0 the output does not
   depend on V): E_V P_0(θ̂ ∈ A_V) = E_{θ̂~P_0} σ({v : ‖θ̂ - ρv‖ < ρτ}) <= sup_c σ({v : ‖v - c‖ < τ}).
3. For a centre c at distance s from 0 the set {v : ‖v - c‖ < τ} is the cap {⟨v, c/s⟩ > (1+s²-τ²)/(2s)};
   the threshold is smallest, sqrt(1-τ²), at s² = 1-τ² (τ < 1). The cap of angular radius φ with
   sin φ = τ has normalised area cap(τ) = (1/2) I_{τ²}((d-1)/2, 1/2) (regularised incomplete beta; for
   d = 2 it is arcsin(τ)/π; for d = 1 the "sphere" is {±1} and a ball of radius τ < 1 holds one of them:
   cap = 1/2).
4. Hence E_V P_V(‖θ̂ - θ_V‖ >= ρτ) >= 1 - G cap(τ) - δ(G-1)/(e^ε-1), and
   sup_v E‖θ̂ - θ_v‖² >= (ρτ)² · max{0, 1 - G cap(τ) - δ(G-1)/(e^ε-1)}.

``LogSphereCap(d, τ)`` is a sympy function (log of cap(τ)) with numpy (scipy.special.betainc) and
mpmath implementations registered in the evaluation namespaces; it is tested against Monte Carlo
and the d = 2 closed form in tests/test_sphere_cap.py.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core import symbolic as S
from ..core.memo import BoundedMemo
from . import group_coupling

tau = sp.Symbol("tau", positive=True)  # relative radius of the success ball


def cap_value(d, t):
    """Normalised area of the largest part of S^{d-1} inside a ball of radius t (numpy, vectorised)."""
    from scipy import special

    d = np.asarray(d, dtype=float)
    t = np.asarray(t, dtype=float)
    x = np.clip(t, 0.0, 1.0) ** 2
    if np.all(d <= 1.5):  # d = 1 everywhere: no incomplete beta needed (the same values as below)
        out = np.full(np.broadcast_shapes(d.shape, x.shape), 0.5)
    else:
        a = np.maximum((d - 1) / 2, 0.25)  # placeholder where d = 1 (value replaced below)
        out = np.where(d <= 1.5, 0.5, 0.5 * special.betainc(a, 0.5, x))
    return np.where(t > 1.0, 1.0, out)  # radius > 1: a ball can hold the whole sphere


def _log_cap_numpy(d, t):
    """log cap(τ) (numpy, vectorised): :func:`_log_cap_points` computed once per distinct point ``(d, τ)``.

    The solver evaluates a bound on a grid of its free parameters, and the cap's argument depends on one of
    them only (64 distinct values among 4,096 grid points); the layered bounds take it at 12 fixed multiples
    of τ, and the sphere-cap bounds of one problem share their first grid. So the values are computed at the
    distinct points (:func:`boundcalc.methods.group_coupling.distinct_points`) and kept for the last
    512 sets of distinct points (:data:`_CAP_MEMO`). Every operation of :func:`_log_cap_points` acts point by
    point, so the values are those of the whole batch, bit for bit (``tests/test_sphere_cap_distinct.py``)."""
    d = np.asarray(d, dtype=float)
    t = np.asarray(t, dtype=float)
    shape = np.broadcast_shapes(d.shape, t.shape)
    size = math.prod(shape)
    if size < 8:
        return _log_cap_points(d, t)
    if d.size == 1 and t.shape == shape and float(d.reshape(())) <= 1.5:
        # d = 1: the cap is 1/2 for τ <= 1 (and for a τ that is not a number), the whole sphere for τ > 1, so
        # the values are the logs of 1/2 and 1, taken by the same vectorised np.log as the whole batch's
        half, one = np.log(np.array([0.5, 1.0]))
        return np.where(t > 1.0, one, half)
    cols = [x if x.size == 1 else np.broadcast_to(x, shape).ravel() for x in (d, t)]
    varying = [c for c in cols if c.size != 1]
    found = group_coupling.distinct_points(varying, size) if varying else None
    if found is None:
        first = inverse = None
        args = [c.reshape(()) if c.size == 1 else c for c in cols]
    else:
        first, inverse = found
        args = [c.reshape(()) if c.size == 1 else c[first] for c in cols]
    key = tuple((a.shape, a.tobytes()) for a in args)
    hit = _CAP_MEMO.recall(key)
    if hit is None:
        hit = np.asarray(_log_cap_points(*args), dtype=float).reshape(-1)
        hit.setflags(write=False)
        _CAP_MEMO.keep(key, hit)
    return (hit.copy() if inverse is None else hit[inverse]).reshape(shape)


#: the values of :func:`_log_cap_numpy` at its last distinct point sets (each a few hundred bytes: a grid level's
#: distinct τ; one rate call at the mean problem makes about 250, the first grid level's are the same at every n)
_CAP_MEMO = BoundedMemo(512)


def _log_cap_points(d, t):
    """log cap(τ), accurate where the cap area underflows (large d): for small I_x(a, 1/2) use
    I_x(a, b) = x^a (1-x)^b / (a B(a, b)) · 2F1(a+b, 1; a+1; x) (DLMF 8.17.8 with 15.8.1) in logs."""
    from scipy import special

    d, t = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(t, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        direct = np.log(cap_value(d, t))
        small = (direct < -600) & (d > 1.5) & (t <= 1.0)
        if not np.any(small):  # the (slow) hypergeometric series only where betainc underflows
            return direct
        ds, ts = d[small], t[small]
        a = np.maximum((ds - 1) / 2, 0.25)
        x = np.clip(ts, 1e-300, 1.0 - 1e-16) ** 2
        series = (a * np.log(x) + 0.5 * np.log1p(-x) - np.log(a) - special.betaln(a, 0.5)
                  + np.log(special.hyp2f1(a + 0.5, 1.0, a + 1.0, x)) + np.log(0.5))
    out = np.array(direct, dtype=float, copy=True)
    out[small] = series
    return out


#: the values of :func:`_log_cap_mpmath` by (d, τ, working precision): certification evaluates a bound at two
#: precisions and several bounds share the same cap, and at large d one value costs up to a second (mpmath's
#: betainc at d = 1e6, τ² = 0.9966: 0.6 s); an mpf is immutable, so a kept value is returned as is
_CAP_MP_MEMO = BoundedMemo(256)


def _log_cap_mpmath(d, t):
    import mpmath

    key = (d, t, mpmath.mp.prec)
    try:
        hit = _CAP_MP_MEMO.recall(key)
    except TypeError:  # an unhashable argument: no memo
        return _log_cap_mpmath_uncached(d, t)
    if hit is None:
        hit = _CAP_MP_MEMO.keep(key, _log_cap_mpmath_uncached(d, t))
    return hit


def _log_cap_mpmath_uncached(d, t):
    import mpmath

    if t > 1:
        return mpmath.mpf(0)
    if d <= 1.5:
        return mpmath.log(0.5)
    a, x = (d - 1) / 2, t * t
    if a > _SERIES_MIN_A and 0 < x <= _SERIES_MAX_X:
        # mpmath's betainc and hyp2f1 take seconds here and then fail (d = 1e5, τ² = 0.9: 8 s, ValueError); the
        # positive series I_x(a, 1/2) = x^a (1-x)^(1/2) / (a B(a, 1/2)) 2F1(a+1/2, 1; a+1; x) has term ratio below x:
        # at most a few thousand terms
        from ..core.symbolic import _positive_beta_series

        return mpmath.log(_positive_beta_series(mpmath.mpf(a), mpmath.mpf(0.5), mpmath.mpf(x)) / 2)
    try:
        return mpmath.log(mpmath.betainc(a, 0.5, 0, x, regularized=True) / 2)
    except mpmath.libmp.NoConvergence:  # very large d: the series form of the numpy path
        return (a * mpmath.log(x) + 0.5 * mpmath.log1p(-x) - mpmath.log(a) - mpmath.log(mpmath.beta(a, 0.5))
                + mpmath.log(mpmath.hyp2f1(a + 0.5, 1, a + 1, x)) + mpmath.log(0.5))


#: :func:`_log_cap_mpmath` sums the positive series itself for a = (d-1)/2 above this and τ² up to
#: :data:`_SERIES_MAX_X` (at most about 10^5 terms, 0.6 s at 60 digits); mpmath's own functions are fast below that a
#: and above that τ², and take seconds and then fail in between (d = 1e6, τ² = 0.992: 4.8 s, ValueError)
_SERIES_MIN_A = 10_000
_SERIES_MAX_X = 0.995


class LogSphereCap(sp.Function):
    """``LogSphereCap(d, τ) = log cap(τ)``, cap(τ) = (1/2) I_{τ²}((d-1)/2, 1/2) (1/2 for d = 1)."""

    nargs = 2

    def _latex(self, printer, exp=None):
        dd, t = (printer._print(a) for a in self.args)
        return rf"\log \tfrac12 I_{{{t}^2}}\left(\tfrac{{{dd}-1}}{{2}}, \tfrac12\right)"


S.NUMPY_IMPL["LogSphereCap"] = _log_cap_numpy
S.MPMATH_IMPL["LogSphereCap"] = _log_cap_mpmath


@S.cached_expression
def failure_probability(n, p, eps, d, t=tau, delta=None):
    """Sympy: max{0, 1 - G cap(τ) - δ(G-1)/(e^ε-1)}, G = (1 + p(e^ε-1))^n (G cap computed in logs)."""
    log_g = n * S.log1p(p * S.expm1(eps))
    val = 1 - sp.exp(log_g + LogSphereCap(d, t))
    if delta is not None:
        val = val - group_coupling.point_mass_additive(n, p, eps, delta)
    return S.Max(0, val)


def risk_lower_value(n: int, p: float, eps: float, d: int, t: float, rho: float, delta: float = 0.0) -> float:
    """Float evaluation of (ρτ)² · failure (used by tests against exact risks)."""
    log_g = n * math.log1p(p * math.expm1(eps))
    if log_g > 700:
        return 0.0
    G = math.exp(log_g)
    fail = 1 - math.exp(log_g + float(_log_cap_numpy(d, t))) - delta * (G - 1) / math.expm1(eps)
    return (rho * t) ** 2 * max(0.0, fail)


#: number of layers of :func:`layered_failure` (the grid of the layer-cake sum)
LAYERS = 12


@S.cached_expression
def layered_failure(n, p, eps, d, t=tau, delta=None, layers=LAYERS):
    """Sympy: (1/K) Σ_{i=1..K} failure(τ sqrt(i/K)), the layer-cake refinement of step 4.

    E‖θ̂ - θ_V‖² = ρ² ∫_0^∞ P(‖θ̂ - θ_V‖ >= ρ√u) du >= ρ² Σ_i (u_i - u_{i-1}) P(‖θ̂ - θ_V‖ >= ρ√u_i) on the
    grid u_i = τ² i/K (the probability decreases in u, so the right end of each cell is a lower bound),
    and each probability is at least failure(√u_i) by steps 1-4. Multiplied by (ρτ)² this is never below
    the single-threshold bound (ρτ)² failure(τ) (the last term alone, since failure decreases in τ...
    each of the K terms is at least failure(τ)).
    """
    terms = [failure_probability(n, p, eps, d, t * sp.sqrt(sp.Rational(i, layers)), delta)
             for i in range(1, layers + 1)]
    return sp.Add(*terms) / layers


def risk_lower_layers_value(n: int, p: float, eps: float, d: int, t: float, rho: float, delta: float = 0.0,
                            layers: int = LAYERS) -> float:
    """Float evaluation of (ρτ)² · layered_failure (used by tests against exact risks)."""
    return sum(risk_lower_value(n, p, eps, d, t * math.sqrt(i / layers), rho, delta) * (layers / i)
               for i in range(1, layers + 1)) / layers


# ------------------------------------------------------------------ truncated coupling (sharper)

@S.cached_expression
def failure_probability_min(n, p, eps, d, t=tau, delta=None):
    """Sympy: max{0, 1 - f(cap(τ))}, f(a) = E_H min{1, e^{εH} a + δ_H} (H ~ Bin(n, p)).

    Step 1 of the module docstring with the truncated coupling
    :func:`boundcalc.methods.group_coupling.truncated_point_mass`: P_v(A) <= f(P_0(A)) with f concave and
    non-decreasing, so E_V P_V(A_V) <= f(E_V P_0(A_V)) <= f(cap(τ)) (Jensen, then step 2-3). Since
    f(a) <= G a + δ(G-1)/(e^ε-1), this is never below :func:`failure_probability`; for large nε p the
    exponent of the cost is about εnp instead of n log(1 + p(e^ε - 1)).
    """
    return S.Max(0, 1 - group_coupling.truncated_point_mass(n, p, eps, LogSphereCap(d, t), delta))


@S.cached_expression
def layered_failure_min(n, p, eps, d, t=tau, delta=None, layers=LAYERS):
    """Sympy: (1/K) Σ_{i<=K} failure_min(τ sqrt(i/K)) (the layer-cake sum of :func:`layered_failure` with
    the truncated coupling)."""
    terms = [failure_probability_min(n, p, eps, d, t * sp.sqrt(sp.Rational(i, layers)), delta)
             for i in range(1, layers + 1)]
    return sp.Add(*terms) / layers


def risk_lower_min_value(n: int, p: float, eps: float, d: int, t: float, rho: float, delta: float = 0.0) -> float:
    """Float (ρτ)² · max{0, 1 - f(cap(τ))} with f summed directly over the binomial (tests)."""
    cap = float(cap_value(d, t))
    return (rho * t) ** 2 * max(0.0, 1 - group_coupling.truncated_point_mass_value(n, p, eps, cap, delta))


def risk_lower_layers_min_value(n: int, p: float, eps: float, d: int, t: float, rho: float, delta: float = 0.0,
                                layers: int = LAYERS) -> float:
    """Float evaluation of (ρτ)² · layered_failure_min (tests)."""
    return sum(risk_lower_min_value(n, p, eps, d, t * math.sqrt(i / layers), rho, delta) * (layers / i)
               for i in range(1, layers + 1)) / layers


# ------------------------------------------------------------------ base on the sphere (diameter gain)

c_cut = sp.Symbol("c_cut", nonnegative=True)  # cut level of the moved cap: entries with <x, -v> >= c r move


def moved_cap_mass(d, c=c_cut):
    """β(c) = P(⟨U, e⟩ >= c), U uniform on S^{d-1}, c in [0, 1): a cap of angular radius arccos(c) = the cap of
    :func:`cap_value` at τ = sqrt(1 - c²) (sympy, through LogSphereCap)."""
    return sp.exp(LogSphereCap(d, sp.sqrt(1 - c ** 2)))


def moved_cap_first_moment(d, c=c_cut):
    """E[⟨U, e⟩; ⟨U, e⟩ >= c] = c_d (1 - c²)^{(d-1)/2}/(d-1), c_d = Γ(d/2)/(√π Γ((d-1)/2)), d >= 2 (sympy).

    The density of t = ⟨U, e⟩ is c_d (1 - t²)^{(d-3)/2} on [-1, 1], and ∫_c^1 t (1-t²)^{(d-3)/2} dt =
    (1 - c²)^{(d-1)/2}/(d-1)."""
    cd = sp.exp(sp.loggamma(d / 2) - sp.loggamma((d - 1) / 2)) / sp.sqrt(sp.pi)
    return cd * (1 - c ** 2) ** ((d - 1) / 2) / (d - 1)


def layered_failure_threshold(n, p, eps, d, t=tau, delta=None, layers=6):
    """Sympy (1/K) Σ_i max{0, 1 - φ(cap(τ sqrt(i/K)))}, φ = :func:`group_coupling.threshold_point_mass`."""
    terms = [S.Max(0, 1 - group_coupling.threshold_point_mass(
        n, p, eps, LogSphereCap(d, t * sp.sqrt(sp.Rational(i, layers))), delta)) for i in range(1, layers + 1)]
    return sp.Add(*terms) / layers
