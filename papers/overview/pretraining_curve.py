"""The papers' effects against the backbone's pretraining: one row per measured checkpoint of the archive's own
pretraining and method, with the checkpoint's tokens and CPU-hours (``notebooks/overview.ipynb``; the figure is
:func:`papers.overview.figures.figure_pretraining_curve`).

None of the five papers varies its backbone's pretraining; the archive's own backbones let it ask how much of each
method's effect depends on how far the backbone was pretrained. Two sources, both records:

- **A profile's backbone** made by the archive (a folder of ``shared/models/`` with its pretraining ``record.json``,
  e.g. the raw profile's): the 7-STS test average (SimCSE's protocol, Spearman x 100) of each of
  :data:`METHODS`' rows in that profile's run store, mean, std and seeds.
- **A milestone record** (``results/pretraining/*.json``, written by ``python -m sentemb.pretrain_check --sts7
  --record``): a decayed checkpoint of the long run, with its untrained mean pooling and [CLS] on the 7 STS test tasks
  (one run each, no seed). A milestone that is also a profile's backbone is read from the profile (it has more rows).

The reference is all-MiniLM-L6-v2's untrained mean pooling in the profile the backbone is compared with (``small``):
an encoder trained contrastively on about a billion sentence pairs, far right of any x this archive reaches, so it is a
horizontal line, not a point.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from papers.overview.tables import StoredRuns, row_values
from sentemb import settings
from sentemb.profiles import PROFILES, get_profile

METHODS = ("untrained, mean pooling", "untrained, [CLS]", "SimCSE unsup.", "SimCSE sup. (NLI)")
MILESTONE_METHODS = {"mean pooling": "untrained, mean pooling", "[CLS]": "untrained, [CLS]"}
COLUMNS = [
    "backbone", "source", "pretraining_run_id", "tokens_seen", "cpu_hours", "heldout_loss",
    "method", "mean", "std", "n", "values", "run_ids",
]  # fmt: skip


def milestones_dir() -> Path:
    return settings.REPO_ROOT / "results" / "pretraining"


def _cpu_hours(wall_seconds: float | None, threads: int | None) -> float:
    return float("nan") if wall_seconds is None or not threads else wall_seconds * threads / 3600


def archive_backbone(name: str | None) -> dict | None:
    """The pretraining record of the archive's backbone ``name`` (``shared/models/<name>/record.json``), or None
    when ``name`` is not one the archive made."""
    if not name:
        return None
    record = settings.models_root() / name / "record.json"
    return json.loads(record.read_text()) if record.is_file() else None


def profile_rows(stored: StoredRuns) -> list[dict]:
    """Each profile whose backbone the archive pretrained: one row per method of :data:`METHODS` that has a run in
    ``stored`` (a profile with none yet leaves its backbone to its milestone record, if any)."""
    rows = []
    for name, profile in PROFILES.items():
        record = archive_backbone(profile.backbone)
        if record is None:
            continue
        by_id = stored[name]
        point = {
            "backbone": profile.backbone,
            "source": f"profile {name}",
            "pretraining_run_id": record["run_id"],
            "tokens_seen": record["tokens_seen"],
            "cpu_hours": _cpu_hours(record.get("wall_seconds"), record["provenance"].get("torch_threads")),
            "heldout_loss": record["kept"]["heldout_loss"],
        }
        values = {m: row_values(name, m, by_id) for m in METHODS}
        rows += [{**point, "method": m, **v} for m, v in values.items() if v["n"]]  # a method with no run: no point
    return rows


def milestone_rows(folder: Path | None = None, known: set[str] = frozenset()) -> list[dict]:
    """Each milestone record in ``folder`` (default ``results/pretraining``) whose pretraining run is not in ``known``
    (already a profile's backbone): its untrained mean pooling and [CLS] rows."""
    rows = []
    for path in sorted((folder or milestones_dir()).glob("*.json")):
        record = json.loads(path.read_text())
        pretraining, root = record["pretraining"], settings.REPO_ROOT
        if pretraining["run_id"] in known:
            continue
        point = {
            "backbone": path.stem,
            "source": str(path.relative_to(root)) if path.is_relative_to(root) else str(path),
            "pretraining_run_id": pretraining["run_id"],
            "tokens_seen": pretraining["tokens_seen"],
            "cpu_hours": _cpu_hours(pretraining.get("wall_seconds"), pretraining.get("torch_threads")),
            "heldout_loss": record["heldout_loss"],
        }
        for key, method in MILESTONE_METHODS.items():
            score = record.get("untrained_sts7", {}).get(key)
            if score is None:
                continue
            rows.append(
                {**point, "method": method, "mean": score["sts7"], "std": float("nan"), "n": 1,
                 "values": f"{score['sts7']:.4f}", "run_ids": score["run_id"]}
            )  # fmt: skip
    return rows


def pretraining_curve(profile: str, folder: Path | None = None, stored: StoredRuns | None = None) -> pd.DataFrame:
    """The curve's table on a profile compared with another backbone's (``compare_with``; empty otherwise): the rows
    of :func:`profile_rows` and :func:`milestone_rows`, in order of tokens seen (``stored``: one build's reads)."""
    if not get_profile(profile).compare_with:
        return pd.DataFrame()
    rows = profile_rows(StoredRuns() if stored is None else stored)
    rows += milestone_rows(folder, {r["pretraining_run_id"] for r in rows})
    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["_order"] = table["method"].map({m: i for i, m in enumerate(METHODS)})
    return table.sort_values(["_order", "tokens_seen", "backbone"]).drop(columns="_order").reset_index(drop=True)


def reference(profile: str, stored: StoredRuns | None = None) -> pd.DataFrame:
    """The reference line, one row: the untrained mean pooling of the backbone ``profile`` is compared with (its name,
    profile and 7-STS average with its run ids), from that profile's store; empty on a profile compared with none."""
    other = get_profile(profile).compare_with
    if not other:
        return pd.DataFrame()
    values = row_values(other, "untrained, mean pooling", (StoredRuns() if stored is None else stored)[other])
    return pd.DataFrame([{"backbone": get_profile(other).backbone, "profile": other, **values}])
