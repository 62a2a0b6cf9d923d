"""The DeCLUTR experiment grid, written with the paper's own settings; a profile scales it.

Sources: Giorgi et al. (ACL 2021) §3.1-3.2 and §4 "Training" (A = P = 2, spans of 32-512 tokens, tau = 0.05, 16
documents per step, AdamW lr 5e-5 and weight decay 0.1, slanted triangle cut at 0.1, 1 epoch of 495,243 OpenWebText
documents), Figures 2, 3 and S1; the official ``training_config/declutr*.jsonnet`` (mean pooling, no projection head,
MLM weight 1, fp16, every epoch's checkpoint kept: ``checkpoint="last"``).

Runs: ``transformer`` (untrained), ``declutr`` (Tables 1, S3, S6) and the figures' grids (``a<A>_p<P>_t<tau>``,
``views_<view>``, ``<objective>_f<pct>``, ``proj_<kind>_<dim>``, ``xbm_<queue>_t<tau>``). The small profile runs the
``CORE`` rows in its budget; the figures' grids are ``--extended``. The tables use DeCLUTR's protocol
(``final_eval="sts,declutr"``); a figure point is the run's STS-B dev Spearman (``final_eval="stsb_dev"``).

Documents: every training spec of a profile keeps the documents of at least ``PAPER_MIN_DOCUMENT_TOKENS`` (full) or
``SMALL_MIN_DOCUMENT_TOKENS`` (smoke, small) tokens, whatever its A, P and spans; ``min_document_tokens`` is written
into a spec only where it differs from the default 2 * A * l_max, so the other runs keep their run ids.
Distributed (full profile): ``ddp_gradients="official"``, the 1/N gradient scale of the paper's runs.

The run table, the scoring, the document set and the small profile's substitutes: README.md, "The runs".
"""

from __future__ import annotations

import dataclasses

from sentemb.augment.span_sampler import minimum_document_length
from sentemb.grid_reach import core_rows
from sentemb.profiles import Profile, get_profile, scale_grid, tuned_grid
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
DECLUTR_PARAMS = {
    "num_anchors": 2,
    "num_positives": 2,
    "temperature": 0.05,
    "contrastive": True,
    "mlm_weight": 1.0,
    **PAPER_SPANS,
}
FIGURE2 = {"num_anchors": (1, 2), "num_positives": (1, 2, 4), "temperature": (5e-4, 5e-2)}
#: Figure 2c's views: run ``views_<name>`` -> its ``positive_views``; "subsumed" with the official code's length
#: (Beta(2, 4) scaled to the anchor; span_sampler.py); "any" (overlapping, adjacent or subsumed) is the declutr row.
FIGURE2_VIEWS = {"adjacent": "adjacent", "subsumed": "subsumed_official"}
FIGURE3_OBJECTIVES = {"contrastive": {"mlm_weight": 0.0}, "mlm": {"contrastive": False}, "both": {}}
FIGURE3_SHARES = (25, 50, 100)  # % of one epoch's steps; the paper's shares are not in the text
FIGURES1_PROJECTIONS = {"kind": ("linear", "mlp"), "dim": (128, 256, 512)}  # widths not in the text
FIGURES1_MEMORY = {"queue": (128, 256, 512), "temperature": (1e-3, 5e-3, 1e-2, 5e-2)}  # queues "up to 512"

FIGURE3_RUNS = {
    f"{objective}_f{share}": (objective, share) for objective in FIGURE3_OBJECTIVES for share in FIGURE3_SHARES
}

HEADLINE = ("declutr",)  # the untrained backbone has no seed variance: one evaluation
CORE = ("transformer", "declutr")  # the small profile's rows without --extended

_DEV_ONLY = dict(final_eval="stsb_dev", analysis_splits=("dev",))
_DECLUTR = RunSpec(
    profile="full",
    backbone=PAPER_BACKBONE,
    pooler="avg",
    objective="declutr",
    objective_params=DECLUTR_PARAMS,
    train_data=TRAIN_DATA,
    steps=STEPS,
    batch_size=BATCH,
    lr=5e-5,
    max_len=PAPER_SPANS["max_span_len"] + 2,
    weight_decay=0.1,
    lr_schedule="slanted_triangular",
    warmup_steps=round(CUT_FRACTION * STEPS),
    grad_clip=1.0,
    checkpoint="last",
    eval_every=1000,
    precision="fp16",
    final_eval="sts,declutr",
    ddp_gradients="official",
    notes="DeCLUTR (§3, Eq. 3), official config: mean pooling, MLM weight 1, no projection head",
)


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
    return dataclasses.replace(
        _DECLUTR,
        objective_params={**_DECLUTR.objective_params, **params},
        notes=notes,
        **(final_eval if final_eval is not None else _DEV_ONLY),
    )


