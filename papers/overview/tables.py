"""The overview's tables, from run records and derived records (``notebooks/overview.ipynb`` shows them): pure
functions returning DataFrames, and the constants they use; the figures are :mod:`papers.overview.figures`, the
README's Markdown :mod:`papers.overview.summary`.

- Coverage and claims of every paper (:mod:`sentemb.archive_coverage`).
- The comparison: every method of :mod:`papers.overview.experiments` on the 7 STS tasks (test, Spearman x 100), under
  SimCSE's protocol (``all`` aggregation for STS12-16) and DeCLUTR's (``mean``); mean ± std over the seeds, and
  pairwise two-sided t-tests on the 7-task average (paired where the methods' runs share seeds and data order,
  Welch otherwise), corrected for the number of pairs by Holm (``sentemb.report.multiplicity``: the claims' rule,
  valid whatever the dependence between pairs that share a method).
- SentEval's 7 transfer tasks (fasttest in the small profile) and the offline MTEB tasks, from the derived records
  of :func:`papers.overview.analyses.comparison_records`; a method without them is listed as not run.
- Compute: wall time, training share and training throughput per method and per paper.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd

from papers.overview import experiments as ex
from sentemb import archive_coverage, settings
from sentemb.paper import get_paper, reproduced_papers
from sentemb.profiles import get_profile
from sentemb.report.cell import Cell
from sentemb.report.comparison import Comparison, Seeds
from sentemb.report.multiplicity import adjusted
from sentemb.report.reproduced import aggregate_seeds, derived_sts_record, sts_rows, trace
from sentemb.runs import store

PROTOCOLS = {
    "all": "SimCSE's protocol (STS12-16: all subsets concatenated)",
    "mean": "DeCLUTR's protocol (STS12-16: mean over the subsets)",
}


# -- the comparison on STS --------------------------------------------------------------------------------------------


def sts_per_seed(sts: dict[str, list[dict]]) -> pd.DataFrame:
    rows = []
    for method, runs in sts.items():
        paper, row = ex.METHODS[method]
        for record in runs:
            rows += sts_rows(record, Cell(paper, "comparison", method, row))
    return pd.DataFrame(rows)


def sts_comparison(sts: dict[str, list[dict]]) -> pd.DataFrame:
    """Long table: one row per (method, task, aggregation), mean/std/n over the seeds and the trace columns."""
    return aggregate_seeds(sts_per_seed(sts))


def sts_seeds(sts: dict[str, list[dict]], aggregation: str) -> dict[str, Seeds]:
    """Method -> its seeds' 7-task STS averages, STS12-16 aggregated as ``aggregation`` says."""
    per_seed = sts_per_seed(sts)
    if aggregation != "all":
        per_seed = per_seed[per_seed["aggregation"].isin((aggregation, "")) & (per_seed["column"] != "Avg.")]
        per_seed = per_seed.groupby(["row", "run_id", "profile"], sort=False)["reproduced"].mean().reset_index()
    else:
        per_seed = per_seed[per_seed["column"] == "Avg."]
    return {
        m: Seeds(
            per_seed.loc[per_seed["row"] == m, "reproduced"].tolist(),
            per_seed.loc[per_seed["row"] == m, "run_id"].tolist(),
            next(iter(per_seed.loc[per_seed["row"] == m, "profile"]), ""),
        )
        for m in sts
    }


