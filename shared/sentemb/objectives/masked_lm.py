"""BERT's masked language modelling as an auxiliary loss: masking, the loss, and a fresh prediction head.

Used by DeCLUTR (Eq. 3, MLM on the anchors, weight 1) and by SimCSE's auxiliary MLM (Table D.2, weight lambda).

Masking (BERT; :func:`mask_tokens_for_mlm`): each non-special token is selected with probability 0.15; a selected
token becomes [MASK] with probability 0.8, a token drawn uniformly from the whole vocabulary with probability 0.1,
and stays unchanged with probability 0.1; the loss is the cross entropy at the selected positions only (labels
-100 elsewhere). Padding is never selected. Two additions of ours: at least one token is selected in every sequence
that has a maskable token (Hugging Face's collator, which both official codes use, may select none), and the input
tensor is never modified in place.

The head (:func:`tied_mlm_head`): a BERT prediction head (transformers' ``BertLMPredictionHead``: dense + GELU +
LayerNorm, then the decoder) whose decoder weight is tied to the encoder's input word embeddings, as BERT ties its
own. The official codes start from the checkpoint's pretrained head (SimCSE: ``BertForPreTraining.cls.predictions``;
DeCLUTR: AllenNLP's ``mlm`` embedder), and so does this one where the backbone ships a head (the archive's own MLM
backbones, :func:`~sentemb.models.backbone.checkpoint_mlm_head`); all-MiniLM-L6-v2 is distributed without one, so
on it the head is fresh.
"""

from __future__ import annotations

from collections.abc import Collection

import torch
import torch.nn.functional as F
from torch import nn

from sentemb.errors import ConfigError
from sentemb.models.device_copies import to_device_without_waiting
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.full_precision import fp32_loss

IGNORE_INDEX = -100


def mask_tokens_for_mlm(
    token_ids: torch.Tensor,
    *,
    mask_token_id: int,
    vocab_size: int,
    special_token_ids: Collection[int],
    generator: torch.Generator,
    select_probability: float = 0.15,
    mask_probability: float = 0.8,
    random_probability: float = 0.1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT masking of (B, L) token ids -> (masked_ids, labels); labels are -100 where not selected.

    ``special_token_ids`` must include the padding id. Of the selected tokens, a fraction
    ``mask_probability`` becomes ``mask_token_id``, ``random_probability`` a uniform id in
    [0, vocab_size), the rest stay unchanged.
    """
    if token_ids.dim() != 2:
        raise ValueError(f"token_ids must be (batch, length), got shape {tuple(token_ids.shape)}")
    if mask_probability + random_probability > 1:
        raise ValueError(
            f"mask_probability + random_probability must be <= 1, got {mask_probability} + {random_probability}"
        )
    specials = torch.tensor(sorted(special_token_ids), dtype=token_ids.dtype, device=token_ids.device)
    maskable = ~torch.isin(token_ids, specials)
    if not maskable.any():
        raise ValueError("no token can be masked: every token id is in special_token_ids")

    # All random draws happen on the CPU generator, in a fixed order, whatever gets selected.
    selection_draw = torch.rand(token_ids.shape, generator=generator).to(token_ids.device)
    fallback_draw = torch.rand(token_ids.shape, generator=generator).to(token_ids.device)
    action_draw = torch.rand(token_ids.shape, generator=generator).to(token_ids.device)
    random_ids = torch.randint(vocab_size, token_ids.shape, generator=generator).to(token_ids)

    selected = maskable & (selection_draw < select_probability)
    needs_one = maskable.any(dim=1) & ~selected.any(dim=1)
    fallback_position = fallback_draw.masked_fill(~maskable, -1.0).argmax(dim=1)
    rows = torch.nonzero(needs_one).squeeze(1)
    selected[rows, fallback_position[rows]] = True

    to_mask = selected & (action_draw < mask_probability)
    to_random = selected & (action_draw >= mask_probability) & (action_draw < mask_probability + random_probability)
    masked_ids = token_ids.masked_fill(to_mask, mask_token_id)
    masked_ids = torch.where(to_random, random_ids, masked_ids)
    labels = token_ids.masked_fill(~selected, IGNORE_INDEX)
    return masked_ids, labels


def masked_lm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """L_MLM: mean cross entropy over the positions whose label is not -100. logits (B, L, V)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX)


class MaskedLMLoss(nn.Module):
    """L_MLM through a prediction head, in float32: the head reads only the selected positions' token states.

    Inputs: token states (B, L, d) and labels (B, L') with L' <= L (a batch padded further after masking keeps its
    positions), -100 where not selected. Labels on the CPU (as the masking makes them) are searched there, and only
    the selected positions and their targets move to the device, without waiting for it (pinned, non-blocking); on
    the device, the search synchronises the host with it. The same positions in the same (row-major) order either
    way, so the same loss bit for bit."""

    def __init__(self, head: nn.Module) -> None:
        super().__init__()
        self.head = head

    @fp32_loss
    def forward(self, token_states: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        rows, columns = torch.nonzero(labels != IGNORE_INDEX, as_tuple=True)
        targets = labels[rows, columns]
        if labels.device != token_states.device:
            rows, columns, targets = (
                to_device_without_waiting(t, token_states.device) for t in (rows, columns, targets)
            )
        logits = self.head(token_states[rows, columns])
        return F.cross_entropy(logits, targets)


def tied_mlm_head(encoder: SentenceEncoder) -> nn.Module:
    """A BERT prediction head whose decoder weight is the encoder's input word embedding matrix; the other weights
    the backbone's trained head where it ships one, else initialised as BERT initialises them (normal(0,
    initializer_range), zero biases, unit LayerNorm)."""
    from transformers.models.bert.modeling_bert import BertLMPredictionHead

    from sentemb.models.backbone import checkpoint_mlm_head

    config = encoder.backbone.config
    head = BertLMPredictionHead(config)
    nn.init.normal_(head.transform.dense.weight, mean=0.0, std=getattr(config, "initializer_range", 0.02))
    nn.init.zeros_(head.transform.dense.bias)
    head.decoder.weight = encoder.backbone.get_input_embeddings().weight
    nn.init.zeros_(head.decoder.bias)
    head.bias = head.decoder.bias  # one output bias, as transformers ties them
    trained = checkpoint_mlm_head(encoder.name)
    if trained:
        missing, unexpected = head.load_state_dict(trained, strict=False)
        if unexpected or set(missing) != {"decoder.weight"}:
            raise ConfigError(f"{encoder.name}'s MLM head does not fit: missing {missing}, unexpected {unexpected}")
    return head
