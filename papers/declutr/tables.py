"""DeCLUTR's tables from run records (run name -> one record per seed; nothing trains): pure functions returning
DataFrames, and the constants they use.

Tables: long DataFrames, the reproduced mean ± std over seeds next to the reported value, on DeCLUTR's protocol
(original SentEval, Supp. §3.2's averaging), compared with the paper's DistilRoBERTa rows, the 6-layer models closest
to the small profile's MiniLM. The figures' table (``figure_points``) and claim cells (``figure_cells``): each grid
point scored by its STS-B dev Spearman (see ``experiments.py``).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pandas as pd

from papers.declutr import NAME
from papers.declutr.experiments import (
    FIGURE2,
    FIGURE3_RUNS,
    FIGURE3_SHARES,
    FIGURES1_MEMORY,
    FIGURES1_PROJECTIONS,
    figure2_run,
)
from sentemb.profiles import get_profile
from sentemb.report.cell import CELL_KEYS, Cell
from sentemb.report.reported import load_reported
from sentemb.report.reproduced import aggregate_seeds, join, trace

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
    """The rows ``cells(record, row)`` gives for every seed's record of the ``ROWS`` runs (``row``: the run's row, a
    :class:`Cell`), aggregated over the seeds and joined to the paper's ``table`` metric by metric (MRPC has two cells
    under one column); empty without records."""
    per_seed = pd.DataFrame(
        [
            seed_row
            for name in ROWS
            for record in records.get(name, [])
            for seed_row in cells(
                record, Cell(NAME, table, row_label(name, record["profile"]), name, "Unsupervised", ROWS[name][1])
            )
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
    def per_task(record: dict, row: Cell) -> list[dict]:
        return [
            row.at(column=column, split="test", aggregation=aggregation, metric=metric).seed(value, trace(record))
            for column, aggregation, metric, value in task_scores(record)
        ]

    return _reproduced(records, "Table S3", per_task)


def table1(records: dict[str, list[dict]]) -> pd.DataFrame:
    """Downstream average over the 16 offline tasks; ``reported`` is the paper's Downstream (18 tasks) and
    ``reported_16`` the paper's own per-task numbers averaged over the same 16 tasks; Δ against ``reported_16``."""

    def downstream(record: dict, row: Cell) -> list[dict]:
        cell = row.at(column="Downstream", split="test", metric="other")
        return [cell.seed(downstream_average(task_scores(record)), trace(record))]

    table = _reproduced(records, "Table 1", downstream)
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

    def dev(record: dict, row: Cell) -> list[dict]:
        average, n_tasks = dev_average(record)
        cell = row.at(column="Downstream (w/o SNLI)", split="dev", metric="other")
        return [cell.seed(average, trace(record), n_tasks=n_tasks)]

    table = _reproduced(records, "Table S6", dev, extra=("n_tasks",))
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
    """The figures' claim cells (``figure_only`` claims in ``claims.yaml``), in the result tables' cell columns
    (``sentemb.report.cell``; ``run``: the cell's runs): a cell's ``values`` are the points the paper plots as one
    distribution (seed 42 each; "A = 2": every (P, tau) point at A = 2), each scored by its STS-B dev Spearman; a
    figure's default setting (any view, no head, no memory bank) is the ``declutr`` run with all its seeds. A cell
    with a missing run is left out (its claims are *not run*)."""

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
        found = [r for run in runs for r in (records[run] if all_seeds else records[run][:1])]
        values = [dev_score(r) for r in found]
        cell = Cell(NAME, table, row, ";".join(runs), reported_row=row, column="dev score", split="dev")
        rows.append(
            {
                **asdict(cell),
                "reproduced": float(np.mean(values)),
                "values": ";".join(f"{v:.6f}" for v in values),
                "deterministic": False,
                "run_ids": ";".join(r["run_id"] for r in found),
                "profile": found[0]["profile"],
            }
        )
    return pd.DataFrame(rows, columns=[*CELL_KEYS, "reproduced", "values", "deterministic", "run_ids", "profile"])
