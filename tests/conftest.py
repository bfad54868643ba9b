"""Test-session settings: the persistent cache of certified numeric tables (boundcalc.diskcache) goes to a
fresh temporary directory, so the suite neither reads nor writes the user's cache (subprocess CLI tests inherit
the variable)."""
import os
import tempfile

os.environ["BOUNDCALC_CACHE_DIR"] = tempfile.mkdtemp(prefix="boundcalc-test-cache-")
