"""Samplers of the discrete ε-LDP mechanisms (boundcalc/mechanisms/discrete.py).

k-RR is simulated from sufficient statistics (input counts, kept ~ Binomial, the rest ~ Multinomial over
the other symbols) and subset selection with one ``np.partition``, in bounded blocks of users. These
tests hold them to the per-user reference samplers (written out below, as the module had them) and
to the exact first and second moments computed from the finite channel (independently of the
closed-form risk formulas).
"""
import math

import numpy as np
import pytest
from scipy import stats

from boundcalc.mechanisms import discrete as DM


def _krr_reference(theta, n, eps, reps, rng):
    """Per-user k-RR: each user keeps its symbol w.p. e^ε/(e^ε+d-1), else a uniform other symbol."""
    d = len(theta)
    x = rng.choice(d, size=(reps, n), p=theta)
    keep = rng.random((reps, n)) < math.exp(eps) / (math.exp(eps) + d - 1)
    other = (x + rng.integers(1, d, size=(reps, n))) % d
    z = np.where(keep, x, other)
    return np.stack([np.bincount(row, minlength=d) for row in z])


def _subset_reference(theta, n, eps, s, reps, rng):
    """Per-user subset selection with the double argsort (ranks of i.i.d. keys)."""
    d = len(theta)
    ps = s * math.exp(eps) / (s * math.exp(eps) + d - s)
    x = rng.choice(d, size=(reps, n), p=theta)
    inc = rng.random((reps, n)) < ps
    keys = rng.random((reps, n, d))
    np.put_along_axis(keys, x[..., None], np.inf, axis=2)
    rank = np.argsort(np.argsort(keys, axis=2), axis=2)
    member = rank < np.where(inc, s - 1, s)[..., None]
    np.put_along_axis(member, x[..., None], inc[..., None], axis=2)
    return member.sum(axis=1)


def _same_law(a, b, alpha=1e-3):
    """Chi-square homogeneity test of two samples of a discrete statistic (cells with few counts
    pooled); True when equality of the two laws is not rejected at level alpha."""
    vals = np.union1d(a, b)
    ca = np.array([np.sum(a == v) for v in vals])
    cb = np.array([np.sum(b == v) for v in vals])
    # pool sparse cells into their neighbours so that every expected count is >= 5
    cells, cur_a, cur_b = [], 0, 0
    for x, y in zip(ca, cb):
        cur_a, cur_b = cur_a + x, cur_b + y
        if cur_a + cur_b >= 20:
            cells.append((cur_a, cur_b))
            cur_a = cur_b = 0
    if cur_a + cur_b:
        if cells:
            la, lb = cells.pop()
            cells.append((la + cur_a, lb + cur_b))
        else:
            cells.append((cur_a, cur_b))
    table = np.array(cells).T
    if table.shape[1] < 2:
        return True
    p = stats.chi2_contingency(table)[1]
    return p > alpha


THETA = np.array([0.4, 0.3, 0.2, 0.1])


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_krr_counts_same_law_as_per_user(eps):
    n, reps = 60, 3000
    new = DM.krr_counts(THETA, n, eps, reps, np.random.default_rng(1), per_user=False)
    old = _krr_reference(THETA, n, eps, reps, np.random.default_rng(2))
    assert new.shape == old.shape and np.all(new.sum(axis=1) == n)
    for j in range(len(THETA)):
        assert _same_law(new[:, j], old[:, j]), j
        assert stats.ks_2samp(new[:, j], old[:, j]).pvalue > 1e-4
    # a joint statistic too (the counts are dependent)
    assert _same_law(new[:, 0] - new[:, 3], old[:, 0] - old[:, 3])


def test_krr_chunked_per_user_same_law():
    n, reps = 60, 3000
    a = DM.krr_counts(THETA, n, 1.0, reps, np.random.default_rng(3), per_user=True)
    b = DM.krr_counts(THETA, n, 1.0, reps, np.random.default_rng(4), per_user=False)
    for j in range(len(THETA)):
        assert _same_law(a[:, j], b[:, j]), j


def test_law_test_has_power():
    """The homogeneity test rejects a k-RR with a slightly wrong keep probability (ε off by 0.3)."""
    n, reps = 60, 3000
    new = DM.krr_counts(THETA, n, 1.0, reps, np.random.default_rng(1))
    wrong = _krr_reference(THETA, n, 1.3, reps, np.random.default_rng(2))
    assert not _same_law(new[:, 0], wrong[:, 0])


@pytest.mark.parametrize("per_user,s", [(True, 2), (False, 2), (False, 1), (False, 5)])
def test_subset_same_law_as_argsort(per_user, s):
    """Both samplers (per user with one partition; sufficient statistics over the enumerated subsets of the
    other symbols) against the per-user double-argsort reference."""
    d, eps, n, reps = 6, 1.0, 40, 3000
    theta = np.array([0.3, 0.25, 0.2, 0.1, 0.1, 0.05])
    new = DM.subset_counts(theta, n, eps, s, reps, np.random.default_rng(5), per_user=per_user)
    old = _subset_reference(theta, n, eps, s, reps, np.random.default_rng(6))
    assert np.all(new.sum(axis=1) == n * s) and np.all(old.sum(axis=1) == n * s)
    for j in range(d):
        assert _same_law(new[:, j], old[:, j]), j
    assert _same_law(new[:, 0] - new[:, 5], old[:, 0] - old[:, 5])  # a joint statistic (counts are dependent)


