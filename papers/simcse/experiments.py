"""The SimCSE experiment grid, written with the paper's own settings; a profile scales it.

Sources: SimCSE §3 (unsupervised), §4 (supervised), §6.1 and Appendix A (Table A.1: BERT-base
unsupervised batch 64 / lr 3e-5, supervised batch 512 / lr 5e-5; one epoch of 10^6 Wikipedia
sentences unsupervised, 3 epochs of SNLI+MNLI supervised, max length 32, temperature 0.05) and the
official code (``run_unsup_example.sh``: evaluation every 125 steps on STS-B dev, ``--fp16``; Appendix A says
250 for the paper's runs; we follow the code). Figure 2 samples alignment/uniformity "every 10 training steps"
(§5): the runs it plots carry ``trajectory_every=10``.

Seeds: every row a claim of ``claims.yaml`` rests on (``HEADLINE``: Table 5's unsup. and sup., all of Table 3, delete
one word, and the ablation rows of Tables 1, 2, 4, 6, 7, D.1 and D.2 that the claims compare) runs with several seeds
(3 in the small profile, 5 in the full one); the others with seed 42, the official one.

Runs (the name is how tables and figures refer to them):

| name                    | what                                                    | used by             |
|-------------------------|---------------------------------------------------------|---------------------|
| backbone_avg            | the backbone as it is, mean pooling                     | Table 5, Fig. 3/F.1/G.1 |
| backbone_cls            | the backbone as it is, [CLS] through its pooler         | Table 5, Fig. 3/F.1 |
| unsup                   | unsupervised SimCSE, [CLS] + MLP in training only       | Table 5, 3 (p=0.1), Fig. 2/3/F.1/G.1 |
| sup                     | supervised SimCSE, [CLS] + MLP, contradiction negatives | Table 5, Fig. 3/F.1/G.1 |
| dropout_<p>             | unsupervised SimCSE with dropout p                      | Table 3 (p=0 also Fig. 2) |
| fixed_0.1               | dropout 0.1, the same mask for both views               | Table 3, Fig. 2     |
| delete_one_word         | second view = sentence with one word deleted            | Fig. 2, Tables 1, 2 |

The ablations (the small profile runs them with ``--extended`` only; smoke runs one row per table, full all),
each scored on STS-B dev like Table 3, with seed 42, or the headline seeds where a claim compares the row:

| names                                   | what                                                         | table    |
|-----------------------------------------|--------------------------------------------------------------|----------|
| crop_<k>, word_deletion_<k>, synonym_replacement, delete_one_word_no_dropout | discrete second views (k = 0.1, 0.2, 0.3) | Table 1 |
| next_sentence, next_3_sentences [+ _two_encoders], delete_one_word_two_encoders, unsup_two_encoders | other unsupervised objectives, one or two encoders | Table 2 |
| pairs_<entailment, neutral, contradiction, all> | supervised, NLI pairs of one label as positives, no hard negatives | Table 4 |
| unsup_cls_mlp, unsup_no_mlp, unsup_first_last, sup_mlp_train, sup_no_mlp, sup_first_last | poolers and the MLP | Table 6 |
| sup_alpha_<a>, sup_contradiction_neutral | hard negatives (a = 0.5, 2; "N/A" is pairs_entailment, as in the paper) | Table 7 |
| sup_tau_<t>, sup_dot                    | temperature (t = 0.001, 0.01, 0.1, 1) and the dot product  | Table D.1 |
| sup_mlm_<l> (l = 0.01, 0.1, 1)          | auxiliary MLM, also scored on the transfer tasks' dev sets (l = 0 is ``sup``) | Table D.2 |
| unsup_mlm_0.1                           | unsupervised SimCSE with the auxiliary MLM (lambda 0.1), for its transfer test scores | Table E.1 |
| a1_<unsup, sup>_b<batch>_lr<lr>         | batch x learning rate (``A1_BATCHES[profile]`` x 1e-5, 3e-5, 5e-5), STS-B dev | Table A.1 |

Where the paper's data is not offline the ablations use the mirror's in every profile, and say so: ordered
WikiText-2 sentences for Table 2's next-sentence rows (``wikitext2_windows``), SNLI dev+test pairs by label for
Table 4 (``snli_devtest_pairs_<label>``), and SNLI dev+test quads for "contradiction + neutral" (SimCSE's
``nli_for_simcse.csv`` has no neutral column).

The objectives and their parameters: ``sentemb/objectives/simcse.py`` and ``next_sentence.py``.
"""

