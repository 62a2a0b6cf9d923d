"""SimCSE++'s paper folder: the grid in the paper's terms, the analyses it derives from trained models, and the
smoke profile end to end (grid -> runs -> derived records -> papermill notebook -> tables and figures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from papers.simcse.experiments import grid as simcse_grid
from papers.simcse_pp.experiments import CORE, HEADLINE, TABLE5, padding_for
from sentemb import settings
from sentemb.analysis.rank_bottleneck import cross_correlation_rank
from sentemb.analysis.retrieval import top_k
from sentemb.evaluate.post_processed import sample_sentences
from sentemb.models.encoder import SentenceEncoder
from sentemb.paper import get_paper
from sentemb.profiles import get_profile
from sentemb.runs.derived import derived_path, ensure_derived
from sentemb.runs.execute import NotRun, ensure

PAPER = get_paper("simcse_pp")


def test_small_grid_core_and_extended_rows():
    core, full = PAPER.grid("small"), PAPER.grid("small", extended=True)
    assert list(core) == list(CORE)
    assert set(full) - set(core) >= {"pos_minus", "bt_pad_704", "dcl_only_nli", "m_0.5", "tau_dcl_50"}
    assert all(len(full[name]) == 3 for name in HEADLINE) and len(full["m_0.5"]) == 1
    # the SimCSE baseline is the SimCSE grid's run: one run id, one record
    assert [s.run_id for s in core["simcse"]] == [s.run_id for s in simcse_grid("small")["unsup"]]
    pp = full["simcse_pp"][0].objective_params
    assert (pp["negatives"], pp["m"], pp["trade_off"], pp["dcl_weight"], pp["dcl_temperature"], pp["dcl_variant"]) == (
        "off_dropout",
        0.9,
        "paper",
        0.1,
        5.0,
        "paper",
    )
    official = full["simcse_pp_official"][0].objective_params
    assert (official["trade_off"], official["dcl_variant"]) == ("official", "official")
    assert full["pos_minus"][0].objective_params["noise_samples"] == 3  # K = 10 in the paper
    assert full["m_0.5"][0].final_eval == "stsb_dev" and full["m_0.5"][0].steps == full["simcse_pp"][0].steps
    assert full["dcl_only_nli"][0].train_data == "snli_devtest_for_simcse" and full["dcl_only_nli"][0].pooler == "avg"
    assert PAPER.grid("full")["pos_minus"][0].objective_params["noise_samples"] == 10
    assert PAPER.grid(get_profile("small"), extended=True) == full  # a Profile or its name


def test_table2_padding_keeps_the_papers_ratio():
    assert [padding_for(m, 768) for m in (100, 300, 704)] == [100, 300, 704]
    assert [padding_for(m, 384) for m in (100, 300, 704)] == [18, 118, 320]  # (64 + M) / 384 = (64 + M_paper) / 768
    paddings = [
        s[0].objective_params["bt_padding"]
        for n, s in PAPER.grid("small", extended=True).items()
        if n.startswith("bt_pad")
    ]
    assert paddings == [18, 118, 320]


def test_smoke_grid_keeps_one_value_per_sweep():
    rows = PAPER.grid("smoke")
    for group in TABLE5:
        assert sum(name.startswith(f"{group}_") for name in rows) == 1
    assert "simcse_pp_official" in rows and "bt_pad_704" in rows


def test_wide_view_is_grouped_where_the_table_has_groups():
    cells = pd.DataFrame(
        {
            "row": ["SimCSE", "+DCL"],
            "reported_group": ["", "components"],
            "column": ["Avg.", "Avg."],
            "aggregation": ["all", "all"],
            "reproduced": [70.0, 71.0],
            "std": [0.1, 0.2],
            "n": [3, 3],
            "reported": [float("nan"), 77.4],
        }
    )
    assert PAPER.wide(cells).index.names == ["reported_group", "row"]
    assert PAPER.wide(cells.assign(reported_group="")).index.names == ["row"]
    assert PAPER.wide(pd.DataFrame()).empty


def test_top_k_retrieval_by_hand():
    corpus = ["a", "b", "c", "d"]
    vectors = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [1.0, 0.0]])  # "d" ties "a": corpus order wins
    hits = top_k(corpus, vectors, ["a", "q"], np.array([[1.0, 0.0], [0.6, 0.8]]), k=2)
    assert [h["sentence"] for h in hits[0]["hits"]] == ["d", "b"]  # the query itself is left out
    assert hits[0]["hits"][1]["cosine"] == pytest.approx(0.8)
    assert [h["sentence"] for h in hits[1]["hits"]] == ["b", "c"] and hits[1]["hits"][0]["rank"] == 1


def test_sample_sentences_is_seeded_distinct_and_in_corpus_order():
    corpus = [f"s{i}" for i in range(50)] + ["s3"]
    a, b = sample_sentences(corpus, 10), sample_sentences(corpus, 10)
    assert a == b and len(set(a)) == 10 and a == sorted(a, key=lambda s: int(s[1:]))
    assert sample_sentences(corpus, 100) == [f"s{i}" for i in range(50)]


def test_cross_correlation_rank_is_bounded_by_the_batch_and_raised_by_padding():
    encoder = SentenceEncoder.from_name("tiny-random-bert", "avg", seed=0).eval()  # D = 64
    sentences = [f"sentence number {i} about something else" for i in range(8)]
    out = cross_correlation_rank(encoder, sentences, padding=20)
    assert out["dim"] == 64 and out["batch"] == 8
    assert out["rank"] <= 8 and 8 < out["rank_padded"] <= 28
    assert not encoder.training  # the encoder's mode is restored


@pytest.mark.slow
def test_derived_record_is_computed_once_and_retrains_a_missing_checkpoint():
    spec = PAPER.grid("smoke")["simcse"][0]
    record = ensure(spec, progress=False)
    calls = []

    def compute(encoder, run_spec):
        calls.append(run_spec.run_id)
        return {"dim": encoder.dim}

    with pytest.raises(NotRun, match="derived record"):
        ensure_derived(record, "probe", {"x": 1}, compute, run_missing=False)
    first = ensure_derived(record, "probe", {"x": 1}, compute)
    assert first["model"]["source"] == "checkpoint" and first["result"] == {"dim": 64}
    assert ensure_derived(record, "probe", {"x": 1}, compute) == first and len(calls) == 1
    assert json.loads(derived_path("smoke", first["derived_id"]).read_text())["run_id"] == spec.run_id
    assert first["provenance"]["data_sha256"] == {} and first["provenance"]["commit"] is not None  # it read no data
    # a cleaned cache: the run is trained again from its spec, and the re-trained model matches the record
    import shutil

    shutil.rmtree(settings.checkpoints_root() / spec.run_id)
    again = ensure_derived(record, "probe", {"x": 2}, compute)
    assert again["model"]["source"] == "retrained" and len(calls) == 2
    # On the mirror the re-trained model scores exactly as recorded. On generated data the random tiny BERT's dev
    # cosines are nearly all tied, so float-level differences of batch composition (the record's evaluation
    # encodes every STS sentence, the check only STS-B dev) reorder some of them.
    assert again["model"]["dev_check"]["abs_difference"] < (1e-6 if spec.synthetic_data is False else 1e-2)
    # re-training read (and hashed) the training data and STS-B dev
    assert again["provenance"]["data_sha256"] or spec.synthetic_data
    torch.set_num_threads(min(2, torch.get_num_threads()))


@pytest.mark.slow
def test_smoke_profile_through_the_notebook(isolated_outputs):
    # Generated data (no mirror): every path of the paper's ~30 runs and 10 analyses in about a minute; the SimCSE
    # smoke test covers the mirror's data path.
    env = {k: v for k, v in os.environ.items() if k != "SENTEMB_DATA"}
    result = subprocess.run(
        [sys.executable, "-m", "sentemb", "notebook", "--paper", "simcse_pp", "--profile", "smoke"],
        cwd=settings.REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    tables = isolated_outputs / "results" / "simcse_pp" / "smoke"
    t3 = pd.read_csv(tables / "table3.csv")
    avg = t3[t3["column"] == "Avg."].set_index("run")
    assert list(avg.index) == ["simcse", "off_dropout", "dcl", "simcse_pp", "simcse_pp_official"]
    assert avg.loc["simcse_pp", "reported_row"] == "SimCSE++-SBERT-base" and avg.loc["simcse_pp", "reported"] == 79.25
    assert avg.loc["off_dropout", "reported_row"] == "+Off-Info" and avg.loc["off_dropout", "reported"] == 77.13
    assert avg.loc["dcl", "reported"] == 77.40 and avg.loc["simcse_pp", "n"] == 2
    assert pd.isna(avg.loc["simcse_pp_official", "reported"])
    t2 = pd.read_csv(tables / "table2.csv")
    ranks = t2[t2["column"] == "Avg."].set_index("run")
    assert (ranks["rank_C"] <= 64).all()  # a batch of 64 (and D = 64 on the tiny BERT)
    padded = ranks[ranks["padding_M"] > 0]
    assert (padded["rank_C_padded"] >= padded["rank_C"]).all()
    t4 = pd.read_csv(tables / "table4.csv")
    assert {
        "+whitening(wiki)",
        "+whitening(NLI)",
        "+DCL(NLI, tau_DCL=0.05)",
        "+whitening (wiki), seed 42",
        "+flow (NLI)",
        "+flow (wiki), seed 42",
    } <= set(t4["row"])
    assert (t4[t4["row"].str.startswith("+flow")]["n"] == 3).all()  # BERT-flow: 3 fit seeds
    t5 = pd.read_csv(tables / "table5.csv")
    assert len(t5) == 6 and t5.set_index("row").loc["m=0.9", "n"] == 2  # the centre is the SimCSE++ row
    t6 = pd.read_csv(tables / "table6.csv")
    assert set(t6["column"]) == {"Training Time", "seconds per step", "sentences per second"}
    t7 = pd.read_csv(tables / "table7.csv")
    assert set(t7["model"]) == {"Unsup-SimCSE", "SimCSE++"} and (t7.groupby(["model", "query_no"]).size() == 5).all()
    assert "An animal is biting a persons finger." in set(t7["query"])
    claims = pd.read_csv(tables / "claims.csv").set_index("claim")
    assert set(claims["status"]) <= {"holds", "fails", "inconclusive", "same runs", "not run"}
    assert claims.loc["simcsepp-beats-simcse-bert-base", "status"] != "not run"  # tested on its aliased cells
    assert claims.loc["simcsepp-beats-simcse-bert-large", "status"] == "not run"  # BERT-large is not offline
    # tested on the MiniLM/tiny analogue rows, paired: the same seeds and data order
    assert claims.loc["off-dropout-alone-improves", "n"] == "2 pairs"
    assert claims.loc["off-dropout-alone-improves", "test"].startswith("paired t two-sided (paired: the same seed")
    assert set(claims["size_status"]) <= {"same runs", "not run", "no size"}  # the paper states no margin
    assert claims.loc["optimal-m-is-0.9", "status"] == "not run"  # smoke runs one m off the centre only
    derived = list((isolated_outputs / "results" / "runs" / "smoke" / "derived").glob("*.json"))
    # whitening of the backbone (wiki and NLI are one generated corpus here) and of SimCSE, retrieval x2, ranks of
    # SimCSE and BT (the padded BT rows are BT itself: at D = 64 the paper's ratios give M = 0), BERT-flow of the
    # backbone and of SimCSE with 3 fit seeds each
    assert len(derived) == 2 + 2 + 2 + 2 * 3
    figures = isolated_outputs / "figures" / "simcse_pp" / "smoke"
    for stem in ("figure1_align_uniform", "table5_sweeps"):
        assert (figures / f"{stem}.png").stat().st_size > 5000
