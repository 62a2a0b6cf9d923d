"""SimCSE++ (Xu et al., 2023) §3: dropout noise in the negatives, and off-dropout sampling.

Decoupled InfoNCE. SimCSE's Eq. 2 (= SimCSE Eq. 4) scores positives and negatives on the same two dropout views
z^1, z^2. SimCSE++ separates them: the positive pair (a_i, b_i) and the negative pairs (c_i, d_j), j != i,
may come from different views,

    l_i = -log  e^{s(a_i, b_i)} / ( e^{s(a_i, b_i)} + m * sum_{j != i} e^{s(c_i, d_j)} ),   s = cos / tau

- SimCSE:                a = c = z^1, b = d = z^2, m = 1 (identical to SimCSE Eq. 4).
- off-dropout (Eq. 3):   a = z^1, b = z^2 (dropout on); c = d = z, the sentences encoded with dropout off (the encoder
in eval mode);
                         m is the trade-off factor (0.9 in §5.1). Gradients flow through z as in the official
                         code (``models_re.py``: z0 is not detached).
- Table 1 "+Noise":      the views of the pair type under study get Gaussian noise (mean 0, variance 0.1),
                         :func:`add_gaussian_noise`; "-Noise": they are the mean of K = 10 dropout samples,
                         :func:`mean_of_dropout_samples`. "Pos." changes (a, b), "Neg." changes (c, d).

Where the official code differs: it multiplies the *positive* logit by ``pos_ratio`` (= m) instead of the
negative sum by m (notes, §1.2); ``trade_off="official"`` selects that form. The default is the paper's Eq. 3.
"""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from sentemb.objectives.full_precision import fp32_loss
from sentemb.objectives.infonce import cosine_matrix


class DecoupledInfoNCE(nn.Module):
    """InfoNCE with the positive and the negative pairs taken from separate views (SimCSE++ Eq. 2-3)."""

    def __init__(self, temperature: float = 0.05, m: float = 1.0, trade_off: str = "paper") -> None:
        super().__init__()
        if m <= 0:
            raise ValueError(f"the trade-off factor m must be positive, got {m}")
        if trade_off not in ("paper", "official"):
            raise ValueError(
                "trade_off is 'paper' (m scales the negative sum) or 'official' (m scales the positive logit)"
            )
        self.temperature, self.m, self.trade_off = temperature, m, trade_off

    @fp32_loss
    def forward(
        self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor | None = None, d: torch.Tensor | None = None
    ) -> torch.Tensor:
        c = a if c is None else c
        d = b if d is None else d
        n = a.shape[0]
        positive = F.cosine_similarity(a, b, dim=-1) / self.temperature  # (n,)
        negatives = cosine_matrix(c, d) / self.temperature  # (n, n); the diagonal is not a negative
        off_diagonal = ~torch.eye(n, dtype=torch.bool, device=a.device)
        negatives = negatives.masked_fill(~off_diagonal, float("-inf"))
        if self.trade_off == "paper":
            negatives = negatives + math.log(self.m)
        else:
            positive = positive * self.m
        logits = torch.cat([positive.unsqueeze(1), negatives], dim=1)
        return -(positive - torch.logsumexp(logits, dim=1)).mean()


def add_gaussian_noise(
    z: torch.Tensor, variance: float = 0.1, generator: torch.Generator | None = None
) -> torch.Tensor:
    """z + g with g ~ N(0, variance) per coordinate (SimCSE++ §3.1, "+Noise"; variance 0.1)."""
    noise = torch.randn(z.shape, generator=generator, dtype=z.dtype, device=z.device) * math.sqrt(variance)
    return z + noise


def mean_of_dropout_samples(encode: Callable[[], torch.Tensor], k: int = 10) -> torch.Tensor:
    """(1/K) sum_k f(x; xi^k): the mean of K forward passes with independent dropout masks ("-Noise"; K = 10).

    ``encode`` runs the encoder once in training mode on the batch and returns its embeddings."""
    if k < 1:
        raise ValueError("k must be at least 1")
    return torch.stack([encode() for _ in range(k)]).mean(0)


def encode_without_dropout(model: nn.Module, encode: Callable[[], torch.Tensor]) -> torch.Tensor:
    """Off-dropout sampling (SimCSE++ §3.2): run ``encode`` with ``model`` in eval mode, keeping gradients (the
    official code does not detach), then restore every submodule's previous mode.

    The whole module goes to eval mode, not only its ``nn.Dropout`` submodules: in transformers 5 BERT's
    self-attention applies attention-probability dropout from its own ``training`` flag (a functional dropout, no
    ``nn.Dropout`` module), so switching the ``nn.Dropout`` modules alone leaves attention dropout on. The pass is
    then exactly the evaluation pass (``tests/test_dropout_off.py`` checks this on all-MiniLM-L6-v2)."""
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        z = encode()
    finally:
        for module, mode in modes:
            module.training = mode
    return z
