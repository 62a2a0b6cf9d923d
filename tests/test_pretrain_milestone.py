"""A milestone of a long pretraining run (``python -m sentemb.pretrain_check --sts7 --record``): the untrained 7-STS
average follows SimCSE's protocol, and the record names the pretraining run, its tokens and curve, each score and the
scratch runs behind them."""

from __future__ import annotations

import json

import pytest

from sentemb import pretrain_check


def _record(values: dict[str, float]) -> dict:
    tasks = {}
    for task, value in values.items():
        if task.startswith("STS1"):
            tasks[task] = {"aggregate": {"spearman": {"all": value, "mean": value - 0.1}}}
        else:
            tasks[task] = {"splits": {"test": {"spearman": value}}}
    return {"metrics": {"tasks": tasks}}


def test_the_7_sts_average_reads_all_for_sts12_16_and_test_for_the_others():
    values = dict(zip(pretrain_check.STS7, [0.5, 0.6, 0.7, 0.8, 0.9, 0.4, 0.3]))
    assert pretrain_check.sts7_average(_record(values)) == pytest.approx(100 * sum(values.values()) / 7)


def test_a_milestone_record_names_the_pretraining_run_the_scores_and_their_runs(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    pretraining = {
        "run_id": "abc", "config": {"size": "mini"}, "steps": 4000, "tokens_seen": 16_384_000, "epochs": 4.7,
        "heldout_loss": [[0, 9.0], [4000, 6.0]], "heldout_unigram_loss": 7.06, "schedule": {"decay_start": 3400},
        "branched_from": {"run_id": "long", "step": 3400}, "wall_seconds": 1800.0,
    }  # fmt: skip
    (run / "record.json").write_text(json.dumps(pretraining))
    traced = {"run_id": "r1", "data_sha256": {"f": "0" * 64}, "commit": "c" * 40}
    monkeypatch.setattr(pretrain_check, "checkpoint_dir", lambda run_dir, out: (run / "model", 4000, 6.0))
    monkeypatch.setattr(pretrain_check, "untrained_scores", lambda b: {"mean pooling": 61.0, "[CLS]": 58.0})
    monkeypatch.setattr(pretrain_check, "untrained_sts7", lambda b: {"mean pooling": {"sts7": 52.0, **traced}})

    def curves(backbone, multiples, runs):
        runs["unsup_curve_lr_x1"] = traced
        return {"unsup_curve_lr_x1": [(0, 58.0), (20, 60.0), (40, float("nan"))]}

    monkeypatch.setattr(pretrain_check, "curves", curves)
    target = tmp_path / "results" / "pretraining" / "milestone.json"
    assert pretrain_check.main([str(run), "--out", str(tmp_path / "scratch"), "--sts7", "--record", str(target)]) == 0
    record = json.loads(target.read_text())
    assert record["pretraining"]["run_id"] == "abc" and record["pretraining"]["tokens_seen"] == 16_384_000
    assert record["pretraining"]["branched_from"]["step"] == 3400
    assert record["untrained_sts7"]["mean pooling"]["sts7"] == 52.0 and record["curve_runs"]["unsup_curve_lr_x1"]
    assert record["provenance"]["device"].startswith("cpu") and "commit" in record["provenance"]
