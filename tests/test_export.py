"""Tables: the numbers are the API's, every format parses, the LaTeX compiles with pdflatex."""
import csv
import io
import json
import os
import shutil
import subprocess

import pytest
import sympy as sp

import boundcalc as bc
from boundcalc.core import symbolic as S
from boundcalc.cli import main
from boundcalc.core.errors import InputError
from boundcalc.app.export import FORMATS, table, tex_text, write_atomic

PARAMS = dict(k=4, n=10 ** 4, eps=0.5)
CENTRAL = ["none", "pure", "smooth", "approx", "tv", "kl"]


@pytest.fixture(scope="module")
def mean_table():
    return table("mean", **PARAMS)


def test_rows_are_the_api_numbers(mean_table):
    privs = [r.privacy for r in mean_table.rows]
    assert privs[:6] == CENTRAL  # Barber & Duchi Table 1: every central model (local too once registered)
    for row in mean_table.rows:
        res = bc.rate("mean", row.privacy, **{k: v for k, v in PARAMS.items()  # no level without privacy
                                              if row.privacy != "none" or k not in ("eps", "delta")})
        assert row.lower == pytest.approx(res.lower.value, rel=1e-12)
        assert row.upper == pytest.approx(res.upper.value, rel=1e-12)
        assert row.ratio == pytest.approx(row.upper / row.lower)
        assert 0 < row.lower <= row.upper
        assert row.rate_expr == res.rate_expr


def test_table1_rates_are_barber_duchi(mean_table):
    """Table 1 rows at k = 4: privacy terms r²(d/(nε))^{3/2}, r²(d log(1/δ)/(nε)²)^{3/4}, ..."""
    r, n, d, e, a, dl = S.r, S.n, S.d, S.eps, S.alpha, S.delta
    q = sp.Rational(3, 2)
    expect = {
        "none": r ** 2 / n,
        "pure": r ** 2 / n + r ** 2 * (d / (n * e)) ** q,
        "approx": r ** 2 / n + r ** 2 * (d * sp.log(1 / dl) / (n * e) ** 2) ** (q / 2),
        "kl": r ** 2 / n + r ** 2 * (d / (n ** 2 * a)) ** (q / 2),
        "tv": r ** 2 / n + r ** 2 * (sp.sqrt(d) / (n * a)) ** q,
    }
    rows = {row.privacy: row for row in mean_table.rows}
    for priv, ex in expect.items():
        assert sp.simplify(rows[priv].rate_expr - ex) == 0, priv


def test_every_format_parses(mean_table):
    n = len(mean_table.rows)
    text = mean_table.render("text")
    assert all(p in text for p in CENTRAL) and "nan" not in text.lower()
    md = mean_table.render("markdown").splitlines()
    table_lines = [ln for ln in md if ln.startswith("|")]
    assert len(table_lines) == n + 2 and set(table_lines[1]) <= set("|-: ")
    assert all(ln.count("|") == table_lines[0].count("|") for ln in table_lines)
    rows = list(csv.DictReader(io.StringIO(mean_table.render("csv"))))
    assert len(rows) == n and [r["privacy"] for r in rows][:6] == CENTRAL
    assert float(rows[1]["upper"]) == mean_table.rows[1].upper  # full precision
    js = json.loads(mean_table.render("json"), parse_constant=lambda c: pytest.fail(c))
    assert len(js["rows"]) == n and js["sources"]
    assert js["rows"][0]["lower"] == mean_table.rows[0].lower
    latex = mean_table.to_latex()
    assert latex == mean_table.render("latex")
    for key in (r"\toprule", r"\midrule", r"\bottomrule", r"\caption{", "Barber", r"\begin{table}"):
        assert key in latex
    assert latex.isascii()
    assert latex.count("$") % 2 == 0


def test_bad_format_and_problem():
    t = table("mean", privacies=["pure"])
    with pytest.raises(InputError) as e:
        t.render("xls")
    assert e.value.parameter == "format"
    with pytest.raises(InputError):
        table("nope")
    with pytest.raises(InputError):
        table("mean", privacies=["nope"])
    with pytest.raises(InputError):
        table("mean", eps=-1)


