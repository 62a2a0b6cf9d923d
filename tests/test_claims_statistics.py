"""Claims evaluated over seeds (a ``values`` column): Welch, TOST and intersection-union tests on hand-made seeds,
each verdict decided on its two-sided p (twice the smaller one-sided p: one bar for holds and fails); the size only
against a margin the paper states, otherwise the descriptive 95 % ratio to the paper's own effect; and what
``load_claims`` refuses (a margin without its sentence, a margin of 0, the retired ``size_tolerance``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from sentemb.errors import ConfigError
from sentemb.report import claim_cells
from sentemb.report.claim_cells import load_claims, lookup, lookup_seeds, parse_values
from sentemb.report.claims import ALPHA, evaluate, evaluate_all, welch_p

WIN = [83.1, 83.4, 83.2]  # mean 83.2333
BASE = [80.0, 80.3, 80.1]  # mean 80.1333: 3.1 below WIN, same spread
QUOTE = "the paper's sentence that states the margin"


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


def paper(numbers: dict[str, float]) -> pd.DataFrame:
    """The paper's own numbers for the cells of :func:`table` (one value each, no seeds)."""
    return table({row: [value] for row, value in numbers.items()}).drop(columns="values")


def ref(row: str) -> dict:
    return {"table": "T", "row": row, "column": "c"}


def greater(left, right, reported=None, **extra):
    claim = {"id": "g", "text": "t", "kind": "greater", "left": ref("a"), "right": ref("b"), **extra}
    return evaluate(claim, table({"a": left, "b": right}), reported)


def within(left, right, tolerance):
    claim = {"id": "w", "text": "t", "kind": "within", "left": ref("a"), "right": ref("b"), "tolerance": tolerance}
    return evaluate(claim, table({"a": left, "b": right}))


def best(kind, expect, others, reported=None):
    claim = {"id": "m", "text": "t", "kind": kind, "cells": [ref(r) for r in others], "expect": ref("e")}
    return evaluate(claim, table({**others, "e": expect}), reported)


def hand_welch_p(a, b, shift=0.0):
    """One-sided Welch p of mean(a) - shift > mean(b), written out."""
    na, nb = len(a), len(b)
    va = sum((x - sum(a) / na) ** 2 for x in a) / (na - 1) / na  # squared standard error of mean(a)
    vb = sum((x - sum(b) / nb) ** 2 for x in b) / (nb - 1) / nb
    t = (sum(a) / na - shift - sum(b) / nb) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))  # Welch-Satterthwaite
    return t, df, stats.t.sf(t, df)


def hand_two_sided(a, b, shift=0.0):
    """Two-sided Welch p of mean(a) - mean(b) = shift: twice the smaller of the two one-sided p-values, at most 1."""
    return min(1.0, 2 * min(hand_welch_p(a, b, shift)[2], hand_welch_p(b, a, -shift)[2]))


def welch_se(a, b):
    """The standard error of mean(a) - mean(b) (unpooled)."""
    return math.sqrt(np.var(a, ddof=1) / len(a) + np.var(b, ddof=1) / len(b))


def test_welch_p_matches_a_hand_computation():
    a, b = [83.1, 83.4, 83.2], [82.9, 83.3, 82.8, 83.0]
    # means 83.2333 and 83.0; squared standard errors 0.046667/2/3 = 0.0077778 and 0.14/3/4 = 0.0116667;
    # t = 0.23333 / sqrt(0.0194444) = 1.67332; df = 0.0194444^2 / (0.0077778^2/2 + 0.0116667^2/3) = 5.0
    t, df, p = hand_welch_p(a, b)
    assert t == pytest.approx(1.67332, abs=1e-5) and df == pytest.approx(5.0, abs=1e-9)
    assert p == pytest.approx(0.077561, abs=1e-6)
    assert welch_p(a, b) == pytest.approx(p, rel=1e-12)
    # with a margin, and the opposite direction (the test against the claim)
    assert welch_p(a, b, 0.1) == pytest.approx(hand_welch_p(a, b, 0.1)[2], rel=1e-12)
    assert welch_p(b, a) == pytest.approx(1 - p, rel=1e-12)
    # the verdict's p is two-sided: twice the smaller one-sided p, scipy's two-sided Welch test
    verdict = greater(a, b)
    assert verdict.status == "inconclusive" and verdict.p_value == pytest.approx(2 * p, rel=1e-12)
    assert verdict.p_value == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-12)


