"""SimCSE++'s README summary (:class:`papers.simcse_pp.paper.SimCSEpp`): :func:`markdown_summary` prints the
reproduced tables of :mod:`papers.simcse_pp.tables` as fairseq-style Markdown tables (reported | reproduced mean ± std
(n) | Δ) and the claims, through :mod:`sentemb.report.markdown`.
"""

from __future__ import annotations

import pandas as pd

from sentemb.report.claims_table import markdown_rows
from sentemb.report.markdown import compared, markdown_table
from sentemb.report.reproduced import mean_std


def markdown_summary(tables: dict[str, pd.DataFrame]) -> str:
    """The README's fairseq-style tables (reported | reproduced mean ± std (n) | Δ), from the reproduced tables."""
    lines = []
    for key, title in (
        ("table3", "Table 3 (STS test, Spearman x 100, 'all')"),
        ("table1", "Table 1 (STS test)"),
        ("table2", "Table 2 (STS test)"),
        ("table4", "Table 4 (STS test)"),
    ):
        t = tables[key]
        if t.empty:
            continue
        rows = ([r["row"], r["reported_row"] or "–", *compared(r)] for _, r in t[t["column"] == "Avg."].iterrows())
        lines += [""] + markdown_table([f"{title}: Avg. of 7 tasks", "paper row", "reported", "reproduced", "Δ"], rows)
    t5 = tables["table5"]
    if not t5.empty:
        rows = ([r["row"], *compared(r)] for _, r in t5.iterrows())
        lines += [""] + markdown_table(["Table 5 (STS-B dev)", "reported", "reproduced", "Δ"], rows)
    t6 = tables["table6"]
    precision = ", ".join(sorted({p for joined in t6.get("precision", []) for p in str(joined).split(";")}))
    rows = []
    for row, group in t6.groupby("row", sort=False):
        cells = group.set_index("column")
        rep = cells.loc["Training Time", "reported"]
        measured = (mean_std(cells.loc[c]) for c in ("seconds per step", "sentences per second", "Training Time"))
        rows.append([row, *measured, "" if pd.isna(rep) else f"{rep:.0f}"])
    header = [f"Table 6 (this machine, {precision}, batch 64)", "s/step", "sentences/s", "1 epoch of wiki1m (min)"]
    lines += [""] + markdown_table([*header, "reported (min)"], rows)
    lines += [""] + markdown_rows(tables["claims"])
    return "\n".join(lines).strip()
