"""The Markdown of the READMEs' generated blocks, written one way for every paper: a table's lines, and a reproduced
cell beside the paper's number (reported | reproduced mean ± std (n) | Δ, the fairseq-style columns).

Each paper's ``summary`` hook (its ``markdown_summary``) chooses the rows; this module only writes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from sentemb.report.reproduced import mean_std


def reported_cell(value, digits: int = 2, signed: bool = False) -> str:
    """A reported number or a Δ as the READMEs print it, '–' where the paper has none."""
    if value is None or pd.isna(value):
        return "–"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence]) -> list[str]:
    """A GitHub-flavoured Markdown table's lines: the ``header`` labels, the rule under them, then one line per row
    (each cell as ``str`` gives it)."""
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]


def compared(cell, digits: int = 2) -> tuple[str, str, str]:
    """A reproduced cell (a row of a table joined to the paper's numbers: ``reported``, ``delta``, mean/std/n) as its
    three README columns: the paper's number (``digits`` decimals, '–' where it has none), mean ± std (n), and Δ."""
    return reported_cell(cell["reported"], digits), mean_std(cell), reported_cell(cell["delta"], signed=True)
