"""SimCSE's tables from run records, for :class:`papers.simcse.paper.SimCSE` and its notebook.

Each table function takes the records of :func:`papers.simcse.experiments.grid` (run name -> one record per seed)
and returns a long DataFrame (reproduced mean ± std over seeds next to reported, every seed's value and run id
kept); the row maps and labels they use are here too. Nothing here trains, evaluates or draws.
"""

from __future__ import annotations

import pandas as pd

from papers.simcse import NAME
from papers.simcse.experiments import A1_LEARNING_RATES, TABLE3_DROPOUTS, WHITENING_FITS, a1_batches, a1_run, table3_run
from sentemb.report.cell import Cell
from sentemb.report.reported import load_reported
from sentemb.report.reproduced import aggregate_seeds, derived_sts_record, join, sts_rows, sts_table, trace

# run name -> (our row label, the reported (group, row) it reproduces, or None when the paper has no such row)
TABLE5_ROWS = {
    "backbone_avg": ("backbone, avg.", None),
    "backbone_cls": ("backbone, [CLS]", None),
    "unsup": ("unsup. SimCSE", ("Unsupervised models", "SimCSE-BERT-base")),
    "sup": ("sup. SimCSE", ("Supervised models", "SimCSE-BERT-base")),
}
# The ablation tables, each row (reported row, reported column, run name[, measure]); measure "stsb_dev" (STS-B dev
# Spearman x 100 of the selected checkpoint, as Table 3) unless "transfer_dev" (mean dev accuracy of the 7 transfer
# tasks, Table D.2's "Avg. transfer"). Rows of the paper with no run here (no offline data) are in the coverage.
_ONE, _TWO = "one encoder (f_theta)", "two encoders (f_theta1, f_theta2)"
ABLATIONS = {
    "Table 1": [
        ("None (unsup. SimCSE)", "STS-B", "unsup"),
        *[(f"Crop {k}%", "STS-B", f"crop_{k / 100:g}") for k in (10, 20, 30)],
        *[(f"Word deletion {k}%", "STS-B", f"word_deletion_{k / 100:g}") for k in (10, 20, 30)],
        ("Delete one word", "STS-B", "delete_one_word"),
        ("Delete one word w/o dropout", "STS-B", "delete_one_word_no_dropout"),
        ("Synonym replacement", "STS-B", "synonym_replacement"),
    ],
    "Table 2": [
        ("Next sentence", _ONE, "next_sentence"),
        ("Next sentence", _TWO, "next_sentence_two_encoders"),
        ("Next 3 sentences", _ONE, "next_3_sentences"),
        ("Next 3 sentences", _TWO, "next_3_sentences_two_encoders"),
        ("Delete one word", _ONE, "delete_one_word"),
        ("Delete one word", _TWO, "delete_one_word_two_encoders"),
        ("Unsupervised SimCSE", _ONE, "unsup"),
        ("Unsupervised SimCSE", _TWO, "unsup_two_encoders"),
    ],
    "Table 4": [
        ("Unsup. SimCSE (1m)", "full", "unsup"),
        *[
            (f"SNLI+MNLI {label} (314k)", "full", f"pairs_{label}")
            for label in ("entailment", "neutral", "contradiction")
        ],
        ("SNLI+MNLI all (942k)", "full", "pairs_all"),
        ("SNLI+MNLI entailment + hard neg.", "full", "sup"),
    ],
    "Table 6": [
        ("[CLS] w/ MLP", "Unsup.", "unsup_cls_mlp"),
        ("[CLS] w/ MLP (train)", "Unsup.", "unsup"),
        ("[CLS] w/o MLP", "Unsup.", "unsup_no_mlp"),
        ("First-last avg.", "Unsup.", "unsup_first_last"),
        ("[CLS] w/ MLP", "Sup.", "sup"),
        ("[CLS] w/ MLP (train)", "Sup.", "sup_mlp_train"),
        ("[CLS] w/o MLP", "Sup.", "sup_no_mlp"),
        ("First-last avg.", "Sup.", "sup_first_last"),
    ],
    "Table 7": [
        ("N/A (no hard negative)", "STS-B", "pairs_entailment"),
        ("Contradiction, alpha=0.5", "STS-B", "sup_alpha_0.5"),
        ("Contradiction, alpha=1.0", "STS-B", "sup"),
        ("Contradiction, alpha=2.0", "STS-B", "sup_alpha_2"),
        ("Contradiction + Neutral, alpha=1.0", "STS-B", "sup_contradiction_neutral"),
    ],
    "Table D.1": [
        ("N/A (dot product)", "STS-B", "sup_dot"),
        ("tau=0.001", "STS-B", "sup_tau_0.001"),
        ("tau=0.01", "STS-B", "sup_tau_0.01"),
        ("tau=0.05", "STS-B", "sup"),
        ("tau=0.1", "STS-B", "sup_tau_0.1"),
        ("tau=1", "STS-B", "sup_tau_1"),
    ],
    "Table D.2": [
        (row, column, name, measure)
        for name, row in (
            ("sup", "w/o MLM"),
            ("sup_mlm_0.01", "w/ MLM, lambda=0.01"),
            ("sup_mlm_0.1", "w/ MLM, lambda=0.1"),
            ("sup_mlm_1", "w/ MLM, lambda=1"),
        )
        for column, measure in (("STS-B", "stsb_dev"), ("Avg. transfer", "transfer_dev"))
    ],
}
ABLATION_DATA = {  # what each ablation table's substitutes are, beyond the small profile's backbone and steps
    "Table 2": "next-sentence rows: consecutive sentences of WikiText-2 articles for ordered Wikipedia text",
    "Table 4": "SNLI dev+test pairs by label (~6.5k each, 19.7k for 'all') for SNLI+MNLI train (314k, 942k); 'full' "
    "is the paper's column name, not the data size here",
    "Table 7": "contradiction + neutral: SNLI dev+test quads (5,189)",
    "Table D.2": "a fresh MLM head tied to the input embeddings (MiniLM has none); transfer dev: SentEval fasttest; "
    "'w/o MLM' is the sup run, its transfer scores from a derived record",
}


