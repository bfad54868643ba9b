"""Relations between privacy definitions (boundcalc.privacy_relations.relations), checked three ways:

1. the values the issue asks for, computed independently from math.e;
2. each relation's sympy expression against its paper form (symbolic identity) and against its
   numerically stable implementation (lambdified with mpmath, over wide ranges);
3. each implication by brute force on thousands of random finite channels: the exact ε, δ(ε), TV, KL
   and test errors of the channel (tests/finite_channels.py) must satisfy the implied bound.
"""
import json
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import finite_channels as ch  # tests/finite_channels.py: finite channels for brute-force tests
from boundcalc.privacy_relations import relations as rel
from boundcalc.core.errors import InputError

E = math.e
TOL = 1e-9


# ------------------------------------------------------------------ the required values

def test_required_values():
    r = rel.convert("pure", "tv", eps=1)
    assert r.holds and r.value == pytest.approx((E - 1) / (E + 1), rel=1e-12)
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["value"] == pytest.approx((E - 1) / (E + 1), rel=1e-12)
    assert d["path"] == ["pure", "tv"] and d["holds"] is True
    r = rel.convert("approx", "tv", eps=1, delta=0.01)
    assert r.value == pytest.approx((E - 1 + 0.02) / (E + 1), rel=1e-12)
    r = rel.convert("kl", "tv", eps=0.5)
    assert r.value == pytest.approx(0.5, rel=1e-12)  # Pinsker: sqrt(0.5/2)


def test_relation_table_is_json_safe():
    table = rel.relation_table()
    assert len(table) == len(rel.RELATIONS)
    json.dumps(table, allow_nan=False)
    assert all(row["status"] in ("paper", "derived", "definition") and row["source"] for row in table)


def test_dict_shape_and_text():
    d = rel.convert("approx", "tv", eps=1, delta=1e-6).to_dict()
    for key in ("from", "to", "params", "value", "delta", "holds", "expr", "latex", "path", "source",
                "derivation", "status", "reason", "testing", "candidates", "tight"):
        assert key in d
    assert d["status"] in ("paper", "derived")
    for a, b in [("pure", "pure"), ("none", "tv"), ("tv", "pure"), ("kl", "kl"), ("pure", "none")]:
        assert rel.convert(a, b).to_dict()["status"] in ("paper", "derived")
    assert d["testing"]["min_error_sum"] == pytest.approx(2 * (1 - 1e-6) / (1 + E))
    text = rel.convert("approx", "tv", eps=1, delta=1e-6).to_text()
    assert "0.4621" in text and 3 <= len(text.splitlines()) <= 12


# ------------------------------------------------------------------ symbolic and numeric forms

def test_relation_expressions_match_paper_forms():
    for r in rel.RELATIONS:
        for k, paper in r.paper_form.items():
            ours = r.out[k]
            if isinstance(ours, sp.Min):  # the cap Min(1, ·) is not part of the paper's formula
                ours = [a for a in ours.args if a != 1][0]
            diff = sp.simplify((ours - paper).rewrite(sp.exp))
            assert diff == 0, (r.key, diff)


_GRID_E = [1e-6, 1e-3, 0.1, 0.5, 1.0, 3.0, 10.0, 50.0, 200.0]
_GRID_D = [1e-300, 1e-12, 1e-6, 0.01, 0.3, 0.9]
_GRID_A = [1e-8, 1e-3, 0.1, 0.5, 0.99, 2.0, 30.0, 1e4]


@pytest.mark.parametrize("r", rel.RELATIONS, ids=lambda r: r.key)
def test_numeric_matches_lambdified_expression(r):
    """The stable numpy form of each relation equals its sympy expression evaluated with mpmath."""
    syms = [rel.eps, rel.delta, rel.alpha, rel.m]
    fns = {k: sp.lambdify(syms, e, "mpmath") for k, e in r.out.items()}
    points = []
    if r.src == "approx":
        points = [{"eps": e, "delta": d} for e in _GRID_E for d in _GRID_D]
    elif r.src in ("tv",):
        points = [{"alpha": a} for a in _GRID_A if a < 1]
    elif r.src == "kl":
        points = [{"alpha": a} for a in _GRID_A]
    else:
        points = [{"eps": e} for e in _GRID_E]
    mpmath.mp.dps = 50
    try:
        for pt in points:
            for mm in ([1] if r.kind == "pair" else [1, 2, 7, 1000]):
                got = r.fn(pt, mm)
                for k, f in fns.items():
                    want = f(mpmath.mpf(pt.get("eps", 1)), mpmath.mpf(pt.get("delta", 0.5)),
                             mpmath.mpf(pt.get("alpha", 0.5)), mm)
                    g = float(np.asarray(got[k]))
                    assert math.isfinite(g), (r.key, pt, k)
                    assert g == pytest.approx(float(want), rel=1e-9, abs=1e-300), (r.key, pt, mm, k)
    finally:
        mpmath.mp.dps = 15