def test_greater_clear_win_holds():
    verdict = greater(WIN, BASE)
    assert verdict.status == "holds"
    assert verdict.p_value == pytest.approx(2 * hand_welch_p(WIN, BASE)[2], rel=1e-12)
    assert verdict.p_value == pytest.approx(1.55526e-05, rel=1e-4)
    assert verdict.p_adjusted == verdict.p_value and verdict.correction == "none (one claim)"  # decided alone
    assert verdict.effect == pytest.approx(3.1)
    assert (verdict.n, verdict.test) == ("3 vs 3", "Welch two-sided (independent: no run records)")
    assert verdict.detail == "83.23 > 80.13 + 0 (diff +3.1): p=7.78e-06 for, p=1 against"  # the one-sided pair


def test_greater_overlapping_seeds_inconclusive():
    verdict = greater([80.0, 81.0, 82.0], [80.5, 81.2, 80.9])
    assert verdict.status == "inconclusive"
    assert verdict.p_value == pytest.approx(0.84413, abs=1e-5)  # twice the one-sided 0.42207
    assert verdict.effect == pytest.approx(0.13333, abs=1e-5)


def test_greater_clear_loss_fails_on_the_same_bar_as_a_win():
    verdict = greater(BASE, WIN)
    assert verdict.status == "fails"
    assert verdict.p_value == pytest.approx(1.55526e-05, rel=1e-4)  # twice the one-sided p against the claim
    assert verdict.p_value == pytest.approx(greater(WIN, BASE).p_value, rel=1e-12)  # the mirror: the same p
    assert verdict.effect == pytest.approx(-3.1)


def test_a_one_sided_p_below_5_percent_is_not_enough():
    """One-sided p = 0.035 (the old bar for holds: 0.05 one-sided) is a two-sided 0.070: inconclusive."""
    a, b = [80.9, 81.5, 81.2], [80.3, 80.9, 80.6]
    one_sided = hand_welch_p(a, b)[2]
    assert one_sided == pytest.approx(0.035242, abs=1e-6)
    verdict = greater(a, b)
    assert verdict.status == "inconclusive" and verdict.p_value == pytest.approx(2 * one_sided, rel=1e-12)
    assert greater(b, a).status == "inconclusive"  # nor for fails


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
        (2.0, "holds", 9.1205e-4),  # +3.1 is beyond 2
        (3.0, "inconclusive", 0.46760),  # +3.1 against 3: the seeds cannot tell
        (4.0, "fails", 1.9557e-3),  # significantly short of 4
        (5.0, "fails", 1.0828e-4),
    ],
)
def test_the_size_verdict_tests_the_papers_stated_margin_itself(margin, status, p):
    reported = paper({"a": 84.0, "b": 80.0})  # the paper's own effect: +4 (for the ratio only)
    verdict = greater(WIN, BASE, reported, margin=margin, margin_quote=QUOTE)
    assert verdict.status == verdict.direction_status == "holds"  # the direction: margin 0
    assert verdict.effect == pytest.approx(3.1)
    assert verdict.size_status == status and verdict.size_target == margin  # H1: effect > margin, not half of it
    expected = hand_two_sided(WIN, BASE, margin)
    assert verdict.size_p_value == pytest.approx(expected, rel=1e-9) and expected == pytest.approx(p, rel=1e-4)
    assert expected == pytest.approx(
        stats.ttest_ind(np.subtract(WIN, margin), BASE, equal_var=False).pvalue, rel=1e-9
    )  # scipy's two-sided Welch test of the shifted difference
    assert verdict.size_p_adjusted == verdict.size_p_value  # decided alone by evaluate
    assert verdict.size_effect == pytest.approx(3.1 - margin)
    assert verdict.size_detail.startswith(f'the paper\'s stated margin {margin:g} ("{QUOTE}"): ')
    # the ratio is to the paper's own effect (+4), not to the margin: the 95 % Welch interval of the difference
    half = stats.t.ppf(0.975, hand_welch_p(WIN, BASE)[1]) * welch_se(WIN, BASE)
    assert verdict.size_ratio == pytest.approx(3.1 / 4)
    assert verdict.size_ratio_low == pytest.approx((3.1 - half) / 4)
    assert verdict.size_ratio_high == pytest.approx((3.1 + half) / 4)


