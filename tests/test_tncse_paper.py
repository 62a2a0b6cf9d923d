"""TNCSE's paper folder: the grid in the paper's terms (stage-1 pairs by run id, the small profile's lr and length,
the lr probe), the coverage of every table and figure, Figure 2 and Figure 5's LayerNorm removal."""

import dataclasses

import numpy as np
import pytest
import torch

from papers.simcse.experiments import grid as simcse_grid
from papers.tncse import figures, tables
from papers.tncse.experiments import CORE, PAPER_LR, SMALL_LR, SMALL_MAX_LEN, STAGE2, grid
from sentemb import settings
from sentemb.analysis.layernorm_removal import encoder_layernorms, layernorm_removal, without_last_layernorms
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.tensor_norm import tn_surface
from sentemb.paper import Build, get_paper
from sentemb.profiles import get_profile

PAPER = get_paper("tncse")


def test_stage2_rows_start_from_the_simcse_grid_runs_by_id():
    small, unsup = grid("small"), simcse_grid("small")["unsup"]
    ids = [s.run_id for s in unsup]
    assert [s.run_id for s in small["simcse"]] == ids  # one shared record with papers/simcse
    for name in ("tncse", "ensemble"):
        assert [s.init_runs for s in small[name]] == [(ids[0], ids[1]), (ids[1], ids[2]), (ids[2], ids[0])]
        assert [s.seed for s in small[name]] == [42, 43, 44]
    assert {s.objective for s in small["ensemble"]} == {"none"}
    for name in set(STAGE2) - {"tncse_lr_paper", "ensemble"}:
        assert all(s.lr == SMALL_LR and s.max_len == SMALL_MAX_LEN for s in small[name]), name
    probe = small["tncse_lr_paper"][0]
    assert probe.lr == PAPER_LR == 1e-6 and probe.max_len == 64 and probe.steps == 60
    full = grid("full")
    assert all(s.lr == PAPER_LR and s.max_len == 64 and s.steps == 1_000_000 // 64 for s in full["tncse"])
    assert "tncse_lr_paper" not in full and "tncse_lr_paper" not in grid("smoke")


def test_on_every_profile_but_the_committed_small_one_each_seed_has_its_own_stage1_pair():
    full, unsup = grid("full"), simcse_grid("full")["unsup"]
    seeds = [s.seed for s in unsup]
    assert [s.seed for s in full["simcse"]] == seeds + [s + 100 for s in seeds]  # every encoder of every pair
    ids = {s.seed: s.run_id for s in full["simcse"]}
    assert [s.init_runs for s in full["tncse"]] == [(ids[s], ids[s + 100]) for s in seeds]
    used = [run for s in full["tncse"] for run in s.init_runs]
    assert len(used) == len(set(used)) == 2 * len(seeds)  # disjoint: independent TNCSE seeds
    assert {s.run_id for s in full["simcse"][: len(seeds)]} == {s.run_id for s in unsup}  # shared with SimCSE's grid
    assert not get_profile("small").disjoint_stage1 and get_profile("raw").disjoint_stage1


@pytest.mark.parametrize("profile", ["smoke", "small", "full"])
def test_the_matched_simcse_differs_from_tncse_single_by_the_l_tn_weight_only(profile):
    """Table 5's claim compares runs that differ by L_TN only: the same seeds, data, steps, batch, lr, pooler and
    objective, with ``tn_weight`` 0 against TNCSE-Single's default 1 (left out of its spec, so its run ids and
    committed records stay)."""
    runs = grid(profile)
    single, matched = runs["tncse_single"], runs["simcse_matched"]
    assert [s.seed for s in matched] == [s.seed for s in single] and len(single) >= 2
    for a, b in zip(single, matched):
        assert b.objective == a.objective == "tncse_single"
        differing = {
            k
            for k in a.objective_params.keys() | b.objective_params.keys()
            if a.objective_params.get(k) != b.objective_params.get(k)
        }
        assert differing == {"tn_weight"} and b.objective_params["tn_weight"] == 0.0
        assert "tn_weight" not in a.objective_params
        assert dataclasses.replace(b, objective_params=a.objective_params) == a  # every other field
        assert b.run_id != a.run_id
    if profile == "small":
        from conftest import require_committed_small_records

        require_committed_small_records("tncse", [s.run_id for s in single])


def test_table5_shows_both_simcse_rows_and_the_claim_compares_the_matched_one():
    """Both SimCSE rows stand next to the paper's SimCSE; only the matched one answers to the claim's "SimCSE" cell."""
    import json

    from sentemb.report.claim_cells import load_claims, lookup_seeds

    folder = settings.REPO_ROOT / "results" / "runs" / "small"
    records = {}
    for name in tables.TABLE5_COLUMNS:
        files = [folder / f"{spec.run_id}.json" for spec in grid("small")[name]]
        if not all(f.is_file() for f in files):
            pytest.skip(f"no committed small-profile records of {name} yet")
        records[name] = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    table = tables.table5(records).set_index("run")
    assert table.loc["simcse_matched", "column"] == "SimCSE" and table.loc["tncse_single", "column"] == "TNCSE-Single"
    assert table.loc["simcse_sickr", "column"] == tables.TABLE5_COLUMNS["simcse_sickr"][0]
    assert table.loc["simcse_sickr", "reported"] == table.loc["simcse_matched", "reported"] == 77.75
    claim = next(c for c in load_claims("tncse") if c["id"] == "single-encoder-tn-beats-simcse")
    cells = table.reset_index()  # the claims read the table as it is, the paper's row in reported_row
    assert lookup_seeds(cells, claim["right"]) == [float(v) for v in table.loc["simcse_matched", "values"].split(";")]
    assert lookup_seeds(cells, claim["left"]) == [float(v) for v in table.loc["tncse_single", "values"].split(";")]


def test_the_official_settings_carry_into_the_spec():
    spec = grid("full")["tncse"][0]
    assert spec.dropout == 0.00025 and spec.weight_decay == 0.01 and spec.lr_schedule == "constant"
    assert spec.grad_clip == 0.0 and spec.batch_size == 64 and spec.eval_every == 100 and spec.precision == "fp32"
    assert spec.train_data == "wiki1m_for_simcse+sickr" and spec.pooler == "cls_before_pooler"
    assert spec.objective_params == {
        "clamp_negative_cosine": True,
        "halve_norm_term": False,
        "icnce": True,
        "ictn": True,
        "nce": True,
        "temperature": 0.05,
    }
    assert grid("small")["tncse"][0].train_data == "wiki_sentences_combined+sickr"
    assert grid("small")["tncse_wiki"][0].train_data == "wiki_sentences_combined"


def test_the_small_profile_without_extended_keeps_the_core_rows():
    assert set(PAPER.grid("small")) == set(grid("small", extended=False)) == set(CORE)
    assert set(PAPER.grid("smoke")) == set(grid("smoke"))
    assert {n: [s.run_id for s in v] for n, v in PAPER.grid(get_profile("full")).items()} == {
        n: [s.run_id for s in v] for n, v in grid("full").items()
    }


def test_every_table_and_figure_has_a_status():
    table = PAPER.coverage()
    assert len(table) == 13 and table["status"].str.len().gt(0).all()


def test_an_item_whose_extended_rows_have_no_records_says_so():
    record = {"run_id": "x"}
    records = {name: [] for name in grid("smoke")}
    records.update(simcse=[record], ensemble=[record], tncse=[record], simcse_sickr=[record])
    table = PAPER.coverage(Build("tncse", "smoke", records=records, derived={"mteb_simcse": {}})).set_index("item")
    why = table["where / why"]
    assert table.loc["Table 5", "status"] == "partly" and "tncse_single" in why["Table 5"]
    assert table.loc["Table 4", "status"] == "partly" and "loss_ictn" in why["Table 4"]
    assert table.loc["Table 2", "status"] == "partly" and "no records yet for tncse" in why["Table 2"]
    records.update(simcse_sickr=[], tncse_single=[])
    assert (
        PAPER.coverage(Build("tncse", "smoke", records=records)).set_index("item").loc["Table 5", "status"] == "not run"
    )
    for name in records:
        records[name] = [record]
    full = PAPER.coverage(Build("tncse", "smoke", records=records, derived={"mteb_simcse": {}, "mteb_tncse": {}}))
    full = full.set_index("item")
    assert full.loc["Table 4", "status"] == PAPER.coverage_items["Table 4"][0]


def test_the_claims_that_cannot_be_tested_offline_are_not_run_with_their_reason():
    import pandas as pd

    from sentemb.report.claim_cells import load_claims

    path = settings.REPO_ROOT / "results" / "tncse" / "small" / "claims.csv"
    if not path.is_file():
        pytest.skip("no committed small-profile claims yet")
    claims = pd.read_csv(path, dtype=str, keep_default_na=False).set_index("claim")
    assert set(PAPER.not_testable) <= {c["id"] for c in load_claims("tncse")}
    for claim, reason in PAPER.not_testable.items():
        assert (claims.loc[claim, "status"], claims.loc[claim, "detail"]) == ("not run", reason), claim


def test_figure2_is_eq3(tmp_path, monkeypatch):
    paths = figures.figure2("smoke", tmp_path)
    assert {p.suffix for p in paths} == {".png", ".pdf"} and all(p.stat().st_size > 5000 for p in paths)
    assert tn_surface(1.0, 1.0) == 0.0 and tn_surface(2.0, -1.0) == pytest.approx(1.0)


def test_layernorm_removal_replaces_the_last_k_and_leaves_the_model_alone():
    encoder = SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=0)
    norms = encoder_layernorms(encoder.backbone)
    assert len(norms) == 4  # 2 layers x (attention, feed-forward)
    modified = without_last_layernorms(encoder, 3)
    kinds = [type(getattr(parent, name)).__name__ for parent, name in encoder_layernorms(modified.backbone)]
    assert kinds == ["LayerNorm"]  # the remaining one; the other three are identities now
    assert all(isinstance(getattr(p, n), torch.nn.LayerNorm) for p, n in norms)  # the original is untouched
    sentences = ["a man is playing a guitar .", "the cat sleeps on the mat ."]
    unchanged = without_last_layernorms(encoder, 0)
    assert np.array_equal(unchanged.encode(sentences), encoder.encode(sentences))
    result = layernorm_removal(encoder, sentences, range(7), synthetic=True)
    assert [r["removed_layernorms"] for r in result["rows"]] == [0, 1, 2, 3, 4] and result["n_layernorms"] == 4
    assert all(r["mean_cls_norm"] > 0 for r in result["rows"])


