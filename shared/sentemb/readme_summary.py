"""A README's generated results block: the printed output of a notebook's summary cell (``paper.summary(built)``).

A README may hold one block between a line starting ``<!-- generated:`` and the line ``<!-- /generated -->``. Its text
is
what the executed small-profile notebook printed, so the reported | reproduced | Δ tables are the notebook's, never
typed by hand. Which README gets which part of a summary is the paper's :meth:`sentemb.paper.Paper.readme_blocks` (the
overview's first table goes to the top-level README, the rest to its own). :func:`sync_readme` rewrites the blocks
after the notebook runs; :func:`readme_is_in_sync` lets a test check the committed pairs.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from sentemb.atomic import atomic_write_text
from sentemb.errors import SentembError

START = "<!-- generated:"
END = "<!-- /generated -->"
SUMMARY_CALL = "paper.summary("


def readme_blocks(paper: str, summary: str) -> dict[Path, str]:
    """README path -> the part of ``summary`` its generated block holds (:meth:`Paper.readme_blocks`)."""
    from sentemb.paper import get_paper

    return get_paper(paper).readme_blocks(summary)


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
        raise SentembError(
            f"{readme} must hold exactly one '{START} ...' line followed by one '{END}' line "
            f"(found {len(starts)} and {len(ends)}).\n  Fix: restore the markers around the results block."
        )
    return starts[0], ends[0]


def readme_block(readme: Path) -> str | None:
    """The README's generated block (between the markers), or None when it has none."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    span = _block(lines, readme)
    return None if span is None else "\n".join(lines[span[0] + 1 : span[1]]).strip()


def _replace_block(readme: Path, text: str) -> bool:
    """Write ``text`` into the README's block; True when it changed (a README without markers is left alone)."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    span = _block(lines, readme)
    if span is None or readme_block(readme) == text:
        return False
    start, end = span
    atomic_write_text(readme, "\n".join(lines[: start + 1] + ["", text, ""] + lines[end:]) + "\n")
    return True


def sync_readme(paper: str, notebook: Path) -> bool:
    """Replace the READMEs' generated blocks with the notebook's summary; True when one changed. A README without
    markers, or a notebook without a summary, is left alone."""
    summary = notebook_summary(notebook)
    if summary is None:
        return False
    blocks = [(readme, text) for readme, text in readme_blocks(paper, summary).items() if readme.is_file()]
    return any([_replace_block(readme, text) for readme, text in blocks])


def readme_is_in_sync(paper: str, notebook: Path) -> bool:
    """Whether each README's generated block is its part of the notebook's summary (True when either has none)."""
    summary = notebook_summary(notebook)
    if summary is None:
        return True
    for readme, text in readme_blocks(paper, summary).items():
        block = readme_block(readme) if readme.is_file() else None
        if block is not None and block != text:
            return False
    return True
