"""The non-contrastive paper's experiments (Farina & Pappadopulo, 2024), written with its own settings; a profile
scales them.

Sources: §3 (Barlow Twins Eq. 2, VICReg Eq. 3, the 8192-wide projector, [CLS], the augmentations), Appendix A (batch
256, 2 epochs, STS-B dev every 60 steps; Barlow Twins on a grid, VICReg with SMAC), Tables 1 and 6. The learning
rates, the loss coefficients and their domains were lost in extraction: the grids (``BT_LAMBDAS``, ``BT_LRS``,
``VICREG_DOMAIN``) are ours, and every table says so.

Two stages, so the grid depends on the records already there:
1. Scans (Table 1, Figure 1), per method and augmentation value (a cell): Barlow Twins' grid, VICReg's SMAC3 trials
   (``VICREG_TRIALS``), trial k + 1 proposed after trials 1..k as read from the run records.
2. Headline rows (Tables 4 and 6, Figure 4), once a method's scan is complete: BT and VICReg at their best dropout
   and shuffle cells, "BT (NLI)", and the SimCSE grid's ``unsup`` run. Their MTEB scores are derived records
   (:mod:`sentemb.runs.mteb_geometry_records`).

Cells: the small profile scans ``CORE_CELLS`` without ``--extended``, and its headline rows take their best trial
from ``SMALL_HEADLINE_CELLS`` only. SMAC's design and every profile's cells: README.md, "The runs".
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from papers.noncontrastive import smac_proposal
from sentemb.errors import SentembError
from sentemb.paper import get_paper
from sentemb.profiles import Profile, get_profile, with_chosen_lr
from sentemb.runs import store
from sentemb.selection import best_of, worst_if_nan
from sentemb.spec import RunSpec

METHODS = ("barlow_twins", "vicreg")
METHOD_LABEL = {"barlow_twins": "Barlow Twins", "vicreg": "VICReg"}
TABLE1_CELLS = (
    ("dropout", 0.05),
    ("dropout", 0.1),
    ("dropout", 0.2),
    ("eda", 0.1),
    ("eda", 0.2),
    ("shuffle", 0.05),
    ("shuffle", 0.1),
    ("shuffle", 0.2),
    ("shuffle", 0.3),
    ("shuffle", 0.5),
)
SMALL_HEADLINE_CELLS = (("dropout", 0.1), ("shuffle", 0.3))  # where the small headline rows take their best trial
# The small profile's scan without --extended: the shuffle cell (8 trials) and its 4 headline runs take about 30 min
# on 2 cores (150 s per run), half an hour the whole archive lacks under its 3-hour budget from scratch.
CORE_CELLS = (("dropout", 0.1),)
PAPER_PROJECTOR_WIDTH = 8192  # §3
# Keyed by profile name: each profile's own size (small: benchmarks/bench_noncontrastive_projector.py).
PROJECTOR_WIDTH = {"full": 8192, "small": 2048, "smoke": 128}
BT_LAMBDAS = (0.005, 0.02)
BT_LRS = (3e-5, 1e-4)
# Log-uniform. VICReg's image defaults are 25, 25 and 1 (the fixed covariance weight); Eq. 3's invariance term sums
# over the W projector dimensions where VICReg's reference code averages them, so its 25 is 25 / W (0.012 at
# W = 2048) here: the invariance domain reaches down to 0.01 to contain both readings. lr: around BT_LRS.
VICREG_DOMAIN = {"invariance_weight": (0.01, 50.0), "variance_weight": (1.0, 50.0), "lr": (1e-5, 2e-4)}
VICREG_COVARIANCE = 1.0
VICREG_TRIALS = {"full": 50, "small": 4, "smoke": 2}  # by profile name, as above; App. A.2: 50 SMAC jobs per value
# The rehearsal keeps the full profile's sizes but not its 50 trials a cell (150 runs, ~45 min on 2 cores): two trials
# exercise SMAC's path (the second proposed after the first, from its record)
REHEARSAL_VICREG_TRIALS = 2
SMAC_SEED = 0
NAN_COST = 100.0  # a trial that scored NaN: the cost of the worst possible score (Spearman -1, x 100)

HEADLINE_ROWS = ("simcse", "bt_dropout", "bt_shuffle", "vicreg_dropout", "vicreg_shuffle", "bt_nli")
HEADLINE_LABEL = {
    "simcse": "SimCSE",
    "bt_dropout": "Barlow Twins (dropout)",
    "bt_shuffle": "Barlow Twins (shuffle)",
    "vicreg_dropout": "VICReg (dropout)",
    "vicreg_shuffle": "VICReg (shuffle)",
    "bt_nli": "Barlow Twins (NLI)",
}


def _simcse() -> RunSpec:
    """Unsupervised SimCSE in its paper's terms, SimCSE's own row (through the registry): the SimCSE baseline, and
    what this paper's trials change."""
    return get_paper("simcse").paper_grid()["unsup"]


