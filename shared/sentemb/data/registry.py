"""The dataset registry: every file the archive reads, with its sha256 and its source.

The table itself is ``registry.tsv`` beside this module (dataset, relpath, sha256, source, git_blob_sha1,
content_sha256). The relpath is the file's place in the mirror *and* in the download cache: the mirror
(``SENTEMB_DATA``) has exactly the layout that the real downloads leave.

``sha256 = unknown`` marks files whose sha256 is not known: SentEval's probing files, which are
checked instead against the git blob sha1 that SentEval's repository records for them
(``git_blob_sha1``). ``data fetch`` prints the hash of any file still marked unknown, so that it can be
recorded here (never guessed). The two full-size SimCSE training files carry the sha256 that the
Hugging Face dataset repo records for them (their Git LFS oid, which is the sha256 of the content).
``content_sha256`` (optional, ``*.gz`` files only) is the sha256 of the decompressed bytes: a re-compressed copy of
the same data is accepted by it (``files.check``), while the sha256 recorded for a run stays that of the file's bytes.

SimCSE's download scripts fetch from ``princeton-nlp/datasets-for-simcse`` at ``main``; here the URLs are
pinned to one commit of that repo (:data:`SIMCSE_DATASETS_REVISION`), so what is downloaded cannot move. The
senteval.tar rows' sha256 are the mirror's copies (assembled from third-party copies, not extracted from SimCSE's tar);
the tar itself is checked by its own sha256 (:data:`SENTEVAL_TAR_SHA256`, else the first download's, recorded in the
cache by :mod:`sentemb.data.senteval_record`), and its members' sha256 are recorded from the extraction.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sentemb.errors import ConfigError

REGISTRY_TSV = Path(__file__).with_name("registry.tsv")

# The commit of huggingface.co/datasets/princeton-nlp/datasets-for-simcse that the full profile downloads:
# the head of its main branch, e145e8b "update senteval data" (7 commits), per
# https://huggingface.co/datasets/princeton-nlp/datasets-for-simcse/tree/main; full hash from
# https://huggingface.co/datasets/princeton-nlp/datasets-for-simcse/tree/e145e8bb659b2aa2669f32ef79cb4cdef6c58fef
# At this commit wiki1m_for_simcse.txt and nli_for_simcse.csv are still the files of the repo's "init"
# commit d0065b9a050f8aa53170ab639f5a1f3c643fa9ef, whose pages give their sha256 (see registry.tsv).
SIMCSE_DATASETS_REVISION = "e145e8bb659b2aa2669f32ef79cb4cdef6c58fef"
# senteval.tar's own sha256 at that commit (its Git LFS oid): NOT PINNED, because no stored copy of the value was found.
# The tree page of e145e8b lists senteval.tar at 89.8 MB without its oid. The one oid found belongs to the 92.5 MB
# senteval.tar of the previous commit 278e782 ("update senteval data", replaced by e145e8b the same day):
# 0f6caf7527ac8fbca9267fbcda3e3eaf716cc3e6c1e1c96407e03da545e59c97, per https://huggingface.co/datasets/princeton-nlp/
# datasets-for-simcse/blob/278e78296b790b7481748602aad1fe84cf87b1bc/senteval.tar; it is not this file's. Until the
# value is pinned here (with its source), the first download records the tar's sha256 in the cache and later downloads
# are checked against that record (sentemb.data.senteval_record).
SENTEVAL_TAR_SHA256: str | None = None
HUB = "https://huggingface.co"  # the Hugging Face hub; HF_ENDPOINT (a mirror, as huggingface_hub reads it) replaces it
_SIMCSE_DATASETS = "{hub}/datasets/princeton-nlp/datasets-for-simcse/resolve/" + SIMCSE_DATASETS_REVISION

# Where the full profile downloads each source (SimCSE's own download scripts use the same files, at main).
SOURCES = {
    "senteval.tar": f"{_SIMCSE_DATASETS}/senteval.tar",
    "wiki1m_for_simcse.txt": f"{_SIMCSE_DATASETS}/wiki1m_for_simcse.txt",
    "nli_for_simcse.csv": f"{_SIMCSE_DATASETS}/nli_for_simcse.csv",
    # SentEval's probing data lives in its repository (data/probing/), one file per task.
    "probing": "https://raw.githubusercontent.com/facebookresearch/SentEval/main/data/probing/{name}",
    "mirror-only": None,
    "shipped": None,  # ships with the archive under data/ (CC BY-SA training text; data/MANIFEST.tsv)
}


def hub_endpoint() -> str:
    """The hub's address: ``$HF_ENDPOINT`` when set (researchers behind a mirror set it; huggingface_hub and datasets
    read it too), else :data:`HUB`."""
    return (os.environ.get("HF_ENDPOINT", "").strip() or HUB).rstrip("/")


def source_url(source: str, name: str = "") -> str | None:
    """The download address of ``source`` (a key of :data:`SOURCES`) for file ``name``; None when it has none."""
    template = SOURCES[source]
    return None if template is None else template.format(hub=hub_endpoint(), name=name)


@dataclass(frozen=True)
class DataFile:
    dataset: str
    relpath: str
    sha256: str | None  # None: not known offline (see module docstring)
    source: str  # a key of SOURCES
    git_blob_sha1: str | None = None
    content_sha256: str | None = None  # *.gz: sha256 of the decompressed bytes (optional)

    @property
    def url(self) -> str | None:
        return source_url(self.source, self.relpath.rsplit("/", 1)[-1])


#: A rehearsal of the full profile (``scripts/rehearse.sh``) downloads from a stand-in hub whose generated training
#: files cannot have the real files' sha256: this variable names the JSON file (relpath -> sha256) that the stand-in
#: builder writes, and those files are then checked against it instead of registry.tsv, said once on stderr.
REHEARSAL_HASHES = "SENTEMB_REHEARSAL_HASHES"


def _rehearsal_hashes(known: set[str]) -> dict[str, str]:
    """The expected sha256 that a rehearsal's stand-in hub replaces (``$SENTEMB_REHEARSAL_HASHES``; none unset)."""
    value = os.environ.get(REHEARSAL_HASHES, "").strip()
    if not value:
        return {}
    fix = (
        f"  Fix: point {REHEARSAL_HASHES} at the expected_sha256.json that python -m sentemb.rehearsal.stand_in "
        "writes, or unset it."
    )
    try:
        mapping = json.loads(Path(value).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{REHEARSAL_HASHES}={value}: not a readable JSON file ({exc}).\n{fix}") from None
    if not isinstance(mapping, dict) or not all(isinstance(v, str) and len(v) == 64 for v in mapping.values()):
        raise ConfigError(f"{REHEARSAL_HASHES}={value}: not a mapping of relpath -> sha256.\n{fix}")
    unknown = sorted(set(mapping) - known)
    if unknown:
        raise ConfigError(f"{REHEARSAL_HASHES}={value} names files not in {REGISTRY_TSV.name}: {unknown}.\n{fix}")
    print(
        f"[data] rehearsal: the expected sha256 of {', '.join(sorted(mapping))} are a stand-in hub's ({value}), "
        f"not {REGISTRY_TSV.name}'s",
        file=sys.stderr,
    )
    return mapping


@lru_cache(maxsize=1)
def all_files() -> tuple[DataFile, ...]:
    with open(REGISTRY_TSV, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    replaced = _rehearsal_hashes({r["relpath"] for r in rows})
    return tuple(
        DataFile(
            r["dataset"],
            r["relpath"],
            replaced.get(r["relpath"]) or (None if r["sha256"] == "unknown" else r["sha256"]),
            r["source"],
            r["git_blob_sha1"] or None,
            None if r["relpath"] in replaced else (r.get("content_sha256") or None),  # an optional column
        )
        for r in rows
    )


def datasets() -> list[str]:
    return sorted({f.dataset for f in all_files()})


def files_of(dataset: str) -> list[DataFile]:
    found = [f for f in all_files() if f.dataset == dataset]
    if not found:
        raise ConfigError(f"unknown dataset {dataset!r}; registered datasets: {', '.join(datasets())}")
    return found


def lookup(relpath: str) -> DataFile:
    for f in all_files():
        if f.relpath == relpath:
            return f
    raise ConfigError(f"{relpath!r} is not in the dataset registry ({REGISTRY_TSV})")
