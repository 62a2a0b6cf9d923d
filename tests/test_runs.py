"""Run specs, ids, records, objectives that own parameters and modules, and exact resuming."""

import dataclasses
import json
import math

import pytest
import torch
from conftest import TINY_SPEC, require_committed_small_records
from torch import nn

from sentemb import settings
from sentemb.data.sts import load_task
from sentemb.errors import ConfigError, SentembError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives import registry
from sentemb.objectives.base import Param, TrainingObjective
from sentemb.runs import events, execute, store
from sentemb.spec import RunSpec
from sentemb.train import loop
from sentemb.train.loop import EpochOrder, TrainingDiverged, prepare_objective, train

TINY = TINY_SPEC


def test_run_id_is_a_content_hash_over_resolved_parameters():
    a, b = RunSpec(**TINY), RunSpec(**TINY)
    assert a.run_id == b.run_id and len(a.run_id) == 16
    assert dataclasses.replace(a, dropout=0.2).run_id != a.run_id
    assert dataclasses.replace(a, notes="a comment").run_id == a.run_id
    assert dataclasses.replace(a, precision="bf16").run_id != a.run_id
    assert RunSpec.from_dict(a.as_dict()) == a
    # defaults are filled in: naming a default explicitly is the same run
    assert RunSpec(**TINY, objective_params={"temperature": 0.05}).run_id == a.run_id
    assert a.objective_params == {"augmentation": "none", "fixed_dropout_mask": False, "temperature": 0.05}
    assert a.with_params(temperature=0.1).run_id != a.run_id
    assert hash(a) == hash(b)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"pooler": "max"}, "pooler"),
        ({"objective": "simclr"}, "unknown objective 'simclr'"),
        ({"steps": 0}, "steps"),
        ({"dropout": 1.5}, "dropout"),
        ({"profile": "huge"}, "profile"),
        ({"train_data": None}, "train_data"),
        ({"precision": "fp8"}, "precision"),
        ({"eval_precision": "int8"}, "eval_precision"),
    ],
)
def test_malformed_specs_are_rejected(change, message):
    with pytest.raises(ConfigError, match=message):
        RunSpec(**{**TINY, **change})


@pytest.mark.parametrize(
    "params, message",
    [
        ({"temperature": 0.0}, r"temperature: 0.0 is not float in \(0, inf\]"),
        ({"temperature": "hot"}, "temperature: expected a number"),
        ({"augmentation": "crop"}, "augmentation: 'crop' is not one of 'none', 'delete_one_word'"),
        ({"fixed_dropout_mask": 1}, "fixed_dropout_mask: expected true or false"),
        ({"hard_negative_alpha": 1.0}, r"unknown parameter\(s\) \['hard_negative_alpha'\]"),
    ],
)
def test_a_bad_objective_parameter_names_the_objective_and_lists_its_parameters(params, message):
    with pytest.raises(ConfigError, match=message) as info:
        RunSpec(**TINY, objective_params=params)
    text = str(info.value)
    assert "objective 'simcse_unsup'" in text
    for name in ("temperature", "fixed_dropout_mask", "augmentation"):
        assert f"  {name} (" in text  # the parameter list with allowed values and defaults


def test_no_training_takes_no_parameters():
    with pytest.raises(ConfigError, match="takes no parameters"):
        RunSpec(profile="smoke", backbone="tiny-random-bert", objective_params={"temperature": 0.05})
    assert RunSpec(profile="smoke", backbone="tiny-random-bert").objective == registry.NO_TRAINING  # the same name


def test_unknown_spec_field_is_rejected():
    with pytest.raises(ConfigError, match="unknown spec field"):
        RunSpec.from_dict({**TINY, "learning_rate": 1e-5})


# -- a toy objective with its own parameter and its own module ------------------------------------------------


