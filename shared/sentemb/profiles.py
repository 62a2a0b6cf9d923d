"""Profiles: how the papers' own hyperparameters are scaled to a machine.

Each paper's grid is written once with the paper's settings; :meth:`Profile.scale` maps such a spec to a profile and
:meth:`Profile.seeds` says which seeds a row runs (headline rows several, others one). What differs between profiles
is an attribute of :class:`Profile` (steps, batch cap, backbone, precision, data, budget), never a name compared at
the call site.

| profile | backbone | data | training | seeds (headline rows) |
|---|---|---|---|---|
| smoke | tiny random BERT (MiniLM's tokenizer) | the mirror, or generated rows | 6 steps, batch 16, fp32 | 2 |
| small | all-MiniLM-L6-v2 | the mirror's real data (substitute corpora) | 60 steps, batch <= 64, fp32 | 3 |
| raw | the archive's own MLM-only BERT (4 x 256) | as small | 20 steps (chosen on STS-B dev), batch <= 64, fp32 | 3 |
| raw-wp8k | the archive's BERT that learnt context (4 x 256, 164 M tokens) | as small | 100 steps (chosen on dev) | 3 |
| full | the paper's backbone (hub) | the paper's data (downloaded) | the paper's settings (fp16 on a GPU) | 5 |

Why the small profile has this size, and why fp32: docs/reference.md, "Profiles: why this size". The smoke profile
evaluates on seeded samples (``eval_pairs``, ``transfer_examples``: :mod:`sentemb.evaluate.subsets`) so that
``./run_all.sh --profile smoke`` runs every paper's notebook and the site in under 10 minutes on 2 cores from an empty
store (``benchmarks/bench_smoke_from_empty.py``); the other profiles evaluate on every pair and example.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Iterable

from sentemb import settings
from sentemb.errors import ConfigError
from sentemb.models.backbone import MINILM, RAW_BERT, RAW_WP8K, TINY_RANDOM_BERT
from sentemb.spec import SAMPLE_FIELDS, RunSpec

# The mirror's substitutes for the papers' training files (see ../shared/datasets/training/README.md).
MIRROR_CORPORA = {
    "wiki1m_for_simcse": "wiki_sentences_combined",
    "nli_for_simcse": "snli_devtest_for_simcse",
    "openwebtext": "wikitext2_articles",
}


def mirror_corpus(name: str | None) -> str | None:
    """The mirror's substitute for a paper's training corpus (a ``+sickr`` suffix carries over)."""
    base, suffix = (name[: -len("+sickr")], "+sickr") if name and name.endswith("+sickr") else (name, "")
    return MIRROR_CORPORA[base] + suffix if base in MIRROR_CORPORA else name


@dataclass(frozen=True)
class JobResources:
    """What one run asks a cluster for (``--launcher slurm``, :mod:`sentemb.launch`); the CLI's options override it."""

    gpus: int
    cpus: int
    mem_gb: int
    timeout_min: int  # a job that runs out of it is requeued and resumes from its last state (sentemb.launch)
    partition: str | None = None  # None: the cluster's default


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    steps: int | None  # None: the paper's
    max_batch: int | None
    eval_every: int | None
    analysis_splits: tuple[str, ...]
    backbone: str | None  # None: the paper's
    precision: str | None  # training precision; None: the paper's
    headline_seeds: int  # seeds of a grid's headline rows; other rows run SEEDS[0] only
    job: JobResources  # one run as a cluster job
    budgeted: bool = False  # rows (and derived analyses) outside the profile's time budget need --extended
    exercises_only: bool = False  # costly derived analyses run on one model, to exercise the path
    committed: bool = False  # its outputs are the repository's committed ones (notebooks/, the READMEs' blocks)
    paper_data: bool = False  # trains on the paper's data (downloaded), not the mirror's substitutes
    generates_data: bool = False  # without a mirror (SENTEMB_DATA unset) it trains and evaluates on generated rows
    caveat: str | None = None  # what a model card of one of its runs must say about its numbers
    sizes: str = ""  # whose per-profile sizes a paper uses (batch grids, widths, trials; keyed by name); "": its own
    backbone_label: str = ""  # how tables and captions name the backbone ("": the paper's own)
    backbone_kind: str = ""  # what that backbone is, for captions ("already contrastively trained", "MLM only")
    compare_with: str = ""  # a profile whose claims' verdicts the overview sets beside this one's (other backbone)
    lr_multiples: tuple[float, ...] = ()  # one-seed learning-rate probes of each paper's tuned rows (lr_probes)
    # "<paper>/<row>" -> the multiple of the row's learning rate its probes chose on STS-B dev (lr_probe.csv's
    # ``chosen``; applied by with_chosen_lr after the probes are made, so a chosen probe is the row's seed-42 run)
    lr_chosen: tuple[tuple[str, float], ...] = ()
    steps_curve: int = 0  # steps of the STS-B dev curves that choose this profile's steps (SimCSE's grid); 0: none
    # poolers besides the curve row's own whose steps curves are made too: the pooler then joins the steps and the
    # learning rate among the choices made on STS-B dev (docs/raw-backbone.md, the rule of 2026-12-02)
    curve_poolers: tuple[str, ...] = ()
    disjoint_stage1: bool = True  # TNCSE seed s starts from its own SimCSE pair (s, s + 100), not a shared ring
    # trains far fewer steps than the papers, on a substitute backbone: a paper may then use the hyperparameters it
    # chose for such a budget (TNCSE's stage-2 SMALL_LR and SMALL_MAX_LEN, and its probe of the paper's rate)
    short_training: bool = False
    # Evaluations on a seeded sample (sentemb.evaluate.subsets), written into every spec only when set: at most this
    # many pairs of each STS subset or split (SentEval's STS tasks, the STS-B dev evaluations that select a checkpoint,
    # the STS-B analyses, MTEB's STS tasks), and examples of each split of a transfer task. None: all of them.
    eval_pairs: int | None = None
    transfer_examples: int | None = None
    # torch CPU threads of `sentemb run` on this profile (shared out among side-by-side runs) and of its notebooks'
    # kernels, unless --threads or OMP_NUM_THREADS says otherwise; None: torch's choice (every core)
    torch_threads: int | None = None
    reaches_every_facet: bool = False  # its core rows gain a row per facet value only others reach (grid_reach)
    jobs: int = 1  # runs of a grid pass side by side (`sentemb run --jobs`, ./run_all.sh) unless --jobs says otherwise

    def substitutes(self) -> str:
        """What a caption says this profile substituted for the papers' settings (on the papers' own: that it is)."""
        if not self.backbone_label:
            return "the papers' own backbones, data and settings"
        data = "the papers' data" if self.paper_data else "the mirror's data"
        return (
            f"backbone {self.backbone_label} ({self.backbone_kind}) for BERT/RoBERTa; {self.steps} steps of batch "
            f"{self.max_batch} on {data}; {self.headline_seeds} seeds" + self.evaluation_sample()
        )

    def evaluation_sample(self) -> str:
        """What a caption adds when this profile evaluates on samples ("" when it evaluates on every pair)."""
        sizes = [
            f"{size} {what}"
            for size, what in (
                (self.eval_pairs, "pairs of each STS subset or split"),
                (self.transfer_examples, "examples of each transfer split"),
            )
            if size is not None
        ]
        return f"; evaluated on seeded samples of at most {' and '.join(sizes)}" if sizes else ""

    @property
    def sizes_of(self) -> str:
        """The profile name under which papers key this profile's own sizes (A.1 batches, widths, trials)."""
        return self.sizes or self.name

    @property
    def transfer_mode(self) -> str:
        """SentEval's parameter set for the transfer tasks: the paper's ("test") on its data, else "fasttest"."""
        return "test" if self.paper_data else "fasttest"

    def runs_all_rows(self, extended: bool) -> bool:
        """Whether the rows (and analyses) kept outside the budget run: always, unless budgeted without --extended."""
        return extended or not self.budgeted

    def threads_to_set(self, chosen: int | None = None) -> int | None:
        """The torch CPU threads a process on this profile sets: its ``torch_threads``, unless ``chosen``
        (``--threads``) or ``OMP_NUM_THREADS`` already chose them, or the profile leaves them to torch (None: set
        nothing). The command line sets them in its process, a notebook's kernel through ``OMP_NUM_THREADS``."""
        if self.torch_threads is None or chosen or os.environ.get("OMP_NUM_THREADS", "").strip():
            return None
        return self.torch_threads

    def seeds(self, headline: bool) -> tuple[int, ...]:
        return SEEDS[: self.headline_seeds] if headline else SEEDS[:1]

    def uses_synthetic_data(self) -> bool:
        return self.generates_data and settings.data_root() is None

    def scale(self, paper_spec: RunSpec, seed: int | None = None) -> RunSpec:
        """``paper_spec`` on this profile (with ``seed`` instead of the paper's, when given)."""
        changes: dict = {"profile": self.name}
        if seed is not None:
            changes["seed"] = seed
        if paper_spec.final_eval == "sts":  # runs scored on STS-B dev only are analysed on STS-B dev
            changes["analysis_splits"] = self.analysis_splits
        if self.backbone is not None:
            changes["backbone"] = self.backbone
        if paper_spec.trains:
            if self.steps is not None:
                changes["steps"] = min(self.steps, paper_spec.steps)
                if paper_spec.warmup_steps:  # warm-up (or a slanted triangle's cut) keeps its share of the steps
                    changes["warmup_steps"] = max(
                        1, round(paper_spec.warmup_steps * changes["steps"] / paper_spec.steps)
                    )
            if self.max_batch is not None:
                changes["batch_size"] = min(self.max_batch, paper_spec.batch_size)
            if self.eval_every is not None:  # evaluations rescaled: the trajectory is sampled at them too
                changes["eval_every"] = self.eval_every
                changes["trajectory_every"] = None
            if self.precision is not None:
                changes["precision"] = self.precision
            if not self.paper_data:
                changes["train_data"] = mirror_corpus(paper_spec.train_data)
        changes["synthetic_data"] = self.uses_synthetic_data()
        changes.update(self.sample_sizes())
        return dataclasses.replace(paper_spec, **changes)

    def sample_sizes(self) -> dict[str, int]:
        """The spec fields of this profile's evaluation samples that are set (none on a profile that evaluates every
        pair, so that its specs, and run ids, are those of a spec without the fields)."""
        return {name: getattr(self, name) for name in SAMPLE_FIELDS if getattr(self, name) is not None}


