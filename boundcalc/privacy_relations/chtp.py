"""Conditional hypothesis testing privacy (CHTP, Barber & Duchi Theorem 1) in derived forms:
:func:`chtp_from_dp` (the CHTP level implied by (ε,δ)-DP) and :func:`dp_from_chtp` (the converse).
Split from :mod:`boundcalc.privacy_relations.relations`, which re-exports these names and uses them in ``convert``.
"""
from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp

from ..core.errors import InputError
from ..core.symbolic import alpha, delta, eps

#: CHTP conditioning level γ
gamma = sp.Symbol("gamma", positive=True)


def _pos(x, name):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise InputError(name, "must be a number > 0", x) from None
    if isinstance(x, bool) or not math.isfinite(v) or v <= 0:
        raise InputError(name, "must be a number > 0", x)
    return v



# ------------------------------------------------------------------ CHTP (Theorem 1, derived forms)

#: the Theorem 1 expressions, built on first use (``CHTP_FORWARD_EXPR`` etc. are module attributes
#: through :func:`__getattr__`: importing this module builds no sympy expression)
_EXPRS = {
    "CHTP_FORWARD_EXPR": lambda: 1 - (gamma - delta) / (sp.exp(2 * eps) * gamma + sp.exp(eps) * delta),
    "CHTP_PURE_EXPR": lambda: sp.tanh(eps / 2),
    "CHTP_CONVERSE_EXPR": lambda: sp.log((1 + 2 * alpha) / (1 - 2 * alpha)),
    "CHTP_CONVERSE_SHARP_EXPR": lambda: 4 * sp.atanh(alpha),
}


def __getattr__(name):
    if name in _EXPRS:
        value = globals()[name] = _EXPRS[name]()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _expr(name):
    return globals()[name] if name in globals() else __getattr__(name)


@lru_cache(maxsize=None)
def _printed(expr) -> tuple:
    return str(expr), sp.latex(expr)


def _chtp_lp_error(e: float, d: float, g: float) -> float:
    """Lower bound on the conditional error sum under (ε,δ)-DP for sets of probability ≥ γ (LP form,
    derived by boundcalc; see :func:`chtp_from_dp`). Exact 2/(1+e^ε) at δ = 0."""
    if e > 300.0:
        return 0.0  # the bound is below e^{-300}: 0 is a valid (and numerically honest) lower bound
    r = d / g
    c1 = 1.0 - r
    E = math.exp(e)
    x_lo, x_hi = c1 / E, E + r
    v2 = c1
    xc = min(max(c1 / E + r, x_lo), x_hi)
    v1 = max(c1 / (E * xc), 1.0 - r / xc)
    K, L = r + c1 * E, 1.0 + c1 + E * r
    xs = min(max(math.sqrt(K / E), x_lo), x_hi)
    v3 = (E * xs + K / xs - L) / math.expm1(2.0 * e)
    return max(0.0, min(v1, v2, v3))


def chtp_from_dp(eps: float, delta: float, gamma: float) -> dict:
    """(ε,δ)-DP ⇒ (α,γ)-CHTP (Barber–Duchi Theorem 1, forward; constants derived).

    CHTP (Def. 8): for neighbours x, x', every output set S with Q(S|x) ≥ γ and every test ψ,
    ``Q(ψ=1 | x, S) + Q(ψ=0 | x', S) ≥ 1 − α`` (by the symmetry x ↔ x', ψ ↔ 1−ψ, the same holds when
    Q(S|x') ≥ γ). Two valid forms are computed and the smaller α is returned as ``alpha``:

    - ``alpha_theorem1`` = ``1 − (γ − δ)/(e^{2ε} γ + e^ε δ)`` for γ > δ (docs/methods/relations.md; the proof of
      A.3.1): with s = Q(S|x) ≥ γ and rejection region A, Q(A^c|x', S) ≥ (Q(A^c∩S|x) − δ)/(e^{2ε}s +
      e^ε δ) because Q(S|x') ≤ e^ε s + δ, and Q(A|x,S) ≥ Q(A∩S|x)/(e^{2ε}s + e^ε δ); adding gives
      (s − δ)/(e^{2ε}s + e^ε δ), increasing in s. At δ = 0 it is 1 − e^{−2ε}: loose.
    - ``alpha_lp`` (derived by boundcalc): write x = s'/s with s' = Q(S|x'), a = type I, b = type II
      of the conditional test. DP applied to A^c∩S and A∩S and divided by s, s' gives
      ``a + e^ε x b ≥ c1 = 1 − δ/γ`` and ``b + (e^ε/x) a ≥ c2 = 1 − δ/(xγ)``, with
      x ∈ [e^{−ε}(1 − δ/γ), e^ε + δ/γ]. The least a + b under two such constraints is at a vertex of
      the feasible region, so it is at least min(V1, V2, V3): V1 = max(c1/(e^ε x), c2),
      V2 = max(c1, c2 x/e^ε) ≥ c1, V3 = (e^ε x + (δ/γ + c1 e^ε)/x − (1 + c1 + e^ε δ/γ))/(e^{2ε} − 1);
      each is minimised over x in closed form (V1 at the crossing of its two branches, V3 at
      x = sqrt(δ/(γe^ε) + c1), clipped to the range). At δ = 0 this is 2/(1+e^ε), i.e.
      ``alpha_lp = tanh(ε/2)``: tight (S = all outputs, randomized response), so conditioning on the
      output does not help the adversary under pure DP.
    Both are checked by brute force over every conditioning set of random finite channels.
    """
    e = _pos(eps, "eps")
    d = float(delta)
    g = float(gamma)
    if not 0.0 <= d < 1.0:
        raise InputError("delta", "must be in [0, 1)", delta)
    if not d < g <= 1.0:
        raise InputError("gamma", "must satisfy delta < gamma <= 1", gamma)
    em = math.exp(-min(e, 700.0))
    # (γ−δ)/(e^{2ε}γ + e^ε δ) = e^{−2ε}(γ−δ)/(γ + e^{−ε}δ)
    err_t1 = em * em * (g - d) / (g + em * d)
    err_lp = _chtp_lp_error(e, d, g)
    best = max(err_t1, err_lp)
    out = {
        "alpha": 1.0 - best, "min_error_sum": best, "gamma": g, "eps": e, "delta": d,
        "form": "lp" if err_lp >= err_t1 else "theorem1",
        "alpha_theorem1": 1.0 - err_t1, "alpha_lp": 1.0 - err_lp,
        "expr": _printed(_expr("CHTP_FORWARD_EXPR"))[0], "latex": _printed(_expr("CHTP_FORWARD_EXPR"))[1],
        "status": "derived",
        "source": "Barber–Duchi Theorem 1 (forward); alpha_theorem1 = docs/methods/relations.md, alpha_lp derived by "
                  "boundcalc (LP over the DP constraints of the conditional test)",
        "condition": "conditioning sets S with Q(S|x) ≥ γ > δ",
    }
    if d == 0.0:
        out["alpha_pure"] = math.tanh(e / 2)
        out["min_error_sum_pure"] = 2 * em / (1 + em)
        out["expr_pure"] = _printed(_expr("CHTP_PURE_EXPR"))[0]
    return out


