"""What differs between profiles is a Profile attribute: the raw profile is the small one on another backbone (its
sizes, its captions), and each caption names the backbone it ran on."""

from sentemb.models.backbone import MINILM, RAW_BERT
from sentemb.profiles import PROFILES, get_profile, lr_probes, rounded
from sentemb.spec import PROFILES as SPEC_PROFILES


def test_the_spec_knows_every_profile():
    assert tuple(PROFILES) == SPEC_PROFILES


def test_the_raw_profile_is_the_small_one_on_the_archives_backbone():
    small, raw = get_profile("small"), get_profile("raw")
    assert raw.backbone == RAW_BERT and small.backbone == MINILM
    assert raw.sizes_of == "small" and small.sizes_of == "small" and get_profile("full").sizes_of == "full"
    same = ("steps", "max_batch", "eval_every", "analysis_splits", "precision", "headline_seeds", "budgeted")
    assert all(getattr(raw, name) == getattr(small, name) for name in same)
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
