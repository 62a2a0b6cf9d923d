"""The DeCLUTR experiment grid, written with the paper's own settings; a profile scales it.

Sources. The paper (Giorgi et al., ACL 2021): §3.1-3.2 (A anchors and P positives per document, spans of 32-512
tokens, NT-Xent with tau, MLM on the anchors), §4 "Training" (1 epoch over 495,243 OpenWebText documents, minibatch
16, tau = 0.05, AdamW with lr 5e-5 and weight decay 0.1, slanted triangular schedule with cut fraction 0.1, gradient
norm 1.0, A = P = 2), Figure 2's grid (A in {1, 2}, P in {1, 2, 4}, tau in {5e-4, 5e-2}), Figure 3 (contrastive /
MLM / both against the share of the training set), Supplement §6 (Figure S1: projection heads; memory bank queues up
to 512 with tau in {1e-3, 5e-3, 1e-2, 5e-2}). The official configs (``training_config/declutr*.jsonnet``,
../shared/notes/official-implementations.md §1.3): mean pooling, no projection head, MLM weight 1, fp16 (use_amp),
no validation-based selection (every epoch's checkpoint kept: here ``checkpoint="last"``).

| name                | what                                                                   | paper item            |
|---------------------|------------------------------------------------------------------------|-----------------------|
| transformer         | the backbone with mean pooling, not trained                            | Table 1 "Transformer" |
| declutr             | DeCLUTR: contrastive + MLM, A = P = 2, tau = 0.05                      | Tables 1, S3, S6      |
| a<A>_p<P>_t<tau>    | Figure 2's grid point (the A = P = 2, tau = 0.05 point is ``declutr``)  | Figure 2 (a, b)       |
| views_<view>        | positives adjacent to, or subsumed by, the anchor only                 | Figure 2 (c)          |
| <objective>_f<pct>  | contrastive only / MLM only / both, on <pct> % of the training steps   | Figure 3              |
| proj_<kind>_<dim>   | a training-only projection head (linear or ReLU MLP) of width <dim>    | Figure S1 (a)         |
| xbm_<queue>_t<tau>  | a cross-batch memory of <queue> embeddings, NT-Xent temperature tau    | Figure S1 (b)         |

Scoring. The tables use DeCLUTR's protocol (``final_eval="sts,declutr"``: the original SentEval, STS12-16 "mean",
a trained regressor for STS-B and SICK-R, and the downstream classification tasks; SimCSE's STS protocol comes with
it as a second view). The paper's figures score a model by the SentEval *dev* average of its 18 downstream tasks;
that is a full SentEval run per grid point. Here a figure point is the **STS-B dev Spearman** (cosine) of the
run's kept checkpoint (``final_eval="stsb_dev"``), the one SentEval dev score every run records: the figures say so.
Figure 3's "share of the training set" is the share of the steps of one pass: one epoch over a random subset is, in
distribution, the first steps of an epoch over the whole set.

One document set per profile. The paper trains every setting on one set, the OpenWebText documents of >= 2048 tokens
(§4; 2048 = 2 * 2 * 512, the official sampler's bound 2 * A * l_max at A = 2). The objective's default keeps the
documents of >= 2 * A * l_max tokens, a set that would change with A; so every DeCLUTR training spec of a profile
keeps the documents of at least ``PAPER_MIN_DOCUMENT_TOKENS`` (full) or ``SMALL_MIN_DOCUMENT_TOKENS`` (smoke, small:
2 * 2 * l_max of ``SMALL_SPANS``) tokens, whatever its A, P and spans: the same documents in the same order.
``min_document_tokens`` is set in a spec only where that bound differs from the spec's 2 * A * l_max (Figure 2's
A = 1 points); elsewhere the default computes the same set, and those runs keep their run ids.

Distributed training (full profile): ``ddp_gradients="official"``, the gradient scale of the paper's runs. The
official configs keep ``scale_fix false`` "to reproduce results from the paper": the contrastive loss's gradient is
1/N of the single-process one under N GPUs (``sentemb.train.distributed``). One process (smoke, small) computes the
same either way, and its specs keep the default.

Small profile (substitutes, said next to every number): all-MiniLM-L6-v2 (6 layers, D = 384, already a contrastively
trained sentence encoder) for DistilRoBERTa/RoBERTa-base; the mirror's WikiText-2 articles for OpenWebText; spans of
``SMALL_SPANS`` tokens instead of 32-512 (2 CPU cores); 60 steps of 16 documents (``SMALL_STEPS``), the cut of the
slanted triangle at 10 % of them. The small profile runs the ``CORE`` rows (Table 1 / S3 / S6) in its budget; the
figures' grids are ``--extended``.
"""

