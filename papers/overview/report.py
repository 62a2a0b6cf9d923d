"""The overview's tables and figures, from run records only (``notebooks/overview.ipynb`` shows them).

- Coverage and claims of every paper (:mod:`sentemb.report.archive_coverage`).
- The comparison: every method of :mod:`papers.overview.experiments` on the 7 STS tasks (test, Spearman x 100), under
  SimCSE's protocol (``all`` aggregation for STS12-16) and DeCLUTR's (``mean``); mean ± std over the seeds, and
  pairwise two-sided t-tests on the 7-task average (paired where the methods' runs share seeds and data order,
  Welch otherwise), corrected for the number of pairs (Benjamini-Hochberg, ``scipy.stats.false_discovery_control``).
- SentEval's 7 transfer tasks (fasttest in the small profile) and the offline MTEB tasks, from the derived records
  SimCSE's Table E.1 and the non-contrastive paper's Table 4 compute (the same derived ids: shared, not recomputed);
  a method without them is listed as not run.
- Compute: wall time, training share and training throughput per method and per paper.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats

from papers.overview import experiments as ex
from papers.overview.analyses import has_sts7, sts7
from sentemb import settings
from sentemb.plots import style
from sentemb.report import archive_coverage
from sentemb.report.claims import Comparison, Seeds
from sentemb.report.grid_records import collect_records
from sentemb.report.reproduced import aggregate_seeds, derived_sts_record, mean_std, sts_rows, trace
from sentemb.report.views import write_csv_tables
from sentemb.runs.derived import NotRun, derived_of_each

PAPER = "overview"
SUBSTITUTES = ("backbone all-MiniLM-L6-v2 (already contrastively trained) for BERT/RoBERTa; 60 steps of batch 64 on "
               "the mirror's data; 3 seeds")
PROTOCOLS = {"all": "SimCSE's protocol (STS12-16: all subsets concatenated)",
             "mean": "DeCLUTR's protocol (STS12-16: mean over the subsets)"}


def output_dirs(profile: str):
    return settings.paper_output_dirs(PAPER, profile)


def collect(profile: str, run_missing: bool = True, extended: bool = False, progress: bool = True) -> dict[str, list[dict]]:
    """Method -> its records, one per seed (every one is a paper's run). With ``run_missing`` a missing one is trained
    if its method is in ``ex.grid(profile, extended=extended)``; a method outside it (TNCSE's wiki-only row without
    ``--extended``) is only read, and left out where it has no records."""
    return collect_records(ex.grid, profile, run_missing, extended=extended, progress=progress)


def methods_not_run(records: dict[str, list[dict]]) -> list[str]:
    """The methods of the grid with no record (a row outside its paper's small-profile budget, from scratch)."""
    return [method for method, runs in records.items() if not runs]


# -- the comparison on STS --------------------------------------------------------------------------------------------

def sts_records(records: dict[str, list[dict]], run_missing: bool = True) -> dict[str, list[dict]]:
    """Method -> one record per seed holding the 7 STS tasks: the run's own, or (a run that scored STS-B dev only)
    its derived 7-task record in a run's shape (:func:`papers.overview.analyses.sts7`; computed when missing only
    with ``run_missing``); a seed without either is left out."""
    out = {}
    for method, runs in records.items():
        out[method] = []
        for record in runs:
            if has_sts7(record):
                out[method].append(record)
                continue
            try:
                out[method].append(derived_sts_record(sts7(record, run_missing=run_missing), record))
            except NotRun:
                pass
    return out


def sts_per_seed(sts: dict[str, list[dict]]) -> pd.DataFrame:
    rows = []
    for method, runs in sts.items():
        paper, row = ex.METHODS[method]
        for record in runs:
            rows += sts_rows(record, {"paper": paper, "table": "comparison", "row": method, "run": row})
    return pd.DataFrame(rows)


def sts_comparison(sts: dict[str, list[dict]]) -> pd.DataFrame:
    """Long table: one row per (method, task, aggregation), mean/std/n over the seeds and the trace columns."""
    return aggregate_seeds(sts_per_seed(sts))


def wide(table: pd.DataFrame, aggregation: str = "all") -> pd.DataFrame:
    """Reader's view: one row per method, 'mean ± std (n)' per task and the average."""
    view = table[table["aggregation"].isin((aggregation, ""))].copy()
    view["cell"] = [mean_std({"reproduced": r["value"], "std": r["std"], "n": r["n"]}) for _, r in view.iterrows()]
    out = view.pivot_table(index="row", columns="column", values="cell", aggfunc="first", sort=False)
    return out.reindex(columns=list(dict.fromkeys(view["column"])))


def _average_seeds(sts: dict[str, list[dict]], aggregation: str) -> dict[str, list[float]]:
    per_seed = sts_per_seed(sts)
    if aggregation != "all":  # the average over the 7 tasks with STS12-16 aggregated as asked
        per_seed = per_seed[per_seed["aggregation"].isin((aggregation, ""))]
        per_seed = per_seed[per_seed["column"] != "Avg."]
        per_seed = per_seed.groupby(["row", "run_id", "profile"], sort=False)["value"].mean().reset_index()
    else:
        per_seed = per_seed[per_seed["column"] == "Avg."]
    return {m: Seeds(per_seed.loc[per_seed["row"] == m, "value"].tolist(),
                     per_seed.loc[per_seed["row"] == m, "run_id"].tolist(),
                     next(iter(per_seed.loc[per_seed["row"] == m, "profile"]), "")) for m in sts}


def pairwise(sts: dict[str, list[dict]], aggregation: str = "all") -> pd.DataFrame:
    """Every pair of methods with >= 2 seeds each on the 7-task STS average under ``aggregation``
    (:func:`pairwise_of`)."""
    return pairwise_of(_average_seeds(sts, aggregation), "sts", aggregation)


def pairwise_of(values: dict[str, list[float]], evaluation: str, aggregation: str = "") -> pd.DataFrame:
    """Every pair of methods with >= 2 seeds each in ``values`` (method -> one average per seed, as
    :class:`~sentemb.report.claims.Seeds` with their run ids): the difference, the two-sided p-value, and the p-value
    corrected for the number of pairs of this evaluation (Benjamini-Hochberg); significant at 0.05 after it. Like the
    claims (:class:`~sentemb.report.claims.Comparison`), methods whose runs share their randomness (the same seed and
    data order, or init runs) are compared paired on their matched seeds, the others by Welch's test; ``test`` says
    which and why."""
    seeds = {m: v for m, v in values.items() if len(v) >= 2}
    rows = []
    for a, b in itertools.combinations(seeds, 2):
        comparison = Comparison(seeds[a], seeds[b])
        if not comparison.testable:  # paired on fewer than 2 matched seeds
            continue
        p = min(1.0, 2 * min(comparison.p_greater(), comparison.p_less()))
        rows.append({"evaluation": evaluation, "method_a": a, "method_b": b, "aggregation": aggregation,
                     "difference": comparison.difference, "p_value": p, "n": comparison.n,
                     "test": comparison.test("two-sided")})
    table = pd.DataFrame(rows)
    if not table.empty:
        table["p_corrected"] = stats.false_discovery_control(table["p_value"].to_numpy(), method="bh")
        table["significant"] = table["p_corrected"] < 0.05
    return table


# -- transfer and MTEB (derived records shared with SimCSE's Table E.1 and the non-contrastive Table 4) ---------------

def derived(records: dict[str, list[dict]], run_missing: bool = True,
            extended: bool = False) -> dict[str, dict[str, list[dict]]]:
    """{"sts": :func:`sts_records`, "transfer": method -> derived records, "mteb": method -> derived records}. A seed
    without its 7-task STS, transfer or MTEB record is left out unless ``run_missing`` and ``extended`` (then it is
    computed: about 1 min (STS, for the runs that end with STS-B dev only: Barlow Twins, VICReg), 5 min (transfer)
    and 11 min (MTEB) per model on 2 idle cores, plus 4-6 min to train again a run whose checkpoint this machine
    lacks). So without ``--extended`` the overview computes nothing of its own and reads the committed records."""
    from papers.noncontrastive.analyses import mteb_and_geometry
    from papers.simcse.analyses import transfer

    out = {"sts": sts_records(records, run_missing and extended), "transfer": {}, "mteb": {}}
    for method, runs in records.items():
        for kind, compute in (("transfer", transfer), ("mteb", mteb_and_geometry)):
            out[kind][method] = derived_of_each(runs, compute, run_missing and extended)
    return out


def _derived_rows(derived_records: dict[str, list[dict]], records: dict[str, list[dict]], values) -> pd.DataFrame:
    """Per-seed rows of derived results, traced like a run's (:func:`sentemb.report.reproduced.trace`): the derived
    record's id, commit, data and time, the backbone and seed of its run."""
    runs = {r["run_id"]: r for group in records.values() for r in group}
    rows = []
    for method, found in derived_records.items():
        paper, row = ex.METHODS[method]
        for d in found:
            traced = trace(derived_sts_record({**d, "result": {"tasks": {}}}, runs[d["run_id"]]))
            for column, value in values(d):
                rows.append({"paper": paper, "table": "comparison", "row": method, "run": row, "column": column,
                             "split": "test", "aggregation": "", "metric": "", "value": value, **traced})
    return pd.DataFrame(rows)


def _transfer_tasks(d: dict) -> list[tuple[str, float]]:
    """(task, test accuracy %) of a transfer derived record, for the tasks with an accuracy."""
    return [(name, float(r["acc"])) for name, r in d["result"]["transfer"]["tasks"].items() if r.get("acc") is not None]


def _mteb_tasks(d: dict) -> list[tuple[str, float]]:
    """(task, main score x 100) of an MTEB derived record, for the tasks that ran."""
    tasks = (d["result"]["mteb"] or {"tasks": {}})["tasks"]
    return [(name, float(r["main_score"])) for name, r in tasks.items() if r["status"] == "ok"]


def transfer_average(d: dict) -> float:
    """A transfer derived record's mean test accuracy (%) over its tasks."""
    return float(np.mean([acc for _, acc in _transfer_tasks(d)]))


def mteb_average(d: dict) -> float | None:
    """An MTEB derived record's mean main score (x 100) over the tasks that ran; None when none did."""
    ran = [score for _, score in _mteb_tasks(d)]
    return float(np.mean(ran)) if ran else None


def transfer_comparison(derived_records: dict[str, list[dict]], records: dict[str, list[dict]]) -> pd.DataFrame:
    """Accuracy (%) per SentEval transfer task and their average, mean over the seeds that have it."""
    rows = _derived_rows(derived_records, records, lambda d: _transfer_tasks(d) + [("Avg.", transfer_average(d))])
    return aggregate_seeds(rows.assign(metric="accuracy")) if not rows.empty else rows


def mteb_comparison(derived_records: dict[str, list[dict]], records: dict[str, list[dict]]) -> pd.DataFrame:
    """mteb's main score (x 100, as the adapter records it) per offline MTEB task, and their average."""
    def values(d):
        average = mteb_average(d)
        return _mteb_tasks(d) + ([("Avg.", average)] if average is not None else [])
    rows = _derived_rows(derived_records, records, values)
    return aggregate_seeds(rows.assign(metric="main_score")) if not rows.empty else rows


def derived_averages(derived_records: dict[str, list[dict]], average) -> dict[str, list[float]]:
    """Method -> one ``average(record)`` per seed that has the derived record."""
    out = {}
    for method, found in derived_records.items():
        kept = [(average(d), d) for d in found]
        kept = [(v, d) for v, d in kept if v is not None]
        ids = [d.get("derived_id") for _, d in kept]
        out[method] = Seeds([v for v, _ in kept], ids if all(ids) else (),
                            next((d.get("profile", "") for _, d in kept), ""))
    return out


def missing_derived(records: dict[str, list[dict]], derived_records: dict[str, dict[str, list[dict]]]) -> pd.DataFrame:
    """Per evaluation and method, how many seeds lack it."""
    rows = []
    for kind, by_method in derived_records.items():
        for method, runs in records.items():
            missing = len(runs) - len(by_method.get(method, []))
            if missing:
                how = "./run_all.sh --paper overview computes it" if kind == "sts" else \
                    "not run yet (outside the budget): ./run_all.sh --paper overview --extended computes it"
                rows.append({"evaluation": kind, "method": method, "seeds without it": missing, "status": how})
    return pd.DataFrame(rows, columns=["evaluation", "method", "seeds without it", "status"])


# -- compute --------------------------------------------------------------------------------------------------------

def _compute_row(runs: list[dict]) -> dict:
    trained = [r for r in runs if r["training"]]
    total = sum(r["timing"]["total_seconds"] for r in runs)
    train = sum(r["timing"]["train_seconds"] for r in runs)
    return {"records": len(runs), "wall_seconds": round(total, 1), "training_share": train / total if total else None,
            "sentences_per_second": float(np.mean([r["training"]["rows_per_second"] for r in trained])) if trained else None}


def compute_per_method(records: dict[str, list[dict]]) -> pd.DataFrame:
    return pd.DataFrame([{"method": m, **_compute_row(runs)} for m, runs in records.items()])


def compute_per_paper(profile: str) -> pd.DataFrame:
    """Per paper: every record its grid names, the rows behind ``--extended`` included (a run several papers share
    counts in each), and the derived records of those runs (whichever paper's analysis made them)."""
    import json

    from sentemb.runs import store
    from sentemb.runs.paper_grid import paper_grid

    folder = settings.results_root() / "runs" / profile / "derived"
    derived_records = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    rows = []
    for paper in archive_coverage.PAPERS:
        specs = {s.run_id for group in paper_grid(paper, profile).values() for s in group}
        runs = [r for r in (store.load(profile, i) for i in sorted(specs)) if r is not None]
        analyses = [d for d in derived_records if d["run_id"] in specs]
        rows.append({"paper": paper, **_compute_row(runs), "derived_records": len(analyses),
                     "derived_seconds": round(sum(d["timing"]["total_seconds"] for d in analyses), 1)})
    return pd.DataFrame(rows)


# -- claims ---------------------------------------------------------------------------------------------------------

def claims_table(profile: str) -> pd.DataFrame:
    """Every paper's claims with their status, each linked to its entry in the paper's claims.yaml."""
    table = archive_coverage.claims(profile)
    lines = {}
    for paper in archive_coverage.PAPERS:
        text = (settings.REPO_ROOT / "papers" / paper / "claims.yaml").read_text().splitlines()
        for number, line in enumerate(text, start=1):
            if line.lstrip().startswith("- id:") or line.lstrip().startswith("id:"):
                lines[(paper, line.split(":", 1)[1].strip().strip("'\""))] = number
    table["link"] = [f"../papers/{p}/claims.yaml#L{lines.get((p, c), 1)}" for p, c in zip(table["paper"], table["claim"])]
    return table[["paper", "claim", "status", "effect", "p_value", "n", "test", "link"]]


# -- outputs --------------------------------------------------------------------------------------------------------

def write_tables(records: dict[str, list[dict]], derived_records: dict, profile: str) -> dict[str, pd.DataFrame]:
    folder, _ = output_dirs(profile)
    sts = derived_records["sts"]
    tables = {"comparison_sts": sts_comparison(sts),
              "comparison_pairwise": pd.concat(
                  [pairwise(sts, a) for a in PROTOCOLS]
                  + [pairwise_of(derived_averages(derived_records["transfer"], transfer_average), "transfer"),
                     pairwise_of(derived_averages(derived_records["mteb"], mteb_average), "mteb")],
                  ignore_index=True),
              "comparison_transfer": transfer_comparison(derived_records["transfer"], records),
              "comparison_mteb": mteb_comparison(derived_records["mteb"], records),
              "budget": pd.DataFrame(ex.budget(ex.grid(profile))),
              "compute_per_method": compute_per_method(records), "compute_per_paper": compute_per_paper(profile),
              "coverage": pd.concat([archive_coverage.coverage(p) for p in archive_coverage.PAPERS], ignore_index=True),
              "claims_all": claims_table(profile)}
    write_csv_tables(folder, {k: v for k, v in tables.items() if not v.empty})
    return tables


def figure_comparison(sts: dict[str, list[dict]], profile: str):
    """Per method, the 7-task STS average of each seed (points) and their mean (bar), under both protocols."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    rows = []
    for aggregation in PROTOCOLS:
        for method, values in _average_seeds(sts, aggregation).items():
            rows += [{"method": method, "protocol": aggregation, "STS avg. (Spearman x 100)": v} for v in values]
    data = pd.DataFrame(rows)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, aggregation in zip(axes, PROTOCOLS):
        part = data[data["protocol"] == aggregation]
        sns.barplot(part, y="method", x="STS avg. (Spearman x 100)", ax=ax, color=style.PALETTE[0], alpha=0.35,
                    errorbar=None)
        sns.stripplot(part, y="method", x="STS avg. (Spearman x 100)", ax=ax, color=style.PALETTE[0], size=5,
                      jitter=False)  # no random jitter: the same records give the same bytes
        low = part["STS avg. (Spearman x 100)"].min()
        ax.set_xlim(low - 3, part["STS avg. (Spearman x 100)"].max() + 1)
        ax.set_title(PROTOCOLS[aggregation], fontsize=9)
        ax.set_ylabel("")
    _, folder = output_dirs(profile)
    return style.save(fig, folder, "comparison_sts",
                      f"profile {profile}; {SUBSTITUTES}; 7 STS test tasks, Spearman x 100; points: seeds; "
                      f"run ids in results/overview/{profile}/comparison_sts.csv")


def figure_pairwise(table: pd.DataFrame, profile: str):
    """Heatmap of the corrected p-values of the pairwise tests (SimCSE's protocol); annotated with the difference."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    part = table[(table["evaluation"] == "sts") & (table["aggregation"] == "all")]
    methods = list(dict.fromkeys(list(part["method_a"]) + list(part["method_b"])))
    p = pd.DataFrame(np.nan, index=methods, columns=methods)
    diff = pd.DataFrame("", index=methods, columns=methods)
    for _, r in part.iterrows():
        p.loc[r["method_a"], r["method_b"]] = p.loc[r["method_b"], r["method_a"]] = r["p_corrected"]
        diff.loc[r["method_a"], r["method_b"]] = f"{r['difference']:+.1f}"
        diff.loc[r["method_b"], r["method_a"]] = f"{-r['difference']:+.1f}"
    fig, ax = plt.subplots(figsize=(8, 6.5))
    sns.heatmap(p, annot=diff, fmt="", cmap="viridis_r", vmin=0, vmax=0.2, ax=ax,
                cbar_kws={"label": "p (paired t or Welch, two-sided, BH-corrected)"})
    ax.set_title("row minus column, STS avg.; dark: significant", fontsize=9)
    _, folder = output_dirs(profile)
    return style.save(fig, folder, "comparison_pairwise",
                      f"profile {profile}; {SUBSTITUTES}; SimCSE's STS protocol; "
                      f"results/overview/{profile}/comparison_pairwise.csv")


def archive_table(profile: str) -> list[str]:
    """Markdown rows, one per paper: its tables and figures per status, its claims per status, links to its README
    and notebook (relative to the top-level README)."""
    items, claims = archive_coverage.coverage_counts(), archive_coverage.claim_counts(profile)
    lines = ["| paper | tables + figures: reproduced / partly / not run / no numbers (n.a., not identifiable) | "
             "claims, direction: holds / fails / inconclusive / not run | "
             "size (as large as the paper's): holds / fails / inconclusive / no size or not run |", "|---|---|---|---|"]
    for (paper, title), (_, i), (_, c) in zip(archive_coverage.PAPERS.items(), items.iterrows(), claims.iterrows()):
        links = f"[{title}](papers/{paper}/README.md) ([notebook](notebooks/{paper}.ipynb))"
        lines.append(f"| {links} | {i['reproduced']} / {i['partly']} / {i['not run']} / "
                     f"{i['not applicable'] + i['not identifiable']} (of {i['items']}) | "
                     f"{c['holds']} / {c['fails']} / {c['inconclusive']} / {c['not run']} (of {c['claims']}) | "
                     f"{c['size holds']} / {c['size fails']} / {c['size inconclusive']} / "
                     f"{c['size no size'] + c['size not run']} |")
    return lines


def markdown_summary(tables: dict[str, pd.DataFrame], profile: str) -> str:
    """The top-level README's block: every paper's coverage and claims per status, then the comparison (mean ± std
    (n)) with the significant pairs."""
    sts = tables["comparison_sts"]
    lines = archive_table(profile) + [
             "", "**The methods compared** ([overview](papers/overview/README.md), "
             "[notebook](notebooks/overview.ipynb)): "
             f"profile {profile}; {SUBSTITUTES}. 7 STS test tasks (Spearman x 100), SentEval's 7 transfer tasks "
             "(test accuracy %, fasttest) and the offline MTEB tasks (main score x 100): mean ± std (n seeds); "
             "not run: the method's seeds lack that evaluation.", "",
             "| method | STS avg. (SimCSE protocol, `all`) | STS avg. (DeCLUTR protocol, `mean`) | transfer avg. | "
             "MTEB avg. | data | steps x batch |",
             "|---|---|---|---|---|---|---|"]
    budget = tables["budget"].set_index("method")
    averages = {a: _protocol_average(sts, a) for a in PROTOCOLS}
    derived_avg = {kind: _derived_average(tables[f"comparison_{kind}"]) for kind in ("transfer", "mteb")}
    for method in dict.fromkeys(sts["row"]):
        cells = [averages[a].get(method, "") for a in PROTOCOLS]
        cells += [derived_avg[kind].get(method, "not run") for kind in ("transfer", "mteb")]
        b = budget.loc[method]
        steps = f"{b['steps']} x {b['batch']}" if b["steps"] else "untrained"
        lines.append(f"| {method} | {' | '.join(cells)} | {b['train_data'] or '-'} | {steps} |")
    pairs = tables["comparison_pairwise"]
    for evaluation, aggregation, label in (("sts", "all", "STS, SimCSE protocol"), ("transfer", "", "transfer"),
                                           ("mteb", "", "MTEB")):
        part = pairs[(pairs["evaluation"] == evaluation) & (pairs["aggregation"] == aggregation)]
        if part.empty:
            continue
        significant = part[part["significant"].astype(bool)]
        paired = int(part["test"].str.startswith("paired").sum())
        lines += ["", f"Pairwise ({label}; two-sided, {paired} of {len(part)} pairs paired (the same seeds and data order, or "
                  f"init runs), the others Welch; Benjamini-Hochberg over {len(part)} pairs): "
                  f"{len(significant)} significant at 0.05" + (": " if len(significant) else "") + "; ".join(
                      f"{r['method_a']} {'>' if r['difference'] > 0 else '<'} {r['method_b']} "
                      f"({r['difference']:+.2f}, p = {r['p_corrected']:.2g})" for _, r in significant.iterrows()) + "."]
    return "\n".join(lines)


def _derived_average(table: pd.DataFrame) -> dict[str, str]:
    """Method -> 'mean ± std (n)' of the per-seed average of a transfer or MTEB comparison (its "Avg." rows)."""
    if table.empty:
        return {}
    avg = table[table["column"] == "Avg."]
    return {r["row"]: mean_std({"reproduced": r["value"], "std": r["std"], "n": r["n"]}) for _, r in avg.iterrows()}


def _protocol_average(sts: pd.DataFrame, aggregation: str) -> dict[str, str]:
    """Method -> 'mean ± std (n)' of the per-seed 7-task average under ``aggregation`` (from the long table)."""
    if aggregation == "all":
        avg = sts[sts["column"] == "Avg."]
        return {r["row"]: mean_std({"reproduced": r["value"], "std": r["std"], "n": r["n"]}) for _, r in avg.iterrows()}
    out = {}
    part = sts[sts["aggregation"].isin((aggregation, "")) & (sts["column"] != "Avg.")]
    for method, group in part.groupby("row", sort=False):
        per_seed = np.mean([[float(v) for v in str(values).split(";")] for values in group["values"]], axis=0)
        std = float(np.std(per_seed, ddof=1)) if len(per_seed) > 1 else float("nan")
        out[method] = mean_std({"reproduced": float(np.mean(per_seed)), "std": std, "n": len(per_seed)})
    return out
