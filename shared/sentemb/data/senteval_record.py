"""The record of the senteval.tar that the download cache holds: ``$SENTEMB_CACHE/data/senteval.tar.sha256.json``.

What it holds: the tar's URL, the pinned revision of SimCSE's dataset repository, its size and sha256, the date, how
that sha256 is known (``sha256_source``) and, for every file the tar unpacked, ``members``: its place in the cache
(``senteval/downstream/...``) -> sha256. No published sha256 of senteval.tar at the pinned revision was found
(``registry.SENTEVAL_TAR_SHA256`` is None), so the first download that unpacks records the tar's own sha256 here
("recorded at first download, not pinned") and every later download of the same revision is checked against it.

Why the members: registry.tsv's sha256 of senteval.tar's files are those of the offline mirror's copies, assembled from
third-party copies, not extracted from SimCSE's tar. A file of the cache that differs from the mirror's copy but is
the one the verified tar unpacked (its sha256 is in ``members``) is accepted by ``files.check``: it is SimCSE's data,
and evaluations use it (the run records its sha256). A record made for another revision counts as no record.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from sentemb import settings
from sentemb.atomic import atomic_write_text
from sentemb.data import registry
from sentemb.errors import DataError

RECORD_NAME = "senteval.tar.sha256.json"
RECORDED = "recorded at first download, not pinned (no published sha256 of senteval.tar at this revision was found)"
PINNED = "pinned in sentemb.data.registry.SENTEVAL_TAR_SHA256"


def record_path() -> Path:
    return settings.download_root() / RECORD_NAME


def _read() -> dict | None:
    path = record_path()
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        revision, sha256, members = record["revision"], record["sha256"], record["members"]
        if not (isinstance(revision, str) and isinstance(sha256, str) and isinstance(members, dict)):
            raise TypeError("revision and sha256 must be strings and members a mapping")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(
            f"{path} is not a readable record of senteval.tar ({type(exc).__name__}: {exc}).\n"
            f"  Fix: delete it; the next `python -m sentemb data fetch` unpacks senteval.tar again and records it."
        ) from exc
    return record


def load() -> dict | None:
    """The record for the pinned revision, or None when there is none (or it was made for another revision).

    Raises:
        DataError: the file exists but is not a readable record (with the fix: delete it).
    """
    record = _read()
    return record if record is not None and record["revision"] == registry.SIMCSE_DATASETS_REVISION else None


def other_revision() -> str | None:
    """The revision of a record made for another revision than the pinned one (then the cache's senteval.tar is that
    revision's too), else None."""
    record = _read()
    revision = None if record is None else record["revision"]
    return None if revision in (None, registry.SIMCSE_DATASETS_REVISION) else revision


def expected_sha256() -> tuple[str | None, str]:
    """``(sha256, where it comes from)`` that senteval.tar must have: the registry's pin, else the record's (the first
    download's), else ``(None, ...)`` (nothing to check against yet: this download gets recorded)."""
    if registry.SENTEVAL_TAR_SHA256 is not None:
        return registry.SENTEVAL_TAR_SHA256, PINNED
    record = load()
    if record is None:
        return None, "no record yet"
    return record["sha256"], f"{RECORDED}; recorded {record.get('date', '?')} in {record_path()}"


def save(url: str, size: int, sha256: str, members: dict[str, str]) -> Path:
    """Write the record of the tar just verified (or first downloaded) and unpacked."""
    record = {
        "url": url,
        "revision": registry.SIMCSE_DATASETS_REVISION,
        "bytes": size,
        "sha256": sha256,
        "sha256_source": PINNED if registry.SENTEVAL_TAR_SHA256 is not None else RECORDED,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "members": dict(sorted(members.items())),
    }
    previous = load()
    if previous is not None and previous["sha256"] == sha256:
        record["date"] = previous.get("date", record["date"])  # the same tar unpacked again: keep its first date
    return atomic_write_text(record_path(), json.dumps(record, indent=1) + "\n")


def member_sha256(relpath: str) -> str | None:
    """The sha256 that the recorded senteval.tar gave the file ``relpath`` of the cache, or None (no record, or no such
    member)."""
    try:
        record = load()
    except DataError:
        return None  # an unreadable record vouches for nothing (fetching says why)
    return None if record is None else record["members"].get(relpath)
