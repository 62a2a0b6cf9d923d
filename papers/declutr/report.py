"""DeCLUTR's tables and figures from run records: what the notebook calls.

Each table function takes the records of :func:`papers.declutr.experiments.grid` (run name -> one record per seed;
an empty list for a row that was not run) and returns a long DataFrame: the reproduced mean ± std over seeds next to
the reported value, every seed's value and run id kept. The tables are on DeCLUTR's protocol (the original SentEval:
STS12-16 "mean", a trained regressor for STS-B and SICK-R, logistic regression for the classification tasks; Supp.
§3.2's averaging), compared with the paper's DistilRoBERTa rows ("Transformer-small", "DeCLUTR-small"), the 6-layer
models closest to the small profile's 6-layer MiniLM. The figures score each grid point by its STS-B dev Spearman
(see ``experiments.py``). Nothing here trains.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd

from papers.declutr.experiments import (FIGURE2, FIGURE3_OBJECTIVES, FIGURE3_RUNS, FIGURE3_SHARES, FIGURES1_MEMORY,
                                       FIGURES1_PROJECTIONS, figure2_run, grid)
from sentemb import settings
from sentemb.augment.span_sampler import sample_anchor_positive_spans
from sentemb.data.documents import load_documents, long_enough, tokenise
from sentemb.plots import style
from sentemb.report.claims import evaluate_all, from_reproduced, markdown_rows
from sentemb.report.grid_records import collect_records
from sentemb.report.provenance_table import provenance_table
from sentemb.report.reported import coverage_table, load_reported
from sentemb.report.reproduced import aggregate_seeds, join, mean_std, trace
from sentemb.report.views import not_run_rows, wide_cells, write_csv_tables

PAPER = "declutr"
NOT_RUN_BUDGET = "not run: outside the small profile's budget (./run_all.sh --paper declutr --extended)"
SUBSTITUTES = ("small profile: all-MiniLM-L6-v2 (already a trained sentence encoder) for DistilRoBERTa, WikiText-2 "
               "articles for OpenWebText, spans of 16-64 tokens for 32-512, 60 steps of 16 documents")
DEV_SCORE = "STS-B dev Spearman x 100 (cosine), not the SentEval dev average of the paper's figures"
ROWS = {  # run -> (our row label, the paper's row it is compared with)
    "transformer": ("all-MiniLM-L6-v2, not trained (mean pooling)", "Transformer-small"),
    "declutr": ("DeCLUTR (all-MiniLM-L6-v2, small profile)", "DeCLUTR-small (ours)"),
}
ACCURACY_TASKS = {"CR": "CR", "MR": "MR", "MPQA": "MPQA", "SUBJ": "SUBJ", "SST2": "SST2", "SST5": "SST5",
                  "TREC": "TREC", "SICKEntailment": "SICK-E"}
REGRESSOR_TASKS = {"SICKRelatedness": "SICK-R", "STSBenchmark": "STS Benchmark"}
STS_SUBSETS = ("STS12", "STS13", "STS14", "STS15", "STS16")
NOT_OFFLINE = ("SNLI", "Caption-Image Retrieval")
N_DOWNSTREAM = 16  # of the paper's 18: SNLI and COCO caption-image retrieval are not offline
NOT_TESTABLE = {
    "declutr-base-highest-average": "needs the probing tasks (not offline) and the baselines (not run)",
    "declutr-base-beats-best-supervised-average": "needs the probing tasks and InferSent (not offline)",
    "declutr-base-boosts-downstream": "RoBERTa-base is not offline (the small profile's row stands for DeCLUTR-small)",
    "declutr-base-maintains-probing": "the probing tasks are not offline",
    "declutr-small-maintains-probing": "the probing tasks are not offline",
    "use-better-downstream": "USE is not offline",
    "infersent-only-strong-existing-prober": "the probing tasks and the baselines are not offline",
    "sentence-transformers-probing-drop-roberta-base": "the probing tasks and Sentence Transformers' models are not offline",
    "sentence-transformers-probing-drop-at-least-6": "the probing tasks and Sentence Transformers' models are not offline",
    "nsp-sop-not-better-than-neither": "BERT, ALBERT and RoBERTa checkpoints are not offline",
    "mean-pooling-beats-cls": "BERT-base is not offline",
    "cls-fails-to-beat-bow": "ALBERT and fastText are not offline",
    "snli-control-gap-to-use-shrinks": "SNLI and USE are not offline",
    "snli-control-gap-to-infersent-grows": "SNLI and InferSent are not offline",
}

COVERAGE = {
    "Table 1": ("partly", f"Downstream over {N_DOWNSTREAM} of the 18 tasks (SNLI and COCO are not offline) for the "
                "backbone and DeCLUTR, 3 seeds; Probing not run (no probing data offline); the baselines are not run"),
    "Table S1": ("not run", "BERT, ALBERT and RoBERTa checkpoints are not offline"),
    "Table S2": ("reproduced", "spans drawn by the archive's sampler from the mirror's WikiText-2 articles "
                 "(results/declutr/<profile>/tableS2.csv)"),
    "Table S3": ("partly", f"{N_DOWNSTREAM} of the 18 downstream tasks on DeCLUTR's protocol (SNLI and COCO are not "
                 "offline); the backbone and DeCLUTR rows only"),
    "Table S4": ("not run", "the 10 probing tasks' data are not offline"),
    "Table S5": ("not run", "Sentence Transformers' *-nli-mean-tokens models and the probing data are not offline"),
    "Table S6": ("partly", "dev average over the 11 tasks with a SentEval dev score (9 classification devacc, STS-B "
                 "and SICK-R regressor dev Pearson; STS12-16 have no dev split), SNLI not offline"),
    "Figure 1": ("not applicable", "a schematic without data"),
    "Figure 2": ("reproduced (extended rows)", f"A x P x tau grid and positive views; each point scored by {DEV_SCORE}"),
    "Figure 3": ("partly (extended rows)", f"contrastive / MLM / both at 25, 50 and 100 % of the steps, one model size; "
                 f"{DEV_SCORE}"),
    "Figure S1": ("reproduced (extended rows)", f"linear and ReLU projection heads of 128-512, memory banks of 128-512 "
                  f"x 4 temperatures; {DEV_SCORE}"),
    "Text": ("not applicable", "hyperparameters from the text: used by papers/declutr/experiments.py"),
}


def coverage() -> pd.DataFrame:
    """Every table and figure of the paper with what this archive does with it and why."""
    return coverage_table(PAPER, COVERAGE)


def output_dirs(profile: str) -> tuple[Path, Path]:
    return settings.paper_output_dirs(PAPER, profile)


def collect(profile: str, run_missing: bool = True, extended: bool = False, progress: bool = True) -> dict[str, list[dict]]:
    """Records of every row of the grid, one per seed (rows outside the run set are loaded or empty)."""
    return collect_records(grid, profile, run_missing, extended, progress)


# -- per-record scores ----------------------------------------------------------------------------------------------

def task_scores(record: dict) -> list[tuple[str, str, str, float]]:
    """(column, aggregation, metric, value x 100) of every downstream task of Table S3 the record scored."""
    transfer = record["metrics"]["transfer"]["tasks"]
    sts = record["metrics"]["sts_senteval"]["tasks"]
    out = []
    for task, column in ACCURACY_TASKS.items():
        if transfer.get(task, {}).get("acc") is not None:
            out.append((column, "", "accuracy", float(transfer[task]["acc"])))
    if transfer.get("MRPC", {}).get("acc") is not None:
        out += [("MRPC", "", "accuracy", float(transfer["MRPC"]["acc"])), ("MRPC", "", "f1", float(transfer["MRPC"]["f1"]))]
    for task, column in REGRESSOR_TASKS.items():
        out.append((column, "", "spearman", 100 * sts[task]["spearman"]))
    for task in STS_SUBSETS:
        out.append((task, "mean", "spearman", 100 * sts[task]["aggregate"]["spearman"]["mean"]))
    return out


def downstream_average(scores: list[tuple[str, str, str, float]]) -> float:
    """Supp. §3.2's average: accuracy, MRPC = mean of accuracy and F1, Spearman for SICK-R, STS-B and STS12-16."""
    per_task: dict[str, list[float]] = {}
    for column, _, _, value in scores:
        per_task.setdefault(column, []).append(value)
    return float(np.mean([np.mean(v) for v in per_task.values()]))


