"""A pretraining run that outlives its machine, and issue 65's recipe options.

The carried state (``--carry``) resumes a run bit for bit after its cache is deleted (``exact``); the lossy modes
resume; a milestone branched from a longer wsd run's state is that shorter run exactly; a deadline saves and stops;
the wsd schedule and the legacy linear one are what their docstrings say; the new settings leave every earlier run
id as it was; eager attention and fused AdamW compute what SDPA and the default AdamW compute."""

from __future__ import annotations

import json
import shutil
import time

import pytest
import torch
from conftest import needs_mirror

from sentemb.errors import SentembError
from sentemb.pretrain.configs import PretrainConfig
from sentemb.pretrain.run import _late, pretrain
from sentemb.pretrain.schedule import Schedule

RECIPE = dict(
    size="tiny",
    steps=20,
    batch_size=8,
    lr=5e-3,
    warmup=2,
    eval_every=5,
    heldout_sequences=16,
    dropout=0.0,
    mask_rate=0.25,
    schedule="wsd",
    attention="eager",
    fused_adamw=True,
)  # MiniLM's vocabulary: its packed text is the session's (conftest); the 8k vocabulary has a test of its own


@pytest.fixture
def shared_cache(pretrain_cache, monkeypatch):
    monkeypatch.setenv("SENTEMB_CACHE", str(pretrain_cache))
    return pretrain_cache


def test_earlier_run_ids_are_unchanged_by_the_new_settings():
    from sentemb import settings

    record = json.loads((settings.models_root() / "sentemb-bert-mini-mlm" / "record.json").read_text())
    assert PretrainConfig(**record["config"]).run_id == record["run_id"] == "4a2c732f7e9f"
    assert PretrainConfig(**RECIPE).run_id != PretrainConfig(**{**RECIPE, "mask_rate": 0.15}).run_id
    command = PretrainConfig(**RECIPE, vocab="wordpiece-8192").command()
    assert command.endswith("--vocab wordpiece-8192 --mask-rate 0.25 --schedule wsd --attention eager --fused-adamw")


def test_the_linear_schedule_is_transformers_and_wsd_holds_then_decays_to_zero():
    import transformers

    linear = PretrainConfig(steps=50, warmup=5)
    reference = transformers.get_linear_schedule_with_warmup(
        torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0), 5, 50
    ).lr_lambdas[0]
    assert [Schedule(linear)(s) for s in range(52)] == [reference(s) for s in range(52)]
    wsd = Schedule(PretrainConfig(steps=100, warmup=10, schedule="wsd"))
    assert wsd(0) == 0.0 and wsd(5) == 0.5 and wsd(10) == wsd(84) == 1.0
    assert wsd(85) == 1.0 and wsd(95) == pytest.approx(5 / 15) and wsd(100) == 0.0
    budget = Schedule(PretrainConfig(steps=10_000, warmup=10, schedule="wsd", budget_minutes=10))
    budget.observe(400, 509.0)
    assert budget.decay_start is None and budget(400) == 1.0
    budget.observe(401, 511.0)  # 85 % of 600 s
    assert budget.decay_start == 401 and budget.total == 401 + round(401 * 0.15 / 0.85)
    with pytest.raises(Exception, match="--budget-minutes"):
        PretrainConfig(budget_minutes=5)  # a wall-clock budget needs wsd


def test_eager_attention_and_fused_adamw_compute_what_sdpa_and_the_default_kernel_compute():
    from sentemb.pretrain.model import build_model

    ids = torch.randint(5, 300, (4, 32), generator=torch.Generator().manual_seed(0))
    sdpa, eager = build_model("tiny", 300, 0, 0.0, "sdpa"), build_model("tiny", 300, 0, 0.0, "eager")
    a, b = sdpa.bert(input_ids=ids).last_hidden_state, eager.bert(input_ids=ids).last_hidden_state
    assert torch.allclose(a, b, atol=1e-5)
    models = [build_model("tiny", 300, 0, 0.0) for _ in range(2)]
    optimizers = [torch.optim.AdamW(models[0].parameters(), lr=1e-3, betas=(0.9, 0.98))]
    optimizers.append(torch.optim.AdamW(models[1].parameters(), lr=1e-3, betas=(0.9, 0.98), fused=True))
    for model, optimizer in zip(models, optimizers):
        for _ in range(3):
            model(input_ids=ids, labels=ids).loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    for (name, p), q in zip(models[0].named_parameters(), models[1].parameters()):
        assert torch.allclose(p, q, atol=1e-6), name


