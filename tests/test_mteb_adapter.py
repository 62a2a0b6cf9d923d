"""The MTEB adapter's task objects (MTEB(eng, v1)), its bounded memory and its batch size, offline."""

import numpy as np
import pytest
from conftest import needs_mirror

from sentemb.evaluate import mteb_adapter
from sentemb.evaluate.mteb_adapter import TABLE4_TASKS, benchmark_task, make_mteb_encoder
from sentemb.models.encoder import SentenceEncoder

MULTILINGUAL = [
    "AmazonCounterfactualClassification",
    "AmazonReviewsClassification",
    "MTOPDomainClassification",
    "MTOPIntentClassification",
    "MassiveIntentClassification",
    "MassiveScenarioClassification",
]


@pytest.mark.parametrize("name", MULTILINGUAL)
def test_multilingual_tasks_are_english_and_test_only(name):
    """Regression: mteb.get_task gave every language and split, so the 'main score' averaged all of them."""
    task = benchmark_task(name)
    assert task.hf_subsets == ["en"] and task.eval_splits == ["test"]
    assert not task.data_loaded


def test_the_benchmark_is_table4_and_its_objects_are_not_shared():
    assert benchmark_task("STS17").hf_subsets == ["en-en"] and benchmark_task("STS22").hf_subsets == ["en"]
    assert benchmark_task("MSMARCO").eval_splits == ["dev"]  # the benchmark's split where it is not test
    import mteb

    assert {t.metadata.name for t in mteb.get_benchmark(mteb_adapter.BENCHMARK).tasks} == set(TABLE4_TASKS)
    assert benchmark_task("BIOSSES") is not benchmark_task("BIOSSES")


def test_texts_outside_the_run_lookup_are_encoded_in_batches_and_not_kept():
    encoder = SentenceEncoder.from_name("tiny-random-bert", "avg", seed=0)
    calls = []
    real = encoder.encode
    encoder.encode = lambda texts, batch_size=64, precision="fp32": (
        calls.append((list(texts), batch_size, precision)) or real(texts, batch_size)
    )
    known = {"a known sentence .": np.ones(encoder.dim, dtype=np.float32)}
    model = make_mteb_encoder(encoder, known, normalize=False, batch_size=7, precision="bf16")
    texts = ["a known sentence .", "a new one .", "another new one .", "a new one ."]
    out = model.encode(
        [{"text": texts[:2]}, {"text": texts[2:]}], task_metadata=None, hf_split="test", hf_subset="default"
    )
    assert out.shape == (4, encoder.dim) and np.allclose(out[0], 1.0) and np.allclose(out[1], out[3])
    assert calls == [(["a new one .", "another new one ."], 7, "bf16")]  # the run's batch size and precision
    assert len(model.lookup) == 1  # nothing accumulates across calls or tasks
    model.encode([{"text": texts}], task_metadata=None, hf_split="test", hf_subset="default")
    assert len(model.lookup) == 1 and len(calls) == 2


@needs_mirror
def test_run_mteb_passes_the_batch_size_and_unloads_each_task(monkeypatch):
    import mteb

    seen = []
    real = mteb.evaluate

    def spy(model, task, **kwargs):
        seen.append((task, kwargs["encode_kwargs"]))
        return real(model, task, **kwargs)

    monkeypatch.setattr(mteb, "evaluate", spy)
    encoder = SentenceEncoder.from_name("tiny-random-bert", "avg", seed=0)
    result = mteb_adapter.run_mteb(encoder, tasks=["BIOSSES"], batch_size=5)
    assert result["tasks"]["BIOSSES"]["status"] == "ok"
    ((task, encode_kwargs),) = seen
    assert encode_kwargs == {"batch_size": 5}
    assert not task.data_loaded and task.dataset is None  # memory bounded by one task