# ------------------------------------------------------------------ brute force on random channels

N = 10000


@pytest.fixture(scope="module")
def pairs():
    rng = np.random.default_rng(20261121)
    P, R = ch.random_pairs(rng, N, 5)
    return P, R, ch.eps_exact(P, R), ch.tv(P, R), ch.kl_sym_max(P, R)


def _fn(key, **state):
    r = rel.RELATIONS_BY_KEY[key]
    return {k: np.asarray(v, float) for k, v in r.fn(state, 1).items()}


def test_bruteforce_pure_to_tv_kl_testing(pairs):
    P, R, e, t, k = pairs
    fin = np.isfinite(e)
    assert fin.sum() > N // 2
    e, t, k = e[fin], t[fin], k[fin]
    assert np.all(t <= _fn("pure_tv", eps=e)["alpha"] + TOL)
    assert np.all(k <= _fn("pure_kl", eps=e)["alpha"] + TOL)
    t1, t2 = ch.test_errors(P[fin], R[fin])
    assert np.all((t1 + t2).min(-1) >= _fn("pure_testing", eps=e)["error_sum"] - TOL)
    # tightness: the extremal (randomized-response-like) pairs attain TV = tanh(ε/2) and KL = ε tanh(ε/2)
    assert np.max(t / np.maximum(np.tanh(e / 2), 1e-300)) == pytest.approx(1.0, abs=1e-9)
    assert np.max(k / np.maximum(e * np.tanh(e / 2), 1e-300)) == pytest.approx(1.0, abs=1e-9)


def test_bruteforce_approx_to_tv_and_testing(pairs):
    """Choose ε, compute the exact δ(ε) of each pair: its TV and every test obey Prop. 1."""
    P, R, _, t, _ = pairs
    rng = np.random.default_rng(5)
    for _ in range(3):
        e = rng.exponential(1.0, size=len(P))
        d = ch.delta_of_eps(P, R, e)
        assert np.all(t <= _fn("approx_tv", eps=e, delta=d)["alpha"] + TOL)
        t1, t2 = ch.test_errors(P, R)
        f = np.exp(e)[:, None]
        # Prop. 1 (2), both directions, for every test — and with equality for the best test (iff)
        lhs1 = (t1 + f * t2).min(-1)
        lhs2 = (t2 + f * t1).min(-1)
        assert np.all(np.minimum(lhs1, lhs2) >= 1 - d - TOL)
        assert np.allclose(np.minimum(lhs1, lhs2), 1 - d, atol=1e-9)
        assert np.all((t1 + t2).min(-1) >= _fn("approx_testing", eps=e, delta=d)["error_sum"] - TOL)


def test_approx_to_tv_is_tight():
    """The 4-point pair (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0) and its mirror are (ε,δ)-DP with TV
    exactly (e^ε − 1 + 2δ)/(e^ε + 1)."""
    for e, d in [(0.5, 0.01), (1.0, 0.2), (3.0, 1e-6)]:
        a, b = (1 - d) * math.exp(e) / (1 + math.exp(e)), (1 - d) / (1 + math.exp(e))
        P, R = np.array([d, a, b, 0.0]), np.array([0.0, b, a, d])
        assert float(ch.delta_of_eps(P, R, e)) == pytest.approx(d)
        assert float(ch.tv(P, R)) == pytest.approx((math.exp(e) - 1 + 2 * d) / (math.exp(e) + 1))


