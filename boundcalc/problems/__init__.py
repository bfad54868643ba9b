"""Problem modules: each registers its (problem, privacy) entries with :mod:`boundcalc.bounds`.

Which module defines which problem is listed in :data:`boundcalc.catalog.PROBLEM_MODULES`; the
catalog imports them on demand.
"""
