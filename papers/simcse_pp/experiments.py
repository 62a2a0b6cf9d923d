"""The SimCSE++ experiment grid, written with the paper's own settings; a profile scales it.

Sources: SimCSE++ §5.1 (BERT-base: lr 3e-5, batch 64, max length 32, one epoch of wiki1m, STS-B dev every 125
steps; tau = 0.05, m = 0.9, tau_DCL = 5, lambda = 0.1), §3.1 (+Noise, -Noise), §4.2 and Table 2 (Barlow Twins with
Gaussian padding rows), Table 4 (DCL alone), Table 5 (the sweeps of m, lambda and tau_DCL on STS-B dev). The
official run scripts (notes §1.2) add fp16 and [CLS] + MLP in training only, as SimCSE.

Runs: every run is the ``simcse_pp`` objective (``sentemb/objectives/simcse_pp.py``) except SimCSE itself, which is
the SimCSE grid's ``unsup`` run: the same spec, so the same run id and one shared record. The run names and the
tables that use them: README.md, "The runs".

Seeds: the Table 3 rows (``HEADLINE``) run with 3 seeds on small, 5 on full; the others with seed 42. The small
profile's 25-minute budget (2 CPU cores, SimCSE's shared runs excluded) holds the ``CORE`` rows (Table 3 and the
analyses built on them); the probes of Tables 1, 2, 4 (DCL alone) and 5 need ``--extended`` there (about 55 more
minutes); smoke and full always run them (smoke with one value off the centre of each Table 5 sweep).
"""

from __future__ import annotations

import dataclasses

from sentemb.grid_reach import core_rows
from sentemb.models.backbone import RAW_BERT, RAW_WP8K
from sentemb.paper import get_paper
from sentemb.profiles import Profile, get_profile, scale_grid, tuned_grid
from sentemb.spec import RunSpec

HEADLINE = ("simcse", "off_dropout", "dcl", "simcse_pp")
CORE = HEADLINE  # the rows the small profile runs without --extended (their learning rates probed where a profile asks)