def dev_average(record: dict) -> tuple[float, int]:
    """(mean, number of tasks) of the SentEval dev scores: classification devacc, regressor dev Pearson x 100."""
    transfer = record["metrics"]["transfer"]["tasks"]
    sts = record["metrics"]["sts_senteval"]["tasks"]
    values = [float(r["devacc"]) for r in transfer.values() if r.get("devacc") is not None]
    values += [100 * sts[task]["devpearson"] for task in REGRESSOR_TASKS if sts.get(task, {}).get("devpearson") is not None]
    return float(np.mean(values)), len(values)


def reported_average(row: str, exclude: tuple[str, ...] = NOT_OFFLINE) -> float | None:
    """The paper's own Table S3 numbers of ``row`` averaged over its tasks but ``exclude`` (Supp. §3.2's rule): by
    default the 16 offline tasks, the reported value on the same task set as the reproduced one. Over all 18 tasks
    it gives back the paper's Table 1 Downstream (a test checks it)."""
    reported = load_reported(PAPER, "tableS3")
    cells = reported[(reported["row"] == row) & ~reported["column"].isin(exclude)]
    if cells.empty:
        return None
    return downstream_average([(r["column"], r["aggregation"], r["metric"], float(r["value"])) for _, r in cells.iterrows()])


# -- tables ---------------------------------------------------------------------------------------------------------