class ToyObjective(TrainingObjective):
    """Test objective: a projection head it owns, scaled InfoNCE-like alignment of two dropout views."""

    name = "toy"
    rows = "sentences"
    sequences_per_row = 2
    params = (Param("scale", float, 1.0, "multiplies the loss", low=0.0, low_open=True),)

    def __init__(self, encoder, max_len, scale):
        super().__init__(encoder, max_len)
        self.scale = scale
        self.head = nn.Linear(encoder.dim, 8)

    def forward(self, rows, rng):
        words = [" ".join(rng.sample(s.split(), len(s.split()))) for s in rows]  # randomness drawn per step
        z = self.head(self.embed(list(rows) + words))
        a, b = nn.functional.normalize(z[: len(rows)], dim=-1), nn.functional.normalize(z[len(rows) :], dim=-1)
        return self.scale * nn.functional.cross_entropy(a @ b.T / 0.1, torch.arange(len(rows)))


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(registry.TRAINING_OBJECTIVES, "toy", ToyObjective)
    return RunSpec(**{**TINY, "objective": "toy", "objective_params": {"scale": 2.0}})


def _dev_eval(spec):
    return execute._dev_evaluator(spec, load_task("STSBenchmark", synthetic=True), progress=False)


def _train(spec, folder, evaluate=None, **kwargs):
    encoder = SentenceEncoder.from_name(spec.backbone, spec.pooler, dropout=spec.dropout, seed=spec.seed)
    objective = prepare_objective(spec, encoder)
    outcome = train(
        objective,
        spec,
        execute._training_rows(spec),
        evaluate or _dev_eval(spec),
        folder,
        progress=False,
        save_state_every_s=kwargs.pop("save_state_every_s", 0.0),
        **kwargs,
    )
    return objective, outcome


def _interrupted_then_resumed(spec, folder, at_step):
    evaluate = _dev_eval(spec)

    def interrupt(encoder, step):
        if step == at_step:
            raise KeyboardInterrupt
        return evaluate(encoder, step)

    with pytest.raises(KeyboardInterrupt):
        _train(spec, folder, interrupt)
    assert (folder / "state.pt").is_file()
    return _train(spec, folder, evaluate)


def test_a_toy_objective_trains_its_own_module_and_resumes_exactly(toy, tmp_path):
    assert toy.objective_params == {"scale": 2.0}
    with pytest.raises(ConfigError, match=r"objective 'toy': scale: -1.0 is not float in \(0, inf\]"):
        toy.with_params(scale=-1.0)
    with pytest.raises(ConfigError, match=r"objective 'toy': unknown parameter\(s\) \['scael'\][\s\S]*scale \("):
        RunSpec(**{**TINY, "objective": "toy", "objective_params": {"scael": 2.0}})

    torch.manual_seed(toy.seed)
    untrained_head = nn.Linear(SentenceEncoder.from_name(toy.backbone, toy.pooler, seed=toy.seed).dim, 8)
    reference, ref = _train(toy, tmp_path / "reference")
    assert not torch.equal(reference.head.weight, untrained_head.weight)  # the loop optimised the owned module

    resumed, res = _interrupted_then_resumed(toy, tmp_path / "resumed", at_step=6)
    assert res.resumed_from_step == 3
    assert res.losses == ref.losses  # bit for bit: same data, same augmentations, same dropout masks
    assert [p["stsb_dev_spearman"] for p in res.dev_curve] == [p["stsb_dev_spearman"] for p in ref.dev_curve]
    assert torch.equal(resumed.head.weight, reference.head.weight)

    record = execute.ensure(toy, progress=False)
    assert record["spec"]["objective"] == "toy" and record["spec"]["objective_params"] == {"scale": 2.0}


