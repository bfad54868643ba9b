"""The notebooks in notebooks/ are stored executed (outputs in place, written by notebooks/execute.py), they
still run clean (executed again with nbclient; any error fails the test), and what they show is what the code
prints today: every stored text output (the streams, and of each rich output the form a reader sees: HTML,
markdown, LaTeX or plain text) equals the fresh one, numbers included (see RTOL), wall times excepted. A stale number fails with the cell, the stored and the fresh text, and
the fix: ``python notebooks/execute.py``."""
import os
import pathlib
import re

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


#: a number printed rounded must be printed the same (digit for digit); a float printed in full (at least
#: FULL_DIGITS significant digits in both) may differ in its last digits (an optimiser's free parameter found
#: from a cold or a warm cache), by RTOL relative at most
RTOL = 1e-6
FULL_DIGITS = 12
NUMBER_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
#: wall times, which differ from run to run ("PASSED in 2.2 s")
VOLATILE_RE = re.compile(r"\bin \d+(?:\.\d+)? ?(?:s|ms|min)\b")
#: of a rich output, the form a reader sees (Jupyter and GitHub show the first present); the others (the
#: dataclass repr behind an HTML table, say) are fallbacks
TEXT_TYPES = ("text/html", "text/markdown", "text/latex", "text/plain")


def _texts(cell) -> list:
    """A code cell's text outputs as (kind, text): the streams joined per stream (the kernel may split one
    print into several stream outputs), then the shown text form of every rich output, in order (a figure
    is compared by its text form only, '<Figure size ... with 1 Axes>')."""
    streams, rich = {}, []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            streams[out.get("name")] = streams.get(out.get("name"), "") + "".join(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            data = out.get("data", {})
            rich += [(kind, "".join(data[kind])) for kind in TEXT_TYPES if kind in data][:1]
    return sorted(streams.items()) + rich


def _split(text: str):
    """(the text with wall times masked and numbers replaced by #, the numbers as printed)."""
    text = VOLATILE_RE.sub("in <time>", text)
    return NUMBER_RE.sub("#", text), NUMBER_RE.findall(text)


def _digits(number: str) -> int:
    """Significant digits of a printed number."""
    return len(re.split("[eE]", number)[0].lstrip("+-").replace(".", "").lstrip("0"))


def _same_number(x: str, y: str, rtol: float) -> bool:
    if x == y:
        return True
    if min(_digits(x), _digits(y)) < FULL_DIGITS:
        return False
    fx, fy = float(x), float(y)
    return abs(fx - fy) <= rtol * max(abs(fx), abs(fy))


def _same(stored: str, fresh: str, rtol: float) -> bool:
    (a, xs), (b, ys) = _split(stored), _split(fresh)
    return a == b and len(xs) == len(ys) and all(_same_number(x, y, rtol) for x, y in zip(xs, ys))


def stale_outputs(stored_nb, fresh_nb, rtol: float = RTOL) -> list:
    """Every code cell whose stored text outputs differ from the fresh ones: (cell index, stored, fresh)."""
    stored = [c for c in stored_nb["cells"] if c["cell_type"] == "code"]
    fresh = [c for c in fresh_nb["cells"] if c["cell_type"] == "code"]
    assert len(stored) == len(fresh)
    bad = []
    for i, (s, f) in enumerate(zip(stored, fresh)):
        ts, tf = _texts(s), _texts(f)
        if [k for k, _ in ts] != [k for k, _ in tf] or not all(_same(a, b, rtol) for (_, a), (_, b) in zip(ts, tf)):
            bad.append((i, ts, tf))
    return bad


def _diff_lines(stored: list, fresh: list, most: int = 3) -> str:
    """The first few differing lines of each differing output, stored then fresh."""
    out = []
    for (kind, a), (_, b) in zip(stored, fresh):
        pairs = [(la, lb) for la, lb in zip(a.splitlines(), b.splitlines()) if not _same(la, lb, RTOL)]
        for la, lb in pairs[:most]:
            out.append(f"  {kind}: stored {la.strip()[:150]!r}\n  {' ' * len(kind)}  fresh  {lb.strip()[:150]!r}")
    if [k for k, _ in stored] != [k for k, _ in fresh]:
        out.append(f"  outputs stored {[k for k, _ in stored]}, fresh {[k for k, _ in fresh]}")
    return "\n".join(out) or "  (line counts differ)"


def test_the_comparison_finds_a_stale_number():
    """notebook 03's check table before it was re-executed (0.003311 stored, 0.0031 printed by the code)."""
    def nb(*texts):
        return {"cells": [{"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": t}
                                                              for t in texts]}]}
    old = "       316    0.002836    0.003311      [0.002372, 0.004251]\nPASSED in 2.2 s\n"
    new = "       316    0.002836      0.0031      [0.002317, 0.003882]\nPASSED in 3.0 s\n"
    assert [i for i, *_ in stale_outputs(nb(old), nb(new))] == [0]
    assert stale_outputs(nb(old), nb(old.replace("2.2 s", "9.9 s"))) == []  # a wall time is not a result
    assert stale_outputs(nb(old), nb(old[:20], old[20:])) == []  # one print split into two stream outputs
    full = "{'T': 2.8348812209338536}"
    assert stale_outputs(nb(full), nb("{'T': 2.834881086443136}")) == []  # last digits of a free parameter
    assert stale_outputs(nb(full), nb("{'T': 2.8349}")) != []
    assert stale_outputs(nb(full), nb("{'T': 2.834891086443136}")) != []  # beyond RTOL
    assert stale_outputs(nb("n sufficient 2,633"), nb("n sufficient 2,634")) != []
    assert stale_outputs(nb("delta=1e-06"), nb("delta=1.000e-06")) != []  # the text changed, not only a value


def _need(module):
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is missing in CI (it is in the test extra)")
        pytest.skip(f"{module} not installed")


def test_the_three_notebooks_exist():
    names = [p.name for p in NOTEBOOKS]
    assert any("tour" in n for n in names) and any("planning" in n for n in names)
    assert any("simulation" in n for n in names)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_with_its_outputs(path):
    """Stored as executed by notebooks/execute.py: every code cell run once, in order, and none failed."""
    import json

    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c.get("execution_count") for c in code] == list(range(1, len(code) + 1)), \
        f"{path.name}: not executed top to bottom; run python notebooks/execute.py"
    assert any(c.get("outputs") for c in code)
    for c in code:
        for out in c.get("outputs", []):
            assert out.get("output_type") != "error", (path.name, out)
            assert "Traceback" not in "".join(out.get("text", "")), (path.name, out)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_clean_and_its_stored_outputs_are_current(path, tmp_path):
    nbformat = _need("nbformat")
    nbclient = _need("nbclient")
    _need("ipykernel")
    _need("matplotlib")
    stored = nbformat.read(path, as_version=4)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError on any error
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", out
            if out.get("name") == "stderr":
                assert "Traceback" not in out.get("text", ""), out["text"]
    stale = stale_outputs(stored, nb)
    assert not stale, (f"{path.name}: the stored outputs of {len(stale)} code cell(s) differ from what the code "
                       "prints today; run `python notebooks/execute.py " + f"notebooks/{path.name}`\n" + "\n".join(
                           f"code cell {i + 1}:\n{_diff_lines(s, f)}" for i, s, f in stale))
