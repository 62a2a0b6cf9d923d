"""What a claim may be tested on: independent replicates only (values of one seed, overlapping init runs and pooled
configurations are refused), no p-value for two fixed numbers, one verdict per body of evidence, and the paper's
correction for testing many verdicts: one Holm family of two-sided p-values over every tested direction and size of
the paper, holds and fails on the same bar, each checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_claims_paired import GREATER, cells, record, ref, store

from sentemb.report import claims as claims_module
from sentemb.report.claims import Verdict, corrected, evaluate, evaluate_all
from sentemb.report.comparison import Comparison, Constant, Seeds
from sentemb.report.multiplicity import adjusted, decide_family, two_sided
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
    widths = [record(f"w{d}", s, dim=d) for d, s in ((128, 42), (256, 43), (512, 44))]  # one seed per width
    seeds = [record(f"b{s}", s) for s in (45, 46, 47)]
    lookup = store(*widths, *seeds)
    found = design(["w128", "w256", "w512"], ["b45", "b46", "b47"], "small", lookup)
    assert found.refused.startswith("descriptive: the left cell pools 3 runs of different configurations (dim (3 ")
    table = cells(
        {"a": ([85.0, 85.5, 86.0], ["w128", "w256", "w512"]), "b": ([87.0, 87.1, 87.05], ["b45", "b46", "b47"])}
    )
    verdict = evaluate(GREATER, table, lookup_record=lookup)
    assert verdict.status == "inconclusive" and verdict.p_value is None
    # matched configurations on both sides, each point its own seed, are paired point by point
    other = [record(f"x{d}", s, dim=d, queue=1) for d, s in ((128, 42), (256, 43), (512, 44))]
    matched = design(["w128", "w256", "w512"], ["x128", "x256", "x512"], "small", store(*widths, *other))
    assert matched.paired and not matched.refused and "same grid point (dim)" in matched.why


def test_grid_points_of_one_seed_are_described_not_tested():
    """Replicates differ in seed: a cell whose values are grid points of seed 42 (DeCLUTR's (P, tau) grid) gets no
    test, even against a cell with the same grid points that would otherwise pair point by point."""
    widths = [record(f"w{d}", 42, dim=d) for d in (128, 256, 512)]
    other = [record(f"x{d}", 42, dim=d, queue=1) for d in (128, 256, 512)]
    seeds = [record(f"b{s}", s) for s in (42, 43, 44)]
    lookup = store(*widths, *other, *seeds)
    why = (
        "values come from runs of seed 42 (grid points of one seed, not replicates; replicates differ in seed): no test"
    )
    for left, right, side in (
        (["w128", "w256", "w512"], ["x128", "x256", "x512"], "left"),  # matched grid points
        (["w128", "w256", "w512"], ["b42", "b43", "b44"], "left"),  # against seeds
        (["b42", "b43", "b44"], ["w128", "w256", "w512"], "right"),
    ):
        found = design(left, right, "small", lookup)
        assert not found.paired and found.refused == f"descriptive: the {side} cell's 3 {why}"
    # a single repeat is enough; every repeated seed is named
    repeats = [record(f"r{i}", s, dim=d) for i, (s, d) in enumerate(((42, 1), (42, 2), (43, 1), (43, 2), (44, 1)))]
    lookup = store(*repeats, *seeds)
    found = design([f"r{i}" for i in range(5)], ["b42", "b43", "b44"], "small", lookup)
    assert found.refused.startswith("descriptive: the left cell's 5 values come from runs of seed 42, 43 (grid")
    found = design(["r0", "r2", "r4"], ["b42", "b43", "b44"], "small", lookup)  # seeds 42, 43, 44: replicates
    assert not found.refused
    # the claim: no p-value for either verdict, the test says why
    lookup = store(*widths, *other)
    table = cells(
        {"a": ([86.0, 86.5, 87.0], ["w128", "w256", "w512"]), "b": ([85.0, 85.4, 85.9], ["x128", "x256", "x512"])}
    )
    verdict = evaluate({**GREATER, "margin": 0.5, "margin_quote": "q"}, table, lookup_record=lookup)
    assert verdict.status == verdict.size_status == "inconclusive"
    assert verdict.p_value is None and verdict.size_p_value is None
    assert verdict.test == f"none (descriptive: the left cell's 3 {why})"
    assert verdict.effect == pytest.approx(np.mean([86.0, 86.5, 87.0]) - np.mean([85.0, 85.4, 85.9]))


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
    assert out[0].correction == "Holm over the paper's 2 tests (two-sided)"  # the duplicate is not tested
    assert out[0].p_value == pytest.approx(0.02) and out[0].p_adjusted == pytest.approx(0.04)  # 2 x 0.01, Holm x 2


# -- the correction --------------------------------------------------------------------------------------------------


def hand_two_sided(p_for: float, p_against: float) -> float:
    """Twice the smaller one-sided p, at most 1."""
    return min(1.0, 2 * min(p_for, p_against))


def hand_holm(p: list[float]) -> list[float]:
    """Holm adjusted p-values: (m - i + 1) p_(i), made monotone from the smallest up, capped at 1."""
    m = len(p)
    order = np.argsort(p, kind="stable")
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def hand_bh(p: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (the retired rule for holds), for the contrast: p_(i) m / i, monotone."""
    m = len(p)
    order = np.argsort(p, kind="stable")
    out, running = [0.0] * m, 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m / rank)
        out[i] = running
    return out


