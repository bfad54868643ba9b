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

#: module (or package) -> layer; lower numbers are lower layers
LAYERS = {
    "errors": 0, "params": 0, "fileio": 0, "outpath": 0, "latex": 0, "distributions": 0,
    "diskcache": 0.5, "exprcodec": 0.5,
    "symbolic": 1, "privacy": 1, "gauss_calibration": 1, "models": 1,
    "solver": 2, "certify": 2, "bounds": 2, "chtp": 2, "relation_table": 2, "relations": 2,
    "methods": 3, "mechanisms": 3,
    "problems": 4,
    "result": 5, "result_cache": 5, "catalog": 5, "notebook": 5, "plan_result": 5, "table_result": 5,
    "docpages": 5,
    "simulate": 6, "api": 6,
    "planning": 7, "export": 7, "plotting": 7,
    "cli": 8, "clihelp": 8, "__main__": 9, "__init__": 9,
}
APPLICATION = {"api", "cli", "clihelp", "simulate", "planning", "export", "catalog", "notebook", "plotting", "docpages"}


def _unit(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imported_units(path: pathlib.Path) -> set[str]:
    """The package units a module imports, at top level or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    depth = len(path.relative_to(PKG).parts) - 1  # 0 for boundcalc/x.py, 1 for boundcalc/sub/x.py
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module and node.module.split(".")[0] == "boundcalc":
                    parts = node.module.split(".")[1:]
                    out.update([parts[0]] if parts else [a.name for a in node.names])
                continue
            up = node.level - 1  # levels above the module's own package
            if up > depth:
                continue
            mod = (node.module or "").split(".") if node.module else []
            if up == depth:  # relative to boundcalc/
                out.update([mod[0]] if mod else [a.name.split(".")[0] for a in node.names])
            else:  # inside the module's own subpackage
                out.add(_unit(path))
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "boundcalc" and len(parts) > 1:
                    out.add(parts[1])
    return out - {""}


MODULES = sorted(p for p in PKG.rglob("*.py"))


def test_every_unit_has_a_layer():
    missing = sorted({_unit(p) for p in MODULES} - set(LAYERS))
    assert not missing, f"add these to LAYERS (and README's 'How it is built'): {missing}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_imports_a_layer_above_it(path):
    unit = _unit(path)
    if unit in ("__init__", "__main__"):
        return
    above = {u for u in _imported_units(path) if u in LAYERS and LAYERS[u] > LAYERS[unit]}
    assert not above, f"{path.relative_to(PKG)} ({unit}, layer {LAYERS[unit]}) imports higher layers {above}"


@pytest.mark.parametrize("path", [p for p in MODULES if _unit(p) in ("problems", "methods", "mechanisms")],
                         ids=lambda p: str(p.relative_to(PKG)))
def test_mathematics_never_imports_the_application(path):
    bad = _imported_units(path) & APPLICATION
    assert not bad, f"{path.relative_to(PKG)} imports {bad}"


def test_registry_imports_no_problem():
    assert "problems" not in _imported_units(PKG / "bounds.py")


def test_the_scan_sees_imports_inside_functions(tmp_path):
    """The scanner itself: an import hidden in a function body is found (else the tests above could not fail)."""
    fake = PKG / "problems" / "_layering_probe_do_not_ship.py"
    fake.write_text("def f():\n    from ..api import rate\n    return rate\n", encoding="utf-8")
    try:
        assert "api" in _imported_units(fake)
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
