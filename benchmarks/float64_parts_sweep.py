"""Sweep of the part-B float64 special functions (two-point Bayes affinities, threshold-Bayes J and G, the collision
envelope, the shared-budget β, subsample size, K-norm moment, the Gaussian loss ψ, the ℓ2/ℓ∞ sampling constants):
record the arguments each gets on the certification (mpmath) path of ``boundcalc.rate`` for every (problem,
privacy) pair at extreme parameters, then compare at those arguments

- the float64 value (the numpy implementation), and
- the value of the mpmath path at 40 digits (the float64 value for a function outside HIGH_PRECISION),

with an independent 80-digit evaluation of the definition (tests/_float64_parts_b_reference.py).

    python benchmarks/float64_parts_sweep.py record OUT.json [points per pair] [seed]
    python benchmarks/float64_parts_sweep.py compare OUT.json

Prints, per function, the worst relative error of each value and the cases on the unsafe side.
"""
from __future__ import annotations

import itertools
import json
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

NAMES_MP = ["DPAffinity", "TVAffinity", "KLAffinity", "CollisionPhi", "SharedBudgetInfo", "SubsampleSize",
            "SubsampleLevel", "KNormSecondMoment"]


def _classes():
    import boundcalc.mechanisms.sampling as sa
    import boundcalc.methods.threshold_bayes as tb
    import boundcalc.problems.gaussian as ga

    return [tb.ThresholdJ0, tb.ThresholdJ1, tb.CoupledTestG0, tb.CoupledTestG1, ga.GaussLoss, sa.L2SphereConst,
            sa.LinfSamplingC]


def record(out_path, per_pair=8, seed=1):
    import boundcalc as bc
    import boundcalc.methods.block_fano  # noqa: F401 - registers the functions
    import boundcalc.methods.knorm  # noqa: F401
    import boundcalc.methods.shared_budget_assouad  # noqa: F401
    import boundcalc.methods.subsample_size  # noqa: F401
    import boundcalc.methods.two_point_bayes  # noqa: F401
    from boundcalc.core import symbolic as S
    from boundcalc.core.errors import InputError

    rec, pairs_of = {}, {}

    def wrap(name, fn):
        def w(*a):
            try:
                rec.setdefault(name, set()).add(tuple(float(x) for x in a))
            except (TypeError, ValueError):
                pass
            return fn(*a)
        return w
    for name in NAMES_MP:
        S.MPMATH_IMPL[name] = wrap(name, S.MPMATH_IMPL[name])
    for cls in _classes():
        cls._imp_ = staticmethod(wrap(cls.__name__, cls._imp_))
    ns = [1, 2, 10, 10**3, 10**6, 10**9, 10**12, 10**15]
    epss = [1e-9, 1e-6, 1e-3, 0.1, 1.0, 5.0, 20.0, 50.0]
    deltas = [1e-12, 1e-6, 0.01, 0.1, 0.5]
    ds = [1, 2, 3, 10, 1000, 10000]
    rng = random.Random(seed)
    t0 = time.process_time()
    only = os.environ.get("SWEEP_PAIRS")  # e.g. "support/pure,point/approx"
    for e in bc.list_problems():
        prob, priv, spec = e["problem"], e["privacy"], e["params"]
        if only and f"{prob}/{priv}" not in only.split(","):
            continue
        pts = [(1, 1e-9, 1e-12, 1), (10**15, 1e-9, 0.5, 10000), (10**15, 50.0, 1e-12, 10000), (1, 50.0, 0.5, 1)]
        pts += rng.sample(list(itertools.product(ns, epss, deltas, ds)), per_pair)
        for n, eps, dl, d in pts:
            p = {"n": n}
            if "eps" in spec:
                p["eps"] = min(eps, 0.99) if priv == "tv" else eps
            if "delta" in spec:
                p["delta"] = dl
            if "d" in spec:
                p["d"] = d
            if "k" in spec:
                p["k"] = rng.choice(["2", "4", "inf"])
            sizes = {k: len(v) for k, v in rec.items()}
            try:
                bc.rate(prob, privacy=priv, **p)
            except InputError:
                continue
            for k, v in list(rec.items()):
                if len(v) != sizes.get(k, 0):
                    pairs_of.setdefault(k, set()).add(f"{prob}/{priv}")
        print(prob, priv, f"{time.process_time() - t0:.0f} s CPU", file=sys.stderr, flush=True)
        json.dump({"args": {k: sorted(v) for k, v in rec.items()},
                   "pairs": {k: sorted(v) for k, v in pairs_of.items()}}, open(out_path, "w"))  # after every pair