def transfer_tasks(record: dict, transfer: dict[str, dict]) -> dict:
    """The record's own transfer results (``final_eval`` with "transfer"), else its derived ``transfer`` record's,
    else none."""
    own = record["metrics"].get("transfer")
    derived_record = transfer.get(record["run_id"])
    if own is None and derived_record is not None:
        own = derived_record["result"]["transfer"]
    return (own or {}).get("tasks", {})


def _measure(record: dict, measure: str, transfer: dict[str, dict] | None = None) -> float:
    if measure == "stsb_dev":
        return 100 * record["metrics"]["stsb_dev_spearman"]
    tasks = transfer_tasks(record, transfer or {})
    accuracies = [t["devacc"] for t in tasks.values() if "devacc" in t]
    return sum(accuracies) / len(accuracies) if accuracies and len(accuracies) == len(tasks) else float("nan")


def ablation(records: dict[str, list[dict]], table: str, transfer: dict[str, dict] | None = None) -> pd.DataFrame:
    """One of ``ABLATIONS`` from the records that exist (every seed), next to the paper's dev numbers. ``transfer``:
    run id -> derived transfer record, for the runs whose own evaluation has no transfer tasks (a cell without
    transfer results is left out)."""
    rows = []
    for row, column, name, *measure in ABLATIONS[table]:
        kind = measure[0] if measure else "stsb_dev"
        for record in records.get(name, []):
            value = _measure(record, kind, transfer)
            if value != value:  # NaN: no transfer results for this run (yet)
                continue
            metric = "spearman" if kind == "stsb_dev" else "accuracy"
            cell = Cell(NAME, table, row, name, reported_row=row, column=column, split="dev", metric=metric)
            rows.append(cell.seed(value, trace(record), **_best_steps(record)))
    if not rows:
        return pd.DataFrame()
    cells = aggregate_seeds(pd.DataFrame(rows), extra=("best_step", "best_is_last"))
    return join(cells, load_reported(NAME, table))


def _best_steps(record: dict) -> dict:
    return {key: record["training"][key] for key in ("best_step", "best_is_last")}


def table5(records: dict[str, list[dict]]) -> pd.DataFrame:
    rows = []
    for name, (label, reported) in TABLE5_ROWS.items():
        group, row = reported if reported else ("", "")
        cell = Cell(NAME, "Table 5", label, name, reported_group=group, reported_row=row)
        for record in records[name]:
            steps = _best_steps(record) if record["training"] else {"best_step": "", "best_is_last": ""}
            rows += [{**r, **steps} for r in sts_rows(record, cell)]
    cells = aggregate_seeds(pd.DataFrame(rows), extra=("best_step", "best_is_last"))
    return join(cells, load_reported(NAME, "table5"))


