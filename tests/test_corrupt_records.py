"""Broken records in results/runs: every reader names the file and the fix; the run command says so, keeps the file
aside and recomputes; no other record is touched. Nothing here trains: records are written by hand, runs are mocked."""

import json
import subprocess
import sys

import pytest
from conftest import TINY_SPEC

from sentemb import cli, grid_run
from sentemb.runs import derived, execute, store
from sentemb.spec import RunSpec

TINY = TINY_SPEC
GOOD, BAD = RunSpec(**TINY), RunSpec(**{**TINY, "seed": 43})


def fake_record(spec: RunSpec) -> dict:
    """A record with the fields the readers use (not a real run's numbers)."""
    return {
        "schema_version": store.SCHEMA_VERSION,
        "run_id": spec.run_id,
        "profile": spec.profile,
        "spec": spec.as_dict(),
        "metrics": {"stsb_dev_spearman": 0.5},
        "training": None,
        "timing": {"total_seconds": 1.0},
        "provenance": {"commit": "0123456789abcdef", "backbone_revision": "random"},
    }


@pytest.fixture
def store_with_a_truncated_record():
    """A good record and a truncated one (its first 200 bytes); returns (good path, bad path, truncated text)."""
    good, bad = store.save(fake_record(GOOD)), store.save(fake_record(BAD))
    truncated = bad.read_text()[:200]
    bad.write_text(truncated)
    return good, bad, truncated


def test_runs_lists_the_good_records_and_names_the_broken_file(store_with_a_truncated_record, capsys):
    good, bad, truncated = store_with_a_truncated_record
    assert cli.main(["runs", "--profile", "smoke"]) == 1
    out, err = capsys.readouterr()
    assert GOOD.run_id in out and BAD.run_id not in out
    assert f"error: run record {bad} cannot be read" in err and "delete it" in err and "Traceback" not in err
    assert bad.read_text() == truncated  # a listing changes nothing


