"""InfoNCE objectives of SimCSE (Gao et al., 2021).

Unsupervised, Eq. 4 (§3): for a batch of N sentences encoded twice with independent dropout masks,

    l_i = -log  exp(sim(h_i, h_i^+)/tau) / sum_j exp(sim(h_i, h_j^+)/tau)

Supervised with hard negatives, Eq. 5 (§4), generalised by the weight alpha of Eq. 8 (§6.3):

    l_i = -log  exp(sim(h_i, h_i^+)/tau)
                / sum_j ( exp(sim(h_i, h_j^+)/tau) + alpha^{1[i=j]} exp(sim(h_i, h_j^-)/tau) )

sim is cosine similarity, tau = 0.05 in the paper; the loss is the batch mean. Table D.1's "N/A (dot product)" row
replaces sim/tau by the dot product of the unnormalised embeddings (``similarity="dot"``, no temperature). alpha
multiplies
only the anchor's own hard negative, i.e. adds log(alpha) to that logit. SimCSE's code exposes
this as ``hard_negative_weight`` = log(alpha) and adds it as a constant (no gradient); alpha = 1
(the paper's final model) gives Eq. 5. The loss is one-directional (anchors against positives),
as in the official code.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from sentemb.objectives.full_precision import fp32_loss

SIMILARITIES = ("cosine", "dot")


def cosine_matrix(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def similarity_logits(a: torch.Tensor, b: torch.Tensor, temperature: float, similarity: str) -> torch.Tensor:
    """cos(a_i, b_j) / tau, or a_i . b_j for ``similarity="dot"`` (SimCSE Table D.1: no temperature)."""
    if similarity == "cosine":
        return cosine_matrix(a, b) / temperature
    if similarity == "dot":
        return a @ b.T
    raise ValueError(f"similarity must be one of {SIMILARITIES}, got {similarity!r}")


class UnsupervisedInfoNCE(nn.Module):
    """SimCSE Eq. 4: in-batch negatives, positives on the diagonal."""

    def __init__(self, temperature: float = 0.05, similarity: str = "cosine") -> None:
        super().__init__()
        self.temperature = temperature
        self.similarity = similarity

    @fp32_loss
    def forward(self, z1: torch.Tensor, z2: torch.Tensor) -> torch.Tensor:
        logits = similarity_logits(z1, z2, self.temperature, self.similarity)
        labels = torch.arange(z1.shape[0], device=z1.device)
        return F.cross_entropy(logits, labels)


class SupervisedInfoNCE(nn.Module):
    """SimCSE Eq. 8 (Eq. 5 when alpha = 1): entailment positives, contradiction hard negatives."""

    def __init__(self, temperature: float = 0.05, alpha: float = 1.0, similarity: str = "cosine") -> None:
        super().__init__()
        if alpha <= 0:
            raise ValueError(f"alpha must be positive (it multiplies exp(.)), got {alpha}")
        self.temperature = temperature
        self.alpha = alpha
        self.similarity = similarity

    @fp32_loss
    def forward(self, z1: torch.Tensor, z2: torch.Tensor, z3: torch.Tensor, *more: torch.Tensor) -> torch.Tensor:
        """``more``: further hard negatives per anchor (SimCSE Table 7 "Contradiction + Neutral": the neutral
        hypotheses), each entering the denominator as z3 does, alpha on the anchor's own."""
        n = z1.shape[0]
        logits = [similarity_logits(z1, z2, self.temperature, self.similarity)]
        for negatives in (z3, *more):
            scores = similarity_logits(z1, negatives, self.temperature, self.similarity)
            offset = torch.zeros_like(scores)
            offset[torch.arange(n), torch.arange(n)] = math.log(self.alpha)
            logits.append(scores + offset)
        logits = torch.cat(logits, dim=1)
        labels = torch.arange(n, device=z1.device)
        return F.cross_entropy(logits, labels)