def test_without_a_stated_margin_there_is_no_size_verdict_only_a_descriptive_95_percent_ratio():
    verdict = greater(WIN, BASE, paper({"a": 84.0, "b": 80.0}))  # the paper's own effect: +4
    assert verdict.status == "holds"
    assert verdict.size_status == "no size" and verdict.size_target is None and verdict.size_effect is None
    assert verdict.size_p_value is None and verdict.size_p_adjusted is None
    assert verdict.size_detail.startswith("the paper states no margin: its effect is compared descriptively (ratio)")
    # reproduced / paper's effect with the two-sided 95 % Welch t-interval of the difference over the paper's effect
    df = hand_welch_p(WIN, BASE)[1]
    assert df == pytest.approx(4.0)  # equal spreads, 3 vs 3
    half = stats.t.ppf(0.975, df) * welch_se(WIN, BASE)
    assert half == pytest.approx(2.776445 * 0.124722, rel=1e-5)
    assert verdict.size_ratio == pytest.approx(3.1 / 4)
    assert verdict.size_ratio_low == pytest.approx((3.1 - half) / 4)
    assert verdict.size_ratio_high == pytest.approx((3.1 + half) / 4)
    assert "(descriptive)" in verdict.size_detail and "95 %" in verdict.size_detail
    # no ratio where the paper's numbers show no effect in the claim's direction, or where it prints none
    for reported in (paper({"a": 79.0, "b": 80.0}), None):
        other = greater(WIN, BASE, reported)
        assert other.size_status == "no size" and other.size_ratio is None and other.size_ratio_low is None
    # argmax: the other cell with the lowest ratio, with its comparison's 95 % interval
    leads = best("argmax", EXPECT, OTHERS, paper({"o1": 79.0, "o2": 78.0, "o3": 81.0, "e": 82.0}))  # +3, +4, +1
    assert leads.size_status == "no size"
    half = stats.t.ppf(0.975, hand_welch_p(EXPECT, OTHERS["o1"])[1]) * welch_se(EXPECT, OTHERS["o1"])
    assert leads.size_ratio == pytest.approx(2.0 / 3)  # o1: +2 of +3 (o2: 2.97 of 4, o3: 1 of 1)
    assert leads.size_ratio_low == pytest.approx((2.0 - half) / 3)
    assert leads.size_ratio_high == pytest.approx((2.0 + half) / 3)


def write_claims(tmp_path, monkeypatch, **extra) -> None:
    """A claims.yaml of one claim (a greater, with ``extra``) that ``load_claims("x")`` reads."""
    claim = {"id": "g", "text": "t", "kind": "greater", "left": ref("a"), "right": ref("b"), **extra}
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"paper": "x", "claims": [claim]}), encoding="utf-8")
    monkeypatch.setattr(claim_cells, "claims_path", lambda paper: path)


