"""``python -m boundcalc …`` runs the command-line tool (same as the ``boundcalc`` console script)."""
from .cli import run

run()