def _paper() -> RunSpec:
    """A trial's settings before its method, cell and learning rate. Appendix A: batch 256, 2 epochs (of wiki1m:
    2 x 10^6 / 256 = 7,813 steps), STS-B dev every 60 steps. The learning rate is scanned; 3e-5 is this grid's centre
    (SimCSE's for BERT-base), not a value of the paper."""
    return dataclasses.replace(
        _simcse(),
        pooler="cls_before_pooler",
        batch_size=256,
        steps=2 * 1_000_000 // 256,
        eval_every=60,
        final_eval="stsb_dev",
        analysis_splits=("dev",),
        notes="",
    )


def cell_name(augmentation: str, strength: float) -> str:
    """The cell in run names and spec notes ("eda 0.1"; a run's name puts "_" for the space)."""
    return f"{augmentation} {strength:g}"


def cell_label(augmentation: str, strength: float) -> str:
    """The cell as Table 1 prints it (and ``reported/table1.csv`` and ``claims.yaml`` name it): "EDA 0.1"."""
    return f"{'EDA' if augmentation == 'eda' else augmentation} {strength:g}"


def _params(augmentation: str, strength: float) -> dict:
    return (
        {"augmentation": "dropout", "strength": 0.0}
        if augmentation == "dropout"
        else {"augmentation": augmentation, "strength": strength}
    )


def trial_spec(
    profile: str, method: str, augmentation: str, strength: float, lr: float, seed: int | None = None, **coefficients
) -> RunSpec:
    """One scan trial on ``profile``: ``method`` with a cell's augmentation, a learning rate and loss coefficients."""
    paper = dataclasses.replace(
        _paper(),
        objective=method,
        lr=lr,
        dropout=strength if augmentation == "dropout" else None,
        objective_params={"projector_width": PAPER_PROJECTOR_WIDTH, **_params(augmentation, strength), **coefficients},
        notes=f"{METHOD_LABEL[method]}, {cell_name(augmentation, strength)}",
    )
    scaled = get_profile(profile).scale(paper, seed)
    return scaled.with_params(projector_width=PROJECTOR_WIDTH[get_profile(profile).sizes_of])


def nli_spec(profile: str, best_dropout_trial: RunSpec, seed: int) -> RunSpec:
    """BT on positive pairs (Table 6 "BT (NLI)"), with the best dropout trial's lambda and learning rate."""
    params = best_dropout_trial.objective_params
    paper = dataclasses.replace(
        _paper(),
        objective="barlow_twins_pairs",
        lr=best_dropout_trial.lr,
        train_data="nli_for_simcse",
        objective_params={
            "projector_width": PAPER_PROJECTOR_WIDTH,
            "off_diagonal_weight": params["off_diagonal_weight"],
        },
        notes="Barlow Twins on SNLI entailment pairs (the paper: NLI pairs)",
    )
    scaled = get_profile(profile)
    return scaled.scale(paper, seed).with_params(projector_width=PROJECTOR_WIDTH[scaled.sizes_of])


