"""Discovery of the problems: which module of :mod:`boundcalc.problems` defines which (problem, privacy) pair,
read from the modules' source text, so that nothing is listed by hand.

The registry (:mod:`boundcalc.core.bounds`) is passive: it stores what problem modules register and imports no
problem. This module, in the application layer, finds the problem modules (every ``boundcalc/problems/*.py``
not starting with ``_``) and reads from each :class:`~boundcalc.core.bounds.Problem` subclass's body its literal
``name``, ``aliases`` and ``privacies`` (a text scan of a few kilobytes, no import): :func:`get_entry` then
imports only the modules that register the pair asked for (``boundcalc rate`` starts fast: importing all nine
problem modules costs about 0.6 s of CPU, one about 0.03 s), :func:`problems` imports all of them.

A new problem module needs no line here. tests/test_catalog.py checks that the scan finds exactly what the
modules register once imported.
"""
from __future__ import annotations

import ast
import functools
import importlib
import pathlib
import re

from ..core import bounds as registry

#: the folder of the problem modules
PROBLEMS_DIR = pathlib.Path(__file__).resolve().parents[1] / "problems"

_CLASS = re.compile(r"^class \w+\((?:\w+\.)*Problem\):\n((?:[ \t]+.*\n|[ \t]*\n)*)", re.M)
_FIELD = re.compile(r"^    (name|aliases|privacies) = (.+)$", re.M)


def _declared(body: str) -> dict:
    """The literal ``name``, ``aliases`` and ``privacies`` of one class body (one line each)."""
    out = {}
    for key, text in _FIELD.findall(body):
        try:
            out[key] = ast.literal_eval(text.split("  #", 1)[0].strip())
        except (ValueError, SyntaxError):
            out[key] = None  # not a literal: the module is then imported for every request (see _index)
    return out


@functools.lru_cache(maxsize=None)
def _index() -> tuple:
    """One row per problem class: (module, name, aliases, privacies), modules in name order. A field that is not
    a literal is None (such a module is imported whenever its problem, or any problem, is asked for)."""
    rows = []
    for path in sorted(PROBLEMS_DIR.glob("[!_]*.py")):
        for body in _CLASS.findall(path.read_text(encoding="utf-8")):
            d = _declared(body)
            if "name" in d:
                rows.append((path.stem, d["name"], tuple(d.get("aliases") or ()), d.get("privacies")))
    return tuple(rows)


def modules() -> tuple:
    """Every problem module (by name), in name order."""
    return tuple(sorted({row[0] for row in _index()}))


def problem_modules() -> dict:
    """problem name -> the modules registering its entries (derived from the sources)."""
    out: dict = {}
    for mod, name, _aliases, _privs in _index():
        out.setdefault(name, [])
        if mod not in out[name]:
            out[name].append(mod)
    return {k: tuple(v) for k, v in out.items()}


_ALL_LOADED = False


def _import(mods):
    for mod in mods:
        importlib.import_module(f"boundcalc.problems.{mod}")


def load_all() -> None:
    """Import every problem module (in module-name order)."""
    global _ALL_LOADED
    if not _ALL_LOADED:
        _ALL_LOADED = True
        _import(modules())


def load_for(name, privacy=None) -> bool:
    """Import the modules of problem ``name`` (or an alias): with ``privacy``, those whose class lists it, else
    all of the problem's; False when the sources declare no such problem (the caller then imports all)."""
    key = str(name).strip().lower()
    rows = [r for r in _index() if r[1] == key or (r[2] is not None and key in r[2])]
    if not rows or any(r[1] is None for r in rows):
        return False
    if privacy is not None:
        chosen = [r for r in rows if r[3] is None or privacy in r[3]]
        rows = chosen or rows
    _import(dict.fromkeys(r[0] for r in rows))
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
