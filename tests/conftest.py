"""Test-session settings: the persistent cache (boundcalc.diskcache) goes to a fresh temporary directory, so
the suite neither reads nor writes the user's cache. The directory is made once per test run and shared by the
pytest-xdist workers (which inherit the variable) and by the subprocess CLI tests; a test never relies on what
is in it, since a cached value is exactly what the code computes."""
import os
import tempfile

if not os.environ.get("BOUNDCALC_TEST_CACHE_DIR"):
    os.environ["BOUNDCALC_TEST_CACHE_DIR"] = tempfile.mkdtemp(prefix="boundcalc-test-cache-")
os.environ["BOUNDCALC_CACHE_DIR"] = os.environ["BOUNDCALC_TEST_CACHE_DIR"]
