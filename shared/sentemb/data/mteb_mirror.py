"""The offline mirror's data for 17 MTEB tasks, in the form the official ``mteb`` task objects expect.

Offline, these loaders build the ``datasets.DatasetDict`` that ``mteb`` would download from the hub, from
``$SENTEMB_DATA/mteb/`` (its README says how each is built) and SentEval's copies; the adapter injects them into
the official task objects. Every file is sha256-checked through the registry.
- STS: sentence1, sentence2, score (raw scale), split "test"; STS12-16 from SentEval's copies (they match mteb's
  descriptive statistics, the mirror's cased SemEval files do not); STS17 en-en; SICK-R all 9,927 pairs.
- Classification: text, label, train and test in file order (mteb's train subsampling depends on it); the
  multilingual ones as their English subset under "en", as ``MTEB(eng, v1)`` evaluates them.
- Retrieval (SciFact, NFCorpus): mteb's ``RetrievalSplitData`` (corpus, judged queries, judgements), subset
  "default", split "test".
Relations: :mod:`sentemb.evaluate.mteb_adapter` (the consumer).
Per-task details: docs/derivations.md#sentembdatamteb_mirrorpy
"""

from __future__ import annotations

import ast
import csv
import io
import json
import tokenize

from sentemb.data.files import read_text
from sentemb.data.sts import STS_SUBSETS, read_gold_pairs
from sentemb.errors import ConfigError

TWEET_LABELS = {"negative": 0, "neutral": 1, "positive": 2}
TWEET_TEST_ROWS = 3534  # kaggle_test_then_train.csv starts with the test set again
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
    rows = list(csv.DictReader(io.StringIO(read_text("mteb/SICK-R/SICK.txt")), delimiter="\t", quoting=csv.QUOTE_NONE))
    return _sts(
        [r["sentence_A"] for r in rows], [r["sentence_B"] for r in rows], [float(r["relatedness_score"]) for r in rows]
    )


def _biosses():
    rows = list(csv.DictReader(io.StringIO(read_text("mteb/BIOSSES/all.tsv")), delimiter="\t"))  # one quoted tab
    return _sts([r["sentence1"] for r in rows], [r["sentence2"] for r in rows], [float(r["score"]) for r in rows])


def _sts17():
    return {
        "en-en": _sts(
            *read_gold_pairs(
                "mteb/STS17/STS.input.track5.en-en.txt", "mteb/STS17/STS.gs.track5.en-en.txt", normalise=False
            )
        )
    }


def _banking77():
    from datasets import Dataset, DatasetDict

    categories = {c: i for i, c in enumerate(json.loads(read_text("mteb/Banking77Classification/categories.json")))}
    splits = {}
    for split in ("train", "test"):
        rows = list(csv.DictReader(io.StringIO(read_text(f"mteb/Banking77Classification/{split}.csv"))))
        splits[split] = Dataset.from_dict(
            {"text": [r["text"] for r in rows], "label": [categories[r["category"]] for r in rows]}
        )
    return DatasetDict(splits)


def _emotion():
    from datasets import Dataset, DatasetDict

    splits = {}
    for split, name in (("train", "train.txt"), ("validation", "val.txt"), ("test", "test.txt")):
        lines = read_text(f"mteb/EmotionClassification/{name}").splitlines()
        pairs = [line.rsplit(";", 1) for line in lines[1:] if line]
        splits[split] = Dataset.from_dict(
            {"text": [t for t, _ in pairs], "label": [EMOTION_LABELS[n] for _, n in pairs]}
        )
    return DatasetDict(splits)


def _amazon_counterfactual():
    import pandas as pd
    from datasets import Dataset, DatasetDict

    splits = {}
    for split, name in (("train", "EN_train.tsv"), ("validation", "EN_valid.tsv"), ("test", "EN_test.tsv")):
        frame = pd.read_csv(io.StringIO(read_text(f"mteb/AmazonCounterfactualClassification/{name}")), sep="\t")
        splits[split] = Dataset.from_dict(
            {"text": frame["sentence"].tolist(), "label": frame["is_counterfactual"].astype(int).tolist()}
        )
    return {"en": DatasetDict(splits)}


def _tweet_sentiment():
    import pandas as pd
    from datasets import Dataset, DatasetDict

    def frame(name):
        text = read_text(f"mteb/TweetSentimentExtractionClassification/{name}")
        return pd.read_csv(io.StringIO(text), keep_default_na=False)

    test, both = frame("kaggle_test.csv"), frame("kaggle_test_then_train.csv")
    train = both.iloc[TWEET_TEST_ROWS:]
    texts = train["text"].tolist() + [""]  # Kaggle train row fdb77c3752: empty text, neutral (dropped by the source)
    labels = [TWEET_LABELS[s] for s in train["sentiment"]] + [TWEET_LABELS["neutral"]]
    return DatasetDict(
        {
            "train": Dataset.from_dict({"text": texts, "label": labels}),
            "test": Dataset.from_dict(
                {"text": test["text"].tolist(), "label": [TWEET_LABELS[s] for s in test["sentiment"]]}
            ),
        }
    )


