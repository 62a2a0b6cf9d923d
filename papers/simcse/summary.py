"""SimCSE's README summary: :func:`markdown_summary` turns the tables of :mod:`papers.simcse.tables` into the
README's fairseq-style Markdown tables (reported | reproduced mean ± std (n) | Δ) and its claims.
"""

from __future__ import annotations

import pandas as pd

from papers.simcse.tables import ABLATIONS, csv_stem
from sentemb.report.claims_table import markdown_rows
from sentemb.report.markdown import compared, markdown_table, reported_cell
from sentemb.report.reproduced import mean_std


def markdown_summary(tables: dict[str, pd.DataFrame]) -> str:
    """The README's fairseq-style tables (reported | reproduced mean ± std (n) | Δ), from the reproduced tables."""
    t5 = tables["table5"]
    t5 = t5[t5["aggregation"].isin(["all", ""])]
    columns = list(dict.fromkeys(t5["column"]))
    rows = []
    for row, group in t5.groupby("row", sort=False):
        cells = group.set_index("column")
        rows.append([row, *(mean_std(cells.loc[c]) for c in columns)])
        if cells["reported"].notna().any():
            rows.append(["reported (BERT-base)", *(reported_cell(cells.loc[c, "reported"]) for c in columns)])
            rows.append(["Δ", *(reported_cell(cells.loc[c, "delta"], signed=True) for c in columns)])
    lines = markdown_table(["Table 5 (test, Spearman x 100; STS12-16 'all')", *columns], rows)
    lines += [""] + markdown_table(
        ["Table 3 (STS-B dev, Spearman x 100)", "reported (BERT-base)", "reproduced", "Δ", "best step per seed"],
        ([r["row"], *compared(r, 1), r["best_step"]] for _, r in tables["table3"].iterrows()),
    )
    ablations = [t for t in ABLATIONS if csv_stem(t) in tables]
    if ablations:
        header = [
            "ablation (dev; STS-B Spearman x 100, D.2's transfer: mean accuracy)",
            "column",
            "reported (BERT-base)",
            "reproduced",
            "Δ",
        ]
        rows = [
            [f"{table}: {r['row']}", r["column"], *compared(r, 1)]
            for table in ablations
            for _, r in tables[csv_stem(table)].iterrows()
        ]
        lines += [""] + markdown_table(header, rows)
    lines += _average_rows(tables)
    lines += [""] + markdown_rows(tables["claims"], skip_not_run=True)
    return "\n".join(lines)


def _average_rows(tables: dict[str, pd.DataFrame]) -> list[str]:
    """The 'Avg.' column of Tables E.1, C.1, B.2 and B.3 as one compact table."""
    rows = []
    for stem, title in (
        ("tablee1", "Table E.1 (transfer test accuracy)"),
        ("tablec1", "Table C.1 (STS, 'all')"),
        ("protocols", "Tables B.2/B.3 (STS under each aggregation)"),
    ):
        frame = tables.get(stem)
        if frame is None or frame.empty:
            continue
        for _, r in frame[frame["column"] == "Avg."].iterrows():
            rows.append([r["table"] if stem == "protocols" else title, r["row"], *compared(r)])
    header = ["table (Avg. of its tasks, test)", "row", "reported (BERT-base)", "reproduced", "Δ"]
    return [""] + markdown_table(header, rows) if rows else []
