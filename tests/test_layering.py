"""The package's layering, read from the source (AST), so that it cannot silently decay.

The layers (README, "How it is built"), lowest first. A module may import only modules of its own layer
or of a lower one; the mathematics (problems, methods, mechanisms) never imports the application layer,
and the passive registry (bounds.py) imports no problem module. Mechanism, channel and noise choices
inside problem and mechanism modules are tables keyed by name, never ``if mech == "..."`` branches.
"""
from __future__ import annotations

import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "boundcalc"

#: folder (or module at the package root) -> layer; lower numbers are lower layers
LAYERS = {
    "cache": 0, "core": 1, "privacy_relations": 2, "methods": 3, "mechanisms": 3, "problems": 4,
    "render": 5, "app": 6, "plotting": 7, "clihelp": 7, "cli": 8, "__main__": 9, "__init__": 9,
}
#: inside a folder the modules are layered too (a module not listed: layer 0 of its folder)
WITHIN = {
    "core": {"errors": 0, "latex": 0, "distributions": 0, "params": 1, "gauss_calibration": 1, "symbolic": 2,
             "privacy": 2, "models": 3, "bounds": 3, "solver": 4, "certify": 4},
    "privacy_relations": {"chtp": 0, "relation_table": 1, "relations": 2},
    "render": {"fileio": 0, "numbers": 0, "outpath": 1, "study_result": 1, "notebook": 2, "result": 3,
               "plan_result": 4, "table_result": 4},
    "app": {"catalog": 0, "docpages": 0, "result_cache": 0, "composition": 0, "study_file": 0, "api": 1,
            "simulate": 2, "planning": 2, "export": 2, "study": 3},
}
APPLICATION = {"app", "cli", "clihelp", "plotting"}


