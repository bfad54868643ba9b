"""The derivation pages (docs/problems/<problem>.md, docs/methods/<method>.md) and the engineering notes
(docs/engineering/<page>.md), wherever boundcalc runs.

An installed wheel carries them as package data (``boundcalc/docs/``, copied there by the build step in
setup.py); a checkout reads them from its docs/ directory. ``boundcalc docs <page>`` prints one, and
``boundcalc rate ... --explain`` prints the problem's page after the derivation of the reported bounds.
A page is named as printed in sources (``docs/methods/le-cam.md``), by its path (``methods/le-cam``) or
by its bare name (``le-cam``; a problem's page first).
"""
from __future__ import annotations

import os
from pathlib import Path

from ..core.errors import InputError

SECTIONS = ("problems", "methods", "engineering")


def docs_root():
    """The directory holding README.md, problems/ and methods/: the package data of an installed copy,
    else the docs/ directory of the checkout this module runs from; None if neither exists."""
    try:
        from importlib.resources import files

        root = files("boundcalc") / "docs"
        if root.is_dir():
            return root
    except (ImportError, ModuleNotFoundError, OSError, TypeError):
        pass
    repo = Path(__file__).resolve().parents[2] / "docs"  # boundcalc/app/ -> the checkout
    return repo if (repo / "problems").is_dir() else None


def location() -> str:
    """Where the pages are read from (a directory), or a note that they are missing."""
    root = docs_root()
    return str(root) if root is not None else "(no pages found: reinstall boundcalc)"


def list_pages() -> list[str]:
    """Every page, as ``README``, ``problems/<name>`` and ``methods/<name>``, sorted within a section."""
    root = docs_root()
    if root is None:
        return []
    out = ["README"] if (root / "README.md").is_file() else []
    for section in SECTIONS:
        folder = root / section
        if folder.is_dir():
            out += sorted(f"{section}/{p.name[:-3]}" for p in folder.iterdir() if p.name.endswith(".md"))
    return out


def page_name(name) -> str:
    """The canonical name (``problems/mean``) of a page given in any accepted form; InputError if none."""
    text = str(name).strip().replace(os.sep, "/")
    for prefix in ("./", "docs/", "boundcalc/docs/"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    if text.lower().endswith(".md"):
        text = text[:-3]
    pages = list_pages()
    if not pages:
        raise InputError("page", "the derivation pages are not installed (reinstall boundcalc)", name)
    if text in pages:
        return text
    for section in SECTIONS:
        if f"{section}/{text}" in pages:
            return f"{section}/{text}"
    shown = ", ".join(p.split("/")[-1] for p in pages)
    raise InputError("page", f"must name a page: {shown} (`boundcalc docs` lists them)", name)


def read_page(name) -> str:
    """The text of a page (see :func:`page_name` for the accepted names)."""
    canonical = page_name(name)
    root = docs_root()
    path = root / "README.md" if canonical == "README" else root / (canonical + ".md")
    return path.read_text(encoding="utf-8")
