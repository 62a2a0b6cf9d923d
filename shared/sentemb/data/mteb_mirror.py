"""The offline mirror's data for 11 MTEB tasks, in the form the official ``mteb`` task objects expect.

Online, ``mteb`` downloads each task's dataset from the Hugging Face hub itself. Offline, these loaders build the
same ``datasets.DatasetDict`` from ``$SENTEMB_DATA/mteb/`` (see its README) and from SentEval's copies, and the
adapter injects them into the official task objects. Every file is sha256-checked through the registry.

- STS tasks: columns sentence1, sentence2, score (raw scale; mteb normalises linearly), split "test".
- STS12-16 are read from SentEval's copies (``senteval/downstream/STS/STS1x-en-test``): their character totals,
  unique texts and pairs equal the descriptive statistics that mteb 2.26.24 ships for the hub datasets exactly,
  whereas the mirror's original cased SemEval files do not.
- STS17 is the en-en subset; SICK-R is all 9,927 pairs of SICK (what mteb evaluates as "test").
- Classification tasks: columns text, label (int) for train and test, in file order (mteb's train subsampling
  depends on the row order).
"""

from __future__ import annotations

import csv
import io
import json

from sentemb.data.files import read_text
from sentemb.data.sts import STS_SUBSETS, read_gold_pairs
from sentemb.errors import ConfigError

MIRROR_TASKS = ("BIOSSES", "STS12", "STS13", "STS14", "STS15", "STS16", "STS17", "STSBenchmark", "SICK-R",
                "Banking77Classification", "EmotionClassification")
EMOTION_LABELS = {"sadness": 0, "joy": 1, "love": 2, "anger": 3, "fear": 4, "surprise": 5}


def _sts(s1: list[str], s2: list[str], scores: list[float]):
    from datasets import Dataset, DatasetDict

    return DatasetDict({"test": Dataset.from_dict({"sentence1": s1, "sentence2": s2, "score": scores})})


def _senteval_year(task: str):
    folder, subsets = STS_SUBSETS[task]
    s1, s2, scores = [], [], []
    for subset in subsets:
        base = f"senteval/downstream/STS/{folder}"
        a, b, c = read_gold_pairs(f"{base}/STS.input.{subset}.txt", f"{base}/STS.gs.{subset}.txt", normalise=False)
        s1, s2, scores = s1 + a, s2 + b, scores + c
    return _sts(s1, s2, scores)


def _stsb():
    s1, s2, scores = [], [], []
    for line in read_text("mteb/STSBenchmark/sts-test.csv").splitlines():
        if line.strip():
            columns = line.split("\t")  # not csv: sentences contain quotes
            scores.append(float(columns[4]))
            s1.append(columns[5])
            s2.append(columns[6])
    return _sts(s1, s2, scores)


def _sickr():
    rows = list(csv.DictReader(io.StringIO(read_text("mteb/SICK-R/SICK.txt")), delimiter="\t",
                               quoting=csv.QUOTE_NONE))
    return _sts([r["sentence_A"] for r in rows], [r["sentence_B"] for r in rows],
                [float(r["relatedness_score"]) for r in rows])


def _biosses():
    rows = list(csv.DictReader(io.StringIO(read_text("mteb/BIOSSES/all.tsv")), delimiter="\t"))  # one quoted tab
    return _sts([r["sentence1"] for r in rows], [r["sentence2"] for r in rows], [float(r["score"]) for r in rows])


def _sts17():
    return {"en-en": _sts(*read_gold_pairs("mteb/STS17/STS.input.track5.en-en.txt", "mteb/STS17/STS.gs.track5.en-en.txt",
                                        normalise=False))}


def _banking77():
    from datasets import Dataset, DatasetDict

    categories = {c: i for i, c in enumerate(json.loads(read_text("mteb/Banking77Classification/categories.json")))}
    splits = {}
    for split in ("train", "test"):
        rows = list(csv.DictReader(io.StringIO(read_text(f"mteb/Banking77Classification/{split}.csv"))))
        splits[split] = Dataset.from_dict({"text": [r["text"] for r in rows],
                                           "label": [categories[r["category"]] for r in rows]})
    return DatasetDict(splits)


def _emotion():
    from datasets import Dataset, DatasetDict

    splits = {}
    for split, name in (("train", "train.txt"), ("validation", "val.txt"), ("test", "test.txt")):
        lines = read_text(f"mteb/EmotionClassification/{name}").splitlines()
        pairs = [line.rsplit(";", 1) for line in lines[1:] if line]
        splits[split] = Dataset.from_dict({"text": [t for t, _ in pairs], "label": [EMOTION_LABELS[n] for _, n in pairs]})
    return DatasetDict(splits)


LOADERS = {"BIOSSES": _biosses, "STS17": _sts17, "STSBenchmark": _stsb, "SICK-R": _sickr,
           "Banking77Classification": _banking77, "EmotionClassification": _emotion,
           **{t: (lambda t=t: _senteval_year(t)) for t in STS_SUBSETS}}


def load_mirror_task(name: str):
    if name not in LOADERS:
        raise ConfigError(f"the offline mirror has no data for MTEB task {name!r}; it has {', '.join(MIRROR_TASKS)}")
    return LOADERS[name]()
