"""Problem modules. Each module registers its (problem, privacy) entries with :mod:`boundcalc.bounds`.

:func:`load_all` imports every module of this package, so a new problem needs no edit elsewhere.
"""
import importlib
import pkgutil


def load_all():
    for mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if not mod.startswith("_"):
            importlib.import_module(f"{__name__}.{mod}")
