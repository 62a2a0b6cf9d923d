"""Fetch the data files that have a download source (``registry.SOURCES``) into ``settings.download_root()``.

From one pinned commit of the Hugging Face dataset repo ``princeton-nlp/datasets-for-simcse`` (whose
``resolve/<rev>/<file>`` URLs answer 302 to a CDN; redirects are followed): ``senteval.tar``, SimCSE's packaging of
SentEval's data (what ``SentEval/data/downstream/download_dataset.sh`` fetches: STS12-16, STS-B, SICK-R and the transfer
sets MR, CR, SUBJ, MPQA, SST-2/5, TREC, MRPC), and SimCSE's two training files; from SentEval's GitHub repository its
probing files. The layout left is the mirror's (``senteval/downstream/...``, ``training/...``), so the same loaders
read both. ``python -m sentemb data fetch`` fetches explicitly; ``files.verified_path`` fetches a missing file's dataset
itself unless SENTEMB_NO_DOWNLOAD=1. Offline, point SENTEMB_DATA at the mirror instead.

Resumable: bytes go to ``<target>.part``; a failed or truncated transfer (fewer bytes than Content-Length) keeps it, and
the next try asks for the rest with ``Range: bytes=N-`` (starting over when the server answers 200). Then every file is
checked by content (``files.check``): the registry's sha256, the git blob sha1 of a probing file, or for a ``*.gz`` the
sha256 of its decompressed bytes (``content_sha256``, so a re-compressed copy passes); a mismatch deletes it.

senteval.tar is checked by its own sha256 instead (``_verified_archive``): ``registry.SENTEVAL_TAR_SHA256`` when pinned;
it is not (no published sha256 of the tar at the pinned revision was found), so the first download that unpacks records
the tar's sha256, size, URL, revision and date in ``$SENTEMB_CACHE/data/senteval.tar.sha256.json``
(``sentemb.data.senteval_record``, "recorded at first download, not pinned"), and every later download is checked
against that record. A tar that fails is deleted once, with an error that names both hashes and the fix; a tar that
verifies is kept in ``$SENTEMB_CACHE/downloads`` and never downloaded again. The record also keeps the sha256 of every
member as the extraction produced it. registry.tsv's sha256 of those files are the offline mirror's copies (assembled
from third-party copies, not extracted from SimCSE's tar): a member that differs is reported (a warning with both
hashes), kept and used (``files.check`` accepts the cache's copy whose sha256 the record holds), never deleted.
"""

from __future__ import annotations

import http.client
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sentemb import settings
from sentemb.data import registry, senteval_record
from sentemb.data.files import check, sha256_of
from sentemb.data.registry import DataFile, datasets, files_of, source_url
from sentemb.errors import DataError
from sentemb.progress import progress

TIMEOUT_S = 60  # per connection attempt and per read
_BLOCK = 1 << 20
_MIRROR_HINT = "set SENTEMB_DATA to an offline mirror with the same layout (e.g. SENTEMB_DATA=../shared/datasets)"


def _failure(url: str, target: Path, part: Path, what: str) -> DataError:
    kept = part.stat().st_size if part.is_file() else 0
    if kept:
        state, retry = f"the {kept:,} bytes received are kept in {part}", "run the same command again (it resumes)"
    else:
        part.unlink(missing_ok=True)
        state, retry = "nothing was kept", "check the network and run the same command again"
    return DataError(
        f"could not download {url}: {what}; {state}.\n"
        f"  Fix: {retry}; or {_MIRROR_HINT}; or download the file by hand to {target}."
    )


def _open(url: str, offset: int):
    headers = {"User-Agent": "sentemb (python urllib)"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT_S)


