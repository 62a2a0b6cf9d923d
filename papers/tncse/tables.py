"""TNCSE's tables from run records and derived records (the hooks of ``paper.py`` call them).

Each table function takes the records of :func:`papers.tncse.experiments.grid` (run name -> one record per seed;
an empty list for a row that was not run) and returns a long DataFrame: the reproduced mean ± std over seeds next to
the reported value, every seed's value and run id kept. The paper labels STS-B and SICK-R "STSB" and "SICKR"; the
reproduced rows use its labels. Analyses of a trained model (MTEB, LayerNorm removal) are derived records
(``sentemb/runs/derived.py``, :meth:`papers.tncse.paper.TNCSE.derived`). Nothing here trains.

Every table that depends on stage 1 says so: the stage-1 pair is two unsupervised SimCSE runs of the SimCSE grid
(different seeds), not the paper's RTT-trained encoders.
"""

from __future__ import annotations

import pandas as pd

from papers.tncse import NAME
from papers.tncse.experiments import TABLE4, table4_run
from sentemb.report.cell import Cell
from sentemb.report.reported import load_reported
from sentemb.report.reproduced import aggregate_seeds, join, sts_table, trace

STAGE1 = "stage 1 = two unsup. SimCSE runs (seeds s, s+1) of the SimCSE grid, not RTT-trained encoders"
PAPER_COLUMNS = {"STS-B": "STSB", "SICK-R": "SICKR"}  # the paper's labels for the reproduced columns
STS_AVG = "7 STS Avg."

TABLE1_ROWS = {  # run -> (our label, Table 1 BERT-base row it is compared with)
    "simcse": ("SimCSE (each stage-1 encoder alone)", "SimCSE"),
    "ensemble": ("encoder I + encoder II, untrained", ""),
    "tncse": ("TNCSE", "TNCSE"),
}
TABLE3_COLUMNS = {"ensemble": ("SimCSE", "TNCSE(Untrained)"), "tncse": ("TNCSE",)}
TABLE5_COLUMNS = {  # run -> (our column label, the paper's Table 5 column it stands next to)
    "simcse_sickr": ("SimCSE (MLP on [CLS], B x B loss)", "SimCSE"),
    "simcse_matched": ("SimCSE (matched to TNCSE-Single: no MLP, symmetric 2B-row InfoNCE)", "SimCSE"),
    "tncse_single": ("TNCSE-Single", "TNCSE-Single"),
}
TABLE6 = {  # row -> (run trained on wiki, run trained on wiki + SICK-R)
    "SimCSE": ("simcse", "simcse_sickr"),
    "TNCSE": ("tncse_wiki", "tncse"),
}


def _sts_columns(rows: list[dict]) -> list[dict]:
    return [{**r, "column": PAPER_COLUMNS.get(r["column"], r["column"])} for r in rows]


def _sts_table(table: str, rows: list[tuple[str, str, str, str, list[dict]]], reported: str) -> pd.DataFrame:
    """rows: (run name, our label, reported group, reported row, records): the 7 STS tasks and their average."""
    return sts_table(NAME, table, rows, load_reported(NAME, reported), relabel=_sts_columns)


def _avg_table(
    table: str,
    cells: list[tuple[str, str, str, str, str, list[dict]]],
    reported: str,
    value=lambda record: record["metrics"]["summary"]["Avg."],
) -> pd.DataFrame:
    """cells: (run, our row label, our column label, reported row, reported column, records): one number per seed
    (by default the 7-STS average of the record)."""
    per_seed = []
    for name, row, column, reported_row, reported_column, recs in cells:
        cell = Cell(NAME, table, row, name, "", reported_row, reported_column, "test", metric="spearman")
        per_seed += [cell.seed(value(record), trace(record), our_column=column) for record in recs]
    if not per_seed:
        return pd.DataFrame()
    cells_frame = aggregate_seeds(pd.DataFrame(per_seed), extra=("our_column",))
    cells_frame["our_column"] = [c.split(";")[0] for c in cells_frame["our_column"]]
    return join(cells_frame, load_reported(NAME, reported))


def table1(records: dict[str, list[dict]]) -> pd.DataFrame:
    return _sts_table(
        "Table 1",
        [
            (n, label, "BERT-base" if reported else "", reported, records[n])
            for n, (label, reported) in TABLE1_ROWS.items()
            if records[n]
        ],
        "table1",
    )


def table3(records: dict[str, list[dict]]) -> pd.DataFrame:
    cells = [
        (n, "7 STS Avg.", column, STS_AVG, column, records[n])
        for n, columns in TABLE3_COLUMNS.items()
        for column in columns
        if records[n]
    ]
    return _avg_table("Table 3", cells, "table3")


