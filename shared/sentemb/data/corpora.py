"""Training text: SimCSE's unsupervised sentences and NLI triples.

| name                      | file (relpath)                                      | used by        |
|---------------------------|-----------------------------------------------------|----------------|
| wiki1m_for_simcse         | training/unsup/wiki1m_for_simcse.txt (1M lines)     | full profile   |
| wiki_sentences_combined   | training/unsup/wiki_sentences_combined.txt.gz       | small (data/)  |
| nli_for_simcse            | training/nli/nli_for_simcse.csv (275,601 triples)   | full profile   |
| snli_devtest_for_simcse   | training/nli/snli_devtest_for_simcse.csv.gz (5,883) | small (data/)  |
| snli_devtest_pairs_<label> | SNLI dev+test pairs of one label (``nli_labelled``) | SimCSE Table 4 |
| snli_devtest_with_neutral | SNLI dev+test quads with the neutral hypothesis (``nli_labelled``) | SimCSE Table 7 |
| wikitext2_windows         | 4 consecutive sentences of a WikiText-2 article (``sentence_windows``) | SimCSE Table 2 |

The small profile's two files ship with the archive under ``data/`` (``data/MANIFEST.tsv``, ``data/ATTRIBUTION.md``)
and are substitutes: 108k
Wikipedia sentences instead of 1M, and triples built from SNLI dev+test instead of SNLI+MNLI train.

``<corpus>+sickr`` (TNCSE: "Wiki1M + unlabelled SICK-R", supplement and Figure 4) is a sentence corpus followed by
the distinct sentences of SICK-R's train, trial and test files without their scores. SICK-R is also an evaluation
task, so a model trained on it has seen the test sentences (not their labels); TNCSE Table 6 measures the effect.
"""

from __future__ import annotations

import csv
import io

from sentemb.data.documents import load_documents
from sentemb.data.files import read_text
from sentemb.data.nli_labelled import PAIR_CORPORA, QUAD_CORPUS, load_labelled_corpus
from sentemb.data.registry import files_of
from sentemb.data.sentence_windows import load_sentence_windows
from sentemb.data.synthetic import synthetic_nli_triples, synthetic_sentences
from sentemb.errors import ConfigError, DataError

UNSUP_CORPORA = ("wiki1m_for_simcse", "wiki_sentences_combined")
NLI_CORPORA = ("nli_for_simcse", "snli_devtest_for_simcse")
LABELLED_CORPORA = (*PAIR_CORPORA, QUAD_CORPUS)  # SimCSE Tables 4 and 7: SNLI pairs by label
WITH_SICKR = "+sickr"


def sickr_sentences() -> list[str]:
    """Every distinct sentence of SICK-R (train, trial, test; SentEval's parsing), in file order, no scores."""
    from sentemb.data.sts import load_task

    task = load_task("SICKRelatedness")
    return list(dict.fromkeys(s for part in task.parts.values() for s in part.sentences()))


def load_sentences(name: str) -> list[str]:
    """One sentence per line, empty lines dropped, file order kept. An NLI corpus gives its sentences without
    labels: every distinct sentence of its triples, in order of first appearance (SimCSE++ Table 4, "NLI is used
    without labels")."""
    if name == "synthetic":
        return synthetic_sentences()
    if name.endswith(WITH_SICKR):
        return load_sentences(name[: -len(WITH_SICKR)]) + sickr_sentences()
    if name in NLI_CORPORA:
        return list(dict.fromkeys(sentence for row in load_nli_triples(name) for sentence in row))
    if name not in UNSUP_CORPORA:
        raise ConfigError(
            f"unknown sentence corpus {name!r}; choose from "
            f"{', '.join(UNSUP_CORPORA + NLI_CORPORA)} (each may end in {WITH_SICKR!r}) or synthetic"
        )
    text = read_text(files_of(name)[0].relpath)
    return [line.strip() for line in text.splitlines() if line.strip()]


def load_nli_triples(name: str) -> list[tuple[str, ...]]:
    """(premise, entailment, contradiction) rows of a ``sent0,sent1,hard_neg`` CSV; the labelled SNLI corpora
    (``sentemb.data.nli_labelled``) give (premise, hypothesis) pairs or (premise, entailment, contradiction,
    neutral) quads instead."""
    if name == "synthetic":
        return synthetic_nli_triples()
    if name in LABELLED_CORPORA:
        return load_labelled_corpus(name)
    if name not in NLI_CORPORA:
        raise ConfigError(
            f"unknown NLI corpus {name!r}; choose from {', '.join(NLI_CORPORA + LABELLED_CORPORA)} or synthetic"
        )
    relpath = files_of(name)[0].relpath
    reader = csv.DictReader(io.StringIO(read_text(relpath)))
    if reader.fieldnames is None or not {"sent0", "sent1", "hard_neg"} <= set(reader.fieldnames):
        raise DataError(f"{relpath}: expected the header sent0,sent1,hard_neg, found {reader.fieldnames}")
    rows = [(r["sent0"], r["sent1"], r["hard_neg"]) for r in reader]
    if not rows or any(not all(cell and cell.strip() for cell in row) for row in rows):
        raise DataError(f"{relpath}: empty file or a row with an empty sentence")
    return rows


# The kinds of training rows an objective can ask for (``TrainingObjective.rows``) and their loaders.
ROW_LOADERS = {
    "sentences": load_sentences,
    "nli_triples": load_nli_triples,
    "documents": load_documents,
    "sentence_windows": lambda name: list(load_sentence_windows(name)),
}


def load_rows(kind: str, name: str) -> list:
    try:
        loader = ROW_LOADERS[kind]
    except KeyError:
        raise ConfigError(f"unknown kind of training rows {kind!r}; known: {', '.join(ROW_LOADERS)}") from None
    return loader(name)
