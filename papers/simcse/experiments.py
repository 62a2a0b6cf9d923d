"""The SimCSE experiment grid, written with the paper's own settings; a profile scales it.

Sources: SimCSE §3-4, §6.1 and Appendix A (Table A.1: BERT-base unsupervised batch 64 / lr 3e-5, supervised batch
512 / lr 5e-5; one epoch of 10^6 Wikipedia sentences unsupervised, 3 epochs of SNLI+MNLI supervised, max length 32,
temperature 0.05) and the official ``run_unsup_example.sh`` (``--fp16``; STS-B dev every 125 steps where Appendix A
says 250: we follow the code). Figure 2's runs carry ``trajectory_every=10`` (§5: "every 10 training steps").

Seeds: the rows a claim of ``claims.yaml`` rests on (``HEADLINE``) run with 3 seeds (small) or 5 (full); the others
with seed 42, the official one.

Runs: the backbones (``backbone_avg``, ``backbone_cls``), ``unsup``, ``sup``, Table 3's ``dropout_<p>`` and
``fixed_0.1``, ``delete_one_word`` (:func:`paper_grid`); the ablations of Tables 1, 2, 4, 6, 7, D.1, D.2 and E.1
(:func:`ablation_grid`: ``--extended`` on the small profile, one row per table on smoke, all on full) and Table A.1's
batch x lr search (:func:`batch_lr_grid`). Where the paper's data is not offline the ablations use the mirror's, in
every profile. The run names and the tables that use them: README.md, "The runs".

The objectives and their parameters: ``sentemb/objectives/simcse.py`` and ``next_sentence.py``.
"""

from __future__ import annotations

import dataclasses

from sentemb.grid_reach import core_rows
from sentemb.profiles import Profile, get_profile, scale_grid, steps_curves, tuned_grid
from sentemb.spec import RunSpec

PAPER_BACKBONE = "bert-base-uncased"
UNSUP_STEPS = 1_000_000 // 64  # one epoch of wiki1m at batch 64
SUP_STEPS = 3 * (275_601 // 512)  # three epochs of nli_for_simcse at batch 512
WHITENING_FITS = ("NLI", "target")  # the sentences a whitening or a flow is fitted on (Tables C.1, B.3)
TABLE3_DROPOUTS = (0.0, 0.01, 0.05, 0.1, 0.15, 0.2, 0.5)

# Rows a claim of claims.yaml rests on run with several seeds (3 small, 5 full; tests/test_simcse_ablations.py checks
# that every claim cell's run is here). Table 3's dropouts and "delete one word" are core rows, the rest ablations.
HEADLINE = (
    "unsup",
    "sup",
    *[f"dropout_{p:g}" for p in TABLE3_DROPOUTS if p != 0.1],
    "fixed_0.1",
    "delete_one_word",
    "crop_0.1",
    "word_deletion_0.1",
    "synonym_replacement",  # Table 1
    "unsup_two_encoders",
    "next_3_sentences",  # Table 2
    "pairs_entailment",
    "pairs_neutral",
    "pairs_contradiction",
    "pairs_all",  # Table 4 (and Table 7's N/A)
    "unsup_cls_mlp",
    "unsup_no_mlp",
    "unsup_first_last",  # Table 6
    "sup_alpha_0.5",
    "sup_alpha_2",
    "sup_contradiction_neutral",  # Table 7
    "sup_dot",
    "sup_tau_0.001",
    "sup_tau_0.01",
    "sup_tau_0.1",
    "sup_tau_1",  # Table D.1
    "sup_mlm_0.1",  # Table D.2 ("w/o MLM" is sup itself, scored on transfer by a derived record)
    "unsup_mlm_0.1",
)  # Table E.1 (unsup. w/ MLM against unsup., on the transfer tasks' test sets)

_UNSUP = dict(
    profile="full",
    backbone=PAPER_BACKBONE,
    pooler="cls_before_pooler",
    objective="simcse_unsup",
    train_data="wiki1m_for_simcse",
    steps=UNSUP_STEPS,
    batch_size=64,
    lr=3e-5,
    max_len=32,
    eval_every=125,
    trajectory_every=10,
    precision="fp16",
    seed=42,
)
_UNSUP_PARAMS = {"temperature": 0.05, "fixed_dropout_mask": False, "augmentation": "none"}
# Table 3 and Figure 2 runs are scored on STS-B dev only (as in the paper), and analysed on STS-B dev.
_DEV_ONLY = dict(_UNSUP, final_eval="stsb_dev", analysis_splits=("dev",))


def paper_grid() -> dict[str, RunSpec]:
    runs = {
        "backbone_avg": RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="avg"),
        "backbone_cls": RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="cls"),
        "unsup": RunSpec(
            **_UNSUP, objective_params=_UNSUP_PARAMS, notes="unsupervised SimCSE (Eq. 4), Table A.1 BERT-base"
        ),
        "sup": RunSpec(
            profile="full",
            backbone=PAPER_BACKBONE,
            pooler="cls",
            objective="simcse_sup",
            objective_params={"temperature": 0.05, "hard_negative_alpha": 1.0},
            train_data="nli_for_simcse",
            steps=SUP_STEPS,
            batch_size=512,
            lr=5e-5,
            max_len=32,
            eval_every=125,
            precision="fp16",
            seed=42,
            notes="supervised SimCSE (Eq. 5 = Eq. 8 with alpha 1), Table A.1 BERT-base",
        ),
    }
    for p in TABLE3_DROPOUTS:
        if p == 0.1:
            continue  # the default dropout is the unsup run itself
        runs[f"dropout_{p:g}"] = RunSpec(
            **_DEV_ONLY, objective_params=_UNSUP_PARAMS, dropout=p, notes=f"Table 3, p={p:g}"
        )
    runs["fixed_0.1"] = RunSpec(
        **_DEV_ONLY,
        dropout=0.1,
        objective_params={**_UNSUP_PARAMS, "fixed_dropout_mask": True},
        notes="Table 3, fixed 0.1: one dropout mask for both views",
    )
    runs["delete_one_word"] = RunSpec(
        **_DEV_ONLY,
        objective_params={**_UNSUP_PARAMS, "augmentation": "delete_one_word"},
        notes="Figure 2: delete one word (with dropout)",
    )
    return runs


