"""Relations between privacy definitions (Barber–Duchi Section 2; docs/methods/relations.md).

This module is the one place where one privacy guarantee is translated into another: the graph
search, the numeric helpers and :func:`convert` with its rendering. Each implication is a
:class:`Relation` record (the data live in :mod:`boundcalc.privacy_relations.relation_table`): a sympy expression (in ε, δ, α, m), a numerically stable
numpy implementation of the same formula (tested equal to the lambdified expression), its source,
a short derivation, its status ("paper" or "derived") and whether it is tight.

The relations form a graph on *levels* ``(model, g)``: the guarantee of ``model`` for pairs of samples
at Hamming distance ``g`` (``g = 1``: neighbours; ``g = m``: groups, ``--group m``). :func:`convert`
enumerates every chain of relations from the source to the target (e.g. pure → tv directly and
pure → kl → tv) and keeps the tightest; implications that do not hold answer ``holds = False`` with
the counterexample. :func:`tv_level` (used by the core's lower bounds, which are proved under TV
privacy) is the same search with target ``tv``: one source of truth.

The testing view (Barber–Duchi Prop. 1 and Le Cam): the minimal sum of type I and type II errors of
any test between neighbouring samples is ``1 − TV``, so it is the node ``testing`` of the graph
(:func:`testing_error_bound`), and :func:`type2_lower_bound` gives the whole trade-off curve.
Conditional hypothesis testing privacy (Theorem 1) lives in :mod:`boundcalc.privacy_relations.chtp` (re-exported here).

Every relation is checked by brute force on thousands of random finite channels in
``tests/test_relations.py`` (exact ε, δ(ε), TV, KL and test errors from ``tests/finite_channels.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .chtp import _expr as _chtp_expr
from .chtp import _pos, _printed, chtp_from_dp, dp_from_chtp, gamma  # noqa: F401 (re-exported)
from ..core.errors import InputError
from ..core.privacy import MODELS  # noqa: F401
# the relation records and level tables (data), re-exported: the Python contract
from .relation_table import (GAUSS_KL, GROUPABLE, KL_GROUP, LEVEL_KEYS, LOCAL_REASON, RELATIONS, RELATIONS_BY_KEY,
    RELEASE_ONE, SMOOTH_REASON, SOURCES, TARGETS, Relation, _SYM, _TITLES, _clip01, _f, m, relation_table)
from ..core.symbolic import alpha, delta, eps  # noqa: F401


# ------------------------------------------------------------------ the graph search

@dataclass
class Candidate:
    path: list  # relation keys
    nodes: list  # [(model, g), ...]
    numeric: dict  # level key -> float
    symbolic: dict  # level key -> sympy expr

    def steps(self) -> list:
        return [n if g == 1 else f"{n}[group m]" for n, g in self.nodes]


def _edges(grouped: bool):
    """(from_node, to_node, relation) triples; g ∈ {1, 'm'}."""
    out = []
    for r in RELATIONS:
        if r.kind == "group":
            if grouped:
                out.append(((r.src, 1), (r.dst, "m"), r))
            continue
        out.append(((r.src, 1), (r.dst, 1), r))
        if grouped and r.src in GROUPABLE and r.dst in GROUPABLE:
            out.append(((r.src, "m"), (r.dst, "m"), r))
    return out


@lru_cache(maxsize=None)
def _paths(src: str, dst: str, grouped: bool) -> tuple:
    """All simple chains of relations from (src, 1) to (dst, g) (g = m if grouped and dst is
    groupable, else 1), as tuples of (relation, to_node)."""
    target = (dst, "m" if grouped and dst in GROUPABLE else 1)
    edges = _edges(grouped)
    found = []

    def dfs(node, chain, seen):
        if node == target:
            found.append(tuple(chain))
            return
        for a, b, r in edges:
            if a == node and b not in seen:
                dfs(b, chain + [(r, b)], seen | {b})

    dfs((src, 1), [], {(src, 1)})
    return tuple(found)


def _initial_state(model: str, level: float, dlt: float | None):
    if model == "approx":
        return {"eps": level, "delta": dlt}, {"eps": eps, "delta": delta}
    key = LEVEL_KEYS[model][0]
    return {key: level}, {key: _SYM[key]}


def _evaluate(src: str, chain, level, dlt, group: int, symbolic: bool = True) -> Candidate:
    num, _ = _initial_state(src, level, dlt)
    nodes = [(src, 1)]
    for r, node in chain:
        num = r.fn(num, group)
        nodes.append(node)
    num = {k: float(np.asarray(v)) for k, v in num.items()}
    return Candidate([r.key for r, _ in chain], nodes, num, _symbolic_chain(src, chain) if symbolic else {})


@lru_cache(maxsize=None)
def _symbolic_chain(src: str, chain) -> dict:
    """The composed sympy expression of a chain (structural: independent of the numeric level)."""
    _, sym = _initial_state(src, 1.0, 0.5)
    for r, _node in chain:
        sym = r.apply_sym(sym)
    return sym


def _better(dst: str, a: Candidate, b: Candidate) -> bool:
    """Is a strictly preferable to b (tighter; ties broken by fewer steps)?"""
    if dst == "approx":
        ae, ad, be, bd = a.numeric["eps"], a.numeric["delta"], b.numeric["eps"], b.numeric["delta"]
        a_dom = ae <= be and ad <= bd and (ae < be or ad < bd)
        b_dom = be <= ae and bd <= ad and (be < ae or bd < ad)
        if a_dom != b_dom:
            return a_dom
        return _simpler(a, b)
    key = LEVEL_KEYS[dst][0]
    va, vb = a.numeric[key], b.numeric[key]
    tol = 1e-12 * max(1.0, abs(va), abs(vb))
    if abs(va - vb) > tol:
        return va > vb if dst == "testing" else va < vb
    return _simpler(a, b)


_STATUS_RANK = {"definition": 0, "paper": 1, "derived": 2}


def _simpler(a: Candidate, b: Candidate) -> bool:
    """Tie-break between equally tight chains: fewer steps, then fewer derived (non-paper) steps."""
    def key(c):
        return (len(c.path), sum(_STATUS_RANK[RELATIONS_BY_KEY[k].status] == 2 for k in c.path))
    return key(a) < key(b)


def _pareto(cands: list) -> list:
    out = []
    for c in cands:
        dominated = any(
            o is not c and o.numeric["eps"] <= c.numeric["eps"] and o.numeric["delta"] <= c.numeric["delta"]
            and (o.numeric["eps"] < c.numeric["eps"] or o.numeric["delta"] < c.numeric["delta"])
            for o in cands)
        if not dominated:
            out.append(c)
    return out


def _best(src, dst, level, dlt, group, symbolic=True):
    """Evaluate every chain numerically, keep the tightest; the sympy form only for the winner."""
    chains = _paths(src, dst, group > 1)
    cands = [_evaluate(src, ch, level, dlt, group, symbolic=False) for ch in chains]
    if not cands:
        return None, []
    # approx targets are pairs (ε, δ): choose among the Pareto-optimal chains only
    pool = [i for i, c in enumerate(cands) if dst != "approx" or any(c is p for p in _pareto(cands))]
    bi = pool[0]
    for i in pool[1:]:
        if _better(dst, cands[i], cands[bi]):
            bi = i
    if symbolic:
        cands[bi] = _evaluate(src, chains[bi], level, dlt, group, symbolic=True)
    return cands[bi], cands


# ------------------------------------------------------------------ public numeric helpers

def tv_level(model: str, eps: float, delta: float | None = None) -> float:
    """TV-privacy level α implied by a guarantee of ``model`` at level ``eps`` (docs/methods/relations.md),
    in [0, 1]: the tightest chain of relations to ``tv`` (one source of truth with :func:`convert`).

    - pure / smooth / local ε: tanh(ε/2) = (e^ε − 1)/(e^ε + 1) (tight);
    - approx (ε, δ): (e^ε − 1 + 2δ)/(e^ε + 1) (tight);
    - kl α: min(sqrt(α/2), sqrt(1 − e^{−α})) (Pinsker, Bretagnolle–Huber);
    - tv α: α; none: 1 (no constraint).
    ``eps`` (and ``delta``) may be numpy arrays: the result is then an array, computed in one
    vectorised pass (about 0.05 s for a million points; prefer this to ``np.vectorize``).
    """
    if model == "none":
        return 1.0 if np.ndim(eps) == 0 else np.ones_like(_f(eps))
    if model not in SOURCES:
        raise ValueError(f"no TV level for privacy model {model!r}")
    if model == "approx" and delta is None:
        raise ValueError("tv_level('approx', ...) needs delta")
    if np.ndim(eps) == 0 and np.ndim(delta) == 0:
        return _tv_level_scalar(model, float(eps), None if delta is None else float(delta))
    return _tv_level_array(model, eps, delta)


def privacy_levels(values: dict) -> dict:
    """Values of the level symbols of a bound for ``values["privacy"]``: ``alpha`` (the tv/kl level,
    which the CLI carries in ``eps``) and ``alpha_TV``, the TV level the model implies (used by lower
    bounds proved under TV privacy). Vectorised over an array of ``eps``."""
    out = {}
    priv = values["privacy"]
    if priv in ("tv", "kl"):
        out["alpha"] = values["eps"]
    if priv != "none":
        level = np.asarray(tv_level(priv, values["eps"], values.get("delta")), float)
        if priv != "tv":  # a level derived in float64 (tanh(ε/2), ...) rounded up: it only enters lower bounds
            level = np.asarray(derived_level_up(level), float)
        out["alpha_TV"] = level if level.ndim else float(level)
    return out


#: relative allowance for the float64 error of a TV level derived from ε (tanh(ε/2), (e^ε - 1 + 2δ)/(e^ε + 1),
#: min{√(α/2), √(1 - e^{-α})}, or a chain of the relation table): each is a few elementary operations, a few ulp
#: (2.2e-16 each) at most; 1e-14 leaves a factor 10 of room
DERIVED_LEVEL_REL_ERR = 1e-14


def derived_level_up(level):
    """A TV level computed in float64 rounded up (by :data:`DERIVED_LEVEL_REL_ERR`, then to the next float,
    clipped to [0, 1]): a larger TV level is implied too, so every lower bound proved under it stays valid, while
    the nearest-float value can sit one ulp below the exact level (the unsafe side for a lower bound)."""
    arr = np.asarray(level, float)
    up = np.minimum(1.0, np.nextafter(arr * (1.0 + DERIVED_LEVEL_REL_ERR), np.inf))
    up = np.where(arr > 0, up, arr)
    return up if up.ndim else float(up)


def _tv_level_array(model, eps, delta):
    vals = [_numeric_chain(model, ch, eps, delta, 1)["alpha"] for ch in _paths(model, "tv", False)]
    out = _clip01(np.minimum.reduce([_f(v) for v in vals]))
    return float(out) if np.ndim(out) == 0 else out


@lru_cache(maxsize=1 << 16)
def _tv_level_scalar(model, eps, delta):
    return _tv_level_array(model, eps, delta)


def _numeric_chain(src, chain, level, dlt, group):
    num, _ = _initial_state(src, level, dlt)
    for r, _node in chain:
        num = r.fn(num, group)
    return num


def testing_error_bound(model: str, eps: float | None = None, delta: float | None = None,
                        group: int = 1) -> float:
    """Lower bound on type I + type II error of any test between neighbouring samples (samples
    differing in up to ``group`` entries) under ``model`` at level ``eps`` (α for tv/kl).

    ε-DP: 2/(1+e^ε); (ε,δ)-DP: 2(1−δ)/(1+e^ε) (Barber–Duchi Prop. 1 (3)); α-TV: 1 − α (Le Cam); α-KL:
    1 − min(sqrt(α/2), sqrt(1 − e^{−α})); none: 0. All tight except KL.
    """
    model = _model_name(model, "privacy", SOURCES)
    if model == "none":
        return 0.0
    level, dlt = _parse_levels(model, eps, delta, "privacy")
    best, _ = _best(model, "testing", level, dlt, _parse_group(group), symbolic=False)
    return max(0.0, best.numeric["error_sum"])


def type2_lower_bound(model: str, eps: float | None, delta: float | None, type1: float) -> float:
    """Smallest type II error of any test with type I error ``type1`` between neighbouring samples.

    (ε,δ)-DP (pure: δ = 0): ``max{0, 1 − δ − e^ε a, e^{−ε}(1 − δ − a)}`` — Barber–Duchi Prop. 1 (2)
    in both directions; this is exactly the (ε,δ) trade-off curve (tight). α-TV (and α-KL through its
    TV level): ``max{0, 1 − α − a}``. none: 0.
    """
    model = _model_name(model, "privacy", SOURCES)
    a = float(type1)
    if not 0.0 <= a <= 1.0:
        raise InputError("type1", "must be in [0, 1]", type1)
    if model == "none":
        return 0.0
    level, dlt = _parse_levels(model, eps, delta, "privacy")
    if model in ("pure", "smooth", "local", "approx"):
        d = dlt if model == "approx" else 0.0
        first = 1.0 - d - (a * math.exp(level) if level < 700.0 else (math.inf if a > 0 else 0.0))
        return max(0.0, first, (1.0 - d - a) * math.exp(-level))
    al = tv_level(model, level, dlt)
    return max(0.0, 1.0 - al - a)


# ------------------------------------------------------------------ validation

def _model_name(name, param, allowed):
    key = str(name).strip().lower() if name is not None else ""
    if key not in allowed:
        raise InputError(param, "must be one of " + ", ".join(allowed), name)
    return key


def _parse_group(group) -> int:
    if isinstance(group, bool):
        raise InputError("group", "must be an integer >= 1", group)
    try:
        g = float(group)
    except (TypeError, ValueError):
        raise InputError("group", "must be an integer >= 1", group) from None
    if not math.isfinite(g) or g < 1 or g != math.floor(g) or g > 1e9:
        raise InputError("group", "must be an integer >= 1 (and <= 1e9)", group)
    return int(g)


def _parse_levels(model, eps_value, delta_value, param):
    from ..core.privacy import DELTA, get_model

    spec = get_model(model)
    if spec.level is None:
        return None, None
    level = spec.level.parse(spec.level.default if eps_value is None else eps_value)
    if model == "approx":
        dlt = DELTA.parse(DELTA.default if delta_value is None else delta_value)
    else:
        if delta_value is not None:
            raise InputError("delta", f"is only used with --{param} approx, not with {model}", delta_value)
        dlt = None
    return float(level), (None if dlt is None else float(dlt))


# ------------------------------------------------------------------ convert

@dataclass
class Conversion:
    """Result of :func:`convert`. ``value`` is the implied level (ε for pure/smooth/local/approx, α for
    tv/kl, the error-sum bound for testing), ``delta`` the implied δ for approx; ``None`` where no
    guarantee follows or none is needed."""

    from_model: str
    to_model: str
    params: dict
    holds: bool
    value: float | None = None
    delta: float | None = None
    expr: str | None = None
    latex: str | None = None
    delta_expr: str | None = None
    path: list = field(default_factory=list)
    relations: list = field(default_factory=list)
    source: str | None = None
    derivation: str | None = None
    status: str | None = None
    tight: bool | None = None
    tight_note: str | None = None
    reason: str | None = None
    note: str | None = None
    vacuous: bool = False
    candidates: list = field(default_factory=list)
    testing: dict = field(default_factory=dict)
    chtp: dict | None = None

    def to_dict(self) -> dict:
        out = {
            "from": self.from_model, "to": self.to_model, "params": dict(self.params),
            "holds": self.holds, "value": _clean(self.value), "delta": _clean(self.delta),
            "expr": self.expr, "latex": self.latex, "delta_expr": self.delta_expr,
            "path": list(self.path), "relations": list(self.relations), "source": self.source,
            "derivation": self.derivation, "status": self.status, "tight": self.tight,
            "tight_note": self.tight_note, "reason": self.reason, "note": self.note,
            "vacuous": self.vacuous, "candidates": _clean(self.candidates),
            "testing": _clean(self.testing), "chtp": _clean(self.chtp),
        }
        return out

    def to_text(self) -> str:
        p = self.params
        lvl = _describe(self.from_model, p.get("eps"), p.get("delta"))
        grp = f" (for samples differing in up to {p['group']} entries)" if p.get("group", 1) > 1 else ""
        lines = [f"{lvl}  ⇒  {_TITLES.get(self.to_model, self.to_model)}{grp}"]
        if not self.holds:
            lines.append("  no guarantee follows.")
            if self.reason:
                lines.append(f"  why: {self.reason}")
        elif self.value is None:
            lines.append(f"  holds trivially. {self.reason or ''}".rstrip())
        else:
            if self.to_model == "approx":
                lines.append(f"  implied: (ε, δ) = ({_g(self.value)}, {_g(self.delta)})"
                             + ("  [vacuous]" if self.vacuous else ""))
                lines.append(f"  formula: ε = {self.expr},  δ = {self.delta_expr}")
            elif self.to_model == "testing":
                lines.append(f"  implied: type I + type II error ≥ {_g(self.value)}")
                lines.append(f"  formula: {self.expr}")
            else:
                name = "α" if self.to_model in ("tv", "kl") else "ε"
                lines.append(f"  implied: {name} = {_g(self.value)}" + ("  [vacuous]" if self.vacuous else ""))
                lines.append(f"  formula: {name} = {self.expr}")
            lines.append(f"  via: {' → '.join(self.path)}   ({self.status}"
                         + ("; tight" if self.tight else "") + ")")
            if self.source:
                lines.append(f"  source: {self.source}")
        if self.note:
            lines.append(f"  note: {self.note}")
        t = self.testing or {}
        if t.get("min_error_sum") is not None:
            lines.append(f"  testing: any test between neighbouring samples has type I + type II ≥ "
                         f"{_g(t['min_error_sum'])} under the source guarantee")
        return "\n".join(lines)


def _g(x):
    return "null" if x is None else f"{x:.6g}"


def _describe(model, e, d):
    if model == "none":
        return "no privacy"
    if model == "approx":
        return f"({_g(e)}, {_g(d)})-DP"
    name = MODELS[model].abbrev
    return f"{name} with {'α' if model in ('tv', 'kl') else 'ε'} = {_g(e)}"


def _clean(x):
    """JSON-safe copy: floats that are NaN/inf become None."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


