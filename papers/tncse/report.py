"""TNCSE's tables and figures from run records and derived records (the hooks of ``paper.py`` call them).

Each table function takes the records of :func:`papers.tncse.experiments.grid` (run name -> one record per seed;
an empty list for a row that was not run) and returns a long DataFrame: the reproduced mean ± std over seeds next to
the reported value, every seed's value and run id kept. The paper labels STS-B and SICK-R "STSB" and "SICKR"; the
reproduced rows use its labels. Analyses of a trained model (MTEB, LayerNorm removal) are derived records
(``sentemb/runs/derived.py``, :meth:`papers.tncse.paper.TNCSE.derived`). Nothing here trains.

Every table that depends on stage 1 says so: the stage-1 pair is two unsupervised SimCSE runs of the SimCSE grid
(different seeds), not the paper's RTT-trained encoders.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from papers.tncse import NAME
from papers.tncse.experiments import TABLE4, table4_run
from sentemb.objectives.tensor_norm import tn_surface
from sentemb.plots import geometry, style
from sentemb.report.claims_table import markdown_rows
from sentemb.report.markdown import compared, markdown_table, reported_cell
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
        for record in recs:
            per_seed.append(
                {
                    "paper": NAME,
                    "table": table,
                    "row": row,
                    "run": name,
                    "reported_group": "",
                    "reported_row": reported_row,
                    "column": reported_column,
                    "our_column": column,
                    "split": "test",
                    "aggregation": "",
                    "metric": "spearman",
                    "value": value(record),
                    **trace(record),
                }
            )
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
                gains.append(
                    {
                        "paper": NAME,
                        "table": "Table 6",
                        "row": row,
                        "run": f"{sickr}-{wiki}",
                        "reported_group": "",
                        "reported_row": row,
                        "column": "+Unlabelled SICKR (gain)",
                        "split": "test",
                        "aggregation": "",
                        "metric": "spearman",
                        "value": record["metrics"]["summary"]["Avg."] - base["metrics"]["summary"]["Avg."],
                        **trace(record),
                    }
                )
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


def figure2(profile: str, folder: Path) -> list[Path]:
    """Figure 2: l_TN(k, t) of Eq. 3 over k in (0, 3] and t in [-1, 1] (analytic; no run involved)."""
    import matplotlib.pyplot as plt

    style.apply()
    k, t = np.meshgrid(np.linspace(0.02, 3.0, 150), np.linspace(-1.0, 1.0, 150))
    fig = plt.figure(figsize=(5.6, 4.4))
    ax = fig.add_subplot(projection="3d")
    ax.plot_surface(k, t, tn_surface(k, t), cmap="viridis", linewidth=0, antialiased=True)
    ax.set_xlabel("k = ||h+|| / ||h||")
    ax.set_ylabel("t = cos(h, h+)")
    ax.set_zlabel("l_TN")
    ax.set_title("Figure 2: l_TN(k, t) = sqrt(1 + k^2 - 2kt) / (1 + k)")
    return style.save(
        fig,
        folder,
        "figure2_tn_surface",
        "Eq. 3 evaluated on a 150 x 150 grid (sentemb.objectives.tensor_norm.tn_surface); minimum 0 at k = t = 1",
    )


def figure4(table1_frame: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure 4: the 7-STS average of every seed of SimCSE, the untrained pair and TNCSE (seaborn), with the
    one-sided Welch test of TNCSE against SimCSE."""
    import matplotlib.pyplot as plt
    import seaborn as sns
    from scipy import stats

    style.apply()
    avg = table1_frame[table1_frame["column"] == "Avg."]
    points = [
        {"model": r["row"], "seed": int(s), "7 STS avg.": float(v)}
        for _, r in avg.iterrows()
        for s, v in zip(str(r["seeds"]).split(";"), str(r["values"]).split(";"))
    ]
    frame = pd.DataFrame(points)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    # one row per seed (dodge) instead of jitter: seaborn jitters with numpy's global RNG, which changed the figure's
    # bytes at every execution of the notebook
    sns.stripplot(
        data=frame, x="7 STS avg.", y="model", hue="seed", size=7, jitter=False, dodge=True, ax=ax, palette="deep"
    )
    sns.pointplot(
        data=frame, x="7 STS avg.", y="model", errorbar="sd", color="k", markers="|", linestyles="none", ax=ax
    )
    title = "Figure 4: 7 STS average per seed (mean ± sd in black)"
    by_model = {m: g["7 STS avg."].to_numpy() for m, g in frame.groupby("model")}
    tncse, simcse = by_model.get(TABLE1_ROWS["tncse"][0]), by_model.get(TABLE1_ROWS["simcse"][0])
    if tncse is not None and simcse is not None and len(tncse) > 1 and len(simcse) > 1:
        p = stats.ttest_ind(tncse, simcse, equal_var=False, alternative="greater").pvalue
        title += f"\nTNCSE > SimCSE: one-sided Welch p = {p:.3g} (n = {len(tncse)}, {len(simcse)})"
    ax.set_title(title)
    ax.legend(title="seed", loc="lower right", fontsize=8)
    fig.tight_layout()
    run_ids = ";".join(avg["run_ids"])
    return style.save(fig, folder, "figure4_seeds", f"profile {profile}; runs {run_ids}; {STAGE1}")


