"""Result objects of :func:`boundcalc.rate`: numbers plus the expressions and provenance behind them."""
from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass, field

import sympy as sp
from ..core import symbolic as S

from .notebook import rate_html, rate_latex
from .numbers import finite_or_none, format_number, format_param  # noqa: F401  (re-exported: callers import them from here)


#: builds the runnable mechanism of an evaluated upper bound: ``factory(bound_value, reference=...)``; installed by the
#: application layer (boundcalc.app.api), so that this module holds no mathematics
_MECHANISM_FACTORY = None


def set_mechanism_factory(factory) -> None:
    """Install the function behind :meth:`BoundValue.mechanism` (the application layer does)."""
    global _MECHANISM_FACTORY
    _MECHANISM_FACTORY = factory


def best_bound(side: str, evaluated):
    """The one place that picks "the best certified bound": among the certified, usable
    :class:`BoundValue` s of ``side`` in ``evaluated``, the largest lower or the smallest upper bound
    (the first of equal ones); None when there is none."""
    c = [b for b in evaluated if b.side == side and b.certified and b.usable]
    if not c:
        return None
    return max(c, key=lambda b: b.value) if side == "lower" else min(c, key=lambda b: b.value)


#: the "certified" column of :meth:`RateResult.to_latex`, by :attr:`BoundValue.status`
_LATEX_STATUS = {"certified": "yes", "not certified": "no", "not applicable": "n/a", "no value": "--"}


@dataclass
class BoundValue:
    """A bound evaluated at the user's parameters, with its optimal free parameters."""

    side: str
    name: str
    label: str
    value: float | None
    certified: bool
    expr: sp.Expr
    source: str
    derivation: str
    free_parameters: dict = field(default_factory=dict)
    conditions: list = field(default_factory=list)
    failed_conditions: list = field(default_factory=list)
    reason: str | None = None  # why the value is None
    note: str | None = None  # why an uncertified bound is not certified (Bound.extra["why_not_certified"])
    verified: dict | None = None  # how a certified value was checked in high precision (boundcalc.core.certify)
    above_no_data: float | None = None  # the no-data risk, when this certified upper bound is above it
    # where it was computed: {"problem", "privacy", "params"} (set by the API; not part of to_dict); mechanism() uses it
    context: dict | None = None

    @property
    def usable(self) -> bool:
        return self.value is not None and self.value > 0 and not self.failed_conditions

    @property
    def status(self) -> str:
        """"not applicable" (its conditions fail here), "no value" (none at these parameters), "certified" or
        "not certified". Only a bound with a value can be certified: a certified method that does not apply, or
        has no value, certifies nothing at this point."""
        if self.failed_conditions:
            return "not applicable"
        if finite_or_none(self.value) is None:
            return "no value"
        return "certified" if self.certified else "not certified"

    def mechanism(self, reference: bool = True):
        """The runnable mechanism of this upper bound, tuned at its free parameters (a
        :class:`boundcalc.mechanisms.runnable.Mechanism`: ``release(records)`` for a central problem,
        ``privatize``/``estimate`` for a local one). ``reference=False``: an OpenDP measurement where one is
        offered (the optional extra ``boundcalc[opendp]``). Docs: docs/methods/from-a-plan-to-data.md."""
        from ..core.errors import InputError

        if self.side != "upper":
            raise InputError("mechanism", f"'{self.label}' is a lower bound (a method, not a mechanism): ask the "
                                          "upper bound (res.upper.mechanism())")
        if self.context is None or _MECHANISM_FACTORY is None:
            raise InputError("mechanism", "this bound was not computed by boundcalc.rate (no problem and parameters "
                                          "recorded); use boundcalc.mechanism(problem, privacy=..., **params)")
        if not self.usable:
            raise InputError("mechanism", f"the upper bound '{self.label}' has no value at these parameters "
                                          f"({self.reason or 'conditions fail'})")
        return _MECHANISM_FACTORY(self, reference=reference)

    def to_dict(self) -> dict:
        key = "method" if self.side == "lower" else "mechanism"
        out = {
            "name": self.name,
            "value": finite_or_none(self.value),
            "certified": self.status == "certified",
            "status": self.status,
            "expr": str(self.expr),
            "latex": S.latex(self.expr),
            key: self.label,
            "source": self.source,
            "free_parameters": {k: (v if isinstance(v, int) else finite_or_none(v))
                                for k, v in self.free_parameters.items()},
            "conditions": list(self.conditions),
            "derivation": self.derivation,
        }
        if self.failed_conditions:
            out["failed_conditions"] = list(self.failed_conditions)
        if self.reason:
            out["reason"] = self.reason
        if self.verified:
            out["verified"] = dict(self.verified)
        if self.note and not self.certified:
            out["why_not_certified"] = self.note
        if self.above_no_data is not None:
            out["above_no_data_risk"] = self.above_no_data
        return out


