"""Run specs, ids, records, and resuming an interrupted training run."""

import dataclasses
import json

import pytest

from sentemb.data.sts import load_task
from sentemb.errors import ConfigError, SentembError
from sentemb.models.encoder import SentenceEncoder
from sentemb.runs import execute, store
from sentemb.runs.spec import RunSpec
from sentemb.train.loop import train

TINY = dict(profile="smoke", backbone="tiny-random-bert", pooler="cls_before_pooler", objective="simcse_unsup",
            train_data="wiki_sentences_combined", steps=6, batch_size=8, eval_every=3, lr=1e-3,
            final_eval="stsb_dev", synthetic_data=True)


def test_run_id_is_a_content_hash():
    a, b = RunSpec(**TINY), RunSpec(**TINY)
    assert a.run_id == b.run_id and len(a.run_id) == 16
    assert dataclasses.replace(a, dropout=0.2).run_id != a.run_id
    assert dataclasses.replace(a, notes="a comment").run_id == a.run_id
    assert RunSpec.from_dict(a.as_dict()) == a


@pytest.mark.parametrize("change, message", [
    ({"pooler": "max"}, "pooler"), ({"objective": "simclr"}, "objective"), ({"steps": 0}, "steps"),
    ({"dropout": 1.5}, "dropout"), ({"profile": "huge"}, "profile"), ({"train_data": None}, "train_data"),
])
def test_malformed_specs_are_rejected(change, message):
    with pytest.raises(ConfigError, match=message):
        RunSpec(**{**TINY, **change})


def test_unknown_spec_field_is_rejected():
    with pytest.raises(ConfigError, match="unknown spec field"):
        RunSpec.from_dict({**TINY, "learning_rate": 1e-5})


def test_ensure_runs_once_and_writes_a_complete_record(monkeypatch):
    spec = RunSpec(**TINY)
    record = execute.ensure(spec, progress=False)
    assert record["run_id"] == spec.run_id
    assert record["training"]["best_step"] in (3, 6)
    assert [p["step"] for p in record["training"]["dev_curve"]] == [0, 3, 6]
    for key in ("alignment", "uniformity", "singular_values", "cosine_by_rating"):
        assert key in record["analysis"]
    from sentemb import settings

    assert not (settings.checkpoints_root() / spec.run_id / "state.pt").exists()
    assert (settings.checkpoints_root() / spec.run_id / "best" / "config.json").is_file()
    prov = record["provenance"]
    assert prov["synthetic_data"] is True and prov["seed"] == spec.seed and "torch" in prov["packages"]
    assert record["timing"]["total_seconds"] > 0

    def must_not_run(*args, **kwargs):
        raise AssertionError("a spec with a record was run again")

    monkeypatch.setattr(execute, "_run", must_not_run)
    assert execute.ensure(spec, progress=False) == record
    with pytest.raises(execute.NotRun):
        execute.ensure(dataclasses.replace(spec, seed=7), run_missing=False)


def test_corrupt_record_is_reported_not_overwritten():
    spec = RunSpec(**TINY)
    path = store.record_path(spec.profile, spec.run_id)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(SentembError, match="not valid JSON"):
        execute.ensure(spec, progress=False)
    assert path.read_text() == "{not json"


def _dev_eval(stsb):
    return execute._dev_evaluator(RunSpec(**TINY), stsb, progress=False)


def test_interrupted_training_resumes_to_the_same_result(tmp_path):
    spec = RunSpec(**TINY)
    stsb = load_task("STSBenchmark", synthetic=True)
    rows = execute._training_rows(spec)
    evaluate = _dev_eval(stsb)

    reference = train(SentenceEncoder.from_name(spec.backbone, spec.pooler, seed=spec.seed), spec, rows, evaluate,
                      tmp_path / "reference", progress=False)

    def interrupt_at_six(encoder, step):
        if step == 6:
            raise KeyboardInterrupt
        return evaluate(encoder, step)

    with pytest.raises(KeyboardInterrupt):
        train(SentenceEncoder.from_name(spec.backbone, spec.pooler, seed=spec.seed), spec, rows, interrupt_at_six,
              tmp_path / "resumed", progress=False)
    assert (tmp_path / "resumed" / "state.pt").is_file()
    resumed = train(SentenceEncoder.from_name(spec.backbone, spec.pooler, seed=spec.seed), spec, rows, evaluate,
                    tmp_path / "resumed", progress=False)
    assert resumed.resumed_from_step == 3
    assert (tmp_path / "resumed" / "state.pt").is_file()  # kept until the run record is written
    again = train(SentenceEncoder.from_name(spec.backbone, spec.pooler, seed=spec.seed), spec, rows, evaluate,
                  tmp_path / "resumed", progress=False)
    assert again.resumed_from_step == 6 and again.best_dev == resumed.best_dev  # nothing is trained twice
    ref_curve = [round(p["stsb_dev_spearman"], 6) for p in reference.dev_curve]
    new_curve = [round(p["stsb_dev_spearman"], 6) for p in resumed.dev_curve]
    assert new_curve == ref_curve
    assert resumed.losses == pytest.approx(reference.losses, rel=1e-5)


def test_failed_run_leaves_no_record(monkeypatch):
    spec = RunSpec(**TINY)

    def boom(*args, **kwargs):
        raise RuntimeError("simulated crash in evaluation")

    monkeypatch.setattr(execute, "_final_evaluation", boom)
    with pytest.raises(RuntimeError):
        execute.ensure(spec, progress=False)
    assert not store.record_path(spec.profile, spec.run_id).exists()
    assert json.dumps(spec.as_dict())


def test_a_record_holds_every_group_it_asked_for(monkeypatch):
    from sentemb.evaluate.embedding_cache import load_run_embeddings

    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    spec = RunSpec(profile="smoke", backbone="tiny-random-bert", pooler="avg", final_eval="sts,probing",
                   synthetic_data=True)
    record = execute.ensure(spec, progress=False)
    assert len(record["metrics"]["tasks"]) == 7 and "Avg." in record["metrics"]["summary"]
    probing = record["metrics"]["transfer"]["tasks"]
    assert len(probing) == 10 and {r["status"] for r in probing.values()} == {"not run"}
    assert record["metrics"]["transfer"]["params"]["mode"] == "fasttest"
    embeddings = load_run_embeddings(spec.run_id)
    assert embeddings is not None and len(embeddings) == record["metrics"]["n_sentences_encoded"]
    with pytest.raises(ConfigError, match="final_eval"):
        RunSpec(**{**TINY, "final_eval": "transfer,sts"})
