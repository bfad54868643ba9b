"""Fine grid of the one-dimensional central mean with k = 2: worst and median certified upper/lower ratio.

For each privacy model (pure, approx, smooth) it prints the worst and median ratio ``res.ratio`` (upper/lower)
over the grid, and the ten worst cells with the names of the winning lower and upper bounds.

Grid: n in {1, ..., 6, 8, 10, 12, 15, 20} and 14 log-spaced values from 30 to 10⁶ (25 values); ε: 25 log-spaced
values from 10⁻³ to 20; δ ∈ {10⁻³, 10⁻⁶, 10⁻⁹, 10⁻¹²} for approx.

Run:  BOUNDCALC_CACHE_DIR=/some/dir python benchmarks/k2_d1_fine_grid.py [--privacy pure approx smooth]
      [--json FILE]   (a persistent cache makes a second run fast; the first takes several minutes)
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import time

import boundcalc as bc

SMALL_N = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20]
NS = SMALL_N + [int(round(30 * (1e6 / 30) ** (i / 13))) for i in range(14)]
EPS = [float(f"{1e-3 * (20 / 1e-3) ** (i / 24):.6g}") for i in range(25)]
DELTAS = [1e-3, 1e-6, 1e-9, 1e-12]


def cells(privacy):
    if privacy == "approx":
        return [dict(n=n, eps=e, delta=dl) for n, e, dl in itertools.product(NS, EPS, DELTAS)]
    return [dict(n=n, eps=e) for n, e in itertools.product(NS, EPS)]


def run(privacy):
    rows = []
    for c in cells(privacy):
        res = bc.rate("mean", privacy, d=1, k="2", **c)
        rows.append(dict(c, ratio=res.ratio, upper=res.upper.value, lower=res.lower.value,
                         upper_name=res.upper.name, lower_name=res.lower.name))
    return rows


def report(privacy, rows, top=10):
    ratios = [r["ratio"] for r in rows]
    finite = [x for x in ratios if math.isfinite(x)]
    print(f"== {privacy}: {len(rows)} cells, worst {max(ratios):.4f}, median {statistics.median(ratios):.4f}, "
          f"non-finite {len(ratios) - len(finite)}")
    for r in sorted(rows, key=lambda r: -r["ratio"])[:top]:
        where = f"n={r['n']:<8} eps={r['eps']:<9.4g}" + (f" delta={r['delta']:.0e}" if "delta" in r else "")
        print(f"   {r['ratio']:.4f}  {where}  upper {r['upper_name']} {r['upper']:.4g}  "
              f"lower {r['lower_name']} {r['lower']:.4g}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--privacy", nargs="+", default=["pure", "approx", "smooth"])
    ap.add_argument("--json", help="write every cell to this file")
    args = ap.parse_args(argv)
    out = {}
    for priv in args.privacy:
        t0 = time.process_time()
        out[priv] = run(priv)
        report(priv, out[priv])
        print(f"   ({time.process_time() - t0:.0f} s CPU)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh)


if __name__ == "__main__":
    main()