@pytest.mark.parametrize(
    "objective, params, train_data",
    [
        ("simcse_unsup", {}, "wiki_sentences_combined"),
        ("simcse_unsup", {"augmentation": "delete_one_word"}, "wiki_sentences_combined"),
        ("simcse_unsup", {"fixed_dropout_mask": True}, "wiki_sentences_combined"),
        ("simcse_sup", {}, "snli_devtest_for_simcse"),
        ("simcse_unsup", {"augmentation": "synonym_replacement", "mlm_weight": 0.1}, "wiki_sentences_combined"),
        ("simcse_sup", {"negatives": "contradiction+neutral", "mlm_weight": 0.1}, "snli_devtest_with_neutral"),
        ("simcse_sup", {"negatives": "none"}, "snli_devtest_pairs_neutral"),
        ("simcse_next_sentence", {"context": "next_3_sentences", "two_encoders": True}, "wikitext2_windows"),
        (
            "simcse_pp",
            {"negatives": "off_dropout", "m": 0.9, "dcl_weight": 0.1, "positive_noise": "plus"},
            "wiki_sentences_combined",
        ),
        ("barlow_twins", {"projector_width": 32}, "wiki_sentences_combined"),
        (
            "barlow_twins",
            {"projector_width": 32, "augmentation": "shuffle", "strength": 0.3},
            "wiki_sentences_combined",
        ),
        ("vicreg", {"projector_width": 32, "augmentation": "eda", "strength": 0.2}, "wiki_sentences_combined"),
        ("barlow_twins_pairs", {"projector_width": 32}, "snli_devtest_for_simcse"),
    ],
)
def test_every_objective_resumes_to_the_same_result(objective, params, train_data, tmp_path):
    spec = RunSpec(
        **{
            **TINY,
            "objective": objective,
            "objective_params": params,
            "train_data": train_data,
            "pooler": "cls" if objective == "simcse_sup" else "cls_before_pooler",
        }
    )
    _, reference = _train(spec, tmp_path / "reference")
    _, resumed = _interrupted_then_resumed(spec, tmp_path / "resumed", at_step=6)
    assert resumed.resumed_from_step == 3
    assert resumed.losses == reference.losses
    assert [p["stsb_dev_spearman"] for p in resumed.dev_curve] == [p["stsb_dev_spearman"] for p in reference.dev_curve]
    assert resumed.best_step == reference.best_step
    _, again = _train(spec, tmp_path / "resumed")  # a finished state: nothing is trained twice
    assert again.resumed_from_step == 6 and again.best_dev == resumed.best_dev


def test_the_simcse_mlp_is_fresh_even_on_a_loaded_checkpoint(tmp_path):
    """Regression: under transformers 5 re-initialising a loaded pooler was a no-op, so SimCSE trained its MLP from
    the checkpoint's pretrained pooler instead of a fresh one (SimCSE footnote 9)."""
    SentenceEncoder.from_name("tiny-random-bert", "cls", seed=5).save(tmp_path / "ckpt")
    for pooler in ("cls", "cls_before_pooler"):
        encoder = SentenceEncoder.from_name(str(tmp_path / "ckpt"), pooler)
        pretrained = encoder.backbone.pooler.dense.weight.detach().clone()
        spec = RunSpec(**{**TINY, "backbone": str(tmp_path / "ckpt"), "pooler": pooler})
        objective = prepare_objective(spec, encoder)
        mlp = objective.mlp.dense.weight.detach()
        assert not torch.allclose(mlp, pretrained)
        assert abs(float(mlp.std()) - encoder.backbone.config.initializer_range) < 0.005
        assert float(objective.mlp.dense.bias.detach().abs().max()) == 0.0
        assert torch.equal(mlp, prepare_objective(spec, encoder).mlp.dense.weight)  # seeded by the run
    avg = prepare_objective(RunSpec(**{**TINY, "pooler": "avg"}), SentenceEncoder.from_name("tiny-random-bert", "avg"))
    assert avg.mlp is None  # Table 6 "w/o MLP": other poolers train without one


def test_cls_before_pooler_trains_on_a_backbone_without_a_pooler():
    """Only ``cls`` evaluates the pooler module; ``cls_before_pooler`` must not need one to export the MLP into."""
    from transformers import BertConfig, BertModel

    tiny = SentenceEncoder.from_name("tiny-random-bert", "avg")
    backbone = BertModel(
        BertConfig(
            vocab_size=tiny.tokenizer.vocab_size,
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
        ),
        add_pooling_layer=False,
    )
    encoder = SentenceEncoder(backbone, tiny.tokenizer, "cls_before_pooler")
    objective = prepare_objective(RunSpec(**TINY), encoder)
    assert objective.mlp is not None
    assert objective.evaluation_encoder() is encoder
    assert encoder.encode(["a man is playing a guitar ."]).shape == (1, 16)


def test_sup_simcse_checkpoint_evaluates_the_trained_mlp(tmp_path):
    spec = RunSpec(**{**TINY, "objective": "simcse_sup", "train_data": "snli_devtest_for_simcse", "pooler": "cls"})
    objective, outcome = _train(spec, tmp_path / "run")
    saved = SentenceEncoder.from_name(str(outcome.best_dir), "cls")
    assert torch.equal(saved.backbone.pooler.dense.weight, objective.mlp.dense.weight)
    sentences = ["a man is playing a guitar .", "the cat is eating"]
    assert (saved.encode(sentences) == objective.evaluation_encoder().encode(sentences)).all()


