"""The answer of :func:`boundcalc.plan_study`: one :class:`StudyRow` per statistic, gathered in a
:class:`StudyResult` with the study's totals, and how it is shown (text, Markdown, LaTeX, CSV, JSON, HTML).
Solving lives in :mod:`boundcalc.app.study`; this module only holds and renders what it found."""
from __future__ import annotations

import csv
import html
import io
import json
import math
from dataclasses import dataclass, field

from ..core.errors import InputError
from ..core.latex import tex_number, tex_text
from .numbers import finite_or_none
from .numbers import format_number as _fmt

#: the allocation strategies (see boundcalc.app.study)
STRATEGIES = ("split-people", "split-eps", "mixed")
STRATEGY_TEXT = {"split-people": "splitting people", "split-eps": "splitting the budget",
                 "mixed": "mixed (groups of people, the budget split within each)",
                 "same-records": "every statistic on the same records (no budget)"}
FORMATS = ("text", "markdown", "latex", "csv", "json")


@dataclass
class StudyRow:
    """One statistic of a study: its allocation (group of people, records used, share of the budget) and its
    certified band there."""

    name: str
    problem: str
    params: dict
    target: float
    group: int | None = None
    n: int | None = None  # records this statistic uses (at most its group's size)
    group_n: int | None = None  # people in its group
    eps: float | None = None  # its share of the budget (ε_i, or α_i for tv/kl)
    delta: float | None = None
    share: float | None = None  # eps / the whole budget
    upper: dict = field(default_factory=dict)  # certified upper at (n, eps[, delta])
    lower: dict = field(default_factory=dict)  # certified lower at (n, the whole budget)
    n_necessary: int | None = None  # the one-statistic plan at the whole budget
    n_sufficient_alone: int | None = None
    eps_necessary: float | None = None  # solve="eps"
    eps_sufficient: float | None = None
    accountant: str | None = None  # approx: how the accountant saw its mechanism
    reliability: dict | None = None
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "name": self.name, "problem": self.problem, "params": _clean(self.params),
            "target": finite_or_none(self.target), "group": self.group, "n": self.n, "group_n": self.group_n,
            "eps": finite_or_none(self.eps), "delta": finite_or_none(self.delta), "share": finite_or_none(self.share),
            "upper": self.upper or None, "lower": self.lower or None,
            "n_necessary": self.n_necessary, "n_sufficient_alone": self.n_sufficient_alone,
            "eps_necessary": finite_or_none(self.eps_necessary), "eps_sufficient": finite_or_none(self.eps_sufficient),
            "accountant": self.accountant, "reliability": self.reliability, "notes": list(self.notes),
        }

    @property
    def band(self):
        """(certified lower, certified upper) of this statistic's risk at its allocation."""
        return (self.lower.get("value") if self.lower else None, self.upper.get("value") if self.upper else None)