def pairwise(seeds: dict[str, Seeds], evaluation: str, aggregation: str = "") -> pd.DataFrame:
    """Every pair of methods with >= 2 seeds each: the difference, the two-sided p-value, and the p-value corrected
    for the number of pairs of this evaluation (Holm, as the claims); significant at 0.05 after it. Like the claims
    (:class:`~sentemb.report.comparison.Comparison`), methods whose runs share their randomness (the same seed and data
    order, or init runs) are compared paired on their matched seeds, the others by Welch's test (``test``); a pair whose
    seeds are not independent replicates (overlapping init runs) is listed with its difference and no p-value."""
    seeds = {m: v for m, v in seeds.items() if len(v) >= 2}
    rows = []
    for a, b in itertools.combinations(seeds, 2):
        comparison = Comparison(seeds[a], seeds[b])
        if not comparison.testable and not comparison.design.refused:  # paired on fewer than 2 matched seeds
            continue
        p = min(1.0, 2 * min(comparison.p_greater(), comparison.p_less())) if comparison.testable else float("nan")
        rows.append(
            {
                "evaluation": evaluation,
                "method_a": a,
                "method_b": b,
                "aggregation": aggregation,
                "difference": comparison.difference,
                "p_value": p,
                "n": comparison.n,
                "test": comparison.test("two-sided"),
            }
        )
    table = pd.DataFrame(rows)
    if not table.empty:  # the pairs that may not be tested (not independent replicates) have no p and no correction
        tested = table["p_value"].notna()
        table["p_corrected"] = float("nan")
        if tested.any():
            table.loc[tested, "p_corrected"] = adjusted(table.loc[tested, "p_value"].tolist())
        table["significant"] = table["p_corrected"] < 0.05
    return table


# -- transfer and MTEB ------------------------------------------------------------------------------------------------


def transfer_tasks(d: dict) -> list[tuple[str, float]]:
    """(task, test accuracy %) of a transfer derived record, for the tasks with an accuracy."""
    return [(name, float(r["acc"])) for name, r in d["result"]["transfer"]["tasks"].items() if r.get("acc") is not None]


def mteb_tasks(d: dict) -> list[tuple[str, float]]:
    """(task, main score x 100) of an MTEB derived record, for the tasks that ran."""
    tasks = (d["result"]["mteb"] or {"tasks": {}})["tasks"]
    return [(name, float(r["main_score"])) for name, r in tasks.items() if r["status"] == "ok"]


DERIVED_TASKS = {"transfer": (transfer_tasks, "accuracy"), "mteb": (mteb_tasks, "main_score")}


def derived_average(kind: str, d: dict) -> float | None:
    """A transfer or MTEB derived record's mean score over its tasks; None when it has none."""
    scores = [score for _, score in DERIVED_TASKS[kind][0](d)]
    return float(np.mean(scores)) if scores else None


def derived_comparison(kind: str, derived_records: dict[str, list[dict]], records: dict[str, list[dict]]):
    """Long table of ``kind`` (transfer: accuracy %; MTEB: mteb's main score x 100) per task and their average, mean
    over the seeds that have it; each seed traced like a run (:func:`sentemb.report.reproduced.trace`): the derived
    record's id, commit, data and time, the backbone and seed of its run."""
    tasks, metric = DERIVED_TASKS[kind]
    runs = {r["run_id"]: r for group in records.values() for r in group}
    rows = []
    for method, found in derived_records.items():
        paper, row = ex.METHODS[method]
        cell = Cell(paper, "comparison", method, row, split="test", metric=metric)
        for d in found:
            traced = trace(derived_sts_record({**d, "result": {"tasks": {}}}, runs[d["run_id"]]))
            average = derived_average(kind, d)
            for column, value in tasks(d) + ([("Avg.", average)] if average is not None else []):
                rows.append(cell.at(column=column).seed(value, traced))
    return aggregate_seeds(pd.DataFrame(rows)) if rows else pd.DataFrame()


def derived_seeds(kind: str, derived_records: dict[str, list[dict]]) -> dict[str, Seeds]:
    """Method -> one :func:`derived_average` per seed that has the derived record (with their derived ids)."""
    out = {}
    for method, found in derived_records.items():
        kept = [(v, d) for v, d in ((derived_average(kind, d), d) for d in found) if v is not None]
        ids = [d.get("derived_id") for _, d in kept]
        out[method] = Seeds(
            [v for v, _ in kept], ids if all(ids) else (), next((d.get("profile", "") for _, d in kept), "")
        )
    return out


