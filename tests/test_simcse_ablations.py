"""SimCSE's ablation grid (Tables 1, 2, 4, 6, 7, D.1, D.2), its tables and its not-run rows."""

import math

import pytest

from papers.simcse import experiments as ex
from papers.simcse import tables
from sentemb.paper import Build, get_paper

PAPER = get_paper("simcse")


def test_every_ablation_row_names_a_run_of_the_grid_and_every_extra_run_is_in_a_table():
    small = ex.grid("small")
    named = {run for rows in tables.ABLATIONS.values() for run in (r[2] for r in rows)}
    assert named <= set(small)
    a1 = {
        ex.a1_run("small", mode, b, lr)
        for mode in ("unsup", "sup")
        for b in ex.a1_batches("small")
        for lr in ex.A1_LEARNING_RATES
    }
    assert set(small) - set(ex.CORE) <= named | a1 | set(tables.E1_ROWS)  # no ablation run that no table reads
    assert set(ex.grid("small", extended=False)) == set(ex.SMALL_CORE) < set(ex.CORE)
    assert set(ex.SMOKE_ABLATIONS) - {"a1_sup_b8_lr1e-05"} <= named
    assert set(ex.grid("smoke")) == set(ex.CORE) | set(ex.SMOKE_ABLATIONS)
    assert all(len(small[name]) == 1 for name in set(small) - set(ex.HEADLINE))  # ablations: one seed
    assert all(len(small[name]) == 3 for name in ex.HEADLINE)


def test_ablation_specs_say_what_they_change():
    small = ex.grid("small")
    assert small["delete_one_word_no_dropout"][0].dropout == 0.0
    assert small["sup_dot"][0].objective_params["similarity"] == "dot"
    assert small["pairs_all"][0].train_data == "snli_devtest_pairs_all"
    assert small["pairs_all"][0].objective_params["negatives"] == "none"
    assert small["sup_contradiction_neutral"][0].train_data == "snli_devtest_with_neutral"
    assert small["sup_mlm_0.01"][0].final_eval == "sts,transfer"
    assert small["sup_mlm_0.01"][0].objective_params["mlm_weight"] == 0.01 and "sup_mlm_0" not in small
    assert small["unsup_mlm_0.1"][0].objective_params["mlm_weight"] == 0.1
    assert small["unsup_mlm_0.1"][0].objective == "simcse_unsup" and "unsup_mlm_0.1" in tables.E1_ROWS
    assert small["unsup_cls_mlp"][0].pooler == "cls" and small["sup_no_mlp"][0].pooler == "cls_before_pooler"
    assert small["next_3_sentences_two_encoders"][0].objective_params == {
        "context": "next_3_sentences",
        "temperature": 0.05,
        "two_encoders": True,
    }
    assert len({spec.run_id for specs in small.values() for spec in specs}) == sum(len(s) for s in small.values())


def _record(run_id, seed, dev, transfer=None):
    metrics = {"stsb_dev_spearman": dev}
    if transfer is not None:
        metrics["transfer"] = {"tasks": transfer}
    return {
        "run_id": run_id,
        "profile": "small",
        "spec": {"backbone": "m", "seed": seed, "objective": "simcse_unsup"},
        "metrics": metrics,
        "training": {"best_step": 60, "best_is_last": True},
        "timing": {"total_seconds": 1.0},
        "provenance": {"commit": "abc", "data_sha256": {}},
    }


def test_ablation_table_from_records_next_to_the_papers_numbers():
    records = {"unsup": [_record("u42", 42, 0.80), _record("u43", 43, 0.82)], "crop_0.1": [_record("c", 42, 0.7)]}
    table = tables.ablation(records, "Table 1").set_index("row")
    assert table.loc["None (unsup. SimCSE)", "reproduced"] == pytest.approx(81.0)
    assert table.loc["None (unsup. SimCSE)", "n"] == 2 and table.loc["Crop 10%", "reported"] == 77.8
    assert table.loc["Crop 10%", "delta"] == pytest.approx(70.0 - 77.8)
    assert "Crop 20%" not in table.index  # no record: listed by not_run, not invented
    assert tables.ablation({}, "Table 7").empty


