"""The non-contrastive paper's tables and figures from run records and derived records: what the notebook calls.

- Table 1: STS-B dev max / q75 / q50 over each cell's scan trials (:func:`scan_quantiles`), with the number of
  trials every quantile comes from; ``table1_trials`` lists every trial (its coefficients, learning rate, score).
- Figure 1: Barlow Twins' STS-B dev against lambda, one line per learning rate, from the scan.
- Table 4: MTEB main score per task of the headline models (mean ± std over seeds), next to the paper's RoBERTa.
- Table 6: category averages over the tasks that ran (each with how many of the category's tasks it covers),
  the average over the tasks that ran, and alignment/uniformity on STS-B test.
- Figure 4: cosine similarity of STS-B test pairs by gold-rating bucket (seaborn).

Every reproduced row keeps its run ids; MTEB numbers come from derived records (:mod:`papers.noncontrastive.analyses`).
Nothing here trains, except :func:`collect` (runs what is missing when ``run_missing``) and :func:`derived`
(re-trains a run whose checkpoint is gone from this machine). On the small profile the derived records are computed
only with ``extended`` (:func:`computes_derived`); without it the committed ones are read and a missing one is listed
by :func:`derived_not_run`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from papers.noncontrastive import experiments as ex
from papers.noncontrastive.analyses import mteb_and_geometry
from papers.simcse.experiments import grid as simcse_grid
from sentemb import settings
from sentemb.data.mteb_mirror import MIRROR_TASKS
from sentemb.evaluate.mteb_adapter import TABLE4_TASKS
from sentemb.plots import style
from sentemb.report.claims import evaluate_all, from_reproduced, markdown_rows
from sentemb.report.provenance_table import provenance_table
from sentemb.report.reported import coverage_table, load_reported
from sentemb.report.reproduced import aggregate_seeds, join, mean_std, trace
from sentemb.report.views import write_csv_tables
from sentemb.runs import store
from sentemb.runs.derived import derived_of_each
from sentemb.runs.execute import ensure
from sentemb.runs.fixed_point import run_to_fixed_point

PAPER = "noncontrastive"
BACKBONE_ROW = "avg."  # Table 6's first row: most likely the untrained encoder with mean pooling (reported/ notes)
CATEGORIES = ("Class.", "Clust.", "PairClass.", "Rerank.", "Retr.", "STS", "Summ.")
RATING_BUCKETS = (0, 1, 2, 3, 4, 5)
FIGURE4_ROWS = (BACKBONE_ROW, "simcse", "bt_dropout", "vicreg_dropout")
NOT_RUN_DERIVED = ("not run: MTEB + STS-B test geometry (Tables 4, 6, Figure 4) cost about 27 min per model on 2 "
                   "cores; the small profile computes them with --extended (./run_all.sh --paper noncontrastive "
                   "--extended)")
NOT_RUN_EXTENDED = ("not run: outside the small profile's budget (./run_all.sh --paper noncontrastive --extended "
                    "scans every Table 1 cell)")
# Claims are stated for BERT and RoBERTa; the small profile has one substitute backbone for both (all-MiniLM-L6-v2),
# so every claim is tested on its rows, whichever block it names (directions, not magnitudes).
CLAIM_GROUPS = ("BERT", "RoBERTa")
# Which of Table 4's tasks run offline follows from the tasks the archive reads from the mirror (MIRROR_TASKS), and
# which claims are testable follows from that: a claim on a Table 6 category needs at least one of its tasks.
OFFLINE_TASKS = {category: [t for t, c in TABLE4_TASKS.items() if c == category and t in MIRROR_TASKS]
                 for category in dict.fromkeys(TABLE4_TASKS.values())}
CLAIM_CATEGORY = {
    "supervised-wikiauto-best-retrieval": "Retr.",
    "roberta-bt-dropout-beats-simcse-clustering": "Clust.",
    "roberta-simcse-wins-pair-classification": "PairClass.",
    "shuffle-beats-dropout-pairclass-bert-bt": "PairClass.",
    "shuffle-beats-dropout-pairclass-bert-vicreg": "PairClass.",
    "shuffle-beats-dropout-pairclass-roberta-bt": "PairClass.",
    "shuffle-beats-dropout-pairclass-roberta-vicreg": "PairClass.",
}
NEEDS_DATA = {"supervised-wikiauto-best-retrieval": "WikiAuto is not offline"}


def not_testable() -> dict[str, str]:
    """The claims that cannot be tested offline, with why (derived from the tasks that run offline)."""
    out = {}
    for claim, category in CLAIM_CATEGORY.items():
        reasons = [NEEDS_DATA[claim]] if claim in NEEDS_DATA else []
        if not OFFLINE_TASKS[category]:
            reasons.append(f"no {category} task of Table 4 runs offline")
        if reasons:
            out[claim] = "; ".join(reasons)
    return out


NOT_TESTABLE = not_testable()


def _offline_counts() -> str:
    ran = {c: len(ts) for c, ts in OFFLINE_TASKS.items() if ts}
    return ", ".join(f"{c} ({n} of {sum(v == c for v in TABLE4_TASKS.values())})" for c, n in ran.items())


N_OFFLINE = sum(len(ts) for ts in OFFLINE_TASKS.values())
NO_OFFLINE_TASK = ", ".join(c for c, ts in OFFLINE_TASKS.items() if not ts)

COVERAGE = {
    "Table 1": ("partly", "results/noncontrastive/<profile>/table1.csv (+ table1_trials.csv): all ten cells, 4 trials "
                "per cell for the paper's 50 (column n_trials); from scratch the small profile scans the "
                "dropout 0.1 cell, and --extended the other nine (shuffle 0.3 among them; all ten are recorded); "
                "MiniLM for BERT and RoBERTa"),
    "Table 2": ("not identifiable", "caption and content are not in the extracted text (only the numbering implies it)"),
    "Table 3": ("not applicable", "the scan domains are lost in extraction; ours are in papers/noncontrastive/"
                "experiments.py (BT_LAMBDAS, BT_LRS, VICREG_DOMAIN)"),
    "Table 4": ("partly", f"results/noncontrastive/<profile>/table4.csv: the {N_OFFLINE} MTEB tasks that run offline "
                f"({_offline_counts()}); the other {len(TABLE4_TASKS) - N_OFFLINE} are listed as not run, with why"),
    "Table 5": ("not identifiable", "caption and content are not in the extracted text (only the numbering implies it)"),
    "Table 6": ("partly", f"results/noncontrastive/<profile>/table6.csv: {_offline_counts()}, Avg. ({N_OFFLINE} of "
                f"{len(TABLE4_TASKS)}), alignment, uniformity (Δ only where both sides average the same tasks); "
                f"{NO_OFFLINE_TASK}: no task offline; BT (WikiAuto) is not run (WikiAuto is not offline)"),
    "Figure 1": ("reproduced (small scan)", "figures/noncontrastive/<profile>/figure1_bt_lambda.*"),
    "Figure 2": ("not identifiable", "not referenced in the extracted text (only the numbering implies it)"),
    "Figure 3": ("not identifiable", "not referenced in the extracted text (only the numbering implies it)"),
    "Figure 4": ("reproduced", "figures/noncontrastive/<profile>/figure4_cosine_by_rating.*"),
    "Text": ("not applicable", "hyperparameters of the running text: used by papers/noncontrastive/experiments.py"),
}


def coverage() -> pd.DataFrame:
    """Every table and figure of the paper with what this archive does with it and why."""
    return coverage_table(PAPER, COVERAGE)


def output_dirs(profile: str) -> tuple[Path, Path]:
    return settings.paper_output_dirs(PAPER, profile)


# -- records -------------------------------------------------------------------------------------------------------

def collect(profile: str, run_missing: bool = True, extended: bool = False,
            progress: bool = True) -> dict[str, list[dict]]:
    """The records of every run of the grid (name -> one record per seed), plus the backbone row ("avg.").

    With ``run_missing`` the grid is run to its fixed point (scan trials, then SMAC's next proposals, then the
    headline rows). Without, only what has records is returned; a grid row without one is an empty list."""
    if run_missing:
        ask = lambda: ex.grid(profile, extended=extended, records=store.all_records(profile, on_broken="recompute"))
        run_to_fixed_point(ask, lambda name, spec: ensure(spec, run_missing=True, progress=progress))
    stored = store.all_records(profile, on_broken="recompute" if run_missing else "raise")
    by_id = {r["run_id"]: r for r in stored}
    records: dict[str, list[dict]] = {name: [by_id[s.run_id] for s in group if s.run_id in by_id]
                                      for name, group in ex.grid(profile, extended=True, records=stored).items()}
    records[BACKBONE_ROW] = [ensure(simcse_grid(profile)["backbone_avg"][0], run_missing=run_missing,
                                    progress=progress)]
    return records


def headline_names(records: dict[str, list[dict]]) -> list[str]:
    return [BACKBONE_ROW] + [n for n in ex.HEADLINE_ROWS if records.get(n)]


def computes_derived(profile: str, run_missing: bool, extended: bool) -> bool:
    """Whether missing derived records are computed: with ``run_missing``, on the small profile only with
    ``extended`` (its 20 records cost about 27 min each on 2 cores, mostly MTEB's two retrieval corpora at up to 512
    tokens: over the 3-hour budget of the whole small profile from scratch, issue 19), on every other profile always.
    The committed small-profile records are loaded either way."""
    return run_missing and (extended or profile != "small")


def derived(records: dict[str, list[dict]], profile: str, run_missing: bool = True,
            extended: bool = False) -> dict[str, list[dict]]:
    """The MTEB + STS-B test geometry derived record of every seed of every headline row (and the backbone) that has
    one, computing the missing ones when :func:`computes_derived`; a seed left without one is listed by
    :func:`derived_not_run`."""
    compute = computes_derived(profile, run_missing, extended)
    return {name: derived_of_each(records[name], mteb_and_geometry, compute) for name in headline_names(records)}


def derived_not_run(records: dict[str, list[dict]], derived_records: dict[str, list[dict]]) -> pd.DataFrame:
    """The headline runs (row, seed) whose MTEB + geometry derived record is missing, with the reason."""
    have = {d["run_id"] for ds in derived_records.values() for d in ds}
    rows = [{"row": label(name), "seed": r["spec"]["seed"], "run_id": r["run_id"], "status": NOT_RUN_DERIVED}
            for name in headline_names(records) for r in records[name] if r["run_id"] not in have]
    return pd.DataFrame(rows, columns=["row", "seed", "run_id", "status"])


def _run_of(d: dict, runs: list[dict]) -> dict:
    return next(r for r in runs if r["run_id"] == d["run_id"])


def label(name: str) -> str:
    return "avg. (backbone, mean pooling)" if name == BACKBONE_ROW else ex.HEADLINE_LABEL[name]


def reported_label(name: str) -> str:
    return BACKBONE_ROW if name == BACKBONE_ROW else ex.HEADLINE_LABEL[name]


# -- Table 1 and Figure 1 ------------------------------------------------------------------------------------------

def scan_quantiles(scores: list[float]) -> dict[str, float]:
    """Table 1's rows over one cell's trials: max, q75 and q50 (the 75th and 50th percentiles, numpy's linear
    interpolation between order statistics; the paper does not define them)."""
    if not scores:
        raise ValueError("a cell without trials has no quantiles")
    values = np.asarray(scores, dtype=float)
    return {"max": float(values.max()), "q75": float(np.percentile(values, 75)), "q50": float(np.percentile(values, 50))}


def _trial_name_parts(name: str) -> tuple[str, str, float] | None:
    parts = name.split("/")
    if len(parts) != 3 or parts[0] not in ("bt", "vicreg"):
        return None
    augmentation, strength = parts[1].rsplit("_", 1)
    return ("barlow_twins" if parts[0] == "bt" else "vicreg"), augmentation, float(strength)


def table1_trials(records: dict[str, list[dict]]) -> pd.DataFrame:
    """Every scan trial: method, cell, learning rate, loss coefficients, its score (best STS-B dev x 100)."""
    rows = []
    for name, recs in records.items():
        parts = _trial_name_parts(name)
        if parts is None or not recs:
            continue
        method, augmentation, strength = parts
        r = recs[0]
        params = r["spec"]["objective_params"]
        rows.append({"method": ex.METHOD_LABEL[method], "cell": ex.cell_label(augmentation, strength), "trial": name,
                     "lr": r["spec"]["lr"], "lambda": params.get("off_diagonal_weight"),
                     "invariance_weight": params.get("invariance_weight"),
                     "variance_weight": params.get("variance_weight"),
                     "covariance_weight": params.get("covariance_weight"),
                     "projector_width": params["projector_width"], "dropout": r["spec"]["dropout"],
                     "best_stsb_dev": ex.best_dev(r), "best_step": r["training"]["best_step"],
                     "final_stsb_dev_fp32": 100 * r["metrics"]["stsb_dev_spearman"], **trace(r)})
    return pd.DataFrame(rows)


def table1(trials: pd.DataFrame) -> pd.DataFrame:
    """max / q75 / q50 of each cell's trial scores, next to the paper's BERT block (MiniLM stands for both)."""
    rows = []
    if trials.empty:
        return pd.DataFrame()
    for (method, cell), group in trials.groupby(["method", "cell"], sort=False):
        for stat, value in scan_quantiles(group["best_stsb_dev"].tolist()).items():
            rows.append({"paper": PAPER, "table": "Table 1", "row": stat, "group": f"{method} / MiniLM",
                         "reported_group": f"{method} / BERT", "reported_row": stat, "column": cell, "split": "dev",
                         "aggregation": "", "metric": "spearman", "value": value, "n_trials": len(group),
                         "run_ids": ";".join(group["run_id"]), "profile": group["profile"].iloc[0],
                         "backbone_used": group["backbone_used"].iloc[0]})
    table = join(pd.DataFrame(rows), load_reported(PAPER, "table1"))
    return table


def figure1(trials: pd.DataFrame, profile: str) -> list[Path]:
    """Figure 1: Barlow Twins' STS-B dev (best over the run) against lambda, one line per learning rate, per cell."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    _, folder = output_dirs(profile)
    bt = trials[trials["method"] == ex.METHOD_LABEL["barlow_twins"]].copy()
    bt["learning rate"] = [f"{lr:g}" for lr in bt["lr"]]
    cells = list(dict.fromkeys(bt["cell"]))
    lambdas = sorted(set(bt["lambda"]))
    ncols = min(5, len(cells))  # the ten cells of --extended in two rows of five
    nrows = -(-len(cells) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.2 * nrows), squeeze=False, sharey=True)
    for ax in axes.flat[len(cells):]:
        ax.set_visible(False)
    for ax, cell in zip(axes.flat, cells):
        sns.lineplot(data=bt[bt["cell"] == cell], x="lambda", y="best_stsb_dev", hue="learning rate", marker="o",
                     ax=ax, legend=cell == cells[0])
        ax.set_xscale("log")
        ax.set_xticks(lambdas, [f"{value:g}" for value in lambdas])
        ax.minorticks_off()
        ax.set_title(f"Barlow Twins, {cell}")
        ax.set_xlabel("lambda (off-diagonal weight)")
        ax.set_ylabel("STS-B dev Spearman x 100 (best)")
    fig.suptitle("Figure 1: Barlow Twins' sensitivity to lambda and the learning rate")
    fig.tight_layout()
    width = int(bt["projector_width"].iloc[0])
    return style.save(fig, folder, "figure1_bt_lambda",
                      f"profile {profile}; backbone {bt['backbone_used'].iloc[0]}, projector width {width}; "
                      f"{len(bt)} runs, their ids in results/noncontrastive/{profile}/table1_trials.csv")


