"""The command line: help, clear errors, and a tiny evaluation."""

import json
import subprocess

import pytest

from sentemb.cli import main


def test_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for command in ("evaluate", "run", "notebook", "data", "runs", "reported"):
        assert command in out


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

    result = subprocess.run(["bash", str(settings.REPO_ROOT / "run_all.sh"), "--profil", "smoke"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "unknown option" in result.stderr
    result = subprocess.run(["bash", str(settings.REPO_ROOT / "run_all.sh"), "--profile", "huge"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "unknown profile" in result.stderr


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