def missing_derived(records: dict[str, list[dict]], derived_records: dict[str, dict[str, list[dict]]]) -> pd.DataFrame:
    """Per evaluation and method, how many seeds lack it."""
    rows = []
    for kind, by_method in derived_records.items():
        for method, runs in records.items():
            missing = len(runs) - len(by_method.get(method, []))
            if missing:
                how = (
                    "./run_all.sh --paper overview computes it"
                    if kind == "sts"
                    else "not run yet (outside the budget): ./run_all.sh --paper overview --extended computes it"
                )
                rows.append({"evaluation": kind, "method": method, "seeds without it": missing, "status": how})
    return pd.DataFrame(rows, columns=["evaluation", "method", "seeds without it", "status"])


# -- compute, coverage and claims -------------------------------------------------------------------------------------


def _compute_row(runs: list[dict]) -> dict:
    trained = [r for r in runs if r["training"]]
    total = sum(r["timing"]["total_seconds"] for r in runs)
    train = sum(r["timing"]["train_seconds"] for r in runs)
    return {
        "records": len(runs),
        "wall_seconds": round(total, 1),
        "training_share": train / total if total else None,
        "sentences_per_second": float(np.mean([r["training"]["rows_per_second"] for r in trained]))
        if trained
        else None,
    }


def compute_per_method(records: dict[str, list[dict]]) -> pd.DataFrame:
    return pd.DataFrame([{"method": m, **_compute_row(runs)} for m, runs in records.items()])


def compute_per_paper(profile: str) -> pd.DataFrame:
    """Per paper: every record its grid names, the rows behind ``--extended`` included (a run several papers share
    counts in each), and the derived records of those runs (whichever paper's analysis made them)."""
    from sentemb.runs import store

    folder = settings.results_root() / "runs" / profile / "derived"
    derived_records = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    rows = []
    for name, paper in reproduced_papers().items():
        specs = {s.run_id for group in paper.grid(profile, extended=True).values() for s in group}
        runs = [r for r in (store.load(profile, i) for i in sorted(specs)) if r is not None]
        analyses = [d for d in derived_records if d["run_id"] in specs]
        rows.append(
            {
                "paper": name,
                **_compute_row(runs),
                "derived_records": len(analyses),
                "derived_seconds": round(sum(d["timing"]["total_seconds"] for d in analyses), 1),
            }
        )
    return pd.DataFrame(rows)


def coverage_all() -> pd.DataFrame:
    """Every paper's coverage, stacked."""
    return pd.concat([archive_coverage.coverage(p) for p in archive_coverage.titles()], ignore_index=True)


def claims_table(profile: str) -> pd.DataFrame:
    """Every paper's claims with their status, each linked to its entry in the paper's claims.yaml."""
    table = archive_coverage.claims(profile)
    lines = {}
    for paper in archive_coverage.titles():
        text = (settings.REPO_ROOT / "papers" / paper / "claims.yaml").read_text().splitlines()
        for number, line in enumerate(text, start=1):
            if line.lstrip().startswith("- id:") or line.lstrip().startswith("id:"):
                lines[(paper, line.split(":", 1)[1].strip().strip("'\""))] = number
    table["link"] = [
        f"../papers/{p}/claims.yaml#L{lines.get((p, c), 1)}" for p, c in zip(table["paper"], table["claim"])
    ]
    return table[["paper", "claim", "status", "effect", "p_value", "n", "test", "link"]]


class StoredRuns(dict):
    """Each profile's records in the run store by run id, read once, on a profile's first lookup (one build reads a
    profile's store once however many of its tables need it)."""

    def __missing__(self, profile: str) -> dict[str, dict]:
        self[profile] = {r["run_id"]: r for r in store.all_records(profile)}
        return self[profile]