from __future__ import annotations

import dataclasses

from sentemb.profiles import get_profile, scale_grid
from sentemb.spec import RunSpec

PAPER_BACKBONE = "bert-base-uncased"
UNSUP_STEPS = 1_000_000 // 64  # one epoch of wiki1m at batch 64
SUP_STEPS = 3 * (275_601 // 512)  # three epochs of nli_for_simcse at batch 512
TABLE3_DROPOUTS = (0.0, 0.01, 0.05, 0.1, 0.15, 0.2, 0.5)

# Rows a claim of claims.yaml rests on run with several seeds (3 small, 5 full; tests/test_simcse_ablations.py checks
# that every claim cell's run is here). Table 3's dropouts and "delete one word" are core rows, the rest ablations.
HEADLINE = ("unsup", "sup", *[f"dropout_{p:g}" for p in TABLE3_DROPOUTS if p != 0.1], "fixed_0.1", "delete_one_word",
            "crop_0.1", "word_deletion_0.1", "synonym_replacement",  # Table 1
            "unsup_two_encoders", "next_3_sentences",  # Table 2
            "pairs_entailment", "pairs_neutral", "pairs_contradiction", "pairs_all",  # Table 4 (and Table 7's N/A)
            "unsup_cls_mlp", "unsup_no_mlp", "unsup_first_last",  # Table 6
            "sup_alpha_0.5", "sup_alpha_2", "sup_contradiction_neutral",  # Table 7
            "sup_dot", "sup_tau_0.001", "sup_tau_0.01", "sup_tau_0.1", "sup_tau_1",  # Table D.1
            "sup_mlm_0.1",  # Table D.2 ("w/o MLM" is sup itself, scored on transfer by a derived record)
            "unsup_mlm_0.1")  # Table E.1 (unsup. w/ MLM against unsup., on the transfer tasks' test sets)

_UNSUP = dict(profile="full", backbone=PAPER_BACKBONE, pooler="cls_before_pooler", objective="simcse_unsup",
              train_data="wiki1m_for_simcse", steps=UNSUP_STEPS, batch_size=64, lr=3e-5, max_len=32,
              eval_every=125, trajectory_every=10, precision="fp16", seed=42)
_UNSUP_PARAMS = {"temperature": 0.05, "fixed_dropout_mask": False, "augmentation": "none"}
# Table 3 and Figure 2 runs are scored on STS-B dev only (as in the paper), and analysed on STS-B dev.
_DEV_ONLY = dict(_UNSUP, final_eval="stsb_dev", analysis_splits=("dev",))


def paper_grid() -> dict[str, RunSpec]:
    runs = {
        "backbone_avg": RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="avg"),
        "backbone_cls": RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="cls"),
        "unsup": RunSpec(**_UNSUP, objective_params=_UNSUP_PARAMS, notes="unsupervised SimCSE (Eq. 4), Table A.1 BERT-base"),
        "sup": RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="cls", objective="simcse_sup",
                       objective_params={"temperature": 0.05, "hard_negative_alpha": 1.0},
                       train_data="nli_for_simcse", steps=SUP_STEPS, batch_size=512, lr=5e-5, max_len=32,
                       eval_every=125, precision="fp16", seed=42,
                       notes="supervised SimCSE (Eq. 5 = Eq. 8 with alpha 1), Table A.1 BERT-base"),
    }
    for p in TABLE3_DROPOUTS:
        if p == 0.1:
            continue  # the default dropout is the unsup run itself
        runs[f"dropout_{p:g}"] = RunSpec(**_DEV_ONLY, objective_params=_UNSUP_PARAMS, dropout=p,
                                         notes=f"Table 3, p={p:g}")
    runs["fixed_0.1"] = RunSpec(**_DEV_ONLY, dropout=0.1, objective_params={**_UNSUP_PARAMS, "fixed_dropout_mask": True},
                                notes="Table 3, fixed 0.1: one dropout mask for both views")
    runs["delete_one_word"] = RunSpec(**_DEV_ONLY, objective_params={**_UNSUP_PARAMS, "augmentation": "delete_one_word"},
                                      notes="Figure 2: delete one word (with dropout)")
    return runs


