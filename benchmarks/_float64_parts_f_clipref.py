import math, mpmath, numpy as np, time, sys
pass
from boundcalc.mechanisms import subsample_aggregate as sa
DPS=50
def ref_AC(model, th, t, a, b, sigma=1.0):
    """50-digit A = E(a-Y)+, C = E(Y-b)+ from the definitions of the block laws."""
    with mpmath.workdps(DPS):
        th, a, b, t = mpmath.mpf(th), mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(t)
        if model == 'exponential':  # Y=(t-1)/S, S~Gamma(t, rate th)
            def P_gt(s, x): return mpmath.gammainc(s, x, mpmath.inf, regularized=True)
            P_lt = _P_lt
            A = 0 if a <= 0 else a*P_gt(t, th*(t-1)/a) - th*P_gt(t-1, th*(t-1)/a)
            C = th*P_lt(t-1, th*(t-1)/b) - b*P_lt(t, th*(t-1)/b)
        elif model == 'normal-var':  # Y = th W/t, W~chi2_t
            P_lt = lambda m, c: _P_lt(m/2, c/2)
            P_gt = lambda m, c: mpmath.gammainc(m/2, c/2, mpmath.inf, regularized=True)
            A = 0 if a <= 0 else a*P_lt(t, a*t/th) - th*P_lt(t+2, a*t/th)
            C = th*P_gt(t+2, b*t/th) - b*P_gt(t, b*t/th)
        elif model == 'normal-mean':
            s = mpmath.mpf(sigma)/mpmath.sqrt(t)
            psi = lambda z: mpmath.npdf(z) - z*mpmath.ncdf(-z)
            A = s*psi((th-a)/s); C = s*psi((b-th)/s)
        else:
            A = count_hinge(model, th, t, a, lower=True); C = count_hinge(model, th, t, b, lower=False)
        return A, C

def _P_lt(s, x):
    """P(Gamma(s) < x) to DPS digits: below the mean from mpmath's lower gamma where its series converges, else
    as 1 - the upper one at enough extra digits."""
    if x < s - 5 * mpmath.sqrt(s) or s < 1e4:
        try:
            return mpmath.gammainc(s, 0, x, regularized=True)
        except mpmath.libmp.NoConvergence:
            pass
    with mpmath.workdps(20):
        q = 1 - mpmath.gammainc(s, x, mpmath.inf, regularized=True)
    extra = 0 if q <= 0 else max(0, int(-mpmath.log10(q))) + 10
    if q <= 0:
        extra = 400
    with mpmath.workdps(DPS + extra):
        v = 1 - mpmath.gammainc(s, x, mpmath.inf, regularized=True)
    return +v

def count_hinge(model, th, t, c, lower):
    """E(c - S/t)+ (lower) or E(S/t - c)+ for S ~ Bin(t, th) / Poisson(t th): direct pmf sums from the
    boundary outward, until the terms fall below 1e-60 of the sum."""
    if model == 'bernoulli':
        logpmf = lambda k: mpmath.loggamma(t+1)-mpmath.loggamma(k+1)-mpmath.loggamma(t-k+1)+k*mpmath.log(th)+(t-k)*mpmath.log1p(-th)
        ratio_up = lambda k: (t-k)/(k+1)*th/(1-th)   # pmf(k+1)/pmf(k)
        kmax = t
    else:
        mu = t*th
        logpmf = lambda k: -mu + k*mpmath.log(mu) - mpmath.loggamma(k+1)
        ratio_up = lambda k: mu/(k+1)
        kmax = mpmath.inf
    ct = c*t
    if lower:
        k = mpmath.ceil(ct) - 1
        if k < 0: return mpmath.mpf(0)
        if model == 'bernoulli' and k > t: k = t
        p = mpmath.exp(logpmf(k)); tot = mpmath.mpf(0)
        while k >= 0:
            term = (c - k/t)*p
            tot += term
            if term < tot*mpmath.mpf(10)**-60 and p < mpmath.mpf(10)**-60*mpmath.exp(logpmf(k)) or p == 0: break
            if term < tot*mpmath.mpf(10)**-60: break
            p = p/ratio_up(k-1); k -= 1
        return tot
    else:
        k = mpmath.floor(ct) + 1
        if k > kmax: return mpmath.mpf(0)
        p = mpmath.exp(logpmf(k)); tot = mpmath.mpf(0)
        while k <= kmax:
            term = (k/t - c)*p
            tot += term
            if term < tot*mpmath.mpf(10)**-60: break
            p = p*ratio_up(k); k += 1
        return tot

def flt_AC(model, th, t, a, b, sigma=1.0):
    extra = {'sigma': sigma} if model == 'normal-mean' else None
    _,_,_,A,C = sa.clipped_block_moments(model, th, np.array([float(t)]), a, b, extra)
    return float(A[0]), float(C[0])
