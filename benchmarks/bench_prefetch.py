"""The projected subset-selection searches on worker threads (issue 29, item 5): ``bc.rate`` of the multinomial
under local privacy at new points, with the prefetch on and off, paired on the same points in one process.

    python benchmarks/bench_prefetch.py [--points 12] [--d 10 100] [--seed 29]

Each point is computed twice, threads off and on in alternating order, every memo that could carry a value from
one run to the other cleared in between (whole results, the searches' values, the solver's optima; the expressions
and generated code stay, as in a warm process). It prints CPU seconds (``time.process_time``: every thread of the
process) and wall seconds, medians over the points and the median of the per-point ratios off / on, and checks that
both runs give the same result. Threads save waiting, not CPU: on a machine whose other jobs leave less than two
free cores, the wall ratio shrinks towards 1.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=12)
    ap.add_argument("--d", type=int, nargs="+", default=[10, 100])
    ap.add_argument("--seed", type=int, default=29)
    args = ap.parse_args(argv)

    import boundcalc as bc
    from boundcalc.app import api
    from boundcalc.core import solver
    from boundcalc.mechanisms import subset_tail as ST

    real_cores = ST._cores

    def clear():
        api.clear_rate_cache()
        ST.best.cache_clear()
        for store in solver._SOLVE_STORES.values():
            store.clear()

    def run(on, kw):
        ST._cores = real_cores if on else (lambda: 1)
        clear()
        c, w = time.process_time(), time.perf_counter()
        res = bc.rate("multinomial", "local", **kw)
        return time.process_time() - c, time.perf_counter() - w, res.to_dict()

    rng = random.Random(args.seed)
    print(f"bc.rate multinomial local at new points, prefetch off / on, paired; {real_cores()} usable cores; "
          f"load average {os.getloadavg()[0]:.1f}")
    for d in args.d:
        bc.rate("multinomial", "local", d=d)  # expressions and generated code, once
        rows = []
        for i in range(args.points):
            kw = dict(n=int(round(10 ** rng.uniform(2.3, 6))), eps=round(10 ** rng.uniform(-0.7, 0.477), 6), d=d)
            first = (False, True) if i % 2 == 0 else (True, False)
            got = {on: run(on, kw) for on in first}
            assert got[True][2] == got[False][2], kw
            rows.append((got[False][0], got[True][0], got[False][1], got[True][1]))
        med = lambda j: statistics.median(r[j] for r in rows)
        ratio = lambda a, b: statistics.median(r[a] / r[b] for r in rows)
        print(f"  d={d:<4d} cpu off {med(0):.3f} s  on {med(1):.3f} s  (ratio off/on {ratio(0, 1):.2f});  "
              f"wall off {med(2):.3f} s  on {med(3):.3f} s  (ratio off/on {ratio(2, 3):.2f});  "
              f"{len(rows)} points, same results", flush=True)
    ST._cores = real_cores


if __name__ == "__main__":
    main()