TABLE1_FRACTIONS = (0.1, 0.2, 0.3)
TABLE7_ALPHAS = (0.5, 2.0)
TABLED1_TEMPERATURES = (0.001, 0.01, 0.1, 1.0)
TABLED2_WEIGHTS = (0.01, 0.1, 1.0)  # lambda = 0 (w/o MLM) is the sup run
# Table A.1's search (Appendix A: batch size in {64, 128, 256, 512} x learning rate in {1e-5, 3e-5, 5e-5}, on STS-B
# dev). Keyed by profile name: the batch sizes are each profile's own choice, below its max_batch on 2 cores.
A1_BATCHES = {"full": (64, 128, 256, 512), "small": (16, 32, 64), "smoke": (8, 16)}
A1_LEARNING_RATES = (1e-5, 3e-5, 5e-5)
NLI_LABELS = ("entailment", "neutral", "contradiction", "all")


def ablation_grid() -> dict[str, RunSpec]:
    """Tables 1, 2, 4, 6, 7, D.1, D.2 and E.1's unsup. w/ MLM: one run per row the offline data allows (the paper's
    hyperparameters)."""
    base = paper_grid()
    unsup = RunSpec(**_DEV_ONLY, objective_params=_UNSUP_PARAMS)
    sup = dataclasses.replace(base["sup"], final_eval="stsb_dev", analysis_splits=("dev",))

    def with_params(spec: RunSpec, notes: str, **params) -> RunSpec:
        return dataclasses.replace(spec, objective_params={**spec.objective_params, **params}, notes=notes)

    runs = {}
    for k in TABLE1_FRACTIONS:
        runs[f"crop_{k:g}"] = with_params(unsup, f"Table 1, crop {k:.0%}", augmentation=f"crop_{k:g}")
        runs[f"word_deletion_{k:g}"] = with_params(
            unsup, f"Table 1, word deletion {k:.0%}", augmentation=f"word_deletion_{k:g}"
        )
    runs["synonym_replacement"] = with_params(unsup, "Table 1, synonym replacement", augmentation="synonym_replacement")
    runs["delete_one_word_no_dropout"] = dataclasses.replace(
        with_params(unsup, "Table 1, delete one word w/o dropout", augmentation="delete_one_word"), dropout=0.0
    )
    windows = dataclasses.replace(
        unsup, objective="simcse_next_sentence", train_data="wikitext2_windows", objective_params={"temperature": 0.05}
    )
    for context in ("next_sentence", "next_3_sentences"):
        for two in (False, True):
            name = context + ("_two_encoders" if two else "")
            encoders = "two encoders" if two else "one encoder"
            runs[name] = with_params(
                windows, f"Table 2, {context.replace('_', ' ')}, {encoders}", context=context, two_encoders=two
            )
    runs["delete_one_word_two_encoders"] = with_params(
        unsup, "Table 2, delete one word, two encoders", augmentation="delete_one_word", two_encoders=True
    )
    runs["unsup_two_encoders"] = with_params(unsup, "Table 2, unsupervised SimCSE, two encoders", two_encoders=True)
    for label in NLI_LABELS:
        runs[f"pairs_{label}"] = dataclasses.replace(
            with_params(sup, f"Table 4, SNLI {label} pairs as positives (no hard negatives)", negatives="none"),
            train_data=f"snli_devtest_pairs_{label}",
        )
    runs["unsup_cls_mlp"] = dataclasses.replace(unsup, pooler="cls", notes="Table 6 unsup., [CLS] w/ MLP")
    runs["unsup_no_mlp"] = with_params(unsup, "Table 6 unsup., [CLS] w/o MLP", train_mlp=False)
    runs["unsup_first_last"] = dataclasses.replace(
        unsup, pooler="avg_first_last", notes="Table 6 unsup., first-last avg."
    )
    runs["sup_mlp_train"] = dataclasses.replace(sup, pooler="cls_before_pooler", notes="Table 6 sup., w/ MLP (train)")
    runs["sup_no_mlp"] = dataclasses.replace(
        with_params(sup, "Table 6 sup., [CLS] w/o MLP", train_mlp=False), pooler="cls_before_pooler"
    )
    runs["sup_first_last"] = dataclasses.replace(sup, pooler="avg_first_last", notes="Table 6 sup., first-last avg.")
    for alpha in TABLE7_ALPHAS:
        runs[f"sup_alpha_{alpha:g}"] = with_params(
            sup, f"Table 7, contradiction, alpha={alpha:g}", hard_negative_alpha=alpha
        )
    runs["sup_contradiction_neutral"] = dataclasses.replace(
        with_params(sup, "Table 7, contradiction + neutral, alpha=1", negatives="contradiction+neutral"),
        train_data="snli_devtest_with_neutral",
    )
    for tau in TABLED1_TEMPERATURES:
        runs[f"sup_tau_{tau:g}"] = with_params(sup, f"Table D.1, tau={tau:g}", temperature=tau)
    runs["sup_dot"] = with_params(sup, "Table D.1, N/A (dot product)", similarity="dot")
    for weight in TABLED2_WEIGHTS:  # scored on STS-B dev and on the transfer tasks' dev sets
        runs[f"sup_mlm_{weight:g}"] = dataclasses.replace(
            with_params(sup, f"Table D.2, w/ MLM, lambda={weight:g}", mlm_weight=weight),
            final_eval="sts,transfer",
            analysis_splits=("dev",),
        )
    # Table E.1's "w/ MLM" rows (lambda 0.1, its caption) for unsupervised SimCSE; its transfer test scores come from a
    # derived record, like unsup's own
    runs["unsup_mlm_0.1"] = with_params(unsup, "Table E.1, unsup. SimCSE w/ MLM, lambda=0.1", mlm_weight=0.1)
    return runs


