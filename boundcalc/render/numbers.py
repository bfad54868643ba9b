"""Numbers and expressions as the renderers print them (the lowest module of ``render/``: the result records and
their notebook display both use it, and it imports neither)."""
from __future__ import annotations

import math

from ..core import symbolic


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
    try:
        return a == b or symbolic.simplify(a - b) == 0  # memoised on disk (boundcalc.core.symbolic)
    except Exception:  # sympy may fail to simplify exotic functions: treat them as different
        return False
