"""Singular spectrum of the sentence-embedding matrix (SimCSE §5 and Appendix F, Figure F.1).

W stacks the L2-normalised embeddings of the STS-B sentences row by row (SimCSE's §5 argument is
about normalised h_i); its singular values are divided by the largest so that the first is 1.
"""

from __future__ import annotations

import numpy as np


def normalised_singular_values(embeddings: np.ndarray) -> np.ndarray:
    w = np.asarray(embeddings, dtype=np.float64)
    w = w / np.clip(np.linalg.norm(w, axis=1, keepdims=True), 1e-12, None)
    s = np.linalg.svd(w, compute_uv=False)
    return s / s[0]