def test_bruteforce_kl_to_tv(pairs):
    P, R, _, t, k = pairs
    fin = np.isfinite(k)
    assert np.all(t[fin] <= _fn("kl_tv_pinsker", alpha=k[fin])["alpha"] + TOL)
    assert np.all(t[fin] <= _fn("kl_tv_bh", alpha=k[fin])["alpha"] + TOL)
    assert np.all(1 - t[fin] >= _fn("kl_testing_bh", alpha=k[fin])["error_sum"] - TOL)


def test_bruteforce_tv_to_approx(pairs):
    P, R, _, t, _ = pairs
    assert np.allclose(ch.delta_of_eps(P, R, 0.0), t, atol=1e-12)  # (0, TV)-DP exactly
    for e in (0.1, 1.0, 10.0):
        assert np.all(ch.delta_of_eps(P, R, e) <= t + TOL)


def test_bruteforce_convert_api(pairs):
    """The public convert() on exact channel levels: every implied level is respected."""
    P, R, e, t, k = pairs
    rng = np.random.default_rng(6)
    idx = rng.choice(len(P), 150, replace=False)
    for i in idx:
        if np.isfinite(e[i]) and e[i] > 1e-9:
            assert t[i] <= rel.convert("pure", "tv", eps=e[i]).value + TOL
            assert k[i] <= rel.convert("pure", "kl", eps=e[i]).value + TOL
            assert 1 - t[i] >= rel.testing_error_bound("pure", e[i]) - TOL
        if np.isfinite(k[i]) and k[i] > 1e-9:
            assert t[i] <= rel.convert("kl", "tv", eps=k[i]).value + TOL
        eps_i = float(rng.uniform(0.05, 3))
        d = float(ch.delta_of_eps(P[i], R[i], eps_i))
        if 1e-12 < d < 1:
            assert t[i] <= rel.convert("approx", "tv", eps=eps_i, delta=d).value + TOL
        if 1e-12 < t[i] < 1:
            res = rel.convert("tv", "approx", eps=t[i])
            assert float(ch.delta_of_eps(P[i], R[i], res.value)) <= res.delta + TOL


def test_bruteforce_type2_tradeoff(pairs):
    """type2_lower_bound: every test of every (ε, δ(ε)) pair lies above the trade-off curve."""
    P, R, _, _, _ = pairs
    rng = np.random.default_rng(7)
    idx = rng.choice(len(P), 100, replace=False)
    t1, t2 = ch.test_errors(P[idx], R[idx])
    for j, i in enumerate(idx):
        e = float(rng.uniform(0.1, 2))
        d = float(ch.delta_of_eps(P[i], R[i], e))
        if not 1e-12 < d < 1:
            continue
        for a, b in zip(t1[j], t2[j]):
            assert b >= rel.type2_lower_bound("approx", e, d, min(max(a, 0.0), 1.0)) - TOL


def test_bruteforce_group_privacy():
    """Random channels on {0,1}^3 (8 samples, 4 outputs): samples at Hamming distance m obey the group
    forms computed from the channel's exact neighbour levels."""
    rng = np.random.default_rng(8)
    B = 400
    Q = ch.random_simplex(rng, B * 8, 4, 2.0).reshape(B, 8, 4)
    nb = ch.hamming_pairs(3, 1)
    eps1 = ch.eps_exact(Q[:, nb[:, 0]], Q[:, nb[:, 1]]).max(-1)
    tv1 = ch.tv(Q[:, nb[:, 0]], Q[:, nb[:, 1]]).max(-1)
    e = rng.uniform(0.05, 1.0, size=B)
    d1 = ch.delta_of_eps(Q[:, nb[:, 0]], Q[:, nb[:, 1]], e[:, None]).max(-1)
    for mm in (2, 3):
        pm = ch.hamming_pairs(3, mm)
        A, C = Q[:, pm[:, 0]], Q[:, pm[:, 1]]
        assert np.all(ch.eps_exact(A, C).max(-1) <= _g("group_pure", mm, eps=eps1)["eps"] + TOL)
        gd = _g("group_approx", mm, eps=e, delta=d1)
        assert np.all(ch.delta_of_eps(A, C, gd["eps"][:, None]).max(-1) <= gd["delta"] + TOL)
        assert np.all(ch.tv(A, C).max(-1) <= _g("group_tv", mm, alpha=tv1)["alpha"] + TOL)
        # the group testing bound (convert's chain) at a few channels
        for b in range(0, B, 80):
            bound = rel.testing_error_bound("pure", eps1[b], group=mm)
            assert 1 - ch.tv(A[b], C[b]).max() >= bound - TOL


