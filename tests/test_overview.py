"""The overview (papers/overview): the comparison reuses the papers' runs, its statistics, the archive's coverage."""

import copy
import json
import math

import pytest

from papers.overview import experiments, summary, tables
from sentemb import archive_coverage
from sentemb.paper import get_paper
from sentemb.profiles import get_profile
from sentemb.settings import REPO_ROOT

TEMPLATE = REPO_ROOT / "results" / "runs" / "small"


def _record(shift: float, seed: int) -> dict:
    """A committed SimCSE record with every STS score moved by ``shift`` (Spearman as a fraction)."""
    spec = experiments.grid("small")["SimCSE unsup."][0]
    record = copy.deepcopy(json.loads((TEMPLATE / f"{spec.run_id}.json").read_text()))
    record["spec"]["seed"] = seed
    record["run_id"] = f"fake{seed}{shift}"
    for result in record["metrics"]["tasks"].values():
        if "aggregate" in result:
            for aggregation in ("all", "mean", "wmean"):
                result["aggregate"]["spearman"][aggregation] += shift
        else:
            result["splits"]["test"]["spearman"] += shift
    return record


def test_every_method_is_its_papers_run(monkeypatch):
    monkeypatch.setenv("SENTEMB_RESULTS", str(REPO_ROOT / "results"))  # read only: the scan's best trials pick rows

    for method, specs in experiments.grid("small").items():
        paper, row = experiments.METHODS[method]
        own = get_paper(paper).grid("small", extended=True)[row]
        assert [s.run_id for s in specs] == [s.run_id for s in own]
    assert (
        experiments.grid("small")["SimCSE unsup."][0].run_id
        == get_paper("simcse_pp").grid("small", extended=True)["simcse"][0].run_id
    )  # one shared run


def test_pairwise_finds_a_real_gap_and_corrects_for_the_pairs_by_holm():
    a, b, c = "SimCSE unsup.", "SimCSE++", "TNCSE"  # method names of the grid, the records are synthetic
    sts = {
        a: [_record(0.000 + d, s) for s, d in zip((1, 2, 3), (0.001, -0.001, 0.0))],
        b: [_record(0.020 + d, s) for s, d in zip((1, 2, 3), (0.001, -0.001, 0.0))],
        c: [_record(0.0005 + d, s) for s, d in zip((1, 2, 3), (0.002, -0.001, 0.0))],
    }
    pairs = tables.pairwise(tables.sts_seeds(sts, "all"), "sts", "all").set_index(["method_a", "method_b"])
    assert pairs.loc[(a, b), "difference"] == pytest.approx(-2.0, abs=1e-6)
    assert pairs.loc[(a, b), "significant"] and not pairs.loc[(a, c), "significant"]
    # Holm over the 3 pairs, by hand: (m - i + 1) p_(i), made monotone from the smallest up, capped at 1
    raw = pairs["p_value"].tolist()
    order = sorted(range(len(raw)), key=lambda i: raw[i])
    holm, running = [0.0] * len(raw), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(raw) - rank) * raw[i]))
        holm[i] = running
    assert len(raw) == 3 and pairs["p_corrected"].tolist() == pytest.approx(holm, rel=1e-12)
    assert pairs["significant"].tolist() == [q < 0.05 for q in holm]
    table = tables.sts_comparison(sts)
    avg = table[table["column"] == "Avg."].set_index("row")
    assert avg.loc[b, "reproduced"] - avg.loc[a, "reproduced"] == pytest.approx(2.0, abs=1e-6)
    assert avg.loc[a, "n"] == 3


