"""BERT-flow STS derived records: one per (run, fit corpus, seed), shared by every paper that asks for it.

SimCSE (Tables 5 and C.1: BERT-flow fitted on NLI sentences or on the target STS sentences) and SimCSE++ (Table 4:
"+flow (NLI)", "SimCSE + flow") score the same thing: a run's embeddings mapped to the latent of a flow
(:class:`sentemb.evaluate.flow.BertFlow`) fitted on the same seeded sample of ``N_WHITENING_FIT`` sentences a
whitening of that corpus is fitted on (:func:`sentemb.runs.whitening_records.fit_sample`), under SimCSE's STS protocol
(:func:`sentemb.evaluate.post_processed.sts_flowed`). Unlike whitening, a flow's fit is random (initialisation and
batch order): each seed of ``FLOW_SEEDS`` is its own record, and tables report their mean and spread. The derived id
hashes the run, "bert_flow", the fit corpus, its size, the seed and the flow's configuration.
"""

from __future__ import annotations

from typing import Callable

from sentemb.evaluate.flow import FlowConfig
from sentemb.evaluate.post_processed import sts_flowed
from sentemb.runs.derived import derived_of_each, ensure_derived, sample_param
from sentemb.runs.whitening_records import N_WHITENING_FIT, fit_sample
from sentemb.spec import RunSpec

FLOW_SEEDS = (42, 43, 44)


def flowed_sts(
    record: dict,
    fit_corpus: str,
    fit_sentences: Callable[[RunSpec], list[str]],
    seed: int,
    run_missing: bool = True,
    config: FlowConfig = FlowConfig(),
) -> dict:
    """The derived record of ``record``'s run post-processed by a flow fitted (with ``seed``) on
    ``fit_sentences(spec)`` (read inside the computation, so their files are hashed into the record); scored on the
    STS pairs the run itself was evaluated on (its spec's ``eval_pairs``, named in the parameters when set)."""

    def compute(encoder, spec: RunSpec) -> dict:
        return sts_flowed(
            encoder,
            fit_sample(fit_sentences(spec)),
            {"run_id": spec.run_id, "precision": "fp32"},
            seed,
            config,
            synthetic=spec.synthetic_data,
            pairs=spec.eval_pairs,
        )

    params = {
        "fit_corpus": fit_corpus,
        "n_fit": N_WHITENING_FIT,
        "seed": seed,
        "flow": config.as_params(),
        **sample_param(record, "eval_pairs"),
    }
    return ensure_derived(record, "bert_flow", params, compute, run_missing=run_missing)


def flowed_sts_seeds(
    record: dict, fit_corpus: str, fit_sentences: Callable[[RunSpec], list[str]], run_missing: bool = True
) -> list[dict]:
    """:func:`flowed_sts` for each seed of ``FLOW_SEEDS``, in order, leaving out a seed whose record is missing and
    not computed (:func:`sentemb.runs.derived.derived_of_each`)."""
    return derived_of_each(
        list(FLOW_SEEDS),
        lambda seed, run_missing: flowed_sts(record, fit_corpus, fit_sentences, seed, run_missing),
        run_missing,
    )
