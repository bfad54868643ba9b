"""Relative accuracy of scipy's float64 tail functions at large sizes, against a >= 40-digit mpmath reference.

Functions: Cephes bdtr/bdtrc, boost _binom_cdf/_binom_sf/_binom_pmf, pdtr/pdtrc, gammainc/gammaincc.

Reference (all >= 40 significant digits):
  * binomial tails: P(S > k) = I_p(k+1, n-k) = (1/B) int_0^p t^k (1-t)^(n-k-1) dt, P(S <= k) = the same integrand
    over [p, 1];  gamma: Q(s, x) = (1/G(s)) int_x^inf t^(s-1) e^-t dt, P(s, x) = int_0^x;  Poisson:
    P(N <= k) = Q(k+1, mu), P(N > k) = P(k+1, mu).  Each integral is computed directly (no 1 - other tail) by
    composite 48-point Gauss-Legendre at 55 + log10(n) digits: breakpoints start at the mode of the integrand
    clamped into the range and march outward with steps min(1/sqrt|f''|, 4/|f'|) (f = log integrand), i.e. <= one
    local standard deviation, until the log integrand has dropped by 160 (a factor 1e-69) or the range ends.
    The cost is independent of n, so n up to 1e12 is cheap.
  * pmf: exp(log-gamma form) at 55 + log10(n) digits.
  * The quadrature reference is validated (section VALIDATION of the output) against mpmath.betainc/gammainc
    (small n), against the pmf-sum reference (ratio recurrence from a log-gamma start, as in
    tests/_float64_parts_f_reference.py) at n = 1e4..1e6, and against itself with 96 nodes.
Usage: python benchmarks/scipy_tail_accuracy.py [out.txt] [maxdec]
"""
from __future__ import annotations

import math
import sys
import time
import warnings

import mpmath as mp
import numpy as np
import scipy
import scipy.special as sc
from mpmath.calculus.quadrature import GaussLegendre
from scipy.special import _ufuncs as U

warnings.simplefilter("ignore")

ZS = [0, 0.5, 1, 2, 4, 8, 16, 30]
PS = [1e-3, 0.01, 0.3, 0.5, 0.9, 0.99, 0.999]
DROP = 160
_NODES = {}


def nodes(prec, degree=5):
    key = (prec, degree)
    if key not in _NODES:
        _NODES[key] = GaussLegendre(mp.mp).calc_nodes(degree, prec)
    return _NODES[key]


def integrate(logf, d1, d2, A, B, mode, degree=5):
    """int_A^B exp(logf(t)) dt (B may be mp.inf). d1, d2: float first/second derivative of logf (step sizing).
    Must be called inside the working precision."""
    c = min(max(mode, A), B)
    L0 = logf(c)
    nd = nodes(mp.mp.prec, degree)

    def gl(a, b):
        h = (b - a) / 2
        m = (a + b) / 2
        return h * mp.fsum(w * mp.exp(logf(m + h * x)) for x, w in nd)

    tot = mp.mpf(0)
    for direction in (+1, -1):
        t = c
        end = B if direction > 0 else A
        while t != end:
            g1, g2 = abs(d1(t)), abs(d2(t))  # d1, d2 take the mp point (convert to float themselves)
            h = min(1 / math.sqrt(g2) if g2 > 0 else math.inf, 4 / g1 if g1 > 0 else math.inf)
            if direction > 0:
                nt = t + h
                if end != mp.inf and (nt >= end or (end - t) < 1.5 * h):
                    nt = end
            else:
                nt = t - h
                if nt <= end or (t - end) < 1.5 * h:
                    nt = end
            if direction > 0:
                tot += gl(t, nt)
            else:
                tot += gl(nt, t)
            t = nt
            if t != end and logf(t) < L0 - DROP:
                break
    return tot


def wdps(n):
    return 55 + int(math.log10(max(float(n), 10)))


# ---------------------------------------------------------------------------------------------- references