_NO_GUARANTEE = {
    ("tv", "pure"): RELEASE_ONE, ("tv", "kl"): RELEASE_ONE, ("approx", "pure"): RELEASE_ONE,
    ("approx", "kl"): RELEASE_ONE, ("kl", "pure"): GAUSS_KL,
}


def _no_guarantee_reason(src, dst, group):
    if src == "none":
        return ("without privacy any channel qualifies, including the one that releases the sample "
                "itself, which satisfies no privacy definition")
    if dst == "local":
        return LOCAL_REASON
    if dst == "smooth":
        # a source that does not even give pure DP fails for the stronger reason
        return _NO_GUARANTEE.get((src, "pure"), SMOOTH_REASON)
    if (src, dst) in _NO_GUARANTEE:
        return _NO_GUARANTEE[(src, dst)]
    if dst == "kl" and src == "kl" and group > 1:
        return KL_GROUP
    return f"no chain of known implications leads from {src} to {dst}"


def convert(from_model, to_model, eps=None, delta=None, group=1) -> Conversion:
    """Translate a privacy guarantee into another definition (Barber–Duchi Section 2).

    ``eps`` is the level of ``from_model`` (ε for pure/smooth/approx/local, α for tv/kl; the model's
    default if None), ``delta`` the δ of approx. ``to_model`` is a privacy model or ``"testing"``
    (the bound on type I + type II errors). With ``group = m > 1`` the target guarantee is for samples
    differing in up to m entries. Every chain of relations is evaluated and the tightest kept; the
    others are listed in ``candidates``. Raises :class:`InputError` on invalid input.
    """
    src = _model_name(from_model, "from", SOURCES)
    dst = _model_name(to_model, "to", TARGETS)
    g = _parse_group(group)
    if src == "none":
        if eps is not None:
            raise InputError("eps", "is not used with --from none (it has no privacy level)", eps)
        if delta is not None:
            raise InputError("delta", "is only used with --from approx, not with none", delta)
        level, dlt = None, None
    else:
        level, dlt = _parse_levels(src, eps, delta, "from")
    params = {"eps": level, "delta": dlt, "group": g}
    res = Conversion(src, dst, params, holds=False)

    if src != "none":
        res.testing = _testing_view(src, level, dlt, g)
        res.chtp = _chtp_view(src, level, dlt)

    if dst == "none":
        res.holds = True
        res.path = [src, "none"]
        res.status = "paper"
        res.reason = "every channel satisfies 'no privacy'"
        return res
    if src == "none":
        res.holds = False
        res.status = "paper"
        res.reason = _no_guarantee_reason(src, dst, g)
        res.testing = {"min_error_sum": 0.0, "note": "without privacy a test can be error-free"}
        return res

    note = None
    eff_group = g
    if dst in ("smooth", "local"):
        if g > 1:
            note = ("ε-LDP is a guarantee per individual" if dst == "local" else
                    "ε-smooth DP already covers every pair of samples")
            note += "; --group is not applied (use --to pure for the central group-m level)"
        eff_group = 1
    best, cands = _best(src, dst, level, dlt, eff_group)
    if best is None:
        res.holds = False
        res.reason = _no_guarantee_reason(src, dst, g)
        res.status = "paper" if res.reason == RELEASE_ONE else "derived"
        res.note = note
        return res

    res.holds = True
    keys = LEVEL_KEYS[dst]
    res.value = best.numeric[keys[0]]
    res.expr, res.latex = _printed(best.symbolic[keys[0]])
    if dst == "approx":
        res.delta = best.numeric["delta"]
        res.delta_expr, dlatex = _printed(best.symbolic["delta"])
        res.latex = f"\\varepsilon = {res.latex},\\ \\delta = {dlatex}"
    res.path = best.steps()
    res.relations = best.path
    rels = [RELATIONS_BY_KEY[k] for k in best.path]
    if not rels:
        res.status = "paper"
        res.source = "identity (the same definition)"
        res.derivation = "the same guarantee"
        res.tight = True
    else:
        res.source = "; ".join(r.source for r in rels)
        res.derivation = " Then: ".join(f"[{r.title}] {r.derivation}" for r in rels)
        order = {"definition": 0, "paper": 1, "derived": 2}
        res.status = max((r.status for r in rels), key=lambda s: order[s])
        if res.status == "definition":
            res.status = "paper"
        if len(rels) == 1:
            res.tight = rels[0].tight
            res.tight_note = rels[0].tight_note or None
        else:
            res.tight = None
            res.tight_note = "a chain of relations: tightness not established"
    if dst in ("tv",):
        res.vacuous = res.value >= 1.0
    if dst == "approx":
        res.vacuous = res.delta >= 1.0
    if dst == "testing":
        res.vacuous = res.value <= 0.0
    if dst == "approx" and src in ("tv", "kl"):
        note = ((note + " ") if note else "") + (
            "The (0, δ) guarantee (δ = the TV level) holds for every ε ≥ 0, and no smaller δ follows "
            "from a TV level at any ε: release-one-at-random with n = 1/α is α-TV private and has "
            "δ(ε) = α for every ε.")
    res.note = note
    pref = [c for c in (cands if dst != "approx" else _pareto(cands))]
    res.candidates = [
        {"path": c.steps(), "relations": c.path,
         **{k: c.numeric[k] for k in keys},
         "best": c is best, "pareto": (c in pref) if dst == "approx" else None}
        for c in cands
    ]
    return res


