"""The README cannot drift: every console example (``$ boundcalc ...`` and the lines it shows) is run and
compared with what the tool prints (numbers to the digits shown, whitespace ignored, ``...`` lines elided,
``…`` any one word), and every Python snippet is executed (compared when it has ``# output:``).
After a change, ``python benchmarks/update_readme.py`` regenerates the shown outputs."""
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("update_readme", ROOT / "benchmarks" / "update_readme.py")
ur = importlib.util.module_from_spec(_spec)
sys.modules["update_readme"] = ur  # dataclasses resolve annotations through sys.modules
_spec.loader.exec_module(ur)

TEXT = (ROOT / "README.md").read_text(encoding="utf-8")
EXAMPLES = ur.parse(TEXT)


def _id(ex):
    return (ex.command if ex.kind == "console" else "python:" + ex.code.strip().split("\n")[-1])[:60]


def test_readme_has_examples_and_the_two_command_quick_start():
    assert sum(ex.kind == "console" for ex in EXAMPLES) >= 8
    assert sum(ex.kind == "python" for ex in EXAMPLES) >= 2
    assert "pip install -e . && boundcalc rate --problem mean --privacy approx --k 4" in TEXT
    assert "pip install -e '.[test]' && python -m pytest" in TEXT
    assert "THEOREMS.md" not in TEXT
    for cmd in ("rate", "check", "plan", "table", "convert", "list"):
        assert any(ex.command.startswith(cmd + " ") or ex.command == cmd for ex in EXAMPLES), cmd


@pytest.mark.parametrize("ex", EXAMPLES, ids=_id)
def test_readme_example_prints_what_the_readme_shows(ex, tmp_path):
    actual = ur.run(ex, str(tmp_path))
    if ex.kind == "console" or ex.compare:
        assert ex.expected, "an example must show its output"
        assert ur.output_matches(ex.expected, actual), (
            "README.md is stale (run python benchmarks/update_readme.py):\n--- shown\n" + "\n".join(ex.expected)
            + "\n--- printed\n" + "\n".join(actual))


# ---------------------------------------------------------------------- the matcher itself

def test_numbers_match_to_the_digits_shown_only():
    assert ur.token_eq("4.622", "4.621904405")
    assert ur.token_eq("0.001086", "0.001085723212890964")
    assert ur.token_eq("2.349e-04", "2.349e-04")
    assert ur.token_eq("T=2.835", "T=2.8348811")
    assert not ur.token_eq("4.622", "1.155")
    assert not ur.token_eq("4.622", "4.63")
    assert not ur.token_eq("T=2.835", "s=2.835")
    assert not ur.token_eq("1000000", "1000")


def test_elision_and_wildcards():
    assert ur.output_matches(["a 1", "...", "z 3"], ["a 1.0", "b", "c", "z   3"])
    assert not ur.output_matches(["a 1", "z 3"], ["a 1", "b", "z 3"])
    assert ur.line_eq("PASSED in … s", "PASSED in 0.8 s")
    assert not ur.line_eq("PASSED in … s", "FAILED in 0.8 s")
    assert ur.line_eq("none - ... 9.803e-05 1.02 sample", "none - r^2/n same 9.803e-05 1.02 sample")
    assert not ur.output_matches(["a"], [])


def test_update_rewrites_a_stale_block_to_what_the_tool_prints(tmp_path):
    stale = "x\n```\n$ boundcalc convert --from pure --eps 1 --to tv\nold line\n```\n"
    new, which = ur.update(stale)
    assert which and "old line" not in new
    ex = ur.parse(new)[0]
    assert ur.output_matches(ex.expected, ur.run(ex, str(tmp_path)))
    again, which = ur.update(new)
    assert again == new and not which


# ---------------------------------------------------------------------- what a new problem must not break

def _list_example():
    found = [ex for ex in EXAMPLES if ex.kind == "console" and ex.command == "list"]
    assert len(found) == 1
    return found[0]


def test_readme_list_block_is_an_excerpt_a_new_problem_does_not_break(tmp_path):
    """The README shows some lines of `boundcalc list` between `...` lines: they are checked as a subsequence
    of the real output, so a problem added anywhere in the (sorted) list needs no README edit."""
    ex = _list_example()
    shown = [x.strip() for x in ex.expected if x.strip()]
    assert shown[0] == ur.ELIDE and shown[-1] == ur.ELIDE and len(shown) > 4
    actual = ur.run(ex, str(tmp_path))
    assert ur.output_matches(ex.expected, actual)
    new_rows = ["bernoulli  none  --n 1000 --p0 0.5", "bernoulli  pure  --n 1000 --p0 0.5 --eps 1.0"]
    starts = [i for i in range(len(actual) + 1)
              if i in (0, len(actual)) or actual[i - 1].split()[0] != actual[i].split()[0]]
    assert len(starts) >= 9  # between every two problems, and at both ends
    for i in starts:
        assert ur.output_matches(ex.expected, actual[:i] + new_rows + actual[i:]), i
    changed = [line.replace("--k 2.0", "--k 3.0") for line in actual]  # a shown line that changed does fail
    assert not ur.output_matches(ex.expected, changed)


def table_mismatches(text: str, registry: dict) -> list:
    """Rows of the README's problem table (| `name` (`alias`) | privacy, ... | ...) naming a problem or a
    privacy model the registry does not have."""
    out = []
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        name = cells[0].split("`")[1]
        privs = {p.strip() for p in cells[1].split(",")}
        if name not in registry:
            out.append(f"{line[:60]}: no problem {name!r}")
        elif not privs <= registry[name]:
            out.append(f"{line[:60]}: {name} has no privacy model {sorted(privs - registry[name])}")
    return out


def test_readme_problem_table_names_registered_problems_and_models():
    import boundcalc as bc

    registry = {}
    for r in bc.list_problems():
        registry.setdefault(r["problem"], set()).add(r["privacy"])
    rows = [line for line in TEXT.splitlines() if line.startswith("| `")]
    assert len(rows) >= 8
    assert table_mismatches(TEXT, registry) == []
    planted = "| `mean` | none, pure, shuffle | x | y | z |\n| `no-such-problem` | pure | x | y | z |\n"
    assert len(table_mismatches(planted, registry)) == 2
