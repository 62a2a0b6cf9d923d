"""The overview's 7-STS rows of runs that scored STS-B dev only (Barlow Twins, VICReg): read from their derived
7-STS records in the backbone table, and computed by the comparison whenever the build may run."""

import json
import math
from types import SimpleNamespace

import pytest

from papers.overview import analyses, tables
from sentemb.runs.derived import NotRun, derived_id


def _stsb_dev_run(run_id: str) -> dict:
    """A run record whose final evaluation is STS-B dev only: no 7 STS tasks, an empty summary."""
    return {
        "run_id": run_id,
        "profile": "small",
        "spec": {"final_eval": "stsb_dev"},
        "metrics": {"tasks": {}, "summary": {}, "stsb_dev_spearman": 0.8},
    }


def _write_sts7(root, record: dict, average: float) -> None:
    """A stored derived 7-STS record of ``record`` (analysis ``sts_simcse_7``) with that 7-task average."""
    ident = derived_id(record["run_id"], analyses.ANALYSIS, dict(analyses.PARAMS))
    folder = root / "runs" / record["profile"] / "derived"
    folder.mkdir(parents=True, exist_ok=True)
    summary = {"STS12": average, "STS-B": average, "Avg.": average}
    derived = {
        "derived_id": ident,
        "analysis": analyses.ANALYSIS,
        "run_id": record["run_id"],
        "result": {"summary": summary},
    }
    (folder / f"{ident}.json").write_text(json.dumps(derived))


def test_row_values_read_a_stsb_dev_runs_derived_7sts_average_and_leave_out_a_seed_without_one(tmp_path, monkeypatch):
    """bt_dropout's seeds end with STS-B dev only: the two with a derived 7-STS record give its Avg. (under the run's
    own id), the third (no derived record, none computed) is left out of values, n and run ids; a run with its own
    7 tasks keeps its own average."""
    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path))
    runs = [_stsb_dev_run(f"bt{seed}") for seed in (42, 43, 44)]
    _write_sts7(tmp_path, runs[0], 70.0)
    _write_sts7(tmp_path, runs[1], 72.0)
    own = {"run_id": "simcse42", "metrics": {"tasks": {"STS12": {}}, "summary": {"Avg.": 75.0}}}
    by_id = {r["run_id"]: r for r in runs + [own]}
    grid = {
        "bt_dropout": [SimpleNamespace(run_id=r["run_id"]) for r in runs],
        "unsup": [SimpleNamespace(run_id="simcse42")],
    }
    monkeypatch.setattr(tables, "get_paper", lambda paper: SimpleNamespace(grid=lambda profile, extended: grid))
    rows = {"Barlow Twins (dropout)": ("noncontrastive", "bt_dropout"), "SimCSE": ("simcse", "unsup")}
    monkeypatch.setattr(tables.ex, "BACKBONE_ROWS", rows)

    values = tables.row_values("small", "Barlow Twins (dropout)", by_id)
    assert values["mean"] == pytest.approx(71.0) and values["std"] == pytest.approx(2**0.5)
    assert values["n"] == 2 and values["values"] == "70.0000;72.0000" and values["run_ids"] == "bt42;bt43"
    assert tables.row_values("small", "SimCSE", by_id)["mean"] == pytest.approx(75.0)
    assert len(list((tmp_path / "runs" / "small" / "derived").glob("*.json"))) == 2
    lone = tables.row_values("small", "Barlow Twins (dropout)", {"bt44": runs[2]})
    assert lone["n"] == 0 and math.isnan(lone["mean"]) and lone["run_ids"] == ""


def test_comparison_records_computes_sts_whenever_it_may_run_and_transfer_and_mteb_only_when_extended(monkeypatch):
    """run_missing without extended: the 7-STS records of the STS-B-dev-only runs are computed, transfer and MTEB
    only read; with extended all three may be computed; without run_missing none."""
    from sentemb.runs import mteb_geometry_records, transfer_records

    calls = []

    def fake(kind):
        def analysis(record, run_missing=True):
            calls.append((kind, record["run_id"], run_missing))
            if not run_missing:
                raise NotRun(f"{kind} of {record['run_id']}")
            return {"derived_id": f"{kind}-{record['run_id']}", "result": {"tasks": {}}, "provenance": {}, "timing": {}}

        return analysis

    monkeypatch.setattr(analyses, "sts7", fake("sts"))
    monkeypatch.setattr(transfer_records, "transfer", fake("transfer"))
    monkeypatch.setattr(mteb_geometry_records, "mteb_and_geometry", fake("mteb"))
    records = {"Barlow Twins (dropout)": [_stsb_dev_run("bt42")]}

    out = analyses.comparison_records(records, run_missing=True, extended=False)
    assert calls == [("sts", "bt42", True), ("transfer", "bt42", False), ("mteb", "bt42", False)]
    assert [r["run_id"] for r in out["sts"]["Barlow Twins (dropout)"]] == ["sts-bt42"]
    assert out["transfer"]["Barlow Twins (dropout)"] == [] and out["mteb"]["Barlow Twins (dropout)"] == []

    calls.clear()
    out = analyses.comparison_records(records, run_missing=True, extended=True)
    assert calls == [("sts", "bt42", True), ("transfer", "bt42", True), ("mteb", "bt42", True)]
    calls.clear()
    out = analyses.comparison_records(records, run_missing=False, extended=True)
    assert [run_missing for _, _, run_missing in calls] == [False, False, False] and out["sts"] == {
        "Barlow Twins (dropout)": []
    }


def test_the_overviews_derived_hook_passes_run_missing_and_extended_apart(monkeypatch):
    """paper.derived(): a build that may run computes STS with or without extended (``build.run_missing``), and
    passes ``extended`` for transfer and MTEB."""
    from sentemb.paper import get_paper

    seen = []
    monkeypatch.setattr(
        analyses, "comparison_records", lambda records, run_missing, extended: seen.append((run_missing, extended))
    )
    paper = get_paper("overview")
    for run_missing, extended in ((True, False), (True, True), (False, False)):
        paper.derived(SimpleNamespace(records={}, run_missing=run_missing, extended=extended))
    assert seen == [(True, False), (True, True), (False, False)]
