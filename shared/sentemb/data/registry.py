"""The dataset registry: every file the archive reads, with its sha256 and its source.

The table itself is ``registry.tsv`` beside this module (dataset, relpath, sha256, source, git_blob_sha1). The
relpath is the file's place in the mirror *and* in the download cache: the mirror
(``SENTEMB_DATA``) has exactly the layout that the real downloads leave.

``sha256 = unknown`` marks files whose sha256 could not be verified offline: the two full-size SimCSE
training files (``data fetch`` prints their hash so it can be recorded here; never guessed) and SentEval's
probing files, which are checked instead against the git blob sha1 that SentEval's repository records
for them (``git_blob_sha1``).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sentemb.errors import ConfigError

REGISTRY_TSV = Path(__file__).with_name("registry.tsv")

# Where the full profile downloads each source (SimCSE's own download scripts use these).
SOURCES = {
    "senteval.tar": "https://huggingface.co/datasets/princeton-nlp/datasets-for-simcse/resolve/main/senteval.tar",
    "wiki1m_for_simcse.txt": "https://huggingface.co/datasets/princeton-nlp/datasets-for-simcse/resolve/main/wiki1m_for_simcse.txt",
    "nli_for_simcse.csv": "https://huggingface.co/datasets/princeton-nlp/datasets-for-simcse/resolve/main/nli_for_simcse.csv",
    # SentEval's probing data lives in its repository (data/probing/), one file per task.
    "probing": "https://raw.githubusercontent.com/facebookresearch/SentEval/main/data/probing/{name}",
    "mirror-only": None,
}


@dataclass(frozen=True)
class DataFile:
    dataset: str
    relpath: str
    sha256: str | None  # None: not known offline (see module docstring)
    source: str  # a key of SOURCES
    git_blob_sha1: str | None = None

    @property
    def url(self) -> str | None:
        template = SOURCES[self.source]
        return None if template is None else template.format(name=self.relpath.rsplit("/", 1)[-1])


@lru_cache(maxsize=1)
def all_files() -> tuple[DataFile, ...]:
    with open(REGISTRY_TSV, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return tuple(
        DataFile(r["dataset"], r["relpath"], None if r["sha256"] == "unknown" else r["sha256"], r["source"],
                 r["git_blob_sha1"] or None)
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
