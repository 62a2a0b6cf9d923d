"""SimCSE's tables and figures from run records: what the notebook calls.

Each function takes the records of :func:`papers.simcse.experiments.grid` (by run name) and returns
a long DataFrame (reproduced next to reported) or a figure. Nothing here trains or evaluates.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from papers.simcse.experiments import TABLE3_DROPOUTS, grid, table3_run
from sentemb import settings
from sentemb.atomic import atomic_write
from sentemb.plots import geometry, style
from sentemb.report.claims import evaluate_all, from_reproduced
from sentemb.report.reported import load_reported
from sentemb.report.reproduced import join, sts_rows, trace
from sentemb.runs.execute import ensure

PAPER = "simcse"
# run name -> (our row label, the reported (group, row) it reproduces, or None when the paper has no such row)
TABLE5_ROWS = {
    "backbone_avg": ("backbone, avg.", None),
    "backbone_cls": ("backbone, [CLS]", None),
    "unsup": ("unsup. SimCSE", ("Unsupervised models", "SimCSE-BERT-base")),
    "sup": ("sup. SimCSE", ("Supervised models", "SimCSE-BERT-base")),
}
FIGURE_LABELS = {"backbone_avg": "backbone (avg.)", "backbone_cls": "backbone ([CLS])",
                 "unsup": "unsup. SimCSE", "sup": "sup. SimCSE"}


def output_dirs(profile: str) -> tuple[Path, Path]:
    return settings.results_root() / PAPER / profile, settings.figures_root() / PAPER / profile


def collect(profile: str, run_missing: bool = True, progress: bool = True) -> dict[str, dict]:
    """Records of every run of the grid (running the missing ones unless ``run_missing`` is False)."""
    return {name: ensure(spec, run_missing=run_missing, progress=progress) for name, spec in grid(profile).items()}


def table5(records: dict[str, dict]) -> pd.DataFrame:
    rows = []
    for name, (label, reported) in TABLE5_ROWS.items():
        group, row = reported if reported else ("", "")
        keys = {"paper": PAPER, "table": "Table 5", "row": label, "run": name,
                "reported_group": group, "reported_row": row}
        rows += sts_rows(records[name], keys)
    return join(pd.DataFrame(rows), load_reported(PAPER, "table5"))


def table3(records: dict[str, dict]) -> pd.DataFrame:
    rows = []
    for p in list(TABLE3_DROPOUTS) + ["fixed 0.1"]:
        name = table3_run(p)
        record = records[name]
        label = p if p == "fixed 0.1" else f"p={p}"  # the paper's column labels: p=0.0, p=0.01, ...
        rows.append({"paper": PAPER, "table": "Table 3", "row": label, "run": name, "reported_group": "",
                     "reported_row": label, "column": "STS-B", "split": "dev", "aggregation": "",
                     "metric": "spearman", "value": 100 * record["training"]["best_stsb_dev"],
                     "best_step": record["training"]["best_step"], **trace(record)})
    return join(pd.DataFrame(rows), load_reported(PAPER, "table3"))


def dev_curves(records: dict[str, dict]) -> pd.DataFrame:
    """The whole STS-B dev curve and alignment/uniformity trajectory of every trained run."""
    rows = []
    for name, record in records.items():
        if record["training"]:
            for point in record["training"]["dev_curve"]:
                rows.append({"run": name, "step": point["step"], "stsb_dev_spearman": 100 * point["stsb_dev_spearman"],
                             "alignment": point["alignment"], "uniformity": point["uniformity"],
                             "loss": point.get("loss"), **trace(record)})
    return pd.DataFrame(rows)


def wide(table: pd.DataFrame, aggregation: tuple[str, ...] = ("all", "")) -> pd.DataFrame:
    """Reader's view: one row per model, 'reproduced (reported)' per column."""
    view = table[table["aggregation"].isin(aggregation)].copy()
    view["cell"] = [f"{r:.2f}" + (f" ({p:.2f})" if pd.notna(p) else "") for r, p in zip(view["reproduced"], view["reported"])]
    return view.pivot(index="row", columns="column", values="cell").reindex(columns=list(dict.fromkeys(view["column"])))


def _caption(profile: str, records: dict[str, dict], names) -> str:
    runs = ", ".join(f"{n}={records[n]['run_id']}" for n in names)
    return f"profile {profile}; backbone {records[next(iter(names))]['spec']['backbone']}; runs: {runs}"


def figures(records: dict[str, dict], profile: str) -> list[Path]:
    _, folder = output_dirs(profile)
    paths = []
    fig2 = {"unsup. SimCSE": "unsup", "no dropout": "dropout_0", "fixed 0.1": "fixed_0.1",
            "delete one word": "delete_one_word"}
    fig = geometry.align_uniform_trajectories({k: records[v]["training"]["dev_curve"] for k, v in fig2.items()},
                                              "Figure 2: alignment/uniformity during training (STS-B dev)")
    paths += style.save(fig, folder, "figure2_align_uniform_training", _caption(profile, records, fig2.values()))
    points = {FIGURE_LABELS[n]: {"alignment": records[n]["analysis"]["alignment"],
                                 "uniformity": records[n]["analysis"]["uniformity"],
                                 "avg_sts": records[n]["metrics"]["summary"]["Avg."]} for n in TABLE5_ROWS}
    fig = geometry.align_uniform_points(points, "Figure 3: alignment/uniformity of models")
    paths += style.save(fig, folder, "figure3_align_uniform_models", _caption(profile, records, TABLE5_ROWS))
    spectra = {FIGURE_LABELS[n]: records[n]["analysis"]["singular_values"] for n in TABLE5_ROWS}
    fig = geometry.singular_spectra(spectra, "Figure F.1: singular values of STS-B embeddings")
    paths += style.save(fig, folder, "figureF1_singular_values", _caption(profile, records, TABLE5_ROWS))
    dens = {FIGURE_LABELS[n]: records[n]["analysis"] for n in ("backbone_avg", "unsup", "sup")}
    fig = geometry.cosine_densities(dens, "Figure G.1: cosine similarity by gold rating (STS-B)")
    paths += style.save(fig, folder, "figureG1_cosine_by_rating",
                        _caption(profile, records, ("backbone_avg", "unsup", "sup")))
    return paths


def claims(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The paper's claims (claims.yaml) evaluated on the reproduced numbers: holds / fails / not run."""
    reproduced = pd.concat([from_reproduced(tables["table5"]), from_reproduced(tables["table3"])], ignore_index=True)
    return evaluate_all(PAPER, reproduced)


def write_tables(records: dict[str, dict], profile: str) -> dict[str, pd.DataFrame]:
    folder, _ = output_dirs(profile)
    folder.mkdir(parents=True, exist_ok=True)
    tables = {"table5": table5(records), "table3": table3(records), "dev_curves": dev_curves(records)}
    tables["claims"] = claims(tables)
    for stem, frame in tables.items():
        atomic_write(folder / f"{stem}.csv", lambda tmp, frame=frame: frame.to_csv(tmp, index=False, float_format="%.4f"))
    return tables
