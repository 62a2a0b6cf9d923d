"""What a claim may be tested on: independent replicates only (overlapping init runs and pooled configurations are
refused), no p-value for two fixed numbers, one verdict per body of evidence, and the paper's correction for testing
many claims (Benjamini-Hochberg for holds, Holm for fails), each checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_claims_paired import GREATER, cells, record, ref, store

from sentemb.report import claims as claims_module
from sentemb.report.claims import Verdict, corrected, evaluate, evaluate_all
from sentemb.report.comparison import Comparison, Constant, Seeds
from sentemb.report.multiplicity import adjusted, decide_family
from sentemb.report.pairing import design


def ring_lineage():
    """TNCSE's small-profile design: three seeds whose stage-1 pairs overlap, (s0, s1), (s1, s2), (s2, s0)."""
    stage1 = [record(f"s{i}", 42 + i) for i in range(3)]
    pairs = [("s0", "s1"), ("s1", "s2"), ("s2", "s0")]
    trained = [record(f"t{i}", 42 + i, init_runs=p, objective="tncse") for i, p in enumerate(pairs)]
    untrained = [record(f"u{i}", 42 + i, init_runs=p, objective="none") for i, p in enumerate(pairs)]
    return store(*stage1, *trained, *untrained)


def test_overlapping_init_runs_are_refused_whatever_the_design():
    lookup = ring_lineage()
    for right in (["s0", "s1", "s2"], ["u0", "u1", "u2"]):  # lineage; the same init runs
        found = design(["t0", "t1", "t2"], right, "small", lookup)
        assert not found.paired and found.refused.startswith("not independent: the left cell's seeds 42 and 43")
    table = cells({"a": ([76.0, 75.5, 75.8], ["t0", "t1", "t2"]), "b": ([75.0, 75.1, 75.2], ["s0", "s1", "s2"])})
    verdict = evaluate(GREATER, table, lookup_record=lookup)
    assert verdict.status == "inconclusive" and verdict.p_value is None and verdict.size_p_value is None
    assert verdict.detail.startswith("inconclusive (not independent:") and verdict.test.startswith("none (")


def test_disjoint_init_runs_are_independent_pairs():
    stage1 = [record(f"s{i}", 40 + i) for i in range(6)]
    trained = [record(f"t{i}", 42 + i, init_runs=(f"s{i}", f"s{i + 3}"), objective="tncse") for i in range(3)]
    lookup = store(*stage1, *trained)
    found = design(["t0", "t1", "t2"], [f"s{i}" for i in range(6)], "small", lookup)
    assert found.paired and not found.refused and found.pairs == (((0,), (0, 3)), ((1,), (1, 4)), ((2,), (2, 5)))


def test_a_cell_pooling_configurations_against_seeds_gets_no_test():
    widths = [record(f"w{d}", 42, dim=d) for d in (128, 256, 512)]
    seeds = [record(f"b{s}", s) for s in (42, 43, 44)]
    lookup = store(*widths, *seeds)
    found = design(["w128", "w256", "w512"], ["b42", "b43", "b44"], "small", lookup)
    assert found.refused.startswith("descriptive: the left cell pools 3 runs of different configurations (dim (3 ")
    table = cells(
        {"a": ([85.0, 85.5, 86.0], ["w128", "w256", "w512"]), "b": ([87.0, 87.1, 87.05], ["b42", "b43", "b44"])}
    )
    verdict = evaluate(GREATER, table, lookup_record=lookup)
    assert verdict.status == "inconclusive" and verdict.p_value is None
    # matched configurations on both sides are paired point by point (a test over the configurations)
    other = [record(f"x{d}", 42, dim=d, queue=1) for d in (128, 256, 512)]
    matched = design(["w128", "w256", "w512"], ["x128", "x256", "x512"], "small", store(*widths, *other))
    assert matched.paired and "same grid point (dim)" in matched.why


def test_two_fixed_numbers_get_a_difference_and_no_p_value():
    comparison = Comparison(Constant([78.0]), Constant([77.99]))
    assert not comparison.testable and comparison.untestable.startswith("two fixed numbers")
    table = pd.DataFrame(
        [
            {"table": "T", "row": r, "column": "c", "value": v, "values": str(v), "deterministic": True, "run_ids": i}
            for r, v, i in (("a", 78.0, "x"), ("b", 77.99, "y"))
        ]
    )
    verdict = evaluate(GREATER, table)
    assert verdict.status == "inconclusive" and verdict.p_value is None
    assert verdict.effect == pytest.approx(0.01) and "two fixed numbers" in verdict.detail


def test_a_pooled_cell_keeps_its_run_ids_in_the_label():
    one_value_from_three = Seeds([81.0], ["r1", "r2", "r3"], "small")
    comparison = Comparison(one_value_from_three, Seeds([80.0, 80.2], ["a", "b"], "small"))
    assert comparison.design.why == "independent: a cell's 3 runs give 1 value(s)"