def hand_status(p_for: float, p_against: float, p_adjusted: float) -> str:
    if p_adjusted >= 0.05:
        return "inconclusive"
    return "holds" if p_for < p_against else "fails"


def test_the_adjustment_is_holm_by_hand_and_a_single_test_is_left_alone():
    p = [0.01, 0.04, 0.03, 0.2, 0.001]
    assert hand_holm(p) == pytest.approx([0.04, 0.09, 0.09, 0.2, 0.005])  # 5 x 0.001, 4 x 0.01, 3 x 0.03, then monotone
    assert adjusted(p) == pytest.approx(hand_holm(p)) and adjusted(p, "holm") == pytest.approx(hand_holm(p))
    assert adjusted([0.03]) == [0.03]
    assert two_sided(0.01, 0.99) == 0.02 and two_sided(0.995, 0.005) == 0.01 and two_sided(0.6, 0.7) == 1.0


def test_a_family_decides_holds_and_fails_on_one_holm_bar_of_two_sided_p_values():
    tests = [
        (0.001, 0.999),  # two-sided 0.002: holds
        (0.005, 0.995),  # 0.01: holds
        (0.995, 0.005),  # 0.01: its mirror fails, on the same adjusted p as the holds
        (0.015, 0.985),  # 0.03: BH on the one-sided p for kept it (holds); Holm over 5 two-sided tests does not
        (0.5, 0.5),  # 1.0
    ]
    two = [hand_two_sided(*t) for t in tests]
    assert two == pytest.approx([0.002, 0.01, 0.01, 0.03, 1.0])
    holm = hand_holm(two)
    assert holm == pytest.approx([0.01, 0.04, 0.04, 0.06, 1.0])
    assert hand_bh([t[0] for t in tests])[3] == pytest.approx(0.025)  # < 0.05: the old rule's holds
    decisions = decide_family(tests)
    assert [d.p_adjusted for d in decisions] == pytest.approx(holm)
    assert [d.status for d in decisions] == ["holds", "holds", "fails", "inconclusive", "inconclusive"]
    assert [d.status for d in decisions] == [hand_status(*t, q) for t, q in zip(tests, holm)]
    assert {d.correction for d in decisions} == {"Holm over the paper's 5 tests (two-sided)"}
    # a fails is no easier than a holds: one-sided 0.03 against the claim is a two-sided 0.06
    alone = decide_family([(0.97, 0.03)])
    assert alone[0].status == "inconclusive" and alone[0].p_adjusted == pytest.approx(0.06)
    assert alone[0].correction == "none (one test)"
    assert decide_family([(0.99, 0.01)])[0].status == "fails" and decide_family([(0.01, 0.99)])[0].status == "holds"


def seeded_table(cells_values: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"table": "T", "group": "", "row": r, "column": "c", "split": "", "aggregation": "", "metric": "",
             "value": float(np.mean(v)), "values": ";".join(map(str, v))}
            for r, v in cells_values.items()
        ]
    )  # fmt: skip


def welch_two_sided(a, b, shift=0.0):
    """scipy's two-sided Welch test of mean(a) - mean(b) = shift."""
    return stats.ttest_ind(np.subtract(a, shift), b, equal_var=False).pvalue