# -- Tables 4 and 6 ------------------------------------------------------------------------------------------------

def _mteb(d: dict) -> dict:
    return (d["result"].get("mteb") or {}).get("tasks", {})


def _derived_trace(d: dict, run: dict) -> dict:
    return {**trace(run), "derived_id": d["derived_id"]}


def table4(records: dict[str, list[dict]], derived_records: dict[str, list[dict]]) -> pd.DataFrame:
    """MTEB main score x 100 per task (the tasks that ran), mean over seeds; the paper's Table 4 is RoBERTa."""
    per_seed = []
    for name, ds in derived_records.items():
        for d in ds:
            run = _run_of(d, records[name])
            for task, result in _mteb(d).items():
                if result.get("status") != "ok":
                    continue
                per_seed.append({"paper": PAPER, "table": "Table 4", "row": task, "run": name,
                                 "reported_group": result["category"], "reported_row": task,
                                 "column": reported_label(name), "split": result["split"], "aggregation": "",
                                 "metric": "main_score", "value": result["main_score"], **_derived_trace(d, run)})
    if not per_seed:
        return pd.DataFrame()
    cells = aggregate_seeds(pd.DataFrame(per_seed), extra=("derived_id",))
    table = join(cells, load_reported(PAPER, "table4"))
    table.insert(table.columns.get_loc("column") + 1, "model", [label(r) for r in table["run"]])
    return table


