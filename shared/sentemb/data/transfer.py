"""SentEval's transfer and probing tasks, parsed exactly as SentEval parses them.

Tasks (under ``senteval/downstream``): MR, CR, SUBJ, MPQA (2 classes, inner k-fold), SST2, SST5 (train/dev/test),
TREC (6 coarse classes, k-fold on train, test), MRPC (pairs, k-fold on train, test), SICKE (pairs, 3 classes,
train/dev/test). Probing tasks (Conneau et al., 2018; DeCLUTR Table S4): ``senteval/probing/<file>.txt``, partition
(tr/va/te), label, ..., sentence; labels numbered in string-sorted order of the training labels.
Order: as in SentEval, sentences are split on whitespace (never lowercased), re-joined with single spaces (SimCSE's
batcher), and every split is sorted by (token count, label), or (len A, len B, label) for pairs, before it is
encoded; the classifier sees that order, which fixes SentEval's cross-validation folds.
Files, encodings, classes and validation per task: docs/derivations.md#sentembdatatransferpy
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sentemb.data.files import read_text, verified_path
from sentemb.errors import ConfigError, DataError

BASE = "senteval/downstream"
TREC_CLASSES = {"ABBR": 0, "DESC": 1, "ENTY": 2, "HUM": 3, "LOC": 4, "NUM": 5}
SICK_CLASSES = {"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2}
PROBING = {  # SentEval task name -> file
    "Length": "sentence_length.txt",
    "WordContent": "word_content.txt",
    "Depth": "tree_depth.txt",
    "TopConstituents": "top_constituents.txt",
    "BigramShift": "bigram_shift.txt",
    "Tense": "past_present.txt",
    "SubjNumber": "subj_number.txt",
    "ObjNumber": "obj_number.txt",
    "OddManOut": "odd_man_out.txt",
    "CoordinationInversion": "coordination_inversion.txt",
}
TRANSFER_TASKS = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")  # SimCSE's transfer set
EXTRA_TASKS = ("SST5", "SICKEntailment")  # DeCLUTR's additional downstream tasks


@dataclass(frozen=True)
class Split:
    """Sentences (or sentence pairs) with integer labels, in SentEval's sorted order."""

    first: tuple[str, ...]
    labels: np.ndarray
    second: tuple[str, ...] | None = None  # the other sentence of a pair task

    def sentences(self) -> list[str]:
        return list(self.first) + (list(self.second) if self.second else [])


@dataclass(frozen=True)
class TransferTask:
    name: str
    scheme: str  # "cv" (inner k-fold), "kfold" (k-fold on train, then test), "split" (train/dev/test)
    nclasses: int
    splits: dict[str, Split]

    @property
    def is_pair(self) -> bool:
        return next(iter(self.splits.values())).second is not None


def _tokens(text: str) -> list[str]:
    return text.split()


def _single(rows: list[tuple[list[str], int]]) -> Split:
    rows = sorted(rows, key=lambda r: (len(r[0]), r[1]))
    return Split(tuple(" ".join(t) for t, _ in rows), np.array([y for _, y in rows], dtype=np.int64))


def _pairs(rows: list[tuple[list[str], list[str], int]]) -> Split:
    rows = sorted(rows, key=lambda r: (len(r[0]), len(r[1]), r[2]))
    return Split(
        tuple(" ".join(a) for a, _, _ in rows),
        np.array([y for _, _, y in rows], dtype=np.int64),
        tuple(" ".join(b) for _, b, _ in rows),
    )


def _lines(relpath: str, encoding: str) -> list[str]:
    return read_text(relpath, encoding=encoding).splitlines()


def _binary(name: str, positive: str, negative: str) -> TransferTask:
    pos = [(_tokens(line), 1) for line in _lines(f"{BASE}/{positive}", "latin-1")]
    neg = [(_tokens(line), 0) for line in _lines(f"{BASE}/{negative}", "latin-1")]
    return TransferTask(name, "cv", 2, {"all": _single(pos + neg)})


