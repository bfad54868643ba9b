"""The catalog (boundcalc.app.catalog) derives which module registers which (problem, privacy) pair from the
problem modules' source text; these tests hold that scan against what the modules register once imported, and
check that a single-problem request imports only its own modules."""
from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys

from boundcalc.app import catalog
from boundcalc.core import bounds as registry

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_scan_finds_what_the_modules_register():
    catalog.load_all()
    scanned = {}
    for mod, name, aliases, privacies in catalog._index():
        assert privacies is not None, f"problems/{mod}.py: write privacies = (...) as a literal in the class body"
        scanned.setdefault(name, set()).update((mod, p) for p in privacies)
        assert set(aliases) <= set(registry.lookup_problem(name).aliases), (mod, aliases)
    registered = {}
    for name, info in registry.registered().items():
        if name.startswith("_test"):
            continue
        for problem in info.definitions:
            mod = type(problem).__module__.rsplit(".", 1)[1]
            registered.setdefault(name, set()).update((mod, p) for p in problem.privacies)
    assert scanned == registered


def test_every_problem_module_is_found():
    on_disk = {p.stem for p in catalog.PROBLEMS_DIR.glob("*.py") if not p.stem.startswith("_")}
    assert set(catalog.modules()) == on_disk


def test_the_scan_reads_literals_only(tmp_path, monkeypatch):
    """A class whose privacies are not a literal is imported for every request (never skipped)."""
    src = ('class A(Problem):\n    """x"""\n\n    name = "a"\n    aliases = ("b",)\n    privacies = PRIVS\n'
           '\n\ndef f():\n    pass\n\nclass C(Problem):\n    name = "c"\n    privacies = ("none", "pure")  # c\n')
    (tmp_path / "probe.py").write_text(src)
    monkeypatch.setattr(catalog, "PROBLEMS_DIR", tmp_path)
    catalog._index.cache_clear()
    try:
        assert catalog._index() == (("probe", "a", ("b",), None), ("probe", "c", (), ("none", "pure")))
    finally:
        monkeypatch.undo()
        catalog._index.cache_clear()


_IMPORTED = """
import sys
from boundcalc.app import catalog
catalog.get_entry({problem!r}, {privacy!r})
print(sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("boundcalc.problems.")))
"""


def _imported(problem, privacy):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-c", _IMPORTED.format(problem=problem, privacy=privacy)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return ast.literal_eval(r.stdout.strip())


def test_a_request_imports_only_its_modules():
    assert _imported("support", "pure") == ["support"]
    assert _imported("uniform-support", "pure") == ["support"]  # an alias, read from the source too
    assert _imported("mean", "pure") == ["mean_central"]
    assert _imported("mean", "local") == ["local_mean", "mean_central"]  # local_mean imports mean_central
