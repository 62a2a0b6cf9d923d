"""The papers' reported numbers, one CSV per table in ``papers/<paper>/reported/``.

Files: ``index.csv`` (every table and figure of the paper: what is stored, where, what "Avg." averages),
``<table>.csv`` (numbers, in long format), ``<table>.text.csv`` (tables of text) and, optionally,
``same_cells.csv`` (cells of different tables that are the same number; :mod:`sentemb.report.reported_consistency`
compares them).
Numeric schema, one row per number: paper, table, group, row, column, value (as printed), split, aggregation,
metric, backbone, note (``inconsistent: ...`` kept as printed, ``unknown: ...`` with the value empty, ``not
reported: ...``). The key (table, group, row, column, split, aggregation, metric) is unique.
The schema of every file, column by column: docs/derivations.md#sentembreportreportedpy
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sentemb import settings
from sentemb.errors import DataError

COLUMNS = ["paper", "table", "group", "row", "column", "value", "split", "aggregation", "metric", "backbone", "note"]
TEXT_COLUMNS = ["paper", "table", "group", "row", "column", "text", "note"]
INDEX_COLUMNS = ["paper", "item", "kind", "caption", "stored", "file", "avg_columns", "note"]
KEY = ["table", "group", "row", "column", "split", "aggregation", "metric"]


def reported_dir(paper: str) -> Path:
    return settings.REPO_ROOT / "papers" / paper / "reported"


def _read(path: Path, columns: list[str], numeric: bool) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(f"no file {path}")
    dtype = {c: str for c in columns if c != "value"}
    frame = pd.read_csv(path, dtype=dtype, keep_default_na=False)
    if list(frame.columns) != columns:
        raise DataError(f"{path}: header {list(frame.columns)} differs from the schema {columns}")
    if numeric:
        frame["value"] = pd.to_numeric(frame["value"].replace("", float("nan")), errors="raise")
    return frame


def load_index(paper: str) -> pd.DataFrame:
    """Every table and figure of ``paper`` with its caption and whether its numbers are stored."""
    return _read(reported_dir(paper) / "index.csv", INDEX_COLUMNS, numeric=False)


def load_reported(paper: str, name: str) -> pd.DataFrame:
    """A reported table as a DataFrame. ``name`` is the paper's name of the table ("Table 5", "Table A.1")
    or its file stem ("table5", "table8.text"); text tables have a ``text`` column instead of ``value``."""
    index = load_index(paper)
    hit = index[(index["item"] == name) & (index["stored"] != "no")]
    stem = hit["file"].iloc[0].removesuffix(".csv") if len(hit) else name
    path = reported_dir(paper) / f"{stem}.csv"
    if not path.is_file():
        stored = index.loc[index["stored"] != "no", "item"].tolist()
        raise DataError(f"no reported table {name!r} for {paper} ({path}); stored tables: {stored}")
    text = stem.endswith(".text")
    return _read(path, TEXT_COLUMNS if text else COLUMNS, numeric=not text)


def load_all_reported(paper: str, printed: bool = False) -> pd.DataFrame:
    """Every numeric table of ``paper`` in one long DataFrame; with ``printed``, also the value as the CSV writes it
    (``printed``: "39.70" keeps the precision that the float 39.7 loses)."""
    index = load_index(paper)
    frames = []
    for file in index.loc[index["stored"] == "numbers", "file"]:
        frame = _read(reported_dir(paper) / file, COLUMNS, numeric=True)
        if printed:
            frame["printed"] = pd.read_csv(reported_dir(paper) / file, dtype=str, keep_default_na=False)["value"]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def coverage_table(paper: str, coverage: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """Every table and figure of ``paper`` (its ``index.csv``) with what the archive does with it and why:
    ``coverage[item] = (status, where or why)``. The two must list the same items."""
    index = load_index(paper)
    mismatch = set(index["item"]) ^ set(coverage)
    if mismatch:
        raise ValueError(
            f"the coverage of {paper} and papers/{paper}/reported/index.csv disagree on {sorted(mismatch)}"
        )
    return pd.DataFrame(
        [
            {"item": item, "caption": caption, "status": coverage[item][0], "where / why": coverage[item][1]}
            for item, caption in zip(index["item"], index["caption"])
        ]
    )