def table3(records: dict[str, list[dict]]) -> pd.DataFrame:
    """STS-B dev Spearman x 100 of each run's selected checkpoint, re-scored in the final (fp32) evaluation."""
    rows = []
    for p in list(TABLE3_DROPOUTS) + ["fixed 0.1"]:
        name = table3_run(p)
        label = p if p == "fixed 0.1" else f"p={p}"  # the paper's column labels: p=0.0, p=0.01, ...
        cell = Cell(NAME, "Table 3", label, name, reported_row=label, column="STS-B", split="dev", metric="spearman")
        for record in records[name]:
            value = 100 * record["metrics"]["stsb_dev_spearman"]
            rows.append(cell.seed(value, trace(record), **_best_steps(record)))
    cells = aggregate_seeds(pd.DataFrame(rows), extra=("best_step", "best_is_last"))
    return join(cells, load_reported(NAME, "table3"))


def dev_curves(records: dict[str, list[dict]]) -> pd.DataFrame:
    """The whole STS-B dev curve and alignment/uniformity trajectory of every trained run and seed."""
    rows = []
    for name, runs in records.items():
        for record in runs:
            if record["training"]:
                for point in record["training"]["dev_curve"]:
                    rows.append(
                        {
                            "run": name,
                            "step": point["step"],
                            "stsb_dev_spearman": 100 * point["stsb_dev_spearman"],
                            "alignment": point["alignment"],
                            "uniformity": point["uniformity"],
                            "loss": point.get("loss"),
                            **trace(record),
                        }
                    )
    return pd.DataFrame(rows)


def levelling(curves: pd.DataFrame) -> pd.DataFrame:
    """Per run and seed: the last two dev evaluations, their difference, and whether the best step was the last."""
    rows = []
    for (run, seed), curve in curves.groupby(["run", "seed"], sort=False):
        curve = curve.sort_values("step")
        last, before = curve.iloc[-1], curve.iloc[-2]
        best = curve[curve["step"] > 0].sort_values("stsb_dev_spearman", kind="stable").iloc[-1]
        rows.append(
            {
                "run": run,
                "seed": seed,
                "last_step": int(last["step"]),
                "dev_before_last": before["stsb_dev_spearman"],
                "dev_last": last["stsb_dev_spearman"],
                "last_change": last["stsb_dev_spearman"] - before["stsb_dev_spearman"],
                "best_step": int(best["step"]),
                "best_is_last": bool(best["step"] == last["step"]),
                "run_id": last["run_id"],
            }
        )
    return pd.DataFrame(rows)


# Derived analyses (papers/simcse/analyses.py): which runs, and which reported rows they are compared with.
E1_ROWS = {  # as TABLE5_ROWS; test accuracy of the 7 transfer tasks
    **TABLE5_ROWS,
    "sup_mlm_0.1": ("sup. SimCSE w/ MLM (lambda 0.1)", ("Supervised models", "SimCSE-BERT-base w/ MLM")),
    "unsup_mlm_0.1": ("unsup. SimCSE w/ MLM (lambda 0.1)", ("Unsupervised models", "SimCSE-BERT-base w/ MLM")),
}
E1_COLUMNS = {"MR": "MR", "CR": "CR", "SUBJ": "SUBJ", "MPQA": "MPQA", "SST2": "SST", "TREC": "TREC", "MRPC": "MRPC"}
# Table C.1 / B.3: the backbone is a sentence-transformers model (SBERT-like), so its whitened and flowed rows are
# compared with the paper's SBERT-whitening and SBERT-flow rows (the flow: 3 fit seeds, flow_records.FLOW_SEEDS)
POST_PROCESSINGS = {"whitening": "whitening", "flow": "flow"}  # derived key prefix -> the paper's name
C1_ROWS = {
    f"{kind} {fit}": (f"backbone, avg. + {kind} ({fit})", f"SBERT-{name} ({fit})")
    for kind, name in POST_PROCESSINGS.items()
    for fit in WHITENING_FITS
}
B3_ROWS = {  # (run, or post-processing and fit) -> (our row label, reported group, reported row)
    "backbone_avg": ("backbone, avg.", "SBERT-base", "SBERT-base (first-last avg.)"),
    **{
        f"{kind} {fit}": (f"backbone, avg. + {kind} ({fit})", "SBERT-base", f"+ {kind} ({fit})")
        for kind in POST_PROCESSINGS
        for fit in WHITENING_FITS
    },
    "unsup": ("unsup. SimCSE", "BERT-base", "Unsup. SimCSE-BERT-base"),
    "sup": ("sup. SimCSE", "SBERT-base", "Sup. SimCSE-BERT-base"),
}
B2_ROWS = {"all": "SBERT (all)", "wmean": "SBERT (wmean)"}  # the backbone (avg.) under two aggregations
TABLE8_MODELS = {"backbone_avg": "SBERT-base", "sup": "Supervised SimCSE-BERT-base"}  # ours -> the paper's column


