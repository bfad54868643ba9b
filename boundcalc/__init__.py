"""boundcalc: minimax bounds for private statistical estimation as executable, checked mathematics.

    import boundcalc as bc
    res = bc.rate("mean", privacy="approx", k=4, n=1000, eps=1.0, delta=1e-6, d=1)
    res.lower.value, res.upper.value, res.ratio, res.rate.expr

The heavy modules are imported lazily (on first attribute access).

The package is layered by folder, lowest first: ``cache/`` (disk stores, the expression codec), ``core/``
(errors, parameters, privacy and point models, sympy helpers, solver, the Bound/Problem registry),
``privacy_relations/``, then the mathematics (``methods/``, ``mechanisms/``, ``problems/``), ``render/`` (result
records and their formats), ``app/`` (API, checks, planning, tables, docs pages) and, at the top, ``cli``,
``clihelp`` and ``plotting`` (README, "How it is built"; tests/test_layering.py keeps it so). Every module that
moved into a folder is still importable under its old name (``boundcalc.symbolic`` is
``boundcalc.core.symbolic``, the same module object): see :data:`MOVED`.
"""
__version__ = "0.1.0"

_LAZY = {
    "rate": ("app.api", "rate"),
    "resolve": ("app.api", "resolve"),
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


#: modules that moved into a layer folder: old name -> folder. ``import boundcalc.<old>`` gives the very module
#: ``boundcalc.<folder>.<old>`` (one object under two names, so monkeypatching through either name works)
MOVED = {
    **dict.fromkeys(("diskcache", "exprcodec"), "cache"),
    **dict.fromkeys(("errors", "params", "latex", "distributions", "gauss_calibration", "symbolic", "privacy",
                     "models", "solver", "certify", "bounds"), "core"),
    **dict.fromkeys(("chtp", "relation_table", "relations"), "privacy_relations"),
    **dict.fromkeys(("fileio", "outpath", "notebook", "result", "plan_result", "table_result"), "render"),
    **dict.fromkeys(("catalog", "docpages", "result_cache", "api", "simulate", "planning", "export"), "app"),
}


class _OldNames:
    """A meta path finder for the old names of :data:`MOVED`: it imports the module under its new name and
    hands out that same object (its ``__spec__`` stays the real one)."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        pkg, _, leaf = fullname.partition(".")
        if pkg != __name__ or leaf not in MOVED:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(fullname, _OldNames)

    @staticmethod
    def create_module(spec):
        import importlib

        leaf = spec.name.partition(".")[2]
        module = importlib.import_module(f"{__name__}.{MOVED[leaf]}.{leaf}")
        _OldNames._real_specs[spec.name] = module.__spec__
        return module

    @staticmethod
    def exec_module(module):
        # the import system has set ``__spec__`` to the old name's spec: give the module its own back
        for old, spec in list(_OldNames._real_specs.items()):
            if spec.name == module.__name__:
                module.__spec__ = _OldNames._real_specs.pop(old)

    _real_specs: dict = {}


def _install_old_names():
    import sys

    if not any(isinstance(f, type) and f.__name__ == "_OldNames" and getattr(f, "__module__", "") == __name__
               for f in sys.meta_path):
        sys.meta_path.insert(0, _OldNames)  # first: no stale file of an old name (another checkout) can win


_install_old_names()