def _g(key, mm, **state):
    return {k: np.asarray(v, float) for k, v in rel.RELATIONS_BY_KEY[key].fn(state, mm).items()}


def test_group_tv_and_pure_are_tight():
    c = ch.release_one_at_random(4, 2)
    far = np.array([[0, 3]])  # (0,0,0,0) vs (0,0,1,1): two records changed
    assert c.tv(far) == pytest.approx(2 * c.tv())
    # geometric-mechanism-like channel on a count: ratio e^{mε} between counts m apart
    e = 0.7
    Q = np.exp(-e * np.abs(np.arange(4)[:, None] - np.arange(-30, 34)[None, :]))
    Q /= Q.sum(1, keepdims=True)
    cc = ch.Channel(Q, [[0, 1], [1, 2], [2, 3]])
    assert cc.eps() == pytest.approx(e, rel=1e-6)
    assert cc.eps([[0, 3]]) == pytest.approx(3 * e, rel=1e-6)


def test_bruteforce_local_to_central():
    """Non-interactive and sequentially interactive local protocols: the central (replace-one) ε of the
    joint channel is at most the local ε (equal for product channels)."""
    rng = np.random.default_rng(9)
    for _ in range(60):
        kx, kz = rng.integers(2, 4, size=2)
        Rl = ch.random_simplex(rng, kx, kz, 1.0)
        c = ch.local_product_channel(Rl, 2)
        assert c.eps() == pytest.approx(ch.local_eps(Rl), rel=1e-9)
        cs, e_loc = ch.sequential_local_channel(rng, 2, 2, 3)
        assert cs.eps() <= e_loc + TOL
        assert rel.convert("local", "pure", eps=max(e_loc, 1e-9)).value >= cs.eps() - TOL


def test_bruteforce_smooth_to_pure():
    """Samples in {0, 1/2, 1}^2 with ρ(a,b) = |a−b|: the smooth level (max log-ratio / ρ_n) bounds the
    pure level over neighbours."""
    rng = np.random.default_rng(10)
    vals = np.array([0.0, 0.5, 1.0])
    X = np.array([(a, b) for a in vals for b in vals])
    rho = np.abs(X[:, None, :] - X[None, :, :]).sum(-1)
    ham = (X[:, None, :] != X[None, :, :]).sum(-1)
    i, j = np.nonzero(np.triu(rho > 0))
    nb = np.nonzero(np.triu(ham == 1))
    for _ in range(300):
        Q = ch.random_simplex(rng, 9, 4, 3.0)
        smooth = (ch.eps_exact(Q[i], Q[j]) / rho[i, j]).max()
        pure = ch.eps_exact(Q[nb[0]], Q[nb[1]]).max()
        assert pure <= _fn("smooth_pure", eps=smooth)["eps"] + TOL


# ------------------------------------------------------------------ CHTP (Theorem 1)

def test_bruteforce_chtp_forward(pairs):
    """(ε,δ)-DP ⇒ (α,γ)-CHTP, over every conditioning set S of probability ≥ γ under x (and under
    either sample): both the closed form α = 1 − (γ−δ)/(e^{2ε}γ + e^ε δ) and boundcalc's LP
    form (the returned ``alpha`` is the smaller of the two)."""
    P, R, _, _, _ = pairs
    rng = np.random.default_rng(11)
    checked = 0
    lp_better = 0
    for _ in range(2):
        e = rng.exponential(1.0, size=len(P))
        d = ch.delta_of_eps(P, R, e)
        g = d + (1 - d) * rng.random(len(P)) ** 2
        ok = (d < 0.95) & (g > d)
        e, d, g = e[ok], d[ok], g[ok]
        res = [rel.chtp_from_dp(ei, di, gi) for ei, di, gi in zip(e, d, g)]
        t1 = np.array([1 - r["alpha_theorem1"] for r in res])
        best = np.array([1 - r["alpha"] for r in res])
        formula = (g - d) / (np.exp(2 * e) * g + np.exp(e) * d)
        assert np.allclose(t1, formula, rtol=1e-9, atol=1e-15)
        assert np.all(best >= t1 - 1e-15)
        lp_better += int((best > t1 + 1e-12).sum())
        for cond in ("x", "max"):
            cm = ch.chtp_min_error_sum(P[ok], R[ok], g[:, None], cond)
            assert np.all(cm >= formula - TOL)
            assert np.all(cm >= best - TOL)
            checked += ok.sum()
    assert checked > 3 * N
    assert lp_better > checked // 8  # the LP form is the tighter one in most cases


