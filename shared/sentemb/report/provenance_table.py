"""One row per run record and derived record behind a paper's tables: what it is, where and when it was computed.

Every paper's notebook ends with this table, so that a reader can go from any number to the record that holds its
spec, data sha256, commit and device.
"""

from __future__ import annotations

from typing import Iterable

import pandas as pd


def provenance_table(records: dict[str, list[dict]], derived: Iterable[tuple[str, dict]]) -> pd.DataFrame:
    """``records``: run name -> its records (one per seed); ``derived``: (name, derived record, or a list of them,
    e.g. one flow per fit seed) pairs."""
    rows = []
    for name, runs in records.items():
        for r in runs:
            t = r["training"] or {}
            rows.append(
                {
                    "kind": "run",
                    "name": name,
                    "seed": r["spec"]["seed"],
                    "id": r["run_id"],
                    "objective": r["spec"]["objective"],
                    "steps": r["spec"]["steps"],
                    "train_data": r["spec"]["train_data"],
                    "precision": r["precision"]["training"],
                    "wall_s": round(r["timing"]["total_seconds"], 1),
                    "steps_s": round(t["phase_seconds"]["steps"], 1) if t else None,
                    "final_eval_s": round(r["timing"]["final_eval_seconds"], 1),
                    "commit": (r["provenance"]["commit"] or "")[:10],
                    "dirty": r["provenance"]["dirty"],
                    "device": r["provenance"]["device"],
                }
            )
    for name, found in derived:
        for d in found if isinstance(found, list) else [found]:
            rows.append(
                {
                    "kind": f"derived ({d['analysis']}; model: {d['model']['source']})",
                    "name": name,
                    "seed": d["params"].get("seed"),
                    "id": d["derived_id"],
                    "wall_s": round(d["timing"]["total_seconds"], 1),
                    "commit": (d["provenance"]["commit"] or "")[:10],
                    "dirty": d["provenance"]["dirty"],
                    "device": d["provenance"]["device"],
                }
            )
    # a derived record has no steps and most have no seed: nullable integers keep the runs' 60 from showing as 60.0
    frame = pd.DataFrame(rows)
    return frame.astype({column: "Int64" for column in ("seed", "steps") if column in frame})
