"""The exact-risk parts of the mechanisms behind the upper bounds (part C of the float64-parts audit,
docs/engineering/certified-floating-point.md, "Exact risks of the mechanisms"), at extreme arguments, against
independent 80-digit references (tests/_float64_parts_c_reference.py, written from the definitions):

- PrivUnit (PrivUnitFactor, PrivUnitAxisMoment, PrivUnitInnerMoment) is computed at the working precision on the
  certification path: its 40-digit value agrees with the reference to 1e-25, and the float64 value to 1e-6;
- the functions that keep a float64 computation with a bracket are on the safe side of their references;
- a planted error on the unsafe side is caught.
"""
from __future__ import annotations

import mpmath
import pytest

import boundcalc.mechanisms.privunit as PU
import boundcalc.mechanisms.sparse_binary as SB
from boundcalc.core import symbolic as S

from _float64_parts_c_reference import privunit_ref

# the arguments certification passes at its extremes (recorded by benchmarks/float64_parts_sweep.py, group c)
PU_CASES = [(2, 1e-8), (100, 5.0), (100000, 1e-8), (100000, 50.0)]


def _privunit_failures(d, eps, plant=0.0):
    """The PrivUnit values at (d, ε) that are off the reference (40-digit value beyond 1e-25, float64 beyond 1e-6);
    ``plant`` perturbs the 40-digit factor relatively (a planted error)."""
    g = PU.privunit_parameters(d, eps)[1]
    m, ew2 = privunit_ref(d, eps, g)
    bad = []
    with mpmath.workdps(40):
        fac = S.MPMATH_IMPL["PrivUnitFactor"](mpmath.mpf(d), mpmath.mpf(eps)) * (1 + mpmath.mpf(plant))
        inner = S.MPMATH_IMPL["PrivUnitInnerMoment"](mpmath.mpf(d), mpmath.mpf(eps))
        ax = [S.MPMATH_IMPL["PrivUnitAxisMoment"](mpmath.mpf(d), mpmath.mpf(eps), k) for k in (1, -1)]
    with mpmath.workdps(80):
        perp = (1 - ew2) / (d - 1)
        refs = {"factor": 1 / m ** 2, "inner": ew2, "axis+": max(ew2, perp), "axis-": min(ew2, perp)}
        for name, v in (("factor", fac), ("inner", inner), ("axis+", ax[0]), ("axis-", ax[1])):
            if abs(v / refs[name] - 1) > 1e-25:
                bad.append((name, "mp", float(v / refs[name] - 1)))
        f64 = {"factor": PU.privunit_factor_value(d, eps), "inner": PU.sq_inner_moment(d, eps),
               "axis+": PU.axis_moment_value(d, eps, "max"), "axis-": PU.axis_moment_value(d, eps, "min")}
        for name, v in f64.items():
            if abs(mpmath.mpf(v) / refs[name] - 1) > 1e-6:
                bad.append((name, "float64", float(mpmath.mpf(v) / refs[name] - 1)))
    return bad


@pytest.mark.parametrize("d,eps", PU_CASES)
def test_privunit_working_precision(d, eps):
    assert {"PrivUnitFactor", "PrivUnitAxisMoment", "PrivUnitInnerMoment"} <= S.HIGH_PRECISION
    assert SB.PrivUnitInnerMoment  # registered with its mpmath implementation
    assert _privunit_failures(d, eps) == []


def test_privunit_planted_error_caught():
    assert _privunit_failures(100, 5.0, plant=-1e-20)
