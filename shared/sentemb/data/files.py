"""Resolve registered files and verify them against the registry's sha256.

Every read of a data file goes through :func:`open_verified` / :func:`verified_path`, so a missing
or corrupt file fails loudly with the file, the expected hash and how to fix it. Each file's
hash is recorded for the run's provenance (:func:`track_reads`).
"""

from __future__ import annotations

import gzip
import hashlib
import io
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sentemb import settings
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


def _root_description() -> tuple[Path, str]:
    mirror = settings.data_root()
    if mirror is not None:
        return mirror, f"the offline mirror SENTEMB_DATA={mirror}"
    return settings.download_root(), f"the download cache {settings.download_root()} (SENTEMB_DATA is unset)"


def verified_path(relpath: str) -> Path:
    """The local path of a registered file, after checking that it exists and its sha256 matches."""
    entry: DataFile = lookup(relpath)
    root, where = _root_description()
    path = root / relpath
    if not path.is_file():
        if entry.url is None:
            fix = (
                "this file exists only in the offline mirror: set SENTEMB_DATA to the mirror "
                "(e.g. SENTEMB_DATA=../shared/datasets)"
            )
        elif settings.data_root() is not None:
            fix = (
                f"the mirror lacks it; unset SENTEMB_DATA and run `python -m sentemb data fetch "
                f"{entry.dataset}` to download {entry.source} into the cache"
            )
        else:
            fix = (
                f"run `python -m sentemb data fetch {entry.dataset}` (downloads {entry.source}), "
                f"or set SENTEMB_DATA to an offline mirror"
            )
        raise DataError(f"missing data file {relpath} in {where}.\n  Fix: {fix}.")
    if path not in _verified:
        _verified[path] = _check(entry, path)
    for tracker in _trackers:
        tracker[relpath] = _verified[path]
    return path


def git_blob_sha1_of(path: Path) -> str:
    """The id git gives the file's content: sha1 of ``b"blob <size>\\0"`` + content."""
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _check(entry: DataFile, path: Path) -> str:
    if entry.sha256 is None and entry.git_blob_sha1 is not None:
        blob = git_blob_sha1_of(path)
        if blob != entry.git_blob_sha1:
            raise DataError(
                f"corrupt data file {path}\n  expected git blob sha1 {entry.git_blob_sha1}\n  found    {blob}\n"
                f"  Fix: delete the file and fetch it again (`python -m sentemb data fetch {entry.dataset}`)."
            )
    actual = sha256_of(path)
    if entry.sha256 is not None and actual != entry.sha256:
        raise DataError(
            f"corrupt data file {path}\n  expected sha256 {entry.sha256}\n  found    sha256 {actual}\n"
            f"  Fix: delete the file and fetch it again (`python -m sentemb data fetch {entry.dataset}`), "
            f"or restore the mirror copy; nothing was computed from it."
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


@contextmanager
def track_reads() -> Iterator[dict[str, str]]:
    """Collect ``relpath -> sha256`` of every registered file read inside the block (provenance)."""
    seen: dict[str, str] = {}
    _trackers.append(seen)
    try:
        yield seen
    finally:
        _trackers.remove(seen)
