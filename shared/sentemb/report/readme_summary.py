"""A paper README's generated results block: the printed output of its notebook's "README's summary" cell.

A paper README (and the top-level README, for the overview) may hold one block between a line starting ``<!-- generated:`` and the line ``<!-- /generated -->``.
Its text is what the executed small-profile notebook printed from ``report.markdown_summary(tables)``, so the README's
reported | reproduced | Δ tables are the notebook's, never typed by hand. :func:`sync_readme` rewrites the block
after the notebook runs (``python -m sentemb notebook`` does, for the small profile); :func:`readme_is_in_sync`
lets a test check the committed pair.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from sentemb import settings
from sentemb.atomic import atomic_write_text
from sentemb.errors import SentembError

START = "<!-- generated:"
END = "<!-- /generated -->"
SUMMARY_CALL = "report.markdown_summary("


def readme_path(paper: str) -> Path:
    """``papers/<paper>/README.md``; the overview's summary (every paper's coverage and claims, and the comparison)
    goes into the top-level README."""
    return settings.REPO_ROOT / ("README.md" if paper == "overview" else f"papers/{paper}/README.md")


def notebook_summary(notebook: Path) -> str | None:
    """The text the notebook's summary cell printed, or None when it has no such cell or the cell printed nothing."""
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type == "code" and SUMMARY_CALL in cell.source:
            text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
            return text.strip() or None
    return None


def _block(lines: list[str], readme: Path) -> tuple[int, int] | None:
    starts = [i for i, line in enumerate(lines) if line.startswith(START)]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise SentembError(f"{readme} must hold exactly one '{START} ...' line followed by one '{END}' line "
                           f"(found {len(starts)} and {len(ends)}).\n  Fix: restore the markers around the results block.")
    return starts[0], ends[0]


def readme_block(readme: Path) -> str | None:
    """The README's generated block (between the markers), or None when it has none."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    span = _block(lines, readme)
    return None if span is None else "\n".join(lines[span[0] + 1 : span[1]]).strip()


def sync_readme(paper: str, notebook: Path) -> bool:
    """Replace the README's generated block with the notebook's summary; True when the README changed. A README
    without markers, or a notebook without a summary, is left alone."""
    readme = readme_path(paper)
    summary = notebook_summary(notebook) if readme.is_file() else None
    if summary is None:
        return False
    lines = readme.read_text(encoding="utf-8").splitlines()
    span = _block(lines, readme)
    if span is None or readme_block(readme) == summary:
        return False
    start, end = span
    text = "\n".join(lines[: start + 1] + ["", summary, ""] + lines[end:]) + "\n"
    atomic_write_text(readme, text)
    return True


def readme_is_in_sync(paper: str, notebook: Path) -> bool:
    """Whether the README's generated block is the notebook's summary (True when either has none)."""
    readme = readme_path(paper)
    summary = notebook_summary(notebook)
    block = readme_block(readme) if readme.is_file() else None
    return summary is None or block is None or block == summary
