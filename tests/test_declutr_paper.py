"""DeCLUTR's grid: the paper's settings in the full profile, the small profile's substitutions, and one smoke run
through the run store."""

import dataclasses

import pandas as pd
import pytest
from conftest import needs_mirror

from papers.declutr import summary, tables
from papers.declutr.experiments import (
    CORE,
    FIGURE3_RUNS,
    PAPER_MIN_DOCUMENT_TOKENS,
    SMALL_MIN_DOCUMENT_TOKENS,
    SMALL_SPANS,
    STEPS,
    paper_grid,
)
from sentemb.paper import Build, get_paper
from sentemb.profiles import get_profile
from sentemb.report.claim_cells import load_claims
from sentemb.runs import execute

DECLUTR = get_paper("declutr")


def grid(profile, extended=True):
    """The paper's grid on ``profile``, by default with the rows outside the small profile's budget."""
    return DECLUTR.grid(profile, extended=extended)


def test_the_papers_settings_carry_into_the_full_profile():
    spec = grid("full")["declutr"][0]
    assert (spec.backbone, spec.pooler, spec.train_data) == ("roberta-base", "avg", "openwebtext")
    assert (spec.batch_size, spec.lr, spec.weight_decay, spec.grad_clip) == (16, 5e-5, 0.1, 1.0)
    assert spec.steps == STEPS == 495_243 // 16 and spec.warmup_steps == round(0.1 * STEPS)
    assert (spec.lr_schedule, spec.checkpoint, spec.precision, spec.max_len) == (
        "slanted_triangular",
        "last",
        "fp16",
        514,
    )
    assert spec.final_eval == "sts,declutr"
    params = spec.objective_params
    assert (params["num_anchors"], params["num_positives"], params["temperature"]) == (2, 2, 0.05)
    assert (params["min_span_len"], params["max_span_len"], params["mlm_weight"]) == (32, 512, 1.0)
    assert (params["projection"], params["memory_size"], params["positive_views"]) == ("none", 0, "any")
    assert len(grid("full")["declutr"]) == 5 and len(grid("full")["a1_p4_t0.0005"]) == 1
    names = paper_grid()
    assert len(names) == 42 and "a2_p2_t0.05" not in names  # Figure 2's default point is the declutr row


def test_the_small_profile_scales_spans_steps_and_data():
    small = grid("small")
    spec = small["declutr"][0]
    assert (spec.backbone, spec.train_data, spec.steps, spec.batch_size) == (
        "all-MiniLM-L6-v2",
        "wikitext2_articles",
        60,
        16,
    )
    assert spec.objective_params["max_span_len"] == SMALL_SPANS["max_span_len"] and spec.max_len == 66
    assert spec.warmup_steps == 6 and len(small["declutr"]) == 3 and small["a1_p1_t0.05"][0].final_eval == "stsb_dev"
    assert [small[name][0].steps for name in FIGURE3_RUNS if name.startswith("mlm")] == [15, 30, 60]
    assert set(grid("small", extended=False)) == set(CORE)
    ids = [s.run_id for specs in small.values() for s in specs]
    assert len(ids) == len(set(ids))


def _document_bound(spec):
    """The documents a DeCLUTR spec trains on: its min_document_tokens, or the sampler's 2 * A * l_max (0)."""
    params = spec.objective_params
    return params.get("min_document_tokens") or 2 * params["num_anchors"] * params["max_span_len"]