def test_bruteforce_chtp_pure_tight(pairs):
    """Pure ε-DP ⇒ conditional error sum ≥ 2/(1+e^ε), i.e. α = tanh(ε/2), for every S (derived here;
    the general form gives only 1 − e^{−2ε}); attained (S = all outputs, randomized response)."""
    P, R, e, _, _ = pairs
    fin = np.isfinite(e)
    cm = ch.chtp_min_error_sum(P[fin], R[fin], 1e-12, "max")
    want = 1 - np.array([rel.chtp_from_dp(x, 0.0, 1.0)["alpha_pure"] for x in e[fin]])
    lp = 1 - np.array([rel.chtp_from_dp(x, 0.0, 0.5)["alpha_lp"] for x in e[fin][:200]])
    assert np.allclose(lp, want[:200], rtol=1e-9, atol=1e-12)  # the LP form is exact at δ = 0
    assert np.all(cm >= want - TOL)
    assert np.min(cm - want) == pytest.approx(0.0, abs=1e-9)
    paper = np.exp(-2 * e[fin])
    assert np.all(want >= paper - TOL)  # the tight form is stronger than the general one at δ = 0


def test_bruteforce_chtp_converse():
    """Converse (Theorem 1): a pair that is not (ε, γ)-DP is caught by a conditional test on a garbling
    Q' ⪯ Q with error sum < 1 − α, so CHTP-for-all-garblings forces (ε, γ)-DP. Checked for the
    closed form ε = log((1+2α)/(1−2α)) and for boundcalc's sharper ε = 4 artanh(α), with the
    conditioning set required to have probability ≥ γ under one sample ("max") — the proved reading —
    and, for α < 1/2, under both ("min")."""
    rng = np.random.default_rng(12)
    P, R = ch.random_pairs(rng, 6000, 5)
    g = rng.uniform(0.001, 0.5, len(P))
    a = rng.uniform(0.01, 0.49, len(P))
    out = [rel.dp_from_chtp(ai, gi) for ai, gi in zip(a, g)]
    e_paper = np.array([o["eps"] for o in out])
    e_sharp = np.array([o["eps_sharp"] for o in out])
    assert np.allclose(e_paper, np.log((1 + 2 * a) / (1 - 2 * a)))
    assert np.all(e_sharp <= e_paper)
    for e, cond in [(e_paper, "min"), (e_sharp, "min"), (e_sharp, "max")]:
        notdp = ch._one_sided_delta(P, R, e) > g
        assert notdp.sum() > 1000
        err, _, _ = ch.chtp_thinning_witness(P[notdp], R[notdp], g[notdp][:, None], e[notdp], condition=cond)
        assert np.all(err < 1 - a[notdp])
    # the sharp form for large α (≥ 1/2, where the THEOREMS form does not exist), proved reading
    a2 = rng.uniform(0.5, 0.97, len(P))
    e2 = np.array([rel.dp_from_chtp(ai, gi)["eps_sharp"] for ai, gi in zip(a2, g)])
    notdp = ch._one_sided_delta(P, R, e2) > g
    assert notdp.sum() > 100
    err, _, _ = ch.chtp_thinning_witness(P[notdp], R[notdp], g[notdp][:, None], e2[notdp], condition="max")
    assert np.all(err < 1 - a2[notdp])


def test_chtp_validation():
    with pytest.raises(InputError):
        rel.chtp_from_dp(1.0, 0.1, 0.05)  # γ must exceed δ
    with pytest.raises(InputError):
        rel.chtp_from_dp(-1.0, 0.0, 0.5)
    with pytest.raises(InputError):
        rel.dp_from_chtp(1.0, 0.1)
    assert rel.dp_from_chtp(0.5, 0.1)["eps"] is None
    assert rel.dp_from_chtp(0.5, 0.1)["eps_sharp"] == pytest.approx(4 * math.atanh(0.5))
    with pytest.raises(InputError):
        rel.dp_from_chtp(0.2, 0.0)
    out = rel.chtp_from_dp(50.0, 1e-300, 1e-3)
    assert math.isfinite(out["alpha"]) and out["status"] == "derived"
    assert rel.dp_from_chtp(0.25, 0.01)["eps"] == pytest.approx(math.log(3))


