"""An experiment spec: plain, frozen data. Its content hash is the run id.

Two papers asking for the same spec get the same run id and share one run. Every field that can change a number is
in the spec (the profile, whether the data is synthetic, the precision of each phase, and the version of what the
code computes, ``CODE_VERSION``), so a run id names its numbers unambiguously.

The spec is paper-free: it names an objective and carries that objective's parameters (``objective_params``); the
objective declares, documents and validates them itself (:mod:`sentemb.objectives.registry`). The stored parameters
are the resolved ones (every default filled in), so a run id changes when an objective's default changes.

Fields added after records existed (``ADDED_FIELDS``) are left out of the canonical form while they hold their
default, so adding them changed no run id; a spec that sets one gets its own id.

This module sits below both the training loop (``train``) and the run executor (``runs``): both import it, it
imports neither. Importing it imports no torch: the names that the objective registry, the poolers and the
precisions define are checked when a spec is made, which imports them then.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from sentemb.errors import ConfigError
from sentemb.evaluate import GROUPS

#: What the archive's code computes for a spec, as a number that is part of every run id. A change to the code that
#: changes a run's numbers bumps it, so a record made by earlier code is never returned for a spec of today's code
#: (its run id differs, and :func:`sentemb.runs.execute.ensure` also checks the stored spec).
#:   1 (implicit, the first records): losses under bf16 autocast computed in bf16; SimCSE++'s "off-dropout" pass
#:     left BERT's attention dropout on; a NaN STS-B dev score could win checkpoint selection.
#:   2: every loss in fp32 (objectives/full_precision.py); off-dropout = the encoder in eval mode; NaN is the worst
#:     score in every selection (selection.py).
CODE_VERSION = 2
#: The objective of a spec that trains nothing (the backbone, or an ensemble of runs, is evaluated as it is); the
#: objective registry's ``NO_TRAINING``.
NO_TRAINING = "none"
FINAL_EVALS = ("sts", "stsb_dev")  # or groups joined by commas, "sts" first: "sts,transfer,mteb"
PROFILES = ("smoke", "small", "raw", "raw-wp8k", "full", "rehearsal")
#: linear: warm-up then decay to 0 (HF Trainer's default); constant: no scheduler; slanted_triangular: ULMFiT's
#: (Howard & Ruder 2018, Eq. 3; AllenNLP's ``slanted_triangular``, ratio 32) with its cut at ``warmup_steps``
#: (DeCLUTR: cut fraction 0.1 of the steps).
LR_SCHEDULES = ("linear", "constant", "slanted_triangular")
#: best_dev: the evaluation with the best STS-B dev score (SimCSE's selection); last: the weights after the last step
#: (DeCLUTR's configs keep every epoch's checkpoint and select none on validation).
CHECKPOINTS = ("best_dev", "last")
#: Fields added after run records existed: omitted from the canonical form (and so from run ids) at their default.
ADDED_FIELDS = {
    "init_runs": (),
    "lr_schedule": "linear",
    "checkpoint": "best_dev",
    "ddp_gradients": "global",
    "eval_pairs": None,
    "transfer_examples": None,
}
#: The sizes of the sample an evaluation reads (sentemb.evaluate.subsets); None (all) on every profile but smoke.
SAMPLE_FIELDS = ("eval_pairs", "transfer_examples")
#: Under torchrun: "global" (gradients equal one process's on the global batch, DeCLUTR's scale_fix) or "official"
#: (1/N of it, as SimCSE's and DeCLUTR's released code); see sentemb.distributed.
DDP_GRADIENTS = ("global", "official")


def _objective_registry() -> ModuleType:
    """:mod:`sentemb.objectives.registry`, imported when a spec is validated (it imports the objectives, and torch)."""
    from sentemb.objectives import registry

    return registry


@dataclass(frozen=True)
class RunSpec:
    profile: str
    backbone: str
    pooler: str = "cls_before_pooler"
    objective: str = NO_TRAINING
    objective_params: Mapping[str, Any] = field(default_factory=dict)  # resolved: every parameter, sorted
    dropout: float | None = None  # None: the backbone's own config (0.1 for BERT)
    train_data: str | None = None
    steps: int = 0
    batch_size: int = 64
    lr: float = 3e-5
    max_len: int = 32
    weight_decay: float = 0.0
    warmup_steps: int = 0
    grad_clip: float = 1.0  # max gradient norm; 0: no clipping
    seed: int = 42
    eval_every: int = 125
    trajectory_every: int | None = None  # alignment/uniformity on STS-B dev every k steps; None: at evaluations
    precision: str = "fp32"  # training forward/backward and the STS-B dev evaluations during training
    eval_precision: str = "fp32"  # the final evaluation (fp32 keeps SentEval's numbers)
    final_eval: str = "sts"
    analysis_splits: tuple[str, ...] = ("dev", "test")
    synthetic_data: bool = False
    code_version: int = CODE_VERSION  # see CODE_VERSION; any other value is refused
    # The runs whose trained models (their best/ checkpoints) initialise the objective's encoders, one per encoder
    # (TNCSE's stage-1 pair); empty: every encoder starts from ``backbone``. Run ids of the same profile. Without
    # training (objective "none"), two or more runs whose summed embeddings are evaluated (TNCSE's plain ensemble).
    init_runs: tuple[str, ...] = ()
    lr_schedule: str = "linear"  # see LR_SCHEDULES
    checkpoint: str = "best_dev"  # which weights a run keeps and evaluates; see CHECKPOINTS
    ddp_gradients: str = "global"  # the gradient scale under torchrun; see DDP_GRADIENTS
    # The evaluations' sample (sentemb.evaluate.subsets): at most this many pairs of each STS subset or split, and
    # examples of each split of a transfer task, the same seeded ones in every run; None: all of them.
    eval_pairs: int | None = None
    transfer_examples: int | None = None
    notes: str = field(default="", compare=False)  # free text, not part of the id

    def __post_init__(self) -> None:
        problems = [
            *self._choice_problems(),
            *self._training_problems(),
            *self._init_runs_problems(),
            *self._lr_schedule_problems(),
            *self._setting_problems(),
        ]
        if problems:
            raise ConfigError("invalid run spec: " + "; ".join(problems))
        registry = _objective_registry()
        registry.objective_class(self.objective)  # an unknown objective: ConfigError listing the known ones
        object.__setattr__(self, "objective_params", registry.resolve_params(self.objective, self.objective_params))

    def _choice_problems(self) -> list[str]:
        """The profile, pooler, precisions and final evaluation, each one of its known names."""
        from sentemb.models.poolers import POOLERS
        from sentemb.precision import PRECISIONS

        problems = []
        if self.profile not in PROFILES:
            problems.append(f"profile {self.profile!r} is not one of {PROFILES}")
        if self.pooler not in POOLERS:
            problems.append(f"pooler {self.pooler!r} is not one of {POOLERS}")
        for name in ("precision", "eval_precision"):
            if getattr(self, name) not in PRECISIONS:
                problems.append(f"{name} {getattr(self, name)!r} is not one of {PRECISIONS}")
        groups = self.final_eval.split(",")
        if self.final_eval not in FINAL_EVALS and not (groups[0] == "sts" and set(groups) <= set(GROUPS)):
            problems.append(
                f"final_eval {self.final_eval!r} is not 'stsb_dev' nor 'sts' followed by groups of {GROUPS}"
            )
        return problems

    def _training_problems(self) -> list[str]:
        """A training run's schedule, data and initial encoders; an untrained one's ensemble."""
        if not self.trains:
            if len(self.init_runs) == 1:
                return [
                    (
                        "without training, init_runs names the members of an ensemble (the sum of their models' "
                        "embeddings): give at least two run ids, or evaluate the one run's own record"
                    )
                ]
            return []
        problems = []
        if self.steps <= 0 or self.batch_size <= 1 or self.eval_every <= 0:
            problems.append("training needs steps > 0, batch_size > 1 and eval_every > 0")
        if not self.train_data:
            problems.append("training needs train_data")
        if self.trajectory_every is not None and self.trajectory_every <= 0:
            problems.append(f"trajectory_every must be positive or None, got {self.trajectory_every}")
        try:
            needed = _objective_registry().encoders_needed(self.objective)
        except ConfigError:  # an unknown objective is reported after these problems, with the known ones
            needed = None
        if self.init_runs and needed is not None and len(self.init_runs) != needed:
            problems.append(
                f"init_runs names {len(self.init_runs)} run(s), but objective {self.objective!r} "
                f"trains {needed} encoder(s): give one run id per encoder, or none"
            )
        return problems

    def _init_runs_problems(self) -> list[str]:
        hex_digits = set("0123456789abcdef")
        if isinstance(self.init_runs, tuple) and all(
            isinstance(run, str) and len(run) == 16 and set(run) <= hex_digits for run in self.init_runs
        ):
            return []
        return [f"init_runs must be a tuple of 16-hex-digit run ids, got {self.init_runs!r}"]

    def _lr_schedule_problems(self) -> list[str]:
        if self.lr_schedule not in LR_SCHEDULES:
            return [f"lr_schedule {self.lr_schedule!r} is not one of {LR_SCHEDULES}"]
        if self.lr_schedule == "constant" and self.warmup_steps:
            return ["lr_schedule 'constant' has no warm-up: set warmup_steps to 0"]
        if self.lr_schedule == "slanted_triangular" and not 0 < self.warmup_steps < max(self.steps, 1):
            return [
                (
                    "lr_schedule 'slanted_triangular' needs its cut: 0 < warmup_steps < steps "
                    f"(DeCLUTR: 10 % of the steps), got warmup_steps={self.warmup_steps}, steps={self.steps}"
                )
            ]
        return []

    def _setting_problems(self) -> list[str]:
        """The gradient scale, the kept checkpoint, the code version, the clipping, the dropout and the evaluations'
        sample sizes."""
        problems = []
        if self.ddp_gradients not in DDP_GRADIENTS:
            problems.append(f"ddp_gradients {self.ddp_gradients!r} is not one of {DDP_GRADIENTS}")
        if self.checkpoint not in CHECKPOINTS:
            problems.append(f"checkpoint {self.checkpoint!r} is not one of {CHECKPOINTS}")
        if self.code_version != CODE_VERSION:
            problems.append(
                f"code_version {self.code_version} is not this code's {CODE_VERSION} (a spec or record of "
                "earlier code is stale: delete its record and run the spec again)"
            )
        if not self.grad_clip >= 0:
            problems.append(f"grad_clip must be >= 0 (0: no clipping), got {self.grad_clip}")
        if self.dropout is not None and not 0.0 <= self.dropout < 1.0:
            problems.append(f"dropout must be in [0, 1), got {self.dropout}")
        for name in SAMPLE_FIELDS:
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                problems.append(f"{name} must be a positive number of pairs or examples, or None (all), got {value!r}")
        return problems

    def __hash__(self) -> int:
        return hash(self.run_id)

    @property
    def trains(self) -> bool:
        return self.objective != NO_TRAINING

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.objective_params)

    def with_params(self, **changes: Any) -> RunSpec:
        """A copy with some objective parameters changed (validated like any spec)."""
        return dataclasses.replace(self, objective_params={**self.objective_params, **changes})

    def as_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "notes"}
        out["objective_params"] = dict(self.objective_params)
        out["analysis_splits"] = list(self.analysis_splits)
        out["init_runs"] = list(self.init_runs)
        for name, default in ADDED_FIELDS.items():
            if getattr(self, name) == default:
                del out[name]
        return out

    @property
    def run_id(self) -> str:
        canonical = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    @classmethod
    def from_dict(cls, data: dict) -> RunSpec:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown spec field(s) {sorted(unknown)}; known: {sorted(known)}")
        data = dict(data)
        for name in ("analysis_splits", "init_runs"):
            if name in data:
                data[name] = tuple(data[name])
        return cls(**data)
