"""The named model sizes and the settings of a pretraining run; its id is the hash of the settings.

The sizes follow the BERT miniatures (Turc et al., 2019): ``mini`` is BERT-Mini (4 layers x 256), ``small``
BERT-Small (4 x 512), ``2x128`` BERT-Tiny and ``4x128`` its 4-layer sibling (about half of ``mini``'s cost a token
on 2 CPU cores, ``benchmarks/bench_pretrain_probes.py``); ``tiny`` (2 x 64) is for the tests. ``bf16_mb``: the
weights' size in bf16 (10^6 bytes), as :func:`sentemb.pretrain.model.size_of` counts it (a test checks), written
here so that ``--help`` needs no model.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from sentemb.errors import ConfigError


@dataclass(frozen=True)
class Size:
    layers: int
    hidden: int
    heads: int
    intermediate: int
    bf16_mb: float


SIZES = {
    "tiny": Size(layers=2, hidden=64, heads=2, intermediate=256, bf16_mb=4.2),
    "mini": Size(layers=4, hidden=256, heads=4, intermediate=1024, bf16_mb=22.4),
    "small": Size(layers=4, hidden=512, heads=8, intermediate=2048, bf16_mb=57.6),
    "2x128": Size(layers=2, hidden=128, heads=2, intermediate=512, bf16_mb=8.8),
    "4x128": Size(layers=4, hidden=128, heads=2, intermediate=512, bf16_mb=9.6),
}
PRECISIONS = ("bf16", "fp32")  # bf16: autocast on a GPU, and on a CPU with avx512_bf16/amx (emulated, slow, else)
DROPOUT = 0.1  # BERT's (hidden and attention); what every saved checkpoint's config says, for fine-tuning

MLM_PROBABILITY = 0.15  # 80 % [MASK], 10 % a random token, 10 % unchanged (DataCollatorForLanguageModeling)
MAX_POSITIONS = 512  # position embeddings, as BERT's: the papers' pipelines encode up to 512 tokens
SCHEDULES = ("linear", "wsd")  # linear: warm-up then decay to 0 at the last step; wsd: warm-up, constant, decay
ATTENTIONS = ("sdpa", "eager")  # transformers' attention; eager: the same maths, faster on a CPU without padding

#: The settings added after the first runs, at the values those runs used: a field at its legacy value is left out
#: of the run id, so every earlier run id (e.g. 4a2c732f7e9f, sentemb-bert-mini-mlm's) still names its settings.
LEGACY = {
    "vocab": "bert-uncased",
    "mask_rate": MLM_PROBABILITY,
    "schedule": "linear",
    "decay_fraction": 0.15,
    "budget_minutes": 0.0,
    "attention": "sdpa",
    "fused_adamw": False,
    "adam_beta2": 0.999,
}


@dataclass(frozen=True)
class PretrainConfig:
    size: str = "mini"  # the raw profile's backbone (docs/raw-backbone.md: why this size)
    steps: int = 10_000
    batch_size: int = 256
    lr: float = 5e-4
    warmup: int = 500
    weight_decay: float = 0.01
    seed: int = 0
    eval_every: int = 500
    heldout_sequences: int = 1024  # the first ones of WikiText-2 valid, each masked the same way at every evaluation
    max_len: int = 128
    dropout: float = DROPOUT  # during pretraining only (Cramming, Geiping & Goldstein 2023, trains without)
    precision: str = "bf16"  # autocast of the encoder (bf16 or fp32); the MLM head and the loss in fp32 always
    vocab: str = LEGACY["vocab"]  # MiniLM's uncased BERT vocabulary, or a committed WordPiece (pretrain.vocabulary)
    mask_rate: float = LEGACY["mask_rate"]  # of the training tokens; the held-out loss always masks 15 %
    schedule: str = LEGACY["schedule"]
    decay_fraction: float = LEGACY["decay_fraction"]  # wsd: the last fraction of the steps decays linearly to 0
    budget_minutes: float = LEGACY["budget_minutes"]  # wsd: > 0 starts the decay at that share of these wall minutes
    attention: str = LEGACY["attention"]
    fused_adamw: bool = LEGACY["fused_adamw"]  # torch's fused AdamW kernel: the same update, one pass
    adam_beta2: float = LEGACY["adam_beta2"]  # Izsak et al. 2021 and Cramming use 0.98

    def __post_init__(self) -> None:
        if self.size not in SIZES:
            raise ConfigError(f"unknown model size {self.size!r}; choose from {', '.join(SIZES)}")
        if self.max_len < 8 or self.max_len > MAX_POSITIONS:
            raise ConfigError(f"--max-len {self.max_len}: choose 8 to {MAX_POSITIONS}")
        if self.precision not in PRECISIONS:
            raise ConfigError(f"--precision {self.precision!r}: choose {' or '.join(PRECISIONS)}")
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"--dropout {self.dropout}: choose 0 <= dropout < 1")
        if self.warmup > self.steps:
            raise ConfigError(f"--warmup {self.warmup} is longer than --steps {self.steps}")
        if not 0.0 < self.mask_rate < 1.0:
            raise ConfigError(f"--mask-rate {self.mask_rate}: choose 0 < rate < 1 (BERT: 0.15)")
        if self.schedule not in SCHEDULES:
            raise ConfigError(f"--schedule {self.schedule!r}: choose {' or '.join(SCHEDULES)}")
        if self.attention not in ATTENTIONS:
            raise ConfigError(f"--attention {self.attention!r}: choose {' or '.join(ATTENTIONS)}")
        if not 0.0 < self.decay_fraction <= 1.0:
            raise ConfigError(f"--decay-fraction {self.decay_fraction}: choose 0 < fraction <= 1")
        if self.budget_minutes < 0 or (self.budget_minutes > 0 and self.schedule != "wsd"):
            raise ConfigError(f"--budget-minutes {self.budget_minutes:g}: a positive budget needs --schedule wsd")
        if not 0.0 < self.adam_beta2 < 1.0:
            raise ConfigError(f"--adam-beta2 {self.adam_beta2}: choose 0 < beta2 < 1")

    def as_dict(self) -> dict:
        """The settings that name the run: every field, less the later ones at their legacy values."""
        return {k: v for k, v in asdict(self).items() if not (k in LEGACY and v == LEGACY[k])}

    @property
    def decay_start(self) -> int:
        """The first step whose rate falls (wsd with a step budget): the last ``decay_fraction`` of the steps decay;
        linear decays from the end of the warm-up."""
        if self.schedule == "linear":
            return self.warmup
        return max(self.warmup, self.steps - round(self.decay_fraction * self.steps))

    def same_run_until(self, other: PretrainConfig) -> bool:
        """Whether ``other``'s steps up to its own decay start are this run's steps (a milestone's decay branches
        from a longer wsd run's state): the same settings but the step budget, both wsd with step budgets."""
        mine, theirs = asdict(self), asdict(other)
        mine.pop("steps"), theirs.pop("steps")
        return mine == theirs and self.schedule == "wsd" and not self.budget_minutes

    @property
    def run_id(self) -> str:
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()[:12]

    def command(self, out: str | None = None) -> str:
        """The command that makes this run (every setting spelled out)."""
        words = ["python -m sentemb pretrain", f"--config {self.size}", f"--steps {self.steps}"]
        words += [f"--batch-size {self.batch_size}", f"--lr {self.lr:g}", f"--warmup {self.warmup}"]
        words += [f"--weight-decay {self.weight_decay:g}", f"--seed {self.seed}", f"--eval-every {self.eval_every}"]
        words += [f"--heldout-sequences {self.heldout_sequences}", f"--max-len {self.max_len}"]
        words += [f"--dropout {self.dropout:g}", f"--precision {self.precision}"]
        later = {k: v for k, v in self.as_dict().items() if k in LEGACY}
        for key, value in later.items():
            flag = "--" + key.replace("_", "-")
            words.append(
                flag if value is True else f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}"
            )
        return " ".join(words + ([f"--out {out}"] if out else []))