SEEDS = (42, 43, 44, 45, 46)  # 42: the official code's (HF Trainer's) default
SMALL_STEPS = 60
# The raw profile's steps, chosen on STS-B dev by docs/raw-backbone.md's rule: the smallest step at which the best
# learning rate's 300-step curve of unsupervised SimCSE is within 0.5 points of its maximum (x10: 59.19 at step 20;
# results/simcse/raw/steps_curve.csv, runs edc0e3b5e79dcf32, b010c80073222f99, 7141c646f22fada5), inside the budget.
RAW_STEPS = 20
RAW_WP8K_STEPS = 100  # the raw-wp8k profile's, chosen the same way (its profile below says how)
SMALL_EVAL_EVERY = 20
# The smoke profile's evaluation samples (sentemb.evaluate.subsets): a run's evaluations in about a second.
SMOKE_EVAL_PAIRS = 100
SMOKE_TRANSFER_EXAMPLES = 500

SMALL = Profile(
    "small",
    f"all-MiniLM-L6-v2 on the mirror's real data, {SMALL_STEPS} steps, fp32, "
    "3 seeds for headline rows (CPU, <= 30 min per paper)",
    steps=SMALL_STEPS,
    max_batch=64,
    eval_every=SMALL_EVAL_EVERY,
    analysis_splits=("dev", "test"),
    backbone=MINILM,
    precision="fp32",
    headline_seeds=3,
    job=JobResources(gpus=0, cpus=2, mem_gb=16, timeout_min=120),
    budgeted=True,
    committed=True,
    short_training=True,
    backbone_label=MINILM,
    backbone_kind="already contrastively trained",
    disjoint_stage1=False,  # its committed TNCSE runs predate the disjoint pairs (their paired claims get no test)
    caveat=(
        "The small profile fine-tunes all-MiniLM-L6-v2, an encoder that is already contrastively "
        "trained, for a few dozen steps on 2 CPU cores: its numbers show the directions of the "
        "paper's effects, not the paper's values."
    ),
)