def test_table_d2_transfer_column_is_the_mean_dev_accuracy_and_nan_when_a_task_lacks_one():
    tasks = {"MR": {"devacc": 80.0, "acc": 79.0}, "CR": {"devacc": 90.0, "acc": 88.0}}
    assert tables._measure(_record("x", 42, 0.5, tasks), "transfer_dev") == pytest.approx(85.0)
    assert math.isnan(tables._measure(_record("x", 42, 0.5, {**tasks, "SUBJ": {"status": "not run"}}), "transfer_dev"))
    table = tables.ablation({"sup_mlm_0.1": [_record("m", 42, 0.86, tasks)]}, "Table D.2").set_index(["row", "column"])
    assert table.loc[("w/ MLM, lambda=0.1", "Avg. transfer"), "reproduced"] == pytest.approx(85.0)
    assert table.loc[("w/ MLM, lambda=0.1", "Avg. transfer"), "reported"] == 86.2


def test_table_d2_without_mlm_is_the_sup_run_scored_on_transfer_by_its_derived_record():
    """'w/o MLM' is the sup run: its STS-B dev from the run record, its transfer tasks from a derived record; with no
    derived record the transfer cell is left out, not NaN."""
    sup = _record("s42", 42, 0.86)
    alone = tables.ablation({"sup": [sup]}, "Table D.2").set_index(["row", "column"])
    assert ("w/o MLM", "STS-B") in alone.index and ("w/o MLM", "Avg. transfer") not in alone.index
    derived = {"s42": {"result": {"transfer": {"tasks": {"MR": {"devacc": 70.0}, "CR": {"devacc": 80.0}}}}}}
    table = tables.ablation({"sup": [sup]}, "Table D.2", derived).set_index(["row", "column"])
    assert table.loc[("w/o MLM", "Avg. transfer"), "reproduced"] == pytest.approx(75.0)
    assert table.loc[("w/o MLM", "STS-B"), "reproduced"] == pytest.approx(86.0)


def _claim_runs() -> set[str]:
    """The runs behind every reproducible cell a claim of claims.yaml names."""
    from sentemb.report.claim_cells import _cells_of, load_claims

    cell_runs = {(table, row, column): run for table, rows in tables.ABLATIONS.items() for row, column, run, *_ in rows}
    cell_runs.update(
        {
            ("Table 3", p if p == "fixed 0.1" else f"p={p}", "STS-B"): ex.table3_run(p)
            for p in [*ex.TABLE3_DROPOUTS, "fixed 0.1"]
        }
    )
    for name, (_, reported) in tables.TABLE5_ROWS.items():
        if reported:
            cell_runs[("Table 5", reported[1], "Avg.", reported[0])] = name
    for name, (_, reported) in tables.E1_ROWS.items():
        if reported:
            cell_runs[("Table E.1", reported[1], "Avg.", reported[0])] = name
    runs = set()
    for claim in load_claims("simcse"):
        for cell in _cells_of(claim):
            key = (cell["table"], cell["row"], cell["column"]) + ((cell["group"],) if "group" in cell else ())
            if key in cell_runs:
                runs.add(cell_runs[key])
    return runs


def test_every_run_a_claim_rests_on_has_the_headline_seeds():
    """>= 3 seeds (small profile) for each row a claim compares, Table 3's dropout rows included; the core
    (SMALL_CORE) keeps unsup and sup with their 3 seeds (Table 3's rows run with --extended: the 3-hour budget)."""
    runs = _claim_runs()
    assert {"unsup", "sup", "dropout_0.5", "crop_0.1", "pairs_all", "sup_tau_1", "sup_mlm_0.1", "unsup_mlm_0.1"} <= runs
    assert runs <= set(ex.HEADLINE)
    small, core = ex.grid("small"), ex.grid("small", extended=False)
    assert all([s.seed for s in small[name]] == [42, 43, 44] for name in runs)
    assert all(len(core[name]) == (3 if name in ("unsup", "sup") else 1) for name in core)
    assert set(core) == {"backbone_avg", "backbone_cls", "unsup", "sup"}  # Table 3's rows: --extended (budget)


def test_table_a1_search_skips_the_main_runs_points_and_follows_the_profile():
    small, full = ex.grid("small"), ex.grid("full")
    a1_small = sorted(n for n in small if n.startswith("a1_"))
    assert len(a1_small) == 2 * (3 * 3 - 1)
    assert "a1_unsup_b64_lr3e-05" not in small and "a1_sup_b64_lr5e-05" not in small
    assert ex.a1_run("small", "unsup", 64, 3e-5) == "unsup" and ex.a1_run("small", "sup", 64, 5e-5) == "sup"
    assert ex.a1_run("full", "sup", 64, 5e-5) == "a1_sup_b64_lr5e-05"  # full: sup trains at 512
    spec = small["a1_sup_b16_lr1e-05"][0]
    assert (spec.batch_size, spec.lr, spec.steps, spec.final_eval) == (16, 1e-5, 60, "stsb_dev")
    assert full["a1_unsup_b256_lr1e-05"][0].steps == 1_000_000 // 256  # one epoch at every batch size
    records = {"unsup": [_record("u", 42, 0.80)], "a1_unsup_b16_lr1e-05": [_record("a", 42, 0.82)]}
    table = tables.table_a1(records, "small").set_index(["mode", "batch_size", "lr"])
    assert table.loc[("unsup", 16, 1e-5), "best"] and not table.loc[("unsup", 64, 3e-5), "best"]
    assert table.loc[("unsup", 64, 3e-5), "reported_batch"] == 64
    assert table.loc[("unsup", 64, 3e-5), "reported_lr"] == 3e-5


