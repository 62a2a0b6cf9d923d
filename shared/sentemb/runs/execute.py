"""ensure(spec): the run record of a spec, running train -> evaluate -> analyse when it is missing.

A spec that already has a record is never run again. :func:`run_model` gives the evaluated model of a recorded
run (its ``best/`` checkpoint, or the run trained again when this machine's cache has lost it), and
:func:`initial_encoders` the encoders a spec's objective starts from: the backbone, or the models of the runs named
in ``init_runs`` (TNCSE's stage-1 pair, reused by run id, not retrained when their checkpoints are here). A run writes
nothing under results/ until it
has finished; its checkpoints live in ``$SENTEMB_CACHE/checkpoints/<run_id>`` so that an interrupted
run resumes from its last saved evaluation. Training runs in the spec's ``precision``, and so do the STS-B dev
evaluations that select the checkpoint; the final evaluation runs in ``eval_precision`` (fp32 by default, so
that the numbers are SentEval's). The record says which precision each phase used.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import torch

from sentemb import distributed, settings
from sentemb.analysis.stsb import align_uniform, analyse
from sentemb.data.corpora import load_rows
from sentemb.data.files import track_reads
from sentemb.errors import ConfigError, SentembError
from sentemb.evaluate.embedding_cache import cached_encode, load_run_embeddings, save_run_embeddings
from sentemb.evaluate.sts import PROTOCOL, correlations, pair_scores
from sentemb.evaluate.subsets import load_sts_task
from sentemb.evaluate.suite import evaluate_model
from sentemb.models.backbone import TINY_RANDOM_BERT, backbone_revision
from sentemb.models.encoder import SentenceEncoder
from sentemb.models.saved import is_saved_model, load_saved_model
from sentemb.models.summed_encoders import SummedEncoders
from sentemb.objectives.registry import encoders_needed, objective_class
from sentemb.profiles import get_profile
from sentemb.runs import events, provenance, store
from sentemb.runs.recorded import recorded
from sentemb.spec import RunSpec
from sentemb.train import speedups as speedups_of
from sentemb.train.loop import prepare_objective, train

ENCODE_BATCH = 64  # the plain path's evaluation batch (``eval_batch`` of sentemb.train.speedups changes it)


class NotRun(SentembError):
    """The record is missing and running was not allowed."""


def _stsb(spec: RunSpec):
    """STS-B as the spec's evaluations read it: generated or the mirror's, with at most ``eval_pairs`` pairs of each
    split (the dev evaluations that select the checkpoint, the final evaluation and the STS-B analyses)."""
    return load_sts_task("STSBenchmark", spec.synthetic_data, spec.eval_pairs)


def _training_rows(spec: RunSpec) -> list:
    """The rows the spec's objective reads (sentences, NLI triples, ...) from its training data."""
    return load_rows(objective_class(spec.objective).rows, "synthetic" if spec.synthetic_data else spec.train_data)


def _dev_evaluator(spec: RunSpec, stsb, progress: bool, batch_size: int = ENCODE_BATCH):
    dev = stsb.parts["dev"]
    sentences = dev.sentences()
    unique = list(dict.fromkeys(sentences))
    identity = {
        "backbone": spec.backbone,
        "pooler": spec.pooler,
        "max_position_truncation": True,
        "seed": spec.seed if (spec.pooler == "cls" or spec.backbone == TINY_RANDOM_BERT) else None,
        "precision": spec.precision,
    }
    if spec.init_runs:  # the step-0 model is the sum or the model of other runs, with this spec's dropout
        identity.update(init_runs=list(spec.init_runs), dropout=spec.dropout)
    if encoders_needed(spec.objective) > 1:
        identity["n_encoders"] = encoders_needed(spec.objective)

    def evaluate_dev(encoder: SentenceEncoder | SummedEncoders, step: int) -> dict:
        def encode(s):
            return encoder.encode(s, batch_size=batch_size, progress=progress and "STS-B dev", precision=spec.precision)

        vectors = cached_encode(identity, unique, encode) if step == 0 else encode(unique)
        lookup = dict(zip(unique, vectors))
        geometry = align_uniform([dev], lookup)
        return {
            "stsb_dev_spearman": correlations(pair_scores(dev, lookup), dev.scores)["spearman"],
            "alignment": geometry["alignment"],
            "uniformity": geometry["uniformity"],
        }

    return evaluate_dev