SMOKE_CELLS = SMALL_HEADLINE_CELLS + (("eda", 0.1),)  # enough to exercise every augmentation's path


def cells(profile: str, extended: bool) -> tuple[tuple[str, float], ...]:
    """The scanned cells: on a budgeted profile (small) the core ones unless ``extended``; on one that only exercises
    the paths (smoke) the headline ones and one EDA cell; every Table 1 cell on the full profile."""
    if get_profile(profile).exercises_only:
        return SMOKE_CELLS
    return TABLE1_CELLS if get_profile(profile).runs_all_rows(extended) else CORE_CELLS


def headline_cells(profile: str) -> tuple[tuple[str, float], ...]:
    """Where the headline rows take their best trial: ``SMALL_HEADLINE_CELLS`` on a budgeted profile (small, with or
    without ``--extended``), the scanned cells on smoke and full."""
    return SMALL_HEADLINE_CELLS if get_profile(profile).budgeted else cells(profile, extended=False)


def bt_trials(profile: str, cell: tuple[str, float]) -> list[RunSpec]:
    """The Barlow Twins grid of a cell: lambda x learning rate (smoke: the first learning rate only)."""
    lrs = BT_LRS[:1] if get_profile(profile).exercises_only else BT_LRS
    return [
        trial_spec(profile, "barlow_twins", *cell, lr=lr, off_diagonal_weight=lam) for lam in BT_LAMBDAS for lr in lrs
    ]


Lookup = Callable[[RunSpec], "dict | None"]


def best_dev(record: dict) -> float:
    """A trial's score: its best STS-B dev Spearman (the selected checkpoint's), x 100."""
    return 100 * record["training"]["best_stsb_dev"]


def _vicreg_spec(profile: str, cell: tuple[str, float], values: dict) -> RunSpec:
    return trial_spec(profile, "vicreg", *cell, covariance_weight=VICREG_COVARIANCE, **values)


def _vicreg_values(spec: dict) -> dict:
    params = spec["objective_params"]
    return {
        "invariance_weight": params["invariance_weight"],
        "variance_weight": params["variance_weight"],
        "lr": spec["lr"],
    }


def vicreg_trial_count(profile: str) -> int:
    """The SMAC trials of a VICReg cell on ``profile``: its sizes' (``VICREG_TRIALS``), the rehearsal's two."""
    profile = get_profile(profile)
    return REHEARSAL_VICREG_TRIALS if profile.reaches_every_facet else VICREG_TRIALS[profile.sizes_of]


def vicreg_history(profile: str, cell: tuple[str, float], records: list[dict]) -> list[dict]:
    """The cell's VICReg trials that have records, in the order they were run (at most the profile's count)."""
    trials, seed = [], _paper().seed
    for record in records:
        spec = record["spec"]
        if spec["objective"] != "vicreg" or spec["seed"] != seed or record["profile"] != profile:
            continue
        if _vicreg_spec(profile, cell, _vicreg_values(spec)).run_id == record["run_id"]:
            trials.append(record)
    trials.sort(key=lambda r: (r["provenance"].get("started_utc") or "", r["run_id"]))
    return trials[: vicreg_trial_count(profile)]


def vicreg_trials(profile: str, cell: tuple[str, float], records: list[dict]) -> tuple[list[RunSpec], bool]:
    """The SMAC trials of a VICReg cell so far, and whether the cell is complete.

    The records are the history: SMAC is told every trial of the cell that has a record (its configuration and
    cost, minus its score; a NaN score is the worst cost, ``NAN_COST``) and asked for the next one only, which is
    returned last, without a record, to be run. SMAC runs in a fresh interpreter with a fixed hash seed
    (:mod:`papers.noncontrastive.smac_proposal`), so every process proposes the same trials."""
    history = vicreg_history(profile, cell, records)
    specs = [RunSpec.from_dict(r["spec"]) for r in history]
    n = vicreg_trial_count(profile)
    if len(history) >= n:
        return specs, True
    told = [(_vicreg_values(r["spec"]), min(-worst_if_nan(best_dev(r)), NAN_COST)) for r in history]
    try:
        values = smac_proposal.propose(VICREG_DOMAIN, told, n, SMAC_SEED)
    except SentembError as exc:
        raise SentembError(f"VICReg {cell_name(*cell)}: {exc}") from exc
    return specs + [_vicreg_spec(profile, cell, values)], False


