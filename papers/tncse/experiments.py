"""The TNCSE experiment grid, written with the paper's own settings; a profile scales it.

Sources. The paper (Method, Eq. 4-8; Experiments; Figure 4 caption: "training set is uniformly Wiki1M and unlabelled
SICKR"), its supplement (Table I-1, second stage: BERT-base batch 64, lr 1e-6; seed 42), and the official
``train_dual.py`` defaults (../shared/notes/official-implementations.md §1.4): dropout 0.00025 in both encoders,
max length 64, plain AdamW (weight decay 0.01), no scheduler, no gradient clipping, no fp16, STS-B dev every 100
steps, best checkpoint by STS-B dev; evaluation [CLS] of encoder I + [CLS] of encoder II, SimCSE's SentEval "all".

Stage 1 is not reproducible offline: the paper trains each encoder with unsupervised SimCSE on Wiki1M + SICK-R plus
one round-trip-translated copy (en-fr-en, en-ru-en), and no translation model is available here. **Substitute:** the
SimCSE grid's unsupervised runs (``papers/simcse``, run ``unsup``), reused by run id (``init_runs``), not retrained:
TNCSE seed s starts from SimCSE seeds (s, next seed) of the profile's headline seeds, so that three TNCSE seeds see
three different stage-1 pairs, as three plain ensembles do.

| name            | what                                                                  | paper item              |
|-----------------|-----------------------------------------------------------------------|-------------------------|
| simcse          | unsup. SimCSE on wiki (shared with papers/simcse ``unsup``): stage 1   | Tables 1, 6; Fig. 4, 6  |
| ensemble        | encoder I + encoder II as they come from stage 1, no training         | Tables 1, 3, 4 "None"   |
| tncse           | TNCSE (Eq. 8) on wiki + SICK-R sentences                              | Tables 1-4, 6; Fig. 4-6 |
| tncse_wiki      | TNCSE on wiki only                                                    | Table 6                 |
| loss_<terms>    | TNCSE with a subset of L_NCE, L_ICNCE, L_ICTN                         | Table 4                 |
| simcse_sickr    | unsup. SimCSE on wiki + SICK-R (backbone; MLP on [CLS], B x B loss)   | Tables 5, 6             |
| tncse_single    | one encoder: InfoNCE + L_TN between its two views (from the backbone)  | Table 5                 |
| simcse_matched  | tncse_single without L_TN (``tn_weight=0``): SimCSE matched to it      | Table 5 (the claim)     |
| tncse_lr_paper  | TNCSE at the paper's lr 1e-6 (small profile only: the lr probe)        | README, lr substitution |

The small profile runs the ``CORE`` rows (Table 1, Figures 4, 6) within its budget; the others are ``--extended``
(``./run_all.sh --paper tncse --extended``).

The objectives: ``sentemb/objectives/tncse.py`` (loss terms in ``objectives/tensor_norm.py``).

Table 5's SimCSE. The paper's SimCSE row is unsupervised SimCSE retrained on the same data (``simcse_sickr``: an
MLP on [CLS] in training, SimCSE's B x B InfoNCE), and the paper reads TNCSE-Single against it as "only increases the
L_TN loss relative to Unsup-SimCSE". TNCSE-Single here has no MLP and Eq. 4's symmetric InfoNCE over the 2B
interleaved rows, so against ``simcse_sickr`` it differs in three things, not one. ``simcse_matched`` is
``tncse_single`` with ``tn_weight=0`` and nothing else changed (seeds, data, steps, batch, lr, pooler): Eq. 4 alone,
the SimCSE that differs from TNCSE-Single by L_TN only. The claim ``single-encoder-tn-beats-simcse`` compares
TNCSE-Single with it; ``simcse_sickr`` stays in Table 5 (and is Table 6's SimCSE row).

Choices this archive makes where paper and code are silent or differ (each a parameter, documented there):
Eq. 6 is used as printed (no /2, ``halve_norm_term=False``), but with the official clamp for a negative [CLS]
cosine (``clamp_negative_cosine=True``): -log of a negative number is undefined, the paper does not say what happens
then, and the clamp is what the authors' code does (with stage-1 encoders from one pre-trained model the
cosines are positive and the clamp does not fire; with the smoke profile's random encoders it does).
"""

from __future__ import annotations

import dataclasses

from papers.simcse.experiments import grid as simcse_grid
from papers.simcse.experiments import paper_grid as simcse_paper_grid
from sentemb.profiles import scale_grid
from sentemb.spec import RunSpec

PAPER_BACKBONE = "bert-base-uncased"
TRAIN_DATA = "wiki1m_for_simcse+sickr"  # Wiki1M + unlabelled SICK-R (Figure 4 caption, supplement)
STEPS = 1_000_000 // 64  # one epoch of Wiki1M at batch 64 (SICK-R adds under 1 %)
PAPER_LR = 1e-6
#: Stage-2 rows on the smoke and small profiles: at the paper's lr 1e-6, 60 steps leave the STS-B dev curve flat
#: (``tncse_lr_paper``, small profile: 83.92 at step 0, 83.88 / 83.84 / 83.83 at steps 20 / 40 / 60), so they train at
#: 1e-5; and at max length 32 (SimCSE's, as every other small-profile run) instead of 64, which halves a step
#: (11.3 s at 64 on 2 cores; 32 % of the wiki + SICK-R sentences are longer than 32 tokens, 1.3 % longer than 64).
SMALL_LR = 1e-5
SMALL_MAX_LEN = 32
TNCSE_PARAMS = {"temperature": 0.05, "nce": True, "icnce": True, "ictn": True, "halve_norm_term": False,
                "clamp_negative_cosine": True}