def figure2_run(num_anchors: int, num_positives: int, temperature: float) -> str:
    if (num_anchors, num_positives, temperature) == (2, 2, 0.05):
        return "declutr"
    return f"a{num_anchors}_p{num_positives}_t{temperature:g}"


def paper_grid() -> dict[str, RunSpec]:
    runs = {
        "transformer": RunSpec(
            profile="full",
            backbone=PAPER_BACKBONE,
            pooler="avg",
            final_eval="sts,declutr",
            notes="Table 1 Transformer-base: the backbone with mean pooling",
        ),
        "declutr": _DECLUTR,
    }
    for a in FIGURE2["num_anchors"]:
        for p in FIGURE2["num_positives"]:
            for t in FIGURE2["temperature"]:
                name = figure2_run(a, p, t)
                if name != "declutr":
                    runs[name] = _variant(
                        f"Figure 2: A={a}, P={p}, tau={t:g}", num_anchors=a, num_positives=p, temperature=t
                    )
    for view, positive_views in FIGURE2_VIEWS.items():
        runs[f"views_{view}"] = _variant(
            f"Figure 2c: {view} positives only" + ("" if positive_views == view else f" ({positive_views})"),
            positive_views=positive_views,
        )
    for name, (objective, share) in FIGURE3_RUNS.items():
        spec = _variant(f"Figure 3: {objective}, {share}% of the training steps", **FIGURE3_OBJECTIVES[objective])
        runs[name] = dataclasses.replace(spec, steps=max(1, STEPS * share // 100))
    for kind in FIGURES1_PROJECTIONS["kind"]:
        for dim in FIGURES1_PROJECTIONS["dim"]:
            runs[f"proj_{kind}_{dim}"] = _variant(
                f"Figure S1a: {kind} projection head to {dim}", projection=kind, projection_dim=dim
            )
    for queue in FIGURES1_MEMORY["queue"]:
        for t in FIGURES1_MEMORY["temperature"]:
            runs[f"xbm_{queue}_t{t:g}"] = _variant(
                f"Figure S1b: memory of {queue}, tau={t:g}", memory_size=queue, temperature=t
            )
    return {name: one_document_set(spec, PAPER_MIN_DOCUMENT_TOKENS) for name, spec in runs.items()}


def _small(name: str, spec: RunSpec) -> RunSpec:
    """A training spec on the smoke and small profiles: spans of ``SMALL_SPANS`` (and max_len to match), the
    documents of at least ``SMALL_MIN_DOCUMENT_TOKENS`` tokens, Figure 3's rows at their share of the profile's
    steps, the slanted triangle's cut at 10 % of the steps, and the default ``ddp_gradients`` (one process)."""
    if not spec.trains:
        return spec
    steps = max(2, spec.steps * FIGURE3_RUNS[name][1] // 100) if name in FIGURE3_RUNS else spec.steps
    small = dataclasses.replace(
        spec,
        objective_params={**spec.objective_params, **SMALL_SPANS},
        steps=steps,
        max_len=SMALL_SPANS["max_span_len"] + 2,
        warmup_steps=max(1, round(CUT_FRACTION * steps)),
        ddp_gradients="global",
    )
    return one_document_set(small, SMALL_MIN_DOCUMENT_TOKENS)


def grid(profile: str | Profile, extended: bool = True) -> dict[str, tuple[RunSpec, ...]]:
    """Each run name's specs on ``profile``, one per seed. Without ``extended`` a budgeted profile (small) keeps the
    ``CORE`` rows (Table 1 / S3 / S6); the others run every row. A profile on the mirror's substitutes (smoke, small)
    trains with :func:`_small`'s spans, steps and documents."""
    profile = get_profile(profile)
    runs = paper_grid()
    if not profile.runs_all_rows(extended):
        runs = core_rows(runs, CORE, profile)
    scaled = scale_grid(runs, profile.name, HEADLINE)
    if not profile.paper_data:
        scaled = {name: tuple(_small(name, spec) for spec in specs) for name, specs in scaled.items()}
    return tuned_grid(scaled, HEADLINE, "declutr", profile)