def table_e1(records: dict[str, list[dict]], derived_records: dict) -> pd.DataFrame:
    """Table E.1: test accuracy of the 7 transfer tasks (SentEval; fasttest on the small profile) and their mean."""
    rows = []
    for name, (label, reported) in E1_ROWS.items():
        group, row = reported if reported else ("", "")
        cell = Cell(
            NAME, "Table E.1", label, name, reported_group=group, reported_row=row, split="test", metric="accuracy"
        )
        for record in records.get(name, []):
            tasks = transfer_tasks(record, derived_records.get("transfer", {}))
            accuracies = {
                column: tasks[task]["acc"]
                for task, column in E1_COLUMNS.items()
                if tasks.get(task, {}).get("acc") is not None
            }
            if len(accuracies) < len(E1_COLUMNS):
                continue
            for column, value in {**accuracies, "Avg.": sum(accuracies.values()) / len(accuracies)}.items():
                rows.append(cell.at(column=column).seed(float(value), trace(record)))
    if not rows:
        return pd.DataFrame()
    return join(aggregate_seeds(pd.DataFrame(rows)), load_reported(NAME, "tableE1"))


def _post_processed(derived_records: dict, key: str, backbone: dict) -> list[dict]:
    """The backbone's STS records post-processed as ``key`` says ("whitening NLI": one record; "flow NLI": one per
    fit seed), in the shape :func:`sts_rows` reads; empty when none is recorded."""
    found = derived_records.get(key)
    found = [found] if isinstance(found, dict) else list(found or [])
    return [derived_sts_record(d, backbone) for d in found]


def table_c1(records: dict[str, list[dict]], derived_records: dict) -> pd.DataFrame:
    """Table C.1: the backbone (avg.) whitened and flowed on NLI sentences vs on the target STS sentences ("all")."""
    backbone = records["backbone_avg"][0]
    rows = [("backbone_avg", "backbone, avg.", "", "", [backbone])]
    for key, (label, reported_row) in C1_ROWS.items():
        found = _post_processed(derived_records, key, backbone)
        if found:
            rows.append(("backbone_avg", label, "", reported_row, found))
    return sts_table(NAME, "Table C.1", rows, load_reported(NAME, "tableC1"), ("all", ""))


def _sts_under(record: dict, cell: Cell, aggregation: str) -> list[dict]:
    """The 7 STS cells of ``record`` with STS12-16 aggregated by ``aggregation``, and their mean ("Avg.")."""
    cells = [r for r in sts_rows(record, cell) if r["aggregation"] in (aggregation, "") and r["column"] != "Avg."]
    mean = sum(r["reproduced"] for r in cells) / len(cells)
    return cells + [cell.at(column="Avg.", split="test", metric="spearman").seed(mean, trace(record))]


