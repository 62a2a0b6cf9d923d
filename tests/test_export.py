"""`sentemb export`: a run's model as a sentence-transformers directory that encodes to the archive's embeddings."""

import json

import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer

from sentemb import cli
from sentemb.errors import SentembError
from sentemb.export import sentence_transformers as st_export
from sentemb.models.encoder import SentenceEncoder
from sentemb.models.summed_encoders import SummedEncoders
from sentemb.runs import execute
from sentemb.spec import RunSpec

SENTENCES = [
    "A man is playing a guitar.",
    "a short one",
    "Stocks fell sharply on Monday after the report.",
    "The quick brown fox jumps over the lazy dog while the farmer sleeps in the barn nearby.",
] * 3
TINY = dict(
    profile="smoke",
    backbone="tiny-random-bert",
    train_data="wiki_sentences_combined",
    steps=4,
    batch_size=8,
    eval_every=2,
    lr=1e-3,
    final_eval="stsb_dev",
    synthetic_data=True,
)


@pytest.fixture(autouse=True)
def modules_cache(tmp_path, monkeypatch):
    """transformers copies a directory's custom module (TNCSE's AddedEncoder) into its modules cache: keep it in tmp."""
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "hf_modules"))


@pytest.fixture(scope="module")
def three_layers(tmp_path_factory):
    """A random 3-layer BERT directory (tiny-random-bert has 2 layers, where first-last and top-2 averaging
    coincide)."""
    from transformers import BertModel

    tiny = SentenceEncoder.from_name("tiny-random-bert", "cls", seed=3)
    config = tiny.backbone.config.__class__(**{**tiny.backbone.config.to_dict(), "num_hidden_layers": 3})
    torch.manual_seed(3)
    directory = tmp_path_factory.mktemp("three_layers")
    BertModel(config).save_pretrained(directory)
    tiny.tokenizer.save_pretrained(directory)
    return str(directory)


def _loaded(directory, trust=False):
    return SentenceTransformer(str(directory), device="cpu", trust_remote_code=trust, local_files_only=True)


@pytest.mark.parametrize("pooler", ["cls_before_pooler", "cls", "avg", "avg_first_last", "avg_top2"])
def test_every_pooler_exports_to_the_same_embeddings(pooler, tmp_path, three_layers):
    encoder = SentenceEncoder.from_name(three_layers, pooler)
    result = st_export.export(encoder, tmp_path / "out", "card: {max_abs_difference} over {n_probes}")
    assert result["max_abs_difference"] <= 1e-5 and not result["trust_remote_code"]
    theirs = _loaded(tmp_path / "out").encode(SENTENCES, batch_size=5)
    np.testing.assert_allclose(theirs, encoder.encode(SENTENCES), atol=1e-5, rtol=0)
    assert (tmp_path / "out" / "README.md").read_text().startswith("card: ")
    assert "{max_abs_difference}" not in (tmp_path / "out" / "README.md").read_text()


def test_the_poolers_are_told_apart(three_layers):
    """The check is not vacuous: the five poolers give five different embeddings of the same backbone."""
    encoders = {
        p: SentenceEncoder.from_name(three_layers, p)
        for p in ("cls_before_pooler", "cls", "avg", "avg_first_last", "avg_top2")
    }
    vectors = {p: e.encode(SENTENCES) for p, e in encoders.items()}
    names = list(vectors)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert np.abs(vectors[a] - vectors[b]).max() > 1e-3, (a, b)


def test_a_sum_of_encoders_exports_with_its_added_encoder_module(tmp_path):
    model = SummedEncoders([SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=s) for s in (1, 2)])
    result = st_export.export(model, tmp_path / "sum", "card")
    assert result["trust_remote_code"]
    modules = json.loads((tmp_path / "sum" / "modules.json").read_text())
    assert [m["type"].rsplit(".", 1)[-1] for m in modules] == ["Transformer", "Pooling", "AddedEncoder"]
    assert (tmp_path / "sum" / "st_added_encoder.py").is_file()
    theirs = _loaded(tmp_path / "sum", trust=True).encode(SENTENCES)
    np.testing.assert_allclose(theirs, model.encode(SENTENCES), atol=1e-5, rtol=0)
    one = model.members[0].encode(SENTENCES)
    assert np.abs(theirs - one).max() > 1e-3  # the second encoder is really added
    with pytest.raises(ValueError, match="trust_remote_code"):
        _loaded(tmp_path / "sum", trust=False)


