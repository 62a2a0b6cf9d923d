"""The STS data types and task names, shared by the file parsers (``sts``) and the generated smoke data
(``synthetic``) so that neither imports the other's module at call time."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sentemb.errors import DataError

STS_SUBSETS = {
    "STS12": ("STS12-en-test", ["MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"]),
    "STS13": ("STS13-en-test", ["FNWN", "headlines", "OnWN"]),  # SMT is not distributed (licence)
    "STS14": ("STS14-en-test", ["deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"]),
    "STS15": ("STS15-en-test", ["answers-forums", "answers-students", "belief", "headlines", "images"]),
    "STS16": ("STS16-en-test", ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"]),
}
SPLIT_TASKS = {
    "STSBenchmark": {"train": "sts-train.csv", "dev": "sts-dev.csv", "test": "sts-test.csv"},
    "SICKRelatedness": {"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"},
}
ALL_TASKS = tuple(STS_SUBSETS) + tuple(SPLIT_TASKS)


@dataclass(frozen=True)
class STSPairs:
    """Sentence pairs with gold similarity scores (one STS subset, or one split of STS-B/SICK-R)."""

    name: str
    sent1: tuple[str, ...]
    sent2: tuple[str, ...]
    scores: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        if not (len(self.sent1) == len(self.sent2) == len(self.scores)):
            raise DataError(f"{self.name}: {len(self.sent1)}/{len(self.sent2)}/{len(self.scores)} sentences/scores")

    def __len__(self) -> int:
        return len(self.scores)

    def sentences(self) -> list[str]:
        return list(self.sent1) + list(self.sent2)


@dataclass(frozen=True)
class STSTask:
    """An STS task: its subsets (STS12-16) or its splits (STS-B, SICK-R), in file order."""

    name: str
    parts: dict[str, STSPairs]
