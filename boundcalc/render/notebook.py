"""Rich display of results in Jupyter: ``_repr_html_`` and ``_repr_latex_`` of RateResult, PlanResult and
Table delegate here. No mathematics here.

The HTML is what Jupyter shows (it ranks text/html above text/latex). In it:

- rates are LaTeX between ``$...$`` (sympy's LaTeX, as in the LaTeX export), which the notebook's MathJax
  typesets; the plain-text form is kept in the element's ``title`` (shown on hover);
- numbers sit in cells (or spans) styled ``white-space: nowrap``, so that a narrow output never breaks
  ``9.396e-04`` after its minus sign;
- a bound whose conditions fail at the given parameters reads "not applicable" with the condition that
  fails, and "certified" is answered only for a bound that has a value.
"""
from __future__ import annotations

import csv
import html
import io

import sympy as sp

from ..core.latex import tex_math
from .numbers import format_number, format_param, same_expression

#: inline style of a numeric cell: never wrapped, aligned on the right
_NUM_STYLE = "white-space: nowrap; text-align: right"


def _esc(x) -> str:
    return html.escape("" if x is None else str(x))


def _math(expr) -> str:
    """A sympy expression as inline LaTeX for MathJax, its plain form as the hover title."""
    if expr is None:
        return "n/a"
    return (f'<span class="boundcalc-math" style="white-space: nowrap" title="{_esc(expr)}">'
            f"{_esc('$' + tex_math(expr) + '$')}</span>")


def _num(x, digits=4) -> str:
    """A number kept on one line (a span, for running text)."""
    return f'<span style="white-space: nowrap">{_esc(format_number(x, digits))}</span>'


class _Cell:
    """A table cell with its own markup (already escaped) and style."""

    def __init__(self, markup: str, style: str | None = None):
        self.markup, self.style = markup, style


def _num_cell(x, digits=4) -> _Cell:
    return _Cell(_esc(format_number(x, digits)), _NUM_STYLE)


def _td(c) -> str:
    if isinstance(c, _Cell):
        style = f' style="{c.style}"' if c.style else ""
        return f"<td{style}>{c.markup}</td>"
    return f"<td>{_esc(c)}</td>"


def _html_table(header, rows, caption=None) -> str:
    out = ['<table class="boundcalc">']
    if caption:
        out.append(f"<caption>{_esc(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{_esc(h)}</th>" for h in header) + "</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(_td(c) for c in r) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _tex_text(s) -> str:
    s = "" if s is None else str(s)
    for a, b in (("\\", r"\backslash "), ("{", r"\{"), ("}", r"\}"), ("_", r"\_"), ("&", r"\&"), ("%", r"\%"),
                 ("#", r"\#"), ("$", r"\$"), ("^", r"\hat{}")):
        s = s.replace(a, b)
    return r"\text{" + s + "}"


def _tex_num(x) -> str:
    return _tex_text(format_number(x)) if x is not None else r"\text{--}"


def _conditions(failed) -> str:
    return "; ".join(c.replace("epsilon", "ε").replace("delta", "δ") for c in failed)


# ---------------------------------------------------------------------- RateResult

def bound_cells(b) -> tuple:
    """(value cell, certified cell, note) of one evaluated bound: an inapplicable bound (its conditions fail)
    or one without a value reads "not applicable" / "unavailable", with no certified answer."""
    if b.failed_conditions:
        return (_Cell("<i>not applicable</i>"), "–",
                f"requires {_conditions(b.failed_conditions)}; not met here")
    if b.value is None:
        return _Cell("<i>unavailable</i>"), "–", b.reason or "no value at these parameters"
    note = ""
    if b.reason:
        note = b.reason
    elif not b.certified:
        note = "not certified: " + (b.note or "order only, constant unspecified")
    return _num_cell(b.value), "yes" if b.certified else "no", note


def rate_html(res) -> str:
    p = ", ".join(f"{k}={format_param(v)}" for k, v in res.params.items())
    lines = [f"<b>{_esc(res.problem)}</b>, privacy <b>{_esc(res.privacy)}</b> ({_esc(p)})",
             f"rate (order): {_math(res.rate_expr)}"]
    if res.rate_lower_expr is not None:
        lines.append(f"lower-bound rate: {_math(res.rate_lower_expr)}")
    lines.append(f"ratio upper/lower: {_num(res.ratio)}; non-private risk: {_num(res.nonprivate)}")
    head = "<p>" + "<br/>".join(lines) + "</p>"
    best = (res.lower, res.upper)
    rows = []
    for b in res.lowers + res.uppers:
        value, certified, note = bound_cells(b)
        side = _Cell(_esc(("★ " if b in best else "") + b.side), "white-space: nowrap")
        rows.append([side, b.label, value, certified, note, b.source])
    return head + _html_table(["side", "bound", "value", "certified", "note", "source"], rows)