def a1_batches(profile: str | Profile) -> tuple[int, ...]:
    """The batch sizes of Table A.1's search on ``profile`` (the paper's on a profile not in ``A1_BATCHES``)."""
    return A1_BATCHES.get(get_profile(profile).sizes_of, A1_BATCHES["full"])


def batch_lr_grid(profile: str | Profile) -> dict[str, RunSpec]:
    """Table A.1's search: unsup. and sup. SimCSE over :func:`a1_batches` x ``A1_LEARNING_RATES``, one epoch
    (the paper's; the small profile caps every run at its 60 steps, so a smaller batch sees fewer sentences), scored
    on STS-B dev. The points that are the main runs' settings (unsup. 64 / 3e-5, sup. 64 / 5e-5 on a profile whose
    batches stop at 64) are those runs, not repeated."""
    base = paper_grid()
    modes = {
        "unsup": (RunSpec(**_DEV_ONLY, objective_params=_UNSUP_PARAMS), 1_000_000),
        "sup": (dataclasses.replace(base["sup"], final_eval="stsb_dev", analysis_splits=("dev",)), 3 * 275_601),
    }
    runs = {}
    for mode, (spec, sentences) in modes.items():
        for batch in a1_batches(profile):
            for lr in A1_LEARNING_RATES:
                if _is_main_point(profile, mode, batch, lr):
                    continue
                runs[f"a1_{mode}_b{batch}_lr{lr:g}"] = dataclasses.replace(
                    spec,
                    batch_size=batch,
                    lr=lr,
                    steps=sentences // batch,
                    notes=f"Table A.1 search, {mode}. SimCSE, batch {batch}, lr {lr:g}",
                )
    return runs


