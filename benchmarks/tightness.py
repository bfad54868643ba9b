"""Tightness benchmark: how far apart are the certified lower and upper bounds?

For every family it prints the worst and median certified upper/lower ratio over a grid, the cell
where the worst ratio occurs (with the names of the two bounds), and the number of cells without a
certified lower or upper bound (counted as an infinite ratio). Then the planning gaps
n_sufficient / n_necessary of the issues' planning examples, and the slopes in d of the central mean
lower bound.

Run:  python benchmarks/tightness.py [--only local|central] [--family TEXT] [--json FILE]

Grids (issues 12 and 13):
- local families: n ∈ {1e3, 1e5, 1e7}, ε ∈ {0.1, 0.5, 1, 2, 3}, d ∈ {2, 10, 100, 1000} where the
  problem has a dimension;
- central families: n ∈ {1e3, 1e5, 1e7}, ε ∈ {0.1, 1} (tv and kl: α = ε/2, which keeps α < 1),
  d ∈ {1, 10, 100}, k ∈ {2, 4, ∞}; the (ε, δ) mean also at d ∈ {300, 1000} (n also 1e4); tv and kl
  with k = 2 also at d ∈ {300, 1000}; the one-dimensional k = 2 mean at small n (3 to 1000) and
  ε ∈ [0.1, 5] (δ ∈ {1e-3, 1e-6, 1e-9});
- sparse Bernoulli at s = 1, 2 and 5; planning rows in the multinomial transition band nε² ≈ d².
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import time

import boundcalc as bc

NS = [10**3, 10**5, 10**7]
LOCAL_EPS = [0.1, 0.5, 1.0, 2.0, 3.0]
LOCAL_D = [2, 10, 100, 1000]
CENTRAL_EPS = [0.1, 1.0]
CENTRAL_D = [1, 10, 100]
HIGH_D = [300, 1000]
KS = ["2", "4", "inf"]


def _level(priv, eps):
    if priv == "none":
        return {}
    if priv in ("tv", "kl"):
        return {"eps": eps / 2}
    return {"eps": eps}


def local_families():
    """(family name, privacy, list of parameter dicts)."""
    fam = []
    grid = list(itertools.product(NS, LOCAL_EPS))
    fam.append(("multinomial l2sq", "multinomial", "local",
                [dict(n=n, eps=e, d=d, loss="l2sq") for (n, e), d in itertools.product(grid, LOCAL_D)]))
    fam.append(("multinomial l1", "multinomial", "local",
                [dict(n=n, eps=e, d=d, loss="l1") for (n, e), d in itertools.product(grid, LOCAL_D)]))
    for k in KS:
        fam.append((f"local mean 1-D k={k}", "mean", "local", [dict(n=n, eps=e, d=1, k=k) for n, e in grid]))
    fam.append(("local mean l2 ball k=inf", "mean", "local",
                [dict(n=n, eps=e, d=d, k="inf", ball="l2") for (n, e), d in itertools.product(grid, LOCAL_D)]))
    fam.append(("local mean linf ball k=inf", "mean", "local",
                [dict(n=n, eps=e, d=d, k="inf", ball="linf") for (n, e), d in itertools.product(grid, LOCAL_D)]))
    fam.append(("gaussian", "gaussian", "local",
                [dict(n=n, eps=e, d=d) for (n, e), d in itertools.product(grid, [1] + LOCAL_D)]))
    for s in (1, 2, 5):
        fam.append((f"sparse-bernoulli s={s}", "sparse-bernoulli", "local",
                    [dict(n=n, eps=e, d=d, s=s) for (n, e), d in itertools.product(grid, LOCAL_D) if d > s]))
    for geom in ("l2", "l1"):
        fam.append((f"linear {geom}", "linear", "local",
                    [dict(n=n, eps=e, d=d, geometry=geom) for (n, e), d in itertools.product(grid, LOCAL_D)]))
    fam.append(("density local", "density", "local", [dict(n=n, eps=e) for n, e in grid]))
    return fam


def central_families():
    fam = []
    for priv in ("none", "pure", "smooth", "approx", "tv", "kl"):
        cells = [dict(n=n, d=d, k=k, **_level(priv, e))
                 for n, e, d, k in itertools.product(NS, CENTRAL_EPS, CENTRAL_D, KS)]
        fam.append((f"mean {priv}", "mean", priv, cells))
    # the (eps, delta) mean in high dimension (issue 21): d = 300 and 1000
    fam.append(("mean approx d>=300", "mean", "approx",
                [dict(n=n, d=d, k=k, eps=e) for n, e, d, k in itertools.product(NS + [10**4], CENTRAL_EPS,
                                                                                 HIGH_D, KS)]))
    # tv and kl with k = 2 up to d = 1000 (a subsample is tv-private, so the tv upper need not grow with d)
    for priv in ("tv", "kl"):
        fam.append((f"mean {priv} k=2 d<=1000", "mean", priv,
                    [dict(n=n, d=d, k="2", **_level(priv, e))
                     for n, e, d in itertools.product(NS, CENTRAL_EPS, CENTRAL_D + HIGH_D)]))
    # one dimension, k = 2, small n and every epsilon (and delta): where the non-private and private terms meet
    small_n = [3, 10, 15, 20, 30, 50, 100, 1000]
    d1_eps = [0.1, 0.5, 1.0, 1.25, 1.5, 1.75, 2.0, 3.0, 5.0]
    fam.append(("mean pure k=2 d=1 small n", "mean", "pure",
                [dict(n=n, d=1, k="2", eps=e) for n, e in itertools.product(small_n, d1_eps)]))
    fam.append(("mean approx k=2 d=1 small n", "mean", "approx",
                [dict(n=n, d=1, k="2", eps=e, delta=dl)
                 for n, e, dl in itertools.product(small_n, d1_eps, [1e-3, 1e-6, 1e-9])]))
    for priv in ("pure", "approx", "tv", "kl"):
        for loss in ("abs", "squared"):
            fam.append((f"support {priv} {loss}", "support", priv,
                        [dict(n=n, loss=loss, **_level(priv, e)) for n, e in itertools.product(NS, CENTRAL_EPS)]))
    for priv in ("pure", "approx"):
        for model in ("bernoulli", "poisson", "exponential", "normal-mean", "normal-var"):
            fam.append((f"point {priv} {model}", "point", priv,
                        [dict(n=n, model=model, **_level(priv, e)) for n, e in itertools.product(NS, CENTRAL_EPS)]))
    fam.append(("density pure", "density", "pure",
                [dict(n=n, **_level("pure", e)) for n, e in itertools.product(NS, CENTRAL_EPS)]))
    return fam


PLANS = {
    "local": [
        ("multinomial l2sq d=100 eps=1 target 0.01",
         dict(problem="multinomial", privacy="local", d=100, eps=1.0, target=0.01)),
        ("multinomial l1 d=20 eps=2 target 0.1",
         dict(problem="multinomial", privacy="local", loss="l1", d=20, eps=2.0, target=0.1)),
        # the transition band n eps^2 ~ d^2 (targets near the risk at n = d^2/eps^2)
        ("multinomial l2sq d=100 eps=1 target 0.003",
         dict(problem="multinomial", privacy="local", d=100, eps=1.0, target=0.003)),
        ("multinomial l2sq d=300 eps=1 target 0.003",
         dict(problem="multinomial", privacy="local", d=300, eps=1.0, target=0.003)),
        ("multinomial l2sq d=1000 eps=2 target 0.001",
         dict(problem="multinomial", privacy="local", d=1000, eps=2.0, target=0.001)),
        ("multinomial l1 d=100 eps=1 target 0.3",
         dict(problem="multinomial", privacy="local", loss="l1", d=100, eps=1.0, target=0.3)),
        ("sparse-bernoulli d=200 s=5 eps=1 target 0.5",
         dict(problem="sparse-bernoulli", privacy="local", d=200, s=5, eps=1.0, target=0.5)),
        ("sparse-bernoulli d=1000 s=2 eps=1 target 0.1",
         dict(problem="sparse-bernoulli", privacy="local", d=1000, s=2, eps=1.0, target=0.1)),
    ],
    "central": [
        ("mean pure k=inf d=20 eps=0.5 target 0.01",
         dict(problem="mean", privacy="pure", k="inf", d=20, eps=0.5, target=0.01)),
        ("mean approx k=4 d=100 eps=1 target 0.05",
         dict(problem="mean", privacy="approx", k="4", d=100, eps=1.0, target=0.05)),
        ("mean approx k=inf d=1000 eps=0.1 target 0.05",
         dict(problem="mean", privacy="approx", k="inf", d=1000, eps=0.1, target=0.05)),
        ("support pure eps=1 target 0.01", dict(problem="support", privacy="pure", eps=1.0, target=0.01)),
        ("point pure exponential eps=1 target 0.01",
         dict(problem="point", privacy="pure", model="exponential", eps=1.0, target=0.01)),
        ("density local eps=1 target 0.05", dict(problem="density", privacy="local", eps=1.0, target=0.05)),
    ],
}

SLOPES = [  # (label, fixed parameters, d values): slope of log(lower) in log(d)
    ("mean pure k=4 n=1e4 eps=0.1", dict(privacy="pure", k="4", n=10**4, eps=0.1), (10, 100)),
    ("mean pure k=inf n=1e3 eps=0.2", dict(privacy="pure", k="inf", n=10**3, eps=0.2), (10, 100)),
]


def _ratio(problem, privacy, params):
    try:
        res = bc.rate(problem, privacy=privacy, **params)
    except bc.InputError as exc:  # a grid cell outside the problem's domain
        return None, f"input error: {exc}"
    lo, up = res.lower, res.upper
    if lo is None or up is None:
        return math.inf, ("no certified lower" if lo is None else "no certified upper")
    return up.value / lo.value, f"{lo.name} vs {up.name}"


def run_families(families):
    out = []
    for label, problem, privacy, cells in families:
        t0 = time.perf_counter()
        rows = []
        for params in cells:
            r, why = _ratio(problem, privacy, params)
            if r is None:
                continue
            rows.append((r, params, why))
        if not rows:
            continue
        rows.sort(key=lambda x: x[0])
        ratios = [r for r, _, _ in rows]
        worst = rows[-1]
        missing = sum(1 for r in ratios if not math.isfinite(r))
        rec = {"family": label, "cells": len(rows), "worst": worst[0], "median": statistics.median(ratios),
               "missing": missing, "worst_at": {k: v for k, v in worst[1].items()}, "worst_bounds": worst[2],
               "seconds": time.perf_counter() - t0}
        out.append(rec)
        at = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in worst[1].items())
        print(f"{label:28s} worst {_fmt(rec['worst']):>9s}  median {_fmt(rec['median']):>9s}"
              f"  missing {missing:3d}/{len(rows):3d}   worst at {at}: {worst[2]}", flush=True)
    return out


def _fmt(x):
    if x is None:
        return "-"
    if not math.isfinite(x):
        return "inf"
    return f"{x:.3g}"


def run_plans(plans):
    out = []
    for label, kw in plans:
        kw = dict(kw)
        problem, privacy = kw.pop("problem"), kw.pop("privacy")
        try:
            res = bc.plan(problem, privacy=privacy, **kw)
            nn, ns = res.n_necessary, res.n_sufficient
        except Exception as exc:  # report, don't hide
            nn = ns = None
            print(f"  plan {label}: error {exc}")
        gap = (ns / nn) if (nn and ns) else None
        out.append({"plan": label, "n_necessary": nn, "n_sufficient": ns, "gap": gap})
        print(f"plan {label:42s} necessary {str(nn):>9s}  sufficient {str(ns):>9s}  gap {_fmt(gap)}", flush=True)
    return out


def run_slopes():
    out = []
    for label, kw, (d0, d1) in SLOPES:
        lo = [bc.rate("mean", d=d, **kw).lower.value for d in (d0, d1)]
        slope = math.log(lo[1] / lo[0]) / math.log(d1 / d0)
        out.append({"slope": label, "value": slope})
        print(f"lower-bound slope in d ({d0}->{d1}), {label}: {slope:.3f}", flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("local", "central"))
    ap.add_argument("--json", help="write the results as JSON to this file")
    ap.add_argument("--family", help="only families (and plans) whose label contains this text")
    args = ap.parse_args(argv)
    keep = (lambda label: args.family is None or args.family in label)
    result = {}
    if args.only in (None, "local"):
        print("== local privacy: certified upper/lower ratio ==")
        result["local"] = run_families([f for f in local_families() if keep(f[0])])
        result["local_plans"] = run_plans([p for p in PLANS["local"] if keep(p[0])])
    if args.only in (None, "central"):
        print("== central privacy: certified upper/lower ratio ==")
        result["central"] = run_families([f for f in central_families() if keep(f[0])])
        result["central_plans"] = run_plans([p for p in PLANS["central"] if keep(p[0])])
        if args.family is None:
            result["slopes"] = run_slopes()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