@pytest.mark.parametrize(
    "profile, bound",
    [("full", PAPER_MIN_DOCUMENT_TOKENS), ("small", SMALL_MIN_DOCUMENT_TOKENS), ("smoke", SMALL_MIN_DOCUMENT_TOKENS)],
)
def test_every_run_of_a_profile_trains_on_one_document_set(profile, bound):
    runs = grid(profile)
    training = [spec for specs in runs.values() for spec in specs if spec.trains]
    assert {_document_bound(spec) for spec in training} == {bound}
    assert bound == (2048 if profile == "full" else 256)
    for spec in training:  # set only where the sampler's own bound differs (A = 1): the A = 2 run ids stay
        explicit = "min_document_tokens" in spec.objective_params
        assert explicit == (spec.objective_params["num_anchors"] == 1)
    # the full profile scales gradients as the paper's runs (scale_fix false); one process keeps the default
    assert {spec.ddp_gradients for spec in training} == {"official" if profile == "full" else "global"}
    assert runs["views_subsumed"][0].objective_params["positive_views"] == "subsumed_official"
    assert runs["views_adjacent"][0].objective_params["positive_views"] == "adjacent"
    assert "loss_form" not in runs["a1_p1_t0.0005"][0].objective_params  # Figure 2's tau points: the exact form


def test_the_small_profiles_unchanged_runs_keep_their_run_ids():
    """The runs whose computation the one document set, the official subsumed length and the full profile's gradient
    scale do not change keep the run ids of their committed records."""
    small = grid("small")
    assert [s.run_id for s in small["declutr"]] == ["8ef69e190663e51e", "905c63e6af99feb9", "59c9992dfb238a1d"]
    assert small["transformer"][0].run_id == "dcbd1d92fbd81f99"
    assert {name: small[name][0].run_id for name in small if name.startswith("a2_")} == {
        "a2_p1_t0.0005": "68a85313e5aab49a",
        "a2_p1_t0.05": "1fc1537bdba301e1",
        "a2_p2_t0.0005": "53733a280649e4b1",
        "a2_p4_t0.0005": "af10180c4b72e04c",
        "a2_p4_t0.05": "92b6d199cfb9d24d",
    }
    assert small["views_adjacent"][0].run_id == "03bfa90dfd5430bb"


@needs_mirror
def test_a_and_2a_select_the_same_mirror_documents():
    """The objective's select_rows on the mirror's articles, with the small grid's A = 1 and A = 2 specs: one set."""
    from sentemb.data.documents import load_documents
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.objectives.registry import build_objective

    small, documents = grid("small"), load_documents("wikitext2_articles")
    encoder = SentenceEncoder.from_name("tiny-random-bert", "avg")  # MiniLM's tokenizer
    kept = {
        name: [
            d.id
            for d in build_objective("declutr", small[name][0].objective_params, encoder, max_len=66).select_rows(
                documents
            )
        ]
        for name in ("a1_p1_t0.05", "a2_p1_t0.05", "declutr")
    }
    assert kept["a1_p1_t0.05"] == kept["a2_p1_t0.05"] == kept["declutr"] and len(kept["declutr"]) == 720


def test_a_smoke_grid_point_runs_through_the_store():
    spec = dataclasses.replace(grid("smoke")["views_subsumed"][0], synthetic_data=True)  # generated documents
    record = execute.ensure(spec, progress=False)
    assert record["training"]["best_step"] == spec.steps  # checkpoint "last"
    assert record["training"]["n_training_rows_available"] > 0
    assert record["spec"]["objective_params"]["positive_views"] == "subsumed_official"  # the official length
    assert 0 <= abs(record["metrics"]["stsb_dev_spearman"]) <= 1
    assert execute.ensure(spec, progress=False) == record  # cached


def test_the_declutr_group_adds_declutrs_sts_protocol_to_the_record(monkeypatch):
    """The wiring only (a real DeCLUTR-protocol evaluation takes minutes even for the tiny model: the 9 downstream
    classifiers and the 2 regressors are trained)."""
    from sentemb.evaluate import suite

    seen = {}

    def fake(encode, groups, sts_protocols=("simcse",), **kwargs):
        seen["protocols"], seen["groups"] = tuple(sts_protocols), list(groups)
        results, lookup = suite.evaluate_model(encode, ["sts"], sts_protocols=("simcse",), **kwargs)
        results["sts_senteval"] = {"protocol_name": "senteval", "tasks": {}}
        results["transfer"] = {"tasks": {"MR": {}}}
        return results, lookup

    monkeypatch.setattr(execute, "evaluate_model", fake)
    spec = dataclasses.replace(grid("smoke")["transformer"][0], synthetic_data=True)
    record = execute.ensure(spec, progress=False)
    assert seen == {"protocols": ("simcse", "senteval"), "groups": ["sts", "declutr"]}
    assert record["metrics"]["sts_senteval"]["protocol_name"] == "senteval"
    assert "MR" in record["metrics"]["transfer"]["tasks"]


