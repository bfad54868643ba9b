"""Run the notebooks in this folder and store their outputs in place, so that they can be read without running.

    python notebooks/execute.py              # every notebook here
    python notebooks/execute.py 01_*.ipynb   # some of them

Each notebook is cleared, then executed top to bottom in a fresh kernel (nbclient), with the notebook's folder
as the working directory; a cell that raises stops the run and leaves the file unchanged. Timing and other
per-run metadata are not recorded, so that a re-run changes a file only where a result changed. Needs the
``test`` extra (nbclient, nbformat, ipykernel, matplotlib); ``tests/test_notebooks.py`` checks that the
stored notebooks were executed, that they still run clean, and that every stored text output (numbers
included) is what the code prints today.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
TIMEOUT = 600  # seconds per cell


def clear(nb) -> None:
    """Drop outputs, execution counts and per-run metadata."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
        cell.metadata.pop("ExecuteTime", None)


def execute(path: pathlib.Path) -> None:
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    clear(nb)
    client = nbclient.NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3", record_timing=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    nb.metadata.pop("widgets", None)
    nbformat.validate(nb)
    nbformat.write(nb, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", help="notebooks to run (default: every *.ipynb in notebooks/)")
    args = ap.parse_args(argv)
    paths = [pathlib.Path(p) for p in args.notebooks] or sorted(HERE.glob("*.ipynb"))
    for path in paths:
        print(f"executing {path.name} ...", flush=True)
        execute(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
