"""SentEval-transfer derived records: one per run, shared by every paper that asks for it (SimCSE's Tables E.1 and
D.2, the overview's comparison), computed once from the run's best checkpoint (:mod:`sentemb.runs.derived`).

``transfer``: SentEval's 7 transfer tasks (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC) in fp32, with the profile's
classifier mode (``fasttest`` on smoke and small, ``test`` on full; :mod:`sentemb.evaluate.senteval_classifier`). A
run whose spec sets ``transfer_examples`` (smoke) is scored on that many seeded examples of each split
(:mod:`sentemb.evaluate.subsets`), and the record's parameters name the sample.
"""

from __future__ import annotations

from sentemb.evaluate.post_processed import ENCODE_BATCH
from sentemb.evaluate.suite import evaluate_model
from sentemb.profiles import get_profile
from sentemb.runs.derived import ensure_derived, sample_param
from sentemb.spec import RunSpec

ANALYSIS = "transfer"


def transfer(record: dict, run_missing: bool = True) -> dict:
    """The derived record of SentEval's 7 transfer tasks on the run's model (``result["tasks"][name]``: ``devacc``,
    ``acc``, as a run's ``metrics["transfer"]``)."""
    mode = get_profile(record["profile"]).transfer_mode

    def compute(encoder, spec: RunSpec) -> dict:
        results, _ = evaluate_model(
            lambda s: encoder.encode(s, batch_size=ENCODE_BATCH, precision="fp32"),
            ["transfer"],
            transfer_mode=mode,
            synthetic=spec.synthetic_data,
            transfer_examples=spec.transfer_examples,
        )
        return {"transfer": results["transfer"], "seconds": results["seconds"], "n_sentences": results["n_sentences"]}

    return ensure_derived(
        record,
        ANALYSIS,
        {"tasks": "simcse_transfer_7", "mode": mode, "precision": "fp32", **sample_param(record, "transfer_examples")},
        compute,
        run_missing=run_missing,
    )