def _testing_view(src, level, dlt, g):
    best, _ = _best(src, "testing", level, dlt, 1, symbolic=True)
    out = {
        "min_error_sum": max(0.0, best.numeric["error_sum"]),
        "expr": _printed(best.symbolic["error_sum"])[0],
        "path": best.steps(),
        "source": "; ".join(RELATIONS_BY_KEY[k].source for k in best.path),
        "meaning": "any test between neighbouring samples x, x' has P_x(ψ=1) + P_x'(ψ=0) ≥ min_error_sum",
        "type2_at_type1": {str(a): type2_lower_bound(src, level, dlt, a) for a in (0.01, 0.05, 0.1)},
    }
    if g > 1:
        bg, _ = _best(src, "testing", level, dlt, g, symbolic=True)
        out["min_error_sum_group"] = max(0.0, bg.numeric["error_sum"])
        out["group"] = g
    return out


def _chtp_view(src, level, dlt):
    if src in ("pure", "smooth", "local"):
        c = chtp_from_dp(level, 0.0, 1.0)
        return {"alpha": c["alpha_pure"], "min_error_sum": c["min_error_sum_pure"], "expr": c["expr_pure"],
                "gamma": "any γ > 0", "status": "derived",
                "source": "Barber–Duchi Theorem 1 (forward); tight pure-DP form derived by boundcalc",
                "paper_form_alpha": 1.0 - math.exp(-2.0 * min(level, 700.0)),
                "paper_form_expr": "1 - exp(-2*epsilon)"}
    if src == "approx":
        vals, t1 = {}, {}
        for mult in (2.0, 10.0, 100.0):
            gm = mult * dlt
            if gm <= 1.0:
                c = chtp_from_dp(level, dlt, gm)
                vals[f"{gm:.6g}"] = c["alpha"]
                t1[f"{gm:.6g}"] = c["alpha_theorem1"]
        return {"alpha_at_gamma": vals, "alpha_theorem1_at_gamma": t1,
                "expr_theorem1": _printed(_chtp_expr("CHTP_FORWARD_EXPR"))[0], "status": "derived",
                "condition": "conditioning sets of probability ≥ γ > δ",
                "source": "Barber–Duchi Theorem 1 (forward), constants derived (docs/methods/relations.md)"}
    return None


def __getattr__(name):
    """The CHTP expressions of :mod:`boundcalc.privacy_relations.chtp`, re-exported (built there on first use)."""
    if name.startswith("CHTP_"):
        from . import chtp

        return getattr(chtp, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
