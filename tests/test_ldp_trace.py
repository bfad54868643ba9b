"""L4 trace lemma (boundcalc/methods/ldp_trace.py) by exact Fisher information on finite channels."""
import itertools
import math

import numpy as np
import sympy as sp

from boundcalc.methods.ldp import privacy_level, random_channel
from boundcalc.methods.ldp_trace import trace_fisher_bound


def fisher_trace(Q, p):
    """Exact tr I_Z(p) in an orthonormal basis of {h: Σh = 0}: Σ_z ‖Π q_z‖²/c_z."""
    c = p @ Q
    Qc = Q - Q.mean(axis=0, keepdims=True)
    return float(np.sum(np.sum(Qc ** 2, axis=0) / c))


def bound(eps, pmin):
    return float(trace_fisher_bound(sp.Float(eps), sp.Float(pmin)))


def test_trace_bound_random_channels():
    rng = np.random.default_rng(3)
    worst = 0.0
    for t in range(2000):
        d, nz = int(rng.integers(2, 6)), int(rng.integers(2, 7))
        Q, eps = random_channel(d, nz, rng, spread=float(np.exp(rng.uniform(-4, 2.3))), extreme=bool(t % 2))
        p = rng.dirichlet(np.ones(d)) if t % 3 else np.ones(d) / d
        r = fisher_trace(Q, p) / bound(eps, p.min())
        assert r <= 1 + 1e-9
        worst = max(worst, r)
    assert worst > 0.3


def subset_selection(d, s, eps):
    subs = list(itertools.combinations(range(d), s))
    Q = np.array([[math.exp(eps) if x in S else 1.0 for S in subs] for x in range(d)])
    return Q / Q.sum(axis=1, keepdims=True)


def test_subset_selection_attains_trace_bound():
    for d, s in [(4, 1), (6, 2)]:
        eps = math.log(d / s - 1)  # s = d/(e^ε+1)
        Q = subset_selection(d, s, eps)
        assert abs(privacy_level(Q) - eps) < 1e-12
        p = np.ones(d) / d
        assert abs(fisher_trace(Q, p) - bound(eps, 1 / d)) < 1e-10 * bound(eps, 1 / d)
