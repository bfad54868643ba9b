"""``python -m boundcalc …`` runs the command-line tool (same as the ``boundcalc`` console script)."""
import sys

from .cli import main

sys.exit(main())