def test_epoch_order_computes_one_permutation_per_epoch(monkeypatch):
    import numpy as np

    calls = []
    real = np.random.default_rng
    monkeypatch.setattr(loop.np.random, "default_rng", lambda seed: calls.append(seed) or real(seed))
    order = EpochOrder(n_rows=100, batch_size=8, seed=3)  # 12 steps per epoch
    steps = [order.indices(s) for s in range(30)]
    assert calls == [[3, 0], [3, 1], [3, 2]]
    first_epoch = np.concatenate(steps[:12])
    assert len(set(first_epoch.tolist())) == 96  # no row twice within an epoch
    assert (EpochOrder(100, 8, 3).indices(13) == steps[13]).all()  # a resumed run sees the same rows
    with pytest.raises(ValueError, match="cannot fill one batch"):
        EpochOrder(5, 8, 0)


def test_step_randomness_does_not_depend_on_where_a_run_started():
    assert loop.step_rng(42, 7).random() == loop.step_rng(42, 7).random()
    assert loop.step_rng(42, 7).random() != loop.step_rng(42, 8).random()


def test_state_is_written_when_due_not_at_every_evaluation(monkeypatch, tmp_path):
    writes = []
    real = loop.atomic_write
    monkeypatch.setattr(loop, "atomic_write", lambda path, fn: writes.append(path.name) or real(path, fn))
    spec = RunSpec(**{**TINY, "steps": 9})
    _train(spec, tmp_path / "rare", save_state_every_s=3600.0)
    assert writes == ["state.pt"]  # only after the last step
    writes.clear()
    _train(spec, tmp_path / "often", save_state_every_s=0.0)
    assert writes == ["state.pt"] * 3


def test_rng_state_round_trip_is_on_the_cpu():
    state = loop.rng_state(torch.device("cpu"))
    assert set(state) == {"cpu"} and state["cpu"].device.type == "cpu"
    expected = torch.rand(3)
    loop.set_rng_state(state, torch.device("cpu"))
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (resume with the CUDA RNG state)")
def test_resume_on_cuda(tmp_path):
    spec = RunSpec(**{**TINY, "objective_params": {"augmentation": "delete_one_word"}})

    def on_cuda(folder, evaluate=None):
        encoder = SentenceEncoder.from_name(spec.backbone, spec.pooler, seed=spec.seed).to("cuda")
        objective = prepare_objective(spec, encoder)
        return train(
            objective,
            spec,
            execute._training_rows(spec),
            evaluate or _dev_eval(spec),
            folder,
            progress=False,
            save_state_every_s=0.0,
        )

    reference = on_cuda(tmp_path / "reference")
    evaluate = _dev_eval(spec)

    def interrupt(encoder, step):
        if step == 6:
            raise KeyboardInterrupt
        return evaluate(encoder, step)

    with pytest.raises(KeyboardInterrupt):
        on_cuda(tmp_path / "resumed", interrupt)
    resumed = on_cuda(tmp_path / "resumed")
    assert resumed.resumed_from_step == 3 and resumed.losses == reference.losses


def test_ensure_runs_once_and_writes_a_complete_record(monkeypatch, tmp_path):
    monkeypatch.setenv("SENTEMB_RUN_EVENTS", str(tmp_path / "events.jsonl"))
    spec = RunSpec(**TINY)
    record = execute.ensure(spec, progress=False)
    assert record["run_id"] == spec.run_id
    training = record["training"]
    assert training["best_step"] in (3, 6) and training["best_is_last"] == (training["best_step"] == 6)
    assert [p["step"] for p in training["dev_curve"]] == [0, 3, 6]
    phase = training["phase_seconds"]
    assert set(phase) == {"steps", "batching", "dev_evaluation", "checkpoint", "total"}
    assert phase["steps"] + phase["batching"] + phase["dev_evaluation"] + phase["checkpoint"] <= phase["total"] + 1e-6
    assert 0.0 < training["overhead_fraction"] < 1.0
    assert record["precision"] == {"training": "fp32", "dev_evaluation": "fp32", "final_evaluation": "fp32"}
    for key in ("alignment", "uniformity", "singular_values", "cosine_by_rating"):
        assert key in record["analysis"]
    assert not (settings.checkpoints_root() / spec.run_id / "state.pt").exists()
    assert (settings.checkpoints_root() / spec.run_id / "best" / "config.json").is_file()
    prov = record["provenance"]
    assert prov["synthetic_data"] is True and prov["seed"] == spec.seed and "torch" in prov["packages"]
    assert prov["backbone_revision"] == "random"
    assert record["timing"]["total_seconds"] > 0

    def must_not_run(*args, **kwargs):
        raise AssertionError("a spec with a record was run again")

    monkeypatch.setattr(execute, "_run", must_not_run)
    assert execute.ensure(spec, progress=False) == record
    with pytest.raises(execute.NotRun):
        execute.ensure(dataclasses.replace(spec, seed=7), run_missing=False)
    logged = events.read(tmp_path / "events.jsonl")  # for run_all.sh's closing table
    assert list(logged["state"]) == ["trained", "loaded"] and set(logged["run_id"]) == {spec.run_id}