RAW = dataclasses.replace(  # the small profile's settings on the raw backbone
    SMALL,
    name="raw",
    description=f"the small profile on the archive's own MLM-only BERT ({RAW_BERT}, 4 x 256, never trained on a "
    "sentence objective): the papers' starting point, at a far smaller scale",
    steps=RAW_STEPS,
    backbone=RAW_BERT,
    committed=False,
    caveat=(
        f"The raw profile fine-tunes {RAW_BERT}, a 4-layer BERT this archive pretrained with masked language "
        "modelling on about 3.5 million tokens, for 20 steps (chosen on STS-B dev) on 2 CPU cores: its numbers show "
        "the directions of the paper's effects from an MLM-only encoder, far below the paper's values."
    ),
    sizes="small",
    backbone_label=RAW_BERT,
    backbone_kind="MLM only",
    compare_with="small",
    lr_multiples=(3.0, 10.0),
    # chosen on STS-B dev by each row's probes at 20 steps (results/<paper>/raw/lr_probe.csv; seed 42, best dev x 100:
    # unsup 57.01 / 57.96 / 58.69 at x1 / x3 / x10, sup 59.54 / 59.62 / 59.97, off-dropout 57.08 / 57.48 / 57.13,
    # DCL 57.85 / 58.63 / 57.73, SimCSE++ 57.87 / 58.64 / 57.73, DeCLUTR 61.78 / 62.62 / 61.64); TNCSE's stage 2,
    # probed from the chosen stage-1 pair (SimCSE unsup. at x10), keeps its rate (58.12 / 57.90 / 58.00)
    lr_chosen=(
        ("simcse/unsup", 10.0),
        ("simcse/sup", 10.0),
        ("simcse_pp/off_dropout", 3.0),
        ("simcse_pp/dcl", 3.0),
        ("simcse_pp/simcse_pp", 3.0),
        ("declutr/declutr", 3.0),
    ),
    steps_curve=300,
    disjoint_stage1=True,
)