def binom_ref(k, n, p, which, degree=5):
    """which: 'sf' P(S > k), 'cdf' P(S <= k); k, n integers, p float (its exact binary value)."""
    k, n = int(k), int(n)
    if k < 0:
        return mp.mpf(0) if which == "cdf" else mp.mpf(1)
    if k >= n:
        return mp.mpf(1) if which == "cdf" else mp.mpf(0)
    with mp.workdps(wdps(n)):
        P = mp.mpf(p)
        a, b = k, n - k - 1
        logB = mp.loggamma(k + 1) + mp.loggamma(n - k) - mp.loggamma(n + 1)

        def logf(t):
            return (a * mp.log(t) if a else 0) + (b * mp.log1p(-t) if b else 0) - logB

        def d1(t):
            t, u = float(t), float(1 - t)
            return (a / t if a else 0.0) - (b / u if b else 0.0)

        def d2(t):
            t, u = float(t), float(1 - t)
            return -(a / t ** 2 if a else 0.0) - (b / u ** 2 if b else 0.0)
        mode = mp.mpf(a) / (a + b)
        if which == "sf":
            r = integrate(logf, d1, d2, mp.mpf(0), P, mode, degree)
        else:
            r = integrate(logf, d1, d2, P, mp.mpf(1), mode, degree)
    return r


def binom_pmf_ref(k, n, p):
    k, n = int(k), int(n)
    with mp.workdps(wdps(n)):
        P = mp.mpf(p)
        return mp.exp(mp.loggamma(n + 1) - mp.loggamma(k + 1) - mp.loggamma(n - k + 1) + k * mp.log(P)
                      + (n - k) * mp.log1p(-P))


def gamma_ref(s, x, which, degree=5):
    """which: 'upper' Q(s, x) = P(Gamma(s,1) > x), 'lower' P(s, x); s, x floats (exact binary values)."""
    with mp.workdps(wdps(s)):
        S, X = mp.mpf(s), mp.mpf(x)
        lg = mp.loggamma(S)
        a = S - 1
        af = float(a)

        def logf(t):
            return a * mp.log(t) - t - lg

        def d1(t):
            return af / float(t) - 1

        def d2(t):
            return -af / float(t) ** 2
        if which == "upper":
            return integrate(logf, d1, d2, X, mp.inf, a, degree)
        return integrate(logf, d1, d2, mp.mpf(0), X, a, degree)


# pmf-sum reference (independent method, for validation only)
def _pmf_sum(k0, n, p, step, dps=40):
    with mp.workdps(dps + 15 + int(math.log10(n))):
        p = mp.mpf(p)
        j = int(k0)
        term = mp.exp(mp.loggamma(n + 1) - mp.loggamma(j + 1) - mp.loggamma(n - j + 1) + j * mp.log(p)
                      + (n - j) * mp.log1p(-p))
        tot = mp.mpf(0)
        r = p / (1 - p)
        tiny = mp.mpf(10) ** -(dps + 10)
        while 0 <= j <= n:
            tot += term
            if term < tiny * tot and ((step > 0 and j > n * p) or (step < 0 and j < n * p)):
                break
            term = term * ((n - j) / mp.mpf(j + 1) * r if step > 0 else j / mp.mpf(n - j + 1) / r)
            j += step
        return tot


def binom_sum_ref(k, n, p, which):
    if which == "sf":
        if k + 1 >= n * p:
            return _pmf_sum(k + 1, n, p, 1)
        with mp.workdps(80):
            return 1 - _pmf_sum(k, n, p, -1, 60)
    if k <= n * p:
        return _pmf_sum(k, n, p, -1)
    with mp.workdps(80):
        return 1 - _pmf_sum(k + 1, n, p, 1, 60)


def poisson_sum_ref(k, mu, which):
    """P(N <= k) ('cdf') or P(N > k) ('sf') by the pmf sum outward from the boundary (validation only)."""
    def s(k0, step, dps):
        with mp.workdps(dps + 15 + int(math.log10(mu))):
            m = mp.mpf(mu)
            j = int(k0)
            term = mp.exp(-m + j * mp.log(m) - mp.loggamma(j + 1))
            tot = mp.mpf(0)
            tiny = mp.mpf(10) ** -(dps + 10)
            while j >= 0:
                tot += term
                if term < tiny * tot and ((step > 0 and j > m) or (step < 0 and j < m)):
                    break
                term = term * (m / (j + 1) if step > 0 else j / m)
                j += step
            return tot
    if which == "cdf":
        if k <= mu:
            return s(k, -1, 40)
        with mp.workdps(80):
            return 1 - s(k + 1, 1, 60)
    if k + 1 >= mu:
        return s(k + 1, 1, 40)
    with mp.workdps(80):
        return 1 - s(k, -1, 60)


def relerr(f, ref):
    if ref == 0:
        return None
    if not np.isfinite(f):
        return float("nan")
    with mp.workdps(30):
        return float(mp.mpf(f) / ref - 1)


# ---------------------------------------------------------------------------------------------- grids

