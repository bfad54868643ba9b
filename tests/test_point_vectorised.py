"""The point problem's per-model functions evaluated at many points at once give, bit for bit, the values of
one-point calls (the way they were evaluated before: one call per point, with Python floats)."""
import numpy as np
import pytest

from boundcalc.mechanisms import subsample_aggregate as sa
from boundcalc.methods import threshold_bayes as tb

MODELS = ["bernoulli", "poisson", "exponential", "normal-mean", "normal-var"]


def _points(model, rng, count=25):
    if model == "bernoulli":
        a, b = 0.0, 1.0
    elif model == "normal-mean":
        a, b = -2.0 * rng.random() - 0.1, 2.0 * rng.random() + 0.1
    else:
        a, b = (0.0 if rng.random() < 0.4 else 0.05 + rng.random()), 1.5 + 3 * rng.random()
    lo = a + (b - a) * rng.random(count) * 0.5
    hi = lo + (b - lo) * rng.random(count)
    n = rng.integers(3, 10 ** 6, count).astype(float)
    k = np.maximum(1, n // rng.integers(3, 1000, count)).astype(float)
    aa = np.maximum(a, lo - rng.random(count) * 2)
    bb = np.minimum(b, hi + rng.random(count) * 2)
    sig = 0.5 + rng.random(count)
    return n, k, lo, hi, aa, bb, sig


def _bits(x):
    return np.asarray(x, float).view(np.uint64)


@pytest.mark.parametrize("model", MODELS)
def test_block_functions_many_points_equal_one_point_calls(model):
    rng = np.random.default_rng(hash(model) % 2 ** 32)
    bias, exact = (c._imp_ for c in sa.block_functions(model))
    for _ in range(3):
        n, k, lo, hi, aa, bb, sig = _points(model, rng)
        many_b = bias(n, k, lo, hi, aa, bb, sig)
        many_e = exact(n, k, lo, aa, bb, sig)
        one_b = [bias(np.array([n[i]]), np.array([k[i]]), float(lo[i]), float(hi[i]), float(aa[i]), float(bb[i]),
                      float(sig[i]))[0] for i in range(n.size)]
        one_e = [exact(np.array([n[i]]), np.array([k[i]]), float(lo[i]), float(aa[i]), float(bb[i]),
                       float(sig[i]))[0] for i in range(n.size)]
        assert np.array_equal(_bits(many_b), _bits(one_b))
        assert np.array_equal(_bits(many_e), _bits(one_e))


def test_square_is_python_power():
    x = np.random.default_rng(3).standard_normal(5000) * 1e3
    assert np.array_equal(_bits(sa._pow2(x)), _bits([float(v) ** 2 for v in x]))
    assert sa._pow2(1.5) == 2.25


def test_threshold_integrals_split_equal_elementwise():
    y = np.concatenate([np.random.default_rng(4).random(200) * 6, [0.0, 2.0, np.nextafter(2.0, 0.0)]])
    for fn in (tb.j_abs, tb.j_sq):
        many = fn(y)
        assert np.array_equal(_bits(many), _bits([fn(np.asarray(v)) for v in y]))
        assert np.array_equal(_bits(fn(y.reshape(-1, 1))[:, 0]), _bits(many))

