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
