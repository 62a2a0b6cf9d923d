"""SimCSE's analyses of trained models that are not part of a run's own evaluation, as derived records.

Each is computed once per run from its best checkpoint and stored next to the run records
(:mod:`sentemb.runs.derived`: provenance, data sha256, never recomputed; a run whose checkpoint this machine lacks is
trained again from its spec and the record says so); :func:`derived` gathers those a profile's tables read.

- ``transfer`` (Tables E.1, D.2): SentEval's 7 transfer tasks, a core record shared with the overview
  (:mod:`sentemb.runs.transfer_records`).
- ``whitening`` (Table C.1; the figures' whitening point): fitted on NLI sentences or on the STS tasks' test sentences
  ("target"), then SimCSE's STS protocol; the NLI fit is the record SimCSE++'s Table 4 made for the same backbone.
- ``bert_flow`` (Tables C.1, B.3): BERT-flow (:mod:`sentemb.evaluate.flow`) on the same fits, one record per fit seed.
- ``whitened_geometry``, ``flowed_geometry``: the STS-B geometry (:func:`sentemb.analysis.stsb.analyse`) of the
  NLI-whitened embeddings and of the backbone's BERT-flow latents (fit seed ``FLOW_SEEDS[0]``), for the figures.
- ``retrieval_top3`` (Table 8): the 3 nearest SNLI premises (Flickr30k captions) of the paper's two queries and
  ``RANDOM_QUERIES`` seeded ones.

BERT-base's flow rows are not run (not offline): the backbone's flow stands for SBERT-flow, as its whitening stands
for SBERT-whitening. Each analysis in detail: README.md, "Analyses of trained models".
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from papers.simcse import NAME
from papers.simcse.experiments import WHITENING_FITS, grid
from sentemb.analysis.retrieval import committed_queries, corpus_premises, seeded_queries, top_k
from sentemb.analysis.stsb import analyse
from sentemb.data.corpora import load_rows
from sentemb.data.sts import ALL_TASKS, load_task
from sentemb.evaluate.flow import BertFlow, FlowConfig
from sentemb.evaluate.post_processed import ENCODE_BATCH, fit_embeddings
from sentemb.evaluate.sts import needed_sentences
from sentemb.evaluate.whitening import Whitening
from sentemb.profiles import Profile, get_profile
from sentemb.report.reported import load_reported
from sentemb.runs.derived import ensure_derived
from sentemb.runs.execute import NotRun
from sentemb.runs.flow_records import FLOW_SEEDS, flowed_sts_seeds
from sentemb.runs.transfer_records import transfer
from sentemb.runs.whitening_records import N_WHITENING_FIT, fit_sample, whitened_sts
from sentemb.spec import RunSpec

TARGET = "sts_test"  # the "target" fit: every sentence of the 7 STS tasks' test sets
RANDOM_QUERIES = 3
QUERIES_FILE = Path(__file__).with_name("retrieval_queries.json")  # Table 8's queries per corpus, committed
TOP_K = 3


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
        fit = fit_embeddings(
            encoder, fit_sample(load_rows("sentences", nli_corpus)), {"run_id": spec.run_id, "precision": "fp32"}
        )  # the sample its whitening record encoded
        return _stsb_geometry(encoder, spec, Whitening.fit(fit).transform)

    return ensure_derived(
        record,
        "whitened_geometry",
        {"fit_corpus": nli_corpus, "n_fit": N_WHITENING_FIT},
        compute,
        run_missing=run_missing,
    )


def flowed_geometry(record: dict, nli_corpus: str, run_missing: bool = True) -> dict:
    """STS-B geometry (the run's analysis splits) of the run's BERT-flow latents, the flow fitted with seed
    ``FLOW_SEEDS[0]`` on the sample of ``nli_corpus`` its ``flow NLI`` record of that seed is fitted on: the same
    shape as a run record's ``analysis``, plus ``n_features`` (the latents' width: the flow leaves out the
    backbone's constant features)."""
    seed, config = FLOW_SEEDS[0], FlowConfig()

    def compute(encoder, spec: RunSpec) -> dict:
        fit = fit_embeddings(
            encoder, fit_sample(load_rows("sentences", nli_corpus)), {"run_id": spec.run_id, "precision": "fp32"}
        )
        flow = BertFlow.fit(fit, seed=seed, config=config)
        geometry = _stsb_geometry(encoder, spec, flow.transform)
        return {**geometry, "n_features": len(flow.features)}

    return ensure_derived(
        record,
        "flowed_geometry",
        {"fit_corpus": nli_corpus, "n_fit": N_WHITENING_FIT, "seed": seed, "flow": config.as_params()},
        compute,
        run_missing=run_missing,
    )


def retrieval_queries(nli_corpus: str) -> list[str]:
    """Table 8's queries on ``nli_corpus``: the paper's, then ``RANDOM_QUERIES`` of its premises drawn with seed 0;
    read from ``retrieval_queries.json`` when committed there (the profiles' corpora), so that finding a stored record
    reads no data, otherwise drawn from the corpus (:func:`queries_from_data`)."""
    return committed_queries(QUERIES_FILE, nli_corpus) or queries_from_data(nli_corpus)


def queries_from_data(nli_corpus: str) -> list[str]:
    """:func:`retrieval_queries` drawn from the corpus itself (what ``retrieval_queries.json`` commits)."""
    paper = [g.removeprefix("Query: ") for g in dict.fromkeys(load_reported(NAME, "table8.text")["group"])]
    return seeded_queries(paper, corpus_premises(nli_corpus), RANDOM_QUERIES)


def retrieval(record: dict, nli_corpus: str, run_missing: bool = True) -> dict:
    """Table 8: the top-3 premises of ``nli_corpus`` for each query (:func:`retrieval_queries`); the corpus is read
    only when the record is computed."""
    queries = retrieval_queries(nli_corpus)

    def compute(encoder, spec: RunSpec) -> dict:
        premises = corpus_premises(nli_corpus)
        vectors = encoder.encode(premises, batch_size=ENCODE_BATCH, precision="fp32")
        hits = top_k(
            premises, vectors, queries, encoder.encode(queries, batch_size=ENCODE_BATCH, precision="fp32"), k=TOP_K
        )
        return {"corpus": nli_corpus, "n_corpus": len(premises), "queries": hits}

    return ensure_derived(
        record, "retrieval_top3", {"corpus": nli_corpus, "queries": queries}, compute, run_missing=run_missing
    )


def nli_corpus(profile: str | Profile) -> str:
    """The NLI sentences the profile's supervised SimCSE trains on (fit corpus of the NLI whitening, Table 8's
    premises)."""
    spec = grid(profile)["sup"][0]
    return "synthetic" if spec.synthetic_data else spec.train_data


def _or_missing(compute):
    try:
        return compute()
    except NotRun:
        return None


def derived(
    records: dict[str, list[dict]],
    profile: str | Profile,
    run_missing: bool,
    extended: bool,
    transfer_runs: Iterable[str],
    retrieval_runs: Iterable[str],
) -> dict[str, dict]:
    """The derived records the tables and figures read, computed when missing and ``run_missing``: the backbone's
    whitenings and flows, its whitened and flowed geometry and the retrievals of ``retrieval_runs`` always; the
    transfer tasks of ``transfer_runs`` (about 5 min of encoding and classifiers per model on 2 cores) only with
    ``extended`` on a budgeted profile, otherwise loaded when they exist (a profile that only exercises the path: for
    sup's first seed only). Keys: ``whitening NLI``, ``whitening target``, ``flow NLI`` and ``flow target`` (a list:
    one record per fit seed of ``FLOW_SEEDS``), ``whitened geometry``, ``flowed geometry``, ``retrieval <run>``, and
    ``transfer`` (run id -> record)."""
    scaled = get_profile(profile)
    nli = nli_corpus(scaled)
    backbone = records["backbone_avg"][0]
    out: dict = {
        f"whitening {fit}": _or_missing(lambda fit=fit: whitening(backbone, fit, nli, run_missing))
        for fit in WHITENING_FITS
    }
    for fit in WHITENING_FITS:
        out[f"flow {fit}"] = flows(backbone, fit, nli, run_missing) or None
    out["whitened geometry"] = _or_missing(lambda: whitened_geometry(backbone, nli, run_missing))
    out["flowed geometry"] = _or_missing(lambda: flowed_geometry(backbone, nli, run_missing))
    for name in retrieval_runs:
        if records.get(name):
            out[f"retrieval {name}"] = _or_missing(lambda name=name: retrieval(records[name][0], nli, run_missing))
    run_transfer = run_missing and scaled.runs_all_rows(extended)
    out["transfer"] = {}
    for name in transfer_runs:
        for k, record in enumerate(records.get(name, [])):
            # smoke: one model exercises the path (~1 min each for a tiny BERT over the 7 tasks' 120k sentences)
            runnable = run_transfer and (not scaled.exercises_only or (name, k) == ("sup", 0))
            if record["metrics"].get("transfer") is None:
                found = _or_missing(lambda record=record, runnable=runnable: transfer(record, runnable))
                if found is not None:
                    out["transfer"][record["run_id"]] = found
    return {k: v for k, v in out.items() if v is not None}
