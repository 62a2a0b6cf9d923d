"""The non-contrastive paper's README block (:meth:`papers.noncontrastive.paper.NonContrastive.summary`): Table 6 and
Table 1, reported against reproduced, then the claims, through the core helpers of :mod:`sentemb.report.markdown`.
"""

from __future__ import annotations

import pandas as pd

from sentemb.report.claims_table import markdown_rows
from sentemb.report.markdown import compared, markdown_table, reported_cell


def markdown_summary(tables: dict[str, pd.DataFrame]) -> str:
    """The README's tables (Table 6, Table 1: reported | reproduced | Δ) and the claims, from the reproduced tables."""
    lines = []
    t6 = tables["table6"]
    if not t6.empty:
        header = ["Table 6 (MTEB, main score x 100)", "column", "tasks", "paper row", "reported", "reproduced", "Δ"]
        rows = (
            [r["row"], r["column"], r["covers"], f"{r['reported_group']} {r['reported_row']}", *compared(r)]
            for _, r in t6.iterrows()
        )
        lines += markdown_table(header, rows)
    t1 = tables["table1"]
    if not t1.empty:
        header = ["Table 1 (STS-B dev, Spearman x 100)", "cell", "stat", "trials", "reported (BERT)", "reproduced"]
        rows = (
            [r["group"], r["column"], r["row"], r["n_trials"], reported_cell(r["reported"], 1)]
            + [f"{r['reproduced']:.2f}", reported_cell(r["delta"], signed=True)]
            for _, r in t1.iterrows()
        )
        lines += [""] + markdown_table([*header, "Δ"], rows)
    lines += [""] + markdown_rows(tables["claims"])
    return "\n".join(lines).strip()
