"""One shape for problems and lower-bound methods: every problem is one Problem subclass in its own module,
and a Method registered for a family shape reaches every problem that lists a family of that shape."""
from __future__ import annotations

import inspect

import pytest
import sympy as sp

import boundcalc as bc
from boundcalc.core import bounds as registry
from boundcalc.app import catalog  # noqa: F401  (installs discovery)
from boundcalc.core.bounds import Bound, Method, Problem, TwoPointFamily, register_method
from boundcalc.methods import method_bounds


def test_every_problem_is_one_problem_class_per_module():
    infos = registry.problems()
    modules = []
    for name, info in infos.items():
        assert info.definitions, f"{name}: registered without a Problem class"
        for problem in info.definitions:
            assert isinstance(problem, Problem) and type(problem) is not Problem
            assert problem.name == name
            modules.append(inspect.getmodule(type(problem)).__name__)
        # every privacy model of the problem comes from exactly one of its classes
        privs = [p for problem in info.definitions for p in problem.privacies]
        assert sorted(privs) == sorted(info.entries), name
        for priv, entry in info.entries.items():
            assert entry.definition in info.definitions
    assert len(modules) == len(set(modules)), "a module defines two problems"


def test_entries_are_built_from_the_methods_and_data():
    """Each Entry function is the Problem's method of that name (bound to the registered instance) and each
    data field what the subclass declares for that privacy model (one value, or a dict keyed by model)."""
    hooks = ("rate", "bounds", "validate", "derived", "lower_rate", "report")
    data = {"params": "params", "title": "titles", "source": "sources", "check": "checks", "notes": "notes"}
    for info in registry.problems().values():
        for entry in info.entries.values():
            problem = entry.definition
            for field in hooks:
                got = getattr(entry, field)
                assert got.__self__ is problem and got.__func__ is getattr(type(problem), field), field
            for field, attr in data.items():
                declared = Problem.per_privacy(getattr(problem, attr), entry.privacy)
                got = getattr(entry, field)
                if field in ("params", "notes"):
                    assert got == tuple(declared or ()), (entry.problem, entry.privacy, field)
                elif field == "title":
                    assert got == (declared or problem.title)
                elif field == "source":
                    assert got == (declared or "")
                else:
                    assert got is declared, (entry.problem, entry.privacy, field)


def test_hooks_are_ordinary_methods_with_defaults():
    """A registered problem's hooks can be called on a fresh instance (as scipy's rv_continuous methods can);
    the optional ones default to no-ops."""
    from boundcalc.problems.multinomial import Multinomial

    v = {"privacy": "local", "n": 1000, "eps": 1.0, "d": 10, "loss": "l2sq", "problem": "multinomial"}
    m = Multinomial()
    assert m.rate(v) == registry.get_entry("multinomial", "local").rate(v)
    assert {b.name for b in m.bounds(v)} == {b.name for b in registry.get_entry("multinomial", "local").bounds(v)}

    class Bare(Problem):
        name, privacies = "bare", ("none",)

        def rate(self, values):
            return []

        def bounds(self, values):
            return []

    e = Bare().entry("none")
    assert e.validate({}) is None and e.derived({}) == {} and e.lower_rate({}) is None
    assert e.report({}, None) == [] and e.with_derived({"n": 3}) == {"n": 3}


def test_problem_docstring_example_runs():
    """The minimal subclass in Problem's docstring is a doctest: it runs, and its printed values are right."""
    import doctest

    result = doctest.testmod(registry, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


def test_a_problem_without_bounds_is_refused():
    class Broken(Problem):
        name, privacies = "broken", ("none",)

        def rate(self, values):
            return []

    with pytest.raises(TypeError, match="bounds"):
        Broken().entry("none")


def _le_cam_family():
    h = sp.Symbol("h", positive=True)
    return TwoPointFamily("probe", "Le Cam probe", h ** 2, h, None)


def test_private_le_cam_method_matches_the_lemma():
    """The registered private Le Cam method gives Φ(s)(1 - min{√(KL/2), √(1-e^{-KL})})/2 with KL = n c_ε TV²,
    c_ε = 2(e^ε-1)²/(e^ε+1), evaluated independently here."""
    import math

    fam = _le_cam_family()
    (b,) = method_bounds(fam, "local")
    assert b.side == "lower" and b.name == "probe" and b.label == "private Le Cam probe"
    assert method_bounds(fam, "none") == []  # no n-sample TV given: plain Le Cam has nothing to say
    for n, eps, h in ((10, 1.0, 0.1), (1000, 0.5, 0.02), (5, 3.0, 0.3)):
        kl = n * 2 * math.expm1(eps) ** 2 / (math.exp(eps) + 1) * h ** 2
        tv = min(math.sqrt(kl / 2), math.sqrt(-math.expm1(-kl)))
        want = max(0.0, h ** 2 * (1 - tv) / 2)
        got = float(b.evaluate({"n": n, "eps": eps}, {"h": h}))
        assert got == pytest.approx(want, rel=1e-12)


def test_a_new_method_reaches_every_problem_with_that_family_shape():
    """Register a throwaway method for TwoPointFamily: it appears in the bounds of the Gaussian (local and
    none) and local mean problems, which list two-point families, and in no other bound list."""
    from boundcalc.problems import gaussian, local_mean

    @register_method
    class Probe(Method):
        name, shape, privacies = "probe", TwoPointFamily, ("local", "none")

        def bounds(self, family, privacy):
            return [Bound(side="lower", name="probe-" + family.name, label="probe", expr=sp.Integer(0), source="test", derivation="test")]

    def names(problem, privacy, **kw):
        return {b.name for b in registry.get_entry(problem, privacy).bounds({"privacy": privacy, **kw})}

    try:
        gaussian._bounds.cache_clear()
        local_mean._bounds.cache_clear()
        assert "probe-le-cam" in names("gaussian", "local", d=1)
        assert "probe-le-cam" in names("gaussian", "none", d=1)
        got = names("mean", "local", d=1, k=2.0, ball="l2")
        assert {"probe-le-cam-mixture", "probe-le-cam-two-point"} <= got
    finally:
        registry._METHODS[:] = [m for m in registry._METHODS if not isinstance(m, Probe)]
        gaussian._bounds.cache_clear()
        local_mean._bounds.cache_clear()
    assert "probe-le-cam" not in names("gaussian", "local", d=1)
    r = bc.rate("gaussian", "local", d=1)
    assert all(not b.name.startswith("probe") for b in r.lowers)


def test_per_privacy_methods_are_dispatched_and_required():
    """``bounds_<privacy>`` / ``rate_<privacy>`` are called for their model (no branch on the model in the
    subclass); a model without its method (and no generic one) is refused when the entry is built."""
    class TwoModels(Problem):
        name, privacies = "two-models", ("none", "pure")

        def rate_none(self, values):
            return [("none", sp.Integer(1))]

        def rate_pure(self, values):
            return [("pure", sp.Integer(2))]

        def bounds_none(self, values):
            return ["none-bounds"]

        def bounds_pure(self, values):
            return ["pure-bounds"]

        def validate_pure(self, values):
            values["checked"] = True

    p = TwoModels()
    assert p.entry("pure").bounds({"privacy": "pure"}) == ["pure-bounds"]
    assert p.entry("none").rate({"privacy": "none"}) == [("none", 1)]
    v = {"privacy": "pure"}
    assert p.entry("pure").validate(v) is None and v["checked"]
    assert p.entry("none").validate({"privacy": "none"}) is None
    with pytest.raises(TypeError, match="rate_local"):
        p.entry("local")
