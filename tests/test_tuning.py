"""Tuning on the raw profile's backbone: the grids add one-seed learning-rate probes of the rows each paper tunes (and
SimCSE's step-count curves) on that profile only, and the tuning tables choose by STS-B dev with NaN the worst."""

from __future__ import annotations

import dataclasses
import math

import pytest

from sentemb.paper import get_paper
from sentemb.report.tuning import lr_probe_table, steps_curve_table


def test_on_the_raw_profile_each_probe_is_one_seed_at_an_exact_multiple():
    assert not [r for r in get_paper("simcse").grid("small", extended=True) if "_lr_x" in r or "_curve" in r]
    simcse = get_paper("simcse").grid("raw", extended=False)
    assert len(simcse["unsup"]) == 3 and len(simcse["unsup_lr_x3"]) == 1
    assert simcse["unsup_lr_x3"][0].lr == 9e-05 and simcse["unsup_lr_x10"][0].lr == 3e-04
    assert simcse["unsup_lr_x3"][0].seed == simcse["unsup"][0].seed
    curve = simcse["unsup_curve_lr_x1"][0]
    assert (curve.steps, curve.eval_every, curve.lr) == (300, 20, simcse["unsup_lr_x1"][0].lr)  # the paper's rate
    simcse_pp = get_paper("simcse_pp").grid("raw", extended=False)  # SimCSE++'s SimCSE row is SimCSE's unsup
    assert simcse_pp["simcse_lr_x3"][0].run_id == simcse["unsup_lr_x3"][0].run_id
    tncse = get_paper("tncse").grid("raw", extended=False)  # stage 2 keeps its stage-1 pair
    assert tncse["tncse_lr_x3"][0].init_runs == tncse["tncse"][0].init_runs


def _record(
    run_id: str, lr: float, best: float, curve: list[tuple[int, float]] = (), pooler: str = "cls_before_pooler"
) -> dict:
    return {
        "run_id": run_id,
        "spec": {"lr": lr, "steps": 60, "pooler": pooler},
        "training": {"best_stsb_dev": best, "dev_curve": [{"step": s, "stsb_dev_spearman": v} for s, v in curve]},
    }


def test_the_probe_table_chooses_the_best_dev_and_never_a_nan():
    records = {
        "unsup": [_record("a", 3e-5, 0.70), _record("a43", 3e-5, 0.99)],  # only the first seed is compared
        "unsup_lr_x3": [_record("b", 9e-5, 0.75)],
        "unsup_lr_x10": [_record("c", 3e-4, math.nan)],
        "sup": [_record("d", 5e-5, 0.80)],  # no probes: not in the table
        "unsup_curve_lr_x1": [_record("e", 3e-5, 0.7, [(0, 0.5)])],
    }
    table = lr_probe_table("simcse", records)
    assert list(table["row"]) == ["unsup"] * 3 and list(table["multiple"]) == [1.0, 3.0, 10.0]
    assert list(table["chosen"]) == [False, True, False]
    assert table.loc[1, "best_stsb_dev"] == pytest.approx(75.0)
    records["unsup_lr_x3"] = []  # before the probe has run: the rest is still compared
    assert list(lr_probe_table("simcse", records)["chosen"]) == [True, False]
    records["unsup_lr_x3"] = [_record("b", 9e-5, 0.75)]  # x3 chosen: the row runs at it, its x1 kept as a probe
    records.update(unsup=[_record("b", 9e-5, 0.75)], unsup_lr_x1=[_record("a", 3e-5, 0.70)])
    table = lr_probe_table("simcse", records)
    assert list(table["run_id"]) == ["a", "b", "c"] and list(table["chosen"]) == [False, True, False]


def test_the_steps_choice_is_the_first_trained_point_within_half_a_point_of_the_best_curves_peak():
    records = {
        "unsup_curve_lr_x1": [_record("x1", 3e-5, 0.6, [(0, 0.90), (100, 0.55), (200, 0.60)])],  # step 0: not trained
        "unsup_curve_lr_x3": [_record("x3", 9e-5, 0.8, [(0, 0.40), (100, 0.796), (200, 0.80), (300, 0.79)])],
        "unsup_curve_lr_x10": [_record("x10", 3e-4, math.nan, [(0, 0.40), (100, math.nan)])],
    }
    table = steps_curve_table(records)
    chosen = table[table["chosen"]]
    assert len(chosen) == 1 and (chosen["multiple"].item(), chosen["step"].item()) == (3.0, 100)


def test_with_curves_at_two_poolers_the_pooler_is_chosen_with_the_rate():
    """The rule of 2026-12-02 (docs/raw-backbone.md): the pooler joins the steps and the learning rate."""
    records = {
        "unsup_curve_lr_x3": [_record("c3", 9e-5, 0.8, [(0, 0.5), (100, 0.79), (200, 0.80)])],
        "unsup_avg_curve_lr_x3": [_record("a3", 9e-5, 0.9, [(0, 0.7), (100, 0.85), (200, 0.90)], pooler="avg")],
        "unsup_avg_curve_lr_x10": [_record("a10", 3e-4, math.nan, [(0, 0.7), (100, math.nan)], pooler="avg")],
    }
    table = steps_curve_table(records)
    chosen = table[table["chosen"]]
    assert len(chosen) == 1 and chosen[["pooler", "multiple", "step"]].values.tolist() == [["avg", 3.0, 200]]
    assert set(table["pooler"]) == {"avg", "cls_before_pooler"}


def test_the_raw_wp8k_profile_makes_its_steps_curves_at_cls_and_at_mean_pooling():
    simcse = get_paper("simcse").grid("raw-wp8k", extended=False)
    cls, avg = simcse["unsup_curve_lr_x10"][0], simcse["unsup_avg_curve_lr_x10"][0]
    assert (cls.pooler, avg.pooler) == ("cls_before_pooler", "avg")
    assert dataclasses.replace(avg, pooler=cls.pooler, notes=cls.notes) == cls  # the pooler is all that differs
    assert "unsup_avg_curve_lr_x1" in simcse and "unsup_avg_curve_lr_x3" in simcse
    assert not [r for r in get_paper("simcse").grid("raw", extended=False) if "_avg_curve" in r]


def test_the_raw_wp8k_profiles_steps_are_what_its_committed_curves_choose():
    """Profile("raw-wp8k").steps is the steps table's choice over the six committed curve records ([CLS] at x10,
    step 100), and the chosen curve is at SimCSE's own pooler, which the profile therefore keeps."""
    import json

    from sentemb import settings
    from sentemb.profiles import get_profile

    grid = get_paper("simcse").grid("raw-wp8k", extended=False)
    committed = settings.REPO_ROOT / "results" / "runs" / "raw-wp8k"  # the tests' own store is a scratch one
    by_id = {r["run_id"]: r for r in (json.loads(p.read_text()) for p in committed.glob("*.json"))}
    curves = {
        name: [by_id[s.run_id] for s in specs if s.run_id in by_id] for name, specs in grid.items() if "_curve_" in name
    }
    assert len(curves) == 6 and all(len(found) == 1 for found in curves.values())
    chosen = steps_curve_table(curves).query("chosen").iloc[0]
    assert (chosen["pooler"], chosen["multiple"], chosen["step"]) == ("cls_before_pooler", 10.0, 100)
    assert get_profile("raw-wp8k").steps == chosen["step"] == grid["unsup"][0].steps
