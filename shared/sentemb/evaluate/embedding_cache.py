"""Cache of embeddings of an *untrained* model state (a backbone before step 0).

Every run of a grid that starts from the same backbone evaluates the same step-0 model on STS-B
dev (dropout is off at evaluation), so those embeddings are computed once and stored under
``$SENTEMB_CACHE/embeddings``. Trained models are never cached here: their numbers live in the run
records.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np

from sentemb import settings


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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(path)
    return vectors