def test_subset_enumerated_sampler_has_power():
    """The homogeneity test rejects the enumerated sampler at a wrong ε (1.4 instead of 1)."""
    theta = np.array([0.3, 0.25, 0.2, 0.1, 0.1, 0.05])
    new = DM.subset_counts(theta, 40, 1.0, 2, 3000, np.random.default_rng(5), per_user=False)
    wrong = _subset_reference(theta, 40, 1.4, 2, 3000, np.random.default_rng(6))
    assert not _same_law(new[:, 0], wrong[:, 0])


@pytest.mark.parametrize("shape,mvals", [((50, 7), (1, 2)), ((30, 12), (3, 4)), ((20, 5), (0, 1)),
                                         ((10, 9), (8, 9))])
def test_partition_membership_equals_double_argsort(shape, mvals):
    rng = np.random.default_rng(7)
    keys = rng.random(shape)
    m = rng.choice(mvals, size=shape[0])
    rank = np.argsort(np.argsort(keys, axis=-1), axis=-1)
    assert np.array_equal(DM.smallest_members(keys, m), rank < m[:, None])


def test_subset_membership_sizes():
    """Each user's subset has exactly s members: the released counts sum to n s."""
    theta = np.full(7, 1 / 7)
    for per_user in (True, False):
        T = DM.subset_counts(theta, 333, 0.7, 3, 5, np.random.default_rng(8), per_user=per_user)
        assert np.all(T.sum(axis=1) == 333 * 3)


def test_blocks_bound_memory(monkeypatch):
    """With a tiny block budget the simulation runs in many blocks and keeps the same law."""
    monkeypatch.setattr(DM, "BLOCK_CELLS", 64)
    blocks = list(DM._user_blocks(1000, 3, 6))
    assert all(m * (r.stop - r.start) * 6 <= 64 for r, m in blocks)
    assert sum(m * (r.stop - r.start) for r, m in blocks) == 3000
    theta = np.full(5, 0.2)
    T = DM.subset_counts(theta, 200, 1.0, 2, 400, np.random.default_rng(9), per_user=True)
    assert np.all(T.sum(axis=1) == 400)
    ref = _subset_reference(theta, 200, 1.0, 2, 400, np.random.default_rng(10))
    assert _same_law(T[:, 0], ref[:, 0])


@pytest.mark.parametrize("mech,d,s,eps", [("krr", 5, None, 1.0), ("krr", 3, None, 3.0), ("subset", 6, 2, 1.0),
                                          ("subset", 5, 1, 0.5)])
def test_estimate_moments_match_exact(mech, d, s, eps):
    """Mean and covariance of the estimates vs the exact ones from the finite channel:
    E p̂ = θ and Cov p̂ = (1/n) Cov(a(Z)) with Z ~ θ Q."""
    rng = np.random.default_rng(11)
    theta = rng.dirichlet(np.ones(d))
    n, reps = 80, 6000
    est = DM.estimate(mech, theta, n, eps, reps, rng, s=s)
    Q, A = DM.channel(mech, d, eps, s)
    mz = theta @ Q
    mean = mz @ A
    cov = (A.T * mz) @ A - np.outer(mean, mean)
    assert np.allclose(mean, theta, atol=1e-12)  # the estimator is unbiased
    var = np.diag(cov) / n
    se_mean = np.sqrt(var / reps)
    assert np.all(np.abs(est.mean(axis=0) - theta) < 5 * se_mean)
    # sample variance of each coordinate: relative standard error about sqrt(2/reps) (plus kurtosis)
    sv = est.var(axis=0, ddof=1)
    assert np.all(np.abs(sv / var - 1) < 6 * np.sqrt(2 / reps) + 0.02), sv / var
    # the total risk E||p̂-θ||² against the exact trace
    risk = float(np.mean(np.sum((est - theta) ** 2, axis=1)))
    exact, _ = DM.exact_risk_linear(Q, A, theta, n)
    assert abs(risk / exact - 1) < 0.06


def test_sampling_subsets_equal_double_argsort():
    """coordinate_subsampling and truncate_ones pick their subsets with one partition: the same
    subsets (same draws, same seed) as ranks from a double argsort."""
    from boundcalc.mechanisms import sampling as SM

    for seed in range(3):
        v = np.random.default_rng(seed).uniform(-1, 1, (200, 7))
        for k in (1, 3, 7):
            rng = np.random.default_rng(seed)
            rank = np.argsort(np.argsort(rng.random((200, 7)), axis=1), axis=1)
            c = float(SM.coth_half_np(1.0 / k))
            y = np.where(rng.random((200, 7)) < 0.5 + v / (2 * c), c, -c)
            ref = np.where(rank < k, (7 / k) * y, 0.0)
            assert np.array_equal(SM.coordinate_subsampling(v, 1.0, 1.0, np.random.default_rng(seed), k), ref)
        X = np.random.default_rng(seed).random((300, 12)) < 0.4
        for K in (1, 2, 5):
            rng = np.random.default_rng(seed)
            ref = X.copy()
            over = np.flatnonzero(ref.sum(axis=1) > K)
            sub = ref[over]
            keys = np.where(sub, rng.random(sub.shape), np.inf)
            ref[over] = sub & (np.argsort(np.argsort(keys, axis=1), axis=1) < K)
            out = SM.truncate_ones(X, K, np.random.default_rng(seed))
            assert np.array_equal(out, ref) and np.all(out.sum(axis=1) <= K)