def test_trajectory_is_sampled_between_evaluations():
    spec = RunSpec(**{**TINY, "trajectory_every": 2})
    record = execute.ensure(spec, progress=False)
    assert [p["step"] for p in record["training"]["trajectory"]] == [0, 2, 3, 4, 6]
    assert [p["step"] for p in record["training"]["dev_curve"]] == [0, 3, 6]


def test_bf16_training_runs_and_is_recorded():
    spec = RunSpec(**{**TINY, "precision": "bf16", "steps": 3})
    record = execute.ensure(spec, progress=False)
    assert record["precision"] == {"training": "bf16", "dev_evaluation": "bf16", "final_evaluation": "fp32"}
    assert record["training"]["final_loss"] == record["training"]["final_loss"]  # not NaN


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (fp16 autocast + gradient scaler)")
def test_fp16_training_on_cuda_is_finite_recorded_and_close_to_fp32():
    """The full profile's precision: fp16 autocast with a gradient scaler, on CUDA only (CI has no GPU; run on a
    GPU machine: benchmarks/gpu_checks.sh)."""
    fp16 = execute.ensure(RunSpec(**{**TINY, "precision": "fp16"}), progress=False, device="cuda")
    fp32 = execute.ensure(RunSpec(**TINY), progress=False, device="cuda")
    assert fp16["precision"] == {"training": "fp16", "dev_evaluation": "fp16", "final_evaluation": "fp32"}
    assert "cuda" in json.dumps(fp16["provenance"]["device"]).lower()
    losses = [fp16["training"]["final_loss"], fp32["training"]["final_loss"]]
    assert all(math.isfinite(v) for v in losses), losses
    assert abs(losses[0] - losses[1]) <= 0.05 * abs(losses[1]), losses  # 6 steps: fp16 rounding, not divergence
    for record in (fp16, fp32):
        assert all(math.isfinite(p["stsb_dev_spearman"]) for p in record["training"]["dev_curve"])


def test_fp16_needs_cuda():
    spec = RunSpec(**{**TINY, "precision": "fp16"})
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ConfigError, match="fp16 needs a CUDA device"):
        execute.ensure(spec, progress=False, device="cpu")


def test_a_corrupt_record_is_named_and_never_overwritten_silently(capsys):
    """A truncated record (its first 200 bytes): loading it without running is an error naming the file and the fix;
    running moves it aside (kept), says so, and computes the run again."""
    spec = RunSpec(**TINY)
    record = execute.ensure(spec, progress=False)
    path = store.record_path(spec.profile, spec.run_id)
    truncated = path.read_text()[:200]
    path.write_text(truncated)
    with pytest.raises(store.BrokenRecord, match=rf"{spec.run_id}.json cannot be read[\s\S]*delete it"):
        execute.ensure(spec, run_missing=False)
    with pytest.raises(store.BrokenRecord, match=f"{spec.run_id}.json"):
        store.all_records(spec.profile)
    assert path.read_text() == truncated
    again = execute.ensure(spec, progress=False)
    assert f"{spec.run_id}.json cannot be read" in capsys.readouterr().err
    assert path.with_name(path.name + ".broken").read_text() == truncated
    assert again["metrics"]["stsb_dev_spearman"] == record["metrics"]["stsb_dev_spearman"]