from __future__ import annotations

import dataclasses

from sentemb.augment.span_sampler import minimum_document_length
from sentemb.profiles import scale_grid
from sentemb.spec import RunSpec

PAPER_BACKBONE = "roberta-base"  # DeCLUTR-base; DeCLUTR-small is distilroberta-base (Figure 3's capacity axis)
SMALL_PAPER_BACKBONE = "distilroberta-base"
TRAIN_DATA = "openwebtext"
DOCUMENTS = 495_243  # §4 "Dataset": OpenWebText documents of >= 2048 tokens
PAPER_MIN_DOCUMENT_TOKENS = 2048  # §4 "Dataset": one document set for every setting
BATCH = 16  # documents per minibatch (§4 "Training")
STEPS = DOCUMENTS // BATCH  # one epoch
CUT_FRACTION = 0.1  # slanted triangular schedule (§4 "Training")
PAPER_SPANS = {"min_span_len": 32, "max_span_len": 512}
#: Small profile: spans of 16-64 tokens instead of 32-512 (a step of 16 documents encodes A (1 + P) = 6 spans each).
SMALL_SPANS = {"min_span_len": 16, "max_span_len": 64}
#: Small and smoke profiles' document set: the paper's rule (2 * A * l_max at A = 2) at ``SMALL_SPANS``: 256 tokens.
SMALL_MIN_DOCUMENT_TOKENS = minimum_document_length(2, SMALL_SPANS["max_span_len"])
DECLUTR_PARAMS = {"num_anchors": 2, "num_positives": 2, "temperature": 0.05, "contrastive": True, "mlm_weight": 1.0,
                  **PAPER_SPANS}
FIGURE2 = {"num_anchors": (1, 2), "num_positives": (1, 2, 4), "temperature": (5e-4, 5e-2)}
#: Figure 2c's views: run ``views_<name>`` -> its ``positive_views``; "subsumed" with the official code's length
#: (Beta(2, 4) scaled to the anchor; span_sampler.py); "any" (overlapping, adjacent or subsumed) is the declutr row.
FIGURE2_VIEWS = {"adjacent": "adjacent", "subsumed": "subsumed_official"}
FIGURE3_OBJECTIVES = {"contrastive": {"mlm_weight": 0.0}, "mlm": {"contrastive": False}, "both": {}}
FIGURE3_SHARES = (25, 50, 100)  # % of one epoch's steps; the paper's shares are not in the text
FIGURES1_PROJECTIONS = {"kind": ("linear", "mlp"), "dim": (128, 256, 512)}  # widths not in the text
FIGURES1_MEMORY = {"queue": (128, 256, 512), "temperature": (1e-3, 5e-3, 1e-2, 5e-2)}  # queues "up to 512"

FIGURE3_RUNS = {f"{objective}_f{share}": (objective, share) for objective in FIGURE3_OBJECTIVES
                for share in FIGURE3_SHARES}

HEADLINE = ("declutr",)  # the untrained backbone has no seed variance: one evaluation
CORE = ("transformer", "declutr")  # the small profile's rows without --extended

_DEV_ONLY = dict(final_eval="stsb_dev", analysis_splits=("dev",))
_DECLUTR = RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="avg", objective="declutr",
                   objective_params=DECLUTR_PARAMS, train_data=TRAIN_DATA, steps=STEPS, batch_size=BATCH, lr=5e-5,
                   max_len=PAPER_SPANS["max_span_len"] + 2, weight_decay=0.1, lr_schedule="slanted_triangular",
                   warmup_steps=round(CUT_FRACTION * STEPS), grad_clip=1.0, checkpoint="last", eval_every=1000,
                   precision="fp16", final_eval="sts,declutr", ddp_gradients="official",
                   notes="DeCLUTR (§3, Eq. 3), official config: mean pooling, MLM weight 1, no projection head")


