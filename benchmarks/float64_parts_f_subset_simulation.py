"""Part F of the float64-parts audit, the simulation half: the projected subset-selection bounds (max route,
threshold route ℓ2² and ℓ1, boundcalc.mechanisms.subset_tail) at d = 10, 100, 1000 against seeded simulations of the
estimator they bound (subset selection user by user, boundcalc.mechanisms.discrete.estimate, then the Euclidean
projection onto the simplex), at the subset size each route chooses, at four laws θ: uniform, a vertex, two
symbols with half the mass each, one Dirichlet(1) draw. A bound is a supremum over θ, so each simulated risk
(its mean, and the mean minus three standard errors) must stay below it.

Usage: python benchmarks/float64_parts_f_subset_simulation.py [out.txt] [--quick]"""
from __future__ import annotations

import math
import sys
import time

import numpy as np

from boundcalc.mechanisms import discrete as DM
from boundcalc.mechanisms import subset_tail as ST

CASES = [(10, 50, 1.0), (10, 200, 0.5), (100, 500, 1.0), (100, 3000, 2.0), (1000, 2000, 1.0), (1000, 20000, 2.0)]
QUICK = [(10, 50, 1.0), (100, 500, 1.0)]
ROUTES = (("max", "l2sq"), ("threshold", "l2sq"), ("threshold", "l1"))


def laws(d: int, rng: np.random.Generator):
    two = np.zeros(d)
    two[:2] = 0.5
    return {"uniform": np.full(d, 1.0 / d), "vertex": np.eye(d)[0], "two-point": two,
            "dirichlet": rng.dirichlet(np.ones(d))}


def simulate(d, n, eps, s, theta, reps, rng):
    """Per-replication (ℓ2², ℓ1) losses of the projected subset-selection estimate."""
    est = DM.project_simplex(DM.estimate("subset", theta, n, eps, reps, rng, s=s))
    return np.sum((est - theta) ** 2, axis=1), np.sum(np.abs(est - theta), axis=1)


def run(cases, reps_for, out, seed=20261205):
    rng = np.random.default_rng(seed)
    rows = []
    for d, n, eps in cases:
        sims = {}
        for route, loss in ROUTES:
            v, s, _ = ST.best(route, n, eps, d, loss)
            if not math.isfinite(v):
                out(f"d={d:5d} n={n:6d} eps={eps:g} {route:9s} {loss:4s}: not evaluated")
                continue
            worst = (0.0, 0.0, "")
            for name, theta in laws(d, rng).items():
                if (s, name) not in sims:
                    sims[s, name] = simulate(d, n, eps, s, theta, reps_for(d), rng)
                x = sims[s, name][0 if loss == "l2sq" else 1]
                m, se = float(x.mean()), float(x.std() / math.sqrt(x.size))
                if m > worst[0]:
                    worst = (m, se, name)
            m, se, name = worst
            rows.append((d, n, eps, route, loss, v, s, m, se, name))
            out(f"d={d:5d} n={n:6d} eps={eps:g} {route:9s} {loss:4s} s={s:4d} bound={v:.6g}"
                f"  largest simulated risk {m:.6g} ± {se:.2g} ({name})  risk/bound {m / v:.3f}")
    return rows


def main(argv):
    quick = "--quick" in argv
    paths = [a for a in argv if not a.startswith("--")]
    lines = []

    def out(s):
        print(s, flush=True)
        lines.append(s)

    t0 = time.time()
    rows = run(QUICK if quick else CASES, lambda d: 200 if d <= 100 else 60, out)
    bad = [r for r in rows if r[7] - 3 * r[8] > r[5]]
    out(f"{len(rows)} (case, route) pairs; simulated risk (mean - 3 se) above the bound: {len(bad)};"
        f" largest risk/bound {max(r[7] / r[5] for r in rows):.3f}  ({time.time() - t0:.0f} s)")
    if paths:
        with open(paths[0], "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