def test_the_runs_command_lists_good_records_and_names_a_broken_one(capsys):
    from sentemb import cli

    good, bad = RunSpec(**TINY), RunSpec(**{**TINY, "objective": "none", "train_data": None, "steps": 0})
    for spec in (good, bad):
        execute.ensure(spec, progress=False)
    path = store.record_path(bad.profile, bad.run_id)
    path.write_text(path.read_text()[:200])
    assert cli.main(["runs", "--profile", "smoke"]) == 1
    out, err = capsys.readouterr()
    assert good.run_id in out and bad.run_id not in out
    assert f"{bad.run_id}.json cannot be read" in err and "Traceback" not in err


def test_a_crash_in_the_final_evaluation_keeps_the_training(monkeypatch):
    spec = RunSpec(**TINY)
    real = execute._final_evaluation

    def boom(*args, **kwargs):
        raise RuntimeError("simulated crash in evaluation")

    monkeypatch.setattr(execute, "_final_evaluation", boom)
    with pytest.raises(RuntimeError, match="simulated crash"):
        execute.ensure(spec, progress=False)
    assert not store.record_path(spec.profile, spec.run_id).exists()
    assert (settings.checkpoints_root() / spec.run_id / "state.pt").is_file()

    steps = []
    original_forward = registry.TRAINING_OBJECTIVES["simcse_unsup"].forward
    monkeypatch.setattr(
        registry.TRAINING_OBJECTIVES["simcse_unsup"],
        "forward",
        lambda self, rows, rng: steps.append(1) or original_forward(self, rows, rng),
    )
    monkeypatch.setattr(execute, "_final_evaluation", real)
    record = execute.ensure(spec, progress=False)
    assert steps == []  # not one training step again
    assert record["training"]["resumed_from_step"] == 6
    assert store.record_path(spec.profile, spec.run_id).is_file()


def test_a_record_holds_every_group_it_asked_for(monkeypatch):
    from sentemb.evaluate.embedding_cache import load_run_embeddings

    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    spec = RunSpec(
        profile="smoke", backbone="tiny-random-bert", pooler="avg", final_eval="sts,probing", synthetic_data=True
    )
    record = execute.ensure(spec, progress=False)
    assert len(record["metrics"]["tasks"]) == 7 and "Avg." in record["metrics"]["summary"]
    probing = record["metrics"]["transfer"]["tasks"]
    assert len(probing) == 10 and {r["status"] for r in probing.values()} == {"not run"}
    assert record["metrics"]["transfer"]["params"]["mode"] == "fasttest"
    embeddings = load_run_embeddings(spec.run_id)
    assert embeddings is not None and len(embeddings) == record["metrics"]["n_sentences_encoded"]
    with pytest.raises(ConfigError, match="final_eval"):
        RunSpec(**{**TINY, "final_eval": "transfer,sts"})


def test_the_grid_run_ids_are_the_committed_records():
    """Run ids are content hashes: a change to the spec or an objective's defaults changes them. The committed
    small-profile records must hold every run of the grid, the ``--extended`` rows and seeds included (``./run_all.sh``
    does not run those: their records are committed instead). Regenerate them, never rename or edit them."""
    from papers.simcse.experiments import grid

    runs = grid("small", extended=True)
    require_committed_small_records("simcse", [spec.run_id for specs in runs.values() for spec in specs])


def test_the_full_profile_grid_is_scaled_too():
    """Regression: the full profile skipped Profile.scale, so its analysis splits stayed dev+test."""
    from papers.simcse.experiments import grid

    full = grid("full")
    unsup = full["unsup"]
    assert (
        [s.seed for s in unsup] == [42, 43, 44, 45, 46] and len(full["dropout_0.5"]) == 5 and len(full["crop_0.2"]) == 1
    )
    assert unsup[0].analysis_splits == ("train", "dev", "test")  # "all STS-B sentences" (Figures 3, F.1, G.1)
    assert unsup[0].trajectory_every == 10 and unsup[0].precision == "fp16"  # Figure 2: every 10 steps; --fp16
    assert unsup[0].steps == 15_625 and unsup[0].backbone == "bert-base-uncased"
    assert full["dropout_0"][0].analysis_splits == ("dev",)  # Table 3 runs: scored and analysed on STS-B dev


