"""Claims evaluated over seeds (a ``values`` column): Welch, TOST and intersection-union tests on hand-made seeds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sentemb.report.claim_cells import load_claims, lookup, lookup_seeds, parse_values
from sentemb.report.claims import ALPHA, SIZE_FRACTION, evaluate, evaluate_all, welch_p

WIN = [83.1, 83.4, 83.2]  # mean 83.2333
BASE = [80.0, 80.3, 80.1]  # mean 80.1333: 3.1 below WIN, same spread


def table(cells: dict[str, list[float]]) -> pd.DataFrame:
    """A long table with one cell per row name in Table T, column c: mean in ``value``, seeds in ``values``."""
    return pd.DataFrame(
        [
            {
                "table": "T",
                "group": "",
                "row": row,
                "column": "c",
                "split": "",
                "aggregation": "",
                "metric": "spearman",
                "value": float(np.mean(seeds)),
                "values": ";".join(str(s) for s in seeds),
            }
            for row, seeds in cells.items()
        ]
    )


def ref(row: str) -> dict:
    return {"table": "T", "row": row, "column": "c"}


def greater(left, right, **extra):
    claim = {"id": "g", "text": "t", "kind": "greater", "left": ref("a"), "right": ref("b"), **extra}
    return evaluate(claim, table({"a": left, "b": right}))


def within(left, right, tolerance):
    claim = {"id": "w", "text": "t", "kind": "within", "left": ref("a"), "right": ref("b"), "tolerance": tolerance}
    return evaluate(claim, table({"a": left, "b": right}))


def best(kind, expect, others):
    claim = {"id": "m", "text": "t", "kind": kind, "cells": [ref(r) for r in others], "expect": ref("e")}
    return evaluate(claim, table({**others, "e": expect}))


def hand_welch_p(a, b, shift=0.0):
    """One-sided Welch p of mean(a) - shift > mean(b), written out."""
    na, nb = len(a), len(b)
    va = sum((x - sum(a) / na) ** 2 for x in a) / (na - 1) / na  # squared standard error of mean(a)
    vb = sum((x - sum(b) / nb) ** 2 for x in b) / (nb - 1) / nb
    t = (sum(a) / na - shift - sum(b) / nb) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))  # Welch-Satterthwaite
    return t, df, stats.t.sf(t, df)


def test_welch_p_matches_a_hand_computation():
    a, b = [83.1, 83.4, 83.2], [82.9, 83.3, 82.8, 83.0]
    # means 83.2333 and 83.0; squared standard errors 0.046667/2/3 = 0.0077778 and 0.14/3/4 = 0.0116667;
    # t = 0.23333 / sqrt(0.0194444) = 1.67332; df = 0.0194444^2 / (0.0077778^2/2 + 0.0116667^2/3) = 5.0
    t, df, p = hand_welch_p(a, b)
    assert t == pytest.approx(1.67332, abs=1e-5) and df == pytest.approx(5.0, abs=1e-9)
    assert p == pytest.approx(0.077561, abs=1e-6)
    assert welch_p(a, b) == pytest.approx(p, rel=1e-12)
    verdict = greater(a, b)
    assert verdict.status == "inconclusive" and verdict.p_value == pytest.approx(p, rel=1e-12)
    # with a margin, and the opposite direction (what "fails" uses)
    assert welch_p(a, b, 0.1) == pytest.approx(hand_welch_p(a, b, 0.1)[2], rel=1e-12)
    assert welch_p(b, a) == pytest.approx(1 - p, rel=1e-12)


def test_greater_clear_win_holds():
    verdict = greater(WIN, BASE)
    assert verdict.status == "holds"
    assert verdict.p_value == pytest.approx(hand_welch_p(WIN, BASE)[2], rel=1e-12)
    assert verdict.p_value == pytest.approx(7.7763e-06, rel=1e-4)
    assert verdict.effect == pytest.approx(3.1)
    assert (verdict.n, verdict.test) == ("3 vs 3", "Welch one-sided (independent: no run records)")
    assert verdict.detail == "83.23 > 80.13 + 0 (diff +3.1): p=7.78e-06 for, p=1 against"


def test_greater_overlapping_seeds_inconclusive():
    verdict = greater([80.0, 81.0, 82.0], [80.5, 81.2, 80.9])
    assert verdict.status == "inconclusive"
    assert verdict.p_value == pytest.approx(0.42207, abs=1e-5)
    assert verdict.effect == pytest.approx(0.13333, abs=1e-5)


def test_greater_clear_loss_fails():
    verdict = greater(BASE, WIN)
    assert verdict.status == "fails"
    assert verdict.p_value == pytest.approx(7.7763e-06, rel=1e-4)  # the test against the claim
    assert verdict.effect == pytest.approx(-3.1)


def test_greater_single_seed_inconclusive():
    verdict = greater([83.0], BASE)
    assert verdict.status == "inconclusive" and verdict.p_value is None
    assert verdict.detail.startswith("inconclusive (1 seed: cells with one seed 'a / c'); 83 > 80.13")
    assert verdict.n == "1 vs 3" and verdict.effect == pytest.approx(83.0 - np.mean(BASE))


def test_empty_values_count_as_one_seed():
    cells = table({"a": WIN, "b": BASE})
    cells.loc[cells["row"] == "a", "values"] = ""
    claim = {"id": "g", "text": "t", "kind": "greater", "left": ref("a"), "right": ref("b")}
    verdict = evaluate(claim, cells)
    assert verdict.status == "inconclusive" and "1 seed" in verdict.detail and verdict.n == "1 vs 3"
    cells.loc[cells["row"] == "a", "values"] = np.nan
    assert evaluate(claim, cells).n == "1 vs 3"
    assert parse_values(float("nan"), 83.0) == [83.0] and parse_values(83.5, 83.5) == [83.5]
    assert parse_values("83.1;83.4", 83.25) == [83.1, 83.4]


@pytest.mark.parametrize(
    "margin, status, p",
    [
        (4.0, "holds", 4.5602e-4),  # asks for half of it: 2.0
        (6.0, "inconclusive", 0.23380),  # 3.0
        (8.0, "fails", 9.7784e-4),  # 4.0
        (10.0, "fails", 5.4138e-5),  # 5.0
    ],
)
def test_the_size_verdict_asks_for_half_the_papers_stated_margin(margin, status, p):
    verdict = greater(WIN, BASE, margin=margin)
    assert SIZE_FRACTION == 0.5
    assert verdict.status == verdict.direction_status == "holds"  # the direction: margin 0
    assert verdict.effect == pytest.approx(3.1)
    assert verdict.size_status == status and verdict.size_target == margin / 2
    shift = margin / 2
    expected = hand_welch_p(WIN, BASE, shift)[2] if status != "fails" else hand_welch_p(BASE, WIN, -shift)[2]
    assert verdict.size_p_value == pytest.approx(expected, rel=1e-9) and expected == pytest.approx(p, rel=1e-4)
    assert verdict.size_effect == pytest.approx(3.1 - margin / 2)
    assert verdict.size_detail.startswith(f"the paper's stated margin {margin:g}: ")
    # the ratio of the reproduced effect to the paper's, with the Welch interval of the difference over it
    diff_se = math.sqrt(np.var(WIN, ddof=1) / 3 + np.var(BASE, ddof=1) / 3)
    half = stats.t.ppf(0.95, hand_welch_p(WIN, BASE)[1]) * diff_se
    assert verdict.size_ratio == pytest.approx(3.1 / margin)
    assert verdict.size_ratio_low == pytest.approx((3.1 - half) / margin)
    assert verdict.size_ratio_high == pytest.approx((3.1 + half) / margin)


def test_margin_zero_means_zero_and_sets_no_size_target():
    verdict = greater(WIN, BASE, margin=0)
    assert verdict.size_status == "no size" and verdict.size_target is None
    assert verdict.size_detail == "the claim states a margin of 0: its size question is its direction's"


def test_within_tost_holds_fails_inconclusive():
    same = within([83.0, 83.2, 83.1], [83.1, 83.0, 83.2], tolerance=1.0)
    assert (same.status, same.test) == ("holds", "Welch TOST (independent: no run records)")
    assert same.size_status == "no size" and same.size_detail.startswith("an equivalence claim")
    assert same.p_value == pytest.approx(1.27608e-4, rel=1e-4)
    assert same.effect == pytest.approx(1.0)
    assert same.detail.startswith("|83.1 - 83.1| = 0 <= 1: p=0.000128 for")

    apart = within([83.0, 83.2, 83.1], [86.0, 86.2, 86.1], tolerance=1.0)
    assert apart.status == "fails" and apart.effect == pytest.approx(-2.0)
    assert apart.p_value == pytest.approx(8.2415e-06, rel=1e-4)

    noisy = within([82.0, 84.0, 83.0], [83.5, 81.5, 84.0], tolerance=0.5)
    assert noisy.status == "inconclusive" and noisy.p_value == pytest.approx(0.31551, abs=1e-5)

    single = within([83.0], [83.1, 83.0, 83.2], tolerance=1.0)
    assert single.status == "inconclusive" and "1 seed" in single.detail and single.p_value is None


OTHERS = {"o1": [79.0, 79.2, 79.1], "o2": [78.0, 78.3, 78.1], "o3": [80.0, 80.2, 80.1]}
EXPECT = [81.0, 81.2, 81.1]


def test_argmax_separable_from_the_runner_up_holds():
    verdict = best("argmax", EXPECT, OTHERS)
    assert (verdict.status, verdict.test, verdict.n) == (
        "holds",
        "IUT Welch one-sided (independent: no run records)",
        "3 vs 3,3,3",
    )
    assert verdict.effect == pytest.approx(1.0)
    assert verdict.p_value == pytest.approx(hand_welch_p(EXPECT, OTHERS["o3"])[2], rel=1e-12)
    assert verdict.detail.startswith("runner-up 'o3 / c' (80.1, n=3) vs 'e / c' (81.1, n=3): lead +1: p=0.000128 for")


def test_argmax_not_separable_from_the_runner_up_inconclusive():
    verdict = best("argmax", EXPECT, {**OTHERS, "o3": [80.9, 81.3, 81.0]})
    assert verdict.status == "inconclusive"
    assert verdict.p_value == pytest.approx(0.40969, abs=1e-5)
    assert verdict.effect == pytest.approx(0.03333, abs=1e-5)
    assert "runner-up 'o3 / c' (81.07, n=3)" in verdict.detail and "p=0.41 for" in verdict.detail


def test_argmax_reports_the_largest_p_when_it_is_not_the_runner_up():
    verdict = best("argmax", EXPECT, {**OTHERS, "o1": [75.0, 80.9, 78.0]})  # noisy: mean 77.97, not runner-up
    assert verdict.status == "inconclusive"
    assert verdict.p_value == pytest.approx(hand_welch_p(EXPECT, [75.0, 80.9, 78.0])[2], rel=1e-12)
    assert "the largest p for is against 'o1 / c' (77.97)" in verdict.detail
    assert verdict.detail.startswith("runner-up 'o3 / c'")


def test_argmax_clearly_beaten_fails():
    verdict = best("argmax", EXPECT, {**OTHERS, "o3": [83.0, 83.2, 83.1]})
    assert verdict.status == "fails" and verdict.effect == pytest.approx(-2.0)
    assert verdict.p_value == pytest.approx(3 * 8.2415e-06, rel=1e-4)  # Bonferroni over 3 cells
    assert verdict.detail.startswith(
        "'o3 / c' (83.1, n=3) is larger than 'e / c' (81.1, n=3): p=8.24e-06 x 3 cells (Bonferroni); runner-up"
    )


def test_argmax_with_a_one_seed_competitor_is_inconclusive():
    verdict = best("argmax", EXPECT, {**OTHERS, "o4": [70.0]})
    assert verdict.status == "inconclusive" and verdict.p_value is None and verdict.n == "3 vs 3,3,3,1"
    assert verdict.detail.startswith("inconclusive (1 seed: cells with one seed 'o4 / c'); runner-up 'o3 / c'")
    # a one-seed competitor leaves the claim untested, even when another cell clearly wins
    beaten = best("argmax", EXPECT, {**OTHERS, "o4": [70.0], "o3": [83.0, 83.2, 83.1]})
    assert beaten.status == "inconclusive" and beaten.p_value is None
    # one seed on expect: nothing can be tested
    alone = best("argmax", [81.1], OTHERS)
    assert alone.status == "inconclusive" and "cells with one seed 'e / c'" in alone.detail


def negate(cells):
    return {row: [-x for x in seeds] for row, seeds in cells.items()}


def test_argmin_mirrors_argmax():
    for others, status in [
        (OTHERS, "holds"),
        ({**OTHERS, "o3": [80.9, 81.3, 81.0]}, "inconclusive"),
        ({**OTHERS, "o3": [83.0, 83.2, 83.1]}, "fails"),
    ]:
        high = best("argmax", EXPECT, others)
        low = best("argmin", [-x for x in EXPECT], negate(others))
        assert low.status == high.status == status
        assert low.p_value == pytest.approx(high.p_value, rel=1e-12)
        assert low.effect == pytest.approx(high.effect)
    assert (
        "is smaller than" in best("argmin", [-x for x in EXPECT], negate({**OTHERS, "o3": [83.0, 83.2, 83.1]})).detail
    )


def test_zero_variance_decided_by_the_sign_of_the_difference():
    assert welch_p([80.0, 80.0], [79.0, 79.0]) == 0.0 and welch_p([79.0, 79.0], [80.0, 80.0]) == 1.0
    up = greater([80.0, 80.0], [79.0, 79.0])
    assert (up.status, up.p_value, up.effect) == ("holds", 0.0, 1.0)
    assert greater([79.0, 79.0], [80.0, 80.0]).status == "fails"
    tie = greater([80.0, 80.0], [80.0, 80.0])
    assert (tie.status, tie.p_value) == ("inconclusive", 1.0)
    assert greater([80.0, 80.0], [79.0, 79.0], margin=2.0).size_status == "inconclusive"  # exactly on half of it
    assert within([83.0, 83.0], [83.4, 83.4], tolerance=0.5).status == "holds"
    assert within([83.0, 83.0], [84.0, 84.0], tolerance=0.5).status == "fails"


def test_reported_numbers_stay_deterministic():
    cells = table({"a": WIN, "b": BASE}).drop(columns="values")
    claim = {"id": "g", "text": "t", "kind": "greater", "left": ref("a"), "right": ref("b"), "margin": 6.0}
    verdict = evaluate(claim, cells)
    assert (verdict.status, verdict.test, verdict.p_value) == ("holds", "deterministic", None)
    assert verdict.detail == f"{np.mean(WIN):g} > {np.mean(BASE):g} + 0"
    assert verdict.effect == pytest.approx(3.1)
    assert verdict.size_status == "holds" and verdict.size_effect == pytest.approx(0.1)  # half of 6
    assert verdict.size_detail.endswith(f"{np.mean(WIN):g} > {np.mean(BASE):g} + 3")
    assert evaluate({**claim, "margin": 8.0}, cells).size_status == "fails"


def test_evaluate_all_reads_a_reproduced_table_in_its_own_columns():
    """A reproduced table is evaluated as the result CSV holds it: the reference's row is the paper's
    (``reported_row``, not our label ``row``), the number ``reproduced`` and the seeds ``values``."""
    reproduced = pd.DataFrame(
        [
            {
                "table": "Table 3",
                "row": "p=0.1 (ours)",
                "column": "STS-B",
                "split": "dev",
                "aggregation": "",
                "metric": "spearman",
                "reproduced": 81.1,
                "std": 0.1,
                "n": 3,
                "values": "81.0;81.2;81.1",
                "seeds": "1;2;3",
                "run_ids": "x;y;z",
                "reported": 82.5,
                "delta": -1.4,
                "reported_row": "p=0.1",
                "reported_group": "",
            }
        ]
    )
    ref = {"table": "Table 3", "row": "p=0.1", "column": "STS-B"}
    assert lookup_seeds(reproduced, ref) == [81.0, 81.2, 81.1] and lookup(reproduced, ref) == 81.1
    assert lookup(reproduced, {**ref, "row": "p=0.1 (ours)"}) is None  # our label is not the paper's row
    verdicts = evaluate_all("simcse", reproduced)
    assert list(verdicts.columns) == [
        "paper",
        "claim",
        "text",
        "source",
        "status",
        "detail",
        "effect",
        "p_value",
        "p_adjusted",
        "correction",
        "n",
        "test",
        "direction_status",
        "size_status",
        "size_target",
        "size_effect",
        "size_p_value",
        "size_p_adjusted",
        "size_ratio",
        "size_ratio_low",
        "size_ratio_high",
        "size_detail",
        "same_runs_as",
        "evidence",
    ]
    assert len(verdicts) == len(load_claims("simcse"))
    assert set(verdicts["status"]) == {"not run"}  # one cell is not enough for any simcse claim


def test_alpha_is_five_percent():
    assert ALPHA == 0.05


def test_argmax_listing_the_expected_cell_among_its_cells_is_not_compared_with_itself():
    """SimCSE++'s claims list the expected cell among ``cells`` (Table 3, Table 5): it must not count as its own
    competitor (that comparison has p = 0.5 and would make every such claim inconclusive)."""
    cells = {"e": EXPECT, **OTHERS}
    claim = {"id": "x", "text": "t", "kind": "argmax", "cells": [ref(r) for r in cells], "expect": ref("e")}
    verdict = evaluate(claim, table(cells))
    assert (verdict.status, verdict.n) == ("holds", "3 vs 3,3,3")