def not_run_tasks(derived_records: dict[str, list[dict]]) -> pd.DataFrame:
    """Table 4's tasks that did not run, with the reason (the same for every model)."""
    first = next((ds[0] for ds in derived_records.values() if ds), None)
    if first is None:
        return pd.DataFrame(columns=["task", "category", "reason"])
    return pd.DataFrame([{"task": t, "category": r.get("category"), "reason": r.get("reason")}
                         for t, r in _mteb(first).items() if r.get("status") != "ok"])


def table6(records: dict[str, list[dict]], derived_records: dict[str, list[dict]]) -> pd.DataFrame:
    """Category means over the tasks that ran (``n_tasks`` of ``of``), the mean over all tasks that ran (Avg.), and
    alignment / uniformity on STS-B test; the paper's BERT block is the comparison (BT (NLI): its RoBERTa row)."""
    per_seed = []
    for name, ds in derived_records.items():
        for d in ds:
            run = _run_of(d, records[name])
            mteb = d["result"].get("mteb")
            cells = []
            if mteb:
                for column, avg in mteb["category_averages"].items():
                    if avg["mean"] is not None:
                        cells.append((column, avg["mean"], "main_score", "test", f"{avg['n_tasks']} of {avg['of']}"))
            geometry = d["result"]["stsb_test"]
            cells += [("alignment", geometry["alignment"], "other", "", "STS-B test"),
                      ("uniformity", geometry["uniformity"], "other", "", "STS-B test")]
            group = "RoBERTa" if name == "bt_nli" else "BERT"
            for column, value, metric, split, covers in cells:
                per_seed.append({"paper": PAPER, "table": "Table 6", "row": label(name), "run": name,
                                 "reported_group": group, "reported_row": reported_label(name), "column": column,
                                 "split": split, "aggregation": "", "metric": metric, "value": value,
                                 "covers": covers, **_derived_trace(d, run)})
    if not per_seed:
        return pd.DataFrame()
    cells = aggregate_seeds(pd.DataFrame(per_seed), extra=("derived_id",))
    covers = {(r["run"], r["column"]): r["covers"] for r in per_seed}
    cells["covers"] = [covers[(r, c)] for r, c in zip(cells["run"], cells["column"])]
    return delta_on_the_same_tasks(join(cells, load_reported(PAPER, "table6")))