def test_evaluate_all_corrects_every_direction_and_size_of_a_paper_as_one_family(monkeypatch):
    values = {"a": [83.1, 83.4, 83.2], "b": [80.0, 80.3, 80.1], "c": [80.2, 80.6, 80.1], "d": [80.6, 81.2, 80.9]}
    table = seeded_table(values)
    claims = [
        {"id": "ab", "text": "t", "kind": "greater", "left": ref("a"), "right": ref("b")},
        {"id": "cb", "text": "t", "kind": "greater", "left": ref("c"), "right": ref("b")},
        {"id": "ab-by-2", "text": "t", "kind": "greater", "left": ref("a"), "right": ref("b"), "margin": 2.0,
         "margin_quote": "by at least 2 points"},
        {"id": "db", "text": "t", "kind": "greater", "left": ref("d"), "right": ref("b"), "margin": 0.4,
         "margin_quote": "by at least 0.4 points"},
    ]  # fmt: skip
    monkeypatch.setattr(claims_module, "load_claims", lambda paper: claims)
    out = evaluate_all("x", table, reported=table.drop(columns="values").iloc[:0]).set_index("claim")
    # the family: 4 directions and 2 sizes, each two-sided, adjusted together
    tests = [("ab", "", 0.0), ("cb", "", 0.0), ("ab-by-2", "", 0.0), ("db", "", 0.0)]
    tests += [("ab-by-2", "size_", 2.0), ("db", "size_", 0.4)]
    left = {"ab": "a", "cb": "c", "ab-by-2": "a", "db": "d"}
    raw = [welch_two_sided(values[left[claim]], values["b"], shift) for claim, _, shift in tests]
    holm = hand_holm(raw)
    assert holm != pytest.approx(hand_holm(raw[:4]) + hand_holm(raw[4:]))  # two families would differ
    for (claim, prefix, shift), p, q in zip(tests, raw, holm):
        row = out.loc[claim]
        assert row[f"{prefix}p_value"] == pytest.approx(p, rel=1e-9), (claim, prefix)
        assert row[f"{prefix}p_adjusted"] == pytest.approx(q, rel=1e-9), (claim, prefix)
        diff = np.mean(values[left[claim]]) - np.mean(values["b"]) - shift
        expected = "inconclusive" if q >= 0.05 else "holds" if diff > 0 else "fails"
        assert row["status" if not prefix else "size_status"] == expected, (claim, prefix)
    assert set(out["correction"]) == {"Holm over the paper's 6 tests (two-sided)"}
    assert out.loc[["ab", "cb"], "size_status"].tolist() == ["no size", "no size"]
    # the statuses this family gives, written out: "db" is significant alone but not among 6
    assert raw[3] < 0.05 < holm[3]
    assert out["status"].tolist() == ["holds", "inconclusive", "holds", "inconclusive"]
    assert out["size_status"].tolist() == ["no size", "no size", "holds", "inconclusive"]


def test_corrected_counts_a_size_test_in_the_family_of_the_directions():
    def verdict(claim_id, direction, size=None):
        outcome = claims_module.Outcome(0.5, *direction, "t", "3 vs 3", "Welch")
        sized = None if size is None else claims_module.Outcome(0.1, *size, "t", "3 vs 3", "Welch")
        return Verdict(claim_id, "", "", direction=outcome, size=sized, size_source="the paper's stated margin")

    out = corrected(
        [verdict("a", (0.004, 0.996), (0.009, 0.991)), verdict("b", (0.006, 0.994)), verdict("c", (0.99, 0.01))]
    )
    raw = [0.008, 0.018, 0.012, 0.02]  # a's direction and size, b, c (two-sided)
    holm = hand_holm(raw)
    assert holm == pytest.approx([0.032, 0.036, 0.036, 0.036])
    assert [v.p_value for v in out] == pytest.approx([raw[0], raw[2], raw[3]])
    assert [v.p_adjusted for v in out] == pytest.approx([holm[0], holm[2], holm[3]])
    assert out[0].size_p_value == pytest.approx(raw[1]) and out[0].size_p_adjusted == pytest.approx(holm[1])
    assert [v.status for v in out] == ["holds", "holds", "fails"] and out[0].size_status == "holds"
    assert {v.correction for v in out} == {"Holm over the paper's 4 tests (two-sided)"}
