"""Run records: ``<results>/runs/<profile>/<run_id>.json``, written atomically.

A record is written once, when its run has finished; a crashed run leaves no file (and no partial
file: the JSON goes to a temporary name and is renamed). A record that cannot be read is never
overwritten silently: the error says which file and how to recover.
"""

from __future__ import annotations

import json
from pathlib import Path

from sentemb import settings
from sentemb.atomic import atomic_write_text
from sentemb.errors import SentembError

SCHEMA_VERSION = 2


def record_path(profile: str, run_id: str) -> Path:
    return settings.results_root() / "runs" / profile / f"{run_id}.json"


def load(profile: str, run_id: str) -> dict | None:
    path = record_path(profile, run_id)
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SentembError(
            f"run record {path} is not valid JSON ({exc}).\n  Fix: inspect it; delete it to re-run that spec."
        ) from exc
    if record.get("run_id") != run_id:
        raise SentembError(f"run record {path} holds run_id {record.get('run_id')!r}; delete it to re-run")
    return record


def save(record: dict) -> Path:
    return atomic_write_text(record_path(record["profile"], record["run_id"]), json.dumps(record, indent=1) + "\n")


def all_records(profile: str) -> list[dict]:
    folder = settings.results_root() / "runs" / profile
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
