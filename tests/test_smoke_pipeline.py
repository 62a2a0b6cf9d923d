"""The smoke profile end to end: grid -> runs -> papermill notebook -> CSV tables and figures."""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from sentemb import settings
from sentemb.profiles import get_profile


@pytest.mark.slow
def test_smoke_profile_through_the_notebook(isolated_outputs):
    env = dict(os.environ)
    env.pop("SENTEMB_DATA", None)  # the generated rows: the same pipeline in a quarter of the time (the mirror's
    # loaders and evaluators have tests of their own; the other papers' smoke notebooks run on the mirror)
    result = subprocess.run(
        [sys.executable, "-m", "sentemb", "notebook", "--paper", "simcse", "--profile", "smoke"],
        cwd=settings.REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    tables = isolated_outputs / "results" / "simcse" / "smoke"
    t5 = pd.read_csv(tables / "table5.csv")
    assert set(t5["row"]) == {"backbone, avg.", "backbone, [CLS]", "unsup. SimCSE", "sup. SimCSE"}
    assert set(t5["aggregation"].dropna()) >= {"all", "mean", "wmean"}
    headline = t5[t5["aggregation"].fillna("").isin(["all", ""])]
    simcse_rows = headline[headline["row"].isin(["unsup. SimCSE", "sup. SimCSE"])]
    assert len(simcse_rows) == 16 and simcse_rows["reported"].notna().all()  # every task has its paper number
    assert headline.loc[headline["row"].str.startswith("backbone"), "reported"].isna().all()
    assert (t5["profile"] == "smoke").all()
    unsup = headline[(headline["row"] == "unsup. SimCSE") & (headline["column"] == "STS-B")].iloc[0]
    seeds = [float(v) for v in unsup["values"].split(";")]
    assert unsup["n"] == 2 and unsup["seeds"] == "42;43" and len(unsup["run_ids"].split(";")) == 2
    assert unsup["reproduced"] == pytest.approx(sum(seeds) / 2, abs=1e-3) and 0 < unsup["reproduced"] < 100
    assert unsup["reported"] == pytest.approx(76.85)  # SimCSE-BERT-base STS-B in Table 5
    assert unsup["delta"] == pytest.approx(unsup["reproduced"] - 76.85, abs=1e-3)
    run_records = {p.stem for p in (isolated_outputs / "results" / "runs" / "smoke").glob("*.json")}
    assert set(unsup["run_ids"].split(";")) <= run_records
    t3 = pd.read_csv(tables / "table3.csv")
    assert len(t3) == 8 and t3["reported"].notna().all()
    assert t3.set_index("row").loc["p=0.0", "n"] == 2 and t3.set_index("row").loc["p=0.01", "n"] == 2  # claim rows
    curves = pd.read_csv(tables / "dev_curves.csv")
    assert (curves["step"] == 0).any() and set(curves["seed"]) == {42, 43}
    assert len(pd.read_csv(tables / "levelling.csv")) == 20 + 14  # trained runs x seeds, and the smoke ablations
    claims = pd.read_csv(tables / "claims.csv").set_index("claim")
    assert set(claims["status"]) <= {"holds", "fails", "inconclusive", "not run"}
    assert claims.loc["sup-beats-unsup", "n"] == "2 vs 2" and claims.loc["sup-beats-unsup", "test"].startswith(
        "Welch two-sided (independent:"
    )  # unsup. and sup. train on different data: no shared data order
    assert claims.loc["dropout-0.1-is-best", "n"].startswith("2 vs 2,2,2,2,2,2,2")  # every claim row: headline seeds
    assert claims.loc["hard-negatives-help", "status"] == "not run"
    figures = isolated_outputs / "figures" / "simcse" / "smoke"
    for stem in (
        "figure2_align_uniform_training",
        "figure3_align_uniform_models",
        "figureF1_singular_values",
        "figureG1_cosine_by_rating",
    ):
        assert (figures / f"{stem}.png").stat().st_size > 5000
        assert (figures / f"{stem}.pdf").is_file()
    derived_dir = isolated_outputs / "results" / "runs" / "smoke" / "derived"
    derived = [json.loads(p.read_text()) for p in derived_dir.glob("*.json")]
    flowed = [d for d in derived if d["analysis"] == "flowed_geometry"]  # Figure 3's BERT-flow point: the geometry of
    # the flow that Table C.1's NLI flow record of the same seed fits (same fit sample, seed and configuration; the flow
    # record also names the STS sample it is scored on, the smoke runs' eval_pairs)
    assert len(flowed) == 1 and 0 < flowed[0]["result"]["n_features"] and -8 <= flowed[0]["result"]["uniformity"] <= 0
    flow_records = [d for d in derived if d["analysis"] == "bert_flow" and d["run_id"] == flowed[0]["run_id"]]
    pairs = {k: v for d in flow_records for k, v in d["params"].items() if k == "eval_pairs"}
    assert pairs == {"eval_pairs": get_profile("smoke").eval_pairs}
    assert any({k: v for k, v in d["params"].items() if k != "eval_pairs"} == flowed[0]["params"] for d in flow_records)
    runs = list((isolated_outputs / "results" / "runs" / "smoke").glob("*.json"))
    assert len(runs) == 22 + 14  # 12 runs, 10 headline rows with a second seed; one ablation per table (2 seeds
    # where a claim compares it) and one point of Table A.1's search
    for stem in ("tablea1", "tablec1", "protocols", "table8"):  # E.1: generated data has no transfer tasks
        assert not pd.read_csv(tables / f"{stem}.csv").empty, stem
    c1 = pd.read_csv(tables / "tablec1.csv").set_index(["row", "column"])
    for fit in ("NLI", "target"):  # BERT-flow: 3 fit seeds of the backbone's flow, next to the paper's SBERT-flow
        flow = c1.loc[(f"backbone, avg. + flow ({fit})", "Avg.")]
        assert flow["n"] == 3 and flow["reported_row"] == f"SBERT-flow ({fit})" and not flow["deterministic"]
    for stem, row in (
        ("table1", "Synonym replacement"),
        ("table2", "Next 3 sentences"),
        ("table4", "SNLI+MNLI neutral (314k)"),
        ("table6", "[CLS] w/o MLP"),
        ("table7", "Contradiction + Neutral, alpha=1.0"),
        ("tabled1", "N/A (dot product)"),
        ("tabled2", "w/ MLM, lambda=0.1"),
    ):
        ablation = pd.read_csv(tables / f"{stem}.csv")
        assert row in set(ablation["row"]) and ablation["reported"].notna().all(), stem
        assert (ablation["split"] == "dev").all()
    t6 = pd.read_csv(tables / "table6.csv").set_index(["row", "column"])
    assert t6.loc[("[CLS] w/ MLP (train)", "Unsup."), "n"] == 2  # the unsup headline run, both seeds


def test_executed_notebooks_carry_no_clock_times():
    from sentemb.notebooks import strip_timestamps

    notebook = {
        "metadata": {
            "papermill": {"start_time": "t0", "end_time": "t1", "duration": 1.5, "parameters": {"profile": "small"}}
        },
        "cells": [
            {
                "id": "a1",
                "metadata": {
                    "papermill": {"start_time": "t0", "duration": 0.1, "status": "completed"},
                    "execution": {"iopub.status.busy": "t0"},
                    "tags": ["parameters"],
                },
            },
            {"id": "3f9c2e1a", "metadata": {"tags": ["injected-parameters"]}},
        ],
    }
    stripped = strip_timestamps(notebook)
    assert stripped["metadata"] == {"papermill": {"parameters": {"profile": "small"}}}
    assert stripped["cells"][0]["metadata"] == {"papermill": {"status": "completed"}, "tags": ["parameters"]}
    assert [c["id"] for c in stripped["cells"]] == ["a1", "injected-parameters"]  # papermill's is random
