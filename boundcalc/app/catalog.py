"""Discovery of the problems: an explicit table of which module defines which problem.

The registry (:mod:`boundcalc.core.bounds`) is passive: it stores what problem modules register and
imports no problem. This module, in the application layer, knows the problem modules by name (the
table below, no source scanning) and imports them on demand: :func:`get_entry` imports only the
modules of the problem asked for (fast start-up of ``boundcalc rate``), :func:`problems` imports all.

A new problem module is one line in :data:`PROBLEM_MODULES`. Aliases are declared by the problem
modules only; a name the table does not know imports every problem module, then is looked up.
"""
from __future__ import annotations

import importlib

from ..core import bounds as registry

#: problem name -> the modules of :mod:`boundcalc.problems` registering its (problem, privacy) entries,
#: imported in this order
PROBLEM_MODULES = {
    "density": ("density",),
    "gaussian": ("gaussian",),
    "linear": ("linear",),
    "mean": ("local_mean", "mean_central"),
    "multinomial": ("multinomial",),
    "point": ("point",),
    "sparse-bernoulli": ("sparse_bernoulli",),
    "support": ("support",),
}

#: problems whose privacy models are registered by different modules: problem -> privacy model -> the modules
#: that register that model's entry (None: every other model). A request for one model imports only these (a
#: central-mean request does not import the local-mean module); anything else imports the problem's modules.
ENTRY_MODULES = {
    "mean": {"local": ("mean_central", "local_mean"), None: ("mean_central",)},
}

_ALL_LOADED = False


def _import(mods):
    for mod in mods:
        importlib.import_module(f"boundcalc.problems.{mod}")


def load_all() -> None:
    """Import every problem module (in module-name order)."""
    global _ALL_LOADED
    if not _ALL_LOADED:
        _ALL_LOADED = True
        _import(sorted({m for mods in PROBLEM_MODULES.values() for m in mods}))


def load_for(name, privacy=None) -> bool:
    """Import the modules of problem ``name`` (only those of its entry for ``privacy`` when given and listed in
    :data:`ENTRY_MODULES`); False when the table does not know it (an alias: the problem modules declare their
    aliases, so the caller then imports them all)."""
    key = str(name).strip().lower()
    mods = PROBLEM_MODULES.get(key)
    if mods is None:
        return False
    by_privacy = ENTRY_MODULES.get(key)
    if privacy is not None and by_privacy is not None:
        mods = by_privacy.get(privacy, by_privacy.get(None))
    _import(mods)
    return True


# the registry's lookups, now with discovery installed (see the end of this module)
problems = registry.problems
resolve_problem = registry.resolve_problem
get_entry = registry.get_entry
param_specs = registry.param_specs


def with_derived(entry, values: dict) -> dict:
    """``values`` plus the entry's auxiliary values (e.g. the implied TV level)."""
    return entry.with_derived(values)


# the registry's lookups by name see every problem once discovery is available
registry.set_loader(load_for, load_all)