def sts7_average(record: dict) -> float | None:
    """A run's 7-STS test average (``summary["Avg."]``, SimCSE's protocol ``all``, Spearman x 100): its own, or for a
    run whose final evaluation did not score the 7 tasks (e.g. STS-B dev only) that of its stored derived 7-STS record
    (:func:`papers.overview.analyses.sts7`, read only: never computed here); None when it has neither."""
    own = record["metrics"].get("summary", {}).get("Avg.")
    if own is not None:
        return own
    from papers.overview import analyses
    from sentemb.runs.derived import NotRun

    if analyses.has_sts7(record):  # the 7 tasks without their average: nothing to read
        return None
    try:  # the derived record's summary is the run's (the same evaluator's ``summary``, "Avg." included)
        return analyses.sts7(record, run_missing=False)["result"]["summary"].get("Avg.")
    except NotRun:
        return None


def row_values(profile: str, method: str, by_id: dict[str, dict]) -> dict:
    """The 7-STS test averages (:func:`sts7_average`: a run's own, or its derived record's) of ``method``'s row
    (:data:`ex.BACKBONE_ROWS`) in ``profile``'s grid, among the records ``by_id``: mean, std, n, the values and the
    run ids (each the run's own id, also where the value is its derived record's). A seed without a record, or whose
    record has neither average, is left out of all of them: ``n`` counts the seeds the mean is over."""
    paper, row = ex.BACKBONE_ROWS[method]
    specs = get_paper(paper).grid(profile, extended=True).get(row, ())
    scored = [(by_id[s.run_id], sts7_average(by_id[s.run_id])) for s in specs if s.run_id in by_id]
    found = [(r, v) for r, v in scored if v is not None]
    values = [v for _, v in found]
    return {
        "mean": float(np.mean(values)) if values else float("nan"),
        "std": float(np.std(values, ddof=1)) if len(values) > 1 else float("nan"),
        "n": len(values),
        "values": ";".join(f"{v:.4f}" for v in values),
        "run_ids": ";".join(r["run_id"] for r, _ in found),
    }


def methods_by_backbone(profile: str, stored: StoredRuns | None = None) -> pd.DataFrame:
    """The 7 STS test tasks' average (SimCSE's protocol, Spearman x 100) of each row of :data:`ex.BACKBONE_ROWS` on
    ``profile`` and on the profile it is compared with (the same grids on another backbone), mean, std and seeds of
    each, read from the run store (``stored``, one build's reads; a run that scored STS-B dev only by its stored derived
    7-STS record, :func:`sts7_average`), and each row's difference from its backbone's untrained mean pooling; empty
    when there is no such profile."""
    other = get_profile(profile).compare_with
    if not other:
        return pd.DataFrame()
    stored = StoredRuns() if stored is None else stored
    rows = []
    for method, (paper, row) in ex.BACKBONE_ROWS.items():
        out = {"method": method, "paper": paper, "row": row}
        for name in (other, profile):
            out.update({f"{name} {k}": v for k, v in row_values(name, method, stored[name]).items()})
        rows.append(out)
    table = pd.DataFrame(rows)
    for name in (other, profile):
        untrained = table.loc[table["row"] == "backbone_avg", f"{name} mean"].iloc[0]
        table[f"{name} minus untrained mean pooling"] = table[f"{name} mean"] - untrained
    return table


def claims_by_backbone(profile: str) -> pd.DataFrame:
    """Each claim's direction and size verdicts on ``profile`` beside those on the profile it is compared with (the
    same grids on another backbone), and whether either verdict changed; empty when there is no such profile or
    either side has no claims yet."""
    other = get_profile(profile).compare_with
    if not other:
        return pd.DataFrame()
    keys, verdicts = ["paper", "claim"], ["direction_status", "size_status"]
    mine, theirs = archive_coverage.claims(profile), archive_coverage.claims(other)
    if mine.empty or theirs.empty:
        return pd.DataFrame()
    table = theirs[keys + verdicts].merge(
        mine[keys + verdicts], on=keys, how="outer", suffixes=(f" {other}", f" {profile}")
    )
    table = table.fillna("no record")
    table["changed"] = [
        any(row[f"{v} {other}"] != row[f"{v} {profile}"] for v in verdicts) for _, row in table.iterrows()
    ]
    return table
