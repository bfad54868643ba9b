"""Jupyter rich display: RateResult, PlanResult and Table have _repr_html_ (well-formed HTML tables with
the reported numbers) and _repr_latex_ (a balanced LaTeX array). What a reader sees in the HTML: rates as LaTeX
for MathJax (not Python source), numbers that never wrap, and inapplicable bounds marked as such."""
import math
import re
import xml.etree.ElementTree as ET

import boundcalc as bc
from boundcalc.core.latex import tex_math
from boundcalc.app.export import table
from boundcalc.render.result import format_number


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


# ---------------------------------------------------------------------- what a reader sees (issue 23)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?(e[+-]\d+)?$")


def _tree(html):
    return ET.fromstring(f"<div>{html}</div>")


def _visible_text(html):
    """The text a browser shows (attributes such as the hover title excluded)."""
    return "".join(_tree(html).itertext())


def _nowrap(el):
    return "white-space: nowrap" in (el.get("style") or "").replace("white-space:nowrap", "white-space: nowrap")


def test_rate_html_shows_the_rate_as_latex_for_mathjax():
    res = bc.rate("mean", privacy="approx", k=4, eps=0.5)
    text = _visible_text(res._repr_html_())
    assert "$" + tex_math(res.rate_expr) + "$" in text
    assert "$" + tex_math(res.rate_lower_expr) + "$" in text
    assert str(res.rate_expr) not in text and "**" not in text  # no Python source shown as the rate


def test_table_html_shows_rates_as_latex():
    t = table("mean", privacies=["none", "pure"], k=4, n=500)
    text = _visible_text(t._repr_html_())
    for row in t.rows:
        assert "$" + tex_math(row.rate_expr) + "$" in text
    assert "**" not in text


def _numeric_elements(html):
    return [el for el in _tree(html).iter() if el.tag in ("td", "span") and el.text and not list(el)
            and _NUMBER.match(el.text.strip())]


def test_numbers_in_rate_plan_and_table_html_never_wrap():
    res = bc.rate("mean", privacy="approx", k=4, eps=2.0)
    plan = bc.plan("multinomial", privacy="local", d=10, eps=1, target=[0.01, 0.001])
    tbl = table("mean", privacies=["none", "pure"], k=4, n=500)
    for html in (res._repr_html_(), plan._repr_html_(), tbl._repr_html_()):
        nums = _numeric_elements(html)
        assert nums, "no number found"
        assert all(_nowrap(el) for el in nums), [el.text for el in nums if not _nowrap(el)]
    # the case of the report: a value in exponent notation, whose minus sign a browser may break after
    assert any("e-" in el.text for el in _numeric_elements(res._repr_html_()))
    head = _tree(res._repr_html_()).find("p")
    shown = [el.text for el in head.iter("span") if _nowrap(el)]
    assert format_number(res.ratio) in shown and format_number(res.nonprivate) in shown


def _rows(html):
    root = _tree(html)
    header = ["".join(th.itertext()) for th in root.iter("th")]
    return [dict(zip(header, ("".join(td.itertext()).strip() for td in tr.iter("td"))))
            for tr in root.iter("tr") if tr.find("td") is not None]


def test_inapplicable_bound_is_marked_not_applicable_with_its_condition():
    # the classical Gaussian calibration needs ε < 1: at ε = 2 its conditions fail
    res = bc.rate("mean", privacy="approx", k=4, eps=2.0)
    failed = [b for b in res.lowers + res.uppers if b.failed_conditions]
    assert failed, "expected a bound whose conditions fail at eps = 2"
    rows = {r["bound"]: r for r in _rows(res._repr_html_())}
    for b in failed:
        row = rows[b.label]
        assert row["value"] == "not applicable"
        assert row["certified"] not in ("yes", "no")
        assert b.failed_conditions[0].replace("epsilon", "ε").replace("delta", "δ") in row["note"]


def test_certified_is_answered_only_for_a_bound_with_a_value():
    for problem, privacy, params in (("mean", "approx", {"k": 4, "eps": 2.0}), ("support", "pure", {}),
                                     ("linear", "local", {"d": 3, "geometry": "l1"})):
        res = bc.rate(problem, privacy=privacy, **params)
        by_label = {b.label: b for b in res.lowers + res.uppers}
        for row in _rows(res._repr_html_()):
            b = by_label[row["bound"]]
            if row["certified"] in ("yes", "no"):
                assert b.value is not None and not b.failed_conditions
                assert _NUMBER.match(row["value"]) and math.isclose(float(row["value"]), b.value, rel_tol=1e-3)
                assert row["certified"] == ("yes" if b.certified else "no")
            else:
                assert b.value is None or b.failed_conditions
                assert row["value"] in ("not applicable", "unavailable")
