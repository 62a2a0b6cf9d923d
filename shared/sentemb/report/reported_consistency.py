"""Numbers a paper prints in more than one table must agree; where they do not, every copy is flagged.

A paper often repeats a number: SimCSE's unsupervised BERT-base model scores 82.5 on STS-B dev in Tables 1, 2,
3, 4 and 6, each table naming the row and the column its own way. This module finds every such repeated cell
and compares the copies as printed:

- **Which cells are the same number.** A cell's identity is (model, column, split, aggregation, metric,
  backbone). By default the model is the row and the column is the column, as printed, so a row repeated under
  the same name is found without help. ``papers/<paper>/reported/same_cells.csv`` names the others (its schema:
  :mod:`sentemb.report.reported`): it gives cells of different tables the same model (and column) when the paper
  says they are the same run, and gives a row printed under one name in two tables different models when the paper
  says they are different runs (SimCSE's Table 5 "first-last avg." included the embedding layer, Table B.3's
  does not).
- **When copies agree.** Two printed values agree when the one printed with more decimals, rounded half up to
  the other's decimals, equals it: "86.2" and "86.20" agree, "86.2" and "86.17" agree, "39.70" and "39.69" do
  not. Empty values (``unknown:`` and ``not reported:`` cells) are skipped.

The check never corrects a number: a disagreement is reported, and the test suite requires every copy of a
disagreeing cell to carry an ``inconsistent:`` note (``tests/test_reported.py``).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import pandas as pd

from sentemb.errors import DataError
from sentemb.report.reported import load_all_reported, reported_dir

ALIAS_COLUMNS = ["table", "group", "row", "column", "model", "as_column", "note"]
IDENTITY = ["model", "as_column", "split", "aggregation", "metric", "backbone"]


def load_same_cells(paper: str) -> pd.DataFrame:
    """``papers/<paper>/reported/same_cells.csv``, or an empty table when the paper has none."""
    path = reported_dir(paper) / "same_cells.csv"
    if not path.is_file():
        return pd.DataFrame(columns=ALIAS_COLUMNS)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(frame.columns) != ALIAS_COLUMNS:
        raise DataError(f"{path}: header {list(frame.columns)} differs from the schema {ALIAS_COLUMNS}")
    empty = frame[(frame["model"] == "") | (frame["table"] == "") | (frame["row"] == "")]
    if len(empty):
        raise DataError(f"{path}: rows {[i + 2 for i in empty.index]} lack a table, row or model")
    return frame


def identified_cells(paper: str) -> pd.DataFrame:
    """Every printed number of ``paper`` with its identity (``IDENTITY`` columns) and ``alias``, the line of
    ``same_cells.csv`` that named it (-1: none). A line that names no printed cell is an error: it is stale."""
    cells = load_all_reported(paper, printed=True)
    cells = cells[cells["printed"].str.strip() != ""].copy()
    cells["model"], cells["as_column"], cells["alias"] = cells["row"], cells["column"], -1
    aliases = load_same_cells(paper)
    for line, alias in aliases.iterrows():
        hit = (cells["table"] == alias["table"]) & (cells["group"] == alias["group"]) & (cells["row"] == alias["row"])
        if alias["column"] != "*":
            hit &= cells["column"] == alias["column"]
        if not hit.any():
            raise DataError(
                f"papers/{paper}/reported/same_cells.csv line {line + 2} names no printed cell: "
                f"{alias['table']} / {alias['group']!r} / {alias['row']!r} / {alias['column']!r}"
            )
        cells.loc[hit, "model"] = alias["model"]
        if alias["as_column"]:
            cells.loc[hit, "as_column"] = alias["as_column"]
        cells.loc[hit, "alias"] = line
    return cells


def _decimals(printed: str) -> int:
    try:
        return max(0, -Decimal(printed).as_tuple().exponent)
    except InvalidOperation as exc:
        raise DataError(f"not a number as printed: {printed!r}") from exc


def agree(printed: list[str]) -> bool:
    """Whether values printed with different precisions can be the same number (see the module's docstring)."""
    coarsest = min(_decimals(p) for p in printed)
    quantum = Decimal(1).scaleb(-coarsest)
    return len({Decimal(p).quantize(quantum, rounding=ROUND_HALF_UP) for p in printed}) == 1


def repeated_cells(paper: str) -> pd.DataFrame:
    """Every number printed in more than one table, one line per copy: its table, group, row, column, value as
    printed, note, its identity and ``agree`` (whether all copies of the identity agree)."""
    cells = identified_cells(paper)
    groups = cells.groupby(IDENTITY, sort=True)
    lines = []
    for identity, copies in groups:
        if copies["table"].nunique() < 2:
            continue
        consistent = agree(list(copies["printed"]))
        for _, copy in copies.iterrows():
            lines.append(
                {
                    **dict(zip(IDENTITY, identity)),
                    "table": copy["table"],
                    "group": copy["group"],
                    "row": copy["row"],
                    "column": copy["column"],
                    "printed": copy["printed"],
                    "agree": consistent,
                    "note": copy["note"],
                }
            )
    return pd.DataFrame(lines, columns=[*IDENTITY, "table", "group", "row", "column", "printed", "agree", "note"])


def disagreements(paper: str) -> pd.DataFrame:
    """The copies of every repeated number whose copies disagree."""
    repeated = repeated_cells(paper)
    return repeated[~repeated["agree"].astype(bool)].reset_index(drop=True)