def delta_on_the_same_tasks(table: pd.DataFrame) -> pd.DataFrame:
    """Δ only where both sides average the same tasks: a category mean that covers "n of m" tasks with n < m is
    not the paper's m-task mean, so its Δ is left empty and ``delta_note`` says why."""
    out = table.copy()
    counts = out["covers"].astype(str).str.extract(r"^(\d+) of (\d+)$").astype(float)
    partial = counts[0].notna() & (counts[0] < counts[1])
    out.loc[partial, "delta"] = float("nan")
    out["delta_note"] = ["" if not p else f"no Δ: the reproduced mean covers {c} tasks, the paper's all of them"
                         for p, c in zip(partial, out["covers"])]
    return out


# -- Figure 4 ------------------------------------------------------------------------------------------------------

def figure4(derived_records: dict[str, list[dict]], profile: str) -> list[Path]:
    """Figure 4: cosine similarity of the STS-B test pairs by gold rating bucket ([0,1), ..., [4,5]), seed 42."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    _, folder = output_dirs(profile)
    rows, ids = [], []
    for name in FIGURE4_ROWS:
        if not derived_records.get(name):
            continue
        d = derived_records[name][0]
        ids.append(f"{name}={d['run_id']}")
        stsb = d["result"]["stsb_test"]
        buckets = np.clip(np.floor(np.asarray(stsb["gold"])), 0, 4).astype(int)
        rows += [{"model": label(name), "rating": f"{b}-{b + 1}", "cosine": c} for b, c in zip(buckets, stsb["cosines"])]
    if not rows:
        return []
    frame = pd.DataFrame(rows)
    models = list(dict.fromkeys(frame["model"]))
    fig, axes = plt.subplots(len(models), 1, figsize=(7, 1.9 * len(models)), squeeze=False)
    order = [f"{b}-{b + 1}" for b in RATING_BUCKETS[:-1]]
    for ax, model in zip(axes[:, 0], models):
        sns.violinplot(data=frame[frame["model"] == model], x="cosine", y="rating", order=order, orient="h",
                       cut=0, density_norm="width", inner="quartile", hue="rating", legend=False,
                       palette="viridis", ax=ax)
        ax.set_title(model, loc="left")
        ax.set_ylabel("gold rating")
    axes[-1, 0].set_xlabel("cosine similarity of the pair (each panel has its own horizontal scale)")
    fig.suptitle("Figure 4: STS-B test cosine similarities by human rating")
    fig.tight_layout()
    return style.save(fig, folder, "figure4_cosine_by_rating", f"profile {profile}; seed 42 runs: {', '.join(ids)}")


def bucket_separation(derived_records: dict[str, list[dict]]) -> pd.DataFrame:
    """Figure 4 in numbers: per model and seed, the mean cosine of the [4,5] and [0,1) buckets and their gap."""
    rows = []
    for name, ds in derived_records.items():
        for d in ds:
            stsb = d["result"]["stsb_test"]
            gold, cos = np.asarray(stsb["gold"]), np.asarray(stsb["cosines"])
            high, low = cos[gold >= 4].mean(), cos[gold < 1].mean()
            rows.append({"model": label(name), "run_id": d["run_id"], "mean_cos_4_5": high, "mean_cos_0_1": low,
                         "gap": high - low, "spread_all": cos.std()})
    return pd.DataFrame(rows)


# -- claims, outputs -----------------------------------------------------------------------------------------------

def claims(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The paper's claims (claims.yaml) on the reproduced cells, with the seeds' statistics. The MiniLM rows stand for
    the BERT and the RoBERTa blocks alike."""
    parts = [from_reproduced(tables[t]) for t in ("table1", "table6") if not tables[t].empty]
    reproduced = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["table", "group", "row", "column", "value", "values"])
    copies = []
    for group in CLAIM_GROUPS:
        t6 = reproduced[reproduced["table"] == "Table 6"].copy()
        t6 = t6[t6["group"] != group]
        t6["group"] = group
        copies.append(t6)
        t1 = reproduced[reproduced["table"] == "Table 1"].copy()
        t1["group"] = t1["group"].str.replace(" / BERT", f" / {group}")
        copies.append(t1[t1["group"].str.endswith(group)])
    table = pd.concat([reproduced] + copies, ignore_index=True)
    table = table.drop_duplicates(subset=["table", "group", "row", "column"], keep="first")
    verdicts = evaluate_all(PAPER, table)
    for claim, reason in NOT_TESTABLE.items():
        mask = verdicts["claim"] == claim
        verdicts.loc[mask, ["status", "detail", "effect", "p_value", "n", "test"]] = ["not run", reason, None, None, "", ""]
    return verdicts


