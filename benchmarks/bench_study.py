"""CPU time of a five-statistic local study (bc.plan_study), the speed target of "Planning a study".

    python benchmarks/bench_study.py [--reps 3] [--json OUT.json]

The study (ε = 2 local privacy): the frequencies of a 100-answer question (multinomial d = 100), a mean (k = 4),
a Gaussian location in d = 10, a sparse Bernoulli model (d = 20, s = 2) and a yes/no rate (multinomial d = 2).
Each repetition runs in a fresh process at new targets (every target scaled by a factor that differs from one
repetition to the next), so that no answer is read from the kept results: what is measured is a new question.
Two settings:

- ``warm code``: the disk cache holds the generated code of every bound (one earlier study at other targets
  filled it), as on a machine where boundcalc has run before;
- ``cold``: an empty disk cache (the first study ever run on a machine).

CPU time (``time.process_time`` in the child) is reported: median and all repetitions, with the part spent in
the one-statistic plans at the whole budget (both sides, the study lower bound) and in the allocation search.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, sys, time
import boundcalc as bc
from boundcalc.app import study
f = float(sys.argv[1])
parts = {}
for name in ("whole_plans", "optimise"):
    orig = getattr(study._Planner, name)
    def timed(self, orig=orig, name=name):
        t = time.process_time()
        try:
            return orig(self)
        finally:
            parts[name] = time.process_time() - t
    setattr(study._Planner, name, timed)
stats = [dict(name="answers", problem="multinomial", d=100, target=0.01 * f),
         dict(name="score", problem="mean", k=4, target=0.01 * f),
         dict(name="location", problem="gaussian", d=10, target=0.1 * f),
         dict(name="sparse", problem="sparse-bernoulli", d=20, s=2, target=0.1 * f),
         dict(name="yes/no", problem="multinomial", d=2, target=0.002 * f)]
t = time.process_time()
res = bc.plan_study(stats, privacy="local", eps=2.0)
cpu = time.process_time() - t
print(json.dumps({"cpu": cpu, "parts": parts, "n_sufficient": res.n_sufficient, "n_necessary": res.n_necessary,
                  "strategy": res.strategy, "comparison": res.comparison()}))
"""


def run(factor: float, cache: str) -> dict:
    env = dict(os.environ, BOUNDCALC_CACHE_DIR=cache, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", CHILD, repr(factor)], capture_output=True, text=True, env=env,
                         check=True, timeout=3600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--skip-cold", action="store_true", help="measure the warm-code setting only")
    args = ap.parse_args(argv)
    report = {}
    with tempfile.TemporaryDirectory(prefix="bench-study-") as warm:
        run(1.37, warm)  # fills the generated-code cache (other targets than those measured)
        rows = [run(1.0 + 0.013 * (i + 1), warm) for i in range(args.reps)]
        report["warm code"] = rows
    if not args.skip_cold:
        cold = []
        for i in range(args.reps):
            with tempfile.TemporaryDirectory(prefix="bench-study-cold-") as d:
                cold.append(run(1.0 + 0.017 * (i + 1), d))
        report["cold"] = cold
    for key, rows in report.items():
        cpus = [r["cpu"] for r in rows]
        med = statistics.median(cpus)
        print(f"{key:>10}: median CPU {med:.2f} s  (all: {', '.join(f'{c:.2f}' for c in cpus)}); "
              f"plans at the whole budget {statistics.median(r['parts'].get('whole_plans', 0) for r in rows):.2f} s, "
              f"allocation search {statistics.median(r['parts'].get('optimise', 0) for r in rows):.2f} s")
    last = report["warm code"][-1]
    print(f"last answer: n sufficient {last['n_sufficient']:,} ({last['strategy']}), n necessary "
          f"{last['n_necessary']:,}; {last['comparison']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)


if __name__ == "__main__":
    main()
