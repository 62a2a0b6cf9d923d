"""The TNCSE experiment grid, written with the paper's own settings; a profile scales it.

Sources: the paper (Eq. 4-8; Figure 4: "training set is uniformly Wiki1M and unlabelled SICKR"), its supplement
(Table I-1, second stage: BERT-base batch 64, lr 1e-6; seed 42) and the official ``train_dual.py`` defaults (notes
§1.4: dropout 0.00025 in both encoders, max length 64, AdamW with weight decay 0.01, no scheduler, no clipping, no
fp16, STS-B dev every 100 steps, best checkpoint kept; [CLS] of encoder I + [CLS] of encoder II, SentEval "all").

Stage 1 (SimCSE on Wiki1M + SICK-R plus round-trip translations) needs a translation model, which is not offline.
Substitute: the SimCSE grid's ``unsup`` runs, reused by run id (``init_runs``), not retrained. TNCSE seed s starts
from its own pair of SimCSE unsup runs, seeds (s, s + 100): disjoint pairs, so the TNCSE seeds (and every paired
difference built on them) are independent replicates; the ``simcse`` row holds both encoders of every pair
(``Profile.disjoint_stage1``). The committed small profile predates this and keeps a ring, (s, next headline seed):
its seeds share stage-1 runs, so the claims that pair on them get no test (``sentemb.report.pairing``).

Runs: ``simcse``, ``ensemble``, ``tncse``, ``tncse_wiki``, ``loss_<terms>``, ``simcse_sickr``, ``tncse_single``,
``simcse_matched`` (``tncse_single`` with ``tn_weight=0``: the SimCSE that differs from it by L_TN only) and
``tncse_lr_paper``. The small profile runs the ``CORE`` rows (Table 1, Figures 4, 6), the others are ``--extended``.
The run table and Table 5's two SimCSE rows: README.md, "The runs" and "Deviations".

Eq. 6 is used as printed (no /2, ``halve_norm_term=False``) with the official clamp for a negative [CLS] cosine
(``clamp_negative_cosine=True``). The objectives: ``sentemb/objectives/tncse.py`` (loss terms in
``objectives/tensor_norm.py``).
"""

from __future__ import annotations

import dataclasses

from sentemb.grid_reach import core_rows
from sentemb.paper import get_paper
from sentemb.profiles import Profile, get_profile, scale_grid, tuned_grid
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
TNCSE_PARAMS = {
    "temperature": 0.05,
    "nce": True,
    "icnce": True,
    "ictn": True,
    "halve_norm_term": False,
    "clamp_negative_cosine": True,
}
TABLE4 = {  # Table 4 row -> which of Eq. 8's terms are on (the full loss is the ``tncse`` row)
    "L_NCE": ("nce",),
    "L_ICNCE": ("icnce",),
    "L_ICTN": ("ictn",),
    "L_NCE+L_ICNCE": ("nce", "icnce"),
    "L_NCE+L_ICTN": ("nce", "ictn"),
    "L_ICNCE+L_ICTN": ("icnce", "ictn"),
}
#: The rows every seed of the profile runs: each is a cell of a claim (Table 4's six rows are all cells of
#: ``full-loss-best``, an argmax that one-seed cells leave inconclusive); the lr probe runs one seed.
HEADLINE = (
    "simcse",
    "ensemble",
    "tncse",
    "tncse_wiki",
    "simcse_sickr",
    "tncse_single",
    "simcse_matched",
    *(f"loss_{'_'.join(t)}" for t in TABLE4.values()),
)
STAGE2 = ("ensemble", "tncse", "tncse_wiki", "tncse_lr_paper", *(f"loss_{'_'.join(t)}" for t in TABLE4.values()))

_TNCSE = RunSpec(
    profile="full",
    backbone=PAPER_BACKBONE,
    pooler="cls_before_pooler",
    objective="tncse",
    objective_params=TNCSE_PARAMS,
    dropout=0.00025,
    train_data=TRAIN_DATA,
    steps=STEPS,
    batch_size=64,
    lr=PAPER_LR,
    max_len=64,
    weight_decay=0.01,
    lr_schedule="constant",
    grad_clip=0.0,
    eval_every=100,
    precision="fp32",
    seed=42,
    notes="TNCSE stage 2 (Eq. 8), train_dual.py defaults",
)


def table4_run(terms: tuple[str, ...]) -> str:
    return "tncse" if set(terms) == {"nce", "icnce", "ictn"} else f"loss_{'_'.join(terms)}"


def _simcse_grid(profile: str | Profile | None = None) -> dict:
    """SimCSE's grid through the registry: in its paper's terms (``profile`` None: one spec a row), or its rows on
    ``profile`` (one spec a seed). TNCSE's stage 1 is SimCSE's own unsupervised run, one run id for both papers."""
    simcse = get_paper("simcse")
    return simcse.paper_grid() if profile is None else simcse.grid(profile, extended=True)


