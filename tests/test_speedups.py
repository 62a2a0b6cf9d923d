"""Each speed-up of sentemb.train.speedups against the plain path on CPU: the same losses, gradients and weights (to
float rounding, or bitwise where the switch claims so), and the plain path still the default."""

import dataclasses
import random

import pytest
import torch
from conftest import TINY_SPEC

from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.registry import build_objective
from sentemb.spec import RunSpec
from sentemb.train import speedups as speedups_of
from sentemb.train.loop import Optimization, TrainingDiverged, prepare_objective, train
from sentemb.train.speedups import Speedups

SENTENCES = [
    "A man is playing a guitar on the stage.",
    "Two dogs run across a snowy field while their owner watches from the porch.",
    "Stocks fell.",
    "She reads the paper every morning before work.",
    "A child is slicing a tomato in the kitchen.",
    "The committee postponed its decision until next spring, citing the budget.",
]


def _flat_dev(encoder, step):  # the loop's evaluation hook; these tests compare training, not evaluation
    return {"stsb_dev_spearman": 0.5, "alignment": 0.0, "uniformity": 0.0}


def _trained(spec, folder, speedups, device="cpu"):
    encoder = SentenceEncoder.from_name(spec.backbone, spec.pooler, dropout=spec.dropout, seed=spec.seed).to(device)
    objective = prepare_objective(spec, encoder)
    rows = [f"{s} ({i})" for i in range(4) for s in SENTENCES]
    torch.manual_seed(spec.seed)
    outcome = train(objective, spec, rows, _flat_dev, folder, progress=False, speedups=speedups)
    return objective, outcome


def _close(first: dict, second: dict, atol: float) -> None:
    assert first.keys() == second.keys()
    for name in first:
        torch.testing.assert_close(first[name], second[name], atol=atol, rtol=1e-4, msg=name)


def test_the_setting_parses_names_and_refuses_what_it_does_not_know(monkeypatch):
    text = "fused_adamw,sync_free,pad_multiple=8,compile,eval_batch=512"
    parsed = Speedups.parse(text)
    assert parsed == Speedups(True, True, True, 8, 512) and Speedups.parse(",".join(parsed.names())) == parsed
    assert Speedups.parse("none") == Speedups() and Speedups().names() == []
    for bad in ("fused", "pad_multiple=0", "eval_batch=x", "sync_free=1"):
        with pytest.raises(ConfigError, match="SENTEMB_SPEEDUPS: cannot read .* comma list of fused_adamw"):
            Speedups.parse(bad)
    monkeypatch.delenv(speedups_of.ENVIRONMENT_VARIABLE, raising=False)
    assert speedups_of.for_device(torch.device("cpu")) == Speedups()  # the CPU path is the plain one
    monkeypatch.setenv(speedups_of.ENVIRONMENT_VARIABLE, "sync_free")
    assert speedups_of.for_device(torch.device("cpu")) == Speedups(sync_free=True)


@pytest.mark.slow
def test_sync_free_and_fused_adamw_train_the_same_run(tmp_path):
    spec = RunSpec(**TINY_SPEC)
    plain, reference = _trained(spec, tmp_path / "plain", Speedups())
    synced, sync_free = _trained(spec, tmp_path / "sync_free", Speedups(sync_free=True))
    assert sync_free.losses == reference.losses and len(reference.losses) == spec.steps  # bitwise
    assert not synced.encoder.copies_without_waiting  # the encoders leave training with the plain path's batches
    assert all(torch.equal(a, b) for a, b in zip(plain.state_dict().values(), synced.state_dict().values()))

    fused, outcome = _trained(spec, tmp_path / "fused", Speedups(fused_adamw=True))
    assert outcome.losses[0] == reference.losses[0]  # the same first step; then float rounding
    assert outcome.losses == pytest.approx(reference.losses, rel=1e-5)
    _close(fused.state_dict(), plain.state_dict(), atol=1e-6)
    assert Optimization.for_spec(fused, spec, Speedups(fused_adamw=True)).optimizer.defaults["fused"] is True


@pytest.mark.parametrize("sentences", [SENTENCES, ["same length one", "same length two"]], ids=["padded", "unpadded"])
def test_the_backbone_mask_made_on_the_cpu_gives_the_same_states_bit_for_bit(sentences):
    encoder = SentenceEncoder.from_name("all-MiniLM-L6-v2", "avg")
    plain = encoder.tokenize(sentences, 32)
    encoder.copies_without_waiting = True  # sync_free's batches (on a CPU the copies are plain ones)
    made = encoder.tokenize(sentences, 32)
    padded = not bool(plain["attention_mask"].all())
    assert (made["backbone_attention_mask"] is None) == (not padded)
    if padded:
        assert made["backbone_attention_mask"].shape == (len(sentences), 1, *[plain["input_ids"].shape[1]] * 2)
    with torch.no_grad():
        first = encoder.forward_with_last_hidden_state(**plain)
        second = encoder.forward_with_last_hidden_state(**made)
    assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])


