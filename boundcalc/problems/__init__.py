"""Problem modules. Each module registers its (problem, privacy) entries with :mod:`boundcalc.bounds`.

:func:`load_all` imports every module of this package, so a new problem needs no edit elsewhere.
:func:`load_for` imports only the modules that register a given problem name (found by reading the
modules' source for ``register_problem("name", ..., aliases=(...))`` without importing them), which
keeps ``boundcalc rate`` from importing every problem; when the scan finds nothing it loads all.
"""
import importlib
import pkgutil
import re
from functools import lru_cache
from pathlib import Path

_CALL = re.compile(r"register_problem\(\s*[\"']([\w.-]+)[\"'](?P<rest>[^)]*(?:\([^)]*\))?[^)]*)\)")
_STRING = re.compile(r"[\"']([\w.-]+)[\"']")


def _modules():
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def load_all():
    for mod in _modules():
        importlib.import_module(f"{__name__}.{mod}")


@lru_cache(maxsize=None)
def source_index() -> dict:
    """problem name or alias -> module names that call ``register_problem`` for it."""
    index = {}
    here = Path(__file__).parent
    for mod in _modules():
        try:
            text = (here / f"{mod}.py").read_text(encoding="utf-8")
        except OSError:
            continue
        for call in _CALL.finditer(text):
            names = [call.group(1)]
            rest = call.group("rest")
            if "aliases" in rest:
                names += _STRING.findall(rest.split("aliases", 1)[1])
            for name in names:
                index.setdefault(name.lower(), []).append(mod)
    return index


def load_for(name: str) -> bool:
    """Import the modules registering ``name``; False when the source scan does not know it."""
    mods = source_index().get(str(name).strip().lower())
    if not mods:
        return False
    for mod in dict.fromkeys(mods):
        importlib.import_module(f"{__name__}.{mod}")
    # aliases may point at a canonical name registered in further modules
    return True