def _unit(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _rank(dotted: str) -> tuple:
    """(layer of the folder, layer inside it) of a module named ``boundcalc.<folder>.<module>`` or
    ``boundcalc.<module>``."""
    parts = dotted.split(".")[1:]
    unit = parts[0] if parts else "__init__"
    inner = WITHIN.get(unit, {}).get(parts[1], 0) if len(parts) > 1 else 0
    return LAYERS.get(unit, -1), inner


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    return ".".join(("boundcalc",) + rel.parts)


def _imported_modules(path: pathlib.Path) -> set[str]:
    """The package modules a module imports (dotted, absolute), at top level or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path).split(".")[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = (node.module or "").split(".")
            else:
                base = package[:len(package) - (node.level - 1)] + ((node.module or "").split(".") if node.module else [])
            if base[0] != "boundcalc":
                continue
            if len(base) == 1 or (len(base) == 2 and base[1] in LAYERS and base[1] not in ("cli", "plotting", "clihelp")):
                out.update(".".join(base + [a.name]) for a in node.names)  # from boundcalc.core import symbolic
            else:
                out.add(".".join(base))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "boundcalc")
    return out


def _imported_units(path: pathlib.Path) -> set[str]:
    """The folders / root modules a module imports."""
    out = set()
    for m in _imported_modules(path):
        parts = m.split(".")[1:]
        if parts:
            out.add(parts[0])
    return out - {"", "__version__"}


MODULES = sorted(p for p in PKG.rglob("*.py"))


def test_every_unit_has_a_layer():
    missing = sorted({_unit(p) for p in MODULES} - set(LAYERS))
    assert not missing, f"add these to LAYERS (and README's 'How it is built'): {missing}"
    for folder, inner in WITHIN.items():
        assert set(inner) <= {p.stem for p in (PKG / folder).glob("*.py")}, folder


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_imports_a_layer_above_it(path):
    me = _module_name(path)
    if _unit(path) in ("__init__", "__main__") and len(path.relative_to(PKG).parts) == 1:
        return
    above = {m for m in _imported_modules(path) if _rank(m) > _rank(me) and _rank(m)[0] >= 0}
    assert not above, f"{path.relative_to(PKG)} (layer {_rank(me)}) imports higher layers {above}"


@pytest.mark.parametrize("path", [p for p in MODULES if _unit(p) in ("problems", "methods", "mechanisms")],
                         ids=lambda p: str(p.relative_to(PKG)))
def test_mathematics_never_imports_the_application(path):
    bad = _imported_units(path) & APPLICATION
    assert not bad, f"{path.relative_to(PKG)} imports {bad}"


def test_modules_import_by_their_folder_path_only():
    """No module sits at the package root besides the top layer, and the flat names of the modules in folders do
    not import (there is no alias table nor import hook: ``boundcalc.core.symbolic``, not ``boundcalc.symbolic``)."""
    import importlib
    import boundcalc

    roots = {p.stem for p in PKG.glob("*.py")}
    assert roots == {"__init__", "__main__", "cli", "clihelp", "plotting"}, roots
    assert not hasattr(boundcalc, "MOVED")
    for folder in ("cache", "core", "privacy_relations", "render", "app"):
        for path in sorted((PKG / folder).glob("[!_]*.py")):
            with pytest.raises(ModuleNotFoundError):
                importlib.import_module(f"boundcalc.{path.stem}")


def test_dir_lists_the_lazy_api():
    import boundcalc

    assert set(boundcalc.__all__) <= set(dir(boundcalc)) and "__version__" in dir(boundcalc)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_every_import_names_a_layer(path):
    """Every package import goes through a folder or a top module (a flat name such as ``from .. import symbolic``
    in a folder, or ``boundcalc.bounds``, would not import)."""
    stray = _imported_units(path) - set(LAYERS) - {"__version__"}
    assert not stray, f"{path.relative_to(PKG)} imports {stray}, which is not a folder or a top module"


def test_registry_imports_no_problem():
    assert "problems" not in _imported_units(PKG / "core" / "bounds.py")


def test_the_scan_sees_imports_inside_functions(tmp_path):
    """The scanner itself: an import hidden in a function body is found (else the tests above could not fail)."""
    fake = PKG / "problems" / "_layering_probe_do_not_ship.py"
    fake.write_text("def f():\n    from ..app.api import rate\n    return rate\n", encoding="utf-8")
    try:
        assert "app" in _imported_units(fake)
    finally:
        fake.unlink()


def _string_branches(path: pathlib.Path) -> list[str]:
    """``if <name> == "<string>"`` comparisons on a mechanism / channel / bound-name variable."""
    names = {"mech", "mechanism", "channel", "mech_name", "bound_name", "noise"}
    hits = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        tests = []
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            tests.append(node.test)
        for test in tests:
            for cmp in ast.walk(test):
                if (isinstance(cmp, ast.Compare) and isinstance(cmp.left, (ast.Name, ast.Attribute))
                        and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in cmp.ops)
                        and any(isinstance(c, ast.Constant) and isinstance(c.value, str) for c in cmp.comparators)):
                    left = cmp.left.id if isinstance(cmp.left, ast.Name) else cmp.left.attr
                    owner = ast.unparse(cmp.left.value) if isinstance(cmp.left, ast.Attribute) else ""
                    if left in names or (left == "name" and owner.split(".")[-1] in ("up", "upper", "lower")):
                        hits.append(f"line {cmp.lineno}: {ast.unparse(cmp)}")
    return hits


@pytest.mark.parametrize("path", sorted((PKG / "problems").glob("*.py")) + sorted((PKG / "mechanisms").glob("*.py")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_mechanism_string_branches_in_problems(path):
    """Problems and mechanisms choose a mechanism, channel or noise from a table (a dict keyed by its name)."""
    assert not _string_branches(path), f"{path.name}: use a table keyed by name: {_string_branches(path)}"


def test_the_branch_scan_can_fail():
    src = PKG.parent / "tests" / "_branch_probe.py"
    src.write_text('def f(mech, t):\n    a = 1 if mech == "subset" else 0\n    if t.upper.name != "x":\n'
                   '        a += 1\n    return a\n', encoding="utf-8")
    try:
        assert len(_string_branches(src)) == 2
    finally:
        src.unlink()