TABLE1_FRACTIONS = (0.1, 0.2, 0.3)
TABLE7_ALPHAS = (0.5, 2.0)
TABLED1_TEMPERATURES = (0.001, 0.01, 0.1, 1.0)
TABLED2_WEIGHTS = (0.01, 0.1, 1.0)  # lambda = 0 (w/o MLM) is the sup run
# Table A.1's search (Appendix A: batch size in {64, 128, 256, 512} x learning rate in {1e-5, 3e-5, 5e-5}, on STS-B dev);
# the small and smoke profiles search the batch sizes 2 cores allow (<= 64)
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
        runs[f"word_deletion_{k:g}"] = with_params(unsup, f"Table 1, word deletion {k:.0%}",
                                                   augmentation=f"word_deletion_{k:g}")
    runs["synonym_replacement"] = with_params(unsup, "Table 1, synonym replacement", augmentation="synonym_replacement")
    runs["delete_one_word_no_dropout"] = dataclasses.replace(
        with_params(unsup, "Table 1, delete one word w/o dropout", augmentation="delete_one_word"), dropout=0.0)
    windows = dataclasses.replace(unsup, objective="simcse_next_sentence", train_data="wikitext2_windows",
                                  objective_params={"temperature": 0.05})
    for context in ("next_sentence", "next_3_sentences"):
        for two in (False, True):
            name = context + ("_two_encoders" if two else "")
            runs[name] = with_params(windows, f"Table 2, {context.replace('_', ' ')}, {'two encoders' if two else 'one encoder'}",
                                     context=context, two_encoders=two)
    runs["delete_one_word_two_encoders"] = with_params(unsup, "Table 2, delete one word, two encoders",
                                                       augmentation="delete_one_word", two_encoders=True)
    runs["unsup_two_encoders"] = with_params(unsup, "Table 2, unsupervised SimCSE, two encoders", two_encoders=True)
    for label in NLI_LABELS:
        runs[f"pairs_{label}"] = dataclasses.replace(
            with_params(sup, f"Table 4, SNLI {label} pairs as positives (no hard negatives)", negatives="none"),
            train_data=f"snli_devtest_pairs_{label}")
    runs["unsup_cls_mlp"] = dataclasses.replace(unsup, pooler="cls", notes="Table 6 unsup., [CLS] w/ MLP")
    runs["unsup_no_mlp"] = with_params(unsup, "Table 6 unsup., [CLS] w/o MLP", train_mlp=False)
    runs["unsup_first_last"] = dataclasses.replace(unsup, pooler="avg_first_last", notes="Table 6 unsup., first-last avg.")
    runs["sup_mlp_train"] = dataclasses.replace(sup, pooler="cls_before_pooler", notes="Table 6 sup., w/ MLP (train)")
    runs["sup_no_mlp"] = dataclasses.replace(with_params(sup, "Table 6 sup., [CLS] w/o MLP", train_mlp=False),
                                             pooler="cls_before_pooler")
    runs["sup_first_last"] = dataclasses.replace(sup, pooler="avg_first_last", notes="Table 6 sup., first-last avg.")
    for alpha in TABLE7_ALPHAS:
        runs[f"sup_alpha_{alpha:g}"] = with_params(sup, f"Table 7, contradiction, alpha={alpha:g}",
                                                   hard_negative_alpha=alpha)
    runs["sup_contradiction_neutral"] = dataclasses.replace(
        with_params(sup, "Table 7, contradiction + neutral, alpha=1", negatives="contradiction+neutral"),
        train_data="snli_devtest_with_neutral")
    for tau in TABLED1_TEMPERATURES:
        runs[f"sup_tau_{tau:g}"] = with_params(sup, f"Table D.1, tau={tau:g}", temperature=tau)
    runs["sup_dot"] = with_params(sup, "Table D.1, N/A (dot product)", similarity="dot")
    for weight in TABLED2_WEIGHTS:  # scored on STS-B dev and on the transfer tasks' dev sets
        runs[f"sup_mlm_{weight:g}"] = dataclasses.replace(
            with_params(sup, f"Table D.2, w/ MLM, lambda={weight:g}", mlm_weight=weight),
            final_eval="sts,transfer", analysis_splits=("dev",))
    # Table E.1's "w/ MLM" rows (lambda 0.1, its caption) for unsupervised SimCSE; its transfer test scores come from a
    # derived record, like unsup's own
    runs["unsup_mlm_0.1"] = with_params(unsup, "Table E.1, unsup. SimCSE w/ MLM, lambda=0.1", mlm_weight=0.1)
    return runs