def _keys(name: str, table: str) -> dict:
    label, reported_row = ROWS[name]
    return {"paper": PAPER, "table": table, "row": label, "run": name, "reported_group": "Unsupervised",
            "reported_row": reported_row}


def tableS3(records: dict[str, list[dict]]) -> pd.DataFrame:
    per_seed = [{**_keys(name, "Table S3"), "column": column, "split": "test", "aggregation": aggregation,
                 "metric": metric, "value": value, **trace(record)}
                for name in ROWS for record in records.get(name, []) for column, aggregation, metric, value in task_scores(record)]
    if not per_seed:
        return pd.DataFrame()
    reproduced, reported = aggregate_seeds(pd.DataFrame(per_seed)), load_reported(PAPER, "tableS3")
    # MRPC has two cells (accuracy, F1) under one column: join metric by metric
    return pd.concat([join(reproduced[reproduced["metric"] == metric], reported[reported["metric"] == metric])
                      for metric in reproduced["metric"].unique()], ignore_index=True)


def table1(records: dict[str, list[dict]]) -> pd.DataFrame:
    """Downstream average over the 16 offline tasks; ``reported`` is the paper's Downstream (18 tasks) and
    ``reported_16`` the paper's own per-task numbers averaged over the same 16 tasks; Δ against ``reported_16``."""
    per_seed = [{**_keys(name, "Table 1"), "column": "Downstream", "split": "test", "aggregation": "", "metric": "other",
                 "value": downstream_average(task_scores(record)), **trace(record)}
                for name in ROWS for record in records.get(name, [])]
    if not per_seed:
        return pd.DataFrame()
    table = join(aggregate_seeds(pd.DataFrame(per_seed)), load_reported(PAPER, "table1"))
    table["reported_16"] = [reported_average(r) for r in table["reported_row"]]
    table["delta"] = table["reproduced"] - table["reported_16"]
    table["note"] = (f"reproduced over {N_DOWNSTREAM} of 18 tasks (no SNLI, no COCO); 'reported' averages 18, "
                     f"'reported_16' the paper's Table S3 numbers over the same {N_DOWNSTREAM}")
    return table


