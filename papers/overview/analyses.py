"""The derived records the comparison reads: the 7 STS tasks of every seed, and the transfer and MTEB records.

The non-contrastive paper's runs (Barlow Twins, VICReg) end with STS-B dev alone (its Table 1 scan reads nothing
else; its Table 6 reads MTEB's STS tasks through mteb, a different evaluator). The comparison needs every method on
the same evaluator, so those runs get a derived record with the suite a SimCSE run's final evaluation runs
(:func:`sentemb.evaluate.suite.evaluate_model`, group ``sts``, SimCSE's protocol, test split, fp32), computed once
from the run's best checkpoint (trained again when this machine lost it; :mod:`sentemb.runs.derived`). Transfer and
MTEB are the derived records SimCSE's Table E.1 and the non-contrastive paper's Table 4 compute (the same derived
ids: shared, not recomputed).
"""

from __future__ import annotations

from sentemb.evaluate.suite import evaluate_model
from sentemb.report.reproduced import derived_sts_record
from sentemb.runs.derived import NotRun, derived_of_each, ensure_derived, sample_param
from sentemb.runs.execute import ENCODE_BATCH
from sentemb.spec import RunSpec

ANALYSIS = "sts_simcse_7"
PARAMS = {"protocol": "simcse", "splits": ["test"], "precision": "fp32"}


def has_sts7(record: dict) -> bool:
    return "STS12" in record["metrics"].get("tasks", {})


def sts7(record: dict, run_missing: bool = True) -> dict:
    """The derived record (``result["tasks"]`` as a run's ``metrics["tasks"]``) of the run's 7 STS test scores."""

    def compute(encoder, spec: RunSpec) -> dict:
        results, _ = evaluate_model(
            lambda s: encoder.encode(s, batch_size=ENCODE_BATCH, precision="fp32"),
            ["sts"],
            sts_protocols=("simcse",),
            sts_splits=("test",),
            synthetic=spec.synthetic_data,
            batch_size=ENCODE_BATCH,
            precision="fp32",
            sts_pairs=spec.eval_pairs,
        )
        sts = results["sts_simcse"]
        return {"tasks": sts["tasks"], "summary": sts["summary"], "seconds": results["seconds"]}

    params = {**PARAMS, **sample_param(record, "eval_pairs")}  # a smoke run's sample, as its own evaluation's
    return ensure_derived(record, ANALYSIS, params, compute, run_missing=run_missing)


def sts_records(records: dict[str, list[dict]], run_missing: bool = True) -> dict[str, list[dict]]:
    """Method -> one record per seed holding the 7 STS tasks: the run's own, or (a run that scored STS-B dev only)
    its derived 7-task record in a run's shape (:func:`sts7`; computed when missing only with ``run_missing``); a seed
    without either is left out."""
    out = {}
    for method, runs in records.items():
        out[method] = []
        for record in runs:
            if has_sts7(record):
                out[method].append(record)
                continue
            try:
                out[method].append(derived_sts_record(sts7(record, run_missing=run_missing), record))
            except NotRun:
                pass
    return out


def comparison_records(
    records: dict[str, list[dict]], run_missing: bool, extended: bool = False
) -> dict[str, dict[str, list[dict]]]:
    """{"sts": :func:`sts_records`, "transfer": method -> derived records, "mteb": method -> derived records}; a seed
    without one is left out unless it may be computed: the STS record whenever ``run_missing`` (about 20 s per model
    on a 4-layer backbone, 1 min on MiniLM's 6 layers), transfer and MTEB only with ``run_missing`` and ``extended``
    (about 5 min and 11 min per model on 2 idle cores); each plus 4-6 min to train again a run whose checkpoint this
    machine lacks."""
    from sentemb.runs.mteb_geometry_records import mteb_and_geometry
    from sentemb.runs.transfer_records import transfer

    out = {"sts": sts_records(records, run_missing), "transfer": {}, "mteb": {}}
    for method, runs in records.items():
        for kind, compute in (("transfer", transfer), ("mteb", mteb_and_geometry)):
            out[kind][method] = derived_of_each(runs, compute, run_missing and extended)
    return out