def figure5_table(derived_records: dict[str, dict]) -> pd.DataFrame:
    d = derived_records.get("figure5")
    if d is None:
        return pd.DataFrame()
    return pd.DataFrame([{**row, "run_id": d["run_id"], "derived_id": d["derived_id"]} for row in d["result"]["rows"]])


def figure5(table: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure 5: bars = mean [CLS] norm of the last hidden state, line = STS-B dev, per number of removed LayerNorms."""
    import matplotlib.pyplot as plt

    style.apply()
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    ax.bar(table["removed_layernorms"], table["mean_cls_norm"], color=style.PALETTE[0], alpha=0.7)
    ax.set_xlabel("last LayerNorms removed")
    ax.set_ylabel("mean norm of [CLS] (last hidden state)")
    twin = ax.twinx()
    twin.plot(table["removed_layernorms"], 100 * table["stsb_dev_spearman"], "o-", color=style.PALETTE[1])
    twin.set_ylabel("STS-B dev Spearman x 100")
    ax.set_title("Figure 5: LayerNorm removal on the stage-1 encoder (no re-training)")
    fig.tight_layout()
    return style.save(
        fig,
        folder,
        "figure5_layernorm",
        f"profile {profile}; run {table['run_id'].iloc[0]}; derived record {table['derived_id'].iloc[0]}",
    )


def figure6(records: dict[str, list[dict]], profile: str, folder: Path) -> list[Path]:
    """Figure 6: alignment/uniformity (STS-B) of the trained and ensembled rows, seed 42, coloured by 7-STS avg."""
    labels = {
        "simcse": "SimCSE",
        "ensemble": "untrained pair",
        "tncse": "TNCSE",
        "tncse_wiki": "TNCSE (wiki)",
        "simcse_sickr": "SimCSE (wiki+SICK-R)",
        "tncse_single": "TNCSE-Single",
    }
    points = {
        label: {
            "alignment": records[n][0]["analysis"]["alignment"],
            "uniformity": records[n][0]["analysis"]["uniformity"],
            "avg_sts": records[n][0]["metrics"]["summary"]["Avg."],
        }
        for n, label in labels.items()
        if records.get(n)
    }
    fig = geometry.align_uniform_points(points, "Figure 6: alignment/uniformity (STS-B dev+test)")
    runs = ", ".join(f"{n}={records[n][0]['run_id']}" for n in labels if records.get(n))
    return style.save(fig, folder, "figure6_align_uniform", f"profile {profile}; seed 42 runs: {runs}; {STAGE1}")


def markdown_summary(tables: dict[str, pd.DataFrame]) -> str:
    """The README's fairseq-style tables (reported | reproduced mean ± std (n) | Δ), from the reproduced tables."""
    lines = []
    t1 = tables["table1"]
    if not t1.empty:
        header = ["Table 1: Avg. of 7 STS (test, 'all')", "paper row (BERT-base)", "reported", "reproduced", "Δ"]
        rows = ([r["row"], r["reported_row"] or "–", *compared(r)] for _, r in t1[t1["column"] == "Avg."].iterrows())
        lines += [""] + markdown_table(header, rows)
    lines += _table2_markdown(tables["table2"])
    for key, title in (
        ("table3", "Table 3"),
        ("table4", "Table 4"),
        ("table5", "Table 5 (STS-B test)"),
        ("table6", "Table 6"),
    ):
        t = tables[key]
        if t.empty:
            continue
        rows = (
            [r["row"], r["our_column"] if pd.notna(r.get("our_column")) else r["column"], *compared(r)]
            for _, r in t.iterrows()
        )
        lines += [""] + markdown_table([title, "column", "reported", "reproduced", "Δ"], rows)
    lines += [""] + markdown_rows(tables["claims"])
    return "\n".join(lines).strip()


def _table2_markdown(t2: pd.DataFrame) -> list[str]:
    """Table 2's rows as the README shows them: the mean over the mirror's tasks of each paper row (one seed), how
    many of the paper's tasks that is, and no Δ, since the paper averages other (and more) tasks."""
    summary = table2_summary(t2)
    if summary.empty:
        return []
    rows = []
    for _, r in summary.iterrows():
        of = r["paper_row"].split("(")[1].split()[0] if "(" in r["paper_row"] else "?"
        cells = t2[(t2["paper_row"] == r["paper_row"]) & (t2["method"] == r["method"])]
        metrics = ", ".join(sorted(set(cells["main_metric"])))
        tasks = f"{r['n_tasks']} of {of}: {r['tasks'].replace(';', ', ')} ({metrics})"
        rows.append([r["paper_row"], r["method"], tasks, reported_cell(r["reported"]), f"{r['value']:.2f} (1)"])
    header = ["Table 2 (MTEB, seed 42)", "method", "tasks here", "reported (paper's tasks)"]
    return [""] + markdown_table([*header, "reproduced (mirror's tasks)"], rows)
