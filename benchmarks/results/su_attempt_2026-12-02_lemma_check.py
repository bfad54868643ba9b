# Lemma check (E A_+ <= psi(L) E U + sqrt(delta_L E W^2 E U^2)) on the Gaussian mechanism y = beta z + N(0, I_d),
# z uniform on {+-1}^d (p = 0, c = 0, u = y, w = z), exact (L, delta_L) profile for sensitivity mu = 2 beta sqrt(d).
import math, numpy as np
from scipy.stats import norm
from scipy.optimize import minimize_scalar
rng=np.random.default_rng(0)
def psi(L): x=math.sqrt(2*L); return x+math.exp(L+norm.logsf(x))*math.sqrt(2*math.pi)
def dG(L,mu): return norm.cdf(mu/2-L/mu)-math.exp(L)*norm.cdf(-mu/2-L/mu)
for d in (50,400):
    for g in (0.5,1,2,3,5,8):
        beta=g/math.sqrt(d); mu=2*g
        N=20000; z=np.where(rng.random((N,d))<.5,1.,-1.); y=beta*z+rng.standard_normal((N,d))
        A=(y*z).sum(1); U=np.sqrt((y*y).sum(1))
        lhs=np.mean(np.maximum(A,0)); EU=U.mean(); EU2=(U*U).mean()
        rhs=min(psi(L)*EU+math.sqrt(max(dG(L,mu),0)*d*EU2) for L in np.linspace(0.01,80,4000))
        print(d,g,"E A_+ %.2f  lemma rhs %.2f  ratio %.2f"%(lhs,rhs,rhs/lhs))
