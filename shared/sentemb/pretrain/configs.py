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

    def as_dict(self) -> dict:
        return asdict(self)

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
        return " ".join(words + ([f"--out {out}"] if out else []))
