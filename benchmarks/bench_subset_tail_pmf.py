"""The projected subset-selection searches (subset_tail._search) with plain tails and with derived tails (PMF_TAILS), paired at
14 random points (d = 10 to 100): the relative change of each value, whether the chosen (s, parameter) moved, and the CPU
seconds of each form. python benchmarks/bench_subset_tail_pmf.py"""
import math, time, random
from boundcalc.mechanisms import subset_tail as ST
ST._cores=lambda:1
rng=random.Random(5)
pts=[(int(10**rng.uniform(2.3,5.5)), round(10**rng.uniform(-0.7,0.6),4), rng.choice([10,20,50,100])) for _ in range(14)]
worst=0; flips=0; tt={True:0,False:0}
for n,e,d in pts:
  for route,loss in (("max","l2sq"),("threshold","l2sq"),("threshold","l1")):
    out={}
    for on in (False,True):
        ST.PMF_TAILS=on; c=time.process_time(); out[on]=ST._search(route,n,e,d,loss); tt[on]+=time.process_time()-c
    a,b=out[False],out[True]
    if math.isnan(a[0]): continue
    rel=(b[0]-a[0])/a[0]
    same=(a[1:]==b[1:])
    worst=max(worst,abs(rel)); flips+= not same
    print(n,e,d,route,loss,f"{rel:+.2e}", "same s,param" if same else f"CHOICE {a} {b}")
print("worst",worst,"flips",flips, tt)
