"""MLM pretraining (``python -m sentemb pretrain``): the text holds no held-out text, the masks are the library's and
seeded, the masked-only loss is BertForMaskedLM's, and a tiny run goes end to end, resumes and never overwrites."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import torch
from conftest import needs_mirror

from sentemb import cli, settings
from sentemb.models.backbone import MINILM, load_backbone, load_tokenizer
from sentemb.pretrain import corpus
from sentemb.pretrain.configs import SIZES, PretrainConfig
from sentemb.pretrain.model import build_model, collator, mask, masked_lm_loss, size_of
from sentemb.pretrain.run import pretrain


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(MINILM)


@pytest.fixture
def shared_cache(pretrain_cache, monkeypatch):
    """The session's $SENTEMB_CACHE with the packed text, so the corpus is tokenised once."""
    monkeypatch.setenv("SENTEMB_CACHE", str(pretrain_cache))
    return pretrain_cache


def _batch(tokenizer, n=64, length=128, seed=0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1000, tokenizer.vocab_size, (n, length), generator=g)
    ids[:, 0], ids[:, -1] = tokenizer.cls_token_id, tokenizer.sep_token_id
    return ids


def test_the_size_table_matches_the_models():
    for name, size in SIZES.items():
        assert size_of(name)["bf16_mb"] == size.bf16_mb, name
    assert size_of("small")["bf16_mb"] <= 64


def _sentences(texts) -> set[str]:
    """The sentences of 10 words or more, normalised (shorter ones can be boilerplate: the hurricane season lists of
    WikiText-2 train and test share "Names that were not assigned are marked in gray")."""
    found = set()
    for text in texts:
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            words = re.findall(r"[a-z0-9]+", sentence.lower())
            if len(words) >= 10:
                found.add(" ".join(words))
    return found


@needs_mirror
def test_the_training_text_holds_no_heldout_or_evaluation_file_and_no_heldout_sentence(tokenizer, shared_cache):
    assert not any("wiki_sentences_combined" in f or "raw/wikitext2" in f for f in corpus.TRAINING_FILES)
    held = _sentences(corpus.raw_wikitext_paragraphs(corpus.HELDOUT))
    held |= _sentences(corpus.raw_wikitext_paragraphs(corpus.WIKITEXT2_TEST))
    units, counts = corpus.training_units()
    assert not _sentences(units) & held
    du_fu = "His greatest ambition was to serve his country as a successful civil servant"  # lead; WikiText-2 test
    assert du_fu in corpus.read_text(corpus.SENTENCE_FILES[0]) and not any(du_fu in u for u in units)
    assert counts[corpus.SENTENCE_FILES[0]]["dropped_overlapping_heldout"] > 0
    text = corpus.load_corpus(tokenizer, 128)
    assert text.train.shape[1] == text.heldout.shape[1] == 128
    assert (text.train[:, 0] == tokenizer.cls_token_id).all() and (text.train[:, -1] == tokenizer.sep_token_id).all()
    assert text.counts["train_tokens"] > 3_000_000 and len(text.heldout) > 1000
    assert set(text.files) == {*corpus.TRAINING_FILES, corpus.HELDOUT, corpus.WIKITEXT2_TEST}


def test_masking_is_the_collators_15_percent_80_10_10_and_seeded(tokenizer):
    ids = _batch(tokenizer)
    inputs, labels = mask(collator(tokenizer), ids, seed=1, step=5)
    chosen = labels != -100
    assert not chosen[:, 0].any() and not chosen[:, -1].any()  # [CLS], [SEP]
    assert abs(chosen[:, 1:-1].float().mean().item() - 0.15) < 0.01
    assert (labels[chosen] == ids[chosen]).all()
    replaced = inputs[chosen] == tokenizer.mask_token_id
    unchanged = inputs[chosen] == ids[chosen]
    assert abs(replaced.float().mean().item() - 0.8) < 0.03
    assert abs(unchanged.float().mean().item() - 0.1) < 0.03
    assert (inputs[~chosen] == ids[~chosen]).all()
    again = mask(collator(tokenizer), ids, seed=1, step=5)
    assert torch.equal(again[0], inputs) and torch.equal(again[1], labels)
    assert not torch.equal(mask(collator(tokenizer), ids, seed=1, step=6)[1], labels)