def _sts_metrics(base: float) -> dict:
    """Record metrics of the 7 STS tasks: STS12-16 with all/mean/wmean aggregates, STS-B and SICK-R test."""
    tasks = {
        t: {"aggregate": {"spearman": {"all": base, "mean": base - 0.01, "wmean": base + 0.01}}}
        for t in ("STS12", "STS13", "STS14", "STS15", "STS16")
    }
    tasks.update({t: {"splits": {"test": {"spearman": base}}} for t in ("STSBenchmark", "SICKRelatedness")})
    return {"tasks": tasks, "stsb_dev_spearman": base, "summary": {"Avg.": 100 * base}}


def _sts_record(run_id, seed, base, objective="simcse_unsup"):
    record = _record(run_id, seed, base)
    record["metrics"] = _sts_metrics(base)
    record["spec"]["objective"] = objective
    return record


def _derived(ident, run_id, result):
    return {
        "derived_id": ident,
        "run_id": run_id,
        "result": result,
        "timing": {"total_seconds": 2.0},
        "provenance": {"commit": "def", "data_sha256": {"x": "y"}},
    }


def test_table_e1_reads_a_runs_own_transfer_or_its_derived_record_and_needs_all_seven_tasks():
    seven = {t: {"devacc": 80.0, "acc": 70.0 + i} for i, t in enumerate(tables.E1_COLUMNS)}
    records = {
        "unsup": [_record("u", 42, 0.8)],
        "sup_mlm_0.1": [_record("m", 42, 0.8, seven)],
        "sup": [_record("s", 42, 0.8)],
    }
    derived = {
        "transfer": {
            "u": _derived("du", "u", {"transfer": {"tasks": seven}}),
            "s": _derived("ds", "s", {"transfer": {"tasks": {"MR": {"acc": 1.0}}}}),
        }
    }
    table = tables.table_e1(records, derived).set_index(["row", "column"])
    assert table.loc[("unsup. SimCSE", "SST"), "reproduced"] == 74.0  # SST2 is the paper's "SST"
    assert table.loc[("unsup. SimCSE", "Avg."), "reproduced"] == pytest.approx(73.0)
    assert table.loc[("sup. SimCSE w/ MLM (lambda 0.1)", "MR"), "reported"] == 82.68
    assert "sup. SimCSE" not in table.index.get_level_values("row")  # one task only: left out


def test_protocols_and_table_c1_put_each_aggregation_next_to_the_papers_rows():
    records = {
        "backbone_avg": [_sts_record("b", 42, 0.70, "none")],
        "unsup": [_sts_record("u", 42, 0.75)],
        "sup": [_sts_record("s", 42, 0.80)],
    }
    white = {
        "whitening NLI": _derived("w1", "b", {"tasks": _sts_metrics(0.72)["tasks"]}),
        "whitening target": _derived("w2", "b", {"tasks": _sts_metrics(0.71)["tasks"]}),
    }
    prot = tables.protocols(records, white)
    b2 = prot[prot["table"] == "Table B.2"].set_index(["row", "column"])
    assert b2.loc[("backbone, avg. (all)", "STS12"), "reproduced"] == pytest.approx(70.0)
    assert b2.loc[("backbone, avg. (mean)", "STS12"), "reproduced"] == pytest.approx(69.0)
    assert b2.loc[("backbone, avg. (all)", "STS12"), "reported"] == 70.97  # SBERT (all)
    assert b2.loc[("backbone, avg. (wmean)", "Avg."), "reproduced"] == pytest.approx((5 * 71 + 2 * 70) / 7)
    b3 = prot[prot["table"] == "Table B.3"].set_index(["row", "column"])
    assert b3.loc[("unsup. SimCSE (wmean)", "STS12"), "reported"] == 70.14
    whitened = b3.loc[("backbone, avg. + whitening (NLI) (wmean)", "STS12")]
    assert whitened["run_ids"] == "w1"  # traced to the derived record
    c1 = tables.table_c1(records, white).set_index(["row", "column"])
    assert c1.loc[("backbone, avg. + whitening (target)", "STS12"), "reported"] == 52.91  # SBERT-whitening (target)
    assert c1.loc[("backbone, avg.", "STS12"), "reproduced"] == pytest.approx(70.0)