def test_runs_as_a_process_has_no_traceback(store_with_a_truncated_record):
    _, bad, _ = store_with_a_truncated_record
    done = subprocess.run(
        [sys.executable, "-m", "sentemb", "runs", "--profile", "smoke"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1, done.stderr
    assert GOOD.run_id in done.stdout and str(bad) in done.stderr and "Traceback" not in done.stderr


def test_runs_names_a_json_file_that_is_not_a_complete_record(capsys):
    store.save(fake_record(GOOD))
    store.save({"run_id": BAD.run_id, "profile": BAD.profile})
    assert cli.main(["runs", "--profile", "smoke"]) == 1
    out, err = capsys.readouterr()
    assert GOOD.run_id in out and f"{BAD.run_id}.json is not a complete record" in err and "Traceback" not in err


def test_all_records_raises_naming_the_file(store_with_a_truncated_record):
    good, bad, truncated = store_with_a_truncated_record
    with pytest.raises(store.BrokenRecord, match=rf"{bad.name} cannot be read[\s\S]*delete it"):
        store.all_records("smoke")
    with pytest.raises(store.BrokenRecord, match=bad.name):
        store.load("smoke", BAD.run_id)
    assert bad.read_text() == truncated and store.load("smoke", GOOD.run_id) == fake_record(GOOD)


def test_all_records_recompute_warns_keeps_the_file_aside_and_returns_the_others(store_with_a_truncated_record, capsys):
    good, bad, truncated = store_with_a_truncated_record
    assert store.all_records("smoke", on_broken="recompute") == [fake_record(GOOD)]
    err = capsys.readouterr().err
    assert f"warning: run record {bad} cannot be read" in err and "computed again" in err
    assert not bad.exists() and bad.with_name(bad.name + ".broken").read_text() == truncated
    assert store.all_records("smoke") == [fake_record(GOOD)]  # the kept copy is not a record


def test_a_second_broken_copy_does_not_overwrite_the_first(store_with_a_truncated_record):
    _, bad, truncated = store_with_a_truncated_record
    store.all_records("smoke", on_broken="recompute")
    bad.write_text("{")
    store.all_records("smoke", on_broken="recompute")
    assert bad.with_name(bad.name + ".broken").read_text() == truncated
    assert bad.with_name(bad.name + ".broken.1").read_text() == "{"


def test_an_atomic_write_in_progress_is_not_a_record():
    """The atomic writer's hidden temporary file (or one a killed writer left) is neither flagged nor moved."""
    good = store.save(fake_record(GOOD))
    tmp = good.with_name(f".{BAD.run_id}.json.1234.tmp.json")
    tmp.write_text('{"run_id": "half-wri')
    assert store.all_records("smoke") == [fake_record(GOOD)]
    assert store.all_records("smoke", on_broken="recompute") == [fake_record(GOOD)]
    assert tmp.read_text() == '{"run_id": "half-wri'


def test_a_record_under_another_run_id_is_broken():
    path = store.record_path("smoke", BAD.run_id)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(fake_record(GOOD)))  # a copy under the wrong name
    with pytest.raises(store.BrokenRecord, match=f"holds run_id '{GOOD.run_id}', not '{BAD.run_id}'"):
        store.all_records("smoke")


def test_ensure_without_running_raises_naming_the_file(store_with_a_truncated_record):
    _, bad, truncated = store_with_a_truncated_record
    with pytest.raises(store.BrokenRecord, match=rf"{bad.name} cannot be read[\s\S]*delete it"):
        execute.ensure(BAD, run_missing=False)
    assert bad.read_text() == truncated


def test_ensure_warns_before_it_recomputes(store_with_a_truncated_record, monkeypatch, capsys):
    good, bad, truncated = store_with_a_truncated_record
    calls = []

    def fake_run(spec, progress, device):
        err = capsys.readouterr().err  # what was said before the run started
        assert f"warning: run record {bad} cannot be read" in err and "computed again" in err
        calls.append(spec.run_id)
        store.save(fake_record(spec))
        return fake_record(spec)

    monkeypatch.setattr(execute, "_run", fake_run)
    assert execute.ensure(BAD, progress=False) == fake_record(BAD)
    assert calls == [BAD.run_id]
    assert bad.with_name(bad.name + ".broken").read_text() == truncated
    assert sorted(store.all_records("smoke"), key=lambda r: r["run_id"]) == sorted(
        [fake_record(GOOD), fake_record(BAD)], key=lambda r: r["run_id"]
    )
    assert execute.ensure(GOOD, run_missing=False) == fake_record(GOOD) and calls == [BAD.run_id]


def test_the_run_command_moves_a_broken_record_aside_and_says_so(store_with_a_truncated_record, monkeypatch, capsys):
    good, bad, truncated = store_with_a_truncated_record
    monkeypatch.setattr(grid_run, "paper_grid", lambda paper, profile, extended: {})  # nothing to run: only the sweep
    assert cli.main(["run", "--paper", "simcse", "--profile", "smoke", "--no-run"]) == 2
    err = capsys.readouterr().err
    assert f"error: run record {bad} cannot be read" in err and "Traceback" not in err
    assert bad.read_text() == truncated
    assert cli.main(["run", "--paper", "simcse", "--profile", "smoke"]) == 0
    err = capsys.readouterr().err
    assert f"warning: run record {bad} cannot be read" in err and f"moved aside to {bad.name}.broken" in err
    assert bad.with_name(bad.name + ".broken").read_text() == truncated
    assert good.read_text() and store.load("smoke", GOOD.run_id) == fake_record(GOOD)


class _Encoder:
    def eval(self):
        return self


def _derived_setup(monkeypatch):
    """A truncated derived record of GOOD's run; the model is mocked, so computing it again trains nothing."""
    record = fake_record(GOOD)
    params = {"n": 1}
    path = derived.derived_path("smoke", derived.derived_id(GOOD.run_id, "probe", params))
    path.parent.mkdir(parents=True)
    path.write_text('{"schema_version": 1, "derived_id": "')
    monkeypatch.setattr(
        derived, "trained_encoder", lambda record, device, progress=False: (_Encoder(), {"source": "x"})
    )
    return record, params, path


def test_a_broken_derived_record_is_named_or_recomputed_after_a_warning(monkeypatch, capsys):
    record, params, path = _derived_setup(monkeypatch)
    with pytest.raises(store.BrokenRecord, match=rf"derived record {path} cannot be read[\s\S]*delete it"):
        derived.ensure_derived(record, "probe", params, lambda encoder, spec: {"value": 1}, run_missing=False)
    out = derived.ensure_derived(record, "probe", params, lambda encoder, spec: {"value": 1}, device="cpu")
    assert (
        out["result"] == {"value": 1}
        and store.read(path, kind="derived record", expected_id=path.stem, id_key="derived_id") == out
    )
    assert f"warning: derived record {path} cannot be read" in capsys.readouterr().err
    assert path.with_name(path.name + ".broken").read_text() == '{"schema_version": 1, "derived_id": "'


def test_a_derived_record_under_another_id_is_broken(monkeypatch):
    record, params, path = _derived_setup(monkeypatch)
    path.write_text('{"derived_id": "something-else"}')
    with pytest.raises(store.BrokenRecord, match="holds derived_id 'something-else'"):
        derived.ensure_derived(record, "probe", params, lambda encoder, spec: {}, run_missing=False)


def test_derived_of_each_keeps_the_runs_order_and_leaves_out_only_the_runs_not_computed():
    runs = [{"run_id": "a"}, {"run_id": "b"}, {"run_id": "c"}]
    asked = []

    def analysis(record, run_missing=True):
        asked.append((record["run_id"], run_missing))
        if record["run_id"] == "b" and not run_missing:
            raise derived.NotRun("derived record probe of run b is missing and running was disabled")
        if record["run_id"] == "c" and not run_missing:
            raise ValueError("a broken record is not a missing one")
        return {"run_id": record["run_id"]}

    assert derived.derived_of_each(runs[:2], analysis) == [{"run_id": "a"}, {"run_id": "b"}]
    assert derived.derived_of_each(runs[:2], analysis, run_missing=False) == [{"run_id": "a"}]
    assert asked[-2:] == [("a", False), ("b", False)]  # the flag reaches each call
    with pytest.raises(ValueError, match="broken"):  # only NotRun means "leave this seed out"
        derived.derived_of_each(runs, analysis, run_missing=False)