def scan(profile: str, extended: bool, records: list[dict]) -> dict[tuple[str, str, float], tuple[list[RunSpec], bool]]:
    """(method, augmentation, strength) -> (the cell's trials so far, complete?)."""
    have = {r["run_id"] for r in records}
    out = {}
    for cell in cells(profile, extended):
        trials = bt_trials(profile, cell)
        out[("barlow_twins", *cell)] = (trials, all(s.run_id in have for s in trials))
        out[("vicreg", *cell)] = vicreg_trials(profile, cell, records)
    return out


def best_trial(profile: str, scanned: dict, method: str, augmentation: str, lookup: Lookup) -> RunSpec | None:
    """The best trial (by best STS-B dev) of ``method`` over the :func:`headline_cells` of ``augmentation`` (small:
    so the extended scan never changes the headline rows); None while one of those cells is unscanned (small:
    shuffle without ``--extended``) or incomplete."""
    candidates = []
    for cell in headline_cells(profile):
        if cell[0] != augmentation:
            continue
        if (method, *cell) not in scanned:
            return None
        trials, complete = scanned[(method, *cell)]
        if not complete:
            return None
        candidates += trials
    return best_of(candidates, lambda s: best_dev(lookup(s))) if candidates else None  # NaN: worst


def headline(profile: str, scanned: dict, lookup: Lookup) -> dict[str, tuple[RunSpec, ...]]:
    """The headline rows whose scan is complete, one spec per seed (seed 42: the best trial itself)."""
    seeds = get_profile(profile).seeds(headline=True)
    rows = {"simcse": tuple(get_profile(profile).scale(_simcse(), seed) for seed in seeds)}
    rows = with_chosen_lr(rows, "noncontrastive", profile, borrowed={"simcse": "simcse/unsup"})  # SimCSE's run
    for method, prefix in (("barlow_twins", "bt"), ("vicreg", "vicreg")):
        for augmentation in ("dropout", "shuffle"):
            best = best_trial(profile, scanned, method, augmentation, lookup)
            if best is not None:
                rows[f"{prefix}_{augmentation}"] = tuple(dataclasses.replace(best, seed=seed) for seed in seeds)
    bt_best = best_trial(profile, scanned, "barlow_twins", "dropout", lookup)
    if bt_best is not None:
        rows["bt_nli"] = tuple(nli_spec(profile, bt_best, seed) for seed in seeds)
    return rows


def grid(
    profile: str | Profile, extended: bool = True, records: list[dict] | None = None
) -> dict[str, tuple[RunSpec, ...]]:
    """Every run known so far on ``profile``, by name: the scan trials (``bt/<cell>/<k>``, ``vicreg/<cell>/<k>``)
    and the headline rows whose scans are complete, given the run records there are (default: the store's). Run
    the missing ones and call again: SMAC proposes the next VICReg trial of each cell and the headline rows appear
    (``python -m sentemb run`` repeats until nothing new appears)."""
    profile = get_profile(profile).name
    records = store.all_records(profile) if records is None else records
    by_id = {r["run_id"]: r for r in records}
    lookup: Lookup = lambda spec: by_id.get(spec.run_id)  # noqa: E731
    scanned = scan(profile, extended, records)
    runs: dict[str, tuple[RunSpec, ...]] = {}
    for (method, augmentation, strength), (trials, _) in scanned.items():
        prefix = "bt" if method == "barlow_twins" else "vicreg"
        for k, spec in enumerate(trials):
            runs[f"{prefix}/{cell_name(augmentation, strength).replace(' ', '_')}/{k}"] = (spec,)
    runs.update(headline(profile, scanned, lookup))
    return runs