TABLE4 = {  # Table 4 row -> which of Eq. 8's terms are on (the full loss is the ``tncse`` row)
    "L_NCE": ("nce",), "L_ICNCE": ("icnce",), "L_ICTN": ("ictn",), "L_NCE+L_ICNCE": ("nce", "icnce"),
    "L_NCE+L_ICTN": ("nce", "ictn"), "L_ICNCE+L_ICTN": ("icnce", "ictn"),
}
#: The rows every seed of the profile runs: each is a cell of a claim (Table 4's six rows are all cells of
#: ``full-loss-best``, an argmax that one-seed cells leave inconclusive); the lr probe runs one seed.
HEADLINE = ("simcse", "ensemble", "tncse", "tncse_wiki", "simcse_sickr", "tncse_single", "simcse_matched",
            *(f"loss_{'_'.join(t)}" for t in TABLE4.values()))
STAGE2 = ("ensemble", "tncse", "tncse_wiki", "tncse_lr_paper", *(f"loss_{'_'.join(t)}" for t in TABLE4.values()))

_SIMCSE = simcse_paper_grid()["unsup"]
_TNCSE = RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="cls_before_pooler", objective="tncse",
                 objective_params=TNCSE_PARAMS, dropout=0.00025, train_data=TRAIN_DATA, steps=STEPS, batch_size=64,
                 lr=PAPER_LR, max_len=64, weight_decay=0.01, lr_schedule="constant", grad_clip=0.0,
                 eval_every=100, precision="fp32", seed=42, notes="TNCSE stage 2 (Eq. 8), train_dual.py defaults")


def table4_run(terms: tuple[str, ...]) -> str:
    return "tncse" if set(terms) == {"nce", "icnce", "ictn"} else f"loss_{'_'.join(terms)}"


def paper_grid() -> dict[str, RunSpec]:
    runs = {
        "simcse": _SIMCSE,
        "ensemble": RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="cls_before_pooler",
                            notes="stage-1 pair summed, untrained (Table 3/4 None)"),
        "tncse": _TNCSE,
        "tncse_wiki": dataclasses.replace(_TNCSE, train_data="wiki1m_for_simcse", notes="Table 6: Wiki1M only"),
    }
    for row, terms in TABLE4.items():
        params = {**TNCSE_PARAMS, **{t: t in terms for t in ("nce", "icnce", "ictn")}}
        runs[table4_run(terms)] = dataclasses.replace(_TNCSE, objective_params=params, notes=f"Table 4 {row}")
    runs["simcse_sickr"] = dataclasses.replace(_SIMCSE, train_data=TRAIN_DATA, notes="Tables 5-6: SimCSE on wiki + SICK-R")
    runs["tncse_single"] = dataclasses.replace(
        _SIMCSE, objective="tncse_single", train_data=TRAIN_DATA,
        objective_params={k: TNCSE_PARAMS[k] for k in ("temperature", "halve_norm_term", "clamp_negative_cosine")},
        notes="Table 5 TNCSE-Single: InfoNCE + L_TN, one encoder, SimCSE's settings")
    runs["simcse_matched"] = dataclasses.replace(
        runs["tncse_single"], objective_params={**runs["tncse_single"].objective_params, "tn_weight": 0.0},
        notes="Table 5 SimCSE matched to TNCSE-Single: its objective without L_TN (no MLP, symmetric 2B-row InfoNCE)")
    return runs


def stage1_pairs(profile: str) -> dict[int, tuple[str, str]]:
    """Seed -> (run id of encoder I, run id of encoder II): SimCSE ``unsup`` seeds (s, the next headline seed)."""
    unsup = simcse_grid(profile)["unsup"]
    ids = [spec.run_id for spec in unsup]
    pairs = {spec.seed: (ids[i], ids[(i + 1) % len(ids)]) for i, spec in enumerate(unsup)}
    return pairs


CORE = ("simcse", "ensemble", "tncse")  # the small profile's rows without --extended (Table 1, Figures 4 and 6)


def grid(profile: str, extended: bool = True) -> dict[str, tuple[RunSpec, ...]]:
    """Each run name's specs on ``profile``, one per seed, with the stage-1 pair filled in; on profiles other than
    full the stage-2 rows train at ``SMALL_LR`` and ``SMALL_MAX_LEN`` (except the lr probe, small profile only, which
    keeps the paper's lr and length). On the small profile ``extended=False`` keeps the ``CORE`` rows only (its time
    budget); smoke and full always run every row."""
    runs = paper_grid()
    if profile == "small":
        runs["tncse_lr_paper"] = dataclasses.replace(_TNCSE, notes="lr probe: the paper's lr 1e-6 in 60 steps")
    if profile == "small" and not extended:
        runs = {name: spec for name, spec in runs.items() if name in CORE}
    scaled = scale_grid(runs, profile, [h for h in HEADLINE if h in runs])
    pairs = stage1_pairs(profile)
    scaled_stage2 = {} if profile == "full" else {"lr": SMALL_LR, "max_len": SMALL_MAX_LEN}
    for name in STAGE2:
        if name not in scaled:
            continue
        paper_settings = name == "tncse_lr_paper" or not scaled[name][0].trains
        scaled[name] = tuple(
            dataclasses.replace(spec, init_runs=pairs.get(spec.seed, pairs[min(pairs)]), **({} if paper_settings else scaled_stage2))
            for spec in scaled[name])
    return scaled
