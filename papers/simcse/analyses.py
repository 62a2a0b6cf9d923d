"""SimCSE's analyses of trained models that are not part of a run's own evaluation, as derived records.

Each is computed once per run from its best checkpoint and stored next to the run records
(:mod:`sentemb.runs.derived`: provenance, data sha256, never recomputed; a run whose checkpoint this machine lacks is
trained again from its spec and the record says so).

- ``transfer`` (Table E.1; Table D.2's "w/o MLM" transfer average): SentEval's 7 transfer tasks (MR, CR, SUBJ, MPQA,
  SST-2, TREC, MRPC) on the run's model, in fp32. Protocol as a run's own final evaluation: ``fasttest`` on the smoke
  and small profiles, ``test`` on the full one (SimCSE Appendix E uses the default SentEval configuration).
- ``whitening`` (Table C.1; the whitening point of Figures 3, F.1 and G.1): whitening (Su et al., 2021) fitted on NLI
  sentences ("NLI") or on the STS tasks' test sentences ("target", Appendix C: "directly learns the embedding
  distribution on the target sets"), then SimCSE's STS protocol. The NLI fit is the record SimCSE++'s Table 4 made
  for the same backbone (one derived id: :func:`sentemb.runs.whitening_records.whitened_sts`).
- ``bert_flow`` (Tables C.1 and B.3's SBERT-flow rows): BERT-flow (Li et al., 2020; :mod:`sentemb.evaluate.flow`)
  fitted on the same NLI or target sentences as the whitening, one record per fit seed
  (:func:`sentemb.runs.flow_records.flowed_sts`; SimCSE++'s Table 4 shares the NLI ones), then SimCSE's STS protocol.
  SimCSE re-ran BERT-flow with the official code and scored it with its own script (Appendix C).
- ``whitened_geometry``: the STS-B geometry of the NLI-whitened embeddings (alignment, uniformity, singular values,
  cosine by rating: :func:`sentemb.analysis.stsb.analyse`), for the figures' whitening point.
- ``flowed_geometry``: the same STS-B geometry of the backbone's BERT-flow latents, the flow fitted (seed
  ``FLOW_SEEDS[0]``) on the NLI sample that Table C.1's flow record of that seed is fitted on (the same cached fit
  embeddings, so the figures' BERT-flow point pairs its geometry with that record's STS average).
- ``retrieval_top3`` (Table 8): the 3 nearest premises of each query by cosine, over the SNLI premises of the
  training data (Flickr30k captions: SNLI's premises are Flickr30k captions; the paper searches all 150k Flickr30k
  sentences, which are not offline). The queries are the paper's two and ``RANDOM_QUERIES`` premises drawn with a
  fixed seed.

The paper's BERT-flow rows of BERT-base are not run (BERT-base is not offline); the backbone's flow stands for
SBERT-flow, as its whitening stands for SBERT-whitening.
"""

from __future__ import annotations

import random

from sentemb.analysis.retrieval import top_k
from sentemb.analysis.stsb import analyse
from sentemb.data.corpora import load_nli_triples, load_rows
from sentemb.data.sts import ALL_TASKS, load_task
from sentemb.evaluate.flow import BertFlow, FlowConfig
from sentemb.evaluate.post_processed import ENCODE_BATCH, fit_embeddings
from sentemb.evaluate.suite import evaluate_model
from sentemb.evaluate.sts import needed_sentences
from sentemb.evaluate.whitening import Whitening
from sentemb.report.reported import load_reported
from sentemb.runs.derived import ensure_derived
from sentemb.runs.flow_records import FLOW_SEEDS, flowed_sts_seeds
from sentemb.runs.whitening_records import N_WHITENING_FIT, fit_sample, whitened_sts
from sentemb.spec import RunSpec

PAPER = "simcse"
TARGET = "sts_test"  # the "target" fit: every sentence of the 7 STS tasks' test sets
RANDOM_QUERIES = 3
TOP_K = 3


def transfer_mode(profile: str) -> str:
    return "test" if profile == "full" else "fasttest"


def transfer(record: dict, run_missing: bool = True) -> dict:
    """The derived record of SentEval's 7 transfer tasks on the run's model (``result["tasks"][name]``: ``devacc``,
    ``acc``, as a run's ``metrics["transfer"]``)."""
    mode = transfer_mode(record["profile"])

    def compute(encoder, spec: RunSpec) -> dict:
        results, _ = evaluate_model(lambda s: encoder.encode(s, batch_size=ENCODE_BATCH, precision="fp32"),
                                    ["transfer"], transfer_mode=mode, synthetic=spec.synthetic_data)
        return {"transfer": results["transfer"], "seconds": results["seconds"], "n_sentences": results["n_sentences"]}

    return ensure_derived(record, "transfer", {"tasks": "simcse_transfer_7", "mode": mode, "precision": "fp32"},
                          compute, run_missing=run_missing)


def target_sentences(synthetic: bool = False) -> list[str]:
    """Every distinct sentence of the 7 STS tasks' test sets (SimCSE's protocol), in task order."""
    tasks = [load_task(t, synthetic=synthetic) for t in ALL_TASKS]
    return list(dict.fromkeys(needed_sentences(tasks, ("test",), "simcse")))


