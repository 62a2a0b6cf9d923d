"""The model, the masking and the loss of MLM pretraining.

Model: ``transformers.BertForMaskedLM`` from a :data:`~sentemb.pretrain.configs.SIZES` entry (BERT's vocabulary,
GELU, 512 positions; the decoder tied to the word embeddings, as BERT's), initialised from a seed.
Masking: ``DataCollatorForLanguageModeling`` (15 %, or the run's ``mask_rate``; 80 % [MASK], 10 % random, 10 %
unchanged; [CLS], [SEP], [PAD] and [UNK] never chosen), its generator seeded by (seed, step), so a batch's masks are
a function of the step: the same in a fresh process and in a resumed run.
Loss: the encoder on every position (under the caller's autocast), the MLM head (``model.cls``) on the masked
positions only (15 % of the vocabulary projection) and in fp32 with autocast off, then cross-entropy; equal to
``BertForMaskedLM``'s own loss with labels -100 elsewhere.
Pooler: MLM trains no pooler (BERT's comes from next-sentence prediction, which is not used here);
:func:`seeded_pooler` is the dense + tanh layer a checkpoint saves for ``pooler_output``, initialised from a seed as
BERT initialises it, so that loading the checkpoint draws no random numbers.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
import transformers

from sentemb.pretrain.configs import DROPOUT, MAX_POSITIONS, MLM_PROBABILITY, SIZES


def bert_config(
    size: str, vocab_size: int, dropout: float = DROPOUT, attention: str = "sdpa"
) -> transformers.BertConfig:
    """``attention``: transformers' implementation while pretraining (not saved with the config: fine-tuning picks its
    own); ``eager`` is the same maths and faster on a CPU when no sequence is padded, as packed ones never are."""
    s = SIZES[size]
    config = transformers.BertConfig(
        vocab_size=vocab_size,
        hidden_size=s.hidden,
        num_hidden_layers=s.layers,
        num_attention_heads=s.heads,
        intermediate_size=s.intermediate,
        max_position_embeddings=MAX_POSITIONS,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
    )
    config._attn_implementation = attention
    return config


def build_model(
    size: str, vocab_size: int, seed: int, dropout: float = DROPOUT, attention: str = "sdpa"
) -> transformers.BertForMaskedLM:
    """A freshly initialised model (``dropout`` in its hidden and attention layers); the global torch random state
    is left as it was."""
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    model = transformers.BertForMaskedLM(bert_config(size, vocab_size, dropout, attention))
    torch.random.set_rng_state(state)
    return model


def size_of(size: str, vocab_size: int = 30522) -> dict:
    """Parameters (tied weights once) and the weights' size in MB (10^6 bytes) in bf16, built on the meta device."""
    with torch.device("meta"):
        model = transformers.BertForMaskedLM(bert_config(size, vocab_size))
    n = sum(p.numel() for p in model.parameters())
    return {"parameters": n, "bf16_mb": round(2 * n / 1e6, 1)}


def collator(tokenizer, rate: float = MLM_PROBABILITY) -> transformers.DataCollatorForLanguageModeling:
    """Masks ``rate`` of the tokens (80 % [MASK], 10 % random, 10 % unchanged)."""
    return transformers.DataCollatorForLanguageModeling(tokenizer, mlm=True, mlm_probability=rate)


def mask(collate: transformers.DataCollatorForLanguageModeling, input_ids: torch.Tensor, seed: int, step: int):
    """(inputs, labels) of one batch: masked by the library's collator, its generator seeded by (seed, step)."""
    ids = input_ids.long()
    special = torch.isin(ids, torch.tensor(collate.tokenizer.all_special_ids))
    collate.generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
    return collate.torch_mask_tokens(ids.clone(), special_tokens_mask=special)


def masked_lm_loss(
    model: transformers.BertForMaskedLM, inputs: torch.Tensor, labels: torch.Tensor, reduction: str = "mean"
) -> torch.Tensor:
    """Cross-entropy (fp32) over the masked positions (labels != -100), the head run on those positions only."""
    hidden = model.bert(input_ids=inputs).last_hidden_state
    chosen = labels != -100
    with torch.autocast(inputs.device.type, enabled=False):
        logits = model.cls(hidden[chosen].float())
    return F.cross_entropy(logits, labels[chosen], reduction=reduction)


def seeded_pooler(config: transformers.BertConfig, seed: int) -> dict[str, torch.Tensor]:
    """``bert.pooler.dense.{weight,bias}``: normal(0, initializer_range) and zeros, drawn from ``seed``."""
    generator = torch.Generator().manual_seed(seed)
    weight = torch.randn(config.hidden_size, config.hidden_size, generator=generator) * config.initializer_range
    return {"bert.pooler.dense.weight": weight, "bert.pooler.dense.bias": torch.zeros(config.hidden_size)}