MASK_PROBE = """
import hashlib, torch
from sentemb.models.backbone import MINILM, load_tokenizer
from sentemb.pretrain.model import collator, mask
tok = load_tokenizer(MINILM)
ids = torch.randint(1000, tok.vocab_size, (16, 128), generator=torch.Generator().manual_seed(0))
inputs, labels = mask(collator(tok), ids, seed=3, step=7)
print(hashlib.sha256(inputs.numpy().tobytes() + labels.numpy().tobytes()).hexdigest())
"""


@pytest.mark.slow
def test_two_fresh_processes_draw_the_same_masks(tokenizer):
    env = {"PYTHONPATH": f"{settings.REPO_ROOT / 'shared'}:{settings.REPO_ROOT}", "PYTHONHASHSEED": "random"}
    import os

    env = {**os.environ, **env}
    probes = [
        subprocess.Popen([sys.executable, "-c", MASK_PROBE], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    hashes = [p.communicate(timeout=120)[0].strip() for p in probes]
    assert all(p.returncode == 0 for p in probes)
    assert hashes[0] == hashes[1] and len(hashes[0]) == 64


def _tiny(tokenizer):
    model = build_model("tiny", len(tokenizer), seed=0)
    model.config.hidden_dropout_prob = model.config.attention_probs_dropout_prob = 0.0
    return model.eval()  # no dropout: the two losses see the same network


def test_the_masked_only_loss_equals_bert_for_masked_lms_loss_and_gradient(tokenizer):
    inputs, labels = mask(collator(tokenizer), _batch(tokenizer, n=4, length=32), seed=0, step=1)
    model = _tiny(tokenizer)
    ours = masked_lm_loss(model, inputs, labels)
    ours.backward()
    ours_grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    theirs = model(input_ids=inputs, labels=labels).loss
    theirs.backward()
    torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=1e-6)
    for name, p in model.named_parameters():
        if p.grad is not None:
            torch.testing.assert_close(ours_grads[name], p.grad, rtol=1e-5, atol=1e-7, msg=name)


def test_under_bf16_autocast_the_head_runs_in_fp32_and_loss_and_gradient_match_fp32(tokenizer):
    inputs, labels = mask(collator(tokenizer), _batch(tokenizer, n=4, length=32), seed=0, step=2)
    model = _tiny(tokenizer)
    seen = []
    model.cls.predictions.decoder.register_forward_hook(lambda module, args, out: seen.append(out.dtype))
    full = masked_lm_loss(model, inputs, labels)
    full.backward()
    full_grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    with torch.autocast("cpu", torch.bfloat16):
        low = masked_lm_loss(model, inputs, labels)
    low.backward()
    assert seen == [torch.float32, torch.float32] and low.dtype == torch.float32  # the logits, not only the loss
    torch.testing.assert_close(low, full, rtol=1e-2, atol=0.0)
    for name, p in model.named_parameters():
        if p.grad is not None:  # bf16 encoder: a few per cent of the gradient's scale
            scale = full_grads[name].abs().max()
            assert (p.grad - full_grads[name]).abs().max() <= 0.05 * scale + 1e-6, name


TINY = [
    "pretrain", "--config", "tiny", "--steps", "20", "--batch-size", "8", "--lr", "5e-3", "--warmup", "2",
    "--eval-every", "5", "--heldout-sequences", "16",
]  # fmt: skip


@needs_mirror
@pytest.mark.slow
def test_a_tiny_run_through_the_cli_writes_checkpoint_and_record_resumes_and_never_overwrites(
    tmp_path, shared_cache, capsys, monkeypatch
):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert cli.main([*TINY, "--out", str(whole)]) == 0
    record = json.loads((whole / "record.json").read_text())
    assert {"model.safetensors", "config.json", "tokenizer.json"} <= {p.name for p in (whole / "model").iterdir()}
    assert not (whole / "state.pt").exists()
    heldout, train = record["heldout_loss"], record["train_loss"]
    assert [s for s, _ in heldout] == [0, 5, 10, 15, 20] and [s for s, _ in train] == [5, 10, 15, 20]
    assert heldout[-1][1] < heldout[0][1] - 0.5 and train[-1][1] < train[0][1]
    assert record["tokens_seen"] == 20 * 8 * 128 and record["steps"] == 20
    assert set(record["text"]["training"]) == set(corpus.TRAINING_FILES)
    assert record["command"].startswith("python -m sentemb pretrain --config tiny --steps 20")
    assert record["provenance"]["packages"]["transformers"] and record["provenance"]["device"].startswith("cpu")
    tokenizer, encoder = load_backbone(str(whole / "model"))
    assert encoder.config.hidden_size == 64 and tokenizer.vocab_size == 30522

    assert cli.main([*TINY, "--out", str(whole)]) == 2  # finished: never overwritten
    assert "never overwritten" in capsys.readouterr().err

    config = PretrainConfig(size="tiny", steps=20, batch_size=8, lr=5e-3, warmup=2, eval_every=5, heldout_sequences=16)
    from sentemb.runs import provenance

    monkeypatch.setattr(provenance, "code_version", lambda: {"commit": "a" * 40, "dirty": False})
    assert pretrain(config, parts, stop_after=8) is None  # as if interrupted between two evaluations
    assert (parts / "state.pt").is_file() and not (parts / "record.json").exists()
    monkeypatch.setattr(provenance, "code_version", lambda: {"commit": "b" * 40, "dirty": True})  # committed since
    assert cli.main([*TINY, "--out", str(parts)]) == 0
    resumed = json.loads((parts / "record.json").read_text())
    assert resumed["heldout_loss"] == heldout and resumed["train_loss"] == train
    assert resumed["weights_sha256"] == record["weights_sha256"]
    code = resumed["provenance"]  # the code the run started with, and each process's
    assert (code["commit"], code["dirty"]) == ("a" * 40, True)
    assert [(p["from_step"], p["commit"]) for p in code["processes"]] == [(0, "a" * 40), (8, "b" * 40)]
    assert code["started_utc"] == code["processes"][0]["started_utc"]


def test_settings_refuse_an_unknown_precision_or_dropout_and_the_command_spells_them_out():
    from sentemb.errors import ConfigError

    with pytest.raises(ConfigError, match="--precision 'fp16'"):
        PretrainConfig(precision="fp16")
    with pytest.raises(ConfigError, match="--dropout 1.0"):
        PretrainConfig(dropout=1.0)
    command = PretrainConfig(size="4x128", dropout=0.0, precision="fp32").command()
    assert "--config 4x128" in command and command.endswith("--dropout 0 --precision fp32")
    assert PretrainConfig(dropout=0.0).run_id != PretrainConfig().run_id


def test_a_checkpoint_pretrained_without_dropout_is_saved_with_berts_dropout_for_fine_tuning(tokenizer, tmp_path):
    from sentemb.pretrain.run import save_checkpoint

    model = build_model("tiny", len(tokenizer), seed=0, dropout=0.0)
    assert model.config.hidden_dropout_prob == 0.0 and not any(
        m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)
    )
    save_checkpoint(model, {k: v.clone() for k, v in model.state_dict().items()}, 0, tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["hidden_dropout_prob"] == saved["attention_probs_dropout_prob"] == 0.1
    # dropout draws nothing at initialisation: the same weights with and without it
    with_dropout = build_model("tiny", len(tokenizer), seed=0).state_dict()
    without = build_model("tiny", len(tokenizer), 0, 0.0).state_dict()
    assert all(torch.equal(with_dropout[k], v) for k, v in without.items())


@needs_mirror
def test_a_milestone_checkpoint_is_the_unfinished_runs_current_weights(tmp_path, shared_cache):
    from sentemb.pretrain_check import checkpoint_dir

    config = PretrainConfig(size="tiny", steps=20, batch_size=8, lr=5e-3, warmup=2, eval_every=5, heldout_sequences=16)
    assert pretrain(config, tmp_path / "run", stop_after=10) is None  # interrupted at an evaluation
    directory, step, loss = checkpoint_dir(tmp_path / "run", tmp_path / "out")
    state = torch.load(tmp_path / "run" / "state.pt", weights_only=False)
    assert step == 10 and loss == dict(state["curves"]["heldout"])[10]
    _, encoder = load_backbone(str(directory))
    saved = encoder.state_dict()
    for name, value in state["model"].items():
        if name.startswith("bert.") and not name.startswith("bert.pooler"):
            assert torch.equal(saved[name.removeprefix("bert.")], value.to(torch.bfloat16).float()), name
