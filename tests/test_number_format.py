"""One number format for the parameters in every header: the text and the HTML of a rate, the plan, table and
check headers and the table's level column all show a parameter through render.result.format_param, as a user
types it (r=1, k=4, delta=1e-06), never r=1.0 in one place and r=1 or delta=1.000e-06 in another."""
import math
import re

import pytest

import boundcalc as bc

HEADER_RE = re.compile(r"\((n=[^()]*)\)")


@pytest.mark.parametrize("v, shown", [(1.0, "1"), (4.0, "4"), (1e-06, "1e-06"), (0.25, "0.25"), (1000, "1000"),
                                      (math.inf, "inf"), (1e18, "1e+18"), (2.5e-300, "2.5e-300"),
                                      (0.1 + 0.2, "0.30000000000000004"), ("l2", "l2"), (True, "True")])
def test_format_param(v, shown):
    from boundcalc.render.result import format_param

    assert format_param(v) == shown


@pytest.mark.parametrize("v", [1.0, 4.0, 1e-6, 0.1, 1 / 3, 123456.789, 1e7, 3e-320, 2 ** 60 + 0.0, 7])
def test_format_param_is_the_same_number_and_no_longer_than_repr(v):
    from boundcalc.render.result import format_param

    s = format_param(v)
    assert float(s) == v and len(s) <= len(repr(v))
    assert not s.endswith(".0")


def _header(text: str) -> str:
    m = HEADER_RE.search(text)
    assert m, text[:300]
    return m.group(1)


def test_rate_text_and_html_show_the_same_parameters():
    res = bc.rate("mean", privacy="approx", r=1.0, k=4.0, delta=1e-6)
    text, html = res.to_text(), res._repr_html_()
    assert _header(text) == _header(html) == "n=1000, d=1, r=1, k=4, eps=1, delta=1e-06"


def test_plan_table_and_check_headers_use_the_same_format():
    shown = "d=1, r=1, k=4, eps=1, delta=1e-06"
    plan = bc.plan("mean", privacy="approx", target=0.01, r=1.0, k=4.0, delta=1e-6).to_text()
    assert f"({shown})" in plan.splitlines()[0]
    table = bc.table("mean", privacies=["approx"], r=1.0, k=4.0, delta=1e-6)
    assert "(n=1000, d=1, r=1, k=4)" in table.to_text().splitlines()[0]
    level = "ε=1, δ=1e-06"
    assert level in table.to_text() and level in table.render("markdown") and level in table._repr_html_()
    check = bc.check("mean", privacy="approx", reps=3, ns=[50, 100], r=1.0, k=4.0, delta=1e-6)
    assert f"({shown})" in check.to_text().splitlines()[0]