def test_transfer_and_mteb_averages_are_tested_pairwise_per_evaluation():
    """The per-seed transfer accuracy and MTEB averages of the derived records go through the same Welch tests, each
    evaluation corrected on its own; an MTEB record whose tasks all failed has no average."""

    def transfer(accs):
        return {"result": {"transfer": {"tasks": {f"t{i}": {"acc": a, "devacc": 0.0} for i, a in enumerate(accs)}}}}

    def mteb(scores):
        return {
            "result": {
                "mteb": {
                    "tasks": {
                        f"m{i}": {"status": "ok" if v is not None else "failed", "main_score": v}
                        for i, v in enumerate(scores)
                    }
                }
            }
        }

    found = {
        "A": [transfer([80, 82]), transfer([80.2, 82]), transfer([79.8, 82])],
        "B": [transfer([84, 86]), transfer([84.2, 86]), transfer([83.8, 86])],
        "C": [transfer([70, 70])],
    }
    averages = tables.derived_seeds("transfer", found)
    assert averages["A"] == pytest.approx([81.0, 81.1, 80.9]) and averages["C"] == [70.0]
    pairs = tables.pairwise(averages, "transfer")
    assert len(pairs) == 1 and pairs.loc[0, "evaluation"] == "transfer" and pairs.loc[0, "significant"]
    assert pairs.loc[0, "difference"] == pytest.approx(-4.0) and pairs.loc[0, "n"] == "3 vs 3"  # C: one seed only
    assert tables.derived_seeds("mteb", {"A": [mteb([60, 70]), mteb([None, None])]}) == {"A": [65.0]}


def test_the_protocol_average_is_the_mean_of_the_seeds_averages():
    sts = {"SimCSE unsup.": [_record(0.0, 1), _record(0.01, 2)]}
    table = tables.sts_comparison(sts)
    means = summary.average_cells(table, "mean")["SimCSE unsup."]
    alls = summary.average_cells(table, "all")["SimCSE unsup."]
    assert means.endswith("(2)") and alls.endswith("± 0.71 (2)")  # 0 and +1 point: std 0.71


def test_the_wide_view_of_a_comparison_is_mean_std_n_without_a_reported_number():
    sts = {"SimCSE unsup.": [_record(0.0, 1), _record(0.01, 2)]}
    wide = get_paper("overview").wide(tables.sts_comparison(sts), ("mean", ""))
    assert list(wide.columns) == ["STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R", "Avg."]
    assert wide.loc["SimCSE unsup.", "Avg."].endswith("± 0.71 (2)")  # no " [reported]" suffix


def test_a_coverage_status_outside_the_classes_is_an_error():
    assert archive_coverage.status_class("partly (extended rows)") == "partly"
    with pytest.raises(ValueError, match="starts with none of"):
        archive_coverage.status_class("maybe later")


def test_every_papers_coverage_is_classified():
    counts = archive_coverage.coverage_counts()
    assert len(counts) == len(archive_coverage.titles())
    assert (counts[list(archive_coverage.STATUS_CLASSES)].sum(axis=1) == counts["items"]).all()


def test_the_committed_comparison_has_every_method_on_the_same_evaluator(monkeypatch):
    """Each committed seed of every method has the 7 STS tasks (its own final evaluation or the overview's derived
    record): the comparison's STS table is never missing a seed."""
    monkeypatch.setenv("SENTEMB_RESULTS", str(REPO_ROOT / "results"))  # read only: the scan's best trials pick rows
    from papers.overview.analyses import ANALYSIS, PARAMS, has_sts7
    from sentemb.runs.derived import derived_id

    for method, group in experiments.grid("small").items():
        for spec in group:
            path = TEMPLATE / f"{spec.run_id}.json"
            if path.is_file() and not has_sts7(json.loads(path.read_text())):
                path = TEMPLATE / "derived" / f"{derived_id(spec.run_id, ANALYSIS, PARAMS)}.json"
                assert path.is_file(), f"{method} seed {spec.seed}: no committed 7-task STS record ({path.name})"