# The experiment again on the backbone that learnt to use context (docs/raw-backbone.md, "The rule for the next
# experiment", fixed on 2026-12-02 before any run on it): its steps, learning rates and pooler chosen on STS-B dev.
RAW_WP8K_PROFILE = dataclasses.replace(
    RAW,
    name="raw-wp8k",
    description=f"the small profile on the archive's BERT that learnt to use context ({RAW_WP8K}, 4 x 256, 164 M "
    "tokens of masked language modelling, never trained on a sentence objective)",
    backbone=RAW_WP8K,
    caveat=(
        f"The raw-wp8k profile fine-tunes {RAW_WP8K}, a 4-layer BERT this archive pretrained with masked language "
        "modelling on 164 million tokens (41 passes over 4 million), for a few hundred steps at most (chosen on "
        "STS-B dev) on 2 CPU cores: its numbers show the directions of the paper's effects from an MLM-only "
        "encoder, far below the paper's values."
    ),
    backbone_label=RAW_WP8K,
    # chosen on STS-B dev by docs/raw-backbone.md's rule: of the six 300-step curves [CLS] at x10 is best (peak 72.96
    # at step 160; mean pooling's best 72.05), first within 0.5 of it at step 100 (72.56; run c0d8940154b7faf2)
    steps=RAW_WP8K_STEPS,
    # chosen on STS-B dev by each row's probes at 100 steps (results/<paper>/raw-wp8k/lr_probe.csv; seed 42, best dev
    # x 100 at x1 / x3 / x10: unsup 66.64 / 69.56 / 72.37, sup 68.35 / 70.96 / 71.47, off-dropout 66.75 / 69.03 /
    # 69.38, DCL 66.55 / 70.99 / 71.70, SimCSE++ 66.90 / 71.09 / 71.74, DeCLUTR 71.31 / 72.48 / 72.11); TNCSE's stage
    # 2, probed from the chosen stage-1 pair (SimCSE unsup. at x10), keeps its rate (72.32 / 72.25 / 72.12)
    lr_chosen=(
        ("simcse/unsup", 10.0),
        ("simcse/sup", 10.0),
        ("simcse_pp/off_dropout", 10.0),
        ("simcse_pp/dcl", 10.0),
        ("simcse_pp/simcse_pp", 10.0),
        ("declutr/declutr", 3.0),
    ),
    curve_poolers=("avg",),
)

