"""SNLI pairs with their labels: which pairs are positives (SimCSE Table 4) and which are hard negatives (Table 7).

The mirror has SNLI 1.0's dev and test splits in SentEval's format (``snli_devtest_labelled``: ``s1``, ``s2`` and
``labels`` per split, tokenised, aligned line by line), the source of the mirror's SimCSE-format triples
(``snli_devtest_for_simcse``). The sentences are Moses-detokenised (sacremoses, English), as the mirror's triples
were: the triples' 17,649 sentences are all among the detokenised ones, and :func:`nli_quads` rebuilds them.

Corpora (rows for ``simcse_sup``; ``sentemb.data.corpora`` loads them by name):

| name                              | rows                                              | SimCSE            |
|-----------------------------------|---------------------------------------------------|-------------------|
| ``snli_devtest_pairs_entailment``  | (premise, hypothesis), the entailment pairs      | Table 4           |
| ``snli_devtest_pairs_neutral``     | the neutral pairs                                 | Table 4           |
| ``snli_devtest_pairs_contradiction`` | the contradiction pairs                         | Table 4           |
| ``snli_devtest_pairs_all``         | all three                                         | Table 4 "all"     |
| ``snli_devtest_with_neutral``      | (premise, entailment, contradiction, neutral)     | Table 7, "Contradiction + Neutral" |

Table 4's substitutes: 19,666 SNLI dev+test pairs (about 6,500 per label) for SNLI+MNLI train's 314k per label.
Quads: the pairs grouped by premise (in file order, dev then test), the i-th entailment, i-th contradiction and
i-th neutral hypothesis of a premise together, as long as the premise has all three (5,189 quads). Grouped the
same way without the neutral column, the pairs give exactly the mirror's 5,883 triples (as a set; the mirror's
file orders them differently), which ``tests/test_nli_labelled.py`` checks.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

from sentemb.data.files import read_text
from sentemb.data.registry import files_of
from sentemb.errors import ConfigError, DataError

LABELS = ("entailment", "neutral", "contradiction")
DATASET = "snli_devtest_labelled"
PAIR_CORPORA = {f"snli_devtest_pairs_{label}": label for label in (*LABELS, "all")}
QUAD_CORPUS = "snli_devtest_with_neutral"


def _detokenise(lines: list[str]) -> list[str]:
    from sacremoses import MosesDetokenizer

    detokenizer = MosesDetokenizer(lang="en")
    return [detokenizer.detokenize(line.split()) for line in lines]


@lru_cache(maxsize=1)
def labelled_pairs() -> tuple[tuple[str, str, str], ...]:
    """(premise, hypothesis, label) of SNLI dev then test, detokenised, in file order."""
    relpaths = {f.relpath.rsplit("/", 1)[-1]: f.relpath for f in files_of(DATASET)}
    rows = []
    for split in ("dev", "test"):
        columns = [read_text(relpaths[f"{name}.{split}.gz"]).splitlines() for name in ("s1", "s2", "labels")]
        if len({len(c) for c in columns}) != 1:
            raise DataError(f"SNLI {split}: s1, s2 and labels have {[len(c) for c in columns]} lines; they must align")
        unknown = sorted(set(columns[2]) - set(LABELS))
        if unknown:
            raise DataError(f"SNLI {split}: unknown label(s) {unknown}; expected {LABELS}")
        rows += zip(_detokenise(columns[0]), _detokenise(columns[1]), columns[2])
    return tuple(rows)


def positive_pairs(label: str) -> list[tuple[str, str]]:
    """(premise, hypothesis) of the pairs labelled ``label`` (or ``all``), in file order."""
    if label not in (*LABELS, "all"):
        raise ConfigError(f"unknown NLI label {label!r}; choose from {', '.join(LABELS)} or all")
    return [(p, h) for p, h, l in labelled_pairs() if label in ("all", l)]


def nli_quads() -> list[tuple[str, str, str, str]]:
    """(premise, entailment, contradiction, neutral): per premise the i-th hypothesis of each label."""
    by_premise: dict[str, dict[str, list[str]]] = defaultdict(lambda: {label: [] for label in LABELS})
    for premise, hypothesis, label in labelled_pairs():
        by_premise[premise][label].append(hypothesis)
    return [(premise, e, c, n) for premise, hyps in by_premise.items()
            for e, c, n in zip(hyps["entailment"], hyps["contradiction"], hyps["neutral"])]


def load_labelled_corpus(name: str) -> list[tuple[str, ...]]:
    """The rows of one of the corpora above."""
    if name in PAIR_CORPORA:
        return positive_pairs(PAIR_CORPORA[name])
    if name == QUAD_CORPUS:
        return nli_quads()
    raise ConfigError(f"unknown labelled NLI corpus {name!r}; choose from {', '.join([*PAIR_CORPORA, QUAD_CORPUS])}")