@dataclass
class RateResult:
    problem: str
    privacy: str
    params: dict
    rate_expr: sp.Expr
    rate_lower_expr: sp.Expr | None
    lowers: list
    uppers: list
    nonprivate: float | None
    regime: str
    terms: dict
    notes: list = field(default_factory=list)
    rate_terms: list = field(default_factory=list)  # (label, sympy term) of the rate, summed in rate_expr

    # ------------------------------------------------------------------ best bounds
    @property
    def lower(self) -> BoundValue | None:
        return best_bound("lower", self.lowers)

    @property
    def upper(self) -> BoundValue | None:
        return best_bound("upper", self.uppers)

    @property
    def ratio(self) -> float | None:
        lo, up = self.lower, self.upper
        if lo is None or up is None:
            return None
        return finite_or_none(up.value / lo.value)

    @property
    def rate(self):
        return _Rate(self.rate_expr, self.rate_lower_expr)

    def mechanism(self, reference: bool = True):
        """The runnable mechanism of the reported (best certified) upper bound: ``res.upper.mechanism()``."""
        up = self.upper
        if up is None:
            from ..core.errors import InputError

            raise InputError("mechanism", f"{self.problem}/{self.privacy}: no certified upper bound at these "
                                          "parameters, so no tuned mechanism")
        return mechanism_of(up, self.uppers, reference)

    @property
    def price_of_privacy(self) -> float | None:
        up = self.upper
        if up is None or not self.nonprivate:
            return None
        return finite_or_none(up.value / self.nonprivate)

    # ------------------------------------------------------------------ output
    def to_dict(self) -> dict:
        lo, up = self.lower, self.upper
        rate = {"expr": str(self.rate_expr), "latex": S.latex(self.rate_expr)}
        if self.rate_lower_expr is not None:
            rate["lower_expr"] = str(self.rate_lower_expr)
            rate["lower_latex"] = S.latex(self.rate_lower_expr)
        return {
            "problem": self.problem,
            "privacy": self.privacy,
            "params": {k: (None if isinstance(v, float) and not math.isfinite(v) and v != math.inf
                           else ("inf" if v == math.inf else v)) for k, v in self.params.items()},
            "rate": rate,
            "lower": lo.to_dict() if lo else None,
            "upper": up.to_dict() if up else None,
            "lowers": [b.to_dict() for b in self.lowers],
            "uppers": [b.to_dict() for b in self.uppers],
            "ratio": self.ratio,
            "nonprivate": {"value": finite_or_none(self.nonprivate)},
            "price_of_privacy": self.price_of_privacy,
            "regime": self.regime,
            "terms": {k: finite_or_none(v) for k, v in self.terms.items()},
            "notes": list(self.notes),
        }

    def to_latex(self) -> str:
        """A small booktabs table of this result (one row per bound)."""
        rows = [r"\begin{tabular}{llrl}", r"\toprule",
                r"side & bound & value & certified \\", r"\midrule"]
        for b in self.lowers + self.uppers:
            label = b.label.replace("_", r"\_").replace("&", r"\&")
            rows.append(f"{b.side} & {label} & ${_latex_num(b.value)}$ & {_LATEX_STATUS[b.status]} \\\\")
        rows += [r"\bottomrule", r"\end{tabular}"]
        head = (f"% boundcalc rate --problem {self.problem} --privacy {self.privacy}\n"
                f"% rate: ${sp.latex(self.rate_expr)}$\n")
        return head + "\n".join(rows) + "\n"

    def _repr_html_(self) -> str:
        return rate_html(self)

    def _repr_latex_(self) -> str:
        return rate_latex(self)

    def explain(self) -> str:
        """The derivation of the reported (best certified) lower and upper bounds, with sources and the
        docs pages that state them (``boundcalc rate ... --explain``)."""
        lines = [f"problem {self.problem}, privacy {self.privacy}: derivation of the reported bounds",
                 f"problem page: {problem_doc(self.problem)}"]
        for tag, b in (("lower", self.lower), ("upper", self.upper)):
            lines.append("")
            if b is None:
                pool = self.lowers if tag == "lower" else self.uppers
                why = ("order only: the constant is unspecified (see the problem page)"
                       if any(not x.certified for x in pool) else "no certified bound at these parameters")
                lines.append(f"certified {tag}: unavailable ({why})")
                continue
            lines.append(f"certified {tag}: {format_number(b.value)}   [{b.label}]  ({b.name})")
            lines.append(f"  bound:      {b.expr}")
            if b.free_parameters:
                lines.append("  at:         " + ", ".join(f"{k}={format_number(v)}" for k, v in b.free_parameters.items()))
            lines.append(f"  source:     {b.source}")
            lines.append("  docs:       " + ", ".join(doc_links(b.source, self.problem)))
            lines.append("  derivation:")
            lines.extend("    " + x for x in textwrap.wrap(b.derivation or "(none recorded)", 96))
        return "\n".join(lines)

    def to_text(self) -> str:
        p = ", ".join(f"{k}={format_param(v)}" for k, v in self.params.items())
        lines = [f"problem {self.problem}, privacy {self.privacy}  ({p})",
                 f"rate (order):      {self.rate_expr}"]
        if self.rate_lower_expr is not None:
            lines.append(f"lower-bound rate:  {self.rate_lower_expr}")
        lo, up = self.lower, self.upper
        for tag, b in (("lower", lo), ("upper", up)):
            if b is None:
                pool = self.lowers if tag == "lower" else self.uppers
                if any(not x.certified for x in pool):
                    lines.append(f"certified {tag}:   unavailable: order only (constant unspecified), "
                                 "listed below with its rate")
                else:
                    lines.append(f"certified {tag}:   unavailable")
                continue
            fp = ", ".join(f"{k}={format_number(v)}" for k, v in b.free_parameters.items())
            lines.append(f"certified {tag}:   {format_number(b.value)}   [{b.label}]" + (f"  at {fp}" if fp else ""))
            lines.append(f"                   source: {b.source}")
        lines.append(f"ratio upper/lower: {format_number(self.ratio)}")
        lines.append(f"non-private risk:  {format_number(self.nonprivate)}"
                     + (f"   price of privacy (upper/non-private): {format_number(self.price_of_privacy)}"
                        if self.price_of_privacy else ""))
        lines.append(f"regime:            {self.regime}")
        others = [b for b in self.lowers + self.uppers if b not in (lo, up)]
        if others:
            lines.append("other bounds considered:")
            for b in others:
                why = ""
                if b.failed_conditions:
                    why = ("  (requires " + "; ".join(c.replace("epsilon", "ε").replace("delta", "δ")
                                                      for c in b.failed_conditions) + "; not met here)")
                elif b.reason:
                    why = f"  ({b.reason})"
                elif b.above_no_data is not None:
                    why = f"  (above the no-data risk {format_number(b.above_no_data)})"
                elif not b.certified:
                    why = "  (not certified: " + (b.note or "order only, constant unspecified") + ")"
                lines.append(f"  {b.side:5s} {format_number(b.value):>10s}  {b.label}{why}")
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)


