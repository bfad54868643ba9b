"""boundcalc: minimax bounds for private statistical estimation as executable, checked mathematics.

    import boundcalc as bc
    res = bc.rate("mean", privacy="approx", k=4, n=1000, eps=1.0, delta=1e-6, d=1)
    res.lower.value, res.upper.value, res.ratio, res.rate.expr

The heavy modules are imported lazily (on first attribute access).
"""
__version__ = "0.1.0"

_LAZY = {
    "rate": ("api", "rate"),
    "resolve": ("api", "resolve"),
    "evaluate_curve": ("api", "evaluate_curve"),
    "list_problems": ("api", "list_problems"),
    "check": ("simulate", "check"),
    "convert": ("relations", "convert"),
    "plan": ("planning", "plan"),
    "table": ("export", "table"),
    "plot": ("plotting", "plot"),
    "InputError": ("errors", "InputError"),
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