def test_supplement_3_2_average_gives_back_the_papers_downstream_column():
    assert tables.reported_average("DeCLUTR-small (ours)", exclude=()) == pytest.approx(76.80, abs=0.005)  # Table 1
    assert tables.reported_average("Transformer-small", exclude=()) == pytest.approx(72.69, abs=0.005)
    assert tables.reported_average("DeCLUTR-small (ours)") == pytest.approx(77.965625)  # the 16 offline tasks


def test_report_tables_from_records(monkeypatch):
    """Table 1 / S3 / S6 arithmetic on two records whose scores are set by hand (the evaluation is replaced)."""
    from sentemb.evaluate import suite

    def fake(encode, groups, sts_protocols=("simcse",), **kwargs):
        results, lookup = suite.evaluate_model(encode, ["sts"], sts_protocols=("simcse",), **kwargs)
        tasks = {
            t: {"acc": 80.0, "devacc": 81.0}
            for t in ("CR", "MR", "MPQA", "SUBJ", "SST2", "SST5", "TREC", "SICKEntailment")
        }
        tasks["MRPC"] = {"acc": 70.0, "f1": 80.0, "devacc": 72.0}
        sts = {t: {"aggregate": {"spearman": {"mean": 0.6, "all": 0.5, "wmean": 0.55}}} for t in tables.STS_SUBSETS}
        sts.update({t: {"spearman": 0.7, "devpearson": 0.75} for t in tables.REGRESSOR_TASKS})
        results["transfer"] = {"tasks": tasks}
        results["sts_senteval"] = {"protocol_name": "senteval", "tasks": sts}
        return results, lookup

    monkeypatch.setattr(execute, "evaluate_model", fake)
    spec = dataclasses.replace(grid("smoke")["transformer"][0], synthetic_data=True)
    records = {"transformer": [execute.ensure(spec, progress=False)], "declutr": []}
    t1 = tables.table1(records)
    expected = (8 * 80 + 75 + 2 * 70 + 5 * 60) / 16  # 8 accuracies, MRPC (70 + 80) / 2, 2 regressors, STS12-16
    assert t1["reproduced"].iloc[0] == pytest.approx(expected) and t1["reported"].iloc[0] == pytest.approx(72.69)
    assert t1["delta"].iloc[0] == pytest.approx(expected - 73.493125)
    s3 = tables.tableS3(records).set_index(["column", "metric"])
    assert s3.loc[("MRPC", "f1"), "reproduced"] == 80.0 and s3.loc[("STS12", "spearman"), "reported"] == 54.95
    s6 = tables.tableS6(records)
    assert s6["reproduced"].iloc[0] == pytest.approx((8 * 81 + 72 + 2 * 75) / 11) and s6["n_tasks"].iloc[0] == "11"


def test_the_readme_summary_tabulates_every_figure_point_and_marks_missing_ones():
    """Each run of the figures' grid lands in its own cell of the README's figure tables; runs without a record
    are '–'."""
    points = pd.DataFrame(
        {
            "run": ["declutr", "a1_p4_t0.0005", "mlm_f50", "proj_mlp_256", "xbm_512_t0.01"],
            "dev_score": [87.06, 80.5, 71.25, 86.5, 85.25],
        }
    )
    text = "\n".join(summary.figure_markdown(points))
    assert "| A = 1, P = 4 | 80.50 | – |" in text
    assert "| A = 2, P = 2 | – | 87.06 |" in text
    assert "| A = P = 2, tau = 0.05 | 87.06 | – | – |" in text
    assert "| mlm | – | 71.25 | – |" in text
    assert "| mlp | – | 86.50 | – |" in text
    assert "| tau = 0.01 | – | – | 85.25 |" in text
    assert summary.figure_markdown(points.iloc[:0]) == []


