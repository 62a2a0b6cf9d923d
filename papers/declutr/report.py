"""DeCLUTR's tables, figures and README summary from run records (run name -> one record per seed; nothing trains).

Tables: long DataFrames, the reproduced mean ± std over seeds next to the reported value, on DeCLUTR's protocol
(original SentEval, Supp. §3.2's averaging), compared with the paper's DistilRoBERTa rows, the 6-layer models closest
to the small profile's MiniLM. Figures: each grid point scored by its STS-B dev Spearman (see ``experiments.py``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from papers.declutr import NAME
from papers.declutr.experiments import (
    FIGURE2,
    FIGURE3_OBJECTIVES,
    FIGURE3_RUNS,
    FIGURE3_SHARES,
    FIGURES1_MEMORY,
    FIGURES1_PROJECTIONS,
    figure2_run,
)
from sentemb.models.backbone import MINILM, RAW_BERT
from sentemb.plots import style
from sentemb.profiles import Profile, get_profile
from sentemb.report.claims_table import markdown_rows
from sentemb.report.markdown import markdown_table, reported_cell
from sentemb.report.reported import load_reported
from sentemb.report.reproduced import aggregate_seeds, join, mean_std, trace

SUBSTITUTE_BACKBONES = {  # by the profile's backbone: how a figure's caption names it (none for smoke's tiny random
    MINILM: "all-MiniLM-L6-v2 (already a trained sentence encoder)",  # BERT, whose figures only test the code, or for
    RAW_BERT: "the archive's MLM-only BERT (4 x 256)",  # the paper's own on full)
}


def substitutes(profile: Profile) -> str:
    """What a figure's caption says the profile substituted ("" where it names no substitute backbone)."""
    backbone = SUBSTITUTE_BACKBONES.get(profile.backbone)
    if backbone is None:
        return ""
    return (
        f"{profile.name} profile: {backbone} for DistilRoBERTa, WikiText-2 articles for OpenWebText, spans of 16-64 "
        "tokens for 32-512, 60 steps of 16 documents; "
    )


DEV_SCORE = "STS-B dev Spearman x 100 (cosine), not the SentEval dev average of the paper's figures"
ROWS = {  # run -> (our row label, {backbone} and {profile} from the record's profile; the paper's row)
    "transformer": ("{backbone}, not trained (mean pooling)", "Transformer-small"),
    "declutr": ("DeCLUTR ({backbone}, {profile} profile)", "DeCLUTR-small (ours)"),
}


def row_label(name: str, profile: str) -> str:
    backbone = get_profile(profile).backbone_label or "the paper's backbone"
    return ROWS[name][0].format(backbone=backbone, profile=profile)


ACCURACY_TASKS = {
    "CR": "CR",
    "MR": "MR",
    "MPQA": "MPQA",
    "SUBJ": "SUBJ",
    "SST2": "SST2",
    "SST5": "SST5",
    "TREC": "TREC",
    "SICKEntailment": "SICK-E",
}
REGRESSOR_TASKS = {"SICKRelatedness": "SICK-R", "STSBenchmark": "STS Benchmark"}
STS_SUBSETS = ("STS12", "STS13", "STS14", "STS15", "STS16")
NOT_OFFLINE = ("SNLI", "Caption-Image Retrieval")
N_DOWNSTREAM = 16  # of the paper's 18: SNLI and COCO caption-image retrieval are not offline


# -- per-record scores ----------------------------------------------------------------------------------------------


def task_scores(record: dict) -> list[tuple[str, str, str, float]]:
    """(column, aggregation, metric, value x 100) of every downstream task of Table S3 the record scored."""
    transfer, sts = record["metrics"]["transfer"]["tasks"], record["metrics"]["sts_senteval"]["tasks"]
    out = [
        (column, "", "accuracy", float(transfer[task]["acc"]))
        for task, column in ACCURACY_TASKS.items()
        if transfer.get(task, {}).get("acc") is not None
    ]
    if transfer.get("MRPC", {}).get("acc") is not None:
        out += [
            ("MRPC", "", metric, float(transfer["MRPC"][key])) for metric, key in (("accuracy", "acc"), ("f1", "f1"))
        ]
    return (
        out
        + [(column, "", "spearman", 100 * sts[task]["spearman"]) for task, column in REGRESSOR_TASKS.items()]
        + [(task, "mean", "spearman", 100 * sts[task]["aggregate"]["spearman"]["mean"]) for task in STS_SUBSETS]
    )


