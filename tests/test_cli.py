"""The command line: help, clear errors, and a tiny evaluation."""

import json
import os
import subprocess

import pytest

from sentemb.cli import main
from sentemb.spec import PROFILES


def test_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for command in ("evaluate", "run", "notebook", "data", "runs", "reported"):
        assert command in out


def test_the_papers_come_from_the_registry_in_its_order(capsys):
    from sentemb.paper import registry

    assert main(["papers"]) == 0
    assert capsys.readouterr().out.split() == list(registry())
    assert main(["run", "--paper", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown paper 'nope'" in err and all(name in err for name in registry())
    assert main(["notebook", "--paper", "simcse,nope"]) == 2
    assert "unknown paper(s) ['nope']" in capsys.readouterr().err


def test_unknown_option_and_pooler_fail_with_usage(capsys):
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "--model", "tiny-random-bert", "--pooler", "max"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_bad_model_path_is_a_clear_error(capsys):
    assert main(["evaluate", "--model", "./does/not/exist", "--pooler", "avg"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_unknown_task_group(capsys):
    assert main(["evaluate", "--model", "tiny-random-bert", "--pooler", "avg", "--tasks", "sts,glue"]) == 2
    assert "glue" in capsys.readouterr().err
    assert main(["evaluate", "--model", "tiny-random-bert", "--pooler", "avg", "--sts-protocol", "sbert"]) == 2
    assert "sbert" in capsys.readouterr().err


def test_run_all_rejects_unknown_options():
    from sentemb import settings

    result = subprocess.run(
        ["bash", str(settings.REPO_ROOT / "run_all.sh"), "--profil", "smoke"], capture_output=True, text=True
    )
    assert result.returncode == 2 and "unknown option" in result.stderr
    result = subprocess.run(
        ["bash", str(settings.REPO_ROOT / "run_all.sh"), "--profile", "huge"], capture_output=True, text=True
    )
    assert result.returncode == 2 and f"unknown profile 'huge' (choose from: {', '.join(PROFILES)})" in result.stderr


def test_profiles_lists_the_package_profiles_for_run_all(capsys):
    from sentemb.profiles import PROFILES

    assert main(["profiles"]) == 0
    assert capsys.readouterr().out.split() == list(PROFILES)
    assert main(["profiles", "--paper-data"]) == 0
    assert (
        capsys.readouterr().out.split()
        == [name for name, p in PROFILES.items() if p.paper_data]
        == ["full", "rehearsal"]
    )


def test_evaluate_writes_json(tmp_path, monkeypatch):
    from conftest import mirror

    if mirror() is None:
        pytest.skip("no offline mirror configured: set SENTEMB_DATA=../shared/datasets")
    out = tmp_path / "eval.json"
    code = main(["evaluate", "--model", "tiny-random-bert", "--pooler", "avg", "--output", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    sts = data["sts_simcse"]
    assert set(sts["tasks"]) == {"STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"}
    assert set(sts["tasks"]["STS12"]["aggregate"]["spearman"]) == {"all", "mean", "wmean"}
    assert data["provenance"]["data_sha256"]


def test_reported_lists_the_copies_that_disagree_and_whether_they_are_flagged(capsys):
    assert main(["reported", "--paper", "simcse_pp"]) == 0  # its disagreeing copies all carry inconsistent: notes
    out = capsys.readouterr().out
    assert "BERT-base (first-last avg.) | STS12 | test: flagged: Table 3" in out and "39.70" in out and "39.69" in out
    assert main(["reported", "--paper", "simcse_pp", "--all"]) == 0
    assert ": agree: " in capsys.readouterr().out
    assert main(["reported", "--paper", "simcse,nope"]) == 2
    assert "unknown paper(s) ['nope']" in capsys.readouterr().err


def test_run_with_notebook_executes_it_after_the_grid_and_not_after_a_failed_run(monkeypatch, capsys):
    """``run --notebook`` (run_all.sh's one process per paper): the notebook follows a grid whose runs all have
    records, with the run's --no-run and --extended; a failed run leaves the notebook unexecuted."""
    from sentemb import cli, grid_run, notebooks
    from sentemb.runs import execute
    from sentemb.spec import RunSpec

    spec = RunSpec(profile="smoke", backbone="tiny-random-bert", pooler="avg", objective="none", seed=1)
    record = {"run_id": spec.run_id, "metrics": {"stsb_dev_spearman": 0.5}, "timing": {"total_seconds": 1.0}}
    executed = []
    monkeypatch.setattr(
        notebooks,
        "execute_notebook",
        lambda paper, profile, run_missing, extended: executed.append((paper, profile, run_missing, extended)),
    )
    monkeypatch.setattr(grid_run, "paper_grid", lambda paper, profile, extended: {"backbone": [spec]})
    monkeypatch.setattr(execute, "ensure", lambda spec, run_missing, progress: record)
    assert main(["run", "--paper", "simcse", "--profile", "smoke", "--extended", "--notebook"]) == 0
    assert executed == [("simcse", "smoke", True, True)]
    assert main(["run", "--paper", "simcse", "--profile", "smoke"]) == 0 and len(executed) == 1  # not asked

    def failing(spec, run_missing, progress):
        raise cli.SentembError("out of memory")

    monkeypatch.setattr(execute, "ensure", failing)
    assert main(["run", "--paper", "simcse", "--profile", "smoke", "--notebook"]) == 2
    assert len(executed) == 1 and "1 of 1 runs failed" in capsys.readouterr().err


def test_a_speedup_the_archive_does_not_know_is_a_clear_error(capsys, monkeypatch):
    monkeypatch.delenv("SENTEMB_SPEEDUPS", raising=False)
    assert main(["run", "--paper", "simcse", "--profile", "smoke", "--speedups", "fused,sync_free"]) == 2
    err = capsys.readouterr().err
    assert "cannot read 'fused'" in err and "fused_adamw" in err and "pad_multiple=N" in err
    assert "SENTEMB_SPEEDUPS" not in os.environ  # nothing set, nothing run
