"""Bounds demoted by a float64 / high-precision disagreement, counted over every (problem, privacy) pair at seeded
extreme parameters.

    python benchmarks/demoted_scan.py [--points 4] [--seed 0] [--limit 60]

A bound whose float64 value and 40-digit value disagree by more than 1e-6 relatively, whose high-precision value is
not finite, or whose 40- and 60-digit values disagree is listed as not certified (docs/engineering/
certified-floating-point.md, the rule): the certification caught a defect of one of the two evaluations, which
should be fixed. For each pair, ``--points`` random points (n from 1 to 1e18, ε from 1e-8 to 50, δ from 1e-300 to 0.5, d from 1
to 1e5, r from 1e-6 to 1e6, k in {2, 4, inf}; each parameter only where the pair has it) are asked; a call that raises
InputError (a point outside a pair's domain) or takes more than ``--limit`` seconds of CPU is counted apart. Prints one
line per demoted bound and the totals.
"""
from __future__ import annotations

import argparse
import random
import resource
import signal
import time

import boundcalc as bc
from boundcalc.core.errors import InputError

NS = [1, 2, 3, 10, 1000, 10**6, 10**9, 10**12, 10**15, 10**18]
EPS = [1e-8, 1e-5, 1e-3, 0.1, 1.0, 5.0, 20.0, 50.0]
TV = [1e-6, 1e-3, 0.05, 0.5, 0.99]
DELTAS = [1e-300, 1e-12, 1e-6, 0.01, 0.1, 0.5]
DS = [1, 2, 3, 10, 1000, 10**5]
RS = [1e-6, 1.0, 1e6]


class _Slow(Exception):
    pass


def _alarm(*_):
    raise _Slow


def _point(rng, spec, privacy):
    p = {"n": rng.choice(NS)}
    if "eps" in spec:
        p["eps"] = rng.choice(TV if privacy == "tv" else EPS)
    if "delta" in spec:
        p["delta"] = rng.choice(DELTAS)
    if "d" in spec:
        p["d"] = rng.choice(DS)
    if "r" in spec:
        p["r"] = rng.choice(RS)
    if "k" in spec:
        p["k"] = rng.choice(["2", "4", "inf"])
    return p


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=float, default=60.0)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    signal.signal(signal.SIGPROF, _alarm)
    calls = refused = slow = bounds = 0
    demoted = []
    t0 = time.process_time()
    for e in bc.list_problems():
        problem, privacy, spec = e["problem"], e["privacy"], e["params"]
        for _ in range(a.points):
            p = _point(rng, spec, privacy)
            calls += 1
            signal.setitimer(signal.ITIMER_PROF, a.limit)
            try:
                res = bc.rate(problem, privacy, **p)
            except InputError:
                refused += 1
                continue
            except _Slow:
                slow += 1
                print(f"slow: {problem}/{privacy} {p}", flush=True)
                continue
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            for b in res.lowers + res.uppers:
                bounds += 1
                note = b.note or ""
                if not b.certified and any(w in note for w in ("disagree", "high precision", "ill-conditioned")):
                    demoted.append((problem, privacy, p, b.side, b.name, b.note))
                    print(f"demoted: {problem}/{privacy} {p} {b.side} {b.name}: {b.note}", flush=True)
    print(f"{calls} calls ({refused} refused as bad input, {slow} over {a.limit:g} s CPU), {bounds} listed bounds, "
          f"{len(demoted)} demoted by a float64/high-precision disagreement; {time.process_time() - t0:.0f} s CPU")


if __name__ == "__main__":
    main()
