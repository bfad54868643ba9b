"""The exactly calibrated ("analytic") Gaussian mechanism, solved over arrays.

Balle & Wang (2018), Theorem 8: N(0, σ²) noise on a query of ℓ2 sensitivity 1 is (ε,δ)-DP iff

    δ(σ) = Φ(1/(2σ) - εσ) - e^ε Φ(-1/(2σ) - εσ) <= δ.

δ(σ) decreases in σ, so the calibration is the root of ``log δ(σ) = log δ``. We solve it in
``x = log σ`` (which makes δ down to 1e-300 and ε up to 50 well scaled), with ``log δ(σ)`` from
``scipy.special.log_ndtr`` (no cancellation: ``log δ = l1 + log1p(-exp(l2 - l1))``).

Solver: a vectorised bracket (each array element widened on its own), then Newton's method in
``log σ`` with the exact derivative ``d log δ / d log σ = -φ(1/(2σ) - εσ)/(σ δ)`` (the two Gaussian
densities combine because ``e^ε φ(-a-b) = φ(a-b)``), safeguarded by bisection and started on the right
of the root: ``log δ`` is concave in ``log σ`` (checked in the tests), so Newton stays on the side
where ``δ(σ) <= δ``. The result is then moved up by 16 times the rounding error of the computed
``log δ`` (and a relative ``SAFETY``), so the returned σ is never below the exact calibration: the
mechanism is always at least as private as claimed. For ε < ``TINY_EPS`` the float64 form cancels and
a 40-digit mpmath bisection is used instead. The tests compare with an independent 60-digit solve.

Distinct (ε, δ) pairs are solved once per call (``np.unique``) and scalar pairs are memoised.
"""
from __future__ import annotations

import math
from functools import lru_cache

from ..cache.diskcache import persistent

import numpy as np

#: relative inflation of the returned σ (safe direction); see the module docstring
SAFETY = 1e-12
_FLOOR = -1e4  # log δ(σ) below this is "δ = 0" (log 1e-300 ≈ -691), a finite value keeps the solver happy


def _terms(x, eps):
    """log δ(σ) and d log δ / d log σ at σ = e^x (vectorised; see the module docstring)."""
    from scipy import special

    with np.errstate(all="ignore"):
        sigma = np.exp(x)
        a = 0.5 / sigma
        b = eps * sigma
        u = a - b
        l1 = special.log_ndtr(u)
        l2 = eps + special.log_ndtr(-a - b)
        ld = l1 + np.log1p(-np.exp(np.minimum(l2 - l1, 0.0)))
        ld = np.where(l2 >= l1, _FLOOR, ld)
        ld = np.maximum(np.nan_to_num(ld, nan=_FLOOR, neginf=_FLOOR), _FLOOR)
        # dδ/dσ = -φ(a-b)/σ² (the two Gaussian densities combine: e^ε φ(-a-b) = φ(a-b)),
        # so d log δ / d log σ = -φ(a-b) / (σ δ)
        slope = -np.exp(-0.5 * u * u - 0.5 * np.log(2 * np.pi) - x - ld)
    return ld, slope


def log_delta(sigma, eps):
    """``log δ(σ)`` of the Gaussian mechanism with sensitivity 1 (vectorised)."""
    return _terms(np.log(np.asarray(sigma, float)), np.asarray(eps, float))[0]


