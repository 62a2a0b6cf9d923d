"""Dimension-wise contrastive learning, DCL (SimCSE++, Xu et al., 2023, §4.3, Eq. 5-6).

Each embedding dimension is standardised over the batch, z~_{i,c} = (z_{i,c} - mean_c) / sigma_c with
sigma_c^2 = 1/(N-1) sum_i (z_{i,c} - mean_c)^2, and dimensions are contrasted like samples in InfoNCE:

    s(c, d) = sum_i z~^1_{i,c} z~^2_{i,d} / tau_DCL
    l_DCL   = - sum_{c=1}^{D} log  e^{s(c, c)} / sum_{d=1}^{D} e^{s(c, d)}            (Eq. 5)
    l       = l_off-Info + lambda * l_DCL                                           (Eq. 6)

with tau_DCL = 5 and lambda = 0.1 (§5.1). ``variant="official"`` computes what the official code of 2022-11-10
does instead (notes §1.2): ``BatchNorm1d(affine=False)`` statistics (biased variance, eps 1e-5), the similarity
divided by the batch size N as well, and the mean over dimensions instead of the sum. The two differ by large
constant factors in the logits (N) and in the loss (D), so tau_DCL and lambda are not interchangeable between them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from sentemb.objectives.full_precision import fp32_loss


def standardise_dimensions(z: torch.Tensor, unbiased: bool = True, eps: float = 0.0) -> torch.Tensor:
    """Per-dimension standardisation over the batch (rows are samples)."""
    centred = z - z.mean(0, keepdim=True)
    variance = centred.pow(2).sum(0, keepdim=True) / (z.shape[0] - 1 if unbiased else z.shape[0])
    return centred / torch.sqrt(variance + eps)


class DimensionWiseContrastive(nn.Module):
    def __init__(self, temperature: float = 5.0, variant: str = "paper") -> None:
        super().__init__()
        if variant not in ("paper", "official"):
            raise ValueError("variant is 'paper' (Eq. 5-6) or 'official' (the 2022-11-10 code)")
        self.temperature, self.variant = temperature, variant

    def similarity(self, z1: torch.Tensor, z2: torch.Tensor) -> torch.Tensor:
        """The D x D matrix s(c, d)."""
        if self.variant == "paper":
            return standardise_dimensions(z1).T @ standardise_dimensions(z2) / self.temperature
        n = z1.shape[0]
        a = standardise_dimensions(z1, unbiased=False, eps=1e-5)
        b = standardise_dimensions(z2, unbiased=False, eps=1e-5)
        return a.T @ b / n / self.temperature

    @fp32_loss
    def forward(self, z1: torch.Tensor, z2: torch.Tensor) -> torch.Tensor:
        if z1.shape[0] < 2:
            raise ValueError("DCL needs a batch of at least two samples to standardise dimensions")
        logits = self.similarity(z1, z2)
        labels = torch.arange(logits.shape[0], device=logits.device)
        return F.cross_entropy(logits, labels, reduction="sum" if self.variant == "paper" else "mean")
