"""Certified in floating point: every certified bound is re-evaluated in high precision and reported rounded
outward.

A certified bound is a true inequality about real numbers; its float64 evaluation is only an approximation of
it. Two ways a float64 value can land on the unsafe side (a lower bound above the true one, an upper bound
below it) are rounding in well-conditioned arithmetic (a few units in the last place) and cancellation in
ill-conditioned arithmetic (``1 - p`` with ``p`` close to 1, a sum of terms of opposite sign), which can cost
every digit. So, at the free parameters the solver chose, each certified bound is evaluated again with mpmath
at :data:`HP_DIGITS` significant digits and once more at :data:`CONFIRM_DIGITS` (the same expression, through
lambdify's mpmath printer, :func:`boundcalc.core.symbolic.mpmath_lambdify`), and:

- the two high-precision values must agree to :data:`CONFIRM_RTOL` (else the high-precision value itself is not
  trusted and the bound is listed as not certified, with the reason);
- the float64 value and the high-precision value must agree to :data:`AGREEMENT_RTOL` (else the float64 code
  has lost accuracy: the bound is listed as not certified, with both values, so that the defect is seen and
  fixed rather than papered over);
- the value reported is the one both evaluations support, rounded outward to a float64: for a lower bound the
  smaller of the float64 value and the high-precision value rounded down; for an upper bound the larger of the
  float64 value and the high-precision value rounded up.

Special functions of this package whose mpmath implementation is itself a float64 computation (the certified
cell bound of the erased-vertex envelope, exact binomial sums beyond n = 2000, the group-coupling sums, tabulated
envelopes; every name outside :data:`boundcalc.core.symbolic.HIGH_PRECISION`) keep their float64 value on the
high-precision path: the arithmetic
around them is checked, their own accuracy rests on their implementation, and the record names them
(``float64_parts``). Method and measured effect: docs/engineering/certified-floating-point.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: significant digits of the high-precision evaluation
HP_DIGITS = 40
#: the digits of the confirming evaluation (the high-precision value is trusted only if both agree)
CONFIRM_DIGITS = 60
#: largest relative difference between the 40- and 60-digit values (a stable 40-digit evaluation agrees to
#: about 40 digits less the condition number's digits; 25 leaves room for a condition number of 1e15)
CONFIRM_RTOL = 1e-25
#: largest relative difference between the float64 and the high-precision value that outward rounding absorbs;
#: beyond it the float64 code has lost accuracy and the bound is not reported as certified
AGREEMENT_RTOL = 1e-6


@dataclass(frozen=True)
class Verification:
    """The outcome of :func:`verify`: the value to report, whether it stays certified, and how it was checked
    (``info``, reported as ``"verified"`` in JSON)."""

    value: float | None
    certified: bool
    info: dict
    reason: str | None = None


def float64_parts(expr) -> list:
    """Names of the functions of ``expr`` that the high-precision path still evaluates in float64."""
    import sympy as sp

    from . import symbolic

    out = set()
    for f in expr.atoms(sp.Function):
        cls = type(f)
        if (cls.__module__ or "").startswith("sympy."):
            continue
        if cls.__name__ not in symbolic.HIGH_PRECISION:
            out.add(cls.__name__)
    return sorted(out)


def high_precision_value(bound, point: dict, digits: int):
    """``bound``'s expression at ``point`` (symbol name -> float or int) with ``digits`` significant digits, as
    an mpmath number, or None when it is not a finite real number."""
    import mpmath

    args, fn = bound._lambdified("mpmath")
    with mpmath.workdps(digits):
        try:
            val = fn(*[mpmath.mpf(point[a.name]) for a in args])
            if isinstance(val, mpmath.mpc):
                if val.imag != 0:
                    return None
                val = val.real
            val = mpmath.mpf(val)
        except Exception:  # noqa: BLE001 - mpmath raises several kinds (NoConvergence, ...): no value
            return None
        if not mpmath.isfinite(val):
            return None
        return +val


def round_down(x) -> float:
    """The largest float64 not above the mpmath number ``x``."""
    import mpmath

    f = float(x)
    if math.isinf(f) or mpmath.mpf(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


def round_up(x) -> float:
    """The smallest float64 not below the mpmath number ``x``."""
    import mpmath

    f = float(x)
    if math.isinf(f) or mpmath.mpf(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def verify(bound, values: dict, free: dict, float_value: float) -> Verification:
    """Check a certified ``bound``'s float64 value at ``values`` and its free parameters ``free`` against its
    high-precision value; see the module docstring for the rule."""
    import mpmath

    from .bounds import _symbol_values

    point = _symbol_values(values, free)
    try:
        point = {a.name: point[a.name] for a in bound._args()}
        for k, v in point.items():
            point[k] = int(v) if isinstance(v, int) else float(v)
    except (KeyError, TypeError, ValueError):
        return Verification(float_value, False, {"method": "none"},
                            "not certified: its parameters could not be evaluated in high precision")
    parts = bound.__dict__.get("_float64_parts")
    if parts is None:  # the expression never changes: its float64 parts are listed once
        parts = bound.__dict__["_float64_parts"] = float64_parts(bound.expr)
    parts = list(parts)
    info = {"method": "mpmath", "digits": HP_DIGITS, "confirmed_digits": CONFIRM_DIGITS,
            "float64_value": float_value}
    if parts:
        info["float64_parts"] = parts
    hp = high_precision_value(bound, point, HP_DIGITS)
    confirm = high_precision_value(bound, point, CONFIRM_DIGITS) if hp is not None else None
    if hp is None or confirm is None:
        return Verification(float_value, False, info,
                            "not certified: no finite value in high precision (mpmath) to confirm the float64 one")
    with mpmath.workdps(CONFIRM_DIGITS):
        scale = max(abs(confirm), mpmath.mpf(10) ** (-300))
        if abs(hp - confirm) > CONFIRM_RTOL * scale:
            info["high_precision_value"] = mpmath.nstr(confirm, 17)
            return Verification(float_value, False, info,
                                "not certified: the 40- and 60-digit evaluations disagree "
                                f"({mpmath.nstr(hp, 10)} vs {mpmath.nstr(confirm, 10)}): the expression is too "
                                "ill-conditioned here")
        rel = abs(mpmath.mpf(float_value) - confirm) / scale
    info["high_precision_value"] = mpmath.nstr(confirm, 17)
    info["relative_difference"] = float(rel)
    if rel > AGREEMENT_RTOL:
        return Verification(float_value, False, info,
                            f"not certified: its float64 value {float_value:.7g} and its {HP_DIGITS}-digit value "
                            f"{mpmath.nstr(confirm, 7)} disagree (relative {float(rel):.1e} > {AGREEMENT_RTOL:g})")
    if bound.side == "lower":
        value = min(float_value, round_down(confirm))
        info["rounded"] = "down"
    else:
        value = max(float_value, round_up(confirm))
        info["rounded"] = "up"
    return Verification(value, True, info)
