"""An experiment spec: plain, frozen data. Its content hash is the run id.

Two papers asking for the same spec get the same run id and share one run. Every field that can
change a number is in the spec (including the profile and whether the data is synthetic), so a
run id names its numbers unambiguously.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field

from sentemb.errors import ConfigError
from sentemb.evaluate import GROUPS
from sentemb.models.poolers import POOLERS

OBJECTIVES = ("none", "simcse_unsup", "simcse_sup")
AUGMENTATIONS = ("none", "delete_one_word")
FINAL_EVALS = ("sts", "stsb_dev")  # or groups joined by commas, "sts" first: "sts,transfer,mteb"
PROFILES = ("smoke", "small", "full")


@dataclass(frozen=True)
class RunSpec:
    profile: str
    backbone: str
    pooler: str = "cls_before_pooler"
    objective: str = "none"
    temperature: float = 0.05
    hard_negative_alpha: float = 1.0
    dropout: float | None = None  # None: the backbone's own config (0.1 for BERT)
    fixed_dropout_mask: bool = False  # SimCSE Table 3 "fixed 0.1": one mask for both views
    augmentation: str = "none"
    train_data: str | None = None
    steps: int = 0
    batch_size: int = 64
    lr: float = 3e-5
    max_len: int = 32
    weight_decay: float = 0.0
    warmup_steps: int = 0
    grad_clip: float = 1.0
    seed: int = 42
    eval_every: int = 125
    final_eval: str = "sts"
    analysis_splits: tuple[str, ...] = ("dev", "test")
    synthetic_data: bool = False
    notes: str = field(default="", compare=False)  # free text, not part of the id

    def __post_init__(self) -> None:
        problems = []
        if self.profile not in PROFILES:
            problems.append(f"profile {self.profile!r} is not one of {PROFILES}")
        if self.pooler not in POOLERS:
            problems.append(f"pooler {self.pooler!r} is not one of {POOLERS}")
        if self.objective not in OBJECTIVES:
            problems.append(f"objective {self.objective!r} is not one of {OBJECTIVES}")
        if self.augmentation not in AUGMENTATIONS:
            problems.append(f"augmentation {self.augmentation!r} is not one of {AUGMENTATIONS}")
        groups = self.final_eval.split(",")
        if self.final_eval not in FINAL_EVALS and not (groups[0] == "sts" and set(groups) <= set(GROUPS)):
            problems.append(f"final_eval {self.final_eval!r} is not 'stsb_dev' nor 'sts' followed by groups of {GROUPS}")
        if self.objective != "none":
            if self.steps <= 0 or self.batch_size <= 1 or self.eval_every <= 0:
                problems.append("training needs steps > 0, batch_size > 1 and eval_every > 0")
            if not self.train_data:
                problems.append("training needs train_data")
        if self.dropout is not None and not 0.0 <= self.dropout < 1.0:
            problems.append(f"dropout must be in [0, 1), got {self.dropout}")
        if self.temperature <= 0 or self.hard_negative_alpha <= 0:
            problems.append("temperature and hard_negative_alpha must be positive")
        if problems:
            raise ConfigError("invalid run spec: " + "; ".join(problems))

    @property
    def trains(self) -> bool:
        return self.objective != "none"

    def as_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out.pop("notes")
        out["analysis_splits"] = list(self.analysis_splits)
        return out

    @property
    def run_id(self) -> str:
        canonical = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    @classmethod
    def from_dict(cls, data: dict) -> "RunSpec":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown spec field(s) {sorted(unknown)}; known: {sorted(known)}")
        data = dict(data)
        if "analysis_splits" in data:
            data["analysis_splits"] = tuple(data["analysis_splits"])
        return cls(**data)
