"""The rank of Barlow Twins' cross-correlation matrix on one batch (SimCSE++ §4.2, "rank bottleneck").

A batch of N sentences is embedded twice with dropout on (SimCSE's two views); C is the D x D cross-correlation
matrix of the two views (:func:`~sentemb.objectives.barlow_twins.cross_correlation`, uncentred as SimCSE++ Eq. 4).
Its rank is at most min(N, D): 64 for the paper's batch, far from the D = 768 of the identity Barlow Twins pulls
C towards. Padding the batch with M shared standard-Gaussian rows (Table 2) raises the bound to min(N + M, D).
"""

from __future__ import annotations

from typing import Sequence

import torch

from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.barlow_twins import correlation_rank, gaussian_padding


def cross_correlation_rank(
    encoder: SentenceEncoder, sentences: Sequence[str], padding: int = 0, seed: int = 0, max_len: int = 32
) -> dict:
    """Numerical rank of C for the batch ``sentences`` (two dropout views), without and with ``padding`` rows."""
    torch.manual_seed(seed)
    was_training = encoder.training
    encoder.train()  # dropout on: the two views differ as in training
    try:
        with torch.no_grad():
            batch = encoder.tokenize(list(sentences) * 2, max_length=max_len)
            z = encoder(**batch).float()
    finally:
        encoder.train(was_training)
    n = len(sentences)
    z1, z2 = z[:n], z[n:]
    out = {"batch": n, "dim": int(z.shape[1]), "rank": correlation_rank(z1, z2), "padding": padding}
    if padding:
        extra = gaussian_padding(padding, z.shape[1], torch.Generator().manual_seed(seed))
        out["rank_padded"] = correlation_rank(torch.cat([z1, extra]), torch.cat([z2, extra]))
    return out
