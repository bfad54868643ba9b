"""Jupyter rich display: RateResult, PlanResult and Table have _repr_html_ (well-formed HTML tables with
the reported numbers) and _repr_latex_ (a balanced LaTeX array)."""
import xml.etree.ElementTree as ET

import boundcalc as bc
from boundcalc.export import table
from boundcalc.result import format_number


def _cells(html):
    root = ET.fromstring(f"<div>{html}</div>")  # fails if the HTML is not well formed
    return [c.text or "" for c in root.iter() if c.tag in ("td", "th")]


def _balanced(tex):
    assert tex.startswith("$") and tex.endswith("$")
    depth = 0
    for i, ch in enumerate(tex):
        if ch in "{}" and (i == 0 or tex[i - 1] != "\\"):
            depth += 1 if ch == "{" else -1
            assert depth >= 0
    assert depth == 0
    assert tex.count(r"\begin{array}") == tex.count(r"\end{array}") == 1


def test_rate_result_html_and_latex():
    res = bc.rate("mean", privacy="approx", k=4)
    cells = _cells(res._repr_html_())
    assert format_number(res.lower.value) in cells and format_number(res.upper.value) in cells
    assert res.upper.label in cells
    tex = res._repr_latex_()
    _balanced(tex)
    assert format_number(res.lower.value) in tex


def test_plan_result_html_and_latex():
    res = bc.plan("multinomial", privacy="local", d=10, eps=1, target=0.01)
    cells = _cells(res._repr_html_())
    assert format_number(res.n_necessary) in cells and format_number(res.n_sufficient) in cells
    assert any(c.startswith("no (") for c in cells)  # the unreliable answer says so
    _balanced(res._repr_latex_())


def test_table_html_and_latex():
    t = table("mean", privacies=["none", "pure"], k=4, n=500)
    cells = _cells(t._repr_html_())
    assert "pure" in cells and "none" in cells
    _balanced(t._repr_latex_())
    assert r"\frac{r^{2}}{n}" in t._repr_latex_()


def test_html_escapes_text():
    res = bc.rate("support", privacy="pure")
    html = res._repr_html_()
    _cells(html)  # "<" in labels or sources must not break the markup
