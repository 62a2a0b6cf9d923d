"""The evaluator reproduces published numbers exactly (all-MiniLM-L6-v2, mean pooling).

MTEB's published results for sentence-transformers/all-MiniLM-L6-v2 give 82.03 Spearman on STS
Benchmark test. SentEval's copy of STS-B test (tokenised, lowercased) gives the same value for this
uncased model; both are checked to +-0.01.
"""

import numpy as np
import pytest
from conftest import mirror, needs_mirror

from sentemb.data.sts import load_task
from sentemb.evaluate.sts import correlations, cosine_scores, run_sts
from sentemb.models.encoder import SentenceEncoder


@pytest.fixture(scope="module")
def minilm():
    return SentenceEncoder.from_name("all-MiniLM-L6-v2", "avg")


@pytest.mark.slow
@needs_mirror
def test_minilm_stsb_test_senteval_files(minilm):
    result = run_sts(minilm.encode, tasks=("STSBenchmark",), splits=("test",))
    assert 100 * result["tasks"]["STSBenchmark"]["headline"] == pytest.approx(82.03, abs=0.01)


@pytest.mark.slow
@needs_mirror
def test_minilm_stsb_test_mteb_raw_file(minilm):
    rows = [
        line.rstrip("\n").split("\t")
        for line in (mirror() / "mteb/STSBenchmark/sts-test.csv").read_text(encoding="utf-8").splitlines()
    ]
    a = minilm.encode([r[5] for r in rows])
    b = minilm.encode([r[6] for r in rows])
    gold = np.array([float(r[4]) for r in rows])
    assert 100 * correlations(cosine_scores(a, b), gold)["spearman"] == pytest.approx(82.03, abs=0.01)


def _bag_of_words(sentences):
    """A deterministic stand-in encoder (hashed word counts): the test is about the loader's pairing and scoring,
    which do not depend on the encoder; MiniLM's numbers are checked above."""
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(n_features=2**12, alternate_sign=False).transform(sentences).toarray()


@needs_mirror
def test_stsb_dev_via_loader_matches_direct_computation():
    dev = load_task("STSBenchmark").parts["dev"]
    direct = correlations(cosine_scores(_bag_of_words(list(dev.sent1)), _bag_of_words(list(dev.sent2))), dev.scores)
    via = run_sts(_bag_of_words, tasks=("STSBenchmark",), splits=("dev",))["tasks"]["STSBenchmark"]["splits"]["dev"]
    assert via["n"] == len(dev.scores) == 1500
    assert 0.3 < direct["spearman"] < 0.9  # word overlap tracks the ratings: a real score, not a constant
    assert via["spearman"] == pytest.approx(direct["spearman"], abs=1e-9)
    assert via["pearson"] == pytest.approx(direct["pearson"], abs=1e-9)