PROFILES = {
    "smoke": Profile(
        "smoke",
        "tiny random BERT, a few steps, evaluated on seeded samples: the whole pipeline in minutes (tests, CI)",
        steps=6,
        max_batch=16,
        eval_every=3,
        analysis_splits=("dev", "test"),
        backbone=TINY_RANDOM_BERT,
        precision="fp32",
        headline_seeds=2,
        job=JobResources(gpus=0, cpus=1, mem_gb=4, timeout_min=15),
        exercises_only=True,
        generates_data=True,
        caveat=(
            "The smoke profile trains a 2-layer BERT with random weights for 6 steps and evaluates it on seeded "
            f"samples (at most {SMOKE_EVAL_PAIRS} pairs of each STS subset or split, {SMOKE_TRANSFER_EXAMPLES} "
            "examples of each transfer task's split): its numbers check that the pipeline runs end to end, they "
            "measure nothing."
        ),
        backbone_label="tiny random BERT",
        backbone_kind="random weights",
        eval_pairs=SMOKE_EVAL_PAIRS,
        transfer_examples=SMOKE_TRANSFER_EXAMPLES,
        # A 2 x 64 BERT encodes and trains as fast on one thread as on two, and two threads stall (~20x slower, on 2
        # cores) whenever another process holds a core: OpenMP's workers wait for each other at every tiny operation.
        # So each run gets one thread, and two runs train side by side (their records are those of one at a time).
        torch_threads=1,
        jobs=2,
        short_training=True,
    ),
    "small": SMALL,
    "raw": RAW,
    "raw-wp8k": RAW_WP8K_PROFILE,
    "full": Profile(
        "full",
        "the papers' backbones, data and hyperparameters (GPU, network), 5 seeds for headline rows",
        steps=None,
        max_batch=None,
        eval_every=None,
        analysis_splits=("train", "dev", "test"),
        backbone=None,
        precision=None,
        headline_seeds=5,
        # one BERT-base epoch of 10^6 sentences: ~11 min of fp16 training on an H100 (benchmarks/
        # bench_gpu_steps.py), plus the evaluations; MTEB's retrieval tasks take longer, hence requeues
        job=JobResources(gpus=1, cpus=8, mem_gb=64, timeout_min=240),
        paper_data=True,
    ),
    "rehearsal": Profile(
        "rehearsal",
        "the full profile's grids, downloads and code paths, capped (4 steps of batch 8, fp32, CPU, evaluated on "
        "seeded samples): run against a hub (HF_ENDPOINT; sentemb.rehearsal.hub serves stand-ins) before GPU hours",
        steps=4,
        max_batch=8,
        eval_every=2,
        analysis_splits=("dev", "test"),
        backbone=None,  # the papers' pinned hub ids: whatever the hub HF_ENDPOINT names serves under them
        precision="fp32",
        headline_seeds=1,
        job=JobResources(gpus=0, cpus=2, mem_gb=8, timeout_min=30),
        budgeted=True,  # the core rows; --extended reaches every row
        reaches_every_facet=True,
        exercises_only=True,
        paper_data=True,
        caveat=(
            "The rehearsal profile runs the full profile's code paths for 4 steps of batch 8 on whatever the hub "
            "serves under the papers' model ids (on the archive's stand-in hub, tiny random models), evaluated on "
            "seeded samples: its numbers check that the full profile runs, they measure nothing."
        ),
        sizes="full",
        backbone_label="the papers' hub ids (a rehearsal hub's stand-ins)",
        backbone_kind="whatever the hub serves",
        eval_pairs=SMOKE_EVAL_PAIRS,
        transfer_examples=SMOKE_TRANSFER_EXAMPLES,
    ),
}


def get_profile(name: str | Profile) -> Profile:
    """The profile called ``name`` (a :class:`Profile` is returned as it is)."""
    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        raise ConfigError(f"unknown profile {name!r}; choose from {', '.join(PROFILES)}") from None


def rounded(lr: float) -> float:
    """A multiple of a learning rate without the float product's tail (3e-05 * 10 is 0.00030000000000000003)."""
    return float(f"{lr:.6g}")


def probe_name(row: str, multiple: float) -> str:
    return f"{row}_lr_x{multiple:g}"


def lr_probes(scaled: dict[str, tuple[RunSpec, ...]], tuned: Iterable[str], profile: str | Profile):
    """One-seed copies of each ``tuned`` row (as scaled, its first seed) at ``Profile.lr_multiples`` times its learning
    rate, named :func:`probe_name`: what a paper tunes on its dev set, tuned on this profile's backbone (only rows the
    grid has; none on a profile without multiples)."""
    multiples = get_profile(profile).lr_multiples
    return {
        probe_name(row, m): (
            dataclasses.replace(scaled[row][0], lr=rounded(scaled[row][0].lr * m), notes=f"lr probe x{m:g}"),
        )
        for row in tuned
        if row in scaled
        for m in multiples
    }


def _chosen_multiples(
    scaled: dict[str, tuple[RunSpec, ...]], paper: str, profile: str | Profile, borrowed: dict[str, str] | None
) -> dict[str, float]:
    """Row of ``scaled`` -> the multiple of its learning rate ``Profile.lr_chosen`` names for it (keyed
    ``"<paper>/<row>"``, or the other paper's key of a ``borrowed`` row); rows without a choice are left out."""
    chosen = dict(get_profile(profile).lr_chosen)
    keys = {row: f"{paper}/{row}" for row in scaled} | (borrowed or {})
    return {row: chosen[keys[row]] for row in scaled if keys[row] in chosen}


