"""What a paper's report writes and shows, the same way for every paper: the CSV files of its tables, the rows
that were not run, and the reader's wide view of a long table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sentemb.atomic import atomic_write
from sentemb.report.claims_table import for_csv
from sentemb.report.reproduced import mean_std


def csv_float(x: float) -> str:
    """A float cell of a result CSV: 4 decimals, or 4 significant digits below 0.001, where 4 decimals would keep at
    most one significant digit (learning rates such as 3e-05 printed as 0.0000, tiny standard deviations)."""
    return f"{x:.4f}" if x == 0 or abs(x) >= 1e-3 else f"{x:.4g}"


def write_csv_tables(folder: Path, tables: dict[str, pd.DataFrame]) -> None:
    """``<folder>/<name>.csv`` for every table (:func:`csv_float`; the claims' p-values in significant digits), each
    written atomically; a table without columns (nothing to show yet, e.g. before its derived records exist) is not
    written."""
    folder.mkdir(parents=True, exist_ok=True)
    for stem, frame in tables.items():
        if frame.columns.empty:
            continue
        frame = for_csv(frame) if stem == "claims" else frame
        atomic_write(
            folder / f"{stem}.csv", lambda tmp, frame=frame: frame.to_csv(tmp, index=False, float_format=csv_float)
        )


def not_run_rows(records: dict[str, list[dict]], reason: str) -> pd.DataFrame:
    """The grid's rows without records, each with ``reason``."""
    return pd.DataFrame(
        [{"run": name, "status": reason} for name, recs in records.items() if not recs], columns=["run", "status"]
    )


def wide_cells(
    table: pd.DataFrame, aggregation: tuple[str, ...] = ("all", ""), index=("row",), column: str = "column"
) -> pd.DataFrame:
    """Reader's view: one row per ``index``, 'mean ± std (n) [reported]' per ``column``, in the table's order."""
    if table.empty:
        return table
    view = table[table["aggregation"].isin(aggregation)].copy()
    view["cell"] = [
        mean_std(r) + (f" [{r['reported']:.2f}]" if pd.notna(r["reported"]) else "") for _, r in view.iterrows()
    ]
    out = view.pivot_table(index=list(index), columns=column, values="cell", aggfunc="first", sort=False)
    return out.reindex(columns=list(dict.fromkeys(view[column])))
