"""Run records: ``<results>/runs/<profile>/<run_id>.json``, written atomically.

A record is written once, when its run has finished; a crashed run leaves no file (and no partial
file: the JSON goes to a temporary name and is renamed). A record that cannot be read (truncated, corrupt, another
run's) is never overwritten silently. Every reader goes through :func:`read`, which names the file and the fix:

- ``on_broken="raise"`` (reports, ``--no-run``): a :class:`BrokenRecord` error;
- ``on_broken="recompute"`` (the run command): a warning on stderr saying which file is broken and that its run will
  be computed again; the file is first moved aside to ``<name>.broken`` (``.broken.1``, ... when that exists: kept
  for inspection, never overwritten), and the record counts as missing.

Hidden files (``.<name>.<pid>.tmp.json``: :mod:`sentemb.atomic`'s file being written, or one left by a killed
writer) are not records: no reader lists, flags or moves them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sentemb import settings
from sentemb.atomic import atomic_write_text
from sentemb.errors import SentembError

SCHEMA_VERSION = 2
ON_BROKEN = ("raise", "recompute")


class BrokenRecord(SentembError):
    """A record file that cannot be read as the record it should be."""


def record_path(profile: str, run_id: str) -> Path:
    return settings.results_root() / "runs" / profile / f"{run_id}.json"


def record_files(folder: Path) -> list[Path]:
    """The record files in ``folder``, by name: ``*.json`` but not hidden files (an atomic write in progress)."""
    return [p for p in sorted(folder.glob("*.json")) if not p.name.startswith(".")]


def _aside(path: Path) -> Path:
    """A free name next to ``path`` for keeping it: ``<name>.broken``, else ``<name>.broken.1``, ..."""
    aside, n = path.with_name(path.name + ".broken"), 0
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.broken.{n}")
    return aside


def read(
    path: Path,
    on_broken: str = "raise",
    expected_id: str | None = None,
    kind: str = "run record",
    id_key: str = "run_id",
) -> dict | None:
    """The JSON record in ``path`` (None if there is none); a broken one is handled as ``on_broken`` says.

    Broken: not readable as UTF-8 JSON, not a JSON object, or (with ``expected_id``) its ``id_key`` is not that id."""
    if on_broken not in ON_BROKEN:
        raise ValueError(f"on_broken is one of {ON_BROKEN}, got {on_broken!r}")
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        if expected_id is not None and record.get(id_key) != expected_id:
            raise ValueError(f"it holds {id_key} {record.get(id_key)!r}, not {expected_id!r}")
    except (OSError, ValueError) as exc:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        if on_broken == "raise":
            raise BrokenRecord(
                f"{kind} {path} cannot be read ({exc}).\n  Fix: inspect it, then delete it; the next "
                "run computes it again."
            ) from exc
        aside = _aside(path)
        path.replace(aside)
        print(
            f"warning: {kind} {path} cannot be read ({exc}); moved aside to {aside.name} (kept for inspection); "
            "it counts as missing and will be computed again",
            file=sys.stderr,
            flush=True,
        )
        return None
    return record


def load(profile: str, run_id: str, on_broken: str = "raise") -> dict | None:
    return read(record_path(profile, run_id), on_broken, expected_id=run_id)


def save(record: dict) -> Path:
    return atomic_write_text(record_path(record["profile"], record["run_id"]), json.dumps(record, indent=1) + "\n")


def all_records(profile: str, on_broken: str = "raise") -> list[dict]:
    """Every readable record of ``profile``, in file-name order (broken ones: see :func:`read`)."""
    folder = settings.results_root() / "runs" / profile
    records = [read(p, on_broken, expected_id=p.stem) for p in record_files(folder)]
    return [r for r in records if r is not None]
