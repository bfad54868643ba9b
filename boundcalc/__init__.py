"""boundcalc: minimax bounds for private statistical estimation as executable, checked mathematics.

    import boundcalc as bc
    res = bc.rate("mean", privacy="approx", k=4, n=1000, eps=1.0, delta=1e-6, d=1)
    res.lower.value, res.upper.value, res.ratio, res.rate.expr

The heavy modules are imported lazily (on first attribute access).

The package is layered by folder, lowest first: ``cache/`` (disk stores, the expression codec), ``core/``
(errors, parameters, privacy and point models, sympy helpers, solver, the Bound/Problem registry),
``privacy_relations/``, then the mathematics (``methods/``, ``mechanisms/``, ``problems/``), ``render/`` (result
records and their formats), ``app/`` (API, checks, planning, tables, docs pages) and, at the top, ``cli``,
``clihelp`` and ``plotting`` (README, "How it is built"; tests/test_layering.py keeps it so). Modules are
imported by their folder path (``boundcalc.core.symbolic``, ``boundcalc.core.bounds``, ``boundcalc.app.api``, ...).
"""
__version__ = "0.1.0"

_LAZY = {
    "rate": ("app.api", "rate"),
    "resolve": ("app.api", "resolve"),
    "mechanism": ("app.api", "mechanism"),
    "evaluate_curve": ("app.api", "evaluate_curve"),
    "list_problems": ("app.api", "list_problems"),
    "check": ("app.simulate", "check"),
    "convert": ("privacy_relations.relations", "convert"),
    "plan": ("app.planning", "plan"),
    "plan_study": ("app.study", "plan_study"),
    "table": ("app.export", "table"),
    "plot": ("plotting", "plot"),
    "InputError": ("core.errors", "InputError"),
}

__all__ = list(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(f"{__name__}.{mod}"), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'boundcalc' has no attribute {name!r}")


def __dir__():
    """The module's own names plus the lazily imported API (so ``dir(boundcalc)`` and tab completion list it)."""
    return sorted(set(globals()) | set(_LAZY))