def mark_above_no_data(uppers: list, no_data: set) -> None:
    """Mark every certified upper bound above the problem's no-data risk.

    The no-data risk is the smallest certified value among the bounds named in ``no_data`` (estimators that
    ignore the data, declared by the problem with ``Bound.extra["no_data"]``): such an estimator satisfies every
    privacy definition, so the minimax risk never exceeds it. A certified upper bound above it stays listed with
    its own value (a true statement about its mechanism, which the check simulates) and gets ``above_no_data``
    set to the no-data risk; the best upper bound is never one of them."""
    vals = [b.value for b in uppers if b.name in no_data and b.certified and b.value is not None
            and math.isfinite(b.value)]
    if not vals:
        return
    trivial = min(vals)
    for b in uppers:
        if b.certified and b.value is not None and b.value > trivial and b.name not in no_data:
            b.above_no_data = trivial


_LOSS_PREFIX = {"ℓ1 loss:": "l1", "ℓ2² loss:": "l2sq"}


def notes_for_loss(notes, values) -> list:
    """Drop the notes that start with a loss name ("ℓ1 loss: ...") other than the loss asked for."""
    loss = values.get("loss")
    return [x for x in notes
            if loss is None or not any(x.startswith(p) and loss != l for p, l in _LOSS_PREFIX.items())]


_DOC_RE = re.compile(r"docs/(?:problems|methods)/[a-z0-9-]+\.md")


def problem_doc(problem: str) -> str:
    """The docs page of a problem (docs/problems/<problem>.md)."""
    return f"docs/problems/{problem}.md"


def doc_links(source: str, problem: str) -> list:
    """The docs pages cited in a bound's source, plus the problem's page."""
    out = []
    for m in _DOC_RE.findall(source or "") + [problem_doc(problem)]:
        if m not in out:
            out.append(m)
    return out


def _latex_num(x):
    if x is None:
        return "\\text{n/a}"
    m, e = f"{x:.3e}".split("e")
    e = int(e)
    return m if e == 0 else f"{m}\\times 10^{{{e}}}"


@dataclass
class _Rate:
    expr: sp.Expr
    lower_expr: sp.Expr | None

    def __str__(self):
        return str(self.expr)


def mechanism_of(up, uppers, reference: bool = True):
    """``up.mechanism(reference)``; for ``reference=False`` when the noise of ``up`` has no OpenDP sampler (the
    staircase), the OpenDP measurement of the best other certified upper bound in ``uppers`` that has one, at its
    own tuning and certified risk, with a note naming both (docs/methods/from-a-plan-to-data.md)."""
    if reference:
        return up.mechanism(reference=True)
    from ..mechanisms.central import NoOpenDPNoise

    try:
        return up.mechanism(reference=False)
    except NoOpenDPNoise:
        others = sorted((b for b in uppers if b is not up and b.side == "upper" and b.usable and b.certified
                         and b.context is not None), key=lambda b: b.value)
        for other in others:
            try:
                mech = other.mechanism(reference=False)
            except NoOpenDPNoise:
                continue
            mech.notes = mech.notes + (f"OpenDP has no sampler for the noise of the reported upper bound '{up.label}' "
                                       f"(risk <= {up.value:.4g}); this is the best certified upper bound with an "
                                       f"OpenDP measurement, '{other.label}' (risk <= {other.value:.4g})",)
            return mech
        raise
