"""The χ²–TV contraction c_ε = 2(e^ε-1)²/(e^ε+1) of ε-LDP channels, checked by exact computation."""
import itertools
import math

import numpy as np
import pytest
import sympy as sp

from boundcalc.core import symbolic as S
from boundcalc.methods import chi2_contraction as C
from boundcalc.methods.chi2_contraction import chi2_factor_float
from boundcalc.methods.ldp import privacy_level, random_channel, tv_private_expr
from scipy.optimize import minimize

from finite_channels import ldp_channel  # tests/finite_channels.py


def chi2(p, q):
    return float(np.sum((p - q) ** 2 / q))


def tv(p, q):
    return 0.5 * float(np.abs(p - q).sum())


def test_factor_identities():
    e = sp.Symbol("e", positive=True)
    c = C.chi2_factor(e)
    assert sp.simplify(c.rewrite(sp.exp) - 2 * (sp.exp(e) - 1) ** 2 / (sp.exp(e) + 1)) == 0
    assert sp.simplify((c.rewrite(sp.exp) - 2 * (sp.exp(e) - 1) * sp.tanh(e / 2)).rewrite(sp.exp)) == 0
    for x in (1e-8, 0.3, 2.0, 30.0):
        assert math.isclose(C.chi2_factor_float(x), 2 * math.expm1(x) ** 2 / (math.exp(x) + 1), rel_tol=1e-12)
        # never larger than the (e^ε-1)² of the plain χ² argument
        assert C.chi2_factor_float(x) <= math.expm1(x) ** 2


@pytest.mark.parametrize("extreme", [False, True])
def test_random_channels_never_exceed_the_bound(extreme):
    rng = np.random.default_rng(11 if extreme else 7)
    worst = 0.0
    for _ in range(4000):
        nx, nz = int(rng.integers(2, 5)), int(rng.integers(2, 6))
        Q, eps = random_channel(nx, nz, rng, spread=float(rng.uniform(0.01, 10)), extreme=extreme)
        P0 = rng.dirichlet(np.full(nx, 0.3))
        P1 = rng.dirichlet(np.full(nx, 0.3)) if rng.random() < 0.5 else np.eye(nx)[rng.integers(nx)]
        t = tv(P0, P1)
        if t < 1e-9:
            continue
        ratio = chi2(P0 @ Q, P1 @ Q) / (C.chi2_factor_float(eps) * t * t)
        worst = max(worst, ratio)
        assert ratio <= 1 + 1e-9
    assert worst > 0.5  # the search reaches near the bound (the lemma is not vacuously loose)


def test_the_sinh_constant_is_false_and_the_lemma_holds_on_the_counterexample():
    """A three-input channel (found by numerical search) whose χ² exceeds 4 sinh²(ε/2) TV²,
    the value binary randomized response attains: that smaller constant is not valid."""
    K = np.array([[0.03450038, 0.01505229, 0.0018471, 0.94860022],
                  [0.93891518, 0.02266762, 0.00365482, 0.03476239],
                  [0.60711341, 0.35314655, 0.0036468, 0.03609323]])
    K = K / K.sum(axis=1, keepdims=True)
    P = np.array([0.01873544, 0.98126449, 0.00000007])
    Q = np.array([0.00000354, 0.98165931, 0.01833715])
    P, Q = P / P.sum(), Q / Q.sum()
    eps = privacy_level(K)
    t = tv(P, Q)
    value = chi2(P @ K, Q @ K)
    assert value > 1.05 * 4 * math.sinh(eps / 2) ** 2 * t * t
    assert value <= C.chi2_factor_float(eps) * t * t


def _sequential_marginal(P, K1, K2):
    """Law of (Z1, Z2) when X1, X2 ~ P iid, Z1 ~ K1(.|X1), Z2 ~ K2[z1](.|X2) (sequential interaction)."""
    m1 = P @ K1
    return np.array([[m1[a] * (P @ K2[a])[b] for b in range(K2[a].shape[1])] for a in range(len(m1))])


def test_two_samples_with_sequential_interaction():
    rng = np.random.default_rng(5)
    for _ in range(400):
        nx, nz = int(rng.integers(2, 4)), int(rng.integers(2, 4))
        K1, e1 = random_channel(nx, nz, rng, spread=float(rng.uniform(0.1, 4)), extreme=bool(rng.random() < 0.5))
        K2 = []
        eps = e1
        for _a in range(nz):
            Kz, ez = random_channel(nx, nz, rng, spread=float(rng.uniform(0.1, 4)))
            K2.append(Kz)
            eps = max(eps, ez)
        P0, P1 = rng.dirichlet(np.ones(nx)), rng.dirichlet(np.ones(nx))
        M0, M1 = _sequential_marginal(P0, K1, K2).ravel(), _sequential_marginal(P1, K1, K2).ravel()
        kl = float(np.sum(M0 * np.log(M0 / M1)))
        assert kl <= C.kl_bound(eps, tv(P0, P1), n=2) * (1 + 1e-9)
        assert tv(M0, M1) <= C.private_tv_bound(eps, tv(P0, P1), n=2) + 1e-12


def test_private_le_cam_expression_bounds_exact_product_tv():
    rng = np.random.default_rng(9)
    n_s, e_s, t_s = sp.symbols("n e t", positive=True)
    f = S.numpy_lambdify([n_s, e_s, t_s], tv_private_expr(n_s, e_s, t_s))
    for _ in range(150):
        nx, nz = 2, int(rng.integers(2, 4))
        K, eps = random_channel(nx, nz, rng, spread=float(rng.uniform(0.1, 5)), extreme=True)
        P0, P1 = rng.dirichlet(np.ones(nx)), rng.dirichlet(np.ones(nx))
        m0, m1 = P0 @ K, P1 @ K
        for n in (1, 2, 3):
            p0 = np.array([np.prod(z) for z in itertools.product(m0, repeat=n)])
            p1 = np.array([np.prod(z) for z in itertools.product(m1, repeat=n)])
            assert tv(p0, p1) <= float(f(n, eps, tv(P0, P1))) + 1e-12


def test_chi2_tv_contraction_adversarial():
    """χ²(pQ, p'Q) <= c_ε TV(p, p')² against channels optimised (Nelder–Mead) to maximise the ratio."""
    rng = np.random.default_rng(1)
    worst = 0.0
    for k, m, eps in [(2, 2, 0.5), (3, 3, 3.0), (2, 3, 8.0)]:
        def neg(x):
            q, e = ldp_channel(x[:k * m].reshape(k, m), eps)
            p = np.exp(np.clip(x[k * m:k * m + k], -30, 30)); p /= p.sum()
            pp = np.exp(np.clip(x[k * m + k:], -30, 30)); pp /= pp.sum()
            tv = 0.5 * np.abs(p - pp).sum()
            if tv < 1e-4 or e < 1e-6:
                return 0.0
            a, b = p @ q, pp @ q
            return -float(np.sum((a - b) ** 2 / b)) / (chi2_factor_float(e) * tv ** 2)

        for _ in range(3):
            r = minimize(neg, rng.normal(size=k * m + 2 * k) * 3, method="Nelder-Mead", options={"maxiter": 4000})
            worst = max(worst, -r.fun)
    assert worst <= 1 + 1e-9