def write_tables(records: dict[str, list[dict]], derived_records: dict[str, list[dict]],
                 profile: str) -> dict[str, pd.DataFrame]:
    folder, _ = output_dirs(profile)
    folder.mkdir(parents=True, exist_ok=True)
    trials = table1_trials(records)
    tables = {"table1": table1(trials), "table1_trials": trials, "table4": table4(records, derived_records),
              "table4_not_run": not_run_tasks(derived_records), "table6": table6(records, derived_records),
              "figure4_buckets": bucket_separation(derived_records)}
    tables["claims"] = claims(tables)
    write_csv_tables(folder, tables)
    return tables


def not_run(profile: str, records: dict[str, list[dict]]) -> pd.DataFrame:
    """The Table 1 cells without trials, with the reason."""
    scanned = {ex.cell_label(*c) for c in ex.cells(profile, extended=False)}
    reason = NOT_RUN_EXTENDED if profile == "small" else f"not run: the {profile} profile scans {sorted(scanned)}"
    with_trials = {ex.cell_label(*parts[1:]) for name, recs in records.items()
                   if recs and (parts := _trial_name_parts(name)) is not None}
    rows = [{"cell": ex.cell_label(*c), "status": reason} for c in ex.TABLE1_CELLS
            if ex.cell_label(*c) not in scanned | with_trials]
    return pd.DataFrame(rows, columns=["cell", "status"])