def downstream_average(scores: list[tuple[str, str, str, float]]) -> float:
    """Supp. §3.2's average: accuracy, MRPC = mean of accuracy and F1, Spearman for SICK-R, STS-B and STS12-16."""
    per_task: dict[str, list[float]] = {}
    for column, _, _, value in scores:
        per_task.setdefault(column, []).append(value)
    return float(np.mean([np.mean(v) for v in per_task.values()]))


def dev_average(record: dict) -> tuple[float, int]:
    """(mean, number of tasks) of the SentEval dev scores: classification devacc, regressor dev Pearson x 100."""
    transfer, sts = record["metrics"]["transfer"]["tasks"], record["metrics"]["sts_senteval"]["tasks"]
    values = [float(r["devacc"]) for r in transfer.values() if r.get("devacc") is not None]
    values += [
        100 * sts[task]["devpearson"] for task in REGRESSOR_TASKS if sts.get(task, {}).get("devpearson") is not None
    ]
    return float(np.mean(values)), len(values)


def reported_average(row: str, exclude: tuple[str, ...] = NOT_OFFLINE) -> float | None:
    """The paper's own Table S3 numbers of ``row`` averaged over its tasks but ``exclude`` (Supp. §3.2's rule): by
    default the 16 offline tasks, the reported value on the same task set as the reproduced one. Over all 18 tasks
    it gives back the paper's Table 1 Downstream (a test checks it)."""
    reported = load_reported(NAME, "tableS3")
    cells = reported[(reported["row"] == row) & ~reported["column"].isin(exclude)]
    if cells.empty:
        return None
    return downstream_average(
        [(r["column"], r["aggregation"], r["metric"], float(r["value"])) for _, r in cells.iterrows()]
    )


# -- tables ---------------------------------------------------------------------------------------------------------


