"""Nearest-neighbour sentence retrieval by cosine similarity (SimCSE++ Appendix B, Table 7; SimCSE Table 8).

Every corpus sentence and query is embedded once; for each query the ``k`` corpus sentences of highest cosine
similarity are returned, best first (the query itself is left out when the corpus contains it). Ties are broken by
corpus order, so the result is deterministic.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.clip(np.linalg.norm(x, axis=1, keepdims=True), 1e-12, None)


def top_k(
    corpus: Sequence[str], corpus_vectors: np.ndarray, queries: Sequence[str], query_vectors: np.ndarray, k: int = 5
) -> list[dict]:
    """One entry per query: the query and its ``k`` hits as (rank, sentence, cosine)."""
    if len(corpus) != len(corpus_vectors) or len(queries) != len(query_vectors):
        raise ValueError("each sentence needs exactly one vector")
    scores = _unit(query_vectors) @ _unit(corpus_vectors).T
    out = []
    for q, query in enumerate(queries):
        order = np.argsort(-scores[q], kind="stable")
        hits = [int(i) for i in order if corpus[i] != query][:k]
        out.append(
            {
                "query": query,
                "hits": [
                    {"rank": r + 1, "sentence": corpus[i], "cosine": float(scores[q, i])} for r, i in enumerate(hits)
                ],
            }
        )
    return out
