"""SentEval's STS aggregation ("all", "mean", "wmean") on a hand-computed example."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from sentemb.data.sts import STSPairs, STSTask
from sentemb.evaluate.sts import aggregate, cosine_scores, evaluate_task, format_aggregations, format_table, summarise


def test_cosine_scores_handles_zero_vectors_like_senteval():
    a = np.array([[1.0, 0.0], [0.0, 0.0]])
    b = np.array([[1.0, 1.0], [1.0, 0.0]])
    assert cosine_scores(a, b) == pytest.approx([1 / np.sqrt(2), 0.0])


def test_all_mean_wmean_by_hand():
    # Subset A: 3 pairs ranked perfectly (rho = 1). Subset B: 2 pairs ranked backwards (rho = -1).
    subsets = {"A": {"spearman": 1.0, "pearson": 1.0, "n": 3}, "B": {"spearman": -1.0, "pearson": -1.0, "n": 2}}
    system = [np.array([0.1, 0.2, 0.3]), np.array([0.9, 0.8])]
    gold = [np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0])]
    out = aggregate(subsets, system, gold)
    assert out["spearman"]["mean"] == pytest.approx(0.0)
    assert out["spearman"]["wmean"] == pytest.approx((3 * 1.0 + 2 * -1.0) / 5)
    # "all": one Spearman over the 5 concatenated pairs. Ranks of system 0.1,0.2,0.3,0.9,0.8 are 1,2,3,5,4;
    # ranks of gold 1,2,3,1,2 are 1.5,3.5,5,1.5,3.5. rho = Pearson of the ranks.
    rs, rg = np.array([1, 2, 3, 5, 4.0]), np.array([1.5, 3.5, 5, 1.5, 3.5])
    expected = np.corrcoef(rs, rg)[0, 1]
    assert out["spearman"]["all"] == pytest.approx(expected)
    assert out["spearman"]["all"] == pytest.approx(spearmanr(np.concatenate(system), np.concatenate(gold))[0])


def _pairs(name, s1, s2, scores):
    return STSPairs(name, tuple(s1), tuple(s2), np.array(scores, dtype=float))


def test_evaluate_task_uses_cosine_per_pair():
    vectors = {
        "a": np.array([1.0, 0.0]),
        "b": np.array([1.0, 0.1]),
        "c": np.array([0.0, 1.0]),
        "d": np.array([1.0, 1.0]),
    }
    subset = _pairs("T/x", ["a", "a", "a"], ["b", "d", "c"], [5.0, 3.0, 0.0])
    task = STSTask("STS12", {"x": subset, "y": _pairs("T/y", ["c", "a"], ["d", "b"], [2.0, 4.0])})
    result = evaluate_task(task, vectors)
    assert result["subsets"]["x"]["spearman"] == pytest.approx(1.0)
    assert result["subsets"]["y"]["n"] == 2
    assert result["headline"] == result["aggregate"]["spearman"]["all"]
    split_task = STSTask("STSBenchmark", {"test": subset})
    assert evaluate_task(split_task, vectors, ("test",))["headline"] == pytest.approx(1.0)


def test_summary_average_and_table():
    results = {t: {"headline": 0.5} for t in ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark"]}
    results["SICKRelatedness"] = {"headline": 0.8}
    summary = summarise(results)
    assert summary["Avg."] == pytest.approx(100 * (6 * 0.5 + 0.8) / 7)
    assert "SICK-R" in format_table(summary)


def test_format_aggregations_lists_all_three():
    agg = {"spearman": {"all": 0.5, "mean": 0.4, "wmean": 0.45}}
    text = format_aggregations({"STS12": {"aggregate": agg}, "STS13": {"aggregate": agg}})
    assert text.splitlines()[1].split() == ["all", "50.00", "50.00"]
    assert text.splitlines()[3].split()[0] == "wmean"
