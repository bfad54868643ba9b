"""Build step that ships the derivation pages with the package.

The pages live at the top of the repository (docs/README.md, docs/problems/*.md, docs/methods/*.md,
docs/engineering/*.md: every page under docs/), where the README links to them; building a wheel copies them
into the package as ``boundcalc/docs/...``, so that
``boundcalc docs <page>`` and ``boundcalc rate ... --explain`` can print them from an installed copy
(:mod:`boundcalc.docpages` reads them with importlib.resources, or from docs/ in a checkout).
Everything else is declared in pyproject.toml.
"""
import glob
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
#: the shipped pages, as globs relative to the repository root: every page under docs/ (a page the README or
#: an output names must open from an installed copy; tests/test_docs_shipped.py checks it)
DOC_GLOBS = ("docs/**/*.md",)


def doc_files():
    """(source path, path inside the package) of every shipped page."""
    out = []
    for pattern in DOC_GLOBS:
        for src in sorted(glob.glob(os.path.join(HERE, pattern), recursive=True)):
            rel = os.path.relpath(src, os.path.join(HERE, "docs"))
            out.append((src, os.path.join("boundcalc", "docs", rel)))
    return out


class BuildPyWithDocs(build_py):
    """build_py, then the derivation pages copied to boundcalc/docs/ in the build directory."""

    def run(self):
        super().run()
        for src, rel in doc_files():
            dest = os.path.join(self.build_lib, rel)
            self.mkpath(os.path.dirname(dest))
            self.copy_file(src, dest)

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, rel) for _, rel in doc_files()]


if __name__ == "__main__":
    setup(cmdclass={"build_py": BuildPyWithDocs})
