"""Claim statuses on hand-made values: a deterministic cell is a constant, tolerances in the compared units,
readable p-values, no forced "not run" for a testable claim, Δ only over the same tasks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from papers.noncontrastive.tables import delta_on_the_same_tasks
from papers.simcse_pp import tables as simcse_pp_tables
from sentemb.report.claim_cells import load_claims
from sentemb.report.claims import evaluate
from sentemb.report.claims_table import for_csv, markdown_rows
from sentemb.report.reported import load_all_reported
from sentemb.report.reproduced import aggregate_seeds, deterministic


def table(cells: dict[str, tuple[list[float], bool]]) -> pd.DataFrame:
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
                "deterministic": constant,
            }
            for row, (v, constant) in cells.items()
        ]
    )


def ref(row: str) -> dict:
    return {"table": "T", "row": row, "column": "c"}


def test_a_seeded_cell_is_tested_against_a_deterministic_one_with_a_one_sample_test():
    claim = {"id": "g", "text": "t", "kind": "greater", "left": ref("trained"), "right": ref("backbone")}
    seeds = [76.1, 76.4, 76.2]
    verdict = evaluate(claim, table({"trained": (seeds, False), "backbone": ([75.0], True)}))
    assert verdict.status == "holds" and verdict.test.startswith("one-sample t two-sided (one-sample:")
    assert verdict.p_value == pytest.approx(stats.ttest_1samp(seeds, 75.0).pvalue, rel=1e-9)  # two-sided
    assert 0 < verdict.p_value < 0.01
    assert evaluate(claim, table({"trained": (seeds, False), "backbone": ([75.0], False)})).status == "inconclusive"
    verdict = evaluate(claim, table({"trained": (seeds, False), "backbone": ([77.0], True)}))
    assert verdict.status == "fails"
    assert verdict.p_value == pytest.approx(stats.ttest_1samp(seeds, 77.0).pvalue, rel=1e-9)
    argmin = {
        "id": "m",
        "text": "t",
        "kind": "argmin",
        "cells": [ref("a"), ref("b"), ref("backbone")],
        "expect": ref("a"),
    }
    cells = {"a": ([-2.5, -2.52, -2.48], False), "b": ([-2.0, -2.02, -1.98], False), "backbone": ([-1.5], True)}
    assert evaluate(argmin, table(cells)).status == "holds"


def test_only_an_untrained_pretrained_backbone_is_deterministic():
    base = {"objective": "none", "backbone": "all-MiniLM-L6-v2"}
    assert deterministic({"spec": base})
    assert not deterministic({"spec": {**base, "objective": "simcse_unsup"}})
    assert not deterministic({"spec": {**base, "backbone": "tiny-random-bert"}})  # built from the seed
    per_seed = pd.DataFrame(
        [
            {
                "paper": "p",
                "table": "T",
                "row": "r",
                "column": "c",
                "reproduced": 1.0,
                "seed": 42,
                "profile": "small",
                "backbone_used": "b",
                "run_id": "x",
                "commit": "c",
                "data_fingerprint": "d",
                "wall_seconds": 1.0,
                "deterministic": True,
            }
        ]
    )
    assert bool(aggregate_seeds(per_seed)["deterministic"].iloc[0])


def test_a_relative_tolerance_compares_minutes_on_any_machine():
    claim = {
        "id": "w",
        "text": "t",
        "kind": "within",
        "left": ref("pp"),
        "right": ref("simcse"),
        "tolerance_relative": 0.10,
    }
    reported = pd.DataFrame(
        [
            {"table": "T", "row": "pp", "column": "c", "value": 119.0},
            {"table": "T", "row": "simcse", "column": "c", "value": 110.0},
        ]
    )
    assert evaluate(claim, reported).status == "holds"  # 9 min <= 11 min
    # CPU minutes, 20x the paper's: an absolute 11-minute tolerance would fail; 10 % of 2,200 is 220
    cpu = table({"pp": ([2390.0, 2400.0, 2395.0], False), "simcse": ([2200.0, 2205.0, 2198.0], False)})
    assert evaluate(claim, cpu).status == "holds"
    slower = table({"pp": ([2900.0, 2910.0, 2905.0], False), "simcse": ([2200.0, 2205.0, 2198.0], False)})
    assert evaluate(claim, slower).status == "fails"
    overhead = next(c for c in load_claims("simcse_pp") if c["id"] == "negligible-training-overhead")
    assert overhead["tolerance_relative"] == 0.10 and "tolerance" not in overhead


def test_small_p_values_stay_readable_in_the_csv():
    verdicts = pd.DataFrame({"claim": ["a", "b", "c"], "p_value": [2.31e-05, 0.0432, None]})
    assert list(for_csv(verdicts)["p_value"]) == ["2.31e-05", "0.0432", ""]


def test_the_readme_rows_show_two_sided_holm_p_values_and_a_size_only_against_a_stated_margin():
    nan = float("nan")
    common = {"n": "3 vs 3", "test": "Welch two-sided (independent: x)", "same_runs_as": ""}
    verdicts = pd.DataFrame(
        [
            {"claim": "plain", "status": "holds", "effect": 3.1, "p_value": 1.56e-05, "p_adjusted": 4.67e-05,
             "size_status": "no size", "size_target": nan, "size_ratio": 0.775, "size_ratio_low": 0.688,
             "size_ratio_high": 0.862, "size_p_value": nan, "size_p_adjusted": nan, **common},
            {"claim": "stated", "status": "holds", "effect": 3.1, "p_value": 1.56e-05, "p_adjusted": 4.67e-05,
             "size_status": "holds", "size_target": 2.0, "size_ratio": nan, "size_ratio_low": nan,
             "size_ratio_high": nan, "size_p_value": 9.12e-04, "size_p_adjusted": 1.82e-03, **common},
        ]
    )  # fmt: skip
    header, rule, plain, stated = markdown_rows(verdicts)
    labels = [c.strip() for c in header.strip("|").split("|")]
    assert labels == [
        "claim",
        "direction",
        "effect",
        "p two-sided (Holm)",
        "n",
        "test",
        "size vs the paper's stated margin",
        "reproduced / paper's effect [95 %] (descriptive)",
        "size p (Holm)",
    ]
    assert rule.count("---") == len(labels)
    cells = [c.strip() for c in plain.strip("|").split("|")]
    assert len(cells) == len(labels)
    assert cells[2:4] == ["+3.10", "1.56e-05 (4.67e-05)"]
    assert cells[6:] == ["no margin stated", "0.78 [0.69, 0.86]", "–"]
    cells = [c.strip() for c in stated.strip("|").split("|")]
    assert cells[6:] == ["holds (+2.00)", "–", "0.000912 (0.00182)"]


def test_the_bert_base_claim_is_tested_on_its_aliased_cells_and_has_no_size_verdict():
    """The paper reports its gain (+1.8) but states no margin: the direction is tested, the size only described."""
    assert "simcsepp-beats-simcse-bert-base" not in simcse_pp_tables.NOT_TESTABLE
    claim = next(c for c in load_claims("simcse_pp") if c["id"] == "simcsepp-beats-simcse-bert-base")
    assert "margin" not in claim
    rows = {claim["left"]["row"]: [78.0, 78.2, 78.1], claim["right"]["row"]: [77.0, 77.1, 76.9]}
    cells = pd.DataFrame(
        [
            {
                "table": "Table 3",
                "group": "",
                "row": r,
                "column": "Avg.",
                "split": "",
                "aggregation": "",
                "metric": "",
                "value": float(np.mean(v)),
                "values": ";".join(map(str, v)),
            }
            for r, v in rows.items()
        ]
    )
    reported = load_all_reported("simcse_pp")
    verdict = evaluate(claim, cells, reported)
    assert verdict.status == "holds"  # the direction: +1.1 points
    left, right = rows.values()
    assert verdict.p_value == pytest.approx(stats.ttest_ind(left, right, equal_var=False).pvalue, rel=1e-9)
    assert verdict.size_status == "no size" and verdict.size_target is None and verdict.size_p_value is None
    assert verdict.size_ratio == pytest.approx(1.1 / (78.05 - 76.25))  # of the paper's Table 3 gain, descriptive
    cells.loc[0, "values"] = "77.4;77.6;77.5"  # +0.5: a smaller gain is still the direction, and still no size
    cells.loc[0, "value"] = 77.5
    smaller = evaluate(claim, cells, reported)
    assert smaller.status == "holds" and smaller.size_status == "no size"
    assert smaller.size_ratio == pytest.approx(0.5 / 1.8)


def test_mteb_delta_only_where_both_sides_average_the_same_tasks():
    joined = pd.DataFrame(
        {
            "column": ["STS", "Class.", "Avg.", "uniformity"],
            "covers": ["10 of 10", "2 of 12", "17 of 56", "STS-B test"],
            "delta": [1.0, -3.0, 2.0, 0.5],
        }
    )
    out = delta_on_the_same_tasks(joined)
    assert out["delta"].tolist()[0] == 1.0 and out["delta"].isna().tolist() == [False, True, True, False]
    assert out["delta_note"].iloc[1].startswith("no Δ") and out["delta_note"].iloc[0] == ""