def _massive(scenario: bool):
    from datasets import Dataset, DatasetDict

    folder = "MassiveScenarioClassification" if scenario else "MassiveIntentClassification"  # the same files
    splits = {}
    for split in ("train", "validation", "test"):
        rows = [json.loads(line) for line in read_text(f"mteb/{folder}/{split}.jsonl").splitlines() if line.strip()]
        labels = [r["label_text"].split("_")[0] if scenario else r["label_text"] for r in rows]
        splits[split] = Dataset.from_dict({"text": [r["text"] for r in rows], "label": labels})
    return {"en": DatasetDict(splits)}


def _retrieval(corpus: dict[str, tuple[str, str]], queries: dict[str, str], qrels: dict[str, dict[str, int]]):
    from datasets import Dataset

    kept = [q for q in queries if q in qrels]
    split = {
        "corpus": Dataset.from_dict(
            {"id": list(corpus), "title": [t for t, _ in corpus.values()], "text": [x for _, x in corpus.values()]}
        ),
        "queries": Dataset.from_dict({"id": kept, "text": [queries[q] for q in kept]}),
        "relevant_docs": {q: qrels[q] for q in kept},
        "top_ranked": None,
    }
    return {"default": {"test": split}}


def _string_literals(printed: str) -> list[str]:
    """The Python string literals in a printed numpy array of strings (SciFact's abstracts)."""
    tokens = tokenize.generate_tokens(io.StringIO(printed).readline)
    return [ast.literal_eval(t.string) for t in tokens if t.type == tokenize.STRING]


def _scifact():
    import pandas as pd

    docs = pd.read_csv(io.StringIO(read_text("mteb/SciFact/corpus_train.csv")), keep_default_na=False, dtype=str)
    corpus = {
        d: (t, " ".join(s.strip() for s in _string_literals(a)))
        for d, t, a in zip(docs["doc_id"], docs["title"], docs["abstract"])
    }
    claims = pd.read_csv(io.StringIO(read_text("mteb/SciFact/claims_validation.csv")), keep_default_na=False, dtype=str)
    queries, qrels = {}, {}
    for query, claim, cited in zip(claims["id"], claims["claim"], claims["cited_doc_ids"]):
        queries.setdefault(query, claim)
        for doc in cited.strip("[]").replace(",", " ").split():
            qrels.setdefault(query, {})[doc] = 1
    return _retrieval(corpus, queries, qrels)


def _nfcorpus():
    docs = [json.loads(line) for line in read_text("mteb/NFCorpus/corpus_human.jsonl").splitlines() if line.strip()]
    queries = [json.loads(line) for line in read_text("mteb/NFCorpus/queries.jsonl").splitlines() if line.strip()]
    qrels = {}
    for line in read_text("mteb/NFCorpus/qrels_test.tsv").splitlines()[1:]:
        if line.strip():
            query, doc, score = line.split("\t")
            qrels.setdefault(query, {})[doc] = int(score)
    return _retrieval(
        {d["_id"]: (d.get("title", ""), d["text"]) for d in docs}, {q["_id"]: q["text"] for q in queries}, qrels
    )


LOADERS = {
    "BIOSSES": _biosses,
    "STS17": _sts17,
    "STSBenchmark": _stsb,
    "SICK-R": _sickr,
    "Banking77Classification": _banking77,
    "EmotionClassification": _emotion,
    "AmazonCounterfactualClassification": _amazon_counterfactual,
    "TweetSentimentExtractionClassification": _tweet_sentiment,
    "MassiveIntentClassification": lambda: _massive(scenario=False),
    "MassiveScenarioClassification": lambda: _massive(scenario=True),
    "SciFact": _scifact,
    "NFCorpus": _nfcorpus,
    **{t: (lambda t=t: _senteval_year(t)) for t in STS_SUBSETS},
}


MIRROR_TASKS = tuple(LOADERS)  # the MTEB tasks that run offline: exactly those the mirror has a loader for


def load_mirror_task(name: str):
    if name not in LOADERS:
        raise ConfigError(f"the offline mirror has no data for MTEB task {name!r}; it has {', '.join(MIRROR_TASKS)}")
    return LOADERS[name]()
