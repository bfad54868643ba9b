"""Part F, after the fix of 2026-12-04: the hinges A = E(a - Y)_+, C = E(Y - b)_+ as computed now (T1 - T2 of the
block estimator's ``hinges``) against 50-digit references (tests/_float64_parts_f_reference.clip_hinge_ref), at
a = θ - z sd, b = θ + z sd, z = 0.5 to 30. Prints per model and block size the worst relative error of the hinge and
the worst error relative to T1 + T2 (what HINGE_SLACK covers). "old" is clipped_block_moments' A, C (the same
computation since the fix). Usage: python benchmarks/float64_parts_f_hinge_sweep.py MODELS TS
Results: benchmarks/results/2026-12-04-float64-parts-f-hinges-after.txt"""
import sys, math, numpy as np, mpmath, time
import os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'tests'))
from _float64_parts_f_reference import clip_hinge_ref
from boundcalc.mechanisms import subsample_aggregate as sa
V = {"exponential": lambda th, t: th * th / (t - 2), "normal-var": lambda th, t: 2 * th * th / t,
     "normal-mean": lambda th, t: 1.0 / t, "poisson": lambda th, t: th / t, "bernoulli": lambda th, t: th * (1 - th) / t}
THS = {'exponential': [0.01, 1.0, 9.0], 'normal-var': [0.01, 1.0, 9.0], 'normal-mean': [0.0, 4.9], 'poisson': [0.01, 2.0, 9.0], 'bernoulli': [0.001, 0.3, 0.99]}
models=sys.argv[1].split(','); ts=[float(x) for x in sys.argv[2].split(',')]
for model in models:
  for t in ts:
    worst_old=worst_new=0; wn=None; wmag=0
    for th in THS[model]:
      for z in [0.5,1,2,4,10,30]:
        sd=math.sqrt(V[model](th,t)); a=th-z*sd; b=th+z*sd
        if model=='bernoulli' and (a<=0 or b>=1): continue
        if a<=0 and model!='normal-mean': a=0.0
        extra={"sigma":1.0} if model=='normal-mean' else None
        ex={**sa.get_point_model(model).extra_defaults, **(extra or {})}
        try: rA,rC=clip_hinge_ref(model,th,t,a,b)
        except Exception as e: print('ref fail',model,t,th,z,repr(e)[:60]); continue
        _,_,_,A,C=sa.clipped_block_moments(model,th,np.array([t]),a,b,extra)
        T=sa.get_block_estimator(model).hinges(th,np.array([t]),a,b,ex)
        TA1,TA2,TC1,TC2=[float(np.asarray(x).reshape(-1)[0]) for x in T]
        nA=max(TA1-TA2,0); nC=max(TC1-TC2,0)
        for ref,old,new,mag in [(rA,float(A[0]),nA,TA1+TA2),(rC,float(C[0]),nC,TC1+TC2)]:
          if ref < 1e-290: continue
          eo=float(old/ref-1); en=float(new/ref-1)
          worst_old=max(worst_old,abs(eo))
          if abs(en)>worst_new: worst_new=abs(en); wn=(th,z,en, mag/float(ref))
          # error relative to magnitude
          wmag=max(wmag, abs(float((mpmath.mpf(new)-ref)))/mag if mag>0 else 0)
    print(f"{model:12s} t={t:8.0e} old worst {worst_old:.2e}  new worst {worst_new:.2e} at {wn}  err/mag {wmag:.2e}",flush=True)
