"""What differs between profiles is a Profile attribute: the raw profile is the small one on another backbone (its
sizes, its captions), and each caption names the backbone it ran on."""

import pytest

from sentemb.models.backbone import MINILM, RAW_BERT
from sentemb.profiles import PROFILES, get_profile, lr_probes, rounded
from sentemb.spec import PROFILES as SPEC_PROFILES


def test_the_spec_knows_every_profile():
    assert tuple(PROFILES) == SPEC_PROFILES


def test_the_raw_profile_is_the_small_one_on_the_archives_backbone():
    small, raw = get_profile("small"), get_profile("raw")
    assert raw.backbone == RAW_BERT and small.backbone == MINILM
    assert raw.sizes_of == "small" and small.sizes_of == "small" and get_profile("full").sizes_of == "full"
    same = ("max_batch", "eval_every", "analysis_splits", "precision", "headline_seeds", "budgeted")
    assert all(getattr(raw, name) == getattr(small, name) for name in same)
    assert raw.steps == 20 and small.steps == 60  # raw: chosen on STS-B dev (results/simcse/raw/steps_curve.csv)
    assert not raw.committed and raw.compare_with == "small" and RAW_BERT in raw.caveat


def test_captions_name_the_backbone_each_profile_ran_on():
    assert get_profile("small").substitutes() == (  # the committed captions' text
        "backbone all-MiniLM-L6-v2 (already contrastively trained) for BERT/RoBERTa; 60 steps of batch 64 on "
        "the mirror's data; 3 seeds"
    )
    assert get_profile("raw").substitutes().startswith(f"backbone {RAW_BERT} (MLM only) for BERT/RoBERTa")
    assert get_profile("full").substitutes() == "the papers' own backbones, data and settings"


def test_probe_learning_rates_are_exact_multiples():
    assert rounded(3e-5 * 3) == 9e-05 and rounded(3e-5 * 10) == 3e-04
    from papers.simcse.experiments import grid

    rows = grid("small", extended=False)
    assert lr_probes(rows, ("unsup",), "small") == {}  # no multiples: no probes
    probes = lr_probes(rows, ("unsup", "not-a-row"), "raw")
    assert sorted(probes) == ["unsup_lr_x10", "unsup_lr_x3"] and probes["unsup_lr_x3"][0].lr == 9e-05


def test_a_chosen_learning_rate_moves_the_row_and_keeps_its_probe_as_its_first_seed(monkeypatch):
    """With ``lr_chosen`` the row runs at the chosen multiple, every seed; the probes and curves stay where they were
    (made from the rows before the choice), so the chosen probe is the row's seed-42 run; the papers that borrow
    SimCSE's run (SimCSE++, TNCSE's stage 1, the non-contrastive paper) follow its choice: one run id."""
    import dataclasses

    from sentemb import profiles
    from sentemb.paper import get_paper

    monkeypatch.setitem(profiles.PROFILES, "raw", dataclasses.replace(profiles.RAW, lr_chosen=()))
    before = {p: get_paper(p).grid("raw") for p in ("simcse", "simcse_pp", "tncse")}
    chosen = dataclasses.replace(profiles.RAW, lr_chosen=(("simcse/unsup", 10.0), ("simcse_pp/dcl", 3.0)))
    monkeypatch.setitem(profiles.PROFILES, "raw", chosen)
    simcse, simcse_pp, tncse = (get_paper(p).grid("raw") for p in ("simcse", "simcse_pp", "tncse"))
    unsup = before["simcse"]["unsup"]
    assert [s.lr for s in simcse["unsup"]] == [rounded(s.lr * 10) for s in unsup]
    assert simcse["unsup"][0].run_id == before["simcse"]["unsup_lr_x10"][0].run_id == simcse["unsup_lr_x10"][0].run_id
    for name in ("unsup_lr_x3", "unsup_curve_lr_x1", "unsup_curve_lr_x10", "sup"):
        assert [s.run_id for s in simcse[name]] == [s.run_id for s in before["simcse"][name]], name
    assert simcse["unsup_lr_x1"][0].run_id == unsup[0].run_id  # the paper's rate, kept as the x1 probe
    assert [s.run_id for s in simcse_pp["simcse"]] == [s.run_id for s in simcse["unsup"]]  # borrowed: one run
    assert simcse_pp["dcl"][0].run_id == before["simcse_pp"]["dcl_lr_x3"][0].run_id
    assert {s.run_id for s in simcse["unsup"]} <= {s.run_id for s in tncse["simcse"]}  # TNCSE's stage 1


@pytest.mark.parametrize("name", ["raw", "raw-wp8k"])
def test_the_raw_profiles_chosen_rates_are_those_its_committed_probe_tables_chose(name):
    """Every ``lr_chosen`` key names a tuned row of its paper's grid on a raw profile, and equals the multiple
    ``lr_probe.csv`` marks chosen (results/<paper>/<profile>/, once committed); a row whose probe table chose x1 has
    no entry."""
    import pandas as pd

    from sentemb import settings
    from sentemb.paper import get_paper

    raw = get_profile(name)
    for key, multiple in raw.lr_chosen:
        paper, row = key.split("/")
        assert f"{row}_lr_x{multiple:g}" in get_paper(paper).grid(name), key
    for paper in ("simcse", "simcse_pp", "declutr", "tncse"):
        table = settings.REPO_ROOT / "results" / paper / name / "lr_probe.csv"
        if not table.is_file():
            continue
        probes = pd.read_csv(table)
        picked = {f"{paper}/{r['row']}": r["multiple"] for _, r in probes[probes["chosen"]].iterrows()}
        mine = {k: m for k, m in raw.lr_chosen if k.startswith(f"{paper}/")}
        assert mine == {k: m for k, m in picked.items() if m != 1.0 and k not in BORROWED}, paper


BORROWED = {"simcse_pp/simcse"}  # SimCSE's own unsupervised run: its choice is "simcse/unsup"
