"""The non-contrastive paper's folder: the two-stage grid (scans, then headline rows from their best trials), the
scan's quantiles on hand-made trials, and the smoke profile end to end (grid -> runs -> derived records ->
papermill notebook -> tables and figures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from papers.noncontrastive import experiments as ex
from papers.noncontrastive import tables as paper_tables
from papers.simcse.experiments import grid as simcse_grid
from sentemb import settings
from sentemb.paper import Build, get_paper
from sentemb.runs import mteb_geometry_records
from sentemb.runs.execute import NotRun

PAPER = get_paper("noncontrastive")


def _score(spec) -> float:
    """A made-up best STS-B dev for a spec: a deterministic function of its learning rate and coefficients."""
    p = spec.objective_params
    return (
        0.80
        - abs(spec.lr - 1e-4) * 100
        - 0.001 * p.get("invariance_weight", 0)
        - 0.01 * p.get("off_diagonal_weight", 0)
    )


def _record(spec, k: int, score=None) -> dict:
    return {
        "run_id": spec.run_id,
        "profile": spec.profile,
        "spec": spec.as_dict(),
        "training": {"best_stsb_dev": _score(spec) if score is None else score},
        "provenance": {"started_utc": f"2026-01-01T00:00:{k:02d}+00:00"},
    }


def _run_to_fixed_point(profile: str, score=None) -> tuple[dict, list[dict]]:
    """The grid run to its fixed point with made-up scores: each pass 'runs' what has no record."""
    records: list[dict] = []
    while True:
        runs = ex.grid(profile, extended=False, records=records)
        have = {r["run_id"] for r in records}
        todo = [s for specs in runs.values() for s in specs if s.run_id not in have]
        if not todo:
            return runs, records
        records += [_record(s, len(records) + i, None if score is None else score(s)) for i, s in enumerate(todo)]


def test_small_grid_without_records_is_the_scans_first_proposals():
    runs = ex.grid("small", extended=False, records=[])
    assert set(runs) == {f"bt/dropout_0.1/{k}" for k in range(4)} | {
        "vicreg/dropout_0.1/0",
        "simcse",
    }  # SMAC proposes one trial at a time; shuffle 0.3: --extended (budget)
    bt = runs["bt/dropout_0.1/0"][0]
    assert (bt.objective, bt.steps, bt.batch_size, bt.eval_every, bt.precision, bt.final_eval) == (
        "barlow_twins",
        60,
        64,
        20,
        "fp32",
        "stsb_dev",
    )
    assert bt.objective_params["projector_width"] == 2048 and bt.dropout == 0.1 and bt.pooler == "cls_before_pooler"
    shuffle = ex.grid("small", extended=True, records=[])["bt/shuffle_0.3/0"][0]
    assert shuffle.dropout is None and shuffle.objective_params["augmentation"] == "shuffle"
    assert shuffle.objective_params["strength"] == 0.3
    # the SimCSE baseline is the SimCSE grid's run: one run id, one record
    assert [s.run_id for s in runs["simcse"]] == [s.run_id for s in simcse_grid("small")["unsup"]]
    assert len(ex.grid("small", extended=True, records=[])) > len(runs)  # --extended: all Table 1 cells
    full = ex.grid("full", records=[])["bt/dropout_0.05/0"][0]
    assert full.objective_params["projector_width"] == 8192 and full.batch_size == 256 and full.eval_every == 60


def test_the_scan_runs_to_completion_and_headline_rows_follow_the_best_trials():
    runs, records = _run_to_fixed_point("small")
    by_id = {r["run_id"]: r for r in records}
    vicreg = [runs[f"vicreg/dropout_0.1/{k}"][0] for k in range(ex.VICREG_TRIALS["small"])]
    assert len({s.run_id for s in vicreg}) == len(vicreg)  # four different proposals
    for spec in vicreg:
        p = spec.objective_params
        assert 0.01 <= p["invariance_weight"] <= 50 and 1 <= p["variance_weight"] <= 50 and 1e-5 <= spec.lr <= 2e-4
        assert p["covariance_weight"] == 1.0
    assert set(runs) >= set(ex.HEADLINE_ROWS) - {"bt_shuffle", "vicreg_shuffle"}  # their cell is --extended
    assert not {"bt_shuffle", "vicreg_shuffle"} & set(runs)
    bt_trials = [runs[f"bt/dropout_0.1/{k}"][0] for k in range(4)]
    best = max(bt_trials, key=lambda s: by_id[s.run_id]["training"]["best_stsb_dev"])
    assert runs["bt_dropout"][0].run_id == best.run_id  # seed 42 is the best trial itself
    assert [s.seed for s in runs["bt_dropout"]] == [42, 43, 44]
    assert runs["bt_dropout"][1].objective_params == best.objective_params and runs["bt_dropout"][1].lr == best.lr
    nli = runs["bt_nli"][0]
    assert nli.objective == "barlow_twins_pairs" and nli.train_data == "snli_devtest_for_simcse"
    assert nli.lr == best.lr
    assert nli.objective_params["off_diagonal_weight"] == best.objective_params["off_diagonal_weight"]
    best_vicreg = max(vicreg, key=lambda s: by_id[s.run_id]["training"]["best_stsb_dev"])
    assert runs["vicreg_dropout"][0].run_id == best_vicreg.run_id
    # the records alone define the scan: asked again, in any order and next to other records, the grid is the same
    other_cell = ex.grid("small", extended=True, records=[])["vicreg/dropout_0.05/0"][0]
    again = ex.grid("small", extended=False, records=list(reversed(records)) + [_record(other_cell, 99, 0.99)])
    assert {n: [s.run_id for s in v] for n, v in again.items()} == {n: [s.run_id for s in v] for n, v in runs.items()}


def test_smac_is_told_the_recorded_trials_and_asked_only_for_the_next():
    runs = ex.grid("small", extended=False, records=[])
    first = runs["vicreg/dropout_0.1/0"][0]
    told = [_record(first, 0, 0.81)]
    second = ex.grid("small", extended=False, records=told)["vicreg/dropout_0.1/1"][0]
    assert second.run_id != first.run_id and second.objective == "vicreg"
    assert "vicreg/dropout_0.1/2" not in ex.grid("small", extended=False, records=told)
    assert ex.vicreg_history("small", ("dropout", 0.1), told + [_record(second, 1)]) == told + [_record(second, 1)]
    assert ex.vicreg_history("small", ("shuffle", 0.3), told) == []  # another cell's trial is not this cell's


def test_scan_quantiles_on_hand_made_trials():
    assert paper_tables.scan_quantiles([70.0, 80.0, 90.0, 60.0]) == {"max": 90.0, "q75": 82.5, "q50": 75.0}
    assert paper_tables.scan_quantiles([77.7]) == {"max": 77.7, "q75": 77.7, "q50": 77.7}
    with pytest.raises(ValueError):
        paper_tables.scan_quantiles([])
    trials = pd.DataFrame(
        [
            {
                "method": "Barlow Twins",
                "cell": "dropout 0.1",
                "best_stsb_dev": v,
                "run_id": f"r{i}",
                "profile": "small",
                "backbone_used": "all-MiniLM-L6-v2",
            }
            for i, v in enumerate([70.0, 80.0, 90.0, 60.0])
        ]
    )
    table = paper_tables.table1(trials).set_index("row")
    assert table.loc["max", "reproduced"] == 90.0 and table.loc["q50", "reproduced"] == 75.0
    assert (table["n_trials"] == 4).all() and table.loc["max", "run_ids"] == "r0;r1;r2;r3"
    assert table.loc["max", "reported"] == 74.0 and table.loc["max", "reported_group"] == "Barlow Twins / BERT"


def test_on_the_committed_records_the_extended_scan_changes_no_headline_row():
    """On the committed small records every headline row is there, and the scan without --extended proposes the same
    headline runs (they take their best trial from the dropout 0.1 and shuffle 0.3 cells only)."""
    if not any((settings.REPO_ROOT / "results" / "noncontrastive" / "small").glob("*.csv")):
        pytest.skip("no committed small-profile tables: regeneration pending")
    folder = settings.REPO_ROOT / "results" / "runs" / "small"
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    runs = ex.grid("small", extended=True, records=records)
    assert set(ex.HEADLINE_ROWS) <= set(runs)
    core = ex.grid("small", extended=False, records=records)  # the extended scan changes no headline row
    assert set(core) < set(runs)
    assert all([s.run_id for s in core[name]] == [s.run_id for s in runs[name]] for name in core)


def test_every_table1_cell_meets_the_papers_reported_value_and_claims():
    """Table 1's columns are the paper's labels ("EDA 0.1", not the run name's "eda 0.1"), so every cell of both
    methods joins its reported value and the claims that name it."""
    rows = [
        {
            "method": ex.METHOD_LABEL[method],
            "cell": ex.cell_label(*cell),
            "best_stsb_dev": 80.0 + k,
            "run_id": f"{method}{cell}{k}",
            "profile": "small",
            "backbone_used": "all-MiniLM-L6-v2",
        }
        for method in ("barlow_twins", "vicreg")
        for cell in ex.TABLE1_CELLS
        for k in range(4)
    ]
    t1 = paper_tables.table1(pd.DataFrame(rows))
    assert len(t1) == 2 * len(ex.TABLE1_CELLS) * 3 and t1["reported"].notna().all()
    import yaml

    claims = yaml.safe_load((settings.REPO_ROOT / "papers" / "noncontrastive" / "claims.yaml").read_text())

    def cells(node):
        if isinstance(node, dict):
            yield from ([node] if node.get("table") == "Table 1" else [])
            for value in node.values():
                yield from cells(value)
        elif isinstance(node, list):
            for value in node:
                yield from cells(value)

    named = {c["column"] for c in cells(claims["claims"])}
    assert named and named <= set(t1["column"])


def test_small_profile_computes_mteb_only_with_extended_and_lists_what_it_left_out(monkeypatch):
    """Small profile: missing MTEB + geometry derived records are computed only with --extended (its time budget);
    the existing ones are read either way, a seed without one is listed with the reason, and the tables are built
    from the seeds that have one (matched by run id, not by position)."""
    headline = ex.HEADLINE_ROWS[0]
    runs = [{"run_id": f"r{seed}", "spec": {"seed": seed}} for seed in (42, 43, 44)]
    records = {paper_tables.BACKBONE_ROW: [{"run_id": "b", "spec": {"seed": 42}}], headline: runs}
    calls = []

    def fake(record, run_missing=True, progress=False):
        calls.append((record["run_id"], run_missing))
        if record["run_id"] == "r43" and not run_missing:
            raise NotRun("missing")
        return {"run_id": record["run_id"], "derived_id": "d" + record["run_id"], "result": {}}

    monkeypatch.setattr(mteb_geometry_records, "mteb_and_geometry", fake)
    derived = PAPER.derived(Build("noncontrastive", "small", run_missing=True, records=records))
    assert {rid for rid, _ in calls} == {"b", "r42", "r43", "r44"} and not any(compute for _, compute in calls)
    assert [d["run_id"] for d in derived[headline]] == ["r42", "r44"]
    missing = paper_tables.derived_not_run(records, derived)
    assert missing[["run_id", "seed"]].values.tolist() == [["r43", 43]]
    assert "--extended" in missing["status"].iloc[0]
    assert paper_tables._run_of(derived[headline][1], records[headline])["spec"]["seed"] == 44
    calls.clear()
    derived = PAPER.derived(Build("noncontrastive", "small", run_missing=True, extended=True, records=records))
    assert all(compute for _, compute in calls) and len(derived[headline]) == 3
    assert paper_tables.derived_not_run(records, derived).empty
    for profile, run_missing, extended, computes in (
        ("smoke", True, False, True),
        ("full", True, False, True),
        ("small", False, True, False),
        ("full", False, False, False),
    ):
        calls.clear()
        PAPER.derived(Build("noncontrastive", profile, run_missing, extended, records=records))
        assert calls and all(compute is computes for _, compute in calls)


def test_the_cells_without_trials_are_listed_with_why():
    """A budgeted profile's unscanned cells wait for --extended; an unbudgeted one's are the cells it does not scan."""
    records = {"bt/dropout_0.1/0": [{"profile": "small"}], "bt/shuffle_0.3/0": [], "simcse": []}
    missing = PAPER.not_run(Build("noncontrastive", "small", records=records))
    assert len(missing) == len(ex.TABLE1_CELLS) - 1 and "dropout 0.1" not in set(missing["cell"])
    assert set(missing["status"]) == {PAPER.not_run_reason} and "--extended" in PAPER.not_run_reason
    smoke = PAPER.not_run(Build("noncontrastive", "smoke"))
    assert set(smoke["cell"]) == {ex.cell_label(*c) for c in set(ex.TABLE1_CELLS) - set(ex.SMOKE_CELLS)}
    assert smoke["status"].str.startswith("not run: the smoke profile scans").all()


@pytest.mark.slow
def test_smoke_profile_through_the_notebook(isolated_outputs):
    # Generated data (no mirror): the scans, SMAC, the headline rows and the derived records in about a minute
    env = {k: v for k, v in os.environ.items() if k != "SENTEMB_DATA"}
    result = subprocess.run(
        [sys.executable, "-m", "sentemb", "notebook", "--paper", "noncontrastive", "--profile", "smoke"],
        cwd=settings.REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    tables = isolated_outputs / "results" / "noncontrastive" / "smoke"
    t1 = pd.read_csv(tables / "table1.csv")
    assert set(t1["column"]) == {"dropout 0.1", "shuffle 0.3", "EDA 0.1"} and set(t1["row"]) == {"max", "q75", "q50"}
    n = t1.set_index(["group", "column", "row"])["n_trials"]
    assert n[("Barlow Twins / MiniLM", "dropout 0.1", "max")] == len(ex.bt_trials("smoke", ("dropout", 0.1)))
    assert n[("VICReg / MiniLM", "EDA 0.1", "q50")] == ex.VICREG_TRIALS["smoke"]
    t6 = pd.read_csv(tables / "table6.csv")
    assert set(t6["column"]) == {"alignment", "uniformity"}  # generated data: no MTEB
    assert set(t6["row"]) == {paper_tables.label(n) for n in (paper_tables.BACKBONE_ROW, *ex.HEADLINE_ROWS)}
    assert (t6[t6["row"] == "SimCSE"]["n"] == 2).all()
    claims = pd.read_csv(tables / "claims.csv").set_index("claim")
    assert set(claims["status"]) <= {"holds", "fails", "inconclusive", "not run"}
    assert claims.loc["supervised-wikiauto-best-retrieval", "status"] == "not run"
    figures = isolated_outputs / "figures" / "noncontrastive" / "smoke"
    for stem in ("figure1_bt_lambda", "figure4_cosine_by_rating"):
        assert (figures / f"{stem}.png").stat().st_size > 5000


_PROPOSE_IN_A_FRESH_PROCESS = """
import json, sys
from papers.noncontrastive import experiments as ex
records = json.load(sys.stdin)
specs, _ = ex.vicreg_trials("small", ("dropout", 0.1), records)
print(json.dumps([spec.as_dict() for spec in specs]))
"""


@pytest.mark.slow
def test_the_vicreg_scan_proposes_the_same_trials_in_processes_with_different_hash_seeds():
    """SMAC 2.x's proposals after its initial design followed the process's string hash seed; the scan must not:
    two fresh interpreters with different PYTHONHASHSEEDs, told the same three trials, propose the same fourth."""
    records = []
    for k in range(3):  # two from the initial design, one from the random forest: the fourth is a model proposal
        spec = ex.vicreg_trials("small", ("dropout", 0.1), records)[0][-1]  # the cell the grid's row k comes from
        records.append(_record(spec, k, score=0.8 - 0.01 * ((k * 7) % 5)))
    processes = []
    for hash_seed in ("1", "2"):  # side by side: most of each process's time is single-threaded imports
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(settings.REPO_ROOT), "OMP_NUM_THREADS": "1"}
        processes.append(
            subprocess.Popen(
                [sys.executable, "-c", _PROPOSE_IN_A_FRESH_PROCESS],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=settings.REPO_ROOT,
            )
        )
    proposals = []
    for process in processes:
        stdout, stderr = process.communicate(json.dumps(records), timeout=600)
        assert process.returncode == 0, stderr[-3000:]
        proposals.append(json.loads(stdout.strip().splitlines()[-1]))
    assert proposals[0] == proposals[1]
    assert [p["lr"] for p in proposals[0][:3]] == [r["spec"]["lr"] for r in records]


def test_a_nan_trial_is_never_the_best_and_is_the_worst_cost_for_smac():
    runs = ex.grid("small", extended=False, records=[])
    trials = [runs[f"bt/dropout_0.1/{k}"][0] for k in range(4)]
    records = {s.run_id: _record(s, k, score=[float("nan"), 0.5, 0.7, 0.6][k]) for k, s in enumerate(trials)}
    assert ex.best_of(trials, lambda s: ex.best_dev(records[s.run_id])) == trials[2]
    first = runs["vicreg/dropout_0.1/0"][0]
    told = [_record(first, 0, float("nan"))]
    assert ex.grid("small", extended=False, records=told)["vicreg/dropout_0.1/1"][0].run_id != first.run_id