def test_tv_level_falls_back_with_a_note():
    t = table("mean", privacies=["pure", "tv"], eps=2)
    rows = {r.privacy: r for r in t.rows}
    assert rows["pure"].level["value"] == 2 and rows["tv"].level["value"] == 0.5
    assert any("default" in n for n in t.notes)
    assert "default" in t.to_latex() and "default" in t.to_text()


def test_delta_only_in_approx_row():
    t = table("mean", k=4, delta=1e-9)
    rows = {r.privacy: r for r in t.rows}
    assert rows["approx"].level["delta"] == 1e-9 and "delta" not in rows["pure"].level


def test_per_problem_table():
    t = table("all", privacies=["pure"])
    assert len(t.rows) == len({r.problem for r in t.rows}) >= 1
    assert t.multi_problem == (len(t.rows) > 1)
    for fmt in FORMATS:
        assert t.render(fmt)


def test_tex_text_is_ascii():
    s = tex_text("e^ε θ̂ ∈ ℝ^d, ‖x‖₂ ≤ r, ε–δ: 50% & $5 #1 _ {x} ~ ^ \\ | Özgür 𝒫_k §2.1 √n ≍ ∞ ☃")
    assert s.isascii()
    for raw in ("%", "&", "#", "_"):
        assert "\\" + raw in s


def test_write_atomic(tmp_path, monkeypatch):
    p = tmp_path / "t.tex"
    write_atomic(p, "one\n")
    assert p.read_text() == "one\n"
    write_atomic(str(p), "two\n")
    assert p.read_text() == "two\n"
    assert os.listdir(tmp_path) == ["t.tex"]  # no temporary left behind

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(InputError, match="could not be written: disk full"):  # a failed write is bad input (exit 2)
        write_atomic(p, "three\n")
    assert p.read_text() == "two\n" and os.listdir(tmp_path) == ["t.tex"]
    monkeypatch.undo()
    with pytest.raises(InputError):
        write_atomic(tmp_path / "missing" / "t.tex", "x")


def test_cli_table_output(tmp_path, capsys):
    out = tmp_path / "t.tex"
    rc = main(["table", "--problem", "mean", "--k", "4", "--format", "latex", "--output", str(out)])
    captured = capsys.readouterr()
    assert rc == 0 and captured.out == "" and out.read_text().startswith("% generated by boundcalc")
    assert main(["table", "--problem", "mean", "--format", "xls"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["table", "--problem", "mean", "--privacy", "pure,approx", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["privacy"] for r in rows] == ["pure", "approx"]


# ---------------------------------------------------------------------- pdflatex

PDFLATEX = shutil.which("pdflatex")
MINIMAL = "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{amsmath}\n" \
          "\\begin{document}\n\\input{%s}\n\\end{document}\n"


def _need_pdflatex():
    if PDFLATEX is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is missing in CI (.ci/run installs texlive-latex-base and "
                        "texlive-latex-recommended)")
        pytest.skip("pdflatex not installed (and CI is not set)")


def _compile(tmp_path, tex_name):
    doc = tmp_path / "doc.tex"
    doc.write_text(MINIMAL % tex_name)
    p = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    log = (tmp_path / "doc.log").read_text(errors="replace") if (tmp_path / "doc.log").exists() else p.stdout
    assert p.returncode == 0, log[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 1000
    return log


def test_latex_compiles_with_pdflatex(tmp_path):
    _need_pdflatex()
    rc = main(["table", "--problem", "mean", "--format", "latex", "--output", str(tmp_path / "t.tex")])
    assert rc == 0
    log = _compile(tmp_path, "t.tex")
    assert "Undefined control sequence" not in log and "Missing $" not in log


def test_latex_compiles_for_every_problem(tmp_path):
    """Every registered problem's rows (labels, sources, notes with Unicode) compile."""
    _need_pdflatex()
    parts = []
    for name in sorted(__import__("boundcalc.app.catalog", fromlist=["x"]).problems()):
        parts.append(table(name).to_latex())
    (tmp_path / "all.tex").write_text("\n\\clearpage\n".join(parts))
    _compile(tmp_path, "all.tex")