def test_load_claims_accepts_a_margin_with_its_quote(tmp_path, monkeypatch):
    write_claims(tmp_path, monkeypatch, margin=6, margin_quote=QUOTE)
    assert [(c["margin"], c["margin_quote"]) for c in load_claims("x")] == [(6, QUOTE)]


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"margin": 6}, "a margin needs margin_quote"),
        ({"margin": 6, "margin_quote": "  "}, "a margin needs margin_quote"),
        ({"margin": 0, "margin_quote": QUOTE}, "margin must be a number > 0"),
        ({"margin": -1.5, "margin_quote": QUOTE}, "margin must be a number > 0"),
        ({"margin": "six", "margin_quote": QUOTE}, "margin must be a number > 0"),
        ({"kind": "within", "tolerance": 1.0, "margin": 1, "margin_quote": QUOTE}, r"not on a within"),
        ({"size_tolerance": 2.0}, "size_tolerance is gone"),
        ({"size_tolerance": 2.0, "margin": 6, "margin_quote": QUOTE}, "size_tolerance is gone"),
    ],
)
def test_load_claims_refuses_a_margin_without_its_quote_a_margin_of_0_and_size_tolerance(
    tmp_path, monkeypatch, extra, message
):
    write_claims(tmp_path, monkeypatch, **extra)
    with pytest.raises(ConfigError, match=message):
        load_claims("x")


def test_within_tost_holds_fails_inconclusive():
    def tost(a, b, tolerance):
        """Hand TOST: for = both one-sided tests inside reject (the larger p); against = outside (the smaller)."""
        inside = max(hand_welch_p(a, b, -tolerance)[2], hand_welch_p(b, a, -tolerance)[2])
        outside = min(hand_welch_p(a, b, tolerance)[2], hand_welch_p(b, a, tolerance)[2])
        return min(1.0, 2 * min(inside, outside))

    cells = [83.0, 83.2, 83.1], [83.1, 83.0, 83.2]
    same = within(*cells, tolerance=1.0)
    assert (same.status, same.test) == ("holds", "Welch TOST (independent: no run records)")
    assert same.size_status == "no size" and same.size_detail == "an equivalence claim: its tolerance is its size"
    assert same.size_ratio is None
    assert same.p_value == pytest.approx(tost(*cells, 1.0), rel=1e-9)
    assert same.p_value == pytest.approx(2.55217e-4, rel=1e-4)  # twice the TOST p 1.27608e-4
    assert same.effect == pytest.approx(1.0)
    assert same.detail.startswith("|83.1 - 83.1| = 0 <= 1: p=0.000128 for")

    cells = [83.0, 83.2, 83.1], [86.0, 86.2, 86.1]
    apart = within(*cells, tolerance=1.0)
    assert apart.status == "fails" and apart.effect == pytest.approx(-2.0)
    assert apart.p_value == pytest.approx(tost(*cells, 1.0), rel=1e-9)
    assert apart.p_value == pytest.approx(1.64831e-05, rel=1e-4)

    cells = [82.0, 84.0, 83.0], [83.5, 81.5, 84.0]
    noisy = within(*cells, tolerance=0.5)
    assert noisy.status == "inconclusive" and noisy.p_value == pytest.approx(0.63103, abs=1e-5)
    assert noisy.p_value == pytest.approx(tost(*cells, 0.5), rel=1e-9)

    single = within([83.0], [83.1, 83.0, 83.2], tolerance=1.0)
    assert single.status == "inconclusive" and "1 seed" in single.detail and single.p_value is None


OTHERS = {"o1": [79.0, 79.2, 79.1], "o2": [78.0, 78.3, 78.1], "o3": [80.0, 80.2, 80.1]}
EXPECT = [81.0, 81.2, 81.1]


def hand_argmax_p(expect, others):
    """The two-sided p of an argmax IUT, by hand: for = the largest one-sided p that expect beats a cell; against =
    k x the smallest that a cell beats expect (Bonferroni, at most 1); twice the smaller of the two."""
    p_for = max(hand_welch_p(expect, o)[2] for o in others.values())
    p_against = min(1.0, len(others) * min(hand_welch_p(o, expect)[2] for o in others.values()))
    return min(1.0, 2 * min(p_for, p_against))


def test_argmax_separable_from_the_runner_up_holds():
    verdict = best("argmax", EXPECT, OTHERS)
    assert (verdict.status, verdict.test, verdict.n) == (
        "holds",
        "IUT Welch two-sided (independent: no run records)",
        "3 vs 3,3,3",
    )
    assert verdict.effect == pytest.approx(1.0)
    assert verdict.p_value == pytest.approx(2 * hand_welch_p(EXPECT, OTHERS["o3"])[2], rel=1e-12)
    assert verdict.p_value == pytest.approx(hand_argmax_p(EXPECT, OTHERS), rel=1e-12)
    assert verdict.detail.startswith("runner-up 'o3 / c' (80.1, n=3) vs 'e / c' (81.1, n=3): lead +1: p=0.000128 for")