def test_methods_sharing_seeds_and_data_order_are_compared_paired(tmp_path, monkeypatch):
    """Two methods trained on the same data with the same seeds move together from seed to seed: the overview tests
    them paired (scipy's ttest_rel), two methods on different data by Welch's test."""
    import json

    from scipy import stats

    from sentemb.report.claims import Seeds

    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path))
    folder = tmp_path / "runs" / "small"
    folder.mkdir(parents=True)
    for method, data in (("a", "wiki"), ("b", "wiki"), ("c", "nli")):
        for seed in (42, 43, 44):
            record = {
                "run_id": f"{method}{seed}",
                "profile": "small",
                "spec": {
                    "seed": seed,
                    "train_data": data,
                    "batch_size": 64,
                    "objective": f"objective_{method}",
                    "objective_params": {},
                },
                "training": {"n_training_rows_available": 100},
            }
            (folder / f"{method}{seed}.json").write_text(json.dumps(record))
    a, b = [80.3, 81.35, 79.28], [80.0, 81.0, 79.0]
    values = {m: Seeds(v, [f"{m}{s}" for s in (42, 43, 44)], "small") for m, v in (("a", a), ("b", b), ("c", b))}
    pairs = tables.pairwise(values, "sts").set_index(["method_a", "method_b"])
    assert pairs.loc[("a", "b"), "test"] == "paired t two-sided (paired: the same seed and data order)"
    assert pairs.loc[("a", "b"), "p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)
    assert pairs.loc[("a", "b"), "n"] == "3 pairs"
    assert pairs.loc[("a", "c"), "test"].startswith("Welch two-sided (independent:")
    assert pairs.loc[("a", "c"), "p_value"] == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-12)


def test_claims_by_backbone_sets_each_verdict_beside_the_other_backbones_and_marks_the_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path))
    assert tables.claims_by_backbone("small").empty  # small is compared with nothing
    assert tables.claims_by_backbone("raw").empty  # no claims yet on either side

    def write(profile, rows):
        folder = tmp_path / "simcse" / profile
        folder.mkdir(parents=True)
        columns = ["paper", "claim", "status", "direction_status", "size_status"]
        lines = [",".join(columns)] + [",".join(["simcse", c, d, d, s]) for c, d, s in rows]
        (folder / "claims.csv").write_text("\n".join(lines) + "\n")

    write("small", [("a", "fails", "fails"), ("b", "holds", "size fails"), ("c", "inconclusive", "inconclusive")])
    write("raw", [("a", "holds", "size holds"), ("b", "holds", "size fails")])
    table = tables.claims_by_backbone("raw").set_index("claim")
    assert list(table.columns) == [
        "paper", "direction_status small", "size_status small", "direction_status raw", "size_status raw", "changed"
    ]  # fmt: skip
    assert table.loc["a", "direction_status raw"] == "holds" and table.loc["a", "changed"]
    assert not table.loc["b", "changed"]
    assert table.loc["c", "direction_status raw"] == "no record" and table.loc["c", "changed"]


def test_methods_by_backbone_sets_each_rows_seeds_on_both_backbones_beside_their_untrained_mean_pooling(monkeypatch):
    """Each row's 7-STS average on the raw profile and on small (its compare_with) from the run store, mean over the
    seeds with records, and its difference from the same backbone's untrained mean pooling; small compares nothing."""
    from papers.overview import experiments as ex
    from sentemb.paper import get_paper
    from sentemb.runs import store

    assert tables.methods_by_backbone("small").empty
    rows = {
        "untrained, mean pooling": ("simcse", "backbone_avg"),
        "SimCSE": ("simcse", "unsup"),
        "sup": ("simcse", "sup"),
    }
    monkeypatch.setattr(ex, "BACKBONE_ROWS", rows)  # SimCSE's rows only (the non-contrastive grid reads the store)
    scores = {
        ("small", "backbone_avg"): [78.0],
        ("small", "unsup"): [75.0, 76.0, 77.0],
        ("raw", "backbone_avg"): [40.0],
    }
    scores[("raw", "unsup")] = [44.0, 46.0]  # one seed without a record

    def fake(profile, on_broken="raise"):
        grids = {paper: get_paper(paper).grid(profile, extended=True) for paper in ("simcse",)}
        return [
            {"run_id": spec.run_id, "metrics": {"summary": {"Avg.": value}}}
            for (name, row), values in scores.items()
            if name == profile
            for spec, value in zip(grids["simcse"][row], values)
        ]

    monkeypatch.setattr(store, "all_records", fake)
    table = tables.methods_by_backbone("raw").set_index("row")
    assert list(table["method"]) == list(rows)
    assert table.loc["unsup", "small mean"] == pytest.approx(76.0) and table.loc["unsup", "small n"] == 3
    assert table.loc["unsup", "raw mean"] == pytest.approx(45.0) and table.loc["unsup", "raw n"] == 2
    assert table.loc["unsup", "raw std"] == pytest.approx(2**0.5)
    assert table.loc["unsup", "raw minus untrained mean pooling"] == pytest.approx(5.0)
    assert table.loc["unsup", "small minus untrained mean pooling"] == pytest.approx(-2.0)
    assert table.loc["sup", "raw n"] == 0 and math.isnan(table.loc["sup", "raw mean"])


