"""What a profile tunes on STS-B dev for its own backbone, from the run records: learning rates and the step count.

lr probes (``lr_probe.csv``): for each tuned row, its own first-seed run and its one-seed probes at
``Profile.lr_multiples`` times its learning rate (rows ``<row>_lr_x<m>``, :func:`sentemb.profiles.lr_probes`); the
chosen rate is the best STS-B dev Spearman of the kept checkpoint, NaN counted as the worst. Never the test split.
Once a profile has chosen a multiple other than 1 for a row (``Profile.lr_chosen``), the row runs at it and its run at
the paper's rate is kept as the probe ``<row>_lr_x1`` (:func:`sentemb.profiles.tuned_grid`), which the table reads.
Steps (``steps_curve.csv``): the ``<row>_curve_lr_x<m>`` runs (:func:`sentemb.profiles.steps_curves`; SimCSE's unsup.;
``<row>_<pooler>_curve_lr_x<m>`` at another pooler, where the profile's ``curve_poolers`` ask), their STS-B dev curves
point by point; the chosen
point is the smallest step at which the best curve is within :data:`STEPS_TOLERANCE` points of its own maximum, both
over the trained points (step > 0: a profile trains; step 0, the untrained backbone, is listed for comparison)
(docs/raw-backbone.md; the budget's cap is applied by whoever sets the profile's steps, with this table cited).
"""

from __future__ import annotations

import re

import pandas as pd

from sentemb.selection import best_of, worst_if_nan

PROBE = re.compile(r"(?P<row>.+)_lr_x(?P<multiple>[0-9.]+)")  # sentemb.profiles.probe_name
CURVE = re.compile(r"(?P<row>.+)_curve_lr_x(?P<multiple>[0-9.]+)")  # sentemb.profiles.curve_name
STEPS_TOLERANCE = 0.5  # points of STS-B dev Spearman x 100


def _best_dev(record: dict) -> float | None:
    score = record["training"].get("best_stsb_dev")
    return None if score is None else 100 * score


def lr_probe_table(paper: str, records: dict[str, list[dict]]) -> pd.DataFrame:
    """One row per tuned row and learning rate (multiple 1: the row's own first seed), with the chosen one marked;
    empty without probes or before their records exist."""
    rows = []
    probes = {name: PROBE.fullmatch(name) for name in records if not CURVE.fullmatch(name)}
    for base in sorted({m["row"] for m in probes.values() if m and m["row"] in records}):
        own = [] if f"{base}_lr_x1" in records else [(1.0, (records[base] or [None])[0])]  # x1 kept as a probe
        candidates = own + [
            (float(m["multiple"]), (records[n] or [None])[0]) for n, m in probes.items() if m and m["row"] == base
        ]
        found = [(multiple, record) for multiple, record in candidates if record is not None]
        if len(found) < 2:
            continue
        chosen = best_of(found, lambda item: _best_dev(item[1]))
        for item in sorted(found, key=lambda item: item[0]):
            multiple, record = item
            rows.append(
                {
                    "paper": paper,
                    "row": base,
                    "multiple": multiple,
                    "lr": record["spec"]["lr"],
                    "steps": record["spec"]["steps"],
                    "best_stsb_dev": _best_dev(record),
                    "chosen": item is chosen,
                    "run_id": record["run_id"],
                }
            )
    return pd.DataFrame(rows)


def steps_curve_table(records: dict[str, list[dict]]) -> pd.DataFrame:
    """Every STS-B dev point of the steps curves, the chosen one marked; empty without them. A profile whose curves
    run at several poolers (``Profile.curve_poolers``) chooses the pooler with the learning rate: the best curve is
    the best over (pooler, multiple)."""
    rows = []
    for name, found in records.items():
        match = CURVE.fullmatch(name)
        if not match or not found:
            continue
        record = found[0]
        for point in record["training"]["dev_curve"]:
            rows.append(
                {
                    "pooler": record["spec"].get("pooler", ""),
                    "multiple": float(match["multiple"]),
                    "lr": record["spec"]["lr"],
                    "step": point["step"],
                    "stsb_dev": 100 * point["stsb_dev_spearman"],
                    "run_id": record["run_id"],
                }
            )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table = table.sort_values(["pooler", "multiple", "step"], ignore_index=True)
    trained = table[table["step"] > 0]
    table["chosen"] = False
    if trained.empty:
        return table
    peaks = trained.groupby(["pooler", "multiple"])["stsb_dev"].max()
    best = max(peaks.index, key=lambda curve: worst_if_nan(peaks[curve]))
    on_best = (trained["pooler"] == best[0]) & (trained["multiple"] == best[1])
    near = trained[on_best & (trained["stsb_dev"] >= peaks[best] - STEPS_TOLERANCE)]
    table.loc[near["step"].idxmin(), "chosen"] = True
    return table


def tuning_tables(paper: str, records: dict[str, list[dict]]) -> dict[str, pd.DataFrame]:
    """The tuning tables that have rows, by file stem (none on a profile that tunes nothing)."""
    tables = {"lr_probe": lr_probe_table(paper, records), "steps_curve": steps_curve_table(records)}
    return {stem: table for stem, table in tables.items() if not table.empty}