def with_chosen_lr(
    scaled: dict[str, tuple[RunSpec, ...]], paper: str, profile: str | Profile, borrowed: dict[str, str] | None = None
) -> dict[str, tuple[RunSpec, ...]]:
    """``scaled`` with each row whose learning rate this profile chose on STS-B dev (``Profile.lr_chosen``,
    ``"<paper>/<row>"``) at that multiple of its rate, every seed. ``borrowed`` maps a row another paper defines to its
    key there (``{"simcse": "simcse/unsup"}``), so that a run both papers need stays one run id. The probes and curves
    are made from the rows before this (:func:`lr_probes`, :func:`steps_curves`): the chosen probe is then the row's
    first seed, the same run id, not a run of its own."""
    chosen = _chosen_multiples(scaled, paper, profile, borrowed)
    out = {}
    for row, specs in scaled.items():
        multiple = chosen.get(row)
        out[row] = (
            specs
            if multiple is None
            else tuple(
                dataclasses.replace(
                    spec, lr=rounded(spec.lr * multiple), notes=f"{spec.notes}; lr x{multiple:g} chosen"
                )
                for spec in specs
            )
        )
    return out


def tuned_grid(
    scaled: dict[str, tuple[RunSpec, ...]],
    tuned: Iterable[str],
    paper: str,
    profile: str | Profile,
    borrowed: dict[str, str] | None = None,
) -> dict[str, tuple[RunSpec, ...]]:
    """A paper's scaled rows as this profile runs them: each at its chosen learning rate (:func:`with_chosen_lr`), the
    ``tuned`` rows' probes (:func:`lr_probes`), and, for a tuned row whose chosen multiple is not 1, its run at the
    paper's rate kept as the probe ``<row>_lr_x1`` (the probe table compares it)."""
    chosen = _chosen_multiples(scaled, paper, profile, borrowed)
    kept = {
        probe_name(row, 1.0): (dataclasses.replace(scaled[row][0], notes="lr probe x1 (the paper's rate)"),)
        for row in tuned
        if row in chosen
    }
    return {**with_chosen_lr(scaled, paper, profile, borrowed), **lr_probes(scaled, tuned, profile), **kept}


def curve_name(row: str, multiple: float, pooler: str = "") -> str:
    """A steps curve's row name; ``pooler`` given for a curve at a pooler other than ``row``'s own."""
    return f"{row}{'_' + pooler if pooler else ''}_curve_lr_x{multiple:g}"


def steps_curves(scaled: dict[str, tuple[RunSpec, ...]], row: str, profile: str | Profile, eval_every: int):
    """On a profile that chooses its steps on STS-B dev (``Profile.steps_curve``): ``row``'s first seed for that many
    steps at its learning rate and each of ``Profile.lr_multiples`` times it, evaluated every ``eval_every`` steps,
    at its own pooler and at each of ``Profile.curve_poolers`` (named :func:`curve_name`; their curves are
    ``sentemb.report.tuning.steps_curve_table``)."""
    profile = get_profile(profile)
    if not profile.steps_curve or row not in scaled:
        return {}
    first = scaled[row][0]
    poolers = [""] + [p for p in profile.curve_poolers if p != first.pooler]
    return {
        curve_name(row, m, pooler): (
            dataclasses.replace(
                first,
                pooler=pooler or first.pooler,
                steps=profile.steps_curve,
                eval_every=eval_every,
                lr=rounded(first.lr * m),
                notes="steps curve" + (f", pooler {pooler}" if pooler else ""),
            ),
        )
        for pooler in poolers
        for m in (1.0, *profile.lr_multiples)
    }


def scale_grid(paper_grid: dict[str, RunSpec], profile: str, headline: Iterable[str]) -> dict[str, tuple[RunSpec, ...]]:
    """A paper's grid on a profile: each row's specs, one per seed (several for the ``headline`` rows)."""
    scaled, headline = get_profile(profile), set(headline)
    unknown = headline - set(paper_grid)
    if unknown:
        raise ConfigError(f"headline rows {sorted(unknown)} are not in the grid")
    return {
        name: tuple(scaled.scale(spec, seed) for seed in scaled.seeds(name in headline))
        for name, spec in paper_grid.items()
    }
