"""Certified ratio upper/lower of central mean estimation on the issue's grid:
n ∈ {1e3, 1e5, 1e7}, ε ∈ {0.1, 1} (tv: α = ε/2 < 1), d ∈ {1, 10, 100}, k ∈ {2, 4, ∞}.
Run: python benchmarks/ratio_grid.py
"""
import itertools

import boundcalc as bc

worst = {}
for priv in ["none", "pure", "smooth", "approx", "tv", "kl"]:
    rows = []
    for n, eps, d, k in itertools.product([10**3, 10**5, 10**7], [0.1, 1.0], [1, 10, 100], ["2", "4", "inf"]):
        kw = {} if priv == "none" else {"eps": eps / 2 if priv == "tv" else eps}
        res = bc.rate("mean", priv, n=n, d=d, k=k, **kw)
        rows.append((res.ratio, n, eps, d, k, res.lower.name, res.upper.name))
    rows.sort()
    print(f"{priv:7s} ratio min {rows[0][0]:8.2f}  median {rows[len(rows) // 2][0]:8.2f}  max {rows[-1][0]:8.2f}"
          f"  (worst at n={rows[-1][1]:.0e}, eps={rows[-1][2]}, d={rows[-1][3]}, k={rows[-1][4]}: "
          f"{rows[-1][5]} vs {rows[-1][6]})")
