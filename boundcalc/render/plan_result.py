"""The answer of :func:`boundcalc.app.planning.plan`: one :class:`PlanRow` per target (or level), gathered
in a :class:`PlanResult`, and how it is shown (text, JSON dict, HTML/LaTeX in notebooks). Solving lives
in :mod:`boundcalc.app.planning`; this module only holds and renders what it found."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .numbers import finite_or_none, format_param
from .numbers import format_number as _fmt


@dataclass
class PlanRow:
    """The answer for one target (or, with ``solve="target"``, for the given n and level)."""

    solve: str
    target: float | None
    necessary: float | int | None
    sufficient: float | int | None
    reason_necessary: str | None = None
    reason_sufficient: str | None = None
    evidence_necessary: dict = field(default_factory=dict)
    evidence_sufficient: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    reliability: dict | None = None  # see _reliability (solve="n")

    def to_dict(self) -> dict:
        key = self.solve
        return {
            "reliability": self.reliability,
            "target": finite_or_none(self.target),
            f"{key}_necessary": _num(self.necessary),
            f"{key}_sufficient": _num(self.sufficient),
            "reason_necessary": self.reason_necessary,
            "reason_sufficient": self.reason_sufficient,
            "necessary": self.evidence_necessary,
            "sufficient": self.evidence_sufficient,
            "notes": list(self.notes),
        }


#: builds the mechanism of one row of a plan: ``factory(plan, row, reference=...)``; installed by the application
#: layer (boundcalc.app.api), so that this module holds no mathematics
_MECHANISM_FACTORY = None


def set_mechanism_factory(factory) -> None:
    """Install the function behind :meth:`PlanResult.mechanism` (the application layer does)."""
    global _MECHANISM_FACTORY
    _MECHANISM_FACTORY = factory


def _num(x):
    if x is None:
        return None
    if isinstance(x, int):
        return x
    return finite_or_none(x)


@dataclass
class PlanResult:
    problem: str
    privacy: str
    solve: str
    params: dict  # the fixed parameters (defaults included)
    level_name: str | None
    rows: list
    notes: list = field(default_factory=list)

    # scalar for one target, list for several
    def _pick(self, attr, solve):
        if self.solve != solve:
            return None
        vals = [getattr(r, attr) for r in self.rows]
        return vals[0] if len(vals) == 1 else vals

    @property
    def n_necessary(self):
        return self._pick("necessary", "n")

    @property
    def n_sufficient(self):
        return self._pick("sufficient", "n")

    @property
    def eps_necessary(self):
        return self._pick("necessary", "eps")

    @property
    def eps_sufficient(self):
        return self._pick("sufficient", "eps")

    @property
    def target_necessary(self):
        return self._pick("necessary", "target")

    @property
    def target_sufficient(self):
        return self._pick("sufficient", "target")

    @property
    def necessary(self):
        vals = [r.necessary for r in self.rows]
        return vals[0] if len(vals) == 1 else vals

    @property
    def sufficient(self):
        vals = [r.sufficient for r in self.rows]
        return vals[0] if len(vals) == 1 else vals

    @property
    def targets(self):
        return [r.target for r in self.rows]

    def mechanism(self, target=None, reference: bool = True):
        """The runnable mechanism of the sufficient side, tuned at the planned n (``solve="n"``), level
        (``solve="eps"``) or the given values (``solve="target"``): the mechanism of the certified upper bound that
        reaches the target. ``target``: which target's row, when several were planned (default: the only one).
        Docs: docs/methods/from-a-plan-to-data.md."""
        from ..core.errors import InputError

        if target is None:
            if len(self.rows) != 1:
                raise InputError("target", "several targets were planned: say which one (mechanism(target=...))")
            row = self.rows[0]
        else:
            row = next((r for r in self.rows if r.target is not None and math.isclose(r.target, float(target))), None)
            if row is None:
                raise InputError("target", "must be one of the planned targets "
                                 + ", ".join(_show(r.target) for r in self.rows), target)
        if _MECHANISM_FACTORY is None:
            raise InputError("mechanism", "import boundcalc.app.api first (boundcalc.plan does)")
        return _MECHANISM_FACTORY(self, row, reference=reference)

    def to_dict(self) -> dict:
        rows = [r.to_dict() for r in self.rows]
        out = {
            "problem": self.problem, "privacy": self.privacy, "solve": self.solve,
            "level_name": self.level_name,
            "params": {k: ("inf" if v == math.inf else v) for k, v in self.params.items()},
        }
        keys = ["target", f"{self.solve}_necessary", f"{self.solve}_sufficient", "reason_necessary",
                "reason_sufficient"]
        for k in keys:
            vals = [r[k] for r in rows]
            out[k] = vals[0] if len(vals) == 1 else vals
        if len(rows) == 1:
            out["necessary"] = rows[0]["necessary"]
            out["sufficient"] = rows[0]["sufficient"]
            out["reliability"] = rows[0]["reliability"]
        out["rows"] = rows
        out["notes"] = list(self.notes)
        return out

    def _repr_html_(self) -> str:
        from .notebook import plan_html  # imports sympy (the rate displays): not needed for text and JSON

        return plan_html(self)

    def _repr_latex_(self) -> str:
        from .notebook import plan_latex

        return plan_latex(self)

    def to_text(self) -> str:
        p = ", ".join(f"{k}={format_param(v)}" for k, v in self.params.items())
        lvl = "ε" if self.level_name in (None, "eps") else "α"
        what = {"n": "sample size n", "eps": f"privacy level {lvl}", "target": "reachable risk"}[self.solve]
        lines = [f"plan {self.problem} / {self.privacy}: {what}  ({p})"]
        key = self.solve if self.solve != "eps" else lvl
        hdr = (f"{'target':>10}  {key + ' necessary':>16}  {key + ' sufficient':>16}  tuned mechanism"
               if self.solve != "target" else
               f"{'no estimator below':>20}  {'reached by mechanism':>20}  tuned mechanism")
        lines.append(hdr)
        for r in self.rows:
            mech = r.evidence_sufficient.get("mechanism") or ""
            fp = r.evidence_sufficient.get("free_parameters") or {}
            if fp:
                mech += " (" + ", ".join(f"{k}={_fmt(v)}" for k, v in fp.items()) + ")"
            if self.solve == "target":
                lines.append(f"{_show(r.necessary):>20}  {_show(r.sufficient):>20}  {mech}")
            else:
                lines.append(f"{_show(r.target):>10}  {_show(r.necessary):>16}  {_show(r.sufficient):>16}  {mech}")
        for r in self.rows:
            t = "" if len(self.rows) == 1 or r.target is None else f"target {_show(r.target)}: "
            for tag, ev, reason in (("necessary", r.evidence_necessary, r.reason_necessary),
                                    ("sufficient", r.evidence_sufficient, r.reason_sufficient)):
                if reason:
                    lines.append(f"  {t}{tag}: {reason}")
                if ev.get("certificate"):
                    lines.append(f"  {t}{tag}: {ev['certificate']}")
            for note in r.notes:
                lines.append(f"  {t}note: {note}")
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)


def _show(x):
    if x is None:
        return "null"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if x == math.inf:
            return "inf"
        return _fmt(x)
    return str(x)