def rate_latex(res) -> str:
    lines = [r"\text{rate: } " + sp.latex(res.rate_expr)]
    for tag, b in (("lower", res.lower), ("upper", res.upper)):
        lines.append(_tex_text(f"certified {tag}: ") + (_tex_num(b.value) + r"\ " + _tex_text(f"[{b.label}]")
                                                        if b else _tex_text("unavailable")))
    lines.append(_tex_text("ratio upper/lower: ") + _tex_num(res.ratio))
    return r"$\begin{array}{l}" + r" \\ ".join(lines) + r"\end{array}$"


# ---------------------------------------------------------------------- PlanResult

def _reliable(r) -> str:
    rel = r.reliability or {}
    return "" if not rel else ("yes" if rel.get("reliable") else f"no ({rel.get('loose_side') or '?'} loose)")


def _plan_rows(res):
    for r in res.rows:
        yield [format_number(r.target) if r.target is not None else "", format_number(r.necessary),
               format_number(r.sufficient), r.evidence_sufficient.get("mechanism") or "", _reliable(r)]


def _answer_cell(x, reason) -> _Cell:
    if x is None:
        return _Cell("<i>none</i>" if reason else "<i>unavailable</i>")
    return _num_cell(x)


def plan_html(res) -> str:
    key = res.solve
    head = f"<p><b>plan</b> {_esc(res.problem)} / {_esc(res.privacy)}: solve for {_esc(key)}</p>"
    rows = [[_num_cell(r.target) if r.target is not None else "", _answer_cell(r.necessary, r.reason_necessary),
             _answer_cell(r.sufficient, r.reason_sufficient), r.evidence_sufficient.get("mechanism") or "",
             _reliable(r)] for r in res.rows]
    body = _html_table(["target", f"{key} necessary", f"{key} sufficient", "mechanism", "reliable"], rows)
    notes = [f"{tag}: {reason}" for r in res.rows
             for tag, reason in (("necessary", r.reason_necessary), ("sufficient", r.reason_sufficient)) if reason]
    notes += [n for r in res.rows for n in r.notes] + list(res.notes)
    items = "".join(f"<li>{_esc(n)}</li>" for n in notes)
    return head + body + (f"<ul>{items}</ul>" if items else "")


def plan_latex(res) -> str:
    key = res.solve
    rows = [" & ".join(_tex_text(c) for c in row) for row in _plan_rows(res)]
    hdr = " & ".join(_tex_text(h) for h in ("target", f"{key} necessary", f"{key} sufficient", "mechanism",
                                            "reliable"))
    return r"$\begin{array}{rrrll}" + hdr + r" \\ \hline " + r" \\ ".join(rows) + r"\end{array}$"


# ---------------------------------------------------------------------- Table

_TABLE_COLS = ("problem", "privacy", "level", "rate", "lower", "upper", "ratio", "lower_method", "upper_mechanism")


def _table_rows(tbl):
    rows = list(csv.DictReader(io.StringIO(tbl.render("csv"))))
    for r in rows:
        out = []
        for c in _TABLE_COLS:
            v = r.get(c, "")
            if c in ("lower", "upper", "ratio", "level") and v not in ("", None):
                try:
                    v = format_number(float(v))
                except ValueError:
                    pass
            out.append(v)
        yield out, r


def table_html(tbl) -> str:

    head = (["problem"] if tbl.multi_problem else []) + [
        "privacy", "level", "rate (order)", "lower-bound rate", "certified lower", "certified upper", "ratio",
        "lower method", "upper mechanism"]
    rows = []
    for r in tbl.rows:
        nowrap = "white-space: nowrap"
        lower_rate = "same" if same_expression(r.rate_lower_expr, r.rate_expr) else _Cell(_math(r.rate_lower_expr), nowrap)
        rows.append(([r.problem] if tbl.multi_problem else []) + [
            r.privacy, _Cell(_esc(r.level_text()), nowrap), _Cell(_math(r.rate_expr), nowrap), lower_rate,
            _num_cell(r.lower) if r.lower is not None else _Cell("<i>unavailable</i>"),
            _num_cell(r.upper) if r.upper is not None else _Cell("<i>unavailable</i>"),
            _num_cell(r.ratio, 3), r.lower_method or "", r.upper_mechanism or ""])
    return _html_table(head, rows, caption=tbl.title())


def table_latex(tbl) -> str:
    lines = []
    for row, raw in _table_rows(tbl):
        cells = [_tex_text(c) for c in row]
        if raw.get("rate_latex"):
            cells[3] = raw["rate_latex"]
        lines.append(" & ".join(cells))
    hdr = " & ".join(_tex_text(h) for h in _TABLE_COLS)
    return r"$\begin{array}{" + "l" * len(_TABLE_COLS) + "}" + hdr + r" \\ \hline " + r" \\ ".join(lines) + \
        r"\end{array}$"