def protocols(records: dict[str, list[dict]], derived_records: dict) -> pd.DataFrame:
    """Tables B.2 and B.3: the archive's models under the three aggregations of STS12-16 ("all", "mean", "wmean";
    STS-B and SICK-R have one split, the same under each), each mean over its 7 tasks. B.2's rows are next to the
    paper's SBERT (the backbone, "all" and "wmean"); B.3 ("wmean") next to its rows of the same kind."""
    backbone = records["backbone_avg"][0]
    models = [
        (key, "backbone_avg", label, _post_processed(derived_records, key, backbone), group, row)
        if key.split(" ")[0] in POST_PROCESSINGS
        else (key, key, label, records.get(key, []), group, row)
        for key, (label, group, row) in B3_ROWS.items()
    ]
    per_seed = []
    for table, aggregations in (("Table B.2", ("all", "mean", "wmean")), ("Table B.3", ("wmean",))):
        for aggregation in aggregations:
            for key, name, label, recs, b3_group, b3_row in models:
                # B.2 reports only SBERT (our backbone) per protocol; B.3 has a row for each of our models' kinds
                b2_row = B2_ROWS.get(aggregation, "") if key == "backbone_avg" else ""
                group, row = ("", b2_row) if table == "Table B.2" else (b3_group, b3_row)
                cell = Cell(NAME, table, f"{label} ({aggregation})", name, reported_group=group, reported_row=row)
                per_seed += [
                    {**r, "protocol": aggregation} for record in recs for r in _sts_under(record, cell, aggregation)
                ]
    if not per_seed:
        return pd.DataFrame()
    cells = aggregate_seeds(pd.DataFrame(per_seed), extra=("protocol",))
    cells["protocol"] = cells["protocol"].str.split(";").str[0]
    reported = pd.concat([load_reported(NAME, "tableB2"), load_reported(NAME, "tableB3")], ignore_index=True)
    return join(cells, reported)


def table8(derived_records: dict) -> pd.DataFrame:
    """Table 8: each query's top-3 premises for the backbone (the paper's SBERT column) and sup. SimCSE."""
    rows = []
    for name, column in TABLE8_MODELS.items():
        d = derived_records.get(f"retrieval {name}")
        if d is None:
            continue
        for query in d["result"]["queries"]:
            for hit in query["hits"]:
                rows.append(
                    {
                        "query": query["query"],
                        "rank": hit["rank"],
                        "model": name,
                        "paper_column": column,
                        "sentence": hit["sentence"],
                        "cosine": round(hit["cosine"], 4),
                        "corpus": d["result"]["corpus"],
                        "n_corpus": d["result"]["n_corpus"],
                        "derived_id": d["derived_id"],
                        "run_id": d["run_id"],
                    }
                )
    return pd.DataFrame(rows)


def table8_view(table: pd.DataFrame) -> pd.DataFrame:
    """Reader's view of Table 8: per query and rank, each model's sentence, next to the paper's where it prints one."""
    if table.empty:
        return table
    view = table.pivot_table(index=["query", "rank"], columns="model", values="sentence", aggfunc="first")
    reported = load_reported(NAME, "table8.text")
    reported["query"] = reported["group"].str.removeprefix("Query: ")
    reported["rank"] = reported["row"].str.removeprefix("#").astype(int)
    for column in TABLE8_MODELS.values():
        paper = reported[reported["column"] == column].set_index(["query", "rank"])["text"]
        view[f"paper: {column}"] = [paper.get(key, "") for key in view.index]
    return view.reset_index()


def table_a1(records: dict[str, list[dict]], profile: str) -> pd.DataFrame:
    """Table A.1's search: STS-B dev Spearman x 100 of each (mode, batch, lr) point (seed 42, or the main run's
    seeds), and which point is best per mode; the paper's choice (BERT-base) in ``reported_batch``/``reported_lr``."""
    reported = load_reported(NAME, "tableA1")
    rows = []
    for mode, group in (("unsup", "Unsupervised"), ("sup", "Supervised")):
        paper_row = "bert-base-uncased" if mode == "unsup" else "base"
        chosen = reported[(reported["group"] == group) & (reported["row"] == paper_row)].set_index("column")["value"]
        for batch in a1_batches(profile):
            for lr in A1_LEARNING_RATES:
                name = a1_run(profile, mode, batch, lr)
                values = [100 * r["metrics"]["stsb_dev_spearman"] for r in records.get(name, [])]
                if not values:
                    continue
                rows.append(
                    {
                        "paper": NAME,
                        "table": "Table A.1",
                        "mode": mode,
                        "batch_size": batch,
                        "lr": lr,
                        "run": name,
                        "stsb_dev": sum(values) / len(values),
                        "n": len(values),
                        "run_ids": ";".join(r["run_id"] for r in records[name]),
                        "reported_batch": float(chosen["Batch size"]),
                        "reported_lr": float(chosen["Learning rate"]),
                    }
                )
    frame = pd.DataFrame(rows)
    if not frame.empty:
        best = frame.groupby("mode")["stsb_dev"].transform(lambda v: v == v.max())
        frame["best"] = best.astype(bool)
    return frame


def csv_stem(table: str) -> str:
    """The CSV stem of a table name ('Table D.2' -> 'tabled2')."""
    return table.lower().replace(" ", "").replace(".", "")