def _final_evaluation(
    spec: RunSpec, encoder: SentenceEncoder | SummedEncoders, progress: bool, batch_size: int = ENCODE_BATCH
) -> tuple[dict, dict]:
    """STS (and any further groups of ``final_eval``) and the STS-B analyses, from one encoding pass. The ``declutr``
    group adds DeCLUTR's STS protocol (original SentEval: STS12-16 "mean", a regressor for STS-B and SICK-R) as
    ``metrics["sts_senteval"]``, next to SimCSE's."""
    stsb = _stsb(spec)
    analysis_pairs = [stsb.parts[s] for s in spec.analysis_splits]
    extra = [s for p in analysis_pairs for s in p.sentences()] + stsb.parts["dev"].sentences()
    groups = [] if spec.final_eval == "stsb_dev" else spec.final_eval.split(",")
    splits = tuple(dict.fromkeys(("dev", "test") + tuple(spec.analysis_splits)))
    results, lookup = evaluate_model(
        lambda s: encoder.encode(
            s, batch_size=batch_size, progress=progress and "final evaluation", precision=spec.eval_precision
        ),
        groups,
        sts_splits=splits,
        transfer_mode=get_profile(spec.profile).transfer_mode,
        synthetic=spec.synthetic_data,
        mteb_model=encoder,
        extra_sentences=extra,
        batch_size=batch_size,
        precision=spec.eval_precision,
        sts_protocols=("simcse", "senteval") if "declutr" in groups else ("simcse",),
        sts_pairs=spec.eval_pairs,
        transfer_examples=spec.transfer_examples,
    )
    metrics = results.pop("sts_simcse", {"protocol": PROTOCOL, "splits": list(splits), "tasks": {}, "summary": {}})
    metrics.update({k: v for k, v in results.items() if k in ("transfer", "mteb", "sts_senteval")})
    dev = stsb.parts["dev"]
    metrics["stsb_dev_spearman"] = correlations(pair_scores(dev, lookup), dev.scores)["spearman"]
    metrics["n_sentences_encoded"] = results["n_sentences"]
    metrics["seconds"] = results["seconds"]
    save_run_embeddings(spec.run_id, lookup)
    return metrics, analyse(analysis_pairs, lookup, spec.analysis_splits)


def _train(spec: RunSpec, rows: list, stsb, device: torch.device, progress: bool):
    """(objective, outcome): the spec's objective around its initial encoders, trained by the loop with the
    device's speed-ups (``$SENTEMB_SPEEDUPS``)."""
    objective = prepare_objective(spec, *initial_encoders(spec, device, progress))
    speedups = speedups_of.for_device(device)
    outcome = train(
        objective,
        spec,
        rows,
        _dev_evaluator(spec, stsb, progress, speedups.eval_batch),
        settings.checkpoints_root() / spec.run_id,
        progress=progress,
        save_state_every_s=settings.state_every_s(),
        speedups=speedups,
    )
    return objective, outcome


def initial_encoders(spec: RunSpec, device: torch.device, progress: bool = False) -> list[SentenceEncoder]:
    """The encoders the spec's objective starts from, one per encoder it trains: the backbone, or (``init_runs``)
    each named run's evaluated model loaded with this spec's dropout. A named run must be recorded; its checkpoint
    is trained again when this machine's cache has lost it (:func:`run_checkpoint`)."""
    if not spec.init_runs:
        return [
            SentenceEncoder.from_name(spec.backbone, spec.pooler, dropout=spec.dropout, seed=spec.seed).to(device)
            for _ in range(max(1, encoders_needed(spec.objective)))
        ]
    encoders = []
    for run_id in spec.init_runs:
        record = store.load(spec.profile, run_id)
        if record is None:
            raise NotRun(
                f"run {spec.run_id} starts from the model of run {run_id}, which has no record "
                f"({store.record_path(spec.profile, run_id)}).\n  Fix: run the grid that defines run {run_id} "
                "first (a paper grid lists the runs it starts from before the runs that use them)."
            )
        directory, _, _ = run_checkpoint(record, device, progress)
        model = load_saved_model(directory, spec.pooler, dropout=spec.dropout, seed=spec.seed)
        if not isinstance(model, SentenceEncoder):
            raise ConfigError(
                f"init_runs of run {spec.run_id}: run {run_id}'s model is a sum of encoders, and each "
                "run named in init_runs initialises one encoder"
            )
        encoders.append(model.to(device))
    return encoders


def _evaluation_embeddings_of(spec: RunSpec, run_id: str) -> dict | None:
    """Run ``run_id``'s saved final-evaluation embeddings when they are what ``spec`` would compute from that run's
    model (same backbone, pooler and evaluation precision), else None; None also when this machine lacks them."""
    record = store.load(spec.profile, run_id)
    if record is None:
        return None
    member = RunSpec.from_dict(record["spec"])
    if (member.backbone, member.pooler, member.eval_precision) != (spec.backbone, spec.pooler, spec.eval_precision):
        return None
    return load_run_embeddings(run_id)


