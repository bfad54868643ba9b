"""The base class of special sympy functions (boundcalc.core.symbolic.ScalarFunction): a subclass declares its
arity, a scalar value function and its LaTeX; the base supplies the vectorised numpy code, the mpmath path
and the exponent wrapping of the LaTeX."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy as sp

from boundcalc.core import symbolic as S


def test_a_subclass_gets_numpy_mpmath_and_latex():
    calls = []

    def hypot_value(x, y):
        calls.append((x, y))
        return math.hypot(x, y) if x >= 0 else math.nan

    class ProbeHypot(S.ScalarFunction):
        nargs = 2
        scalar_value = staticmethod(hypot_value)
        latex = r"h({0}, {1})"

    try:
        x, y = sp.symbols("x y")
        f = ProbeHypot(x, y)
        assert sp.latex(f) == "h(x, y)"
        assert sp.latex(sp.sqrt(f)) == r"\sqrt{h(x, y)}"
        assert sp.latex(f ** 3) == r"\left(h(x, y)\right)^{3}"
        fn = S.numpy_lambdify([x, y], 2 * f)
        got = fn(np.array([3.0, 5.0, -1.0]), np.array([4.0, 12.0, 1.0]))  # broadcast, elementwise
        assert np.allclose(got[:2], [10.0, 26.0]) and math.isnan(got[2])
        assert fn(3.0, 4.0) == 10.0
        mp = S.MPMATH_IMPL["ProbeHypot"](mpmath.mpf(6), mpmath.mpf(8))
        assert isinstance(mp, mpmath.mpf) and mp == 10
        assert mpmath.isnan(S.MPMATH_IMPL["ProbeHypot"](mpmath.mpf(-1), mpmath.mpf(1)))
    finally:
        S.NUMPY_IMPL.pop("ProbeHypot", None)
        S.MPMATH_IMPL.pop("ProbeHypot", None)


def test_without_latex_the_default_printing_is_kept():
    class ProbePlain(S.ScalarFunction):
        nargs = 1
        scalar_value = staticmethod(lambda t: 2 * t)

    try:
        t = sp.Symbol("t")
        assert sp.latex(ProbePlain(t)) == sp.latex(sp.Function("ProbePlain")(t))
        assert S.NUMPY_IMPL["ProbePlain"](np.array([1.0, 2.0])).tolist() == [2.0, 4.0]
    finally:
        S.NUMPY_IMPL.pop("ProbePlain", None)
        S.MPMATH_IMPL.pop("ProbePlain", None)


def test_the_converted_functions_use_the_base():
    from boundcalc.mechanisms.privunit import PrivUnitFactor
    from boundcalc.mechanisms.sparse_binary import PrivUnitInnerMoment
    from boundcalc.methods.ldp_mutual_info import ErasedInfo, ErasedInfoSharp

    for cls in (PrivUnitFactor, PrivUnitInnerMoment, ErasedInfo, ErasedInfoSharp):
        assert issubclass(cls, S.ScalarFunction)
        assert cls.__name__ in S.NUMPY_IMPL and cls.__name__ in S.MPMATH_IMPL