def paper_grid() -> dict[str, RunSpec]:
    simcse = _simcse_grid()["unsup"]
    runs = {
        "simcse": simcse,
        "ensemble": RunSpec(
            profile="full",
            backbone=PAPER_BACKBONE,
            pooler="cls_before_pooler",
            notes="stage-1 pair summed, untrained (Table 3/4 None)",
        ),
        "tncse": _TNCSE,
        "tncse_wiki": dataclasses.replace(_TNCSE, train_data="wiki1m_for_simcse", notes="Table 6: Wiki1M only"),
    }
    for row, terms in TABLE4.items():
        params = {**TNCSE_PARAMS, **{t: t in terms for t in ("nce", "icnce", "ictn")}}
        runs[table4_run(terms)] = dataclasses.replace(_TNCSE, objective_params=params, notes=f"Table 4 {row}")
    runs["simcse_sickr"] = dataclasses.replace(
        simcse, train_data=TRAIN_DATA, notes="Tables 5-6: SimCSE on wiki + SICK-R"
    )
    runs["tncse_single"] = dataclasses.replace(
        simcse,
        objective="tncse_single",
        train_data=TRAIN_DATA,
        objective_params={k: TNCSE_PARAMS[k] for k in ("temperature", "halve_norm_term", "clamp_negative_cosine")},
        notes="Table 5 TNCSE-Single: InfoNCE + L_TN, one encoder, SimCSE's settings",
    )
    runs["simcse_matched"] = dataclasses.replace(
        runs["tncse_single"],
        objective_params={**runs["tncse_single"].objective_params, "tn_weight": 0.0},
        notes="Table 5 SimCSE matched to TNCSE-Single: its objective without L_TN (no MLP, symmetric 2B-row InfoNCE)",
    )
    return runs


SECOND_ENCODER_SEED = 100  # TNCSE seed s: encoder II is SimCSE unsup at seed s + 100 (disjoint pairs)


def stage1_runs(profile: str) -> tuple[RunSpec, ...]:
    """The SimCSE unsup runs TNCSE starts from: the SimCSE grid's own (encoder I of each seed), then on a profile with
    ``disjoint_stage1`` the same spec at seed s + 100 (encoder II)."""
    unsup = _simcse_grid(profile)["unsup"]
    if not get_profile(profile).disjoint_stage1:
        return unsup
    return unsup + tuple(dataclasses.replace(spec, seed=spec.seed + SECOND_ENCODER_SEED) for spec in unsup)


def stage1_pairs(profile: str) -> dict[int, tuple[str, str]]:
    """Seed -> (run id of encoder I, run id of encoder II): SimCSE ``unsup`` seeds (s, s + 100), or on a profile
    without ``disjoint_stage1`` the ring (s, the next headline seed)."""
    unsup = _simcse_grid(profile)["unsup"]
    ids = [spec.run_id for spec in unsup]
    if get_profile(profile).disjoint_stage1:
        second = {spec.seed - SECOND_ENCODER_SEED: spec.run_id for spec in stage1_runs(profile)[len(unsup) :]}
        return {spec.seed: (spec.run_id, second[spec.seed]) for spec in unsup}
    return {spec.seed: (ids[i], ids[(i + 1) % len(ids)]) for i, spec in enumerate(unsup)}


CORE = ("simcse", "ensemble", "tncse")  # a budgeted profile's rows without --extended (Table 1, Figures 4 and 6)


def grid(profile: str | Profile, extended: bool = True) -> dict[str, tuple[RunSpec, ...]]:
    """Each run name's specs on ``profile``, one per seed, with the stage-1 pair filled in; on profiles of short
    training (``Profile.short_training``: smoke, small, raw) the stage-2 rows train at ``SMALL_LR`` and
    ``SMALL_MAX_LEN`` (except the lr probe, on budgeted ones only (small, raw), which keeps the paper's lr and
    length); the full and rehearsal profiles keep the paper's. A budgeted profile without
    ``extended`` keeps the ``CORE`` rows only; the others always run every row."""
    profile = get_profile(profile)
    runs = paper_grid()
    if profile.budgeted and profile.short_training:  # the evidence for SMALL_LR at a budget's cut steps (60)
        runs["tncse_lr_paper"] = dataclasses.replace(_TNCSE, notes="lr probe: the paper's lr 1e-6 in 60 steps")
    if not profile.runs_all_rows(extended):
        runs = core_rows(runs, CORE, profile)
    scaled = scale_grid(runs, profile.name, [h for h in HEADLINE if h in runs])
    scaled["simcse"] = stage1_runs(profile.name)  # every stage-1 encoder, each alone (Table 1's SimCSE row)
    pairs = stage1_pairs(profile.name)
    scaled_stage2 = {"lr": SMALL_LR, "max_len": SMALL_MAX_LEN} if profile.short_training else {}
    for name in STAGE2:
        if name not in scaled:
            continue
        stage2 = {} if name == "tncse_lr_paper" or not scaled[name][0].trains else scaled_stage2
        scaled[name] = tuple(
            dataclasses.replace(spec, init_runs=pairs.get(spec.seed, pairs[min(pairs)]), **stage2)
            for spec in scaled[name]
        )
    return tuned_grid(scaled, ("tncse",), "tncse", profile)