def _solve_float(eps: np.ndarray, log_dl: np.ndarray) -> np.ndarray:
    """log σ for 1-D arrays (ε not tiny): bracket, safeguarded Newton in log σ, then a verified safe end."""
    # start near the classical calibration sqrt(2 log(1.25/δ))/ε, then widen the bracket where needed
    guess = np.log(np.sqrt(2.0 * (np.log(1.25) - log_dl)) / eps + 0.5)
    hi = guess.copy()
    lo = guess - np.log(8.0)
    for _ in range(2100):
        bad = _terms(hi, eps)[0] - log_dl > 0
        if not bad.any():
            break
        hi = np.where(bad, hi + np.log(4.0), hi)
    for _ in range(2100):
        bad = _terms(lo, eps)[0] - log_dl <= 0
        if not bad.any():
            break
        lo = np.where(bad, lo - np.log(4.0), lo)
    # log δ is concave in log σ (checked numerically in the tests): Newton started on the right of the
    # root (where δ(σ) <= target) stays on the right and converges monotonically
    x = hi.copy()
    act = np.arange(x.size)  # elements still iterating (the others are frozen)
    for _ in range(100):
        xa, ea, la, lo_a, hi_a = x[act], eps[act], log_dl[act], lo[act], hi[act]
        f, fp = _terms(xa, ea)
        f = f - la
        lo_a = np.where(f > 0, xa, lo_a)
        hi_a = np.where(f <= 0, xa, hi_a)
        with np.errstate(all="ignore"):
            nxt = xa - f / fp
        inside = np.isfinite(nxt) & (nxt > lo_a) & (nxt <= hi_a)
        nxt = np.where(inside, nxt, 0.5 * (lo_a + hi_a))
        done = (np.abs(nxt - xa) <= 1e-13) | (hi_a - lo_a <= 1e-13)  # σ to ~1e-13 relative
        lo[act], hi[act] = lo_a, hi_a
        x[act] = np.where(done, xa, nxt)
        act = act[~done]
        if act.size == 0:
            break
    # hi always has computed δ <= target; it equals x up to rounding once Newton has converged
    f, fp = _terms(x, eps)
    x = np.where(f - log_dl <= 0, x, hi)
    # rounding error of the computed log δ: log δ = l1 + log1p(-e^D) with D = l2 - l1 carrying an
    # absolute error ~ ulp·(|l1| + |l2|), amplified by 1/|D| in log1p(-e^D); move x up by 16 times
    # the induced error of the root (|Δx| = |Δ log δ| / |slope|), so σ is never below the exact root
    with np.errstate(all="ignore"):
        sigma = np.exp(x)
        l1 = -0.5 * (0.5 / sigma - eps * sigma) ** 2 - 5.0  # crude magnitudes suffice for the error size
        mag = np.abs(log_dl) + np.abs(l1) + eps + 10.0
        dgap = np.maximum(np.abs(fp) * 1e-300, 1e-300)
        err = np.finfo(float).eps * mag * (1.0 + 1.0 / np.minimum(1.0, eps * 0 + _gap(x, eps)))
        shift = 16.0 * err / np.maximum(np.abs(fp), 1e-300)
    return x + np.where(np.isfinite(shift), np.minimum(shift, 1.0), 1.0)


def _gap(x, eps):
    """|l2 - l1| = -log of the ratio e^ε Φ(-a-b) / Φ(a-b) (how much log1p(-e^D) amplifies errors)."""
    from scipy import special

    with np.errstate(all="ignore"):
        sigma = np.exp(x)
        a = 0.5 / sigma
        b = eps * sigma
        g = np.abs(eps + special.log_ndtr(-a - b) - special.log_ndtr(a - b))
    return np.where(np.isfinite(g), np.maximum(g, 1e-300), 1e-300)


def _log_sigma_mp(e, dl, iters: int):
    """log σ of the calibration at mpmath's working precision: the right end (δ(σ) <= dl) of a bisection in
    log σ, ``iters`` halvings of a bracket of width 1; ``e`` and ``dl`` mpmath numbers."""
    import mpmath

    target = mpmath.log(dl)

    def f(x):
        s = mpmath.exp(x)
        dlt = mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s)
        return (mpmath.log(dlt) if dlt > 0 else mpmath.mpf(-10 ** 6)) - target

    lo = mpmath.log(mpmath.sqrt(2 * mpmath.log(1.25 / dl)) / e + mpmath.mpf(0.5))
    hi = lo
    while f(hi) > 0:
        hi += 1
    lo = hi - 1
    while f(lo) <= 0:
        lo -= 1
    for _ in range(iters):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def _solve_mpmath(eps: float, dl: float) -> float:
    """σ to 40 digits with mpmath (tiny ε, where float64 log δ cancels), rounded up."""
    import mpmath

    with mpmath.workdps(40):
        return float(mpmath.exp(_log_sigma_mp(mpmath.mpf(eps), mpmath.mpf(dl), 140))) * (1 + 1e-15)