def batch_lr_grid(profile: str) -> dict[str, RunSpec]:
    """Table A.1's search: unsup. and sup. SimCSE over ``A1_BATCHES[profile]`` x ``A1_LEARNING_RATES``, one epoch
    (the paper's; the small profile caps every run at its 60 steps, so a smaller batch sees fewer sentences), scored
    on STS-B dev. The points that are the main runs' settings (unsup. 64 / 3e-5, sup. 64 / 5e-5 on a profile whose
    batches stop at 64) are those runs, not repeated."""
    base = paper_grid()
    modes = {"unsup": (RunSpec(**_DEV_ONLY, objective_params=_UNSUP_PARAMS), 1_000_000),
             "sup": (dataclasses.replace(base["sup"], final_eval="stsb_dev", analysis_splits=("dev",)), 3 * 275_601)}
    runs = {}
    for mode, (spec, sentences) in modes.items():
        for batch in A1_BATCHES.get(profile, A1_BATCHES["full"]):
            for lr in A1_LEARNING_RATES:
                if _is_main_point(profile, mode, batch, lr):
                    continue
                runs[f"a1_{mode}_b{batch}_lr{lr:g}"] = dataclasses.replace(
                    spec, batch_size=batch, lr=lr, steps=sentences // batch,
                    notes=f"Table A.1 search, {mode}. SimCSE, batch {batch}, lr {lr:g}")
    return runs


def _is_main_point(profile: str, mode: str, batch: int, lr: float) -> bool:
    """Whether (batch, lr) is the main ``mode`` run's own setting on ``profile`` (its batch capped by the profile)."""
    main, cap = paper_grid()[mode], get_profile(profile).max_batch
    return batch == (main.batch_size if cap is None else min(cap, main.batch_size)) and lr == main.lr


def a1_run(profile: str, mode: str, batch: int, lr: float) -> str:
    """The run of Table A.1's (mode, batch, lr) point on ``profile``: the main run where the point is its setting."""
    return mode if _is_main_point(profile, mode, batch, lr) else f"a1_{mode}_b{batch}_lr{lr:g}"


CORE = ("backbone_avg", "backbone_cls", "unsup", "sup", *[f"dropout_{p:g}" for p in TABLE3_DROPOUTS if p != 0.1],
        "fixed_0.1", "delete_one_word")
# The rows the small profile runs without --extended: the backbones (one seed) and unsup and sup (3 seeds each).
# The other CORE rows run with --extended, their records committed: Table 3's one-seed dropouts took ~10 min of the
# SimCSE core's 45-minute budget from scratch on 2 cores (119 s per run); its p = 0, fixed 0.1 and delete-one-word
# runs (7 runs, 14 min at f337263) would put the whole archive past its 3-hour budget (issue 19).
SMALL_CORE = ("backbone_avg", "backbone_cls", "unsup", "sup")
SMOKE_ABLATIONS = ("synonym_replacement", "next_3_sentences_two_encoders", "pairs_neutral", "unsup_no_mlp",
                   "sup_contradiction_neutral", "sup_dot", "sup_mlm_0.1", "a1_sup_b8_lr1e-05")  # one row per table


def table3_run(p: float | str) -> str:
    """Which run gives Table 3's column ``p`` (0.1 is the main unsupervised run)."""
    if p == "fixed 0.1":
        return "fixed_0.1"
    return "unsup" if float(p) == 0.1 else f"dropout_{float(p):g}"


def grid(profile: str, extended: bool = True) -> dict[str, tuple[RunSpec, ...]]:
    """Each run name's specs on ``profile``, one per seed (3 small, 5 full for ``HEADLINE`` rows, else one). The small
    profile runs only ``SMALL_CORE`` unless ``extended``; smoke runs ``CORE`` and ``SMOKE_ABLATIONS``; full runs
    every row."""
    runs = {**paper_grid(), **ablation_grid(), **batch_lr_grid(profile)}
    if profile == "smoke":
        runs = {name: spec for name, spec in runs.items() if name in CORE or name in SMOKE_ABLATIONS}
    elif profile == "small" and not extended:
        runs = {name: spec for name, spec in runs.items() if name in SMALL_CORE}
    return scale_grid(runs, profile, [name for name in HEADLINE if name in runs])