def test_every_table4_row_runs_every_headline_seed():
    """Each Table 4 row is a cell of the argmax claim ``full-loss-best``: one-seed cells would leave it inconclusive."""
    small = grid("small")
    for name in (n for n in small if n.startswith("loss_")):
        assert [s.seed for s in small[name]] == [42, 43, 44], name
    assert len(grid("small")["tncse_lr_paper"]) == 1


def test_figure4_is_the_same_bytes_at_every_execution(tmp_path):
    """Seaborn jitters strip plots with numpy's global RNG: a jittered Figure 4 changed at every notebook run."""
    import pandas as pd

    rows = [
        {
            "column": "Avg.",
            "row": label,
            "seeds": "42;43;44",
            "values": ";".join(str(v + d) for d in (0, 0.1, 0.2)),
            "run_ids": f"{name}42;{name}43;{name}44",
        }
        for (name, (label, _)), v in zip(tables.TABLE1_ROWS.items(), (75.8, 75.9, 75.7))
    ]
    table1 = pd.DataFrame(rows)
    png = lambda paths: next(p for p in paths if p.suffix == ".png").read_bytes()  # noqa: E731
    first = png(figures.figure4(table1, "smoke", tmp_path))
    np.random.seed(None)  # whatever the global RNG holds
    assert png(figures.figure4(table1, "smoke", tmp_path)) == first