def tableS6(records: dict[str, list[dict]]) -> pd.DataFrame:
    """The dev average over the tasks with a SentEval dev score, next to the paper's dev average without SNLI (17
    tasks): no Δ, the task sets differ."""
    per_seed = []
    for name in ROWS:
        for record in records.get(name, []):
            value, n_tasks = dev_average(record)
            per_seed.append({**_keys(name, "Table S6"), "column": "Downstream (w/o SNLI)", "split": "dev",
                             "aggregation": "", "metric": "other", "value": value, "n_tasks": n_tasks, **trace(record)})
    if not per_seed:
        return pd.DataFrame()
    table = join(aggregate_seeds(pd.DataFrame(per_seed), extra=("n_tasks",)), load_reported(PAPER, "tableS6"))
    table["delta"] = np.nan
    table["note"] = "reproduced: mean over the tasks with a dev score (see n_tasks); reported: 17 tasks"
    return table


#: Table S2's positive views (``positive_views`` -> label): subsumed with the official code's length, as Figure 2c runs.
TABLE_S2_VIEWS = {"any": "overlapping/adjacent/subsumed", "adjacent": "adjacent", "subsumed_official": "subsumed"}


def tableS2(profile: str, records: dict[str, list[dict]], n_documents: int = 2, seed: int = 0) -> pd.DataFrame:
    """Table S2: spans drawn by the sampler with the headline run's settings from the training documents: for each of
    ``n_documents`` documents, anchor 1 with one positive of each view (overlapping-or-any, adjacent, subsumed), the
    same document's anchor 2 (a hard negative) and another document's anchor (an easy negative). Word pieces are
    decoded back to text and cut at 64 words, as the paper's table."""
    from sentemb.models.backbone import load_tokenizer

    spec = records["declutr"][0]["spec"] if records.get("declutr") else grid(profile)["declutr"][0].as_dict()
    params = spec["objective_params"]
    tokenizer = load_tokenizer(spec["backbone"])
    documents = load_documents("synthetic" if spec["synthetic_data"] else spec["train_data"])
    kept = long_enough(tokenise(documents, tokenizer), 2 * 2 * params["max_span_len"])
    rng = random.Random(seed)
    chosen = rng.sample(kept, n_documents + 1)
    cut = lambda ids: " ".join(tokenizer.decode(list(ids)).split()[:64])  # noqa: E731
    rows = []
    for number, (document, other) in enumerate(zip(chosen[:-1], chosen[1:]), start=1):
        spans = {view: sample_anchor_positive_spans(document.token_ids, random.Random(seed + number), num_anchors=2,
                                                    num_positives=1, min_span_len=params["min_span_len"],
                                                    max_span_len=params["max_span_len"], positive_views=view)
                 for view in TABLE_S2_VIEWS}
        easy = sample_anchor_positive_spans(other.token_ids, rng, num_anchors=1, num_positives=1,
                                            min_span_len=params["min_span_len"], max_span_len=params["max_span_len"])
        base = spans["any"]
        rows.append({"example": number, "span": "anchor", "document": document.id, "text": cut(base.anchor_tokens[0])})
        for view, sampled in spans.items():
            rows.append({"example": number, "span": f"positive ({TABLE_S2_VIEWS[view]})",
                         "document": document.id, "text": cut(sampled.positive_tokens[0][0])})
        rows.append({"example": number, "span": "hard negative (anchor 2, same document)", "document": document.id,
                     "text": cut(base.anchor_tokens[1])})
        rows.append({"example": number, "span": "easy negative (another document)", "document": other.id,
                     "text": cut(easy.anchor_tokens[0])})
    return pd.DataFrame(rows)


def dev_score(record: dict) -> float:
    """The figures' score of a record: its kept checkpoint's STS-B dev Spearman x 100 (cosine)."""
    return 100 * record["metrics"]["stsb_dev_spearman"]