def test_sync_free_stops_at_the_next_evaluation_naming_the_first_bad_step(tmp_path):
    spec = dataclasses.replace(RunSpec(**TINY_SPEC), steps=9, eval_every=4)
    encoder = SentenceEncoder.from_name(spec.backbone, spec.pooler, seed=spec.seed)
    objective = prepare_objective(spec, encoder)
    calls = []
    plain_forward = objective.forward

    def nan_at_step_6(rows, rng):
        calls.append(1)
        loss = plain_forward(rows, rng)
        return loss * float("nan") if len(calls) == 6 else loss

    objective.forward = nan_at_step_6
    rows = [f"{s} ({i})" for i in range(4) for s in SENTENCES]
    with pytest.raises(TrainingDiverged, match=r"the loss is nan at step 6; the run \(sync_free.*stopped at step 8"):
        train(objective, spec, rows, _flat_dev, tmp_path, progress=False, speedups=Speedups(sync_free=True))
    assert len(calls) == 8 and not (tmp_path / "best").exists()
    assert not (tmp_path / "state.pt").exists()  # nothing after the bad step was saved (state.pt: step 4 at most)


def test_padding_to_a_multiple_changes_shapes_not_embeddings():
    encoder = SentenceEncoder.from_name("all-MiniLM-L6-v2", "avg").eval()
    plain = encoder.tokenize(SENTENCES, 32)
    encoder.pad_multiple = 8
    padded = encoder.tokenize(SENTENCES, 32)
    length = plain["input_ids"].shape[1]
    assert padded["input_ids"].shape[1] == min(32, -(-length // 8) * 8) and length % 8
    assert torch.equal(padded["input_ids"][:, :length], plain["input_ids"])
    assert not padded["attention_mask"][:, length:].any()
    encoder.pad_multiple = 64  # never past max_len (nor the position limit) unless a sequence already is
    assert encoder.tokenize(SENTENCES, 32)["input_ids"].shape[1] == 32
    assert encoder.padded_length(600, None) == 600 and encoder.padded_length(500, None) == 512
    with torch.no_grad():
        torch.testing.assert_close(
            encoder(**padded, training=False), encoder(**plain, training=False), atol=2e-5, rtol=0
        )


@pytest.mark.parametrize("objective", ["simcse_unsup", "declutr"])
def test_padding_to_a_multiple_gives_the_same_loss_and_gradients_with_dropout_off(objective):
    from sentemb.data.documents import Document

    params = {"min_span_len": 4, "max_span_len": 16} if objective == "declutr" else {}
    words = " ".join(SENTENCES * 8).split()
    rows = (
        [Document(id=f"d{i}", text=" ".join(words[i:] + words[:i])) for i in range(4)]
        if objective == "declutr"
        else SENTENCES
    )
    results = []
    for multiple in (1, 8):
        torch.manual_seed(0)
        encoder = SentenceEncoder.from_name("tiny-random-bert", "avg", dropout=0.0, seed=0)
        built = build_objective(objective, params, [encoder], 24).train()
        speedups_of.apply_to_encoders(built, Speedups(pad_multiple=multiple))
        loss = built(built.select_rows(rows), random.Random(3))
        loss.backward()
        results.append((loss.detach(), {n: p.grad for n, p in built.named_parameters() if p.grad is not None}))
    torch.testing.assert_close(results[0][0], results[1][0], atol=1e-5, rtol=1e-5)
    _close(results[0][1], results[1][1], atol=1e-5)


@pytest.mark.slow
def test_compile_gives_the_same_loss_and_gradients_and_keeps_the_state_dict(monkeypatch):
    monkeypatch.setenv(speedups_of.COMPILE_BACKEND_VARIABLE, "aot_eager")  # the graph capture, without codegen
    results = []
    for compiled in (False, True):
        torch.manual_seed(0)
        encoder = SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", dropout=0.0, seed=0)
        built = build_objective("simcse_unsup", {}, [encoder], 24).train()
        keys = list(built.state_dict())
        speedups_of.apply_to_encoders(built, Speedups(compile=compiled))
        assert list(built.state_dict()) == keys  # checkpoints load as before
        loss = built(SENTENCES, random.Random(0))
        loss.backward()
        results.append((loss.detach(), {n: p.grad for n, p in built.named_parameters() if p.grad is not None}))
    torch.testing.assert_close(results[0][0], results[1][0], atol=1e-6, rtol=1e-6)
    _close(results[0][1], results[1][1], atol=1e-6)


def test_a_larger_evaluation_batch_gives_the_same_embeddings():
    encoder = SentenceEncoder.from_name("all-MiniLM-L6-v2", "avg")
    sentences = [f"{s} Number {i}." for i in range(30) for s in SENTENCES]
    small = encoder.encode(sentences, batch_size=64)
    large = encoder.encode(sentences, batch_size=512)
    assert abs(small - large).max() < 2e-5


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_every_speedup_together_trains_the_same_run_on_cuda(tmp_path):
    """On a GPU (benchmarks/gpu_speed.sh): fp16 with the gradient scaler, dropout off (inductor draws its own masks),
    every speed-up at once against the plain path."""
    spec = dataclasses.replace(RunSpec(**TINY_SPEC), precision="fp16", dropout=0.0)
    every = Speedups(fused_adamw=True, sync_free=True, compile=True, pad_multiple=8, eval_batch=512)
    plain, reference = _trained(spec, tmp_path / "plain", Speedups(), "cuda")
    fast, outcome = _trained(spec, tmp_path / "fast", every, "cuda")
    assert outcome.losses == pytest.approx(reference.losses, rel=1e-2)  # fp16 kernels: fused, compiled
    _close(fast.state_dict(), plain.state_dict(), atol=2e-3)


def test_the_mlm_loss_finds_cpu_labels_positions_in_a_batch_padded_after_masking():
    from torch import nn

    from sentemb.objectives.masked_lm import MaskedLMLoss

    torch.manual_seed(0)
    head, states = nn.Linear(8, 11), torch.randn(3, 7, 8)
    labels = torch.full((3, 5), -100)  # masked at length 5; the batch was padded to 7 afterwards
    labels[0, 1], labels[1, 4], labels[2, 0], labels[2, 3] = 4, 2, 9, 0
    padded = torch.nn.functional.pad(labels, (0, 2), value=-100)
    plain = torch.nn.functional.cross_entropy(head(states[padded != -100]), padded[padded != -100])
    assert torch.equal(MaskedLMLoss(head)(states, labels), plain)  # the same positions, in the same order


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("objective", ["simcse_unsup", "simcse_sup", "declutr"])
def test_a_sync_free_step_on_cuda_never_waits_for_the_gpu_in_the_archives_code(objective, capsys):
    """fp16 with the gradient scaler: with fused AdamW and sync_free, no call of the archive's (nor torch's optimizer
    or scaler) inside a step synchronises the host with the device (torch's sync debug mode warns at each that does).
    Any in transformers is printed and allowed: its check whether a padding mask can be dropped
    (``padding_mask.all()``) is bypassed by the mask sync_free makes on the CPU, and none other is known."""
    import warnings

    from sentemb.data.documents import Document
    from sentemb.train.loop import training_step

    spec = dataclasses.replace(RunSpec(**TINY_SPEC), precision="fp16")
    words = " ".join(SENTENCES * 8).split()
    rows = {
        "simcse_unsup": SENTENCES,
        "simcse_sup": [(a, b, c) for a, b, c in zip(SENTENCES, SENTENCES[1:], SENTENCES[2:])],
        "declutr": [Document(id=f"d{i}", text=" ".join(words[i:] + words[:i])) for i in range(4)],
    }[objective]
    params = {"min_span_len": 4, "max_span_len": 16} if objective == "declutr" else {}
    encoder = SentenceEncoder.from_name("tiny-random-bert", "avg", seed=0).to("cuda")
    built = build_objective(objective, params, [encoder], 24).train()
    speedups = Speedups(fused_adamw=True, sync_free=True)
    speedups_of.apply_to_encoders(built, speedups)
    optimization = Optimization.for_spec(built, spec, speedups)
    rows = built.select_rows(rows)
    training_step(built, rows, random.Random(0), optimization, spec, 0, check=False)  # allocations, kernels chosen
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for step in (1, 2):
                training_step(built, rows, random.Random(step), optimization, spec, step, check=False)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    syncs = [w for w in caught if "synchroniz" in str(w.message).lower()]
    with capsys.disabled():
        print(f"\n{objective}: {len(syncs)} synchronisations in 2 sync_free steps:", end=" ")
        print(sorted({f"{w.filename.rsplit('site-packages/', 1)[-1]}:{w.lineno}" for w in syncs}))
    assert not [w for w in syncs if "transformers" not in w.filename]


@pytest.mark.slow
def test_a_record_lists_the_speedups_that_ran_and_a_plain_one_has_no_such_key(monkeypatch):
    from sentemb.runs import execute

    monkeypatch.setenv(speedups_of.ENVIRONMENT_VARIABLE, "sync_free,eval_batch=128")
    fast = execute.ensure(dataclasses.replace(RunSpec(**TINY_SPEC), seed=7), progress=False)
    assert fast["provenance"]["speedups"] == ["sync_free", "eval_batch=128"]
    monkeypatch.setenv(speedups_of.ENVIRONMENT_VARIABLE, "default")
    plain = execute.ensure(dataclasses.replace(RunSpec(**TINY_SPEC), seed=8), progress=False)
    assert "speedups" not in plain["provenance"]