def _reproduced(records: dict[str, list[dict]], table: str, cells, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """The cells ``cells(record)`` lists for every seed's record of the ``ROWS`` runs, aggregated over the seeds and
    joined to the paper's ``table`` metric by metric (MRPC has two cells under one column); empty without records."""
    per_seed = pd.DataFrame(
        [
            {
                "paper": NAME,
                "table": table,
                "row": row_label(name, record["profile"]),
                "run": name,
                "reported_group": "Unsupervised",
                "reported_row": ROWS[name][1],
                **cell,
                **trace(record),
            }
            for name in ROWS
            for record in records.get(name, [])
            for cell in cells(record)
        ]
    )
    if per_seed.empty:
        return per_seed
    reproduced, reported = aggregate_seeds(per_seed, extra=extra), load_reported(NAME, table)
    return pd.concat(
        [
            join(reproduced[reproduced["metric"] == metric], reported[reported["metric"] == metric])
            for metric in reproduced["metric"].unique()
        ],
        ignore_index=True,
    )


def tableS3(records: dict[str, list[dict]]) -> pd.DataFrame:
    return _reproduced(
        records,
        "Table S3",
        lambda record: [
            {"column": column, "split": "test", "aggregation": aggregation, "metric": metric, "value": value}
            for column, aggregation, metric, value in task_scores(record)
        ],
    )


def table1(records: dict[str, list[dict]]) -> pd.DataFrame:
    """Downstream average over the 16 offline tasks; ``reported`` is the paper's Downstream (18 tasks) and
    ``reported_16`` the paper's own per-task numbers averaged over the same 16 tasks; Δ against ``reported_16``."""
    table = _reproduced(
        records,
        "Table 1",
        lambda record: [
            {
                "column": "Downstream",
                "split": "test",
                "aggregation": "",
                "metric": "other",
                "value": downstream_average(task_scores(record)),
            }
        ],
    )
    if table.empty:
        return table
    table["reported_16"] = [reported_average(r) for r in table["reported_row"]]
    table["delta"] = table["reproduced"] - table["reported_16"]
    table["note"] = (
        f"reproduced over {N_DOWNSTREAM} of 18 tasks (no SNLI, no COCO); 'reported' averages 18, "
        f"'reported_16' the paper's Table S3 numbers over the same {N_DOWNSTREAM}"
    )
    return table


def tableS6(records: dict[str, list[dict]]) -> pd.DataFrame:
    """The dev average over the tasks with a SentEval dev score, next to the paper's dev average without SNLI (17
    tasks): no Δ, the task sets differ."""
    table = _reproduced(
        records,
        "Table S6",
        lambda record: [
            {
                "column": "Downstream (w/o SNLI)",
                "split": "dev",
                "aggregation": "",
                "metric": "other",
                **dict(zip(("value", "n_tasks"), dev_average(record))),
            }
        ],
        extra=("n_tasks",),
    )
    if table.empty:
        return table
    table["delta"] = np.nan
    table["note"] = "reproduced: mean over the tasks with a dev score (see n_tasks); reported: 17 tasks"
    return table


def tableS2(derived_records: dict) -> pd.DataFrame:
    """Table S2: the spans of the headline run's sampler, read from their derived record
    (:mod:`papers.declutr.span_examples`); empty when the record is missing."""
    found = derived_records.get("tableS2")
    return pd.DataFrame(found["result"]["rows"]) if found else pd.DataFrame()


def dev_score(record: dict) -> float:
    """The figures' score of a record: its kept checkpoint's STS-B dev Spearman x 100 (cosine)."""
    return 100 * record["metrics"]["stsb_dev_spearman"]


POINT_SETTINGS = (
    "num_anchors",
    "num_positives",
    "temperature",
    "positive_views",
    "projection",
    "projection_dim",
    "memory_size",
)  # a figure point's objective parameters


def figure_points(records: dict[str, list[dict]]) -> pd.DataFrame:
    """One row per figure grid point with a record: its settings and its dev score (seed 42); and the untrained
    backbone (run ``transformer``, objective "not trained"), the figures' reference line."""
    rows = []
    if records.get("transformer"):
        record = records["transformer"][0]
        rows.append(
            {
                "run": "transformer",
                "run_id": record["run_id"],
                "objective": "not trained",
                "share": 0,
                "steps": 0,
                "dev_score": dev_score(record),
            }
        )
    for name, recs in records.items():
        if not recs or recs[0]["spec"]["objective"] != "declutr":
            continue
        record = recs[0]
        params = record["spec"]["objective_params"]
        rows.append(
            {
                "run": name,
                "run_id": record["run_id"],
                **{key: params[key] for key in POINT_SETTINGS},
                "objective": FIGURE3_RUNS.get(name, ("both",))[0],
                "share": FIGURE3_RUNS.get(name, ("", 100))[1],
                "steps": record["spec"]["steps"],
                "dev_score": dev_score(record),
            }
        )
    points = pd.DataFrame(rows)
    for column in ("num_anchors", "num_positives", "projection_dim", "memory_size", "share", "steps"):
        if column in points:  # integers, also next to the untrained row's empty settings (axis labels "1", not "1.0")
            points[column] = points[column].astype("Int64")
    return points


def figure_cells(records: dict[str, list[dict]]) -> pd.DataFrame:
    """The figures' claim cells (``figure_only`` claims in ``claims.yaml``), in the claims' long format: a cell's
    ``values`` are the points the paper plots as one distribution (seed 42 each; "A = 2": every (P, tau) point at
    A = 2), each scored by its STS-B dev Spearman; a figure's default setting (any view, no head, no memory bank) is
    the ``declutr`` run with all its seeds. A cell with a missing run is left out (its claims are *not run*)."""

    def grid_runs(a: int) -> list[str]:
        return [figure2_run(a, p, t) for p in FIGURE2["num_positives"] for t in FIGURE2["temperature"]]

    cells = {
        ("Figure 2", "A = 1"): (grid_runs(1), False),
        ("Figure 2", "A = 2"): (grid_runs(2), False),
        ("Figure 2", "adjacent"): (["views_adjacent"], True),
        ("Figure 2", "subsumed"): (["views_subsumed"], True),
        ("Figure 2", "adjacent, subsumed or overlapping"): (["declutr"], True),
        ("Figure 3", "contrastive"): ([f"contrastive_f{s}" for s in FIGURE3_SHARES], False),
        ("Figure 3", "MLM"): ([f"mlm_f{s}" for s in FIGURE3_SHARES], False),
        ("Figure 3", "both"): ([f"both_f{s}" for s in FIGURE3_SHARES], False),
        ("Figure S1", "no projection head"): (["declutr"], True),
        ("Figure S1", "non-linear (ReLU) projection head"): (
            [f"proj_mlp_{d}" for d in FIGURES1_PROJECTIONS["dim"]],
            False,
        ),
        ("Figure S1", "no memory bank"): (["declutr"], True),
        ("Figure S1", "memory bank"): (
            [f"xbm_{q}_t{t:g}" for q in FIGURES1_MEMORY["queue"] for t in FIGURES1_MEMORY["temperature"]],
            False,
        ),
    }
    rows = []
    for (table, row), (runs, all_seeds) in cells.items():  # all_seeds: every seed's record, else seed 42's
        if any(not records.get(run) for run in runs):
            continue
        cell = [r for run in runs for r in (records[run] if all_seeds else records[run][:1])]
        values = [dev_score(r) for r in cell]
        rows.append(
            {
                "table": table,
                "group": "",
                "row": row,
                "column": "dev score",
                "split": "dev",
                "aggregation": "",
                "metric": "",
                "value": float(np.mean(values)),
                "values": ";".join(f"{v:.6f}" for v in values),
                "deterministic": False,
                "run_ids": ";".join(r["run_id"] for r in cell),
                "profile": cell[0]["profile"],
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "table",
            "group",
            "row",
            "column",
            "split",
            "aggregation",
            "metric",
            "value",
            "values",
            "deterministic",
            "run_ids",
            "profile",
        ],
    )


# -- figures --------------------------------------------------------------------------------------------------------


def _save(fig, name: str, profile, folder: Path, points: pd.DataFrame) -> list[Path]:
    """Saved in ``folder`` with a caption naming the profile, its substitutes, the score, and where the points' run
    ids are."""
    profile = get_profile(profile)
    fig.tight_layout()
    return style.save(
        fig,
        folder,
        name,
        f"profile {profile.name}; {substitutes(profile)}y = {DEV_SCORE}; "
        f"{points['run'].nunique()} runs, one seed each: their run ids are in "
        f"results/declutr/{profile.name}/figures.csv",
    )


def _styled_figure(ncols: int, figsize: tuple[float, float], **kwargs):
    """(seaborn, figure, axes) of the archive's style; the plotting libraries are imported only to draw."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    return (sns, *plt.subplots(1, ncols, figsize=figsize, **kwargs))


def _untrained_line(axes, points: pd.DataFrame) -> None:
    """The untrained backbone's STS-B dev score as a dotted line on every panel (does training help at all?)."""
    base = points[points["run"] == "transformer"]
    if base.empty:
        return
    for ax in axes:
        ax.axhline(base["dev_score"].iloc[0], color="0.4", linestyle=":", label="not trained")


def figure2(points: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure 2: the dev score over the A x P x tau grid by A (a) and by P (b), and by positive view (c)."""
    grid_points = points[
        points["run"].isin(
            [
                figure2_run(a, p, t)
                for a in FIGURE2["num_anchors"]
                for p in FIGURE2["num_positives"]
                for t in FIGURE2["temperature"]
            ]
        )
    ]
    views = points[points["run"].isin(["declutr", "views_adjacent", "views_subsumed"])]
    sns, fig, axes = _styled_figure(3, (10, 3.4), sharey=True)
    sns.boxplot(data=grid_points, x="num_anchors", y="dev_score", ax=axes[0], color=style.PALETTE[0])
    # jitter=False, dodge=True: seaborn jitters with numpy's global RNG, so a jittered figure changes at every run
    sns.stripplot(
        data=grid_points,
        x="num_anchors",
        y="dev_score",
        hue="temperature",
        ax=axes[0],
        palette="deep",
        jitter=False,
        dodge=True,
    )
    sns.boxplot(data=grid_points, x="num_positives", y="dev_score", ax=axes[1], color=style.PALETTE[1])
    sns.stripplot(
        data=grid_points,
        x="num_positives",
        y="dev_score",
        hue="temperature",
        ax=axes[1],
        palette="deep",
        legend=False,
        jitter=False,
        dodge=True,
    )
    sns.stripplot(
        data=views, x="positive_views", y="dev_score", ax=axes[2], color=style.PALETTE[2], size=8, jitter=False
    )
    _untrained_line(axes, points)
    axes[2].legend(fontsize=8)
    axes[0].set_ylabel("STS-B dev Spearman x 100")
    for ax, title, label in zip(
        axes,
        ("(a) anchors A", "(b) positives P", "(c) positive views (A = P = 2)"),
        ("anchors per document A", "positives per anchor P", "positive view"),
    ):
        ax.set(title=title, xlabel=label)
    fig.suptitle("Figure 2: span sampling (one seed per point; NT-Xent in its exact form, Eq. 2)")
    return _save(fig, "figure2_sampling", profile, folder, pd.concat([grid_points, views]))


def figure3(points: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure 3: the dev score of contrastive only, MLM only and both against the share of the training steps."""
    shares = points[points["run"].isin(list(FIGURE3_RUNS))]
    sns, fig, ax = _styled_figure(1, (5.2, 3.6))
    sns.lineplot(data=shares, x="share", y="dev_score", hue="objective", marker="o", ax=ax)
    _untrained_line([ax], points)
    ax.legend(fontsize=8)
    ax.set(
        xlabel="share of the training steps (%)",
        ylabel="STS-B dev Spearman x 100",
        title="Figure 3: objective and training-set size (one model size)",
    )
    return _save(fig, "figure3_objective_size", profile, folder, shares)


def figureS1(points: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure S1: (a) projection heads by output width, against none; (b) memory banks by queue size per tau."""
    heads = points[points["run"].str.startswith("proj_")]
    banks = points[points["run"].str.startswith("xbm_")]
    base = points[points["run"] == "declutr"]
    sns, fig, axes = _styled_figure(2, (10, 3.6), sharey=True)
    sns.lineplot(data=heads, x="projection_dim", y="dev_score", hue="projection", marker="o", ax=axes[0])
    sns.lineplot(data=banks, x="memory_size", y="dev_score", hue="temperature", marker="o", ax=axes[1], palette="deep")
    _untrained_line(axes, points)
    for ax in axes:
        if not base.empty:
            ax.axhline(base["dev_score"].iloc[0], color="k", linestyle="--", label="none (DeCLUTR)")
        ax.legend(fontsize=8)
    axes[0].set(
        xlabel="projection output width",
        ylabel="STS-B dev Spearman x 100",
        title=f"(a) projection heads ({', '.join(FIGURES1_PROJECTIONS['kind'])})",
    )
    axes[1].set(xlabel="queue size", title=f"(b) memory bank, tau in {FIGURES1_MEMORY['temperature']}")
    fig.suptitle("Figure S1 (one seed per point)")
    return _save(fig, "figureS1_projection_memory", profile, folder, pd.concat([heads, banks, base]))


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