def one_document_set(spec: RunSpec, min_tokens: int) -> RunSpec:
    """``spec`` training on the documents of at least ``min_tokens`` subword tokens (its profile's one set).
    ``min_document_tokens`` is set only where it differs from the spec's own 2 * A * l_max, so that a spec whose
    set does not change keeps its run id."""
    if not spec.trains:
        return spec
    params = dict(spec.objective_params)
    params.pop("min_document_tokens", None)
    if min_tokens != minimum_document_length(params["num_anchors"], params["max_span_len"]):
        params["min_document_tokens"] = min_tokens
    return dataclasses.replace(spec, objective_params=params)


def _variant(notes: str, final_eval: dict | None = None, **params) -> RunSpec:
    return dataclasses.replace(_DECLUTR, objective_params={**_DECLUTR.objective_params, **params}, notes=notes,
                               **(final_eval if final_eval is not None else _DEV_ONLY))


def figure2_run(num_anchors: int, num_positives: int, temperature: float) -> str:
    if (num_anchors, num_positives, temperature) == (2, 2, 0.05):
        return "declutr"
    return f"a{num_anchors}_p{num_positives}_t{temperature:g}"


def paper_grid() -> dict[str, RunSpec]:
    runs = {
        "transformer": RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="avg", final_eval="sts,declutr",
                               notes="Table 1 Transformer-base: the backbone with mean pooling"),
        "declutr": _DECLUTR,
    }
    for a in FIGURE2["num_anchors"]:
        for p in FIGURE2["num_positives"]:
            for t in FIGURE2["temperature"]:
                name = figure2_run(a, p, t)
                if name != "declutr":
                    runs[name] = _variant(f"Figure 2: A={a}, P={p}, tau={t:g}", num_anchors=a, num_positives=p,
                                          temperature=t)
    for view, positive_views in FIGURE2_VIEWS.items():
        runs[f"views_{view}"] = _variant(f"Figure 2c: {view} positives only"
                                         + ("" if positive_views == view else f" ({positive_views})"),
                                         positive_views=positive_views)
    for name, (objective, share) in FIGURE3_RUNS.items():
        spec = _variant(f"Figure 3: {objective}, {share}% of the training steps", **FIGURE3_OBJECTIVES[objective])
        runs[name] = dataclasses.replace(spec, steps=max(1, STEPS * share // 100))
    for kind in FIGURES1_PROJECTIONS["kind"]:
        for dim in FIGURES1_PROJECTIONS["dim"]:
            runs[f"proj_{kind}_{dim}"] = _variant(f"Figure S1a: {kind} projection head to {dim}", projection=kind,
                                                  projection_dim=dim)
    for queue in FIGURES1_MEMORY["queue"]:
        for t in FIGURES1_MEMORY["temperature"]:
            runs[f"xbm_{queue}_t{t:g}"] = _variant(f"Figure S1b: memory of {queue}, tau={t:g}", memory_size=queue,
                                                   temperature=t)
    return {name: one_document_set(spec, PAPER_MIN_DOCUMENT_TOKENS) for name, spec in runs.items()}


def _small(name: str, spec: RunSpec) -> RunSpec:
    """A training spec on the smoke and small profiles: spans of ``SMALL_SPANS`` (and max_len to match), the
    documents of at least ``SMALL_MIN_DOCUMENT_TOKENS`` tokens, Figure 3's rows at their share of the profile's
    steps, the slanted triangle's cut at 10 % of the steps, and the default ``ddp_gradients`` (one process)."""
    if not spec.trains:
        return spec
    steps = max(2, spec.steps * FIGURE3_RUNS[name][1] // 100) if name in FIGURE3_RUNS else spec.steps
    small = dataclasses.replace(spec, objective_params={**spec.objective_params, **SMALL_SPANS}, steps=steps,
                                max_len=SMALL_SPANS["max_span_len"] + 2,
                                warmup_steps=max(1, round(CUT_FRACTION * steps)), ddp_gradients="global")
    return one_document_set(small, SMALL_MIN_DOCUMENT_TOKENS)


def grid(profile: str, extended: bool = True) -> dict[str, tuple[RunSpec, ...]]:
    """Each run name's specs on ``profile``, one per seed. On the small profile ``extended=False`` keeps the ``CORE``
    rows (Table 1 / S3 / S6); smoke and full run every row."""
    runs = paper_grid()
    if profile == "small" and not extended:
        runs = {name: spec for name, spec in runs.items() if name in CORE}
    scaled = scale_grid(runs, profile, HEADLINE)
    if profile == "full":
        return scaled
    return {name: tuple(_small(name, spec) for spec in specs) for name, specs in scaled.items()}
