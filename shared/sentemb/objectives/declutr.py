"""DeCLUTR's objectives (Giorgi et al., 2021): NT-Xent over anchors and mean positives, plus MLM.

Mean positive (§3.1; the equation's number is lost in the extracted text, it is the display
before Eq. 2): with N documents, A anchors per document and P positives per anchor, anchor i
(i = 1 ... AN) gets the embedding e_i = g(f(s_i)) and its positive embedding is

    e_{i+AN} = (1/P) * sum_{p=1..P} g(f(s_{i+pAN}))

Contrastive loss, Eq. 2 (§3.1), over the 2AN embeddings {e_1 ... e_2AN}:

    L_contrastive = sum_{i=1..AN} [ l(i, i+AN) + l(i+AN, i) ]
    l(i, j) = -log  exp(sim(e_i, e_j)/tau) / sum_{k=1..2AN} 1[k != i] exp(sim(e_i, e_k)/tau)

sim is cosine similarity; every embedding other than e_i and its partner is a negative (the
other 2(AN-1), including the hard negatives from the same document). This is SimCLR's NT-Xent;
tau = 0.05 in the paper and the official config. The paper writes a sum; the official code uses
pytorch-metric-learning's NTXentLoss, which averages over the 2AN (anchor, positive) pairs. We
follow the code: the loss is the mean of the 2AN terms, i.e. L_contrastive / (2AN).

MLM, Eq. 3 (§3.2): BERT's masked language modelling on every anchor span,

    L = L_contrastive + L_MLM

a plain unweighted sum (the official code also uses weight 1). BERT masking: each non-special
token is selected with probability 0.15; a selected token becomes [MASK] with probability 0.8, a
token drawn uniformly from the whole vocabulary with probability 0.1, and stays unchanged with
probability 0.1; L_MLM is the cross entropy at the selected positions only (labels -100
elsewhere). Official-code facts: the *masked* anchors are the ones encoded for both L_MLM and
L_contrastive (positives are never masked), and padding is never selected. Two additions of
ours: at least one token is selected in every sequence that has a maskable token (the official
code, following Hugging Face's collator, may select none), and the input tensor is never
modified in place.

Indexing: the paper orders positives as s_{i+pAN}; a flat (P*AN, d) batch of positive
embeddings in that order becomes this module's (AN, P, d) input with
``flat.view(P, AN, d).transpose(0, 1)``.
"""

from __future__ import annotations

from collections.abc import Collection

import torch
import torch.nn.functional as F
from torch import nn

from sentemb.objectives.full_precision import fp32_loss
IGNORE_INDEX = -100


def nt_xent(first: torch.Tensor, second: torch.Tensor, temperature: float) -> torch.Tensor:
    """SimCLR's NT-Xent: ``first[i]`` and ``second[i]`` are a positive pair among 2M embeddings.

    Mean over the 2M terms l(i, i+M) and l(i+M, i) of Eq. 2 above.
    """
    if first.shape != second.shape or first.dim() != 2:
        raise ValueError(
            f"expected two (M, d) tensors of the same shape, got {tuple(first.shape)} and {tuple(second.shape)}"
        )
    count = first.shape[0]
    embeddings = F.normalize(torch.cat([first, second]), dim=-1)
    logits = embeddings @ embeddings.T / temperature
    self_pairs = torch.eye(2 * count, dtype=torch.bool, device=logits.device)
    logits = logits.masked_fill(self_pairs, float("-inf"))
    index = torch.arange(count, device=logits.device)
    partners = torch.cat([index + count, index])
    return F.cross_entropy(logits, partners)


class DeclutrContrastiveLoss(nn.Module):
    """Eq. 2 with mean positives: anchors (AN, d), positives (AN, P, d) -> scalar."""

    def __init__(self, temperature: float = 0.05) -> None:
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature

    @fp32_loss
    def forward(self, anchor_embeddings: torch.Tensor, positive_embeddings: torch.Tensor) -> torch.Tensor:
        if positive_embeddings.dim() != 3 or positive_embeddings.shape[0] != anchor_embeddings.shape[0]:
            raise ValueError(
                "positive_embeddings must be (AN, P, d) with the anchors' AN first; got anchors "
                f"{tuple(anchor_embeddings.shape)} and positives {tuple(positive_embeddings.shape)}"
            )
        mean_positives = positive_embeddings.mean(dim=1)
        return nt_xent(anchor_embeddings, mean_positives, self.temperature)


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


def declutr_loss(contrastive_loss: torch.Tensor, mlm_loss: torch.Tensor) -> torch.Tensor:
    """Eq. 3: L = L_contrastive + L_MLM (unweighted)."""
    return contrastive_loss + mlm_loss
