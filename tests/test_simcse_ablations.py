"""SimCSE's ablation grid (Tables 1, 2, 4, 6, 7, D.1, D.2) and its report tables."""

import math

import pytest

from papers.simcse import experiments as ex
from papers.simcse import report


def test_every_ablation_row_names_a_run_of_the_grid_and_every_extra_run_is_in_a_table():
    small = ex.grid("small")
    named = {run for rows in report.ABLATIONS.values() for run in (r[2] for r in rows)}
    assert named <= set(small)
    assert set(small) - set(ex.CORE) <= named  # no ablation run that no table reads
    assert set(ex.grid("small", extended=False)) == set(ex.CORE)
    assert set(ex.SMOKE_ABLATIONS) <= named and set(ex.grid("smoke")) == set(ex.CORE) | set(ex.SMOKE_ABLATIONS)
    assert all(len(small[name]) == 1 for name in set(small) - set(ex.HEADLINE))  # ablations: one seed


def test_ablation_specs_say_what_they_change():
    small = ex.grid("small")
    assert small["delete_one_word_no_dropout"][0].dropout == 0.0
    assert small["sup_dot"][0].objective_params["similarity"] == "dot"
    assert small["pairs_all"][0].train_data == "snli_devtest_pairs_all"
    assert small["pairs_all"][0].objective_params["negatives"] == "none"
    assert small["sup_contradiction_neutral"][0].train_data == "snli_devtest_with_neutral"
    assert small["sup_mlm_0"][0].final_eval == "sts,transfer" and "mlm_weight" not in small["sup_mlm_0"][0].objective_params
    assert small["unsup_cls_mlp"][0].pooler == "cls" and small["sup_no_mlp"][0].pooler == "cls_before_pooler"
    assert small["next_3_sentences_two_encoders"][0].objective_params == {
        "context": "next_3_sentences", "temperature": 0.05, "two_encoders": True}
    assert len({spec.run_id for specs in small.values() for spec in specs}) == sum(len(s) for s in small.values())


def _record(run_id, seed, dev, transfer=None):
    metrics = {"stsb_dev_spearman": dev}
    if transfer is not None:
        metrics["transfer"] = {"tasks": transfer}
    return {"run_id": run_id, "profile": "small", "spec": {"backbone": "m", "seed": seed, "objective": "simcse_unsup"},
            "metrics": metrics,
            "training": {"best_step": 60, "best_is_last": True}, "timing": {"total_seconds": 1.0},
            "provenance": {"commit": "abc", "data_sha256": {}}}


def test_ablation_table_from_records_next_to_the_papers_numbers():
    records = {"unsup": [_record("u42", 42, 0.80), _record("u43", 43, 0.82)], "crop_0.1": [_record("c", 42, 0.7)]}
    table = report.ablation(records, "Table 1").set_index("row")
    assert table.loc["None (unsup. SimCSE)", "reproduced"] == pytest.approx(81.0)
    assert table.loc["None (unsup. SimCSE)", "n"] == 2 and table.loc["Crop 10%", "reported"] == 77.8
    assert table.loc["Crop 10%", "delta"] == pytest.approx(70.0 - 77.8)
    assert "Crop 20%" not in table.index  # no record: listed by not_run, not invented
    assert report.ablation({}, "Table 7").empty


def test_table_d2_transfer_column_is_the_mean_dev_accuracy_and_nan_when_a_task_lacks_one():
    tasks = {"MR": {"devacc": 80.0, "acc": 79.0}, "CR": {"devacc": 90.0, "acc": 88.0}}
    assert report._measure(_record("x", 42, 0.5, tasks), "transfer_dev") == pytest.approx(85.0)
    assert math.isnan(report._measure(_record("x", 42, 0.5, {**tasks, "SUBJ": {"status": "not run"}}), "transfer_dev"))
    table = report.ablation({"sup_mlm_0": [_record("m", 42, 0.86, tasks)]}, "Table D.2").set_index(["row", "column"])
    assert table.loc[("w/o MLM", "Avg. transfer"), "reproduced"] == pytest.approx(85.0)
    assert table.loc[("w/o MLM", "Avg. transfer"), "reported"] == 85.8