def test_argmax_not_separable_from_the_runner_up_inconclusive():
    others = {**OTHERS, "o3": [80.9, 81.3, 81.0]}
    verdict = best("argmax", EXPECT, others)
    assert verdict.status == "inconclusive"
    assert verdict.p_value == pytest.approx(0.81937, abs=1e-5)  # twice the one-sided 0.40969
    assert verdict.p_value == pytest.approx(hand_argmax_p(EXPECT, others), rel=1e-12)
    assert verdict.effect == pytest.approx(0.03333, abs=1e-5)
    assert "runner-up 'o3 / c' (81.07, n=3)" in verdict.detail and "p=0.41 for" in verdict.detail


def test_argmax_reports_the_largest_p_when_it_is_not_the_runner_up():
    others = {**OTHERS, "o1": [75.0, 80.9, 78.0]}  # noisy: mean 77.97, not runner-up
    verdict = best("argmax", EXPECT, others)
    assert verdict.status == "inconclusive"
    assert verdict.p_value == pytest.approx(2 * hand_welch_p(EXPECT, [75.0, 80.9, 78.0])[2], rel=1e-12)
    assert verdict.p_value == pytest.approx(hand_argmax_p(EXPECT, others), rel=1e-12)
    assert "the largest p for is against 'o1 / c' (77.97)" in verdict.detail
    assert verdict.detail.startswith("runner-up 'o3 / c'")


def test_argmax_clearly_beaten_fails():
    others = {**OTHERS, "o3": [83.0, 83.2, 83.1]}
    verdict = best("argmax", EXPECT, others)
    assert verdict.status == "fails" and verdict.effect == pytest.approx(-2.0)
    assert verdict.p_value == pytest.approx(2 * 3 * 8.2415e-06, rel=1e-4)  # Bonferroni over 3 cells, two-sided
    assert verdict.p_value == pytest.approx(hand_argmax_p(EXPECT, others), rel=1e-12)
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
    on_the_margin = greater([80.0, 80.0], [79.0, 79.0], margin=1.0, margin_quote=QUOTE)  # exactly the margin
    assert (on_the_margin.size_status, on_the_margin.size_p_value) == ("inconclusive", 1.0)
    assert within([83.0, 83.0], [83.4, 83.4], tolerance=0.5).status == "holds"
    assert within([83.0, 83.0], [84.0, 84.0], tolerance=0.5).status == "fails"


def test_reported_numbers_stay_deterministic_and_their_size_asks_for_the_stated_margin():
    cells = table({"a": WIN, "b": BASE}).drop(columns="values")
    claim = {"id": "g", "text": "t", "kind": "greater", "left": ref("a"), "right": ref("b")}
    verdict = evaluate({**claim, "margin": 3.0, "margin_quote": QUOTE}, cells)
    assert (verdict.status, verdict.test, verdict.p_value) == ("holds", "deterministic", None)
    assert verdict.detail == f"{np.mean(WIN):g} > {np.mean(BASE):g} + 0"
    assert verdict.effect == pytest.approx(3.1)
    assert verdict.size_status == "holds" and verdict.size_target == 3.0
    assert verdict.size_effect == pytest.approx(0.1)  # 3.1 beyond the margin 3 itself
    assert verdict.size_detail.endswith(f"{np.mean(WIN):g} > {np.mean(BASE):g} + 3")
    assert evaluate({**claim, "margin": 4.0, "margin_quote": QUOTE}, cells).size_status == "fails"  # not half of 4
    plain = evaluate(claim, cells)
    assert plain.status == "holds" and plain.size_status == "no size" and plain.size_target is None
    assert plain.size_detail.startswith("the paper states no margin")


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
