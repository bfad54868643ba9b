"""How privacy budgets compose when several statistics are estimated in one study (docs/methods/planning-a-study.md).

A study runs one mechanism per statistic. Two ways of sharing one budget, each a composition theorem:

- **Sequential composition** (the statistics are computed on the same records): mechanisms that are private at
  levels ``ε_1, ..., ε_k`` and run on the same records are jointly private at ``ε_1 + ... + ε_k`` under ε-DP
  (Dwork & Roth 2014, Theorem 3.14), under ε-local DP (the same theorem applied to each person's channel: a person
  who answers k questions through channels that are ``ε_i``-LDP has released an ``(Σ ε_i)``-LDP report), and
  under ε-smooth DP (the smooth-DP condition bounds each likelihood ratio pointwise by ``exp(ε_i ρ_n(x, x'))``;
  the ratio of independent mechanisms is the product of the ratios, so ``exp((Σ ε_i) ρ_n(x, x'))``: the proof of
  Dwork & Roth's Theorem 3.14 with ``ε_i ρ_n`` in place of ``ε_i``). Under α-KL privacy levels add by the chain
  rule of the Kullback–Leibler divergence (the divergence of a product of independent mechanisms is the sum of
  their divergences; Cover & Thomas, Theorem 2.5.3); under α-TV privacy they add by the subadditivity of the
  total variation distance on products (``TV(⊗P_i, ⊗Q_i) ≤ Σ TV(P_i, Q_i)``, a coupling argument).
  Under (ε,δ)-DP, basic composition gives ``(Σ ε_i, Σ δ_i)`` for any mechanisms (Dwork & Roth, Theorem 3.16);
  where the mechanisms are known (Laplace, Gaussian, or merely ε_i-DP) their privacy-loss distributions are
  composed by Google's ``dp-accounting`` package (PLD accountant, pessimistic estimates), which is tighter:
  the exact composition of Gaussian mechanisms (Dong, Roth & Su 2019; Bun & Steinke 2016 in zCDP), and the optimal
  composition of ε_i-DP mechanisms (Kairouz, Oh & Viswanath 2015).
- **Parallel composition** (the statistics are computed on disjoint groups of people): each group's mechanism
  sees only its own records, a neighbouring sample changes one record and so one group's input, and the study is
  private at the largest of the groups' levels (McSherry 2009; the same one-group argument for
  every model here, local, smooth, KL, TV and (ε,δ) included). Each group may then use the whole budget.

``none`` (no privacy) has no budget to share: every statistic is computed on the same records.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.errors import InputError


@dataclass(frozen=True)
class Rule:
    """The composition theorems a study uses under one privacy model."""

    sequential: str  # one sentence: how levels add on the same records
    parallel: str  # one sentence: disjoint groups
    source: str


_PURE_SEQ = "levels add on the same records (sequential composition)"
_PAR = "disjoint groups of people each use the whole budget (parallel composition)"
RULES = {
    "pure": Rule(_PURE_SEQ, _PAR, "Dwork & Roth 2014, Theorem 3.14; McSherry 2009"),
    "local": Rule(_PURE_SEQ + " (each person's channels compose)", _PAR,
                  "Dwork & Roth 2014, Theorem 3.14 (applied to each person's channel); McSherry 2009"),
    "smooth": Rule(_PURE_SEQ + " (the pointwise likelihood-ratio bounds multiply)", _PAR,
                   "Dwork & Roth 2014, Theorem 3.14 (its proof, with ε ρ_n in place of ε); McSherry 2009"),
    "kl": Rule("KL levels add (chain rule of the Kullback–Leibler divergence)", _PAR,
               "Cover & Thomas 2006, Theorem 2.5.3; McSherry 2009"),
    "tv": Rule("TV levels add (total variation is subadditive on products)", _PAR,
               "subadditivity of total variation on product measures; McSherry 2009"),
    "approx": Rule("basic composition (Σε, Σδ), tightened by the dp-accounting PLD accountant for known mechanisms",
                   _PAR, "Dwork & Roth 2014, Theorem 3.16; Kairouz, Oh & Viswanath 2015; Dong, Roth & Su 2019; "
                         "Google dp-accounting (PLD accountant); McSherry 2009"),
    "none": Rule("no budget: every statistic on the same records", "not needed (no budget)", ""),
}


def rule(privacy: str) -> Rule:
    """The composition rule of a privacy model, or an InputError for a model without one."""
    if privacy not in RULES:
        raise InputError("privacy", f"{privacy} has no composition theorem in boundcalc, so a study cannot share "
                                    "its budget; use one of " + ", ".join(RULES), privacy)
    return RULES[privacy]


# ---------------------------------------------------------------------- (ε,δ): the PLD accountant

#: discretisation of the privacy loss in the PLD accountant (pessimistic estimates: the ε returned is an upper bound)
PLD_INTERVAL = 1e-3


@dataclass(frozen=True)
class Event:
    """The privacy of one statistic's mechanism, as the accountant sees it.

    ``kind``: ``"gaussian"`` (a Gaussian mechanism that is (eps, delta)-DP: its noise multiplier is at least the
    exact analytic calibration σ(eps, delta) of Balle & Wang 2018, Theorem 8, and a larger multiplier only adds
    privacy), ``"laplace"`` (a scalar Laplace mechanism that is eps-DP: scale at least sensitivity/eps),
    ``"pure"`` (any eps-DP mechanism: the worst-case privacy-loss pair of an eps-DP mechanism, which gives the
    optimal composition of Kairouz, Oh & Viswanath 2015) or ``"generic"`` (any (eps, delta)-DP mechanism).
    """

    kind: str
    eps: float
    delta: float = 0.0

    def pld(self):
        from dp_accounting.pld import common, privacy_loss_distribution as pldm

        if self.kind == "gaussian":
            from ..core.gauss_calibration import sigma_analytic_scalar

            return pldm.from_gaussian_mechanism(sigma_analytic_scalar(self.eps, self.delta), sensitivity=1.0,
                                                value_discretization_interval=PLD_INTERVAL)
        if self.kind == "laplace":
            return pldm.from_laplace_mechanism(1.0 / self.eps, sensitivity=1.0,
                                               value_discretization_interval=PLD_INTERVAL)
        delta = 0.0 if self.kind == "pure" else self.delta
        return pldm.from_privacy_parameters(common.DifferentialPrivacyParameters(self.eps, delta),
                                            value_discretization_interval=PLD_INTERVAL)


def composed_epsilon(events, delta: float) -> float:
    """The ε at which the composition of ``events`` is (ε, delta)-DP, by dp-accounting's PLD accountant
    (pessimistic: an upper bound on the true ε). One event is returned as it is (no discretisation loss)."""
    events = list(events)
    if not events:
        return 0.0
    if len(events) == 1 and events[0].delta <= delta:
        return events[0].eps
    pld = events[0].pld()
    for ev in events[1:]:
        pld = pld.compose(ev.pld())
    eps = float(pld.get_epsilon_for_delta(delta))
    return eps if math.isfinite(eps) else math.inf


def event_of(bound, values: dict) -> Event:
    """The accountant's view of the mechanism behind a certified upper bound at (``values``' ε, δ).

    A bound whose expression does not involve δ describes one mechanism for every δ > 0, hence an ε-DP one
    (a mechanism that is (ε, δ)-DP for every δ > 0 is ε-DP); its noise decides between the scalar Laplace PLD
    (d = 1) and the generic ε-DP pair. A Gaussian mechanism is accounted by its noise; anything else as a generic
    (ε, δ)-DP mechanism.
    """
    eps, delta = float(values["eps"]), float(values["delta"])
    noise = str((bound.extra or {}).get("noise", "")) if bound is not None else ""
    names = {s.name for s in getattr(bound.expr, "free_symbols", ())} if bound is not None else {"delta"}
    if noise in ("gaussian", "gauss"):
        return Event("gaussian", eps, delta)
    if "delta" not in names:
        if noise in ("laplace", "l2-laplace") and int(values.get("d", 1) or 1) == 1:
            return Event("laplace", eps)
        return Event("pure", eps)
    return Event("generic", eps, delta)