def dp_from_chtp(alpha: float, gamma: float) -> dict:
    """(α,γ)-CHTP for every less informative channel Q' ⪯ Q ⇒ (ε,δ)-DP with δ = γ
    (Barber–Duchi Theorem 1, converse; forms derived).

    - ``eps`` = ``log((1+2α)/(1−2α))`` (= 2 artanh(2α), i.e. α = tanh(ε/2)/2), for α < 1/2: the form
      of docs/methods/relations.md; ``None`` for α ≥ 1/2.
    - ``eps_sharp`` = ``4 artanh(α)`` (derived by boundcalc; smaller than ``eps`` for every α ∈ (0,1/2)
      and defined for every α < 1). Proof: if Q is not (ε,γ)-DP, some A has p = Q(A|x) >
      e^ε Q(A|x') + γ, with r = Q(A|x'); its odds ratio O = p(1−r)/(r(1−p)) > p/r > e^ε. The garbling
      Q' = (Z, U), U uniform on [0,1], conditioned on S = A×[0,t_A] ∪ A^c×[0,t_C], has conditional
      laws of A ∈ {p t_A, (1−p) t_C} and {r t_A, (1−r) t_C} normalised; the test 1{Z ∉ A} has error
      sum 1 − |1/(1+u) − 1/(1+Ou)|, u = t_C(1−p)/(t_A p), which at u = 1/sqrt(O) is
      1 − tanh(log(O)/4) < 1 − tanh(ε/4). If p + r ≤ 1 take t_A = 1 (then t_C ≤ 1 and Q'(S|x) ≥ p > γ);
      otherwise t_C = 1 (then Q'(S|x') ≥ 1 − r > γ since p > r + γ). So with ε = 4 artanh(α), a
      channel that is not (ε,γ)-DP has a garbling violating CHTP, for the reading of Def. 8 in which
      S needs probability ≥ γ under one of the two samples. If S must have probability ≥ γ under
      both, the same witness family still caught every random channel tried for α < 1/2 (tests),
      but this is not proved.
    """
    a = float(alpha)
    g = float(gamma)
    if not 0.0 < a < 1.0:
        raise InputError("alpha", "must be in (0, 1)", alpha)
    if not 0.0 < g < 1.0:
        raise InputError("gamma", "must be in (0, 1)", gamma)
    return {
        "eps": 2.0 * math.atanh(2.0 * a) if a < 0.5 else None, "eps_sharp": 4.0 * math.atanh(a),
        "delta": g, "expr": _printed(_expr("CHTP_CONVERSE_EXPR"))[0],
        "latex": _printed(_expr("CHTP_CONVERSE_EXPR"))[1],
        "expr_sharp": _printed(_expr("CHTP_CONVERSE_SHARP_EXPR"))[0],
        "status": "derived",
        "source": "Barber–Duchi Theorem 1 (converse); eps = docs/methods/relations.md form (α < 1/2), eps_sharp "
                  "derived by boundcalc",
        "condition": "CHTP must hold for every less informative channel Q' ⪯ Q (CHTP is not inherited)",
    }
