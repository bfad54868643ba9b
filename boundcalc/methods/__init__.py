"""Reusable lower-bound machinery (Le Cam, Fano, Assouad, uniformity of mass, contractions, van Trees).

Lemmas that apply to a whole family shape are :class:`boundcalc.core.bounds.Method` objects: a problem lists its
families (e.g. :class:`boundcalc.core.bounds.TwoPointFamily`) and :func:`method_bounds` returns what every
registered method derives from them. Adding such a lemma is one module (registering its Method) plus one
line in :data:`METHOD_MODULES`, plus its tests.
"""
from __future__ import annotations

import importlib

#: the modules that register :class:`boundcalc.core.bounds.Method` objects (imported on first use)
METHOD_MODULES = ("boundcalc.methods.le_cam_methods", "boundcalc.methods.hellinger_assouad",
                  "boundcalc.methods.two_point_bayes")


def method_bounds(family, privacy: str) -> list:
    """Every bound the registered methods derive from ``family`` under ``privacy``, in registration order."""
    from ..core.bounds import registered_methods

    for mod in METHOD_MODULES:
        importlib.import_module(mod)
    return [b for m in registered_methods() if m.applies_to(family, privacy) for b in m.bounds(family, privacy)]