# ------------------------------------------------------------------ non-implications

def test_non_implications_release_one_at_random():
    c = ch.release_one_at_random(3, 2)
    alpha = c.tv()
    for dst in ("pure", "kl"):
        r = rel.convert("tv", dst, eps=alpha)
        assert r.holds is False and r.value is None and "release" in r.reason.lower()
        assert math.isinf(c.eps() if dst == "pure" else c.kl())
    r = rel.convert("approx", "pure", eps=1.0, delta=1 / 3)
    assert not r.holds and "release" in r.reason.lower()
    assert not rel.convert("approx", "kl", eps=1.0, delta=0.01).holds
    assert not rel.convert("kl", "pure", eps=0.1).holds
    # tv → approx holds only with δ = α, which release-one-at-random attains at every ε
    r = rel.convert("tv", "approx", eps=alpha)
    assert r.holds and r.delta == pytest.approx(alpha) and r.value == 0.0
    for e in (0.0, 1.0, 20.0):
        assert c.delta(e) == pytest.approx(r.delta)


def test_none_local_smooth_and_trivial():
    r = rel.convert("none", "tv")
    assert not r.holds and r.reason and r.testing["min_error_sum"] == 0.0
    r = rel.convert("pure", "none", eps=1)
    assert r.holds and r.value is None
    assert not rel.convert("pure", "local", eps=1).holds
    assert not rel.convert("pure", "smooth", eps=1).holds
    assert rel.convert("local", "local", eps=1).value == 1.0
    assert rel.convert("smooth", "pure", eps=2).value == 2.0
    assert rel.convert("local", "tv", eps=1).value == pytest.approx((E - 1) / (E + 1))
    r = rel.convert("kl", "kl", eps=0.3, group=2)
    assert not r.holds and "triangle" in r.reason


def test_kl_has_no_group_guarantee():
    """The three-point chain of the KL_GROUP reason: neighbour KLs (both directions) stay ≤ 0.5 while
    KL(P0‖P2) grows without bound as m0 → 0 (so no f(α, m) bounds KL at distance 2)."""
    a = 0.5
    ratios = []
    for m0 in (0.3, 0.2, 0.15):
        t = m0 * math.exp(-a / m0)
        c = a / t
        P0, P1 = np.array([m0, 1 - m0]), np.array([t, 1 - t])
        P2 = np.array([t * math.exp(-c), 1 - t * math.exp(-c)])
        level = max(ch.kl_sym_max(P0, P1), ch.kl_sym_max(P1, P2))
        assert level <= a + 1e-9
        ratios.append(float(ch.kl(P0, P2) / level))
    assert ratios == sorted(ratios) and ratios[-1] > 20


def test_composition_keeps_tightest():
    r = rel.convert("pure", "tv", eps=1)
    paths = {tuple(c["relations"]): c["alpha"] for c in r.to_dict()["candidates"]}
    assert ("pure_kl", "kl_tv_pinsker") in paths and ("pure_tv",) in paths
    assert paths[("pure_tv",)] < paths[("pure_kl", "kl_tv_pinsker")]
    assert r.relations == ["pure_tv"]
    # Bretagnolle–Huber wins over Pinsker for large KL levels
    r = rel.convert("kl", "tv", eps=3.0)
    assert r.relations == ["kl_tv_bh"] and r.value == pytest.approx(math.sqrt(1 - math.exp(-3)))
    # group: pure ε then group (tanh(mε/2)) beats TV then group (m tanh(ε/2))
    r = rel.convert("pure", "tv", eps=0.5, group=3)
    assert r.value == pytest.approx(math.tanh(0.75)) and r.value < 3 * math.tanh(0.25)
    r = rel.convert("approx", "approx", eps=0.5, delta=1e-6, group=3)
    assert r.value == pytest.approx(1.5)
    assert r.delta == pytest.approx(1e-6 * (1 + math.exp(0.5) + math.exp(1.0)))


