"""Shipped derivations: docs/ pages exist for every problem and every cited method, the package never
cites THEOREMS.md (a file users do not have), and ``rate --explain`` prints the derivation and docs link
of the reported bounds."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cases import PAIRS  # tests/cases.py: every (problem, privacy) pair

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "boundcalc"
DOCS = ROOT / "docs"
DOC_RE = re.compile(r"docs/(?:problems|methods)/[a-z0-9-]+\.md|docs/README\.md")
# pages written by other branches together with their lemmas (linked from docs/README.md)
PENDING: set = set()  # every cited page exists


def _pkg_files():
    return [p for p in PKG.rglob("*") if p.is_file() and p.suffix in (".py", ".txt", ".json", ".md")]


def test_no_theorems_md_citation_in_package():
    bad = [f"{p.relative_to(ROOT)}:{i}" for p in _pkg_files()
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "THEOREMS.md" in line]
    assert not bad, "cite docs/ pages and papers instead of THEOREMS.md: " + ", ".join(bad[:10])


def test_every_cited_docs_page_exists():
    cited = {m for p in _pkg_files() for m in DOC_RE.findall(p.read_text(encoding="utf-8"))}
    assert cited, "the package should cite its docs pages"
    missing = sorted(c for c in cited if not (ROOT / c).is_file() and Path(c).stem not in PENDING)
    assert not missing, missing


def _update_readme():
    import importlib.util

    spec = importlib.util.spec_from_file_location("update_readme", ROOT / "benchmarks" / "update_readme.py")
    ur = importlib.util.module_from_spec(spec)
    sys.modules["update_readme"] = ur  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(ur)
    return ur


def _registered() -> list:
    import boundcalc as bc

    return sorted({r["problem"] for r in bc.list_problems()})


def test_every_problem_has_a_page_found_by_its_name():
    """A new problem needs its page docs/problems/<name>.md and nothing else here: `boundcalc docs <name>` and
    `rate --explain` find it by name, and the wheel ships it (tests/test_docs_shipped.py)."""
    from boundcalc.app.docpages import page_name

    for name in _registered():
        assert (DOCS / "problems" / f"{name}.md").is_file(), f"docs/problems/{name}.md is missing"
        assert page_name(name) == f"problems/{name}" == page_name(f"docs/problems/{name}.md")


def test_the_docs_index_lists_problems_as_the_registry_and_pages_give_them():
    """Each problem line of docs/README.md is what `python benchmarks/update_readme.py` makes from the registry
    (name, privacy models) and the page's title; a problem registered since the last run is not listed yet
    (that is not an error: a new problem is its module and its page)."""
    ur = _update_readme()
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    generated = ur.index_lines()
    assert set(generated) == set(_registered())
    listed = ur.index_problems(index)
    assert len(listed) >= 8, "the docs index lists no problems: run python benchmarks/update_readme.py"
    bad = ur.index_mismatches(index, generated)
    assert not bad, "docs/README.md is stale (run python benchmarks/update_readme.py):\n" + "\n".join(bad)


def test_the_index_check_accepts_a_new_problem_and_rejects_a_stale_line(tmp_path):
    ur = _update_readme()
    (tmp_path / "problems").mkdir()
    for name, title in (("mean", "Mean estimation (`--problem mean`)"), ("bernoulli", "Bernoulli mean")):
        (tmp_path / "problems" / f"{name}.md").write_text(f"# {title}\n\ntext\n", encoding="utf-8")
    rows = [{"problem": "mean", "privacy": "none"}, {"problem": "mean", "privacy": "pure"}]
    before = ur.index_lines(rows, tmp_path)
    assert before == {"mean": "- [mean](problems/mean.md) — Mean estimation; privacy: none, pure"}
    index = "# x\n\n## Problems\nintro\n\n" + "\n".join(before.values()) + "\n\n## Methods\n- [a](methods/a.md)\n"
    after = ur.index_lines(rows + [{"problem": "bernoulli", "privacy": "pure"}], tmp_path)
    assert ur.index_mismatches(index, after) == []  # a new problem: nothing to edit by hand
    assert list(ur.index_problems(ur.update_index(index, after))) == ["bernoulli", "mean"]
    assert "## Methods\n- [a](methods/a.md)" in ur.update_index(index, after)
    stale = ur.index_lines(rows + [{"problem": "mean", "privacy": "approx"}], tmp_path)
    assert len(ur.index_mismatches(index, stale)) == 1  # a privacy model added to a listed problem
    assert len(ur.index_mismatches(index.replace("[mean](problems/mean.md)", "[mean](problems/mean2.md)"),
                                   before)) == 1
    assert len(ur.index_mismatches(index, {})) == 1  # a listed problem that is not registered


def test_every_method_page_is_in_the_index():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for page in (DOCS / "methods").glob("*.md"):
        assert f"methods/{page.name}" in index, page.name


def test_relative_links_inside_docs_resolve():
    link = re.compile(r"\]\(([^)#]+\.md)\)")
    bad = []
    for page in DOCS.rglob("*.md"):
        for target in link.findall(page.read_text(encoding="utf-8")):
            if not (page.parent / target).resolve().is_file() and Path(target).stem not in PENDING:
                bad.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not bad, bad


def test_json_sources_never_cite_theorems_md():
    import boundcalc as bc

    for name, priv in [("mean", "pure"), ("mean", "local"), ("support", "tv"), ("multinomial", "local"),
                       ("gaussian", "local"), ("point", "pure")]:
        d = bc.rate(name, privacy=priv).to_dict()
        for b in d["lowers"] + d["uppers"]:
            assert "THEOREMS" not in b["source"] and "THEOREMS" not in b["derivation"], (name, priv, b["name"])


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "boundcalc.cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)


@pytest.mark.parametrize("args", [("--problem", "mean", "--privacy", "approx", "--k", "4"),
                                  ("--problem", "multinomial", "--privacy", "local", "--d", "10")])
def test_rate_explain_prints_both_derivations_and_docs(args):
    import boundcalc as bc

    out = _cli("rate", *args, "--explain")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    kw = {args[i].lstrip("-"): args[i + 1] for i in range(4, len(args), 2)}
    res = bc.rate(args[1], privacy=args[3], **kw)
    for b in (res.lower, res.upper):
        assert b.label in text
        assert " ".join(b.derivation.split())[:60] in text
        assert b.source in text
    pages = set(DOC_RE.findall(out.stdout))
    assert f"docs/problems/{args[1]}.md" in pages
    for page in pages:
        assert (ROOT / page).is_file(), page


def test_explain_excludes_json_and_latex():
    out = _cli("rate", "--problem", "mean", "--privacy", "pure", "--explain", "--json")
    assert out.returncode == 2 and "\n" not in out.stderr.strip()


@pytest.mark.parametrize("problem,privacy", PAIRS)
def test_explain_reaches_existing_docs_for_every_pair(problem, privacy):
    import boundcalc as bc

    res = bc.rate(problem, privacy=privacy)
    text = res.explain()
    pages = set(DOC_RE.findall(text))
    assert f"docs/problems/{problem}.md" in pages
    assert all((ROOT / p).is_file() or Path(p).stem in PENDING for p in pages), pages
    for b in (res.lower, res.upper):
        if b is not None:
            assert b.label in text and (b.derivation or "(none recorded)").split()[0] in text
