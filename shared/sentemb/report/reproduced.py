"""Reproduced numbers as long rows with the reported tables' keys, aggregated over seeds, and the join of the two.

Every reproduced row carries what is needed to trace it: the run id (``results/runs/<profile>/<id>.json``
holds the spec, the data sha256 and the whole provenance), the profile, the backbone actually used,
the seed, the commit and the run's wall time. :func:`aggregate_seeds` turns one row per seed into one row per
cell (:mod:`sentemb.report.cell`) with ``reproduced`` = the mean over seeds, ``std`` (sample standard deviation,
ddof = 1; empty for one seed), ``n``, and, aligned with each other, every seed's ``values``, ``seeds`` and ``run_ids``
(";"-joined).
"""

from __future__ import annotations

import hashlib
import json
import statistics

import pandas as pd

from sentemb.report.cell import CELL_KEYS, Cell

TRACE_COLUMNS = [
    "profile",
    "backbone_used",
    "run_id",
    "seed",
    "commit",
    "data_fingerprint",
    "wall_seconds",
    "deterministic",
]
SEED_DEPENDENT_BACKBONES = ("tiny-random-bert",)  # built from the seed: even untrained, its numbers vary by seed


def deterministic(record: dict) -> bool:
    """Whether the record's numbers have no seed variance: an untrained pretrained backbone evaluated in eval mode
    (not the evaluation of trained runs' models, ``init_runs``)
    (claims compare against it as a constant, :mod:`sentemb.report.claims`)."""
    spec = record["spec"]
    if spec.get("init_runs"):  # the models of trained runs (e.g. TNCSE's plain ensemble): their seeds vary
        return False
    if record.get("post_processing_seed") is not None:  # a post-processing fitted with a seed (a flow)
        return False
    return spec["objective"] == "none" and spec["backbone"] not in SEED_DEPENDENT_BACKBONES


def data_fingerprint(record: dict) -> str:
    """One sha256 over the sha256 of every data file the run read (each is in the record)."""
    hashes = record["provenance"]["data_sha256"]
    return hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()[:16]


def trace(record: dict) -> dict:
    return {
        "profile": record["profile"],
        "backbone_used": record["spec"]["backbone"],
        "run_id": record["run_id"],
        "seed": record["spec"]["seed"],
        "commit": (record["provenance"]["commit"] or "")[:12],
        "data_fingerprint": data_fingerprint(record),
        "wall_seconds": round(record["timing"]["total_seconds"], 1),
        "deterministic": deterministic(record),
    }


STS_COLUMNS = {
    "STS12": "STS12",
    "STS13": "STS13",
    "STS14": "STS14",
    "STS15": "STS15",
    "STS16": "STS16",
    "STSBenchmark": "STS-B",
    "SICKRelatedness": "SICK-R",
}


def sts_rows(record: dict, cell: Cell) -> list[dict]:
    """One seed's rows of ``cell`` (a model's row), one per STS task: Spearman x 100 under "all" (the headline) plus
    "mean" and "wmean" for STS12-16, and their Avg. over the headline numbers."""
    tasks = record["metrics"]["tasks"]
    found = trace(record)
    out = []
    for task, column in STS_COLUMNS.items():
        result = tasks[task]
        task_cell = cell.at(column=column, split="test", metric="spearman")
        if "aggregate" in result:
            for aggregation in ("all", "mean", "wmean"):
                value = 100 * result["aggregate"]["spearman"][aggregation]
                out.append(task_cell.at(aggregation=aggregation).seed(value, found))
        else:
            out.append(task_cell.at(aggregation="").seed(100 * result["splits"]["test"]["spearman"], found))
    headline = [r["reproduced"] for r in out if r["aggregation"] in ("all", "")]
    average = cell.at(column="Avg.", split="test", aggregation="", metric="spearman")
    return out + [average.seed(sum(headline) / len(headline), found)]


def _joined(values) -> str:
    return ";".join(str(v) for v in values)