def test_the_figures_claims_rest_on_their_grid_points():
    """Figure claims: each cell holds the points the paper plots as one distribution; a missing run leaves its
    claims not run, never decided on fewer points."""
    made = iter(range(10**6))

    def record(score, seed=42):  # a fake record: its own run id, the small profile
        return {
            "metrics": {"stsb_dev_spearman": score / 100},
            "spec": {"seed": seed},
            "run_id": f"{next(made):016x}",
            "profile": "small",
        }

    names = list(grid("small"))
    records = {name: [record(80.0 + 0.1 * (i % 3))] for i, name in enumerate(names)}
    records["declutr"] = [record(86.0), record(86.2, 43), record(86.1, 44)]
    for name in names:
        if name.startswith("a1_"):
            records[name] = [record(70.0 + 0.1 * len(name))]
    cells = tables.figure_cells(records).set_index(["table", "row"])
    assert len(cells.loc[("Figure 2", "A = 1"), "values"].split(";")) == 6
    assert len(cells.loc[("Figure S1", "memory bank"), "values"].split(";")) == 12
    assert cells.loc[("Figure S1", "no memory bank"), "reproduced"] == pytest.approx(86.1)  # the headline's 3 seeds
    empty = pd.DataFrame()
    verdicts = DECLUTR.claims(Build("declutr", "smoke", records=records, tables={"table1": empty}))
    verdicts = verdicts.set_index("claim")
    assert verdicts.loc["multiple-anchors-help", "status"] == "holds"
    assert verdicts.loc["memory-bank-hurts", "status"] == "holds"
    assert verdicts.loc["nonlinear-projection-head-marginal-gain", "status"] == "fails"
    assert verdicts.loc["adjacent-and-subsumed-views-best", "status"] == "inconclusive"  # one seed per view
    assert verdicts.loc["declutr-base-boosts-downstream", "status"] == "not run"
    del records["xbm_512_t0.05"]
    verdicts = DECLUTR.claims(Build("declutr", "smoke", records=records, tables={"table1": empty}))
    assert verdicts.set_index("claim").loc["memory-bank-hurts", "status"] == "not run"


def test_a_profile_object_gives_its_names_grid_and_the_untestable_claims_are_the_papers():
    for profile in ("smoke", "small", "full"):
        for extended in (False, True):
            by_name, by_object = grid(profile, extended), grid(get_profile(profile), extended)
            assert {n: [s.run_id for s in v] for n, v in by_name.items()} == {
                n: [s.run_id for s in v] for n, v in by_object.items()
            }
    assert set(DECLUTR.not_testable) <= {claim["id"] for claim in load_claims("declutr")}


def test_a_figure_is_drawn_only_where_its_grid_points_have_records():
    """The core rows alone (the small profile without --extended) draw Figure 2 only: the backbone's line and the
    DeCLUTR point; no record of a figure row draws nothing."""
    specs = grid("smoke")
    records = {name: [] for name in specs}
    for name, score in (("transformer", 0.80), ("declutr", 0.85)):
        spec = specs[name][0].as_dict()
        records[name] = [{"run_id": specs[name][0].run_id, "spec": spec, "metrics": {"stsb_dev_spearman": score}}]

    def drawn(records):
        built_tables = {"figures": tables.figure_points(records)}
        return [path.name for path in DECLUTR.figures(Build("declutr", "smoke", records=records, tables=built_tables))]

    assert drawn(records) == ["figure2_sampling.png", "figure2_sampling.pdf"]
    assert drawn({name: [] for name in specs}) == []
