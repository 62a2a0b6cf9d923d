"""DeCLUTR's README summary: the fairseq-style Markdown tables (reported | reproduced mean ± std (n) | Δ) of the
reproduced tables (``tables.py``), the figures' points as compact tables, and the claims.
"""

from __future__ import annotations

import pandas as pd

from papers.declutr.experiments import (
    FIGURE2,
    FIGURE3_OBJECTIVES,
    FIGURE3_SHARES,
    FIGURES1_MEMORY,
    FIGURES1_PROJECTIONS,
    figure2_run,
)
from papers.declutr.tables import DEV_SCORE, N_DOWNSTREAM
from sentemb.report.claims_table import markdown_rows
from sentemb.report.markdown import markdown_table, reported_cell
from sentemb.report.reproduced import mean_std


def _markdown_table(header: list[str], rows: list) -> list[str]:
    """A markdown table after a blank line (:func:`markdown_table`); none without rows."""
    return ["", *markdown_table(header, rows)] if rows else []


def markdown_summary(tables: dict[str, pd.DataFrame]) -> str:
    """The README's fairseq-style tables (reported | reproduced mean ± std (n) | Δ), from the reproduced tables."""
    t1, s3, s6 = tables["table1"], tables["tableS3"], tables["tableS6"]
    lines = [
        *_markdown_table(
            [
                f"Table 1: Downstream ({N_DOWNSTREAM} of 18 tasks, test)",
                "paper row",
                "reported (18 tasks)",
                f"reported, same {N_DOWNSTREAM} tasks",
                "reproduced",
                "Δ",
            ],
            [
                (
                    r["row"],
                    r["reported_row"],
                    reported_cell(r["reported"]),
                    reported_cell(r["reported_16"]),
                    mean_std(r),
                    reported_cell(r["delta"], signed=True),
                )
                for _, r in t1.iterrows()
            ],
        ),
        *_markdown_table(
            ["Table S3 (test)", "task", "metric", "reported", "reproduced", "Δ"],
            [
                (
                    r["row"],
                    r["column"],
                    r["metric"],
                    reported_cell(r["reported"]),
                    mean_std(r),
                    reported_cell(r["delta"], signed=True),
                )
                for _, r in s3.iterrows()
            ],
        ),
        *_markdown_table(
            [
                "Table S6: dev average (no Δ: the task sets differ)",
                "paper row",
                "reported (17 tasks)",
                "reproduced",
                "tasks",
            ],
            [
                (
                    r["row"],
                    r["reported_row"],
                    reported_cell(r["reported"]),
                    mean_std(r),
                    "/".join(sorted(set(str(r["n_tasks"]).split(";")))),
                )
                for _, r in s6.iterrows()
            ],
        ),
        *figure_markdown(tables["figures"]),
        "",
        *markdown_rows(tables["claims"], skip_not_run=True),
    ]
    return "\n".join(lines).strip()


def figure_markdown(points: pd.DataFrame) -> list[str]:
    """The figures' points as compact tables (STS-B dev Spearman x 100, one seed each; the paper prints no values)."""
    if points.empty:
        return []
    score = dict(zip(points["run"], points["dev_score"]))

    def cell(run: str) -> str:
        return reported_cell(score.get(run))

    taus, dims, queues = FIGURE2["temperature"], FIGURES1_PROJECTIONS["dim"], FIGURES1_MEMORY["queue"]
    return [
        "",
        f"Figures: each point is one run (seed 42), scored by {DEV_SCORE}; the paper prints its figures' values "
        "only as plots, so there is no reported column."
        + (f" The untrained backbone scores {score['transformer']:.2f}." if "transformer" in score else ""),
        *_markdown_table(
            [
                "Figure 2 (a, b): A, P (NT-Xent exact, Eq. 2; not the official code's capped form)",
                *(f"tau = {t:g}" for t in taus),
            ],
            [
                (f"A = {a}, P = {p}", *(cell(figure2_run(a, p, t)) for t in taus))
                for a in FIGURE2["num_anchors"]
                for p in FIGURE2["num_positives"]
            ],
        ),
        *_markdown_table(
            [
                "Figure 2 (c): positive views",
                "any (overlapping, adjacent, subsumed)",
                "adjacent",
                "subsumed (official length)",
            ],
            [("A = P = 2, tau = 0.05", cell("declutr"), cell("views_adjacent"), cell("views_subsumed"))],
        ),
        *_markdown_table(
            ["Figure 3: objective", *(f"{s} % of the steps" for s in FIGURE3_SHARES)],
            [(objective, *(cell(f"{objective}_f{s}") for s in FIGURE3_SHARES)) for objective in FIGURE3_OBJECTIVES],
        ),
        *_markdown_table(
            [f"Figure S1 (a): projection head (none: {cell('declutr')})", *(f"width {d}" for d in dims)],
            [(kind, *(cell(f"proj_{kind}_{d}") for d in dims)) for kind in FIGURES1_PROJECTIONS["kind"]],
        ),
        *_markdown_table(
            ["Figure S1 (b): memory bank, tau", *(f"queue {q}" for q in queues)],
            [(f"tau = {t:g}", *(cell(f"xbm_{q}_t{t:g}") for q in queues)) for t in FIGURES1_MEMORY["temperature"]],
        ),
    ]
