"""Numbers and expressions as the renderers print them (the lowest module of ``render/``: the result records and
their notebook display both use it, and it imports neither)."""
from __future__ import annotations

import math

from ..core.params import _fmt as _exact  # the form of the parameter ranges in help and error messages


def finite_or_none(x):
    """JSON-safe number: a finite float, or None (never NaN/inf in output)."""
    if x is None:
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def format_number(x, digits=4):
    if x is None:
        return "n/a"
    if isinstance(x, int):
        return str(x)
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        return f"{x:.{digits}g}"
    return f"{x:.{digits - 1}e}"


def same_expression(a, b) -> bool:
    """Whether ``b`` equals ``a`` (None: nothing to compare with, so yes), exactly or after simplification."""
    if a is None:
        return True
    from ..core import symbolic  # sympy: only where expressions are compared (plans print none)

    try:
        return a == b or symbolic.simplify(a - b) == 0  # memoised on disk (boundcalc.core.symbolic)
    except Exception:  # sympy may fail to simplify exotic functions: treat them as different
        return False


def format_param(v) -> str:
    """A problem parameter as shown in every header (text, HTML, plan, table, check): as a user types it, the
    shortest form that is the same number (r=1, k=4, delta=1e-06, eps=0.25, k=inf, n=1e+18). Computed values
    are shown by :func:`format_number` instead."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if not math.isfinite(v):
        return "inf" if v > 0 else "-inf" if v < 0 else "nan"
    return _exact(v)