def figure_points(records: dict[str, list[dict]]) -> pd.DataFrame:
    """One row per figure grid point with a record: its settings and its dev score (seed 42); and the untrained
    backbone (run ``transformer``, objective "not trained"), the figures' reference line."""
    rows = []
    if records.get("transformer"):
        record = records["transformer"][0]
        rows.append({"run": "transformer", "run_id": record["run_id"], "objective": "not trained", "share": 0,
                     "steps": 0, "dev_score": dev_score(record)})
    for name, recs in records.items():
        if not recs or not recs[0]["spec"]["objective"] == "declutr":
            continue
        record = recs[0]
        params = record["spec"]["objective_params"]
        rows.append({"run": name, "run_id": record["run_id"], "num_anchors": params["num_anchors"],
                     "num_positives": params["num_positives"], "temperature": params["temperature"],
                     "positive_views": params["positive_views"], "projection": params["projection"],
                     "projection_dim": params["projection_dim"], "memory_size": params["memory_size"],
                     "objective": FIGURE3_RUNS.get(name, ("both",))[0], "share": FIGURE3_RUNS.get(name, ("", 100))[1],
                     "steps": record["spec"]["steps"], "dev_score": dev_score(record)})
    points = pd.DataFrame(rows)
    for column in ("num_anchors", "num_positives", "projection_dim", "memory_size", "share", "steps"):
        if column in points:  # integers, also next to the untrained row's empty settings (axis labels "1", not "1.0")
            points[column] = points[column].astype("Int64")
    return points


def _dev_scores(records: dict[str, list[dict]], runs: list[str], all_seeds: bool) -> list[dict] | None:
    """The records of ``runs`` (every seed, or seed 42's record only) whose STS-B dev Spearman are a cell's values;
    None if any run has no record."""
    if any(not records.get(run) for run in runs):
        return None
    return [r for run in runs for r in (records[run] if all_seeds else records[run][:1])]


def figure_cells(records: dict[str, list[dict]]) -> pd.DataFrame:
    """The figures' claim cells (``figure_only`` claims in ``claims.yaml``), in the claims' long format.

    A cell's ``values`` are the points the paper plots as one distribution, each scored by its STS-B dev Spearman:
    "A = 2" is every (P, tau) point of Figure 2's grid at A = 2 (seed 42, the ``declutr`` run being the A = P = 2,
    tau = 0.05 point), an objective of Figure 3 its three shares of the steps, "memory bank" all 12 (queue, tau)
    points of Figure S1 (b), "non-linear (ReLU) projection head" its three widths. A figure's default setting (positives
    of any view, no projection head, no memory bank) is the ``declutr`` run with all its seeds. So each test asks
    whether the grid's points lie above or below the alternative on average, not whether every point does. A cell with
    a missing run is left out (its claims are *not run*)."""
    grid_runs = lambda a: [figure2_run(a, p, t) for p in FIGURE2["num_positives"] for t in FIGURE2["temperature"]]  # noqa: E731
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
        ("Figure S1", "non-linear (ReLU) projection head"): ([f"proj_mlp_{d}" for d in FIGURES1_PROJECTIONS["dim"]], False),
        ("Figure S1", "no memory bank"): (["declutr"], True),
        ("Figure S1", "memory bank"): ([f"xbm_{q}_t{t:g}" for q in FIGURES1_MEMORY["queue"]
                                        for t in FIGURES1_MEMORY["temperature"]], False),
    }
    rows = []
    for (table, row), (runs, all_seeds) in cells.items():
        cell = _dev_scores(records, runs, all_seeds)
        if cell is not None:
            values = [dev_score(r) for r in cell]
            rows.append({"table": table, "group": "", "row": row, "column": "dev score", "split": "dev",
                         "aggregation": "", "metric": "", "value": float(np.mean(values)),
                         "values": ";".join(f"{v:.6f}" for v in values), "deterministic": False,
                         "run_ids": ";".join(r["run_id"] for r in cell), "profile": cell[0]["profile"]})
    return pd.DataFrame(rows, columns=["table", "group", "row", "column", "split", "aggregation", "metric", "value",
                                       "values", "deterministic", "run_ids", "profile"])


