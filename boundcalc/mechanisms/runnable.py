"""Runnable mechanisms: the mechanism behind a certified upper bound as an object a user runs on data.

Every ``rate`` and ``plan`` answer names the mechanism of its certified upper bound and its tuned parameters
(truncation radius, noise scale, bin count, ...). ``res.upper.mechanism()`` (or ``boundcalc.mechanism(...)``) returns
that mechanism, tuned, as one of the classes here:

- :class:`CentralMechanism`: a curator holds the ``n`` records; ``release(records, rng)`` returns the estimate;
- :class:`LocalMechanism`: each user randomizes their own record; ``privatize(record, rng)`` (client side),
  ``privatize_all(records, rng)`` (every user at once) and ``estimate(reports)`` (server side).

Each carries its :class:`Guarantee` (the privacy model, level and neighbouring relation it satisfies), its tuned
``parameters`` and the ``certified_risk`` of the upper bound on the problem's class at those parameters, and has a
``check_privacy()`` that re-checks the guarantee independently of the code that builds the mechanism (OpenDP's
privacy map, exact likelihood ratios of a finite channel, or the calibration formula re-evaluated).

``boundcalc check`` runs the same objects (``release_from_statistic`` / ``simulate`` / ``privatize_all``), so there
is one implementation of each mechanism. The numpy implementations are *reference implementations*: their
noise is drawn in floating point and is not hardened against floating-point attacks on the noise (Mironov 2012,
"On significance of the least significant bits for differential privacy"); where OpenDP has the parts
(``reference=False``) the mechanism is an OpenDP measurement. Docs: ``docs/methods/from-a-plan-to-data.md``.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np

from ..core.errors import InputError

#: the neighbouring relation of the central problems, in words
CENTRAL_NEIGHBOURS = "data sets of n records differing in one record (replace one, n fixed)"
#: the neighbouring relation of the local problems, in words
LOCAL_NEIGHBOURS = "any two inputs of one user"

REFERENCE_NOTE = ("numpy reference implementation: the noise is drawn in floating point and is not hardened "
                  "against floating-point attacks on the noise (use an OpenDP measurement where one is offered)")


@dataclass(frozen=True)
class Guarantee:
    """The privacy a mechanism gives: the model, its level (``eps``; for tv/kl the level alpha is stored in ``eps``
    and named by ``level_name``), ``delta`` (approx) and the neighbouring relation in words."""

    privacy: str
    eps: float | None
    delta: float | None = None
    neighbouring: str = ""
    level_name: str = "eps"

    def describe(self) -> str:
        if self.privacy == "none":
            return "no privacy guarantee (privacy none)"
        name = {"eps": "ε", "alpha": "α"}.get(self.level_name, self.level_name)
        level = "" if self.eps is None else f" {name} = {_num(self.eps)}"
        if self.delta is not None:
            level += f", δ = {_num(self.delta)}"
        what = {"pure": "ε-differential privacy", "approx": "(ε, δ)-differential privacy",
                "smooth": "ε-differential privacy (smooth model)", "tv": "α-TV privacy",
                "kl": "α-KL privacy", "local": "ε-local differential privacy"}.get(self.privacy, self.privacy)
        out = f"{what}:{level}"
        if self.neighbouring:
            out += f"; neighbours: {self.neighbouring}"
        return out

    def to_dict(self) -> dict:
        return {"privacy": self.privacy, self.level_name: self.eps, "delta": self.delta,
                "neighbouring": self.neighbouring, "level_name": self.level_name}


def _num(x) -> str:
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return str(int(x))
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if x == math.inf:
        return "inf"
    return f"{x:.6g}"


def as_rng(rng) -> np.random.Generator:
    """``None`` -> a fresh :func:`numpy.random.default_rng`; an int seed or a Generator accepted."""
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and int(rng) >= 0:
        return np.random.default_rng(int(rng))
    raise InputError("rng", "must be None, a non-negative integer seed or a numpy.random.Generator", rng)


def as_records(records, d: int | None = None, name: str = "records", n: int | None = None,
               integer: bool = False) -> np.ndarray:
    """``records`` as a float array of shape (m,) (``d`` None or 1 with 1-d input) or (m, d); InputError on a
    wrong type, shape, an empty array or a non-finite value. ``n``: the exact number of records required."""
    if isinstance(records, (str, bytes, dict)) or records is None:
        raise InputError(name, "must be a numpy array (or list) of numbers", records)
    try:
        arr = np.asarray(records, dtype=float)
    except (TypeError, ValueError):
        raise InputError(name, "must be a numpy array (or list) of numbers", type(records).__name__) from None
    if arr.dtype == object:
        raise InputError(name, "must be a numpy array (or list) of numbers", type(records).__name__)
    if d is None or d == 1:
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.ndim != 1:
            raise InputError(name, "must be a 1-d array of shape (n,)" + (" or (n, 1)" if d == 1 else ""),
                             f"shape {arr.shape}")
    else:
        if arr.ndim != 2 or arr.shape[1] != d:
            raise InputError(name, f"must be a 2-d array of shape (n, {d})", f"shape {arr.shape}")
    if arr.shape[0] == 0:
        raise InputError(name, "must hold at least one record", "an empty array")
    if n is not None and arr.shape[0] != n:
        raise InputError(name, f"must hold exactly n = {n} records (the mechanism was tuned and calibrated for "
                               f"n; build it for another n with mechanism(..., n=...))", f"{arr.shape[0]} records")
    if not np.all(np.isfinite(arr)):
        raise InputError(name, "must be finite numbers (no NaN or inf)", "non-finite values")
    if integer and not np.all(arr == np.round(arr)):
        raise InputError(name, "must be integers", "non-integer values")
    return arr


def as_reps(reps) -> int:
    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or int(reps) < 1:
        raise InputError("reps", "must be a positive integer", reps)
    return int(reps)


class Mechanism:
    """Base of the runnable mechanisms (plain attributes, set in ``__init__``).

    ``problem``, ``privacy``; ``label``: the upper bound's mechanism label; ``bound``: the upper bound's name;
    ``parameters``: the tuned parameters by name (the free parameters of the bound and derived ones, e.g. the
    noise scale); ``guarantee``: a :class:`Guarantee`; ``certified_risk``: the certified upper bound's value on the
    problem's class at these parameters; ``n``: the sample size it was tuned for; ``reference``: True for a numpy
    reference implementation, False for an OpenDP measurement; ``notes``: what a user should know (domain,
    clamping, output)."""

    kind = "mechanism"

    def __init__(self, problem: str, privacy: str, label: str, parameters: dict, guarantee: Guarantee,
                 certified_risk: float | None, n: int, reference: bool = True, bound: str = "",
                 notes: tuple = (), values: dict | None = None):
        self.problem = problem
        self.privacy = privacy
        self.label = label
        self.parameters = dict(parameters)
        self.guarantee = guarantee
        self.certified_risk = None if certified_risk is None else float(certified_risk)
        self.n = int(n) if n is not None else None
        self.reference = bool(reference)
        self.bound = bound
        self.notes = tuple(notes)
        self.values = dict(values or {})  # the problem's parameter values it was built at

    # ------------------------------------------------------------------ description
    def describe(self) -> str:
        lines = [f"{self.kind} mechanism for {self.problem} / {self.privacy}: {self.label}"
                 + (f"  ({self.bound})" if self.bound else "")]
        if self.n is not None:
            lines.append(f"  tuned for n = {self.n}")
        if self.parameters:
            lines.append("  parameters: " + ", ".join(f"{k} = {_num(v)}" for k, v in self.parameters.items()))
        lines.append("  guarantee: " + self.guarantee.describe())
        if self.certified_risk is not None:
            lines.append(f"  certified risk on the class: {_num(self.certified_risk)}")
        lines.append("  implementation: " + ("OpenDP measurement" if not self.reference else REFERENCE_NOTE))
        lines.extend("  note: " + x for x in self.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.problem}/{self.privacy} {self.label!r} n={self.n} "
                f"{', '.join(f'{k}={_num(v)}' for k, v in self.parameters.items())}>")

    def __str__(self) -> str:
        return self.describe()

    def to_dict(self) -> dict:
        return {"problem": self.problem, "privacy": self.privacy, "kind": self.kind, "mechanism": self.label,
                "bound": self.bound, "n": self.n,
                "parameters": {k: (v if isinstance(v, (int, str)) else float(v)) for k, v in self.parameters.items()},
                "guarantee": self.guarantee.to_dict(), "certified_risk": self.certified_risk,
                "reference": self.reference, "notes": list(self.notes)}

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{html.escape(str(k))}</td><td>{html.escape(_num(v))}</td></tr>"
                       for k, v in self.parameters.items())
        notes = "".join(f"<li>{html.escape(x)}</li>" for x in self.notes)
        impl = "OpenDP measurement" if not self.reference else REFERENCE_NOTE
        return (f"<div><b>{html.escape(self.kind)} mechanism</b> for {html.escape(self.problem)} / "
                f"{html.escape(self.privacy)}: {html.escape(self.label)}<br>"
                f"tuned for n = {self.n}; certified risk on the class: {html.escape(_num(self.certified_risk))}<br>"
                f"guarantee: {html.escape(self.guarantee.describe())}<br>"
                f"<table><tr><th>parameter</th><th>value</th></tr>{rows}</table>"
                f"<small>{html.escape(impl)}</small>" + (f"<ul>{notes}</ul>" if notes else "") + "</div>")

    def to_opendp(self) -> "Mechanism":
        """This mechanism as an OpenDP measurement (``reference=False``), where OpenDP has the parts; InputError
        otherwise, and when the optional extra is missing (``pip install 'boundcalc[opendp]'``)."""
        raise InputError("reference", f"{self.problem}/{self.privacy} '{self.label}': no OpenDP measurement is "
                                      "offered for this mechanism; use the numpy reference implementation "
                                      "(reference=True)", False)

    # ------------------------------------------------------------------ privacy
    def check_privacy(self) -> dict:
        """An independent check of :attr:`guarantee`: ``{"method": ..., "passed": bool, ...}``."""
        raise NotImplementedError(f"{type(self).__name__} has no privacy check")


class CentralMechanism(Mechanism):
    """A curator's mechanism on the ``n`` records. Subclasses define :meth:`statistic` (the data step: records ->
    the clipped statistic, shape (d,)) and :meth:`release_from_statistic` (the rest, vectorised over
    replications); :meth:`release` is the two in sequence, so ``check`` (which draws the statistic directly from
    its sampling law where that is exact) and a user run the same code after the data step."""

    kind = "central"

    def statistic(self, records) -> np.ndarray:
        raise NotImplementedError

    def release_from_statistic(self, statistic, rng, reps: int) -> np.ndarray:
        raise NotImplementedError

    def release(self, records, rng=None):
        """The estimate from the data set ``records`` (numpy array (n,) or (n, d)); ``rng``: None, a seed or a
        Generator. A scalar for one-dimensional estimates, else an array."""
        rng = as_rng(rng)
        stat = np.asarray(self.statistic(records), dtype=float)
        out = np.asarray(self.release_from_statistic(stat.reshape(1, -1), rng, 1))[0]
        return float(out[0]) if out.ndim == 1 and out.shape[0] == 1 and self._scalar_output else out

    _scalar_output = True


class LocalMechanism(Mechanism):
    """A local randomizer: each user privatizes their own record; the server estimates from the reports."""

    kind = "local"

    def privatize(self, record, rng=None):
        raise NotImplementedError

    def privatize_all(self, records, rng=None):
        raise NotImplementedError

    def estimate(self, reports):
        raise NotImplementedError

    def channel(self):
        """The exact channel Q[y, x] (finite input and output sets), else None."""
        return None

    def simulate(self, distribution, n, rng, reps):
        raise NotImplementedError


def no_mechanism(problem: str, privacy: str, label: str, why: str = "") -> InputError:
    """The error for an upper bound without a runnable mechanism."""
    return InputError("mechanism", f"{problem}/{privacy}: the upper bound '{label}' has no runnable mechanism"
                      + (f" ({why})" if why else ""))
