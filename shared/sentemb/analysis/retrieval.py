"""Nearest-neighbour sentence retrieval by cosine similarity (SimCSE++ Appendix B, Table 7; SimCSE Table 8).

Every corpus sentence and query is embedded once; for each query the ``k`` corpus sentences of highest cosine
similarity are returned, best first (the query itself is left out when the corpus contains it). Ties are broken by
corpus order, so the result is deterministic.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
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


def seeded_queries(fixed: Sequence[str], premises: Sequence[str], n_random: int, seed: int = 0) -> list[str]:
    """A retrieval table's queries: the paper's ``fixed`` ones, then ``n_random`` premises drawn with ``seed``."""
    return list(fixed) + random.Random(seed).sample(list(premises), n_random)


def corpus_premises(nli_corpus: str) -> list[str]:
    """The retrieval corpus of an NLI corpus: the first sentence of each row, once each, in file order (reads it)."""
    from sentemb.data.corpora import load_nli_triples

    return list(dict.fromkeys(row[0] for row in load_nli_triples(nli_corpus)))


def committed_queries(path: Path, corpus: str) -> list[str] | None:
    """The queries committed for ``corpus`` in ``path`` (JSON, corpus -> queries), or None when it lists none.

    A retrieval record is named by its queries, and the random ones are drawn from the corpus: committing them lets
    the cached path find the record without reading the corpus (a researcher's clone has no mirror). The lists are
    written by ``scripts/write_retrieval_queries.py`` and checked against the data by ``tests/test_no_data_reads.py``.
    """
    if not path.is_file():
        return None
    listed = json.loads(path.read_text(encoding="utf-8"))
    return listed.get(corpus)