def claims(tables: dict[str, pd.DataFrame], records: dict[str, list[dict]] | None = None) -> pd.DataFrame:
    """The paper's claims on the reproduced cells: DeCLUTR-small vs Transformer-small stand for our DeCLUTR run vs the
    backbone, the figures' claims rest on their grid points (:func:`figure_cells`); claims on probing, RoBERTa-base or
    the baselines are not run."""
    parts = [from_reproduced(tables[t]) for t in ("table1",) if not tables[t].empty]
    if records is not None:
        parts.append(figure_cells(records))
    verdicts = evaluate_all(PAPER, pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["table", "group", "row", "column", "value"]))
    for claim, reason in NOT_TESTABLE.items():
        mask = verdicts["claim"] == claim
        verdicts.loc[mask, ["status", "detail", "effect", "p_value", "n", "test"]] = ["not run", reason, None, None, "", ""]
    return verdicts


def write_tables(records: dict[str, list[dict]], profile: str) -> dict[str, pd.DataFrame]:
    folder, _ = output_dirs(profile)
    tables = {"table1": table1(records), "tableS3": tableS3(records), "tableS6": tableS6(records),
              "tableS2": tableS2(profile, records), "figures": figure_points(records)}
    tables["claims"] = claims(tables, records)
    write_csv_tables(folder, tables)
    return tables


def not_run(records: dict[str, list[dict]]) -> pd.DataFrame:
    return not_run_rows(records, NOT_RUN_BUDGET)


def wide(table: pd.DataFrame) -> pd.DataFrame:
    """Reader's view: one row per model, 'mean ± std (n) [reported]' per column."""
    return wide_cells(table, aggregation=("mean", ""))


# -- figures --------------------------------------------------------------------------------------------------------

def _save(fig, name: str, profile: str, points: pd.DataFrame) -> list[Path]:
    """Saved with a caption naming the profile, its substitutes, the score, and where the points' run ids are."""
    _, folder = output_dirs(profile)
    fig.tight_layout()
    substitutes = f"{SUBSTITUTES}; " if profile == "small" else ""
    return style.save(fig, folder, name, f"profile {profile}; {substitutes}y = {DEV_SCORE}; {points['run'].nunique()} runs, "
                      f"one seed each: their run ids are in results/declutr/{profile}/figures.csv")


def _untrained_line(axes, points: pd.DataFrame) -> None:
    """The untrained backbone's STS-B dev score as a dotted line on every panel (does training help at all?)."""
    base = points[points["run"] == "transformer"]
    if base.empty:
        return
    for ax in axes:
        ax.axhline(base["dev_score"].iloc[0], color="0.4", linestyle=":", label="not trained")


def figure2(points: pd.DataFrame, profile: str) -> list[Path]:
    """Figure 2: the dev score over the A x P x tau grid by A (a) and by P (b), and by positive view (c)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    grid_points = points[(points["positive_views"] == "any") & (points["projection"] == "none")
                         & (points["memory_size"] == 0) & (points["share"] == 100) & (points["objective"] == "both")
                         & points["run"].isin([figure2_run(a, p, t) for a in FIGURE2["num_anchors"]
                                               for p in FIGURE2["num_positives"] for t in FIGURE2["temperature"]])]
    views = points[points["run"].isin(["declutr", "views_adjacent", "views_subsumed"])]
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.4), sharey=True)
    sns.boxplot(data=grid_points, x="num_anchors", y="dev_score", ax=axes[0], color=style.PALETTE[0])
    # jitter=False, dodge=True: seaborn jitters with numpy's global RNG, so a jittered figure changes at every run
    sns.stripplot(data=grid_points, x="num_anchors", y="dev_score", hue="temperature", ax=axes[0], palette="deep",
                  jitter=False, dodge=True)
    sns.boxplot(data=grid_points, x="num_positives", y="dev_score", ax=axes[1], color=style.PALETTE[1])
    sns.stripplot(data=grid_points, x="num_positives", y="dev_score", hue="temperature", ax=axes[1], palette="deep",
                  legend=False, jitter=False, dodge=True)
    sns.stripplot(data=views, x="positive_views", y="dev_score", ax=axes[2], color=style.PALETTE[2], size=8,
                  jitter=False)
    _untrained_line(axes, points)
    axes[2].legend(fontsize=8)
    axes[0].set_title("(a) anchors A")
    axes[1].set_title("(b) positives P")
    axes[2].set_title("(c) positive views (A = P = 2)")
    axes[0].set_ylabel("STS-B dev Spearman x 100")
    for ax, label in zip(axes, ("anchors per document A", "positives per anchor P", "positive view")):
        ax.set_xlabel(label)
    fig.suptitle("Figure 2: span sampling (one seed per point; NT-Xent in its exact form, Eq. 2)")
    return _save(fig, "figure2_sampling", profile, pd.concat([grid_points, views]))


def figure3(points: pd.DataFrame, profile: str) -> list[Path]:
    """Figure 3: the dev score of contrastive only, MLM only and both against the share of the training steps."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    shares = points[points["run"].isin(list(FIGURE3_RUNS))]
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    sns.lineplot(data=shares, x="share", y="dev_score", hue="objective", marker="o", ax=ax)
    _untrained_line([ax], points)
    ax.legend(fontsize=8)
    ax.set_xlabel("share of the training steps (%)")
    ax.set_ylabel("STS-B dev Spearman x 100")
    ax.set_title("Figure 3: objective and training-set size (one model size)")
    return _save(fig, "figure3_objective_size", profile, shares)


