"""The non-contrastive paper's tables from run records and derived records (DataFrames; nothing drawn here).

- Table 1: STS-B dev max / q75 / q50 over each cell's scan trials (:func:`scan_quantiles`), with the number of
  trials every quantile comes from; ``table1_trials`` lists every trial (its coefficients, learning rate, score), the
  points Figure 1 draws; ``table1_wide`` is Table 1 as printed.
- Table 4: MTEB main score per task of the headline models (mean ± std over seeds), next to the paper's RoBERTa.
- Table 6: category averages over the tasks that ran (each with how many of the category's tasks it covers),
  the average over the tasks that ran, and alignment/uniformity on STS-B test.
- Figure 4 in numbers (:func:`bucket_separation`); the claims the offline data cannot test (:func:`not_testable`).

Every reproduced row keeps its run ids; MTEB numbers come from derived records
(:mod:`sentemb.runs.mteb_geometry_records`).
Nothing here trains: :class:`papers.noncontrastive.paper.NonContrastive` collects the records and derived records.
The figures are in :mod:`papers.noncontrastive.figures`, the README's Markdown in :mod:`papers.noncontrastive.summary`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from papers.noncontrastive import NAME
from papers.noncontrastive import experiments as ex
from sentemb.data.mteb_mirror import MIRROR_TASKS
from sentemb.evaluate.mteb_adapter import TABLE4_TASKS
from sentemb.models.backbone import RAW_BERT
from sentemb.report.cell import Cell
from sentemb.report.reported import load_reported
from sentemb.report.reproduced import aggregate_seeds, join, trace

BACKBONE_ROW = "avg."  # Table 6's first row: most likely the untrained encoder with mean pooling (reported/ notes)
NOT_RUN_DERIVED = (
    "not run: MTEB + STS-B test geometry (Tables 4, 6, Figure 4) cost about 27 min per model on 2 "
    "cores; the small profile computes them with --extended (./run_all.sh --paper noncontrastive "
    "--extended)"
)
# Which of Table 4's tasks run offline follows from the tasks the archive reads from the mirror (MIRROR_TASKS), and
# which claims are testable follows from that: a claim on a Table 6 category needs at least one of its tasks.
OFFLINE_TASKS = {
    category: [t for t, c in TABLE4_TASKS.items() if c == category and t in MIRROR_TASKS]
    for category in dict.fromkeys(TABLE4_TASKS.values())
}
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


def headline_names(records: dict[str, list[dict]]) -> list[str]:
    return [BACKBONE_ROW] + [n for n in ex.HEADLINE_ROWS if records.get(n)]


def derived_not_run(records: dict[str, list[dict]], derived_records: dict[str, list[dict]]) -> pd.DataFrame:
    """The headline runs (row, seed) whose MTEB + geometry derived record is missing, with the reason."""
    have = {d["run_id"] for ds in derived_records.values() for d in ds}
    rows = [
        {"row": label(name), "seed": r["spec"]["seed"], "run_id": r["run_id"], "status": NOT_RUN_DERIVED}
        for name in headline_names(records)
        for r in records[name]
        if r["run_id"] not in have
    ]
    return pd.DataFrame(rows, columns=["row", "seed", "run_id", "status"])


def _run_of(d: dict, runs: list[dict]) -> dict:
    return next(r for r in runs if r["run_id"] == d["run_id"])


def label(name: str) -> str:
    return "avg. (backbone, mean pooling)" if name == BACKBONE_ROW else ex.HEADLINE_LABEL[name]


def reported_label(name: str) -> str:
    return BACKBONE_ROW if name == BACKBONE_ROW else ex.HEADLINE_LABEL[name]


# -- Table 1 -------------------------------------------------------------------------------------------------------


def scan_quantiles(scores: list[float]) -> dict[str, float]:
    """Table 1's rows over one cell's trials: max, q75 and q50 (the 75th and 50th percentiles, numpy's linear
    interpolation between order statistics; the paper does not define them)."""
    if not scores:
        raise ValueError("a cell without trials has no quantiles")
    values = np.asarray(scores, dtype=float)
    return {
        "max": float(values.max()),
        "q75": float(np.percentile(values, 75)),
        "q50": float(np.percentile(values, 50)),
    }


def trial_name_parts(name: str) -> tuple[str, str, float] | None:
    """(method, augmentation, strength) of a scan trial's run name ("bt/eda_0.1/3"), None for another row."""
    parts = name.split("/")
    if len(parts) != 3 or parts[0] not in ("bt", "vicreg"):
        return None
    augmentation, strength = parts[1].rsplit("_", 1)
    return ("barlow_twins" if parts[0] == "bt" else "vicreg"), augmentation, float(strength)


def table1_trials(records: dict[str, list[dict]]) -> pd.DataFrame:
    """Every scan trial: method, cell, learning rate, loss coefficients, its score (best STS-B dev x 100)."""
    rows = []
    for name, recs in records.items():
        parts = trial_name_parts(name)
        if parts is None or not recs:
            continue
        method, augmentation, strength = parts
        r = recs[0]
        params = r["spec"]["objective_params"]
        rows.append(
            {
                "method": ex.METHOD_LABEL[method],
                "cell": ex.cell_label(augmentation, strength),
                "trial": name,
                "lr": r["spec"]["lr"],
                "lambda": params.get("off_diagonal_weight"),
                "invariance_weight": params.get("invariance_weight"),
                "variance_weight": params.get("variance_weight"),
                "covariance_weight": params.get("covariance_weight"),
                "projector_width": params["projector_width"],
                "dropout": r["spec"]["dropout"],
                "best_stsb_dev": ex.best_dev(r),
                "best_step": r["training"]["best_step"],
                "final_stsb_dev_fp32": 100 * r["metrics"]["stsb_dev_spearman"],
                **trace(r),
            }
        )
    return pd.DataFrame(rows)