# -- one verdict per body of evidence ------------------------------------------------------------------------------


def _verdict(claim_id: str, cells_runs: list[tuple[str, tuple[str, ...]]]) -> Verdict:
    outcome = claims_module.Outcome(0.5, 0.01, 0.99, "t", "3 vs 3", "Welch")
    evidence = tuple((label, (1.0, 2.0, 3.0), runs, label) for label, runs in cells_runs)
    return Verdict(claim_id, "holds", "t", evidence=evidence, direction=outcome)


def test_a_claim_on_other_cells_of_the_paper_mapped_onto_the_same_runs_gets_no_verdict_of_its_own():
    bert = _verdict("simcse-best-bert", [("'BERT / SimCSE'", ("s1", "s2")), ("'BERT / BT'", ("b1", "b2"))])
    roberta = _verdict(
        "bt-beats-simcse-roberta", [("'RoBERTa / BT'", ("b1", "b2")), ("'RoBERTa / SimCSE'", ("s1", "s2"))]
    )
    # the same paper cells in another claim (a greater beside an argmax) are a different question, not a duplicate
    again = _verdict("bt-vs-simcse-bert", [("'BERT / BT'", ("b1", "b2")), ("'BERT / SimCSE'", ("s1", "s2"))])
    out = corrected([bert, roberta, again])
    assert [v.status for v in out] == ["holds", "same runs", "holds"]
    assert out[1].same_runs_as == "simcse-best-bert" and out[1].p_value is None
    assert out[1].detail.startswith("same runs as simcse-best-bert")
    assert out[0].correction == "Benjamini-Hochberg (holds) / Holm (fails) over 2 claims"  # the duplicate is not


# -- the correction --------------------------------------------------------------------------------------------------


def hand_bh(p: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values, written out: p_(i) m / i, made monotone from the largest down."""
    m = len(p)
    order = np.argsort(p)
    out, running = [0.0] * m, 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m / rank)
        out[i] = running
    return out


def hand_holm(p: list[float]) -> list[float]:
    """Holm adjusted p-values: (m - i + 1) p_(i), made monotone from the smallest up, capped at 1."""
    m = len(p)
    order = np.argsort(p)
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def test_the_adjustments_equal_a_hand_computation_and_a_single_claim_is_left_alone():
    p = [0.01, 0.04, 0.03, 0.2, 0.001]
    assert adjusted(p, "fdr_bh") == pytest.approx(hand_bh(p)) and adjusted(p, "holm") == pytest.approx(hand_holm(p))
    assert adjusted([0.03], "holm") == [0.03]


def test_a_family_decides_holds_by_bh_and_fails_by_holm():
    # five claims: two clear wins, a borderline win that BH keeps, a borderline loss that Holm does not
    tests = [(0.001, 0.999), (0.004, 0.996), (0.025, 0.975), (0.97, 0.03), (0.5, 0.5)]
    decisions = decide_family(tests)
    bh = hand_bh([t[0] for t in tests])
    holm = hand_holm([t[1] for t in tests])
    assert [d.status for d in decisions] == ["holds", "holds", "holds", "inconclusive", "inconclusive"]
    assert bh[2] == pytest.approx(0.025 * 5 / 3) and holm[3] == pytest.approx(0.15)
    assert [d.p_adjusted for d in decisions] == pytest.approx(bh)  # none fails: each reports its BH p for
    alone = decide_family([(0.97, 0.03)])
    assert alone[0].status == "fails" and alone[0].p_adjusted == 0.03 and alone[0].correction.startswith("none")


def test_evaluate_all_corrects_a_papers_claims_as_one_family(monkeypatch):
    wins = {"a": [83.1, 83.4, 83.2], "b": [80.0, 80.3, 80.1], "c": [80.2, 80.6, 80.1]}
    table = pd.DataFrame(
        [
            {"table": "T", "group": "", "row": r, "column": "c", "split": "", "aggregation": "", "metric": "",
             "value": float(np.mean(v)), "values": ";".join(map(str, v))}
            for r, v in wins.items()
        ]
    )  # fmt: skip
    two = [
        {"id": "ab", "text": "t", "kind": "greater", "left": ref("a"), "right": ref("b")},
        {"id": "cb", "text": "t", "kind": "greater", "left": ref("c"), "right": ref("b")},
    ]
    monkeypatch.setattr(claims_module, "load_claims", lambda paper: two)
    out = evaluate_all("x", table, reported=table.drop(columns="values").iloc[:0])
    raw = [stats.ttest_ind(wins[x], wins["b"], equal_var=False, alternative="greater").pvalue for x in ("a", "c")]
    assert out["p_value"].tolist() == pytest.approx(raw)
    assert out["p_adjusted"].tolist() == pytest.approx(hand_bh(raw))
    assert out["status"].tolist() == ["holds" if q < 0.05 else "inconclusive" for q in hand_bh(raw)]
    assert set(out["correction"]) == {"Benjamini-Hochberg (holds) / Holm (fails) over 2 claims"}