def test_a_wrong_export_is_caught_and_writes_nothing(tmp_path, monkeypatch):
    encoder = SentenceEncoder.from_name("tiny-random-bert", "cls", seed=3)
    original = st_export._modules

    def without_the_mlp(enc, work):
        return original(enc, work)[:-1]  # drops the test-time MLP (Dense)

    monkeypatch.setattr(st_export, "_modules", without_the_mlp)
    with pytest.raises(SentembError, match="away from the archive's model"):
        st_export.export(encoder, tmp_path / "out", "card")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []  # no scratch left behind


def test_an_existing_directory_is_never_overwritten(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("keep")
    with pytest.raises(SentembError, match="never overwrites"):
        st_export.export(SentenceEncoder.from_name("tiny-random-bert", "avg"), tmp_path / "out", "card")
    assert (tmp_path / "out" / "mine.txt").read_text() == "keep"


@pytest.mark.slow
def test_the_command_exports_recorded_runs_with_their_model_card(tmp_path, capsys):
    """One encoder (unsup. SimCSE), the test-time MLP (sup. SimCSE with the cls pooler) and TNCSE's two encoders,
    each from a smoke run's record, loaded back by sentence-transformers and equal to the archive's model."""
    specs = {
        "unsup": RunSpec(**TINY, objective="simcse_unsup", pooler="cls_before_pooler"),
        "sup": RunSpec(**{**TINY, "train_data": "snli_devtest_for_simcse"}, objective="simcse_sup", pooler="cls"),
        "tncse": RunSpec(**TINY, objective="tncse", pooler="cls_before_pooler", max_len=16),
    }
    for name, spec in specs.items():
        record = execute.ensure(spec, progress=False)
        out = tmp_path / name
        assert cli.main(["export", "--run", spec.run_id, "--out", str(out)]) == 0
        assert "equal to the archive's embeddings" in capsys.readouterr().out
        model, _ = execute.run_model(record, torch.device("cpu"))
        theirs = _loaded(out, trust=name == "tncse").encode(SENTENCES)
        np.testing.assert_allclose(theirs, model.encode(SENTENCES), atol=1e-5, rtol=0)
        card = (out / "README.md").read_text()
        assert record["run_id"] in card and spec.objective in card
        assert f"{100 * record['metrics']['stsb_dev_spearman']:.2f}" in card
        assert all(digest in card for digest in record["provenance"]["data_sha256"].values())
        assert str(record["provenance"]["commit"]) in card
        assert ("trust_remote_code=True" in card) == (name == "tncse")
    assert cli.main(["export", "--run", specs["unsup"].run_id, "--out", str(tmp_path / "unsup")]) == 2
    assert "never overwrites" in capsys.readouterr().err
    assert cli.main(["export", "--run", "0123456789abcdef"]) == 2
    assert "sentemb runs --profile" in capsys.readouterr().err


def test_the_model_card_names_tncse_singles_matched_simcse():
    import json

    from sentemb import settings
    from sentemb.export.model_card import model_card

    record = json.loads((settings.REPO_ROOT / "results/runs/small/51368f96cd0a11e9.json").read_text())
    assert record["spec"]["objective_params"]["tn_weight"] == 0.0
    assert "SimCSE matched to TNCSE-Single (no L_TN)" in model_card(record, trust_remote_code=False)


def test_every_training_objective_names_the_paper_a_model_card_cites():
    from sentemb.objectives.registry import TRAINING_OBJECTIVES

    assert all(cls.reference for cls in TRAINING_OBJECTIVES.values())
