"""The papers' reported numbers, one CSV per table in ``papers/<paper>/reported/``.

Schema (long format, one row per number):

| column      | meaning                                                              |
|-------------|----------------------------------------------------------------------|
| paper       | folder name under papers/ (simcse, simcse_pp, declutr, tncse, noncontrastive) |
| table       | the table as the paper names it ("Table 5")                          |
| group       | the block of the table the row sits in ("Unsupervised models"), or empty |
| row         | the row label as printed (model or setting)                          |
| column      | the column label as printed (task or metric)                         |
| value       | the number as printed (Spearman x 100 for STS)                       |
| split       | dev / test where the paper says                                      |
| aggregation | all / mean / wmean for STS12-16 where the paper says                 |
| metric      | spearman, pearson, accuracy, ...                                     |
| backbone    | the pre-trained encoder of the row                                   |
| note        | anything the reader must know about this number (errors in the paper, ...) |
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sentemb import settings
from sentemb.errors import DataError

COLUMNS = ["paper", "table", "group", "row", "column", "value", "split", "aggregation", "metric", "backbone", "note"]


def reported_dir(paper: str) -> Path:
    return settings.REPO_ROOT / "papers" / paper / "reported"


def load_reported(paper: str, name: str) -> pd.DataFrame:
    """``name`` is the CSV's stem, e.g. ``load_reported("simcse", "table5")``."""
    path = reported_dir(paper) / f"{name}.csv"
    if not path.is_file():
        available = sorted(p.stem for p in reported_dir(paper).glob("*.csv"))
        raise DataError(f"no reported table {path}; available for {paper}: {available}")
    frame = pd.read_csv(path, dtype={"value": float}, keep_default_na=False, na_values={"value": [""]})
    missing = set(COLUMNS) - set(frame.columns)
    if missing:
        raise DataError(f"{path} lacks the columns {sorted(missing)} (schema: {COLUMNS})")
    return frame[COLUMNS]
