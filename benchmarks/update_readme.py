#!/usr/bin/env python
"""Regenerate the output shown in README.md, and the problem list of the docs index, from the current tool (one
command after a merge):

    python benchmarks/update_readme.py            # rewrite README.md and docs/README.md in place
    python benchmarks/update_readme.py --check    # exit 1 (and list the blocks) if either is stale

The docs index (docs/README.md, section "## Problems") lists one line per registered problem, made from the
registry (``bc.list_problems()``: name, privacy models) and the title of the problem's page
(docs/problems/<problem>.md); tests/test_docs.py checks every listed line against them. A new problem needs
no edit here: until this script is run the index simply does not list it yet (``boundcalc docs`` lists every
page). The README shows an excerpt of ``boundcalc list`` (between ``...`` lines), which a new problem does
not break.

README conventions (also used by tests/test_readme.py, which runs every example):

* a console example is a fenced block whose lines start with ``$ boundcalc ...``; the lines after it, up
  to the next ``$`` line or the end of the block, are what the command prints (stdout, then stderr).
  Text after ``  #`` on a ``$`` line is a comment.
* a line that is exactly ``...`` elides any number of output lines; the token ``…`` stands for any one
  word (e.g. a timing). Numbers match to the digits shown; whitespace is not significant.
* a fenced ``python`` block is executed; if it has a line ``# output:``, the following ``# ``-prefixed
  lines are what the code before it prints.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS_INDEX = ROOT / "docs" / "README.md"
INDEX_SECTION = "## Problems"
INDEX_LINE = re.compile(r"- \[([^\]]+)\]\(problems/([^)]+)\.md\)")
ELIDE = "..."
WILD = "…"
_NUM = re.compile(r"^(.*?)([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(\D*)$")


@dataclass
class Example:
    kind: str  # "console" or "python"
    start: int  # index in the README's lines of the first line of the example
    end: int  # one past its last line
    command: str = ""  # console: the arguments after "boundcalc"
    code: str = ""  # python: the code run
    expected: list = field(default_factory=list)  # the output lines shown
    compare: bool = True  # python: False when the block has no "# output:" section (it is only run)


def parse(text: str) -> list[Example]:
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        fence = lines[i].strip()
        if not fence.startswith("```"):
            i += 1
            continue
        lang = fence[3:].strip()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            j += 1
        body = list(range(i + 1, j))
        if lang == "python":
            src = [lines[k] for k in body]
            ex = Example("python", i + 1, j)
            if "# output:" in [s.strip() for s in src]:
                cut = [s.strip() for s in src].index("# output:")
                ex.code = "\n".join(src[:cut])
                ex.expected = [s.strip()[2:] if s.strip().startswith("# ") else s.strip().lstrip("#")
                               for s in src[cut + 1:]]
                ex.start = i + 1 + cut + 1
            else:
                ex.code = "\n".join(src)
                ex.compare = False
            out.append(ex)
        else:
            cur = None
            for k in body:
                s = lines[k]
                if s.startswith("$ boundcalc"):
                    if cur:
                        out.append(cur)
                    cmd = s[len("$ boundcalc"):]
                    cmd = re.split(r"\s{2,}#", cmd)[0].strip()
                    cur = Example("console", k + 1, k + 1, command=cmd)
                elif cur is not None:
                    cur.expected.append(s)
                    cur.end = k + 1
            if cur:
                out.append(cur)
        i = j + 1
    return out


def run_command(command: str, cwd: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), COLUMNS="100")
    res = subprocess.run([sys.executable, "-m", "boundcalc.cli", *shlex.split(command)], capture_output=True,
                         text=True, cwd=cwd, env=env, timeout=900)
    return (res.stdout + res.stderr).rstrip("\n").split("\n")


def run_python(code: str, cwd: str) -> list[str]:
    buf = io.StringIO()
    old = os.getcwd()
    sys.path.insert(0, str(ROOT))
    try:
        os.chdir(cwd)
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    finally:
        os.chdir(old)
        sys.path.remove(str(ROOT))
    return buf.getvalue().rstrip("\n").split("\n")


def run(ex: Example, cwd: str) -> list[str]:
    return run_command(ex.command, cwd) if ex.kind == "console" else run_python(ex.code, cwd)


# ---------------------------------------------------------------------- matching

def _sig_round(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


def _digits(s: str) -> int:
    mant = s.lower().split("e")[0].lstrip("+-").replace(".", "").lstrip("0")
    return max(1, len(mant))


def token_eq(shown: str, actual: str) -> bool:
    if shown == actual:
        return True
    a, b = _NUM.match(shown), _NUM.match(actual)
    if not a or not b or a.group(1) != b.group(1) or a.group(3) != b.group(3):
        return False
    try:
        x, y = float(a.group(2)), float(b.group(2))
    except ValueError:
        return False
    d = _digits(a.group(2))
    return math.isclose(_sig_round(y, d), x, rel_tol=1e-9, abs_tol=0.0) or (x == 0 and y == 0)


def _seq_match(shown: list, actual: list, eq, elide) -> bool:
    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(shown):
            r = j == len(actual)
        elif shown[i] == elide:
            r = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            r = j < len(actual) and eq(shown[i], actual[j]) and go(i + 1, j + 1)
        memo[key] = r
        return r

    return go(0, 0)


def line_eq(shown: str, actual: str) -> bool:
    return _seq_match(shown.split(), actual.split(), lambda s, a: s == WILD or token_eq(s, a), ELIDE)


def output_matches(expected: list, actual: list) -> bool:
    exp = [x.strip() for x in expected if x.strip()]
    act = [x.strip() for x in actual if x.strip()]
    return _seq_match(exp, act, line_eq, ELIDE)


# ---------------------------------------------------------------------- regeneration

def regenerate(expected: list, actual: list) -> list:
    """New shown lines: the actual output, keeping the README's elisions (``...`` lines keep only the
    lines whose first word the README showed; ``…`` tokens stay wildcards)."""
    if ELIDE not in [x.strip() for x in expected]:
        return [_keep_wild(e, a) for e, a in _pair(expected, actual)]
    out, j = [], 0
    for e in expected:
        if e.strip() == ELIDE or not e.strip():
            out.append(e)
            continue
        head = e.split()[0]
        k = next((k for k in range(j, len(actual)) if actual[k].split()[:1] == [head]), None)
        if k is None:
            out.append(e)
            continue
        out.append(_keep_wild(e, actual[k]))
        j = k + 1
    return out


def _pair(expected, actual):
    for i, a in enumerate(actual):
        yield (expected[i] if i < len(expected) else ""), a


def _keep_wild(shown: str, actual: str) -> str:
    toks = shown.split()
    if ELIDE in toks and len(toks) > 1:  # a column elision: keep as many words either side as shown
        i = toks.index(ELIDE)
        head, tail = i, len(toks) - i - 1
        spans = [m.span() for m in re.finditer(r"\S+", actual)]
        if head + tail >= len(spans):
            return actual
        left = actual[:spans[head - 1][1]] if head else ""
        right = actual[spans[len(spans) - tail][0]:] if tail else ""
        # keep the column layout: the elision starts where the shown line had it
        col = shown.index(ELIDE)
        return left.ljust(max(col, len(left) + 1)) + ELIDE + "  " + right
    if WILD not in toks:
        return actual
    s, a = shown.split(), actual.split()
    if len(s) != len(a):
        return actual
    lead = actual[: len(actual) - len(actual.lstrip())]
    return lead + " ".join(x if x == WILD else y for x, y in zip(s, a))


def update(text: str) -> tuple[str, list]:
    lines = text.split("\n")
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        for ex in reversed(parse(text)):  # bottom-up keeps earlier indices valid
            if not ex.compare:  # a python block without "# output:" is only run (by the test)
                continue
            actual = run(ex, tmp)
            if output_matches(ex.expected, actual):
                continue
            stale.append(ex.command or ex.code.split("\n")[-1])
            new = regenerate(ex.expected, actual)
            if ex.kind == "python":
                new = ["# " + x for x in new]
            lines[ex.start:ex.end] = new
    return "\n".join(lines), stale


# ---------------------------------------------------------------------- the docs index's problem list

def page_title(name: str, docs: Path = ROOT / "docs") -> str:
    """The title of docs/problems/<name>.md: its first heading without the command-line part."""
    first = (docs / "problems" / f"{name}.md").read_text(encoding="utf-8").split("\n", 1)[0]
    return re.sub(r"\s*\(`--problem.*$", "", first.lstrip("# ").strip())


def index_lines(rows=None, docs: Path = ROOT / "docs") -> dict:
    """{problem: its line in the docs index}, from the registry (rows of ``bc.list_problems()``) and the
    problem's page."""
    if rows is None:
        sys.path.insert(0, str(ROOT))
        try:
            import boundcalc as bc

            rows = bc.list_problems()
        finally:
            sys.path.remove(str(ROOT))
    privacies: dict = {}
    for r in rows:
        privacies.setdefault(r["problem"], []).append(r["privacy"])
    return {name: f"- [{name}](problems/{name}.md) — {page_title(name, docs)}; privacy: {', '.join(privs)}"
            for name, privs in sorted(privacies.items())}


