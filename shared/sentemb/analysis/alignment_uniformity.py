"""Alignment and uniformity (Wang & Isola, 2020), the metrics of SimCSE §3 and Figures 2-3.

    l_align   = E_{(x, x+) ~ p_pos} || f(x) - f(x+) ||^alpha          (alpha = 2)
    l_uniform = log E_{x, y ~ p_data} exp(-t || f(x) - f(y) ||^2)     (t = 2)

with f(x) L2-normalised. SimCSE (footnote 3) takes STS-B pairs with a gold score above 4 as p_pos
and all STS-B sentences as p_data; the uniformity expectation runs over distinct pairs i < j.
Lower is better for both.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def _normalise(x: np.ndarray) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(x, dtype=np.float64))
    return t / t.norm(dim=1, keepdim=True).clamp(min=1e-12)


def alignment(x: np.ndarray, y: np.ndarray, alpha: float = 2.0) -> float:
    a, b = _normalise(x), _normalise(y)
    return float((a - b).norm(dim=1).pow(alpha).mean())


def uniformity(x: np.ndarray, t: float = 2.0, chunk: int = 2048) -> float:
    """log of the mean of exp(-t d^2) over the n(n-1)/2 distinct pairs, computed in chunks."""
    z = _normalise(x)
    n = z.shape[0]
    if n < 2:
        raise ValueError("uniformity needs at least two embeddings")
    # log-sum-exp over pairs i < j, accumulated chunk by chunk to bound memory.
    partial = []
    for start in range(0, n, chunk):
        block = z[start : start + chunk]
        sq = (2.0 - 2.0 * block @ z.T).clamp(min=0.0)  # squared distance of unit vectors
        rows = torch.arange(start, start + block.shape[0]).unsqueeze(1)
        cols = torch.arange(n).unsqueeze(0)
        values = (-t * sq)[cols > rows]
        if values.numel():
            partial.append(torch.logsumexp(values, dim=0))
    total = torch.logsumexp(torch.stack(partial), dim=0)
    return float(total - math.log(n * (n - 1) / 2))
