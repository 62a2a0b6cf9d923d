"""Derived records: analyses of a finished run's model, stored next to the run records.

Some of a paper's numbers are not part of a run's own evaluation but are computed from its model afterwards:
post-processing (whitening fitted on a corpus, then the STS tasks), sentence retrieval, the rank of a
cross-correlation matrix. Each is a *derived record*, ``<results>/runs/<profile>/derived/<derived_id>.json``,
with the same guarantees as a run record: written once and atomically, with its own provenance (commit, device,
data sha256, time), and never recomputed once it exists. ``derived_id`` hashes the run id, the analysis name and
its parameters, so two papers asking for the same analysis of the same run share it.

The model of a run is its best checkpoint in ``$SENTEMB_CACHE/checkpoints/<run_id>/best``. When this machine's cache
no longer has it (a fresh clone over committed records, a cleaned cache) the run is trained again from its spec:
seeds fix the initialisation, data order and dropout masks, so on the same kind of machine the same weights come
back. The derived record says so (``model.source = "retrained"``) and keeps a check, the re-trained model's fp32
STS-B dev Spearman next to the one in the run record.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Callable

import torch

from sentemb import settings
from sentemb.atomic import atomic_write_text
from sentemb.data.files import track_reads
from sentemb.models.encoder import SentenceEncoder
from sentemb.runs import events, provenance, store
from sentemb.runs.execute import NotRun, run_model
from sentemb.spec import SAMPLE_FIELDS, RunSpec

DERIVED_SCHEMA_VERSION = 1

Analysis = Callable[[SentenceEncoder, RunSpec], dict]  # or a SummedEncoders


def derived_id(run_id: str, analysis: str, params: dict) -> str:
    canonical = json.dumps({"run_id": run_id, "analysis": analysis, "params": params}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def sample_param(record: dict, field: str) -> dict:
    """``{field: size}`` when the run's spec sets that sample size (``eval_pairs`` or ``transfer_examples``; smoke),
    as the parameters of a derived record evaluated on the same sample name it; ``{}`` for a run evaluated on every
    pair or example, so that the derived ids of such runs are those of an analysis without a sample."""
    if field not in SAMPLE_FIELDS:
        raise ValueError(f"{field!r} is not a sample size; choose from {SAMPLE_FIELDS}")
    size = record["spec"].get(field)
    return {} if size is None else {field: size}


def derived_path(profile: str, ident: str) -> Path:
    return settings.results_root() / "runs" / profile / "derived" / f"{ident}.json"


def _load(path: Path, run_missing: bool) -> dict | None:
    """The derived record in ``path``; a broken one raises (naming the file and the fix), or, when it may be
    computed again, is moved aside with a warning (:func:`sentemb.runs.store.read`)."""
    return store.read(
        path, "recompute" if run_missing else "raise", expected_id=path.stem, kind="derived record", id_key="derived_id"
    )


def trained_encoder(record: dict, device: torch.device, progress: bool = False) -> tuple[object, dict]:
    """The evaluated model of a run (best weights: one encoder or a sum of encoders), and where it came from."""
    return run_model(record, device, progress)


def ensure_derived(
    record: dict,
    analysis: str,
    params: dict,
    compute: Analysis,
    run_missing: bool = True,
    progress: bool = False,
    device: str | None = None,
) -> dict:
    """The derived record of ``analysis`` (with ``params``) on the run of ``record``, computing it when missing.

    ``compute(encoder, spec)`` returns the result (JSON-serialisable); it reads data through the registry, so the
    files it reads are hashed into the record. Whatever it reads must be read inside ``compute``: finding a stored
    record reads no data (a clone without the data finds every committed record)."""
    torch_device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))

    def produce(spec: RunSpec) -> tuple[dict, dict]:
        encoder, model = trained_encoder(record, torch_device, progress)
        encoder.eval()
        return compute(encoder, spec), model

    return _ensure(record, analysis, params, produce, run_missing, torch_device)


def ensure_data_derived(
    record: dict, analysis: str, params: dict, compute: Callable[[RunSpec], dict], run_missing: bool = True
) -> dict:
    """:func:`ensure_derived` for an analysis of a run's *data* under its spec, which needs no model (e.g. DeCLUTR's
    Table S2, the spans its sampler draws): ``compute(spec)``; the record's ``model`` says that none was used.
    ``record`` may be a grid spec's stand-in (``run_id``, ``profile``, ``spec``) when the run has no record yet."""

    def produce(spec: RunSpec) -> tuple[dict, dict]:
        return compute(spec), {"source": "none (the run's spec and data only)"}

    return _ensure(record, analysis, params, produce, run_missing, torch.device("cpu"))


def _ensure(
    record: dict,
    analysis: str,
    params: dict,
    produce: Callable[[RunSpec], tuple[dict, dict]],
    run_missing: bool,
    torch_device: torch.device,
) -> dict:
    """The stored derived record, or ``produce(spec)`` -> (result, model) written as one with its provenance."""
    ident = derived_id(record["run_id"], analysis, params)
    path = derived_path(record["profile"], ident)
    existing = _load(path, run_missing)
    if existing is not None:
        events.note("loaded", ident, "derived")
        return existing
    if not run_missing:
        events.note(
            "not_run", ident, "derived", "outside this command's run set (--no-run, or a row behind --extended)"
        )
        raise NotRun(
            f"derived record {analysis} of run {record['run_id']} ({record['profile']}) is missing and "
            "running was disabled"
        )
    provenance.refuse_dirty_committed_store()
    started = time.perf_counter()
    prov = provenance.collect(torch_device)
    spec = RunSpec.from_dict(record["spec"])
    with track_reads() as data_hashes:
        result, model = produce(spec)
    out = {
        "schema_version": DERIVED_SCHEMA_VERSION,
        "derived_id": ident,
        "analysis": analysis,
        "params": params,
        "run_id": record["run_id"],
        "profile": record["profile"],
        "model": model,
        "result": result,
        "provenance": {**prov, "data_sha256": dict(sorted(data_hashes.items()))},
        "timing": {"total_seconds": time.perf_counter() - started},
    }
    atomic_write_text(path, json.dumps(out, indent=1, default=float) + "\n")
    events.note("trained", ident, "derived")
    return out


def derived_of_each(runs: list, analysis: Callable[..., dict], run_missing: bool = True) -> list[dict]:
    """``analysis(record, run_missing=...)`` (an :func:`ensure_derived` wrapper) for each run, in order, leaving out
    a run whose derived record is missing and is not computed (:class:`NotRun`): a table over seeds shows the seeds
    it has and lists the others, it does not fail. The items may be anything ``analysis`` takes, e.g. the fit seeds of
    one run's post-processing (:func:`sentemb.runs.flow_records.flowed_sts_seeds`)."""
    found = []
    for record in runs:
        try:
            found.append(analysis(record, run_missing=run_missing))
        except NotRun:
            pass
    return found
