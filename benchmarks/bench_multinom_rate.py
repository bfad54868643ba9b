"""``bc.rate`` of the multinomial under local privacy at new points in a warm process, one checkout against another
(issue 29): CPU time per point, and the whole JSON output compared.

    python benchmarks/bench_multinom_rate.py [--base /work/main] [--points 12] [--d 10 100 1000] [--seed 29]
    python benchmarks/bench_multinom_rate.py --compare-json 60 [--base ...]

Each checkout runs in its own process (``PYTHONPATH`` set to it, the disk cache off), which first warms up (a
``rate`` at d = 10, 100 and 1000 builds the expressions and generated code), then computes every point once: each
point is new to the process, so its projected subset-selection searches run in full. Points: d from ``--d`` in turn,
n log-uniform in [1e2, 1e7], ε log-uniform in [0.1, 5]. The two checkouts run alternately (base, new, new, base,
...; ``--repeats`` pairs), and a point's time in a checkout is its smallest over the repeats (the machine's other
jobs only add time). CPU time is ``time.process_time`` of the process (every thread: ``rate`` runs the two
projected searches on two threads where the process may use two cores). Printed: per point the two CPU times and
their ratio, then the medians over the points and the median of the per-point ratios, per d and over all.

``--compare-json N``: N points (the same distribution, d from 2, 3, 10, 100, 1000), the ``boundcalc rate --json``
object of each (``res.to_dict()`` dumped as the command line does) from both checkouts, compared as text; prints
the number of points whose output differs (0 expected when nothing printed may move).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parents[1]

WORKER = r"""
import json, sys, time
import boundcalc as bc
from boundcalc import cli
points = json.loads(sys.argv[1])
want_json = sys.argv[2] == "1"
for d in (10, 100, 1000):
    bc.rate("multinomial", "local", d=d)  # warm: expressions and generated code
print(bc.__file__, file=sys.stderr)
out = []
for kw in points:
    c = time.process_time()
    res = bc.rate("multinomial", "local", **kw)
    cpu = time.process_time() - c
    out.append({"cpu": cpu, "json": cli._dumps(res.to_dict()) if want_json else None})
print(json.dumps(out))
"""


def _points(rng, count, ds):
    pts = []
    for i in range(count):
        d = ds[i % len(ds)]
        n = int(round(10 ** rng.uniform(2, 7)))
        eps = round(10 ** rng.uniform(-1, math.log10(5)), 6)
        pts.append(dict(n=n, eps=eps, d=d))
    return pts


def _run(tree, points, want_json):
    env = dict(os.environ, PYTHONPATH=str(tree), BOUNDCALC_NO_CACHE="1")
    env.pop("BOUNDCALC_CACHE_DIR", None)
    with tempfile.TemporaryDirectory() as tmp:  # no file of one checkout is read by the other
        env["XDG_CACHE_HOME"] = tmp
        r = subprocess.run([sys.executable, "-c", WORKER, json.dumps(points), "1" if want_json else "0"],
                           env=env, capture_output=True, text=True, check=True, cwd=tmp)
    where = r.stderr.strip().splitlines()[-1]
    assert where.startswith(str(tree)), (where, tree)  # the checkout meant, not another on the path
    return json.loads(r.stdout.strip().splitlines()[-1])


def _commit(tree):
    try:
        return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="/work/main", help="the checkout to compare against")
    ap.add_argument("--new", default=str(HERE), help="the checkout measured (default: this one)")
    ap.add_argument("--points", type=int, default=12)
    ap.add_argument("--d", type=int, nargs="+", default=[10, 100, 1000])
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--repeats", type=int, default=1, help="pairs of runs (base, new) in alternating order")
    ap.add_argument("--compare-json", type=int, default=0, metavar="N")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    base, new = pathlib.Path(args.base), pathlib.Path(args.new)
    head = (f"# bc.rate multinomial local, warm process, new points; base {base} ({_commit(base)}), new {new} "
            f"({_commit(new)}); load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores")
    if args.compare_json:
        pts = _points(rng, args.compare_json, [2, 3, 10, 100, 1000])
        a, b = _run(base, pts, True), _run(new, pts, True)
        differ = [kw for kw, x, y in zip(pts, a, b) if x["json"] != y["json"]]
        print(head)
        print(f"# JSON output compared at {len(pts)} points (seed {args.seed}): {len(differ)} differ")
        for kw in differ:
            print("  differs:", kw)
        return 1 if differ else 0
    pts = _points(rng, args.points, args.d)
    times = {"base": [], "new": []}
    for rep in range(args.repeats):
        order = (("base", base), ("new", new)) if rep % 2 == 0 else (("new", new), ("base", base))
        for name, tree in order:
            times[name].append([r["cpu"] for r in _run(tree, pts, False)])
    tb = [min(col) for col in zip(*times["base"])]
    tn = [min(col) for col in zip(*times["new"])]
    print(head)
    print(f"# {len(pts)} points (seed {args.seed}), {args.repeats} alternating pair(s) of runs; CPU ms per point")
    print(f"{'d':>5} {'n':>9} {'eps':>9} {'base ms':>9} {'new ms':>9} {'ratio':>6}")
    for kw, x, y in zip(pts, tb, tn):
        print(f"{kw['d']:>5} {kw['n']:>9} {kw['eps']:>9.4g} {1e3 * x:>9.1f} {1e3 * y:>9.1f} {x / y:>6.2f}")
    groups = [(f"d = {d}", [i for i, kw in enumerate(pts) if kw["d"] == d]) for d in args.d]
    for label, idx in groups + [("all", list(range(len(pts))))]:
        if not idx:
            continue
        mb = statistics.median(tb[i] for i in idx)
        mn = statistics.median(tn[i] for i in idx)
        mr = statistics.median(tb[i] / tn[i] for i in idx)
        print(f"# {label:>9}: median base {1e3 * mb:.1f} ms, new {1e3 * mn:.1f} ms; median per-point ratio {mr:.2f}x "
              f"({len(idx)} points; total {sum(tb[i] for i in idx):.2f} s -> {sum(tn[i] for i in idx):.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
