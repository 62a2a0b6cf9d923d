"""Whitened-STS derived records: one per (run, fit corpus), shared by every paper that asks for it.

SimCSE++ Table 4 (whitening fitted on Wikipedia or NLI sentences) and SimCSE Table C.1 (fitted on NLI or on the target
STS sentences) score the same thing: a run's embeddings whitened (:class:`sentemb.evaluate.whitening.Whitening`,
fitted on a seeded sample of ``N_WHITENING_FIT`` sentences of a corpus) under SimCSE's STS protocol
(:func:`sentemb.evaluate.post_processed.sts_whitened`). The derived id hashes the run, "whitening" and
``{"fit_corpus", "n_fit"}``, so the backbone whitened on NLI is one record for both papers.
"""

from __future__ import annotations

from typing import Callable

from sentemb.evaluate.post_processed import sample_sentences, sts_whitened
from sentemb.runs.derived import ensure_derived, sample_param
from sentemb.spec import RunSpec

N_WHITENING_FIT = 10_000  # sentences the whitening is fitted on (a seeded sample of the corpus)


def fit_sample(sentences: list[str]) -> list[str]:
    """The ``N_WHITENING_FIT`` sentences (seed 0; all when there are fewer) a whitening is fitted on."""
    return sample_sentences(sentences, N_WHITENING_FIT)


def whitened_sts(
    record: dict, fit_corpus: str, fit_sentences: Callable[[RunSpec], list[str]], run_missing: bool = True
) -> dict:
    """The derived record of ``record``'s run whitened on ``fit_sentences(spec)`` (read inside the computation, so
    their files are hashed into the record), named ``fit_corpus`` in its parameters; scored on the STS pairs the run
    itself was evaluated on (its spec's ``eval_pairs``, named in the parameters when set)."""

    def compute(encoder, spec: RunSpec) -> dict:
        return sts_whitened(
            encoder,
            fit_sample(fit_sentences(spec)),
            {"run_id": spec.run_id, "precision": "fp32"},
            synthetic=spec.synthetic_data,
            pairs=spec.eval_pairs,
        )

    params = {"fit_corpus": fit_corpus, "n_fit": N_WHITENING_FIT, **sample_param(record, "eval_pairs")}
    return ensure_derived(record, "whitening", params, compute, run_missing=run_missing)
