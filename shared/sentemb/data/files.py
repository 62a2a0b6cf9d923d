"""Resolve registered files and verify them against the registry's sha256.

Every read of a data file goes through :func:`open_verified` / :func:`verified_path`, so a missing
or corrupt file fails loudly with the file, the expected hash and how to fix it. Each file's
hash is recorded for the run's provenance (:func:`track_reads`). A missing file that has a download source is first
fetched into the download cache (:func:`_fetch_missing`), unless SENTEMB_NO_DOWNLOAD=1. The cache's copy of a
senteval.tar file also passes when it is what SimCSE's verified tar unpacked (:func:`_tar_copy`), where that differs
from the mirror's copy.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import sys
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sentemb import settings
from sentemb.data import senteval_record
from sentemb.data.registry import DataFile, lookup
from sentemb.errors import DataError

_verified: dict[Path, str] = {}
_trackers: list[dict[str, str]] = []


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def locate(relpath: str) -> Path | None:
    """The first copy of ``relpath`` in :func:`sentemb.settings.data_roots` (mirror, shipped data, download cache), or
    None."""
    for root, _ in settings.data_roots():
        if (root / relpath).is_file():
            return root / relpath
    return None


def _missing(entry: DataFile) -> DataError:
    """The error for a registered file found in none of the data roots: where it was looked for, and the fix."""
    where = "; ".join(description for _, description in settings.data_roots())
    if entry.source == "shipped":
        fix = (
            "the archive ships this file under data/: restore it (`git checkout -- data/`), or set SENTEMB_DATA to "
            "an offline mirror that has it"
        )
    elif entry.url is None:
        fix = (
            "this file exists only in the offline mirror: set SENTEMB_DATA to the mirror "
            "(e.g. SENTEMB_DATA=../shared/datasets)"
        )
    else:
        fix = (
            f"run `python -m sentemb data fetch {entry.dataset}` (downloads {entry.source}), "
            f"or set SENTEMB_DATA to an offline mirror"
        )
    return DataError(f"missing data file {entry.relpath}; looked in {where}.\n  Fix: {fix}.")


def verified_path(relpath: str, download: bool = True) -> Path:
    """The local path of a registered file, after checking that it exists and its sha256 matches (a missing file is
    downloaded first when it can be, unless ``download`` is False: ``data verify`` only checks)."""
    entry: DataFile = lookup(relpath)
    path = locate(relpath) or (_fetch_missing(entry) if download else None)
    if path is None:
        raise _missing(entry)
    if path not in _verified:
        _verified[path] = _check(entry, path)
    for tracker in _trackers:
        tracker[relpath] = _verified[path]
    return path


def _fetch_missing(entry: DataFile) -> Path | None:
    """Download the dataset of ``entry``, a registered file found in no data root, into the download cache and return
    the file's path there; None when it has no download source or SENTEMB_NO_DOWNLOAD=1 (then it is missing)."""
    if entry.url is None or not settings.downloads_enabled():
        return None
    from sentemb.data.download import fetch  # download imports this module

    print(
        f"[data] {entry.relpath} is missing: downloading dataset {entry.dataset} ({entry.url}) into "
        f"{settings.download_root()} (SENTEMB_NO_DOWNLOAD=1 turns this off)",
        file=sys.stderr,
        flush=True,
    )
    fetch(entry.dataset)
    return settings.download_root() / entry.relpath


def git_blob_sha1_of(path: Path) -> str:
    """The id git gives the file's content: sha1 of ``b"blob <size>\\0"`` + content."""
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def gz_content_sha256(path: Path) -> str:
    """The sha256 of a gzip file's decompressed bytes (the registry's ``content_sha256``)."""
    digest = hashlib.sha256()
    with gzip.open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check(entry: DataFile, path: Path) -> tuple[str, str | None]:
    """``(sha256 of the file's bytes, None)`` when ``path`` matches ``entry``, else ``(sha256, expected/found lines)``.

    A ``*.gz`` whose bytes differ still matches when its decompressed bytes hash to the entry's ``content_sha256`` (the
    same data compressed again); the sha256 returned, which runs record, is always that of the bytes on disk."""
    if entry.sha256 is None and entry.git_blob_sha1 is not None:
        blob = git_blob_sha1_of(path)
        if blob != entry.git_blob_sha1:
            return sha256_of(path), f"  expected git blob sha1 {entry.git_blob_sha1}\n  found    {blob}\n"
    actual = sha256_of(path)
    if entry.sha256 is None or actual == entry.sha256 or _tar_copy(entry, path, actual):
        return actual, None
    expected, found = f"sha256 {entry.sha256}", f"sha256 {actual}"
    if entry.content_sha256 is not None and path.suffix == ".gz":
        try:
            content = gz_content_sha256(path)
        except (OSError, EOFError, zlib.error) as exc:  # not gzip, or truncated
            content = f"none, not readable as gzip ({exc})"
        if content == entry.content_sha256:
            return actual, None
        expected += f" (or gzip of content sha256 {entry.content_sha256})"
        found += f" (content: {content})"
    return actual, f"  expected {expected}\n  found    {found}\n"


def _tar_copy(entry: DataFile, path: Path, actual: str) -> bool:
    """Whether ``path`` is the download cache's copy of a senteval.tar file as the verified tar unpacked it (its sha256
    is in the cache's record, :mod:`sentemb.data.senteval_record`): kept and used even where it differs from the
    mirror's copy, whose sha256 registry.tsv holds."""
    return (
        entry.source == "senteval.tar"
        and path == settings.download_root() / entry.relpath
        and senteval_record.member_sha256(entry.relpath) == actual
    )


def _check(entry: DataFile, path: Path) -> str:
    actual, problem = check(entry, path)
    if problem is not None:
        raise DataError(
            f"corrupt data file {path}\n{problem}"
            f"  Fix: delete the file and fetch it again (`python -m sentemb data fetch {entry.dataset}`), "
            f"or restore the mirror copy; nothing was computed from it."
        )
    if entry.source == "senteval.tar" and entry.sha256 not in (None, actual):
        print(
            f"[data] note: {entry.relpath} is SimCSE's senteval.tar copy (sha256 {actual}), which differs from the "
            f"mirror's (sha256 {entry.sha256}); this run uses and records the tar's ({senteval_record.record_path()})",
            file=sys.stderr,
        )
    return actual


def read_text(relpath: str, encoding: str = "utf-8") -> str:
    """Verified file content as text (transparently un-gzips ``*.gz``)."""
    path = verified_path(relpath)
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return raw.decode(encoding)


def open_text(relpath: str, encoding: str = "utf-8") -> io.StringIO:
    return io.StringIO(read_text(relpath, encoding))


def note_read(key: str, sha256: str) -> None:
    """Put a read that is not a registered file into the provenance of the runs being tracked (a hub dataset's
    Parquet files, keyed ``hub:<dataset>@<commit>/<path>``: :func:`sentemb.data.hub_pins.lfs_hashes`)."""
    for tracker in _trackers:
        tracker[key] = sha256


@contextmanager
def track_reads() -> Iterator[dict[str, str]]:
    """Collect ``relpath -> sha256`` of every registered file read inside the block, and of each hub file noted by
    :func:`note_read` (provenance)."""
    seen: dict[str, str] = {}
    _trackers.append(seen)
    try:
        yield seen
    finally:
        _trackers.remove(seen)
