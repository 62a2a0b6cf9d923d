"""Barlow Twins (Zbontar et al., 2021) as used for sentences, and the rank bottleneck of SimCSE++ §4.2.

Equations: l_BT = sum_c (1 - C_cc)^2 + lambda * sum_c sum_{d != c} C_cd^2, C the correlation over the batch between
    the dimensions of view A and view B: Pearson (``centred=True``; the non-contrastive paper's Eq. 2) or without
    centring (``centred=False``; SimCSE++ Eq. 4, whose extracted minus sign before the first sum cannot be meant
    and is not implemented).
lambda: unknown in both papers (SimCSE++ does not say; the non-contrastive paper's values were lost in extraction);
    the default 0.0051, Barlow Twins' value for images, is there only so that it runs.
Padding (SimCSE++ §4.2, Table 2): M standard Gaussian rows appended to both views raise C's rank bound from N to
    N + M; ``pad_shared=True`` (an artificial point is its own positive) is our choice, the paper does not say.
Official code: SimCSE++'s Table 2 probe is commented out (``scd_loss``: lambda = 0.012, BatchNorm-centred views),
    closer to ``centred=True`` with lambda = 0.012; the archive's SimCSE++ Table 2 rows use the paper's form.
Rank: :func:`correlation_rank`, the numerical rank of C, at most min(N, D) (N - 1 when centred).
References: Farina & Pappadopulo, 2024, Eq. 2; Xu et al., 2023 (SimCSE++), §4.2, Eq. 4, Table 2.
Relations: :mod:`sentemb.objectives.non_contrastive` and :mod:`sentemb.objectives.simcse_pp` train with it.
Derivation and the official code: docs/derivations.md#sentembobjectivesbarlow_twinspy
"""

from __future__ import annotations

import torch
from torch import nn

from sentemb.objectives.full_precision import fp32_loss


def cross_correlation(za: torch.Tensor, zb: torch.Tensor, centred: bool = True, eps: float = 1e-12) -> torch.Tensor:
    """D x D matrix C_cd between dimension c of ``za`` and dimension d of ``zb`` over the batch (rows)."""
    if centred:
        za = za - za.mean(0, keepdim=True)
        zb = zb - zb.mean(0, keepdim=True)
    na = za.norm(dim=0).clamp(min=eps)
    nb = zb.norm(dim=0).clamp(min=eps)
    return (za / na).T @ (zb / nb)


def correlation_rank(za: torch.Tensor, zb: torch.Tensor, centred: bool = False, tol: float | None = None) -> int:
    """Numerical rank of the cross-correlation matrix (SimCSE++ §4.2 measures 64 for a batch of 64)."""
    with torch.no_grad():
        c = cross_correlation(za.double(), zb.double(), centred=centred)
        return int(torch.linalg.matrix_rank(c, atol=tol) if tol is not None else torch.linalg.matrix_rank(c))


def gaussian_padding(
    m: int, dim: int, generator: torch.Generator | None = None, dtype: torch.dtype = torch.float32, device=None
) -> torch.Tensor:
    """M artificial embeddings from N(0, I) (SimCSE++ Table 2)."""
    return torch.randn((m, dim), generator=generator, dtype=dtype, device=device)


class BarlowTwins(nn.Module):
    def __init__(
        self,
        off_diagonal_weight: float = 0.0051,
        centred: bool = True,
        pad: int = 0,
        pad_shared: bool = True,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        self.off_diagonal_weight, self.centred = off_diagonal_weight, centred
        self.pad, self.pad_shared, self.generator = pad, pad_shared, generator

    @fp32_loss
    def forward(self, za: torch.Tensor, zb: torch.Tensor) -> torch.Tensor:
        if self.pad:
            extra_a = gaussian_padding(self.pad, za.shape[1], self.generator, za.dtype, za.device)
            extra_b = (
                extra_a
                if self.pad_shared
                else gaussian_padding(self.pad, zb.shape[1], self.generator, zb.dtype, zb.device)
            )
            za, zb = torch.cat([za, extra_a]), torch.cat([zb, extra_b])
        c = cross_correlation(za, zb, centred=self.centred)
        diagonal = torch.diagonal(c)
        on = (1 - diagonal).pow(2).sum()
        off = c.pow(2).sum() - diagonal.pow(2).sum()
        return on + self.off_diagonal_weight * off