def aggregate_seeds(per_seed: pd.DataFrame, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per cell (:class:`~sentemb.report.cell.Cell`'s keys, ``CELL_KEYS``) from its seeds' rows
    (:meth:`Cell.seed`): ``reproduced`` the mean, std, n and the per-seed values/seeds/run ids of its seeds.

    ``extra`` columns of the per-seed rows (e.g. ``best_step``) are kept ";"-joined in seed order."""
    keys = [k for k in CELL_KEYS if k in per_seed.columns]
    rows = []
    for cell, group in per_seed.sort_values("seed", kind="stable").groupby(keys, sort=False, dropna=False):
        values = group["reproduced"].astype(float).tolist()
        n = len(values)
        row = dict(zip(keys, cell))
        row.update(
            reproduced=statistics.fmean(values),
            std=statistics.stdev(values) if n > 1 else float("nan"),
            n=n,
            values=_joined(f"{v:.4f}" for v in values),
            seeds=_joined(group["seed"]),
            run_ids=_joined(group["run_id"]),
            profile=group["profile"].iloc[0],
            backbone_used=group["backbone_used"].iloc[0],
            commits=_joined(dict.fromkeys(group["commit"])),
            data_fingerprints=_joined(dict.fromkeys(group["data_fingerprint"])),
            wall_seconds=round(float(group["wall_seconds"].sum()), 1),
        )
        if "deterministic" in group:
            row["deterministic"] = bool(group["deterministic"].astype(bool).all())
        for column in extra:
            row[column] = _joined(group[column])
        rows.append(row)
    return pd.DataFrame(rows)


def mean_std(row) -> str:
    """'mean ± std (n)' for a reader (std omitted for one seed)."""
    if row["n"] > 1:
        return f"{row['reproduced']:.2f} ± {row['std']:.2f} ({row['n']})"
    return f"{row['reproduced']:.2f} (1)"


def join(reproduced: pd.DataFrame, reported: pd.DataFrame) -> pd.DataFrame:
    """Reproduced cells next to the paper's number of the same (table, reported group/row, column, split, aggregation),
    as ``reported`` (and the paper's backbone, ``reported_backbone``); ``delta`` = reproduced - reported. Cells without
    a reported counterpart keep an empty ``reported``. The paper's table (``reported/``, in its own columns: group,
    row, value) is read into the cells' names here, the one place where the two meet."""
    keys = ["table", "reported_group", "reported_row", "column", "split", "aggregation"]
    right = reported.rename(
        columns={"group": "reported_group", "row": "reported_row", "value": "reported", "backbone": "reported_backbone"}
    )
    right = right[keys + ["reported", "reported_backbone"]]
    merged = reproduced.merge(right, on=keys, how="left")
    merged["delta"] = merged["reproduced"] - merged["reported"]
    return merged


def derived_sts_record(derived: dict, run: dict) -> dict:
    """A derived STS result (e.g. whitened embeddings) in the shape :func:`sts_rows` and :func:`trace` read: traced to
    the derived record's id, provenance and time; the backbone is its run's, and so is the seed unless the
    post-processing was fitted with a seed of its own (a flow: ``params["seed"]``), which then is the row's seed and
    makes the row seed-dependent (:func:`deterministic`)."""
    seed = derived.get("params", {}).get("seed")
    spec = run["spec"] if seed is None else {**run["spec"], "seed": seed}
    return {
        "metrics": {"tasks": derived["result"]["tasks"]},
        "profile": run["profile"],
        "spec": spec,
        "run_id": derived["derived_id"],
        "provenance": derived["provenance"],
        "timing": derived["timing"],
        "post_processing_seed": seed,
    }


def sts_table(
    paper: str,
    table: str,
    rows: list[tuple[str, str, str, str, list[dict]]],
    reported: pd.DataFrame,
    aggregations: tuple[str, ...] | None = None,
    relabel=None,
) -> pd.DataFrame:
    """A table of STS cells (:func:`sts_rows`) aggregated over seeds and joined to the paper's ``reported`` rows.

    ``rows``: (run name, our row label, reported group, reported row, that run's records). ``aggregations`` keeps
    only those STS12-16 aggregations ("" is every single-split task and Avg.); ``relabel`` maps one record's rows
    (e.g. to a paper's column names). Empty when no row has a record."""
    per_seed = []
    for name, label, group, reported_row, records in rows:
        cell = Cell(paper, table, label, name, reported_group=group, reported_row=reported_row)
        for record in records:
            cells = sts_rows(record, cell)
            if aggregations is not None:
                cells = [r for r in cells if r["aggregation"] in aggregations]
            per_seed += relabel(cells) if relabel else cells
    if not per_seed:
        return pd.DataFrame()
    return join(aggregate_seeds(pd.DataFrame(per_seed)), reported)