def figureS1(points: pd.DataFrame, profile: str) -> list[Path]:
    """Figure S1: (a) projection heads by output width, against none; (b) memory banks by queue size per tau."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    heads = points[points["run"].str.startswith("proj_")]
    banks = points[points["run"].str.startswith("xbm_")]
    base = points[points["run"] == "declutr"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    sns.lineplot(data=heads, x="projection_dim", y="dev_score", hue="projection", marker="o", ax=axes[0])
    sns.lineplot(data=banks, x="memory_size", y="dev_score", hue="temperature", marker="o", ax=axes[1], palette="deep")
    _untrained_line(axes, points)
    for ax in axes:
        if not base.empty:
            ax.axhline(base["dev_score"].iloc[0], color="k", linestyle="--", label="none (DeCLUTR)")
        ax.legend(fontsize=8)
    axes[0].set_xlabel("projection output width")
    axes[1].set_xlabel("queue size")
    axes[0].set_ylabel("STS-B dev Spearman x 100")
    axes[0].set_title(f"(a) projection heads ({', '.join(FIGURES1_PROJECTIONS['kind'])})")
    axes[1].set_title(f"(b) memory bank, tau in {FIGURES1_MEMORY['temperature']}")
    fig.suptitle("Figure S1 (one seed per point)")
    return _save(fig, "figureS1_projection_memory", profile, pd.concat([heads, banks, base]))


def markdown_summary(tables: dict[str, pd.DataFrame]) -> str:
    """The README's fairseq-style tables (reported | reproduced mean ± std (n) | Δ), from the reproduced tables."""
    lines = []
    t1 = tables["table1"]
    if not t1.empty:
        lines += ["", f"| Table 1: Downstream ({N_DOWNSTREAM} of 18 tasks, test) | paper row | reported (18 tasks) | "
                  f"reported, same {N_DOWNSTREAM} tasks | reproduced | Δ |", "|---|---|---|---|---|---|"]
        for _, r in t1.iterrows():
            reported = f"{r['reported']:.2f}" if pd.notna(r["reported"]) else "–"
            same = f"{r['reported_16']:.2f}" if pd.notna(r["reported_16"]) else "–"
            delta = f"{r['delta']:+.2f}" if pd.notna(r["delta"]) else "–"
            lines.append(f"| {r['row']} | {r['reported_row']} | {reported} | {same} | {mean_std(r)} | {delta} |")
    s3 = tables["tableS3"]
    if not s3.empty:
        lines += ["", "| Table S3 (test) | task | metric | reported | reproduced | Δ |", "|---|---|---|---|---|---|"]
        for _, r in s3.iterrows():
            reported = f"{r['reported']:.2f}" if pd.notna(r["reported"]) else "–"
            delta = f"{r['delta']:+.2f}" if pd.notna(r["delta"]) else "–"
            lines.append(f"| {r['row']} | {r['column']} | {r['metric']} | {reported} | {mean_std(r)} | {delta} |")
    s6 = tables["tableS6"]
    if not s6.empty:
        lines += ["", "| Table S6: dev average (no Δ: the task sets differ) | paper row | reported (17 tasks) | "
                  "reproduced | tasks |", "|---|---|---|---|---|"]
        for _, r in s6.iterrows():
            reported = f"{r['reported']:.2f}" if pd.notna(r["reported"]) else "–"
            lines.append(f"| {r['row']} | {r['reported_row']} | {reported} | {mean_std(r)} | {'/'.join(sorted(set(str(r['n_tasks']).split(';'))))} |")
    lines += figure_markdown(tables["figures"])
    lines += [""] + markdown_rows(tables["claims"], skip_not_run=True)
    return "\n".join(lines).strip()