def table4(records: dict[str, list[dict]]) -> pd.DataFrame:
    cells = [
        ("ensemble", "None (untrained pair)", STS_AVG, "None(Dual Encoder Untrained)", STS_AVG, records["ensemble"])
    ]
    for row, terms in TABLE4.items():
        name = table4_run(terms)
        cells.append((name, row, STS_AVG, row, STS_AVG, records.get(name, [])))
    cells.append(
        ("tncse", "L_NCE+L_ICNCE+L_ICTN (TNCSE)", STS_AVG, "L_NCE+L_ICNCE+L_ICTN(Ours)", STS_AVG, records["tncse"])
    )
    return _avg_table("Table 4", [c for c in cells if c[-1]], "table4")


def table5(records: dict[str, list[dict]]) -> pd.DataFrame:
    """STS-B test of the two SimCSE rows and TNCSE-Single. Both SimCSE rows stand next to the paper's SimCSE (77.75);
    the matched one keeps the paper's column name "SimCSE", so it is the cell the claim compares TNCSE-Single with
    (they differ by L_TN only), and the paper's configuration (``simcse_sickr``) is shown under its own column."""
    stsb = lambda record: 100 * record["metrics"]["tasks"]["STSBenchmark"]["splits"]["test"]["spearman"]  # noqa: E731
    cells = [
        (name, "STS-B testset", label, "STS-B testset", column, records.get(name, []))
        for name, (label, column) in TABLE5_COLUMNS.items()
    ]
    table = _avg_table("Table 5", [c for c in cells if c[-1]], "table5", value=stsb)
    if not table.empty:
        own_column = table["run"] == "simcse_sickr"
        table.loc[own_column, "column"] = table.loc[own_column, "our_column"]
    return table


def table6(records: dict[str, list[dict]]) -> pd.DataFrame:
    """7-STS averages with and without the SICK-R sentences, and the gain per seed (the same seed's two runs)."""
    cells = []
    for row, (wiki, sickr) in TABLE6.items():
        cells.append((wiki, row, "Wiki1M", row, "Wiki1M", records.get(wiki, [])))
        cells.append((sickr, row, "+Unlabelled SICKR", row, "+Unlabelled SICKR", records.get(sickr, [])))
    table = _avg_table("Table 6", [c for c in cells if c[-1]], "table6")
    gains = []
    for row, (wiki, sickr) in TABLE6.items():
        by_seed = {r["spec"]["seed"]: r for r in records.get(wiki, [])}
        for record in records.get(sickr, []):
            base = by_seed.get(record["spec"]["seed"])
            if base is not None:
                column = "+Unlabelled SICKR (gain)"
                cell = Cell(NAME, "Table 6", row, f"{sickr}-{wiki}", "", row, column, "test", metric="spearman")
                gain = record["metrics"]["summary"]["Avg."] - base["metrics"]["summary"]["Avg."]
                gains.append(cell.seed(gain, trace(record)))
    if gains:
        gain = join(aggregate_seeds(pd.DataFrame(gains)), load_reported(NAME, "table6"))
        table = pd.concat([table, gain], ignore_index=True)
    return table


def table2(derived_records: dict[str, dict]) -> pd.DataFrame:
    """MTEB main scores (x 100) per task for SimCSE and TNCSE (seed 42), grouped as the paper's rows."""
    groups = {
        "STS17": "STS17(11 Acc)",
        "STS22": "STS22(18 Acc)",
        "Class.": "Classification(30 Acc)",
        "Retr.": "Retrieval(30 Map@10)",
    }
    rows = []
    for name, method in (("simcse", "SimCSE"), ("tncse", "TNCSE")):
        d = derived_records.get(f"mteb_{name}")
        if d is None or not d["result"]["mteb"]:
            continue
        for task, result in d["result"]["mteb"]["tasks"].items():
            if result.get("status") != "ok":
                continue
            group = groups.get(task, groups.get(result.get("category")))
            if group is None:
                continue
            rows.append(
                {
                    "method": method,
                    "task": task,
                    "paper_row": group,
                    "main_metric": result["main_metric"],
                    "value": result["main_score"],
                    "run_id": d["run_id"],
                    "derived_id": d["derived_id"],
                }
            )
    columns = ["method", "task", "paper_row", "main_metric", "value", "run_id", "derived_id"]
    return pd.DataFrame(rows, columns=columns)  # the header even when no MTEB record exists (smoke)


def table2_summary(t2: pd.DataFrame) -> pd.DataFrame:
    """Per paper row: the mean over the tasks the mirror has (and how many), next to the reported value."""
    if t2.empty:
        return t2
    reported = load_reported(NAME, "table2")
    out = (
        t2.groupby(["paper_row", "method"], sort=False)
        .agg(value=("value", "mean"), n_tasks=("task", "count"), tasks=("task", ";".join))
        .reset_index()
    )
    lookup = {(r["row"], r["column"]): r["value"] for _, r in reported.iterrows()}
    out["reported"] = [lookup.get((r["paper_row"], r["method"])) for _, r in out.iterrows()]
    return out


def figure5_table(derived_records: dict[str, dict]) -> pd.DataFrame:
    d = derived_records.get("figure5")
    if d is None:
        return pd.DataFrame()
    return pd.DataFrame([{**row, "run_id": d["run_id"], "derived_id": d["derived_id"]} for row in d["result"]["rows"]])
