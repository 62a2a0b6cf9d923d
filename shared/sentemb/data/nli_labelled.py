"""SNLI pairs with their labels: which pairs are positives (SimCSE Table 4) and which are hard negatives (Table 7).

Inputs: the mirror's SNLI 1.0 dev and test splits in SentEval's format (``snli_devtest_labelled``), Moses-detokenised
(sacremoses) as the mirror's SimCSE triples were; :func:`nli_quads` rebuilds those triples.
Corpora (rows for ``simcse_sup``, loaded by name through ``sentemb.data.corpora``): ``snli_devtest_pairs_<label>``
for entailment, neutral, contradiction or all (Table 4), and ``snli_devtest_with_neutral``, the (premise,
entailment, contradiction, neutral) quads grouped by premise (Table 7, "Contradiction + Neutral").
Substitution: 19,666 SNLI dev+test pairs (about 6,500 per label) for SNLI+MNLI train's 314k per label.
Relations: :mod:`sentemb.objectives.simcse` (its ``negatives``).
Corpora, counts and the check against the mirror's triples: docs/derivations.md#sentembdatanli_labelledpy
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
    return [(p, h) for p, h, gold in labelled_pairs() if label in ("all", gold)]


def nli_quads() -> list[tuple[str, str, str, str]]:
    """(premise, entailment, contradiction, neutral): per premise the i-th hypothesis of each label."""
    by_premise: dict[str, dict[str, list[str]]] = defaultdict(lambda: {label: [] for label in LABELS})
    for premise, hypothesis, label in labelled_pairs():
        by_premise[premise][label].append(hypothesis)
    return [
        (premise, e, c, n)
        for premise, hyps in by_premise.items()
        for e, c, n in zip(hyps["entailment"], hyps["contradiction"], hyps["neutral"])
    ]


def load_labelled_corpus(name: str) -> list[tuple[str, ...]]:
    """The rows of one of the corpora above."""
    if name in PAIR_CORPORA:
        return positive_pairs(PAIR_CORPORA[name])
    if name == QUAD_CORPUS:
        return nli_quads()
    raise ConfigError(f"unknown labelled NLI corpus {name!r}; choose from {', '.join([*PAIR_CORPORA, QUAD_CORPUS])}")
