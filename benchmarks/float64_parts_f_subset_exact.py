"""Part F of the float64-parts audit: the projected subset-selection bounds (max route, threshold route ℓ2² and ℓ1)
against the exact risk of the estimator they bound at d = 3 and 4 (exact enumeration of the multinomial counts of the
C(d, s) reports: tests/_float64_parts_f_reference.py), at the subset size each route chooses, over a θ grid with the
uniform law, the vertices, the face centres and edge midpoints. Prints one line per (d, n, ε, route) with the closest
ratio bound / max_θ exact risk. Usage: python benchmarks/float64_parts_f_subset_exact.py [out.txt]"""
import math, sys, time
sys.path.insert(0, "tests")
from _float64_parts_f_reference import simplex_grid, subset_exact_risks, subset_exact_risks_f64
from boundcalc.mechanisms import subset_tail as ST

CASES = [(3, n, e) for n in (20, 50, 100, 200) for e in (0.1, 0.5, 1.0, 2.0, 5.0)] + \
        [(4, n, e) for n in (20, 40) for e in (0.1, 0.5, 1.0, 2.0, 5.0)]
out = open(sys.argv[1], "w") if len(sys.argv) > 1 else sys.stdout
closest = {}
t0 = time.time()
for d, n, eps in CASES:
    ths = simplex_grid(d, extra_random=5)
    cache = {}
    for route, loss in (("max", "l2sq"), ("threshold", "l2sq"), ("threshold", "l1")):
        v, s, _ = ST.best(route, n, eps, d, loss)
        if not math.isfinite(v):
            print(f"d={d} n={n} eps={eps} {route}/{loss}: not evaluated (NaN)", file=out, flush=True)
            continue
        v = min(v, 2.0)
        if s not in cache:  # the float64 enumeration (40-digit probabilities; see the docstring of the reference)
            cache[s] = subset_exact_risks_f64(n, eps, d, s, ths)
        k = 0 if loss == "l2sq" else 1
        worst = max(r[k] for r in cache[s])
        ratio = v / worst
        key = (d, route, loss)
        closest[key] = min(closest.get(key, math.inf), ratio)
        print(f"d={d} n={n} eps={eps} {route}/{loss} s={s}: bound {v:.10g} max exact {worst:.10g} ratio {ratio:.6f}"
              f" {'OK' if ratio >= 1 else 'BELOW'}  ({time.time() - t0:.0f}s)", file=out, flush=True)
for key, r in sorted(closest.items()):
    print("closest", key, f"{r:.6f}", file=out)
