"""Finite-channel utilities (tests/finite_channels.py): exact quantities checked against brute force and
closed forms computed independently."""
import math

import numpy as np
import pytest

import finite_channels as ch  # tests/finite_channels.py: finite channels for brute-force tests


def test_subset_matrix_enumerates_all_sets():
    S = ch.subset_matrix(4)
    assert S.shape == (16, 4)
    assert len({tuple(r) for r in S}) == 16
    assert S[0].sum() == 0


def test_random_pairs_are_probability_vectors():
    rng = np.random.default_rng(0)
    P, R = ch.random_pairs(rng, 3000, 5)
    assert P.shape == R.shape == (3000, 5)
    assert np.allclose(P.sum(-1), 1) and np.allclose(R.sum(-1), 1)
    assert (P >= 0).all() and (R >= 0).all()
    e = ch.eps_exact(P, R)
    assert np.isinf(e).any() and np.isfinite(e).any()  # both regimes are present
    P2, R2 = ch.random_pairs(rng, 500, 4, full_support=True)
    assert np.isfinite(ch.eps_exact(P2, R2)).all()


def test_delta_of_eps_is_sup_over_sets():
    """δ(ε) = Σ (P − e^ε R)_+ equals the brute-force sup over all sets A of P(A) − e^ε R(A) (both orders)."""
    rng = np.random.default_rng(1)
    P, R = ch.random_pairs(rng, 2000, 5)
    e = rng.exponential(1.0, size=len(P))
    S = ch.subset_matrix(5)
    PA, RA = P @ S.T, R @ S.T
    f = np.exp(e)[:, None]
    brute = np.maximum((PA - f * RA).max(-1), (RA - f * PA).max(-1))
    assert np.allclose(ch.delta_of_eps(P, R, e), brute, atol=1e-12)


def test_eps_exact_is_smallest_pure_eps():
    rng = np.random.default_rng(2)
    P, R = ch.random_pairs(rng, 2000, 4)
    e = ch.eps_exact(P, R)
    fin = np.isfinite(e)
    # at ε(P,R) the pair is ε-DP (δ = 0); slightly below it, it is not
    assert np.all(ch.delta_of_eps(P[fin], R[fin], e[fin]) < 1e-12)
    tight = e[fin] > 1e-6
    assert np.all(ch.delta_of_eps(P[fin][tight], R[fin][tight], e[fin][tight] * (1 - 1e-6)) > 0)
    # infinite ε: a point with mass under one and none under the other; δ(ε) > 0 for every ε
    assert np.all(ch.delta_of_eps(P[~fin], R[~fin], 50.0) > 0)


def test_tv_kl_and_le_cam():
    rng = np.random.default_rng(3)
    P, R = ch.random_pairs(rng, 2000, 4)
    t1, t2 = ch.test_errors(P, R)
    # Le Cam: min over tests of type I + type II = 1 − TV (deterministic tests suffice)
    assert np.allclose((t1 + t2).min(-1), 1 - ch.tv(P, R), atol=1e-12)
    assert np.allclose(ch.min_error_sum(P, R), 1 - ch.tv(P, R))
    # KL against an independent computation
    from scipy.stats import entropy

    i = 7
    if (R[i][P[i] > 0] > 0).all():
        assert math.isclose(ch.kl(P[i], R[i]), entropy(P[i], R[i]), rel_tol=1e-10, abs_tol=1e-14)
    assert np.isinf(ch.kl([0.5, 0.5], [1.0, 0.0]))
    assert ch.kl([1.0, 0.0], [0.5, 0.5]) == pytest.approx(math.log(2))


def test_randomized_response_closed_forms():
    for e in (0.1, 1.0, 3.0):
        rr = ch.randomized_response(e, 2)
        assert rr.eps() == pytest.approx(e)
        assert rr.tv() == pytest.approx((math.exp(e) - 1) / (math.exp(e) + 1))
        assert rr.kl() == pytest.approx(e * (math.exp(e) - 1) / (math.exp(e) + 1))
        rr3 = ch.randomized_response(e, 3)
        assert rr3.tv() == pytest.approx((math.exp(e) - 1) / (math.exp(e) + 2))


def test_release_one_at_random_example():
    """Barber–Duchi Example 2: TV = 1/n and δ(ε) = 1/n for every ε, but ε = KL = ∞."""
    for n in (2, 3, 4):
        c = ch.release_one_at_random(n, 2)
        assert c.tv() == pytest.approx(1 / n)
        for e in (0.0, 0.5, 5.0, 50.0):
            assert c.delta(e) == pytest.approx(1 / n)
        assert math.isinf(c.eps())
        assert math.isinf(c.kl())


def test_channel_validation_and_hamming_pairs():
    with pytest.raises(ValueError):
        ch.Channel(np.array([[0.5, 0.6]]), [[0, 0]])
    pairs = ch.hamming_pairs(3, 1)
    assert len(pairs) == 12  # 8 vertices × 3 neighbours / 2
    assert len(ch.hamming_pairs(3, 2)) == 12 and len(ch.hamming_pairs(3, 3)) == 4


def test_local_product_channel_eps():
    R = np.array([[0.7, 0.3], [0.4, 0.6]])
    e_loc = ch.local_eps(R)
    assert e_loc == pytest.approx(max(abs(math.log(0.7 / 0.4)), abs(math.log(0.3 / 0.6))))
    c = ch.local_product_channel(R, 2)
    assert c.Q.shape == (4, 4)
    assert c.eps() == pytest.approx(e_loc)


def test_chtp_min_error_sum_whole_space_is_le_cam():
    """With γ ≈ 1 (rounding) the only admissible conditioning set is the whole output space."""
    rng = np.random.default_rng(4)
    P, R = ch.random_pairs(rng, 500, 4, full_support=True)
    assert np.allclose(ch.chtp_min_error_sum(P, R, 1 - 1e-9), 1 - ch.tv(P, R), atol=1e-12)
    # smaller γ admits more sets: the conditional error can only go down
    assert np.all(ch.chtp_min_error_sum(P, R, 0.3) <= ch.chtp_min_error_sum(P, R, 1.0) + 1e-12)