def kgrid(mean, sd, n=None):
    ks = {}
    for z in ZS:
        lo, hi = math.floor(mean - z * sd), math.ceil(mean + z * sd)
        for kk, zz in ((lo, -z), (hi, z)):
            if kk < 0 or (n is not None and kk > n):
                continue
            ks.setdefault(kk, zz)
    return sorted(ks.items())


def validation(out, maxdec):
    out("VALIDATION of the quadrature reference (max |quad/other - 1| over the listed points)")
    worst = {}

    def rec(name, a, b):
        with mp.workdps(70):
            if b == 0 or a == 0:
                if not (a == 0 and b == 0):
                    print(f"# validation {name}: one side is 0: quad={mp.nstr(a, 5)} other={mp.nstr(b, 5)}",
                          file=sys.stderr, flush=True)
                return
            d = abs(float(a / b - 1))
        worst[name] = max(worst.get(name, 0.0), d)

    t0 = time.time()
    for n in (100, 1000):
        for p in PS:
            for k, z in kgrid(n * p, math.sqrt(n * p * (1 - p)), n):
                if k >= n:
                    continue
                with mp.workdps(60):
                    bsf = mp.betainc(k + 1, n - k, 0, mp.mpf(p), regularized=True)
                    bcdf = mp.betainc(k + 1, n - k, mp.mpf(p), 1, regularized=True)
                rec("binom vs mpmath.betainc n<=1e3", binom_ref(k, n, p, "sf"), bsf)
                rec("binom vs mpmath.betainc n<=1e3", binom_ref(k, n, p, "cdf"), bcdf)
    for n in (10**4, 10**5, 10**6):
        for p in (1e-3, 0.3, 0.99):
            for k, z in kgrid(n * p, math.sqrt(n * p * (1 - p)), n):
                if k >= n or abs(z) not in (0, 1, 4, 16, 30):
                    continue
                for w in ("sf", "cdf"):
                    r = binom_ref(k, n, p, w)
                    if r > 1e-300:
                        rec("binom vs pmf sum n=1e4..1e6", r, binom_sum_ref(k, n, p, w))
    for n in (10**6, 10**9, 10**12):
        if n > 10 ** maxdec:
            continue
        for p in (1e-3, 0.5, 0.999):
            for k, z in kgrid(n * p, math.sqrt(n * p * (1 - p)), n):
                if abs(z) not in (0, 2, 30):
                    continue
                for w in ("sf", "cdf"):
                    r = binom_ref(k, n, p, w)
                    if r > 1e-300:
                        rec("binom 48 vs 96 nodes n=1e6..1e12", r, binom_ref(k, n, p, w, degree=6))
    for s in (100.0, 1000.0, 1e4):
        for z in ZS:
            for x in (s - z * math.sqrt(s), s + z * math.sqrt(s)):
                if x <= 0:
                    continue
                with mp.workdps(60):
                    q = mp.gammainc(mp.mpf(s), mp.mpf(x), mp.inf, regularized=True)
                    pl = mp.gammainc(mp.mpf(s), 0, mp.mpf(x), regularized=True)
                rec("gamma vs mpmath.gammainc s<=1e4", gamma_ref(s, x, "upper"), q)
                rec("gamma vs mpmath.gammainc s<=1e4", gamma_ref(s, x, "lower"), pl)
    for mu in (1e4, 1e5, 1e6):
        for k, z in kgrid(mu, math.sqrt(mu)):
            if abs(z) not in (0, 1, 4, 16, 30):
                continue
            r1, r2 = gamma_ref(k + 1.0, mu, "upper"), gamma_ref(k + 1.0, mu, "lower")
            if r1 > 1e-300:
                rec("poisson (gamma quad) vs pmf sum mu=1e4..1e6", r1, poisson_sum_ref(k, mu, "cdf"))
            if r2 > 1e-300:
                rec("poisson (gamma quad) vs pmf sum mu=1e4..1e6", r2, poisson_sum_ref(k, mu, "sf"))
    for s in (1e6, 1e9, 1e12):
        if s > 10 ** maxdec:
            continue
        for z in (0, 2, 30):
            for x in (s - z * math.sqrt(s), s + z * math.sqrt(s)):
                for w in ("upper", "lower"):
                    rec("gamma 48 vs 96 nodes s=1e6..1e12", gamma_ref(s, x, w), gamma_ref(s, x, w, degree=6))
    for name, v in worst.items():
        out(f"  {name:48s} {v:.2e}")
    out(f"  ({time.time() - t0:.0f} s)")
    out("")