def untrained_model(spec: RunSpec, device: torch.device, progress: bool = False):
    """The evaluated model of a spec that does not train: the backbone, or the sum of the ``init_runs`` models.
    Each member of a sum reuses its run's saved evaluation embeddings where this machine has them, so that a plain
    ensemble of recorded runs encodes only the sentences those runs did not."""
    if spec.init_runs:
        return SummedEncoders(
            initial_encoders(spec, device, progress),
            name="sum of runs " + "+".join(spec.init_runs),
            known=[_evaluation_embeddings_of(spec, run_id) for run_id in spec.init_runs],
        )
    encoder = SentenceEncoder.from_name(spec.backbone, spec.pooler, dropout=spec.dropout, seed=spec.seed)
    return encoder.to(device)


def _stsb_dev(model, synthetic: bool, pairs: int | None = None) -> float:
    """``model``'s STS-B dev Spearman (on at most ``pairs`` pairs of it, the sample a spec's ``eval_pairs`` names)."""
    dev = load_sts_task("STSBenchmark", synthetic, pairs).parts["dev"]
    sentences = list(dict.fromkeys(dev.sentences()))
    lookup = dict(zip(sentences, model.encode(sentences, batch_size=ENCODE_BATCH)))
    return correlations(pair_scores(dev, lookup), dev.scores)["spearman"]


@contextmanager
def recorded_threads(record: dict):
    """Torch's CPU threads set to the count the run was recorded with (``provenance.torch_threads``), then restored.
    Sums split over another number of threads round differently (a smoke run's tied dev cosines reorder, and its
    STS-B dev moves by up to 2 points between one and two threads; :mod:`sentemb.runs.side_by_side`), so a run
    trained again for its lost checkpoint gets the threads it had, whatever this process was started with."""
    before, wanted = torch.get_num_threads(), record.get("provenance", {}).get("torch_threads")
    if wanted and wanted != before:
        torch.set_num_threads(wanted)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run_checkpoint(record: dict, device: torch.device, progress: bool = False):
    """(directory, where it came from, the model when it was trained just now else None) of a trained run's best
    model: ``$SENTEMB_CACHE/checkpoints/<run_id>/best``. When this machine's cache lacks it the run is trained
    again from its spec (seeds fix initialisation, data order and dropout masks) and the check compares the
    re-trained model's STS-B dev Spearman with the record's."""
    spec = RunSpec.from_dict(record["spec"])
    best = settings.checkpoints_root() / spec.run_id / "best"
    if is_saved_model(best):
        return best, {"source": "checkpoint"}, None
    events.note("retrained", spec.run_id)
    stsb = _stsb(spec)
    with recorded_threads(record):
        objective, _ = _train(spec, _training_rows(spec), stsb, device, progress)
        (settings.checkpoints_root() / spec.run_id / "state.pt").unlink(missing_ok=True)
        model = objective.evaluation_encoder()
        retrained_dev = _stsb_dev(model, spec.synthetic_data, spec.eval_pairs)
        threads = torch.get_num_threads()
    check = {
        "record_stsb_dev": record["metrics"]["stsb_dev_spearman"],
        "retrained_stsb_dev": retrained_dev,
        "torch_threads": threads,
    }
    check["abs_difference"] = abs(check["record_stsb_dev"] - check["retrained_stsb_dev"])
    return best, {"source": "retrained", "dev_check": check}, model


def run_model(record: dict, device: torch.device, progress: bool = False):
    """(the evaluated model of a recorded run, where it came from): the backbone for a run that does not train,
    else its best weights (:func:`run_checkpoint`), one encoder or a sum of encoders."""
    spec = RunSpec.from_dict(record["spec"])
    if not spec.trains:
        return untrained_model(spec, device, progress), {"source": "ensemble" if spec.init_runs else "backbone"}
    directory, origin, model = run_checkpoint(record, device, progress)
    if model is None:
        model = load_saved_model(directory, spec.pooler, dropout=spec.dropout, seed=spec.seed).to(device)
    return model, origin


