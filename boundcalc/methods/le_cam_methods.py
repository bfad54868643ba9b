"""Le Cam's two-point method as :class:`boundcalc.core.bounds.Method` objects: written once, applied to every
problem that lists a :class:`boundcalc.core.bounds.TwoPointFamily` (derivation: docs/methods/le-cam.md,
docs/methods/ldp-contraction.md, docs/methods/chi2-contraction.md).

For two hypotheses whose estimates are 2s apart, any estimator pays at least Φ(s) on one of them unless the
test it induces is right, so ``max_± E_± loss >= Φ(s) (1 - TV(M_+, M_-))/2`` where M_± are the laws of what
the estimator sees.

* :class:`LeCam` (no privacy): M_± = P_±^n and the family's ``tv_product`` bounds their TV.
* :class:`PrivateLeCam` (sequentially interactive ε-LDP): the χ²–TV contraction gives
  KL(M_+‖M_-) <= n c_ε TV(P_+,P_-)², c_ε = 2(e^ε-1)²/(e^ε+1), hence TV(M_+, M_-) <= min{sqrt(KL/2),
  sqrt(1 - e^{-KL})} (Pinsker, Bretagnolle–Huber), and also <= TV(P_+^n, P_-^n) (data processing).
* :class:`CentralLeCam` (every central privacy model): the model implies α_TV-TV privacy (α_TV: the value
  ``alpha_TV`` of :func:`boundcalc.privacy_relations.relations.privacy_levels`, docs/methods/relations.md), and
  the central TV contraction (Barber & Duchi 2014, Theorem 2, constant derived; docs/methods/tv-contraction.md)
  gives TV(M_+, M_-) <= min{n α_TV TV(P_+, P_-), TV(P_+^n, P_-^n)}.
"""
from __future__ import annotations

import sympy as sp

from ..core import symbolic as S
from ..core.bounds import Bound, Method, TwoPointFamily, register_method
from . import ldp, le_cam

#: the TV level implied by the central privacy model (a derived value of the problem: relations.privacy_levels)
ALPHA_TV = sp.Symbol("alpha_TV", positive=True)


def _bound(family: TwoPointFamily, title: str, expr) -> Bound:
    return Bound(side="lower", name=family.name, label=title, expr=expr, source=family.source, derivation=family.derivation, free=family.free,
                 optimum=family.optimum, extra=family.extra if family.extra is not None else {})


@register_method
class LeCam(Method):
    """Le Cam's two-point bound without privacy: Φ(s)(1 - TV(P_+^n, P_-^n))/2."""

    name, shape, privacies = "le-cam", TwoPointFamily, ("none",)

    def bounds(self, family, privacy):
        if family.tv_product is None:
            return []
        return [_bound(family, family.title, S.Max(0, family.loss_at_s * (1 - family.tv_product) / 2))]


@register_method
class PrivateLeCam(Method):
    """Le Cam's two-point bound under ε-LDP with the χ²–TV contraction (and data processing)."""

    name, shape, privacies = "private-le-cam", TwoPointFamily, ("local",)

    def bounds(self, family, privacy):
        expr = ldp.private_le_cam_expr(family.loss_at_s, S.n, S.eps, family.tv_one, family.tv_product)
        return [_bound(family, "private " + family.title, expr)]


@register_method
class CentralLeCam(Method):
    """Le Cam's two-point bound under a central privacy model: Φ(s)(1 - min{n α_TV TV(P_+,P_-), TV(P_+^n,P_-^n)})/2,
    α_TV the TV level the model implies. The family's ``title`` is printed as it is (it names the TV level)."""

    name, shape, privacies = "central-le-cam", TwoPointFamily, ("pure", "approx", "smooth", "tv", "kl")

    def bounds(self, family, privacy):
        if family.tv_product is None:
            return []
        tv = le_cam.tv_private_contraction(ALPHA_TV, S.n, family.tv_one, family.tv_product)
        return [_bound(family, family.title, le_cam.two_point(family.loss_at_s, tv))]