def _download(url: str, target: Path) -> None:
    """``url`` into ``target`` through ``<target>.part``, resuming a ``.part`` left by an earlier try (see module)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    offset = part.stat().st_size if part.is_file() else 0
    try:
        try:
            response = _open(url, offset)
        except urllib.error.HTTPError as exc:
            if exc.code != 416 or not offset:
                raise
            exc.close()  # the kept bytes are not a prefix of what the server has now (416: range not satisfiable)
            part.unlink()
            offset = 0
            response = _open(url, 0)
        with response:
            if (response.status or 200) == 206:
                sent = response.headers.get("Content-Range", "")
                match = re.match(r"bytes (\d+)-", sent)
                if match is None or int(match.group(1)) != offset:
                    part.unlink(missing_ok=True)  # start over next time
                    raise _failure(url, target, part, f"asked for bytes from {offset} on, it sent {sent!r}")
            elif offset:
                print(f"[data] {url} ignored the request to resume at byte {offset}: starting over", file=sys.stderr)
                offset = 0
            length = response.headers.get("Content-Length")
            expected = offset + int(length) if length and length.isdigit() else None
            received = offset
            bar = progress(total=expected, initial=offset, unit="B", unit_scale=True, unit_divisor=1024, desc=part.name)
            with bar, open(part, "ab" if offset else "wb") as out:
                for block in iter(lambda: response.read(_BLOCK), b""):
                    out.write(block)
                    received += len(block)
                    bar.update(len(block))
    except urllib.error.HTTPError as exc:
        raise _failure(url, target, part, f"the server answered HTTP {exc.code} {exc.reason}") from exc
    except (OSError, http.client.HTTPException) as exc:  # URLError, timeouts and resets are OSErrors
        raise _failure(url, target, part, f"{type(exc).__name__}: {exc}") from exc
    if expected is not None and received < expected:
        raise _failure(url, target, part, f"the connection closed after {received:,} of {expected:,} bytes")
    part.replace(target)


def _unpack_senteval(archive: Path, root: Path) -> dict[str, str]:
    """Unpack senteval.tar so that its STS/, SICK/, MR/ ... folders land in ``root/senteval/downstream``; return the
    sha256 of every file it unpacked, by its relpath in ``root`` (what the cache's record keeps as ``members``)."""
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        # The archive's top level is either the task folders or one folder that holds them.
        top = Path(tmp)
        while not (top / "STS").is_dir():
            children = [c for c in top.iterdir() if c.is_dir()]
            if len(children) != 1:
                raise DataError(
                    f"{archive} does not contain SentEval's STS/ folder: it is not SimCSE's senteval.tar.\n"
                    f"  Fix: delete it and fetch again; or {_MIRROR_HINT}."
                )
            top = children[0]
        target = root / "senteval" / "downstream"
        prefix = target.relative_to(root).as_posix()
        members = {f"{prefix}/{p.relative_to(top).as_posix()}": sha256_of(p) for p in top.rglob("*") if p.is_file()}
        target.mkdir(parents=True, exist_ok=True)
        for child in top.iterdir():
            dest = target / child.name
            if dest.exists():
                shutil.rmtree(dest) if dest.is_dir() else dest.unlink()
            shutil.move(str(child), dest)
    return members


def _verified_archive(url: str) -> tuple[Path, str, bool]:
    """senteval.tar in the cache's downloads, downloaded when absent and checked by its own sha256 (the registry's pin,
    else the one recorded at the first download): ``(path, sha256, verified)``; ``verified`` is False when there was
    nothing to check against (the caller records it). A tar that fails is deleted, once, with the error."""
    archive = settings.cache_root() / "downloads" / "senteval.tar"
    stale = senteval_record.other_revision()
    if stale is not None and archive.is_file():
        print(f"[data] {archive} is of revision {stale}, not the pinned one: downloading it again", file=sys.stderr)
        archive.unlink()
    downloaded = not archive.is_file()
    if downloaded:
        _download(url, archive)
    actual = sha256_of(archive)
    expected, where = senteval_record.expected_sha256()
    if expected is None or actual == expected:
        return archive, actual, expected is not None
    size = archive.stat().st_size
    archive.unlink()
    redo = f"; if the recorded sha256 is the wrong one, delete {senteval_record.record_path()} and run again"
    if registry.SENTEVAL_TAR_SHA256 is not None:
        redo = ""
    raise DataError(
        f"{archive} ({'just downloaded' if downloaded else 'kept from an earlier download'} from {url}) is not the "
        f"senteval.tar of revision {registry.SIMCSE_DATASETS_REVISION}; it was deleted.\n"
        f"  expected sha256 {expected} ({where})\n"
        f"  found    sha256 {actual} ({size:,} bytes)\n"
        f"  Fix: run the same command again to download it afresh (HF_ENDPOINT, when set, must serve the hub's "
        f"bytes){redo}; or {_MIRROR_HINT}."
    )


def _fetch_senteval(url: str, root: Path, lacking: list[DataFile]) -> None:
    """Download (when absent) and verify senteval.tar, unpack it into ``root``, record it and its members' sha256 in
    the cache (:mod:`sentemb.data.senteval_record`), and report its files that differ from the mirror's copies."""
    archive, actual, verified = _verified_archive(url)
    try:
        members = _unpack_senteval(archive, root)
    except tarfile.TarError as exc:
        if verified or isinstance(exc, tarfile.FilterError):  # the same bytes again would fail the same way: keep it
            raise DataError(
                f"{archive} (from {url}, sha256 {actual}) cannot be unpacked ({type(exc).__name__}: {exc}); it was "
                f"kept.\n  Fix: {_MIRROR_HINT}; or unpack it by hand into {root / 'senteval' / 'downstream'}."
            ) from exc
        archive.unlink()
        raise DataError(
            f"{archive} (from {url}) is not a readable tar file ({exc}); it was deleted.\n"
            f"  Fix: run the same command again to download it afresh; or {_MIRROR_HINT}."
        ) from exc
    record = senteval_record.save(url, archive.stat().st_size, actual, members)
    if not verified:
        print(
            f"[data] senteval.tar: sha256 {actual} ({archive.stat().st_size:,} bytes), recorded at first download in "
            f"{record}, not pinned (no published sha256 of it at revision {registry.SIMCSE_DATASETS_REVISION} was "
            f"found); later downloads are checked against it",
            file=sys.stderr,
        )
    _report_differences(members, record)
    for f in lacking:
        if f.relpath not in members:
            raise DataError(
                f"{url} did not provide {f.relpath}: SimCSE's senteval.tar (sha256 {actual}) has no such file; the "
                f"archive {archive} was kept.\n  Fix: {_MIRROR_HINT}; or put the file there by hand "
                f"({root / f.relpath})."
            )


def _report_differences(members: dict[str, str], record: Path) -> None:
    """Warn about each registered file that SimCSE's tar unpacked with other bytes than the mirror's copy (the sha256
    in registry.tsv): kept, since it is SimCSE's data; evaluations read it."""
    differing = [
        (f, members[f.relpath])
        for f in registry.all_files()
        if f.source == "senteval.tar" and f.relpath in members and f.sha256 not in (None, members[f.relpath])
    ]
    for f, tar_sha256 in differing:
        print(
            f"[data] WARNING: {f.relpath} differs between SimCSE's senteval.tar and the offline mirror's copy\n"
            f"  senteval.tar sha256 {tar_sha256}\n  mirror       sha256 {f.sha256} (registry.tsv)",
            file=sys.stderr,
        )
    if differing:
        print(
            f"[data] The mirror's copies and SimCSE's tar differ in {len(differing)} file(s): they are kept as the tar "
            f"has them, and evaluations from the download cache use the tar's (its sha256 are in {record}; each run "
            f"records the sha256 it read). Runs from the mirror (SENTEMB_DATA) read the mirror's copies instead.",
            file=sys.stderr,
        )


@contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """One process at a time downloads a source (parallel runs that all miss the same file wait for the first)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"[data] waiting for another process's download (lock {lock})", file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _present(f: DataFile, root: Path) -> bool:
    path = root / f.relpath
    return path.is_file() and check(f, path)[1] is None


def _verify(f: DataFile, root: Path, url: str) -> None:
    """Check a file just downloaded; delete it when it is wrong."""
    path = root / f.relpath
    if not path.is_file():
        raise DataError(
            f"{url} did not provide {f.relpath}.\n  Fix: run the same command again to download it afresh; "
            f"or {_MIRROR_HINT}; or put the file there by hand ({path})."
        )
    actual, problem = check(f, path)
    if problem is not None:
        path.unlink()
        raise DataError(
            f"downloaded {f.relpath} from {url} does not match registry.tsv; it was deleted.\n{problem}"
            f"  Fix: run the same command again to download it afresh; or {_MIRROR_HINT}; or put a correct copy by "
            f"hand at {path}."
        )
    if f.sha256 is None and f.git_blob_sha1 is None:
        print(f"{f.relpath}: sha256 {actual} (not yet in the registry: record it in registry.tsv)")


def fetch(dataset: str) -> list[Path]:
    """Download what ``dataset`` lacks in the cache (a file there that fails its check counts as lacking), verify what
    was downloaded, and return the paths of all its files."""
    root = settings.download_root()
    files = files_of(dataset)
    for source in sorted({f.source for f in files}):
        url = source_url(source)
        if url is None:
            raise DataError(f"dataset {dataset!r} is not downloadable ({source}); set SENTEMB_DATA to use it")
        lacking = [f for f in files if f.source == source and not _present(f, root)]
        if not lacking:
            continue
        with _exclusive(settings.cache_root() / "downloads" / f"{source}.lock"):
            lacking = [f for f in lacking if not _present(f, root)]  # another process may have fetched them meanwhile
            if lacking and source == "senteval.tar":
                _fetch_senteval(url, root, lacking)
            else:
                for f in lacking:
                    (root / f.relpath).unlink(missing_ok=True)  # a copy that failed its check
                    _download(f.url, root / f.relpath)
                    _verify(f, root, f.url)
    return [root / f.relpath for f in files]


FULL_PROFILE_CORPORA = ("wiki1m_for_simcse", "nli_for_simcse")  # fetched by `run_all.sh --profile full` (~300 MB)


def downloadable() -> list[str]:
    """The datasets that ``data fetch`` without names fetches: the evaluation sets with a download source (those of
    senteval.tar, SentEval's probing files); the full profile's training corpora only when named."""
    return [
        d
        for d in datasets()
        if d not in FULL_PROFILE_CORPORA and all(source_url(f.source) is not None for f in files_of(d))
    ]
