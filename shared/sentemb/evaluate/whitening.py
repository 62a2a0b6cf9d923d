"""Whitening post-processing of sentence embeddings (Su et al., 2021, "Whitening sentence representations").

Fitted on the embeddings of a set of sentences (SimCSE Table C.1 and SimCSE++ Table 4 fit on NLI or Wikipedia
sentences, or on the target task's sentences), it maps every embedding x to

    x~ = (x - mu) W[:, :k],    mu = mean of the fitted embeddings,
                               Sigma = U diag(s) U^T their covariance (1/(n-1), as numpy's ``cov``),
                               W = U diag(1 / sqrt(s))

so that the fitted embeddings have zero mean and identity covariance; ``dim`` = k keeps the first k components
(dimension reduction, Su et al. §3). Without ``dim``, k is the numerical rank of the covariance (all D
components for real encoders; fewer for a degenerate one, e.g. a random BERT whose LayerNorm output sums to a
constant), so that whitening never divides by a vanishing variance. Fit on more sentences than dimensions.
Cosine similarity is then computed on x~ as usual.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sentemb.errors import ConfigError


@dataclass(frozen=True)
class Whitening:
    mean: np.ndarray  # (D,)
    kernel: np.ndarray  # (D, k)

    @classmethod
    def fit(cls, embeddings: np.ndarray, dim: int | None = None, rtol: float = 1e-10) -> "Whitening":
        x = np.asarray(embeddings, dtype=np.float64)
        n, d = x.shape
        k = d if dim is None else dim
        if not 1 <= k <= d:
            raise ConfigError(f"whitening dim must be in [1, {d}], got {dim}")
        if n <= d:
            raise ConfigError(
                f"whitening needs more sentences than dimensions to fit a full-rank covariance: "
                f"{n} sentences for {d} dimensions"
            )
        mean = x.mean(0)
        u, s, _ = np.linalg.svd(np.cov(x, rowvar=False))
        rank = int((s > rtol * s[0]).sum())
        if dim is None:
            k = rank  # a singular covariance: whiten its support (the pseudo-inverse square root)
        elif k > rank:
            raise ConfigError(
                f"the covariance of the {n} fitted embeddings is singular (rank {rank} < dim {k}; "
                f"smallest/largest singular value {s[-1] / s[0]:.2e}): fit on more varied sentences or "
                "ask for fewer dimensions"
            )
        return cls(mean=mean, kernel=(u[:, :k] / np.sqrt(s[:k])))

    def transform(self, embeddings: np.ndarray) -> np.ndarray:
        """Whitened embeddings (float32, shape (n, k))."""
        return ((np.asarray(embeddings, dtype=np.float64) - self.mean) @ self.kernel).astype(np.float32)