def _sst(fine: bool) -> TransferTask:
    folder = "fine" if fine else "binary"
    splits = {}
    for split in ("train", "dev", "test"):
        rows = []
        for lineno, line in enumerate(_lines(f"{BASE}/SST/{folder}/sentiment-{split}", "utf-8"), 1):
            try:
                if fine:
                    label, text = line.strip().split(" ", 1)
                else:
                    text, label = line.strip().split("\t")
                rows.append((_tokens(text), int(label)))
            except ValueError as exc:
                raise DataError(f"SST/{folder}/sentiment-{split} line {lineno}: cannot parse ({exc})") from exc
        splits[split] = _single(rows)
    return TransferTask("SST5" if fine else "SST2", "split", 5 if fine else 2, splits)


def _trec() -> TransferTask:
    splits = {}
    for split, name in (("train", "train_5500.label"), ("test", "TREC_10.label")):
        rows = []
        for line in _lines(f"{BASE}/TREC/{name}", "latin-1"):
            target, rest = line.strip().split(":", 1)
            rows.append((_tokens(rest.split(" ", 1)[1]), TREC_CLASSES[target]))
        splits[split] = _single(rows)
    return TransferTask("TREC", "kfold", 6, splits)


def _mrpc() -> TransferTask:
    splits = {}
    for split in ("train", "test"):
        rows = []
        for line in _lines(f"{BASE}/MRPC/msr_paraphrase_{split}.txt", "utf-8")[1:]:
            cols = line.strip().split("\t")
            rows.append((_tokens(cols[3]), _tokens(cols[4]), int(cols[0])))
        splits[split] = _pairs(rows)
    return TransferTask("MRPC", "kfold", 2, splits)


def _sick_entailment() -> TransferTask:
    splits = {}
    for split, name in (("train", "SICK_train.txt"), ("dev", "SICK_trial.txt"), ("test", "SICK_test_annotated.txt")):
        rows = []
        for line in _lines(f"{BASE}/SICK/{name}", "utf-8")[1:]:
            cols = line.strip().split("\t")
            rows.append((_tokens(cols[1]), _tokens(cols[2]), SICK_CLASSES[cols[4]]))
        splits[split] = _pairs(rows)
    return TransferTask("SICKEntailment", "split", 3, splits)


def _probing(name: str) -> TransferTask:
    relpath = f"senteval/probing/{PROBING[name]}"
    verified_path(relpath)
    partition = {"tr": "train", "va": "dev", "te": "test"}
    raw: dict[str, list[tuple[list[str], str]]] = {"train": [], "dev": [], "test": []}
    for line in _lines(relpath, "utf-8"):
        cols = line.rstrip().split("\t")
        raw[partition[cols[0]]].append((_tokens(cols[-1]), cols[1]))
    classes = {label: k for k, label in enumerate(sorted({y for _, y in raw["train"]}))}
    splits = {s: _single([(t, classes[y]) for t, y in rows]) for s, rows in raw.items()}
    return TransferTask(name, "split", len(classes), splits)


LOADERS = {
    "MR": lambda: _binary("MR", "MR/rt-polarity.pos", "MR/rt-polarity.neg"),
    "CR": lambda: _binary("CR", "CR/custrev.pos", "CR/custrev.neg"),
    "SUBJ": lambda: _binary("SUBJ", "SUBJ/subj.objective", "SUBJ/subj.subjective"),
    "MPQA": lambda: _binary("MPQA", "MPQA/mpqa.pos", "MPQA/mpqa.neg"),
    "SST2": lambda: _sst(fine=False),
    "SST5": lambda: _sst(fine=True),
    "TREC": _trec,
    "MRPC": _mrpc,
    "SICKEntailment": _sick_entailment,
}


def load_transfer_task(name: str) -> TransferTask:
    if name in LOADERS:
        return LOADERS[name]()
    if name in PROBING:
        return _probing(name)
    raise ConfigError(f"unknown transfer/probing task {name!r}; choose from {', '.join(list(LOADERS) + list(PROBING))}")
