"""The result of :func:`boundcalc.app.export.table` and how it is shown: a :class:`Table` of :class:`TableRow` s
rendered as text, LaTeX (booktabs), Markdown, CSV and JSON. Computing the rows lives in
:mod:`boundcalc.app.export`; this module only holds and renders them (LaTeX through :mod:`boundcalc.core.latex`).
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field

import sympy as sp

from .. import __version__
from ..core.errors import InputError
from ..core.latex import tex_math, tex_number, tex_text
from ..core.privacy import MODELS
from .notebook import table_html, table_latex
from .numbers import finite_or_none, format_number, format_param, same_expression as _same

FORMATS = ("text", "latex", "markdown", "csv", "json")
SHORT = {k: m.short for k, m in MODELS.items()}  # from the one privacy-model table
TEX_SHORT = {k: m.tex for k, m in MODELS.items()}


# ---------------------------------------------------------------------- the table

@dataclass
class TableRow:
    problem: str
    privacy: str
    params: dict  # every parameter used for this row (defaults included)
    level: dict  # {"name": "eps"|"alpha", "value": ..., "delta": ...} (empty for none)
    rate_expr: sp.Expr
    rate_latex: str
    rate_lower_expr: sp.Expr | None
    lower: float | None
    upper: float | None
    ratio: float | None
    lower_method: str | None
    upper_mechanism: str | None
    lower_source: str | None
    upper_source: str | None
    nonprivate: float | None
    source: str
    title: str
    upper_free: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    def level_text(self) -> str:
        if not self.level:
            return "-"
        sym = "ε" if self.level["name"] == "eps" else "α"
        s = f"{sym}={format_param(self.level['value'])}"
        if "delta" in self.level:
            s += f", δ={format_param(self.level['delta'])}"
        return s

    def level_tex(self) -> str:
        if not self.level:
            return "--"
        sym = r"\varepsilon" if self.level["name"] == "eps" else r"\alpha"
        s = f"${sym}={tex_number(self.level['value'])}"
        if "delta" in self.level:
            s += rf",\ \delta={tex_number(self.level['delta'])}"
        return s + "$"

    def to_dict(self) -> dict:
        return {
            "problem": self.problem, "privacy": self.privacy,
            "level": {k: finite_or_none(v) if k != "name" else v for k, v in self.level.items()},
            "params": {k: ("inf" if v == math.inf else v) for k, v in self.params.items()},
            "rate": {"expr": str(self.rate_expr), "latex": self.rate_latex},
            "lower_rate": None if self.rate_lower_expr is None else
            {"expr": str(self.rate_lower_expr), "latex": tex_math(self.rate_lower_expr)},
            "lower": finite_or_none(self.lower), "upper": finite_or_none(self.upper),
            "ratio": finite_or_none(self.ratio),
            "lower_method": self.lower_method, "upper_mechanism": self.upper_mechanism,
            "upper_free_parameters": {k: (v if isinstance(v, int) else finite_or_none(v))
                                      for k, v in self.upper_free.items()},
            "lower_source": self.lower_source, "upper_source": self.upper_source,
            "nonprivate": finite_or_none(self.nonprivate), "source": self.source,
            "notes": list(self.notes),
        }


@dataclass
class Table:
    """Rows of rates and certified bounds; :meth:`render` in any of :data:`FORMATS`."""

    rows: list
    problems: list
    params: dict  # the parameters given (shared by the rows)
    notes: list = field(default_factory=list)

    # ------------------------------------------------------------------ shared pieces
    @property
    def multi_problem(self) -> bool:
        return len(self.problems) > 1

    def sources(self) -> list[str]:
        seen = []
        for r in self.rows:
            for s in (r.source, r.lower_source, r.upper_source):
                for part in _split_sources(s):
                    if part and part not in seen:
                        seen.append(part)
        return seen

    def shared_params(self) -> dict:
        """Parameters with the same value in every row (shown once, in the caption)."""
        if not self.rows:
            return {}
        keys = [k for k in self.rows[0].params if k not in ("eps", "delta")]
        out = {}
        for k in keys:
            vals = {repr(r.params.get(k)) for r in self.rows}
            if len(vals) == 1 and all(k in r.params for r in self.rows):
                out[k] = self.rows[0].params[k]
        return out

    def title(self) -> str:
        if self.multi_problem:
            return "Minimax risk of several estimation problems"
        return f"Minimax risk of {self.rows[0].title if self.rows else self.problems[0]}"

    def _param_text(self, tex=False) -> str:
        parts = []
        for k, v in self.shared_params().items():
            val = format_param(v)
            if tex:
                name = {"n": "n", "d": "d", "r": "r", "k": "k"}.get(k, r"\mathrm{" + k.replace("_", r"\_") + "}")
                shown = r"\infty" if v == math.inf else (tex_number(v) if isinstance(v, (int, float))
                                                         else r"\text{" + tex_text(v) + "}")
                parts.append(f"${name}={shown}$")
            else:
                parts.append(f"{k}={val}")
        return ", ".join(parts)

    def _repr_html_(self) -> str:
        return table_html(self)

    def _repr_latex_(self) -> str:
        return table_latex(self)

    # ------------------------------------------------------------------ formats
    def render(self, fmt: str = "text") -> str:
        key = str(fmt).strip().lower()
        if key == "md":
            key = "markdown"
        if key == "tex":
            key = "latex"
        if key not in FORMATS:
            raise InputError("format", "must be one of " + ", ".join(FORMATS), fmt)
        return getattr(self, f"to_{key}")()

    def to_dict(self) -> dict:
        return {
            "title": self.title(), "problems": list(self.problems),
            "params": {k: ("inf" if v == math.inf else v) for k, v in self.params.items()},
            "columns": ["privacy", "level", "rate", "lower_rate", "lower", "upper", "ratio"],
            "rows": [r.to_dict() for r in self.rows],
            "sources": self.sources(), "notes": list(self.notes),
            "generator": f"boundcalc {__version__}",
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False, default=str) + "\n"

    def _cells(self):
        head = (["problem"] if self.multi_problem else []) + [
            "privacy", "level", "rate (order)", "lower-bound rate", "certified lower", "certified upper",
            "ratio", "upper mechanism"]
        body = []
        for r in self.rows:
            lower_rate = "same" if _same(r.rate_lower_expr, r.rate_expr) else compact(r.rate_lower_expr)
            body.append(([r.problem] if self.multi_problem else []) + [
                r.privacy, r.level_text(), compact(r.rate_expr), lower_rate, format_number(r.lower), format_number(r.upper),
                format_number(r.ratio, 3), r.upper_mechanism or "n/a"])
        return head, body

    def to_text(self) -> str:
        head, body = self._cells()
        widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
        numeric = {"certified lower", "certified upper", "ratio"}

        def line(cells):
            return "  ".join(c.rjust(w) if h in numeric else c.ljust(w)
                             for c, w, h in zip(cells, widths, head)).rstrip()

        out = [f"{self.title()} ({self._param_text()})", line(head), line(["-" * w for w in widths])]
        out += [line(b) for b in body]
        out.append("risk: worst-case expected loss; rates are orders (constants unspecified), "
                   "lower/upper are certified values")
        out += [f"note: {n}" for n in self._all_notes()]
        out.append("sources: " + "; ".join(self.sources()))
        return "\n".join(out) + "\n"

    def _all_notes(self) -> list[str]:
        """Table notes, then row notes (a note shared by several rows is listed once, with its rows)."""
        tags: dict = {}
        for r in self.rows:
            tag = f"{r.problem}/{r.privacy}" if self.multi_problem else r.privacy
            for n in r.notes:
                tags.setdefault(n, [])
                if tag not in tags[n]:
                    tags[n].append(tag)
        out = [_sentence(n) for n in self.notes]
        out += [_sentence(", ".join(t) + ": " + n) for n, t in tags.items()]
        return out

    def to_markdown(self) -> str:
        head = (["Problem"] if self.multi_problem else []) + [
            "Privacy", "Level", "Rate (order)", "Lower-bound rate", "Certified lower", "Certified upper",
            "Ratio", "Mechanism (upper)"]
        align = (["---"] if self.multi_problem else []) + ["---", "---", "---", "---", "---:", "---:", "---:", "---"]
        lines = [f"**{self.title()}** ({self._param_text()})", "",
                 "| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
        for r in self.rows:
            lr = "same" if _same(r.rate_lower_expr, r.rate_expr) else _md_math(tex_math(r.rate_lower_expr))
            cells = ([_md(r.problem)] if self.multi_problem else []) + [
                _md(SHORT.get(r.privacy, r.privacy)), _md(r.level_text()), _md_math(r.rate_latex), lr,
                format_number(r.lower), format_number(r.upper), format_number(r.ratio, 3), _md(r.upper_mechanism or "n/a")]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines.append("Rates are orders (constants unspecified); lower and upper are certified values of the "
                     "worst-case risk.")
        for n in self._all_notes():
            lines.append(f"- Note: {_md(n)}")
        lines.append("")
        lines.append("Sources: " + _md("; ".join(self.sources())) + ".")
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        param_keys = []
        for r in self.rows:
            for k in r.params:
                if k not in param_keys and k not in ("eps", "delta"):
                    param_keys.append(k)
        cols = (["problem", "privacy", "level_name", "level", "delta"] + param_keys +
                ["rate", "rate_latex", "lower_rate", "lower", "upper", "ratio", "lower_method",
                 "upper_mechanism", "nonprivate", "lower_source", "upper_source"])
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        for r in self.rows:
            rec = {"problem": r.problem, "privacy": r.privacy, "level_name": r.level.get("name", ""),
                   "level": _csv(r.level.get("value")), "delta": _csv(r.level.get("delta")),
                   "rate": str(r.rate_expr), "rate_latex": r.rate_latex,
                   "lower_rate": "" if r.rate_lower_expr is None else str(r.rate_lower_expr),
                   "lower": _csv(r.lower), "upper": _csv(r.upper), "ratio": _csv(r.ratio),
                   "lower_method": r.lower_method or "", "upper_mechanism": r.upper_mechanism or "",
                   "nonprivate": _csv(r.nonprivate), "lower_source": r.lower_source or "",
                   "upper_source": r.upper_source or ""}
            for k in param_keys:
                rec[k] = _csv(r.params.get(k))
            w.writerow([rec[c] for c in cols])
        return buf.getvalue()

    def to_latex(self, label: str | None = None, float_env: bool = True) -> str:
        """A booktabs table (a ``table`` float with caption and label unless ``float_env=False``).

        Columns: privacy model, level, the rate (order; the lower-bound rate under it where the two
        differ, as in Barber & Duchi's Table 1), the certified lower and upper values and their ratio.
        """
        multi = self.multi_problem
        cols = ("l" if multi else "") + "lll" + "rrr"
        head = (["Problem"] if multi else []) + [
            "Privacy", "Level", "Rate (order)", "Lower", "Upper", "Ratio"]
        body = []
        for r in self.rows:
            if _same(r.rate_lower_expr, r.rate_expr):
                rate_cell = f"${r.rate_latex}$"
            else:
                rate_cell = (r"\begin{tabular}[c]{@{}l@{}}" + f"${r.rate_latex}$" + r" \\[2pt] "
                             + r"{\scriptsize lower:} " + f"${tex_math(r.rate_lower_expr)}$" + r"\end{tabular}")
            cells = ([tex_text(r.problem)] if multi else []) + [
                TEX_SHORT.get(r.privacy, tex_text(r.privacy)), r.level_tex(), rate_cell,
                f"${tex_number(r.lower)}$", f"${tex_number(r.upper)}$",
                f"${tex_number(r.ratio, 3)}$" if r.ratio is not None else "--"]
            body.append(" & ".join(cells) + r" \\" + (r"\addlinespace[3pt]" if r is not self.rows[-1] else ""))
        label = label or ("tab:boundcalc-" + "-".join(p.replace("_", "-") for p in self.problems))
        entry_sources = []
        for r in self.rows:
            for part in _split_sources(r.source):
                if part not in entry_sources:
                    entry_sources.append(part)
        bound_sources = [s for s in self.sources() if s not in entry_sources]
        caption = (tex_text(self.title()) + (" at " + self._param_text(tex=True) if self.shared_params() else "")
                   + ". Rate: the minimax rate (order only, constants unspecified), with the rate of the "
                   "lower bound under it where the two differ. Lower, Upper: certified values of the "
                   "worst-case risk (every constant explicit); Ratio = Upper/Lower. Source"
                   + ("s" if len(entry_sources) > 1 else "") + ": " + tex_text("; ".join(entry_sources))
                   + "; computed with boundcalc " + __version__ + ".")
        notes = self._all_notes()
        lines = [f"% generated by boundcalc {__version__}: table of rates and certified bounds",
                 r"% needs \usepackage{booktabs} and \usepackage{amsmath} in the preamble"]
        if float_env:
            lines += [r"\begin{table}[htbp]", r"\centering", r"\footnotesize", r"\setlength{\tabcolsep}{4pt}",
                      r"\renewcommand{\arraystretch}{1.15}",
                      r"\caption{" + caption + "}", r"\label{" + label + "}",
                      # a table wider than the text block is centred on the page instead of overflowing right
                      r"\makebox[\linewidth][c]{%"]
        lines += [r"\begin{tabular}{" + cols + "}", r"\toprule", " & ".join(head) + r" \\", r"\midrule"]
        lines += body
        lines += [r"\bottomrule", r"\end{tabular}"]
        if float_env:
            lines[-1] += "}"
            extra = [tex_text("Note: " + n) for n in notes]
            if bound_sources:
                extra.append(tex_text("Bounds: " + _sentence("; ".join(bound_sources))))
            if extra:
                lines.append(r"\par\smallskip\parbox{\linewidth}{\scriptsize " + " ".join(extra) + "}")
            lines.append(r"\end{table}")
        return "\n".join(lines) + "\n"


def _sentence(s: str) -> str:
    s = str(s).strip()
    return s if s.endswith((".", "!", "?")) else s + "."


def compact(expr) -> str:
    """A sympy expression as compact plain text: d^(3/2)·r^2/(ε^(3/2)·n^(3/2))."""
    if expr is None:
        return "n/a"
    s = str(expr).replace("**", "^").replace("*", "·")
    for name, sym in (("epsilon", "ε"), ("delta", "δ"), ("alpha", "α")):
        s = s.replace(name, sym)
    return s


def _split_sources(s):
    if not s:
        return []
    return [p.strip() for p in str(s).split(";") if p.strip()]


def _md(s) -> str:
    return str(s).replace("|", r"\|")


def _md_math(tex: str) -> str:
    return "$" + tex.replace("|", r"\vert ") + "$"


def _csv(x):
    if x is None:
        return ""
    if isinstance(x, float):
        if x == math.inf:
            return "inf"
        return repr(x) if math.isfinite(x) else ""
    return str(x)


# ---------------------------------------------------------------------- building rows
