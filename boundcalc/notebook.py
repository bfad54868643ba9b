"""Rich display of results in Jupyter: ``_repr_html_`` and ``_repr_latex_`` of RateResult, PlanResult and
Table delegate here (HTML tables; LaTeX ``array`` blocks, which MathJax renders). No mathematics here."""
from __future__ import annotations

import csv
import html
import io

import sympy as sp

from .result import format_number


def _esc(x) -> str:
    return html.escape("" if x is None else str(x))


def _html_table(header, rows, caption=None) -> str:
    out = ['<table class="boundcalc">']
    if caption:
        out.append(f"<caption>{_esc(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{_esc(h)}</th>" for h in header) + "</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in r) + "</tr>")
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


# ---------------------------------------------------------------------- RateResult

def rate_html(res) -> str:
    p = ", ".join(f"{k}={v}" for k, v in res.params.items())
    head = (f"<p><b>{_esc(res.problem)}</b>, privacy <b>{_esc(res.privacy)}</b> ({_esc(p)})<br/>"
            f"rate (order): <code>{_esc(res.rate_expr)}</code><br/>"
            f"ratio upper/lower: {_esc(format_number(res.ratio))}; non-private risk: "
            f"{_esc(format_number(res.nonprivate))}</p>")
    best = (res.lower, res.upper)
    rows = [[("★ " if b in best else "") + b.side, b.label, format_number(b.value), "yes" if b.certified else "no",
             b.source] for b in res.lowers + res.uppers]
    return head + _html_table(["side", "bound", "value", "certified", "source"], rows)


def rate_latex(res) -> str:
    lines = [r"\text{rate: } " + sp.latex(res.rate_expr)]
    for tag, b in (("lower", res.lower), ("upper", res.upper)):
        lines.append(_tex_text(f"certified {tag}: ") + (_tex_num(b.value) + r"\ " + _tex_text(f"[{b.label}]")
                                                        if b else _tex_text("unavailable")))
    lines.append(_tex_text("ratio upper/lower: ") + _tex_num(res.ratio))
    return r"$\begin{array}{l}" + r" \\ ".join(lines) + r"\end{array}$"


# ---------------------------------------------------------------------- PlanResult

def _plan_rows(res):
    for r in res.rows:
        rel = r.reliability or {}
        yield [format_number(r.target) if r.target is not None else "", format_number(r.necessary),
               format_number(r.sufficient), r.evidence_sufficient.get("mechanism") or "",
               "" if not rel else ("yes" if rel.get("reliable") else f"no ({rel.get('loose_side') or '?'} loose)")]


def plan_html(res) -> str:
    key = res.solve
    head = f"<p><b>plan</b> {_esc(res.problem)} / {_esc(res.privacy)}: solve for {_esc(key)}</p>"
    body = _html_table(["target", f"{key} necessary", f"{key} sufficient", "mechanism", "reliable"],
                       list(_plan_rows(res)))
    notes = "".join(f"<li>{_esc(n)}</li>" for r in res.rows for n in r.notes) + \
        "".join(f"<li>{_esc(n)}</li>" for n in res.notes)
    return head + body + (f"<ul>{notes}</ul>" if notes else "")


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
    return _html_table(list(_TABLE_COLS), [row for row, _ in _table_rows(tbl)], caption=tbl.title())


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
