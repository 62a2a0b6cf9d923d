"""SentEval's transfer protocol, the relatedness regressor, the evaluation suite and the MTEB adapter."""

import numpy as np
import pytest
from conftest import needs_mirror
from scipy.stats import spearmanr
from sklearn.model_selection import StratifiedKFold

from sentemb.data.transfer import Split, load_transfer_task
from sentemb.errors import ConfigError
from sentemb.evaluate import transfer
from sentemb.evaluate.relatedness import encode_labels
from sentemb.evaluate.senteval_classifier import PARAMS, ClassifierParams
from sentemb.evaluate.suite import evaluate_model, parse_groups

FAST = ClassifierParams("fasttest", kfold=3, optim="rmsprop", batch_size=16, tenacity=3, epoch_size=4, max_epoch=60)


def _separable(n=90, seed=0):
    rng = np.random.RandomState(seed)
    y = np.arange(n) % 3
    centres = np.array([[6.0, 0, 0, 0], [0, 6.0, 0, 0], [0, 0, 6.0, 0]])
    return (centres[y] + rng.randn(n, 4) * 0.3).astype(np.float32), y


def test_classifier_protocols_reach_100_percent_on_a_separable_task():
    x, y = _separable()
    assert transfer.cross_validation(x, y, 3, FAST)["acc"] == 100.0
    result = transfer.kfold_then_test(x, y, x[:30], y[:30], 3, FAST)
    assert result["acc"] == 100.0 and result["weight_decay"] in transfer.WEIGHT_DECAYS
    assert transfer.train_dev_test(x, y, x[:30], y[:30], x[30:], y[30:], 3, FAST)["acc"] == 100.0


def test_folds_and_results_are_deterministic():
    x, y = _separable(60, seed=1)

    def folds():
        return [te.tolist() for _, te in StratifiedKFold(3, shuffle=True, random_state=1111).split(x, y)]

    assert folds() == folds()
    noisy = x + np.random.RandomState(2).randn(*x.shape).astype(np.float32) * 4
    assert transfer.cross_validation(noisy, y, 3, FAST) == transfer.cross_validation(noisy, y, 3, FAST)


def test_tasks_fitted_in_worker_processes_give_the_results_of_one_process(monkeypatch):
    """score() fits tasks side by side in spawned processes when they are large; each classifier is seeded and
    single-threaded, so every number must equal the one-process result (a cv, a kfold pair task and a split task)."""
    from sentemb.data.transfer import TransferTask

    rng = np.random.RandomState(3)
    words = [f"w{i}" for i in range(120)]
    lookup = {w: rng.randn(6).astype(np.float32) for w in words}
    y = np.arange(120) % 2
    tasks = [
        TransferTask("CV", "cv", 2, {"all": Split(tuple(words), y)}),
        TransferTask(
            "PAIRS",
            "kfold",
            2,
            {
                "train": Split(tuple(words[:90]), y[:90], tuple(words[30:])),
                "test": Split(tuple(words[90:]), y[90:], tuple(words[:30])),
            },
        ),
        TransferTask(
            "SPLIT",
            "split",
            2,
            {
                "train": Split(tuple(words[:80]), y[:80]),
                "dev": Split(tuple(words[80:100]), y[80:100]),
                "test": Split(tuple(words[100:]), y[100:]),
            },
        ),
    ]
    one = transfer.score(tasks, lookup, FAST, workers=1)
    monkeypatch.setattr(transfer, "MIN_EXAMPLES_FOR_WORKERS", 0)
    assert transfer.score(tasks, lookup, FAST, workers=2) == one
    assert list(one["tasks"]) == ["CV", "PAIRS", "SPLIT"] and one["tasks"]["PAIRS"]["f1"] >= 0


def test_simcse_parameter_sets():
    assert (PARAMS["test"].kfold, PARAMS["test"].optim, PARAMS["test"].batch_size) == (10, "adam", 64)
    assert (PARAMS["fasttest"].kfold, PARAMS["fasttest"].optim, PARAMS["fasttest"].tenacity) == (5, "rmsprop", 3)


