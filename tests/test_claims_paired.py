"""Paired designs in the claims engine: decided from run records (seeds, data order, init runs, grid points), tested
with a paired t-test equal to scipy's ``ttest_rel`` (two-sided for the verdict), the size verdict on the same design
against the paper's stated margin."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sentemb.report.claims import evaluate, paired_p
from sentemb.report.pairing import design


def record(run_id, seed, data="wiki", rows=1000, init_runs=(), objective="simcse_unsup", **params):
    return {
        "run_id": run_id,
        "profile": "small",
        "spec": {
            "seed": seed,
            "train_data": data,
            "batch_size": 64,
            "objective": objective,
            "init_runs": list(init_runs),
            "objective_params": params,
            "notes": "n",
        },
        "training": {"n_training_rows_available": rows} if objective != "none" else {},
    }


def store(*records):
    by_id = {r["run_id"]: r for r in records}
    return lambda profile, ident: by_id.get(ident)


def cells(rows: dict[str, tuple[list[float], list[str]]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "table": "T",
                "group": "",
                "row": row,
                "column": "c",
                "split": "",
                "aggregation": "",
                "metric": "",
                "value": float(np.mean(v)),
                "values": ";".join(map(str, v)),
                "run_ids": ";".join(ids),
                "profile": "small",
            }
            for row, (v, ids) in rows.items()
        ]
    )


def ref(row):
    return {"table": "T", "row": row, "column": "c"}


GREATER = {"id": "g", "text": "t", "kind": "greater", "left": ref("a"), "right": ref("b")}
# Seeds that move together: every left seed is ~0.3 above its right partner, but the seeds spread by ~1 point.
LEFT, RIGHT = [80.3, 81.35, 79.28], [80.0, 81.0, 79.0]


def test_paired_p_equals_scipy_ttest_rel():
    for shift in (0.0, 0.2):
        expected = stats.ttest_rel(np.array(LEFT) - shift, RIGHT, alternative="greater").pvalue
        assert paired_p(np.subtract(LEFT, RIGHT), shift) == pytest.approx(expected, rel=1e-12)
    assert paired_p([0.3, 0.3], 0.0) == 0.0 and paired_p([0.3, 0.3], 0.5) == 1.0


def test_cells_sharing_seeds_and_data_order_are_tested_paired():
    runs = [record(f"a{s}", s, objective="x") for s in (42, 43, 44)] + [record(f"b{s}", s) for s in (42, 43, 44)]
    table = cells({"a": (LEFT, ["a42", "a43", "a44"]), "b": (RIGHT, ["b42", "b43", "b44"])})
    verdict = evaluate(GREATER, table, lookup_record=store(*runs))
    assert verdict.test == "paired t two-sided (paired: the same seed and data order)" and verdict.n == "3 pairs"
    assert verdict.status == "holds"
    assert verdict.p_value == pytest.approx(stats.ttest_rel(LEFT, RIGHT).pvalue, rel=1e-12)  # two-sided
    assert verdict.p_value == pytest.approx(2 * stats.ttest_rel(LEFT, RIGHT, alternative="greater").pvalue, rel=1e-12)
    # the same numbers from runs on different data share no data order: Welch, which cannot see the effect
    other = [record(f"b{s}", s, data="nli") for s in (42, 43, 44)]
    independent = evaluate(GREATER, table, lookup_record=store(*runs[:3], *other))
    assert independent.test.startswith("Welch two-sided (independent:") and independent.n == "3 vs 3"
    assert independent.status == "inconclusive"
    assert independent.p_value == pytest.approx(stats.ttest_ind(LEFT, RIGHT, equal_var=False).pvalue, rel=1e-12)


def test_a_different_number_of_training_rows_is_a_different_data_order():
    runs = [record(f"a{s}", s, rows=722) for s in (42, 43, 44)] + [record(f"b{s}", s, rows=720) for s in (42, 43, 44)]
    table = cells({"a": (LEFT, ["a42", "a43", "a44"]), "b": (RIGHT, ["b42", "b43", "b44"])})
    assert evaluate(GREATER, table, lookup_record=store(*runs)).test.startswith("Welch")


def test_unequal_seed_counts_compare_the_matched_seeds_and_report_the_rest():
    runs = [record("a42", 42), record("a43", 43), record("a45", 45)] + [record(f"b{s}", s) for s in (42, 43, 44)]
    table = cells({"a": ([80.3, 81.35, 70.0], ["a42", "a43", "a45"]), "b": (RIGHT, ["b42", "b43", "b44"])})
    verdict = evaluate(GREATER, table, lookup_record=store(*runs))
    assert verdict.n == "2 pairs" and "unmatched seeds: left 45, right 44" in verdict.test
    assert verdict.effect == pytest.approx(np.mean([0.3, 0.35]))
    single = cells({"a": ([80.3, 60.0], ["a42", "a45"]), "b": (RIGHT, ["b42", "b43", "b44"])})
    verdict = evaluate(GREATER, single, lookup_record=store(*runs))
    assert verdict.status == "inconclusive" and "fewer than 2 matched pairs" in verdict.detail
    assert verdict.effect == pytest.approx(0.3)  # the lead at the matched seed, not 70.15 - 80.0


def test_shared_init_runs_and_lineage():
    stage1 = [record(f"s{i}", 40 + i) for i in range(6)]
    pairs = [("s0", "s1"), ("s2", "s3"), ("s4", "s5")]
    trained = [record(f"t{i}", 42 + i, init_runs=p, objective="tncse") for i, p in enumerate(pairs)]
    untrained = [record(f"u{i}", 42 + i, init_runs=p, objective="none") for i, p in enumerate(pairs)]
    lookup = store(*stage1, *trained, *untrained)
    assert design(["t0", "t1", "t2"], ["u0", "u1", "u2"], "small", lookup).why == "paired: the same init runs"
    lineage = design(["t0", "t1", "t2"], [f"s{i}" for i in range(6)], "small", lookup)
    assert lineage.paired and lineage.pairs == (((0,), (0, 1)), ((1,), (2, 3)), ((2,), (4, 5)))
    reverse = design([f"s{i}" for i in range(6)], ["t0", "t1", "t2"], "small", lookup)
    assert reverse.pairs == (((0, 1), (0,)), ((2, 3), (1,)), ((4, 5), (2,)))
    table = cells(
        {
            "a": ([76.0, 75.5, 75.8], ["t0", "t1", "t2"]),
            "b": ([75.0, 77.0, 74.4, 76.8, 75.0, 76.4], [f"s{i}" for i in range(6)]),
        }
    )
    verdict = evaluate(GREATER, table, lookup_record=lookup)
    assert "each seed against the mean of its own init runs" in verdict.test
    assert verdict.effect == pytest.approx(np.mean([76.0 - 76.0, 75.5 - 75.6, 75.8 - 75.7]))


def test_grid_points_pair_across_cells_and_a_missing_record_falls_back_to_welch():
    grid = [(p, t) for p in (1, 2, 4) for t in (5e-4, 5e-2)]  # each grid point its own seed: replicates
    one = [
        record(f"a1-{p}-{t}", 42 + i, num_anchors=1, num_positives=p, temperature=t) for i, (p, t) in enumerate(grid)
    ]
    two = [
        record(f"a2-{p}-{t}", 42 + i, num_anchors=2, num_positives=p, temperature=t) for i, (p, t) in enumerate(grid)
    ]
    lookup = store(*one, *two)
    found = design([r["run_id"] for r in two], [r["run_id"] for r in one[::-1]], "small", lookup)
    assert found.paired and "same grid point (num_positives, temperature)" in found.why
    assert found.pairs == tuple(((i,), (5 - i,)) for i in range(6))
    # the same grid of seed 42 alone is not replicates: no test (tests/test_claims_design.py has the rule)
    single = [record(f"s-{p}-{t}", 42, num_anchors=2, num_positives=p, temperature=t) for p, t in grid]
    found = design([r["run_id"] for r in single], [r["run_id"] for r in one], "small", store(*one, *single))
    assert not found.paired and found.refused.startswith(
        "descriptive: the left cell's 6 values come from runs of seed 42"
    )
    missing = design(["a2-1-0.0005", "nope"], ["a1-1-0.0005", "a1-2-0.0005"], "small", lookup)
    assert not missing.paired and missing.why == "independent: a run record is missing"


@pytest.mark.parametrize("margin, status", [(0.2, "holds"), (0.3, "inconclusive"), (0.5, "fails")])
def test_the_size_verdict_tests_the_stated_margin_on_the_paired_design(margin, status):
    reported = pd.DataFrame(
        [
            {"table": "T", "group": "", "row": "a", "column": "c", "value": 82.0},
            {"table": "T", "group": "", "row": "b", "column": "c", "value": 80.0},
        ]
    )  # the paper's own effect: +2 (the descriptive ratio's denominator, not the margin)
    runs = [record(f"a{s}", s, objective="x") for s in (42, 43, 44)] + [record(f"b{s}", s) for s in (42, 43, 44)]
    table = cells({"a": (LEFT, ["a42", "a43", "a44"]), "b": (RIGHT, ["b42", "b43", "b44"])})
    claim = {**GREATER, "margin": margin, "margin_quote": "at least that"}
    verdict = evaluate(claim, table, reported, lookup_record=store(*runs))
    differences = np.subtract(LEFT, RIGHT)  # 0.3, 0.35, 0.28: mean 0.31
    assert verdict.status == "holds" and verdict.size_status == status and verdict.size_target == margin
    expected = stats.ttest_1samp(differences, margin).pvalue  # two-sided, H0: mean difference = margin
    assert verdict.size_p_value == pytest.approx(expected, rel=1e-9)
    assert verdict.size_p_value == pytest.approx(stats.ttest_rel(np.subtract(LEFT, margin), RIGHT).pvalue, rel=1e-9)
    assert verdict.size_effect == pytest.approx(0.31 - margin)
    half = stats.t.ppf(0.975, 2) * np.std(differences, ddof=1) / np.sqrt(3)  # the paired 95 % interval
    assert verdict.size_ratio == pytest.approx(0.31 / 2)
    assert (verdict.size_ratio_low, verdict.size_ratio_high) == pytest.approx(((0.31 - half) / 2, (0.31 + half) / 2))
    assert "at least that" in verdict.size_detail


def test_without_a_margin_the_papers_own_effect_only_gives_the_descriptive_ratio():
    reported = pd.DataFrame(
        [
            {"table": "T", "group": "", "row": "a", "column": "c", "value": 82.0},
            {"table": "T", "group": "", "row": "b", "column": "c", "value": 80.0},
        ]
    )
    runs = [record(f"a{s}", s, objective="x") for s in (42, 43, 44)] + [record(f"b{s}", s) for s in (42, 43, 44)]
    table = cells({"a": (LEFT, ["a42", "a43", "a44"]), "b": (RIGHT, ["b42", "b43", "b44"])})
    verdict = evaluate(GREATER, table, reported, lookup_record=store(*runs))
    assert verdict.status == "holds" and verdict.size_status == "no size"  # no half of the paper's +2 any more
    assert verdict.size_target is None and verdict.size_p_value is None and verdict.size_effect is None
    differences = np.subtract(LEFT, RIGHT)
    half = stats.t.ppf(0.975, 2) * np.std(differences, ddof=1) / np.sqrt(3)
    assert verdict.size_ratio == pytest.approx(0.31 / 2)
    assert (verdict.size_ratio_low, verdict.size_ratio_high) == pytest.approx(((0.31 - half) / 2, (0.31 + half) / 2))
    assert verdict.size_detail.startswith("the paper states no margin: its effect is compared descriptively (ratio)")
    unreported = evaluate(GREATER, table, None, lookup_record=store(*runs))
    assert unreported.size_status == "no size" and unreported.size_ratio is None