def test_flow_rows_aggregate_their_fit_seeds_and_are_not_constants():
    """BERT-flow (Tables C.1, B.3): one derived record per fit seed; the row is their mean over the seeds, traced to
    each record, and is seed-dependent (claims test it as seeds, not as a constant like the untrained backbone)."""
    records = {"backbone_avg": [_sts_record("b", 42, 0.70, "none")]}
    flows = [
        {**_derived(f"f{seed}", "b", {"tasks": _sts_metrics(0.70 + k / 100)["tasks"]}), "params": {"seed": seed}}
        for k, seed in enumerate((42, 43, 44))
    ]
    c1 = tables.table_c1(records, {"flow NLI": flows}).set_index(["row", "column"])
    row = c1.loc[("backbone, avg. + flow (NLI)", "STS12")]
    assert row["reproduced"] == pytest.approx(71.0) and row["n"] == 3 and row["seeds"] == "42;43;44"
    assert row["run_ids"] == "f42;f43;f44" and row["reported"] == 69.78 and not row["deterministic"]
    assert c1.loc[("backbone, avg.", "STS12"), "deterministic"]
    b3 = tables.protocols(records, {"flow target": flows})
    b3 = b3[b3["table"] == "Table B.3"].set_index(["row", "column"])
    assert b3.loc[("backbone, avg. + flow (target) (wmean)", "STS12"), "reproduced"] == pytest.approx(72.0)
    assert "backbone, avg. + flow (NLI) (wmean)" not in b3.index.get_level_values("row")  # not recorded: left out


def test_table8_view_lines_up_each_models_hits_with_the_papers_sentences():
    query = "A man riding a small boat in a harbor."
    hits = [{"rank": r, "sentence": f"hit {r}", "cosine": 0.9 - r / 10} for r in (1, 2, 3)]
    derived = {
        f"retrieval {name}": _derived(
            f"r{name}", name, {"corpus": "c", "n_corpus": 9, "queries": [{"query": query, "hits": hits}]}
        )
        for name in tables.TABLE8_MODELS
    }
    view = tables.table8_view(tables.table8(derived)).set_index(["query", "rank"])
    assert view.loc[(query, 1), "sup"] == "hit 1"
    assert view.loc[(query, 1), "paper: Supervised SimCSE-BERT-base"] == "A man on a moored blue and white boat."


def test_not_run_names_rows_and_the_seeds_they_miss():
    small = ex.grid("small")
    records = {name: [_record(f"{name}{s.seed}", s.seed, 0.8) for s in specs] for name, specs in small.items()}
    records["unsup"] = records["unsup"][:1]
    records["crop_0.2"] = []
    done = {"result": {"transfer": {"tasks": {"MR": {"devacc": 80.0, "acc": 79.0}}}}}  # every E.1 run has transfer
    derived = {"transfer": {r["run_id"]: done for name in tables.E1_ROWS for r in records.get(name, [])}}
    missing = PAPER.not_run(Build("simcse", "small", records=records, derived=derived)).set_index("run")
    assert list(missing.index) == ["unsup", "crop_0.2"] and missing.loc["unsup", "missing_seeds"] == "43;44"
    assert missing.loc["crop_0.2", "status"] == PAPER.not_run_reason


def test_not_run_names_the_e1_runs_without_transfer_results():
    small = ex.grid("small")
    records = {name: [_record(f"{name}{s.seed}", s.seed, 0.8) for s in specs] for name, specs in small.items()}
    sup42 = records["sup"][0]["run_id"]
    derived = {"transfer": {sup42: {"result": {"transfer": {"tasks": {"MR": {"devacc": 80.0, "acc": 79.0}}}}}}}
    missing = PAPER.not_run(Build("simcse", "small", records=records, derived=derived)).set_index("run")
    assert missing.loc["sup: Table E.1 transfer", "missing_seeds"] == "43;44"
    assert missing.loc["unsup: Table E.1 transfer", "missing_seeds"] == "42;43;44"
    assert "sup_mlm_0.1: Table E.1 transfer" in missing.index  # _record has no transfer of its own
    assert "unsup" not in missing.index  # its run records exist
