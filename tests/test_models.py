"""The built-in one-parameter models: sympy-derived Fisher information against textbook values,
and Monte-Carlo checks of the score identities with the model's own sampler."""
import math

import numpy as np
import pytest
import sympy as sp

from boundcalc.core.errors import InputError
from boundcalc.core.models import MODELS, get_point_model

# Textbook Fisher information, written independently of models.py (numeric functions of θ and the
# extra parameters).
TEXTBOOK = {
    "bernoulli": lambda th, **e: 1.0 / (th * (1.0 - th)),
    "poisson": lambda th, **e: 1.0 / th,
    "exponential": lambda th, **e: 1.0 / th**2,
    "normal-mean": lambda th, sigma=1.0, **e: 1.0 / sigma**2,
    "normal-var": lambda th, **e: 1.0 / (2.0 * th**2),   # θ = σ², I = 1/(2σ⁴)
}

POINTS = {
    "bernoulli": [0.1, 0.3, 0.5, 0.9],
    "poisson": [0.2, 1.0, 7.5],
    "exponential": [0.3, 1.0, 4.0],
    "normal-mean": [-2.0, 0.0, 1.5],
    "normal-var": [0.25, 1.0, 3.0],
}


def test_library_has_the_required_models():
    assert set(TEXTBOOK) <= set(MODELS)


@pytest.mark.parametrize("name", sorted(TEXTBOOK))
def test_fisher_information_matches_textbook(name):
    m = get_point_model(name)
    expr = m.fisher_information()
    assert expr.free_symbols <= {m.theta} | set(m.extra_symbols().values())
    extra_values = [{}] if not m.extra else [{}, {str(m.extra[0][0]): 2.5}]
    for extra in extra_values:
        f = m.fisher_function(**extra)
        for th in POINTS[name]:
            want = TEXTBOOK[name](th, **extra)
            assert math.isclose(float(f(th)), want, rel_tol=1e-12)


@pytest.mark.parametrize("name", sorted(TEXTBOOK))
def test_fisher_two_routes_agree_symbolically(name):
    m = get_point_model(name)
    assert sp.simplify(m.fisher_information() - m.fisher_information_from_score()) == 0


@pytest.mark.parametrize("name", sorted(TEXTBOOK))
def test_score_identities_monte_carlo(name):
    """E[S] = 0 and E[S²] = I(θ), checked by simulation (5 standard errors)."""
    m = get_point_model(name)
    rng = np.random.default_rng(12345)
    th = m.theta_default
    score = sp.lambdify(m.x, m.score().subs(m.theta, th).subs(
        {s: v for s, v in m.extra}), "numpy")
    x = m.sampler(rng, th, 400_000)
    s = np.asarray(score(x), dtype=float) * np.ones_like(x)
    info = TEXTBOOK[name](th)
    se_mean = s.std() / math.sqrt(s.size)
    assert abs(s.mean()) < 5 * se_mean
    s2 = s**2
    assert abs(s2.mean() - info) < 5 * s2.std() / math.sqrt(s.size)


@pytest.mark.parametrize("name", sorted(TEXTBOOK))
def test_sampler_mean_is_right(name):
    m = get_point_model(name)
    rng = np.random.default_rng(7)
    th = m.theta_default
    x = m.sampler(rng, th, 200_000)
    want_mean = {"bernoulli": th, "poisson": th, "exponential": 1 / th, "normal-mean": th,
                 "normal-var": 0.0}[name]
    assert abs(x.mean() - want_mean) < 5 * x.std() / math.sqrt(x.size)
    if name == "normal-var":
        assert abs((x**2).mean() - th) < 5 * (x**2).std() / math.sqrt(x.size)


@pytest.mark.parametrize("name", sorted(TEXTBOOK))
def test_kl_divergence_local_expansion(name):
    """KL(P_θ‖P_θ') ≈ I(θ) (θ'-θ)²/2 for θ' near θ, and KL(P_θ‖P_θ) = 0."""
    m = get_point_model(name)
    kl, th1 = m.kl_divergence()
    sub = {s: v for s, v in m.extra}
    th = m.theta_default
    assert abs(float(kl.subs(sub).subs({m.theta: th, th1: th}))) < 1e-12
    h = 1e-3
    val = float(kl.subs(sub).subs({m.theta: th, th1: th + h}))
    assert math.isclose(val, TEXTBOOK[name](th) * h * h / 2, rel_tol=1e-2)


@pytest.mark.parametrize("name", sorted(TEXTBOOK))
def test_density_is_normalised(name):
    """expectation() uses E[1] = 1."""
    assert sp.simplify(get_point_model(name).total_mass() - 1) == 0


def test_seeded_sampler_reproducible():
    m = get_point_model("exponential")
    a = m.sampler(np.random.default_rng(3), 2.0, 10)
    b = m.sampler(np.random.default_rng(3), 2.0, 10)
    assert np.array_equal(a, b)


def test_aliases_and_unknown():
    assert get_point_model("normal-location") is get_point_model("normal-mean")
    assert get_point_model("Exponential").name == "exponential"
    with pytest.raises(InputError) as e:
        get_point_model("cauchy")
    assert "model" in str(e.value) and "bernoulli" in str(e.value)


def test_parameter_spaces_contain_defaults():
    for m in MODELS.values():
        lo, hi = m.parameter_space
        assert lo < m.theta_default < hi
        nlo, nhi = m.natural_space
        assert nlo <= lo < hi <= nhi
