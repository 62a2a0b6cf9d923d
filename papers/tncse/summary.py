"""TNCSE's README summary (the hook :meth:`papers.tncse.paper.TNCSE.summary` calls it): the fairseq-style Markdown
tables (reported | reproduced mean ± std (n) | Δ) built from the tables of ``tables.py`` with the core helpers of
:mod:`sentemb.report.markdown`, and the claims' rows.
"""

from __future__ import annotations

import pandas as pd

from papers.tncse.tables import table2_summary
from sentemb.report.claims_table import markdown_rows
from sentemb.report.markdown import compared, markdown_table, reported_cell


def markdown_summary(tables: dict[str, pd.DataFrame]) -> str:
    """The README's fairseq-style tables (reported | reproduced mean ± std (n) | Δ), from the reproduced tables."""
    lines = []
    t1 = tables["table1"]
    if not t1.empty:
        header = ["Table 1: Avg. of 7 STS (test, 'all')", "paper row (BERT-base)", "reported", "reproduced", "Δ"]
        rows = ([r["row"], r["reported_row"] or "–", *compared(r)] for _, r in t1[t1["column"] == "Avg."].iterrows())
        lines += [""] + markdown_table(header, rows)
    lines += _table2_markdown(tables["table2"])
    for key, title in (
        ("table3", "Table 3"),
        ("table4", "Table 4"),
        ("table5", "Table 5 (STS-B test)"),
        ("table6", "Table 6"),
    ):
        t = tables[key]
        if t.empty:
            continue
        rows = (
            [r["row"], r["our_column"] if pd.notna(r.get("our_column")) else r["column"], *compared(r)]
            for _, r in t.iterrows()
        )
        lines += [""] + markdown_table([title, "column", "reported", "reproduced", "Δ"], rows)
    lines += [""] + markdown_rows(tables["claims"])
    return "\n".join(lines).strip()


def _table2_markdown(t2: pd.DataFrame) -> list[str]:
    """Table 2's rows as the README shows them: the mean over the mirror's tasks of each paper row (one seed), how
    many of the paper's tasks that is, and no Δ, since the paper averages other (and more) tasks."""
    summary = table2_summary(t2)
    if summary.empty:
        return []
    rows = []
    for _, r in summary.iterrows():
        of = r["paper_row"].split("(")[1].split()[0] if "(" in r["paper_row"] else "?"
        cells = t2[(t2["paper_row"] == r["paper_row"]) & (t2["method"] == r["method"])]
        metrics = ", ".join(sorted(set(cells["main_metric"])))
        tasks = f"{r['n_tasks']} of {of}: {r['tasks'].replace(';', ', ')} ({metrics})"
        rows.append([r["paper_row"], r["method"], tasks, reported_cell(r["reported"]), f"{r['value']:.2f} (1)"])
    header = ["Table 2 (MTEB, seed 42)", "method", "tasks here", "reported (paper's tasks)"]
    return [""] + markdown_table([*header, "reproduced (mirror's tasks)"], rows)