def sigma_analytic_mp(eps, dl):
    """The calibration σ at mpmath's working precision (the high-precision path of ``GaussSigmaAnalytic``): the
    same root of δ(σ) = dl, by bisection in log σ to 2^-(precision + 8), not rounded up (the float64 value is
    rounded up; the certified value of an upper bound is the larger of the two). NaN outside ε > 0, 0 < δ < 1."""
    import mpmath

    e, d = float(eps), float(dl)
    if not (math.isfinite(e) and e > 0 and 0 < d < 1):
        return mpmath.mpf("nan")
    return +_sigma_mp_cached(e, d, mpmath.mp.prec)


@lru_cache(maxsize=256)
def _sigma_mp_cached(e: float, d: float, prec: int):
    import mpmath

    with mpmath.workprec(prec):
        return mpmath.exp(_log_sigma_mp(mpmath.mpf(e), mpmath.mpf(d), prec + 8))


#: below this ε the float64 form of log δ loses digits (relative error about 1e-15/ε): use mpmath
TINY_EPS = 1e-3


def _solve(eps: np.ndarray, dl: np.ndarray) -> np.ndarray:
    """σ for 1-D arrays of distinct (ε, δ) pairs."""
    out = np.empty(eps.shape)
    tiny = eps < TINY_EPS
    if (~tiny).any():
        x = _solve_float(eps[~tiny], np.log(dl[~tiny]))
        out[~tiny] = np.exp(x) * (1.0 + SAFETY)
    for i in np.flatnonzero(tiny):
        out[i] = _solve_mpmath(float(eps[i]), float(dl[i]))
    return np.where(out > 1e300, np.inf, out)


@persistent  # memoised in memory and on disk (boundcalc.cache.diskcache): one solve per (ε, δ) ever
def _scalar(eps: float, dl: float) -> float:
    return float(_solve(np.array([eps]), np.array([dl]))[0])


def sigma_analytic(eps, delta):
    """Smallest σ (rounded up) such that N(0, σ²) on a sensitivity-1 query is (ε,δ)-DP; vectorised."""
    e, dl = np.broadcast_arrays(np.asarray(eps, float), np.asarray(delta, float))
    if e.size == 1:
        return np.full(e.shape, _scalar(float(e.flat[0]), float(dl.flat[0])))
    key = (e.shape, hash(np.ascontiguousarray(e).tobytes()), hash(np.ascontiguousarray(dl).tobytes()))
    hit = _ARRAY_CACHE.get(key)
    if hit is not None:  # a curve's bounds ask for the same σ array several times
        return hit.copy()
    ok = np.isfinite(e) & np.isfinite(dl) & (e > 0) & (dl > 0) & (dl < 1)
    out = np.full(e.shape, np.nan)
    if ok.any():
        eo, do = e[ok], dl[ok]
        if np.all(do == do[0]):  # the usual curve: one δ, many ε (a 1-D unique is 30x faster)
            ue, inverse = np.unique(eo, return_inverse=True)
            out[ok] = _solve(ue, np.full(ue.shape, do[0]))[inverse.ravel()]
        else:  # distinct (ε, δ) pairs through one complex key
            ckey, inverse = np.unique(eo + 1j * do, return_inverse=True)
            out[ok] = _solve(ckey.real.copy(), ckey.imag.copy())[inverse.ravel()]
    if len(_ARRAY_CACHE) >= 4:
        _ARRAY_CACHE.pop(next(iter(_ARRAY_CACHE)))
    _ARRAY_CACHE[key] = out.copy()
    return out


_ARRAY_CACHE: dict = {}  # the last few array solves, keyed by the exact bytes of (ε, δ)


def sigma_analytic_scalar(eps: float, delta: float) -> float:
    """Scalar form (memoised per (ε, δ))."""
    return _scalar(float(eps), float(delta))