@dataclass
class StudyResult:
    privacy: str
    level_name: str | None  # "eps" or "alpha"; None without a budget
    eps: float | None  # the whole budget (given or, with solve="eps", found)
    delta: float | None
    solve: str
    n: int | None  # given with solve="eps"/"target"
    rows: list
    strategy: str | None = None
    strategies: dict = field(default_factory=dict)
    groups: list = field(default_factory=list)
    n_necessary: int | None = None
    n_sufficient: int | None = None
    eps_necessary: float | None = None
    eps_sufficient: float | None = None
    evidence_necessary: dict = field(default_factory=dict)
    composition: dict = field(default_factory=dict)
    reliability: dict | None = None
    notes: list = field(default_factory=list)

    @property
    def names(self):
        return [r.name for r in self.rows]

    def comparison(self) -> str:
        """One sentence comparing the strategies, e.g. "splitting people: n = 41,000; splitting the budget: ..."."""
        parts = []
        for k in STRATEGIES:
            v = self.strategies.get(k)
            if v is None:
                continue
            key = "n" if self.solve != "eps" else "eps"
            val = v.get(key)
            shown = "unreachable" if val is None else (f"{val:,}" if isinstance(val, int) else _fmt(val))
            parts.append(f"{STRATEGY_TEXT[k].split(' (')[0]}: {key if key == 'n' else self._sym()} = {shown}")
        out = "; ".join(parts)
        key = "n" if self.solve != "eps" else "eps"
        mine = self.strategies.get(self.strategy, {}).get(key)
        others = [v.get(key) for k, v in self.strategies.items() if k != self.strategy and v.get(key) is not None]
        worse = [x for x in others if mine is not None and x > mine]
        if mine and worse:
            out += (f" ({STRATEGY_TEXT.get(self.strategy, self.strategy).split(' (')[0]} wins: the next best needs "
                    f"{min(worse) / mine:.3g} times " + ("as many people)" if key == "n" else "the budget)"))
        return out

    def _sym(self):
        return "ε" if self.level_name in (None, "eps") else "α"

    # ------------------------------------------------------------------ dict / JSON
    def to_dict(self) -> dict:
        return {
            "privacy": self.privacy, "level_name": self.level_name, "eps": finite_or_none(self.eps),
            "delta": finite_or_none(self.delta), "solve": self.solve, "n": self.n,
            "n_necessary": self.n_necessary, "n_sufficient": self.n_sufficient,
            "eps_necessary": finite_or_none(self.eps_necessary), "eps_sufficient": finite_or_none(self.eps_sufficient),
            "strategy": self.strategy, "strategies": _clean(self.strategies), "comparison": self.comparison(),
            "groups": _clean(self.groups), "necessary": _clean(self.evidence_necessary),
            "composition": dict(self.composition), "reliability": _clean(self.reliability),
            "rows": [r.to_dict() for r in self.rows], "notes": list(self.notes),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False, default=str) + "\n"

    def render(self, fmt: str = "text") -> str:
        key = str(fmt).strip().lower()
        key = {"md": "markdown", "tex": "latex"}.get(key, key)
        if key not in FORMATS:
            raise InputError("format", "must be one of " + ", ".join(FORMATS), fmt)
        return getattr(self, f"to_{key}")()

    # ------------------------------------------------------------------ cells shared by the formats
    def _head(self):
        sym = self._sym()
        if self.solve == "target":
            return ["statistic", "problem", "target", "n", sym + " share", "certified lower", "certified upper",
                    "meets target"]
        alone = "n necessary alone" if self.solve == "n" else sym + " necessary alone"
        return ["statistic", "problem", "target", "group", "n", sym + " share", "certified upper",
                "certified lower", alone, "mechanism"]

    def _cells(self, r):
        share = "-" if r.eps is None else _fmt(r.eps) + (f", δ={_fmt(r.delta)}" if r.delta is not None else "")
        lo, up = r.band
        if self.solve == "target":
            meets = "-" if up is None else ("yes" if up <= r.target else ("no" if lo is not None and lo > r.target
                                                                          else "not certified"))
            return [r.name, r.problem, _fmt(r.target), _show(r.n), share, _fmt(lo), _fmt(up), meets]
        mech = (r.upper or {}).get("mechanism") or ""
        alone = _show(r.n_necessary) if self.solve == "n" else _fmt(r.eps_necessary)
        return [r.name, r.problem, _fmt(r.target), _show(r.group), _show(r.n), share, _fmt(up), _fmt(lo), alone, mech]

    def _title(self):
        sym = self._sym()
        budget = "no budget" if self.eps is None else f"{sym} = {_fmt(self.eps)}" + (
            f", δ = {_fmt(self.delta)}" if self.delta is not None else "")
        what = {"n": "people needed", "eps": "budget needed", "target": "certified bands"}[self.solve]
        n = f", n = {self.n:,}" if self.n is not None else ""
        model = "no privacy" if self.privacy == "none" else f"{self.privacy} privacy"
        return f"study under {model} ({budget}{n}): {what}"

    def _summary(self) -> list[str]:
        out = []
        if self.solve == "n":
            out.append(f"n sufficient = {_show(self.n_sufficient)} ({STRATEGY_TEXT.get(self.strategy, self.strategy)})"
                       f"; n necessary = {_show(self.n_necessary)} (study lower bound)")
        elif self.solve == "eps":
            sym = self._sym()
            out.append(f"{sym} sufficient = {_fmt(self.eps_sufficient)} ({STRATEGY_TEXT.get(self.strategy, self.strategy)})"
                       f"; {sym} necessary = {_fmt(self.eps_necessary)} (study lower bound)")
        if self.strategies and len(self.strategies) > 1:
            out.append("strategies: " + self.comparison())
        for g in self.groups:
            if len(self.groups) > 1 or len(g["statistics"]) > 1:
                line = f"group {g['group']}: {g['n']:,} people answer " + ", ".join(g["statistics"])
                if g.get("budget") is not None:
                    pld = g.get("composed_eps") is not None and str(g.get("accounting", "")).startswith("PLD")
                    line += (f" (shares add up to {_fmt(g['budget'])}" if pld else f" (budget used {_fmt(g['budget'])}")
                    if g.get("accounting"):
                        line += f"; {g['accounting']}"
                        if pld:
                            line += f": composed ε = {_fmt(g['composed_eps'])} at δ = {_fmt(g.get('delta'))}"
                    line += ")"
                out.append(line)
        ev = self.evidence_necessary or {}
        if ev.get("certificate"):
            out.append("necessary: " + ev["certificate"])
        elif ev.get("reason"):
            out.append("necessary: " + ev["reason"])
        if self.composition.get("rule") and self.composition.get("source"):
            out.append(f"composition: {self.composition['rule']}; {self.composition.get('parallel', '')} "
                       f"({self.composition['source']})")
        return out

    def _all_notes(self):
        out = list(self.notes)
        for r in self.rows:
            out += [f"{r.name}: {x}" for x in r.notes]
        return out

    # ------------------------------------------------------------------ formats
    def to_text(self) -> str:
        head = self._head()
        body = [self._cells(r) for r in self.rows]
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
        lines = [self._title()]
        lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
        lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)).rstrip() for b in body]
        lines += self._summary()
        lines += [f"note: {x}" for x in self._all_notes()]
        return "\n".join(lines) + "\n"

    def to_markdown(self) -> str:
        head = self._head()
        lines = [f"**{_md(self._title())}**", "", "| " + " | ".join(head) + " |",
                 "| " + " | ".join("---" for _ in head) + " |"]
        lines += ["| " + " | ".join(_md(c) for c in self._cells(r)) + " |" for r in self.rows]
        lines.append("")
        lines += [f"- {_md(x)}" for x in self._summary()]
        lines += [f"- Note: {_md(x)}" for x in self._all_notes()]
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        cols = ["name", "problem", "target", "group", "n", "group_n", "eps", "delta", "share", "upper", "lower",
                "n_necessary", "n_sufficient_alone", "eps_necessary", "eps_sufficient", "mechanism", "method"]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        for r in self.rows:
            lo, up = r.band
            rec = {"name": r.name, "problem": r.problem, "target": r.target, "group": r.group, "n": r.n,
                   "group_n": r.group_n, "eps": r.eps, "delta": r.delta, "share": r.share, "upper": up, "lower": lo,
                   "n_necessary": r.n_necessary, "n_sufficient_alone": r.n_sufficient_alone,
                   "eps_necessary": r.eps_necessary, "eps_sufficient": r.eps_sufficient,
                   "mechanism": (r.upper or {}).get("mechanism"), "method": (r.lower or {}).get("method")}
            w.writerow(["" if rec[c] is None else (repr(rec[c]) if isinstance(rec[c], float) else rec[c]) for c in cols])
        return buf.getvalue()

    def to_latex(self) -> str:
        head = self._head()
        lines = ["% generated by boundcalc: a study plan", r"% needs \usepackage{booktabs}",
                 r"\begin{table}[htbp]", r"\centering", r"\footnotesize",
                 r"\caption{" + tex_text(self._title()) + ". " + tex_text(" ".join(self._summary())) + "}",
                 r"\begin{tabular}{" + "l" * len(head) + "}", r"\toprule",
                 " & ".join(tex_text(h) for h in head) + r" \\", r"\midrule"]
        for r in self.rows:
            cells = self._cells(r)
            lines.append(" & ".join(tex_text(c) for c in cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
        notes = self._all_notes()
        if notes:
            lines.append(r"\par\smallskip\parbox{\linewidth}{\scriptsize " + tex_text(" ".join(notes)) + "}")
        lines.append(r"\end{table}")
        return "\n".join(lines) + "\n"

    def _repr_latex_(self) -> str:
        return self.to_latex()

    def _repr_html_(self) -> str:
        head = self._head()
        out = ['<table class="boundcalc">', f"<caption>{html.escape(self._title())}</caption>",
               "<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"]
        for r in self.rows:
            out.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in self._cells(r)) + "</tr>")
        out.append("</tbody></table>")
        out += [f"<p>{html.escape(x)}</p>" for x in self._summary()]
        out += [f"<p><em>note:</em> {html.escape(x)}</p>" for x in self._all_notes()]
        return "".join(out)


def _show(x):
    if x is None:
        return "null"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    return _fmt(x)


def _md(s) -> str:
    return str(s).replace("|", r"\|")


def _clean(obj):
    """Numbers JSON can hold (inf/NaN -> None), recursively."""
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, float):
        return finite_or_none(obj)
    return obj


_ = (math, tex_number)