BACKBONE_GROUP = {RAW_BERT: "raw BERT"}  # by the trials' backbone: Table 1's group names the one standing for BERT


def table1(trials: pd.DataFrame) -> pd.DataFrame:
    """max / q75 / q50 of each cell's trial scores, next to the paper's BERT block (MiniLM stands for both)."""
    rows = []
    if trials.empty:
        return pd.DataFrame()
    for (method, cell), group in trials.groupby(["method", "cell"], sort=False):
        for stat, value in scan_quantiles(group["best_stsb_dev"].tolist()).items():
            rows.append(
                {
                    "paper": NAME,
                    "table": "Table 1",
                    "row": stat,
                    "group": f"{method} / {BACKBONE_GROUP.get(group['backbone_used'].iloc[0], 'MiniLM')}",
                    "reported_group": f"{method} / BERT",
                    "reported_row": stat,
                    "column": cell,
                    "split": "dev",
                    "aggregation": "",
                    "metric": "spearman",
                    "reproduced": value,
                    "n_trials": len(group),
                    "run_ids": ";".join(group["run_id"]),
                    "profile": group["profile"].iloc[0],
                    "backbone_used": group["backbone_used"].iloc[0],
                }
            )
    return join(pd.DataFrame(rows), load_reported(NAME, "table1"))


def table1_wide(t1: pd.DataFrame) -> pd.DataFrame:
    """Table 1 as printed: rows (method, max/q75/q50), one column per cell, 'reproduced [reported] (n trials)'."""
    if t1.empty:
        return t1
    view = t1.copy()
    view["cell"] = [
        f"{r['reproduced']:.2f}"
        + (f" [{r['reported']:.1f}]" if pd.notna(r["reported"]) else "")
        + f" ({r['n_trials']})"
        for _, r in view.iterrows()
    ]
    return view.pivot_table(index=["group", "row"], columns="column", values="cell", aggfunc="first", sort=False)


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
                column, split = reported_label(name), result["split"]
                cell = Cell(NAME, "Table 4", task, name, result["category"], task, column, split, metric="main_score")
                per_seed.append(cell.seed(result["main_score"], _derived_trace(d, run)))
    if not per_seed:
        return pd.DataFrame()
    cells = aggregate_seeds(pd.DataFrame(per_seed), extra=("derived_id",))
    table = join(cells, load_reported(NAME, "table4"))
    table.insert(table.columns.get_loc("column") + 1, "model", [label(r) for r in table["run"]])
    return table


def not_run_tasks(derived_records: dict[str, list[dict]]) -> pd.DataFrame:
    """Table 4's tasks that did not run, with the reason (the same for every model)."""
    first = next((ds[0] for ds in derived_records.values() if ds), None)
    if first is None:
        return pd.DataFrame(columns=["task", "category", "reason"])
    return pd.DataFrame(
        [
            {"task": t, "category": r.get("category"), "reason": r.get("reason")}
            for t, r in _mteb(first).items()
            if r.get("status") != "ok"
        ]
    )


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
            cells += [
                ("alignment", geometry["alignment"], "other", "", "STS-B test"),
                ("uniformity", geometry["uniformity"], "other", "", "STS-B test"),
            ]
            group = "RoBERTa" if name == "bt_nli" else "BERT"
            row = Cell(NAME, "Table 6", label(name), name, group, reported_label(name))
            for column, value, metric, split, covers in cells:
                cell = row.at(column=column, split=split, metric=metric)
                per_seed.append(cell.seed(value, _derived_trace(d, run), covers=covers))
    if not per_seed:
        return pd.DataFrame()
    cells = aggregate_seeds(pd.DataFrame(per_seed), extra=("derived_id",))
    covers = {(r["run"], r["column"]): r["covers"] for r in per_seed}
    cells["covers"] = [covers[(r, c)] for r, c in zip(cells["run"], cells["column"])]
    return delta_on_the_same_tasks(join(cells, load_reported(NAME, "table6")))


def delta_on_the_same_tasks(table: pd.DataFrame) -> pd.DataFrame:
    """Δ only where both sides average the same tasks: a category mean that covers "n of m" tasks with n < m is
    not the paper's m-task mean, so its Δ is left empty and ``delta_note`` says why."""
    out = table.copy()
    counts = out["covers"].astype(str).str.extract(r"^(\d+) of (\d+)$").astype(float)
    partial = counts[0].notna() & (counts[0] < counts[1])
    out.loc[partial, "delta"] = float("nan")
    out["delta_note"] = [
        "" if not p else f"no Δ: the reproduced mean covers {c} tasks, the paper's all of them"
        for p, c in zip(partial, out["covers"])
    ]
    return out


# -- Figure 4 ------------------------------------------------------------------------------------------------------


def bucket_separation(derived_records: dict[str, list[dict]]) -> pd.DataFrame:
    """Figure 4 in numbers: per model and seed, the mean cosine of the [4,5] and [0,1) buckets and their gap."""
    rows = []
    for name, ds in derived_records.items():
        for d in ds:
            stsb = d["result"]["stsb_test"]
            gold, cos = np.asarray(stsb["gold"]), np.asarray(stsb["cosines"])
            high, low = cos[gold >= 4].mean(), cos[gold < 1].mean()
            rows.append(
                {
                    "model": label(name),
                    "run_id": d["run_id"],
                    "mean_cos_4_5": high,
                    "mean_cos_0_1": low,
                    "gap": high - low,
                    "spread_all": cos.std(),
                }
            )
    return pd.DataFrame(rows)
