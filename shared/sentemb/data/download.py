"""Fetch the real sources of the full profile into the download cache.

The layout produced is the mirror's layout (``senteval/downstream/...``, ``training/...``), so
the same loaders read both. SimCSE's files come from one pinned commit of its Hugging Face dataset
repo (``registry.SOURCES``). Every downloaded file is checked against the registry's sha256; a file
whose sha256 is still unknown is checked against its git blob sha1 where one is registered, and
otherwise has its sha256 printed so that it can be recorded. ``senteval.tar`` is SimCSE's packaging
of SentEval's data (the file that ``SentEval/data/downstream/download_dataset.sh`` fetches).
Offline, point SENTEMB_DATA at the mirror instead; this module is then never used.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from sentemb import settings
from sentemb.data.files import git_blob_sha1_of, sha256_of
from sentemb.data.registry import SOURCES, files_of
from sentemb.errors import DataError
from sentemb.progress import progress


def _download(url: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(target.suffix + ".part")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(partial, "wb") as out:
            total = int(response.headers.get("Content-Length") or 0) or None
            with progress(total=total, unit="B", unit_scale=True, desc=target.name) as bar:
                for block in iter(lambda: response.read(1 << 20), b""):
                    out.write(block)
                    bar.update(len(block))
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise DataError(
            f"could not download {url}: {exc}.\n  Fix: check the network, or set SENTEMB_DATA to an "
            f"offline mirror with the same layout (e.g. SENTEMB_DATA=../shared/datasets)."
        ) from exc
    partial.replace(target)


def _unpack_senteval(archive: Path, root: Path) -> None:
    """Unpack senteval.tar so that its STS/, SICK/, MR/ ... folders land in ``root/senteval/downstream``."""
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        # The archive's top level is either the task folders or one folder that holds them.
        top = Path(tmp)
        while not (top / "STS").is_dir():
            children = [c for c in top.iterdir() if c.is_dir()]
            if len(children) != 1:
                raise DataError(f"{archive} does not contain SentEval's STS/ folder; delete it and fetch again")
            top = children[0]
        target = root / "senteval" / "downstream"
        target.mkdir(parents=True, exist_ok=True)
        for child in top.iterdir():
            dest = target / child.name
            if dest.exists():
                shutil.rmtree(dest) if dest.is_dir() else dest.unlink()
            shutil.move(str(child), dest)


def fetch(dataset: str) -> list[Path]:
    """Download what ``dataset`` needs into the cache, verify each file, return their paths."""
    root = settings.download_root()
    files = files_of(dataset)
    sources = {f.source for f in files}
    for source in sorted(sources):
        if SOURCES[source] is None:
            raise DataError(f"dataset {dataset!r} exists only in the offline mirror; set SENTEMB_DATA to use it")
        if source == "senteval.tar":
            if all((root / f.relpath).is_file() for f in files):
                continue
            archive = settings.cache_root() / "downloads" / "senteval.tar"
            if not archive.is_file():
                _download(SOURCES[source], archive)
            _unpack_senteval(archive, root)
        else:
            for f in files:
                if not (root / f.relpath).is_file():
                    _download(f.url, root / f.relpath)
    paths = []
    for f in files:
        path = root / f.relpath
        digest = sha256_of(path)
        if f.sha256 is None and f.git_blob_sha1 is not None:
            blob = git_blob_sha1_of(path)
            if blob != f.git_blob_sha1:
                path.unlink()
                raise DataError(
                    f"downloaded {f.relpath} has git blob sha1 {blob}, expected "
                    f"{f.git_blob_sha1}; it was deleted, retry the fetch"
                )
        elif f.sha256 is None:
            print(f"{f.relpath}: sha256 {digest} (not yet in the registry: record it in registry.tsv)")
        elif digest != f.sha256:
            path.unlink()
            raise DataError(
                f"downloaded {f.relpath} from {f.url} has sha256 {digest}, expected {f.sha256} "
                f"(registry.tsv); it was deleted, retry the fetch"
            )
        paths.append(path)
    return paths