def wide(table: pd.DataFrame, index: str = "row", columns: str = "column") -> pd.DataFrame:
    """Reader's view: 'mean ± std (n) [reported]' per cell."""
    if table.empty:
        return table
    view = table.copy()
    view["cell"] = [mean_std(r) + (f" [{r['reported']:.2f}]" if pd.notna(r["reported"]) else "")
                    for _, r in view.iterrows()]
    out = view.pivot_table(index=index, columns=columns, values="cell", aggfunc="first", sort=False)
    return out.reindex(columns=list(dict.fromkeys(view[columns])))


def table1_wide(t1: pd.DataFrame) -> pd.DataFrame:
    """Table 1 as printed: rows (method, max/q75/q50), one column per cell, 'reproduced [reported] (n trials)'."""
    if t1.empty:
        return t1
    view = t1.copy()
    view["cell"] = [f"{r['reproduced']:.2f}" + (f" [{r['reported']:.1f}]" if pd.notna(r["reported"]) else "")
                    + f" ({r['n_trials']})" for _, r in view.iterrows()]
    return view.pivot_table(index=["group", "row"], columns="column", values="cell", aggfunc="first", sort=False)


def markdown_summary(tables: dict[str, pd.DataFrame]) -> str:
    """The README's fairseq-style tables (reported | reproduced mean ± std (n) | Δ), from the reproduced tables."""
    lines = []
    t6 = tables["table6"]
    if not t6.empty:
        lines += ["| Table 6 (MTEB, main score x 100) | column | tasks | paper row | reported | reproduced | Δ |",
                  "|---|---|---|---|---|---|---|"]
        for _, r in t6.iterrows():
            reported = f"{r['reported']:.2f}" if pd.notna(r["reported"]) else "–"
            delta = f"{r['delta']:+.2f}" if pd.notna(r["delta"]) else "–"
            paper_row = f"{r['reported_group']} {r['reported_row']}"
            lines.append(f"| {r['row']} | {r['column']} | {r['covers']} | {paper_row} | {reported} | {mean_std(r)} "
                         f"| {delta} |")
    t1 = tables["table1"]
    if not t1.empty:
        lines += ["", "| Table 1 (STS-B dev, Spearman x 100) | cell | stat | trials | reported (BERT) | reproduced | Δ |",
                  "|---|---|---|---|---|---|---|"]
        for _, r in t1.iterrows():
            reported = f"{r['reported']:.1f}" if pd.notna(r["reported"]) else "–"
            delta = f"{r['delta']:+.2f}" if pd.notna(r["delta"]) else "–"
            lines.append(f"| {r['group']} | {r['column']} | {r['row']} | {r['n_trials']} | {reported} | "
                         f"{r['reproduced']:.2f} | {delta} |")
    lines += [""] + markdown_rows(tables["claims"])
    return "\n".join(lines).strip()


def provenance(records: dict[str, list[dict]], derived_records: dict[str, list[dict]]) -> pd.DataFrame:
    """One row per run and derived record behind the tables: what it is, where and when it was computed."""
    return provenance_table(records, ((name, d) for name, ds in derived_records.items() for d in ds))