def _index_span(lines: list) -> tuple[int, int]:
    """(first, one past the last) line of the problem list in the docs index's "## Problems" section."""
    start = lines.index(INDEX_SECTION) + 1
    end = next((k for k in range(start, len(lines)) if lines[k].startswith("## ")), len(lines))
    listed = [k for k in range(start, end) if INDEX_LINE.match(lines[k])]
    if not listed:
        return end, end
    return listed[0], listed[-1] + 1


def index_problems(text: str) -> dict:
    """{problem: line} as the docs index lists them."""
    lines = text.split("\n")
    a, b = _index_span(lines)
    return {INDEX_LINE.match(s).group(2): s for s in lines[a:b] if INDEX_LINE.match(s)}


def index_mismatches(text: str, generated: dict) -> list:
    """Lines of the docs index that are not what the registry and the pages give (an unknown problem, a stale
    title or privacy list, a link that does not match the name). A registered problem not listed yet is not a
    mismatch: the list is completed by running this script."""
    out = []
    for name, line in index_problems(text).items():
        m = INDEX_LINE.match(line)
        if name not in generated or m.group(1) != name or line != generated[name]:
            out.append(f"{line!r}" + (f" should be {generated[name]!r}" if name in generated
                                      else " names no registered problem"))
    return out


def update_index(text: str, generated: dict) -> str:
    """The docs index with its problem list replaced by the generated one (every registered problem)."""
    lines = text.split("\n")
    a, b = _index_span(lines)
    lines[a:b] = list(generated.values())
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    text = README.read_text(encoding="utf-8")
    new, stale = update(text)
    for s in reversed(stale):
        print(f"stale: {s}")
    index = DOCS_INDEX.read_text(encoding="utf-8")
    new_index = update_index(index, index_lines())
    if new_index != index:
        print("stale: the problem list of docs/README.md")
    if "--check" in argv:
        return 1 if stale or new_index != index else 0
    if new != text:
        README.write_text(new, encoding="utf-8")
        print(f"README.md: {len(stale)} example(s) regenerated")
    else:
        print("README.md is up to date")
    if new_index != index:
        DOCS_INDEX.write_text(new_index, encoding="utf-8")
        print("docs/README.md: problem list regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
