"""The relations between privacy definitions as data (Barber–Duchi Section 2; docs/methods/relations.md):
one :class:`Relation` record per implication, with its sympy expression (built on first use), its
numerically stable numpy form, source, derivation, status and tightness, plus the level variables of each
model and the texts of the implications that do not hold. :mod:`boundcalc.privacy_relations.relations` searches the graph
these records form and renders conversions; this module holds no search.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import sympy as sp

from .chtp import _printed
from ..core.privacy import MODELS
from ..core.symbolic import alpha, delta, eps

#: group size (``--group m``): the target guarantee covers samples differing in up to m entries
m = sp.Symbol("m", positive=True, integer=True)

#: the level variables of each node kind (what a guarantee of that kind consists of)
LEVEL_KEYS = {
    "pure": ("eps",), "smooth": ("eps",), "local": ("eps",), "approx": ("eps", "delta"),
    "tv": ("alpha",), "kl": ("alpha",), "testing": ("error_sum",),
}
_SYM = {"eps": eps, "delta": delta, "alpha": alpha, "error_sum": sp.Symbol("beta", positive=True)}
#: models that have a group (distance-m) version in the graph
GROUPABLE = ("pure", "approx", "tv", "kl", "testing")
TARGETS = ("none", "pure", "smooth", "approx", "tv", "kl", "local", "testing")
SOURCES = ("none", "pure", "smooth", "approx", "tv", "kl", "local")
_TITLES = {**{k: m.title for k, m in MODELS.items()},
           "testing": "testing bound (min type I + type II error)"}

RELEASE_ONE = ("Barber–Duchi Example 2 (release one at random): the channel that publishes one "
               "uniformly chosen record of the sample verbatim is (1/n)-TV private and (0, 1/n)-DP "
               "(δ(ε) = 1/n for every ε), yet the record it releases may be impossible under the "
               "neighbouring sample, so its likelihood ratio and its KL divergence are infinite: it is "
               "not ε-DP for any ε, nor α-KL private for any α. One individual loses all privacy.")
GAUSS_KL = ("Gaussian mechanism: releasing the mean of records in [0,1] plus N(0, σ²) noise is α-KL "
            "private with α = 1/(2n²σ²), but its likelihood ratio exp((z(μ−μ') − (μ²−μ'²)/2)/σ²) is "
            "unbounded in the output z, so it is not ε-DP for any ε.")
LOCAL_REASON = ("local privacy is a property of how the data are collected (each individual "
                "privatises their own datum before it reaches anyone); a central guarantee concerns "
                "only the curator's output. E.g. the Laplace mechanism on the sample mean is ε-DP but "
                "needs every raw datum at the curator: it is not a local protocol at any level.")
SMOOTH_REASON = ("ε-smooth DP requires Q(A|x) ≤ exp(ε ρ_n(x,x')) Q(A|x') with ρ_n = Σ ρ(x_i,x'_i) "
                 "≤ d_ham, i.e. a ratio close to 1 for small changes of a record. Randomized response "
                 "on 1{x_1 > 1/2} with ρ(a,b) = |a−b| is ε-DP, yet moving x_1 from 1/2 to 1/2+η "
                 "changes its likelihood ratio by e^ε, so it is not ε'-smooth DP for any ε' < ε/η, "
                 "i.e. for no fixed ε'. (With ρ the discrete metric, smooth DP is group privacy and "
                 "coincides with ε-DP.)")
KL_GROUP = ("KL divergence has no triangle inequality: α-KL privacy for neighbours bounds nothing for "
            "samples differing in two entries (three distributions P0, P1, P2 with KL ≤ α between "
            "consecutive ones in both directions can have KL(P0‖P2) arbitrarily large: put mass t on a "
            "point under P1, t·e^{-C} under P2 and m0 under P0 with m0 log(m0/t) = α, C = α/t). Use "
            "--to tv for a group guarantee.")


# ------------------------------------------------------------------ relation records

@dataclass(frozen=True, eq=False)  # identity hash: relations are keys of the chain caches
class Relation:
    """One implication ``src ⇒ dst``.

    ``out`` maps each level variable of ``dst`` to a sympy expression in the level symbols of ``src``
    (and m); ``fn(state, m)`` is the same formula in numerically stable numpy form (works on floats and
    arrays). ``kind``: ``"pair"`` (a per-pair statement, valid at any distance) or ``"group"``
    (neighbour guarantee → distance-m guarantee). ``cap``: output keys clipped to [0, 1].
    """

    key: str
    src: str
    dst: str
    out_spec: object  # the dict below, or a function returning it (built on first use: no sympy at import)
    fn: Callable
    title: str
    source: str
    derivation: str
    status: str  # "paper" | "derived" | "definition"
    tight: bool | None
    tight_note: str = ""
    kind: str = "pair"
    paper_form_spec: object = None  # dict, or a function returning it (see ``out_spec``)

    def _resolved(self, name, spec):
        cache = self.__dict__.setdefault("_resolved_cache", {})
        if name not in cache:
            cache[name] = (spec() if callable(spec) else spec) or {}
        return cache[name]

    @property
    def out(self) -> dict:
        """Each level variable of ``dst`` as a sympy expression in the level symbols of ``src`` (and m)."""
        return self._resolved("out", self.out_spec)

    @property
    def paper_form(self) -> dict:
        """The paper's own form of ``out`` where it differs in appearance (tested equal)."""
        return self._resolved("paper_form", self.paper_form_spec)

    def apply_sym(self, state: dict) -> dict:
        rep = {_SYM[k]: v for k, v in state.items()}
        out = {}
        for k, e in self.out.items():
            e = sp.sympify(e)
            try:
                val = e.xreplace(rep)
                bad = val.has(sp.nan, sp.zoo)
            except (ValueError, TypeError):  # e.g. Min(1, nan): a removable 0/0
                bad = True
            if bad:  # removable singularity (e.g. group δ at ε = 0): take the limit in ε
                w = sp.Dummy("w", positive=True)
                rest = {s: v for s, v in rep.items() if s != eps}
                inner = [a for a in e.args if a != 1][0] if isinstance(e, sp.Min) else e
                lim = sp.limit(inner.xreplace({eps: w}).xreplace(rest), w, rep.get(eps, 0))
                val = sp.Min(1, lim) if isinstance(e, sp.Min) else lim
            out[k] = val
        return out