def test_pretraining_curve_has_a_point_per_archive_backbone_and_milestone_with_its_tokens(monkeypatch, tmp_path):
    """The raw profile's backbone (an archive-made folder with its pretraining record) gives a point per method with
    the seeds in its store; a milestone record gives its untrained rows (one run each), a milestone already a
    profile's backbone is not counted twice; MiniLM's untrained mean pooling is the reference; small has no curve;
    the figure renders."""
    import json

    from papers.overview import figures, pretraining_curve
    from sentemb.paper import get_paper
    from sentemb.runs import store

    assert pretraining_curve.pretraining_curve("small").empty
    scores = {("small", "backbone_avg"): [78.0], ("raw", "backbone_avg"): [40.0], ("raw", "unsup"): [44.0, 46.0]}

    def fake(profile, on_broken="raise"):
        grid = get_paper("simcse").grid(profile, extended=True)
        return [
            {"run_id": spec.run_id, "metrics": {"summary": {"Avg.": value}}}
            for (name, row), values in scores.items()
            if name == profile
            for spec, value in zip(grid[row], values)
        ]

    monkeypatch.setattr(store, "all_records", fake)
    raw_run = pretraining_curve.archive_backbone(get_profile("raw").backbone)["run_id"]
    for name, run_id, tokens in (("later", "m1", 90_000_000), ("same", raw_run, 1)):
        (tmp_path / f"{name}.json").write_text(
            json.dumps(
                {
                    "pretraining": {"run_id": run_id, "tokens_seen": tokens, "wall_seconds": 3600, "torch_threads": 2},
                    "heldout_loss": 3.5,
                    "untrained_sts7": {
                        "mean pooling": {"sts7": 55.0, "run_id": "a"},
                        "[CLS]": {"sts7": 41.0, "run_id": "b"},
                    },
                }
            )
        )
    table = pretraining_curve.pretraining_curve("raw", tmp_path)
    mean_pooling = table[table["method"] == "untrained, mean pooling"]
    assert list(mean_pooling["backbone"]) == [get_profile("raw").backbone, "later"]  # in order of tokens
    assert list(mean_pooling["mean"]) == [40.0, 55.0]
    assert mean_pooling["cpu_hours"].iloc[1] == pytest.approx(2.0)
    unsup = table[table["method"] == "SimCSE unsup."].iloc[0]
    assert unsup["n"] == 2 and unsup["mean"] == pytest.approx(45.0) and unsup["std"] == pytest.approx(2**0.5)
    assert set(table[table["backbone"] == "later"]["method"]) == {"untrained, mean pooling", "untrained, [CLS]"}
    reference = pretraining_curve.reference("raw")
    assert list(reference["backbone"]) == [get_profile("small").backbone] and list(reference["mean"]) == [78.0]
    assert pretraining_curve.reference("small").empty
    paths = figures.figure_pretraining_curve(table, reference, "raw", tmp_path / "figures")
    assert all(p.stat().st_size > 0 for p in paths)
