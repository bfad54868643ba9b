"""Test-session settings: the persistent cache (boundcalc.cache.diskcache) goes to a fresh temporary directory, so
the suite neither reads nor writes the user's cache. The directory is made once per test run and shared by the
pytest-xdist workers (which inherit the variable) and by the subprocess CLI tests; a test never relies on what
is in it, since a cached value is exactly what the code computes."""
import os
import tempfile

# One BLAS thread per test process. pytest-xdist already runs one worker per core, and OpenBLAS's own worker
# threads (one per core by default) spin while they wait for work: on 2 cores, two workers each with two BLAS
# threads spend CPU on spinning (a scipy SLSQP search of tests/test_local_mean_sharp.py: 3.25 s of CPU with the
# default, 0.45 s with one thread). Set before numpy is first imported (the workers inherit the variable); an
# explicit OPENBLAS_NUM_THREADS is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

if not os.environ.get("BOUNDCALC_TEST_CACHE_DIR"):
    os.environ["BOUNDCALC_TEST_CACHE_DIR"] = tempfile.mkdtemp(prefix="boundcalc-test-cache-")
os.environ["BOUNDCALC_CACHE_DIR"] = os.environ["BOUNDCALC_TEST_CACHE_DIR"]

# Property tests (hypothesis) draw the same examples on every run, so that the suite's verdict depends only on
# the code: a run that fails can be repeated, and CI cannot fail by chance. To search new examples, run with
# BOUNDCALC_HYPOTHESIS=explore (random draws, the failures kept in .hypothesis/ and replayed first).
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("repeatable", derandomize=True, database=None)
_hypothesis_settings.register_profile("explore", derandomize=False)
_hypothesis_settings.load_profile("explore" if os.environ.get("BOUNDCALC_HYPOTHESIS") == "explore" else "repeatable")

# pytest-xdist (--dist worksteal, pyproject.toml) hands each worker a contiguous share of the collection and a
# worker that runs out takes the back half of a busy one's queue: a long test met late leaves the other core
# idle while it runs. The longest tests are therefore collected first (the order in which they run is the only
# change: each test is the same), longest first: the suite's slowest at 984e92f (--durations) and the slowest
# alone (-n 0) on 2026-12-02. Only tests of modules without module-scoped fixtures are moved (moving one would
# build its fixture twice). A name no longer collected is ignored.
LONG_FIRST = tuple("tests/" + name for name in (
    "test_exprcodec.py::test_a_warm_cache_prints_exactly_what_no_cache_prints",
    "test_notebooks.py::test_notebook_runs_clean_and_its_stored_outputs_are_current[02_planning_a_private_survey]",
    "test_mean_properties.py::test_monotone_in_eps",
    "test_local_problems.py::test_lower_below_upper_on_grid_and_extremes[multinomial-kw6]",
    "test_local_problems.py::test_lower_below_upper_on_grid_and_extremes[multinomial-kw5]",
    "test_local_mean_sharp.py::test_bayes_vertices_sharp_term_below_exact_bayes_risk_of_worst_channels[2]",
    "test_mean_properties.py::test_lower_le_upper_and_finite",
    "test_hellinger_assouad.py::test_multinomial_lower_monotone_and_below_upper",
    "test_certified_floating_point.py::test_certified_values_are_on_the_safe_side",
    "test_linear.py::test_lower_below_upper",
    "test_subset_tail.py::test_bounds_above_simulated_risk_on_hard_distributions[1000-3.0-200]",
    "test_mean_properties.py::test_pure_k4_scales_as_table",
    "test_consistency_support_point_density.py::test_support_consistency",
    "test_point.py::test_bounds_monotone_in_n_and_eps",
    "test_notebooks.py::test_notebook_runs_clean_and_its_stored_outputs_are_current[03_theory_vs_simulation]",
    "test_linear.py::test_minimiser_privunit_above_simulated_excess[1000-1000-3.0]",
    "test_bad_input_fuzzed.py::test_seeded_fuzz_finds_nothing",
    "test_linear.py::test_privunit_uppers_above_lower_and_monotone",
    "test_gauss_calibration.py::test_vectorised_equals_scalar_and_random_points_safe",
    "test_subset_tail.py::test_certified_supremum_covers_dense_points[2000-2.0-50-6]",
    "test_local_problems.py::test_sparse_bernoulli_lowers_below_upper_at_huge_n[1000000000000000000]",
    "test_local_mean_sharp.py::test_best_lower_monotone_in_n_and_eps[kw3]",
    "test_local_problems.py::test_lower_below_upper_on_grid_and_extremes[discrete-kw7]",
    "test_local_problems.py::test_sparse_bernoulli_lowers_below_upper_at_huge_n[1000000000000000]",
    "test_local_mean_sharp.py::test_sharp_erased_information_on_random_and_optimised_channels",
    "test_subset_tail.py::test_bounds_above_simulated_risk_on_hard_distributions[2000-1.0-60]",
    "test_generated_code.py::test_shared_subexpressions_give_identical_bits[linear-local]",
    "test_group_coupling.py::test_testing_bound_below_exact_optimum",
    "test_notebooks.py::test_notebook_runs_clean_and_its_stored_outputs_are_current[01_quick_tour_and_table1]",
    "test_linear.py::test_posterior_assouad_monotone[8.0-10-l2]",
    "test_linear.py::test_posterior_assouad_monotone[2.0-10-l2]",
    "test_local_mean_sharp.py::test_privunit_upper_above_simulated_risk",
))


def pytest_collection_modifyitems(session, config, items):
    rank = {nodeid: i for i, nodeid in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid, len(rank)))  # stable: the rest keep their order