def whitening(record: dict, fit: str, nli_corpus: str, run_missing: bool = True) -> dict:
    """The whitened STS record of the run, the whitening fitted on ``fit``: "NLI" (a sample of ``nli_corpus``) or
    "target" (the STS test sentences)."""
    if fit == "NLI":
        return whitened_sts(record, nli_corpus, lambda spec: load_rows("sentences", nli_corpus), run_missing)
    return whitened_sts(record, TARGET, lambda spec: target_sentences(spec.synthetic_data), run_missing)


def flows(record: dict, fit: str, nli_corpus: str, run_missing: bool = True) -> list[dict]:
    """The BERT-flow STS records of the run, one per fit seed (those recorded or computed), the flow fitted on
    ``fit``: "NLI" (a sample of ``nli_corpus``) or "target" (the STS test sentences), the sentences
    :func:`whitening` fits on."""
    if fit == "NLI":
        return flowed_sts_seeds(record, nli_corpus, lambda spec: load_rows("sentences", nli_corpus), run_missing)
    return flowed_sts_seeds(record, TARGET, lambda spec: target_sentences(spec.synthetic_data), run_missing)


def _stsb_geometry(encoder, spec: RunSpec, transform) -> dict:
    """:func:`sentemb.analysis.stsb.analyse` of the run's analysis splits of STS-B, the encoder's fp32 embeddings
    mapped by ``transform`` (a whitening's or a flow's)."""
    stsb = load_task("STSBenchmark", synthetic=spec.synthetic_data)
    pairs = [stsb.parts[s] for s in spec.analysis_splits]
    sentences = list(dict.fromkeys(s for p in pairs for s in p.sentences()))
    vectors = transform(encoder.encode(sentences, batch_size=ENCODE_BATCH, precision="fp32"))
    return analyse(pairs, dict(zip(sentences, vectors)), spec.analysis_splits)


def whitened_geometry(record: dict, nli_corpus: str, run_missing: bool = True) -> dict:
    """STS-B geometry (the run's analysis splits) of the run's embeddings whitened on a sample of ``nli_corpus``:
    the same shape as a run record's ``analysis``."""
    def compute(encoder, spec: RunSpec) -> dict:
        fit = fit_embeddings(encoder, fit_sample(load_rows("sentences", nli_corpus)),
                             {"run_id": spec.run_id, "precision": "fp32"})  # the sample its whitening record encoded
        return _stsb_geometry(encoder, spec, Whitening.fit(fit).transform)

    return ensure_derived(record, "whitened_geometry", {"fit_corpus": nli_corpus, "n_fit": N_WHITENING_FIT},
                          compute, run_missing=run_missing)


def flowed_geometry(record: dict, nli_corpus: str, run_missing: bool = True) -> dict:
    """STS-B geometry (the run's analysis splits) of the run's BERT-flow latents, the flow fitted with seed
    ``FLOW_SEEDS[0]`` on the sample of ``nli_corpus`` its ``flow NLI`` record of that seed is fitted on: the same
    shape as a run record's ``analysis``, plus ``n_features`` (the latents' width: the flow leaves out the
    backbone's constant features)."""
    seed, config = FLOW_SEEDS[0], FlowConfig()

    def compute(encoder, spec: RunSpec) -> dict:
        fit = fit_embeddings(encoder, fit_sample(load_rows("sentences", nli_corpus)),
                             {"run_id": spec.run_id, "precision": "fp32"})
        flow = BertFlow.fit(fit, seed=seed, config=config)
        geometry = _stsb_geometry(encoder, spec, flow.transform)
        return {**geometry, "n_features": len(flow.features)}

    return ensure_derived(record, "flowed_geometry", {"fit_corpus": nli_corpus, "n_fit": N_WHITENING_FIT,
                                                      "seed": seed, "flow": config.as_params()},
                          compute, run_missing=run_missing)


def retrieval_queries(premises: list[str]) -> list[str]:
    """The paper's Table 8 queries, then ``RANDOM_QUERIES`` premises drawn with seed 0."""
    paper = [g.removeprefix("Query: ") for g in dict.fromkeys(load_reported(PAPER, "table8.text")["group"])]
    return paper + random.Random(0).sample(premises, RANDOM_QUERIES)


def retrieval(record: dict, nli_corpus: str, run_missing: bool = True) -> dict:
    """Table 8: the top-3 premises of ``nli_corpus`` for each query (:func:`retrieval_queries`)."""
    premises = list(dict.fromkeys(row[0] for row in load_nli_triples(nli_corpus)))
    queries = retrieval_queries(premises)

    def compute(encoder, spec: RunSpec) -> dict:
        vectors = encoder.encode(premises, batch_size=ENCODE_BATCH, precision="fp32")
        hits = top_k(premises, vectors, queries, encoder.encode(queries, batch_size=ENCODE_BATCH, precision="fp32"),
                     k=TOP_K)
        return {"corpus": nli_corpus, "n_corpus": len(premises), "queries": hits}

    return ensure_derived(record, "retrieval_top3", {"corpus": nli_corpus, "queries": queries}, compute,
                          run_missing=run_missing)
