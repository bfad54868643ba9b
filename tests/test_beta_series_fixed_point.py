"""The positive series for the regularised incomplete beta function I_x(a, b), summed in fixed point with integers
(boundcalc.core.symbolic._positive_beta_series), against two independent evaluations: the same series summed in
mpmath numbers with 30 more digits, and mpmath's betainc where it converges. It is the binomial tail
P(Bin(n, p) > m) = I_p(m+1, n-m) of the high-precision path (the threshold coupling at n up to 1e18) and the
sphere cap's I_x(a, 1/2)."""
import mpmath
import numpy as np
import pytest

from boundcalc.core import symbolic as S


def _reference(a, b, x, dps):
    """The series in mpmath numbers at dps + 30 digits (the prefactor's logarithms cancel up to ~20 digits)."""
    with mpmath.workdps(dps + 30):
        return S._positive_beta_series_mp(mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(x))


def _points():
    """(a, b, x) with a first term ratio (a+b)x/(a+1) below 1, as the binomial tail and the sphere cap call it:
    huge b (n up to 1e18) with x small, tails far out and near the mode, x from 1e-300 to 0.99, non-integer a
    and b, b < 1."""
    pts = [(671143331.0 / 2000, 1e18 / 2000, 6.710397120891267e-10 / 1.2),  # a thin tail at n = 5e14
           (1295562.0 / 100, 1e16, 1.2915640726763109e-14),  # the mode of Bin(1e16, 1.3e-12): a ~ 13000
           (12.0, 1e18 - 11, 1e-18), (1.0, 1e18, 1e-300), (3.0, 5.0, 0.2), (1.0, 1.0, 0.4),
           (499999.5, 0.5, 0.9936309548380527), (50.5, 0.5, 0.99), (7.25, 0.75, 0.3), (200.0, 3.0, 0.98)]
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = float(round(10 ** rng.uniform(1, 18)))
        p = float(10 ** rng.uniform(-17, -0.2))
        sd = (n * p * (1 - p)) ** 0.5
        if sd > 2000:  # keep the mpmath reference to a few thousand terms
            continue
        m = float(np.clip(round(n * p + rng.uniform(-3, 8) * sd), 0, n - 1))
        a, b = m + 1, n - m
        if (a + b) * p < a + 1:  # (the complement's series, for P(X <= m), is the same function at (b, a, 1-p))
            pts.append((a, b, p))
    return pts


@pytest.mark.parametrize("dps", [40, 60])
def test_fixed_point_series_agrees_with_the_mpmath_series_to_working_precision(dps):
    pts = _points()
    assert len(pts) >= 25
    for a, b, x in pts:
        ref = _reference(a, b, x, dps)
        with mpmath.workdps(dps):
            got = S._positive_beta_series(mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(x))
            tol = mpmath.mpf(2) ** (4 - mpmath.mp.prec)  # a few units in the last place of the working precision
        with mpmath.workdps(dps + 30):
            assert ref > 0 and abs(got - ref) <= tol * ref, (a, b, x)


def test_fixed_point_series_agrees_with_betainc():
    """mpmath's betainc (a different series) where it converges, n up to 2000."""
    rng = np.random.default_rng(11)
    done = 0
    for _ in range(60):
        n = float(round(10 ** rng.uniform(0.5, 3.3)))
        m = float(int(rng.uniform(0, n - 1)))
        p = float(rng.uniform(0.001, 0.999))
        a, b = m + 1, n - m
        args = (a, b, p) if (a + b) * p < a + 1 else (b, a, 1 - p)
        with mpmath.workdps(40):
            ref = mpmath.betainc(args[0], args[1], 0, args[2], regularized=True)
            got = S._positive_beta_series(*(mpmath.mpf(v) for v in args))
            assert abs(got - ref) <= mpmath.mpf(10) ** -36 * ref, (a, b, p)
        done += 1
    assert done == 60


def test_binomial_tail_at_n_1e18_is_fast_and_exact():
    """A tail near the mode of Bin(1e18, 6.7e-10) (the threshold coupling of mean/approx at n = 1e18, d = 1e6):
    about 10^5 terms. Summed in fixed point in a fraction of a second; the mpmath-number sum at 40 digits took
    3 s and, its prefactor cancelling ~10 digits, was right to 31 digits only. Against the 60-digit value."""
    import time

    m, n, p = 671143330.0, 1e18, 6.710397120891267e-10
    with mpmath.workdps(60):
        ref = S._mp_binom_sf_uncached(mpmath.mpf(m), mpmath.mpf(n), mpmath.mpf(p))
    t = time.process_time()
    with mpmath.workdps(40):
        got = S._mp_binom_sf_uncached(mpmath.mpf(m), mpmath.mpf(n), mpmath.mpf(p))
    took = time.process_time() - t
    assert abs(got - ref) <= mpmath.mpf(10) ** -38 * ref
    assert 3e-5 < got < 3.3e-5
    assert took < 2.0  # (0.08 s measured; the mpmath-number sum: 3 s)


def test_binomial_tail_memo_is_per_precision():
    with mpmath.workdps(40):
        v40 = S._mp_binom_sf(mpmath.mpf(30), mpmath.mpf(1e6), mpmath.mpf(2e-5))
    with mpmath.workdps(60):
        v60 = S._mp_binom_sf(mpmath.mpf(30), mpmath.mpf(1e6), mpmath.mpf(2e-5))
        fresh = S._mp_binom_sf_uncached(mpmath.mpf(30), mpmath.mpf(1e6), mpmath.mpf(2e-5))
    assert v60 == fresh and v40 != v60 and abs(v40 - v60) <= 1e-38 * v60


@pytest.mark.parametrize("m,n,p", [(0, 10**18, 1e-10), (1, 10**18, 5e-18), (10, 10**18, 2e-17), (40, 10**17, 5e-16)])
def test_short_lower_tail_at_huge_n(m, n, p):
    """P(Bin(n, p) > m) where the complement's beta series would need too many terms (mean far above m): from the
    direct lower sum, against 1 - Σ_{i<=m} C(n, i) p^i (1-p)^(n-i) in exact rational arithmetic at 60 digits."""
    from fractions import Fraction
    import math as _m

    with mpmath.workdps(40):
        got = S._mp_binom_sf_uncached(mpmath.mpf(m), mpmath.mpf(n), mpmath.mpf(p))
    with mpmath.workdps(80):
        P = mpmath.mpf(Fraction(p).numerator) / Fraction(p).denominator  # the float p exactly
        low = sum(mpmath.mpf(_m.comb(n, i)) * P ** i * mpmath.exp((n - i) * mpmath.log1p(-P)) for i in range(m + 1))
        ref = 1 - low
        assert abs(got - ref) <= mpmath.mpf(10) ** -38 * ref, (got, ref)