def test_pair_features_are_abs_difference_then_product():
    split = Split(("a",), np.array([1]), ("b",))
    lookup = {"a": np.array([1.0, -2.0]), "b": np.array([3.0, 1.0])}
    np.testing.assert_array_equal(transfer.features(split, lookup), [[2.0, 3.0, 3.0, -2.0]])


def test_relatedness_label_encoding_by_hand():
    np.testing.assert_allclose(encode_labels(np.array([3.4]))[0], [0, 0, 0.6, 0.4, 0], atol=1e-6)
    np.testing.assert_allclose(encode_labels(np.array([5.0]))[0], [0, 0, 0, 0, 1])
    np.testing.assert_allclose(encode_labels(np.array([1.0]))[0], [1, 0, 0, 0, 0])
    np.testing.assert_allclose(encode_labels(np.array([0.0]))[0], [0, 0, 0, 0, 0])  # STS-B's 0 (SentEval #83)


def test_suite_encodes_each_sentence_once_and_reports_missing_probing_data(monkeypatch):
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    calls = []

    def encode(sentences):
        calls.append(list(sentences))
        return np.random.RandomState(0).randn(len(sentences), 8).astype(np.float32)

    results, lookup = evaluate_model(encode, ["sts", "probing"], synthetic=True, extra_sentences=["an extra one ."])
    assert len(calls) == 1 and len(calls[0]) == len(set(calls[0])) == len(lookup)
    assert "an extra one ." in lookup and "sts_simcse" in results
    probing = results["transfer"]["tasks"]
    assert len(probing) == 10 and all(
        r["status"] == "not run" and "data unavailable" in r["reason"] for r in probing.values()
    )


def test_bad_groups_and_protocols_are_clear_errors():
    with pytest.raises(ConfigError, match="glue"):
        parse_groups("sts,glue")
    with pytest.raises(ConfigError, match="sbert"):
        evaluate_model(lambda s: None, ["sts"], sts_protocols=("sbert",))


@needs_mirror
def test_transfer_loaders_follow_senteval():
    subj = load_transfer_task("SUBJ").splits["all"]
    assert len(subj.first) == 10_000 and subj.labels.sum() == 5_000  # objective = 1
    lengths = [len(s.split()) for s in subj.first]
    assert lengths == sorted(lengths)  # sorted by (token count, label) as SentEval encodes them
    trec = load_transfer_task("TREC")
    assert trec.nclasses == 6 and len(trec.splits["train"].first) == 5452 and len(trec.splits["test"].first) == 500
    mrpc = load_transfer_task("MRPC")
    assert mrpc.is_pair and len(mrpc.splits["train"].first) == 4076 and len(mrpc.splits["test"].first) == 1725
    assert {k: len(v.first) for k, v in load_transfer_task("SST2").splits.items()} == {
        "train": 67349,
        "dev": 872,
        "test": 1821,
    }


@needs_mirror
def test_mteb_adapter_two_tasks_offline_with_the_smoke_model():
    from sentemb.data.mteb_mirror import load_mirror_task
    from sentemb.evaluate.mteb_adapter import run_mteb
    from sentemb.models.encoder import SentenceEncoder

    encoder = SentenceEncoder.from_name("tiny-random-bert", "avg", seed=0)
    result = run_mteb(encoder, tasks=["BIOSSES", "STS17", "ArguAna"])
    assert result["mteb_version"] == "2.26.24"
    biosses = result["tasks"]["BIOSSES"]
    assert biosses["status"] == "ok" and biosses["main_metric"] == "cosine_spearman" and biosses["dataset_revision"]
    assert result["tasks"]["STS17"]["hf_subset"] == "en-en"
    assert result["tasks"]["ArguAna"]["status"] == "not run"  # not in the offline mirror
    data = load_mirror_task("BIOSSES")["test"]
    a, b = encoder.encode(data["sentence1"]), encoder.encode(data["sentence2"])
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert biosses["main_score"] == pytest.approx(100 * spearmanr(cos, data["score"])[0], abs=1e-6)
    assert result["category_averages"]["STS"]["n_tasks"] == 2 and result["category_averages"]["STS"]["of"] == 10
