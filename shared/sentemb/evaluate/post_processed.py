"""STS evaluation of post-processed embeddings: whitening fitted on a corpus (SimCSE++ Table 4, SimCSE Table C.1).

The encoder's embeddings of the STS sentences (SimCSE's protocol, as a run's final evaluation) are mapped through
a :class:`~sentemb.evaluate.whitening.Whitening` fitted on the embeddings of ``fit_sentences`` (Wikipedia or NLI
sentences), then scored as usual. The STS embeddings of a model are cached under its ``identity`` (e.g. its run id
and precision), so that several fits of one model encode the 26k STS sentences once.
"""

from __future__ import annotations

import random
from typing import Sequence

import numpy as np

from sentemb.evaluate.embedding_cache import cached_encode
from sentemb.evaluate.suite import evaluate_model
from sentemb.evaluate.whitening import Whitening
from sentemb.models.encoder import SentenceEncoder

ENCODE_BATCH = 64


def sample_sentences(sentences: Sequence[str], n: int, seed: int = 0) -> list[str]:
    """``n`` distinct sentences drawn without replacement (all of them when there are fewer), in corpus order."""
    unique = list(dict.fromkeys(sentences))
    if len(unique) <= n:
        return unique
    keep = set(random.Random(seed).sample(range(len(unique)), n))
    return [s for i, s in enumerate(unique) if i in keep]


def sts_whitened(encoder: SentenceEncoder, fit_sentences: Sequence[str], identity: dict, dim: int | None = None,
                 splits: Sequence[str] = ("dev", "test"), synthetic: bool = False) -> dict:
    """SimCSE-protocol STS results of the whitened embeddings, with the fit's size."""
    fit = encoder.encode(list(fit_sentences), batch_size=ENCODE_BATCH)
    whitening = Whitening.fit(fit, dim=dim)

    def encode(sentences: list[str]) -> np.ndarray:
        raw = cached_encode({**identity, "purpose": "sts evaluation"}, sentences,
                            lambda s: encoder.encode(s, batch_size=ENCODE_BATCH))
        return whitening.transform(raw)

    results, _ = evaluate_model(encode, ["sts"], sts_splits=splits, synthetic=synthetic, batch_size=ENCODE_BATCH)
    sts = results["sts_simcse"]
    return {"summary": sts["summary"], "tasks": sts["tasks"], "protocol": sts["protocol"],
            "n_fit_sentences": len(fit), "whitening_dim": whitening.kernel.shape[1]}