def ensure(spec: RunSpec, run_missing: bool = True, progress: bool = True, device: str | None = None) -> dict:
    """The record of ``spec`` (:func:`sentemb.runs.recorded.recorded`); without one, the spec is run and its record
    written, or (``run_missing=False``) :class:`NotRun`."""
    record = recorded(spec, run_missing)
    if record is not None:
        return record
    if not run_missing:
        raise NotRun(f"run {spec.run_id} ({spec.profile}) has no record and running was disabled")
    provenance.refuse_dirty_committed_store()
    return _run(spec, progress, torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu")))


def _run(spec: RunSpec, progress: bool, device: torch.device) -> dict:
    """Train (every rank of a torchrun run), then evaluate and write the record (rank 0). The other ranks wait for
    the record in :func:`sentemb.distributed.wait_for_main` (a day's timeout: the final evaluation can take hours)
    and return it, so that every rank sees the same store afterwards. A SentembError on a rank (its run failed, the
    grid goes on) meets the others there too; any other error, or a rank that failed while the others are in a
    training step's collective, stops the processes (:func:`sentemb.distributed.failures_named`)."""
    main, record = distributed.is_main(), None
    try:
        with distributed.failures_named():
            if main:
                record = _run_main(spec, progress, device)
            elif spec.trains:
                _train(spec, _training_rows(spec), _stsb(spec), device, progress=False)
    except SentembError:
        distributed.wait_for_main()  # every rank learns here that the run failed, then goes on as the others do
        raise
    distributed.wait_for_main()  # rank 0 has written the record, or failed
    if main:
        return record
    record = store.load(spec.profile, spec.run_id)
    if record is None:
        raise SentembError(f"run {spec.run_id}: rank 0 wrote no record (its error is in rank 0's output)")
    return record


def _run_main(spec: RunSpec, progress: bool, device: torch.device) -> dict:
    started = time.perf_counter()
    prov = {**provenance.collect(device), "processes": distributed.world_size()}
    speedups = speedups_of.for_device(device)
    if speedups.names():  # absent from the plain path's records, so theirs are as before
        prov["speedups"] = speedups.names()
    with track_reads() as data_hashes:
        stsb = _stsb(spec)
        training = None
        if not spec.trains:
            encoder = untrained_model(spec, device, progress)
        else:
            rows = _training_rows(spec)
            objective, outcome = _train(spec, rows, stsb, device, progress)
            encoder = objective.evaluation_encoder()  # the best weights, loaded back by the loop
            encoder.name = f"{spec.objective} (run {spec.run_id}, best step {outcome.best_step})"
            phase = outcome.seconds
            training = {
                "dev_curve": outcome.dev_curve,
                "trajectory": outcome.trajectory,
                "best_step": outcome.best_step,
                "best_stsb_dev": outcome.best_dev,
                "best_is_last": outcome.best_step == spec.steps,
                "train_seconds": outcome.train_seconds,
                "phase_seconds": phase,
                "overhead_fraction": 1.0 - phase["steps"] / phase["total"] if phase.get("total") else None,
                "rows_seen": outcome.rows_seen,
                "rows_per_second": outcome.rows_per_second,
                "sequences_per_second": outcome.sequences_per_second,
                "resumed_from_step": outcome.resumed_from_step,
                "final_loss": outcome.final_loss,
                "n_training_rows_available": outcome.n_rows,
                "checkpoint": str(outcome.best_dir),
            }
        eval_started = time.perf_counter()
        metrics, analysis = _final_evaluation(spec, encoder, progress, speedups.eval_batch)
        eval_seconds = time.perf_counter() - eval_started
    total = time.perf_counter() - started
    record = {
        "schema_version": store.SCHEMA_VERSION,
        "run_id": spec.run_id,
        "profile": spec.profile,
        "spec": spec.as_dict(),
        "notes": spec.notes,
        "metrics": metrics,
        "training": training,
        "analysis": analysis,
        "precision": {
            "training": spec.precision if spec.trains else None,
            "dev_evaluation": spec.precision if spec.trains else None,
            "final_evaluation": spec.eval_precision,
        },
        "provenance": {
            **prov,
            "data_sha256": dict(sorted(data_hashes.items())),
            "synthetic_data": spec.synthetic_data,
            "seed": spec.seed,
            "backbone_revision": backbone_revision(spec.backbone),
            "truncated_eval_sentences": encoder.truncated_sentences,
        },
        "timing": {
            "total_seconds": total,
            "final_eval_seconds": eval_seconds,
            "train_seconds": training["train_seconds"] if training else 0.0,
            "training_phase_seconds": training["phase_seconds"]["total"] if training else 0.0,
        },
    }
    store.save(record)
    events.note("trained", spec.run_id)
    if spec.trains:  # the record is safe: the resumable training state is no longer needed
        (settings.checkpoints_root() / spec.run_id / "state.pt").unlink(missing_ok=True)
    return record