def compare(path, max_per_function=60, seed=0):
    import mpmath
    import numpy as np

    import boundcalc.methods.block_fano  # noqa: F401
    import boundcalc.methods.knorm  # noqa: F401
    import boundcalc.methods.shared_budget_assouad  # noqa: F401
    import boundcalc.methods.subsample_size  # noqa: F401
    import boundcalc.methods.two_point_bayes  # noqa: F401
    from _float64_parts_b_reference import REFERENCE, SAFE
    from boundcalc.core import symbolic as S

    data = json.load(open(path))
    impl_mp = dict(S.MPMATH_IMPL)
    impl_np = dict(S.NUMPY_IMPL)
    for cls in _classes():
        impl_mp[cls.__name__] = cls._imp_
        impl_np[cls.__name__] = cls._imp_
    rng = random.Random(seed)
    for name, args in sorted(data["args"].items()):
        ref_fn = REFERENCE.get(name)
        if ref_fn is None:
            print(f"{name}: {len(args)} argument tuples, no reference here")
            continue
        if len(args) > max_per_function:  # the extremes of every coordinate, and a random rest
            keep = set()
            for i in range(len(args[0])):
                keep.add(tuple(min(args, key=lambda a: a[i])))
                keep.add(tuple(max(args, key=lambda a: a[i])))
            args = sorted(keep) + rng.sample([a for a in args if tuple(a) not in keep], max_per_function - len(keep))
        worst = {"float64": (0.0, None), "mpmath40": (0.0, None)}
        unsafe, skipped = [], 0
        t0 = time.process_time()
        for a in args:
            ref = ref_fn(*a)
            if ref is None or not mpmath.isfinite(ref):
                skipped += 1
                continue
            f64 = float(np.asarray(impl_np[name](*[np.float64(x) for x in a])))
            with mpmath.workdps(40):
                hp = impl_mp[name](*[mpmath.mpf(x) for x in a])
            for label, v in (("float64", mpmath.mpf(f64)), ("mpmath40", hp)):
                if not mpmath.isfinite(v):
                    continue
                with mpmath.workdps(80):
                    rel = float((v - ref) / ref) if ref != 0 else (0.0 if v == 0 else math.inf)
                if abs(rel) > abs(worst[label][0]):
                    worst[label] = (rel, a)
                side = SAFE[name]
                # the 40-digit value is unsafe only beyond its own rounding (outward rounding to float64 absorbs that)
                with mpmath.workdps(80):
                    tol = abs(ref) * mpmath.mpf(10) ** -30 if label == "mpmath40" else 0
                    bad = (side == "le" and v > ref + tol) or (side == "ge" and v < ref - tol) or \
                        (side == "eq" and v != ref)
                if bad:
                    unsafe.append((label, a, rel))
        pairs = ", ".join(data["pairs"].get(name, []))
        print(f"{name} ({len(args)} args, {skipped} beyond the reference, {time.process_time() - t0:.1f} s; {pairs})")
        for label, (rel, a) in worst.items():
            print(f"   worst {label:9s} relative error {rel:+.2e} at {a}")
        ups = {}
        for label, a, rel in unsafe:
            ups.setdefault(label, []).append((rel, a))
        for label, lst in ups.items():
            lst.sort(key=lambda x: -abs(x[0]))
            print(f"   unsafe side ({SAFE[name]}) {label}: {len(lst)} cases, worst {lst[0][0]:+.2e} at {lst[0][1]}")


if __name__ == "__main__":
    if sys.argv[1] == "record":
        record(sys.argv[2], *(int(x) for x in sys.argv[3:5]))
    else:
        compare(sys.argv[2])
