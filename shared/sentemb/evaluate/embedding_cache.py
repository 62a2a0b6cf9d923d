"""Embeddings kept on disk so that nothing is encoded twice.

- :func:`cached_encode`: embeddings of an *untrained* model state (a backbone before step 0). Every run of a grid
  that starts from the same backbone evaluates the same step-0 model on STS-B dev (dropout is off at evaluation),
  so those embeddings are computed once, under ``$SENTEMB_CACHE/embeddings``.
- :func:`save_run_embeddings` / :func:`load_run_embeddings`: the final evaluation embeddings of a run (every
  sentence of every evaluator, encoded once), kept under ``$SENTEMB_CACHE/embeddings/runs/<run_id>.npz`` so that a
  notebook or a later evaluator of that run can reuse them without the checkpoint.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np

from sentemb import settings
from sentemb.atomic import atomic_write


def _key(identity: dict, sentences: list[str]) -> str:
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode())
    for s in sentences:
        digest.update(s.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:24]


def cached_encode(identity: dict, sentences: list[str], compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    path: Path = settings.embeddings_cache_root() / f"{_key(identity, sentences)}.npy"
    if path.is_file():
        try:
            return np.load(path)
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
    vectors = compute(sentences)
    atomic_write(path, lambda tmp: np.save(tmp, vectors))
    return vectors


def run_embeddings_path(run_id: str) -> Path:
    return settings.embeddings_cache_root() / "runs" / f"{run_id}.npz"


def save_run_embeddings(run_id: str, lookup: dict[str, np.ndarray]) -> Path:
    sentences = list(lookup)
    vectors = np.stack([lookup[s] for s in sentences]) if sentences else np.zeros((0, 0), dtype=np.float32)
    return atomic_write(
        run_embeddings_path(run_id),
        lambda tmp: np.savez(tmp, sentences=np.array(sentences, dtype=object), vectors=vectors),
    )


def load_run_embeddings(run_id: str) -> dict[str, np.ndarray] | None:
    """The run's evaluation embeddings by sentence, or None when this machine's cache does not have them."""
    path = run_embeddings_path(run_id)
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=True) as data:
        return dict(zip(data["sentences"].tolist(), data["vectors"]))