def figure_markdown(points: pd.DataFrame) -> list[str]:
    """The figures' points as compact tables (STS-B dev Spearman x 100, one seed each; the paper prints no values)."""
    if points.empty:
        return []
    score = dict(zip(points["run"], points["dev_score"]))
    cell = lambda run: f"{score[run]:.2f}" if run in score else "–"  # noqa: E731
    lines = ["", f"Figures: each point is one run (seed 42), scored by {DEV_SCORE}; the paper prints its figures' "
             "values only as plots, so there is no reported column."
             + (f" The untrained backbone scores {score['transformer']:.2f}." if "transformer" in score else "")]
    lines += ["", "| Figure 2 (a, b): A, P (NT-Xent exact, Eq. 2; not the official code's capped form) | "
              + " | ".join(f"tau = {t:g}" for t in FIGURE2["temperature"]) + " |",
              "|---|" + "---|" * len(FIGURE2["temperature"])]
    for a in FIGURE2["num_anchors"]:
        for p in FIGURE2["num_positives"]:
            lines.append(f"| A = {a}, P = {p} | " + " | ".join(cell(figure2_run(a, p, t)) for t in FIGURE2["temperature"])
                         + " |")
    lines += ["", "| Figure 2 (c): positive views | any (overlapping, adjacent, subsumed) | adjacent | subsumed (official length) |",
              "|---|---|---|---|", f"| A = P = 2, tau = 0.05 | {cell('declutr')} | {cell('views_adjacent')} | "
              f"{cell('views_subsumed')} |"]
    lines += ["", "| Figure 3: objective | " + " | ".join(f"{s} % of the steps" for s in FIGURE3_SHARES) + " |",
              "|---|" + "---|" * len(FIGURE3_SHARES)]
    for objective in FIGURE3_OBJECTIVES:
        lines.append(f"| {objective} | " + " | ".join(cell(f"{objective}_f{s}") for s in FIGURE3_SHARES) + " |")
    dims = FIGURES1_PROJECTIONS["dim"]
    lines += ["", "| Figure S1 (a): projection head (none: " + cell("declutr") + ") | "
              + " | ".join(f"width {d}" for d in dims) + " |", "|---|" + "---|" * len(dims)]
    for kind in FIGURES1_PROJECTIONS["kind"]:
        lines.append(f"| {kind} | " + " | ".join(cell(f"proj_{kind}_{d}") for d in dims) + " |")
    queues = FIGURES1_MEMORY["queue"]
    lines += ["", "| Figure S1 (b): memory bank, tau | " + " | ".join(f"queue {q}" for q in queues) + " |",
              "|---|" + "---|" * len(queues)]
    for t in FIGURES1_MEMORY["temperature"]:
        lines.append(f"| tau = {t:g} | " + " | ".join(cell(f"xbm_{q}_t{t:g}") for q in queues) + " |")
    return lines


def provenance(records: dict[str, list[dict]]) -> pd.DataFrame:
    return provenance_table(records, [])
