"""Problem modules: each registers its (problem, privacy) entries with :mod:`boundcalc.core.bounds`.

Which module defines which problem is listed in :data:`boundcalc.app.catalog.PROBLEM_MODULES`; the
catalog imports them on demand.
"""


def per_user_reps(values, reps, notes):
    """``CheckSpec.prepare`` of the per-user simulations: at most 100 replications when d > 1."""
    if int(values["d"]) > 1 and reps > 100:
        notes.append(f"reps reduced from {reps} to 100 for d > 1 (per-user simulation)")
        return 100
    return reps
