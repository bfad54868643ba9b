"""The derivation pages ship with the package: the build step copies every page under docs/ (README.md,
problems/, methods/, engineering/) into boundcalc/docs/, and an installed copy prints them (``boundcalc docs
<page>``, ``rate --explain``) from there, not from a checkout it does not have. Every page named anywhere a user
reads (the README, the docs pages' links, the package's sources, which are what outputs print) is in the build."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def build_lib(tmp_path_factory):
    """The package as the wheel holds it: setup.py's build_py into a temporary directory."""
    out = tmp_path_factory.mktemp("build-lib")
    r = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return out


PAGE_RE = re.compile(r"docs/[A-Za-z0-9_./-]+?\.md")
LINK_RE = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")


def named_pages() -> dict:
    """{page relative to docs/: where it is named} for every docs page that the README, a docs page's link, or
    the package's sources (citations, derivations, --explain, help texts) name."""
    named = {}

    def add(rel, where):
        named.setdefault(Path(os.path.normpath(rel)).as_posix(), where)

    for m in PAGE_RE.findall((ROOT / "README.md").read_text(encoding="utf-8")):
        add(m[len("docs/"):], "README.md")
    for m in LINK_RE.findall((ROOT / "README.md").read_text(encoding="utf-8")):
        if m.startswith("docs/"):
            add(m[len("docs/"):], "README.md")
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for target in LINK_RE.findall(page.read_text(encoding="utf-8")):
            if "://" not in target:
                add(os.path.relpath(page.parent / target, ROOT / "docs"), page.relative_to(ROOT).as_posix())
    for src in sorted((ROOT / "boundcalc").rglob("*.py")):
        for m in PAGE_RE.findall(src.read_text(encoding="utf-8")):
            add(m[len("docs/"):], src.relative_to(ROOT).as_posix())
    return named


def shipped_pages(build_lib) -> set:
    return {p.relative_to(build_lib / "boundcalc" / "docs").as_posix()
            for p in (build_lib / "boundcalc" / "docs").rglob("*.md")}


def test_named_pages_are_found():
    named = named_pages()
    for page in ("README.md", "engineering/speed.md", "engineering/certified-floating-point.md",
                 "problems/mean.md", "methods/le-cam.md"):
        assert page in named, page
    assert not any(p.startswith("..") for p in named), [p for p in named if p.startswith("..")]


def test_every_named_page_ships_in_the_wheel(build_lib):
    """A page the README, a docs page or an output names, missing from the build, fails here (with where it is
    named)."""
    shipped = shipped_pages(build_lib)
    missing = {p: where for p, where in named_pages().items() if p not in shipped}
    assert not missing, "named but not in the wheel (setup.py DOC_GLOBS, MANIFEST.in): " + ", ".join(
        f"docs/{p} (named in {w})" for p, w in sorted(missing.items()))


def test_build_ships_every_page(build_lib):
    shipped = {p.relative_to(build_lib / "boundcalc" / "docs").as_posix()
               for p in (build_lib / "boundcalc" / "docs").rglob("*.md")}
    expected = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert expected <= shipped and len(expected) > 20
    for rel in expected:
        assert (build_lib / "boundcalc" / "docs" / rel).read_bytes() == (ROOT / "docs" / rel).read_bytes()


def test_sdist_manifest_includes_the_pages():
    text = (ROOT / "MANIFEST.in").read_text()
    assert "recursive-include docs *.md" in text


def test_installed_copy_reads_its_package_data(build_lib, tmp_path):
    """Away from the checkout (no docs/ next to the package), docs and --explain print the shipped page."""
    site = tmp_path / "site"
    shutil.copytree(build_lib, site)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(site), BOUNDCALC_CACHE_DIR=str(tmp_path / "cache"))
    code = "import boundcalc.docpages as d, sys; sys.stdout.write(str(d.docs_root()))"
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith(str(site)), r.stdout + r.stderr
    page = (ROOT / "docs" / "problems" / "mean.md").read_text(encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "boundcalc.cli", "docs", "problems/mean"], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.rstrip() == page.rstrip(), r.stderr
    r = subprocess.run([sys.executable, "-m", "boundcalc.cli", "rate", "--problem", "mean", "--privacy", "approx",
                        "--k", "4", "--explain"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert page.splitlines()[0] in r.stdout and page.rstrip().splitlines()[-1] in r.stdout
    assert str(site) in r.stdout  # where the pages are, on this machine
    speed = (ROOT / "docs" / "engineering" / "speed.md").read_text(encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "boundcalc.cli", "docs", "docs/engineering/speed.md"], env=env,
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.rstrip() == speed.rstrip(), r.stderr


@pytest.mark.parametrize("name", ["problems/mean", "docs/problems/mean.md", "mean", "mean.md",
                                  "methods/le-cam", "docs/methods/le-cam.md", "le-cam", "README"])
def test_page_names(name):
    from boundcalc.docpages import read_page

    text = read_page(name)
    assert text.startswith("# ")


def test_every_cited_page_can_be_printed():
    """Every docs/... page named in the package's sources opens with `boundcalc docs`."""
    import re

    from boundcalc.docpages import page_name

    cite = re.compile(r"docs/(?:problems|methods)/[a-z0-9-]+\.md")
    cited = {m for p in (ROOT / "boundcalc").rglob("*.py") for m in cite.findall(p.read_text(encoding="utf-8"))}
    assert cited
    for c in sorted(cited):
        assert page_name(c) == c[len("docs/"):-len(".md")]


def test_docs_command_lists_pages(capsys):
    from boundcalc.cli import main

    assert main(["docs"]) == 0
    out = capsys.readouterr().out.split()
    assert "problems/mean" in out and "methods/le-cam" in out and "README" in out
