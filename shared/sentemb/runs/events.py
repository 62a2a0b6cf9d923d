"""What a command did with each run, for ``./run_all.sh``'s closing table.

``run_all.sh`` points ``SENTEMB_RUN_EVENTS`` at one JSON-lines file per paper; the run store appends one line each time
a run (or a derived analysis of a run) is trained or computed, loaded from its record, trained again because this
machine lost its checkpoint, or left out (a row outside the profile's budget, a failed run). Without the variable
nothing is written. :func:`summary` turns the files into one row per paper: the distinct runs in each state (a run
loaded by the run step and again by the notebook counts once, as its strongest state) and the paper's wall time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

ENV = "SENTEMB_RUN_EVENTS"
# strongest first: a run trained in this command and loaded again later counts as trained
STATES = ("trained", "retrained", "loaded", "not_run", "failed")
KINDS = ("run", "derived")


def note(state: str, run_id: str, kind: str = "run", reason: str = "") -> None:
    """Append one event to ``$SENTEMB_RUN_EVENTS`` (nothing when it is unset)."""
    if state not in STATES or kind not in KINDS:
        raise ValueError(f"unknown run event {state!r}/{kind!r}")
    path = os.environ.get(ENV, "").strip()
    if not path:
        return
    line = json.dumps({"state": state, "kind": kind, "run_id": run_id, "reason": reason}) + "\n"
    with open(path, "a", encoding="utf-8") as out:  # one write per line: appends from two processes do not interleave
        out.write(line)


def read(path: Path) -> pd.DataFrame:
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    return pd.DataFrame(rows, columns=["state", "kind", "run_id", "reason"])


def per_run(events: pd.DataFrame) -> pd.DataFrame:
    """One row per (kind, run id): its strongest state and the reasons given for it."""
    if events.empty:
        return events
    rank = {state: i for i, state in enumerate(STATES)}
    events = events.assign(rank=events["state"].map(rank)).sort_values("rank", kind="stable")
    return events.groupby(["kind", "run_id"], as_index=False).first().drop(columns="rank")


def summary(folder: Path, walls: dict[str, float]) -> pd.DataFrame:
    """One row per paper: runs trained / loaded / retrained / not run / failed, derived analyses computed / loaded /
    not run, the reasons for what was not run, and the wall time (s), for the papers of ``walls`` in its order."""
    rows = []
    for paper in walls:
        path = Path(folder) / f"{paper}.jsonl"
        runs = per_run(read(path)) if path.is_file() else pd.DataFrame(columns=["state", "kind", "run_id", "reason"])

        def count(kind: str, state: str, runs=runs) -> int:
            return int(((runs["kind"] == kind) & (runs["state"] == state)).sum())

        reasons = sorted(set(runs.loc[runs["state"].isin(["not_run", "failed"]), "reason"]) - {""})
        rows.append(
            {
                "paper": paper,
                "trained": count("run", "trained"),
                "loaded": count("run", "loaded"),
                "retrained (lost checkpoint)": count("run", "retrained"),
                "not run": count("run", "not_run"),
                "failed": count("run", "failed"),
                "derived computed": count("derived", "trained"),
                "derived loaded": count("derived", "loaded"),
                "derived not run": count("derived", "not_run"),
                "wall (s)": round(walls[paper]),
                "why not run": "; ".join(reasons),
            }
        )
    return pd.DataFrame(rows)
