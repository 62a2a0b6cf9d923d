"""The archive's own backbones (``shared/models/<name>``): a finished pretraining run is published with its MANIFEST and
model card, loads by name in fp32 with its seeded pooler and its trained MLM head, is sha256-checked at every load,
never changes under its name; the GPU script's run and import work end to end at tiny scale; and every committed
backbone matches its MANIFEST."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from conftest import needs_mirror

from sentemb import settings
from sentemb.errors import ConfigError, SentembError
from sentemb.models.backbone import backbone_revision, checkpoint_mlm_head, read_manifest
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.masked_lm import tied_mlm_head
from sentemb.pretrain.configs import PretrainConfig
from sentemb.pretrain.publish import publish
from sentemb.pretrain.run import pretrain

NAME = "sentemb-test-tiny"
TINY = PretrainConfig(size="tiny", steps=12, batch_size=8, lr=5e-3, warmup=2, eval_every=4, heldout_sequences=16)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, pretrain_cache):
    root = tmp_path_factory.mktemp("archive-backbones")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SENTEMB_CACHE", str(pretrain_cache))
        record = pretrain(TINY, root / "run")
    return root / "run", record


@pytest.fixture
def models(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTEMB_MODELS", str(tmp_path / "models"))
    return tmp_path / "models"


@needs_mirror
def test_the_kept_weights_are_those_of_the_lowest_heldout_loss(finished_run):
    _, record = finished_run
    step, loss = min(record["heldout_loss"], key=lambda point: point[1])
    assert record["kept"] == {"step": step, "heldout_loss": loss, "rule": "the lowest held-out loss"}


@needs_mirror
def test_a_published_backbone_has_its_manifest_and_card_and_loads_in_fp32_without_random_draws(finished_run, models):
    run_dir, record = finished_run
    folder = publish(run_dir, NAME)
    manifest = read_manifest(folder)
    assert manifest["weights_sha256"] == record["weights_sha256"] == manifest["files"]["model.safetensors"]
    assert {"config.json", "record.json", "README.md", "tokenizer.json"} <= set(manifest["files"])
    card = (folder / "README.md").read_text()
    assert record["command"] in card and f"{record['tokens_seen']:,} tokens" in card and "held out" in card
    threads = record["provenance"]["torch_threads"]
    assert f"{threads} torch threads, {record['wall_seconds'] * threads / 3600:.2f} CPU-hours" in card
    assert backbone_revision(NAME) == f"sha256:{record['weights_sha256']}"

    torch.manual_seed(0)
    first = SentenceEncoder.from_name(NAME, "cls")
    torch.manual_seed(1)  # a load draws nothing: the pooler is in the checkpoint
    second = SentenceEncoder.from_name(NAME, "cls")
    assert all(p.dtype == torch.float32 for p in first.backbone.parameters())
    for (name, a), b in zip(first.backbone.state_dict().items(), second.backbone.state_dict().values()):
        assert torch.equal(a, b), name
    embeddings = first.encode(["a cat sat on the mat.", "stocks fell sharply."])
    assert embeddings.shape == (2, 64)


@needs_mirror
def test_the_trained_mlm_head_is_the_checkpoints_and_its_decoder_is_tied(finished_run, models):
    publish(finished_run[0], NAME)
    encoder = SentenceEncoder.from_name(NAME, "avg")
    head = tied_mlm_head(encoder)
    trained = checkpoint_mlm_head(NAME)
    assert torch.equal(head.transform.dense.weight, trained["transform.dense.weight"])
    assert torch.equal(head.bias, trained["bias"]) and head.bias.abs().sum() > 0
    assert head.decoder.weight is encoder.backbone.get_input_embeddings().weight
    assert checkpoint_mlm_head("all-MiniLM-L6-v2") == {}  # MiniLM ships no head: a fresh one


@needs_mirror
def test_a_name_never_changes_weights_and_a_changed_file_is_refused(finished_run, models, tmp_path):
    run_dir, _ = finished_run
    folder = publish(run_dir, NAME)
    assert publish(run_dir, NAME) == folder  # the same weights again: nothing changes
    other = tmp_path / "other"
    other.mkdir()
    (other / "model").mkdir()
    for path in (run_dir / "model").iterdir():
        (other / "model" / path.name).write_bytes(path.read_bytes())
    weights = other / "model" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-2] + b"  ")
    record = json.loads((run_dir / "record.json").read_text())
    from sentemb.data.files import sha256_of

    (other / "record.json").write_text(json.dumps({**record, "weights_sha256": sha256_of(weights)}))
    with pytest.raises(SentembError, match="never reused"):
        publish(other, NAME)
    (folder / "model.safetensors").write_bytes(weights.read_bytes())
    with pytest.raises(ConfigError, match="does not match its MANIFEST"):
        SentenceEncoder.from_name(NAME, "avg")


def test_an_unpublished_or_misnamed_backbone_says_how_to_make_it(models):
    with pytest.raises(ConfigError, match="pretrain .* --publish sentemb-nothing"):
        SentenceEncoder.from_name("sentemb-nothing", "avg")
    with pytest.raises(ConfigError, match="use 'sentemb-'"):
        publish(models, "MyModel")
    with pytest.raises(SentembError, match="no finished pretraining run"):
        publish(models, "sentemb-x")


def _gpu_script():
    import importlib.util

    path = settings.REPO_ROOT / "benchmarks" / "gpu_pretrain.py"
    spec = importlib.util.spec_from_file_location("gpu_pretrain", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_mirror
@pytest.mark.slow
def test_the_gpu_script_runs_imports_and_publishes_at_tiny_scale(pretrain_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("SENTEMB_CACHE", str(pretrain_cache))  # the packed text
    script = _gpu_script()
    run = [
        "run", str(tmp_path / "out"), "--tokenizer", "all-MiniLM-L6-v2", "--size", "tiny", "--probe-sizes", "tiny",
        "--probe-steps", "2", "--lrs", "1e-3", "5e-3", "--batch-size", "8", "--budget-s", "1", "--min-steps", "10",
        "--max-steps", "10", "--eval-every", "5", "--heldout-sequences", "8", "--same-process",
    ]  # fmt: skip
    assert script.main(run) == 0  # here one after another; on the GPU each a child process, side by side
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["steps_rule"]["steps"] == 10 and len(summary["records"]) == 2
    losses = {r["config"]["lr"]: r["kept"]["heldout_loss"] for r in summary["records"]}
    assert summary["chosen"]["lr"] == min(losses, key=losses.get)
    assert all(p.stat().st_size <= script.PART_BYTES for p in (tmp_path / "out").glob("weights.part*"))
    from sentemb import cli

    for record in summary["records"]:  # each child's command line names exactly its run's settings
        config = PretrainConfig(**record["config"])
        args = cli.build_parser().parse_args(script.pretrain_command(config, "all-MiniLM-L6-v2")[3:])
        parsed = PretrainConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(PretrainConfig)})
        assert (parsed, args.tokenizer) == (config, "all-MiniLM-L6-v2")  # every setting, --config as the size
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "here"))  # the import runs where the run's cache is not
    monkeypatch.setenv("SENTEMB_MODELS", str(tmp_path / "models"))
    assert script.main(["import", str(tmp_path / "out"), "--name", NAME, "--results", str(tmp_path / "results")]) == 0
    assert read_manifest(tmp_path / "models" / NAME)["pretraining_run_id"] == summary["chosen"]["run_id"]
    assert len(list((tmp_path / "results").glob("gpu_pretrain_*.json"))) == 1


def test_every_committed_backbone_matches_its_manifest():
    committed = sorted(p for p in (settings.REPO_ROOT / "shared" / "models").glob("sentemb-*") if p.is_dir())
    if not committed:
        pytest.skip("no backbone committed yet")
    from sentemb.data.files import sha256_of

    for folder in committed:
        manifest = read_manifest(folder)
        assert manifest["name"] == folder.name
        for name, sha in manifest["files"].items():
            assert sha256_of(folder / name) == sha, f"{folder.name}/{name}"
        record = json.loads((folder / "record.json").read_text())
        assert manifest["files"]["model.safetensors"] == record["weights_sha256"]  # the weights its record made


COMMITTED = sorted(p.name for p in (settings.REPO_ROOT / "shared" / "models").glob("sentemb-*") if p.is_dir())


def test_the_raw_backbone_is_committed():
    from sentemb.models.backbone import RAW_BERT

    assert RAW_BERT in COMMITTED


@pytest.mark.parametrize("name", COMMITTED)
def test_each_committed_backbone_loads_as_an_encoder_with_its_own_vocabulary(name):
    encoder = SentenceEncoder.from_name(name, "avg")  # checks every file against MANIFEST.json
    record = json.loads((settings.REPO_ROOT / "shared" / "models" / name / "record.json").read_text())
    config = encoder.backbone.config
    assert (config.num_hidden_layers, config.hidden_size) == (4, 256)
    assert len(encoder.tokenizer) == record["tokenizer"].get("size", config.vocab_size) == config.vocab_size
    vectors = encoder.encode(["A man is playing a guitar.", "The stock market fell sharply."], batch_size=2)
    assert vectors.shape == (2, 256) and torch.isfinite(torch.as_tensor(vectors)).all()


@needs_mirror
@pytest.mark.slow
def test_a_raw_profile_run_starts_from_the_published_backbone_and_records_its_sha256(
    finished_run, tmp_path, monkeypatch
):
    import dataclasses

    from papers.simcse.experiments import grid
    from sentemb.models.backbone import RAW_BERT
    from sentemb.runs import execute

    monkeypatch.setenv("SENTEMB_MODELS", str(tmp_path / "models"))
    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "cache"))
    publish(finished_run[0], RAW_BERT)  # the tiny run standing in for the GPU-made backbone
    runs = grid("raw", extended=False)
    assert runs["backbone_avg"][0].backbone == RAW_BERT  # the untrained rows too
    spec = dataclasses.replace(
        runs["unsup"][0], steps=2, batch_size=8, eval_every=2, final_eval="stsb_dev", analysis_splits=("dev",)
    )
    assert spec.backbone == RAW_BERT and spec.profile == "raw" and not spec.synthetic_data
    record = execute.ensure(spec, progress=False)
    assert record["provenance"]["backbone_revision"] == f"sha256:{finished_run[1]['weights_sha256']}"


def test_minilms_files_can_come_from_a_folder_for_a_machine_without_the_package(tmp_path, monkeypatch):
    from sentemb.models.backbone import MINILM, load_tokenizer, minilm_dir

    folder = tmp_path / "minilm"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        (folder / name).write_bytes((minilm_dir() / name).read_bytes())
    monkeypatch.setenv("SENTEMB_MINILM_DIR", str(folder))
    assert minilm_dir() == folder and load_tokenizer(MINILM).vocab_size == 30522
    monkeypatch.setenv("SENTEMB_MINILM_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match="holds no tokenizer.json"):
        minilm_dir()


def test_a_grid_on_an_unpublished_backbone_stops_once_before_any_run(models, capsys):
    from sentemb import cli

    assert cli.main(["run", "--paper", "simcse", "--profile", "raw"]) == 2
    err = capsys.readouterr().err
    assert err.count("is not in") == 1 and "--publish sentemb-bert-mini-mlm" in err


def test_simcse_pps_padding_width_of_each_archive_backbone_is_its_config_width():
    """SimCSE++'s Table 2 padding scales with the backbone's width (``BACKBONE_DIM``): every profile's archive-made
    backbone has its entry, equal to its config's hidden size."""
    from papers.simcse_pp.experiments import BACKBONE_DIM
    from sentemb.profiles import PROFILES

    for profile in PROFILES.values():
        config = settings.models_root() / (profile.backbone or "-") / "config.json"
        if config.is_file():
            assert BACKBONE_DIM[profile.backbone] == json.loads(config.read_text())["hidden_size"], profile.name