# Rows, characters and labels as the mirror's README states them (checked there against mteb 2.26.24's statistics).
NEW_CLASSIFICATION = {
    "AmazonCounterfactualClassification": ({"train": 4018, "validation": 335, "test": 670}, 71118, 2),
    "TweetSentimentExtractionClassification": ({"train": 27481, "test": 3534}, 239476, 3),
    "MassiveIntentClassification": ({"train": 11514, "validation": 2033, "test": 2974}, 102785, None),
    "MassiveScenarioClassification": ({"train": 11514, "validation": 2033, "test": 2974}, 102785, 18),
}


@needs_mirror
@pytest.mark.parametrize("name", NEW_CLASSIFICATION)
def test_the_added_classification_tasks_load_as_the_mirror_readme_says(name):
    from sentemb.data.mteb_mirror import MIRROR_TASKS, load_mirror_task

    rows, test_chars, n_labels = NEW_CLASSIFICATION[name]
    data = load_mirror_task(name)
    data = data["en"] if "en" in data else data  # the multilingual tasks: their English subset
    assert name in MIRROR_TASKS
    assert {split: len(d) for split, d in data.items()} == rows
    assert sum(len(t) for t in data["test"]["text"]) == test_chars
    if n_labels is not None:
        assert len(set(data["test"]["label"])) == n_labels


@needs_mirror
def test_tweet_and_amazon_labels_match_the_readme_counts():
    from collections import Counter

    from sentemb.data.mteb_mirror import load_mirror_task

    tweet = Counter(load_mirror_task("TweetSentimentExtractionClassification")["test"]["label"])
    assert tweet == {1: 1430, 2: 1103, 0: 1001}  # neutral, positive, negative
    amazon = Counter(load_mirror_task("AmazonCounterfactualClassification")["en"]["test"]["label"])
    assert amazon == {0: 539, 1: 131}
    scenario = load_mirror_task("MassiveScenarioClassification")["en"]["test"]["label"]
    assert "iot" in scenario and all("_" not in label for label in scenario)


def test_a_claim_is_testable_when_its_category_has_an_offline_task(monkeypatch):
    from papers.noncontrastive import tables

    monkeypatch.setitem(tables.OFFLINE_TASKS, "PairClass.", ["SprintDuplicateQuestions"])
    reasons = tables.not_testable()
    assert "shuffle-beats-dropout-pairclass-bert-bt" not in reasons
    assert reasons["roberta-bt-dropout-beats-simcse-clustering"] == "no Clust. task of Table 4 runs offline"
    assert reasons["supervised-wikiauto-best-retrieval"].startswith("WikiAuto is not offline")


@needs_mirror
@pytest.mark.parametrize(
    "name, docs, chars, queries, judgements",
    [("SciFact", 5183, 7771451, 300, 339), ("NFCorpus", 3633, 5779318, 323, 12334)],
)
def test_the_retrieval_tasks_load_as_the_mirror_readme_says(name, docs, chars, queries, judgements):
    from sentemb.data.mteb_mirror import load_mirror_task

    split = load_mirror_task(name)["default"]["test"]
    corpus = split["corpus"]
    assert len(corpus) == len(set(corpus["id"])) == docs
    assert sum(len((t + " " + x).strip()) for t, x in zip(corpus["title"], corpus["text"])) == chars  # mteb's string
    assert len(split["queries"]) == queries == len(split["relevant_docs"])
    assert sum(len(d) for d in split["relevant_docs"].values()) == judgements


def test_classification_scores_convert_the_labels_once_and_do_not_change(monkeypatch):
    import datasets

    from sentemb.evaluate.mteb_adapter import labels_converted_once

    split = datasets.Dataset.from_dict({"text": ["t"] * 400, "label": [i % 3 for i in range(400)]})
    y_pred = np.array([(i * 7) % 3 for i in range(400)])
    expected = benchmark_task("EmotionClassification")._calculate_scores(split["label"], y_pred)
    rows = []
    iterate = datasets.arrow_dataset.Column.__iter__
    monkeypatch.setattr(datasets.arrow_dataset.Column, "__iter__", lambda self: rows.append(1) or iterate(self))
    task = benchmark_task("EmotionClassification")
    labels_converted_once(task)
    assert task._calculate_scores(split["label"], y_pred) == expected
    assert len(rows) == 1  # one pass over the column instead of one per scikit-learn metric