@needs_mirror
@pytest.mark.slow
def test_a_carried_run_resumes_bit_for_bit_on_a_fresh_cache_and_a_branch_is_the_shorter_run(
    tmp_path, shared_cache, monkeypatch
):
    config = PretrainConfig(**RECIPE)
    whole = pretrain(config, tmp_path / "whole")
    assert 0 < whole["heldout_unigram_loss"] < whole["heldout_loss"][0][1]
    assert whole["schedule"]["decay_start"] == 17 and whole["steps"] == 20

    carry = tmp_path / "repo" / "pretraining" / "run"
    assert pretrain(config, tmp_path / "parts", stop_after=7, carry=carry) is None
    assert {p.name for p in carry.iterdir()} == {"state.safetensors", "state.json"}
    shutil.rmtree(tmp_path / "parts")  # a fresh machine: no cache
    resumed = pretrain(config, tmp_path / "parts", carry=carry)
    assert resumed["weights_sha256"] == whole["weights_sha256"]
    assert resumed["heldout_loss"] == whole["heldout_loss"] and resumed["train_loss"] == whole["train_loss"]
    assert not carry.exists()  # the finished run's state leaves the tree

    longer = PretrainConfig(**{**RECIPE, "steps": 40})  # decays from step 34: its first 34 steps are this run's
    assert pretrain(longer, tmp_path / "long", stop_after=17, carry=tmp_path / "long-carry") is None
    branched = pretrain(config, tmp_path / "branch", branch_from=tmp_path / "long-carry")
    assert branched["weights_sha256"] == whole["weights_sha256"]
    assert branched["branched_from"]["run_id"] == longer.run_id and branched["branched_from"]["step"] == 17
    with pytest.raises(SentembError, match="past this run's decay start"):
        pretrain(PretrainConfig(**{**RECIPE, "steps": 12}), tmp_path / "late", branch_from=tmp_path / "long-carry")
    with pytest.raises(SentembError, match="differ from this run's"):
        pretrain(PretrainConfig(**{**RECIPE, "lr": 1e-3}), tmp_path / "other", branch_from=tmp_path / "long-carry")


@needs_mirror
def test_the_8k_vocabulary_trains_end_to_end_and_is_saved_with_the_checkpoint(tmp_path, monkeypatch):
    from sentemb.models.backbone import load_tokenizer
    from sentemb.pretrain import corpus

    units, counts = corpus.training_units()
    monkeypatch.setattr(corpus, "training_units", lambda unk="[UNK]": (units[:3000], counts))  # a small text, fast
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "cache"))  # its packing stays out of the session's cache
    record = pretrain(PretrainConfig(**{**RECIPE, "steps": 4, "eval_every": 2, "vocab": "wordpiece-8192"}), tmp_path)
    assert record["tokenizer"]["size"] == 8192 and record["tokenizer"]["file_sha256"]
    assert record["tokenizer"]["source"] == "vocabulary wordpiece-8192"
    assert len(load_tokenizer(str(tmp_path / "model"))) == 8192


@needs_mirror
@pytest.mark.slow
def test_lossy_carries_resume_and_a_deadline_saves_and_stops(tmp_path, shared_cache):
    config = PretrainConfig(**{**RECIPE, "steps": 10})
    exact = tmp_path / "exact"  # at an evaluation that lowered the loss: the kept weights are the current ones
    assert pretrain(config, tmp_path / "run-exact", stop_after=5, carry=exact) is None
    for mode, share in (("bf16", 0.5), ("weights", 1 / 6)):
        carry = tmp_path / mode
        assert pretrain(config, tmp_path / f"run-{mode}", stop_after=5, carry=carry, carry_mode=mode) is None
        size = (carry / "state.safetensors").stat().st_size / (exact / "state.safetensors").stat().st_size
        assert size == pytest.approx(share, rel=0.05)
        shutil.rmtree(tmp_path / f"run-{mode}")
        record = pretrain(config, tmp_path / f"run-{mode}", carry=carry, carry_mode=mode)
        assert record["steps"] == 10 and record["provenance"]["processes"][1]["from_step"] == 5
        assert record["provenance"]["processes"][1]["resumed_from"] == f"carried state ({mode})"
    other = tmp_path / "bf16-other"
    shutil.copytree(exact, other)
    with pytest.raises(SentembError, match="carries another run's state"):
        pretrain(PretrainConfig(**{**RECIPE, "steps": 10, "seed": 1}), tmp_path / "seed1", carry=other)
    started = time.time()
    assert pretrain(config, tmp_path / "deadline", deadline=started, carry=tmp_path / "deadline-carry") is None
    state = json.loads((tmp_path / "deadline-carry" / "state.json").read_text())
    assert state["step"] == 1 and (tmp_path / "deadline" / "state.pt").is_file()
    # a deadline a few steps away stops at the last evaluation before it, not past it
    soon = time.time() + 1.5
    assert pretrain(PretrainConfig(**{**RECIPE, "steps": 10_000}), tmp_path / "soon", deadline=soon) is None
    state = torch.load(tmp_path / "soon" / "state.pt", weights_only=False)
    assert state["step"] < 10_000 and state["step"] % RECIPE["eval_every"] == 0
    assert state["best"]["step"] == state["step"]


def test_the_deadline_stops_at_the_last_evaluation_whose_next_one_would_end_after_it():
    # the decision alone, on a clock it is handed (the wall-clock run above only shows it stops at an evaluation;
    # how long its save takes on a loaded machine is no part of the rule)
    config = PretrainConfig(**{**RECIPE, "steps": 10_000})
    now = time.time()
    chunk = 0.1 * config.eval_every  # seconds to the next evaluation at 0.1 s a step
    assert not _late(None, 0.1, config, evaluated=True)
    assert _late(now + chunk - 1, 0.1, config, evaluated=True)  # the next evaluation would end past it: stop now
    assert not _late(now + chunk + 60, 0.1, config, evaluated=True)
    assert not _late(now + 1, 0.1, config, evaluated=False)  # between evaluations: only the deadline itself stops
    assert _late(now - 1, 0.1, config, evaluated=False)
