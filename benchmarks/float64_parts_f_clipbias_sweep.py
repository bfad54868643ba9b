"""Part F: ClipBias exact-tail branch A, C (float64, boundcalc) against 50-digit references of the definitions
(benchmarks/_float64_parts_f_clipref.py, the scratch copy the 2026-12-04 results were made with; the same formulas as
tests/_float64_parts_f_reference.clip_hinge_ref). Usage: python benchmarks/float64_parts_f_clipbias_sweep.py MODELS TS"""
import sys, os; sys.path.insert(0, os.path.dirname(__file__))
from _float64_parts_f_clipref import *
import numpy as np, math, time
V = {'exponential': lambda th,t: th*th/(t-2), 'normal-var': lambda th,t: 2*th*th/t, 'normal-mean': lambda th,t: 1/t,
     'poisson': lambda th,t: th/t, 'bernoulli': lambda th,t: th*(1-th)/t}
THS = {'exponential': [0.01, 1.0, 9.0], 'normal-var': [0.01, 1.0, 9.0], 'normal-mean': [0.0, 4.9], 'poisson': [0.01, 2.0, 9.0], 'bernoulli': [0.001, 0.3, 0.99]}
models = sys.argv[1].split(',')
ts = [float(x) for x in sys.argv[2].split(',')]
for model in models:
    for t in ts:
        for th in THS[model]:
            for z in [0.5, 1.0, 4.0, 10.0, 30.0]:
                sd = math.sqrt(V[model](th,t)); a = th - z*sd; b = th + z*sd
                if model == 'bernoulli' and (a <= 0 or b >= 1): continue
                if a <= 0 and model != 'normal-mean': a = None
                t0=time.time()
                try:
                    A, C = ref_AC(model, th, t, a if a is not None else 0.0, b)
                except Exception as e:
                    print(model, t, th, z, 'REF FAIL', repr(e)[:80], flush=True); continue
                fA, fC = flt_AC(model, th, t, a if a is not None else 0.0, b)
                rA = float(fA/A-1) if A else float('nan'); rC = float(fC/C-1) if C else float('nan')
                print(f"{model:12s} t={t:8.0e} th={th:6g} z={z:4.1f} A={float(A):.3e} relA={rA:+.2e} C={float(C):.3e} relC={rC:+.2e}  {time.time()-t0:.1f}s", flush=True)
