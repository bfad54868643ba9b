"""Problem modules: each registers its (problem, privacy) entries with :mod:`boundcalc.core.bounds`.

Every module here not starting with ``_`` is a problem module; :mod:`boundcalc.app.catalog` reads from each
Problem subclass's body its ``name``, ``aliases`` and ``privacies`` and imports the modules on demand. The
checklist for a new problem is in the docstring of :class:`boundcalc.core.bounds.Problem`.
"""


def per_user_reps(values, reps, notes):
    """``CheckSpec.prepare`` of the per-user simulations: at most 100 replications when d > 1."""
    if int(values["d"]) > 1 and reps > 100:
        notes.append(f"reps reduced from {reps} to 100 for d > 1 (per-user simulation)")
        return 100
    return reps