def _f(x):
    return np.asarray(x, dtype=float)


def _clip01(x):
    return np.clip(x, 0.0, 1.0)


def _log_expm1(x):
    """log(e^x − 1) for x > 0 without overflow."""
    x = _f(x)
    big = x > 30
    with np.errstate(over="ignore", divide="ignore"):
        small = np.log(np.expm1(np.where(big, 1.0, x)))
    return np.where(big, x + np.log1p(-np.exp(-np.where(big, x, 30.0))), small)


def _group_delta(e, d, mm):
    """δ (e^{mε} − 1)/(e^ε − 1) (= δ Σ_{j<m} e^{jε}), capped at 1, computed in logs."""
    e, d, mm = np.broadcast_arrays(_f(e), _f(d), _f(mm))
    pos = e > 0
    ee = np.where(pos, e, 1.0)
    with np.errstate(divide="ignore"):
        # at ε = 0 the sum Σ_{j<m} e^{jε} is m
        logv = np.log(d) + np.where(pos, _log_expm1(mm * ee) - _log_expm1(ee), np.log(mm))
    return np.minimum(1.0, np.exp(np.minimum(logv, 0.0)))


def _exp_neg(x):
    return np.exp(-_f(x))


RELATIONS: list[Relation] = [
    Relation(
        "smooth_pure", "smooth", "pure", lambda: {"eps": eps}, lambda s, mm: {"eps": _f(s["eps"])},
        "ε-smooth DP ⇒ ε-DP",
        "Barber–Duchi Def. 2 (ρ ≤ 1 so ρ_n ≤ d_ham)",
        "ρ(a,b) ≤ 1 gives ρ_n(x,x') ≤ d_ham(x,x') = 1 for neighbours, so exp(ε ρ_n) ≤ e^ε.",
        "paper", True, "equality for the discrete metric ρ(a,b) = 1{a≠b}",
    ),
    Relation(
        "local_pure", "local", "pure", lambda: {"eps": eps}, lambda s, mm: {"eps": _f(s["eps"])},
        "ε-LDP (sequentially interactive) ⇒ central ε-DP (replace-one)",
        "Duchi–Jordan–Wainwright (local privacy definition); docs/methods/relations.md",
        "The central channel is q(z_{1:n}|x) = Π_i q_i(z_i | x_i, z_{1:i-1}); replacing x_i changes one "
        "factor, whose ratio is at most e^ε.",
        "paper", True, "n = 1 (or any protocol where one factor attains e^ε)",
    ),
    Relation(
        "pure_approx", "pure", "approx", lambda: {"eps": eps, "delta": sp.Integer(0)},
        lambda s, mm: {"eps": _f(s["eps"]), "delta": np.zeros_like(_f(s["eps"]))},
        "ε-DP ⇒ (ε, 0)-DP", "definition (Barber–Duchi Defs. 1, 3)", "δ = 0 in Def. 3.",
        "definition", True, "",
    ),
    Relation(
        "pure_tv", "pure", "tv", lambda: {"alpha": sp.tanh(eps / 2)},
        lambda s, mm: {"alpha": np.tanh(_f(s["eps"]) / 2)},
        "ε-DP ⇒ α-TV with α = (e^ε − 1)/(e^ε + 1) = tanh(ε/2)",
        "Barber–Duchi Prop. 1, inequality (3), with Le Cam (4)",
        "Prop. 1: every test has P_0(ψ=1) + e^ε P_1(ψ=0) ≥ 1 and P_1(ψ=0) + e^ε P_0(ψ=1) ≥ 1; adding, "
        "type I + type II ≥ 2/(1+e^ε); Le Cam: the minimum is 1 − TV; so TV ≤ 1 − 2/(1+e^ε) = tanh(ε/2).",
        "paper", True, "randomized response on one bit has TV exactly tanh(ε/2)",
        paper_form_spec=lambda: {"alpha": (sp.exp(eps) - 1) / (sp.exp(eps) + 1)},
    ),
    Relation(
        "approx_tv", "approx", "tv", lambda: {"alpha": sp.Min(1, sp.tanh(eps / 2) + delta * (1 - sp.tanh(eps / 2)))},
        lambda s, mm: {"alpha": _clip01(np.tanh(_f(s["eps"]) / 2)
                                        + _f(s["delta"]) * 2 / (1 + np.exp(np.minimum(_f(s["eps"]), 700))))},
        "(ε,δ)-DP ⇒ α-TV with α = (e^ε − 1 + 2δ)/(e^ε + 1)",
        "Barber–Duchi Prop. 1, inequality (3), with Le Cam (4)",
        "Prop. 1: P_0(ψ=1) + e^ε P_1(ψ=0) ≥ 1 − δ and symmetrically; adding, type I + type II ≥ "
        "2(1−δ)/(1+e^ε); so TV ≤ 1 − 2(1−δ)/(1+e^ε) = tanh(ε/2) + δ(1 − tanh(ε/2)).",
        "paper", True,
        "P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0) and its mirror image are (ε,δ)-DP with exactly this TV",
        paper_form_spec=lambda: {"alpha": (sp.exp(eps) - 1 + 2 * delta) / (sp.exp(eps) + 1)},
    ),
    Relation(
        "pure_kl", "pure", "kl", lambda: {"alpha": eps * sp.tanh(eps / 2)},
        lambda s, mm: {"alpha": _f(s["eps"]) * np.tanh(_f(s["eps"]) / 2)},
        "ε-DP ⇒ α-KL with α = ε (e^ε − 1)/(e^ε + 1) = ε tanh(ε/2)",
        "docs/methods/relations.md (derived; cf. Dwork–Rothblum–Vadhan's ε(e^ε − 1))",
        "KL(P‖Q) is jointly convex in (P, Q), so over the polytope of ε-DP pairs {e^{−ε} ≤ p_z/q_z ≤ e^ε} "
        "its maximum is at a vertex. A vertex needs 2k − 2 independent active constraints: all but two "
        "coordinates vanish and the two left have likelihood ratios e^ε and e^{−ε}, i.e. binary "
        "randomized response P = (e^ε, 1)/(1+e^ε), Q = (1, e^ε)/(1+e^ε), where "
        "KL = ε (e^ε − 1)/(e^ε + 1).",
        "derived", True, "randomized response on one bit: KL = ε tanh(ε/2) exactly",
        paper_form_spec=lambda: {"alpha": eps * (sp.exp(eps) - 1) / (sp.exp(eps) + 1)},
    ),
    Relation(
        "kl_tv_pinsker", "kl", "tv", lambda: {"alpha": sp.Min(1, sp.sqrt(alpha / 2))},
        lambda s, mm: {"alpha": _clip01(np.sqrt(_f(s["alpha"]) / 2))},
        "α-KL ⇒ α'-TV with α' = sqrt(α/2) (Pinsker)",
        "Barber–Duchi Section 4 (Pinsker's inequality)",
        "Pinsker: TV(P,Q) ≤ sqrt(KL(P‖Q)/2).",
        "paper", False, "approached only as α → 0 (Pinsker is not attained)",
    ),
    Relation(
        "kl_tv_bh", "kl", "tv", lambda: {"alpha": sp.sqrt(1 - sp.exp(-alpha))},
        lambda s, mm: {"alpha": np.sqrt(-np.expm1(-_f(s["alpha"])))},
        "α-KL ⇒ α'-TV with α' = sqrt(1 − e^{−α}) (Bretagnolle–Huber)",
        "Bretagnolle–Huber (1979); Tsybakov (2009) Lemma 2.6 — standard, not in Barber–Duchi",
        "TV ≤ sqrt(1 − e^{−KL}); it beats Pinsker when α > 1.5936 (where α/2 = 1 − e^{−α}), and stays < 1.",
        "derived", False, "",
    ),
    Relation(
        "tv_approx", "tv", "approx", lambda: {"eps": sp.Integer(0), "delta": alpha},
        lambda s, mm: {"eps": np.zeros_like(_f(s["alpha"])), "delta": _f(s["alpha"])},
        "α-TV ⇒ (0, α)-DP (hence (ε, α)-DP for every ε ≥ 0)",
        "definition: TV = sup_A |Q(A|x) − Q(A|x')|",
        "TV ≤ α means Q(A|x) ≤ Q(A|x') + α = e^0 Q(A|x') + α for every A.",
        "definition", True,
        "no smaller δ at any ε: release-one-at-random with n = 1/α has δ(ε) = α for every ε",
    ),
    # ---- group privacy (neighbours → samples differing in up to m entries)
    Relation(
        "group_pure", "pure", "pure", lambda: {"eps": m * eps}, lambda s, mm: {"eps": mm * _f(s["eps"])},
        "ε-DP ⇒ mε-DP for groups of m",
        "Dwork–Roth (2014) Thm 2.2; Barber–Duchi §3.2",
        "Chain x = x^0, x^1, ..., x^m = x' of neighbours: Q(A|x) ≤ e^ε Q(A|x^1) ≤ ... ≤ e^{mε} Q(A|x').",
        "paper", True, "the geometric mechanism on a count attains e^{mε}", kind="group",
    ),
    Relation(
        "group_approx", "approx", "approx",
        lambda: {"eps": m * eps, "delta": sp.Min(1, delta * (sp.exp(m * eps) - 1) / (sp.exp(eps) - 1))},
        lambda s, mm: {"eps": mm * _f(s["eps"]), "delta": _group_delta(s["eps"], s["delta"], mm)},
        "(ε,δ)-DP ⇒ (mε, δ (e^{mε} − 1)/(e^ε − 1))-DP for groups of m",
        "Dwork–Roth (2014) §2.3; docs/methods/uniformity-of-mass.md",
        "Along the chain, Q(A|x^0) ≤ e^ε Q(A|x^1) + δ ≤ e^{2ε} Q(A|x^2) + e^ε δ + δ ≤ ... ≤ e^{mε} Q(A|x^m) "
        "+ δ Σ_{j<m} e^{jε}, and Σ_{j<m} e^{jε} = (e^{mε} − 1)/(e^ε − 1).",
        "derived", None, "not known to be tight", kind="group",
    ),
    Relation(
        "group_tv", "tv", "tv", lambda: {"alpha": sp.Min(1, m * alpha)},
        lambda s, mm: {"alpha": _clip01(mm * _f(s["alpha"]))},
        "α-TV ⇒ mα-TV for groups of m",
        "triangle inequality for TV",
        "TV(Q_x, Q_x') ≤ Σ_j TV(Q_{x^{j-1}}, Q_{x^j}) ≤ mα along a chain of neighbours.",
        "derived", True, "release-one-at-random with m changed records: TV = m/n = mα", kind="group",
    ),
    # ---- the testing view: minimal type I + type II error (larger is stronger)
    Relation(
        "tv_testing", "tv", "testing", lambda: {"error_sum": 1 - alpha},
        lambda s, mm: {"error_sum": 1 - _f(s["alpha"])},
        "α-TV ⇒ type I + type II ≥ 1 − α",
        "Barber–Duchi Def. 4, inequality (5); Le Cam (4)",
        "inf_ψ P_0(ψ=1) + P_1(ψ=0) = 1 − TV(P_0, P_1) ≥ 1 − α.",
        "paper", True, "attained by the likelihood-ratio test",
    ),
    Relation(
        "pure_testing", "pure", "testing", lambda: {"error_sum": 2 / (1 + sp.exp(eps))},
        lambda s, mm: {"error_sum": 2 * np.exp(-_f(s["eps"])) / (1 + np.exp(-_f(s["eps"])))},
        "ε-DP ⇒ type I + type II ≥ 2/(1 + e^ε)",
        "Barber–Duchi Prop. 1, inequality (3)",
        "add P_0(ψ=1) + e^ε P_1(ψ=0) ≥ 1 and its mirror image.",
        "paper", True, "randomized response on one bit",
    ),
    Relation(
        "approx_testing", "approx", "testing", lambda: {"error_sum": 2 * (1 - delta) / (1 + sp.exp(eps))},
        lambda s, mm: {"error_sum": 2 * (1 - _f(s["delta"])) * np.exp(-_f(s["eps"]))
                       / (1 + np.exp(-_f(s["eps"])))},
        "(ε,δ)-DP ⇒ type I + type II ≥ 2(1 − δ)/(1 + e^ε)",
        "Barber–Duchi Prop. 1, inequality (3)",
        "add P_0(ψ=1) + e^ε P_1(ψ=0) ≥ 1 − δ and its mirror image.",
        "paper", True, "the 4-point pair of the approx ⇒ tv relation",
    ),
    Relation(
        "kl_testing_bh", "kl", "testing",
        lambda: {"error_sum": sp.exp(-alpha) / (1 + sp.sqrt(1 - sp.exp(-alpha)))},
        lambda s, mm: {"error_sum": np.exp(-_f(s["alpha"])) / (1 + np.sqrt(-np.expm1(-_f(s["alpha"]))))},
        "α-KL ⇒ type I + type II ≥ 1 − sqrt(1 − e^{−α}) (≥ e^{−α}/2)",
        "Bretagnolle–Huber; Tsybakov (2009) Lemma 2.6 and Thm 2.2(iii)",
        "1 − TV with TV ≤ sqrt(1 − e^{−α}), written as e^{−α}/(1 + sqrt(1 − e^{−α})) (no cancellation "
        "for large α).",
        "derived", False, "",
    ),
]

RELATIONS_BY_KEY = {r.key: r for r in RELATIONS}


def relation_table() -> list:
    """Every relation as a JSON-safe dict (for listings, docs and ``boundcalc list``)."""
    out = []
    for r in RELATIONS:
        out.append({
            "key": r.key, "from": r.src, "to": r.dst, "kind": r.kind, "title": r.title,
            "expr": {k: _printed(sp.sympify(e))[0] for k, e in r.out.items()},
            "latex": {k: _printed(sp.sympify(e))[1] for k, e in r.out.items()},
            "paper_form": {k: str(e) for k, e in r.paper_form.items()} or None,
            "source": r.source, "derivation": r.derivation, "status": r.status,
            "tight": r.tight, "tight_note": r.tight_note or None,
        })
    return out