def test_tv_level_one_source_of_truth():
    assert rel.tv_level("pure", 1.0) == pytest.approx((E - 1) / (E + 1))
    assert rel.tv_level("smooth", 1.0) == rel.tv_level("pure", 1.0)
    assert rel.tv_level("approx", 1.0, 0.01) == pytest.approx((E - 1 + 0.02) / (E + 1))
    assert rel.tv_level("kl", 0.5) == pytest.approx(0.5)
    assert rel.tv_level("tv", 0.3) == 0.3
    assert rel.tv_level("none", 1.0) == 1.0
    assert rel.tv_level("pure", 1e4) == 1.0 and rel.tv_level("approx", 50.0, 1e-300) <= 1.0
    arr = rel.tv_level("pure", np.array([0.5, 1.0]))
    assert np.allclose(arr, np.tanh([0.25, 0.5]))
    for model, e, d in [("pure", 0.7, None), ("approx", 0.7, 0.01), ("kl", 0.2, None), ("kl", 5.0, None)]:
        assert rel.tv_level(model, e, d) == pytest.approx(rel.convert(model, "tv", eps=e, delta=d).value)
        assert rel.testing_error_bound(model, e, d) == pytest.approx(1 - rel.tv_level(model, e, d))
    with pytest.raises(ValueError):
        rel.tv_level("bogus", 1.0)


# ------------------------------------------------------------------ input validation

@pytest.mark.parametrize("kwargs, param", [
    (dict(from_model="dp", to_model="tv", eps=1), "from"),
    (dict(from_model="pure", to_model="renyi", eps=1), "to"),
    (dict(from_model="pure", to_model="tv", eps=0), "eps"),
    (dict(from_model="pure", to_model="tv", eps=-1), "eps"),
    (dict(from_model="pure", to_model="tv", eps="nan"), "eps"),
    (dict(from_model="tv", to_model="kl", eps=1.0), "eps"),
    (dict(from_model="approx", to_model="tv", eps=1, delta=0), "delta"),
    (dict(from_model="approx", to_model="tv", eps=1, delta=1), "delta"),
    (dict(from_model="pure", to_model="tv", eps=1, delta=0.1), "delta"),
    (dict(from_model="pure", to_model="tv", eps=1, group=0), "group"),
    (dict(from_model="pure", to_model="tv", eps=1, group=1.5), "group"),
    (dict(from_model="pure", to_model="tv", eps=1, group=True), "group"),
])
def test_invalid_inputs(kwargs, param):
    with pytest.raises(InputError) as info:
        rel.convert(**kwargs)
    assert info.value.parameter == param


# ------------------------------------------------------------------ property tests

_MODELS = st.sampled_from(["pure", "smooth", "approx", "tv", "kl", "local", "none"])
_TARGETS = st.sampled_from(list(rel.TARGETS))


@settings(max_examples=60, deadline=None)
@given(src=_MODELS, dst=_TARGETS, x=st.floats(1e-6, 0.999), big=st.floats(1e-6, 1e4),
       d=st.floats(1e-300, 0.999), grp=st.integers(1, 10 ** 6))
def test_output_is_json_safe(src, dst, x, big, d, grp):
    level = x if src == "tv" else (None if src == "none" else big)
    res = rel.convert(src, dst, eps=level, delta=d if src == "approx" else None, group=grp)
    text = json.dumps(res.to_dict(), allow_nan=False)
    assert "NaN" not in text and "Infinity" not in text
    out = res.to_dict()
    if out["holds"] and out["value"] is not None:
        assert math.isfinite(out["value"]) and out["value"] >= 0
        if dst in ("tv", "testing"):
            assert out["value"] <= 1
    assert res.to_text()


@settings(max_examples=60, deadline=None)
@given(e1=st.floats(1e-6, 60), e2=st.floats(1e-6, 60), d=st.floats(1e-12, 0.5))
def test_monotone_in_privacy_level(e1, e2, d):
    lo, hi = sorted((e1, e2))
    assert rel.tv_level("pure", lo) <= rel.tv_level("pure", hi)
    assert rel.tv_level("approx", lo, d) <= rel.tv_level("approx", hi, d)
    assert rel.tv_level("approx", lo, d / 2) <= rel.tv_level("approx", lo, d) + 1e-15
    assert rel.tv_level("kl", lo) <= rel.tv_level("kl", hi)
    assert rel.testing_error_bound("pure", lo) >= rel.testing_error_bound("pure", hi)
