"""The subsample size m = ⌊αn⌋ of the TV subsampling mechanisms, computed exactly from the float64 values of α and n.

A subsample of m of the n entries, drawn uniformly, is (m/n)-TV private, so m/n <= α is what the privacy claim
needs. The float64 product α·n is rounded to nearest and can land on the integer just above the exact product:
α = 0.03 is stored as 0.029999999999999998889..., and 0.03 · 300000 rounds to 9000.0, while the exact product is
8999.99999999999967 (m = 9000 would be 0.03 + 1.1e-18 TV private, not α). Here the floor is taken of the exact
product (Python's fractions on the two float64 values) wherever the float64 product lies within a relative 1e-9 of
an integer; elsewhere the float64 floor is exact (the product's rounding error, half an ulp, is far smaller than
its distance to the next integer). The high-precision path computes the same exact value.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import sympy as sp

from ..core import symbolic as S


def floor_product(a: float, n: float) -> float:
    """⌊a·n⌋ of the exact product of two float64 values (a float; NaN if either is not finite)."""
    if not (math.isfinite(a) and math.isfinite(n)):
        return float("nan")
    prod = a * n
    f = math.floor(prod)
    if abs(prod - round(prod)) > 1e-9 * max(1.0, abs(prod)):
        return float(f)
    return float(math.floor(Fraction(a) * Fraction(n)))


def _numpy(a, n):
    arrs = np.broadcast_arrays(np.asarray(a, float), np.asarray(n, float))
    out = np.empty(arrs[0].shape)
    flat_a, flat_n, flat = arrs[0].ravel(), arrs[1].ravel(), out.reshape(-1)
    for i in range(flat.size):
        flat[i] = floor_product(float(flat_a[i]), float(flat_n[i]))
    return out if out.ndim else float(out)


def _mpmath(a, n):
    import mpmath

    # the high-precision path receives the float64 parameters as mpf numbers: float() is exact on them
    v = floor_product(float(a), float(n))
    return mpmath.mpf("nan") if math.isnan(v) else mpmath.mpf(v)


class SubsampleSize(sp.Function):
    """``SubsampleSize(α, n) = ⌊α n⌋``, the floor of the exact product of the two float64 values."""

    nargs = 2

    def _latex(self, printer, exp=None):
        a, n = (printer._print(x) for x in self.args)
        base = rf"\left\lfloor {a} {n} \right\rfloor"
        return base if exp is None else rf"\left({base}\right)^{{{exp}}}"


S.NUMPY_IMPL["SubsampleSize"] = _numpy
S.MPMATH_IMPL["SubsampleSize"] = _mpmath
S.HIGH_PRECISION.add("SubsampleSize")  # exact on both paths


def subsample_level(a: float, n: float, m: float) -> float:
    """min{1, a·n/m} with the comparison a·n >= m made exactly (float64 inputs); below 1 the quotient is rounded down
    (a lower TV level on the subsample only adds noise: the mechanism stays a-TV private)."""
    if not (math.isfinite(a) and math.isfinite(n) and math.isfinite(m)) or m <= 0:
        return float("nan")
    q = Fraction(a) * Fraction(n) / Fraction(m)
    if q >= 1:
        return 1.0
    f = float(q)  # correctly rounded; one step down if it landed above
    return math.nextafter(f, 0.0) if Fraction(f) > q else f


def _level_numpy(a, n, m):
    arrs = np.broadcast_arrays(*(np.asarray(x, float) for x in (a, n, m)))
    out = np.empty(arrs[0].shape)
    fa, fn, fm, flat = arrs[0].ravel(), arrs[1].ravel(), arrs[2].ravel(), out.reshape(-1)
    for i in range(flat.size):
        flat[i] = subsample_level(float(fa[i]), float(fn[i]), float(fm[i]))
    return out if out.ndim else float(out)


def _level_mpmath(a, n, m):
    """The float64 level of :func:`subsample_level`, the one the mechanism runs at (the high-precision path receives
    the float64 parameters as mpf numbers: float() is exact on them). Not the exact quotient: below 1 the float is
    rounded down, a lower level that keeps the mechanism a-TV private and adds noise, and near 1 the noise term
    erfinv(level)⁻² is so ill-conditioned that the exact quotient 1 - 4.5e-17 and the float 1 - 1.1e-16 moved it by
    1e-3 (α = 1e-6, n = 1e6, m = 1), which demoted the bound. Both paths now describe the same mechanism."""
    import mpmath

    v = subsample_level(float(a), float(n), float(m))
    return mpmath.mpf("nan") if math.isnan(v) else mpmath.mpf(v)


class SubsampleLevel(sp.Function):
    """``SubsampleLevel(α, n, m) = min{1, αn/m}``: the TV level a mechanism may use on a random m-subsample of n entries
    to be α-TV private (αn >= m decided exactly)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        a, n, m = (printer._print(x) for x in self.args)
        base = rf"\min\left\{{1, \tfrac{{{a} {n}}}{{{m}}}\right\}}"
        return base if exp is None else rf"\left({base}\right)^{{{exp}}}"


S.NUMPY_IMPL["SubsampleLevel"] = _level_numpy
S.MPMATH_IMPL["SubsampleLevel"] = _level_mpmath
S.HIGH_PRECISION.add("SubsampleLevel")  # exact comparison; the float64 level the mechanism uses, on both paths
