"""SimCSE's tables and figures from run records: what the notebook calls.

Each function takes the records of :func:`papers.simcse.experiments.grid` (run name -> one record per seed)
and returns a long DataFrame (reproduced mean ± std over seeds next to reported, every seed's value and run id
kept) or a figure. Nothing here trains or evaluates.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from papers.simcse.experiments import TABLE3_DROPOUTS, grid, table3_run
from sentemb import settings
from sentemb.atomic import atomic_write
from sentemb.plots import geometry, style
from sentemb.report.claims import evaluate_all, for_csv, from_reproduced, markdown_rows
from sentemb.report.grid_records import collect_records
from sentemb.report.reported import coverage_table, load_reported
from sentemb.report.reproduced import aggregate_seeds, join, mean_std, sts_rows, trace
from sentemb.report.views import not_run_rows, wide_cells

PAPER = "simcse"
# run name -> (our row label, the reported (group, row) it reproduces, or None when the paper has no such row)
TABLE5_ROWS = {
    "backbone_avg": ("backbone, avg.", None),
    "backbone_cls": ("backbone, [CLS]", None),
    "unsup": ("unsup. SimCSE", ("Unsupervised models", "SimCSE-BERT-base")),
    "sup": ("sup. SimCSE", ("Supervised models", "SimCSE-BERT-base")),
}
# Every table and figure of the paper (papers/simcse/reported/index.csv): what this archive does with it.
COVERAGE = {
    "Figure 1": ("not applicable", "a diagram of the method, no numbers"),
    "Table 1": ("partly (extended rows)", "results/simcse/<profile>/table1.csv holds the rows with records; the "
                "other augmentations run with --extended; MLM 15% needs a pretrained masked LM, not offline"),
    "Table 2": ("partly (extended rows)", "results/simcse/<profile>/table2.csv; next-sentence rows on WikiText-2 sentence "
                "windows, two-encoder rows with --extended"),
    "Table 3": ("reproduced", "results/simcse/<profile>/table3.csv"),
    "Figure 2": ("reproduced", "figures/simcse/<profile>/figure2_align_uniform_training.*"),
    "Table 4": ("partly (extended rows)", "results/simcse/<profile>/table4.csv, 'full' column: SNLI dev+test pairs by "
                "label (--extended) for SNLI+MNLI; QQP, Flickr30k, ParaNMT, ANLI and the 'sample' column are not offline"),
    "Table 5": ("partly", "the SimCSE rows on the small profile's backbone; the other papers' models are not offline"),
    "Table 6": ("partly (extended rows)", "results/simcse/<profile>/table6.csv; the other poolers run with --extended"),
    "Table 7": ("partly (extended rows)", "results/simcse/<profile>/table7.csv; alpha 0.5/2 and contradiction + neutral "
                "(SNLI dev+test quads) run with --extended"),
    "Figure 3": ("partly", "backbone, unsup. and sup. SimCSE; the paper's other models are not offline"),
    "Table 8": ("not run", "retrieval over Flickr30k: the dataset is not offline"),
    "Table A.1": ("not applicable", "hyperparameters: used by papers/simcse/experiments.py"),
    "Table B.1": ("not applicable", "the protocols of other papers: implemented in sentemb/evaluate/sts.py"),
    "Table B.2": ("not run", "re-evaluates other papers' released checkpoints, which are not offline"),
    "Table B.3": ("partly", "the 'wmean' aggregation of the SimCSE rows is in table5.csv"),
    "Table C.1": ("not run", "post-processing (BERT-flow, whitening) is not in the grid"),
    "Table D.1": ("partly (extended rows)", "results/simcse/<profile>/tabled1.csv; the other temperatures and the dot "
                  "product run with --extended"),
    "Table D.2": ("not run (extended rows)", "results/simcse/<profile>/tabled2.csv once run with --extended (lambda 0 ... 1, "
                  "STS-B dev and transfer dev; a fresh MLM head tied to the input embeddings)"),
    "Table E.1": ("not run", "the SentEval transfer evaluator exists (final_eval 'sts,transfer') but the grid does "
                  "not ask for it yet"),
    "Figure F.1": ("reproduced", "figures/simcse/<profile>/figureF1_singular_values.*"),
    "Figure G.1": ("reproduced", "figures/simcse/<profile>/figureG1_cosine_by_rating.*"),
    "Text": ("not applicable", "hyperparameters from the running text: used by the grid"),
}
NOT_RUN_BUDGET = "not run: an ablation outside the small profile's budget (./run_all.sh --paper simcse --extended)"
# The ablation tables, each row (reported row, reported column, run name[, measure]); measure "stsb_dev" (STS-B dev
# Spearman x 100 of the selected checkpoint, as Table 3) unless "transfer_dev" (mean dev accuracy of the 7 transfer
# tasks, Table D.2's "Avg. transfer"). Rows of the paper with no run here (no offline data) are in the coverage.
_ONE, _TWO = "one encoder (f_theta)", "two encoders (f_theta1, f_theta2)"
ABLATIONS = {
    "Table 1": [("None (unsup. SimCSE)", "STS-B", "unsup"),
                *[(f"Crop {k}%", "STS-B", f"crop_{k / 100:g}") for k in (10, 20, 30)],
                *[(f"Word deletion {k}%", "STS-B", f"word_deletion_{k / 100:g}") for k in (10, 20, 30)],
                ("Delete one word", "STS-B", "delete_one_word"),
                ("Delete one word w/o dropout", "STS-B", "delete_one_word_no_dropout"),
                ("Synonym replacement", "STS-B", "synonym_replacement")],
    "Table 2": [("Next sentence", _ONE, "next_sentence"), ("Next sentence", _TWO, "next_sentence_two_encoders"),
                ("Next 3 sentences", _ONE, "next_3_sentences"), ("Next 3 sentences", _TWO, "next_3_sentences_two_encoders"),
                ("Delete one word", _ONE, "delete_one_word"), ("Delete one word", _TWO, "delete_one_word_two_encoders"),
                ("Unsupervised SimCSE", _ONE, "unsup"), ("Unsupervised SimCSE", _TWO, "unsup_two_encoders")],
    "Table 4": [("Unsup. SimCSE (1m)", "full", "unsup"),
                ("SNLI+MNLI entailment (314k)", "full", "pairs_entailment"),
                ("SNLI+MNLI neutral (314k)", "full", "pairs_neutral"),
                ("SNLI+MNLI contradiction (314k)", "full", "pairs_contradiction"),
                ("SNLI+MNLI all (942k)", "full", "pairs_all"),
                ("SNLI+MNLI entailment + hard neg.", "full", "sup")],
    "Table 6": [("[CLS] w/ MLP", "Unsup.", "unsup_cls_mlp"), ("[CLS] w/ MLP (train)", "Unsup.", "unsup"),
                ("[CLS] w/o MLP", "Unsup.", "unsup_no_mlp"), ("First-last avg.", "Unsup.", "unsup_first_last"),
                ("[CLS] w/ MLP", "Sup.", "sup"), ("[CLS] w/ MLP (train)", "Sup.", "sup_mlp_train"),
                ("[CLS] w/o MLP", "Sup.", "sup_no_mlp"), ("First-last avg.", "Sup.", "sup_first_last")],
    "Table 7": [("N/A (no hard negative)", "STS-B", "pairs_entailment"),
                ("Contradiction, alpha=0.5", "STS-B", "sup_alpha_0.5"), ("Contradiction, alpha=1.0", "STS-B", "sup"),
                ("Contradiction, alpha=2.0", "STS-B", "sup_alpha_2"),
                ("Contradiction + Neutral, alpha=1.0", "STS-B", "sup_contradiction_neutral")],
    "Table D.1": [("N/A (dot product)", "STS-B", "sup_dot"), ("tau=0.001", "STS-B", "sup_tau_0.001"),
                  ("tau=0.01", "STS-B", "sup_tau_0.01"), ("tau=0.05", "STS-B", "sup"), ("tau=0.1", "STS-B", "sup_tau_0.1"),
                  ("tau=1", "STS-B", "sup_tau_1")],
    "Table D.2": [(row, column, f"sup_mlm_{weight:g}", measure)
                  for weight, row in ((0, "w/o MLM"), (0.01, "w/ MLM, lambda=0.01"), (0.1, "w/ MLM, lambda=0.1"),
                                      (1, "w/ MLM, lambda=1"))
                  for column, measure in (("STS-B", "stsb_dev"), ("Avg. transfer", "transfer_dev"))],
}
ABLATION_DATA = {  # what each ablation table's substitutes are, beyond the small profile's backbone and steps
    "Table 2": "next-sentence rows: consecutive sentences of WikiText-2 articles for ordered Wikipedia text",
    "Table 4": "SNLI dev+test pairs by label (~6.5k each, 19.7k for 'all') for SNLI+MNLI train (314k, 942k); 'full' "
               "is the paper's column name, not the data size here",
    "Table 7": "contradiction + neutral: SNLI dev+test quads (5,189)",
    "Table D.2": "a fresh MLM head tied to the input embeddings (MiniLM has none); transfer dev: SentEval fasttest",
}
FIGURE_LABELS = {"backbone_avg": "backbone (avg.)", "backbone_cls": "backbone ([CLS])",
                 "unsup": "unsup. SimCSE", "sup": "sup. SimCSE"}


def coverage() -> pd.DataFrame:
    """Every table and figure of the paper with what this archive does with it and why."""
    return coverage_table(PAPER, COVERAGE)


def output_dirs(profile: str) -> tuple[Path, Path]:
    return settings.paper_output_dirs(PAPER, profile)


def collect(profile: str, run_missing: bool = True, extended: bool = False,
            progress: bool = True) -> dict[str, list[dict]]:
    """Records of every run of the grid, one per seed (running the missing ones unless ``run_missing`` is False;
    the small profile's ablations only with ``extended``, otherwise loaded when they exist, else empty)."""
    return collect_records(grid, profile, run_missing, extended, progress)


def not_run(records: dict[str, list[dict]]) -> pd.DataFrame:
    """The grid's rows without records, with the reason."""
    return not_run_rows(records, NOT_RUN_BUDGET)


def ablation_view(table: pd.DataFrame) -> pd.DataFrame:
    """Reader's view of an ablation table: its rows in the paper's order, 'mean ± std (n) [reported]' per column."""
    return wide_cells(table, aggregation=("",))


def _measure(record: dict, measure: str) -> float:
    if measure == "stsb_dev":
        return 100 * record["metrics"]["stsb_dev_spearman"]
    tasks = record["metrics"].get("transfer", {}).get("tasks", {})
    accuracies = [t["devacc"] for t in tasks.values() if "devacc" in t]
    return sum(accuracies) / len(accuracies) if accuracies and len(accuracies) == len(tasks) else float("nan")


def ablation(records: dict[str, list[dict]], table: str) -> pd.DataFrame:
    """One of ``ABLATIONS`` from the records that exist (every seed), next to the paper's dev numbers."""
    rows = []
    for row, column, name, *measure in ABLATIONS[table]:
        kind = measure[0] if measure else "stsb_dev"
        for record in records.get(name, []):
            rows.append({"paper": PAPER, "table": table, "row": row, "run": name, "reported_group": "",
                         "reported_row": row, "column": column, "split": "dev", "aggregation": "",
                         "metric": "spearman" if kind == "stsb_dev" else "accuracy", "value": _measure(record, kind),
                         **_best_steps(record), **trace(record)})
    if not rows:
        return pd.DataFrame()
    cells = aggregate_seeds(pd.DataFrame(rows), extra=("best_step", "best_is_last"))
    return join(cells, load_reported(PAPER, table))


def _best_steps(record: dict) -> dict:
    training = record["training"]
    return {"best_step": training["best_step"], "best_is_last": training["best_is_last"]}


def table5(records: dict[str, list[dict]]) -> pd.DataFrame:
    rows = []
    for name, (label, reported) in TABLE5_ROWS.items():
        group, row = reported if reported else ("", "")
        keys = {"paper": PAPER, "table": "Table 5", "row": label, "run": name,
                "reported_group": group, "reported_row": row}
        for record in records[name]:
            steps = _best_steps(record) if record["training"] else {"best_step": "", "best_is_last": ""}
            rows += [{**r, **steps} for r in sts_rows(record, keys)]
    cells = aggregate_seeds(pd.DataFrame(rows), extra=("best_step", "best_is_last"))
    return join(cells, load_reported(PAPER, "table5"))


def table3(records: dict[str, list[dict]]) -> pd.DataFrame:
    """STS-B dev Spearman x 100 of each run's selected checkpoint, re-scored in the final (fp32) evaluation."""
    rows = []
    for p in list(TABLE3_DROPOUTS) + ["fixed 0.1"]:
        name = table3_run(p)
        label = p if p == "fixed 0.1" else f"p={p}"  # the paper's column labels: p=0.0, p=0.01, ...
        for record in records[name]:
            rows.append({"paper": PAPER, "table": "Table 3", "row": label, "run": name, "reported_group": "", "reported_row": label,
                         "column": "STS-B", "split": "dev", "aggregation": "", "metric": "spearman",
                         "value": 100 * record["metrics"]["stsb_dev_spearman"], **_best_steps(record),
                         **trace(record)})
    cells = aggregate_seeds(pd.DataFrame(rows), extra=("best_step", "best_is_last"))
    return join(cells, load_reported(PAPER, "table3"))


def dev_curves(records: dict[str, list[dict]]) -> pd.DataFrame:
    """The whole STS-B dev curve and alignment/uniformity trajectory of every trained run and seed."""
    rows = []
    for name, runs in records.items():
        for record in runs:
            if record["training"]:
                for point in record["training"]["dev_curve"]:
                    rows.append({"run": name, "step": point["step"],
                                 "stsb_dev_spearman": 100 * point["stsb_dev_spearman"],
                                 "alignment": point["alignment"], "uniformity": point["uniformity"],
                                 "loss": point.get("loss"), **trace(record)})
    return pd.DataFrame(rows)


def levelling(curves: pd.DataFrame) -> pd.DataFrame:
    """Per run and seed: the last two dev evaluations, their difference, and whether the best step was the last."""
    rows = []
    for (run, seed), curve in curves.groupby(["run", "seed"], sort=False):
        curve = curve.sort_values("step")
        last, before = curve.iloc[-1], curve.iloc[-2]
        best = curve[curve["step"] > 0].sort_values("stsb_dev_spearman", kind="stable").iloc[-1]
        rows.append({"run": run, "seed": seed, "last_step": int(last["step"]),
                     "dev_before_last": before["stsb_dev_spearman"], "dev_last": last["stsb_dev_spearman"],
                     "last_change": last["stsb_dev_spearman"] - before["stsb_dev_spearman"],
                     "best_step": int(best["step"]), "best_is_last": bool(best["step"] == last["step"]),
                     "run_id": last["run_id"]})
    return pd.DataFrame(rows)


def wide(table: pd.DataFrame, aggregation: tuple[str, ...] = ("all", "")) -> pd.DataFrame:
    """Reader's view: one row per model, 'mean ± std (n) [reported]' per column."""
    view = table[table["aggregation"].isin(aggregation)].copy()
    view["cell"] = [mean_std(r) + (f" [{r['reported']:.2f}]" if pd.notna(r["reported"]) else "")
                    for _, r in view.iterrows()]
    return view.pivot(index="row", columns="column", values="cell").reindex(columns=list(dict.fromkeys(view["column"])))


def _caption(profile: str, records: dict[str, list[dict]], names) -> str:
    runs = ", ".join(f"{n}={records[n][0]['run_id']}" for n in names)
    first = records[next(iter(names))][0]
    return f"profile {profile}; backbone {first['spec']['backbone']}; seed {first['spec']['seed']} runs: {runs}"


def figures(records: dict[str, list[dict]], profile: str) -> list[Path]:
    """The paper's figures from each model's first seed (42, the official seed); the tables hold every seed."""
    _, folder = output_dirs(profile)
    first = {name: runs[0] for name, runs in records.items() if runs}
    paths = []
    fig2 = {"unsup. SimCSE": "unsup", "no dropout": "dropout_0", "fixed 0.1": "fixed_0.1",
            "delete one word": "delete_one_word"}
    fig = geometry.align_uniform_trajectories({k: first[v]["training"]["trajectory"] for k, v in fig2.items()},
                                              "Figure 2: alignment/uniformity during training (STS-B dev)")
    paths += style.save(fig, folder, "figure2_align_uniform_training", _caption(profile, records, fig2.values()))
    points = {FIGURE_LABELS[n]: {"alignment": first[n]["analysis"]["alignment"],
                                 "uniformity": first[n]["analysis"]["uniformity"],
                                 "avg_sts": first[n]["metrics"]["summary"]["Avg."]} for n in TABLE5_ROWS}
    fig = geometry.align_uniform_points(points, "Figure 3: alignment/uniformity of models")
    paths += style.save(fig, folder, "figure3_align_uniform_models", _caption(profile, records, TABLE5_ROWS))
    spectra = {FIGURE_LABELS[n]: first[n]["analysis"]["singular_values"] for n in TABLE5_ROWS}
    fig = geometry.singular_spectra(spectra, "Figure F.1: singular values of STS-B embeddings")
    paths += style.save(fig, folder, "figureF1_singular_values", _caption(profile, records, TABLE5_ROWS))
    dens = {FIGURE_LABELS[n]: first[n]["analysis"] for n in ("backbone_avg", "unsup", "sup")}
    fig = geometry.cosine_densities(dens, "Figure G.1: cosine similarity by gold rating (STS-B)")
    paths += style.save(fig, folder, "figureG1_cosine_by_rating",
                        _caption(profile, records, ("backbone_avg", "unsup", "sup")))
    return paths


def claims(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The paper's claims (claims.yaml) on the reproduced numbers, with the seeds' statistics:
    holds / fails / inconclusive / not run (the test is documented in ``sentemb.report.claims``)."""
    reproduced = pd.concat([from_reproduced(tables["table5"]), from_reproduced(tables["table3"])], ignore_index=True)
    return evaluate_all(PAPER, reproduced)


def write_tables(records: dict[str, list[dict]], profile: str) -> dict[str, pd.DataFrame]:
    folder, _ = output_dirs(profile)
    folder.mkdir(parents=True, exist_ok=True)
    tables = {"table5": table5(records), "table3": table3(records), "dev_curves": dev_curves(records)}
    for table in ABLATIONS:
        frame = ablation(records, table)
        if not frame.empty:  # an ablation table is written once some of its runs have records
            tables[table.lower().replace(" ", "").replace(".", "")] = frame
    tables["levelling"] = levelling(tables["dev_curves"])
    tables["claims"] = claims(tables)
    for stem, frame in tables.items():
        frame = for_csv(frame) if stem == "claims" else frame  # p-values in significant digits
        atomic_write(folder / f"{stem}.csv", lambda tmp, frame=frame: frame.to_csv(tmp, index=False, float_format="%.4f"))
    return tables


def markdown_summary(tables: dict[str, pd.DataFrame]) -> str:
    """The README's fairseq-style tables (reported | reproduced mean ± std (n) | Δ), from the reproduced tables."""
    t5 = tables["table5"]
    t5 = t5[t5["aggregation"].isin(["all", ""])]
    columns = list(dict.fromkeys(t5["column"]))
    lines = ["| Table 5 (test, Spearman x 100; STS12-16 'all') | " + " | ".join(columns) + " |",
             "|---|" + "---|" * len(columns)]
    for row, group in t5.groupby("row", sort=False):
        cells = group.set_index("column")
        lines.append(f"| {row} | " + " | ".join(mean_std(cells.loc[c]) for c in columns) + " |")
        if cells["reported"].notna().any():
            lines.append("| reported (BERT-base) | " + " | ".join(f"{cells.loc[c, 'reported']:.2f}" for c in columns) + " |")
            lines.append("| Δ | " + " | ".join(f"{cells.loc[c, 'delta']:+.2f}" for c in columns) + " |")
    lines += ["", "| Table 3 (STS-B dev, Spearman x 100) | reported (BERT-base) | reproduced | Δ | best step per seed |",
              "|---|---|---|---|---|"]
    for _, r in tables["table3"].iterrows():
        lines.append(f"| {r['row']} | {r['reported']:.1f} | {mean_std(r)} | {r['delta']:+.2f} | {r['best_step']} |")
    lines += [""] + markdown_rows(tables["claims"], skip_not_run=True)
    return "\n".join(lines)