def _is_main_point(profile: str | Profile, mode: str, batch: int, lr: float) -> bool:
    """Whether (batch, lr) is the main ``mode`` run's own setting on ``profile`` (its batch capped by the profile)."""
    main, cap = paper_grid()[mode], get_profile(profile).max_batch
    return batch == (main.batch_size if cap is None else min(cap, main.batch_size)) and lr == main.lr


def a1_run(profile: str | Profile, mode: str, batch: int, lr: float) -> str:
    """The run of Table A.1's (mode, batch, lr) point on ``profile``: the main run where the point is its setting."""
    return mode if _is_main_point(profile, mode, batch, lr) else f"a1_{mode}_b{batch}_lr{lr:g}"


TUNED = ("unsup", "sup")  # the paper tunes the learning rate on STS-B dev (App. A); probed where a profile asks
CURVE_EVAL_EVERY = 20  # STS-B dev evaluations of unsup. SimCSE's steps curves (the profile's steps, where it chooses)

CORE = (
    "backbone_avg",
    "backbone_cls",
    "unsup",
    "sup",
    *[f"dropout_{p:g}" for p in TABLE3_DROPOUTS if p != 0.1],
    "fixed_0.1",
    "delete_one_word",
)
# The rows a budgeted profile (small) runs without --extended: the backbones (one seed) and unsup and sup (3 seeds
# each). The other CORE rows run with --extended, their records committed: Table 3's one-seed dropouts took ~10 min of
# the SimCSE core's 45-minute budget from scratch on 2 cores (119 s per run); its p = 0, fixed 0.1 and delete-one-word
# runs (7 runs, 14 min) would put the whole archive past its 3-hour budget.
SMALL_CORE = ("backbone_avg", "backbone_cls", "unsup", "sup")
SMOKE_ABLATIONS = (
    "synonym_replacement",
    "next_3_sentences_two_encoders",
    "pairs_neutral",
    "unsup_no_mlp",
    "sup_contradiction_neutral",
    "sup_dot",
    "sup_mlm_0.1",
    "a1_sup_b8_lr1e-05",
)  # one row per table


def table3_run(p: float | str) -> str:
    """Which run gives Table 3's column ``p`` (0.1 is the main unsupervised run)."""
    if p == "fixed 0.1":
        return "fixed_0.1"
    return "unsup" if float(p) == 0.1 else f"dropout_{float(p):g}"


def grid(profile: str | Profile, extended: bool = True) -> dict[str, tuple[RunSpec, ...]]:
    """Each run name's specs on ``profile``, one per seed (3 small, 5 full for ``HEADLINE`` rows, else one). A budgeted
    profile (small) runs only ``SMALL_CORE`` unless ``extended``; one that only exercises the pipeline (smoke) runs
    ``CORE`` and ``SMOKE_ABLATIONS``; full runs every row."""
    scaled = get_profile(profile)
    runs = {**paper_grid(), **ablation_grid(), **batch_lr_grid(scaled)}
    if scaled.exercises_only:
        runs = core_rows(runs, {*CORE, *SMOKE_ABLATIONS}, scaled)
    elif not scaled.runs_all_rows(extended):
        runs = {name: spec for name, spec in runs.items() if name in SMALL_CORE}
    rows = scale_grid(runs, scaled.name, [name for name in HEADLINE if name in runs])
    return {
        **tuned_grid(rows, TUNED, "simcse", scaled),
        **steps_curves(rows, "unsup", scaled, CURVE_EVAL_EVERY),
    }