def run(out, maxdec, do_validation=True):
    out(f"scipy {scipy.__version__}, numpy {np.__version__}, mpmath {mp.__version__}; "
        f"rel err = float64 value / reference - 1 (signed); eps = 2^-53 = 1.11e-16")
    out(f"grid: n (mu, s) = 1e2..1e{maxdec}; p in {PS}; z in {ZS} both sides; k = floor(mean - z sd), "
        f"ceil(mean + z sd); x = s -/+ z sqrt(s); points with reference <= 1e-300 skipped")
    out("")
    if do_validation:
        validation(out, maxdec)
    res = {}  # fname -> list of (dec, err, args, ref)

    def add(fn, dec, f, ref, args):
        if ref <= 1e-300:
            return
        e = relerr(f, ref)
        res.setdefault(fn, []).append((dec, e, args, float(ref)))

    for dec in range(2, maxdec + 1):
        t0 = time.time()
        n = 10 ** dec
        for p in PS:
            mean, sd = n * p, math.sqrt(n * p * (1 - p))
            for k, z in kgrid(mean, sd, n):
                args = f"k={k}, n=1e{dec}, p={p}, z={z:+g}"
                rs, rc = binom_ref(k, n, p, "sf"), binom_ref(k, n, p, "cdf")
                pm = binom_pmf_ref(k, n, p)
                add("bdtr (Cephes, P(S<=k))", dec, sc.bdtr(float(k), np.int64(n), p), rc, args)
                add("bdtrc (Cephes, P(S>k))", dec, sc.bdtrc(float(k), np.int64(n), p), rs, args)
                add("_binom_cdf (boost, P(S<=k))", dec, U._binom_cdf(float(k), float(n), p), rc, args)
                add("_binom_sf (boost, P(S>k))", dec, U._binom_sf(float(k), float(n), p), rs, args)
                add("_binom_pmf (boost)", dec, U._binom_pmf(float(k), float(n), p), pm, args)
        mu = float(n)
        for k, z in kgrid(mu, math.sqrt(mu)):
            args = f"k={k}, mu=1e{dec}, z={z:+g}"
            rc, rs = gamma_ref(k + 1.0, mu, "upper"), gamma_ref(k + 1.0, mu, "lower")
            add("pdtr (P(N<=k))", dec, sc.pdtr(float(k), mu), rc, args)
            add("pdtrc (P(N>k))", dec, sc.pdtrc(float(k), mu), rs, args)
        s = float(n)
        for z in ZS:
            for sgn in (-1, 1):
                x = s + sgn * z * math.sqrt(s)
                if x <= 0 or (z == 0 and sgn > 0):
                    continue
                args = f"s=1e{dec}, x=s{'+' if sgn > 0 else '-'}{z:g}sqrt(s)"
                add("gammainc (P(s,x))", dec, sc.gammainc(s, x), gamma_ref(s, x, "lower"), args)
                add("gammaincc (Q(s,x))", dec, sc.gammaincc(s, x), gamma_ref(s, x, "upper"), args)
        print(f"# decade 1e{dec} done in {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    report(out, res, maxdec)
    return res


def report(out, res, maxdec):
    for fn, rows in res.items():
        out(f"== {fn}")
        out(f"  {'n':6s} {'pts':>4s} {'nan':>4s} {'max|err|':>9s} {'/(n eps)':>9s} {'med|err|':>9s}  signed worst (arguments, reference)")
        for dec in range(2, maxdec + 1):
            rr = [r for r in rows if r[0] == dec]
            if not rr:
                continue
            bad = [r for r in rr if r[1] is not None and not np.isfinite(r[1])]
            good = [r for r in rr if r[1] is not None and np.isfinite(r[1])]
            if not good:
                out(f"  1e{dec:<4d} {len(rr):4d} {len(bad):4d}   (all nan)")
                continue
            w = max(good, key=lambda r: abs(r[1]))
            med = float(np.median([abs(r[1]) for r in good]))
            out(f"  1e{dec:<4d} {len(rr):4d} {len(bad):4d} {abs(w[1]):9.2e} {abs(w[1]) / (10.0 ** dec * 2.0 ** -53):9.2e} "
                f"{med:9.2e}  {w[1]:+.2e} ({w[2]}, ref={w[3]:.3e})")
        out("")


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results/scipy_tail_accuracy_2026-12-04.txt"
    maxdec = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    fh = open(path, "w")

    def out(s):
        print(s)
        fh.write(s + "\n")
        fh.flush()
    run(out, maxdec, do_validation=(len(sys.argv) <= 3 or sys.argv[3] != "noval"))
    fh.close()