M, LAMBDA, TAU_DCL = 0.9, 0.1, 5.0  # §5.1
TABLE5 = {
    "m": (0.5, 0.8, 0.9, 1.0, 1.1, 1.2),
    "lambda": (0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
    "tau_dcl": (1.0, 2.0, 5.0, 10.0, 20.0, 50.0),
}
TABLE5_PARAM = {"m": "m", "lambda": "dcl_weight", "tau_dcl": "dcl_temperature"}
CENTRE = {"m": M, "lambda": LAMBDA, "tau_dcl": TAU_DCL}
TABLE2_PADDING = (100, 300, 704)  # M for BERT-base (D = 768), batch N = 64
PAPER_DIM = 768
# K of "-Noise" per profile name (10 in §3.1): a -Noise step costs 2K + 2 encoder passes, so each profile sets its own
NOISE_SAMPLES = {"full": 10, "small": 3, "smoke": 2}
BACKBONE_DIM = {"bert-base-uncased": 768, "all-MiniLM-L6-v2": 384, "tiny-random-bert": 64, RAW_BERT: 256, RAW_WP8K: 256}

_DEV_ONLY = dict(final_eval="stsb_dev", analysis_splits=("dev",))


def _simcse() -> RunSpec:
    """Unsupervised SimCSE in its paper's terms, SimCSE's own row (through the registry): Table 3's baseline, and
    the settings every SimCSE++ row starts from."""
    return get_paper("simcse").paper_grid()["unsup"]


def _with(spec: RunSpec, notes: str, **params) -> RunSpec:
    return dataclasses.replace(spec, objective_params={**spec.objective_params, **params}, notes=notes)


SIMCSE_PP_PARAMS = dict(
    negatives="off_dropout", m=M, trade_off="paper", dcl_weight=LAMBDA, dcl_temperature=TAU_DCL, dcl_variant="paper"
)


def padding_for(paper_m: int, dim: int, batch: int = 64) -> int:
    """M that keeps Table 2's ratio (N + M) / D when the embedding has ``dim`` dimensions instead of 768."""
    return max(0, round((batch + paper_m) * dim / PAPER_DIM) - batch)


def paper_grid(dim: int = PAPER_DIM, noise_samples: int = 10) -> dict[str, RunSpec]:
    """The grid with the paper's settings; ``dim`` (the backbone's width) scales Table 2's padding, and
    ``noise_samples`` is K of Table 1's '-Noise' rows."""
    simcse = _simcse()
    base = dataclasses.replace(
        simcse, objective="simcse_pp", objective_params={"temperature": 0.05}, notes="SimCSE++ objective"
    )

    def _pp(notes: str, spec: RunSpec = base, **params) -> RunSpec:
        return _with(spec, notes, **params)

    runs = {
        "simcse": simcse,
        "off_dropout": _pp("Table 3 +Off-Info: off-dropout negatives, m = 0.9 (Eq. 3)", negatives="off_dropout", m=M),
        "dcl": _pp("Table 3 +DCL: lambda 0.1, tau_DCL 5 (Eq. 5-6)", dcl_weight=LAMBDA, dcl_temperature=TAU_DCL),
        "simcse_pp": _pp("Table 3 SimCSE++: off-dropout + DCL (§5.1)", **SIMCSE_PP_PARAMS),
        "simcse_pp_official": _pp(
            "SimCSE++ in the 2022-11-10 code's form: pos_ratio 0.9, BatchNorm DCL /N",
            **{**SIMCSE_PP_PARAMS, "trade_off": "official", "dcl_variant": "official"},
        ),
        "pos_plus": _pp("Table 1 Pos. +Noise", positive_noise="plus"),
        "pos_minus": _pp(
            f"Table 1 Pos. -Noise (K = {noise_samples})", positive_noise="minus", noise_samples=noise_samples
        ),
        "neg_plus": _pp("Table 1 Neg. +Noise", negative_noise="plus"),
        "neg_minus": _pp(
            f"Table 1 Neg. -Noise (K = {noise_samples})", negative_noise="minus", noise_samples=noise_samples
        ),
        "bt": _pp("Table 2 +BarlowTwins: InfoNCE + l_BT (weight 1, lambda_offdiag 0.0051)", bt_weight=1.0),
    }
    for paper_m in TABLE2_PADDING:
        padding = padding_for(paper_m, dim)
        runs[f"bt_pad_{paper_m}"] = _pp(
            f"Table 2 +{paper_m} artificial z (M = {padding} at D = {dim})", bt_weight=1.0, bt_padding=padding
        )
    # tau_DCL = 0.05 is a value of the code's form (s / N): in Eq. 5's form the logits are (N - 1) = 63 times larger
    # and DCL alone diverged to NaN before its first evaluation (small profile), so these rows use the code's form.
    dcl_only = dict(info_weight=0.0, dcl_weight=1.0, dcl_temperature=0.05, dcl_variant="official")
    mean_pooled = dataclasses.replace(base, pooler="avg")
    runs["dcl_only_wiki"] = _pp("Table 4 +DCL(wiki, tau_DCL=0.05): DCL alone, mean pooling", mean_pooled, **dcl_only)
    runs["dcl_only_nli"] = dataclasses.replace(
        _pp("Table 4 +DCL(NLI, tau_DCL=0.05): DCL alone on NLI sentences without labels", mean_pooled, **dcl_only),
        train_data="nli_for_simcse",
    )
    centre = _pp("Table 5", dataclasses.replace(base, **_DEV_ONLY), **SIMCSE_PP_PARAMS)
    for group, values in TABLE5.items():
        for value in values:
            if value != CENTRE[group]:  # the centre is the SimCSE++ row itself
                runs[f"{group}_{value:g}"] = _pp(
                    f"Table 5, {group} = {value:g}", centre, **{TABLE5_PARAM[group]: value}
                )
    return runs


SMOKE_SKIPS = {
    f"{group}_{value:g}" for group, values in TABLE5.items() for value in [v for v in values if v != CENTRE[group]][1:]
}


def table5_run(group: str, value: float) -> str:
    return "simcse_pp" if value == CENTRE[group] else f"{group}_{value:g}"


def grid(profile: str | Profile, extended: bool = True) -> dict[str, tuple[RunSpec, ...]]:
    """Each run name's specs on ``profile``, one per seed. A budgeted profile (small) keeps the ``CORE`` rows only
    unless ``extended``; smoke and full always run every row (smoke one value off the centre of each sweep)."""
    profile = get_profile(profile)
    runs = paper_grid(BACKBONE_DIM[profile.backbone or _simcse().backbone], NOISE_SAMPLES[profile.sizes_of])
    if not profile.runs_all_rows(extended):
        runs = core_rows(runs, CORE, profile)
    if profile.exercises_only:  # one value off the centre per sweep is enough to exercise Table 5's path
        runs = {name: spec for name, spec in runs.items() if name not in SMOKE_SKIPS}
    rows = scale_grid(runs, profile.name, HEADLINE)
    return tuned_grid(rows, CORE, "simcse_pp", profile, borrowed={"simcse": "simcse/unsup"})  # SimCSE's own run
