"""The one analysis the overview adds: the 7 STS tasks for runs whose own final evaluation scored STS-B dev only.

The non-contrastive paper's runs (Barlow Twins, VICReg) end with STS-B dev alone (its Table 1 scan reads nothing
else; its Table 6 reads MTEB's STS tasks through mteb, a different evaluator). The comparison needs every method on
the same evaluator, so those runs get a derived record with the suite a SimCSE run's final evaluation runs
(:func:`sentemb.evaluate.suite.evaluate_model`, group ``sts``, SimCSE's protocol, test split, fp32), computed once
from the run's best checkpoint (trained again when this machine lost it; :mod:`sentemb.runs.derived`).
"""

from __future__ import annotations

from sentemb.evaluate.suite import evaluate_model
from sentemb.runs.derived import ensure_derived
from sentemb.runs.execute import ENCODE_BATCH
from sentemb.spec import RunSpec

ANALYSIS = "sts_simcse_7"
PARAMS = {"protocol": "simcse", "splits": ["test"], "precision": "fp32"}


def has_sts7(record: dict) -> bool:
    return "STS12" in record["metrics"].get("tasks", {})


def sts7(record: dict, run_missing: bool = True) -> dict:
    """The derived record (``result["tasks"]`` as a run's ``metrics["tasks"]``) of the run's 7 STS test scores."""
    def compute(encoder, spec: RunSpec) -> dict:
        results, _ = evaluate_model(lambda s: encoder.encode(s, batch_size=ENCODE_BATCH, precision="fp32"), ["sts"],
                                    sts_protocols=("simcse",), sts_splits=("test",), synthetic=spec.synthetic_data,
                                    batch_size=ENCODE_BATCH, precision="fp32")
        sts = results["sts_simcse"]
        return {"tasks": sts["tasks"], "summary": sts["summary"], "seconds": results["seconds"]}

    return ensure_derived(record, ANALYSIS, PARAMS, compute, run_missing=run_missing)