def test_the_small_profile_grid_seeds_and_shares_runs():
    from papers.simcse.experiments import grid

    small = grid("small", extended=False)  # the core rows; the ablations: tests/test_simcse_ablations.py
    for name, specs in small.items():
        assert [s.seed for s in specs] == ([42, 43, 44] if name in ("unsup", "sup") else [42])
    unsup = small["unsup"][0]
    assert unsup.precision == "fp32" and unsup.eval_precision == "fp32" and unsup.steps == 60
    assert unsup.trajectory_every is None and unsup.train_data == "wiki_sentences_combined"
    ids = [s.run_id for specs in small.values() for s in specs]
    assert len(ids) == len(set(ids)) == 8  # 2 backbones, unsup and sup with 3 seeds each


def test_a_diverging_loss_stops_the_run_with_a_clear_error(toy, monkeypatch, tmp_path):
    """A NaN loss (SimCSE++'s DCL alone at tau_DCL = 0.05 in Eq. 5's form did this) stops training at that step:
    no record, no evaluation of broken weights, and the error names the run, the step and what to change."""
    calls = []
    real = ToyObjective.forward

    def nan_at_step_3(self, rows, rng):
        calls.append(1)
        loss = real(self, rows, rng)
        return loss * float("nan") if len(calls) == 3 else loss

    monkeypatch.setattr(ToyObjective, "forward", nan_at_step_3)
    with pytest.raises(TrainingDiverged, match="at step 3.*Lower the learning rate"):
        execute.ensure(toy, progress=False)
    assert not store.record_path(toy.profile, toy.run_id).exists()


def test_run_command_goes_on_after_a_failed_run_and_reports_it(monkeypatch, capsys):
    from sentemb import cli
    from sentemb.errors import SentembError

    def fake_ensure(spec, run_missing=True, progress=True):
        if spec.seed == 42:
            raise SentembError("simulated failure")
        return {"run_id": spec.run_id, "metrics": {"stsb_dev_spearman": 0.5}, "timing": {"total_seconds": 1.0}}

    monkeypatch.setattr(execute, "ensure", fake_ensure)
    # one at a time (the smoke profile's default is two side by side, in fresh processes that the patch misses)
    assert cli.main(["run", "--paper", "simcse", "--profile", "smoke", "--only", "unsup", "--jobs", "1"]) == 2
    out = capsys.readouterr()
    assert "FAILED: simulated failure" in out.out and "seed 43" in out.out  # the second seed still ran
    assert "1 of 2 runs failed" in out.err


def test_a_nan_dev_score_never_wins_checkpoint_selection(toy, tmp_path):
    """Dev scores {3: nan, 6: 0.5} select step 6 (a collapsed run can score NaN; before the fix NaN won)."""
    toy = dataclasses.replace(toy, steps=9)
    scores = {0: 0.1, 3: float("nan"), 6: 0.5, 9: 0.4}

    def dev(encoder, step):
        return {"stsb_dev_spearman": scores[step], "alignment": 0.0, "uniformity": 0.0}

    _, outcome = _train(toy, tmp_path / "nan", dev)
    assert outcome.best_step == 6 and outcome.best_dev == 0.5
    scores.update({3: float("nan"), 6: float("nan"), 9: float("nan")})
    _, every_nan = _train(dataclasses.replace(toy, seed=7), tmp_path / "all_nan", dev)
    assert every_nan.best_step == 3  # nothing scored a number: the first evaluation is kept, flagged by its NaN


def test_selection_counts_nan_as_the_worst_score():
    from sentemb.selection import best_of, worst_if_nan

    assert best_of([1, 2, 3], {1: float("nan"), 2: 0.5, 3: 0.9}.get) == 3
    assert best_of([1, 2], {1: float("nan"), 2: -0.5}.get) == 2
    assert worst_if_nan(float("nan")) == float("-inf") and worst_if_nan(None) == float("-inf")


def test_a_record_of_earlier_code_is_never_returned():
    """The code version is part of every run id, and a record whose stored spec is not the spec asked for (earlier
    code, or edited by hand) is refused with the fix, never handed back."""
    spec = RunSpec(**TINY)
    assert spec.as_dict()["code_version"] == 2
    with pytest.raises(ConfigError, match="code_version 1 is not this code's 2"):
        RunSpec(**{**TINY, "code_version": 1})
    old = spec.as_dict()
    del old["code_version"]
    store.save({"run_id": spec.run_id, "profile": spec.profile, "spec": old})
    with pytest.raises(SentembError, match=r"does not hold the spec[\s\S]*delete it"):
        execute.ensure(spec, run_missing=False)
