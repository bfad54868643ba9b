"""Speed of boundcalc (issue 2): run `python benchmarks/bench_rate.py [--runs 7]`.

1. `boundcalc rate --problem mean --privacy approx --k 4` as a fresh process: median wall time, and
   its ratio to `python -c "import sympy"` measured the same way on the same machine (the floor:
   the answer is a sympy expression, so sympy is always imported).
2. A certified upper bound evaluated over 10^6 (n, ε) points in one vectorised call
   (boundcalc.evaluate_curve: the bound at its symbolic optimum, lambdified once).
Machines are noisy: medians over several runs, and ratios.
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np


def wall(cmd, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    exe = shutil.which("boundcalc") or sys.exit("boundcalc is not installed (pip install -e .)")
    t_sympy = wall([sys.executable, "-c", "import sympy"], args.runs)
    t_rate = wall([exe, "rate", "--problem", "mean", "--privacy", "approx", "--k", "4"], args.runs)
    t_json = wall([exe, "rate", "--problem", "mean", "--privacy", "pure", "--k", "4", "--d", "10", "--json"],
                  args.runs)
    print(f"python -c 'import sympy'                      median {t_sympy:.3f} s")
    print(f"boundcalc rate --problem mean --privacy approx --k 4   median {t_rate:.3f} s  "
          f"(ratio to import sympy: {t_rate / t_sympy:.2f})")
    print(f"boundcalc rate ... pure --d 10 --json         median {t_json:.3f} s  (ratio {t_json / t_sympy:.2f})")

    import boundcalc as bc

    rng = np.random.default_rng(0)
    n = 10 ** rng.uniform(2, 12, 10 ** 6)
    eps = 10 ** rng.uniform(-3, 1, 10 ** 6)
    bc.evaluate_curve("mean", "pure", k=4, n=n[:10], eps=eps[:10])  # lambdify once (cached)
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        vals = bc.evaluate_curve("mean", "pure", k=4, n=n, eps=eps)
        times.append(time.perf_counter() - t)
    assert np.all(np.isfinite(vals)) and vals.shape == (10 ** 6,)
    print(f"certified upper bound (mean, pure, k=4) at 10^6 (n, eps) points: median {statistics.median(times):.3f} s")


if __name__ == "__main__":
    main()
