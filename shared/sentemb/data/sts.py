"""STS12-16, STS Benchmark and SICK-Relatedness, parsed exactly as SentEval parses them.

SentEval (and SimCSE's fork of it) reads the files of ``senteval/downstream``:

- STS12-16 (``STSEval.loadFile``): ``STS.input.<subset>.txt`` holds ``sent1<TAB>sent2`` and
  ``STS.gs.<subset>.txt`` one gold score per line; pairs whose gold line is empty are dropped.
- STS-B (``STSBenchmarkEval.loadFile``): ``sts-{train,dev,test}.csv``, tab-separated, column 4 is
  the score and columns 5 and 6 the sentences.
- SICK-R (SimCSE's ``SICKRelatednessEval``): ``SICK_{train,trial,test_annotated}.txt`` with a
  header; columns 1, 2 are the sentences and 3 the relatedness score; ``trial`` is the dev split.

Every sentence is split on whitespace and re-joined with single spaces, as SimCSE's batcher does
(``' '.join(tokens)``), so the text given to the tokenizer is identical to SentEval's.
"""

from __future__ import annotations

import numpy as np

from sentemb.data.files import read_text
from sentemb.data.sts_pairs import ALL_TASKS, SPLIT_TASKS, STS_SUBSETS, STSPairs, STSTask
from sentemb.data.synthetic import synthetic_sts_task
from sentemb.errors import ConfigError, DataError

__all__ = ["ALL_TASKS", "SPLIT_TASKS", "STS_SUBSETS", "STSPairs", "STSTask", "load_task", "read_gold_pairs"]


def _normalise(sentence: str) -> str:
    return " ".join(sentence.split())


def read_gold_pairs(input_relpath: str, gold_relpath: str, normalise: bool = True):
    """(sent1, sent2, scores) of a SemEval-style pair: line i of the input file (``s1<TAB>s2``) goes with line i
    of the gold file; pairs whose gold line is empty are dropped (SentEval's ``STSEval.loadFile``). With
    ``normalise`` each sentence is re-joined on single spaces as SimCSE's batcher does; without it the text is kept
    as it is in the file (what the mteb datasets hold)."""
    inputs = read_text(input_relpath).splitlines()
    gold = read_text(gold_relpath).splitlines()
    if len(inputs) != len(gold):
        raise DataError(f"{input_relpath} has {len(inputs)} lines but {gold_relpath} has {len(gold)}")
    s1, s2, scores = [], [], []
    for lineno, (line, score) in enumerate(zip(inputs, gold), 1):
        if score == "":
            continue
        columns = line.split("\t")
        if len(columns) != 2:
            raise DataError(f"{input_relpath} line {lineno}: expected 2 tab-separated columns")
        s1.append(_normalise(columns[0]) if normalise else columns[0])
        s2.append(_normalise(columns[1]) if normalise else columns[1])
        scores.append(float(score))
    return s1, s2, scores


def _sts_year(task: str) -> STSTask:
    folder, subsets = STS_SUBSETS[task]
    parts = {}
    for subset in subsets:
        base = f"senteval/downstream/STS/{folder}"
        s1, s2, scores = read_gold_pairs(f"{base}/STS.input.{subset}.txt", f"{base}/STS.gs.{subset}.txt")
        parts[subset] = STSPairs(f"{task}/{subset}", tuple(s1), tuple(s2), np.asarray(scores, dtype=np.float64))
    return STSTask(task, parts)


def _split_file(task: str, split: str, relpath: str) -> STSPairs:
    lines = read_text(relpath).splitlines()
    if task == "SICKRelatedness":
        lines, columns = lines[1:], (1, 2, 3)
    else:
        columns = (5, 6, 4)
    s1, s2, scores = [], [], []
    for lineno, line in enumerate(lines, 1):
        fields = line.strip().split("\t")
        try:
            s1.append(_normalise(fields[columns[0]]))
            s2.append(_normalise(fields[columns[1]]))
            scores.append(float(fields[columns[2]]))
        except (IndexError, ValueError) as exc:
            raise DataError(f"{relpath} line {lineno}: cannot parse ({exc})") from exc
    return STSPairs(f"{task}/{split}", tuple(s1), tuple(s2), np.asarray(scores, dtype=np.float64))


def _split_task(task: str) -> STSTask:
    folder = "senteval/downstream/STS/STSBenchmark" if task == "STSBenchmark" else "senteval/downstream/SICK"
    parts = {split: _split_file(task, split, f"{folder}/{name}") for split, name in SPLIT_TASKS[task].items()}
    return STSTask(task, parts)


def load_task(task: str, synthetic: bool = False) -> STSTask:
    """Load one of ALL_TASKS from the registry's verified files (or the generated smoke data)."""
    if task not in ALL_TASKS:
        raise ConfigError(f"unknown STS task {task!r}; choose from {', '.join(ALL_TASKS)}")
    if synthetic:
        return synthetic_sts_task(task)
    return _sts_year(task) if task in STS_SUBSETS else _split_task(task)
